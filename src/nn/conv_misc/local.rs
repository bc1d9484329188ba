//! SpatialConvolutionLocal: a 2-D convolution whose weights are not shared: every output
//! location `l = (y, x)` has its own `nOutputPlane x (nInputPlane*kH*kW)` matrix. `weight` is
//! `[oH*oW, nOutputPlane, nInputPlane*kH*kW]` or `[oH, oW, nOutputPlane, nInputPlane, kH,
//! kW]`, `bias` `[nOutputPlane, oH, oW]` (NULL: none); input `[nInputPlane, iH, iW]` or `[N,
//! nInputPlane, iH, iW]` with zero padding `padH`, `padW`; `oH = (iH + 2*padH - kH) / dH + 1`.
//! `inputWidth`..`outputHeight` must agree with the tensors (torch7 trusts them).
//!
//! The input is unfolded location-major (for location `l`, an `N x K` matrix of the batch's
//! windows, `K = nInputPlane*kH*kW`, columns ordered as `F.unfold`'s), so that each location is
//! one GEMM with its weight, the locations running in parallel.
//!
//! Buffers: `finput` is resized to torch7's size (`[K, oH*oW]`, batched `[N, K, oH*oW]`) and
//! used as scratch for that unfolding (th's location-major layout, not torch7's);
//! `accGradParameters` unfolds `input` again instead of reading the forward's `finput`.
//! `fgradInput` is resized likewise and holds the unfolded gradient in `updateGradInput`. A
//! NULL buffer is replaced by a temporary.
//!
//! Device tensors (THCUNN, also Half) take the same checks and run in `misc_device` (im2col,
//! one GEMM batch per output location, col2im); the buffers are not used there.

use super::super::buf::{self, Grads, Mat, Out};
use super::super::{native_tensor, native_view};
use super::misc_device as device;
use super::{NnReal, check, image_dims, image_shape, on_device, out_len, par_try};
use crate::Scalar;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::nn::conv::ConvElem;
use crate::nn::conv::depthwise_device::{geom2, planes5};
use crate::nn::conv::device::{finish, target};
use crate::nn::conv::unfold::Geom;

/// The shape facts of a call.
#[derive(Clone, Copy)]
struct Dims {
    batched: bool,
    n: usize,
    c: usize,
    h: usize,
    w: usize,
    n_out: usize,
    oh: usize,
    ow: usize,
    kh: usize,
    kw: usize,
    dh: usize,
    dw: usize,
    ph: usize,
    pw: usize,
}

impl Dims {
    /// The unfolding of the device half.
    fn geom(&self) -> Geom {
        geom2(self.c, [self.h, self.w], [self.oh, self.ow], [self.kh, self.kw], [self.dh, self.dw], [self.ph, self.pw])
    }
    fn out_shape(&self) -> Vec<i64> {
        image_shape(self.batched, self.n, self.n_out, self.oh, self.ow)
    }
    /// Elements of one location's unfolded window: `nInputPlane*kH*kW`.
    fn k(&self) -> usize {
        self.c * self.kh * self.kw
    }
    /// Output locations `oH*oW`.
    fn l(&self) -> usize {
        self.oh * self.ow
    }
    /// torch7's size of `finput`.
    fn finput_shape(&self) -> Vec<i64> {
        let mut s = vec![self.k() as i64, self.l() as i64];
        if self.batched {
            s.insert(0, self.n as i64);
        }
        s
    }
}

/// The module's integer arguments, in torch7's order (arguments 8 to 17).
#[derive(Clone, Copy)]
pub struct Opts {
    pub kw: i64,
    pub kh: i64,
    pub dw: i64,
    pub dh: i64,
    pub padw: i64,
    pub padh: i64,
    pub input_width: i64,
    pub input_height: i64,
    pub output_width: i64,
    pub output_height: i64,
}

