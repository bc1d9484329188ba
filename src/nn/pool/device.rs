//! The device half of the poolings (THCUNN), after the same checks as on the host:
//! - the forward passes run `kernels/nn_pool.cuh`'s kernels (one thread per output element)
//!   over the host's windows, uploaded as small per-axis tables (start, count, divisor; per
//!   plane for fractional pooling), reading the input through its strides in place;
//! - the average backward passes (and FeatureLPPooling's) run one thread per gradInput element
//!   that sums, in ascending output order, the terms of the outputs whose windows hold it (an
//!   inverse table per axis gives that output range), the host's order: no atomics;
//! - the max backward passes are a zero fill and the device's `scatterAdd` of gradOutput at the
//!   indices on `[planes, plane length]` views (repeated indices add in position order, the
//!   host's order); unpooling is a zero fill and `scatter` (the last of repeated indices wins,
//!   as on the host), its backward a `gather`.
//!
//! User-given indices are range-checked on the device (min and max reductions) before anything
//! is written; a bad one is copied back to word the host's error on the same argument.

use super::{Planes, Windows};
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::cuda::launch::device_base;
use crate::cuda::nn::pool::{THNNPool, launch};
use crate::cuda::runtime;
use crate::nn::activation::paired;
use crate::nn::{NnElem, check};
use crate::ops;
use crate::ops::index;

/// How an operand's dimensions map to the kernels' (sample, plane, t, h, w).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Layout {
    /// `[N x] C x [T x] H x W`: `nd` pooled dimensions after an optional batch and the planes.
    Planes { nd: usize, batched: bool },
    /// `[N x] L x C`: planes along the last dimension, pooled along the one before
    /// (TemporalMaxPooling's frames).
    Lines,
    /// A contiguous `[N x] L x rest...` with the pooled dimension at `fd`, the planes being
    /// the positions of the rest (FeatureLPPooling's features).
    Dense { fd: usize },
}

impl Layout {
    pub(crate) fn of(pl: &Planes) -> Layout {
        Layout::Planes { nd: pl.nd, batched: pl.batched }
    }

    /// The five strides of a view with this layout.
    fn strides(self, v: &View<impl crate::Scalar>) -> [i64; 5] {
        let s = &v.strides;
        match self {
            Layout::Planes { nd, batched } => {
                let b = usize::from(batched);
                let sample = if batched { s[0] } else { 0 };
                if nd == 2 {
                    [sample, s[b], 0, s[b + 1], s[b + 2]]
                } else {
                    [sample, s[b], s[b + 1], s[b + 2], s[b + 3]]
                }
            }
            Layout::Lines if s.len() == 2 => [0, s[1], 0, 0, s[0]],
            Layout::Lines => [s[0], s[2], 0, 0, s[1]],
            Layout::Dense { fd } => {
                let c: i64 = v.sizes[fd + 1..].iter().product();
                [v.sizes[fd] * c, 1, 0, 0, c]
            }
        }
    }
}

/// The kernels' window tables, appended section by section.
#[derive(Default)]
struct Tab(Vec<i64>);

impl Tab {
    /// Appends `xs`; their offset in the table.
    fn push(&mut self, xs: impl IntoIterator<Item = usize>) -> i64 {
        let at = self.0.len() as i64;
        self.0.extend(xs.into_iter().map(|x| x as i64));
        at
    }

    /// Appends the starts and counts of each axis's windows (into `p.ts`, `p.tc`).
    fn windows(&mut self, p: &mut THNNPool, w: &[Windows; 3]) {
        for (a, wa) in w.iter().enumerate() {
            p.ts[a] = self.push(wa.start.iter().copied());
            p.tc[a] = self.push(wa.count.iter().copied());
        }
    }

    /// Appends the divisors per output of each axis (into `p.td`).
    fn divisors(&mut self, p: &mut THNNPool, d: &[Vec<usize>; 3]) {
        for (a, da) in d.iter().enumerate() {
            p.td[a] = self.push(da.iter().copied());
        }
    }

