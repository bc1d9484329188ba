//! `generic/THTensorLapack.h` (§6 of TH_API.md) for Float and Double: thin wrappers over
//! `crate::linalg`. Outputs come first, inputs last; an input that may be NULL is replaced by
//! the corresponding output (in place), as in TH. Option strings (`uplo`, `trans`, `jobz`, ...)
//! are C strings of which only the first character is read (case-insensitive); NULL or an
//! unknown character is an error. Pivot and info tensors are `THIntTensor`s.

use super::*;
use crate::linalg::lapack as linalg;
use std::ffi::{c_char, c_int};

/// The first character of an option string (None when NULL).
///
/// # Safety
/// `s` must be NULL or point to a readable byte.
unsafe fn first(s: *const c_char) -> Option<u8> {
    // SAFETY: caller contract: a non-NULL string has at least its first byte (or its NUL).
    if s.is_null() { None } else { Some(unsafe { *s } as u8) }
}

/// The view of an input that defaults to the output `dflt` when NULL, and whether it is that
/// output (in place).
///
/// # Safety
/// Both must be NULL or live handles of the same type.
unsafe fn input_or<H: Handle<Obj = crate::core::tensor::Tensor<T>>, T: crate::Scalar>(
    p: *mut H,
    dflt: *mut H,
    arg: u32,
    dflt_arg: u32,
) -> crate::Result<(crate::core::tensor::View<T>, bool)> {
    if p.is_null() || p == dflt {
        // SAFETY: forwarded contract.
        Ok((unsafe { obj(dflt, dflt_arg)? }.view(), true))
    } else {
        // SAFETY: forwarded contract.
        Ok((unsafe { obj(p, arg)? }.view(), false))
    }
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
            fn [<TH $R Tensor_gesv>](rb_: *mut [<TH $R Tensor>], ra_: *mut [<TH $R Tensor>], b_: *mut [<TH $R Tensor>], a_: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (rb, ra) = unsafe { (obj(rb_, 1)?, obj(ra_, 2)?) };
                // SAFETY: handles from the caller.
                let ((b, bi), (a, ai)) = unsafe { (input_or(b_, rb_, 3, 1)?, input_or(a_, ra_, 4, 2)?) };
                linalg::gesv(rb, ra, &b, &a, bi, ai)
            }
        }
        th_fn! {
            /// Solves `op(A) X = B` for triangular `A`; `uplo` "U"/"L", `trans` "N"/"T",
            /// `diag` "N"/"U". `ra_` receives `A` column-major. A zero diagonal (diag "N") is an
            /// error.
            fn [<TH $R Tensor_trtrs>](rb_: *mut [<TH $R Tensor>], ra_: *mut [<TH $R Tensor>], b_: *mut [<TH $R Tensor>], a_: *mut [<TH $R Tensor>], uplo: *const c_char, trans: *const c_char, diag: *const c_char) {
                // SAFETY: handles and strings from the caller.
                unsafe {
                    let (rb, ra) = (obj(rb_, 1)?, obj(ra_, 2)?);
                    let ((b, bi), (a, ai)) = (input_or(b_, rb_, 3, 1)?, input_or(a_, ra_, 4, 2)?);
                    linalg::trtrs(rb, ra, &b, &a, first(uplo), first(trans), first(diag), (bi, ai))
                }
            }
        }
        th_fn! {
            /// Least squares (m >= n) or minimum-norm (m < n) solution of `A X = B`: `rb_`
            /// becomes n x nrhs (strides `(1, max(m,n))`), `ra_` the packed QR/LQ factors.
            fn [<TH $R Tensor_gels>](rb_: *mut [<TH $R Tensor>], ra_: *mut [<TH $R Tensor>], b_: *mut [<TH $R Tensor>], a_: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (rb, ra) = unsafe { (obj(rb_, 1)?, obj(ra_, 2)?) };
                // SAFETY: handles from the caller.
                let ((b, bi), (a, ai)) = unsafe { (input_or(b_, rb_, 3, 1)?, input_or(a_, ra_, 4, 2)?) };
                linalg::gels(rb, ra, &b, &a, bi, ai)
            }
        }
        th_fn! {
            /// Symmetric eigendecomposition of triangle `uplo` of `a_` (NULL: `rv_`): `re_`
            /// ascending eigenvalues, `rv_` eigenvectors (columns) when `jobz` is "V".
            fn [<TH $R Tensor_syev>](re_: *mut [<TH $R Tensor>], rv_: *mut [<TH $R Tensor>], a_: *mut [<TH $R Tensor>], jobz: *const c_char, uplo: *const c_char) {
                // SAFETY: handles and strings from the caller.
                unsafe {
                    let (re, rv) = (obj(re_, 1)?, obj(rv_, 2)?);
                    let (a, ai) = input_or(a_, rv_, 3, 2)?;
                    linalg::syev(re, rv, &a, first(jobz), first(uplo), ai)
                }
            }
        }
        th_fn! {
            /// General eigendecomposition: `re_` (n x 2: real, imaginary parts), `rv_` right
            /// eigenvectors in LAPACK's real form when `jobvr` is "V".
            fn [<TH $R Tensor_geev>](re_: *mut [<TH $R Tensor>], rv_: *mut [<TH $R Tensor>], a_: *mut [<TH $R Tensor>], jobvr: *const c_char) {
                // SAFETY: handles and strings from the caller.
                unsafe {
                    let (re, rv, a) = (obj(re_, 1)?, obj(rv_, 2)?, obj(a_, 3)?.view());
                    linalg::geev(re, rv, &a, first(jobvr))
                }
            }
        }
        th_fn! {
            /// `a = U diag(S) V^T`; `jobu` "A" (all columns) or "S" (min(m,n) columns); `rv_`
            /// holds V.
            fn [<TH $R Tensor_gesvd>](ru_: *mut [<TH $R Tensor>], rs_: *mut [<TH $R Tensor>], rv_: *mut [<TH $R Tensor>], a: *mut [<TH $R Tensor>], jobu: *const c_char) {
                // SAFETY: handles and strings from the caller.
                unsafe {
                    let (ru, rs, rv, a) = (obj(ru_, 1)?, obj(rs_, 2)?, obj(rv_, 3)?, obj(a, 4)?.view());
                    linalg::gesvd(ru, rs, rv, None, &a, first(jobu), false, 5)
                }
            }
        }
        th_fn! {
            /// As `gesvd`; `ra_` receives `a` column-major, and `a` NULL means `ra_`.
            fn [<TH $R Tensor_gesvd2>](ru_: *mut [<TH $R Tensor>], rs_: *mut [<TH $R Tensor>], rv_: *mut [<TH $R Tensor>], ra_: *mut [<TH $R Tensor>], a: *mut [<TH $R Tensor>], jobu: *const c_char) {
                // SAFETY: handles and strings from the caller.
                unsafe {
                    let (ru, rs, rv, ra) = (obj(ru_, 1)?, obj(rs_, 2)?, obj(rv_, 3)?, obj(ra_, 4)?);
                    let (a, ai) = input_or(a, ra_, 5, 4)?;
                    linalg::gesvd(ru, rs, rv, Some(ra), &a, first(jobu), ai, 6)
                }
            }
        }
        th_fn! {
            /// Matrix inverse (column-major); a singular `a` is an error.
            fn [<TH $R Tensor_getri>](ra_: *mut [<TH $R Tensor>], a: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                unsafe {
                    let ra = obj(ra_, 1)?;
                    let (a, ai) = input_or(a, ra_, 2, 1)?;
                    linalg::getri(ra, &a, ai)
                }
            }
        }
        th_fn! {
            /// Cholesky factor: "U" gives U with A = U^T U, "L" gives L with A = L L^T (the
            /// other triangle zeroed). A non-positive-definite `a` is an error.
            fn [<TH $R Tensor_potrf>](ra_: *mut [<TH $R Tensor>], a: *mut [<TH $R Tensor>], uplo: *const c_char) {
                // SAFETY: handles and strings from the caller.
                unsafe {
                    let ra = obj(ra_, 1)?;
                    let (a, ai) = input_or(a, ra_, 2, 1)?;
                    linalg::potrf(ra, &a, first(uplo), ai)
                }
            }
        }
        th_fn! {
            /// Solves `A X = B` from the Cholesky factor `a_` of `A`.
            fn [<TH $R Tensor_potrs>](rb_: *mut [<TH $R Tensor>], b_: *mut [<TH $R Tensor>], a_: *mut [<TH $R Tensor>], uplo: *const c_char) {
                // SAFETY: handles and strings from the caller.
                unsafe {
                    let rb = obj(rb_, 1)?;
                    let (b, bi) = input_or(b_, rb_, 2, 1)?;
                    let a = obj(a_, 3)?.view();
                    linalg::potrs(rb, &b, &a, first(uplo), bi)
                }
            }
        }
        th_fn! {
            /// Inverse of `A` from its Cholesky factor `a` (symmetric result).
            fn [<TH $R Tensor_potri>](ra_: *mut [<TH $R Tensor>], a: *mut [<TH $R Tensor>], uplo: *const c_char) {
                // SAFETY: handles and strings from the caller.
                unsafe {
                    let ra = obj(ra_, 1)?;
                    let (a, ai) = input_or(a, ra_, 2, 1)?;
                    linalg::potri(ra, &a, first(uplo), ai)
                }
            }
        }
        th_fn! {
            /// Pivoted Cholesky: `P^T A P = U^T U` ("U") or `L L^T` ("L"); `rpiv_` 0-based
            /// pivots with `P[rpiv_[k], k] = 1`; `tol < 0` picks LAPACK's default. A
            /// rank-deficient `a` is an error (as in TH).
            fn [<TH $R Tensor_pstrf>](ra_: *mut [<TH $R Tensor>], rpiv_: *mut THIntTensor, a: *mut [<TH $R Tensor>], uplo: *const c_char, tol: $T) {
                // SAFETY: handles and strings from the caller.
                unsafe {
                    let (ra, rpiv) = (obj(ra_, 1)?, obj(rpiv_, 2)?);
                    let (a, ai) = input_or(a, ra_, 3, 1)?;
                    linalg::pstrf(ra, rpiv, &a, first(uplo), tol, ai)
                }
            }
        }
        th_fn! {
            /// `a = Q R`: `rq_` m x min(m,n) with orthonormal columns, `rr_` min(m,n) x n upper
            /// triangular.
            fn [<TH $R Tensor_qr>](rq_: *mut [<TH $R Tensor>], rr_: *mut [<TH $R Tensor>], a: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                unsafe {
                    let (rq, rr, a) = (obj(rq_, 1)?, obj(rr_, 2)?, obj(a, 3)?.view());
                    linalg::qr(rq, rr, &a)
                }
            }
        }
        th_fn! {
            /// LAPACK's QR: `ra_` packed reflectors and R, `rtau_` reflector scalars.
            fn [<TH $R Tensor_geqrf>](ra_: *mut [<TH $R Tensor>], rtau_: *mut [<TH $R Tensor>], a: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                unsafe {
                    let (ra, rtau) = (obj(ra_, 1)?, obj(rtau_, 2)?);
                    let (a, ai) = input_or(a, ra_, 3, 1)?;
                    linalg::geqrf(ra, rtau, &a, ai)
                }
            }
        }
        th_fn! {
            /// Forms the first `tau`-length columns of Q from `geqrf`'s output.
            fn [<TH $R Tensor_orgqr>](ra_: *mut [<TH $R Tensor>], a: *mut [<TH $R Tensor>], tau: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                unsafe {
                    let ra = obj(ra_, 1)?;
                    let (a, ai) = input_or(a, ra_, 2, 1)?;
                    let tau = obj(tau, 3)?.view();
                    linalg::orgqr(ra, &a, &tau, ai)
                }
            }
        }
        th_fn! {
            /// `ra_ = op(Q) c` (side "L") or `c op(Q)` ("R") with Q from `geqrf`'s `a`, `tau`;
            /// trans "N"/"T". `a` NULL means `ra_`; `c` NULL means `ra_` (in place).
            fn [<TH $R Tensor_ormqr>](ra_: *mut [<TH $R Tensor>], a: *mut [<TH $R Tensor>], tau: *mut [<TH $R Tensor>], c: *mut [<TH $R Tensor>], side: *const c_char, trans: *const c_char) {
                // SAFETY: handles and strings from the caller.
                unsafe {
                    let ra = obj(ra_, 1)?;
                    let (a, _) = input_or(a, ra_, 2, 1)?;
                    let tau = obj(tau, 3)?.view();
                    let (c, ci) = input_or(c, ra_, 4, 1)?;
                    linalg::ormqr(ra, &a, &tau, &c, first(side), first(trans), ci)
                }
            }
        }
        th_fn! {
            /// Batched LU of the 3-D `a`: `ra_` factors, `rpivots_` LAPACK 1-based pivots (Int
            /// B x n), `rinfo_` (may be NULL) per-matrix info; `pivot` must be nonzero.
            fn [<TH $R Tensor_btrifact>](ra_: *mut [<TH $R Tensor>], rpivots_: *mut THIntTensor, rinfo_: *mut THIntTensor, pivot: c_int, a: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                unsafe {
                    let (ra, rp) = (obj(ra_, 1)?, obj(rpivots_, 2)?);
                    let ri = if rinfo_.is_null() { None } else { Some(obj(rinfo_, 3)?) };
                    let a = obj(a, 5)?.view();
                    linalg::btrifact(ra, rp, ri.map(|r| &**r), pivot != 0, &a)
                }
            }
        }
        th_fn! {
            /// Batched solve with `btrifact`'s output; `rb_` resized as `b`.
            fn [<TH $R Tensor_btrisolve>](rb_: *mut [<TH $R Tensor>], b: *mut [<TH $R Tensor>], atf: *mut [<TH $R Tensor>], pivots: *mut THIntTensor) {
                // SAFETY: handles from the caller.
                unsafe {
                    let rb = obj(rb_, 1)?;
                    let (b, atf, piv) = (obj(b, 2)?.view(), obj(atf, 3)?.view(), obj(pivots, 4)?.view());
                    linalg::btrisolve(rb, &b, &atf, &piv)
                }
            }
        }
    } };
}

crate::th_dtypes!(lapack_api);
