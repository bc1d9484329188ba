//! THC's sorts, top-k, mode, scans and renorm (`THCTensorSort.h`, `THCTensorTopK.h`,
//! `THCTensorMode.h`, `THCTensorMathScan.h`, `renorm` of `THCTensorMathReduce.h`) on device
//! tensors, with THC's names and C types. They run the same `ops` functions as TH's, whose
//! engines pick the device kernels (`cuda::sort`: a bitonic sort of every line in a device
//! workspace, one thread per line for the scans) for device tensors, so the results are the
//! host's bit for bit.
//!
//! - Dims are 0-based, as in this library's TH API.
//! - Every dtype has `sort`, `sortKeyValueInplace` and `topk`; the numeric ones `mode`,
//!   `cumsum` and `cumprod`; the floating ones `renorm` (THC has BFloat16 and Bool nowhere;
//!   they are here where TH has them).
//! - `sort` and `topk` are stable (ties by position), NaN sorts after every number (first in
//!   descending order), -0.0 == 0.0; `topk` always returns its k elements in sorted order.
//! - THC has no `kthvalue`; `ops::reduce::kthvalue` runs on device tensors through TH's name.

use super::thc::*;
use super::*;
use crate::ops::{index as ix, reduce};
use std::ffi::{c_int, c_long};

/// THC's `long dim` as the `int` dimension of the shared functions (out of range stays out
/// of range, and is reported by them).
fn dim32(d: c_long) -> i32 {
    i32::try_from(d).unwrap_or(if d < 0 { i32::MIN } else { i32::MAX })
}

macro_rules! thc_sort {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => {
        $( thc_sort!(@pre $R, $T, $C, $K); )*
    };
    (@pre Float, $T:ty, $C:ty, $K:ident) => { thc_sort!(@gen [THCuda] $T, $C, $K); };
    (@pre $R:ident, $T:ty, $C:ty, $K:ident) => { thc_sort!(@gen [THCuda $R] $T, $C, $K); };
    (@gen [$($P:tt)*] $T:ty, $C:ty, $K:ident) => {
        thc_sort!(@all [$($P)*] $T);
        thc_sort!(@num $K [$($P)*] $T);
        thc_sort!(@float $K [$($P)*] $T, $C);
    };
    (@all [$($P:tt)*] $T:ty) => { pastey::paste! {
        th_fn! {
            /// `sorted` = `input` sorted along `dim` (stable; ascending, or descending when
            /// `order` is nonzero), `indices` = the 0-based source positions.
            fn [<$($P)* Tensor_sort>] @[state: *mut THCState](sorted: *mut [<$($P)* Tensor>] as obj, indices: *mut THCudaLongTensor as obj, input: *mut [<$($P)* Tensor>] as view, dim: c_int, order: c_int) {
                ix::sort(sorted, indices, &input, dim, order != 0)
            }
            /// Sorts `keys` in place along `dim` (as `sort`) and permutes `values` (same size)
            /// alongside: `values[q]` becomes the old value at the source position of key `q`.
            fn [<$($P)* Tensor_sortKeyValueInplace>] @[state: *mut THCState](keys: *mut [<$($P)* Tensor>] as obj, values: *mut THCudaLongTensor as obj, dim: c_int, order: c_int) {
                ix::sort_key_value(keys, values, dim, order != 0)
            }
            /// The `k` largest (`dir` nonzero) or smallest elements of `input` along `dim` into
            /// `topK`, their 0-based positions into `indices`; sorted (descending for the
            /// largest) whatever `sorted` says, ties by position.
            fn [<$($P)* Tensor_topk>] @[state: *mut THCState](top_k: *mut [<$($P)* Tensor>] as obj, indices: *mut THCudaLongTensor as obj, input: *mut [<$($P)* Tensor>] as view, k: c_long, dim: c_int, dir: c_int, sorted: c_int) {
                let _ = sorted;
                ix::topk(top_k, indices, &input, k as i64, dim, dir != 0)
            }
        }
    } };
    (@num bool [$($P:tt)*] $T:ty) => {};
    (@num $k:ident [$($P:tt)*] $T:ty) => { pastey::paste! {
        th_fn! {
            /// `values` = the most frequent value of `input` along `dimension` (ties: the
            /// smallest; NaNs count as one value), `indices` = the position of its last
            /// occurrence; reduced dim removed unless `keepdim`.
            fn [<$($P)* Tensor_mode>] @[state: *mut THCState](values: *mut [<$($P)* Tensor>] as obj, indices: *mut THCudaLongTensor as obj, input: *mut [<$($P)* Tensor>] as view, dimension: c_int, keepdim: c_int) {
                reduce::mode(values, indices, &input, dimension, keepdim != 0)
            }
            /// `self` = cumulative sum of `src` along `dim` (in accreal, in order), resized like
            /// `src`.
            fn [<$($P)* Tensor_cumsum>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as view, dim: c_long) {
                reduce::cumsum(self_, &src, dim32(dim))
            }
            /// `self` = cumulative product of `src` along `dim` (in accreal, in order).
            fn [<$($P)* Tensor_cumprod>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as view, dim: c_long) {
                reduce::cumprod(self_, &src, dim32(dim))
            }
        }
    } };
    (@float float [$($P:tt)*] $T:ty, $C:ty) => { thc_sort!(@floatfns [$($P)*] $T, $C); };
    (@float half [$($P:tt)*] $T:ty, $C:ty) => { thc_sort!(@floatfns [$($P)*] $T, $C); };
    (@float $k:ident [$($P:tt)*] $T:ty, $C:ty) => {};
    (@floatfns [$($P:tt)*] $T:ty, $C:ty) => { pastey::paste! {
        th_fn! {
            /// `self` = `src` with every slice along `dimension` whose `value`-norm exceeds
            /// `max_norm` scaled by `max_norm / (norm + 1e-7)`; `src` needs 2+ dims, `value` > 0.
            fn [<$($P)* Tensor_renorm>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as view, value: $C, dimension: c_long, max_norm: $C) {
                reduce::renorm(self_, &src, <$T>::from_c(value), dim32(dimension), <$T>::from_c(max_norm))
            }
        }
    } };
}
crate::th_dtypes!(thc_sort);
