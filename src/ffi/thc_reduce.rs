//! THC's reductions (`THCTensorMathReduce.h`) on device tensors, with THC's names and C types:
//! `THCudaTensor_sum(THCState *, THCudaTensor *self, THCudaTensor *src, long dim, int keepdim)`
//! and the like. They run the same `ops::reduce` functions as TH's (`ffi::reduce`), whose
//! engine picks the device kernels (`cuda::reduce`) for device tensors.
//!
//! - Dims are 0-based, as in this library's TH API.
//! - `accreal` results are THC's: `float` for Float, Half and BFloat16, `double` for Double,
//!   `long` for the integer dtypes and Bool (a Float sum accumulates in double on the device and
//!   is rounded to float once).
//! - Every dtype has `max`, `min` (indices in a `THCudaLongTensor`), `maxall`, `minall`; the
//!   numeric ones `sum`, `prod`, `sumall`, `prodall`; Bool's `sumall` counts true elements; the
//!   floating ones `mean`, `var`, `std`, `norm` and the `*all` forms, `dist`; Byte and Bool
//!   `logicalall` / `logicalany`.
//! - Every dtype also has `median` / `medianall`: every line sorted on the device
//!   (`cuda::sort`), the lower median picked there (the host's element, bits included).
//!   `renorm` is with the sorts (`thc_sort`).
//! - Integer `dist` (Byte, Char, Short, Int, Long; THC declares it returning `long`, the CPU
//!   side defines dist for floating types only): both operands are converted to double on the
//!   device and the Double `dist` runs on them (the p-norm of the difference, `value` as a
//!   double: differences exact below 2^53, p == 0 counts the differing elements, p == inf is the
//!   largest |difference|), and the double is converted to `long` as C converts THC's accreal:
//!   truncated toward zero, saturating at the `long` range (NaN, from a NaN p, gives 0).

use super::thc::*;
use super::*;
use crate::cuda::{copy::empty_like, ops::copy_kernel, runtime};
use crate::exec::backend::Backend;
use crate::ops::reduce;
use std::ffi::{c_int, c_long};

/// THC's integer `dist` (see the module documentation).
fn int_dist<T: Scalar>(a: &View<T>, b: &View<T>, p: f64) -> Result<i64> {
    let Backend::Cuda(ordinal) = Backend::of(&[a.device(), b.device()])? else {
        return Err(Error::invalid("dist: THC functions take device tensors"));
    };
    let dev = runtime::device(ordinal)?;
    let wide = |v: &View<T>| -> Result<View<f64>> {
        let d = empty_like::<f64>(dev, &v.sizes)?;
        copy_kernel(dev, &d, v)?;
        Ok(d)
    };
    Ok(reduce::dist(&wide(a)?, &wide(b)?, p)? as i64)
}

/// THC's `long dim` as the `int` dimension of the shared reductions (out of range stays out
/// of range, and is reported by them).
fn dim32(d: c_long) -> i32 {
    i32::try_from(d).unwrap_or(if d < 0 { i32::MIN } else { i32::MAX })
}

