//! SpatialSubSampling and TemporalSubSampling: per plane (feature) `c`, `output = weight[c] *
//! (sum of the input over a kernel window) + bias[c]` (`bias` NULL: none). That is a depthwise
//! convolution with the kernel `weight[c] * ones`.
//!
//! SpatialSubSampling: `input` `[C, H, W]` or `[N, C, H, W]`, windows `kH x kW` with strides
//! `dH`, `dW`, no padding. TemporalSubSampling: time-major `input` `[T, F]` (torch7) or
//! `[N, T, F]` (th also takes a batch), windows of `kW` frames `dW` apart.
//!
//! SpatialSubSampling on device tensors (THCUNN, also Half) takes the same checks and runs in
//! `misc_device`; TemporalSubSampling is host-only (THCUNN has none).

use super::super::buf::{self, Grads, Out};
use super::super::{native_tensor, native_view};
use super::misc_device as device;
use super::{NnReal, Win, check, full_acc, image_dims, image_shape, on_device, out_len, xcorr_acc, xcorr_grad};
use crate::core::dtype::Scalar;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::nn::conv::ConvElem;
use crate::nn::conv::depthwise_device::{geom2, planes5};
use crate::nn::conv::device::{finish, target};
use crate::nn::conv::unfold::Geom;

/// The shape facts of a SpatialSubSampling call.
struct Dims {
    batched: bool,
    n: usize,
    c: usize,
    h: usize,
    w: usize,
    oh: usize,
    ow: usize,
    win: Win,
}

/// Checks `kW`, `kH`, `dW`, `dH` (arguments 6 to 9), `input` (argument 2) and the per-plane
/// `weight` (argument `w_arg`, `w_name`).
#[allow(clippy::too_many_arguments)] // the module's options
fn dims<T: Scalar>(
    input: &View<T>,
    weight: &View<T>,
    w_arg: u32,
    w_name: &str,
    kw: i64,
    kh: i64,
    dw: i64,
    dh: i64,
) -> Result<Dims> {
    check::positive(kw, 6, "kW")?;
    check::positive(kh, 7, "kH")?;
    check::positive(dw, 8, "dW")?;
    check::positive(dh, 9, "dH")?;
    check::dims(input, 2, "input", &[3, 4])?;
    let (batched, n, c, h, w) = image_dims(input);
    check::numel(weight, w_arg, w_name, c)?;
    let oh = out_len(h as i64, kh, dh, 0, 2, "input", "height")?;
    let ow = out_len(w as i64, kw, dw, 0, 2, "input", "width")?;
    let win = Win { kh: kh as usize, kw: kw as usize, dh: dh as usize, dw: dw as usize };
    Ok(Dims { batched, n, c, h, w, oh, ow, win })
}

impl Dims {
    /// The unfolding of the device half (windows without padding).
    fn geom(&self) -> Geom {
        let w = self.win;
        geom2(self.c, [self.h, self.w], [self.oh, self.ow], [w.kh, w.kw], [w.dh, w.dw], [0, 0])
    }
    fn out_shape(&self) -> Vec<i64> {
        image_shape(self.batched, self.n, self.c, self.oh, self.ow)
    }
}

/// `SpatialSubSampling_updateOutput(state, input, output, weight, bias, kW, kH, dW, dH)`.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn spatial_update_output<T: ConvElem>(
    input: &View<T>,
    output: &Tensor<T>,
    weight: &View<T>,
    bias: Option<&View<T>>,
    kw: i64,
    kh: i64,
    dw: i64,
    dh: i64,
) -> Result<()> {
    let d = dims(input, weight, 4, "weight", kw, kh, dw, dh)?;
    if let Some(b) = bias {
        check::numel(b, 5, "bias", d.c)?;
    }
    let mut devs = vec![input.device(), output.with_view(|v| v.device()), weight.device()];
    devs.extend(bias.map(|b| b.device()));
    if on_device(&devs)? {
        let out = crate::ops::resize_out(output, &d.out_shape())?;
        let mut inputs = vec![input, weight];
        inputs.extend(bias);
        let tgt = target(&out, &inputs)?;
        device::sub_forward(&d.geom(), d.n, &planes5(input, d.batched), weight, bias, &tgt.0)?;
        return finish(&out, tgt);
    }
    let bias = bias.map(native_view).transpose()?;
    host_update_output(&d, native_view(input)?, native_tensor(output)?, native_view(weight)?, bias)
}

