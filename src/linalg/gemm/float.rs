//! Float, Double: the packed kernel (`super::super::packed`), its matrix-vector loops, or
//! faer's matmul.

use super::*;
use crate::core::limits::try_vec;
use crate::kernels::transpose::{block_lanes, transpose_block};
use crate::kernels::{Isa, isa};
use crate::linalg::packed::{self, Packed, Source};
use faer::Accum;

/// faer's kernel (f32, f64). Its accumulation is `Replace` or `Add`, so another `beta` first
/// scales `c` in place.
///
/// # Safety
/// As [`Gemm::kernel`].
unsafe fn crate_gemm<T: Num + faer::traits::ComplexField>(p: Product<T>) {
    let Product { m, n, k, alpha, beta, c, .. } = p;
    // faer computes in the frame where c is column-major (a row-major c is transposed), and
    // its kernels want that frame's right operand contiguous along k: given the other way (a
    // column-major `a` under a row-major `c`, or a row-major `b` under a column-major `c`)
    // they stride through it, so that operand is first copied to the fast layout: m*k (or
    // k*n) elements against m*n*k multiply-adds, when the other dimension is wide enough
    // (`MIN_COPY_WIDTH`) to amortize the copy.
    let mut copy = None;
    let mut p = p;
    if c.cs == 1 && c.rs != 1 && p.a.cs != 1 && n >= MIN_COPY_WIDTH {
        // SAFETY: caller contract: a is readable for m x k elements.
        copy = unsafe { transposed_copy(p.a, m, k) };
        if let Some(v) = &copy {
            p.a = MatRef { ptr: v.as_ptr(), rs: k as isize, cs: 1 };
        }
    } else if c.rs == 1 && c.cs != 1 && p.b.rs != 1 && m >= MIN_COPY_WIDTH {
        // b (k x n) as its transpose's row-major copy: column-major b
        // SAFETY: caller contract: b is readable for k x n elements (its transpose, n x k).
        copy = unsafe { transposed_copy(MatRef { ptr: p.b.ptr, rs: p.b.cs, cs: p.b.rs }, n, k) };
        if let Some(v) = &copy {
            p.b = MatRef { ptr: v.as_ptr(), rs: 1, cs: k as isize };
        }
    }
    let accum = if beta.is_zero() {
        Accum::Replace
    } else {
        // SAFETY: caller contract on c.
        unsafe { scale(m, n, beta, c) };
        Accum::Add
    };
    split_product(p, move |q, par| {
        // SAFETY: caller contract: a, b and c are valid for their shapes at their strides, c's
        // elements are distinct and do not overlap a or b; a piece is a block of rows of a and
        // c (or of columns of b and c), and pieces are disjoint blocks of c.
        unsafe {
            let am = faer::MatRef::from_raw_parts(q.a.ptr, q.m, q.k, q.a.rs, q.a.cs);
            let bm = faer::MatRef::from_raw_parts(q.b.ptr, q.k, q.n, q.b.rs, q.b.cs);
            let cm = faer::MatMut::from_raw_parts_mut(q.c.ptr, q.m, q.n, q.c.rs, q.c.cs);
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
/// hand when the next tile down reads on. (Square tiles of a power-of-two-strided matrix put
/// their columns in a few cache sets, which evict each other; strips of 8 rows as long as the
/// matrix is wide touch a page per column, more pages than the TLB holds.)
/// Where `x` is column-major, its 4- and 8-byte elements move in square blocks transposed in
/// AVX registers (`transpose_block`): whole vectors loaded and stored rather than one element
/// at a time.
/// `None` when it cannot be allocated (the product then runs on `x` as it is).
///
/// # Safety
/// `x` must be readable for `rows x cols` elements.
unsafe fn transposed_copy<T: Copy + Send + Sync>(x: MatRef<T>, rows: usize, cols: usize) -> Option<Vec<T>> {
    const STRIP: usize = 8;
    const CHUNK: usize = 128;
    let len = rows.checked_mul(cols)?;
    let mut out: Vec<T> = try_vec(len).ok()?;
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
/// (in pieces, `split_product`) rather than the packed one: faer's kernels handle small shapes
/// without packing, while the packed kernel's fixed costs (packing both operands, the blocks'
/// schedule across threads) are amortized only by larger products (from about 320^3).
const AVX512_FAER_WORK: usize = 1 << 25;

/// Output rows, columns and depth from which a Float/Double product runs on the packed kernel
/// (where the CPU has one); smaller ones run on faer's, which has kernels for small shapes.
const MIN_PACKED: usize = 16;

/// Float, Double: matrix-vector products with contiguous matrix rows on `packed::dots`, with
/// contiguous columns on `packed::columns`; other products on the packed kernel
/// (`super::packed`); all on AVX2 + FMA or AVX-512. Else faer's matmul (`crate_gemm`:
/// `TH_CPU_CAPABILITY=scalar`, small shapes, or no memory for the pack buffers).
///
/// On AVX-512 the packed kernel leads faer's on large products, most of all with transposed
/// operands (which faer reads in its slow layout); below `AVX512_FAER_WORK` multiply-adds
/// faer's kernels stay ahead there.
///
/// # Safety
/// As [`Gemm::kernel`].
pub(super) unsafe fn float_gemm<T: Packed + Num + faer::traits::ComplexField>(p: Product<T>) -> Result<()> {
    let Product { m, n, k, alpha, a, b, beta, c } = p;
    if n == 1 && a.cs == 1 && (b.rs == 1 || k == 1) {
        // matrix-vector with the matrix's rows contiguous: dot products, pieces of rows threaded
        if let Some(kernel) = T::kernel() {
            parallel::for_range(m, m.saturating_mul(k), |lo, hi| {
                let (a, b, c) = (a, b, c); // whole (Sync) matrices, not their raw-pointer fields
                // SAFETY: forwarded contract (m, k >= 1): rows lo..hi of a hold k contiguous
                // elements, b's k are contiguous, and the pieces write disjoint elements of c.
                unsafe { (kernel.dots)(lo..hi, k, alpha, a, b.ptr, beta, c) }
            });
            return Ok(());
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
            return Ok(());
        }
    }
    let small = isa() == Isa::Avx512 && m.saturating_mul(n).saturating_mul(k) < AVX512_FAER_WORK;
    // SAFETY: forwarded contract.
    if small || !unsafe { try_packed(p) } {
        // SAFETY: forwarded contract.
        unsafe { crate_gemm(p) }
    }
    Ok(())
}

/// The product on the packed kernel of `E` (operands of `S` converted as they are packed),
/// threaded from `PAR_WORK` multiply-adds: false, touching nothing, where the CPU has no such
/// kernel, a dimension is below `MIN_PACKED`, or the pack buffers cannot be allocated.
///
/// # Safety
/// As [`Gemm::kernel`].
pub(super) unsafe fn try_packed<E: Packed, S: Source<E>>(p: Product<E, S>) -> bool {
    let Product { m, n, k, .. } = p;
    let Some(kernel) = E::kernel().filter(|_| m.min(n).min(k) >= MIN_PACKED) else { return false };
    let threads = if m.saturating_mul(n).saturating_mul(k) >= PAR_WORK && !parallel::nested() {
        parallel::pool().map_or(1, |p| p.current_num_threads())
    } else {
        1
    };
    // SAFETY: forwarded contract; the kernel runs on this CPU (`Packed::kernel`).
    unsafe { packed::gemm(kernel, p, threads) }
}
