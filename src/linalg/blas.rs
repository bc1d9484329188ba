//! `THBlas_` (Fortran BLAS conventions on raw pointers: column-major matrices with leading
//! dimensions, `'n'`/`'t'`/`'c'` transpose chars, vector increments where a negative increment
//! walks the vector from its far end as in reference BLAS) and `THVector_` (contiguous arrays).
//!
//! The products (gemv, ger, gemm) are [`gemm::gemm`] on strided views of the caller's memory.
//! TH's small fix-ups of unused arguments are kept (`n == 1` makes increments 1, a leading
//! dimension of a one-column matrix is taken as its row count), then every argument is
//! checked: negative sizes, too-small leading dimensions, zero increments of written vectors,
//! NULL pointers with elements to touch, unknown transpose chars and integer division by zero
//! are errors and nothing is written.

#![allow(clippy::too_many_arguments)] // BLAS's own argument lists

use super::gemm::{self, Gemm, MatMut, MatRef};
use crate::core::error::{Error, Result};
use crate::core::limits::try_filled;
use crate::exec::parallel;
use crate::ops::num::Float;
use crate::ops::random::Generator;

fn count(n: i64, arg: u32) -> Result<usize> {
    usize::try_from(n).map_err(|_| Error::size(format!("negative size {n}")).at_arg(arg))
}

fn non_null<T>(p: *const T, n: usize, arg: u32) -> Result<()> {
    if n > 0 && p.is_null() {
        return Err(Error::null(arg, "pointer"));
    }
    Ok(())
}

/// A vector as a pointer to its element 0 and a stride.
type Strided<T> = (*const T, isize);

/// A BLAS vector of `n` elements at `p` with increment `inc` (negative increments start at the
/// far end).
fn strided<T>(p: *const T, n: usize, inc: i64) -> Strided<T> {
    let inc = inc as isize;
    if inc < 0 && n > 0 { (p.wrapping_offset(-inc * (n as isize - 1)), inc) } else { (p, inc) }
}

fn check_vec<T>(p: *const T, n: usize, inc: i64, written: bool, arg: u32) -> Result<Strided<T>> {
    non_null(p, n, arg)?;
    if written && inc == 0 && n > 1 {
        return Err(Error::invalid("increment of a written vector must not be 0").at_arg(arg + 1));
    }
    if (inc as i128).saturating_mul(n as i128).unsigned_abs() > isize::MAX as u128 {
        return Err(Error::size(format!("increment {inc} overflows for {n} elements")).at_arg(arg + 1));
    }
    Ok(strided(p, n, inc))
}

/// The vectors `x` (argument `x_arg`, its increment the next) and `y` (two arguments on) of `n`
/// elements (argument 1) of the level-1 routines, checked (`n == 1` makes both increments 1;
/// `written`: whether `x`, `y` are written): `n` and each vector's element 0 and stride.
fn vec_pair<T>(
    n: i64,
    (x, incx): (*const T, i64),
    (y, incy): (*const T, i64),
    x_arg: u32,
    written: [bool; 2],
) -> Result<(usize, Strided<T>, Strided<T>)> {
    let n = count(n, 1)?;
    let (incx, incy) = if n == 1 { (1, 1) } else { (incx, incy) };
    Ok((n, check_vec(x, n, incx, written[0], x_arg)?, check_vec(y, n, incy, written[1], x_arg + 2)?))
}

struct Ptr<T>(*mut T);
// SAFETY: an address; users write disjoint elements from each thread.
unsafe impl<T> Sync for Ptr<T> {}

impl<T> Ptr<T> {
    /// The address (a method, so closures capture the whole `Sync` wrapper).
    fn at(&self, i: usize) -> *mut T {
        self.0.wrapping_add(i)
    }
}

/// `f(i)` for every `i < n`, split across threads when `n` is large.
fn each(n: usize, f: impl Fn(usize) + Sync) {
    parallel::for_range(n, n, |lo, hi| (lo..hi).for_each(&f));
}

