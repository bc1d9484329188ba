//! The tiled walk of `Plan` (see the parent module's docs): for operands whose unit-stride dim
//! is not the output's inner dim.

use super::{Kernel, Plan};
use crate::core::geometry::{Dim, Odometer};
use crate::exec::parallel;
use crate::kernels::simd::{prefetch, prefetch_l2, prefetch_w};
use crate::kernels::transpose::{Upcoming, block_lanes, transpose_region};

/// Cache line bytes (the unit of the prefetches).
const LINE: usize = 64;

/// Elements of the output per tile row (one kernel run): long enough that the per-run cost
/// of the kernel call stays small next to the run, 2-8 cache lines of 1-8 byte elements.
const TILE_I: usize = 128;
/// Bytes of all packed tiles together: they are written and read back within the tile, so
/// they stay within L1 (a budget beyond L1 makes the packed rows miss between the transposes
/// and the kernel). The tile's rows along the packed dim follow from it: 64 of 4-byte elements
/// for one packed operand, 32 of 8-byte ones, 256 of bytes (at most `TILE_D_MAX`).
const TILE_BYTES: usize = 32 << 10;
const TILE_D_MAX: usize = 256;

/// One tile of the walk: unit `u` (its corner offsets `off` and `la` rows along the packed
/// dim), inner elements `o0..o0 + lo`.
#[derive(Clone, Copy)]
struct Tile<const N: usize> {
    u: usize,
    off: [isize; N],
    la: usize,
    o0: usize,
    lo: usize,
}

impl<const N: usize> Plan<N> {
    /// The tiled walk (see the module docs): dims `d` (where the `packed` inputs are
    /// contiguous) and the inner dim are cut into `td` x `ti` tiles; every other dim and the
    /// tile rows along `d` are the units split across threads.
    ///
    /// # Safety
    /// As for `run`.
    pub(super) unsafe fn run_tiled(
        &self,
        bases: [*mut u8; N],
        elem: [usize; N],
        d: usize,
        packed: [bool; N],
        f: &Kernel<'_, N>,
    ) {
        let nd = self.dims.len();
        let (ni, nd_) = (self.dims[nd - 1].size, self.dims[d].size);
        let ist = self.dims[nd - 1].st;
        let dst = self.dims[d].st;
        let ti = TILE_I;
        let packed_bytes = (0..N).filter(|&k| packed[k]).map(|k| elem[k]).sum::<usize>().max(1);
        let td = (TILE_BYTES / (ti * packed_bytes)).clamp(8, TILE_D_MAX) / 8 * 8;
        let others: Vec<Dim<N>> = (0..nd - 1).filter(|&e| e != d).map(|e| self.dims[e]).collect();
        let blocks = nd_.div_ceil(td);
        let units = others.iter().map(|e| e.size).product::<usize>() * blocks;
        let addr = bases.map(parallel::SharedPtr);
        let fence = self.fence;
        // The operands whose next rows are fetched during a tile's runs: the inputs read along
        // the inner dim with unit stride, and the output unless the kernel streams it past the
        // caches (then it sets the fence, and a fetch would only bring back the lines the
        // streaming stores avoid reading).
        let fetch: [bool; N] = std::array::from_fn(|k| !packed[k] && ist[k] == 1 && (k > 0 || fence.is_none()));
        parallel::for_range(units, self.numel(), |u0, u1| {
            // Packed tiles: td rows (along d) of ti elements (along the inner dim); u64 words
            // keep them aligned for every element type.
            let mut bufs: [Vec<u64>; N] =
                std::array::from_fn(
                    |k| if packed[k] { vec![0u64; (td * ti * elem[k]).div_ceil(8)] } else { Vec::new() },
                );
            let buf: [*mut u8; N] = std::array::from_fn(|k| bufs[k].as_mut_ptr() as *mut u8);
            // The address of operand k's element at offset `off` plus `o` along the inner dim.
            let at = |k: usize, off: &[isize; N], o: usize| {
                addr[k].offset((off[k] + o as isize * ist[k]) * elem[k] as isize) as *const u8
            };
            // Unit u's first tile: the offsets (elements) of each operand at its corner, and its
            // rows along d.
            let first = |u: usize| {
                let (r, blk) = (u / blocks, u % blocks);
                let a0 = blk * td;
                let mut off = Odometer::new(&others, r).off;
                for (x, st) in off.iter_mut().zip(&dst) {
                    *x += a0 as isize * st;
                }
                Tile { u, off, la: td.min(nd_ - a0), o0: 0, lo: ti.min(ni) }
            };
            // the tile after t in this thread's share: along the inner dim, then the next unit
            let succ = |t: &Tile<N>| {
                if t.o0 + ti < ni {
                    Some(Tile { o0: t.o0 + ti, lo: ti.min(ni - t.o0 - ti), ..*t })
                } else {
                    (t.u + 1 < u1).then(|| first(t.u + 1))
                }
            };
            let mut cur = Some(first(u0));
            let mut next = cur.as_ref().and_then(succ);
            while let Some(t) = cur {
                let (off, la, o0, lo) = (t.off, t.la, t.o0, t.lo);
                for k in (0..N).filter(|&k| packed[k]) {
                    let upcoming = next.map(|n| Upcoming {
                        at: at(k, &n.off, n.o0),
                        stride: ist[k] * elem[k] as isize,
                        cols: n.lo,
                        bytes: n.la * elem[k],
                    });
                    // SAFETY: the tile's elements of operand k are inside the plan's reach
                    // (caller contract); the buffer holds td * ti elements.
                    unsafe { pack(elem[k], at(k, &off, o0), ist[k], dst[k], la, lo, buf[k], ti, upcoming) };
                }
                // Row pointers of this tile (packed operands: their buffers) and of the next one
                // (for the fetches), advanced one row along d per run.
                let mut p: [*mut u8; N] =
                    std::array::from_fn(|k| if packed[k] { buf[k] } else { at(k, &off, o0) as *mut u8 });
                let step: [isize; N] =
                    std::array::from_fn(
                        |k| if packed[k] { (ti * elem[k]) as isize } else { dst[k] * elem[k] as isize },
                    );
                let st: [isize; N] = std::array::from_fn(|k| if packed[k] { 1 } else { ist[k] });
                let (mut q, nbytes, nla) = match next {
                    Some(n) => (std::array::from_fn(|k| at(k, &n.off, n.o0)), n.lo, n.la),
                    None => ([std::ptr::null(); N], 0, 0),
                };
                for a in 0..la {
                    if a < nla {
                        for k in (0..N).filter(|&k| fetch[k]) {
                            let mut l = 0;
                            while l < nbytes * elem[k] {
                                if k == 0 {
                                    prefetch_w(q[k].wrapping_add(l));
                                } else {
                                    prefetch(q[k].wrapping_add(l));
                                }
                                l += LINE;
                            }
                            q[k] = q[k].wrapping_offset(step[k]);
                        }
                    }
                    f(p, st, lo);
                    for k in 0..N {
                        p[k] = p[k].wrapping_offset(step[k]);
                    }
                }
                cur = next;
                next = cur.as_ref().and_then(succ);
            }
            if let Some(fence) = fence {
                fence();
            }
        });
    }
}

