//! LAPACK-level linear algebra (`generic/THTensorLapack.h`, Float and Double) on top of `faer`.
//!
//! Every routine reads its inputs into column-major `faer` matrices first, computes every result,
//! and only then writes its outputs, so a failing call (bad shape, singular or non-positive-definite
//! input, a bad option character) leaves every output untouched.
//!
//! Output layouts follow TH, whose results came straight from LAPACK:
//! - a *column-major* output (`colmajor`) becomes a `rows x cols` matrix with strides `(1, rows)`
//!   on its own storage at its own offset (TH's `resize2d(cols, rows)` + `transpose`); when the
//!   output is also the input it replaces (`a == NULL` or `a == ra_`) and already has the
//!   result's shape, it keeps its layout and is overwritten through its strides;
//! - a *kept* output (`resizeAs`/`resize1d` in TH) keeps its strides when its size already
//!   matches, else it becomes contiguous.
//!
//! What `faer` does not provide is built from its pieces: LAPACK's packed reflector form and
//! `tau` (from `faer`'s QR), applying a reflector set (`orgqr`, `ormqr`, `gels`), the LQ form of
//! an underdetermined `gels`, LAPACK's pivot sequences (`ipiv`) from `faer`'s permutations, and
//! the `info` values LAPACK would report.

#![allow(clippy::too_many_arguments)] // TH's argument lists

pub mod device;

use crate::core::dtype::Scalar;
use crate::core::error::{Code, Error, Result};
use crate::core::geometry::Offsets;
use crate::core::tensor::{Tensor, View, size_desc};
use faer::linalg::triangular_solve as trsv;
use faer::reborrow::ReborrowMut;
use faer::traits::RealField;
use faer::{Mat, MatMut, MatRef, Par, Side};

/// Float and Double: the element types LAPACK routines exist for.
pub trait Real: Scalar + RealField + Copy + PartialOrd {
    fn from_f64(x: f64) -> Self;
    fn to_f64(self) -> f64;
    /// Machine epsilon of the type (LAPACK's `dlamch('E')` times 2: the gap above 1).
    const EPS: f64;
}
impl Real for f32 {
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    const EPS: f64 = f32::EPSILON as f64;
}
impl Real for f64 {
    fn from_f64(x: f64) -> Self {
        x
    }
    fn to_f64(self) -> f64 {
        self
    }
    const EPS: f64 = f64::EPSILON;
}

/// The error LAPACK's `info > 0` becomes (TH's `THLapackCheck`).
fn lapack_err(msg: String) -> Error {
    Error::new(Code::TH_ERR_INVALID_ARG, format!("Lapack Error in {msg}"))
}

/// First character of an option string, upper-cased (LAPACK ignores case).
fn opt(c: Option<u8>, name: &str, allowed: &str, arg: u32) -> Result<u8> {
    let ch = c.map(|c| c.to_ascii_uppercase());
    match ch {
        Some(ch) if allowed.as_bytes().contains(&ch) => Ok(ch),
        _ => Err(Error::invalid(format!(
            "{name} must be one of {} (got {})",
            allowed.chars().map(|c| format!("'{c}'")).collect::<Vec<_>>().join(", "),
            match c {
                Some(c) => format!("'{}'", c as char),
                None => "NULL".into(),
            }
        ))
        .at_arg(arg)),
    }
}

fn dims2<T: Scalar>(v: &View<T>, what: &str, arg: u32) -> Result<(usize, usize)> {
    if v.ndim() != 2 {
        return Err(Error::size(format!("{what} should have 2 dimensions, but has {}", v.ndim())).at_arg(arg));
    }
    Ok((v.sizes[0] as usize, v.sizes[1] as usize))
}

fn square<T: Scalar>(v: &View<T>, what: &str, arg: u32) -> Result<usize> {
    let (m, n) = dims2(v, what, arg)?;
    if m != n {
        return Err(Error::size(format!("{what} should be square, but is {m}x{n}")).at_arg(arg));
    }
    Ok(n)
}

/// A 2-D view as a column-major matrix (a copy).
fn read_mat<T: Real>(v: &View<T>) -> Result<Mat<T>> {
    let (m, n) = (v.sizes[0] as usize, v.sizes[1] as usize);
    let d = v.to_vec()?;
    Ok(Mat::from_fn(m, n, |i, j| d[i * n + j]))
}

/// A right-hand side: 1-D `b` is an `n x 1` matrix (TH's `newWithStorage2d` view).
fn read_rhs<T: Real>(b: &View<T>, arg: u32) -> Result<Mat<T>> {
    match b.ndim() {
        1 => {
            let d = b.to_vec()?;
            Ok(Mat::from_fn(d.len(), 1, |i, _| d[i]))
        }
        2 => read_mat(b),
        k => Err(Error::size(format!("B should have 1 or 2 dimensions, but has {k}")).at_arg(arg)),
    }
}

/// The checks TH's `gesv`, `trtrs`, `potrs` (`square_a`: A must be square) and `gels` make on
/// `(b, a)`; A's shape.
fn check_system<T: Scalar>(b: &View<T>, a: &View<T>, square_a: bool) -> Result<(usize, usize)> {
    let (m, n) = dims2(a, "A", 2)?;
    if b.ndim() != 1 && b.ndim() != 2 {
        return Err(Error::size(format!("B should have 1 or 2 dimensions, but has {}", b.ndim())).at_arg(1));
    }
    if square_a {
        square(a, "A", 2)?;
    }
    if b.sizes[0] as usize != m {
        return Err(Error::size(format!("A,B size incompatible - A has {m} rows, B has {}", b.sizes[0])).at_arg(2));
    }
    Ok((m, n))
}

fn mat_rowmajor<T: Real>(m: MatRef<'_, T>) -> Vec<T> {
    let (r, c) = (m.nrows(), m.ncols());
    let mut out = Vec::with_capacity(r * c);
    for i in 0..r {
        for j in 0..c {
            out.push(m[(i, j)]);
        }
    }
    out
}

