//! THC's `THCudaBlas_*` (`THCBlas.h`): column-major BLAS on raw device pointers of the current
//! device, on its current stream, with THC's argument handling: transpose chars `'n'`/`'t'`/
//! `'c'` (either case; anything else is an error), the leading-dimension fix-ups of size-1
//! dims (`adjustLd`), sizes that must fit an `int`. Everything runs as `Gpu::gemm`:
//! - `gemv`: `y^T = x^T op(A)^T` (`1 x len(y)`), `x` a `1 x len(x)` matrix with `ld = incx`, `y`
//!   with `ld = incy`; `m == 0` or `n == 0` returns at once (y not scaled), as BLAS's gemv;
//! - `ger`: `A += x y^T` as a `k = 1` product (`x` transposed with `ld = incx`, `y` with
//!   `ld = incy`);
//! - `dot`: a `1 x 1` product into a one-element device temporary (`n == 1` makes the
//!   increments 1, as THC did), read back synchronously.
//!
//! Increments are leading dimensions there, so they must be at least 1 (cuBLAS's own gemv/ger/
//! dot also accept negative increments: not supported here, an error). `gemmBatched` reads its
//! device arrays of matrix addresses back to the host and makes one call per matrix.

#![allow(clippy::too_many_arguments)] // BLAS's own argument lists

use super::super::gpu::GemmCall;
use super::super::runtime::{self, Device as Dev};
use crate::core::dtype::{Prim, Scalar};
use crate::core::error::{Error, Result};

/// THC's conversion of a transpose char.
pub(super) fn trans(c: u8, arg: u32) -> Result<bool> {
    match c {
        b'n' | b'N' => Ok(false),
        b't' | b'T' | b'c' | b'C' => Ok(true),
        _ => Err(Error::invalid(format!("transpose flag must be 'n', 't' or 'c', got {:?}", c as char)).at_arg(arg)),
    }
}

/// THC's bound on every size handed to cuBLAS.
pub(super) fn fit_int(fname: &str, vals: &[i64]) -> Result<()> {
    if vals.iter().any(|&v| v > i32::MAX as i64) {
        return Err(Error::size(format!(
            "Cublas_{fname} only supports sizes and leading dimensions with the bound [val] <= {}",
            i32::MAX
        )));
    }
    Ok(())
}

fn f64_of<T: Scalar>(x: T) -> f64 {
    match x.to_prim() {
        Prim::F(f) => f,
        Prim::I(i) => i as f64,
    }
}

pub(super) fn current() -> Result<&'static Dev> {
    runtime::device(runtime::current())
}

/// The column-major arguments of a gemm before the fix-ups: (transa, transb, m, n, k, lda,
/// ldb, ldc) with `transa`/`transb` still chars.
pub type Level3 = (u8, u8, i64, i64, i64, i64, i64, i64);

/// THC's `adjustLdLevel3`: a leading dimension that cuBLAS would reject but that is never used
/// (a size-1 dim) becomes the smallest valid one. Returns the flags and the fixed dims.
fn level3(args: Level3) -> Result<(bool, bool, [i64; 6])> {
    let (ta, tb, m, n, k, mut lda, mut ldb, mut ldc) = args;
    let (ta, tb) = (trans(ta, 1)?, trans(tb, 2)?);
    if n <= 1 {
        ldc = m.max(1);
    }
    if ta {
        if m <= 1 {
            lda = k.max(1);
        }
    } else if k <= 1 {
        lda = m.max(1);
    }
    if tb {
        if k <= 1 {
            ldb = n.max(1);
        }
    } else if n <= 1 {
        ldb = k.max(1);
    }
    Ok((ta, tb, [m, n, k, lda, ldb, ldc]))
}

/// Queues `call` on the current device's current stream.
///
/// # Safety
/// As `Gpu::gemm`.
unsafe fn run(dev: &Dev, call: &GemmCall) -> Result<()> {
    // SAFETY: caller contract.
    unsafe { dev.gpu.gemm(call, runtime::stream(dev.ordinal)) }
}

/// One strided batched gemm (`batch == 1`, strides 0: a plain gemm). `pos`: the argument
/// positions of `a`, `b`, `c` in the C call (NULL errors name them; 0 for an internal buffer).
///
/// # Safety
/// The matrices are device memory of the current device, as cuBLAS requires.
pub unsafe fn gemm_strided_batched<T: Scalar>(
    fname: &str,
    pos: [u32; 3],
    args: Level3,
    alpha: T,
    (a, stride_a): (u64, i64),
    (b, stride_b): (u64, i64),
    beta: T,
    (c, stride_c): (u64, i64),
    batch: i64,
) -> Result<()> {
    let (transa, transb, [m, n, k, lda, ldb, ldc]) = level3(args)?;
    fit_int(fname, &[m, n, k, lda, ldb, ldc, batch])?;
    // cuBLAS would fault on the device; here a NULL matrix with elements to touch is an error.
    let writes = m > 0 && n > 0 && batch > 0;
    let reads = writes && k > 0 && f64_of(alpha) != 0.0;
    for (p, used, arg) in [(a, reads, pos[0]), (b, reads, pos[1]), (c, writes, pos[2])] {
        if used && p == 0 {
            return Err(Error::null(arg, "device matrix"));
        }
    }
    let dev = current()?;
    let call = GemmCall {
        dtype: T::DTYPE,
        transa,
        transb,
        m,
        n,
        k,
        alpha: f64_of(alpha),
        a,
        lda,
        stride_a,
        b,
        ldb,
        stride_b,
        beta: f64_of(beta),
        c,
        ldc,
        stride_c,
        batch,
    };
    // SAFETY: caller contract.
    unsafe { run(dev, &call) }
}