/// `x <-> y`.
///
/// # Safety
/// `x`, `y` valid for `n` elements at their increments (when `n > 0`).
pub unsafe fn swap<T: Gemm>(n: i64, x: *mut T, incx: i64, y: *mut T, incy: i64) -> Result<()> {
    let (n, (xp, sx), (yp, sy)) = vec_pair(n, (x, incx), (y, incy), 2, [true, true])?;
    for i in 0..n as isize {
        // SAFETY: caller contract.
        unsafe { std::ptr::swap(xp.offset(i * sx) as *mut T, yp.offset(i * sy) as *mut T) };
    }
    Ok(())
}

/// `x = a*x`.
///
/// # Safety
/// As `swap`.
pub unsafe fn scal<T: Gemm>(n: i64, a: T, x: *mut T, incx: i64) -> Result<()> {
    let n = count(n, 1)?;
    let incx = if n == 1 { 1 } else { incx };
    let (xp, sx) = check_vec(x, n, incx, true, 3)?;
    for i in 0..n as isize {
        // SAFETY: caller contract.
        unsafe {
            let p = xp.offset(i * sx) as *mut T;
            *p = a.mul(*p);
        }
    }
    Ok(())
}

/// `y = x`.
///
/// # Safety
/// As `swap`.
pub unsafe fn copy<T: Gemm>(n: i64, x: *const T, incx: i64, y: *mut T, incy: i64) -> Result<()> {
    let (n, (xp, sx), (yp, sy)) = vec_pair(n, (x, incx), (y, incy), 2, [false, true])?;
    for i in 0..n as isize {
        // SAFETY: caller contract.
        unsafe { *(yp.offset(i * sy) as *mut T) = *xp.offset(i * sx) };
    }
    Ok(())
}

/// `y = y + a*x`.
///
/// # Safety
/// As `swap`.
pub unsafe fn axpy<T: Gemm>(n: i64, a: T, x: *const T, incx: i64, y: *mut T, incy: i64) -> Result<()> {
    let (n, (xp, sx), (yp, sy)) = vec_pair(n, (x, incx), (y, incy), 3, [false, true])?;
    for i in 0..n as isize {
        // SAFETY: caller contract.
        unsafe {
            let p = yp.offset(i * sy) as *mut T;
            *p = (*p).add(a.mul(*xp.offset(i * sx)));
        }
    }
    Ok(())
}

/// `sum x[i]*y[i]`, accumulated in `accreal` and rounded once to `real`.
///
/// # Safety
/// As `swap`.
pub unsafe fn dot<T: Gemm>(n: i64, x: *const T, incx: i64, y: *const T, incy: i64) -> Result<T> {
    let (n, (xp, sx), (yp, sy)) = vec_pair(n, (x, incx), (y, incy), 2, [false, false])?;
    let mut s = T::zero().to_acc();
    for i in 0..n as isize {
        // SAFETY: caller contract.
        let (a, b) = unsafe { (*xp.offset(i * sx), *yp.offset(i * sy)) };
        s = T::acc_add(s, T::acc_mul(a.to_acc(), b.to_acc()));
    }
    Ok(T::from_acc(s))
}

/// `'n'`/`'N'` -> false, `'t'`/`'T'`/`'c'`/`'C'` -> true.
fn trans_flag(c: u8, arg: u32) -> Result<bool> {
    match c {
        b'n' | b'N' => Ok(false),
        b't' | b'T' | b'c' | b'C' => Ok(true),
        _ => Err(Error::invalid(format!("transpose flag must be 'n', 't' or 'c', got {:?}", c as char)).at_arg(arg)),
    }
}

fn check_ld(ld: i64, rows: usize, arg: u32, what: &str) -> Result<()> {
    if ld < rows.max(1) as i64 {
        return Err(Error::size(format!("{what} = {ld} is smaller than max(1, {rows})")).at_arg(arg));
    }
    Ok(())
}

/// A column-major `rows x cols` matrix with leading dimension `ld`, optionally transposed.
fn colmajor<T>(p: *const T, ld: i64, trans: bool) -> MatRef<T> {
    let ld = ld as isize;
    if trans { MatRef { ptr: p, rs: ld, cs: 1 } } else { MatRef { ptr: p, rs: 1, cs: ld } }
}

