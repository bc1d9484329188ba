//! The plane kernels: valid (gather) and full (scatter) passes over contiguous planes.

use super::*;

/// Geometry of a 2-D gather pass: output `or x oc`, input rows of `ic` elements, kernel `kr x kc`,
/// output strides `sy, sx`, tap spacings `dy, dx`.
#[derive(Clone, Copy)]
struct G2 {
    or: usize,
    oc: usize,
    ic: usize,
    kr: usize,
    kc: usize,
    sy: usize,
    sx: usize,
    dy: usize,
    dx: usize,
}

/// One R x CH block of outputs at (y0, x0): sums every pair's taps in registers, then adds rows
/// `ry..R`, columns `rx..CH` of the block to `out` (earlier rows/columns belong to a previous,
/// overlapping block).
///
/// # Safety
/// Every pair's input plane must hold the rows and columns the block reads; the kernel `kr*kc`
/// taps; `out` the block's outputs.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn block<K: ConvK, const R: usize, const CH: usize, const UNIT: bool>(
    out: *mut K,
    g: &G2,
    y0: usize,
    x0: usize,
    ry: usize,
    rx: usize,
    pairs: &[(*const K, *const K)],
) {
    let mut acc = [[K::zero(); CH]; R];
    for &(inp, ker) in pairs {
        for ky in 0..g.kr {
            for kx in 0..g.kc {
                // SAFETY: caller contract (tap ky, kx of the kernel).
                let w = unsafe { *ker.add(ky * g.kc + kx) };
                for (r, a) in acc.iter_mut().enumerate() {
                    // SAFETY: caller contract: row (y0+r)*sy + ky*dy, columns from x0*sx + kx*dx.
                    let row = unsafe { inp.add(((y0 + r) * g.sy + ky * g.dy) * g.ic + x0 * g.sx + kx * g.dx) };
                    for (j, aj) in a.iter_mut().enumerate() {
                        // SAFETY: as above, column j of the block.
                        let v = unsafe { if UNIT { *row.add(j) } else { *row.add(j * g.sx) } };
                        *aj = aj.add(w.mul(v));
                    }
                }
            }
        }
    }
    for (r, a) in acc.iter().enumerate().skip(ry) {
        for (j, &aj) in a.iter().enumerate().skip(rx) {
            // SAFETY: caller contract: the block's outputs lie in `out`.
            unsafe {
                let o = out.add((y0 + r) * g.oc + x0 + j);
                *o = (*o).add(aj);
            }
        }
    }
}

/// All blocks of R output rows (the last block overlapping the previous one).
#[inline(always)]
unsafe fn rows<K: ConvK, const R: usize, const UNIT: bool>(out: *mut K, g: &G2, pairs: &[(*const K, *const K)]) {
    let mut y0 = 0;
    let mut done = 0;
    while done < g.or {
        if y0 + R > g.or {
            y0 = g.or - R;
        }
        let ry = done - y0;
        // SAFETY: forwarded contract; rows y0..y0+R are outputs.
        unsafe {
            if g.oc >= 32 {
                cols::<K, R, 32, UNIT>(out, g, y0, ry, pairs)
            } else if g.oc >= 8 {
                cols::<K, R, 8, UNIT>(out, g, y0, ry, pairs)
            } else {
                cols::<K, R, 1, UNIT>(out, g, y0, ry, pairs)
            }
        }
        done = y0 + R;
        y0 += R;
    }
}

#[inline(always)]
unsafe fn cols<K: ConvK, const R: usize, const CH: usize, const UNIT: bool>(
    out: *mut K,
    g: &G2,
    y0: usize,
    ry: usize,
    pairs: &[(*const K, *const K)],
) {
    let mut x0 = 0;
    let mut done = 0;
    while done < g.oc {
        if x0 + CH > g.oc {
            x0 = g.oc - CH;
        }
        // SAFETY: forwarded contract; columns x0..x0+CH are outputs.
        unsafe { block::<K, R, CH, UNIT>(out, g, y0, x0, ry, done - x0, pairs) };
        done = x0 + CH;
        x0 += CH;
    }
}

/// Lanes of the dot-product path.
const DOT_LANES: usize = 16;

/// Narrow outputs with long kernel rows (weight gradients: a few output columns, a kernel as
/// wide as the image): each output is a sum of dot products along kernel rows, vectorized
/// across `DOT_LANES` independent partial sums.
///
/// # Safety
/// As for `block`; the tap spacing along columns is 1.
#[inline(always)]
unsafe fn dots<K: ConvK>(out: *mut K, g: &G2, pairs: &[(*const K, *const K)]) {
    let n = g.kc / DOT_LANES * DOT_LANES;
    for y in 0..g.or {
        for x in 0..g.oc {
            let mut acc = [K::zero(); DOT_LANES];
            let mut tail = K::zero();
            for &(inp, ker) in pairs {
                for ky in 0..g.kr {
                    // SAFETY: caller contract: input row y*sy + ky*dy from column x*sx holds kc
                    // elements; kernel row ky holds kc taps.
                    let (a, b) = unsafe {
                        (
                            std::slice::from_raw_parts(inp.add((y * g.sy + ky * g.dy) * g.ic + x * g.sx), g.kc),
                            std::slice::from_raw_parts(ker.add(ky * g.kc), g.kc),
                        )
                    };
                    for (ca, cb) in a[..n].chunks_exact(DOT_LANES).zip(b[..n].chunks_exact(DOT_LANES)) {
                        for ((x, &u), &v) in acc.iter_mut().zip(cb).zip(ca) {
                            *x = x.add(u.mul(v));
                        }
                    }
                    for (&u, &v) in b[n..].iter().zip(&a[n..]) {
                        tail = tail.add(u.mul(v));
                    }
                }
            }
            let mut w = DOT_LANES;
            while w > 1 {
                w /= 2;
                for j in 0..w {
                    acc[j] = acc[j].add(acc[j + w]);
                }
            }
            // SAFETY: caller contract: (y, x) is an output.
            unsafe {
                let o = out.add(y * g.oc + x);
                *o = (*o).add(acc[0].add(tail));
            }
        }
    }
}

