//! Max, dilated max and average pooling over 2-D and 3-D planes: SpatialMaxPooling,
//! SpatialDilatedMaxPooling, SpatialAveragePooling, VolumetricMaxPooling,
//! VolumetricDilatedMaxPooling, VolumetricAveragePooling. A spatial plane is a volume of depth
//! 1, so one kernel serves all six.
//!
//! Output sizes follow torch7/PyTorch: `floor` (or `ceil` in ceil mode) of `(in + 2 * pad -
//! (dilation * (k - 1) + 1)) / stride + 1`, and in ceil mode the last window must start inside
//! the input or its left padding (PyTorch applies this with or without padding; torch7 only
//! with padding, so with `stride > kernel` it could make a window outside the input).

use super::device::{self, Layout};
use super::{Planes, Windows, max_forward, on_device, scatter_backward};
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::nn::buf::{self, Out};
use crate::nn::check;
use crate::nn::{NnElem, NnReal, native_tensor, native_view};

/// A pooling's geometry as the caller gave it, per axis in the order T, H, W (T unused for a
/// spatial pooling), with the C argument numbers to name in errors.
#[derive(Clone, Debug)]
pub struct Geo {
    nd: usize,
    k: [i64; 3],
    d: [i64; 3],
    pad: [i64; 3],
    dil: [i64; 3],
    ceil: bool,
    /// The C argument number of the first kernel size (kW, or kT for a volumetric pooling).
    arg0: u32,
    /// Whether the C function takes dilations (they follow the paddings).
    has_dil: bool,
    /// torch7's name of the paddings: "pad" (padW) or "p" (pW).
    pad_name: &'static str,
}

impl Geo {
    /// A spatial pooling: the C arguments `kW, kH, dW, dH, padW, padH[, dilationW, dilationH]`,
    /// `kW` being argument `arg0`.
    #[allow(clippy::too_many_arguments)] // torch7's parameters
    pub fn spatial(
        kw: i32,
        kh: i32,
        dw: i32,
        dh: i32,
        padw: i32,
        padh: i32,
        dil: Option<(i32, i32)>,
        ceil: bool,
        arg0: u32,
    ) -> Geo {
        let (dlw, dlh) = dil.unwrap_or((1, 1));
        let a = |h: i32, w: i32| [1, h as i64, w as i64];
        Geo {
            nd: 2,
            k: a(kh, kw),
            d: a(dh, dw),
            pad: [0, padh as i64, padw as i64],
            dil: a(dlh, dlw),
            ceil,
            arg0,
            has_dil: dil.is_some(),
            pad_name: "pad",
        }
    }

    /// A volumetric pooling: the C arguments `kT, kW, kH, dT, dW, dH, pT, pW, pH[, dilationT,
    /// dilationW, dilationH]`, `kT` being argument `arg0`; `pad_name` "p" or "pad".
    #[allow(clippy::too_many_arguments)] // torch7's parameters
    pub fn volumetric(
        k: [i32; 3],
        d: [i32; 3],
        pad: [i32; 3],
        dil: Option<[i32; 3]>,
        ceil: bool,
        arg0: u32,
        pad_name: &'static str,
    ) -> Geo {
        // C order T, W, H -> T, H, W
        let r = |v: [i32; 3]| [v[0] as i64, v[2] as i64, v[1] as i64];
        Geo {
            nd: 3,
            k: r(k),
            d: r(d),
            pad: r(pad),
            dil: r(dil.unwrap_or([1, 1, 1])),
            ceil,
            arg0,
            has_dil: dil.is_some(),
            pad_name,
        }
    }

    /// The argument number and name of parameter `group` (0 kernel, 1 stride, 2 pad, 3
    /// dilation) of axis `a` (0 T, 1 H, 2 W).
    fn arg(&self, group: usize, a: usize) -> (u32, String) {
        super::axis_arg(self.nd, self.arg0, group, a, ["k", "d", self.pad_name, "dilation"][group])
    }

