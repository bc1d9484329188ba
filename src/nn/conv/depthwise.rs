//! SpatialDepthWiseConvolution: each input plane `i` convolved with `nOutputPlane` (the depth
//! multiplier `M`) kernels of its own: `output[b, i*M + m] = bias[m][i] + weight[m][i] (*)
//! input[b, i]` (`F.conv2d(groups = nInputPlane)` with its weight's planes in the order `i*M +
//! m`). Weight `M x nInputPlane x kH x kW` (or `M x nInputPlane*kH*kW`), bias `M x
//! nInputPlane`, output `[B,] nInputPlane*M x oH x oW`; `gradOutput` has the output's shape or
//! `[B,] nInputPlane x M x oH x oW`. Direct loops (no unfolding), parallel over (sample, input
//! plane); `finput` and `fgradInput` are not used.

use super::super::NnReal;
use super::super::buf::{self, Grads, Out};
use super::super::check;
use super::engine::sum;
use super::unfold::valid;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use std::ffi::c_int;

/// The shape facts of a call.
struct Dw {
    batched: bool,
    n: usize,
    c: usize,
    mult: usize,
    i: [usize; 2],
    o: [usize; 2],
    k: [usize; 2],
    s: [usize; 2],
    p: [usize; 2],
}

impl Dw {
    fn out_shape(&self) -> Vec<i64> {
        let mut v = if self.batched { vec![self.n as i64] } else { vec![] };
        v.extend([(self.c * self.mult) as i64, self.o[0] as i64, self.o[1] as i64]);
        v
    }
    /// The 5-D (4-D unbatched) form of the output's shape torch7 also accepts for gradOutput.
    fn split_shape(&self) -> Vec<i64> {
        let mut v = if self.batched { vec![self.n as i64] } else { vec![] };
        v.extend([self.c as i64, self.mult as i64, self.o[0] as i64, self.o[1] as i64]);
        v
    }
    fn taps(&self) -> usize {
        self.k[0] * self.k[1]
    }
    fn iplane(&self) -> usize {
        self.i[0] * self.i[1]
    }
    fn oplane(&self) -> usize {
        self.o[0] * self.o[1]
    }
    /// The valid output columns `[lo, hi)` of kernel column `kw` and the input column of `lo`.
    fn cols(&self, kw: usize) -> (usize, usize, usize) {
        let off = kw as isize - self.p[1] as isize;
        let (lo, hi) = valid(off, self.s[1], self.i[1], self.o[1]);
        if lo == hi { (0, 0, 0) } else { (lo, hi, (off + (lo * self.s[1]) as isize) as usize) }
    }
    /// The input row of output row `y` and kernel row `kh`, if inside the input.
    fn row(&self, y: usize, kh: usize) -> Option<usize> {
        let r = (y * self.s[0] + kh) as isize - self.p[0] as isize;
        (r >= 0 && (r as usize) < self.i[0]).then_some(r as usize)
    }
}

/// Checks the arguments: `input` (2), the weight (`w_arg`), ints `kW, kH, dW, dH, padW, padH`
/// from argument `first`.
fn plan<T: NnReal>(input: &View<T>, w: &View<T>, w_arg: u32, w_name: &str, ints: &[c_int], first: u32) -> Result<Dw> {
    let names = ["kW", "kH", "dW", "dH", "padW", "padH"];
    for (j, (&v, name)) in ints.iter().zip(names).enumerate() {
        let f = if j < 4 { check::positive } else { check::non_negative };
        f(v as i64, first + j as u32, name)?;
    }
    let k = [ints[1] as usize, ints[0] as usize];
    let s = [ints[3] as usize, ints[2] as usize];
    let p = [ints[5] as usize, ints[4] as usize];
    check::dims(w, w_arg, w_name, &[2, 4])?;
    let ws: Vec<usize> = w.sizes.iter().map(|&x| x as usize).collect();
    let taps = k[0] * k[1];
    let (mult, c) = if ws.len() == 4 {
        if ws[2] != k[0] || ws[3] != k[1] {
            return Err(check::size_err(
                w_arg,
                w_name,
                format_args!("expected a {}x{} kernel (from the arguments), got {}", k[0], k[1], w.desc()),
            ));
        }
        (ws[0], ws[1])
    } else {
        if !ws[1].is_multiple_of(taps) {
            return Err(check::size_err(
                w_arg,
                w_name,
                format_args!("a 2D weight needs a multiple of the kernel's {taps} taps per row, got {}", w.desc()),
            ));
        }
        (ws[0], ws[1] / taps)
    };
    if mult == 0 || c == 0 {
        return Err(check::size_err(w_arg, w_name, format_args!("has an empty dimension: {}", w.desc())));
    }
    check::dims(input, 2, "input", &[3, 4])?;
    let batched = input.ndim() == 4;
    let c0 = batched as usize;
    if input.sizes[c0] as usize != c || input.sizes[c0 + 1..].iter().any(|&x| x < 1) {
        return Err(check::size_err(
            2,
            "input",
            format_args!(
                "expected {c} input planes (from {w_name} {}) and non-empty sizes, got {}",
                w.desc(),
                input.desc()
            ),
        ));
    }
    let i = [input.sizes[c0 + 1] as usize, input.sizes[c0 + 2] as usize];
    let mut o = [0; 2];
    for j in 0..2 {
        if i[j] + 2 * p[j] < k[j] {
            return Err(check::size_err(
                2,
                "input",
                format_args!(
                    "input {} is smaller than the padded kernel: the output size would be below 1",
                    input.desc()
                ),
            ));
        }
        o[j] = (i[j] + 2 * p[j] - k[j]) / s[j] + 1;
    }
    let n = if batched { input.sizes[0] as usize } else { 1 };
    Ok(Dw { batched, n, c, mult, i, o, k, s, p })
}

