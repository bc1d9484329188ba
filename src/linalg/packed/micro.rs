//! The register tiles: the micro-kernel over packed panels and the store of its sums.

use super::*;

/// The tiles of rows `ic..ic + mb` of a block's `c` by its panels of columns `cols` (`nr`
/// columns each): those rows of `a`, packed at `apack`, summed with the packed `b` block.
///
/// # Safety
/// The CPU has `V`'s instruction set; `blk` describes a block `gemm` built (its packed `b`
/// written), the rows and panels are inside it, `apack` holds the rows packed by `pack_a`
/// (`mb.next_multiple_of(MR) * kb` elements), and no other thread touches these tiles of `c`
/// meanwhile.
#[inline(always)]
pub(super) unsafe fn tiles<V: Vector, const MR: usize>(
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
                // the tile's rows of c are wanted once its sums are done: fetched meanwhile,
                // so that storing the tile does not wait on memory
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
                // are fetched now
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
