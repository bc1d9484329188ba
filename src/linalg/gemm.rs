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

#![allow(clippy::too_many_arguments)] // m, n, k, alpha, a, b, beta, c

use super::packed::{self, Packed, Source};
use crate::core::error::{Error, Result};
use crate::exec::parallel;
use crate::kernels::transpose::{block_lanes, transpose_block};
use crate::kernels::{Isa, isa};
use crate::ops::num::Num;
use faer::{Accum, Par};
use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};

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

/// Multiply-adds (m*n*k) below which a product stays on the calling thread (entering the pool
/// costs a few microseconds).
pub(crate) const PAR_WORK: usize = 128 * 128 * 128;

/// Elements read and written (m*k + k*n + m*n) from which a product runs threaded whatever its
/// multiply-adds: matrix-vector shapes (`addmv`, `addr`, `gemv`, `ger`) are bound by the memory
/// they touch, and two cores read it faster (f32 1024^2 `addmv`, 4 MB: 45 GB/s on one thread,
/// numpy's 74 on two).
const PAR_TOUCH: usize = 4 * parallel::GRAIN;

/// Multiply-adds up to which a threaded product is cut into pieces along its longer output
/// dimension, each run by faer's single-thread kernel through `parallel::for_range` (the caller
/// starts at once and never waits for a pool worker that is still asleep). faer's own threading
/// splits statically, so every call waits for the second thread to wake; from here up it wins
/// anyway. Measured here (f32, 2 threads, hot loop, median GFLOP/s): 128^3 109-121 split
/// against 51-52 faer-threaded, 192^3 111-125 against 66-72, 256^3 87-106 against 51-78,
/// 384^3 97-117 against 81-88; 512^3 77-84 against 89-105.
const SPLIT_WORK: usize = 448 * 448 * 448;

/// Output rows (or columns) per piece of a split product at least.
const SPLIT_MIN_WIDTH: usize = 32;

/// Pieces per thread a split product is cut into (more balance the two cores of a shared
/// machine; each piece packs the other operand again).
const SPLIT_PIECES_PER_THREAD: usize = 2;