    /// Appends, for each input position of each axis, the first and one past the last output
    /// whose window holds it (into `p.tlo`, `p.thi`). The windows must be unit-step with
    /// non-decreasing starts and ends, so the outputs holding a position are consecutive.
    fn covers(&mut self, p: &mut THNNPool, w: &[Windows; 3], isz: [usize; 3]) {
        for (a, wa) in w.iter().enumerate() {
            let (lo, hi) = cover(wa, isz[a]);
            p.tlo[a] = self.push(lo);
            p.thi[a] = self.push(hi);
        }
    }
}

/// The output range `[lo[x], hi[x])` of the windows `w` (unit step, starts and ends
/// non-decreasing) holding each of the `n` input positions `x`.
fn cover(w: &Windows, n: usize) -> (Vec<usize>, Vec<usize>) {
    let m = w.len();
    let (mut lo, mut hi) = (vec![0; n], vec![0; n]);
    let (mut l, mut h) = (0, 0);
    for x in 0..n {
        while l < m && w.start[l] + w.count[l] <= x {
            l += 1;
        }
        while h < m && w.start[h] <= x {
            h += 1;
        }
        lo[x] = l;
        hi[x] = h.max(l);
    }
    (lo, hi)
}

/// `v` contiguous: itself, or a device copy.
pub(crate) fn dense<T: NnElem>(v: &View<T>) -> Result<View<T>> {
    if v.is_contiguous() {
        return Ok(v.clone());
    }
    let c = ops::temp_like(v, &v.sizes)?;
    ops::copy::copy(&c, v)?;
    Ok(c)
}

/// The largest element offset of `v` (0 when empty).
fn reach<T: crate::Scalar>(v: &View<T>) -> i64 {
    v.sizes.iter().zip(&v.strides).map(|(&n, &s)| (n - 1).max(0).saturating_mul(s.abs())).fold(0, i64::saturating_add)
}

/// An output resized to `sizes`, and where the kernel writes it: itself, or a contiguous
/// temporary when it is strided or shares memory with one of `inputs`.
struct Written<U: crate::Scalar> {
    out: View<U>,
    at: View<U>,
}

impl<U: crate::Scalar> Written<U> {
    fn new<T: crate::Scalar>(t: &Tensor<U>, sizes: &[i64], like: &View<T>, inputs: &[&View<U>]) -> Result<Self> {
        let out = ops::resize_out(t, sizes)?;
        let at = if out.is_contiguous() && !inputs.iter().any(|v| v.same_storage(&out)) {
            out.clone()
        } else {
            ops::temp_like::<U, T>(like, sizes)?
        };
        Ok(Written { out, at })
    }

    fn finish(self) -> Result<()> {
        if self.at.same_storage(&self.out) { Ok(()) } else { ops::copy::copy(&self.out, &self.at) }
    }
}

/// Runs kernel `op` with `p` (its sizes, strides, table offsets and addresses but the table's
/// set) and the table `tab`, on the device of `like`; `views` are every operand the kernel
/// touches (for the i32 / i64 choice).
fn run<T: NnElem>(like: &View<T>, op: &str, mut p: THNNPool, tab: &Tab, views: &[i64]) -> Result<()> {
    if p.n == 0 {
        return Ok(());
    }
    let crate::core::allocator::Device::Cuda(dev) = like.device() else {
        return Err(crate::core::error::Error::internal("nn::pool::device on host"));
    };
    let len = tab.0.len() as i64;
    let t = ops::temp_like::<i64, T>(like, &[len])?;
    ops::copy::copy(&t, &View::from_slice(&tab.0, &[len])?)?;
    p.tab = device_base(&t)?;
    let lim = i32::MAX as i64;
    let narrow = p.n <= lim && tab.0.len() as i64 <= lim && views.iter().all(|&r| r < lim);
    let d = runtime::device(dev)?;
    // SAFETY: every address comes from `device_base` of a view on this device whose strides
    // and sizes are the ones in `p` (the checks before made the tables' windows lie inside the
    // input planes and the covering ranges inside the outputs); written operands are fresh or
    // private (`Written`), so nothing written overlaps what is read; the table lives until the
    // call returns (the launch is ordered on the device's stream before its release).
    unsafe { launch::<T>(d, op, p, narrow) }
}

