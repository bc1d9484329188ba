//! FeatureLPPooling: an Lp norm over windows of `width` features (stride `stride`):
//! `output[f] = (sum_{i < width} input[f * stride + i] ^ p) ^ (1 / p)` along the feature
//! dimension of `[batch x] features [x opt1 [x opt2]]` (batchMode says whether the first
//! dimension is a batch), computed in double. As in torch7 the input is not made absolute (an
//! odd `p` on negative inputs can give NaN, as PyTorch's `lp_pool1d` does), and the gradient
//! is `gradOutput * (input / output) ^ (p - 1)`, zero where the output is zero.

use super::device::{self, Layout, dense};
use super::{Planes, Windows, on_device};
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::nn::buf::{self, Out};
use crate::nn::check;
use crate::nn::{NnElem, NnReal, native_tensor, native_view};

/// `(batch, features, rest)`, the output shape and the features out, after the checks. `arg`
/// is the input's argument number, `arg_p` power's (width and stride follow).
fn dims<T: crate::Scalar>(
    input: &View<T>,
    power: f64,
    width: i32,
    stride: i32,
    batch: bool,
    arg: u32,
    arg_p: u32,
) -> Result<(usize, usize, usize, Vec<i64>, usize)> {
    check::dims(input, arg, "input", if batch { &[2, 3, 4] } else { &[1, 2, 3] })?;
    if !(power.is_finite() && power != 0.0) {
        return Err(check::invalid(arg_p, "power", format_args!("must be finite and non-zero, got {power}")));
    }
    if !(2..=16).contains(&width) {
        return Err(check::invalid(arg_p + 1, "width", format_args!("must be between 2 and 16, got {width}")));
    }
    if !(1..=4).contains(&stride) {
        return Err(check::invalid(arg_p + 2, "stride", format_args!("must be between 1 and 4, got {stride}")));
    }
    let s: Vec<usize> = input.sizes.iter().map(|&x| x as usize).collect();
    let fd = usize::from(batch);
    let (n, f) = (if batch { s[0] } else { 1 }, s[fd]);
    if f < width as usize {
        return Err(check::size_err(
            arg,
            "input",
            format_args!("feature dimension ({f}) must be >= width ({width}) ({})", input.desc()),
        ));
    }
    let fo = (f - width as usize) / stride as usize + 1;
    let rest = s[fd + 1..].iter().product();
    let mut shape = input.sizes.clone();
    shape[fd] = fo as i64;
    Ok((n, f, rest, shape, fo))
}

/// The planes (one per batch entry and position of the dimensions after the features) and the
/// windows along the features, for the device kernels.
fn device_geo(batch: bool, n: usize, f: usize, r: usize, fo: usize, width: i32, stride: i32) -> (Planes, [Windows; 3]) {
    let pl = Planes { nd: 1, batched: batch, n, c: r, size: [1, 1, f] };
    let one = || Windows { start: vec![0], count: vec![1], step: 1 };
    let w = Windows { start: (0..fo).map(|j| j * stride as usize).collect(), count: vec![width as usize; fo], step: 1 };
    (pl, [one(), one(), w])
}

/// `FeatureLPPooling_updateOutput(input, output, power, width, stride, batchMode)`. On the
/// device: the `poolLp` kernel (sums in double) on a contiguous input.
pub fn update_output<T: NnElem>(
    input: &View<T>,
    output: &Tensor<T>,
    power: f64,
    width: i32,
    stride: i32,
    batch: bool,
) -> Result<()> {
    if on_device(&[input.device(), output.with_view(|v| v.device())])? {
        let (n, f, r, shape, fo) = dims(input, power, width, stride, batch, 2, 4)?;
        let (pl, w) = device_geo(batch, n, f, r, fo, width, stride);
        let div = [w[0].count.clone(), w[1].count.clone(), w[2].count.clone()];
        let x = dense(input)?;
        let l = Layout::Dense { fd: usize::from(batch) };
        return device::avg_forward("poolLp", &x, output, l, &pl, &shape, &w, &div, power);
    }
    host_update_output(native_view(input)?, native_tensor(output)?, power, width, stride, batch)
}

