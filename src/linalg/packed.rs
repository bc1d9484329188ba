//! The packed GEMM of Float and Double on AVX2 + FMA or AVX-512F: `c = beta*c + alpha*(a @ b)`
//! on one thread, for any strides of `a` and `b` (`gemm` splits larger products into pieces run
//! by this kernel on the library's pool).
//!
//! The classic blocking (Goto; BLIS's loop order): for each block of `nc` columns and `kc`
//! depth, `b` is packed into panels of `nr` columns (k-major: a panel's row `p` is `nr`
//! consecutive elements); for each block of `mc` rows, `a` is packed into panels of `mr` rows
//! (k-major, `mr` consecutive elements per `p`). A register tile of `mr x nr` then sums a whole
//! panel pair: per `p`, two vector loads of `b`, `mr` broadcasts of `a`, `2 mr` FMAs.
//! - AVX2 (16 registers): `MR` = 6 rows x 2 vectors (6 x 16 f32, 6 x 8 f64), 12 accumulators.
//! - AVX-512 (32 registers): `MAX_MR` = 12 rows x 2 vectors (12 x 32 f32, 12 x 16 f64), 24
//!   accumulators (paired on a 2-core Ice Lake, 1024-2048 squares: 1.0-1.19x the 6-row tile).
//!
//! A `b` panel (`kc x nr`: 16 KB on AVX2, 64 KB on AVX-512) stays in L1 (on AVX-512, mostly)
//! while every `a` panel of the block (`mc x kc`, `A_BYTES` or `A_BYTES_512`) streams from L2
//! (f64 on AVX-512, a line or more per step, prefetched `A_AHEAD` steps ahead). The pack buffers
//! start on a cache line.
//!
//! Packing reads each operand in its own layout (where a panel's elements are contiguous across
//! `p`, as in a transposed `b` or a row-major `a`, 8x8 or 4x4 blocks are transposed in
//! registers, fetching each column `PACK_AHEAD` bytes ahead; where a column of `a` is
//! contiguous, as in a transposed `a`, a block's panels take each column's run of rows at once,
//! fetched `COLS_AHEAD` columns ahead), so `a^T`, `b^T` and both run as fast as plain operands.
//! Panels past the matrix edge are zero-padded; edge tiles go through a small buffer.
//!
//! Every element of `c` sums its products in one fixed order (k blocks in order, `p` in order
//! within one), whatever the tiling or the thread count.

#![allow(clippy::too_many_arguments)] // m, n, k, alpha, a, b, beta, c

use super::gemm::{MatMut, MatRef};
use crate::exec::parallel::{self, SharedPtr};
use crate::kernels::simd::{Lane, MAX_LANES, Vector, prefetch};
use crate::kernels::transpose::{block_lanes, transpose_block};
use crate::kernels::{Isa, isa};
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Rows of a register tile.
pub(crate) const MR: usize = 6;
/// The tallest register tile (AVX-512's).
const MAX_MR: usize = 12;
/// Vectors of columns in a register tile: 6 x 2 accumulators, 2 `b` vectors and a broadcast
/// fill 15 of AVX2's 16 registers.
const NV: usize = 2;
/// The widest tile (`NV` vectors of the widest lane count).
const MAX_NR: usize = NV * MAX_LANES;
/// Depth of a packed block on AVX2 (a `b` panel is `KC x nr`: 16 KB for f32 and f64).
const KC: usize = 256;
/// Depth of a packed block on AVX-512 (a `b` panel of 64 KB). Half as many passes over `c` as
/// `KC`: paired on the 2-vCPU Zen 5 kind, f32 and f64 512-2048 squares and transposes, one and
/// two threads, at or ahead of `KC` in 22 of 24 cases (by 1-13 % on two threads); the AVX2
/// kernels measured the same either way.
const KC_512: usize = 512;
/// The deepest block.
const MAX_KC: usize = KC_512;
/// Bytes of a packed `a` block (`mc x kc`), kept in L2 (AVX2: 144 rows of f32, 72 of f64), for
/// `KC` deep blocks; AVX2 machines may have 256 KB of L2.
const A_BYTES: usize = 144 << 10;
/// The same for `KC_512` deep blocks (AVX-512: 144 rows of f32, 72 of f64), where L2 has 1 MB or
/// more. Each task of rows reads the whole packed `b` block (from L3) once per block of `a`: 288
/// KB rather than 144 halves that traffic (paired rounds on the 2-vCPU Zen 5 kind: f32 2048^3
/// 491-499 -> 501-507 GFLOP/s, A^T B^T 491-497 -> 500-502, f64 2048^3 236-237 -> 239-242;
/// 512-1024 within noise).
const A_BYTES_512: usize = 288 << 10;
/// Bytes of a packed `b` block (`kc x nc`): AVX2 2048 columns of f32, 1024 of f64; AVX-512
/// half that.
const B_BYTES: usize = 2 << 20;

/// The compute loop of one element type: `tiles` instantiated for the CPU's vectors, and their
/// lane count.
#[derive(Clone, Copy)]
pub(crate) struct Kernel<E> {
    pub lanes: usize,
    /// Rows of its register tile (`MR`, or `MAX_MR` on AVX-512's 32 registers).
    pub mr: usize,
    /// Depth of its packed blocks (`KC`, or `KC_512`).
    pub kc: usize,
    pub tiles: TilesFn<E>,
    /// The matrix-vector loop (`dots`) for the same vectors.
    pub dots: DotsFn<E>,
    /// The matrix-vector loop over contiguous columns (`columns`).
    pub cols: ColsFn<E>,
}

/// `y = beta*y + alpha*(a @ x)` over some rows, `a` stored by columns (see `columns`).
pub(crate) type ColsFn<E> = unsafe fn(Range<usize>, usize, E, MatRef<E>, MatRef<E>, E, MatMut<E>);

/// `y = beta*y + alpha*(a @ x)` over some rows (see `dots`).
pub(crate) type DotsFn<E> = unsafe fn(Range<usize>, usize, E, MatRef<E>, *const E, E, MatMut<E>);

/// Sums one packed block of `a` into a block's tiles (see `tiles`).
pub(crate) type TilesFn<E> = unsafe fn(&Block<E>, usize, usize, Range<usize>, *const E);

/// The blocking of a product on `kernel`: (`mr`, `nr`, `mc`, `nc`, `kc`), limited to the
/// product's size.
fn blocking<E>(kernel: &Kernel<E>, m: usize, n: usize, k: usize) -> (usize, usize, usize, usize, usize) {
    let (mr, nr) = (kernel.mr, NV * kernel.lanes);
    let kc = kernel.kc.min(k);
    // (shallow products block as deep ones of `KC`, as measured before `KC_512`)
    let depth = kc.max(KC);
    let a_bytes = if kernel.kc >= KC_512 { A_BYTES_512 } else { A_BYTES };
    let mc = (a_bytes / (depth * size_of::<E>()) / mr * mr).min(m.next_multiple_of(mr));
    let nc = (B_BYTES / (depth * size_of::<E>()) / nr * nr).min(n.next_multiple_of(nr));
    (mr, nr, mc, nc, kc)
}

/// Tasks per thread each block of a threaded product is cut into at least (claimed in turn, so
/// that a thread that gets less of its core takes fewer).
const TASKS_PER_THREAD: usize = 4;
/// Pieces per thread the packing of a `b` block is cut into.
const PACKS_PER_THREAD: usize = 2;

/// One `kb`-deep block of a product, shared by its tasks: the packed block of `b` (columns
/// `jc..jc + nb`, panels of `nr`) and where its sums go.
pub(crate) struct Block<E> {
    /// `c` from column `jc`.
    c: MatMut<E>,
    bpack: SharedPtr<E>,
    kb: usize,
    nb: usize,
    nr: usize,
    alpha: E,
    /// `Some(beta)` for the first block of `k` (`c = beta*c + ...`), `None` after (`c += ...`).
    scale: Option<E>,
}

