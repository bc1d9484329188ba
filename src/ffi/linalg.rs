//! Matrix products of `generic/THTensorMath.h` (addmm, addmv, addr, addbmm, baddbmm, match),
//! `generic/THBlas.h` and `generic/THVector.h`, for Byte, Char, Short, Int, Long, Float, Double,
//! Half and BFloat16 (Bool has no products or BLAS, as in TH). `THVector_normal_fill` (PyTorch
//! TH's signature) exists for Float, Double, Half and BFloat16. `vectorDispatchInit` is a no-op
//! (kernels are picked at run time). See `linalg/` for the semantics.

#![allow(clippy::too_many_arguments)] // the BLAS signatures are TH's

use super::random::THGenerator;
use super::*;
use crate::linalg::{blas, products};
use std::ffi::c_char;

macro_rules! product_fns {
    ($R:ident, $T:ty, $C:ty; $($name:ident => $f:ident, $doc:literal;)*) => { pastey::paste! { $(
        th_fn! {
            #[doc = $doc]
            fn [<TH $R Tensor_ $name>](r_: *mut [<TH $R Tensor>] as obj, beta: $C, t: *mut [<TH $R Tensor>] as view, alpha: $C, m1: *mut [<TH $R Tensor>] as view, m2: *mut [<TH $R Tensor>] as view) {
                products::$f(r_, <$T>::from_c(beta), &t, <$T>::from_c(alpha), &m1, &m2)
            }
        }
    )* } };
}

