//! The device half of padding and upsampling: every layer is the one table map of
//! `kernels/nn_sample.cuh` (`crate::cuda::nn::sample`), one thread per output element. The
//! tables are the host's index maps and taps, one CSR table per dimension (padding and nearest
//! upsampling: one entry of weight 1 per output position; linear upsampling: the two taps,
//! those of weight 0 included, as the host adds them); the backward passes take the transposed
//! tables, whose rows list the (output, tap) pairs that read an input position in ascending
//! order, so each gradient element is summed by one thread in the host's order (no atomics) and
//! with the host's products: the results are the host's, bit for bit, in f32 and f64 (Half:
//! computed in f32, rounded once).

use super::{Geom, Maps, Taps};
use crate::core::error::{Error, Result};
use crate::core::tensor::{Tensor, View};
use crate::cuda::launch::device_base;
use crate::cuda::nn::sample::{COPY, THCSample, launch};
use crate::nn::NnElem;
use crate::nn::conv::device::{dense, dev_of, finish, target};
use crate::ops;
use crate::ops::num::Num;

/// One dimension's table: output position `o` reads input positions `col[j]` with weights
/// `w[j]` for `j` in `rp[o]..rp[o + 1]`.
pub(crate) struct Table<R> {
    rp: Vec<i32>,
    col: Vec<i32>,
    w: Vec<R>,
}

impl<R: Copy> Table<R> {
    /// One entry of weight `one` per output position (an index map).
    pub fn from_map(m: &[usize], one: R) -> Self {
        Table { rp: (0..=m.len() as i32).collect(), col: m.iter().map(|&v| v as i32).collect(), w: vec![one; m.len()] }
    }

    /// Row `c` of `n` sums positions `c - before ..= c + after` that lie in `0..n`, weight `one`.
    pub fn window(n: usize, before: usize, after: usize, one: R) -> Self {
        let mut tab = Table { rp: vec![0], col: Vec::new(), w: Vec::new() };
        for c in 0..n {
            let (lo, hi) = (c.saturating_sub(before), (c + after).min(n.saturating_sub(1)));
            tab.col.extend((lo..=hi).map(|v| v as i32));
            tab.w.extend(std::iter::repeat_n(one, hi + 1 - lo));
            tab.rp.push(tab.col.len() as i32);
        }
        tab
    }

    /// The taps of each output position (one where the dimension is not interpolated).
    pub fn from_taps(t: &Taps<R>, unit: bool) -> Self {
        let k = if unit { 1 } else { 2 };
        let mut tab = Table { rp: vec![0], col: Vec::new(), w: Vec::new() };
        for o in 0..t.i0.len() {
            tab.col.extend([t.i0[o], t.i1[o]].iter().take(k).map(|&v| v as i32));
            tab.w.extend([t.l0[o], t.l1[o]].iter().take(k));
            tab.rp.push(tab.col.len() as i32);
        }
        tab
    }

    /// The adjoint's table over `n_in` input positions: row `i` lists the entries that read
    /// position `i`, in the order of (output position, tap) (a stable counting sort).
    pub fn transposed(&self, n_in: usize) -> Self {
        let mut rp = vec![0i32; n_in + 1];
        for &c in &self.col {
            rp[c as usize + 1] += 1;
        }
        for i in 0..n_in {
            rp[i + 1] += rp[i];
        }
        let mut next: Vec<i32> = rp[..n_in].to_vec();
        let (mut col, mut w) = (vec![0i32; self.col.len()], self.w.clone());
        for o in 0..self.rp.len() - 1 {
            for j in self.rp[o] as usize..self.rp[o + 1] as usize {
                let slot = &mut next[self.col[j] as usize];
                col[*slot as usize] = o as i32;
                w[*slot as usize] = self.w[j];
                *slot += 1;
            }
        }
        Table { rp, col, w }
    }
}

/// The tables of an index-map layer (padding, nearest upsampling).
pub(super) fn map_tables<R: Copy>(m: &Maps, one: R) -> [Table<R>; 3] {
    [Table::from_map(&m[0], one), Table::from_map(&m[1], one), Table::from_map(&m[2], one)]
}

