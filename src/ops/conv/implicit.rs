//! Valid correlations of many input volumes with many kernels (`mv`/`mm`, the full mode run on
//! a zero-padded input) and the kernel gradients (Rev: `Revger`/`Revgerm`) as an implicit
//! GEMM: no im2col columns, no packing of the input.
//!
//! Valid jobs: within one output depth slice, output positions are numbered as the input's:
//! `p = y*ic + x` (`ic` input columns). The input element that tap `r = (i, kz, ky, kx)` meets
//! at position `p` is then `input[off[r] + p]`, `off[r] = i*plen + kz*ir*ic + ky*ic + kx`, so a
//! run of consecutive positions reads consecutive input elements. A tile of `MR` output
//! volumes x `NV` vectors of positions accumulates in registers over every tap (the kernel
//! broadcast from a packed panel, the input loaded straight from the input volume), then adds
//! its valid positions (`x < oc`) to the output; the `ic - oc` positions of a row past `oc` are
//! computed and dropped (`fits` bounds that waste). `MR` and `NV` depend on the instruction set
//! (see `Simd`).
//!
//! Rev jobs: each weight sums the kernel's rows, runs of consecutive taps that meet runs of
//! consecutive input elements; `UR` weights x 2 kernels accumulate in vectors over the runs
//! (the last vector of a run masked, so that no element outside the sum is read).
//!
//! Strides: the input is first split into stride phases (`phases`), in which the elements a
//! tap meets (valid) or a weight meets (Rev) are consecutive again.
//!
//! Each output element sums its taps in a fixed order, so the result depends neither on the
//! tiling nor on the thread count.

use super::{ConvK, Geom, Operands};
use crate::exec::parallel::{SharedPtr, for_range};
#[cfg(test)]
use crate::kernels::simd::Lanes;
use crate::kernels::simd::{Lane, MAX_LANES, Vector};
#[cfg(target_arch = "x86_64")]
use crate::kernels::simd::{avx2, avx512};
use std::borrow::Cow;

/// Most rows of a tile (output volumes sharing each input load) and vectors of positions in a
/// tile, over the instruction sets (see `Simd`).
const MAX_MR: usize = 8;
const MAX_NV: usize = 3;
/// Most positions a tile can have (`MAX_NV` vectors of the widest lane count).
const MAX_NP: usize = MAX_NV * MAX_LANES;

/// A tile loop and the tile shape it was built for: output volumes per kernel panel (`mr`,
/// the tile's rows) and positions per tile (`np`, its vectors times the lanes).
#[derive(Clone, Copy)]
pub(crate) struct Kernel<E> {
    mr: usize,
    np: usize,
    f: TilesFn<E>,
}

/// Whether a valid job suits the implicit GEMM: at most half of the computed positions
/// dropped (`x >= oc` of every row of `ceil(ic / sx)` columns, see `drive`).
pub(crate) fn fits(g: &Geom, o: [usize; 3]) -> bool {
    o[2] * 2 >= g.i[2].div_ceil(g.s[2])
}

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
unsafe fn tiles<V: Vector, const MR: usize, const NV: usize>(plan: &Plan<V::E>, lo: usize, hi: usize) {
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

/// What every item of a Rev job shares (see `rev_drive`).
pub(crate) struct RevPlan<'a, E> {
    /// The input as `phases` lays it out.
    inp: &'a [E],
    /// The prepared kernels (the output gradients): `batches x nq x klen`, rows `nout..nq`
    /// zero (`nq` even).
    gp: &'a [E],
    out: SharedPtr<E>,
    batches: usize,
    nin: usize,
    nout: usize,
    nq: usize,
    /// Elements of an input volume (all its phases) and of one phase; of a kernel volume.
    vol: usize,
    phase: usize,
    klen: usize,
    /// Columns of a phase row and elements of a phase depth slice.
    ic: usize,
    slab_in: usize,
    /// Strides (the taps' spacing in the input); kernel depth, rows and columns; output rows
    /// and columns, elements per output volume.
    s: [usize; 3],
    k: [usize; 3],
    or: usize,
    oc: usize,
    op: usize,
}

/// Runs items `lo..hi` of a Rev plan (see `rev_items`).
pub(crate) type RevFn<E> = unsafe fn(&RevPlan<E>, usize, usize);