/// `c = beta*c + alpha*(a @ b)` for an `m x n x k` product (`m, n, k >= 1`) with `kernel`, on
/// the calling thread and, with `threads > 1`, the library's pool. The operands' elements `S`
/// are converted to the kernel's `E` as they are packed (Half/BFloat16 to f32). Returns false, touching
/// nothing, when the packed `b` block cannot be allocated. `beta == 0` does not read `c`.
///
/// The product is a list of blocks (`nc` columns by `kc` deep, k blocks innermost), each one
/// list of items: `packs` pieces packing its `b` block, then `tasks` tasks computing its sums
/// (`tasks` is a multiple of `threads`: blocks of rows of `c`, or of column panels when `c` is
/// wider than tall; the same split for every block). The threads claim the items in order
/// (`parallel::for_each_ordered`) and wait only where an item needs another's result:
/// - task `t` of block `s` needs block `s`'s packs and task `t` of block `s - 1` (its rows of
///   `c`, summed in order);
/// - the packs of block `s` overwrite the `b` buffer of block `s - 2` (two buffers, when they can
///   be had), so they need every task of that block.
///
/// So a thread that ends its share of a block early packs the next one, and starts on its tasks
/// while the other threads finish theirs: no thread waits at a block's end. Every element of `c`
/// sums in the same order whatever the thread count.
///
/// # Safety
/// `kernel` runs on this CPU; `a` is readable for `m x k` elements, `b` for `k x n`, `c`
/// read/writable for `m x n` distinct elements not overlapping `a` or `b`.
pub(crate) unsafe fn gemm<E: Packed, S: Source<E>>(
    kernel: Kernel<E>,
    m: usize,
    n: usize,
    k: usize,
    alpha: E,
    a: MatRef<S>,
    b: MatRef<S>,
    beta: E,
    c: MatMut<E>,
    threads: usize,
) -> bool {
    // the kernel stores rows of c as vectors: a column-major c is computed as c^T = b^T a^T
    let t = |x: MatRef<S>| MatRef { ptr: x.ptr, rs: x.cs, cs: x.rs };
    let (m, n, a, b, c) = if c.cs != 1 && c.rs == 1 {
        (n, m, t(b), t(a), MatMut { ptr: c.ptr, rs: c.cs, cs: c.rs })
    } else {
        (m, n, a, b, c)
    };
    let (mr, nr, mc, nc, kc) = blocking(&kernel, m, n, k);
    let threads = threads.max(1);
    let (rpanels, bpanels) = (m.div_ceil(mr), nc.div_ceil(nr));
    // tasks of rows: at most mc rows each (one packed block of a), at least TASKS_PER_THREAD
    // per thread when threaded; wide products (m < n) split the panels of b instead
    let by_rows = threads == 1 || m >= n;
    let units = if by_rows { rpanels } else { bpanels };
    let fewest = if threads == 1 { 1 } else { threads * TASKS_PER_THREAD };
    let tasks = if by_rows { rpanels.div_ceil(mc / mr) } else { 1 }.max(fewest).next_multiple_of(threads).min(units);
    let packs = if threads == 1 { 1 } else { threads * PACKS_PER_THREAD };
    let kblocks = k.div_ceil(kc);
    let blocks = n.div_ceil(nc) * kblocks;
    // two b buffers when threaded (packing the next block while this one's tasks end)
    let with_b = |bufs: usize, f: &dyn Fn(*mut E)| {
        E::with_buffer(Slot::B, bufs * nc * kc, |v| v.map(|v| f(v.as_mut_ptr())).is_some())
    };
    let run = |bufs: usize, bpack: *mut E| {
        let bpack = SharedPtr(bpack);
        // per task: the blocks it has summed; per buffer: the pack pieces done in it
        let progress: Vec<AtomicUsize> = (0..tasks).map(|_| AtomicUsize::new(0)).collect();
        let packed = [AtomicUsize::new(0), AtomicUsize::new(0)];
        let per_block = packs + tasks;
        parallel::for_each_ordered(blocks * per_block, threads > 1, |item| {
            let (a, b, c) = (a, b, c); // the whole (Sync) views, not their raw-pointer fields
            let (s, q) = (item / per_block, item % per_block);
            let (jc, pc) = (s / kblocks * nc, s % kblocks * kc);
            let (nb, kb) = (nc.min(n - jc), kc.min(k - pc));
            let buf = bpack.offset(((s % bufs) * nc * kc) as isize);
            let blk_panels = nb.div_ceil(nr);
            if q < packs {
                if s >= bufs {
                    // the blocks that last used this buffer are summed
                    parallel::wait_until(|| progress.iter().all(|p| p.load(Ordering::Acquire) > s - bufs));
                }
                let _done = Done(&packed[s % bufs]);
                let (lo, hi) = (blk_panels * q / packs, blk_panels * (q + 1) / packs);
                // SAFETY: panels lo..hi of the block (inside b: jc + nb <= n, pc + kb <= k) go
                // to their own kb * nr elements at panel * kb * nr, inside the buffer's nc * kc
                // elements; no task reads this buffer until every piece is done.
                unsafe { pack_b(b, pc, jc, kb, nb, nr, lo..hi, buf) };
                return;
            }
            let t = q - packs;
            // this block's b is packed, and this task's sums of the block before are done
            let want = (s / bufs + 1) * packs;
            parallel::wait_until(|| {
                packed[s % bufs].load(Ordering::Acquire) >= want && progress[t].load(Ordering::Acquire) >= s
            });
            let _done = Done(&progress[t]);
            let (rows, cols) = if by_rows {
                ((units * t / tasks * mr)..m.min(units * (t + 1) / tasks * mr), 0..blk_panels)
            } else {
                (0..m, blk_panels * t / tasks..blk_panels * (t + 1) / tasks)
            };
            if rows.is_empty() || cols.is_empty() {
                return;
            }
            let blk = Block {
                c: MatMut { ptr: c.ptr.wrapping_offset(jc as isize * c.cs), ..c },
                bpack: SharedPtr(buf),
                kb,
                nb,
                nr,
                alpha,
                scale: if pc == 0 { Some(beta) } else { None },
            };
            // SAFETY: the kernel runs on this CPU (contract); the task's rows (ic..ic + mb, at
            // most `rows_per`, a multiple of mr) and panels are inside the block and a, its b
            // block is packed (waited for above), `apack` holds `rows_per * kb` elements of
            // this thread's, and no other task writes these tiles of c meanwhile (tasks of one
            // block are disjoint; the task of the block before on the same tiles is done).
            let go = |apack: *mut E, rows_per: usize| unsafe {
                for ic in rows.clone().step_by(rows_per) {
                    let mb = rows_per.min(rows.end - ic);
                    pack_a(a, ic, pc, mb, kb, mr, apack);
                    (kernel.tiles)(&blk, ic, mb, cols.clone(), apack);
                }
            };
            E::with_buffer(Slot::A, mc * kb, |apack| match apack {
                Some(v) => go(v.as_mut_ptr(), mc),
                // without memory for a packed block of a: one panel at a time, on the stack
                None => go([E::zero(); MAX_MR * MAX_KC].as_mut_ptr(), mr),
            })
        });
    };
    (threads > 1 && with_b(2, &|p| run(2, p))) || with_b(1, &|p| run(1, p))
}

/// Counts one finished item on drop (also when it unwinds, so that no wait on it hangs).
struct Done<'a>(&'a AtomicUsize);

impl Drop for Done<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Release);
    }
}