fn host_update_output<T: NnReal>(
    d: &Dims,
    input: &View<T>,
    output: &Tensor<T>,
    weight: &View<T>,
    bias: Option<&View<T>>,
) -> Result<()> {
    let mut out = Out::new(output, &d.out_shape())?;
    let x = buf::read(input, &[out.view()])?;
    let wt = buf::read(weight, &[out.view()])?;
    let b = bias.map(|b| buf::read(b, &[out.view()])).transpose()?;
    let ones = vec![T::one(); d.win.kh * d.win.kw];
    let plane = d.h * d.w;
    let work = d.n * d.c * d.oh * d.ow * ones.len();
    buf::par_chunks(out.as_mut(), d.oh * d.ow, work, |r, o| {
        let c = r % d.c;
        o.fill(T::zero());
        xcorr_acc(o, d.ow, &x[r * plane..(r + 1) * plane], d.w, &ones, d.win);
        let (wc, bc) = (wt[c], b.as_ref().map_or(T::zero(), |b| b[c]));
        for v in o.iter_mut() {
            *v = wc * *v + bc;
        }
    });
    out.finish()
}

/// `SpatialSubSampling_updateGradInput(state, input, gradOutput, gradInput, weight, kW, kH,
/// dW, dH)`: `gradInput` has `input`'s shape.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn spatial_update_grad_input<T: ConvElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    weight: &View<T>,
    kw: i64,
    kh: i64,
    dw: i64,
    dh: i64,
) -> Result<()> {
    let d = dims(input, weight, 5, "weight", kw, kh, dw, dh)?;
    check::shape(grad_output, 3, "gradOutput", &d.out_shape())?;
    let devs = [input.device(), grad_output.device(), grad_input.with_view(|v| v.device()), weight.device()];
    if on_device(&devs)? {
        let gin = crate::ops::resize_out(grad_input, &input.sizes)?;
        let tgt = target(&gin, &[grad_output, weight])?;
        device::sub_grad_input(&d.geom(), d.n, grad_output, weight, &planes5(&tgt.0, d.batched))?;
        return finish(&gin, tgt);
    }
    let (grad_output, weight) = (native_view(grad_output)?, native_view(weight)?);
    host_update_grad_input(&d, &input.sizes, grad_output, native_tensor(grad_input)?, weight)
}

fn host_update_grad_input<T: NnReal>(
    d: &Dims,
    in_shape: &[i64],
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    weight: &View<T>,
) -> Result<()> {
    let mut out = Out::new(grad_input, in_shape)?;
    let g = buf::read(grad_output, &[out.view()])?;
    let wt = buf::read(weight, &[out.view()])?;
    let plane = d.oh * d.ow;
    let work = d.n * d.c * plane * d.win.kh * d.win.kw;
    buf::par_chunks(out.as_mut(), d.h * d.w, work, |r, gi| {
        let wc = wt[r % d.c];
        gi.fill(T::zero());
        let ker = vec![wc; d.win.kh * d.win.kw];
        full_acc(gi, d.w, &g[r * plane..(r + 1) * plane], d.ow, &ker, d.win);
    });
    out.finish()
}

/// `SpatialSubSampling_accGradParameters(state, input, gradOutput, gradWeight, gradBias, kW,
/// kH, dW, dH, scale)`: `gradWeight[c] += scale * sum gradOutput * (window sums)`,
/// `gradBias[c] += scale * sum gradOutput` (skipped when `gradBias` is NULL).
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn spatial_acc_grad_parameters<T: ConvElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    grad_bias: Option<&Tensor<T>>,
    kw: i64,
    kh: i64,
    dw: i64,
    dh: i64,
    scale: f64,
) -> Result<()> {
    let d = dims(input, &grad_weight.view(), 4, "gradWeight", kw, kh, dw, dh)?;
    check::shape(grad_output, 3, "gradOutput", &d.out_shape())?;
    let mut devs = vec![input.device(), grad_output.device(), grad_weight.with_view(|v| v.device())];
    devs.extend(grad_bias.map(|b| b.with_view(|v| v.device())));
    if on_device(&devs)? {
        if let Some(gb) = grad_bias {
            buf::acc_len(&gb.view(), d.c, 5, "gradBias")?;
        }
        let img = planes5(input, d.batched);
        return device::sub_acc(&d.geom(), d.n, &img, grad_output, grad_weight, grad_bias, scale);
    }
    let (input, grad_output) = (native_view(input)?, native_view(grad_output)?);
    let grad_bias = grad_bias.map(native_tensor).transpose()?;
    host_acc(&d, input, grad_output, native_tensor(grad_weight)?, grad_bias, scale)
}