/// `gemmBatched`: `a`, `b`, `c` are device arrays of `batch` matrix addresses.
///
/// # Safety
/// As `gemm_strided_batched`; the three arrays hold `batch` device addresses each.
pub unsafe fn gemm_batched<T: Scalar>(
    fname: &str,
    pos: [u32; 3],
    args: Level3,
    alpha: T,
    a: u64,
    b: u64,
    beta: T,
    c: u64,
    batch: i64,
) -> Result<()> {
    level3(args)?;
    fit_int(fname, &[batch])?;
    let batch = usize::try_from(batch).map_err(|_| Error::size(format!("negative batch count {batch}")))?;
    let dev = current()?;
    let stream = runtime::stream(dev.ordinal);
    let mut ptrs = vec![0u64; 3 * batch];
    for (i, arr) in [a, b, c].into_iter().enumerate() {
        if batch > 0 && arr == 0 {
            return Err(Error::null(pos[i], "matrix array"));
        }
        let dst = ptrs[i * batch..].as_mut_ptr() as *mut u8;
        // SAFETY: caller contract: `arr` holds `batch` addresses; dst has room for them.
        unsafe { dev.gpu.dtoh(dst, arr, batch * 8, stream)? };
    }
    dev.gpu.stream_sync(stream)?;
    for p in 0..batch {
        let (ap, bp, cp) = (ptrs[p], ptrs[batch + p], ptrs[2 * batch + p]);
        // SAFETY: caller contract on each matrix.
        unsafe { gemm_strided_batched(fname, pos, args, alpha, (ap, 0), (bp, 0), beta, (cp, 0), 1)? };
    }
    Ok(())
}

/// `y = alpha*op(A)*x + beta*y`, `A` `m x n` column-major (`lda`).
///
/// # Safety
/// As `gemm_strided_batched`, for `A`, `x` and `y` at their increments.
pub unsafe fn gemv<T: Scalar>(
    fname: &str,
    (tr, m, n): (u8, i64, i64),
    alpha: T,
    (a, lda): (u64, i64),
    (x, incx): (u64, i64),
    beta: T,
    (y, incy): (u64, i64),
) -> Result<()> {
    let t = trans(tr, 1)?;
    let lda = if n <= 1 { m.max(1) } else { lda };
    fit_int(fname, &[m, n, lda, incx, incy])?;
    if m == 0 || n == 0 {
        return Ok(());
    }
    let (lx, ly) = if t { (m, n) } else { (n, m) };
    let args = (b'n', if t { b'n' } else { b't' }, 1, ly, lx, incx, lda, incy);
    // SAFETY: caller contract; the product reaches x, A and y exactly (module docs).
    unsafe { gemm_strided_batched(fname, [7, 5, 10], args, alpha, (x, 0), (a, 0), beta, (y, 0), 1) }
}

/// `A = A + alpha*x*y^T`, `A` `m x n` column-major (`lda`).
///
/// # Safety
/// As `gemv`.
pub unsafe fn ger<T: Scalar>(
    fname: &str,
    (m, n): (i64, i64),
    alpha: T,
    (x, incx): (u64, i64),
    (y, incy): (u64, i64),
    (a, lda): (u64, i64),
) -> Result<()> {
    let lda = if n <= 1 { m.max(1) } else { lda };
    fit_int(fname, &[m, n, lda, incx, incy])?;
    let one = T::from_prim(Prim::F(1.0));
    let args = (b't', b'n', m, n, 1, incx, incy, lda);
    // SAFETY: as in gemv.
    unsafe { gemm_strided_batched(fname, [4, 6, 8], args, alpha, (x, 0), (y, 0), one, (a, 0), 1) }
}

/// `sum x[i]*y[i]` in the dtype's compute type, rounded to `T`.
///
/// # Safety
/// `x`, `y` hold `n` elements at their increments on the current device.
pub unsafe fn dot<T: Scalar>(fname: &str, n: i64, (x, incx): (u64, i64), (y, incy): (u64, i64)) -> Result<T> {
    let (incx, incy) = if n == 1 { (1, 1) } else { (incx, incy) };
    fit_int(fname, &[n, incx, incy])?;
    let dev = current()?;
    let out = super::super::copy::empty_like::<T>(dev, &[1])?;
    let c = super::super::launch::device_base(&out)?;
    let (one, zero) = (T::from_prim(Prim::F(1.0)), T::from_prim(Prim::F(0.0)));
    let args = (b'n', b't', 1, 1, n, incx, incy, 1);
    // SAFETY: caller contract; c is a fresh one-element device buffer.
    unsafe { gemm_strided_batched(fname, [2, 4, 0], args, one, (x, 0), (y, 0), zero, (c, 0), 1)? };
    super::super::copy::get(dev, &out, &[0])
}
