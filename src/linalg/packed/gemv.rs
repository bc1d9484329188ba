//! Matrix-vector products: row dots and column passes.

use super::*;

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
pub(super) unsafe fn dots<V: Vector>(
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
/// of f64). Each pass then reads 16 KB runs of its columns: the hardware's fetching ahead
/// starts over at every run, so long runs keep it going (shorter runs of 4 KB left it idle a
/// good part of the time), while the sums still fit in L1 beside the columns' lines.
const COL_BYTES: usize = 16 << 10;
/// Columns of `a` a pass of `columns` adds at once.
const COL_STEP: usize = 4;
/// Rows of `y` a threaded `columns` hands out at once: a multiple of every lane count, so that
/// only the matrix's last rows are part vectors, however the rows are split.
const COL_UNIT: usize = 128;

/// The rows of `y` each piece of a threaded `columns` over `m` rows takes: one piece per
/// thread (a multiple of `COL_UNIT`). Smaller pieces read shorter runs of each column and
/// start the hardware's fetching ahead over more often (see `COL_BYTES`).
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
pub(super) unsafe fn columns<V: Vector>(
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
