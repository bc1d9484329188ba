//! TemporalRowConvolution: a depthwise 1-D convolution, each feature `f` of a sequence
//! convolved with its own kernel `weight[f][0]` (`weight` `[F, 1, kW]`, `bias` `[F]`, NULL:
//! none), zero padding `padW` on both ends. With `featFirst` the input is `[F, T]` or `[N, F,
//! T]` (feature-major), otherwise time-major `[T, F]` or `[N, T, F]`; the output has the
//! input's layout with `T' = (T + 2*padW - kW) / dW + 1` frames (contiguous, where torch7
//! returns a transposed view in the time-major case).
//!
//! `finput` and `fgradInput` (torch7's unfolded input and its gradient) are not used: th
//! convolves directly, and `accGradParameters` reads `input` instead of the forward's
//! `finput`.
//!
//! Device tensors (THCUNN, also Half) take the same checks and run as a depthwise convolution
//! with one kernel per plane (`nn::conv::depthwise_device`), the layouts read and written
//! through permuted strides.

use super::super::buf::{self, Grads, Out};
use super::super::{native_tensor, native_view};
use super::{NnReal, axpy_step, check, dot_step, on_device, out_len, scatter_step, transpose};
use crate::core::dtype::Scalar;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::nn::conv::ConvElem;
use crate::nn::conv::depthwise_device as device;
use std::borrow::Cow;

/// The shape facts of a call.
struct Dims {
    batched: bool,
    n: usize,
    f: usize,
    t_in: usize,
    t_out: usize,
    kw: usize,
    dw: usize,
    pad: usize,
    feat_first: bool,
}

impl Dims {
    /// The call as the depthwise device half sees it: `F` planes of `1 x T`, one kernel each.
    fn dev(&self) -> device::Dg {
        let g = device::geom2(self.f, [1, self.t_in], [1, self.t_out], [1, self.kw], [1, self.dw], [0, self.pad]);
        device::Dg { n: self.n, c: self.f, mult: 1, g }
    }

    /// A sequence tensor of this call's layout (`t` frames) as `[N, F, 1, t]` (strides
    /// permuted for a time-major layout; an unbatched one is one sample).
    fn planes<T: Scalar>(&self, v: &View<T>) -> View<T> {
        let nd = v.ndim();
        let (fd, td) = if self.feat_first { (nd - 2, nd - 1) } else { (nd - 1, nd - 2) };
        let bs = if self.batched { v.strides[0] } else { 0 };
        View {
            storage: v.storage.clone(),
            offset: v.offset,
            sizes: vec![self.n as i64, v.sizes[fd], 1, v.sizes[td]],
            strides: vec![bs, v.strides[fd], 0, v.strides[td]],
        }
    }

    fn out_shape(&self) -> Vec<i64> {
        let (f, t) = (self.f as i64, self.t_out as i64);
        let mut s = if self.feat_first { vec![f, t] } else { vec![t, f] };
        if self.batched {
            s.insert(0, self.n as i64);
        }
        s
    }

    /// The output frames `[lo, hi)` whose kernel tap `k` reads an input frame (not padding);
    /// that frame is `t*dW + k - padW`.
    fn span(&self, k: usize) -> (usize, usize) {
        let lo = if self.pad > k { (self.pad - k).div_ceil(self.dw) } else { 0 };
        let hi =
            if self.t_in + self.pad > k { ((self.t_in - 1 + self.pad - k) / self.dw + 1).min(self.t_out) } else { 0 };
        (lo, hi.max(lo))
    }
}

/// Checks the options (arguments 8 to 10), the kernel tensor `weight` (argument `w_arg`,
/// `w_name`: `[F, 1, kW]`) and `input` (argument 2).
#[allow(clippy::too_many_arguments)] // the module's options
fn dims<T: Scalar>(
    input: &View<T>,
    weight: &View<T>,
    w_arg: u32,
    w_name: &str,
    kw: i64,
    dw: i64,
    padw: i64,
    feat_first: bool,
) -> Result<Dims> {
    check::positive(kw, 8, "kW")?;
    check::positive(dw, 9, "dW")?;
    check::non_negative(padw, 10, "padW")?;
    check::dims(weight, w_arg, w_name, &[3])?;
    let f = weight.sizes[0];
    check::shape(weight, w_arg, w_name, &[f, 1, kw])?;
    check::dims(input, 2, "input", &[2, 3])?;
    let nd = input.ndim();
    let (fd, td) = if feat_first { (nd - 2, nd - 1) } else { (nd - 1, nd - 2) };
    if input.sizes[fd] != f {
        return Err(check::size_err(
            2,
            "input",
            format_args!("expected {f} features (weight is {}) in dimension {fd}, got {}", weight.desc(), input.desc()),
        ));
    }
    let t_in = input.sizes[td];
    let t_out = out_len(t_in, kw, dw, padw, 2, "input", "sequence length")?;
    let batched = nd == 3;
    let n = if batched { input.sizes[0] as usize } else { 1 };
    Ok(Dims {
        batched,
        n,
        f: f as usize,
        t_in: t_in as usize,
        t_out,
        kw: kw as usize,
        dw: dw as usize,
        pad: padw as usize,
        feat_first,
    })
}