/// `y = alpha*op(A)*x + beta*y`, `A` m x n column-major (`lda`); `op(A)` is `A` (`'n'`, x has n
/// elements, y m) or `A^T` (`'t'`, x has m, y n). `beta == 0` does not read `y`.
///
/// # Safety
/// `a` valid for the `lda x n` column-major block, `x`, `y` for their lengths and increments.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemv<T: Gemm>(
    trans: u8,
    m: i64,
    n: i64,
    alpha: T,
    a: *const T,
    lda: i64,
    x: *const T,
    incx: i64,
    beta: T,
    y: *mut T,
    incy: i64,
) -> Result<()> {
    let t = trans_flag(trans, 1)?;
    let (m, n) = (count(m, 2)?, count(n, 3)?);
    let lda = if n == 1 { m.max(1) as i64 } else { lda };
    check_ld(lda, m, 6, "lda")?;
    let (lx, ly) = if t { (m, n) } else { (n, m) };
    let (incx, incy) = (if lx == 1 { 1 } else { incx }, if ly == 1 { 1 } else { incy });
    let (xp, sx) = check_vec(x, lx, incx, false, 7)?;
    let (yp, sy) = check_vec(y, ly, incy, true, 10)?;
    non_null(a, if alpha.is_zero() { 0 } else { m * n }, 5)?;
    if m == 0 || n == 0 {
        return Ok(()); // reference BLAS's quick return: y is not scaled
    }
    let am = colmajor(a, lda, t);
    let xm = MatRef { ptr: xp, rs: sx, cs: 1 };
    let ym = MatMut { ptr: yp as *mut T, rs: sy, cs: (sy * ly as isize).max(1) };
    // SAFETY: caller contract; shapes as checked above.
    unsafe { gemm::gemm(ly, 1, lx, alpha, am, xm, beta, ym) }
}

/// `A = A + alpha*x*y^T`, `A` m x n column-major (`lda`).
///
/// # Safety
/// As `gemv`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn ger<T: Gemm>(
    m: i64,
    n: i64,
    alpha: T,
    x: *const T,
    incx: i64,
    y: *const T,
    incy: i64,
    a: *mut T,
    lda: i64,
) -> Result<()> {
    let (m, n) = (count(m, 1)?, count(n, 2)?);
    let lda = if n == 1 { m.max(1) as i64 } else { lda };
    check_ld(lda, m, 9, "lda")?;
    let (incx, incy) = (if m == 1 { 1 } else { incx }, if n == 1 { 1 } else { incy });
    let (xp, sx) = check_vec(x, m, incx, false, 4)?;
    let (yp, sy) = check_vec(y, n, incy, false, 6)?;
    non_null(a, m * n, 8)?;
    let xm = MatRef { ptr: xp, rs: sx, cs: 1 };
    let ym = MatRef { ptr: yp, rs: 1, cs: sy };
    let am = colmajor(a, lda, false);
    // SAFETY: caller contract; shapes as checked above.
    unsafe { gemm::gemm(m, n, 1, alpha, xm, ym, T::one(), MatMut { ptr: a, rs: am.rs, cs: am.cs }) }
}

/// `C = alpha*op(A)*op(B) + beta*C`, all column-major; `C` m x n (`ldc`), `op(A)` m x k,
/// `op(B)` k x n. `beta == 0` does not read `C`; `alpha == 0` does not read `A`, `B`.
///
/// # Safety
/// Each matrix valid for its column-major block.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm<T: Gemm>(
    transa: u8,
    transb: u8,
    m: i64,
    n: i64,
    k: i64,
    alpha: T,
    a: *const T,
    lda: i64,
    b: *const T,
    ldb: i64,
    beta: T,
    c: *mut T,
    ldc: i64,
) -> Result<()> {
    let (ta, tb) = (trans_flag(transa, 1)?, trans_flag(transb, 2)?);
    let (m, n, k) = (count(m, 3)?, count(n, 4)?, count(k, 5)?);
    // TH's fix-ups: the leading dimension of a one-column matrix is unused.
    let ldc = if n == 1 { m.max(1) as i64 } else { ldc };
    let lda = match (ta, m == 1, k == 1) {
        (true, true, _) => k.max(1) as i64,
        (false, _, true) => m.max(1) as i64,
        _ => lda,
    };
    let ldb = match (tb, k == 1, n == 1) {
        (true, true, _) => n.max(1) as i64,
        (false, _, true) => k.max(1) as i64,
        _ => ldb,
    };
    check_ld(lda, if ta { k } else { m }, 8, "lda")?;
    check_ld(ldb, if tb { n } else { k }, 10, "ldb")?;
    check_ld(ldc, m, 13, "ldc")?;
    let reads = if alpha.is_zero() { 0 } else { 1 };
    non_null(a, reads * m * k, 7)?;
    non_null(b, reads * k * n, 9)?;
    non_null(c, m * n, 12)?;
    let cm = colmajor(c, ldc, false);
    // SAFETY: caller contract; shapes and leading dimensions checked above.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            alpha,
            colmajor(a, lda, ta),
            colmajor(b, ldb, tb),
            beta,
            MatMut { ptr: c, rs: cm.rs, cs: cm.cs },
        )
    }
}