/// The tiles of rows `ic..ic + mb` of a block's `c` by its panels of columns `cols` (`nr`
/// columns each): those rows of `a`, packed at `apack`, summed with the packed `b` block.
///
/// # Safety
/// The CPU has `V`'s instruction set; `blk` describes a block `gemm` built (its packed `b`
/// written), the rows and panels are inside it, `apack` holds the rows packed by `pack_a`
/// (`mb.next_multiple_of(MR) * kb` elements), and no other thread touches these tiles of `c`
/// meanwhile.
#[inline(always)]
unsafe fn tiles<V: Vector, const MR: usize>(
    blk: &Block<V::E>,
    ic: usize,
    mb: usize,
    cols: Range<usize>,
    apack: *const V::E,
) {
    let (kb, nr) = (blk.kb, blk.nr);
    let c = blk.c;
    // SAFETY: the CPU has V's instruction set (contract). A tile's panels start at jp * kb * nr
    // and ip * kb * MR inside the packed blocks, and its rows x cols corner of c at
    // (ic + ip*MR, jp*nr) is inside c.
    unsafe {
        let alpha = V::splat(&blk.alpha);
        for jp in cols.clone() {
            let bp = blk.bpack.0.add(jp * kb * nr);
            let ncols = nr.min(blk.nb - jp * nr);
            for ip in 0..mb.div_ceil(MR) {
                let (i, j) = (ic + ip * MR, jp * nr);
                let ct = MatMut { ptr: c.ptr.wrapping_offset(i as isize * c.rs + j as isize * c.cs), ..c };
                let trows = MR.min(mb - ip * MR);
                // the tile's rows of c are wanted once its sums are done: fetched meanwhile
                // (f64 1024^3 on one thread, paired with faer: 1.02-1.03x without, 1.15-1.26x
                // with)
                for r in 0..trows as isize {
                    prefetch(ct.ptr.wrapping_offset(r * c.rs));
                    prefetch(ct.ptr.wrapping_offset(r * c.rs + (ncols - 1) as isize * c.cs));
                }
                let acc = micro::<V, MR>(kb, apack.add(ip * kb * MR), bp);
                store::<V, MR>(&acc, ct, trows, ncols, alpha, blk.scale);
            }
        }
    }
}

/// Rows of `a` a matrix-vector step reads at once (each `x` vector loaded serves all of them).
const DOT_ROWS: usize = 4;

/// `y[i] = beta*y[i] + alpha*(a[i, ..] . x)` for `i` in `rows`: rows of `a` contiguous along `k`
/// (`a.cs == 1`) and `x` contiguous, `DOT_ROWS` rows at a time, each summed in two vector
/// accumulators (lanes added in order at the end). `beta == 0` does not read `y` (`y` is a
/// column: element `i` at `y.ptr + i*y.rs`).
///
/// # Safety
/// The CPU has `V`'s instruction set; the rows of `a` are readable for `k` elements each, `x`
/// for `k`, `y`'s elements in `rows` writable and touched by no other thread meanwhile.
#[inline(always)]
unsafe fn dots<V: Vector>(
    rows: Range<usize>,
    k: usize,
    alpha: V::E,
    a: MatRef<V::E>,
    x: *const V::E,
    beta: V::E,
    y: MatMut<V::E>,
) {
    let l = V::LANES;
    // SAFETY: every load reads p..p + LANES (or the n < LANES left) below k of a row of a or of
    // x; a short last group repeats its last row (read, not written); y's elements i in rows.
    unsafe {
        for i in rows.clone().step_by(DOT_ROWS) {
            let r = DOT_ROWS.min(rows.end - i);
            let row: [*const V::E; DOT_ROWS] =
                std::array::from_fn(|q| a.ptr.offset((i + q.min(r - 1)) as isize * a.rs));
            let mut acc = [[V::zero(); 2]; DOT_ROWS];
            let mut p = 0;
            while p + 2 * l <= k {
                let xv = [V::load(x.add(p)), V::load(x.add(p + l))];
                for (acc, row) in acc.iter_mut().zip(&row) {
                    for (h, (s, &xh)) in acc.iter_mut().zip(&xv).enumerate() {
                        *s = s.mul_add(V::load(row.add(p + h * l)), xh);
                    }
                }
                p += 2 * l;
            }
            while p < k {
                let n = l.min(k - p);
                let load = |q: *const V::E| if n == l { V::load(q) } else { V::load_part(q, n) };
                let xv = load(x.add(p));
                for (acc, row) in acc.iter_mut().zip(&row) {
                    acc[0] = acc[0].mul_add(load(row.add(p)), xv);
                }
                p += n;
            }
            for (q, acc) in acc.iter().enumerate().take(r) {
                set_y(y.ptr.offset((i + q) as isize * y.rs), alpha, acc[0].sum().add(acc[1].sum()), beta);
            }
        }
    }
}

/// `*y = alpha*sum + beta*(*y)` (`beta == 0`: `alpha*sum`, `*y` not read), as the
/// matrix-vector loops write each element.
///
/// # Safety
/// `y` is read/writable.
#[inline(always)]
unsafe fn set_y<E: Lane>(y: *mut E, alpha: E, sum: E, beta: E) {
    let s = alpha.mul(sum);
    // SAFETY: per the contract.
    unsafe { *y = if beta == E::zero() { s } else { s.add(beta.mul(*y)) } };
}

/// Bytes of the sums of `y` that `columns` keeps at once (on the stack: 4096 rows of f32, 2048
/// of f64). Each pass then reads 16 KB runs of its columns: on the 2-vCPU Zen 5 kind, paired,
/// f32 4096^2 with the matrix stored by columns ran at 50 GFLOP/s against 39 with 4 KB runs
/// (together with one piece of rows per thread, `col_unit`), f64 1024^2 at 41 against 35.
const COL_BYTES: usize = 16 << 10;
/// Columns of `a` a pass of `columns` adds at once.
const COL_STEP: usize = 4;
/// Rows of `y` a threaded `columns` hands out at once: a multiple of every lane count, so that
/// only the matrix's last rows are part vectors, however the rows are split.
const COL_UNIT: usize = 128;

/// The rows of `y` each piece of a threaded `columns` over `m` rows takes: one piece per
/// thread (a multiple of `COL_UNIT`). Smaller pieces read shorter runs of each column and
/// start the hardware's fetching ahead more often (f32 4096^2: 39 GFLOP/s with pieces of 512
/// rows, 50 with one piece per thread; numpy 51).
pub(crate) fn col_unit(m: usize, threads: usize) -> usize {
    m.div_ceil(threads.max(1)).next_multiple_of(COL_UNIT)
}

/// `y[i] = beta*y[i] + alpha*(a[i, ..] . x)` for `i` in `rows`, with `a`'s columns contiguous
/// (`a.rs == 1`, column `p` at `a.ptr + p*a.cs`) and `x` any column (`x.rs` apart). Blocks of
/// up to `COL_BYTES` of rows sum on the stack: passes of `COL_STEP` columns, each reading those
/// columns' segments in order (so the matrix streams in long contiguous runs), then the block
/// is written `y = alpha*sum + beta*y` (`beta == 0` does not read `y`). Every `y[i]` sums its
/// products in column order, whatever the split of the rows.
///
/// # Safety
/// The CPU has `V`'s instruction set; `a`'s rows in `rows` are readable for `k` columns, `x` for
/// `k` elements, `y`'s elements in `rows` writable and touched by no other thread meanwhile.
#[inline(always)]
unsafe fn columns<V: Vector>(
    rows: Range<usize>,
    k: usize,
    alpha: V::E,
    a: MatRef<V::E>,
    x: MatRef<V::E>,
    beta: V::E,
    y: MatMut<V::E>,
) {
    // (u64 words: aligned for f32 and f64, and a length that does not depend on the type)
    let mut words = [0u64; COL_BYTES / 8 + MAX_LANES];
    let sums = words.as_mut_ptr() as *mut V::E;
    let block = COL_BYTES / size_of::<V::E>();
    // SAFETY: every read of a is of rows i0..i0 + r of a column p < k (part vectors read the
    // rows left only), of x its element p < k; sums holds block + LANES elements (words has
    // COL_BYTES + 8 * MAX_LANES bytes, all-zero bits are 0.0); y's elements are those in rows.
    unsafe {
        for i0 in rows.clone().step_by(block) {
            let r = block.min(rows.end - i0);
            std::ptr::write_bytes(sums, 0, r);
            let mut p = 0;
            while p + COL_STEP <= k {
                col_pass::<V, COL_STEP>(a, x, i0, r, p, sums);
                p += COL_STEP;
            }
            while p < k {
                col_pass::<V, 1>(a, x, i0, r, p, sums);
                p += 1;
            }
            for q in 0..r {
                set_y(y.ptr.offset((i0 + q) as isize * y.rs), alpha, *sums.add(q), beta);
            }
        }
    }
}