/// The pooled sizes of `pl` as the kernels see them: (samples, planes per sample, plane sizes).
fn geo(p: &mut THNNPool, pl: &Planes, o: [usize; 3]) {
    p.c = pl.c as i64;
    p.i = pl.size.map(|x| x as i64);
    p.o = o.map(|x| x as i64);
}

/// A max pooling's forward: `output` and `indices` (resized to `shape`) get each window's
/// first max and its offset in the input plane. `w` are the windows per axis (or, with
/// `per_plane`, the windows of each plane in plane order), `step` their dilation.
#[allow(clippy::too_many_arguments)] // the geometry's parts
pub(crate) fn max_forward<T: NnElem>(
    input: &View<T>,
    output: &Tensor<T>,
    indices: &Tensor<i64>,
    layout: Layout,
    pl: &Planes,
    shape: &[i64],
    w: &[[Windows; 3]],
    step: [usize; 3],
) -> Result<()> {
    let o = [w[0][0].len(), w[0][1].len(), w[0][2].len()];
    let mut p = THNNPool::default();
    geo(&mut p, pl, o);
    let mut tab = Tab::default();
    tab.windows(&mut p, &w[0]);
    p.ps = tab.0.len() as i64;
    if w.len() > 1 {
        for wp in &w[1..] {
            let mut q = THNNPool::default();
            tab.windows(&mut q, wp);
        }
    } else {
        p.ps = 0;
    }
    p.step = step.map(|x| x as i64);
    let y = Written::new(output, shape, input, &[input])?;
    let ind = Written::new(indices, shape, input, &[])?;
    p.n = y.at.numel() as i64;
    p.src = device_base(input)?;
    p.dst = device_base(&y.at)?;
    p.ind = device_base(&ind.at)?;
    p.ss = layout.strides(input);
    p.ds = layout.strides(&y.at);
    let ilen = pl.len() as i64;
    run(input, "poolMax", p, &tab, &[reach(input), reach(&y.at), ilen])?;
    y.finish()?;
    ind.finish()
}

/// An average pooling's forward (`op` "poolAvg") or FeatureLPPooling's ("poolLp", `power`):
/// `output` (resized to `shape`) gets each window's mean (over the product of the axes'
/// divisors `div`) or Lp norm.
#[allow(clippy::too_many_arguments)] // the geometry's parts
pub(crate) fn avg_forward<T: NnElem>(
    op: &str,
    input: &View<T>,
    output: &Tensor<T>,
    layout: Layout,
    pl: &Planes,
    shape: &[i64],
    w: &[Windows; 3],
    div: &[Vec<usize>; 3],
    power: f64,
) -> Result<()> {
    let mut p = THNNPool::default();
    geo(&mut p, pl, [w[0].len(), w[1].len(), w[2].len()]);
    let mut tab = Tab::default();
    tab.windows(&mut p, w);
    tab.divisors(&mut p, div);
    p.power = power;
    let y = Written::new(output, shape, input, &[input])?;
    p.n = y.at.numel() as i64;
    p.src = device_base(input)?;
    p.dst = device_base(&y.at)?;
    p.ss = layout.strides(input);
    p.ds = layout.strides(&y.at);
    run(input, op, p, &tab, &[reach(input), reach(&y.at)])?;
    y.finish()
}