/// Output positions (weights) per Rev item.
const UR: usize = 6;

/// The sums of one Rev item: output positions whose input offsets are `uoff` x kernels `q0`
/// and `q0 + 1`, for input volume `i`, over every batch and kernel tap: each kernel row is a
/// run of `kc` consecutive taps, read in vectors (the last one partial) from the kernel rows
/// and from the input at `uoff + row offset`.
///
/// # Safety
/// The CPU has `V`'s instruction set; `plan` is as `rev_drive` builds it, `i < nin`, `q0 + 1 < nq`,
/// and every `uoff` is the input offset of an output position.
#[inline(always)]
unsafe fn rev_item<V: Vector, const R: usize>(
    plan: &RevPlan<V::E>,
    i: usize,
    q0: usize,
    uoff: [usize; R],
) -> [[V::E; 2]; R] {
    let [kd, kr, kc] = plan.k;
    let (full, tail) = (kc / V::LANES * V::LANES, kc % V::LANES);
    // SAFETY: per the contract. Kernel reads stay in rows q0, q0 + 1 of batch b (goff + kc <=
    // klen); input reads stay in volume (b, i): the last, uoff + toff + kc - 1, is at most the
    // volume's last element for every output position (the output is the input less the
    // kernel, plus one, in every dimension).
    unsafe {
        let mut acc = [[V::zero(); 2]; R];
        for b in 0..plan.batches {
            let img = plan.inp.as_ptr().add((b * plan.nin + i) * plan.vol);
            let g = plan.gp.as_ptr().add((b * plan.nq + q0) * plan.klen);
            for tz in 0..kd {
                for ty in 0..kr {
                    let toff = tz * plan.slab_in + ty * plan.ic;
                    let goff = (tz * kr + ty) * kc;
                    let src: [*const V::E; R] = std::array::from_fn(|m| img.add(uoff[m] + toff));
                    let (g0, g1) = (g.add(goff), g.add(plan.klen + goff));
                    let mut x = 0;
                    while x < full {
                        let (a0, a1) = (V::load(g0.add(x)), V::load(g1.add(x)));
                        for (m, row) in acc.iter_mut().enumerate() {
                            let v = V::load(src[m].add(x));
                            row[0] = row[0].mul_add(a0, v);
                            row[1] = row[1].mul_add(a1, v);
                        }
                        x += V::LANES;
                    }
                    if tail > 0 {
                        let (a0, a1) = (V::load_part(g0.add(x), tail), V::load_part(g1.add(x), tail));
                        for (m, row) in acc.iter_mut().enumerate() {
                            let v = V::load_part(src[m].add(x), tail);
                            row[0] = row[0].mul_add(a0, v);
                            row[1] = row[1].mul_add(a1, v);
                        }
                    }
                }
            }
        }
        acc.map(|row| row.map(|v| v.sum()))
    }
}

/// Computes items `lo..hi` of a Rev job: item `t` is input volume `t / (pairs * groups)`,
/// kernels `2 * ((t / groups) % pairs)` and the next, output positions `UR * (t % groups)..`
/// (consecutive items share their input volume and kernel rows).
///
/// # Safety
/// The CPU has `V`'s instruction set; `plan` is as `rev_drive` builds it, and no other thread touches
/// the output elements of these items.
#[inline(always)]
unsafe fn rev_items<V: Vector>(plan: &RevPlan<V::E>, lo: usize, hi: usize) {
    let (pairs, groups) = (plan.nq / 2, plan.op.div_ceil(UR));
    for t in lo..hi {
        let (i, q0, u0) = (t / (pairs * groups), (t / groups) % pairs * 2, t % groups * UR);
        let n = UR.min(plan.op - u0);
        let mut uoff = [0; UR];
        let [sz, sy, sx] = plan.s;
        for (m, o) in uoff.iter_mut().enumerate().take(n) {
            let (zy, x) = ((u0 + m) / plan.oc, (u0 + m) % plan.oc);
            let (z, y) = (zy / plan.or, zy % plan.or);
            let which = ((z % sz) * sy + y % sy) * sx + x % sx;
            *o = which * plan.phase + (z / sz) * plan.slab_in + (y / sy) * plan.ic + x / sx;
        }
        let mut sums = [[V::E::zero(); 2]; UR];
        macro_rules! item {
            ($r:literal) => {{
                // SAFETY: forwarded contract; i < nin, q0 + 1 < nq, and the first $r offsets
                // are those of output positions u0.. (n of them).
                let s = unsafe { rev_item::<V, $r>(plan, i, q0, std::array::from_fn(|m| uoff[m])) };
                sums[..$r].copy_from_slice(&s);
            }};
        }
        match n {
            6 => item!(6),
            5 => item!(5),
            4 => item!(4),
            3 => item!(3),
            2 => item!(2),
            _ => item!(1),
        }
        for (c, q) in (q0..plan.nout.min(q0 + 2)).enumerate() {
            for (m, row) in sums.iter().enumerate().take(n) {
                let at = (q * plan.nin + i) * plan.op + u0 + m;
                // SAFETY: q < nout, i < nin and u0 + m < op: inside the output `rev_drive` checked
                // (nout * nin * op elements); the element belongs to this item alone.
                unsafe {
                    let o = plan.out.offset(at as isize);
                    *o = (*o).add(row[c]);
                }
            }
        }
    }
}