macro_rules! thc_reduce {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => {
        $( thc_reduce!(@pre $R, $T, $C, $K); )*
    };
    (@pre Float, $T:ty, $C:ty, $K:ident) => { thc_reduce!(@gen [THCuda] Float, $T, $C, $K); };
    (@pre $R:ident, $T:ty, $C:ty, $K:ident) => { thc_reduce!(@gen [THCuda $R] $R, $T, $C, $K); };
    // THC's accreal per dtype.
    (@acc Float) => { f32 };
    (@acc Double) => { f64 };
    (@acc Half) => { f32 };
    (@acc BFloat16) => { f32 };
    (@acc $R:ident) => { i64 };
    (@gen [$($P:tt)*] $R:ident, $T:ty, $C:ty, $K:ident) => {
        thc_reduce!(@all [$($P)*] $R, $T, $C);
        thc_reduce!(@num $K [$($P)*] $R, $T, $C);
        thc_reduce!(@float $K [$($P)*] $R, $T, $C);
        thc_reduce!(@logical $R [$($P)*]);
    };
    (@all [$($P:tt)*] $R:ident, $T:ty, $C:ty) => { pastey::paste! {
        th_fn! {
            /// `values` = max of `src` along `dim` (0-based), `indices` = its position (the first
            /// occurrence; the first NaN wins); reduced dim removed unless `keepdim`.
            fn [<$($P)* Tensor_max>] @[state: *mut THCState](values: *mut [<$($P)* Tensor>] as obj, indices: *mut THCudaLongTensor as obj, src: *mut [<$($P)* Tensor>] as view, dim: c_long, keepdim: c_int) {
                reduce::max(values, indices, &src, dim32(dim), keepdim != 0)
            }
            /// `values` = min of `src` along `dim`, `indices` = its position (as `max`).
            fn [<$($P)* Tensor_min>] @[state: *mut THCState](values: *mut [<$($P)* Tensor>] as obj, indices: *mut THCudaLongTensor as obj, src: *mut [<$($P)* Tensor>] as view, dim: c_long, keepdim: c_int) {
                reduce::min(values, indices, &src, dim32(dim), keepdim != 0)
            }
            /// The largest element (NaN propagates); an empty tensor is an error.
            fn [<$($P)* Tensor_maxall>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as view) -> $C = <$T as CRepr>::to_c(<$T>::default()); {
                Ok(reduce::maxall(&self_)?.to_c())
            }
            /// `values` = the lower median of `src` along `dim` (element (n-1)/2 of the stable
            /// sort, NaN last), `indices` = its position; selected on the device.
            fn [<$($P)* Tensor_median>] @[state: *mut THCState](values: *mut [<$($P)* Tensor>] as obj, indices: *mut THCudaLongTensor as obj, src: *mut [<$($P)* Tensor>] as view, dim: c_long, keepdim: c_int) {
                reduce::median(values, indices, &src, dim32(dim), keepdim != 0)
            }
            /// The lower median of all elements (sorted on the device, as `median`); an empty
            /// tensor is an error.
            fn [<$($P)* Tensor_medianall>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as view) -> $C = <$T as CRepr>::to_c(<$T>::default()); {
                Ok(reduce::medianall(&self_)?.to_c())
            }
            /// 1 when `self` and `src` have the same sizes and equal elements (NaN is not equal to
            /// itself), else 0 (`THCTensorMathPairwise.h`).
            fn [<$($P)* Tensor_equal>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as view, src: *mut [<$($P)* Tensor>] as view) -> c_int = 0; {
                Ok(reduce::equal(&self_, &src)? as c_int)
            }
            /// The smallest element (NaN propagates); an empty tensor is an error.
            fn [<$($P)* Tensor_minall>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as view) -> $C = <$T as CRepr>::to_c(<$T>::default()); {
                Ok(reduce::minall(&self_)?.to_c())
            }
        }
    } };
    (@num bool [$($P:tt)*] $R:ident, $T:ty, $C:ty) => { pastey::paste! {
        th_fn! {
            /// Number of true elements.
            fn [<$($P)* Tensor_sumall>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as view) -> i64 = 0; {
                reduce::count_nonzero(&self_)
            }
        }
    } };
    (@num $k:ident [$($P:tt)*] $R:ident, $T:ty, $C:ty) => { pastey::paste! {
        th_fn! {
            /// `self` = sum of `src` along `dim` (0-based; accumulated in accreal).
            fn [<$($P)* Tensor_sum>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as view, dim: c_long, keepdim: c_int) {
                reduce::sum(self_, &src, dim32(dim), keepdim != 0)
            }
            /// `self` = product of `src` along `dim` (accumulated in accreal).
            fn [<$($P)* Tensor_prod>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as view, dim: c_long, keepdim: c_int) {
                reduce::prod(self_, &src, dim32(dim), keepdim != 0)
            }
            /// Sum of all elements (0 when empty), as THC's accreal.
            fn [<$($P)* Tensor_sumall>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as view) -> thc_reduce!(@acc $R) = Default::default(); {
                Ok(reduce::sumall(&self_)? as thc_reduce!(@acc $R))
            }
            /// Product of all elements (1 when empty), as THC's accreal.
            fn [<$($P)* Tensor_prodall>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as view) -> thc_reduce!(@acc $R) = Default::default(); {
                Ok(reduce::prodall(&self_)? as thc_reduce!(@acc $R))
            }
        }
    } };
    (@float int [$($P:tt)*] $R:ident, $T:ty, $C:ty) => { pastey::paste! {
        th_fn! {
            /// `self` = mean of `src` along `dim` for an integer type: the sum in `long` divided
            /// by the dim's size (C division), then cast (THC stored the sum in the tensor's type
            /// first, so it could wrap; th does not).
            fn [<$($P)* Tensor_mean>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as view, dim: c_long, keepdim: c_int) {
                reduce::mean_int(self_, &src, dim32(dim), keepdim != 0)
            }
            /// Mean of all elements for an integer type: the sum (in `long`) divided by the count
            /// (C division); an empty tensor is an error.
            fn [<$($P)* Tensor_meanall>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as view) -> i64 = 0; {
                let n = self_.numel() as i64;
                if n == 0 {
                    return Err(Error::invalid("meanall of an empty tensor").at_arg(1));
                }
                Ok(reduce::sumall(&self_)? / n)
            }
            /// The `value`-norm of `self - src` for an integer type, computed in double and
            /// converted to `long` (see the module documentation).
            fn [<$($P)* Tensor_dist>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as view, src: *mut [<$($P)* Tensor>] as view, value: $C) -> i64 = 0; {
                int_dist(&self_, &src, value as f64)
            }
        }
    } };
    (@float float [$($P:tt)*] $R:ident, $T:ty, $C:ty) => { thc_reduce!(@floatfns [$($P)*] $R, $T, $C); };
    (@float half [$($P:tt)*] $R:ident, $T:ty, $C:ty) => { thc_reduce!(@floatfns [$($P)*] $R, $T, $C); };
    (@float $k:ident [$($P:tt)*] $R:ident, $T:ty, $C:ty) => {};
    (@floatfns [$($P:tt)*] $R:ident, $T:ty, $C:ty) => { pastey::paste! {
        th_fn! {
            /// `self` = mean of `src` along `dim` (0-based).
            fn [<$($P)* Tensor_mean>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as view, dim: c_long, keepdim: c_int) {
                reduce::mean(self_, &src, dim32(dim), keepdim != 0)
            }
            /// `self` = variance of `src` along `dim` (`/n` when `biased`, else `/(n-1)`).
            fn [<$($P)* Tensor_var>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as view, dim: c_long, biased: c_int, keepdim: c_int) {
                reduce::var(self_, &src, dim32(dim), biased != 0, keepdim != 0)
            }
            /// `self` = standard deviation of `src` along `dim`.
            fn [<$($P)* Tensor_std>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as view, dim: c_long, biased: c_int, keepdim: c_int) {
                reduce::std(self_, &src, dim32(dim), biased != 0, keepdim != 0)
            }
            /// `self` = `value`-norm of `src` along `dimension` (p == 0 counts non-zeros).
            fn [<$($P)* Tensor_norm>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as view, value: $C, dimension: c_long, keepdim: c_int) {
                reduce::norm(self_, &src, <$T>::from_c(value), dim32(dimension), keepdim != 0)
            }
            /// Mean of all elements; an empty tensor is an error.
            fn [<$($P)* Tensor_meanall>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as view) -> thc_reduce!(@acc $R) = 0.0; {
                Ok(reduce::meanall(&self_)? as thc_reduce!(@acc $R))
            }
            /// Variance of all elements (`/n` when `biased`, else `/(n-1)`).
            fn [<$($P)* Tensor_varall>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as view, biased: c_int) -> thc_reduce!(@acc $R) = 0.0; {
                Ok(reduce::varall(&self_, biased != 0)? as thc_reduce!(@acc $R))
            }
            /// Standard deviation of all elements.
            fn [<$($P)* Tensor_stdall>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as view, biased: c_int) -> thc_reduce!(@acc $R) = 0.0; {
                Ok(reduce::stdall(&self_, biased != 0)? as thc_reduce!(@acc $R))
            }
            /// The `value`-norm of all elements (p == 0 counts non-zeros, inf is max |x|).
            fn [<$($P)* Tensor_normall>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as view, value: $C) -> thc_reduce!(@acc $R) = 0.0; {
                Ok(reduce::normall(&self_, <$T>::from_c(value))? as thc_reduce!(@acc $R))
            }
            /// The `value`-norm of `self - src` (elements paired in row-major order).
            fn [<$($P)* Tensor_dist>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as view, src: *mut [<$($P)* Tensor>] as view, value: $C) -> thc_reduce!(@acc $R) = 0.0; {
                Ok(reduce::dist(&self_, &src, <$T>::from_c(value))? as thc_reduce!(@acc $R))
            }
        }
    } };
    (@logical Byte [$($P:tt)*]) => { thc_reduce!(@logicalfns [$($P)*]); };
    (@logical Bool [$($P:tt)*]) => { thc_reduce!(@logicalfns [$($P)*]); };
    (@logical $R:ident [$($P:tt)*]) => {};
    (@logicalfns [$($P:tt)*]) => { pastey::paste! {
        th_fn! {
            /// 1 when every element is non-zero; an empty tensor is an error.
            fn [<$($P)* Tensor_logicalall>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as view) -> c_int = 0; {
                Ok(reduce::logicalall(&self_)? as c_int)
            }
            /// 1 when some element is non-zero (0 when empty).
            fn [<$($P)* Tensor_logicalany>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as view) -> c_int = 0; {
                Ok(reduce::logicalany(&self_)? as c_int)
            }
        }
    } };
}
crate::th_dtypes!(thc_reduce);