/// The elements of `x` (one sequence tensor of `t` frames) feature-major: `[N, F, t]`.
fn feat_major<'a, T: NnReal>(x: Cow<'a, [T]>, d: &Dims, t: usize) -> Result<Cow<'a, [T]>> {
    if d.feat_first {
        return Ok(x);
    }
    let mut y = crate::core::limits::try_filled(x.len(), T::zero())?;
    for (src, dst) in x.chunks((t * d.f).max(1)).zip(y.chunks_mut((t * d.f).max(1))) {
        transpose(src, t, d.f, dst);
    }
    Ok(Cow::Owned(y))
}

/// Fills `out` (a tensor of `t` frames in the call's layout) with `rows(row_index, row)` run
/// on its feature-major rows (`t` elements each) in parallel.
fn write_rows<T: NnReal>(
    out: &mut [T],
    d: &Dims,
    t: usize,
    work: usize,
    rows: impl Fn(usize, &mut [T]) + Sync,
) -> Result<()> {
    if d.feat_first {
        buf::par_chunks(out, t, work, rows);
        return Ok(());
    }
    let mut tmp = crate::core::limits::try_filled(out.len(), T::zero())?;
    buf::par_chunks(&mut tmp, t, work, rows);
    for (src, dst) in tmp.chunks((t * d.f).max(1)).zip(out.chunks_mut((t * d.f).max(1))) {
        transpose(src, d.f, t, dst);
    }
    Ok(())
}

