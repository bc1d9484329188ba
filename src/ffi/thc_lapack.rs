//! THC's LAPACK (`THCTensorMathMagma.h`), its batched LU on raw pointers (`THCBlas.h`'s
//! getrf/getrs/getri) and `THC_sleep` (`THCSleep.h`).
//!
//! - `THCuda{,Double}Tensor_{gesv,gels,syev,geev,gesvd,gesvd2,getri,potrf,potri,potrs,qr}`:
//!   TH's host functions (`generic/THTensorLapack.h`: same arguments, NULL inputs meaning the
//!   output in place, option strings, errors and output layouts) on device tensors, staged
//!   through the host (`linalg::lapack::device`): a failing call leaves every output untouched.
//!   cutorch's differences kept: `gesv`/`gels` need a 2-D `b`, `gels` needs `m >= n`.
//! - `THCudaBlas_{S,D}{getrf,getrs,getri}`: cuBLAS's batched contract on device arrays of
//!   device matrix addresses (`cuda::blas::getr`); `getrs`' `info` is one host int.
//! - `THC_sleep`: spins `cycles` clock cycles on the current stream; negative is an error.

#![allow(clippy::too_many_arguments)] // THC's signatures

use super::lapack::{input_or, option};
use super::thc::*;
use super::*;
use crate::cuda::blas::getr;
use crate::linalg::lapack::{Input, device as lapack};
use std::ffi::{c_char, c_int};

macro_rules! thc_lapack {
    ($($P:ident $T:ty;)*) => { $( pastey::paste! {
        th_fn! {
            /// Solves `A X = B` (LU with partial pivoting): `rb_ = X` and `ra_` the LU factors,
            /// column-major; `b_`/`a_` NULL means `rb_`/`ra_` in place. `b_` must be 2-D. A
            /// singular `A` is an error.
            fn [<$P Tensor_gesv>] @[state: *mut THCState](rb_: *mut [<$P Tensor>] as obj, ra_: *mut [<$P Tensor>] as obj, b_: *mut [<$P Tensor>] as input_or(rb_, 1), a_: *mut [<$P Tensor>] as input_or(ra_, 2)) {
                lapack::gesv::<$T>(rb_, ra_, &b_, &a_)
            }
            /// Least-squares solution of `A X = B` (`A` m x n with m >= n, `b_` 2-D): `rb_`
            /// n x nrhs (strides `(1, m)`), `ra_` the packed QR factors.
            fn [<$P Tensor_gels>] @[state: *mut THCState](rb_: *mut [<$P Tensor>] as obj, ra_: *mut [<$P Tensor>] as obj, b_: *mut [<$P Tensor>] as input_or(rb_, 1), a_: *mut [<$P Tensor>] as input_or(ra_, 2)) {
                lapack::gels::<$T>(rb_, ra_, &b_, &a_)
            }
            /// Symmetric eigendecomposition of triangle `uplo` of `a_` (NULL: `rv_`): `re_`
            /// ascending eigenvalues, `rv_` eigenvectors (columns) when `jobz` is "V".
            fn [<$P Tensor_syev>] @[state: *mut THCState](re_: *mut [<$P Tensor>] as obj, rv_: *mut [<$P Tensor>] as obj, a_: *mut [<$P Tensor>] as input_or(rv_, 2), jobz: *const c_char as option, uplo: *const c_char as option) {
                lapack::syev::<$T>(re_, rv_, &a_, jobz, uplo)
            }
            /// General eigendecomposition: `re_` n x 2 (real, imaginary parts), `rv_` right
            /// eigenvectors in LAPACK's real form when `jobvr` is "V".
            fn [<$P Tensor_geev>] @[state: *mut THCState](re_: *mut [<$P Tensor>] as obj, rv_: *mut [<$P Tensor>] as obj, a_: *mut [<$P Tensor>] as view, jobvr: *const c_char as option) {
                lapack::geev::<$T>(re_, rv_, &a_, jobvr)
            }
            /// `a = U diag(S) V^T`; `jobu` "A" (all columns) or "S" (min(m,n)); `rv_` holds V.
            fn [<$P Tensor_gesvd>] @[state: *mut THCState](ru_: *mut [<$P Tensor>] as obj, rs_: *mut [<$P Tensor>] as obj, rv_: *mut [<$P Tensor>] as obj, a: *mut [<$P Tensor>] as view, jobu: *const c_char as option) {
                lapack::gesvd::<$T>([ru_, rs_, rv_], None, &Input { view: a, in_place: false }, jobu, 5)
            }
            /// As `gesvd`; `ra_` receives `a` column-major, and `a` NULL means `ra_`.
            fn [<$P Tensor_gesvd2>] @[state: *mut THCState](ru_: *mut [<$P Tensor>] as obj, rs_: *mut [<$P Tensor>] as obj, rv_: *mut [<$P Tensor>] as obj, ra_: *mut [<$P Tensor>] as obj, a: *mut [<$P Tensor>] as input_or(ra_, 4), jobu: *const c_char as option) {
                lapack::gesvd::<$T>([ru_, rs_, rv_], Some(ra_), &a, jobu, 6)
            }
            /// Matrix inverse (column-major); a singular `a` is an error.
            fn [<$P Tensor_getri>] @[state: *mut THCState](ra_: *mut [<$P Tensor>] as obj, a: *mut [<$P Tensor>] as input_or(ra_, 1)) {
                lapack::getri::<$T>(ra_, &a)
            }
            /// Cholesky factor ("U": A = U^T U, "L": A = L L^T; the other triangle zeroed). A
            /// non-positive-definite `a` is an error.
            fn [<$P Tensor_potrf>] @[state: *mut THCState](ra_: *mut [<$P Tensor>] as obj, a: *mut [<$P Tensor>] as input_or(ra_, 1), uplo: *const c_char as option) {
                lapack::potrf::<$T>(ra_, &a, uplo)
            }
            /// Inverse of `A` from its Cholesky factor `a` (symmetric result).
            fn [<$P Tensor_potri>] @[state: *mut THCState](ra_: *mut [<$P Tensor>] as obj, a: *mut [<$P Tensor>] as input_or(ra_, 1), uplo: *const c_char as option) {
                lapack::potri::<$T>(ra_, &a, uplo)
            }
            /// Solves `A X = B` from the Cholesky factor `a` of `A`; `b` NULL means `rb_`.
            fn [<$P Tensor_potrs>] @[state: *mut THCState](rb_: *mut [<$P Tensor>] as obj, b: *mut [<$P Tensor>] as input_or(rb_, 1), a: *mut [<$P Tensor>] as view, uplo: *const c_char as option) {
                lapack::potrs::<$T>(rb_, &b, &a, uplo)
            }
            /// `a = Q R`: `rq_` m x min(m,n) orthonormal columns, `rr_` upper triangular.
            fn [<$P Tensor_qr>] @[state: *mut THCState](rq_: *mut [<$P Tensor>] as obj, rr_: *mut [<$P Tensor>] as obj, a: *mut [<$P Tensor>] as view) {
                lapack::qr::<$T>(rq_, rr_, &a)
            }
        }
    } )* };
}
thc_lapack! {
    THCuda f32;
    THCudaDouble f64;
}