fn host_acc<T: NnReal>(
    d: &Dims,
    input: &View<T>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    grad_bias: Option<&Tensor<T>>,
    scale: f64,
) -> Result<()> {
    let mut grads = Grads::new(grad_weight, d.c, grad_bias, d.c, 4)?;
    let outs = grads.views();
    let x = buf::read(input, &outs)?;
    let g = buf::read(grad_output, &outs)?;
    let (plane, oplane) = (d.h * d.w, d.oh * d.ow);
    // per (sample, plane): the sums for gradWeight and gradBias, reduced below in order
    let mut sums = crate::core::limits::try_filled(2 * d.n * d.c, T::zero())?;
    let work = d.n * d.c * oplane * d.win.kh * d.win.kw;
    buf::par_chunks(&mut sums, 2, work, |r, s| {
        let gr = &g[r * oplane..(r + 1) * oplane];
        let mut gk = vec![T::zero(); d.win.kh * d.win.kw];
        xcorr_grad(&mut gk, gr, d.ow, &x[r * plane..(r + 1) * plane], d.w, d.win, T::one());
        s[0] = gk.iter().copied().sum();
        s[1] = gr.iter().copied().sum();
    });
    let scale = T::from_f64(scale);
    for (r, s) in sums.chunks(2).enumerate() {
        grads.w.as_mut()[r % d.c] += scale * s[0];
        if let Some(gb) = &mut grads.b {
            gb.as_mut()[r % d.c] += scale * s[1];
        }
    }
    grads.finish()
}

/// The shape facts of a TemporalSubSampling call.
struct TDims {
    batched: bool,
    n: usize,
    t_in: usize,
    f: usize,
    t_out: usize,
    kw: usize,
    dw: usize,
}

impl TDims {
    fn out_shape(&self) -> Vec<i64> {
        let mut s = vec![self.t_out as i64, self.f as i64];
        if self.batched {
            s.insert(0, self.n as i64);
        }
        s
    }
}

/// Checks `kW`, `dW` (arguments 6, 7), `input` (argument 2) and the per-feature `weight`
/// (argument `w_arg`, `w_name`).
fn tdims<T: NnReal>(input: &View<T>, weight: &View<T>, w_arg: u32, w_name: &str, kw: i64, dw: i64) -> Result<TDims> {
    check::positive(kw, 6, "kW")?;
    check::positive(dw, 7, "dW")?;
    check::dims(input, 2, "input", &[2, 3])?;
    let nd = input.ndim();
    let (t_in, f) = (input.sizes[nd - 2], input.sizes[nd - 1] as usize);
    check::numel(weight, w_arg, w_name, f)?;
    let t_out = out_len(t_in, kw, dw, 0, 2, "input", "sequence length")?;
    let batched = nd == 3;
    let n = if batched { input.sizes[0] as usize } else { 1 };
    Ok(TDims { batched, n, t_in: t_in as usize, f, t_out, kw: kw as usize, dw: dw as usize })
}

/// `TemporalSubSampling_updateOutput(state, input, output, weight, bias, kW, dW,
/// inputFrameSize)`.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn temporal_update_output<T: NnReal>(
    input: &View<T>,
    output: &Tensor<T>,
    weight: &View<T>,
    bias: Option<&View<T>>,
    kw: i64,
    dw: i64,
    input_frame_size: i64,
) -> Result<()> {
    let d = tdims(input, weight, 4, "weight", kw, dw)?;
    if d.f as i64 != input_frame_size {
        return Err(check::size_err(
            2,
            "input",
            format_args!("expected {input_frame_size} features per frame (inputFrameSize), got {}", input.desc()),
        ));
    }
    if let Some(b) = bias {
        check::numel(b, 5, "bias", d.f)?;
    }
    let mut out = Out::new(output, &d.out_shape())?;
    let x = buf::read(input, &[out.view()])?;
    let wt = buf::read(weight, &[out.view()])?;
    let b = bias.map(|b| buf::read(b, &[out.view()])).transpose()?;
    let f = d.f;
    let work = d.n * d.t_out * f * d.kw;
    buf::par_chunks(out.as_mut(), d.t_out * f, work, |i, o| {
        let xs = &x[i * d.t_in * f..(i + 1) * d.t_in * f];
        for (t, orow) in o.chunks_mut(f.max(1)).enumerate() {
            orow.fill(T::zero());
            for xrow in xs[t * d.dw * f..(t * d.dw + d.kw) * f].chunks(f.max(1)) {
                for (a, &v) in orow.iter_mut().zip(xrow) {
                    *a += v;
                }
            }
            for (j, a) in orow.iter_mut().enumerate() {
                *a = wt[j] * *a + b.as_ref().map_or(T::zero(), |b| b[j]);
            }
        }
    });
    out.finish()
}