/// Checks the options, `input` (argument 2) and the weight tensor (argument `w_arg`, `w_name`).
fn dims<T: Scalar>(input: &View<T>, weight: &View<T>, w_arg: u32, w_name: &str, o: Opts) -> Result<Dims> {
    check::positive(o.kw, 8, "kW")?;
    check::positive(o.kh, 9, "kH")?;
    check::positive(o.dw, 10, "dW")?;
    check::positive(o.dh, 11, "dH")?;
    check::non_negative(o.padw, 12, "padW")?;
    check::non_negative(o.padh, 13, "padH")?;
    check::dims(input, 2, "input", &[3, 4])?;
    let (batched, n, c, h, w) = image_dims(input);
    for (given, actual, arg, name) in [(o.input_width, w, 14, "inputWidth"), (o.input_height, h, 15, "inputHeight")] {
        if given != actual as i64 {
            return Err(check::size_err(arg, name, format_args!("is {given} but input is {}", input.desc())));
        }
    }
    let oh = out_len(h as i64, o.kh, o.dh, o.padh, 2, "input", "height")?;
    let ow = out_len(w as i64, o.kw, o.dw, o.padw, 2, "input", "width")?;
    for (given, actual, arg, name) in
        [(o.output_width, ow, 16, "outputWidth"), (o.output_height, oh, 17, "outputHeight")]
    {
        if given != actual as i64 {
            return Err(check::size_err(arg, name, format_args!("is {given} but the input and kernel give {actual}")));
        }
    }
    check::dims(weight, w_arg, w_name, &[3, 6])?;
    let n_out = weight.sizes[if weight.ndim() == 3 { 1 } else { 2 }];
    let want: Vec<i64> = if weight.ndim() == 3 {
        vec![(oh * ow) as i64, n_out, c as i64 * o.kh * o.kw]
    } else {
        vec![oh as i64, ow as i64, n_out, c as i64, o.kh, o.kw]
    };
    check::shape(weight, w_arg, w_name, &want)?;
    Ok(Dims {
        batched,
        n,
        c,
        h,
        w,
        n_out: n_out as usize,
        oh,
        ow,
        kh: o.kh as usize,
        kw: o.kw as usize,
        dh: o.dh as usize,
        dw: o.dw as usize,
        ph: o.padh as usize,
        pw: o.padw as usize,
    })
}

/// A scratch buffer: a buffer argument resized to a shape, or a temporary.
enum Scratch<T: Scalar> {
    Buf(Out<T>),
    Own(Vec<T>),
}

impl<T: NnReal> Scratch<T> {
    fn new(b: Option<&Tensor<T>>, shape: &[i64]) -> Result<Self> {
        match b {
            Some(t) => Ok(Scratch::Buf(Out::new(t, shape)?)),
            None => {
                let n = shape.iter().product::<i64>() as usize;
                Ok(Scratch::Own(crate::core::limits::try_filled(n, T::zero())?))
            }
        }
    }
    fn view(&self) -> Option<&View<T>> {
        match self {
            Scratch::Buf(o) => Some(o.view()),
            Scratch::Own(_) => None,
        }
    }
    fn as_mut(&mut self) -> &mut [T] {
        match self {
            Scratch::Buf(o) => o.as_mut(),
            Scratch::Own(v) => v,
        }
    }
}

/// The input row `iy` (or None in the padding) of window row `ky` at output row `oy`.
#[inline]
fn tap(o: usize, k: usize, d: usize, p: usize, size: usize) -> Option<usize> {
    (o * d + k).checked_sub(p).filter(|&i| i < size)
}

/// Unfolds `x` location-major into `cols` (`L x N x K`).
fn unfold<T: NnReal>(d: &Dims, x: &[T], cols: &mut [T]) {
    let (nk, plane) = (d.n * d.k(), d.h * d.w);
    buf::par_chunks(cols, nk, d.l() * nk, |l, cl| {
        let (oy, ox) = (l / d.ow, l % d.ow);
        for (r, row) in cl.chunks_mut(d.kw).enumerate() {
            // r = ((s*C + c)*kH + ky): one kernel row of one plane
            let ky = r % d.kh;
            let xp = &x[(r / d.kh) * plane..(r / d.kh + 1) * plane];
            match tap(oy, ky, d.dh, d.ph, d.h) {
                None => row.fill(T::zero()),
                Some(iy) => {
                    for (kx, v) in row.iter_mut().enumerate() {
                        *v = tap(ox, kx, d.dw, d.pw, d.w).map_or(T::zero(), |ix| xp[iy * d.w + ix]);
                    }
                }
            }
        }
    });
}

/// `gradOutput` (`N x nOut x L`) location-major: `L x N x nOut`.
fn by_location<T: NnReal>(d: &Dims, g: &[T]) -> Result<Vec<T>> {
    let (l, nn) = (d.l(), d.n * d.n_out);
    let mut t = crate::core::limits::try_filled(g.len(), T::zero())?;
    buf::par_chunks(&mut t, nn, g.len(), |li, row| {
        for (r, v) in row.iter_mut().enumerate() {
            *v = g[r * l + li];
        }
    });
    Ok(t)
}