/// `TemporalRowConvolution_updateOutput(state, input, output, weight, bias, finput,
/// fgradInput, kW, dW, padW, featFirst)`.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn update_output<T: ConvElem>(
    input: &View<T>,
    output: &Tensor<T>,
    weight: &View<T>,
    bias: Option<&View<T>>,
    kw: i64,
    dw: i64,
    padw: i64,
    feat_first: bool,
) -> Result<()> {
    let d = dims(input, weight, 4, "weight", kw, dw, padw, feat_first)?;
    if let Some(b) = bias {
        check::numel(b, 5, "bias", d.f)?;
    }
    let mut devs = vec![input.device(), output.with_view(|v| v.device()), weight.device()];
    devs.extend(bias.map(|b| b.device()));
    if on_device(&devs)? {
        let out = crate::ops::resize_out(output, &d.out_shape())?;
        // the output as [N, F, 1, T']: the depthwise [N, F*1, L] layout when feature-major
        let planes = d.planes(&out);
        let mut inputs = vec![input, weight];
        inputs.extend(bias);
        let tgt = crate::nn::conv::device::target(&planes, &inputs)?;
        device::forward(&d.dev(), &device::planes5(&d.planes(input), true), weight, bias, &tgt.0)?;
        return crate::nn::conv::device::finish(&planes, tgt);
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
    let x = feat_major(buf::read(input, &[out.view()])?, d, d.t_in)?;
    let w = buf::read(weight, &[out.view()])?;
    let b = bias.map(|b| buf::read(b, &[out.view()])).transpose()?;
    let work = d.n * d.f * d.t_out * d.kw;
    write_rows(out.as_mut(), d, d.t_out, work, |r, o| {
        let f = r % d.f;
        o.fill(b.as_ref().map_or(T::zero(), |b| b[f]));
        let xr = &x[r * d.t_in..(r + 1) * d.t_in];
        for (k, &wk) in w[f * d.kw..(f + 1) * d.kw].iter().enumerate() {
            let (lo, hi) = d.span(k);
            if lo < hi {
                axpy_step(&mut o[lo..hi], wk, &xr[lo * d.dw + k - d.pad..], d.dw);
            }
        }
    })?;
    out.finish()
}

/// `TemporalRowConvolution_updateGradInput(state, input, gradOutput, gradInput, weight,
/// finput, fgradInput, kW, dW, padW, featFirst)`: `gradInput` has `input`'s shape.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn update_grad_input<T: ConvElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    weight: &View<T>,
    kw: i64,
    dw: i64,
    padw: i64,
    feat_first: bool,
) -> Result<()> {
    let d = dims(input, weight, 5, "weight", kw, dw, padw, feat_first)?;
    check::shape(grad_output, 3, "gradOutput", &d.out_shape())?;
    let devs = [input.device(), grad_output.device(), grad_input.with_view(|v| v.device()), weight.device()];
    if on_device(&devs)? {
        let gin = crate::ops::resize_out(grad_input, &input.sizes)?;
        let planes = d.planes(&gin);
        let tgt = crate::nn::conv::device::target(&planes, &[grad_output, weight])?;
        device::grad_input(&d.dev(), &d.planes(grad_output), weight, &device::planes5(&tgt.0, true))?;
        return crate::nn::conv::device::finish(&planes, tgt);
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
    let g = feat_major(buf::read(grad_output, &[out.view()])?, d, d.t_out)?;
    let w = buf::read(weight, &[out.view()])?;
    let work = d.n * d.f * d.t_out * d.kw;
    write_rows(out.as_mut(), d, d.t_in, work, |r, gi| {
        let f = r % d.f;
        gi.fill(T::zero());
        let gr = &g[r * d.t_out..(r + 1) * d.t_out];
        for (k, &wk) in w[f * d.kw..(f + 1) * d.kw].iter().enumerate() {
            let (lo, hi) = d.span(k);
            if lo < hi {
                scatter_step(&mut gi[lo * d.dw + k - d.pad..], wk, &gr[lo..hi], d.dw);
            }
        }
    })?;
    out.finish()
}

/// `TemporalRowConvolution_accGradParameters(state, input, gradOutput, gradWeight, gradBias,
/// finput, fgradInput, kW, dW, padW, featFirst, scale)`: `gradWeight[f][0][k] += scale *
/// sum gradOutput[f][t] * input[f][t*dW + k - padW]`, `gradBias[f] += scale * sum_t
/// gradOutput[f][t]` (skipped when `gradBias` is NULL), summed over the batch.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn acc_grad_parameters<T: ConvElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    grad_bias: Option<&Tensor<T>>,
    kw: i64,
    dw: i64,
    padw: i64,
    feat_first: bool,
    scale: f64,
) -> Result<()> {
    let d = dims(input, &grad_weight.view(), 4, "gradWeight", kw, dw, padw, feat_first)?;
    check::shape(grad_output, 3, "gradOutput", &d.out_shape())?;
    let mut devs = vec![input.device(), grad_output.device(), grad_weight.with_view(|v| v.device())];
    devs.extend(grad_bias.map(|b| b.with_view(|v| v.device())));
    if on_device(&devs)? {
        if let Some(gb) = grad_bias {
            buf::acc_len(&gb.view(), d.f, 5, "gradBias")?;
        }
        let img = device::planes5(&d.planes(input), true);
        return device::acc(&d.dev(), &img, &d.planes(grad_output), grad_weight, grad_bias, scale);
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
    let mut grads = Grads::new(grad_weight, d.f * d.kw, grad_bias, d.f, 4)?;
    let outs = grads.views();
    let x = feat_major(buf::read(input, &outs)?, d, d.t_in)?;
    let g = feat_major(buf::read(grad_output, &outs)?, d, d.t_out)?;
    let scale = T::from_f64(scale);
    let work = d.n * d.f * d.t_out * d.kw;
    buf::par_chunks(grads.w.as_mut(), d.kw, work, |f, gwf| {
        for (k, a) in gwf.iter_mut().enumerate() {
            let (lo, hi) = d.span(k);
            if lo >= hi {
                continue;
            }
            let mut s = T::zero();
            for i in 0..d.n {
                let r = i * d.f + f;
                let xr = &x[r * d.t_in..(r + 1) * d.t_in];
                s += dot_step(&g[r * d.t_out + lo..r * d.t_out + hi], &xr[lo * d.dw + k - d.pad..], d.dw);
            }
            *a += scale * s;
        }
    });
    if let Some(gb) = &mut grads.b {
        for (r, gr) in g.chunks(d.t_out).enumerate() {
            let s: T = gr.iter().copied().sum();
            gb.as_mut()[r % d.f] += scale * s;
        }
    }
    grads.finish()
}