/// An average pooling's backward (`op` "poolAvgBack": gradOutput over the divisors `div`) or
/// FeatureLPPooling's ("poolLpBack", with the forward's `lp` = (input, output) laid out as
/// gradInput and gradOutput): `grad_input` (resized to `isizes`) gets, per element, the terms
/// of the outputs whose windows `w` hold it, in ascending output order.
#[allow(clippy::too_many_arguments)] // the geometry's parts
pub(crate) fn avg_backward<T: NnElem>(
    op: &str,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    isizes: &[i64],
    layout: Layout,
    pl: &Planes,
    w: &[Windows; 3],
    div: &[Vec<usize>; 3],
    lp: Option<(&View<T>, &View<T>, f64)>,
) -> Result<()> {
    let mut p = THNNPool::default();
    geo(&mut p, pl, [w[0].len(), w[1].len(), w[2].len()]);
    let mut tab = Tab::default();
    tab.divisors(&mut p, div);
    tab.covers(&mut p, w, pl.size);
    let mut inputs = vec![grad_output];
    inputs.extend(lp.iter().flat_map(|(x, y, _)| [*x, *y]));
    let g = Written::new(grad_input, isizes, grad_output, &inputs)?;
    p.n = g.at.numel() as i64;
    p.src = device_base(grad_output)?;
    p.dst = device_base(&g.at)?;
    p.ss = layout.strides(grad_output);
    p.ds = layout.strides(&g.at);
    let mut reaches = vec![reach(grad_output), reach(&g.at)];
    if let Some((x, y, power)) = lp {
        // the kernel reads them at gradInput's and gradOutput's offsets
        if layout.strides(x) != p.ds || layout.strides(y) != p.ss {
            return Err(crate::core::error::Error::internal("poolLpBack: operand layouts differ"));
        }
        p.aux = device_base(y)?;
        p.aux2 = device_base(x)?;
        p.power = power;
        reaches.extend([reach(x), reach(y)]);
    }
    run(grad_output, op, p, &tab, &reaches)?;
    g.finish()
}

/// Checks on the device that every value of `idx` lies in `[0, hi)`; a failure copies the
/// values back to word the host's error (argument `arg`, `name`).
pub(crate) fn check_indices(idx: &View<i64>, arg: u32, name: &str, hi: i64) -> Result<()> {
    if idx.numel() == 0 {
        return Ok(());
    }
    let (lo, top) = (ops::reduce::minall(idx)?, ops::reduce::maxall(idx)?);
    if lo >= 0 && top < hi {
        return Ok(());
    }
    check::indices(&ops::copy::values(idx)?, arg, name, 0, hi, None)
}

/// `t` resized to `sizes` and set to zero, with `f` run on a `[rows, len]` view of it (a
/// contiguous temporary when `t` is strided or shares memory with `inputs`, copied back).
fn zero_then<T: NnElem>(
    t: &Tensor<T>,
    sizes: &[i64],
    like: &View<T>,
    inputs: &[&View<T>],
    rows_len: [i64; 2],
    f: impl FnOnce(&View<T>) -> Result<()>,
) -> Result<()> {
    let g = Written::new(t, sizes, like, inputs)?;
    ops::arith::fill(&Tensor::new(g.at.clone()), T::zero())?;
    if g.at.numel() > 0 {
        f(&g.at.reshape_view(&rows_len)?)?;
    }
    g.finish()
}

/// A max pooling's backward: `grad_input` (shaped like `input`) is zero but for
/// `gradInput[plane][indices[o]] += gradOutput[o]`, in output order. `indices` are checked
/// (argument `ind_arg`) before anything is written.
pub(crate) fn scatter_backward<T: NnElem>(
    input: &View<T>,
    pl: &Planes,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    indices: &View<i64>,
    olen: usize,
    ind_arg: u32,
) -> Result<()> {
    check_indices(indices, ind_arg, "indices", pl.len() as i64)?;
    let planes = (pl.n * pl.c) as i64;
    let rows = [planes, olen as i64];
    let go = paired(grad_output.clone(), &rows)?;
    let ind = paired(indices.clone(), &rows)?;
    zero_then(grad_input, &input.sizes, input, &[&go], [planes, pl.len() as i64], |g| {
        if olen > 0 { scatter_add_r(g, &ind, &go) } else { Ok(()) }
    })
}

