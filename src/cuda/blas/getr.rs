//! THC's batched LU on raw device pointers (`THCudaBlas_{S,D}{getrf,getrs,getri}`), with
//! cuBLAS's `get{rf,rs,ri}Batched` contract, staged through the host: the device array of
//! matrix addresses and each column-major matrix (leading dimension `ld`) are read back, the
//! crate's LU (`linalg::lapack::lu_factor`, LAPACK's pivots and info) runs on the host, and the
//! results are written back into the matrices' columns (the rows past `n` untouched).
//!
//! - `getrf`: in place; `pivot` (n per matrix, 1-based) NULL means no pivoting; `info[i]` is
//!   the 1-based index of the first exactly-zero pivot (the factorization goes on), else 0.
//! - `getrs`: `op(A_i) X = B_i` in place of `B_i` (`trans` 'n'/'t'/'c'), `pivot` NULL means
//!   none; `info` is ONE host int (cuBLAS's and THC's `getrsBatched`): 0, or `-j` when
//!   parameter `j` (not counting the handle) is invalid; an invalid call is also an error.
//! - `getri`: `C_i = inv(A_i)` from `getrf`'s factors; `info[i] = k` (C_i untouched) when
//!   `U(k,k)` is zero.
//!
//! Invalid sizes (`n < 0`, `ld < max(1, n)`, `batch < 0`) are errors, as cuBLAS's
//! `CUBLAS_STATUS_INVALID_VALUE` was in THC; a pivot outside `1..=n` is an error too.

#![allow(clippy::too_many_arguments)] // cuBLAS's argument lists

use super::raw::{current, fit_int, trans};
use crate::core::error::{Error, Result};
use crate::cuda::runtime::{self, Device as Dev};
use crate::linalg::lapack::{Real, apply_ipiv, lu_factor, lu_unblocked};
use faer::linalg::triangular_solve as trsv;
use faer::reborrow::ReborrowMut;
use faer::{Mat, MatMut, MatRef, Par};

/// Synchronous copies on the current device's current stream.
struct Io {
    dev: &'static Dev,
    stream: u64,
}

impl Io {
    fn new() -> Result<Self> {
        let dev = current()?;
        Ok(Io { dev, stream: runtime::stream(dev.ordinal) })
    }

    /// `n` elements at device address `src`.
    ///
    /// # Safety
    /// `src` holds `n` elements of `E` on the current device.
    unsafe fn get<E: Copy + Default>(&self, src: u64, n: usize) -> Result<Vec<E>> {
        let mut v = vec![E::default(); n];
        if n > 0 {
            // SAFETY: caller contract; `v` has room for `n` elements.
            unsafe { self.dev.gpu.dtoh(v.as_mut_ptr() as *mut u8, src, n * size_of::<E>(), self.stream)? };
            self.dev.gpu.stream_sync(self.stream)?;
        }
        Ok(v)
    }

    /// `data` to device address `dst`.
    ///
    /// # Safety
    /// `dst` has room for `data` on the current device.
    unsafe fn put<E: Copy>(&self, dst: u64, data: &[E]) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        // SAFETY: caller contract; the stream is synchronized before `data` can go away.
        unsafe { self.dev.gpu.htod(dst, data.as_ptr() as *const u8, std::mem::size_of_val(data), self.stream)? };
        self.dev.gpu.stream_sync(self.stream)
    }

    /// The `rows x cols` column-major matrix at `p` (leading dimension `ld`).
    ///
    /// # Safety
    /// `p` holds such a matrix.
    unsafe fn get_mat<T: Real>(&self, p: u64, rows: usize, cols: usize, ld: usize) -> Result<Mat<T>> {
        let span = if rows == 0 || cols == 0 { 0 } else { ld * (cols - 1) + rows };
        // SAFETY: caller contract.
        let buf: Vec<T> = unsafe { self.get(p, span)? };
        Ok(Mat::from_fn(rows, cols, |i, j| buf[i + j * ld]))
    }

    /// Writes `m` column by column at `p` (leading dimension `ld`).
    ///
    /// # Safety
    /// `p` holds such a matrix.
    unsafe fn put_mat<T: Real>(&self, p: u64, m: MatRef<'_, T>, ld: usize) -> Result<()> {
        for j in 0..m.ncols() {
            let col: Vec<T> = (0..m.nrows()).map(|i| m[(i, j)]).collect();
            // SAFETY: caller contract: column j starts `j * ld` elements after `p`.
            unsafe { self.put(p + (j * ld * size_of::<T>()) as u64, &col)? };
        }
        Ok(())
    }

    /// The `batch` addresses of the device array `arr` (argument `arg`).
    ///
    /// # Safety
    /// `arr` holds `batch` addresses.
    unsafe fn addresses(&self, arr: u64, batch: usize, arg: u32) -> Result<Vec<u64>> {
        if batch > 0 && arr == 0 {
            return Err(Error::null(arg, "matrix array"));
        }
        // SAFETY: caller contract.
        let v: Vec<u64> = unsafe { self.get(arr, batch)? };
        match v.iter().position(|&p| p == 0) {
            Some(i) => Err(Error::null(arg, &format!("matrix {i} of the array"))),
            None => Ok(v),
        }
    }
}