/// An output planned before anything is written: the tensor, its new geometry, and its
/// elements in the new geometry's row-major order.
pub struct Out<'a, T: Scalar> {
    t: &'a Tensor<T>,
    v: View<T>,
    data: Vec<T>,
}

/// Writes every planned output, then installs the new geometries.
fn commit<T: Scalar>(outs: Vec<Out<'_, T>>) -> Result<()> {
    for o in &outs {
        store(&o.v, &o.data)?;
    }
    for o in outs {
        o.t.set_view(o.v);
    }
    Ok(())
}

/// `v <- data` (row-major order of `v`).
fn store<T: Scalar>(v: &View<T>, data: &[T]) -> Result<()> {
    if v.numel() != data.len() {
        return Err(Error::internal(format!("store: {} values for {}", data.len(), size_desc(&v.sizes))));
    }
    let Some(p) = v.host_ptr()? else { return Ok(()) };
    for (o, &x) in Offsets::new(v.offset, &v.sizes, &v.strides, data.len()).zip(data) {
        // SAFETY: every offset of the view lies inside its storage (host_ptr checked it).
        unsafe { p.add(o).write(x) };
    }
    Ok(())
}

/// TH's column-major output rule (see the module docs).
fn colmajor_view<T: Scalar>(r: &Tensor<T>, in_place: bool, rows: usize, cols: usize) -> Result<View<T>> {
    let cur = r.view();
    let (ri, ci) = (rows as i64, cols as i64);
    if cur.sizes == [ri, ci] && (in_place || cur.strides == [1, ri]) {
        return Ok(cur);
    }
    View::on_storage(cur.storage.clone(), cur.offset as isize, &[ri, ci], Some(&[1, ri]))
}

fn colmajor<'a, T: Real>(r: &'a Tensor<T>, in_place: bool, m: MatRef<'_, T>) -> Result<Out<'a, T>> {
    let v = colmajor_view(r, in_place, m.nrows(), m.ncols())?;
    Ok(Out { t: r, v, data: mat_rowmajor(m) })
}

/// TH's `resizeAs`/`resizeNd` output rule: strides kept when the size already matches.
fn kept<'a, T: Scalar>(r: &'a Tensor<T>, sizes: &[i64], data: Vec<T>) -> Result<Out<'a, T>> {
    let cur = r.view();
    let v = if cur.sizes == sizes { cur } else { cur.resize(sizes, None)? };
    Ok(Out { t: r, v, data })
}

fn kept_mat<'a, T: Real>(r: &'a Tensor<T>, m: MatRef<'_, T>) -> Result<Out<'a, T>> {
    kept(r, &[m.nrows() as i64, m.ncols() as i64], mat_rowmajor(m))
}

// ---------------------------------------------------------------------------------------------
// Factorization building blocks
// ---------------------------------------------------------------------------------------------

/// LU with partial pivoting (`getrf`): the packed factors (unit L below the diagonal, U on and
/// above), LAPACK's 1-based `ipiv`, and `info` (the 1-based index of the first exactly-zero
/// pivot, 0 if none).
pub(crate) struct Lu<T> {
    pub(crate) lu: Mat<T>,
    pub(crate) ipiv: Vec<i32>,
    pub(crate) info: usize,
}

pub(crate) fn lu_factor<T: Real>(a: MatRef<'_, T>) -> Lu<T> {
    let n = a.nrows();
    let f = a.partial_piv_lu();
    let (l, u) = (f.L(), f.U());
    let lu = Mat::from_fn(n, n, |i, j| if i > j { l[(i, j)] } else { u[(i, j)] });
    let fwd = f.P().arrays().0;
    let info = (0..n).find(|&i| lu[(i, i)] == T::from_f64(0.0)).map_or(0, |i| i + 1);
    let mut out = Lu { lu, ipiv: swaps_of(fwd), info };
    if info != 0 || (!all_finite(out.lu.as_ref()) && all_finite(a)) {
        // faer divides by an exactly-zero pivot (NaN below it, spreading through the trailing
        // updates); LAPACK skips the scaling of that column and goes on. Singular inputs get
        // LAPACK's unblocked rule so the factors returned with `info > 0` are LAPACK's.
        out = lu_unblocked(a, true);
    }
    out
}

fn all_finite<T: Real>(m: MatRef<'_, T>) -> bool {
    (0..m.ncols()).all(|j| (0..m.nrows()).all(|i| m[(i, j)].to_f64().is_finite()))
}

/// LAPACK's `getf2` (right-looking, first largest |pivot|, zero pivots skipped); used for
/// matrices with an exactly-zero pivot, which `faer`'s LU does not handle, and without the row
/// search (`pivot == false`, `ipiv` the identity) for cuBLAS's unpivoted batched LU.
pub(crate) fn lu_unblocked<T: Real>(a: MatRef<'_, T>, pivot: bool) -> Lu<T> {
    let n = a.nrows();
    let mut m = a.to_owned();
    let mut ipiv = vec![0i32; n];
    let mut info = 0;
    for j in 0..n {
        let mut p = j;
        let mut best = m[(j, j)].to_f64().abs();
        for i in (j + 1..n).filter(|_| pivot) {
            let v = m[(i, j)].to_f64().abs();
            if v > best || best.is_nan() && !v.is_nan() {
                best = v;
                p = i;
            }
        }
        ipiv[j] = (p + 1) as i32;
        if m[(p, j)] != T::from_f64(0.0) {
            if p != j {
                for c in 0..n {
                    let t = m[(j, c)];
                    m[(j, c)] = m[(p, c)];
                    m[(p, c)] = t;
                }
            }
            let piv = m[(j, j)];
            for i in j + 1..n {
                m[(i, j)] /= piv;
            }
        } else if info == 0 {
            info = j + 1;
        }
        for c in j + 1..n {
            let u = m[(j, c)];
            for i in j + 1..n {
                let d = m[(i, j)] * u;
                m[(i, c)] -= d;
            }
        }
    }
    Lu { lu: m, ipiv, info }
}