/// The element types with a kernel: the tile loop (and its tile shape) the CPU runs best for
/// valid jobs, and the item loop for Rev jobs, if it has them.
///
/// Tile shapes: AVX2 (16 registers) takes 6 x 2 (12 accumulators, 2 input vectors and a
/// broadcast, one register to spare; with 4 x 3 the compiler spilled an accumulator).
/// AVX-512 (32 registers) takes 8 x 3: per tap, 24 FMAs against 8 broadcasts and 3 input
/// loads, which are unaligned and so each split over two cache lines (two load slots), so the
/// two load ports keep up with the two FMA pipes with room to spare (6 x 2 needs 10 load slots
/// for 12 FMAs: the loads nearly saturate and the tile ran at about 70% of the FMA peak); and 8
/// rows divide the usual channel counts (16, 32, 64) with no ragged last panel.
pub(crate) trait Simd: ConvK {
    /// The loops for the instruction set in use (AVX2 + FMA, AVX-512F), if any: the tile loop
    /// and the Rev item loop.
    fn loops() -> Option<(Kernel<Self>, RevFn<Self>)>;
    fn kernel() -> Option<Kernel<Self>> {
        Self::loops().map(|(k, _)| k)
    }
    fn rev_kernel() -> Option<RevFn<Self>> {
        Self::loops().map(|(_, f)| f)
    }
}

/// `tiles` (tiles of `$mr` x `$nv` vectors) and `rev_items` on one instruction set's vectors
/// `$V` (`$isa`: `Avx2` or `Avx512`), as `Simd::loops` returns them.
#[cfg(target_arch = "x86_64")]
macro_rules! isa_loops {
    ($V:ty, $isa:ident, $mr:literal x $nv:literal) => {{
        type E = <$V as Vector>::E;
        crate::kernels::multiversion!(@copy $isa,
            /// # Safety
            /// As `tiles`, on a CPU with these features.
            fn tiles_isa(plan: &Plan<E>, lo: usize, hi: usize) => tiles::<$V, $mr, $nv>(plan, lo, hi));
        crate::kernels::multiversion!(@copy $isa,
            /// # Safety
            /// As `rev_items`, on a CPU with these features.
            fn rev_isa(plan: &RevPlan<E>, lo: usize, hi: usize) => rev_items::<$V>(plan, lo, hi));
        let k = Kernel { mr: $mr, np: $nv * <$V as Vector>::LANES, f: tiles_isa as TilesFn<E> };
        (k, rev_isa as RevFn<E>)
    }};
}

macro_rules! simd {
    ($E:ty, $V2:ident, $V5:ident) => {
        impl Simd for $E {
            fn loops() -> Option<(Kernel<Self>, RevFn<Self>)> {
                #[cfg(target_arch = "x86_64")]
                {
                    use crate::kernels::{Isa, isa};
                    match isa() {
                        Isa::Avx512 => return Some(isa_loops!(avx512::$V5, Avx512, 8 x 3)),
                        Isa::Avx2 => return Some(isa_loops!(avx2::$V2, Avx2, 6 x 2)),
                        Isa::Scalar => {}
                    }
                }
                None
            }
        }
    };
}
simd!(f32, F32x8, F32x16);
simd!(f64, F64x4, F64x8);