/// cuBLAS's size checks: `n >= 0`, `ld >= max(1, n)` for each leading dimension, `batch >= 0`.
/// Returns `(n, batch)` as sizes, or the failing check's parameter number (as cuBLAS's `info`).
fn sizes(fname: &str, n: i64, lds: &[(i64, i32)], batch: i64, batch_param: i32) -> Result<(usize, usize), i32> {
    if n < 0 {
        return Err(-2);
    }
    if let Some(&(_, j)) = lds.iter().find(|&&(ld, _)| ld < n.max(1)) {
        return Err(-j);
    }
    if batch < 0 || fit_int(fname, &[n, batch]).is_err() {
        return Err(-batch_param);
    }
    Ok((n as usize, batch as usize))
}

fn invalid(fname: &str, info: i32) -> Error {
    Error::invalid(format!("Cublas_{fname}: parameter {} has an illegal value", -info))
}

/// Solves `op(A) X = B` in place from packed factors and 1-based pivots (checked).
fn solve<T: Real>(lu: MatRef<'_, T>, ipiv: &[i32], transpose: bool, mut b: MatMut<'_, T>) -> Result<()> {
    let n = lu.nrows() as i32;
    if let Some(p) = ipiv.iter().find(|&&p| p < 1 || p > n) {
        return Err(Error::invalid(format!("pivot {p} out of range 1..{n}")));
    }
    if !transpose {
        apply_ipiv(b.rb_mut(), ipiv);
        trsv::solve_unit_lower_triangular_in_place(lu, b.rb_mut(), Par::Seq);
        trsv::solve_upper_triangular_in_place(lu, b.rb_mut(), Par::Seq);
        return Ok(());
    }
    // A^T = U^T L^T P^T: solve with U^T (lower), then L^T (unit upper), then undo the swaps.
    trsv::solve_lower_triangular_in_place(lu.transpose(), b.rb_mut(), Par::Seq);
    trsv::solve_unit_upper_triangular_in_place(lu.transpose(), b.rb_mut(), Par::Seq);
    for (i, &p) in ipiv.iter().enumerate().rev() {
        let p = (p - 1) as usize;
        for c in 0..b.ncols() {
            let t = b[(i, c)];
            b[(i, c)] = b[(p, c)];
            b[(p, c)] = t;
        }
    }
    Ok(())
}

/// `getrfBatched` (see the module docs).
///
/// # Safety
/// `a` is a device array of `batch` addresses of `n x n` matrices (`lda`); `pivot` is NULL or
/// holds `n * batch` ints; `info` holds `batch` ints; all on the current device.
pub unsafe fn getrf<T: Real>(fname: &str, n: i64, a: u64, lda: i64, pivot: u64, info: u64, batch: i64) -> Result<()> {
    let (n, batch) = sizes(fname, n, &[(lda, 3)], batch, 6).map_err(|j| invalid(fname, j))?;
    if batch > 0 && info == 0 {
        return Err(Error::null(5, "info array"));
    }
    let io = Io::new()?;
    // SAFETY: caller contract on every array and matrix used in this block.
    unsafe {
        let mats = io.addresses(a, batch, 2)?;
        let mut infos = Vec::with_capacity(batch);
        for (i, &p) in mats.iter().enumerate() {
            let m = io.get_mat::<T>(p, n, n, lda as usize)?;
            let f = if pivot == 0 { lu_unblocked(m.as_ref(), false) } else { lu_factor(m.as_ref()) };
            io.put_mat(p, f.lu.as_ref(), lda as usize)?;
            if pivot != 0 && n > 0 {
                io.put(pivot + (i * n * 4) as u64, &f.ipiv)?;
            }
            infos.push(f.info as i32);
        }
        io.put(info, &infos)
    }
}