/// LAPACK's row-interchange sequence (1-based `ipiv`: row `i` swapped with row `ipiv[i]-1`, in
/// order) for the permutation with `fwd[i]` = the original row that ends at position `i`. The
/// sequence with `ipiv[i] >= i+1` is unique, so it equals LAPACK's for the same permutation.
fn swaps_of(fwd: &[usize]) -> Vec<i32> {
    let n = fwd.len();
    let mut cur: Vec<usize> = (0..n).collect(); // cur[pos] = original row at pos
    let mut pos: Vec<usize> = (0..n).collect(); // pos[row] = where the original row is
    let mut ipiv = vec![0i32; n];
    for (i, (&f, ip)) in fwd.iter().zip(ipiv.iter_mut()).enumerate() {
        let p = pos[f];
        *ip = (p + 1) as i32;
        let (ri, rp) = (cur[i], cur[p]);
        cur.swap(i, p);
        pos[ri] = p;
        pos[rp] = i;
    }
    ipiv
}

/// `b <- P b` for LAPACK's `ipiv` (`getrs`' `laswp`).
pub(crate) fn apply_ipiv<T: Real>(mut b: MatMut<'_, T>, ipiv: &[i32]) {
    for (i, &p) in ipiv.iter().enumerate() {
        let p = (p - 1) as usize;
        if p != i {
            for c in 0..b.ncols() {
                let t = b[(i, c)];
                b[(i, c)] = b[(p, c)];
                b[(p, c)] = t;
            }
        }
    }
}

/// `getrs('N')`: solves `A X = B` in place from packed LU factors and `ipiv`.
fn lu_solve<T: Real>(lu: MatRef<'_, T>, ipiv: &[i32], mut b: MatMut<'_, T>) {
    apply_ipiv(b.rb_mut(), ipiv);
    trsv::solve_unit_lower_triangular_in_place(lu, b.rb_mut(), Par::Seq);
    trsv::solve_upper_triangular_in_place(lu, b.rb_mut(), Par::Seq);
}

/// The triangle `uplo` of `a` ('U' or 'L'), zeros elsewhere.
fn triangle<T: Real>(a: MatRef<'_, T>, uplo: u8) -> Mat<T> {
    Mat::from_fn(a.nrows(), a.ncols(), |i, j| {
        if (uplo == b'U' && i <= j) || (uplo == b'L' && i >= j) { a[(i, j)] } else { T::from_f64(0.0) }
    })
}

/// Symmetric matrix from the triangle `uplo` of `a` (LAPACK reads only that triangle).
fn symmetric<T: Real>(a: MatRef<'_, T>, uplo: u8) -> Mat<T> {
    Mat::from_fn(a.nrows(), a.ncols(), |i, j| {
        let (r, c) = if (uplo == b'U') == (i <= j) { (i, j) } else { (j, i) };
        a[(r, c)]
    })
}

/// Householder QR in LAPACK's `geqrf` form: R on and above the diagonal, the essential parts
/// of the reflectors `v_i` below it (`v_i(i) = 1` implied), and `tau` with
/// `H_i = I - tau_i v_i v_i^T`, `A = H_1 ... H_k R`.
fn geqrf_mat<T: Real>(a: MatRef<'_, T>) -> (Mat<T>, Vec<T>) {
    let (m, n) = (a.nrows(), a.ncols());
    let k = m.min(n);
    let qr = a.qr();
    let (basis, r, coeff) = (qr.Q_basis(), qr.R(), qr.Q_coeff());
    let packed = Mat::from_fn(m, n, |i, j| if i > j { basis[(i, j)] } else { r[(i, j)] });
    // faer writes each reflector as I - v v^T / t with t on the diagonal of its block's
    // triangular factor (blocks of `bs` columns); LAPACK's tau is 1/t (t = inf: H = I, tau 0).
    let bs = coeff.nrows();
    let tau = (0..k)
        .map(|j| {
            let t = coeff[(j % bs, j)].to_f64();
            T::from_f64(if t.is_infinite() { 0.0 } else { 1.0 / t })
        })
        .collect();
    (packed, tau)
}

/// `c <- H_i c` for reflector `i` of a packed set (rows `i..` of column `i` of `v`, with an
/// implied 1 at row `i`), applied from the left.
fn reflect_left<T: Real>(v: MatRef<'_, T>, i: usize, tau: T, mut c: MatMut<'_, T>) {
    if tau == T::from_f64(0.0) {
        return;
    }
    let m = c.nrows();
    for col in 0..c.ncols() {
        let mut w = c[(i, col)];
        for r in i + 1..m {
            w += v[(r, i)] * c[(r, col)];
        }
        let tw = tau * w;
        c[(i, col)] -= tw;
        for r in i + 1..m {
            let d = v[(r, i)] * tw;
            c[(r, col)] -= d;
        }
    }
}

/// `c <- c H_i` (reflector `i`, applied from the right; `c` has as many columns as `v` rows).
fn reflect_right<T: Real>(v: MatRef<'_, T>, i: usize, tau: T, c: MatMut<'_, T>) {
    reflect_left(v, i, tau, c.transpose_mut());
}