fn host_update_output<T: NnReal>(
    input: &View<T>,
    output: &Tensor<T>,
    power: f64,
    width: i32,
    stride: i32,
    batch: bool,
) -> Result<()> {
    let (_, f, r, shape, fo) = dims(input, power, width, stride, batch, 2, 4)?;
    let mut out = Out::new(output, &shape)?;
    let x = buf::read(input, &[out.view()])?;
    let (w, s, inv) = (width as usize, stride as usize, 1.0 / power);
    super::par_planes(out.as_mut(), fo * r, fo * r * w, |b, o| {
        let xb = &x[b * f * r..(b + 1) * f * r];
        let mut acc = vec![0f64; r];
        for (j, orow) in o.chunks_mut(r.max(1)).enumerate() {
            acc.fill(0.0);
            for i in 0..w {
                let row = &xb[(j * s + i) * r..(j * s + i + 1) * r];
                for (a, &v) in acc.iter_mut().zip(row) {
                    *a += v.to_f64().powf(power);
                }
            }
            for (e, &a) in orow.iter_mut().zip(&acc) {
                *e = T::from_f64(a.powf(inv));
            }
        }
    });
    out.finish()
}

/// `FeatureLPPooling_updateGradInput(gradOutput, input, output, gradInput, power, width, stride,
/// batchMode)`: `output` is the forward's result (used as torch7 does). On the device: the
/// `poolLpBack` kernel (terms in double) on contiguous operands.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn update_grad_input<T: NnElem>(
    grad_output: &View<T>,
    input: &View<T>,
    output: &View<T>,
    grad_input: &Tensor<T>,
    power: f64,
    width: i32,
    stride: i32,
    batch: bool,
) -> Result<()> {
    let devs = [grad_output.device(), input.device(), output.device(), grad_input.with_view(|v| v.device())];
    if on_device(&devs)? {
        let (n, f, r, shape, fo) = dims(input, power, width, stride, batch, 3, 6)?;
        check::shape(grad_output, 2, "gradOutput", &shape)?;
        check::shape(output, 4, "output", &shape)?;
        let (pl, w) = device_geo(batch, n, f, r, fo, width, stride);
        let div = [w[0].count.clone(), w[1].count.clone(), w[2].count.clone()];
        let (go, x, y) = (dense(grad_output)?, dense(input)?, dense(output)?);
        let l = Layout::Dense { fd: usize::from(batch) };
        let sizes = input.sizes.clone();
        return device::avg_backward("poolLpBack", &go, grad_input, &sizes, l, &pl, &w, &div, Some((&x, &y, power)));
    }
    let (go, x, y) = (native_view(grad_output)?, native_view(input)?, native_view(output)?);
    host_update_grad_input(go, x, y, native_tensor(grad_input)?, power, width, stride, batch)
}

#[allow(clippy::too_many_arguments)] // torch7's signature
fn host_update_grad_input<T: NnReal>(
    grad_output: &View<T>,
    input: &View<T>,
    output: &View<T>,
    grad_input: &Tensor<T>,
    power: f64,
    width: i32,
    stride: i32,
    batch: bool,
) -> Result<()> {
    let (_, f, r, shape, fo) = dims(input, power, width, stride, batch, 3, 6)?;
    check::shape(grad_output, 2, "gradOutput", &shape)?;
    check::shape(output, 4, "output", &shape)?;
    let mut gi = Out::new(grad_input, &input.sizes)?;
    let x = buf::read(input, &[gi.view()])?;
    let y = buf::read(output, &[gi.view()])?;
    let go = buf::read(grad_output, &[gi.view()])?;
    let (w, s, olen) = (width as usize, stride as usize, fo * r);
    super::par_planes(gi.as_mut(), f * r, f * r + olen * w, |b, g| {
        g.fill(T::zero());
        let xb = &x[b * f * r..(b + 1) * f * r];
        let (yb, gb) = (&y[b * olen..(b + 1) * olen], &go[b * olen..(b + 1) * olen]);
        for j in 0..fo {
            let (yr, gr) = (&yb[j * r..(j + 1) * r], &gb[j * r..(j + 1) * r]);
            for i in 0..w {
                let k = (j * s + i) * r;
                for (((e, &v), &yv), &gv) in g[k..k + r].iter_mut().zip(&xb[k..k + r]).zip(yr).zip(gr) {
                    if yv != T::zero() {
                        *e += T::from_f64(gv.to_f64() * (v.to_f64() / yv.to_f64()).powf(power - 1.0));
                    }
                }
            }
        }
    });
    gi.finish()
}
