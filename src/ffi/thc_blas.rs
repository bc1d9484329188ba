//! THC's products (`THCTensorMathBlas.h`) and raw BLAS (`THCBlas.h`).
//!
//! - `THCuda{,Double,Half,BFloat16,Byte,Char,Short,Int,Long}Tensor_{addmv,addmm,addr,addbmm,
//!   baddbmm}`: TH's `linalg::products` (same checks, errors and aliasing rules), whose engine
//!   runs device operands on `cuda::blas` (cuBLAS for the floating dtypes, the integer GEMM
//!   kernel for the others). `_dot`: the device reduction, returned as THC's accreal (`float`
//!   for Float, Half and BFloat16, `double` for Double, `long` for the integers).
//! - `THCudaBlas_{S,D,H}dot`, `{S,D}gemv`, `{S,D}ger`, `{S,D,H}gemm`, `{S,D}gemmBatched`,
//!   `{S,D}gemmStridedBatched`: column-major BLAS on device pointers of the current device,
//!   on its current stream (`cuda::blas::raw`: THC's transpose chars and leading-dimension
//!   fix-ups; increments must be positive).
//! - `THCuda{,Double}Tensor_{btrifact,btrisolve}`: batched LU and solve, staged through the host
//!   LAPACK (`linalg::lapack::device::lu`; Float and Double, the dtypes the CPU side factors).
//! - Not here: the other dtypes' `btrifact` / `btrisolve` (THC itself only implemented the
//!   floating ones); `THCudaBlas_{S,D}{getrf,getrs,getri}` are in `thc_lapack.rs`.

#![allow(clippy::too_many_arguments)] // THC's signatures

use super::thc::*;
use super::*;
use crate::cuda::blas::raw;
use crate::linalg::lapack::device::lu;
use crate::linalg::products;
use crate::ops::reduce;
use std::ffi::{c_char, c_int, c_long};

/// An optional handle (NULL: none).
///
/// # Safety
/// `p` is NULL or a live handle of its type.
unsafe fn opt_obj<'a, H: Handle>(p: *mut H, arg: u32) -> Result<Option<&'a Shared<H::Obj>>> {
    // SAFETY: forwarded contract.
    if p.is_null() { Ok(None) } else { unsafe { obj(p, arg) }.map(Some) }
}

macro_rules! thc_lu {
    ($($P:ident $T:ty;)*) => { $( pastey::paste! {
        th_fn! {
            /// Batched LU of the 3-D `a` (B x n x n): `ra_` the factors, `rpivots_` LAPACK's
            /// 1-based pivots (B x n), `rinfo_` (may be NULL) each matrix's info; `pivot` must
            /// be nonzero. Computed by the host LAPACK (the data is staged there).
            fn [<$P Tensor_btrifact>] @[state: *mut THCState](ra_: *mut [<$P Tensor>] as obj, rpivots_: *mut THCudaIntTensor as obj, rinfo_: *mut THCudaIntTensor as opt_obj, pivot: c_int, a: *mut [<$P Tensor>] as view) {
                lu::btrifact::<$T>(ra_, rpivots_, rinfo_.map(|r| &**r), pivot != 0, &a)
            }
            /// Solves each `A_i x = b_i` with `btrifact`'s `atf` and `pivots`; `rb_` resized as
            /// `b`. Computed by the host LAPACK.
            fn [<$P Tensor_btrisolve>] @[state: *mut THCState](rb_: *mut [<$P Tensor>] as obj, b: *mut [<$P Tensor>] as view, atf: *mut [<$P Tensor>] as view, pivots: *mut THCudaIntTensor as view) {
                lu::btrisolve::<$T>(rb_, &b, &atf, &pivots)
            }
        }
    } )* };
}
thc_lu! {
    THCuda f32;
    THCudaDouble f64;
}