/// Checks `gradOutput` (argument 3): the output's shape or its split form.
fn check_grad_output<T: NnReal>(g: &View<T>, d: &Dw) -> Result<()> {
    if g.sizes == d.split_shape() {
        return Ok(());
    }
    check::shape(g, 3, "gradOutput", &d.out_shape())
}

/// `SpatialDepthWiseConvolution_updateOutput(state, input, output, weight, bias, finput,
/// fgradInput, kW, kH, dW, dH, padW, padH)`.
pub fn update_output<T: NnReal>(
    input: &View<T>,
    output: &Tensor<T>,
    weight: &View<T>,
    bias: Option<&View<T>>,
    ints: &[c_int],
) -> Result<()> {
    let d = plan(input, weight, 4, "weight", ints, 8)?;
    if let Some(b) = bias {
        check::numel(b, 5, "bias", d.mult * d.c)?;
    }
    let mut out = Out::new(output, &d.out_shape())?;
    let outs = [out.view()];
    let x = buf::read(input, &outs)?;
    let w = buf::read(weight, &outs)?;
    let b = bias.map(|b| buf::read(b, &outs)).transpose()?;
    let (op, ip, taps, ow) = (d.oplane(), d.iplane(), d.taps(), d.o[1]);
    let work = d.n * d.c * d.mult * op * taps;
    // per kernel column: the valid output columns and the input column of the first
    let spans: Vec<(usize, usize, usize)> = (0..d.k[1]).map(|kw| d.cols(kw)).collect();
    buf::par_chunks(out.as_mut(), d.mult * op, work, |bi, chunk| {
        let ch = bi % d.c;
        let xp = &x[bi * ip..(bi + 1) * ip];
        for (m, plane) in chunk.chunks_mut(op).enumerate() {
            plane.fill(b.as_ref().map_or(T::zero(), |b| b[m * d.c + ch]));
            let wk = &w[(m * d.c + ch) * taps..(m * d.c + ch + 1) * taps];
            for (y, orow) in plane.chunks_mut(ow).enumerate() {
                for kh in 0..d.k[0] {
                    let Some(r) = d.row(y, kh) else { continue };
                    let xrow = &xp[r * d.i[1]..(r + 1) * d.i[1]];
                    for kw in 0..d.k[1] {
                        let wv = wk[kh * d.k[1] + kw];
                        let (lo, hi, x0) = spans[kw];
                        if d.s[1] == 1 {
                            for (o, &v) in orow[lo..hi].iter_mut().zip(&xrow[x0..]) {
                                *o += wv * v;
                            }
                        } else {
                            for (o, &v) in orow[lo..hi].iter_mut().zip(xrow[x0..].iter().step_by(d.s[1])) {
                                *o += wv * v;
                            }
                        }
                    }
                }
            }
        }
    });
    out.finish()
}

