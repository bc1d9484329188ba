//! The valid jobs' tiles: `MR` output volumes x `NV` vectors of positions in registers over
//! every tap (see the parent module's doc).

use super::{Kernel, MAX_MR, MAX_NP, phases};
use crate::exec::parallel::{SharedPtr, for_range};
use crate::kernels::simd::{Lane, Vector};
use crate::ops::conv::{ConvK, Operands};

/// What every tile of a job shares.
pub(crate) struct Plan<'a, E> {
    inp: &'a [E],
    /// Kernel panels: panel `j` (at `j*kk*MR`) holds output volumes `j*MR..j*MR + rows` as
    /// `kk x rows` (tap `r`, volume `m`); `rows = MR` but in the last panel (`MR`: the
    /// kernel's `mr`).
    apack: &'a [E],
    /// Input offset of every tap (see the module doc).
    offs: &'a [usize],
    /// Taps per block (whole input volumes: see `tiles`).
    block: usize,
    out: SharedPtr<E>,
    /// Whether the tiles set the output elements (`Operands::fresh`) or add to them.
    fresh: bool,
    nout: usize,
    /// Columns of an input row and elements of an input depth slice (of a phase volume with
    /// strides, see `phases`).
    ic: usize,
    slab_in: usize,
    /// Output columns, rows and depth.
    oc: usize,
    or: usize,
    od: usize,
    /// Computed positions per output depth slice (`(or - 1)*ic + oc`).
    positions: usize,
    /// Elements of one batch of input volumes, and of one output volume.
    group: usize,
    op: usize,
}

/// Runs tiles `lo..hi` of a plan (see `tiles`).
pub(crate) type TilesFn<E> = unsafe fn(&Plan<E>, usize, usize);

/// One tile of `R` rows (`R <= MAX_MR`) x `NV` vectors of positions over taps `offs` (with
/// the panel's weights `a`): the sums start from the first rows of `buf` (or from zero when
/// `first`), run in registers, and are stored back there.
///
/// # Safety
/// The CPU has `V`'s instruction set; `a` holds `offs.len() * R` elements; every
/// `src + off .. src + off + NV*LANES` (`off` in `offs`) is readable; `NV*LANES <= MAX_NP`.
#[inline(always)]
unsafe fn tile<V: Vector, const R: usize, const NV: usize>(
    a: *const V::E,
    offs: &[usize],
    src: *const V::E,
    buf: &mut [[V::E; MAX_NP]; MAX_MR],
    first: bool,
) {
    // SAFETY: per the contract (the CPU has V's instruction set; the reads stay inside the
    // ranges the caller vouches for); buf's accesses stay inside rows of MAX_NP >= NV*LANES.
    unsafe {
        let mut acc = [[V::zero(); NV]; R];
        if !first {
            for (vs, row) in acc.iter_mut().zip(buf.iter()) {
                for (v, x) in vs.iter_mut().enumerate() {
                    *x = V::load(row.as_ptr().add(v * V::LANES));
                }
            }
        }
        for (r, &off) in offs.iter().enumerate() {
            let b = src.add(off);
            let mut bv = [V::zero(); NV];
            for (v, x) in bv.iter_mut().enumerate() {
                *x = V::load(b.add(v * V::LANES));
            }
            let ar = a.add(r * R);
            for (m, row) in acc.iter_mut().enumerate() {
                let av = V::splat(ar.add(m));
                for (x, &y) in row.iter_mut().zip(&bv) {
                    *x = x.mul_add(av, y);
                }
            }
        }
        for (row, vs) in buf.iter_mut().zip(&acc) {
            for (v, x) in vs.iter().enumerate() {
                x.store(row.as_mut_ptr().add(v * V::LANES));
            }
        }
    }
}

/// Bytes of input rows a block of taps may read per tile (see `drive`).
const BLOCK_BYTES: usize = 16 << 10;

/// Panels of output volumes whose partial sums a tile keeps at once (on the stack).
const GROUP: usize = 16;