macro_rules! thc_blas {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => {
        $( thc_blas!(@pre $R, $T, $C); )*
    };
    (@pre Bool, $T:ty, $C:ty) => {};
    (@pre Float, $T:ty, $C:ty) => { thc_blas!(@gen [THCuda] Float, $T, $C); };
    (@pre $R:ident, $T:ty, $C:ty) => { thc_blas!(@gen [THCuda $R] $R, $T, $C); };
    (@acc Float) => { f32 };
    (@acc Double) => { f64 };
    (@acc Half) => { f32 };
    (@acc BFloat16) => { f32 };
    (@acc $R:ident) => { c_long };
    (@gen [$($P:tt)*] $R:ident, $T:ty, $C:ty) => { pastey::paste! {
        th_fn! {
            /// `sum self[i]*src[i]` over elements paired in row-major order (same element
            /// count), accumulated on the device, as THC's accreal.
            fn [<$($P)* Tensor_dot>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as view, src: *mut [<$($P)* Tensor>] as view) -> thc_blas!(@acc $R) = Default::default(); {
                Ok(reduce::dot(&self_, &src)? as thc_blas!(@acc $R))
            }
            /// `self = beta*t + alpha*(mat @ vec)`: `mat` n x k, `vec` k, `t` n.
            fn [<$($P)* Tensor_addmv>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, beta: $C, t: *mut [<$($P)* Tensor>] as view, alpha: $C, mat: *mut [<$($P)* Tensor>] as view, vec: *mut [<$($P)* Tensor>] as view) {
                products::addmv(self_, <$T>::from_c(beta), &t, <$T>::from_c(alpha), &mat, &vec)
            }
            /// `self = beta*t + alpha*(mat1 @ mat2)`: `mat1` n x k, `mat2` k x p, `t` n x p.
            fn [<$($P)* Tensor_addmm>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, beta: $C, t: *mut [<$($P)* Tensor>] as view, alpha: $C, mat1: *mut [<$($P)* Tensor>] as view, mat2: *mut [<$($P)* Tensor>] as view) {
                products::addmm(self_, <$T>::from_c(beta), &t, <$T>::from_c(alpha), &mat1, &mat2)
            }
            /// `self = beta*t + alpha*outer(vec1, vec2)`: `t` len(vec1) x len(vec2).
            fn [<$($P)* Tensor_addr>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, beta: $C, t: *mut [<$($P)* Tensor>] as view, alpha: $C, vec1: *mut [<$($P)* Tensor>] as view, vec2: *mut [<$($P)* Tensor>] as view) {
                products::addr(self_, <$T>::from_c(beta), &t, <$T>::from_c(alpha), &vec1, &vec2)
            }
            /// `result = beta*t + alpha*sum_b batch1[b] @ batch2[b]`: batch1 B x n x k, batch2
            /// B x k x p, `t` n x p.
            fn [<$($P)* Tensor_addbmm>] @[state: *mut THCState](result: *mut [<$($P)* Tensor>] as obj, beta: $C, t: *mut [<$($P)* Tensor>] as view, alpha: $C, batch1: *mut [<$($P)* Tensor>] as view, batch2: *mut [<$($P)* Tensor>] as view) {
                products::addbmm(result, <$T>::from_c(beta), &t, <$T>::from_c(alpha), &batch1, &batch2)
            }
            /// `result[b] = beta*t[b] + alpha*batch1[b] @ batch2[b]`: `t` B x n x p.
            fn [<$($P)* Tensor_baddbmm>] @[state: *mut THCState](result: *mut [<$($P)* Tensor>] as obj, beta: $C, t: *mut [<$($P)* Tensor>] as view, alpha: $C, batch1: *mut [<$($P)* Tensor>] as view, batch2: *mut [<$($P)* Tensor>] as view) {
                products::baddbmm(result, <$T>::from_c(beta), &t, <$T>::from_c(alpha), &batch1, &batch2)
            }
        }
    } };
}
crate::th_dtypes!(thc_blas);

/// A device pointer argument as an address.
fn addr<P>(p: *const P) -> u64 {
    p as u64
}

