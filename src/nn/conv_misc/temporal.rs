//! TemporalConvolution: a 1-D convolution over time-major sequences, `input` `[T, C]` or `[N, T,
//! C]`, `weight` `[outputFrameSize, kW*inputFrameSize]` (a frame window `kW x C` flattened
//! row-major), `bias` `[outputFrameSize]` (NULL: none), `output` `[T', Cout]` or `[N, T', Cout]`
//! with `T' = (T - kW) / dW + 1`. The window of output frame `t` is the contiguous block of
//! `kW` input frames starting at frame `t*dW`, so every product is one GEMM over an input
//! matrix whose rows are `dW*C` apart (overlapping when `kW > dW`).

use super::super::buf::{self, Grads, Mat, Out};
use super::super::{native_tensor, native_view};
use super::temporal_device as device;
use super::{NnReal, check, out_len, par_try};
use crate::core::allocator::Device;
use crate::core::dtype::Scalar;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::exec::backend::Backend;
use crate::nn::conv::ConvElem;

/// Whether the operands (all on one engine, else the "same device" error) are on a device.
fn on_device(devices: &[Device]) -> Result<bool> {
    Ok(matches!(Backend::of(devices)?, Backend::Cuda(_)))
}

impl Dims {
    fn sizes(&self, co: usize) -> device::Sizes {
        device::Sizes { n: self.n, t: self.t_in, c: self.c_in, to: self.t_out, co, kw: self.kw, dw: self.dw }
    }
}

/// The shape facts of a call.
struct Dims {
    batched: bool,
    n: usize,
    t_in: usize,
    c_in: usize,
    t_out: usize,
    kw: usize,
    dw: usize,
}

impl Dims {
    fn out_shape(&self, c_out: usize) -> Vec<i64> {
        let mut s = vec![self.t_out as i64, c_out as i64];
        if self.batched {
            s.insert(0, self.n as i64);
        }
        s
    }
}

/// Checks `input` (argument 2), `kW` and `dW` (arguments `kw_arg`, `kw_arg + 1`).
fn dims<T: Scalar>(input: &View<T>, kw: i64, dw: i64, kw_arg: u32) -> Result<Dims> {
    check::positive(kw, kw_arg, "kW")?;
    check::positive(dw, kw_arg + 1, "dW")?;
    check::dims(input, 2, "input", &[2, 3])?;
    let nd = input.ndim();
    let (t_in, c_in) = (input.sizes[nd - 2], input.sizes[nd - 1] as usize);
    let t_out = out_len(t_in, kw, dw, 0, 2, "input", "sequence length")?;
    let batched = nd == 3;
    let n = if batched { input.sizes[0] as usize } else { 1 };
    Ok(Dims { batched, n, t_in: t_in as usize, c_in, t_out, kw: kw as usize, dw: dw as usize })
}

/// `gradOutput` (argument 3) has the output's shape for `c_out` output features.
fn check_grad_output<T: Scalar>(grad_output: &View<T>, d: &Dims, c_out: usize) -> Result<()> {
    check::shape(grad_output, 3, "gradOutput", &d.out_shape(c_out))
}

/// `TemporalConvolution_updateOutput(state, input, output, weight, bias, kW, dW,
/// inputFrameSize, outputFrameSize)`.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn update_output<T: ConvElem>(
    input: &View<T>,
    output: &Tensor<T>,
    weight: &View<T>,
    bias: Option<&View<T>>,
    kw: i64,
    dw: i64,
    input_frame_size: i64,
    output_frame_size: i64,
) -> Result<()> {
    let d = dims(input, kw, dw, 6)?;
    check::positive(input_frame_size, 8, "inputFrameSize")?;
    check::positive(output_frame_size, 9, "outputFrameSize")?;
    if d.c_in as i64 != input_frame_size {
        return Err(check::size_err(
            2,
            "input",
            format_args!("expected {input_frame_size} features per frame (inputFrameSize), got {}", input.desc()),
        ));
    }
    let c_out = output_frame_size as usize;
    let k = d.kw * d.c_in;
    check::shape(weight, 4, "weight", &[c_out as i64, k as i64])?;
    if let Some(b) = bias {
        check::numel(b, 5, "bias", c_out)?;
    }
    let mut devs = vec![input.device(), output.with_view(|v| v.device()), weight.device()];
    devs.extend(bias.map(|b| b.device()));
    if on_device(&devs)? {
        return device::update_output(&d.sizes(c_out), input, output, weight, bias, &d.out_shape(c_out));
    }
    let bias = bias.map(native_view).transpose()?;
    host_update_output(&d, c_out, k, native_view(input)?, native_tensor(output)?, native_view(weight)?, bias)
}