/// Builds the plan of a Rev job and runs its items with `f`, in parallel above the pool's
/// grain.
fn rev_drive<E: ConvK>(out: &mut [E], ops: &Operands<E>, f: RevFn<E>) -> crate::core::error::Result<()> {
    let (inp, ker, g, o) = (ops.inp, ops.ker, &ops.g, ops.o);
    let (batches, nin, nout) = ops.dense;
    let (plen, klen, op) = (g.in_len(), g.k_len(), o.iter().product::<usize>());
    if ker.len() != batches * nout * klen || inp.len() < batches * nin * plen || out.len() != nout * nin * op {
        return Err(crate::core::error::Error::internal("conv: implicit Rev operands of unexpected sizes"));
    }
    if (0..3).any(|d| g.s[d] == 0 || (g.k[d] - 1) * g.s[d] >= g.i[d] || o[d] != g.i[d] - (g.k[d] - 1) * g.s[d]) {
        return Err(crate::core::error::Error::internal("conv: implicit Rev of an unexpected shape"));
    }
    let (inp, [pd, ph, pw]) = phases(inp, g, batches * nin)?;
    let nq = nout.div_ceil(2) * 2;
    let mut gp = super::zeros::<E>(batches * nq * klen)?;
    for (b, dst) in gp.chunks_exact_mut(nq * klen).enumerate() {
        dst[..nout * klen].copy_from_slice(&ker[b * nout * klen..(b + 1) * nout * klen]);
    }
    let plan = RevPlan {
        inp: &inp,
        gp: &gp,
        out: SharedPtr(out.as_mut_ptr()),
        batches,
        nin,
        nout,
        nq,
        vol: pd * ph * pw * g.s.iter().product::<usize>(),
        phase: pd * ph * pw,
        klen,
        ic: pw,
        slab_in: ph * pw,
        s: g.s,
        k: g.k,
        or: o[1],
        oc: o[2],
        op,
    };
    let total = nin * (nq / 2) * op.div_ceil(UR);
    let work = (batches * nout * nin * op).saturating_mul(klen);
    // SAFETY: the plan's buffers hold what it says (sizes and shape checked above), `f` is the
    // item loop of a kernel the CPU has (`Simd::rev_kernel`) or the plain one, items of
    // different pieces write disjoint output elements, and `out` is borrowed mutably for the
    // whole loop.
    for_range(total, work, |lo, hi| unsafe { f(&plan, lo, hi) });
    Ok(())
}

/// Runs a job with the CPU's kernel for `E`:
/// - valid (`!rev`): `out[b][q] += sum_i xcorr(input[b][i], ker[q][i])` (output strides), `dense
///   = (batches, nin, nout)`, kernels prepared as `nout x nin*klen` (row-major), when the job
///   `fits`;
/// - Rev: `out[q][i] += sum_b xcorr(input[b][i], ker[b][q])` (taps strides apart), kernels
///   prepared as `batches x nout x klen`, output `nout x nin x op`, when kernel rows have at
///   least 8 taps.
///
/// `Ok(false)`: not run (no kernel for this CPU and type, or the job does not suit one).
pub(crate) fn run<E: Simd>(rev: bool, out: &mut [E], ops: &Operands<E>) -> crate::core::error::Result<bool> {
    let (g, o) = (&ops.g, ops.o);
    if rev {
        match E::rev_kernel() {
            Some(f) if g.k[2] >= 8 => rev_drive(out, ops, f).map(|()| true),
            _ => Ok(false),
        }
    } else {
        match E::kernel() {
            Some(k) if fits(g, o) => drive(out, ops, k).map(|()| true),
            _ => Ok(false),
        }
    }
}