macro_rules! raw_blas {
    ($($S:ident $T:ty, $C:ty, $Acc:ty;)*) => { $( pastey::paste! {
        th_fn! {
            /// `sum x[i]*y[i]` over `n` elements of two device vectors (increments >= 1).
            fn [<THCudaBlas_ $S dot>] @[state: *mut THCState](n: c_long, x: *mut $C, incx: c_long, y: *mut $C, incy: c_long) -> $Acc = Default::default(); {
                // SAFETY: caller contract (THC's: device vectors of n elements).
                let r: $T = unsafe { raw::dot(concat!(stringify!($S), "dot"), n, (addr(x), incx), (addr(y), incy)) }?;
                Ok(crate::ops::num::Num::to_f64(r) as $Acc)
            }
            /// `C = alpha*op(A)*op(B) + beta*C`, column-major device matrices (`'n'`/`'t'`/`'c'`).
            fn [<THCudaBlas_ $S gemm>] @[state: *mut THCState](transa: c_char, transb: c_char, m: c_long, n: c_long, k: c_long, alpha: $C, a: *mut $C, lda: c_long, b: *mut $C, ldb: c_long, beta: $C, c: *mut $C, ldc: c_long) {
                let args = (transa as u8, transb as u8, m, n, k, lda, ldb, ldc);
                // SAFETY: caller contract (device matrices of the current device).
                unsafe { raw::gemm_strided_batched(concat!(stringify!($S), "gemm"), [7, 9, 12], args, <$T>::from_c(alpha), (addr(a), 0), (addr(b), 0), <$T>::from_c(beta), (addr(c), 0), 1) }
            }
        }
    } )* };
}
raw_blas! {
    S f32, f32, f32;
    D f64, f64, f64;
    H half::f16, THHalf, f32;
}

macro_rules! raw_blas_sd {
    ($($S:ident $T:ty;)*) => { $( pastey::paste! {
        th_fn! {
            /// `y = alpha*op(A)*x + beta*y`, `A` m x n column-major on the device.
            fn [<THCudaBlas_ $S gemv>] @[state: *mut THCState](trans: c_char, m: c_long, n: c_long, alpha: $T, a: *mut $T, lda: c_long, x: *mut $T, incx: c_long, beta: $T, y: *mut $T, incy: c_long) {
                // SAFETY: caller contract.
                unsafe { raw::gemv(concat!(stringify!($S), "gemv"), (trans as u8, m, n), alpha, (addr(a), lda), (addr(x), incx), beta, (addr(y), incy)) }
            }
            /// `A = A + alpha*x*y^T`, `A` m x n column-major on the device.
            fn [<THCudaBlas_ $S ger>] @[state: *mut THCState](m: c_long, n: c_long, alpha: $T, x: *mut $T, incx: c_long, y: *mut $T, incy: c_long, a: *mut $T, lda: c_long) {
                // SAFETY: caller contract.
                unsafe { raw::ger(concat!(stringify!($S), "ger"), (m, n), alpha, (addr(x), incx), (addr(y), incy), (addr(a), lda)) }
            }
            /// `gemm` over `batch_count` matrices given by device arrays of device addresses.
            fn [<THCudaBlas_ $S gemmBatched>] @[state: *mut THCState](transa: c_char, transb: c_char, m: c_long, n: c_long, k: c_long, alpha: $T, a: *mut *const $T, lda: c_long, b: *mut *const $T, ldb: c_long, beta: $T, c: *mut *mut $T, ldc: c_long, batch_count: c_long) {
                let args = (transa as u8, transb as u8, m, n, k, lda, ldb, ldc);
                // SAFETY: caller contract.
                unsafe { raw::gemm_batched(concat!(stringify!($S), "gemmBatched"), [7, 9, 12], args, alpha, addr(a), addr(b), beta, addr(c), batch_count) }
            }
            /// `gemm` over `batch_count` matrices `stride_a`/`stride_b`/`stride_c` elements apart.
            fn [<THCudaBlas_ $S gemmStridedBatched>] @[state: *mut THCState](transa: c_char, transb: c_char, m: c_long, n: c_long, k: c_long, alpha: $T, a: *const $T, lda: c_long, stride_a: c_long, b: *const $T, ldb: c_long, stride_b: c_long, beta: $T, c: *mut $T, ldc: c_long, stride_c: c_long, batch_count: c_long) {
                let args = (transa as u8, transb as u8, m, n, k, lda, ldb, ldc);
                // SAFETY: caller contract.
                unsafe { raw::gemm_strided_batched(concat!(stringify!($S), "gemmStridedBatched"), [7, 10, 14], args, alpha, (addr(a), stride_a), (addr(b), stride_b), beta, (addr(c), stride_c), batch_count) }
            }
        }
    } )* };
}
raw_blas_sd! {
    S f32;
    D f64;
}