/// The transposed tables, for the adjoint of a map from input sizes `g.i`.
pub(super) fn adjoint<R: Copy>(t: &[Table<R>; 3], g: &Geom) -> [Table<R>; 3] {
    [t[0].transposed(g.i[0]), t[1].transposed(g.i[1]), t[2].transposed(g.i[2])]
}

/// A size as the kernel's `int`, or an error naming the layer's limit.
fn small(v: usize) -> Result<i32> {
    i32::try_from(v).map_err(|_| Error::invalid(format!("nn sample on the device: size {v} exceeds 2^31 - 1")))
}

/// `out` (resized to `out_sizes`) = the map of `x` (`planes` planes of sizes `i`) to planes of
/// sizes `o` by `tabs`; `mode`: the kernel's `COPY` bit or 0; `adjoint`: the backward passes'
/// products.
#[allow(clippy::too_many_arguments)] // the map's parts
fn run<T: NnElem>(
    x: &View<T>,
    out: &Tensor<T>,
    out_sizes: &[i64],
    (i, o): ([usize; 3], [usize; 3]),
    tabs: &[Table<T::R>; 3],
    mode: i32,
    adjoint: bool,
) -> Result<()> {
    let dev = dev_of(x)?;
    let mut p = THCSample { mode, ..Default::default() };
    for d in 0..3 {
        p.i[d] = small(i[d])?;
        p.o[d] = small(o[d])?;
        if tabs[d].rp.len() != o[d] + 1 || tabs[d].col.iter().any(|&c| c < 0 || c as usize >= i[d]) {
            return Err(Error::internal("nn sample: table out of range"));
        }
    }
    let xd = dense(x)?;
    let (ip, op): (usize, usize) = (i.iter().product(), o.iter().product());
    let planes = out_sizes.iter().product::<i64>() as usize / op.max(1);
    if planes * op != out_sizes.iter().product::<i64>() as usize || xd.numel() != planes * ip {
        return Err(Error::internal("nn sample: operand sizes"));
    }
    // the kernel indexes within a plane in int
    small(ip)?;
    small(op)?;
    let outv = ops::resize_out(out, out_sizes)?;
    p.n = outv.numel() as i64;
    if p.n == 0 {
        return Ok(());
    }
    // the tables in two device buffers: the int row pointers and positions, the weights
    let mut ints: Vec<i32> = Vec::new();
    let mut ws: Vec<T::R> = Vec::new();
    let mut at = [[0usize; 3]; 3];
    for (d, t) in tabs.iter().enumerate() {
        at[d] = [ints.len(), ints.len() + t.rp.len(), ws.len()];
        ints.extend(&t.rp);
        ints.extend(&t.col);
        ws.extend(&t.w);
    }
    let idev = ops::temp_like::<i32, T>(x, &[ints.len() as i64])?;
    ops::copy::copy(&idev, &View::from_slice(&ints, &[ints.len() as i64])?)?;
    let wdev = ops::temp_like::<T::R, T>(x, &[ws.len().max(1) as i64])?;
    if !ws.is_empty() {
        ops::copy::copy(&wdev.narrow(0, 0, ws.len() as i64)?, &View::from_slice(&ws, &[ws.len() as i64])?)?;
    }
    for (d, [r, c, w]) in at.into_iter().enumerate() {
        (p.rp[d], p.col[d], p.w[d]) = (small(r)?, small(c)?, small(w)?);
    }
    (p.ints, p.wts) = (device_base(&idev)?, device_base(&wdev)?);
    let dst = target(&outv, &[&xd])?;
    p.x = device_base(&xd)?;
    p.y = device_base(&dst.0)?;
    let narrow = xd.numel() <= i32::MAX as usize && outv.numel() <= i32::MAX as usize;
    // SAFETY: `xd` is contiguous on `dev` with `planes * i` elements and `outv` holds `planes *
    // o` (checked above, each plane within i32), `dst` a contiguous target of `outv`'s elements
    // that shares no storage with `xd`; the tables were checked above (o[d] + 1 row pointers,
    // positions below i[d]; the pointers are built nondecreasing over the entries), their
    // offsets are those of `ints` / `ws`, and they live in `idev` / `wdev`,
    // whose blocks the caching allocator gives only to later work on this stream once freed.
    unsafe { launch::<T>(dev, p, adjoint, narrow)? };
    finish(&outv, dst)
}

