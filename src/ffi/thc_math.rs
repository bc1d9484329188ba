//! THC's constructors and shape functions (`THCTensorMath.h`) and `cross`
//! (`THCTensorMathPointwise.h`) on device tensors, with THC's names and C types:
//! `THCudaTensor_zeros(THCState *, THCudaTensor *r_, THLongStorage *size)` and the like. They
//! run the same `ops::index` / `ops::reduce` functions as TH's (`ffi::index`, `ffi::reduce`);
//! those fill, copy and launch on the device that holds the tensors.
//!
//! - `k` (diagonals), `n`/`m` (eye) are THC's `long`; dims are 0-based as in this library's TH.
//! - `range`/`arange` take THC's accreal (`float` for Float and Half, `double` for Double,
//!   `long` for the integers) and compute in TH's accreal, as the CPU side does; the values
//!   of `range`, `arange`, `linspace` and `logspace` are computed on the host and copied to the
//!   device in one transfer (a function of the position only).
//! - `trace` returns THC's accreal (`float` for Float/Half/BFloat16, `double` for Double, `long`
//!   for the integers).
//! - `nonzero` is with the index functions (`thc_index`).

use super::index::{sizes, views};
use super::thc::*;
use super::*;
use crate::ops::{index as ix, reduce};
use std::ffi::{c_int, c_long};

/// THC's `long k` as the `int` diagonal of `diag` (beyond the int range it selects nothing,
/// as any |k| past the matrix does).
fn diag_k(k: c_long) -> c_int {
    k.clamp(c_int::MIN as c_long, c_int::MAX as c_long) as c_int
}