macro_rules! linalg_api {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => {
        $( linalg_api!(@one $R, $T, $C); linalg_api!(@float $K $R, $T, $C); )*
    };
    (@one Bool, $T:ty, $C:ty) => {};
    (@one $R:ident, $T:ty, $C:ty) => { pastey::paste! {
        product_fns! { $R, $T, $C;
            addmm => addmm, "`r_ = beta*t + alpha*(m1 @ m2)`: `m1` n x k, `m2` k x p, `t` n x p; `r_` resized to n x p.";
            addmv => addmv, "`r_ = beta*t + alpha*(mat @ vec)`: `mat` n x k, `vec` k, `t` n.";
            addr => addr, "`r_ = beta*t + alpha*outer(vec1, vec2)`: `t` len(vec1) x len(vec2).";
            addbmm => addbmm, "`r_ = beta*t + alpha*sum_b batch1[b] @ batch2[b]`: batch1 B x n x k, batch2 B x k x p, `t` n x p.";
            baddbmm => baddbmm, "`r_[b] = beta*t[b] + alpha*batch1[b] @ batch2[b]`: `t` B x n x p.";
        }
        th_fn! {
            /// `r_[i][j] = gain * sum_d (m1[i][d] - m2[j][d])^2`, `m1`, `m2` flattened to rows by
            /// their first dim (same row length); `r_` resized to N1 x N2.
            fn [<TH $R Tensor_match>](r_: *mut [<TH $R Tensor>] as obj, m1: *mut [<TH $R Tensor>] as view, m2: *mut [<TH $R Tensor>] as view, gain: $C) {
                products::match_(r_, &m1, &m2, <$T>::from_c(gain))
            }

            /// BLAS swap: `x <-> y` (n elements at increments incx, incy).
            fn [<TH $R Blas_swap>](n: i64, x: *mut $C, incx: i64, y: *mut $C, incy: i64) {
                // SAFETY: caller contract ($C and $T have the same layout).
                unsafe { blas::swap::<$T>(n, x as *mut $T, incx, y as *mut $T, incy) }
            }
            /// BLAS scal: `x = a*x`.
            fn [<TH $R Blas_scal>](n: i64, a: $C, x: *mut $C, incx: i64) {
                // SAFETY: as above.
                unsafe { blas::scal::<$T>(n, <$T>::from_c(a), x as *mut $T, incx) }
            }
            /// BLAS copy: `y = x`.
            fn [<TH $R Blas_copy>](n: i64, x: *mut $C, incx: i64, y: *mut $C, incy: i64) {
                // SAFETY: as above.
                unsafe { blas::copy::<$T>(n, x as *const $T, incx, y as *mut $T, incy) }
            }
            /// BLAS axpy: `y = y + a*x`.
            fn [<TH $R Blas_axpy>](n: i64, a: $C, x: *mut $C, incx: i64, y: *mut $C, incy: i64) {
                // SAFETY: as above.
                unsafe { blas::axpy::<$T>(n, <$T>::from_c(a), x as *const $T, incx, y as *mut $T, incy) }
            }
            /// BLAS dot: `sum x[i]*y[i]` (accumulated in `accreal`, rounded once).
            fn [<TH $R Blas_dot>](n: i64, x: *mut $C, incx: i64, y: *mut $C, incy: i64) -> $C = <$T as CRepr>::to_c(<$T>::default()); {
                // SAFETY: as above.
                Ok(unsafe { blas::dot::<$T>(n, x as *const $T, incx, y as *const $T, incy) }?.to_c())
            }
            /// BLAS gemv: `y = alpha*op(A)*x + beta*y`, `A` m x n column-major with leading
            /// dimension `lda`, `trans` 'n' or 't'/'c'; `beta == 0` does not read `y`.
            fn [<TH $R Blas_gemv>](trans: c_char, m: i64, n: i64, alpha: $C, a: *mut $C, lda: i64, x: *mut $C, incx: i64, beta: $C, y: *mut $C, incy: i64) {
                // SAFETY: as above.
                unsafe { blas::gemv::<$T>(trans as u8, m, n, <$T>::from_c(alpha), a as *const $T, lda, x as *const $T, incx, <$T>::from_c(beta), y as *mut $T, incy) }
            }
            /// BLAS ger: `A = A + alpha*x*y^T`, `A` m x n column-major (`lda`).
            fn [<TH $R Blas_ger>](m: i64, n: i64, alpha: $C, x: *mut $C, incx: i64, y: *mut $C, incy: i64, a: *mut $C, lda: i64) {
                // SAFETY: as above.
                unsafe { blas::ger::<$T>(m, n, <$T>::from_c(alpha), x as *const $T, incx, y as *const $T, incy, a as *mut $T, lda) }
            }
            /// BLAS gemm: `C = alpha*op(A)*op(B) + beta*C`, column-major, `C` m x n (`ldc`),
            /// `op(A)` m x k, `op(B)` k x n; `transa`/`transb` 'n' or 't'/'c'.
            fn [<TH $R Blas_gemm>](transa: c_char, transb: c_char, m: i64, n: i64, k: i64, alpha: $C, a: *mut $C, lda: i64, b: *mut $C, ldb: i64, beta: $C, c: *mut $C, ldc: i64) {
                // SAFETY: as above.
                unsafe { blas::gemm::<$T>(transa as u8, transb as u8, m, n, k, <$T>::from_c(alpha), a as *const $T, lda, b as *const $T, ldb, <$T>::from_c(beta), c as *mut $T, ldc) }
            }

            /// `x[i] = c` for `n` contiguous elements.
            fn [<TH $R Vector_fill>](x: *mut $C, c: $C, n: isize) {
                // SAFETY: as above.
                unsafe { blas::vfill::<$T>(x as *mut $T, <$T>::from_c(c), n) }
            }
            /// `z = x + c*y` (contiguous; `z` may be `x` or `y`).
            fn [<TH $R Vector_cadd>](z: *mut $C, x: *const $C, y: *const $C, c: $C, n: isize) {
                // SAFETY: as above.
                unsafe { blas::vcadd::<$T>(z as *mut $T, x as *const $T, y as *const $T, <$T>::from_c(c), n) }
            }
            /// `y = x + c`.
            fn [<TH $R Vector_adds>](y: *mut $C, x: *const $C, c: $C, n: isize) {
                // SAFETY: as above.
                unsafe { blas::vadds::<$T>(y as *mut $T, x as *const $T, <$T>::from_c(c), n) }
            }
            /// `z = x * y`.
            fn [<TH $R Vector_cmul>](z: *mut $C, x: *const $C, y: *const $C, n: isize) {
                // SAFETY: as above.
                unsafe { blas::vcmul::<$T>(z as *mut $T, x as *const $T, y as *const $T, n) }
            }
            /// `y = x * c`.
            fn [<TH $R Vector_muls>](y: *mut $C, x: *const $C, c: $C, n: isize) {
                // SAFETY: as above.
                unsafe { blas::vmuls::<$T>(y as *mut $T, x as *const $T, <$T>::from_c(c), n) }
            }
            /// `z = x / y` (integer types: a zero divisor is an error, nothing is written).
            fn [<TH $R Vector_cdiv>](z: *mut $C, x: *const $C, y: *const $C, n: isize) {
                // SAFETY: as above.
                unsafe { blas::vcdiv::<$T>(z as *mut $T, x as *const $T, y as *const $T, n) }
            }
            /// `y = x / c` (integer types: `c == 0` is an error).
            fn [<TH $R Vector_divs>](y: *mut $C, x: *const $C, c: $C, n: isize) {
                // SAFETY: as above.
                unsafe { blas::vdivs::<$T>(y as *mut $T, x as *const $T, <$T>::from_c(c), n) }
            }
            /// `y = x` (`n` contiguous elements; the arrays may overlap).
            fn [<TH $R Vector_copy>](y: *mut $C, x: *const $C, n: isize) {
                // SAFETY: as above.
                unsafe { blas::vcopy::<$T>(y as *mut $T, x as *const $T, n) }
            }
            /// Does nothing: kernels are chosen at run time (kept for TH compatibility).
            fn [<TH $R Vector_vectorDispatchInit>]() {
                Ok(())
            }
        }
    } };
    (@float float $R:ident, $T:ty, $C:ty) => { linalg_api!(@normal $R, $T, $C); };
    (@float half $R:ident, $T:ty, $C:ty) => { linalg_api!(@normal $R, $T, $C); };
    (@float $k:ident $R:ident, $T:ty, $C:ty) => {};
    (@normal $R:ident, $T:ty, $C:ty) => { pastey::paste! {
        th_fn! {
            /// PyTorch TH's `normal_fill`: `size` normal samples with `mean` and `stddev` drawn
            /// from `generator` (Box-Muller in groups of 16 over uniforms drawn in order).
            fn [<TH $R Vector_normal_fill>](data: *mut $C, size: i64, generator: *mut THGenerator as obj, mean: $C, stddev: $C) {
                let (mean, stddev) = (crate::ops::num::Num::to_f64(<$T>::from_c(mean)), crate::ops::num::Num::to_f64(<$T>::from_c(stddev)));
                // SAFETY: caller contract.
                unsafe { blas::normal_fill::<$T>(data as *mut $T, size, generator, mean, stddev) }
            }
        }
    } };
}
crate::th_dtypes!(linalg_api);