/// `sums[i] += a[i0 + i, p + c] * x[p + c]` for `i < r`, `c < C` in order (one multiply-add
/// each, fused where the CPU fuses).
///
/// # Safety
/// As `columns`, for columns `p..p + C`; `sums` holds `r + LANES` elements.
#[inline(always)]
unsafe fn col_pass<V: Vector, const C: usize>(
    a: MatRef<V::E>,
    x: MatRef<V::E>,
    i0: usize,
    r: usize,
    p: usize,
    sums: *mut V::E,
) {
    let l = V::LANES;
    // SAFETY: per the contract; the part vector reads the r % l rows left of each column and
    // stores a whole vector into sums' padding.
    unsafe {
        let col: [*const V::E; C] = std::array::from_fn(|c| a.ptr.offset(i0 as isize + (p + c) as isize * a.cs));
        let xs: [V; C] = std::array::from_fn(|c| V::splat(x.ptr.offset((p + c) as isize * x.rs)));
        let mut i = 0;
        while i + l <= r {
            let mut s = V::load(sums.add(i));
            for (c, xc) in col.iter().zip(&xs) {
                s = s.mul_add(V::load(c.add(i)), *xc);
            }
            s.store(sums.add(i));
            i += l;
        }
        if i < r {
            let mut s = V::load_part(sums.add(i), r - i);
            for (c, xc) in col.iter().zip(&xs) {
                s = s.mul_add(V::load_part(c.add(i), r - i), *xc);
            }
            s.store(sums.add(i));
        }
    }
}

/// Bytes of a cache line.
const LINE: usize = 64;
/// Bytes ahead along each column at which `columns` fetches while it transposes: 12-32 columns
/// read at once are more streams than the hardware fetches ahead for (paired, one thread on the
/// Zen 5 kind, tall-skinny 16384x256 @ 256x64 with row-major `a`: f32 129 -> 168 GFLOP/s, f64
/// 71 -> 86; two threads f32 265 -> 335, and with `b` transposed 250 -> 330; 1024-2048
/// squares unchanged).
const PACK_AHEAD: usize = 256;
/// Steps of `micro` ahead of which it fetches the packed `a` panel, where it reads a line or
/// more per step.
const A_AHEAD: usize = 8;

/// The `MR x NV` vectors of sums `a[p*MR + i] * b[p*nr + j]` over `p < kb`.
///
/// # Safety
/// The CPU has `V`'s instruction set; `a` holds `kb * MR` elements and `b` `kb * NV*LANES`.
#[inline(always)]
unsafe fn micro<V: Vector, const MR: usize>(kb: usize, a: *const V::E, b: *const V::E) -> [[V; NV]; MR] {
    let nr = NV * V::LANES;
    // SAFETY: per the contract, every p < kb reads a[p*MR..p*MR + MR] and b[p*nr..p*nr + nr].
    unsafe {
        let mut acc = [[V::zero(); NV]; MR];
        for p in 0..kb {
            let bp = b.add(p * nr);
            let bv: [V; NV] = std::array::from_fn(|v| V::load(bp.add(v * V::LANES)));
            let ap = a.add(p * MR);
            if MR * size_of::<V::E>() >= LINE {
                // a step reads a cache line or more of the packed a panel (f64 on AVX-512:
                // 96 B), more than the hardware fetches ahead from L2: its lines A_AHEAD steps on
                // are fetched now (f64 1024^3, one thread on an Ice Lake: 50 -> 56 GFLOP/s)
                for q in (0..MR).step_by(LINE / size_of::<V::E>()) {
                    prefetch(ap.wrapping_add(A_AHEAD * MR + q));
                }
            }
            for (i, row) in acc.iter_mut().enumerate() {
                let av = V::splat(ap.add(i));
                for (x, &y) in row.iter_mut().zip(&bv) {
                    *x = x.mul_add(av, y);
                }
            }
        }
        acc
    }
}

/// Writes the `rows x cols` corner of a tile to `c`: `c = alpha*acc + beta*c` (`scale ==
/// Some(beta)`, `beta == 0` without reading `c`) or `c += alpha*acc` (`None`). Whole tiles of a
/// row-major `c` update in place; others go through a buffer.
///
/// # Safety
/// The CPU has `V`'s instruction set; `c` is read/writable for `rows x cols` elements (`rows <=
/// MR`, `cols <= NV*LANES`).
#[inline(always)]
unsafe fn store<V: Vector, const MR: usize>(
    acc: &[[V; NV]; MR],
    c: MatMut<V::E>,
    rows: usize,
    cols: usize,
    alpha: V,
    scale: Option<V::E>,
) {
    let read = scale.is_none_or(|s| s != V::E::zero());
    // SAFETY: `p..p + LANES` is readable and writable at every call below.
    let update = |p: *mut V::E, x: V| unsafe {
        let old = match scale {
            None => V::load(p),
            Some(_) if !read => V::zero(),
            Some(s) => V::zero().mul_add(V::load(p), V::splat(&s)),
        };
        old.mul_add(x, alpha).store(p);
    };
    // SAFETY: rows x cols elements of c are in bounds (contract); the buffer rows hold MAX_NR
    // >= NV*LANES elements.
    unsafe {
        if rows == MR && cols == NV * V::LANES && c.cs == 1 {
            for (i, row) in acc.iter().enumerate() {
                let p = c.ptr.offset(i as isize * c.rs);
                for (v, &x) in row.iter().enumerate() {
                    update(p.add(v * V::LANES), x);
                }
            }
            return;
        }
        let mut buf = [V::E::zero(); MAX_NR];
        for (i, row) in acc.iter().enumerate().take(rows) {
            let at = |j: usize| c.ptr.offset(i as isize * c.rs + j as isize * c.cs);
            if read {
                for (j, x) in buf.iter_mut().enumerate().take(cols) {
                    *x = *at(j);
                }
            }
            for (v, &x) in row.iter().enumerate() {
                update(buf.as_mut_ptr().add(v * V::LANES), x);
            }
            for (j, &x) in buf.iter().enumerate().take(cols) {
                *at(j) = x;
            }
        }
    }
}

/// Packs panels `panels` of `b[pc.., jc..]` (`kb x nb`), each `nr` columns, k-major, the last
/// zero-padded to a whole panel: panel `jp` at `out + jp * kb * nr`.
///
/// # Safety
/// The block is inside `b`; the panels' `kb * nr` elements each are writable at `out`.
unsafe fn pack_b<E: Lane, S: Source<E>>(
    b: MatRef<S>,
    pc: usize,
    jc: usize,
    kb: usize,
    nb: usize,
    nr: usize,
    panels: Range<usize>,
    out: *mut E,
) {
    // SAFETY: reads (pc + p, j0 + j) with p < kb, j < cols: inside the block; writes panel jp's
    // kb * nr elements at jp * kb * nr.
    unsafe {
        for jp in panels {
            let dst = out.add(jp * kb * nr);
            let j0 = jc + jp * nr;
            let cols = nr.min(nb - jp * nr);
            let at = |p: usize, j: usize| b.ptr.offset((pc + p) as isize * b.rs + (j0 + j) as isize * b.cs);
            if b.cs == 1 {
                for p in 0..kb {
                    S::run(at(p, 0), dst.add(p * nr), 1, cols);
                }
            } else if b.rs == 1 {
                // b's columns are contiguous along k
                S::columns(at(0, 0), b.cs, kb, cols, nr, dst);
            } else {
                for p in 0..kb {
                    for j in 0..cols {
                        *dst.add(p * nr + j) = (*at(p, j)).get();
                    }
                }
            }
            for p in 0..kb {
                for j in cols..nr {
                    *dst.add(p * nr + j) = E::zero();
                }
            }
        }
    }
}