#[inline(always)]
#[allow(clippy::extra_unused_type_parameters)] // `I`: the marker `multiversion!` passes
unsafe fn gather_body<I, K: ConvK>(out: *mut K, g: &G2, pairs: &[(*const K, *const K)]) {
    if g.dx == 1 && g.oc < 8 && g.kc >= 2 * DOT_LANES {
        // SAFETY: forwarded contract.
        return unsafe { dots(out, g, pairs) };
    }
    // SAFETY: forwarded contract.
    unsafe {
        match (g.or >= 4, g.sx == 1) {
            (true, true) => rows::<K, 4, true>(out, g, pairs),
            (true, false) => rows::<K, 4, false>(out, g, pairs),
            (false, true) => rows::<K, 1, true>(out, g, pairs),
            (false, false) => rows::<K, 1, false>(out, g, pairs),
        }
    }
}
multiversion!(fn gather<K: ConvK>(out: *mut K, g: &G2, pairs: &[(*const K, *const K)]) => gather_body);

/// Scatter form: `out[(y*sy + ky)*oc + x*sx + kx] += w[ky][kx] * inp[y][x]`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
#[allow(clippy::extra_unused_type_parameters)] // `I`: the marker `multiversion!` passes
unsafe fn scatter_body<I, K: ConvK>(
    out: &mut [K],
    oc: usize,
    inp: &[K],
    ir: usize,
    ic: usize,
    ker: &[K],
    kr: usize,
    kc: usize,
    sy: usize,
    sx: usize,
) {
    for y in 0..ir {
        let irow = &inp[y * ic..(y + 1) * ic];
        for ky in 0..kr {
            let obase = (y * sy + ky) * oc;
            for kx in 0..kc {
                let w = ker[ky * kc + kx];
                if sx == 1 {
                    let orow = &mut out[obase + kx..obase + kx + ic];
                    for (o, &v) in orow.iter_mut().zip(irow) {
                        *o = o.add(w.mul(v));
                    }
                } else {
                    let orow = &mut out[obase + kx..obase + kx + (ic - 1) * sx + 1];
                    for (o, &v) in orow.iter_mut().step_by(sx).zip(irow) {
                        *o = o.add(w.mul(v));
                    }
                }
            }
        }
    }
}
multiversion!(fn scatter<K: ConvK>(out: &mut [K], oc: usize, inp: &[K], ir: usize, ic: usize, ker: &[K], kr: usize, kc: usize, sy: usize, sx: usize) => scatter_body);

/// `out` (one output volume) += the contributions of `pairs` (input volume, prepared kernel
/// volume) under `kind`.
pub(super) fn plane<K: ConvK>(out: &mut [K], kind: Kind, g: &Geom, o: [usize; 3], pairs: &[(&[K], &[K])]) {
    let [it, ir, ic] = g.i;
    let [kt, kr, kc] = g.k;
    let [st, sr, sc] = g.s;
    let [ot, or, oc] = o;
    let (ip, kp, op) = (ir * ic, kr * kc, or * oc);
    debug_assert_eq!(out.len(), ot * op);
    match kind {
        Kind::Valid | Kind::Rev => {
            let g2 = if kind == Kind::Valid {
                G2 { or, oc, ic, kr, kc, sy: sr, sx: sc, dy: 1, dx: 1 }
            } else {
                G2 { or, oc, ic, kr, kc, sy: 1, sx: 1, dy: sr, dx: sc }
            };
            let mut list: Vec<(*const K, *const K)> = Vec::with_capacity(pairs.len() * kt);
            for z in 0..ot {
                list.clear();
                for &(inp, ker) in pairs {
                    debug_assert!(inp.len() == it * ip && ker.len() == kt * kp);
                    for kz in 0..kt {
                        let iz = if kind == Kind::Valid { z * st + kz } else { z + kz * st };
                        list.push((inp[iz * ip..(iz + 1) * ip].as_ptr(), ker[kz * kp..(kz + 1) * kp].as_ptr()));
                    }
                }
                let dst = &mut out[z * op..(z + 1) * op];
                // SAFETY: every block reads input rows (y*sy + ky*dy) < ir and columns
                // (x*sx + kx*dx) < ic of a plane of ir*ic elements (that is how or/oc were
                // derived from the sizes), kernel taps < kr*kc, and writes outputs < or*oc.
                unsafe { gather::<K>(dst.as_mut_ptr(), &g2, &list) };
            }
        }
        Kind::Full => {
            for &(inp, ker) in pairs {
                for z in 0..it {
                    for kz in 0..kt {
                        let oz = z * st + kz;
                        let dst = &mut out[oz * op..(oz + 1) * op];
                        // SAFETY: the body only indexes slices (bounds-checked).
                        unsafe {
                            scatter::<K>(
                                dst,
                                oc,
                                &inp[z * ip..(z + 1) * ip],
                                ir,
                                ic,
                                &ker[kz * kp..(kz + 1) * kp],
                                kr,
                                kc,
                                sr,
                                sc,
                            )
                        };
                    }
                }
            }
        }
    }
}

/// Multiply-adds per output volume (for the parallel threshold).
pub(super) fn macs(kind: Kind, g: &Geom, o: [usize; 3]) -> usize {
    match kind {
        Kind::Full => g.in_len().saturating_mul(g.k_len()),
        _ => o.iter().product::<usize>().saturating_mul(g.k_len()),
    }
}
