//! `generic/THTensorLapack.h` (§6 of TH_API.md) for Float and Double: thin wrappers over
//! `crate::linalg`. Outputs come first, inputs last; an input that may be NULL is replaced by
//! the corresponding output (in place), as in TH. Option strings (`uplo`, `trans`, `jobz`, ...)
//! are C strings of which only the first character is read (case-insensitive); NULL or an
//! unknown character is an error. Pivot and info tensors are `THIntTensor`s.

use super::*;
use crate::linalg::lapack::{self as linalg, Input};
use std::ffi::{c_char, c_int};

/// The first character of an option string (None when NULL). As a conversion
/// (`uplo: *const c_char as option`) it leaves checking, and naming the argument, to `linalg`.
///
/// # Safety
/// `s` must be NULL or point to a readable byte.
pub(super) unsafe fn option(s: *const c_char, _arg: u32) -> crate::Result<Option<u8>> {
    // SAFETY: caller contract: a non-NULL string has at least its first byte (or its NUL).
    Ok(if s.is_null() { None } else { Some(unsafe { *s } as u8) })
}

/// The input `p`, defaulting to the output `out` (argument `out_arg`) when NULL.
///
/// # Safety
/// Both must be NULL or live handles of the same type.
pub(super) unsafe fn input_or<H: Handle<Obj = crate::core::tensor::Tensor<T>>, T: crate::Scalar>(
    p: *mut H,
    out: *mut H,
    out_arg: u32,
    arg: u32,
) -> crate::Result<Input<T>> {
    let in_place = p.is_null() || p == out;
    // SAFETY: forwarded contract.
    let view = unsafe { if in_place { view(out, out_arg)? } else { view(p, arg)? } };
    Ok(Input { view, in_place })
}

/// An optional tensor argument (NULL: none).
///
/// # Safety
/// `p` must be NULL or a live handle.
unsafe fn opt_obj<'a, H: Handle>(p: *mut H, arg: u32) -> crate::Result<Option<&'a Shared<H::Obj>>> {
    // SAFETY: forwarded contract.
    if p.is_null() { Ok(None) } else { unsafe { obj(p, arg) }.map(Some) }
}

