//! The Rev jobs' items: `UR` weights x 2 kernels summed in vectors over the kernel rows (see
//! the parent module's doc).

use super::phases;
use crate::exec::parallel::{SharedPtr, for_range};
use crate::kernels::simd::{Lane, Vector};
use crate::ops::conv::{ConvK, Operands};

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
pub(super) unsafe fn rev_items<V: Vector>(plan: &RevPlan<V::E>, lo: usize, hi: usize) {
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

/// Builds the plan of a Rev job and runs its items with `f`, in parallel above the pool's
/// grain.
pub(super) fn rev_drive<E: ConvK>(out: &mut [E], ops: &Operands<E>, f: RevFn<E>) -> crate::core::error::Result<()> {
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
    let mut gp = crate::ops::conv::zeros::<E>(batches * nq * klen)?;
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