// ---------------------------------------------------------------------------------------------
// THVector: contiguous arrays of n elements (outputs may be the same array as an input)
// ---------------------------------------------------------------------------------------------

/// The length `n` (argument `n_arg`) of the arrays `ptrs` (arguments 1, 2, ...), checked: not
/// negative, and no NULL array when there are elements.
fn arrays<T>(n: isize, n_arg: u32, ptrs: &[*const T]) -> Result<usize> {
    let n = count(n as i64, n_arg)?;
    for (arg, &p) in (1..).zip(ptrs) {
        non_null(p, n, arg)?;
    }
    Ok(n)
}

/// `x[i] = c`.
///
/// # Safety
/// `x` valid for `n` elements.
pub unsafe fn vfill<T: Gemm>(x: *mut T, c: T, n: isize) -> Result<()> {
    let n = arrays(n, 3, &[x])?;
    let x = Ptr(x);
    // SAFETY: caller contract; each index is written once.
    each(n, |i| unsafe { *x.at(i) = c });
    Ok(())
}

/// `z[i] = f(x[i], y[i])`.
///
/// # Safety
/// Each pointer valid for `n` elements; `z` may equal `x` or `y`.
unsafe fn zip<T: Gemm>(z: *mut T, x: *const T, y: *const T, n: usize, f: impl Fn(T, T) -> T + Sync) -> Result<()> {
    let (z, x, y) = (Ptr(z), Ptr(x as *mut T), Ptr(y as *mut T));
    // SAFETY: caller contract; element i is read before it is written, by one thread.
    each(n, |i| unsafe { *z.at(i) = f(*x.at(i), *y.at(i)) });
    Ok(())
}

/// `y[i] = f(x[i])`.
///
/// # Safety
/// Each pointer valid for `n` elements; `y` may equal `x`.
unsafe fn map<T: Gemm>(y: *mut T, x: *const T, n: usize, f: impl Fn(T) -> T + Sync) -> Result<()> {
    let (y, x) = (Ptr(y), Ptr(x as *mut T));
    // SAFETY: as `zip`.
    each(n, |i| unsafe { *y.at(i) = f(*x.at(i)) });
    Ok(())
}

/// `z = x + c*y`.
///
/// # Safety
/// As `zip`.
pub unsafe fn vcadd<T: Gemm>(z: *mut T, x: *const T, y: *const T, c: T, n: isize) -> Result<()> {
    let n = arrays(n, 5, &[z, x, y])?;
    // SAFETY: forwarded contract.
    unsafe { zip(z, x, y, n, |a, b| a.add(c.mul(b))) }
}

/// `z = x * y`.
///
/// # Safety
/// As `zip`.
pub unsafe fn vcmul<T: Gemm>(z: *mut T, x: *const T, y: *const T, n: isize) -> Result<()> {
    let n = arrays(n, 4, &[z, x, y])?;
    // SAFETY: forwarded contract.
    unsafe { zip(z, x, y, n, |a, b| a.mul(b)) }
}