/// A device pointer argument as an address.
fn addr<P>(p: *const P) -> u64 {
    p as u64
}

macro_rules! thc_getr {
    ($($S:ident $T:ty;)*) => { $( pastey::paste! {
        th_fn! {
            /// LU with partial pivoting (none when `pivot` is NULL) of `batch_size` n x n
            /// column-major device matrices, in place; `pivot` n ints per matrix (1-based),
            /// `info` one device int per matrix (k: `U(k,k)` is zero).
            fn [<THCudaBlas_ $S getrf>] @[state: *mut THCState](n: c_int, a: *mut *mut $T, lda: c_int, pivot: *mut c_int, info: *mut c_int, batch_size: c_int) {
                // SAFETY: caller contract (cuBLAS's getrfBatched: device arrays and matrices).
                unsafe { getr::getrf::<$T>(concat!(stringify!($S), "getrf"), n.into(), addr(a), lda.into(), addr(pivot), addr(info), batch_size.into()) }
            }
            /// Solves `op(A_i) X = B_i` (`transa` 'n'/'t'/'c') from `getrf`'s factors, `B_i`
            /// n x nrhs in place; `info` is a HOST int (0, or -j for an invalid parameter j).
            fn [<THCudaBlas_ $S getrs>] @[state: *mut THCState](transa: c_char, n: c_int, nrhs: c_int, a: *mut *const $T, lda: c_int, pivot: *mut c_int, b: *mut *mut $T, ldb: c_int, info: *mut c_int, batch_size: c_int) {
                // SAFETY: caller contract (cuBLAS's getrsBatched; `info` a host int or NULL).
                unsafe { getr::getrs::<$T>(concat!(stringify!($S), "getrs"), transa as u8, (n.into(), nrhs.into()), (addr(a), lda.into()), addr(pivot), (addr(b), ldb.into()), info, batch_size.into()) }
            }
            /// `C_i = inv(A_i)` from `getrf`'s factors into the n x n matrices of `c`; `info`
            /// one device int per matrix (k: `U(k,k)` is zero, `C_i` not written).
            fn [<THCudaBlas_ $S getri>] @[state: *mut THCState](n: c_int, a: *mut *const $T, lda: c_int, pivot: *mut c_int, c: *mut *mut $T, ldc: c_int, info: *mut c_int, batch_size: c_int) {
                // SAFETY: caller contract (cuBLAS's getriBatched).
                unsafe { getr::getri::<$T>(concat!(stringify!($S), "getri"), n.into(), (addr(a), lda.into()), addr(pivot), (addr(c), ldc.into()), addr(info), batch_size.into()) }
            }
        }
    } )* };
}
thc_getr! {
    S f32;
    D f64;
}

th_fn! {
    /// Queues a kernel spinning `cycles` clock cycles on the current stream (0: nothing;
    /// negative: an error).
    fn THC_sleep @[state: *mut THCState](cycles: i64) {
        crate::cuda::sleep::sleep(cycles)
    }
}