/// `TemporalSubSampling_updateGradInput(state, input, gradOutput, gradInput, weight, kW, dW)`:
/// `gradInput` has `input`'s shape.
pub fn temporal_update_grad_input<T: NnReal>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    weight: &View<T>,
    kw: i64,
    dw: i64,
) -> Result<()> {
    let d = tdims(input, weight, 5, "weight", kw, dw)?;
    check::shape(grad_output, 3, "gradOutput", &d.out_shape())?;
    let mut out = Out::zeros(grad_input, &input.sizes)?;
    let g = buf::read(grad_output, &[out.view()])?;
    let wt = buf::read(weight, &[out.view()])?;
    let f = d.f;
    let work = d.n * d.t_out * f * d.kw;
    buf::par_chunks(out.as_mut(), d.t_in * f, work, |i, gi| {
        let gs = &g[i * d.t_out * f..(i + 1) * d.t_out * f];
        for (t, grow) in gs.chunks(f.max(1)).enumerate() {
            for girow in gi[t * d.dw * f..(t * d.dw + d.kw) * f].chunks_mut(f.max(1)) {
                for ((a, &v), &w) in girow.iter_mut().zip(grow).zip(wt.iter()) {
                    *a += w * v;
                }
            }
        }
    });
    out.finish()
}

/// `TemporalSubSampling_accGradParameters(state, input, gradOutput, gradWeight, gradBias, kW,
/// dW, scale)`: `gradWeight[f] += scale * sum_t gradOutput[t][f] * (window sum)[f]`,
/// `gradBias[f] += scale * sum_t gradOutput[t][f]` (skipped when `gradBias` is NULL).
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn temporal_acc_grad_parameters<T: NnReal>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    grad_bias: Option<&Tensor<T>>,
    kw: i64,
    dw: i64,
    scale: f64,
) -> Result<()> {
    let d = tdims(input, &grad_weight.view(), 4, "gradWeight", kw, dw)?;
    check::shape(grad_output, 3, "gradOutput", &d.out_shape())?;
    let mut grads = Grads::new(grad_weight, d.f, grad_bias, d.f, 4)?;
    let outs = grads.views();
    let x = buf::read(input, &outs)?;
    let g = buf::read(grad_output, &outs)?;
    let f = d.f;
    let (mut sw, mut sb, mut win) = (vec![T::zero(); f], vec![T::zero(); f], vec![T::zero(); f]);
    for i in 0..d.n {
        let xs = &x[i * d.t_in * f..(i + 1) * d.t_in * f];
        let gs = &g[i * d.t_out * f..(i + 1) * d.t_out * f];
        for (t, grow) in gs.chunks(f.max(1)).enumerate() {
            win.fill(T::zero());
            for xrow in xs[t * d.dw * f..(t * d.dw + d.kw) * f].chunks(f.max(1)) {
                for (a, &v) in win.iter_mut().zip(xrow) {
                    *a += v;
                }
            }
            for (((a, bsum), &gv), &wv) in sw.iter_mut().zip(sb.iter_mut()).zip(grow).zip(&win) {
                *a += gv * wv;
                *bsum += gv;
            }
        }
    }
    let scale = T::from_f64(scale);
    for (a, &s) in grads.w.as_mut().iter_mut().zip(&sw) {
        *a += scale * s;
    }
    if let Some(gb) = &mut grads.b {
        for (a, &s) in gb.as_mut().iter_mut().zip(&sb) {
            *a += scale * s;
        }
    }
    grads.finish()
}