/// Packs `a[ic.., pc..]` (`mb x kb`) as panels of `MR` rows, k-major, zero-padded to a whole
/// panel.
///
/// # Safety
/// The block is inside `a`; `out` is writable for `mb.next_multiple_of(MR) * kb` elements.
#[inline(always)]
unsafe fn pack_a<E: Lane, S: Source<E>>(
    a: MatRef<S>,
    ic: usize,
    pc: usize,
    mb: usize,
    kb: usize,
    mr: usize,
    out: *mut E,
) {
    // SAFETY: reads (i0 + i, pc + p) with i < rows, p < kb: inside the block; writes panel ip's
    // kb * mr elements at ip * kb * mr.
    unsafe {
        let mut first = 0;
        if a.rs == 1 && mb >= mr {
            // a's columns are contiguous: the whole panels take each column's run of rows at
            // once (panel by panel, each step of each panel would read a new column: with long
            // columns, a new page)
            first = mb / mr;
            let src = a.ptr.offset(ic as isize + pc as isize * a.cs);
            match mr {
                MAX_MR => spread::<E, S, MAX_MR>(src, a.cs, kb, first, out),
                MR => spread::<E, S, MR>(src, a.cs, kb, first, out),
                // (any other height: panel by panel below)
                _ => first = 0,
            }
        }
        for ip in first..mb.div_ceil(mr) {
            let dst = out.add(ip * kb * mr);
            let i0 = ic + ip * mr;
            let rows = mr.min(mb - ip * mr);
            let at = |i: usize, p: usize| a.ptr.offset((i0 + i) as isize * a.rs + (pc + p) as isize * a.cs);
            if rows == mr && a.cs == 1 {
                // each row is kb contiguous elements: the panel is their transpose
                S::columns(at(0, 0), a.rs, kb, mr, mr, dst);
            } else if rows == mr {
                let src: [*const S; MAX_MR] = std::array::from_fn(|i| at(i.min(mr - 1), 0));
                S::rows(&src[..mr], a.cs, kb, dst);
            } else {
                for p in 0..kb {
                    for i in 0..mr {
                        *dst.add(p * mr + i) = if i < rows { (*at(i, p)).get() } else { E::zero() };
                    }
                }
            }
        }
    }
}

/// Steps ahead at which `spread` fetches a column (a few lines, likely on a page of their own:
/// strides too long for the hardware to fetch ahead).
const COLS_AHEAD: usize = 8;

/// `panels` panels of `N` rows of `a` whose columns are contiguous, one column at a time: panel
/// `ip` gets `dst[ip*kb*N + p*N + i] = src[ip*N + i + p*cs]` for `i < N`, `p < kb`.
///
/// # Safety
/// Those elements are readable at `src` and writable at `dst`.
#[inline(always)]
unsafe fn spread<E: Lane, S: Source<E>, const N: usize>(
    src: *const S,
    cs: isize,
    kb: usize,
    panels: usize,
    dst: *mut E,
) {
    let lines = (panels * N * size_of::<S>()).div_ceil(LINE) + 1;
    // SAFETY: per the contract (a fetch is a hint, of any address).
    unsafe {
        for p in 0..kb {
            let col = src.offset(p as isize * cs);
            if p + COLS_AHEAD < kb {
                let next = col.wrapping_offset(COLS_AHEAD as isize * cs).cast::<u8>();
                for l in 0..lines {
                    prefetch(next.wrapping_add(l * LINE));
                }
            }
            for ip in 0..panels {
                let (from, to) = (col.add(ip * N), dst.add(ip * kb * N + p * N));
                if size_of::<S>() == size_of::<E>() {
                    // fixed-length moves, not a `memcpy` call per step
                    for i in 0..N {
                        *to.add(i) = (*from.add(i)).get();
                    }
                } else {
                    S::run(from, to, 1, N);
                }
            }
        }
    }
}

/// The element types of operands the packed kernel of `E` takes: `E` itself, and Half/BFloat16
/// for f32 (converted as they are packed, the `half` crate's F16C conversion where the CPU has
/// it).
pub(crate) trait Source<E: Lane>: Copy + Send + Sync {
    /// The element as `E` (exact: f16 and bf16 are subsets of f32).
    fn get(self) -> E;
    /// `dst[q * ds] = src[q]` for `q < len`.
    ///
    /// # Safety
    /// `src` is readable for `len` elements, `dst` writable at those `len` places.
    unsafe fn run(src: *const Self, dst: *mut E, ds: usize, len: usize);
    /// Packs `cols` columns of `kb` elements, column `j` contiguous at `src + j*cs`, as rows of
    /// `nr`: `dst[p*nr + j] = src[p + j*cs]`.
    ///
    /// # Safety
    /// Those elements are readable; `dst` is writable for `kb * nr` elements (`cols <= nr`).
    unsafe fn columns(src: *const Self, cs: isize, kb: usize, cols: usize, nr: usize, dst: *mut E);
    /// Packs `mr = src.len()` rows of `kb` elements (row `i` at `src[i]`, elements `cs` apart)
    /// k-major: `dst[p*mr + i] = src[i][p*cs]`.
    ///
    /// # Safety
    /// Those elements are readable; `dst` is writable for `kb * mr` elements.
    unsafe fn rows(src: &[*const Self], cs: isize, kb: usize, dst: *mut E);
}

macro_rules! same_source {
    ($($E:ty),*) => {$(
        impl Source<$E> for $E {
            #[inline(always)]
            fn get(self) -> $E {
                self
            }
            #[inline(always)]
            unsafe fn run(src: *const Self, dst: *mut $E, ds: usize, len: usize) {
                // SAFETY: forwarded contract.
                unsafe {
                    if ds == 1 {
                        std::ptr::copy_nonoverlapping(src, dst, len);
                    } else {
                        for q in 0..len {
                            *dst.add(q * ds) = *src.add(q);
                        }
                    }
                }
            }
            unsafe fn columns(src: *const Self, cs: isize, kb: usize, cols: usize, nr: usize, dst: *mut $E) {
                let l = block_lanes::<$E>();
                // SAFETY: forwarded contract: (p, j) with p < kb, j < cols are read at
                // src + p + j*cs and written at dst + p*nr + j (l x l blocks of them at once).
                unsafe {
                    let mut p0 = 0;
                    if l > 0 && cols >= l {
                        // l x l blocks transposed in registers; when l does not divide cols, the
                        // last block starts at cols - l and writes some columns twice (the same
                        // values)
                        let starts = (0..cols - l).step_by(l).chain([cols - l]);
                        let ahead = PACK_AHEAD / size_of::<$E>();
                        while p0 + l <= kb {
                            if (p0 * size_of::<$E>()).is_multiple_of(LINE) {
                                // each column's line PACK_AHEAD on (a hint: past the column's
                                // end it fetches what is there, or nothing)
                                for j in 0..cols {
                                    prefetch(src.wrapping_offset((p0 + ahead) as isize + j as isize * cs));
                                }
                            }
                            for j in starts.clone() {
                                transpose_block(src.offset(p0 as isize + j as isize * cs), cs, dst.add(p0 * nr + j), nr as isize);
                            }
                            p0 += l;
                        }
                    }
                    for j in 0..cols {
                        for p in p0..kb {
                            *dst.add(p * nr + j) = *src.offset(p as isize + j as isize * cs);
                        }
                    }
                }
            }
            #[inline(always)]
            unsafe fn rows(src: &[*const Self], cs: isize, kb: usize, dst: *mut $E) {
                let mr = src.len();
                // SAFETY: forwarded contract.
                unsafe {
                    for p in 0..kb {
                        for (i, s) in src.iter().enumerate() {
                            *dst.add(p * mr + i) = *s.offset(p as isize * cs);
                        }
                    }
                }
            }
        }
    )*};
}
same_source!(f32, f64);