/// Builds the plan of a job (kernel panels of `kern.mr` volumes) and runs its tiles with
/// `kern.f` (`kern.np` positions per tile), in parallel above the pool's grain.
fn drive<E: ConvK>(out: &mut [E], ops: &Operands<E>, kern: Kernel<E>) -> crate::core::error::Result<()> {
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
    let mut offs = super::zeros::<usize>(kk)?;
    for (r, off) in offs.iter_mut().enumerate() {
        let (i, t) = (r / klen, r % klen);
        let (kz, ky, kx) = (t / (kr * kc), (t / kc) % kr, t % kc);
        let which = ((kz % sz) * sy + ky % sy) * sx + kx % sx;
        *off = i * vol + which * phase + ((kz / sz) * ph + ky / sy) * pw + kx / sx;
    }
    let mut apack = super::zeros::<E>(nout * kk)?;
    for (q, row) in ker.chunks_exact(kk).enumerate() {
        let (j, m) = (q / mr, q % mr);
        let rows = mr.min(nout - j * mr);
        for (r, &w) in row.iter().enumerate() {
            apack[j * kk * mr + r * rows + m] = w;
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

/// The input as the tiles read it, and the size of its (phase) volumes. With unit strides,
/// the input itself. With strides `(sz, sy, sx)`, each of the `n` input volumes becomes
/// `sz*sy*sx` phase volumes of `ceil(i / s)` elements per dimension, phase `(a, b, c)` holding
/// input element `(z*sz + a, y*sy + b, x*sx + c)` at `(z, y, x)` (zero past the input): the
/// elements a tap meets under consecutive output positions, `sx` apart in the input, are
/// consecutive in the phase volume of the tap's remainders, at the tap's quotients.
#[allow(clippy::type_complexity)]
fn phases<'a, E: ConvK>(inp: &'a [E], g: &Geom, n: usize) -> crate::core::error::Result<(Cow<'a, [E]>, [usize; 3])> {
    if g.s == [1; 3] {
        return Ok((Cow::Borrowed(inp), g.i));
    }
    let [id, ir, ic] = g.i;
    let [sz, sy, sx] = g.s;
    let dims: [usize; 3] = std::array::from_fn(|d| g.i[d].div_ceil(g.s[d]));
    let [pd, ph, pw] = dims;
    let phase = pd * ph * pw;
    let vol = phase * sz * sy * sx;
    let mut out = super::zeros::<E>(n * vol)?;
    super::par_planes(&mut out, vol, n * vol, |v, dst| {
        let src = &inp[v * g.in_len()..(v + 1) * g.in_len()];
        for (which, dst) in dst.chunks_exact_mut(phase).enumerate() {
            let (a, b, c) = (which / (sy * sx), (which / sx) % sy, which % sx);
            for (zy, row) in dst.chunks_exact_mut(pw).enumerate() {
                let (z, y) = ((zy / ph) * sz + a, (zy % ph) * sy + b);
                if z >= id || y >= ir {
                    continue;
                }
                let line = &src[(z * ir + y) * ic..(z * ir + y + 1) * ic];
                for (x, d) in row.iter_mut().enumerate() {
                    if let Some(&v) = line.get(x * sx + c) {
                        *d = v;
                    }
                }
            }
        }
    });
    Ok((Cow::Owned(out), dims))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (batches, input volumes, output volumes).
    type Dense = (usize, usize, usize);
    /// Input sizes, kernel sizes, strides, volumes.
    type Case = ([usize; 3], [usize; 3], [usize; 3], Dense);
    /// Runs one job.
    type Runner<'a> = &'a dyn Fn(&mut [f64], &Operands<f64>);

    /// The tile loop on plain arrays of `N` lanes, tiles of `MR` x `NV` vectors (any CPU, Miri).
    unsafe fn plain<E: ConvK + Lane, const N: usize, const MR: usize, const NV: usize>(
        plan: &Plan<E>,
        lo: usize,
        hi: usize,
    ) {
        // SAFETY: forwarded contract; plain arrays need no instruction set.
        unsafe { tiles::<Lanes<E, N>, MR, NV>(plan, lo, hi) }
    }

    /// `plain` as a kernel.
    fn plain_kernel<E: ConvK + Lane, const N: usize, const MR: usize, const NV: usize>() -> Kernel<E> {
        Kernel { mr: MR, np: NV * N, f: plain::<E, N, MR, NV> }
    }

    /// `out[v][u] += sum_{(iv, kv) in pairs(v)} sum_t ker[kv][t] * inp[iv][u*su + t*st]`
    /// (positions and taps as 3-D coordinates; valid: `su` the strides, `st` 1; Rev: the
    /// other way round) one element at a time.
    fn naive(
        inp: &[f64],
        ker: &[f64],
        g: &Geom,
        o: [usize; 3],
        (su, st): ([usize; 3], [usize; 3]),
        pairs: &dyn Fn(usize) -> Vec<(usize, usize)>,
        out: &mut [f64],
    ) {
        let [_, ir, ic] = g.i;
        let [_, kr, kc] = g.k;
        let [_, or, oc] = o;
        let at = |u: usize, t: usize, d: usize| u * su[d] + t * st[d];
        let (plen, klen, op) = (g.in_len(), g.k_len(), o.iter().product::<usize>());
        for (v, dst) in out.chunks_exact_mut(op).enumerate() {
            for (u, d) in dst.iter_mut().enumerate() {
                let (uz, uy, ux) = (u / (or * oc), (u / oc) % or, u % oc);
                let mut s = 0.0;
                for (iv, kv) in pairs(v) {
                    for t in 0..klen {
                        let (tz, ty, tx) = (t / (kr * kc), (t / kc) % kr, t % kc);
                        s += ker[kv * klen + t]
                            * inp[iv * plen + (at(uz, tz, 0) * ir + at(uy, ty, 1)) * ic + at(ux, tx, 2)];
                    }
                }
                *d += s;
            }
        }
    }

    /// Runs every case through `run` and through the naive `want` (both add to the same start)
    /// and compares them exactly: the values are small integers, so every order of summation
    /// is exact. Valid jobs run a second time on an output of NaNs marked `fresh`, which must
    /// come out as the sums alone. The last element of the first input row is infinite: it meets only the last
    /// output column (mv) or the last weight column (Rev), and must reach no other (all
    /// weights are non-zero, so a stray read would show as infinity or NaN).
    fn check(cases: &[Case], rev: bool, run: Runner) {
        for &(i, k, s, dense) in cases {
            let (batches, nin, nout) = dense;
            let g = Geom { i, k, s };
            let o: [usize; 3] =
                std::array::from_fn(|d| if rev { i[d] - (k[d] - 1) * s[d] } else { (i[d] - k[d]) / s[d] + 1 });
            let strides = if rev { ([1; 3], s) } else { (s, [1; 3]) };
            let mut inp: Vec<f64> = (0..batches * nin * g.in_len()).map(|v| ((v * 7) % 13) as f64 - 6.0).collect();
            inp[i[2] - 1] = f64::INFINITY;
            let kvols = if rev { batches * nout } else { nout * nin };
            let ker: Vec<f64> = (0..kvols * g.k_len()).map(|v| (v % 7) as f64 + 1.0).collect();
            let outs = if rev { nout * nin } else { batches * nout };
            let start: Vec<f64> = (0..outs * o.iter().product::<usize>()).map(|v| (v % 3) as f64).collect();
            let mut want = vec![0.0; start.len()];
            if rev {
                // output volume (q, i) sums (input (b, i), kernel (b, q)) over batches
                naive(
                    &inp,
                    &ker,
                    &g,
                    o,
                    strides,
                    &|v| (0..batches).map(|b| (b * nin + v % nin, b * nout + v / nin)).collect(),
                    &mut want,
                );
            } else {
                // output volume (b, q) sums (input (b, i), kernel (q, i)) over input volumes
                naive(
                    &inp,
                    &ker,
                    &g,
                    o,
                    strides,
                    &|v| (0..nin).map(|i| (v / nout * nin + i, v % nout * nin + i)).collect(),
                    &mut want,
                );
            }
            assert!(want.iter().any(|v| v.is_infinite()));
            if !rev {
                let mut got = vec![f64::NAN; start.len()];
                run(&mut got, &Operands { inp: &inp, ker: &ker, g, o, dense, fresh: true });
                assert_eq!(got, want, "fresh: input {i:?} kernel {k:?} strides {s:?} {dense:?}");
            }
            let want: Vec<f64> = start.iter().zip(&want).map(|(a, b)| a + b).collect();
            let mut got = start;
            run(&mut got, &Operands { inp: &inp, ker: &ker, g, o, dense, fresh: false });
            assert_eq!(got, want, "input {i:?} kernel {k:?} strides {s:?} {dense:?}");
        }
    }

    /// Ragged panels (nout % MR != 0), tiles across rows and slices, each slice's last tile
    /// (overlapping the one before), a slice smaller than a tile (one element at a time), 3-D,
    /// several batches, several blocks of taps (13 volumes of 11 rows: 7 or 11 volumes per
    /// block), several groups of panels (100 output volumes) and strides (phase volumes, with
    /// inputs that do not divide by the stride).
    #[test]
    fn implicit_tiles_match_naive() {
        // (under Miri, which interprets ~1000x slower: the first four and one plain kernel)
        let cases = [
            ([1, 4, 4], [1, 4, 4], [1; 3], (1, 1, 3)),
            ([1, 12, 6], [1, 11, 2], [1; 3], (2, 13, 7)),
            ([1, 11, 23], [1, 3, 5], [1, 2, 2], (2, 2, 7)),
            ([3, 5, 7], [2, 2, 3], [1; 3], (2, 2, 6)),
            ([1, 9, 11], [1, 3, 4], [1; 3], (1, 2, 5)),
            ([1, 6, 30], [1, 2, 3], [1; 3], (2, 3, 4)),
            ([1, 5, 9], [1, 2, 2], [1; 3], (1, 2, 40)),
            ([1, 10, 25], [1, 2, 4], [1, 3, 3], (1, 3, 5)),
            ([5, 7, 13], [2, 3, 3], [2, 1, 2], (1, 2, 3)),
        ];
        let cases = if cfg!(miri) { &cases[..4] } else { &cases[..] };
        let mut kernels = vec![plain_kernel::<f64, 4, 6, 2>()];
        if !cfg!(miri) {
            kernels.push(plain_kernel::<f64, 1, 8, 3>());
        }
        kernels.extend(f64::kernel());
        for k in kernels {
            check(cases, false, &|out, ops| drive(out, ops, k).unwrap());
        }
    }

    /// Kernel rows of whole and partial vectors, 1..6 output positions per item, an odd
    /// number of kernels (a zero row), 3-D and several batches.
    #[test]
    fn implicit_rev_matches_naive() {
        // (under Miri: the first three and one plain kernel)
        let cases = [
            ([1, 9, 14], [1, 6, 11], [1; 3], (1, 2, 3)),
            ([1, 12, 25], [1, 4, 9], [1, 2, 2], (2, 2, 3)),
            ([3, 6, 12], [2, 4, 9], [1; 3], (2, 2, 5)),
            ([1, 8, 13], [1, 6, 8], [1; 3], (2, 3, 2)),
            ([1, 7, 20], [1, 7, 20], [1; 3], (1, 1, 1)),
            ([4, 7, 30], [2, 3, 10], [2, 3, 3], (1, 2, 2)),
        ];
        let cases = if cfg!(miri) { &cases[..3] } else { &cases[..] };
        let mut kernels: Vec<RevFn<f64>> = vec![plain_rev::<f64, 4>];
        if !cfg!(miri) {
            kernels.push(plain_rev::<f64, 1>);
        }
        kernels.extend(f64::rev_kernel());
        for f in kernels {
            check(cases, true, &|out, ops| rev_drive(out, ops, f).unwrap());
        }
    }

    /// The Rev item loop on plain arrays.
    unsafe fn plain_rev<E: ConvK + Lane, const N: usize>(plan: &RevPlan<E>, lo: usize, hi: usize) {
        // SAFETY: forwarded contract; plain arrays need no instruction set.
        unsafe { rev_items::<Lanes<E, N>>(plan, lo, hi) }
    }

    #[test]
    fn implicit_f32_kernel_matches_plain() {
        let Some(k) = f32::kernel() else { return };
        let g = Geom { i: [1, 20, 37], k: [1, 5, 5], s: [1; 3] };
        let o = [1, 16, 33];
        let (nin, nout) = (3, 7);
        let inp: Vec<f32> = (0..nin * g.in_len()).map(|v| ((v * 7) % 13) as f32 - 6.0).collect();
        let ker: Vec<f32> = (0..nout * nin * 25).map(|v| ((v * 5) % 11) as f32 - 5.0).collect();
        let mut a = vec![1.0f32; nout * 16 * 33];
        let mut b = a.clone();
        let ops = Operands { inp: &inp, ker: &ker, g, o, dense: (1, nin, nout), fresh: false };
        drive(&mut a, &ops, k).unwrap();
        drive(&mut b, &ops, plain_kernel::<f32, 8, 6, 2>()).unwrap();
        assert_eq!(a, b);
    }
}