/// `g[.., ind[.., j, ..], ..] += src[.., j, ..]` along dimension 1 of `g` (zero) in the compute
/// type: Half's terms are summed in f32 and rounded once, as the host's Float layer does.
fn scatter_add_r<T: NnElem>(g: &View<T>, ind: &View<i64>, src: &View<T>) -> Result<()> {
    if let (Some(gr), Some(sr)) = (
        (g as &dyn std::any::Any).downcast_ref::<View<T::R>>(),
        (src as &dyn std::any::Any).downcast_ref::<View<T::R>>(),
    ) {
        return index::scatter_add(gr, 1, ind, sr);
    }
    let gr = ops::temp_like::<T::R, T>(g, &g.sizes)?;
    ops::arith::fill(&Tensor::new(gr.clone()), <T::R as crate::ops::num::Num>::zero())?;
    let sr = ops::temp_like::<T::R, T>(src, &src.sizes)?;
    ops::copy::copy(&sr, src)?;
    index::scatter_add(&gr, 1, ind, &sr)?;
    ops::copy::copy(g, &gr)
}

/// Max unpooling: `output` (resized to `shape`, `olen` elements a plane) is zero but for
/// `output[plane][indices[i]] = input[plane][i]` (indices checked by the caller).
pub(crate) fn unpool_forward<T: NnElem>(
    input: &View<T>,
    output: &Tensor<T>,
    indices: &View<i64>,
    pl: &Planes,
    shape: &[i64],
    olen: usize,
) -> Result<()> {
    let planes = (pl.n * pl.c) as i64;
    let rows = [planes, pl.len() as i64];
    let x = paired(input.clone(), &rows)?;
    let ind = paired(indices.clone(), &rows)?;
    zero_then(output, shape, input, &[&x], [planes, olen as i64], |o| {
        if pl.len() > 0 { index::scatter(o, 1, &ind, &x) } else { Ok(()) }
    })
}

/// Max unpooling's backward: `gradInput[plane][i] = gradOutput[plane][indices[i]]` (indices
/// checked by the caller).
pub(crate) fn unpool_backward<T: NnElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    indices: &View<i64>,
    pl: &Planes,
    olen: usize,
) -> Result<()> {
    let planes = (pl.n * pl.c) as i64;
    let go = paired(grad_output.clone(), &[planes, olen as i64])?;
    let ind = paired(indices.clone(), &[planes, pl.len() as i64])?;
    let g = Written::new(grad_input, &input.sizes, input, &[&go])?;
    if g.at.numel() > 0 {
        let at = Tensor::new(g.at.reshape_view(&[planes, pl.len() as i64])?);
        index::gather(&at, &go, 1, &ind)?;
    }
    g.finish()
}

/// TemporalMaxPooling's backward on `[n, T, F]` views (`shape3`: the input's, `oshape3`: the
/// output's): `gradInput[b][indices[b][t][f]][f] += gradOutput[b][t][f]`, in frame order.
pub(crate) fn temporal_backward<T: NnElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    indices: &View<i64>,
    shape3: [i64; 3],
    oshape3: [i64; 3],
) -> Result<()> {
    check_indices(indices, 5, "indices", shape3[1])?;
    let go = paired(grad_output.clone(), &oshape3)?;
    let ind = paired(indices.clone(), &oshape3)?;
    let g = Written::new(grad_input, &input.sizes, input, &[&go])?;
    ops::arith::fill(&Tensor::new(g.at.clone()), T::zero())?;
    if g.at.numel() > 0 && go.numel() > 0 {
        scatter_add_r(&g.at.reshape_view(&shape3)?, &ind, &go)?;
    }
    g.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cover_gives_the_windows_holding_each_position() {
        // windows [0, 2), [1, 4), [3, 4) over 5 positions (4 is in none)
        let w = Windows { start: vec![0, 1, 3], count: vec![2, 3, 1], step: 1 };
        let (lo, hi) = cover(&w, 5);
        assert_eq!((lo, hi), (vec![0, 0, 1, 1, 3], vec![1, 2, 2, 3, 3]));
    }
}