/// `getrsBatched` (see the module docs); `info` is a host pointer (may be NULL).
///
/// # Safety
/// As `getrf` for `a` and `pivot`; `b` is a device array of `batch` addresses of `n x nrhs`
/// matrices (`ldb`); `info` is NULL or a writable host int.
pub unsafe fn getrs<T: Real>(
    fname: &str,
    trans_c: u8,
    (n, nrhs): (i64, i64),
    (a, lda): (u64, i64),
    pivot: u64,
    (b, ldb): (u64, i64),
    info: *mut i32,
    batch: i64,
) -> Result<()> {
    let transpose = trans(trans_c, 2)?;
    let checked = if nrhs < 0 { Err(-3) } else { sizes(fname, n, &[(lda, 5), (ldb, 8)], batch, 10) };
    if !info.is_null() {
        // SAFETY: caller contract: a writable host int.
        unsafe { *info = checked.err().unwrap_or(0) };
    }
    let (n, batch) = checked.map_err(|j| invalid(fname, j))?;
    let nrhs = nrhs as usize;
    let io = Io::new()?;
    // SAFETY: caller contract on every array and matrix used in this block.
    unsafe {
        let (amats, bmats) = (io.addresses(a, batch, 4)?, io.addresses(b, batch, 7)?);
        for (i, (&ap, &bp)) in amats.iter().zip(&bmats).enumerate() {
            let lu = io.get_mat::<T>(ap, n, n, lda as usize)?;
            let ipiv: Vec<i32> =
                if pivot == 0 { (1..=n as i32).collect() } else { io.get(pivot + (i * n * 4) as u64, n)? };
            let mut x = io.get_mat::<T>(bp, n, nrhs, ldb as usize)?;
            solve(lu.as_ref(), &ipiv, transpose, x.as_mut())?;
            io.put_mat(bp, x.as_ref(), ldb as usize)?;
        }
    }
    Ok(())
}

/// `getriBatched` (see the module docs).
///
/// # Safety
/// As `getrf` for `a`, `pivot` and `info`; `c` is a device array of `batch` addresses of
/// `n x n` matrices (`ldc`).
pub unsafe fn getri<T: Real>(
    fname: &str,
    n: i64,
    (a, lda): (u64, i64),
    pivot: u64,
    (c, ldc): (u64, i64),
    info: u64,
    batch: i64,
) -> Result<()> {
    let (n, batch) = sizes(fname, n, &[(lda, 3), (ldc, 6)], batch, 8).map_err(|j| invalid(fname, j))?;
    if batch > 0 && info == 0 {
        return Err(Error::null(7, "info array"));
    }
    let io = Io::new()?;
    // SAFETY: caller contract on every array and matrix used in this block.
    unsafe {
        let (amats, cmats) = (io.addresses(a, batch, 2)?, io.addresses(c, batch, 5)?);
        let mut infos = Vec::with_capacity(batch);
        for (i, (&ap, &cp)) in amats.iter().zip(&cmats).enumerate() {
            let lu = io.get_mat::<T>(ap, n, n, lda as usize)?;
            let ipiv: Vec<i32> =
                if pivot == 0 { (1..=n as i32).collect() } else { io.get(pivot + (i * n * 4) as u64, n)? };
            let k = (0..n).find(|&k| lu[(k, k)] == T::from_f64(0.0)).map_or(0, |k| k + 1);
            if k == 0 {
                let mut inv = Mat::<T>::identity(n, n);
                solve(lu.as_ref(), &ipiv, false, inv.as_mut())?;
                io.put_mat(cp, inv.as_ref(), ldc as usize)?;
            }
            infos.push(k as i32);
        }
        io.put(info, &infos)
    }
}