macro_rules! half_source {
    ($($S:ty),*) => {$(
        impl Source<f32> for $S {
            #[inline(always)]
            fn get(self) -> f32 {
                self.to_f32()
            }
            unsafe fn run(src: *const Self, dst: *mut f32, ds: usize, len: usize) {
                use half::slice::HalfFloatSliceExt;
                // SAFETY: forwarded contract.
                unsafe {
                    let src = std::slice::from_raw_parts(src, len);
                    if ds == 1 {
                        src.convert_to_f32_slice(std::slice::from_raw_parts_mut(dst, len));
                        return;
                    }
                    // converted in runs through a buffer, then spread
                    const RUN: usize = 64;
                    let mut buf = [0f32; RUN];
                    for (q, run) in src.chunks(RUN).enumerate() {
                        run.convert_to_f32_slice(&mut buf[..run.len()]);
                        for (r, &v) in buf[..run.len()].iter().enumerate() {
                            *dst.add((q * RUN + r) * ds) = v;
                        }
                    }
                }
            }
            unsafe fn columns(src: *const Self, cs: isize, kb: usize, cols: usize, nr: usize, dst: *mut f32) {
                // runs of CHUNK elements of each column converted (contiguous, F16C where the
                // CPU has it) to an f32 buffer of columns, which f32's `columns` transposes in
                // registers (BFloat16 512^3 with both operands transposed, against numpy's f32
                // round trip: 1.00x with one converted element stored at a time, 1.12-1.30x so)
                const CHUNK: usize = 64;
                let mut buf = [0f32; CHUNK * MAX_NR];
                // SAFETY: forwarded contract: column j is kb contiguous elements at src + j*cs
                // (wider panels than the buffer's are spread one element at a time); the
                // buffer holds cols <= MAX_NR columns of CHUNK elements; rows p0..
                // p0 + len of the panel are at dst + p0*nr.
                unsafe {
                    if cols > MAX_NR {
                        for j in 0..cols {
                            Self::run(src.offset(j as isize * cs), dst.add(j), nr, kb);
                        }
                        return;
                    }
                    for p0 in (0..kb).step_by(CHUNK) {
                        let len = CHUNK.min(kb - p0);
                        for j in 0..cols {
                            Self::run(src.offset(j as isize * cs + p0 as isize), buf.as_mut_ptr().add(j * CHUNK), 1, len);
                        }
                        <f32 as Source<f32>>::columns(buf.as_ptr(), CHUNK as isize, len, cols, nr, dst.add(p0 * nr));
                    }
                }
            }
            unsafe fn rows(src: &[*const Self], cs: isize, kb: usize, dst: *mut f32) {
                let mr = src.len();
                // SAFETY: forwarded contract.
                unsafe {
                    for p in 0..kb {
                        for (i, s) in src.iter().enumerate() {
                            *dst.add(p * mr + i) = (*s.offset(p as isize * cs)).to_f32();
                        }
                    }
                }
            }
        }
    )*};
}
half_source!(half::f16, half::bf16);

/// A thread's pack buffers: the packed block of `b` (the thread that runs a product) and of `a`
/// (every thread that runs its tasks).
#[derive(Clone, Copy)]
pub(crate) enum Slot {
    B = 0,
    A = 1,
}

/// The element types with a packed kernel, and each thread's pack buffers for them.
pub(crate) trait Packed: Lane + Source<Self> {
    /// The compute loops on the vectors of `isa` (AVX2 + FMA, AVX-512F), where this CPU has it.
    fn kernel_for(isa: Isa) -> Option<Kernel<Self>>;
    /// The compute loops for the instruction set in use (`isa()`), where there are some.
    fn kernel() -> Option<Kernel<Self>> {
        Self::kernel_for(isa())
    }
    /// `f(Some(buffer))` with this thread's pack buffer `slot` grown to `len` elements, or
    /// `f(None)` when it cannot be allocated (or is in use further up this thread's stack). The
    /// buffers stay allocated for the thread's next product: at most two blocks of `B_BYTES`
    /// (a threaded product packs the next block of `b` while the last tasks of one run) and
    /// `A_BYTES_512`.
    fn with_buffer<R>(slot: Slot, len: usize, f: impl FnOnce(Option<&mut [Self]>) -> R) -> R;
}

/// `tiles`, `dots` and `columns` on one instruction set's vectors `$V`, as a `Kernel` (`$isa`:
/// the instruction set, `Avx2` or `Avx512`; `$f`, `$g`, `$h`: the copies' names).
macro_rules! isa_kernel {
    ($V:ty, $mr:expr, $kc:expr, $isa:ident, $f:ident, $g:ident, $h:ident) => {{
        type E = <$V as Vector>::E;
        crate::kernels::multiversion!(@copy $isa,
            /// # Safety
            /// As `tiles`, on a CPU with these features.
            fn $f(blk: &Block<E>, ic: usize, mb: usize, cols: Range<usize>, apack: *const E)
                => tiles::<$V, $mr>(blk, ic, mb, cols, apack));
        crate::kernels::multiversion!(@copy $isa,
            /// # Safety
            /// As `dots`, on a CPU with these features.
            fn $g(rows: Range<usize>, k: usize, alpha: E, a: MatRef<E>, x: *const E, beta: E, y: MatMut<E>)
                => dots::<$V>(rows, k, alpha, a, x, beta, y));
        crate::kernels::multiversion!(@copy $isa,
            /// # Safety
            /// As `columns`, on a CPU with these features.
            fn $h(rows: Range<usize>, k: usize, alpha: E, a: MatRef<E>, x: MatRef<E>, beta: E, y: MatMut<E>)
                => columns::<$V>(rows, k, alpha, a, x, beta, y));
        Kernel { lanes: <$V as Vector>::LANES, mr: $mr, kc: $kc, tiles: $f, dots: $g, cols: $h }
    }};
}