/// `f(a, b, c, rows, cols, par)` over the product `c (m x n) = a (m x k) @ b (k x n)`, once or
/// in pieces: below `PAR_WORK` and `PAR_TOUCH`, inside a piece of another parallel loop
/// (`parallel::nested`) or with a one-thread pool, once with `Par::Seq`; up to `SPLIT_WORK`, in
/// pieces of the longer output dimension (multiples of 16 apart) run in parallel with
/// `Par::Seq`; above, once with faer's threading inside the library's pool.
fn split_product<T: Copy + Send + Sync>(
    m: usize,
    n: usize,
    k: usize,
    a: MatRef<T>,
    b: MatRef<T>,
    c: MatMut<T>,
    f: impl Fn(MatRef<T>, MatRef<T>, MatMut<T>, usize, usize, Par) + Send + Sync,
) {
    let work = m.saturating_mul(n).saturating_mul(k);
    let touched = m.saturating_mul(k).saturating_add(k.saturating_mul(n)).saturating_add(m.saturating_mul(n));
    let big = work >= PAR_WORK || touched >= PAR_TOUCH;
    let pool = if big && !parallel::nested() { parallel::pool() } else { None };
    let Some(pool) = pool else {
        return f(a, b, c, m, n, Par::Seq);
    };
    let threads = pool.current_num_threads();
    let long = m.max(n);
    let pieces = (threads * SPLIT_PIECES_PER_THREAD).min(long / SPLIT_MIN_WIDTH);
    if work >= SPLIT_WORK || pieces < 2 {
        return pool.install(move || f(a, b, c, m, n, Par::rayon(threads)));
    }
    let bound = |q: usize| if q == pieces { long } else { (long * q / pieces).next_multiple_of(16).min(long) };
    parallel::for_range(pieces, usize::MAX, |lo, hi| {
        let (a, b, c) = (a, b, c); // whole (Sync) matrices, not their raw-pointer fields
        for q in lo..hi {
            let (s, e) = (bound(q), bound(q + 1));
            if s >= e {
                continue;
            }
            let o = s as isize;
            if m >= n {
                let ap = MatRef { ptr: a.ptr.wrapping_offset(o * a.rs), ..a };
                let cp = MatMut { ptr: c.ptr.wrapping_offset(o * c.rs), ..c };
                f(ap, b, cp, e - s, n, Par::Seq);
            } else {
                let bp = MatRef { ptr: b.ptr.wrapping_offset(o * b.cs), ..b };
                let cp = MatMut { ptr: c.ptr.wrapping_offset(o * c.cs), ..c };
                f(a, bp, cp, m, e - s, Par::Seq);
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
    unsafe fn kernel(
        m: usize,
        n: usize,
        k: usize,
        alpha: Self,
        a: MatRef<Self>,
        b: MatRef<Self>,
        beta: Self,
        c: MatMut<Self>,
    ) -> Result<()>;
}

/// `c = beta*c + alpha*(a @ b)` with `c` m x n, `a` m x k, `b` k x n (BLAS conventions, see
/// the module docs).
///
/// # Safety
/// As [`Gemm::kernel`] (`a` and `b` are not touched when `alpha == 0` or `k == 0`).
#[allow(clippy::too_many_arguments)]
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
    unsafe { T::kernel(m, n, k, alpha, a, b, beta, c) }
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

/// faer's kernel (f32, f64). Its accumulation is `Replace` or `Add`, so another `beta` first
/// scales `c` in place.
#[allow(clippy::too_many_arguments)]
unsafe fn crate_gemm<T: Num + faer::traits::ComplexField>(
    m: usize,
    n: usize,
    k: usize,
    alpha: T,
    a: MatRef<T>,
    b: MatRef<T>,
    beta: T,
    c: MatMut<T>,
) {
    // faer computes in the frame where c is column-major (a row-major c is transposed), and
    // its kernels want that frame's right operand contiguous along k. Given the other way (a
    // column-major `a` under a row-major `c`, or a row-major `b` under a column-major `c`) they
    // ran ~1.4x slower here (f32 1024^3: 88-93 against 130 GFLOP/s, f64: 39 against 53), so that
    // operand is first copied to the fast layout: m*k (or k*n) elements against m*n*k
    // multiply-adds, when the other dimension is wide enough to amortize the copy (measured:
    // 115-134 GFLOP/s f32 with the copy at 1024^3, 115-118 against 86 at 2048^3).
    let mut copy = None;
    let (mut a, mut b) = (a, b);
    if c.cs == 1 && c.rs != 1 && a.cs != 1 && n >= MIN_COPY_WIDTH {
        // SAFETY: caller contract: a is readable for m x k elements.
        copy = unsafe { transposed_copy(a, m, k) };
        if let Some(v) = &copy {
            a = MatRef { ptr: v.as_ptr(), rs: k as isize, cs: 1 };
        }
    } else if c.rs == 1 && c.cs != 1 && b.rs != 1 && m >= MIN_COPY_WIDTH {
        // b (k x n) as its transpose's row-major copy: column-major b
        // SAFETY: caller contract: b is readable for k x n elements (its transpose, n x k).
        copy = unsafe { transposed_copy(MatRef { ptr: b.ptr, rs: b.cs, cs: b.rs }, n, k) };
        if let Some(v) = &copy {
            b = MatRef { ptr: v.as_ptr(), rs: 1, cs: k as isize };
        }
    }
    let accum = if beta.is_zero() {
        Accum::Replace
    } else {
        // SAFETY: caller contract on c.
        unsafe { scale(m, n, beta, c) };
        Accum::Add
    };
    split_product(m, n, k, a, b, c, move |a, b, c, m, n, par| {
        // SAFETY: caller contract: a, b and c are valid for their shapes at their strides, c's
        // elements are distinct and do not overlap a or b; a piece is a block of rows of a and
        // c (or of columns of b and c), and pieces are disjoint blocks of c.
        unsafe {
            let am = faer::MatRef::from_raw_parts(a.ptr, m, k, a.rs, a.cs);
            let bm = faer::MatRef::from_raw_parts(b.ptr, k, n, b.rs, b.cs);
            let cm = faer::MatMut::from_raw_parts_mut(c.ptr, m, n, c.rs, c.cs);
            faer::linalg::matmul::matmul(cm, accum, am, bm, alpha, par);
        }
    });
    drop(copy);
}

/// Columns of `c` (or rows, for a column-major `c`) from which an operand in the slow layout is
/// copied first (see `crate_gemm`).
const MIN_COPY_WIDTH: usize = 32;

/// A row-major copy of the `rows x cols` matrix `x`, in tiles of 8 rows by 128 columns (the
/// tiles of a column run down the rows before the next columns): 8 consecutive elements of a
/// column-major `x` go to 8 output rows, and a column's cache lines and pages are still at
/// hand when the next tile down reads on. (Square 64 x 64 tiles of a power-of-two-strided
/// matrix fall into a few cache sets: 4-5 ms for 1024^2 f32 here against ~1.2 ms; 8-row strips
/// as long as the matrix is wide touch a page per column: 13 ms against ~5 ms for 2048^2.)
/// Where `x` is column-major, its 4- and 8-byte elements move in square blocks transposed in
/// AVX registers (`transpose_block`): 1024^2 f32 in 0.64-0.74 ms here against 2.3-2.7 ms
/// element by element, 2048^2 in 3.6-3.9 ms against 8-11 ms (memcpy: 0.2 / 2.5 ms).
/// `None` when it cannot be allocated (the product then runs on `x` as it is).
///
/// # Safety
/// `x` must be readable for `rows x cols` elements.
unsafe fn transposed_copy<T: Copy + Send + Sync>(x: MatRef<T>, rows: usize, cols: usize) -> Option<Vec<T>> {
    const STRIP: usize = 8;
    const CHUNK: usize = 128;
    let len = rows.checked_mul(cols)?;
    let mut out: Vec<T> = Vec::new();
    out.try_reserve_exact(len).ok()?;
    let dst = MatMut { ptr: out.as_mut_ptr(), rs: cols as isize, cs: 1 };
    let lanes = if x.rs == 1 { block_lanes::<T>() } else { 0 };
    parallel::for_range(rows.div_ceil(STRIP), len, |lo, hi| {
        let (r0, r1) = (lo * STRIP, (hi * STRIP).min(rows));
        for j0 in (0..cols).step_by(CHUNK) {
            let j1 = (j0 + CHUNK).min(cols);
            for i0 in (r0..r1).step_by(STRIP) {
                let i1 = (i0 + STRIP).min(r1);
                let mut j = j0;
                if lanes > 0 && i1 - i0 == STRIP {
                    while j + lanes <= j1 {
                        for ib in (i0..i1).step_by(lanes) {
                            // SAFETY: the lanes x lanes block at (ib, j) is inside both matrices
                            // (STRIP is a multiple of lanes); x's columns are contiguous (rs 1),
                            // and the block's rows of `out` belong to this piece's strips.
                            unsafe { transpose_block(x.at(ib, j), x.cs, dst.at(ib, j), cols as isize) };
                        }
                        j += lanes;
                    }
                }
                for j in j..j1 {
                    for i in i0..i1 {
                        // SAFETY: (i, j) is inside both matrices; strips are split between
                        // threads, and every element of `out` is written once before it is read.
                        unsafe { dst.at(i, j).write(*x.at(i, j)) };
                    }
                }
            }
        }
    });
    // SAFETY: every one of the len elements was written above.
    unsafe { out.set_len(len) };
    Some(out)
}

/// Multiply-adds below which an AVX-512 machine runs a Float/Double product on faer's kernels
/// (in pieces, `split_product`) rather than the packed one. Paired on a 2-core Ice Lake (7
/// rounds, speed against numpy): 128^3 faer 1.45-1.52x, packed 1.05-1.33x; 256^3 faer
/// 1.15-1.34x, packed 0.94-1.06x; 384^3 faer 0.69-1.02x, packed 0.84-1.00x.
const AVX512_FAER_WORK: usize = 1 << 25;

/// Output rows, columns and depth from which a Float/Double product runs on the packed kernel
/// (where the CPU has one); smaller ones run on faer's, which has kernels for small shapes.
const MIN_PACKED: usize = 16;

/// Float, Double: matrix-vector products with contiguous matrix rows on `packed::dots`, with
/// contiguous columns on `packed::columns`; other products on the packed kernel
/// (`super::packed`); all on AVX2 + FMA or AVX-512. Else faer's matmul (`crate_gemm`:
/// `TH_CPU_CAPABILITY=scalar`, small shapes, or no memory for the pack buffers).
///
/// On AVX-512, paired with faer on a 2-core Ice Lake (1024 and 2048 squares, plain and
/// transposed operands, 7 rounds, speed against numpy's OpenBLAS), the packed kernel was at
/// 0.84-1.08x and faer at 0.67-1.04x: ahead in 10 of the 12 cases, by 0.1-0.25 with
/// transposed operands (which faer reads in its slow layout). Below `AVX512_FAER_WORK`
/// multiply-adds faer's kernels stay ahead there.
///
/// # Safety
/// As [`Gemm::kernel`].
unsafe fn float_gemm<T: Packed + Num + faer::traits::ComplexField>(
    m: usize,
    n: usize,
    k: usize,
    alpha: T,
    a: MatRef<T>,
    b: MatRef<T>,
    beta: T,
    c: MatMut<T>,
) {
    if n == 1 && a.cs == 1 && (b.rs == 1 || k == 1) {
        // matrix-vector with the matrix's rows contiguous: dot products, pieces of rows threaded
        if let Some(kernel) = T::kernel() {
            parallel::for_range(m, m.saturating_mul(k), |lo, hi| {
                let (a, b, c) = (a, b, c); // whole (Sync) matrices, not their raw-pointer fields
                // SAFETY: forwarded contract (m, k >= 1): rows lo..hi of a hold k contiguous
                // elements, b's k are contiguous, and the pieces write disjoint elements of c.
                unsafe { (kernel.dots)(lo..hi, k, alpha, a, b.ptr, beta, c) }
            });
            return;
        }
    }
    if n == 1 && a.rs == 1 && m > 1 {
        // matrix-vector with the matrix's columns contiguous: passes over a few columns at a
        // time, pieces of rows threaded
        if let Some(kernel) = T::kernel() {
            let threads = parallel::pool().map_or(1, |p| p.current_num_threads());
            let rb = packed::col_unit(m, threads);
            parallel::for_range(m.div_ceil(rb), m.saturating_mul(k), |lo, hi| {
                let (a, b, c) = (a, b, c); // whole (Sync) matrices, not their raw-pointer fields
                // SAFETY: forwarded contract (m, k >= 1): a's columns hold rows lo*rb..hi*rb
                // (cut at m) contiguously, b is k elements, and the pieces write disjoint
                // elements of c.
                unsafe { (kernel.cols)(lo * rb..m.min(hi * rb), k, alpha, a, b, beta, c) }
            });
            return;
        }
    }
    let small = isa() == Isa::Avx512 && m.saturating_mul(n).saturating_mul(k) < AVX512_FAER_WORK;
    // SAFETY: forwarded contract.
    if small || !unsafe { try_packed(m, n, k, alpha, a, b, beta, c) } {
        // SAFETY: forwarded contract.
        unsafe { crate_gemm(m, n, k, alpha, a, b, beta, c) }
    }
}

/// The product on the packed kernel of `E` (operands of `S` converted as they are packed),
/// threaded from `PAR_WORK` multiply-adds: false, touching nothing, where the CPU has no such
/// kernel, a dimension is below `MIN_PACKED`, or the pack buffers cannot be allocated.
///
/// # Safety
/// As [`Gemm::kernel`].
unsafe fn try_packed<E: Packed, S: Source<E>>(
    m: usize,
    n: usize,
    k: usize,
    alpha: E,
    a: MatRef<S>,
    b: MatRef<S>,
    beta: E,
    c: MatMut<E>,
) -> bool {
    let Some(kernel) = E::kernel().filter(|_| m.min(n).min(k) >= MIN_PACKED) else { return false };
    let threads = if m.saturating_mul(n).saturating_mul(k) >= PAR_WORK && !parallel::nested() {
        parallel::pool().map_or(1, |p| p.current_num_threads())
    } else {
        1
    };
    // SAFETY: forwarded contract; the kernel runs on this CPU (`Packed::kernel`).
    unsafe { packed::gemm(kernel, m, n, k, alpha, a, b, beta, c, threads) }
}

macro_rules! crate_kernel {
    ($($T:ty),*) => {$(
        impl Gemm for $T {
            unsafe fn kernel(m: usize, n: usize, k: usize, alpha: Self, a: MatRef<Self>, b: MatRef<Self>, beta: Self, c: MatMut<Self>) -> Result<()> {
                // SAFETY: forwarded contract.
                unsafe { float_gemm(m, n, k, alpha, a, b, beta, c) };
                Ok(())
            }
        }
    )*};
}
crate_kernel!(f32, f64);

/// A vector of `n` elements or an allocation error.
pub(crate) fn alloc_vec<T: Copy>(n: usize, v: T) -> Result<Vec<T>> {
    let mut out = Vec::new();
    out.try_reserve_exact(n)
        .map_err(|_| Error::alloc(format!("cannot allocate {n} elements of {} bytes", size_of::<T>())))?;
    out.resize(n, v);
    Ok(out)
}

/// The 16-bit floats, computed through f32.
trait Half16: Num + Send + Sync + Source<f32> {
    fn f32(self) -> f32;
    fn of_f32(v: f32) -> Self;
    /// `dst[j] = src[j].f32()` (the `half` crate's slice conversion: F16C where the CPU has it).
    fn row_to_f32(src: &[Self], dst: &mut [f32]);
    /// `dst[j] = of_f32(src[j])`.
    fn row_of_f32(src: &[f32], dst: &mut [Self]);
}
impl Half16 for f16 {
    #[inline(always)]
    fn f32(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn of_f32(v: f32) -> Self {
        f16::from_f32(v)
    }
    fn row_to_f32(src: &[Self], dst: &mut [f32]) {
        src.convert_to_f32_slice(dst)
    }
    fn row_of_f32(src: &[f32], dst: &mut [Self]) {
        dst.convert_from_f32_slice(src)
    }
}
impl Half16 for bf16 {
    #[inline(always)]
    fn f32(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn of_f32(v: f32) -> Self {
        bf16::from_f32(v)
    }
    fn row_to_f32(src: &[Self], dst: &mut [f32]) {
        src.convert_to_f32_slice(dst)
    }
    fn row_of_f32(src: &[f32], dst: &mut [Self]) {
        dst.convert_from_f32_slice(src)
    }
}

/// A row-major f32 copy of the `rows x cols` matrix `x`.
///
/// # Safety
/// `x` must be readable for `rows x cols` elements.
unsafe fn to_f32<T: Half16>(x: MatRef<T>, rows: usize, cols: usize) -> Result<Vec<f32>> {
    let mut out = alloc_vec(rows * cols, 0f32)?;
    let dst = MatMut { ptr: out.as_mut_ptr(), rs: cols as isize, cs: 1 };
    parallel::for_range(rows, rows * cols, |lo, hi| {
        for i in lo..hi {
            // SAFETY: row i of dst (cols elements) is written by this piece alone.
            let drow = unsafe { std::slice::from_raw_parts_mut(dst.at(i, 0), cols) };
            if x.cs == 1 {
                // SAFETY: row i of x is cols contiguous elements (caller contract).
                T::row_to_f32(unsafe { std::slice::from_raw_parts(x.at(i, 0), cols) }, drow);
            } else {
                for (j, d) in drow.iter_mut().enumerate() {
                    // SAFETY: (i, j) is inside x.
                    *d = unsafe { *x.at(i, j) }.f32();
                }
            }
        }
    });
    Ok(out)
}

/// An f32 copy of the `rows x cols` operand `x` and its strides: column-major when `x` is
/// (its columns then convert as contiguous runs), else row-major.
///
/// # Safety
/// `x` must be readable for `rows x cols` elements.
unsafe fn operand_f32<T: Half16>(x: MatRef<T>, rows: usize, cols: usize) -> Result<(Vec<f32>, isize, isize)> {
    if x.rs == 1 && x.cs != 1 && cols > 1 {
        // SAFETY: the transpose of x (cols x rows, rows contiguous) covers the same elements.
        let v = unsafe { to_f32(MatRef { ptr: x.ptr, rs: x.cs, cs: 1 }, cols, rows)? };
        return Ok((v, 1, rows as isize));
    }
    // SAFETY: forwarded contract.
    Ok((unsafe { to_f32(x, rows, cols)? }, cols as isize, 1))
}

/// Half/BFloat16: the f32 kernel, one rounding of the result (the `gemm` crate's own f16 kernel
/// was measured several f16 ulps off at k ~ 600, beyond one rounding). The sums go to an f32
/// copy of `c`; the packed kernel converts the operands as it packs them, faer's path (no AVX2,
/// small shapes) takes f32 copies of them.
///
/// # Safety
/// As [`Gemm::kernel`].
#[allow(clippy::too_many_arguments)]
unsafe fn via_f32<T: Half16>(
    m: usize,
    n: usize,
    k: usize,
    alpha: T,
    a: MatRef<T>,
    b: MatRef<T>,
    beta: T,
    c: MatMut<T>,
) -> Result<()> {
    {
        let read = !beta.is_zero();
        // SAFETY: forwarded contract (shapes as documented).
        let mut c32 = if read { unsafe { to_f32(c.as_ref(), m, n)? } } else { alloc_vec(m * n, 0f32)? };
        let cm = MatMut { ptr: c32.as_mut_ptr(), rs: n as isize, cs: 1 };
        let (alpha, beta) = (alpha.f32(), beta.f32());
        // SAFETY: as above; c32 is distinct from the operands.
        if !unsafe { try_packed(m, n, k, alpha, a, b, beta, cm) } {
            // SAFETY: as above.
            let ((a32, ars, acs), (b32, brs, bcs)) = unsafe { (operand_f32(a, m, k)?, operand_f32(b, k, n)?) };
            let (am, bm) =
                (MatRef { ptr: a32.as_ptr(), rs: ars, cs: acs }, MatRef { ptr: b32.as_ptr(), rs: brs, cs: bcs });
            // SAFETY: the three f32 buffers hold exactly these shapes at these strides and are
            // distinct.
            unsafe { float_gemm(m, n, k, alpha, am, bm, beta, cm) };
        }
        let src = cm.as_ref();
        parallel::for_range(m, m * n, |lo, hi| {
            for i in lo..hi {
                // SAFETY: row i of the row-major f32 result (n elements).
                let srow = unsafe { std::slice::from_raw_parts(src.at(i, 0), n) };
                if c.cs == 1 {
                    // SAFETY: row i of c is n contiguous elements, written by this piece alone.
                    T::row_of_f32(srow, unsafe { std::slice::from_raw_parts_mut(c.at(i, 0), n) });
                } else {
                    for (j, &v) in srow.iter().enumerate() {
                        // SAFETY: (i, j) is inside c; rows are split between threads.
                        unsafe { *c.at(i, j) = T::of_f32(v) };
                    }
                }
            }
        });
        Ok(())
    }
}

macro_rules! half_kernel {
    ($($T:ty),*) => {$(
        impl Gemm for $T {
            unsafe fn kernel(m: usize, n: usize, k: usize, alpha: Self, a: MatRef<Self>, b: MatRef<Self>, beta: Self, c: MatMut<Self>) -> Result<()> {
                // SAFETY: forwarded contract.
                unsafe { via_f32(m, n, k, alpha, a, b, beta, c) }
            }
        }
    )*};
}
half_kernel!(f16, bf16);

// ---------------------------------------------------------------------------------------------
// Integer kernel
// ---------------------------------------------------------------------------------------------

const MR: usize = 4;
const NR: usize = 16;
const KC: usize = 256;
const MC: usize = 64;
const NC: usize = 4096;

/// `MR x NR` products of a packed A panel (`kb` x MR, k-major) and B panel (`kb` x NR).
#[inline(always)]
fn micro<T: Num>(kb: usize, ap: &[T], bp: &[T]) -> [[T; NR]; MR] {
    let mut acc = [[T::zero(); NR]; MR];
    for (a, b) in ap.chunks_exact(MR).zip(bp.chunks_exact(NR)).take(kb) {
        for i in 0..MR {
            for j in 0..NR {
                acc[i][j] = acc[i][j].add(a[i].mul(b[j]));
            }
        }
    }
    acc
}

/// Blocked GEMM in `T`'s own (wrapping) arithmetic.
///
/// # Safety
/// As [`Gemm::kernel`].
#[allow(clippy::too_many_arguments)]
unsafe fn int_gemm<T: Num + Send + Sync>(
    m: usize,
    n: usize,
    k: usize,
    alpha: T,
    a: MatRef<T>,
    b: MatRef<T>,
    beta: T,
    c: MatMut<T>,
) -> Result<()> {
    let mpanels = m.div_ceil(MR);
    let mut apack = alloc_vec(mpanels * MR * KC.min(k), T::zero())?;
    let mut bpack = alloc_vec(NC.min(n).div_ceil(NR) * NR * KC.min(k), T::zero())?;
    for jc in (0..n).step_by(NC) {
        let nb = NC.min(n - jc);
        let npanels = nb.div_ceil(NR);
        for pc in (0..k).step_by(KC) {
            let kb = KC.min(k - pc);
            // Pack B[pc.., jc..] as panels of NR columns, k-major, zero-padded.
            {
                let bp = MatMut { ptr: bpack.as_mut_ptr(), rs: 0, cs: 0 };
                parallel::for_range(npanels, kb * nb, |lo, hi| {
                    let bp = &bp;
                    for jp in lo..hi {
                        for p in 0..kb {
                            for jj in 0..NR {
                                let j = jp * NR + jj;
                                let v = if j < nb {
                                    // SAFETY: (pc+p, jc+j) is inside b.
                                    unsafe { *b.at(pc + p, jc + j) }
                                } else {
                                    T::zero()
                                };
                                // SAFETY: index < npanels*kb*NR <= bpack.len(); panels split.
                                unsafe { *bp.ptr.add((jp * kb + p) * NR + jj) = v };
                            }
                        }
                    }
                });
            }
            // Pack A[.., pc..] as panels of MR rows, k-major, zero-padded.
            {
                let ap = MatMut { ptr: apack.as_mut_ptr(), rs: 0, cs: 0 };
                parallel::for_range(mpanels, kb * m, |lo, hi| {
                    let ap = &ap;
                    for ip in lo..hi {
                        for p in 0..kb {
                            for ii in 0..MR {
                                let i = ip * MR + ii;
                                let v = if i < m {
                                    // SAFETY: (i, pc+p) is inside a.
                                    unsafe { *a.at(i, pc + p) }
                                } else {
                                    T::zero()
                                };
                                // SAFETY: index < mpanels*kb*MR <= apack.len(); panels split.
                                unsafe { *ap.ptr.add((ip * kb + p) * MR + ii) = v };
                            }
                        }
                    }
                });
            }
            let first = pc == 0;
            let (apk, bpk) = (&apack[..], &bpack[..]);
            let mblocks = m.div_ceil(MC);
            parallel::for_range(mblocks, m * nb * kb, |lo, hi| {
                for ib in lo..hi {
                    let i0 = ib * MC;
                    let i1 = (i0 + MC).min(m);
                    for jp in 0..npanels {
                        let bpanel = &bpk[jp * kb * NR..(jp + 1) * kb * NR];
                        for ip in (i0 / MR)..i1.div_ceil(MR) {
                            let acc = micro(kb, &apk[ip * kb * MR..(ip + 1) * kb * MR], bpanel);
                            for (ii, row) in acc.iter().enumerate() {
                                let i = ip * MR + ii;
                                if i >= i1 {
                                    break;
                                }
                                for (jj, &v) in row.iter().enumerate() {
                                    let j = jp * NR + jj;
                                    if j >= nb {
                                        break;
                                    }
                                    let p = c.at(i, jc + j);
                                    // SAFETY: (i, jc+j) is inside c; row blocks are split
                                    // between threads so no element is written twice at once.
                                    unsafe {
                                        let old = if !first {
                                            *p
                                        } else if beta.is_zero() {
                                            T::zero()
                                        } else {
                                            beta.mul(*p)
                                        };
                                        *p = old.add(alpha.mul(v));
                                    }
                                }
                            }
                        }
                    }
                }
            });
        }
    }
    Ok(())
}

macro_rules! int_kernel {
    ($($T:ty),*) => {$(
        impl Gemm for $T {
            unsafe fn kernel(m: usize, n: usize, k: usize, alpha: Self, a: MatRef<Self>, b: MatRef<Self>, beta: Self, c: MatMut<Self>) -> Result<()> {
                // SAFETY: forwarded contract.
                unsafe { int_gemm(m, n, k, alpha, a, b, beta, c) }
            }
        }
    )*};
}
int_kernel!(u8, i8, i16, i32, i64);

#[cfg(test)]
mod tests {
    use super::*;

    fn naive<T: Num>(m: usize, n: usize, k: usize, alpha: T, a: &[T], b: &[T], beta: T, c: &mut [T]) {
        for i in 0..m {
            for j in 0..n {
                let mut s = T::zero();
                for p in 0..k {
                    s = s.add(a[i * k + p].mul(b[p * n + j]));
                }
                let old = if beta.is_zero() { T::zero() } else { beta.mul(c[i * n + j]) };
                c[i * n + j] = old.add(alpha.mul(s));
            }
        }
    }

    #[test]
    fn int_kernel_matches_naive_with_wrapping() {
        // past MC in m, KC in k, NC in n, and ragged against MR x NR (narrower under Miri)
        let blocked = if cfg!(miri) { (66, 5, 260) } else { (70, 33, 300) };
        for &(m, n, k) in &[(1, 1, 1), (5, 17, 3), blocked, (4, 4100, 2)] {
            let a: Vec<i8> = (0..m * k).map(|i| (i * 37 % 251) as i8).collect();
            let b: Vec<i8> = (0..k * n).map(|i| (i * 91 % 253) as i8).collect();
            let mut c: Vec<i8> = (0..m * n).map(|i| (i * 7) as i8).collect();
            let mut want = c.clone();
            naive(m, n, k, 3, &a, &b, -2, &mut want);
            // SAFETY: row-major buffers of the stated shapes.
            unsafe {
                gemm(
                    m,
                    n,
                    k,
                    3i8,
                    MatRef { ptr: a.as_ptr(), rs: k as isize, cs: 1 },
                    MatRef { ptr: b.as_ptr(), rs: n as isize, cs: 1 },
                    -2,
                    MatMut { ptr: c.as_mut_ptr(), rs: n as isize, cs: 1 },
                )
                .unwrap()
            };
            assert_eq!(c, want, "{m}x{n}x{k}");
        }
    }

    #[test]
    fn float_kernels_copy_slow_layouts() {
        slow_layouts::<f32>();
        slow_layouts::<f64>();
    }

    fn slow_layouts<T: Gemm + std::fmt::Debug>() {
        // a column-major under a row-major c, b row-major under a column-major c: the operand is
        // copied (register-transposed 8x8 or 4x4 blocks, then ragged edges) before faer runs;
        // beta not in {0, 1} scales c first.
        let (m, n, k) = if cfg!(miri) { (33, 34, 5) } else { (70, 65, 67) };
        let v = |x: usize| T::from_f64(x as f64);
        let a: Vec<T> = (0..m * k).map(|i| v(i % 11).sub(v(5))).collect(); // row-major m x k
        let b: Vec<T> = (0..k * n).map(|i| v(i % 9).sub(v(4))).collect(); // row-major k x n
        let c0: Vec<T> = (0..m * n).map(|i| v(i % 5)).collect(); // row-major m x n
        let (two, half) = (T::from_f64(2.0), T::from_f64(0.5));
        let mut want = c0.clone();
        naive(m, n, k, two, &a, &b, half, &mut want);
        let at: Vec<T> = (0..m * k).map(|q| a[(q % m) * k + q / m]).collect(); // column-major a
        let mut c = c0.clone();
        // SAFETY: buffers of the stated shapes and layouts.
        unsafe {
            gemm(
                m,
                n,
                k,
                two,
                MatRef { ptr: at.as_ptr(), rs: 1, cs: m as isize },
                MatRef { ptr: b.as_ptr(), rs: n as isize, cs: 1 },
                half,
                MatMut { ptr: c.as_mut_ptr(), rs: n as isize, cs: 1 },
            )
            .unwrap()
        };
        assert_eq!(c, want);
        let mut cc: Vec<T> = (0..m * n).map(|q| c0[(q % m) * n + q / m]).collect(); // column-major c
        // SAFETY: as above.
        unsafe {
            gemm(
                m,
                n,
                k,
                two,
                MatRef { ptr: a.as_ptr(), rs: k as isize, cs: 1 },
                MatRef { ptr: b.as_ptr(), rs: n as isize, cs: 1 },
                half,
                MatMut { ptr: cc.as_mut_ptr(), rs: 1, cs: m as isize },
            )
            .unwrap()
        };
        for i in 0..m {
            for j in 0..n {
                assert_eq!(cc[i + j * m], want[i * n + j]);
            }
        }
    }

    #[test]
    fn split_products_cover_every_piece() {
        // in the split range (PAR_WORK..SPLIT_WORK) with the long side in rows, then in columns,
        // ragged against the 16-element piece boundaries, with beta not in {0, 1}
        let shapes: &[(usize, usize, usize)] =
            if cfg!(miri) { &[(70, 3, 2), (3, 70, 2)] } else { &[(211, 130, 150), (40, 301, 200)] };
        for &(m, n, k) in shapes {
            let a: Vec<f64> = (0..m * k).map(|i| (i % 13) as f64 - 6.0).collect();
            let b: Vec<f64> = (0..k * n).map(|i| (i % 7) as f64 - 3.0).collect();
            let c0: Vec<f64> = (0..m * n).map(|i| (i % 5) as f64).collect();
            let mut want = c0.clone();
            naive(m, n, k, 2.0, &a, &b, -0.5, &mut want);
            let mut c = c0.clone();
            let pieces = std::sync::Mutex::new(0);
            let (am, bm) =
                (MatRef { ptr: a.as_ptr(), rs: k as isize, cs: 1 }, MatRef { ptr: b.as_ptr(), rs: n as isize, cs: 1 });
            let cm = MatMut { ptr: c.as_mut_ptr(), rs: n as isize, cs: 1 };
            if !cfg!(miri) {
                split_product(m, n, k, am, bm, cm, |_, _, _, _, _, _| *pieces.lock().unwrap() += 1);
                let threads = parallel::pool().map_or(1, |p| p.current_num_threads());
                assert_eq!(*pieces.lock().unwrap() > 1, threads > 1, "{m}x{n}x{k}");
            }
            // SAFETY: row-major buffers of the stated shapes.
            unsafe { gemm(m, n, k, 2.0, am, bm, -0.5, cm).unwrap() };
            assert_eq!(c, want, "{m}x{n}x{k}");
        }
    }

    #[test]
    fn float_kernels_transposed_and_beta_zero() {
        let (m, n, k) = (37, 29, 41);
        let a: Vec<f64> = (0..m * k).map(|i| (i % 13) as f64 - 6.0).collect();
        let b: Vec<f64> = (0..k * n).map(|i| (i % 7) as f64 - 3.0).collect();
        let mut want = vec![0.0; m * n];
        naive(m, n, k, 2.0, &a, &b, 0.0, &mut want);
        // a given as its transpose's column-major layout, c starts as NaN.
        let mut c = vec![f64::NAN; m * n];
        // SAFETY: as above; c is column-major m x n.
        unsafe {
            gemm(
                m,
                n,
                k,
                2.0,
                MatRef { ptr: a.as_ptr(), rs: k as isize, cs: 1 },
                MatRef { ptr: b.as_ptr(), rs: n as isize, cs: 1 },
                0.0,
                MatMut { ptr: c.as_mut_ptr(), rs: 1, cs: m as isize },
            )
            .unwrap()
        };
        for i in 0..m {
            for j in 0..n {
                assert_eq!(c[i + j * m], want[i * n + j]);
            }
        }
        let ab: Vec<bf16> = a.iter().map(|&x| bf16::from_f64(x)).collect();
        let bb: Vec<bf16> = b.iter().map(|&x| bf16::from_f64(x)).collect();
        let mut cb = vec![bf16::NAN; m * n];
        // SAFETY: as above.
        unsafe {
            gemm(
                m,
                n,
                k,
                bf16::from_f32(2.0),
                MatRef { ptr: ab.as_ptr(), rs: k as isize, cs: 1 },
                MatRef { ptr: bb.as_ptr(), rs: n as isize, cs: 1 },
                bf16::ZERO,
                MatMut { ptr: cb.as_mut_ptr(), rs: n as isize, cs: 1 },
            )
            .unwrap()
        };
        for i in 0..m * n {
            assert_eq!(cb[i], bf16::from_f64(want[i]));
        }
    }
}