fn host_update_output<T: NnReal>(
    d: &Dims,
    c_out: usize,
    k: usize,
    input: &View<T>,
    output: &Tensor<T>,
    weight: &View<T>,
    bias: Option<&View<T>>,
) -> Result<()> {
    let mut out = Out::new(output, &d.out_shape(c_out))?;
    let x = buf::read(input, &[out.view()])?;
    let w = buf::read(weight, &[out.view()])?;
    let b = bias.map(|b| buf::read(b, &[out.view()])).transpose()?;
    let sample = d.t_out * c_out;
    let work = d.n * sample * k;
    par_try(out.as_mut(), sample, work, |i, o| {
        let beta = match &b {
            Some(b) => {
                for row in o.chunks_mut(c_out) {
                    row.copy_from_slice(b);
                }
                T::one()
            }
            None => T::zero(),
        };
        let xs = &x[i * d.t_in * d.c_in..];
        buf::gemm(d.t_out, c_out, k, T::one(), Mat::n(xs, d.dw * d.c_in), Mat::t(&w, k), beta, o, c_out)
    })?;
    out.finish()
}

/// `TemporalConvolution_updateGradInput(state, input, gradOutput, gradInput, weight, kW, dW)`:
/// `gradInput` (shaped like `input`) receives, for every output frame, `gradOutput[t] @ weight`
/// added over the frame's window. Output frames `ceil(kW/dW)` apart have disjoint windows, so
/// each such set is one GEMM accumulated in place (as torch7 does).
pub fn update_grad_input<T: ConvElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    weight: &View<T>,
    kw: i64,
    dw: i64,
) -> Result<()> {
    let d = dims(input, kw, dw, 6)?;
    let k = d.kw * d.c_in;
    check::dims(weight, 5, "weight", &[2])?;
    let c_out = weight.sizes[0] as usize;
    check::shape(weight, 5, "weight", &[c_out as i64, k as i64])?;
    check_grad_output(grad_output, &d, c_out)?;
    let devs = [input.device(), grad_output.device(), grad_input.with_view(|v| v.device()), weight.device()];
    if on_device(&devs)? {
        return device::update_grad_input(&d.sizes(c_out), input, grad_output, grad_input, weight);
    }
    let (input, grad_output, weight) = (native_view(input)?, native_view(grad_output)?, native_view(weight)?);
    let grad_input = native_tensor(grad_input)?;
    host_grad_input(&d, c_out, k, input, grad_output, grad_input, weight)
}

fn host_grad_input<T: NnReal>(
    d: &Dims,
    c_out: usize,
    k: usize,
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    weight: &View<T>,
) -> Result<()> {
    let mut out = Out::zeros(grad_input, &input.sizes)?;
    let g = buf::read(grad_output, &[out.view()])?;
    let w = buf::read(weight, &[out.view()])?;
    // output frames `ofs` apart read disjoint input windows
    let ofs = (d.kw - 1) / d.dw + 1;
    let work = d.n * d.t_out * c_out * k;
    par_try(out.as_mut(), d.t_in * d.c_in, work, |i, gi| {
        let gs = &g[i * d.t_out * c_out..(i + 1) * d.t_out * c_out];
        for first in 0..ofs.min(d.t_out) {
            let frames = (d.t_out - first).div_ceil(ofs);
            buf::gemm(
                frames,
                k,
                c_out,
                T::one(),
                Mat::n(&gs[first * c_out..], ofs * c_out),
                Mat::n(&w, k),
                T::one(),
                &mut gi[first * d.dw * d.c_in..],
                ofs * d.dw * d.c_in,
            )?;
        }
        Ok(())
    })?;
    out.finish()
}