macro_rules! packed {
    ($E:ty, $V2:ident, $V5:ident, $buf:ident) => {
        thread_local! {
            static $buf: [std::cell::RefCell<Vec<$E>>; 2] =
                const { [std::cell::RefCell::new(Vec::new()), std::cell::RefCell::new(Vec::new())] };
        }

        impl Packed for $E {
            fn kernel_for(isa: Isa) -> Option<Kernel<Self>> {
                #[cfg(target_arch = "x86_64")]
                if crate::kernels::cpu_has(isa) {
                    use crate::kernels::simd::{avx2::$V2, avx512::$V5};
                    match isa {
                        Isa::Avx512 => {
                            return Some(isa_kernel!($V5, MAX_MR, KC_512, Avx512, tiles512, dots512, cols512));
                        }
                        Isa::Avx2 => return Some(isa_kernel!($V2, MR, KC, Avx2, tiles2, dots2, cols2)),
                        Isa::Scalar => {}
                    }
                }
                None
            }
            fn with_buffer<R>(slot: Slot, len: usize, f: impl FnOnce(Option<&mut [Self]>) -> R) -> R {
                $buf.with(|cells| {
                    let Ok(mut v) = cells[slot as usize].try_borrow_mut() else { return f(None) };
                    // room to start the buffer on a cache line: whole-vector loads of the
                    // packed panels then never straddle two lines
                    const PAD: usize = LINE / size_of::<$E>();
                    let want = len + PAD;
                    let have = v.len();
                    if have < want {
                        if v.try_reserve_exact(want - have).is_err() {
                            return f(None);
                        }
                        v.resize(want, 0.0);
                    }
                    let skip = v.as_ptr().align_offset(LINE).min(PAD);
                    f(Some(&mut v[skip..skip + len]))
                })
            }
        }
    };
}
packed!(f32, F32x8, F32x16, PACK_F32);
packed!(f64, F64x4, F64x8, PACK_F64);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::simd::Lanes;

    /// `c = beta*c + alpha*(a @ b)` by the definition, in f64.
    fn naive(m: usize, n: usize, k: usize, alpha: f64, a: MatRef<f64>, b: MatRef<f64>, beta: f64, c: &mut [f64]) {
        for i in 0..m {
            for j in 0..n {
                let s = (0..k).fold(0.0, |s, p| {
                    // SAFETY: (i, p) and (p, j) are inside the test's matrices.
                    s + unsafe {
                        *a.ptr.offset(i as isize * a.rs + p as isize * a.cs)
                            * *b.ptr.offset(p as isize * b.rs + j as isize * b.cs)
                    }
                });
                let old = if beta == 0.0 { 0.0 } else { beta * c[i * n + j] };
                c[i * n + j] = old + alpha * s;
            }
        }
    }

    /// A matrix of `rows x cols` small integers (exact sums) in one of four layouts: row-major,
    /// column-major, row-major with padded rows, or with both strides above 1. Returns the
    /// storage and the view.
    fn matrix(rows: usize, cols: usize, layout: usize, seed: usize) -> (Vec<f64>, isize, isize) {
        let (rs, cs, len) = match layout {
            0 => (cols, 1, rows * cols),
            1 => (1, rows, rows * cols),
            2 => (cols + 3, 1, rows * (cols + 3)),
            _ => (2, 2 * rows + 1, (2 * rows + 1) * cols),
        };
        let mut v = vec![f64::NAN; len]; // elements outside the view must not be read
        for i in 0..rows {
            for j in 0..cols {
                v[i * rs + j * cs] = ((i * 7 + j * 3 + seed) % 11) as f64 - 5.0;
            }
        }
        (v, rs as isize, cs as isize)
    }

    /// The compute loop on plain arrays of `N` lanes (any CPU, Miri).
    unsafe fn plain<E: Lane, const N: usize, const R: usize>(
        blk: &Block<E>,
        ic: usize,
        mb: usize,
        cols: Range<usize>,
        apack: *const E,
    ) {
        // SAFETY: forwarded contract; plain arrays need no instruction set.
        unsafe { tiles::<Lanes<E, N>, R>(blk, ic, mb, cols, apack) }
    }

    /// The matrix-vector loop on plain arrays of `N` lanes.
    unsafe fn plain_dots<E: Lane, const N: usize>(
        rows: Range<usize>,
        k: usize,
        alpha: E,
        a: MatRef<E>,
        x: *const E,
        beta: E,
        y: MatMut<E>,
    ) {
        // SAFETY: forwarded contract; plain arrays need no instruction set.
        unsafe { dots::<Lanes<E, N>>(rows, k, alpha, a, x, beta, y) }
    }

    /// The column matrix-vector loop on plain arrays of `N` lanes.
    unsafe fn plain_cols<E: Lane, const N: usize>(
        rows: Range<usize>,
        k: usize,
        alpha: E,
        a: MatRef<E>,
        x: MatRef<E>,
        beta: E,
        y: MatMut<E>,
    ) {
        // SAFETY: forwarded contract; plain arrays need no instruction set.
        unsafe { columns::<Lanes<E, N>>(rows, k, alpha, a, x, beta, y) }
    }

    /// The loops on plain arrays of `N` lanes, tiles of `R` rows.
    fn lanes<E: Lane, const N: usize, const R: usize>() -> Kernel<E> {
        Kernel { lanes: N, mr: R, kc: KC, tiles: plain::<E, N, R>, dots: plain_dots::<E, N>, cols: plain_cols::<E, N> }
    }

    /// How a test builds its elements from (small integer or NaN) f64 values.
    struct Types<E, S> {
        kernel: Kernel<E>,
        elem: fn(f64) -> E,
        source: fn(f64) -> S,
    }

    fn check<E: Packed + Into<f64>, S: Source<E>>(
        ty: &Types<E, S>,
        (m, n, k): (usize, usize, usize),
        layouts: [usize; 3],
        alpha: f64,
        beta: f64,
        threads: usize,
    ) {
        let (av, ars, acs) = matrix(m, k, layouts[0], 1);
        let (bv, brs, bcs) = matrix(k, n, layouts[1], 2);
        let (mut cv, crs, ccs) = matrix(m, n, layouts[2], 3);
        let (a, b) = (MatRef { ptr: av.as_ptr(), rs: ars, cs: acs }, MatRef { ptr: bv.as_ptr(), rs: brs, cs: bcs });
        let at = |i: usize, j: usize| i * crs as usize + j * ccs as usize;
        let mut want: Vec<f64> = (0..m * n).map(|q| cv[at(q / n, q % n)]).collect();
        if beta == 0.0 {
            // not read: NaN where c's elements are
            for q in 0..m * n {
                cv[at(q / n, q % n)] = f64::NAN;
            }
        }
        naive(m, n, k, alpha, a, b, beta, &mut want);
        let (sa, sb): (Vec<S>, Vec<S>) =
            (av.iter().map(|&x| (ty.source)(x)).collect(), bv.iter().map(|&x| (ty.source)(x)).collect());
        let mut ce: Vec<E> = cv.iter().map(|&x| (ty.elem)(x)).collect();
        let (a, b) = (MatRef { ptr: sa.as_ptr(), rs: ars, cs: acs }, MatRef { ptr: sb.as_ptr(), rs: brs, cs: bcs });
        let c = MatMut { ptr: ce.as_mut_ptr(), rs: crs, cs: ccs };
        let (alpha, beta) = ((ty.elem)(alpha), (ty.elem)(beta));
        // SAFETY: the views are inside their buffers and c's elements are distinct; the kernel
        // runs on this CPU (plain arrays, or `Packed::kernel`).
        let run = || assert!(unsafe { gemm(ty.kernel, m, n, k, alpha, a, b, beta, c, threads) });
        if threads == 1 && layouts[0] == 2 {
            // this thread's packed-a buffer in use: the tasks pack one panel at a time instead
            E::with_buffer(Slot::A, 1, |_| run());
        } else {
            run();
        }
        for (q, &w) in want.iter().enumerate() {
            let (i, j) = (q / n, q % n);
            let got: f64 = ce[at(i, j)].into();
            assert_eq!(got, w, "{m}x{n}x{k} layouts {layouts:?} threads {threads} ({i}, {j})");
        }
    }

    /// Shapes: single tiles, ragged edges against 6 x 8 tiles, several k blocks, several `a`
    /// blocks (mc = 72 rows of f64) and `b` blocks (nc = 1024 columns of f64). Under Miri three
    /// small ones (13 x 17 x 260 ran past an hour there, with the pool).
    fn shapes() -> Vec<(usize, usize, usize)> {
        if cfg!(miri) {
            vec![(6, 8, 3), (7, 9, 5), (7, 9, 260)]
        } else {
            vec![(1, 1, 1), (6, 8, 3), (7, 9, 5), (13, 17, 260), (80, 30, 513), (5, 1030, 7), (150, 20, 40)]
        }
    }

    fn run_all<E: Packed + Into<f64>, S: Source<E>>(ty: Types<E, S>) {
        for shape in shapes() {
            for (q, layouts) in
                [[0, 0, 0], [1, 1, 0], [1, 0, 1], [2, 3, 2], [3, 2, 3], [0, 1, 0]].into_iter().enumerate()
            {
                for (alpha, beta) in [(1.0, 0.0), (2.0, 1.0), (-1.0, 0.5)] {
                    // one thread, and pieces of rows or columns (run on the pool or in turn)
                    check(&ty, shape, layouts, alpha, beta, 1 + q % 3);
                }
            }
        }
    }

    fn doubles(kernel: Kernel<f64>) -> Types<f64, f64> {
        Types { kernel, elem: |x| x, source: |x| x }
    }

    #[test]
    fn packed_matches_naive() {
        run_all(doubles(lanes::<f64, 4, MR>()));
        if !cfg!(miri) {
            run_all(doubles(lanes::<f64, 2, MR>()));
            // AVX-512's tile shape (12 rows x 2 vectors of 8)
            run_all(doubles(lanes::<f64, 8, MAX_MR>()));
        }
    }

    /// The kernels of every instruction set this CPU has (none under Miri).
    fn cpu_kernels<E: Packed>() -> Vec<Kernel<E>> {
        if cfg!(miri) {
            return Vec::new();
        }
        [Isa::Avx2, Isa::Avx512].into_iter().filter_map(E::kernel_for).collect()
    }

    #[test]
    fn packed_simd_matches_naive() {
        // AVX2 and AVX-512, where the CPU has them
        for kernel in cpu_kernels::<f64>() {
            run_all(doubles(kernel));
        }
        for kernel in cpu_kernels::<f32>() {
            run_all(Types { kernel, elem: |x| x as f32, source: |x| x as f32 });
        }
    }

    /// `dots` against the naive sum, exactly: row groups of 4 with a short last one, k across
    /// the two-vector steps, the one-vector steps and a part vector, padded rows, a strided y,
    /// `beta == 0` with NaN in y.
    fn check_dots(kernel: Kernel<f64>) {
        for (m, k) in [(1, 1), (3, 7), (5, 8), (9, 13), (6, 40), (13, 67)] {
            let lda = k + 3;
            let a: Vec<f64> =
                (0..m * lda).map(|q| if q % lda < k { ((q * 7) % 11) as f64 - 5.0 } else { f64::NAN }).collect();
            let x: Vec<f64> = (0..k).map(|p| ((p * 3) % 7) as f64 - 3.0).collect();
            for (alpha, beta) in [(1.0, 0.0), (2.0, 1.0), (-1.0, 0.5)] {
                let mut y: Vec<f64> =
                    (0..2 * m).map(|i| if beta == 0.0 || i % 2 == 1 { f64::NAN } else { i as f64 }).collect();
                let want: Vec<f64> = (0..m)
                    .map(|i| {
                        let s: f64 = (0..k).map(|p| a[i * lda + p] * x[p]).sum();
                        alpha * s + if beta == 0.0 { 0.0 } else { beta * y[2 * i] }
                    })
                    .collect();
                let am = MatRef { ptr: a.as_ptr(), rs: lda as isize, cs: 1 };
                let ym = MatMut { ptr: y.as_mut_ptr(), rs: 2, cs: 1 };
                // split in two calls, as threads would
                for rows in [0..m / 2, m / 2..m] {
                    // SAFETY: rows of a hold k elements each, x k, y's elements 2i are inside y.
                    unsafe { (kernel.dots)(rows, k, alpha, am, x.as_ptr(), beta, ym) };
                }
                for i in 0..m {
                    assert_eq!(y[2 * i], want[i], "{m}x{k} alpha {alpha} beta {beta} row {i}");
                    assert!(y[2 * i + 1].is_nan(), "y[{}] written", 2 * i + 1);
                }
            }
        }
    }

    #[test]
    fn dots_match_naive() {
        check_dots(lanes::<f64, 4, MR>());
        check_dots(lanes::<f64, 2, MR>());
        for kernel in cpu_kernels::<f64>() {
            check_dots(kernel);
        }
    }

    /// `columns` against the naive sum, exactly: whole row blocks and last blocks of whole and
    /// part vectors, padded columns (NaN in the padding), a strided `x` and `y` whose other
    /// elements must stay NaN, `beta == 0` with NaN in `y`.
    fn check_cols(kernel: Kernel<f64>) {
        // (4500: a piece of 3000 rows crosses a block of COL_BYTES, 2048 f64 rows)
        for (m, k) in [(1, 1), (3, 7), (9, 2), (33, 5), (64, 9), (131, 4), (300, 3), (1030, 6), (4500, 5)] {
            if cfg!(miri) && m > 2000 {
                continue;
            }
            let lda = m + 3;
            let a: Vec<f64> =
                (0..k * lda).map(|q| if q % lda < m { ((q * 7) % 11) as f64 - 5.0 } else { f64::NAN }).collect();
            let x: Vec<f64> =
                (0..2 * k).map(|q| if q % 2 == 0 { ((q * 3) % 7) as f64 - 3.0 } else { f64::NAN }).collect();
            for (alpha, beta) in [(1.0, 0.0), (2.0, 1.0), (-1.0, 0.5)] {
                let mut y: Vec<f64> =
                    (0..2 * m).map(|i| if beta == 0.0 || i % 2 == 1 { f64::NAN } else { i as f64 }).collect();
                let want: Vec<f64> = (0..m)
                    .map(|i| {
                        let s: f64 = (0..k).map(|p| a[p * lda + i] * x[2 * p]).sum();
                        alpha * s + if beta == 0.0 { 0.0 } else { beta * y[2 * i] }
                    })
                    .collect();
                let am = MatRef { ptr: a.as_ptr(), rs: 1, cs: lda as isize };
                let xm = MatRef { ptr: x.as_ptr(), rs: 2, cs: 1 };
                let ym = MatMut { ptr: y.as_mut_ptr(), rs: 2, cs: 1 };
                // split in two calls, as threads would
                for rows in [0..m / 3, m / 3..m] {
                    // SAFETY: a's columns hold m elements each, x's k elements and y's elements
                    // 2i are inside their buffers.
                    unsafe { (kernel.cols)(rows, k, alpha, am, xm, beta, ym) };
                }
                for i in 0..m {
                    assert_eq!(y[2 * i], want[i], "{m}x{k} alpha {alpha} beta {beta} row {i}");
                    assert!(y[2 * i + 1].is_nan(), "y[{}] written", 2 * i + 1);
                }
            }
        }
    }

    #[test]
    fn columns_match_naive() {
        check_cols(lanes::<f64, 4, MR>());
        check_cols(lanes::<f64, 2, MR>());
        for kernel in cpu_kernels::<f64>() {
            check_cols(kernel);
        }
    }

    /// Products started at once from several threads share the pool: each caller runs its own
    /// items, and a worker that claims one of them ends it, so none waits on another's product.
    #[test]
    #[cfg_attr(miri, ignore = "minutes under Miri; the pool's loops are covered by the tests above")]
    fn concurrent_products_share_the_pool() {
        let kernel = <f64 as Packed>::kernel().unwrap_or(lanes::<f64, 4, MR>());
        std::thread::scope(|s| {
            for q in 0..3 {
                s.spawn(move || {
                    for (alpha, beta) in [(1.0, 0.0), (2.0, 1.0)] {
                        check(&doubles(kernel), (150, 20 + q, 513), [q, 0, 0], alpha, beta, 2);
                        check(&doubles(kernel), (9, 300, 270), [0, q, 1], alpha, beta, 2);
                    }
                });
            }
        });
    }

    /// Half and BFloat16 operands, converted to f32 as they are packed (the sums of these small
    /// integers are exact in f32).
    #[test]
    fn packed_converts_half_operands() {
        let kernel = <f32 as Packed>::kernel().unwrap_or(lanes::<f32, 8, MR>());
        let elem = |x: f64| x as f32;
        run_all(Types { kernel, elem, source: half::f16::from_f64 });
        if !cfg!(miri) {
            run_all(Types { kernel, elem, source: half::bf16::from_f64 });
            run_all(Types { kernel: lanes::<f32, 4, MR>(), elem, source: |x| x as f32 });
        }
    }
}