/// `z = x / y` (integer types: a zero in `y` is an error, checked before writing).
///
/// # Safety
/// As `zip`.
pub unsafe fn vcdiv<T: Gemm>(z: *mut T, x: *const T, y: *const T, n: isize) -> Result<()> {
    let n = arrays(n, 4, &[z, x, y])?;
    // SAFETY: caller contract.
    if !T::IS_FLOAT && (0..n).any(|i| unsafe { (*y.add(i)).is_zero() }) {
        return Err(Error::invalid("integer division by zero").at_arg(3));
    }
    // SAFETY: forwarded contract.
    unsafe { zip(z, x, y, n, |a, b| a.div(b)) }
}

/// `y = x + c`.
///
/// # Safety
/// As `map`.
pub unsafe fn vadds<T: Gemm>(y: *mut T, x: *const T, c: T, n: isize) -> Result<()> {
    let n = arrays(n, 4, &[y, x])?;
    // SAFETY: forwarded contract.
    unsafe { map(y, x, n, |a| a.add(c)) }
}

/// `y = x * c`.
///
/// # Safety
/// As `map`.
pub unsafe fn vmuls<T: Gemm>(y: *mut T, x: *const T, c: T, n: isize) -> Result<()> {
    let n = arrays(n, 4, &[y, x])?;
    // SAFETY: forwarded contract.
    unsafe { map(y, x, n, |a| a.mul(c)) }
}

/// `y = x / c` (integer types: `c == 0` is an error).
///
/// # Safety
/// As `map`.
pub unsafe fn vdivs<T: Gemm>(y: *mut T, x: *const T, c: T, n: isize) -> Result<()> {
    let n = arrays(n, 4, &[y, x])?;
    if !T::IS_FLOAT && c.is_zero() {
        return Err(Error::invalid("integer division by zero").at_arg(3));
    }
    // SAFETY: forwarded contract.
    unsafe { map(y, x, n, |a| a.div(c)) }
}

/// `y = x`.
///
/// # Safety
/// As `map`.
pub unsafe fn vcopy<T: Gemm>(y: *mut T, x: *const T, n: isize) -> Result<()> {
    let n = arrays(n, 3, &[y, x])?;
    // SAFETY: caller contract (`ptr::copy` allows the arrays to overlap).
    unsafe { std::ptr::copy(x, y, n) };
    Ok(())
}

/// PyTorch TH's `normal_fill`: `n` normal samples (mean, stddev). Uniforms are drawn in order,
/// then turned into normals by Box-Muller in groups of 16 (u1 = 1 - data[j], u2 = data[j+8]);
/// a tail shorter than 16 redraws the last 16; fewer than 16 elements draw one normal each.
///
/// # Safety
/// `data` valid for `n` elements.
pub unsafe fn normal_fill<T: Gemm + Float>(data: *mut T, n: i64, g: &Generator, mean: f64, std: f64) -> Result<()> {
    let n = count(n, 2)?;
    non_null(data, n, 1)?;
    if std.is_nan() || std < 0.0 || !std.is_finite() || !mean.is_finite() {
        return Err(Error::invalid(format!("normal_fill: invalid mean {mean} / stddev {std}")).at_arg(5));
    }
    let mut out = try_filled(n, 0f64)?;
    {
        let mut mt = g.lock();
        if n < 16 {
            for v in out.iter_mut() {
                *v = mt.normal(mean, std);
            }
        } else {
            let box16 = |d: &mut [f64]| {
                for j in 0..8 {
                    let (u1, u2) = (1.0 - d[j], d[j + 8]);
                    let radius = (-2.0 * u1.ln()).sqrt();
                    let theta = 2.0 * std::f64::consts::PI * u2;
                    d[j] = radius * theta.cos() * std + mean;
                    d[j + 8] = radius * theta.sin() * std + mean;
                }
            };
            for v in out.iter_mut() {
                *v = mt.uniform(0.0, 1.0);
            }
            for chunk in out.chunks_exact_mut(16) {
                box16(chunk);
            }
            if n % 16 != 0 {
                let tail = &mut out[n - 16..];
                for v in tail.iter_mut() {
                    *v = mt.uniform(0.0, 1.0);
                }
                box16(tail);
            }
        }
    }
    for (i, &v) in out.iter().enumerate() {
        // SAFETY: caller contract.
        unsafe { *data.add(i) = T::from_f64(v) };
    }
    Ok(())
}