/// `TemporalConvolution_accGradParameters(state, input, gradOutput, gradWeight, gradBias, kW,
/// dW, scale)`: `gradWeight += scale * sum_t gradOutput[t]^T window(t)`, `gradBias += scale *
/// sum_t gradOutput[t]` (skipped when `gradBias` is NULL), summed over the batch in order.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn acc_grad_parameters<T: ConvElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    grad_bias: Option<&Tensor<T>>,
    kw: i64,
    dw: i64,
    scale: f64,
) -> Result<()> {
    let d = dims(input, kw, dw, 6)?;
    let k = d.kw * d.c_in;
    check::dims(grad_output, 3, "gradOutput", &[input.ndim()])?;
    let c_out = *grad_output.sizes.last().unwrap_or(&0) as usize;
    check_grad_output(grad_output, &d, c_out)?;
    let mut devs = vec![input.device(), grad_output.device(), grad_weight.with_view(|v| v.device())];
    devs.extend(grad_bias.map(|b| b.with_view(|v| v.device())));
    if on_device(&devs)? {
        check::numel(&grad_weight.view(), 4, "gradWeight", c_out * k)?;
        if let Some(gb) = grad_bias {
            check::numel(&gb.view(), 5, "gradBias", c_out)?;
        }
        return device::acc_grad_parameters(&d.sizes(c_out), input, grad_output, grad_weight, grad_bias, scale);
    }
    let (input, grad_output) = (native_view(input)?, native_view(grad_output)?);
    let grad_weight = native_tensor(grad_weight)?;
    let grad_bias = grad_bias.map(native_tensor).transpose()?;
    host_acc(&d, c_out, k, input, grad_output, grad_weight, grad_bias, scale)
}

#[allow(clippy::too_many_arguments)]
fn host_acc<T: NnReal>(
    d: &Dims,
    c_out: usize,
    k: usize,
    input: &View<T>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    grad_bias: Option<&Tensor<T>>,
    scale: f64,
) -> Result<()> {
    let mut grads = Grads::new(grad_weight, c_out * k, grad_bias, c_out, 4)?;
    let outs = grads.views();
    let x = buf::read(input, &outs)?;
    let g = buf::read(grad_output, &outs)?;
    let scale = T::from_f64(scale);
    if d.n == 1 {
        // the windows are the rows, `dW*C` apart, of the input itself
        let xm = Mat::n(&x, d.dw * d.c_in);
        buf::gemm(c_out, k, d.t_out, scale, Mat::t(&g, c_out), xm, T::one(), grads.w.as_mut(), k)?;
    } else {
        // a batch: the windows of all samples copied into one `N*T' x kW*C` matrix, one GEMM
        let mut cols = crate::core::limits::try_filled(d.n * d.t_out * k, T::zero())?;
        let sample_in = d.t_in * d.c_in;
        buf::par_chunks(&mut cols, d.t_out * k, d.n * d.t_out * k, |i, c| {
            let xs = &x[i * sample_in..(i + 1) * sample_in];
            for (t, row) in c.chunks_mut(k.max(1)).enumerate() {
                row.copy_from_slice(&xs[t * d.dw * d.c_in..t * d.dw * d.c_in + k]);
            }
        });
        let rows = d.n * d.t_out;
        buf::gemm(c_out, k, rows, scale, Mat::t(&g, c_out), Mat::n(&cols, k), T::one(), grads.w.as_mut(), k)?;
    }
    if let Some(gb) = &mut grads.b {
        buf::add_rows(gb.as_mut(), &g, scale);
    }
    grads.finish()
}