/// Computes tiles `lo..hi` of the job with tiles of `MR` rows x `NV` vectors. Tile `t` covers
/// positions `(t % per_slab) * np..` of depth slice `t / per_slab` (batch-major), for every
/// output volume: `GROUP` panels at a time, over the taps in blocks of `plan.block` (so that
/// the input rows a block reads stay in L1 while every panel of the group uses them).
///
/// # Safety
/// The CPU has `V`'s instruction set; `plan` describes buffers that hold what it says (as
/// `drive` builds it, with panels of `MR` volumes and `NV * V::LANES` positions per tile),
/// `MR <= MAX_MR`, `NV * V::LANES <= MAX_NP`, and no other thread touches the output
/// elements of these tiles.
#[inline(always)]
pub(super) unsafe fn tiles<V: Vector, const MR: usize, const NV: usize>(plan: &Plan<V::E>, lo: usize, hi: usize) {
    let np = NV * V::LANES;
    let per_slab = plan.positions.div_ceil(np);
    let kk = plan.offs.len();
    let panels = plan.nout.div_ceil(MR);
    let mut bufs = [[[V::E::zero(); MAX_NP]; MAX_MR]; GROUP];
    // (first position in the tile, output index within the volume, length) of each valid run
    let mut runs = [(0usize, 0usize, 0usize); MAX_NP];
    for t in lo..hi {
        let (bz, p0) = (t / per_slab, (t % per_slab) * np);
        let (b, z) = (bz / plan.od, bz % plan.od);
        let end = p0 + np.min(plan.positions - p0);
        // the slice's last tile ends at its last position, overlapping the one before (only
        // positions p0.. are kept), so that every tile reads what a whole tile reads
        let start = p0.min(plan.positions.saturating_sub(np));
        let whole = start + np <= plan.positions;
        let src = b * plan.group + z * plan.slab_in + start;
        let mut nr = 0;
        let mut p = p0;
        while p < end {
            let (y, x) = (p / plan.ic, p % plan.ic);
            if x < plan.oc {
                let len = (plan.oc - x).min(end - p);
                runs[nr] = (p - start, (z * plan.or + y) * plan.oc + x, len);
                nr += 1;
                p += len;
            } else {
                p += plan.ic - x;
            }
        }
        for g0 in (0..panels).step_by(GROUP) {
            let group = g0..panels.min(g0 + GROUP);
            if whole {
                for k0 in (0..kk).step_by(plan.block) {
                    let offs = &plan.offs[k0..kk.min(k0 + plan.block)];
                    let src = plan.inp.as_ptr().wrapping_add(src);
                    for (j, buf) in group.clone().zip(bufs.iter_mut()) {
                        let rows = MR.min(plan.nout - j * MR);
                        let a = plan.apack[j * kk * MR + k0 * rows..].as_ptr();
                        let first = k0 == 0;
                        // SAFETY: V's instruction set per the contract; the panel holds kk*rows
                        // elements from j*kk*MR, so taps k0.. leave offs.len()*rows of them. Each
                        // tap's last read, src + off + np - 1, is its element at the last position
                        // of slice z of batch b (start + np <= positions), which lies inside its
                        // (phase) volume of the input `drive` laid out; earlier positions read
                        // earlier elements.
                        // (rows <= MR <= MAX_MR; the arms past MR are never taken)
                        unsafe {
                            match rows {
                                8 => tile::<V, 8, NV>(a, offs, src, buf, first),
                                7 => tile::<V, 7, NV>(a, offs, src, buf, first),
                                6 => tile::<V, 6, NV>(a, offs, src, buf, first),
                                5 => tile::<V, 5, NV>(a, offs, src, buf, first),
                                4 => tile::<V, 4, NV>(a, offs, src, buf, first),
                                3 => tile::<V, 3, NV>(a, offs, src, buf, first),
                                2 => tile::<V, 2, NV>(a, offs, src, buf, first),
                                _ => tile::<V, 1, NV>(a, offs, src, buf, first),
                            }
                        }
                    }
                }
            } else {
                // a slice of fewer positions than a tile: a whole tile could read past the input,
                // so only the valid positions, one element at a time (taps in the same order)
                for (j, buf) in group.clone().zip(bufs.iter_mut()) {
                    let rows = MR.min(plan.nout - j * MR);
                    let a = &plan.apack[j * kk * MR..j * kk * MR + kk * rows];
                    for &(q, _, len) in &runs[..nr] {
                        for (m, row) in buf.iter_mut().enumerate().take(rows) {
                            for (c, x) in row[q..q + len].iter_mut().enumerate() {
                                let at = src + q + c;
                                *x =
                                    plan.offs.iter().enumerate().fold(V::E::zero(), |s, (r, &off)| {
                                        s.add(a[r * rows + m].mul(plan.inp[at + off]))
                                    });
                            }
                        }
                    }
                }
            }
            for (j, buf) in group.zip(bufs.iter()) {
                let rows = MR.min(plan.nout - j * MR);
                for (m, row) in buf.iter().enumerate().take(rows) {
                    let vol = (b * plan.nout + j * MR + m) * plan.op;
                    for &(q, d, len) in &runs[..nr] {
                        // SAFETY: output volume b*nout + j*MR + m (< batches*nout) holds op
                        // elements and d + len <= op (a valid run of slice z); `drive` checked
                        // that the output holds batches*nout*op elements, and these are this
                        // call's alone.
                        let dst = unsafe { std::slice::from_raw_parts_mut(plan.out.offset((vol + d) as isize), len) };
                        if plan.fresh {
                            dst.copy_from_slice(&row[q..q + len]);
                        } else {
                            for (o, &x) in dst.iter_mut().zip(&row[q..q + len]) {
                                *o = o.add(x);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Builds the plan of a job (kernel panels of `kern.mr` volumes) and runs its tiles with
/// `kern.f` (`kern.np` positions per tile), in parallel above the pool's grain.
pub(super) fn drive<E: ConvK>(out: &mut [E], ops: &Operands<E>, kern: Kernel<E>) -> crate::core::error::Result<()> {
    let Kernel { mr, np, f } = kern;
    let (ker, g, o) = (ops.ker, &ops.g, ops.o);
    let (batches, nin, nout) = ops.dense;
    let [kd, kr, kc] = g.k;
    let [sz, sy, sx] = g.s;
    let [od, or, oc] = o;
    let (plen, klen) = (g.in_len(), g.k_len());
    let (kk, op) = (nin * klen, od * or * oc);
    if ker.len() != nout * kk || ops.inp.len() < batches * nin * plen || out.len() != batches * nout * op {
        return Err(crate::core::error::Error::internal("conv: implicit GEMM operands of unexpected sizes"));
    }
    if np == 0
        || np > MAX_NP
        || mr == 0
        || mr > MAX_MR
        || (0..3).any(|d| g.s[d] == 0 || g.i[d] < g.k[d] || o[d] != (g.i[d] - g.k[d]) / g.s[d] + 1)
    {
        return Err(crate::core::error::Error::internal("conv: implicit GEMM of an unexpected shape"));
    }
    let (inp, dims) = phases(ops.inp, g, batches * nin)?;
    let [pd, ph, pw] = dims;
    let phase = pd * ph * pw;
    let vol = phase * sz * sy * sx;
    let mut offs = crate::ops::conv::zeros::<usize>(kk)?;
    for (r, off) in offs.iter_mut().enumerate() {
        let (i, t) = (r / klen, r % klen);
        let (kz, ky, kx) = (t / (kr * kc), (t / kc) % kr, t % kc);
        let which = ((kz % sz) * sy + ky % sy) * sx + kx % sx;
        *off = i * vol + which * phase + ((kz / sz) * ph + ky / sy) * pw + kx / sx;
    }
    // panel by panel, each written in order (reading its `rows` kernel rows side by side)
    let mut apack = crate::core::limits::try_vec::<E>(nout * kk)?;
    for src in ker.chunks(kk * mr) {
        let rows = src.len() / kk;
        for r in 0..kk {
            apack.extend((0..rows).map(|m| src[m * kk + r]));
        }
    }
    let positions = (or - 1) * pw + oc;
    // input volumes per block: their rows under one tile (np + kc - 1 elements, rounded out to
    // whole cache lines) in about half of a 32 KiB L1
    let row_bytes = ((np + kc - 1) * size_of::<E>()).div_ceil(64) * 64 + 64;
    let vols = (BLOCK_BYTES / (kd * kr * row_bytes)).max(1);
    let block = vols.min(nin) * klen;
    let plan = Plan {
        inp: &inp,
        apack: &apack,
        block,
        offs: &offs,
        out: SharedPtr(out.as_mut_ptr()),
        fresh: ops.fresh,
        nout,
        ic: pw,
        slab_in: ph * pw,
        oc,
        or,
        od,
        positions,
        group: nin * vol,
        op,
    };
    let total = batches * od * positions.div_ceil(np);
    let work = (batches * nout * op).saturating_mul(kk);
    // SAFETY: the plan's buffers hold what it says (sizes checked above; offsets and panels
    // built from them), `f` is the tile loop of a kernel the CPU has (`Simd::kernel`) or the
    // plain one, tiles of different pieces write disjoint output elements, and `out` is borrowed
    // mutably for the whole loop.
    for_range(total, work, |lo, hi| unsafe { f(&plan, lo, hi) });
    Ok(())
}