/// `c <- op(Q) c` (`left`) or `c op(Q)`, `Q = H_1 ... H_k` (LAPACK's `ormqr`).
fn apply_q<T: Real>(v: MatRef<'_, T>, tau: &[T], left: bool, transpose: bool, mut c: MatMut<'_, T>) {
    let k = tau.len();
    // Q c = H_1 (H_2 (... H_k c)): the last reflector first; Q^T c: the first first.
    // c Q = ((c H_1) H_2) ...: the first first; c Q^T: the last first.
    let forward = left == transpose;
    for s in 0..k {
        let i = if forward { s } else { k - 1 - s };
        if left {
            reflect_left(v, i, tau[i], c.rb_mut());
        } else {
            reflect_right(v, i, tau[i], c.rb_mut());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// generic/THTensorLapack.h
// ---------------------------------------------------------------------------------------------

/// An input matrix that may be its output: TH's LAPACK functions take `a == NULL` (or `a` the
/// output itself) to mean "the output, in place", which lets the result keep the output's
/// column-major layout without a copy.
pub struct Input<T: Scalar> {
    pub view: View<T>,
    /// The input is the output tensor itself.
    pub in_place: bool,
}

impl<T: Scalar> std::ops::Deref for Input<T> {
    type Target = View<T>;
    fn deref(&self) -> &View<T> {
        &self.view
    }
}

/// `gesv`: solves `A X = B`; `rb_ = X` (n x nrhs), `ra_` = the LU factors of `A` (as `getrf`).
pub fn gesv<T: Real>(rb: &Tensor<T>, ra: &Tensor<T>, b: &Input<T>, a: &Input<T>) -> Result<()> {
    check_system(b, a, true)?;
    let f = lu_factor(read_mat(a)?.as_ref());
    if f.info != 0 {
        return Err(lapack_err(format!("gesv : U({i},{i}) is zero, singular U.", i = f.info)));
    }
    let mut x = read_rhs(b, 1)?;
    lu_solve(f.lu.as_ref(), &f.ipiv, x.as_mut());
    commit(vec![colmajor(rb, b.in_place, x.as_ref())?, colmajor(ra, a.in_place, f.lu.as_ref())?])
}

/// `trtrs`: solves `op(A) X = B` for triangular `A` (`uplo` 'U'/'L', `trans` 'N'/'T'/'C',
/// `diag` 'N'/'U'); `rb_ = X`, `ra_` = a column-major copy of `A`.
pub fn trtrs<T: Real>(
    rb: &Tensor<T>,
    ra: &Tensor<T>,
    b: &Input<T>,
    a: &Input<T>,
    uplo: Option<u8>,
    trans: Option<u8>,
    diag: Option<u8>,
) -> Result<()> {
    check_system(b, a, true)?;
    let uplo = opt(uplo, "uplo", "UL", 5)?;
    let trans = opt(trans, "trans", "NTC", 6)?;
    let diag = opt(diag, "diag", "NU", 7)?;
    let am = read_mat(a)?;
    let n = am.nrows();
    if diag == b'N'
        && let Some(i) = (0..n).find(|&i| am[(i, i)] == T::from_f64(0.0))
    {
        return Err(lapack_err(format!("trtrs : A({0},{0}) is zero, singular A", i + 1)));
    }
    let mut t = triangle(am.as_ref(), uplo);
    if diag == b'U' {
        for i in 0..n {
            t[(i, i)] = T::from_f64(1.0);
        }
    }
    let mut x = read_rhs(b, 1)?;
    let op = if trans == b'N' { t.as_ref() } else { t.as_ref().transpose() };
    if (uplo == b'U') == (trans == b'N') {
        trsv::solve_upper_triangular_in_place(op, x.as_mut(), Par::Seq);
    } else {
        trsv::solve_lower_triangular_in_place(op, x.as_mut(), Par::Seq);
    }
    commit(vec![colmajor(rb, b.in_place, x.as_ref())?, colmajor(ra, a.in_place, am.as_ref())?])
}

/// `gels`: least squares (`m >= n`) or minimum-norm (`m < n`) solution of `A X = B`.
/// `rb_` becomes `n x nrhs` with strides `(1, max(m, n))` over a column-major `max(m,n) x nrhs`
/// block whose rows `n..m` hold the components of `Q^T B` giving the residual (LAPACK's layout);
/// `ra_` holds the packed QR (`m >= n`) or LQ (`m < n`) factors. A rank-deficient `A` (an exactly
/// zero diagonal element of R or L) is an error.
pub fn gels<T: Real>(rb: &Tensor<T>, ra: &Tensor<T>, b: &Input<T>, a: &Input<T>) -> Result<()> {
    let (m, n) = check_system(b, a, false)?;
    let am = read_mat(a)?;
    let bm = read_rhs(b, 1)?;
    let nrhs = bm.ncols();
    let ldb = m.max(n);
    let k = m.min(n);
    let zero = T::from_f64(0.0);
    // m >= n: the QR factors of A; m < n: A = L Q with the LQ factors of A = the transposed QR
    // factors of A^T (same reflectors).
    let (qr, tau) = geqrf_mat(if m >= n { am.as_ref() } else { am.as_ref().transpose() });
    if let Some(i) = (0..k).find(|&i| qr[(i, i)] == zero) {
        return Err(lapack_err(format!(
            "gels : The {}-th diagonal element of the triangular factor of A is zero",
            i + 1
        )));
    }
    let (packed, full) = if m >= n {
        // Q^T B, then R X = (Q^T B)[..n].
        let mut qtb = bm.clone();
        apply_q(qr.as_ref(), &tau, true, true, qtb.as_mut());
        trsv::solve_upper_triangular_in_place(qr.as_ref().get(..n, ..n), qtb.as_mut().get_mut(..n, ..), Par::Seq);
        (qr, qtb)
    } else {
        // L Y = B (L = R^T, m x m), X = Q^T [Y; 0] = H_1 ... H_m [Y; 0].
        let mut y = bm.clone();
        trsv::solve_lower_triangular_in_place(qr.as_ref().get(..m, ..m).transpose(), y.as_mut(), Par::Seq);
        let mut x = Mat::from_fn(n, nrhs, |i, j| if i < m { y[(i, j)] } else { zero });
        apply_q(qr.as_ref(), &tau, true, false, x.as_mut());
        (qr.transpose().to_owned(), x)
    };
    // rb_: the ldb x nrhs column-major block, seen as its first n rows.
    let cur = rb.view();
    let (ni, ri, li) = (n as i64, nrhs as i64, ldb as i64);
    let rb_out = if b.in_place && cur.sizes == [ni, ri] && m == n {
        Out { t: rb, v: cur, data: mat_rowmajor(full.as_ref().get(..n, ..)) }
    } else {
        let block = View::on_storage(cur.storage.clone(), cur.offset as isize, &[li, ri], Some(&[1, li]))?;
        Out { t: rb, v: block, data: mat_rowmajor(full.as_ref()) }
    };
    let ra_out = colmajor(ra, a.in_place, packed.as_ref())?;
    let shown = rb_out.v.narrow(0, 0, ni)?;
    store(&rb_out.v, &rb_out.data)?;
    store(&ra_out.v, &ra_out.data)?;
    rb.set_view(shown);
    ra.set_view(ra_out.v);
    Ok(())
}

/// `syev`: eigenvalues (ascending) of the symmetric matrix given by triangle `uplo` of `a`
/// into `re_` (1-D n); with `jobz` 'V' the orthonormal eigenvectors into the columns of `rv_`
/// (n x n, column-major). With 'N', `rv_` receives `a` (LAPACK leaves it destroyed).
pub fn syev<T: Real>(re: &Tensor<T>, rv: &Tensor<T>, a: &Input<T>, jobz: Option<u8>, uplo: Option<u8>) -> Result<()> {
    let n = square(a, "A", 1)?;
    let jobz = opt(jobz, "jobz", "NV", 4)?;
    let uplo = opt(uplo, "uplo", "UL", 5)?;
    let am = read_mat(a)?;
    let sym = symmetric(am.as_ref(), uplo);
    let no_conv = |_| lapack_err("syev : the eigenvalue algorithm did not converge".into());
    let (vals, vecs) = if jobz == b'V' {
        let e = sym.as_ref().self_adjoint_eigen(Side::Lower).map_err(no_conv)?;
        let s = e.S().column_vector();
        ((0..n).map(|i| s[i]).collect::<Vec<T>>(), e.U().to_owned())
    } else {
        (sym.as_ref().self_adjoint_eigenvalues(Side::Lower).map_err(no_conv)?, am)
    };
    commit(vec![colmajor(rv, a.in_place, vecs.as_ref())?, kept(re, &[n as i64], vals)?])
}

/// `geev`: eigenvalues of a general square `a` into `re_` (n x 2: real, imaginary parts; a
/// complex-conjugate pair is adjacent, positive imaginary part first); with `jobvr` 'V' the
/// right eigenvectors into `rv_` (n x n, column-major) in LAPACK's form: a real eigenvalue's
/// column is its eigenvector, a pair `(j, j+1)` stores `v = rv[:,j] ± i rv[:,j+1]`; every
/// vector has Euclidean norm 1 and its largest component real.
pub fn geev<T: Real>(re: &Tensor<T>, rv: &Tensor<T>, a: &View<T>, jobvr: Option<u8>) -> Result<()> {
    let n = square(a, "A", 1)?;
    let jobvr = opt(jobvr, "jobvr", "NV", 4)?;
    let am = read_mat(a)?;
    let no_conv = |_| lapack_err("geev : the QR algorithm failed to compute all the eigenvalues".into());
    let mut vals = vec![T::from_f64(0.0); 2 * n];
    let mut outs = Vec::new();
    if jobvr == b'V' {
        let e = faer::linalg::solvers::Eigen::new_from_real(am.as_ref()).map_err(no_conv)?;
        let (u, s) = (e.U(), e.S().column_vector());
        let mut vr = Mat::<T>::zeros(n, n);
        let mut j = 0;
        while j < n {
            let (lr, li) = (s[j].re, s[j].im);
            if li == T::from_f64(0.0) {
                let norm = (0..n).map(|i| u[(i, j)].re.to_f64().powi(2)).sum::<f64>().sqrt();
                let inv = if norm > 0.0 { 1.0 / norm } else { 1.0 };
                for i in 0..n {
                    vr[(i, j)] = T::from_f64(u[(i, j)].re.to_f64() * inv);
                }
                vals[2 * j] = lr;
                j += 1;
                continue;
            }
            if j + 1 >= n {
                return Err(Error::internal("geev: unpaired complex eigenvalue"));
            }
            // The pair (j, j+1): take the member with positive imaginary part.
            let c = if li > T::from_f64(0.0) { j } else { j + 1 };
            let z: Vec<(f64, f64)> = (0..n).map(|i| (u[(i, c)].re.to_f64(), u[(i, c)].im.to_f64())).collect();
            let norm = z.iter().map(|(x, y)| x * x + y * y).sum::<f64>().sqrt();
            let z: Vec<(f64, f64)> = z.iter().map(|(x, y)| (x / norm, y / norm)).collect();
            // LAPACK: rotate so the largest component is real (dlartg + drot).
            let mut kmax = 0;
            let mut best = -1.0;
            for (i, (x, y)) in z.iter().enumerate() {
                let m2 = x * x + y * y;
                if m2 > best {
                    best = m2;
                    kmax = i;
                }
            }
            let (f, g) = z[kmax];
            let d = f.hypot(g);
            let (cs, sn) = if d == 0.0 { (1.0, 0.0) } else { (f.abs() / d, g * f.signum() / d) };
            let sn = if f == 0.0 { g / d } else { sn };
            for (i, (x, y)) in z.iter().enumerate() {
                vr[(i, j)] = T::from_f64(cs * x + sn * y);
                vr[(i, j + 1)] = T::from_f64(if i == kmax { 0.0 } else { cs * y - sn * x });
            }
            let im = s[c].im;
            vals[2 * j] = lr;
            vals[2 * j + 1] = im;
            vals[2 * j + 2] = lr;
            vals[2 * j + 3] = T::from_f64(0.0) - im;
            j += 2;
        }
        outs.push(colmajor(rv, false, vr.as_ref())?);
    } else {
        let ev = am.as_ref().eigenvalues().map_err(no_conv)?;
        let mut j = 0;
        while j < n {
            vals[2 * j] = ev[j].re;
            vals[2 * j + 1] = ev[j].im;
            if ev[j].im != T::from_f64(0.0) && j + 1 < n {
                let im = if ev[j].im > T::from_f64(0.0) { ev[j].im } else { ev[j + 1].im };
                vals[2 * j + 1] = im;
                vals[2 * j + 2] = ev[j].re;
                vals[2 * j + 3] = T::from_f64(0.0) - im;
                j += 1;
            }
            j += 1;
        }
    }
    outs.push(kept(re, &[n as i64, 2], vals)?);
    commit(outs)
}

/// `gesvd2`: `a = U diag(S) V^T`. `jobu` 'A': `ru_` m x m, `rv_` n x n; 'S': `ru_` m x k,
/// `rv_` n x k (k = min(m, n)). `ru_` is column-major, `rv_` holds V (not V^T) and keeps its
/// layout when its size matches (else row-major), `rs_` (1-D k) is descending. `ra_` (when
/// given) receives `a` column-major (LAPACK leaves it destroyed).
pub fn gesvd<T: Real>(
    ru: &Tensor<T>,
    rs: &Tensor<T>,
    rv: &Tensor<T>,
    ra: Option<&Tensor<T>>,
    a: &Input<T>,
    jobu: Option<u8>,
    jobu_arg: u32,
) -> Result<()> {
    let (m, n) = dims2(a, "A", 1)?;
    let jobu = opt(jobu, "jobu", "AS", jobu_arg)?;
    let am = read_mat(a)?;
    let k = m.min(n);
    let svd = if jobu == b'A' { am.as_ref().svd() } else { am.as_ref().thin_svd() }
        .map_err(|_| lapack_err("gesvd : the SVD algorithm did not converge".into()))?;
    let s = svd.S().column_vector();
    let sv: Vec<T> = (0..k).map(|i| s[i]).collect();
    let mut outs = vec![colmajor(ru, false, svd.U())?, kept(rs, &[k as i64], sv)?, kept_mat(rv, svd.V())?];
    if let Some(ra) = ra {
        outs.push(colmajor(ra, a.in_place, am.as_ref())?);
    }
    commit(outs)
}

/// `getri`: the inverse of square `a` (column-major); singular `a` is an error.
pub fn getri<T: Real>(ra: &Tensor<T>, a: &Input<T>) -> Result<()> {
    let n = square(a, "A", 1)?;
    let f = lu_factor(read_mat(a)?.as_ref());
    if f.info != 0 {
        return Err(lapack_err(format!("getrf : U({i},{i}) is 0, U is singular", i = f.info)));
    }
    let mut inv = Mat::<T>::identity(n, n);
    lu_solve(f.lu.as_ref(), &f.ipiv, inv.as_mut());
    commit(vec![colmajor(ra, a.in_place, inv.as_ref())?])
}

/// Cholesky factor of the symmetric matrix given by triangle `uplo` of `a`: upper `U` with
/// `A = U^T U` ('U') or lower `L` with `A = L L^T` ('L'); `Err(info)` when the leading minor
/// of order `info` is not positive definite.
fn cholesky<T: Real>(am: MatRef<'_, T>, uplo: u8) -> std::result::Result<Mat<T>, usize> {
    let side = if uplo == b'U' { Side::Upper } else { Side::Lower };
    match am.llt(side) {
        Ok(f) => Ok(if uplo == b'U' { f.L().transpose().to_owned() } else { f.L().to_owned() }),
        Err(faer::linalg::cholesky::llt::factor::LltError::NonPositivePivot { index }) => Err(index + 1),
    }
}

/// `potrf`: the Cholesky factor of `a` (column-major, the other triangle zeroed).
pub fn potrf<T: Real>(ra: &Tensor<T>, a: &Input<T>, uplo: Option<u8>) -> Result<()> {
    square(a, "A", 1)?;
    let uplo = opt(uplo, "uplo", "UL", 3)?;
    let f = cholesky(read_mat(a)?.as_ref(), uplo)
        .map_err(|i| lapack_err(format!("potrf : the leading minor of order {i} is not positive definite")))?;
    commit(vec![colmajor(ra, a.in_place, f.as_ref())?])
}

/// `potrs`: solves `A X = B` given the Cholesky factor `a` of `A` (triangle `uplo` read).
pub fn potrs<T: Real>(rb: &Tensor<T>, b: &Input<T>, a: &View<T>, uplo: Option<u8>) -> Result<()> {
    check_system(b, a, true)?;
    let uplo = opt(uplo, "uplo", "UL", 4)?;
    let f = triangle(read_mat(a)?.as_ref(), uplo);
    let mut x = read_rhs(b, 1)?;
    if uplo == b'U' {
        trsv::solve_lower_triangular_in_place(f.as_ref().transpose(), x.as_mut(), Par::Seq);
        trsv::solve_upper_triangular_in_place(f.as_ref(), x.as_mut(), Par::Seq);
    } else {
        trsv::solve_lower_triangular_in_place(f.as_ref(), x.as_mut(), Par::Seq);
        trsv::solve_upper_triangular_in_place(f.as_ref().transpose(), x.as_mut(), Par::Seq);
    }
    commit(vec![colmajor(rb, b.in_place, x.as_ref())?])
}

/// `potri`: the inverse of `A` from its Cholesky factor `a` (triangle `uplo`), symmetric,
/// column-major; a zero diagonal element of the factor is an error.
pub fn potri<T: Real>(ra: &Tensor<T>, a: &Input<T>, uplo: Option<u8>) -> Result<()> {
    let n = square(a, "A", 1)?;
    let uplo = opt(uplo, "uplo", "UL", 3)?;
    let am = read_mat(a)?;
    if let Some(i) = (0..n).find(|&i| am[(i, i)] == T::from_f64(0.0)) {
        return Err(lapack_err(format!("potri : A({0},{0}) is 0, A cannot be factorized", i + 1)));
    }
    // inv(A) = F^{-1} F^{-T} ('U', A = U^T U) or F^{-T} F^{-1} ('L', A = L L^T).
    let f = triangle(am.as_ref(), uplo);
    let mut finv = Mat::<T>::identity(n, n);
    if uplo == b'U' {
        trsv::solve_upper_triangular_in_place(f.as_ref(), finv.as_mut(), Par::Seq);
    } else {
        trsv::solve_lower_triangular_in_place(f.as_ref(), finv.as_mut(), Par::Seq);
    }
    let prod = if uplo == b'U' {
        finv.as_ref() * finv.as_ref().transpose()
    } else {
        finv.as_ref().transpose() * finv.as_ref()
    };
    // TH's copyUpLoTriangle: the computed triangle mirrored into the other.
    let inv = symmetric(prod.as_ref(), uplo);
    commit(vec![colmajor(ra, a.in_place, inv.as_ref())?])
}

/// `pstrf`: Cholesky with complete pivoting of the positive semidefinite matrix given by
/// triangle `uplo` of `a`: `P^T A P = U^T U` ('U') or `L L^T` ('L') with `P[piv[k], k] = 1`.
/// `rpiv_` (Int, 1-D n) holds 0-based pivots (PyTorch's TH converted LAPACK's to 0-based).
/// As in TH, a rank-deficient matrix (a pivot `<= tol`; `tol < 0`: `n * eps * max(diag)`) is an
/// error.
pub fn pstrf<T: Real>(ra: &Tensor<T>, rpiv: &Tensor<i32>, a: &Input<T>, uplo: Option<u8>, tol: T) -> Result<()> {
    let n = square(a, "A", 1)?;
    let uplo = opt(uplo, "uplo", "UL", 4)?;
    let am = read_mat(a)?;
    // faer's pivoted Cholesky reads the lower triangle.
    let mut l = if uplo == b'U' { am.as_ref().transpose().to_owned() } else { am.clone() };
    let mut fwd = vec![0usize; n];
    let mut bwd = vec![0usize; n];
    let deficient = || lapack_err("pstrf : matrix is rank deficient or not positive semidefinite".into());
    let mut mem =
        faer::dyn_stack::MemBuffer::new(faer::linalg::cholesky::llt_pivoting::factor::cholesky_in_place_scratch::<
            usize,
            T,
        >(n, Par::Seq, Default::default()));
    let stack = faer::dyn_stack::MemStack::new(&mut mem);
    let (info, _) = faer::linalg::cholesky::llt_pivoting::factor::cholesky_in_place(
        l.as_mut(),
        &mut fwd,
        &mut bwd,
        Par::Seq,
        stack,
        Default::default(),
    )
    .map_err(|_| deficient())?;
    if info.rank < n {
        return Err(deficient());
    }
    // LAPACK stops when a pivot (the updated diagonal, L(j,j)^2) is <= the tolerance.
    let maxdiag = (0..n).map(|i| am[(i, i)].to_f64()).fold(f64::NEG_INFINITY, f64::max);
    let stop = if tol.to_f64() < 0.0 { n as f64 * T::EPS * maxdiag } else { tol.to_f64() };
    if (0..n).any(|j| {
        let d = l[(j, j)].to_f64();
        d.is_nan() || d * d <= stop
    }) {
        return Err(deficient());
    }
    let low = triangle(l.as_ref(), b'L');
    let factor = if uplo == b'U' { low.as_ref().transpose().to_owned() } else { low };
    let piv: Vec<i32> = fwd.iter().map(|&p| p as i32).collect();
    let outs_t = vec![colmajor(ra, a.in_place, factor.as_ref())?];
    let piv_out = kept(rpiv, &[n as i64], piv)?;
    store(&piv_out.v, &piv_out.data)?;
    commit(outs_t)?;
    rpiv.set_view(piv_out.v);
    Ok(())
}

/// `geqrf`: `ra_` = the packed QR factors of `a` (m x n, column-major: R on and above the
/// diagonal, the reflectors below), `rtau_` (1-D min(m, n)) their scalar factors.
pub fn geqrf<T: Real>(ra: &Tensor<T>, rtau: &Tensor<T>, a: &Input<T>) -> Result<()> {
    dims2(a, "A", 1)?;
    let (qr, tau) = geqrf_mat(read_mat(a)?.as_ref());
    let k = tau.len() as i64;
    commit(vec![colmajor(ra, a.in_place, qr.as_ref())?, kept(rtau, &[k], tau)?])
}

fn read_tau<T: Real>(tau: &View<T>, arg: u32) -> Result<Vec<T>> {
    if tau.ndim() != 1 {
        return Err(Error::size(format!("tau should have 1 dimension, but has {}", tau.ndim())).at_arg(arg));
    }
    tau.to_vec()
}

/// `orgqr`: from `geqrf`'s output `a` (m x n) and `tau` (k), `ra_` = `a` with its first k
/// columns replaced by the first k columns of `Q = H_1 ... H_k` (LAPACK `orgqr(m, k, k)`).
pub fn orgqr<T: Real>(ra: &Tensor<T>, a: &Input<T>, tau: &View<T>) -> Result<()> {
    let (m, n) = dims2(a, "A", 1)?;
    let tau = read_tau(tau, 3)?;
    let k = tau.len();
    if k > m || k > n {
        return Err(Error::size(format!("tau has {k} elements, more than A ({m}x{n}) has columns or rows")).at_arg(3));
    }
    let am = read_mat(a)?;
    let mut q = Mat::<T>::identity(m, k);
    apply_q(am.as_ref(), &tau, true, false, q.as_mut());
    let out = Mat::from_fn(m, n, |i, j| if j < k { q[(i, j)] } else { am[(i, j)] });
    commit(vec![colmajor(ra, a.in_place, out.as_ref())?])
}

/// `ormqr`: `ra_ = op(Q) c` (`side` 'L') or `c op(Q)` ('R'), `op` = identity ('N') or transpose
/// ('T'), `Q = H_1 ... H_k` from `geqrf`'s `a` and `tau` (k). `a` has m (L) or n (R) rows.
pub fn ormqr<T: Real>(
    ra: &Tensor<T>,
    a: &View<T>,
    tau: &View<T>,
    c: &Input<T>,
    side: Option<u8>,
    trans: Option<u8>,
) -> Result<()> {
    let (ar, ac) = dims2(a, "A", 2)?;
    let (m, n) = dims2(c, "C", 4)?;
    let tau = read_tau(tau, 3)?;
    let side = opt(side, "side", "LR", 5)?;
    let trans = opt(trans, "trans", "NTC", 6)?;
    let nq = if side == b'L' { m } else { n };
    let k = tau.len();
    if ar != nq {
        return Err(Error::size(format!(
            "A has {ar} rows, but Q must be {nq}x{nq} to multiply C ({m}x{n}) from the {}",
            if side == b'L' { "left" } else { "right" }
        ))
        .at_arg(2));
    }
    if k > nq || k > ac {
        return Err(Error::size(format!("tau has {k} elements, more than A ({ar}x{ac}) holds reflectors")).at_arg(3));
    }
    let am = read_mat(a)?;
    let mut cm = read_mat(c)?;
    apply_q(am.as_ref(), &tau, side == b'L', trans != b'N', cm.as_mut());
    commit(vec![colmajor(ra, c.in_place, cm.as_ref())?])
}

/// `qr`: `rq_` (m x k, orthonormal columns, column-major) and `rr_` (k x n, upper
/// triangular, kept layout or row-major) with `a = Q R`, k = min(m, n), as `geqrf` + `orgqr`.
pub fn qr<T: Real>(rq: &Tensor<T>, rr: &Tensor<T>, a: &View<T>) -> Result<()> {
    let (m, n) = dims2(a, "A", 1)?;
    let k = m.min(n);
    let (packed, tau) = geqrf_mat(read_mat(a)?.as_ref());
    let mut q = Mat::<T>::identity(m, k);
    apply_q(packed.as_ref(), &tau, true, false, q.as_mut());
    let r = Mat::from_fn(k, n, |i, j| if i <= j { packed[(i, j)] } else { T::from_f64(0.0) });
    commit(vec![colmajor(rq, false, q.as_ref())?, kept_mat(rr, r.as_ref())?])
}

/// `btrifact`: LU with partial pivoting of each `n x n` matrix of the 3-D `a` (B x n x n)
/// into `ra_` (resized as `a`), LAPACK's 1-based `ipiv` into `rpivots_` (Int, B x n). With
/// `rinfo_` (Int, B) each matrix's `info` is reported there and singular ones are not an error;
/// without it a singular matrix is an error. `pivot == 0` is not supported (as in TH's CPU code).
pub fn btrifact<T: Real>(
    ra: &Tensor<T>,
    rpivots: &Tensor<i32>,
    rinfo: Option<&Tensor<i32>>,
    pivot: bool,
    a: &View<T>,
) -> Result<()> {
    if a.ndim() != 3 {
        return Err(Error::size(format!("expected 3D tensor, got {}D", a.ndim())).at_arg(5));
    }
    if !pivot {
        return Err(Error::invalid("btrifact without pivoting is not implemented on the CPU").at_arg(4));
    }
    let (nb, m, n) = (a.sizes[0] as usize, a.sizes[1] as usize, a.sizes[2] as usize);
    if m != n {
        return Err(Error::size("btrifact is only implemented for square matrices").at_arg(5));
    }
    let mut lu_all = Vec::with_capacity(nb * n * n);
    let mut piv_all = Vec::with_capacity(nb * n);
    let mut infos = Vec::with_capacity(nb);
    for bi in 0..nb {
        let f = lu_factor(read_mat(&a.select(0, bi as i64)?)?.as_ref());
        if rinfo.is_none() && f.info != 0 {
            return Err(lapack_err(format!("btrifact : failed to factorize batch element {bi} (info == {})", f.info)));
        }
        lu_all.extend(mat_rowmajor(f.lu.as_ref()));
        piv_all.extend(f.ipiv);
        infos.push(f.info as i32);
    }
    let ra_out = kept(ra, &a.sizes, lu_all)?;
    let piv_out = kept(rpivots, &[nb as i64, n as i64], piv_all)?;
    let info_out = match rinfo {
        Some(t) => Some(kept(t, &[nb as i64], infos)?),
        None => None,
    };
    store(&piv_out.v, &piv_out.data)?;
    if let Some(o) = &info_out {
        store(&o.v, &o.data)?;
    }
    commit(vec![ra_out])?;
    rpivots.set_view(piv_out.v);
    if let Some(o) = info_out {
        o.t.set_view(o.v);
    }
    Ok(())
}

/// `btrisolve`: solves `A_i x_i = b_i` for each batch element from `btrifact`'s `atf` (B x n x n)
/// and `pivots` (Int, B x n, 1-based); `b` is B x n or B x n x nrhs; `rb_` resized as `b`.
pub fn btrisolve<T: Real>(rb: &Tensor<T>, b: &View<T>, atf: &View<T>, pivots: &View<i32>) -> Result<()> {
    if atf.ndim() != 3 {
        return Err(Error::size(format!("expected 3D tensor, got {}D", atf.ndim())).at_arg(3));
    }
    if b.ndim() != 2 && b.ndim() != 3 {
        return Err(Error::size("expected 2D or 3D tensor").at_arg(2));
    }
    let (nb, n) = (atf.sizes[0], atf.sizes[1]);
    if b.sizes[0] != nb {
        return Err(Error::size("number of batches must be equal").at_arg(3));
    }
    if atf.sizes[2] != n {
        return Err(Error::size("A matrices must be square").at_arg(3));
    }
    if b.sizes[1] != n {
        return Err(Error::size("dimensions of A and b must be equal").at_arg(3));
    }
    if pivots.sizes != [nb, n] {
        return Err(Error::size(format!(
            "pivots should be of size {}, but is {}",
            size_desc(&[nb, n]),
            size_desc(&pivots.sizes)
        ))
        .at_arg(4));
    }
    let piv = pivots.to_vec()?;
    let (nb, n) = (nb as usize, n as usize);
    if let Some((i, &p)) = piv.iter().enumerate().find(|&(i, &p)| p < 1 || p as usize > n || (p as usize) < i % n + 1) {
        return Err(Error::index(format!(
            "pivot {p} of batch element {} row {} is out of range [{}, {n}]",
            i / n,
            i % n,
            i % n + 1
        ))
        .at_arg(4));
    }
    let mut out = Vec::with_capacity(b.numel());
    for bi in 0..nb {
        let lu = read_mat(&atf.select(0, bi as i64)?)?;
        let bv = b.select(0, bi as i64)?;
        let mut x = read_rhs(&bv, 2)?;
        lu_solve(lu.as_ref(), &piv[bi * n..(bi + 1) * n], x.as_mut());
        out.extend(mat_rowmajor(x.as_ref()));
    }
    commit(vec![kept(rb, &b.sizes, out)?])
}

#[cfg(test)]
mod tests;