/// `SpatialConvolutionLocal_updateOutput(state, input, output, weight, bias, finput,
/// fgradInput, kW, kH, dW, dH, padW, padH, inputWidth, inputHeight, outputWidth,
/// outputHeight)`; `fgradInput` is unused (`finput` too, on the device).
pub fn update_output<T: ConvElem>(
    input: &View<T>,
    output: &Tensor<T>,
    weight: &View<T>,
    bias: Option<&View<T>>,
    finput: Option<&Tensor<T>>,
    o: Opts,
) -> Result<()> {
    let d = dims(input, weight, 4, "weight", o)?;
    if let Some(b) = bias {
        check::shape(b, 5, "bias", &[d.n_out as i64, d.oh as i64, d.ow as i64])?;
    }
    let mut devs = vec![input.device(), output.with_view(|v| v.device()), weight.device()];
    devs.extend(bias.map(|b| b.device()));
    if on_device(&devs)? {
        let out = crate::ops::resize_out(output, &d.out_shape())?;
        let mut inputs = vec![input, weight];
        inputs.extend(bias);
        let tgt = target(&out, &inputs)?;
        device::local_forward(&d.geom(), d.n, d.n_out, &planes5(input, d.batched), weight, bias, &tgt.0)?;
        return finish(&out, tgt);
    }
    let bias = bias.map(native_view).transpose()?;
    let finput = finput.map(native_tensor).transpose()?;
    host_update_output(&d, native_view(input)?, native_tensor(output)?, native_view(weight)?, bias, finput)
}

fn host_update_output<T: NnReal>(
    d: &Dims,
    input: &View<T>,
    output: &Tensor<T>,
    weight: &View<T>,
    bias: Option<&View<T>>,
    finput: Option<&Tensor<T>>,
) -> Result<()> {
    let d = *d;
    let mut out = Out::new(output, &d.out_shape())?;
    let mut cols = Scratch::new(finput, &d.finput_shape())?;
    let outs: Vec<&View<T>> = [Some(out.view()), cols.view()].into_iter().flatten().collect();
    let x = buf::read(input, &outs)?;
    let w = buf::read(weight, &outs)?;
    let b = bias.map(|b| buf::read(b, &outs)).transpose()?;
    drop(outs);
    let (k, l, no, n) = (d.k(), d.l(), d.n_out, d.n);
    let cols_m = cols.as_mut();
    unfold(&d, &x, cols_m);
    let cols = &*cols_m;
    let mut tmp = crate::core::limits::try_filled(l * n * no, T::zero())?;
    par_try(&mut tmp, n * no, l * n * no * k, |li, t| {
        let (c, wl) = (&cols[li * n * k..(li + 1) * n * k], &w[li * no * k..(li + 1) * no * k]);
        buf::gemm(n, no, k, T::one(), Mat::n(c, k), Mat::t(wl, k), T::zero(), t, no)
    })?;
    buf::par_chunks(out.as_mut(), l, l * n * no, |r, plane| {
        let (s, p) = (r / no, r % no);
        for (li, v) in plane.iter_mut().enumerate() {
            *v = tmp[(li * n + s) * no + p] + b.as_ref().map_or(T::zero(), |b| b[p * l + li]);
        }
    });
    out.finish()
}

/// `SpatialConvolutionLocal_updateGradInput(state, input, gradOutput, gradInput, weight,
/// finput, fgradInput, kW, kH, dW, dH, padW, padH, inputWidth, inputHeight, outputWidth,
/// outputHeight)`: `gradInput` has `input`'s shape; `finput` is unused (`fgradInput` too, on
/// the device).
pub fn update_grad_input<T: ConvElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    weight: &View<T>,
    fgrad_input: Option<&Tensor<T>>,
    o: Opts,
) -> Result<()> {
    let d = dims(input, weight, 5, "weight", o)?;
    check::shape(grad_output, 3, "gradOutput", &d.out_shape())?;
    let devs = [input.device(), grad_output.device(), grad_input.with_view(|v| v.device()), weight.device()];
    if on_device(&devs)? {
        let gin = crate::ops::resize_out(grad_input, &input.sizes)?;
        let tgt = target(&gin, &[grad_output, weight])?;
        let img = planes5(&tgt.0, d.batched);
        device::local_grad_input(&d.geom(), d.n, d.n_out, grad_output, weight, &img)?;
        return finish(&gin, tgt);
    }
    let (grad_output, weight) = (native_view(grad_output)?, native_view(weight)?);
    let fgrad_input = fgrad_input.map(native_tensor).transpose()?;
    host_update_grad_input(&d, &input.sizes, grad_output, native_tensor(grad_input)?, weight, fgrad_input)
}