/// `dst[a * ld + o] = src[o * so + a * sa]` for `a < la`, `o < lo`, elements of `size` bytes:
/// the source is read along its small stride `sa`. With `next`, each source column of the next
/// tile is fetched as this one is packed.
///
/// # Safety
/// `src` valid at those offsets; `dst` valid for `la` rows of `ld` elements, aligned for them.
#[allow(clippy::too_many_arguments)]
unsafe fn pack(
    size: usize,
    src: *const u8,
    so: isize,
    sa: isize,
    la: usize,
    lo: usize,
    dst: *mut u8,
    ld: usize,
    next: Option<Upcoming>,
) {
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn typed<T: Copy>(
        src: *const T,
        so: isize,
        sa: isize,
        la: usize,
        lo: usize,
        dst: *mut T,
        ld: usize,
        next: Option<Upcoming>,
    ) {
        let l = block_lanes::<T>();
        // The l x l blocks go through registers (and fetch the next tile's columns as they go);
        // the edges and other strides element by element.
        let (la8, lo8) = if l > 0 && sa == 1 { (la / l * l, lo / l * l) } else { (0, 0) };
        if lo8 > 0 && la8 > 0 {
            // SAFETY: caller contract: the region is inside the tile; l > 0.
            unsafe { transpose_region(src, so, dst, ld as isize, la8, lo8, next) };
        } else if let Some(n) = next {
            for c in 0..n.cols {
                let at = n.at.wrapping_offset(c as isize * n.stride);
                let mut b = 0;
                while b < n.bytes {
                    prefetch_l2(at.wrapping_add(b));
                    b += LINE;
                }
            }
        }
        // the rows below the blocks, then the columns right of them
        let one = |o: usize, a: usize| {
            // SAFETY: caller contract.
            unsafe {
                dst.add(a * ld + o).write(src.wrapping_offset(o as isize * so + a as isize * sa).read_unaligned())
            }
        };
        for o in 0..lo8 {
            (la8..la).for_each(|a| one(o, a));
        }
        for o in lo8..lo {
            (0..la).for_each(|a| one(o, a));
        }
    }
    // SAFETY: forwarded contract; each arm reads and writes whole elements of `size` bytes.
    unsafe {
        match size {
            1 => typed(src, so, sa, la, lo, dst, ld, next),
            2 => typed(src as *const u16, so, sa, la, lo, dst as *mut u16, ld, next),
            4 => typed(src as *const u32, so, sa, la, lo, dst as *mut u32, ld, next),
            8 => typed(src as *const u64, so, sa, la, lo, dst as *mut u64, ld, next),
            _ => {
                for o in 0..lo {
                    for a in 0..la {
                        std::ptr::copy_nonoverlapping(
                            src.wrapping_offset((o as isize * so + a as isize * sa) * size as isize),
                            dst.add((a * ld + o) * size),
                            size,
                        );
                    }
                }
            }
        }
    }
}