macro_rules! lapack_api {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => { $( lapack_api!(@kind $K $R, $T); )* };
    // LAPACK is for the full-precision floats only, as in TH.
    (@kind float $R:ident, $T:ty) => { lapack_api!(@one $R, $T); };
    (@kind $k:ident $R:ident, $T:ty) => {};
    (@one $R:ident, $T:ty) => { pastey::paste! {
        th_fn! {
            /// Solves `A X = B` (LU with partial pivoting). `rb_ = X` (n x nrhs, column-major),
            /// `ra_` = the LU factors; `b_`/`a_` NULL means `rb_`/`ra_` in place. A 1-D `b_` is
            /// one right-hand side. A singular `A` is an error naming the zero pivot.
            fn [<TH $R Tensor_gesv>](rb_: *mut [<TH $R Tensor>] as obj, ra_: *mut [<TH $R Tensor>] as obj, b_: *mut [<TH $R Tensor>] as input_or(rb_, 1), a_: *mut [<TH $R Tensor>] as input_or(ra_, 2)) {
                linalg::gesv(rb_, ra_, &b_, &a_)
            }
            /// Solves `op(A) X = B` for triangular `A`; `uplo` "U"/"L", `trans` "N"/"T",
            /// `diag` "N"/"U". `ra_` receives `A` column-major. A zero diagonal (diag "N") is an
            /// error.
            fn [<TH $R Tensor_trtrs>](rb_: *mut [<TH $R Tensor>] as obj, ra_: *mut [<TH $R Tensor>] as obj, b_: *mut [<TH $R Tensor>] as input_or(rb_, 1), a_: *mut [<TH $R Tensor>] as input_or(ra_, 2), uplo: *const c_char as option, trans: *const c_char as option, diag: *const c_char as option) {
                linalg::trtrs(rb_, ra_, &b_, &a_, uplo, trans, diag)
            }
            /// Least squares (m >= n) or minimum-norm (m < n) solution of `A X = B`: `rb_`
            /// becomes n x nrhs (strides `(1, max(m,n))`), `ra_` the packed QR/LQ factors.
            fn [<TH $R Tensor_gels>](rb_: *mut [<TH $R Tensor>] as obj, ra_: *mut [<TH $R Tensor>] as obj, b_: *mut [<TH $R Tensor>] as input_or(rb_, 1), a_: *mut [<TH $R Tensor>] as input_or(ra_, 2)) {
                linalg::gels(rb_, ra_, &b_, &a_)
            }
            /// Symmetric eigendecomposition of triangle `uplo` of `a_` (NULL: `rv_`): `re_`
            /// ascending eigenvalues, `rv_` eigenvectors (columns) when `jobz` is "V".
            fn [<TH $R Tensor_syev>](re_: *mut [<TH $R Tensor>] as obj, rv_: *mut [<TH $R Tensor>] as obj, a_: *mut [<TH $R Tensor>] as input_or(rv_, 2), jobz: *const c_char as option, uplo: *const c_char as option) {
                linalg::syev(re_, rv_, &a_, jobz, uplo)
            }
            /// General eigendecomposition: `re_` (n x 2: real, imaginary parts), `rv_` right
            /// eigenvectors in LAPACK's real form when `jobvr` is "V".
            fn [<TH $R Tensor_geev>](re_: *mut [<TH $R Tensor>] as obj, rv_: *mut [<TH $R Tensor>] as obj, a_: *mut [<TH $R Tensor>] as view, jobvr: *const c_char as option) {
                linalg::geev(re_, rv_, &a_, jobvr)
            }
            /// `a = U diag(S) V^T`; `jobu` "A" (all columns) or "S" (min(m,n) columns); `rv_`
            /// holds V.
            fn [<TH $R Tensor_gesvd>](ru_: *mut [<TH $R Tensor>] as obj, rs_: *mut [<TH $R Tensor>] as obj, rv_: *mut [<TH $R Tensor>] as obj, a: *mut [<TH $R Tensor>] as view, jobu: *const c_char as option) {
                linalg::gesvd(ru_, rs_, rv_, None, &Input { view: a, in_place: false }, jobu, 5)
            }
            /// As `gesvd`; `ra_` receives `a` column-major, and `a` NULL means `ra_`.
            fn [<TH $R Tensor_gesvd2>](ru_: *mut [<TH $R Tensor>] as obj, rs_: *mut [<TH $R Tensor>] as obj, rv_: *mut [<TH $R Tensor>] as obj, ra_: *mut [<TH $R Tensor>] as obj, a: *mut [<TH $R Tensor>] as input_or(ra_, 4), jobu: *const c_char as option) {
                linalg::gesvd(ru_, rs_, rv_, Some(ra_), &a, jobu, 6)
            }
            /// Matrix inverse (column-major); a singular `a` is an error.
            fn [<TH $R Tensor_getri>](ra_: *mut [<TH $R Tensor>] as obj, a: *mut [<TH $R Tensor>] as input_or(ra_, 1)) {
                linalg::getri(ra_, &a)
            }
            /// Cholesky factor: "U" gives U with A = U^T U, "L" gives L with A = L L^T (the
            /// other triangle zeroed). A non-positive-definite `a` is an error.
            fn [<TH $R Tensor_potrf>](ra_: *mut [<TH $R Tensor>] as obj, a: *mut [<TH $R Tensor>] as input_or(ra_, 1), uplo: *const c_char as option) {
                linalg::potrf(ra_, &a, uplo)
            }
            /// Solves `A X = B` from the Cholesky factor `a_` of `A`.
            fn [<TH $R Tensor_potrs>](rb_: *mut [<TH $R Tensor>] as obj, b_: *mut [<TH $R Tensor>] as input_or(rb_, 1), a_: *mut [<TH $R Tensor>] as view, uplo: *const c_char as option) {
                linalg::potrs(rb_, &b_, &a_, uplo)
            }
            /// Inverse of `A` from its Cholesky factor `a` (symmetric result).
            fn [<TH $R Tensor_potri>](ra_: *mut [<TH $R Tensor>] as obj, a: *mut [<TH $R Tensor>] as input_or(ra_, 1), uplo: *const c_char as option) {
                linalg::potri(ra_, &a, uplo)
            }
            /// Pivoted Cholesky: `P^T A P = U^T U` ("U") or `L L^T` ("L"); `rpiv_` 0-based
            /// pivots with `P[rpiv_[k], k] = 1`; `tol < 0` picks LAPACK's default. A
            /// rank-deficient `a` is an error (as in TH).
            fn [<TH $R Tensor_pstrf>](ra_: *mut [<TH $R Tensor>] as obj, rpiv_: *mut THIntTensor as obj, a: *mut [<TH $R Tensor>] as input_or(ra_, 1), uplo: *const c_char as option, tol: $T) {
                linalg::pstrf(ra_, rpiv_, &a, uplo, tol)
            }
            /// `a = Q R`: `rq_` m x min(m,n) with orthonormal columns, `rr_` min(m,n) x n upper
            /// triangular.
            fn [<TH $R Tensor_qr>](rq_: *mut [<TH $R Tensor>] as obj, rr_: *mut [<TH $R Tensor>] as obj, a: *mut [<TH $R Tensor>] as view) {
                linalg::qr(rq_, rr_, &a)
            }
            /// LAPACK's QR: `ra_` packed reflectors and R, `rtau_` reflector scalars.
            fn [<TH $R Tensor_geqrf>](ra_: *mut [<TH $R Tensor>] as obj, rtau_: *mut [<TH $R Tensor>] as obj, a: *mut [<TH $R Tensor>] as input_or(ra_, 1)) {
                linalg::geqrf(ra_, rtau_, &a)
            }
            /// Forms the first `tau`-length columns of Q from `geqrf`'s output.
            fn [<TH $R Tensor_orgqr>](ra_: *mut [<TH $R Tensor>] as obj, a: *mut [<TH $R Tensor>] as input_or(ra_, 1), tau: *mut [<TH $R Tensor>] as view) {
                linalg::orgqr(ra_, &a, &tau)
            }
            /// `ra_ = op(Q) c` (side "L") or `c op(Q)` ("R") with Q from `geqrf`'s `a`, `tau`;
            /// trans "N"/"T". `a` NULL means `ra_`; `c` NULL means `ra_` (in place).
            fn [<TH $R Tensor_ormqr>](ra_: *mut [<TH $R Tensor>] as obj, a: *mut [<TH $R Tensor>] as input_or(ra_, 1), tau: *mut [<TH $R Tensor>] as view, c: *mut [<TH $R Tensor>] as input_or(ra_, 1), side: *const c_char as option, trans: *const c_char as option) {
                linalg::ormqr(ra_, &a.view, &tau, &c, side, trans)
            }
            /// Batched LU of the 3-D `a`: `ra_` factors, `rpivots_` LAPACK 1-based pivots (Int
            /// B x n), `rinfo_` (may be NULL) per-matrix info; `pivot` must be nonzero.
            fn [<TH $R Tensor_btrifact>](ra_: *mut [<TH $R Tensor>] as obj, rpivots_: *mut THIntTensor as obj, rinfo_: *mut THIntTensor as opt_obj, pivot: c_int, a: *mut [<TH $R Tensor>] as view) {
                linalg::btrifact(ra_, rpivots_, rinfo_.map(|r| &**r), pivot != 0, &a)
            }
            /// Batched solve with `btrifact`'s output; `rb_` resized as `b`.
            fn [<TH $R Tensor_btrisolve>](rb_: *mut [<TH $R Tensor>] as obj, b: *mut [<TH $R Tensor>] as view, atf: *mut [<TH $R Tensor>] as view, pivots: *mut THIntTensor as view) {
                linalg::btrisolve(rb_, &b, &atf, &pivots)
            }
        }
    } };
}

crate::th_dtypes!(lapack_api);