macro_rules! thc_math {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => {
        $( thc_math!(@pre $R, $T, $C, $A, $K); )*
    };
    (@pre Float, $T:ty, $C:ty, $A:ty, $K:ident) => { thc_math!(@gen [THCuda] Float, $T, $C, $A, $K); };
    (@pre $R:ident, $T:ty, $C:ty, $A:ty, $K:ident) => { thc_math!(@gen [THCuda $R] $R, $T, $C, $A, $K); };
    // THC's accreal of range/arange and trace.
    (@acc Float) => { f32 };
    (@acc Double) => { f64 };
    (@acc Half) => { f32 };
    (@acc BFloat16) => { f32 };
    (@acc $R:ident) => { i64 };
    (@gen [$($P:tt)*] $R:ident, $T:ty, $C:ty, $A:ty, $K:ident) => {
        thc_math!(@all [$($P)*] $R, $T, $C, $A);
        thc_math!(@num $K [$($P)*] $R, $T, $C, $A);
        thc_math!(@float $K [$($P)*] $R, $T, $C);
    };
    (@all [$($P:tt)*] $R:ident, $T:ty, $C:ty, $A:ty) => { pastey::paste! {
        th_fn! {
            /// `r_` resized to `size` and filled with zeros.
            fn [<$($P)* Tensor_zeros>] @[state: *mut THCState](r_: *mut [<$($P)* Tensor>] as obj, size: *mut THLongStorage as sizes) {
                ix::zeros(r_, &size)
            }
            /// `r_` resized like `input` and filled with zeros.
            fn [<$($P)* Tensor_zerosLike>] @[state: *mut THCState](r_: *mut [<$($P)* Tensor>] as obj, input: *mut [<$($P)* Tensor>] as view) {
                ix::zeros_like(r_, &input)
            }
            /// `r_` resized to `size` and filled with ones.
            fn [<$($P)* Tensor_ones>] @[state: *mut THCState](r_: *mut [<$($P)* Tensor>] as obj, size: *mut THLongStorage as sizes) {
                ix::ones(r_, &size)
            }
            /// `r_` resized like `input` and filled with ones.
            fn [<$($P)* Tensor_onesLike>] @[state: *mut THCState](r_: *mut [<$($P)* Tensor>] as obj, input: *mut [<$($P)* Tensor>] as view) {
                ix::ones_like(r_, &input)
            }
            /// `r_` resized to `size` (no -1 inference) holding `t`'s elements in row-major order.
            fn [<$($P)* Tensor_reshape>] @[state: *mut THCState](r_: *mut [<$($P)* Tensor>] as obj, t: *mut [<$($P)* Tensor>] as view, size: *mut THLongStorage as sizes) {
                ix::reshape(r_, &t, &size)
            }
            /// Number of elements (0 when empty).
            fn [<$($P)* Tensor_numel>] @[state: *mut THCState](t: *mut [<$($P)* Tensor>] as view) -> isize = 0; {
                Ok(reduce::numel(&t) as isize)
            }
            /// `result` = `ta` and `tb` joined along `dimension` (as `catArray`).
            fn [<$($P)* Tensor_cat>] @[state: *mut THCState](result: *mut [<$($P)* Tensor>] as obj, ta: *mut [<$($P)* Tensor>] as view, tb: *mut [<$($P)* Tensor>] as view, dimension: c_int) {
                ix::cat(result, &[ta, tb], dimension)
            }
            /// `result` = the `numInputs` tensors joined along `dimension` (-1: the last; empty
            /// inputs skipped; missing trailing dims count as size 1).
            fn [<$($P)* Tensor_catArray>] @[state: *mut THCState](result: *mut [<$($P)* Tensor>] as obj, inputs: *mut *mut [<$($P)* Tensor>] as views(num_inputs), num_inputs: c_int, dimension: c_int) {
                ix::cat(result, &inputs, dimension)
            }
            /// `self` = the matrix `src` with the elements above diagonal `k` zeroed.
            fn [<$($P)* Tensor_tril>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as view, k: c_long) {
                ix::tril(self_, &src, k)
            }
            /// `self` = the matrix `src` with the elements below diagonal `k` zeroed.
            fn [<$($P)* Tensor_triu>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as view, k: c_long) {
                ix::triu(self_, &src, k)
            }
            /// `src` 1-D: `self` = the square matrix with `src` on diagonal `k`; `src` 2-D:
            /// `self` = diagonal `k` of `src`, 1-D.
            fn [<$($P)* Tensor_diag>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as view, k: c_long) {
                ix::diag(self_, &src, diag_k(k))
            }
            /// `self` = the `n` x `m` identity matrix (`m <= 0`: `m = n`; `n > 0` required).
            fn [<$($P)* Tensor_eye>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, n: c_long, m: c_long) {
                ix::eye(self_, n, m)
            }
            /// `r_` = `xmin, xmin+step, ...` up to `xmax` (included).
            fn [<$($P)* Tensor_range>] @[state: *mut THCState](r_: *mut [<$($P)* Tensor>] as obj, xmin: thc_math!(@acc $R), xmax: thc_math!(@acc $R), step: thc_math!(@acc $R)) {
                ix::range::<$T, $A>(r_, xmin as $A, xmax as $A, step as $A, true)
            }
            /// `r_` = `xmin, xmin+step, ...` below `xmax` (excluded).
            fn [<$($P)* Tensor_arange>] @[state: *mut THCState](r_: *mut [<$($P)* Tensor>] as obj, xmin: thc_math!(@acc $R), xmax: thc_math!(@acc $R), step: thc_math!(@acc $R)) {
                ix::range::<$T, $A>(r_, xmin as $A, xmax as $A, step as $A, false)
            }
        }
    } };
    (@num bool [$($P:tt)*] $R:ident, $T:ty, $C:ty, $A:ty) => {};
    (@num $k:ident [$($P:tt)*] $R:ident, $T:ty, $C:ty, $A:ty) => { pastey::paste! {
        th_fn! {
            /// Sum of the main diagonal of a 2-D tensor (need not be square), as THC's accreal.
            fn [<$($P)* Tensor_trace>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as view) -> thc_math!(@acc $R) = Default::default(); {
                Ok(reduce::trace(&self_)? as thc_math!(@acc $R))
            }
            /// `self` = the cross product of `src1` and `src2` (broadcast together) along
            /// `dimension` (size 3; `dimension < 0`: the first dimension of size 3).
            fn [<$($P)* Tensor_cross>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, src1: *mut [<$($P)* Tensor>] as view, src2: *mut [<$($P)* Tensor>] as view, dimension: c_int) {
                ix::cross(self_, &src1, &src2, dimension)
            }
        }
    } };
    (@float float [$($P:tt)*] $R:ident, $T:ty, $C:ty) => { thc_math!(@floatfns [$($P)*] $R, $T, $C); };
    (@float half [$($P:tt)*] $R:ident, $T:ty, $C:ty) => { thc_math!(@floatfns [$($P)*] $R, $T, $C); };
    (@float $k:ident [$($P:tt)*] $R:ident, $T:ty, $C:ty) => {};
    (@floatfns [$($P:tt)*] $R:ident, $T:ty, $C:ty) => { pastey::paste! {
        th_fn! {
            /// `r_` = `n` points from `a` to `b` inclusive (`n > 1`, or `n == 1` with `a == b`).
            fn [<$($P)* Tensor_linspace>] @[state: *mut THCState](r_: *mut [<$($P)* Tensor>] as obj, a: $C, b: $C, n: c_long) {
                ix::linspace(r_, <$T>::from_c(a), <$T>::from_c(b), n)
            }
            /// `r_` = `10^x` for `n` points `x` from `a` to `b` inclusive (as `linspace`).
            fn [<$($P)* Tensor_logspace>] @[state: *mut THCState](r_: *mut [<$($P)* Tensor>] as obj, a: $C, b: $C, n: c_long) {
                ix::logspace(r_, <$T>::from_c(a), <$T>::from_c(b), n)
            }
        }
    } };
}
crate::th_dtypes!(thc_math);
