//! The one GEMM path: `c = beta*c + alpha*(a @ b)` on strided matrices, for every numeric dtype.
//!
//! - Float, Double on AVX2 + FMA or AVX-512, every dimension at least `MIN_PACKED`: the packed
//!   kernel of `super::packed` (both operands packed from any strides, so transposed operands
//!   cost nothing), its tasks on the library's pool.
//! - Float, Double matrix-vector products (`n == 1`), on AVX2 + FMA or AVX-512: with the
//!   matrix's rows and the vector contiguous, `packed::dots`; with the matrix's columns
//!   contiguous, `packed::columns`; pieces of rows on the library's pool.
//! - Float, Double otherwise (`TH_CPU_CAPABILITY=scalar`, small shapes, products below
//!   `AVX512_FAER_WORK` on AVX-512, no memory for packing):
//!   `faer`'s matmul (its x86 assembly kernels, AVX2+FMA or AVX-512 chosen at run time, on any
//!   strides), run inside the library's rayon pool with `THGetNumThreads()` threads;
//!   mid-sized products are instead cut into row or column pieces run by its single-thread
//!   kernel (see `SPLIT_WORK`).
//! - Half, BFloat16: the f32 kernel into an f32 copy of `c`, one rounding back. The packed kernel
//!   (AVX2 or AVX-512) converts the operands as it packs them; faer's path takes f32 copies.
//! - Byte, Char, Short, Int, Long: a blocked kernel (packed A/B panels, 4x16 register tile) in
//!   the element type's wrapping arithmetic, which is C's result modulo 2^bits.
//!
//! BLAS conventions: `beta == 0` means `c` is not read (NaN or garbage in it is ignored);
//! `alpha == 0` or `k == 0` means `c = beta*c` and `a`, `b` are not read.
//!
//! The kernels live in `float` (Float, Double: the packed kernel or faer's), `half16`
//! (Half, BFloat16 through f32) and `int` (the integer types).

mod float;
mod half16;
mod int;

use crate::core::error::Result;
use crate::exec::parallel;
use crate::ops::num::Num;
use faer::Par;

/// A read-only strided matrix: element `(i, j)` is at `ptr + i*rs + j*cs`.
#[derive(Clone, Copy, Debug)]
pub struct MatRef<T> {
    pub ptr: *const T,
    pub rs: isize,
    pub cs: isize,
}

/// A writable strided matrix (no two elements at the same address).
#[derive(Clone, Copy, Debug)]
pub struct MatMut<T> {
    pub ptr: *mut T,
    pub rs: isize,
    pub cs: isize,
}

// SAFETY: these are plain addresses; every function taking them documents which elements it
// reads or writes, and parallel loops write disjoint elements.
unsafe impl<T> Send for MatRef<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for MatRef<T> {}
// SAFETY: as above.
unsafe impl<T> Send for MatMut<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for MatMut<T> {}

impl<T> MatRef<T> {
    #[inline(always)]
    fn at(&self, i: usize, j: usize) -> *const T {
        self.ptr.wrapping_offset(i as isize * self.rs + j as isize * self.cs)
    }
}

impl<T> MatMut<T> {
    #[inline(always)]
    fn at(&self, i: usize, j: usize) -> *mut T {
        self.ptr.wrapping_offset(i as isize * self.rs + j as isize * self.cs)
    }
    pub fn as_ref(&self) -> MatRef<T> {
        MatRef { ptr: self.ptr, rs: self.rs, cs: self.cs }
    }
}

/// One product `c = beta*c + alpha*(a @ b)`, `c` m x n, `a` m x k, `b` k x n, as the kernels
/// take it. The operands' elements `S` are converted to the kernel's `E` where they differ
/// (Half/BFloat16 operands of the packed f32 kernel).
#[derive(Clone, Copy, Debug)]
pub struct Product<E, S = E> {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub alpha: E,
    pub a: MatRef<S>,
    pub b: MatRef<S>,
    pub beta: E,
    pub c: MatMut<E>,
}

/// Multiply-adds (m*n*k) below which a product stays on the calling thread (entering the pool
/// costs a few microseconds).
pub(crate) const PAR_WORK: usize = 128 * 128 * 128;

/// Elements read and written (m*k + k*n + m*n) from which a product runs threaded whatever its
/// multiply-adds: matrix-vector shapes (`addmv`, `addr`, `gemv`, `ger`) are bound by the memory
/// they touch, and one core alone cannot draw the memory bandwidth that two can. A few grains
/// of elements amortize waking the pool.
const PAR_TOUCH: usize = 4 * parallel::GRAIN;

/// Multiply-adds up to which a threaded product is cut into pieces along its longer output
/// dimension, each run by faer's single-thread kernel through `parallel::for_range` (the caller
/// starts at once and never waits for a pool worker that is still asleep). faer's own threading
/// splits statically, so every call waits for the second thread to wake: for mid-sized
/// products that wait costs more than the split's extra packing (each piece packs the other
/// operand again). Larger products amortize the wake-up and gain from faer packing once; the
/// bound sits between the sizes where each way wins (384^3 and 512^3).
const SPLIT_WORK: usize = 448 * 448 * 448;

/// Output rows (or columns) per piece of a split product at least.
const SPLIT_MIN_WIDTH: usize = 32;