/// A padding or nearest upsampling's forward: `out[p, z, y, x] = x[p, m0[z], m1[y], m2[x]]`.
pub(super) fn gather<T: NnElem>(x: &View<T>, out: &Tensor<T>, out_sizes: &[i64], g: &Geom, m: &Maps) -> Result<()> {
    run(x, out, out_sizes, (g.i, g.o), &map_tables(m, T::R::one()), COPY, false)
}

/// Its adjoint: `gi` (resized to `in_sizes`) receives each `go` element added at its source.
pub(super) fn scatter<T: NnElem>(go: &View<T>, gi: &Tensor<T>, in_sizes: &[i64], g: &Geom, m: &Maps) -> Result<()> {
    let t = map_tables(m, T::R::one());
    run(go, gi, in_sizes, (g.o, g.i), &adjoint(&t, g), 0, true)
}

/// The tables of a linear upsampling (`unit_depth`: bilinear).
fn linear_tables<T: NnElem>(g: &Geom, unit_depth: bool) -> [Table<T::R>; 3] {
    let l = super::Linear::<T::R>::new(g, unit_depth);
    let [d, h, w] = &l.t;
    [Table::from_taps(d, unit_depth), Table::from_taps(h, false), Table::from_taps(w, false)]
}

/// Linear upsampling's forward.
pub(super) fn linear<T: NnElem>(x: &View<T>, out: &Tensor<T>, out_sizes: &[i64], g: &Geom, unit: bool) -> Result<()> {
    run(x, out, out_sizes, (g.i, g.o), &linear_tables::<T>(g, unit), 0, false)
}

/// Linear upsampling's adjoint.
pub(super) fn linear_back<T: NnElem>(
    go: &View<T>,
    gi: &Tensor<T>,
    in_sizes: &[i64],
    g: &Geom,
    unit: bool,
) -> Result<()> {
    run(go, gi, in_sizes, (g.o, g.i), &adjoint(&linear_tables::<T>(g, unit), g), 0, true)
}

/// `out` (resized to `(planes, n, inner)`) = the map of `x` (`planes x n x inner` elements) by
/// `tab` along its middle dimension: `out[p, c, i] = sum_{j in row c} w[j] * x[p, col[j], i]`,
/// summed in the row's order (SpatialCrossMapLRN's window sums).
pub(crate) fn along<T: NnElem>(
    x: &View<T>,
    out: &Tensor<T>,
    (planes, n, inner): (usize, usize, usize),
    tab: Table<T::R>,
) -> Result<()> {
    let one = T::R::one();
    let tabs = [tab, Table::from_map(&[0], one), Table::from_map(&(0..inner).collect::<Vec<_>>(), one)];
    let sizes = [planes as i64, n as i64, inner as i64];
    run(x, out, &sizes, ([n, 1, inner], [n, 1, inner]), &tabs, 0, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transposed_tables_list_readers_in_order() {
        // two taps per output: 0 <- (0, 1), 1 <- (1, 1), 2 <- (1, 2) over 3 inputs
        let t = Table { rp: vec![0, 2, 4, 6], col: vec![0, 1, 1, 1, 1, 2], w: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0] };
        let a = t.transposed(3);
        assert_eq!(a.rp, vec![0, 1, 5, 6]);
        assert_eq!(a.col, vec![0, 0, 1, 1, 2, 2]);
        assert_eq!(a.w, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    }

    #[test]
    fn windows_clip_at_the_edges() {
        let t = Table::window(4, 1, 2, 1.0f32);
        assert_eq!(t.rp, vec![0, 3, 7, 10, 12]);
        assert_eq!(t.col, vec![0, 1, 2, 0, 1, 2, 3, 1, 2, 3, 2, 3]);
        let a = t.transposed(4);
        // position 0 is read by outputs 0 and 1, position 3 by outputs 1, 2, 3
        assert_eq!(&a.col[..2], &[0, 1]);
        assert_eq!(&a.col[a.rp[3] as usize..], &[1, 2, 3]);
    }
}