fn host_update_grad_input<T: NnReal>(
    d: &Dims,
    in_shape: &[i64],
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    weight: &View<T>,
    fgrad_input: Option<&Tensor<T>>,
) -> Result<()> {
    let d = *d;
    let mut out = Out::new(grad_input, in_shape)?;
    let mut gcols = Scratch::new(fgrad_input, &d.finput_shape())?;
    let outs: Vec<&View<T>> = [Some(out.view()), gcols.view()].into_iter().flatten().collect();
    let g = buf::read(grad_output, &outs)?;
    let w = buf::read(weight, &outs)?;
    drop(outs);
    let (k, l, no, n) = (d.k(), d.l(), d.n_out, d.n);
    let gt = by_location(&d, &g)?;
    let gcols = gcols.as_mut();
    par_try(gcols, n * k, l * n * no * k, |li, gc| {
        let (gl, wl) = (&gt[li * n * no..(li + 1) * n * no], &w[li * no * k..(li + 1) * no * k]);
        buf::gemm(n, k, no, T::one(), Mat::n(gl, no), Mat::n(wl, k), T::zero(), gc, k)
    })?;
    let gcols = &*gcols;
    let kk = d.kh * d.kw;
    buf::par_chunks(out.as_mut(), d.h * d.w, n * l * k, |r, gi| {
        // r = s*C + c: fold every window tap of plane c of sample s
        let (s, c) = (r / d.c, r % d.c);
        gi.fill(T::zero());
        for li in 0..l {
            let (oy, ox) = (li / d.ow, li % d.ow);
            let base = (li * n + s) * k + c * kk;
            for ky in 0..d.kh {
                let Some(iy) = tap(oy, ky, d.dh, d.ph, d.h) else { continue };
                for kx in 0..d.kw {
                    if let Some(ix) = tap(ox, kx, d.dw, d.pw, d.w) {
                        gi[iy * d.w + ix] += gcols[base + ky * d.kw + kx];
                    }
                }
            }
        }
    });
    out.finish()
}

/// `SpatialConvolutionLocal_accGradParameters(state, input, gradOutput, gradWeight, gradBias,
/// finput, fgradInput, kW, kH, dW, dH, padW, padH, inputWidth, inputHeight, outputWidth,
/// outputHeight, scale)`: per location, `gradWeight[l] += scale * gradOutput[:, :, l]^T @
/// windows(l)`, `gradBias += scale * sum over the batch of gradOutput` (skipped when
/// `gradBias` is NULL); `fgradInput` is unused (`finput` too, on the device).
pub fn acc_grad_parameters<T: ConvElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    grad_bias: Option<&Tensor<T>>,
    finput: Option<&Tensor<T>>,
    o: Opts,
    scale: f64,
) -> Result<()> {
    let d = dims(input, &grad_weight.view(), 4, "gradWeight", o)?;
    check::shape(grad_output, 3, "gradOutput", &d.out_shape())?;
    if let Some(gb) = grad_bias {
        check::shape(&gb.view(), 5, "gradBias", &[d.n_out as i64, d.oh as i64, d.ow as i64])?;
    }
    let mut devs = vec![input.device(), grad_output.device(), grad_weight.with_view(|v| v.device())];
    devs.extend(grad_bias.map(|b| b.with_view(|v| v.device())));
    if on_device(&devs)? {
        let img = planes5(input, d.batched);
        return device::local_acc(&d.geom(), d.n, d.n_out, &img, grad_output, grad_weight, grad_bias, scale);
    }
    let (input, grad_output) = (native_view(input)?, native_view(grad_output)?);
    let grad_bias = grad_bias.map(native_tensor).transpose()?;
    let finput = finput.map(native_tensor).transpose()?;
    host_acc(&d, input, grad_output, native_tensor(grad_weight)?, grad_bias, finput, scale)
}

fn host_acc<T: NnReal>(
    d: &Dims,
    input: &View<T>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    grad_bias: Option<&Tensor<T>>,
    finput: Option<&Tensor<T>>,
    scale: f64,
) -> Result<()> {
    let d = *d;
    let (k, l, no, n) = (d.k(), d.l(), d.n_out, d.n);
    let mut grads = Grads::new(grad_weight, l * no * k, grad_bias, no * l, 4)?;
    let mut cols = Scratch::new(finput, &d.finput_shape())?;
    let mut outs = grads.views();
    outs.extend(cols.view());
    let x = buf::read(input, &outs)?;
    let g = buf::read(grad_output, &outs)?;
    drop(outs);
    let scale = T::from_f64(scale);
    let cols_m = cols.as_mut();
    unfold(&d, &x, cols_m);
    let cols = &*cols_m;
    let gt = by_location(&d, &g)?;
    par_try(grads.w.as_mut(), no * k, l * n * no * k, |li, gwl| {
        let (gl, cl) = (&gt[li * n * no..(li + 1) * n * no], &cols[li * n * k..(li + 1) * n * k]);
        buf::gemm(no, k, n, scale, Mat::t(gl, no), Mat::n(cl, k), T::one(), gwl, k)
    })?;
    if let Some(gb) = &mut grads.b {
        buf::add_rows(gb.as_mut(), &g, scale);
    }
    grads.finish()
}