/// Pieces per thread a split product is cut into (more balance the two cores of a shared
/// machine; each piece packs the other operand again).
const SPLIT_PIECES_PER_THREAD: usize = 2;

/// `f(piece, par)` over the product `p`, once or in pieces: below `PAR_WORK` and `PAR_TOUCH`,
/// inside a piece of another parallel loop (`parallel::nested`) or with a one-thread pool, once
/// with `Par::Seq`; up to `SPLIT_WORK`, in pieces of the longer output dimension (multiples of
/// 16 apart) run in parallel with `Par::Seq`; above, once with faer's threading inside the
/// library's pool.
fn split_product<T: Copy + Send + Sync>(p: Product<T>, f: impl Fn(Product<T>, Par) + Send + Sync) {
    let Product { m, n, k, a, b, c, .. } = p;
    let work = m.saturating_mul(n).saturating_mul(k);
    let touched = m.saturating_mul(k).saturating_add(k.saturating_mul(n)).saturating_add(m.saturating_mul(n));
    let big = work >= PAR_WORK || touched >= PAR_TOUCH;
    let pool = if big && !parallel::nested() { parallel::pool() } else { None };
    let Some(pool) = pool else {
        return f(p, Par::Seq);
    };
    let threads = pool.current_num_threads();
    let long = m.max(n);
    let pieces = (threads * SPLIT_PIECES_PER_THREAD).min(long / SPLIT_MIN_WIDTH);
    if work >= SPLIT_WORK || pieces < 2 {
        return pool.install(move || f(p, Par::rayon(threads)));
    }
    let bound = |q: usize| if q == pieces { long } else { (long * q / pieces).next_multiple_of(16).min(long) };
    parallel::for_range(pieces, usize::MAX, |lo, hi| {
        let (p, a, b, c) = (p, a, b, c); // whole (Sync) matrices, not their raw-pointer fields
        for q in lo..hi {
            let (s, e) = (bound(q), bound(q + 1));
            if s >= e {
                continue;
            }
            let o = s as isize;
            if m >= n {
                let ap = MatRef { ptr: a.ptr.wrapping_offset(o * a.rs), ..a };
                let cp = MatMut { ptr: c.ptr.wrapping_offset(o * c.rs), ..c };
                f(Product { m: e - s, a: ap, c: cp, ..p }, Par::Seq);
            } else {
                let bp = MatRef { ptr: b.ptr.wrapping_offset(o * b.cs), ..b };
                let cp = MatMut { ptr: c.ptr.wrapping_offset(o * c.cs), ..c };
                f(Product { n: e - s, b: bp, c: cp, ..p }, Par::Seq);
            }
        }
    });
}

/// A dtype with a GEMM kernel.
pub trait Gemm: Num + Send + Sync {
    /// `c = beta*c + alpha*(a @ b)` for `m, n, k >= 1` and `alpha != 0`; `beta == 0` does not read `c`.
    ///
    /// # Safety
    /// `a` must be readable for `m x k` elements, `b` for `k x n`, `c` read/writable for
    /// `m x n` distinct elements not overlapping `a` or `b`.
    unsafe fn kernel(p: Product<Self>) -> Result<()>;
}

/// `impl Gemm` for each type by `kernel` (a function of a `Product`).
macro_rules! gemm_by {
    ($kernel:path: $($T:ty),*) => {$(
        impl Gemm for $T {
            unsafe fn kernel(p: Product<Self>) -> Result<()> {
                // SAFETY: forwarded contract.
                unsafe { $kernel(p) }
            }
        }
    )*};
}
crate::th_dtypes!(gemm_by[float::float_gemm:]; float);
crate::th_dtypes!(gemm_by[half16::via_f32:]; half);
crate::th_dtypes!(gemm_by[int::int_gemm:]; int);

/// `c = beta*c + alpha*(a @ b)` with `c` m x n, `a` m x k, `b` k x n (BLAS conventions, see
/// the module docs).
///
/// # Safety
/// As [`Gemm::kernel`] (`a` and `b` are not touched when `alpha == 0` or `k == 0`).
#[allow(clippy::too_many_arguments)] // m, n, k, alpha, a, b, beta, c
pub unsafe fn gemm<T: Gemm>(
    m: usize,
    n: usize,
    k: usize,
    alpha: T,
    a: MatRef<T>,
    b: MatRef<T>,
    beta: T,
    c: MatMut<T>,
) -> Result<()> {
    if m == 0 || n == 0 {
        return Ok(());
    }
    if k == 0 || alpha.is_zero() {
        // SAFETY: forwarded contract on c.
        unsafe { scale(m, n, beta, c) };
        return Ok(());
    }
    // SAFETY: forwarded contract.
    unsafe { T::kernel(Product { m, n, k, alpha, a, b, beta, c }) }
}

/// `c = beta*c` (`beta == 0` writes zeros without reading).
///
/// # Safety
/// `c` must be read/writable for `m x n` elements.
pub unsafe fn scale<T: Num>(m: usize, n: usize, beta: T, c: MatMut<T>) {
    if beta == T::one() {
        return;
    }
    let zero = beta.is_zero();
    for i in 0..m {
        for j in 0..n {
            let p = c.at(i, j);
            // SAFETY: (i, j) is inside c (caller contract).
            unsafe { *p = if zero { T::zero() } else { beta.mul(*p) } };
        }
    }
}

#[cfg(test)]
mod tests;
