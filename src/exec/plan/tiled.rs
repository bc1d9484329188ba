//! The tiled walk of `Plan` (see the parent module's docs): for operands whose unit-stride dim
//! is not the output's inner dim.

use super::{Kernel, Plan};
use crate::core::geometry::{Dim, Odometer};
use crate::exec::parallel;
use crate::kernels::simd::{prefetch, prefetch_w};
use crate::kernels::transpose::{block_lanes, transpose_block};

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
        // The output's next lines are fetched (for writing) unless the kernel streams it past
        // the caches (then it sets the fence), where a fetch would only bring back the lines the
        // streaming stores avoid reading.
        let fetch_out = fence.is_none();
        parallel::for_range(units, self.numel(), |u0, u1| {
            // Packed tiles: td rows (along d) of ti elements (along the inner dim); u64 words
            // keep them aligned for every element type.
            let mut bufs: [Vec<u64>; N] =
                std::array::from_fn(
                    |k| if packed[k] { vec![0u64; (td * ti * elem[k]).div_ceil(8)] } else { Vec::new() },
                );
            // Offsets (elements) of each operand at the corner of unit u's first tile, and the
            // tile's rows along d.
            let corner = |u: usize| {
                let (r, blk) = (u / blocks, u % blocks);
                let a0 = blk * td;
                let mut off = Odometer::new(&others, r).off;
                for (x, st) in off.iter_mut().zip(&dst) {
                    *x += a0 as isize * st;
                }
                (off, td.min(nd_ - a0))
            };
            for u in u0..u1 {
                let (off, la) = corner(u);
                let mut o0 = 0;
                while o0 < ni {
                    let lo = ti.min(ni - o0);
                    // the next tile's corner (for the prefetches)
                    let next = if o0 + ti < ni {
                        Some((off, o0 + ti, ti.min(ni - o0 - ti), la))
                    } else if u + 1 < u1 {
                        let (noff, nla) = corner(u + 1);
                        Some((noff, 0, ti.min(ni), nla))
                    } else {
                        None
                    };
                    for k in 0..N {
                        if packed[k] {
                            let at = |off: &[isize; N], o: usize| {
                                addr[k].offset((off[k] + o as isize * ist[k]) * elem[k] as isize)
                            };
                            let src = at(&off, o0);
                            let pf = match next {
                                Some((noff, no0, nlo, nla)) => Some((at(&noff, no0) as *const u8, nlo, nla)),
                                _ => None,
                            };
                            // SAFETY: the tile's elements of operand k are inside the plan's
                            // reach (caller contract); the buffer holds td * ti elements.
                            unsafe {
                                pack(elem[k], src, ist[k], dst[k], la, lo, bufs[k].as_mut_ptr() as *mut u8, ti, pf)
                            };
                        }
                    }
                    for a in 0..la {
                        let mut p = [std::ptr::null_mut::<u8>(); N];
                        let mut st = ist;
                        for k in 0..N {
                            if packed[k] {
                                p[k] = (bufs[k].as_mut_ptr() as *mut u8).wrapping_add(a * ti * elem[k]);
                                st[k] = 1;
                            } else {
                                let e = off[k] + a as isize * dst[k] + o0 as isize * ist[k];
                                p[k] = addr[k].offset(e * elem[k] as isize);
                                if let Some((noff, no0, nlo, nla)) = next
                                    && a < nla
                                    && ist[k] == 1
                                {
                                    let e = noff[k] + a as isize * dst[k] + no0 as isize;
                                    let q = addr[k].offset(e * elem[k] as isize) as *const u8;
                                    let mut l = 0;
                                    while l < nlo * elem[k] {
                                        if k > 0 {
                                            prefetch(q.wrapping_add(l));
                                        } else if fetch_out {
                                            prefetch_w(q.wrapping_add(l));
                                        }
                                        l += LINE;
                                    }
                                }
                            }
                        }
                        f(p, st, lo);
                    }
                    o0 += ti;
                }
            }
            if let Some(fence) = fence {
                fence();
            }
        });
    }
}

/// `dst[a * ld + o] = src[o * so + a * sa]` for `a < la`, `o < lo`, elements of `size` bytes:
/// the source is read along its small stride `sa`. With `pf`, each source column of the next
/// tile (`src`, `lo` columns at stride `so`, `la` elements) is fetched as this one is packed.
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
    pf: Option<(*const u8, usize, usize)>,
) {
    #[inline(always)]
    unsafe fn typed<T: Copy>(
        src: *const T,
        so: isize,
        sa: isize,
        la: usize,
        lo: usize,
        dst: *mut T,
        ld: usize,
        pf: Option<(*const u8, usize, usize)>,
    ) {
        let l = block_lanes::<T>();
        let fetch = |o0: usize, o1: usize| {
            if let Some((p, nlo, nla)) = pf {
                let bytes = nla * size_of::<T>();
                for o in o0..o1.min(nlo) {
                    let c = p.wrapping_offset(o as isize * so * size_of::<T>() as isize);
                    let mut b = 0;
                    while b < bytes {
                        prefetch(c.wrapping_add(b));
                        b += LINE;
                    }
                }
            }
        };
        let (mut la8, mut lo8) = (0, 0);
        if l > 0 && sa == 1 {
            (la8, lo8) = (la / l * l, lo / l * l);
            // SAFETY: caller contract: each l x l block is inside the tile.
            unsafe {
                for o in (0..lo8).step_by(l) {
                    fetch(o, o + l);
                    for a in (0..la8).step_by(l) {
                        transpose_block(
                            src.wrapping_offset(o as isize * so + a as isize),
                            so,
                            dst.add(a * ld + o),
                            ld as isize,
                        );
                    }
                }
            }
        }
        fetch(lo8, lo);
        for o in 0..lo {
            let row = src.wrapping_offset(o as isize * so);
            let a_from = if o < lo8 { la8 } else { 0 };
            for a in a_from..la {
                // SAFETY: caller contract.
                unsafe { dst.add(a * ld + o).write(row.wrapping_offset(a as isize * sa).read_unaligned()) };
            }
        }
    }
    // SAFETY: forwarded contract; each arm reads and writes whole elements of `size` bytes.
    unsafe {
        match size {
            1 => typed(src, so, sa, la, lo, dst, ld, pf),
            2 => typed(src as *const u16, so, sa, la, lo, dst as *mut u16, ld, pf),
            4 => typed(src as *const u32, so, sa, la, lo, dst as *mut u32, ld, pf),
            8 => typed(src as *const u64, so, sa, la, lo, dst as *mut u64, ld, pf),
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
