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
//!   accumulators: twice the 6-row tile's FMAs per loaded `b` vector, so the loads of `b` take
//!   a smaller share of each step.
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

mod gemv;
mod micro;
mod pack;

pub(crate) use gemv::*;
use micro::*;
pub(crate) use pack::*;

use crate::core::limits::try_grow;
use crate::exec::parallel::{self, SharedPtr};
use crate::kernels::simd::{Lane, MAX_LANES, Vector, prefetch};
use crate::kernels::transpose::{block_lanes, transpose_block};
use crate::kernels::{Isa, isa};
use crate::linalg::gemm::{MatMut, MatRef, Product};
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
/// `KC` (each pass reads and writes every tile of `c`), and the larger L2 of AVX-512 machines
/// holds the deeper `a` blocks (`A_BYTES_512`); the AVX2 kernels gain nothing from the depth
/// and keep `KC`, whose `a` blocks fit a smaller L2.
const KC_512: usize = 512;
/// The deepest block.
const MAX_KC: usize = KC_512;
/// Bytes of a packed `a` block (`mc x kc`), kept in L2 (AVX2: 144 rows of f32, 72 of f64), for
/// `KC` deep blocks; AVX2 machines may have 256 KB of L2.
const A_BYTES: usize = 144 << 10;
/// The same for `KC_512` deep blocks (AVX-512: 144 rows of f32, 72 of f64), where L2 has 1 MB or
/// more. Each task of rows reads the whole packed `b` block (from L3) once per block of `a`: 288
/// KB rather than 144 halves that traffic, and still leaves most of L2 to the `b` panels and
/// the tiles of `c` passing through.
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
    // (a block shallower than `KC` is sized as a `KC` deep one, so that a shallow product's
    // `mc` and `nc` stay within what `A_BYTES` and `B_BYTES` were chosen for)
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

/// The product `p`, `c = beta*c + alpha*(a @ b)` (`m, n, k >= 1`), with `kernel`, on the
/// calling thread and, with `threads > 1`, the library's pool. The operands' elements `S` are
/// converted to the kernel's `E` as they are packed (Half/BFloat16 to f32). Returns false,
/// touching nothing, when the packed `b` block cannot be allocated. `beta == 0` does not read
/// `c`.
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
pub(crate) unsafe fn gemm<E: Packed, S: Source<E>>(kernel: Kernel<E>, p: Product<E, S>, threads: usize) -> bool {
    let Product { m, n, k, alpha, a, b, beta, c } = p;
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

/// Bytes of a cache line.
const LINE: usize = 64;
/// Bytes ahead along each column at which `columns` fetches while it transposes: 12-32 columns
/// read at once are more streams than the hardware fetches ahead for, so each column's coming
/// lines are asked for explicitly. Four cache lines ahead gives each line the time of a few
/// transposed blocks to arrive, near enough that it is still in L1 when they reach it.
const PACK_AHEAD: usize = 256;
/// Steps of `micro` ahead of which it fetches the packed `a` panel, where it reads a line or
/// more per step.
const A_AHEAD: usize = 8;

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
                    if try_grow(&mut v, len + PAD, 0.0).is_err() {
                        return f(None);
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
mod tests;