/// `SpatialDepthWiseConvolution_updateGradInput(state, input, gradOutput, gradInput, weight,
/// finput, fgradInput, kW, kH, dW, dH, padW, padH)`.
pub fn update_grad_input<T: NnReal>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    weight: &View<T>,
    ints: &[c_int],
) -> Result<()> {
    let d = plan(input, weight, 5, "weight", ints, 8)?;
    check_grad_output(grad_output, &d)?;
    let mut gin = Out::new(grad_input, &input.sizes)?;
    let outs = [gin.view()];
    let g = buf::read(grad_output, &outs)?;
    let w = buf::read(weight, &outs)?;
    let (op, ip, taps, ow) = (d.oplane(), d.iplane(), d.taps(), d.o[1]);
    let work = d.n * d.c * d.mult * op * taps;
    // per kernel column: the valid output columns and the input column of the first
    let spans: Vec<(usize, usize, usize)> = (0..d.k[1]).map(|kw| d.cols(kw)).collect();
    buf::par_chunks(gin.as_mut(), ip, work, |bi, plane| {
        let ch = bi % d.c;
        plane.fill(T::zero());
        let gp = &g[bi * d.mult * op..(bi + 1) * d.mult * op];
        for m in 0..d.mult {
            let wk = &w[(m * d.c + ch) * taps..(m * d.c + ch + 1) * taps];
            for (y, grow) in gp[m * op..(m + 1) * op].chunks(ow).enumerate() {
                for kh in 0..d.k[0] {
                    let Some(r) = d.row(y, kh) else { continue };
                    let irow = &mut plane[r * d.i[1]..(r + 1) * d.i[1]];
                    for kw in 0..d.k[1] {
                        let wv = wk[kh * d.k[1] + kw];
                        let (lo, hi, x0) = spans[kw];
                        if d.s[1] == 1 {
                            for (o, &v) in irow[x0..].iter_mut().zip(&grow[lo..hi]) {
                                *o += wv * v;
                            }
                        } else {
                            for (o, &v) in irow[x0..].iter_mut().step_by(d.s[1]).zip(&grow[lo..hi]) {
                                *o += wv * v;
                            }
                        }
                    }
                }
            }
        }
    });
    gin.finish()
}

/// `SpatialDepthWiseConvolution_accGradParameters(state, input, gradOutput, gradWeight,
/// gradBias, finput, fgradInput, kW, kH, dW, dH, padW, padH, scale)`.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn acc_grad_parameters<T: NnReal>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    grad_bias: Option<&Tensor<T>>,
    ints: &[c_int],
    scale: f64,
) -> Result<()> {
    let gwv = grad_weight.view();
    let d = plan(input, &gwv, 4, "gradWeight", ints, 8)?;
    check_grad_output(grad_output, &d)?;
    let mut grads = Grads::new(grad_weight, gwv.numel(), grad_bias, d.mult * d.c, 4)?;
    let outs = grads.views();
    let x = buf::read(input, &outs)?;
    let g = buf::read(grad_output, &outs)?;
    let (op, ip, taps, ow) = (d.oplane(), d.iplane(), d.taps(), d.o[1]);
    let scale = T::from_f64(scale);
    // per input plane: M x taps weight sums, then M bias sums
    let per = d.mult * (taps + 1);
    let mut tmp = crate::core::limits::try_filled(d.c * per, T::zero())?;
    let work = d.n * d.c * d.mult * op * taps;
    // per kernel column: the valid output columns and the input column of the first
    let spans: Vec<(usize, usize, usize)> = (0..d.k[1]).map(|kw| d.cols(kw)).collect();
    buf::par_chunks(&mut tmp, per, work, |ch, t| {
        let (tw, tb) = t.split_at_mut(d.mult * taps);
        // per tap, the products summed over samples and output rows, column by column
        let mut rows = vec![T::zero(); taps * ow];
        for m in 0..d.mult {
            rows.fill(T::zero());
            for b in 0..d.n {
                let bi = b * d.c + ch;
                let xp = &x[bi * ip..(bi + 1) * ip];
                let gm = &g[(bi * d.mult + m) * op..(bi * d.mult + m + 1) * op];
                tb[m] += sum(gm);
                for (y, grow) in gm.chunks(ow).enumerate() {
                    for kh in 0..d.k[0] {
                        let Some(r) = d.row(y, kh) else { continue };
                        let xrow = &xp[r * d.i[1]..(r + 1) * d.i[1]];
                        for kw in 0..d.k[1] {
                            let (lo, hi, x0) = spans[kw];
                            let acc = &mut rows[(kh * d.k[1] + kw) * ow..][lo..hi];
                            if d.s[1] == 1 {
                                for ((a, &gv), &xv) in acc.iter_mut().zip(&grow[lo..hi]).zip(&xrow[x0..]) {
                                    *a += gv * xv;
                                }
                            } else {
                                for ((a, &gv), &xv) in
                                    acc.iter_mut().zip(&grow[lo..hi]).zip(xrow[x0..].iter().step_by(d.s[1]))
                                {
                                    *a += gv * xv;
                                }
                            }
                        }
                    }
                }
            }
            for (tap, r) in rows.chunks(ow).enumerate() {
                tw[m * taps + tap] += sum(r);
            }
        }
    });
    let gwm = grads.w.as_mut();
    for (ch, t) in tmp.chunks(per).enumerate() {
        for m in 0..d.mult {
            let dst = &mut gwm[(m * d.c + ch) * taps..(m * d.c + ch + 1) * taps];
            for (o, &v) in dst.iter_mut().zip(&t[m * taps..(m + 1) * taps]) {
                *o += scale * v;
            }
        }
    }
    if let Some(gb) = &mut grads.b {
        let gbm = gb.as_mut();
        for (ch, t) in tmp.chunks(per).enumerate() {
            for m in 0..d.mult {
                gbm[m * d.c + ch] += scale * t[d.mult * taps + m];
            }
        }
    }
    grads.finish()
}