    /// Checks the parameters (positive kernel, stride and dilation; `0 <= pad <= k / 2`).
    fn check(&self) -> Result<()> {
        let axes = 3 - self.nd..3;
        for (group, vals) in [(0, &self.k), (1, &self.d), (3, &self.dil)] {
            if group == 3 && !self.has_dil {
                continue;
            }
            for a in axes.clone() {
                let (arg, name) = self.arg(group, a);
                check::positive(vals[a], arg, &name)?;
            }
        }
        for a in axes {
            let (arg, name) = self.arg(2, a);
            check::non_negative(self.pad[a], arg, &name)?;
            if self.pad[a] > self.k[a] / 2 {
                let (_, kname) = self.arg(0, a);
                return Err(check::invalid(
                    arg,
                    &name,
                    format_args!(
                        "pad should be at most half of the kernel size, got {name} = {}, {kname} = {}",
                        self.pad[a], self.k[a]
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The windows of axis `a` over an input of `n` positions (error: the output is empty or a
    /// window covers no input position).
    fn windows(&self, a: usize, n: usize, pl: &Planes) -> Result<Windows> {
        let (k, d, pad, dil, n) = (self.k[a], self.d[a], self.pad[a], self.dil[a], n as i64);
        let eff = dil * (k - 1) + 1;
        let num = n + 2 * pad - eff + if self.ceil { d - 1 } else { 0 };
        let mut out = num.div_euclid(d) + 1;
        if self.ceil && out >= 1 && (out - 1) * d >= n + pad {
            out -= 1;
        }
        let too_small = || {
            check::size_err(
                2,
                "input",
                format_args!(
                    "given input size {}, the calculated output size along {} is {out}: output size is too small",
                    pl.shape(pl.size).iter().map(|x| x.to_string()).collect::<Vec<_>>().join("x"),
                    ["T", "H", "W"][a]
                ),
            )
        };
        if out < 1 {
            return Err(too_small());
        }
        let mut w = Windows {
            start: Vec::with_capacity(out as usize),
            count: Vec::with_capacity(out as usize),
            step: dil as usize,
        };
        for o in 0..out {
            let s = o * d - pad;
            let first = if s < 0 { (-s + dil - 1) / dil } else { 0 };
            let end = if n > s { k.min((n - s + dil - 1) / dil) } else { 0 };
            if end <= first {
                return Err(too_small());
            }
            w.start.push((s + first * dil) as usize);
            w.count.push((end - first) as usize);
        }
        Ok(w)
    }

    /// The windows of each axis (T, H, W) for `pl`'s planes.
    fn all_windows(&self, pl: &Planes) -> Result<[Windows; 3]> {
        self.check()?;
        let t = if self.nd == 3 {
            self.windows(0, pl.size[0], pl)?
        } else {
            Windows { start: vec![0], count: vec![1], step: 1 }
        };
        Ok([t, self.windows(1, pl.size[1], pl)?, self.windows(2, pl.size[2], pl)?])
    }

    /// `count_include_pad` divisors of axis `a`: the window clipped to the padded input.
    fn padded_sizes(&self, a: usize, n: usize, w: &Windows) -> Vec<usize> {
        let (k, d, pad, n) = (self.k[a], self.d[a], self.pad[a], n as i64);
        (0..w.len() as i64).map(|o| ((o * d - pad + k).min(n + pad) - (o * d - pad)) as usize).collect()
    }
}

/// The running max `(v, at)` updated with `x[r + c * step]` for `c` in `0..n` (first position
/// on ties, NaN winning), without branches in the loop.
#[inline(always)]
fn row_max<T: NnReal>(x: &[T], r: usize, n: usize, step: usize, mut v: T, mut at: usize) -> (T, usize) {
    if step == 1 {
        for (c, &e) in x[r..r + n].iter().enumerate() {
            let better = (e > v) | e.is_nan();
            v = if better { e } else { v };
            at = if better { r + c } else { at };
        }
    } else {
        for (c, &e) in x[r..].iter().step_by(step).take(n).enumerate() {
            let better = (e > v) | e.is_nan();
            v = if better { e } else { v };
            at = if better { r + c * step } else { at };
        }
    }
    (v, at)
}

fn out_size(w: &[Windows; 3]) -> [usize; 3] {
    [w[0].len(), w[1].len(), w[2].len()]
}

/// `*MaxPooling_updateOutput`: `output` and `indices` (0-based offsets into the input plane)
/// for `input` (`nd + 1` or `nd + 2` dimensions). On the device: `device::max_forward`.
pub fn max_update_output<T: NnElem>(input: &View<T>, output: &Tensor<T>, indices: &Tensor<i64>, g: &Geo) -> Result<()> {
    if on_device(&[input.device(), output.with_view(|v| v.device()), indices.with_view(|v| v.device())])? {
        let pl = Planes::of(input, g.nd, 2, "input")?;
        let w = g.all_windows(&pl)?;
        let step = [w[0].step, w[1].step, w[2].step];
        let shape = pl.shape(out_size(&w));
        return device::max_forward(input, output, indices, Layout::of(&pl), &pl, &shape, &[w], step);
    }
    host_max_update_output(native_view(input)?, native_tensor(output)?, indices, g)
}

fn host_max_update_output<T: NnReal>(
    input: &View<T>,
    output: &Tensor<T>,
    indices: &Tensor<i64>,
    g: &Geo,
) -> Result<()> {
    let pl = Planes::of(input, g.nd, 2, "input")?;
    let w = g.all_windows(&pl)?;
    let osz = out_size(&w);
    let [wt, wh, ww] = &w;
    let (hw, iw) = (pl.size[1] * pl.size[2], pl.size[2]);
    let kk: usize = (g.k.iter().product::<i64>()) as usize;
    max_forward(input, output, indices, &pl, osz, osz.iter().product::<usize>() * kk, |_, xp, out| {
        for (&ts, &tn) in wt.start.iter().zip(&wt.count) {
            for (&hs, &hn) in wh.start.iter().zip(&wh.count) {
                for (&ws, &wn) in ww.start.iter().zip(&ww.count) {
                    let (mut v, mut at) = (xp[ts * hw + hs * iw + ws], ts * hw + hs * iw + ws);
                    for a in 0..tn {
                        for b in 0..hn {
                            let r = (ts + a * wt.step) * hw + (hs + b * wh.step) * iw + ws;
                            (v, at) = row_max(xp, r, wn, ww.step, v, at);
                        }
                    }
                    out.push((v, at));
                }
            }
        }
    })
}

/// `*MaxPooling_updateGradInput`: `gradInput` (shaped like `input`) gets each `gradOutput`
/// element at its `indices` offset (summed where windows share their max). The argument numbers
/// are those of the C call: input 2, gradOutput 3, gradInput 4, indices 5.
pub fn max_update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    indices: &View<i64>,
    g: &Geo,
) -> Result<()> {
    let pl = Planes::of(input, g.nd, 2, "input")?;
    let w = g.all_windows(&pl)?;
    scatter_backward(input, &pl, grad_output, grad_input, indices, out_size(&w), (3, 5))
}

/// The divisor of each output of each axis (an output's divisor is their product).
fn axis_divisors(g: &Geo, pl: &Planes, w: &[Windows; 3], count_include_pad: bool) -> [Vec<usize>; 3] {
    std::array::from_fn(|a| {
        if count_include_pad && (a > 0 || g.nd == 3) {
            g.padded_sizes(a, pl.size[a], &w[a])
        } else {
            w[a].count.clone()
        }
    })
}

/// The divisor of each output (row-major over the plane's outputs).
fn divisors(g: &Geo, pl: &Planes, w: &[Windows; 3], count_include_pad: bool) -> Vec<f64> {
    let per = axis_divisors(g, pl, w, count_include_pad);
    let mut out = Vec::with_capacity(w[0].len() * w[1].len() * w[2].len());
    for &t in &per[0] {
        for &h in &per[1] {
            for &x in &per[2] {
                out.push((t * h * x) as f64);
            }
        }
    }
    out
}

/// `*AveragePooling_updateOutput`: the mean of each window, dividing by the window clipped to
/// the padded input (`count_include_pad`) or by the input elements it covers. On the device:
/// `device::avg_forward`.
pub fn avg_update_output<T: NnElem>(
    input: &View<T>,
    output: &Tensor<T>,
    g: &Geo,
    count_include_pad: bool,
) -> Result<()> {
    if on_device(&[input.device(), output.with_view(|v| v.device())])? {
        let pl = Planes::of(input, g.nd, 2, "input")?;
        let w = g.all_windows(&pl)?;
        let div = axis_divisors(g, &pl, &w, count_include_pad);
        let shape = pl.shape(out_size(&w));
        return device::avg_forward("poolAvg", input, output, Layout::of(&pl), &pl, &shape, &w, &div, 0.0);
    }
    host_avg_update_output(native_view(input)?, native_tensor(output)?, g, count_include_pad)
}

fn host_avg_update_output<T: NnReal>(
    input: &View<T>,
    output: &Tensor<T>,
    g: &Geo,
    count_include_pad: bool,
) -> Result<()> {
    let pl = Planes::of(input, g.nd, 2, "input")?;
    let w = g.all_windows(&pl)?;
    let osz = out_size(&w);
    let mut out = Out::new(output, &pl.shape(osz))?;
    let x = buf::read(input, &[out.view()])?;
    let div: Vec<T> = divisors(g, &pl, &w, count_include_pad).into_iter().map(T::from_f64).collect();
    let (ilen, olen) = (pl.len(), osz.iter().product::<usize>());
    let [wt, wh, ww] = &w;
    let (hw, iw) = (pl.size[1] * pl.size[2], pl.size[2]);
    let kk = g.k.iter().product::<i64>() as usize;
    super::par_planes(out.as_mut(), olen, olen * kk, |p, o| {
        let xp = &x[p * ilen..(p + 1) * ilen];
        let mut q = 0;
        for (&ts, &tn) in wt.start.iter().zip(&wt.count) {
            for (&hs, &hn) in wh.start.iter().zip(&wh.count) {
                for (&ws, &wn) in ww.start.iter().zip(&ww.count) {
                    let mut s = T::zero();
                    for t in ts..ts + tn {
                        for h in hs..hs + hn {
                            let r = t * hw + h * iw;
                            for &v in &xp[r + ws..r + ws + wn] {
                                s += v;
                            }
                        }
                    }
                    o[q] = s / div[q];
                    q += 1;
                }
            }
        }
    });
    out.finish()
}

/// `*AveragePooling_updateGradInput`: each `gradOutput` element divided as in the forward and
/// added to its window's elements of `gradInput` (input 2, gradOutput 3, gradInput 4). On the
/// device: `device::avg_backward`.
pub fn avg_update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    g: &Geo,
    count_include_pad: bool,
) -> Result<()> {
    if on_device(&[input.device(), grad_output.device(), grad_input.with_view(|v| v.device())])? {
        let pl = Planes::of(input, g.nd, 2, "input")?;
        let w = g.all_windows(&pl)?;
        check::shape(grad_output, 3, "gradOutput", &pl.shape(out_size(&w)))?;
        let div = axis_divisors(g, &pl, &w, count_include_pad);
        let l = Layout::of(&pl);
        return device::avg_backward("poolAvgBack", grad_output, grad_input, &input.sizes, l, &pl, &w, &div, None);
    }
    host_avg_update_grad_input(
        native_view(input)?,
        native_view(grad_output)?,
        native_tensor(grad_input)?,
        g,
        count_include_pad,
    )
}

fn host_avg_update_grad_input<T: NnReal>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    g: &Geo,
    count_include_pad: bool,
) -> Result<()> {
    let pl = Planes::of(input, g.nd, 2, "input")?;
    let w = g.all_windows(&pl)?;
    let osz = out_size(&w);
    check::shape(grad_output, 3, "gradOutput", &pl.shape(osz))?;
    let mut gi = Out::new(grad_input, &input.sizes)?;
    let go = buf::read(grad_output, &[gi.view()])?;
    let div: Vec<T> = divisors(g, &pl, &w, count_include_pad).into_iter().map(T::from_f64).collect();
    let (ilen, olen) = (pl.len(), osz.iter().product::<usize>());
    let [wt, wh, ww] = &w;
    let (hw, iw) = (pl.size[1] * pl.size[2], pl.size[2]);
    let kk = g.k.iter().product::<i64>() as usize;
    super::par_planes(gi.as_mut(), ilen, ilen + olen * kk, |p, gp| {
        gp.fill(T::zero());
        let gop = &go[p * olen..(p + 1) * olen];
        let mut q = 0;
        for (&ts, &tn) in wt.start.iter().zip(&wt.count) {
            for (&hs, &hn) in wh.start.iter().zip(&wh.count) {
                for (&ws, &wn) in ww.start.iter().zip(&ww.count) {
                    let v = gop[q] / div[q];
                    for t in ts..ts + tn {
                        for h in hs..hs + hn {
                            let r = t * hw + h * iw;
                            for e in &mut gp[r + ws..r + ws + wn] {
                                *e += v;
                            }
                        }
                    }
                    q += 1;
                }
            }
        }
    });
    gi.finish()
}
