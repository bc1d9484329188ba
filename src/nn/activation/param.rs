//! The activations with a parameter, noise or halves: PReLU (a learned negative slope, one per
//! plane or shared), RReLU (random negative slopes in training) and GatedLinear (the first half
//! of a dimension gated by the sigmoid of the second).

use super::{ActReal, backward, check_nelement, forward, paired, real};
use crate::core::allocator::Device;
use crate::core::dtype::Scalar;
use crate::core::error::{Error, Result};
use crate::core::tensor::{Tensor, View};
use crate::cuda::launch::Call;
use crate::exec::backend::Backend;
use crate::nn::buf::{self, Out};
use crate::nn::check;
use crate::nn::{NnElem, NnReal, native_tensor, native_view, zero};
use crate::ops::random::Generator;
use crate::ops::{self, num::Num};

/// `1 / (1 + exp(-x))` without overflow.
#[inline(always)]
fn sigmoid<T: NnReal>(x: T) -> T {
    let e = (-x.abs()).exp();
    let r = T::one() / (T::one() + e);
    if x >= T::zero() { r } else { e * r }
}

/// GatedLinear's layout: `outer` blocks of `2 * half` rows of `inner` elements (halving
/// dimension `dim`, 0-based, argument `dim_arg`) and the output's shape.
fn glu_dims<T: Scalar>(input: &View<T>, dim: i32, dim_arg: u32) -> Result<(usize, usize, usize, Vec<i64>)> {
    let nd = input.ndim();
    if dim < 0 || dim as usize >= nd {
        return Err(check::invalid(
            dim_arg,
            "dim",
            format_args!("dimension {dim} out of range for input {} (0-based)", input.desc()),
        ));
    }
    let d = dim as usize;
    let n = input.sizes[d];
    if n % 2 != 0 {
        return Err(check::size_err(
            2,
            "input",
            format_args!("halving dimension {dim} must have an even size, got {}", input.desc()),
        ));
    }
    let outer: i64 = input.sizes[..d].iter().product();
    let inner: i64 = input.sizes[d + 1..].iter().product();
    let mut shape = input.sizes.clone();
    shape[d] = n / 2;
    Ok((outer as usize, (n / 2) as usize, inner as usize, shape))
}

/// `GatedLinear_updateOutput(input, output, dim)`: `a * sigmoid(b)` where `a` and `b` are the
/// first and second halves of `input` along `dim` (0-based).
pub fn glu_update_output<T: NnElem>(input: &View<T>, output: &Tensor<T>, dim: i32) -> Result<()> {
    let (_, half, _, _) = glu_dims(input, dim, 4)?;
    let (a, b) = (input.narrow(dim, 0, half as i64)?, input.narrow(dim, half as i64, half as i64)?);
    ops::pointwise2(output, &a, &b, Call::new("nnGlu"), |a: T, b: T| T::from_r(a.to_r() * sigmoid(b.to_r())))
}

/// `GatedLinear_updateGradInput(input, gradOutput, gradInput, dim)`: `gradInput`'s first half
/// `sigmoid(b) * g`, its second half `(1 - sigmoid(b)) * sigmoid(b) * g * a`.
pub fn glu_update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    dim: i32,
) -> Result<()> {
    let (_, half, _, shape) = glu_dims(input, dim, 5)?;
    check::shape(grad_output, 3, "gradOutput", &shape)?;
    Backend::of(&[input.device(), grad_output.device(), grad_input.with_view(|v| v.device())])?;
    let out = ops::resize_out(grad_input, &input.sizes)?;
    // each half reads both halves of the input: an output sharing their memory is written last
    let shared = out.same_storage(input) || out.same_storage(grad_output);
    let o = if shared { ops::temp_like(&out, &input.sizes)? } else { out.clone() };
    let h = half as i64;
    let (a, b) = (input.narrow(dim, 0, h)?, input.narrow(dim, h, h)?);
    let (oa, ob) = (o.narrow(dim, 0, h)?, o.narrow(dim, h, h)?);
    ops::map3(&oa, &a, &b, grad_output, Call::new("nnGluBackA"), |_: T, b: T, g: T| {
        T::from_r(sigmoid(b.to_r()) * g.to_r())
    })?;
    ops::map3(&ob, &a, &b, grad_output, Call::new("nnGluBackB"), |a: T, b: T, g: T| {
        let s = sigmoid(b.to_r());
        T::from_r((<T::R as Num>::one() - s) * s * g.to_r() * a.to_r())
    })?;
    if shared { ops::copy::copy(&out, &o) } else { Ok(()) }
}

/// PReLU's per-plane layout: `batch` blocks of `planes` planes of `ks` elements; `None` for one
/// shared weight (`nOutputPlane == 0`). Checks `weight` (argument `w_arg`) and `nOutputPlane`
/// (argument `p_arg`).
fn prelu_dims<T: Scalar>(
    input: &View<T>,
    weight: &View<T>,
    w_arg: u32,
    planes: i64,
    p_arg: u32,
) -> Result<Option<(usize, usize, usize)>> {
    check::non_negative(planes, p_arg, "nOutputPlane")?;
    check::numel(weight, w_arg, "weight", planes.max(1) as usize)?;
    if planes == 0 {
        return Ok(None);
    }
    let nd = input.ndim();
    let cdim = usize::from(nd > 1);
    if input.sizes.get(cdim) != Some(&planes) {
        return Err(check::size_err(
            2,
            "input",
            format_args!("expected nOutputPlane = {planes} planes in dimension {cdim}, got {}", input.desc()),
        ));
    }
    let batch = if nd > 1 { input.sizes[0] } else { 1 };
    let ks: i64 = input.sizes.iter().skip(2).product();
    Ok(Some((batch as usize, planes as usize, ks as usize)))
}

/// PReLU's weight broadcast to `input`'s shape: the one shared weight everywhere, or each
/// plane's weight over its plane (dimension 1, or 0 for a 1-D input).
fn prelu_weight<T: Scalar>(
    input: &View<T>,
    weight: &View<T>,
    layout: Option<(usize, usize, usize)>,
) -> Result<View<T>> {
    let nd = input.ndim();
    let mut shape = vec![1i64; nd.max(1)];
    if let Some((_, planes, _)) = layout {
        shape[usize::from(nd > 1)] = planes as i64;
    }
    let w = paired(weight.clone(), &shape)?;
    if nd == 0 { w.reshape_view(&input.sizes) } else { w.expand(&input.sizes) }
}

/// `PReLU_updateOutput(input, output, weight, nOutputPlane)`: `x > 0 ? x : w * x`, `w` the
/// weight of the element's plane (dimension 1, or 0 for a 1-D input), or `weight[0]` for all
/// when `nOutputPlane` is 0.
pub fn prelu_update_output<T: NnElem>(
    input: &Tensor<T>,
    output: &Tensor<T>,
    weight: &View<T>,
    planes: i64,
) -> Result<()> {
    let xv = input.view();
    let layout = prelu_dims(&xv, weight, 4, planes, 5)?;
    let w = prelu_weight(&xv, weight, layout)?;
    ops::pointwise2(output, &xv, &w, Call::new("nnPrelu"), |x: T, w: T| {
        let (x, w) = (x.to_r(), w.to_r());
        T::from_r(if x > <T::R as Num>::zero() { x } else { w * x })
    })
}

/// `PReLU_updateGradInput(input, gradOutput, gradInput, weight, nOutputPlane)`: `x > 0 ? g :
/// w * g`.
pub fn prelu_update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &Tensor<T>,
    grad_input: &Tensor<T>,
    weight: &View<T>,
    planes: i64,
) -> Result<()> {
    let gv = grad_output.view();
    check_nelement(&gv, input, "input")?;
    let layout = prelu_dims(input, weight, 5, planes, 6)?;
    let w = prelu_weight(input, weight, layout)?;
    let g = paired(gv, &input.sizes)?;
    ops::pointwise3(grad_input, input, &g, &w, Call::new("nnPreluBack"), |x: T, g: T, w: T| {
        let (x, g, w) = (x.to_r(), g.to_r(), w.to_r());
        T::from_r(if x > <T::R as Num>::zero() { g } else { w * g })
    })
}

/// `sum of x * g over the elements with x <= 0`, in f64.
fn neg_dot<T: NnReal>(x: &[T], g: &[T]) -> f64 {
    x.iter().zip(g).fold(0.0, |s, (&x, &g)| if x <= T::zero() { s + (x * g).to_f64() } else { s })
}

/// Elements per block of the shared-weight sum.
const BLOCK: usize = 8192;

/// `PReLU_accGradParameters(input, gradOutput, gradInput, weight, gradWeight, gradWeightBuf,
/// gradWeightBuf2, nOutputPlane, scale)`: `gradWeight[plane] += scale * sum(x * g)` over the
/// plane's elements with `x <= 0` (all elements into `gradWeight[0]` when `nOutputPlane` is 0).
/// Sums are kept in f64; `gradWeightBuf` and `gradWeightBuf2` are not used (nor are they by
/// torch7).
pub fn prelu_acc_grad_parameters<T: NnElem>(
    input: &View<T>,
    grad_output: &View<T>,
    weight: &View<T>,
    grad_weight: &Tensor<T>,
    planes: i64,
    scale: f64,
) -> Result<()> {
    check_nelement(grad_output, input, "input")?;
    let layout = prelu_dims(input, weight, 5, planes, 9)?;
    if let Device::Cuda(_) = input.device() {
        return super::device::prelu_acc(input, grad_output, grad_weight, layout, scale);
    }
    prelu_acc_host(native_view(input)?, native_view(grad_output)?, native_tensor(grad_weight)?, layout, scale)
}

/// The host half of `prelu_acc_grad_parameters`.
fn prelu_acc_host<T: ActReal>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    layout: Option<(usize, usize, usize)>,
    scale: f64,
) -> Result<()> {
    let n_w = layout.map_or(1, |(_, p, _)| p);
    let mut gw = Out::acc(grad_weight, n_w, 6, "gradWeight")?;
    let x = buf::read(input, &[gw.view()])?;
    let g = buf::read(grad_output, &[gw.view()])?;
    let mut sums = vec![0.0f64; n_w];
    match layout {
        None => {
            let mut parts = vec![0.0f64; x.len().div_ceil(BLOCK)];
            buf::par_chunks(&mut parts, 1, x.len() * 2, |k, s| {
                let r = k * BLOCK..((k + 1) * BLOCK).min(x.len());
                s[0] = neg_dot(&x[r.clone()], &g[r]);
            });
            sums[0] = parts.iter().sum();
        }
        Some((batch, planes, ks)) => {
            buf::par_chunks(&mut sums, 1, x.len() * 2, |j, s| {
                s[0] = (0..batch).map(|b| (b * planes + j) * ks).map(|o| neg_dot(&x[o..o + ks], &g[o..o + ks])).sum();
            });
        }
    }
    let sc: T = real::<T>(scale);
    for (w, &s) in gw.as_mut().iter_mut().zip(&sums) {
        *w += sc * T::from_f64(s);
    }
    gw.finish()
}

/// `RReLU_updateOutput(input, output, noise, lower, upper, train, inplace, generator)`.
/// Training: each element `x <= 0` is multiplied by a slope drawn uniformly in `[lower, upper)`,
/// stored in `noise` (1 for the others; `noise` is resized like `input`). On the host the slopes
/// come from `generator` (required) in row-major order; on the device from the device's own
/// generator (`generator` is cunn's unused `void *`), drawn for every element. Evaluation: the
/// slope is `(lower + upper) / 2`; `noise` and `generator` are not used (may be NULL).
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn rrelu_update_output<T: NnElem>(
    input: &Tensor<T>,
    output: &Tensor<T>,
    noise: Option<&Tensor<T>>,
    lower: f64,
    upper: f64,
    train: bool,
    inplace: bool,
    generator: Option<&Generator>,
) -> Result<()> {
    let (lo, hi) = (real::<T>(lower), real::<T>(upper));
    if !train {
        let s = (lo + hi) / real::<T>(2.0);
        let k = Call::new("nnRrelu").value(T::from_r(s));
        return forward::<true, T>(input, output, inplace, k, move |x| if x <= zero(x) { x * s } else { x });
    }
    let noise = noise.ok_or_else(|| Error::null(4, "noise"))?;
    let (l, u) = (lo.to_f64(), hi.to_f64());
    if !(l.is_finite() && u.is_finite() && l <= u) {
        return Err(check::invalid(
            5,
            "lower",
            format_args!("expected finite lower <= upper, got {lower} and {upper}"),
        ));
    }
    let xv = input.view();
    Backend::of(&[xv.device(), output.with_view(|v| v.device()), noise.with_view(|v| v.device())])?;
    if let Device::Cuda(_) = xv.device() {
        return rrelu_train_device(input, output, noise, (l, u), inplace);
    }
    let generator = generator.ok_or_else(|| Error::null(9, "generator"))?;
    rrelu_train_host(native_tensor(input)?, native_tensor(output)?, native_tensor(noise)?, (l, u), inplace, generator)
}

/// RReLU's training pass on the device: the slopes drawn for every element by the device's
/// generator (rounded to the element type below `upper`), 1 kept where `x > 0`, then `x * noise`.
fn rrelu_train_device<T: NnElem>(
    input: &Tensor<T>,
    output: &Tensor<T>,
    noise: &Tensor<T>,
    (l, u): (f64, f64),
    inplace: bool,
) -> Result<()> {
    let x = input.view();
    let nz = ops::resize_out(noise, &x.sizes)?;
    if l < u {
        ops::random::device::uniform(noise, l, u)?;
    } else {
        ops::arith::fill(noise, T::from_f64(l))?;
    }
    ops::pointwise2(
        noise,
        &x,
        &nz,
        Call::new("nnRreluNoise"),
        |x: T, r: T| {
            if x.to_r() <= zero(x.to_r()) { r } else { T::one() }
        },
    )?;
    let r = if inplace { input } else { output };
    ops::pointwise2(r, &x, &nz, Call::new("cmul"), |a: T, b: T| T::from_r(a.to_r() * b.to_r()))?;
    if inplace {
        output.set_view(input.view());
    }
    Ok(())
}

/// RReLU's training pass on the host: the slopes from `generator` in row-major order.
fn rrelu_train_host<T: NnReal>(
    input: &Tensor<T>,
    output: &Tensor<T>,
    noise: &Tensor<T>,
    (l, u): (f64, f64),
    inplace: bool,
    generator: &Generator,
) -> Result<()> {
    let xv = input.view();
    let mut nz = Out::new(noise, &xv.sizes)?;
    let mut out = if inplace { Out::acc(input, xv.numel(), 2, "input")? } else { Out::new(output, &xv.sizes)? };
    let x = if inplace { None } else { Some(buf::read(&xv, &[out.view(), nz.view()])?) };
    {
        let (o, r) = (out.as_mut(), nz.as_mut());
        let mut mt = generator.lock();
        for (i, (o, r)) in o.iter_mut().zip(r.iter_mut()).enumerate() {
            let v = x.as_ref().map_or(*o, |x| x[i]);
            if v <= T::zero() {
                let s = T::from_f64(mt.uniform(l, u));
                *o = v * s;
                *r = s;
            } else {
                *o = v;
                *r = T::one();
            }
        }
    }
    out.finish()?;
    nz.finish()?;
    if inplace {
        output.set_view(input.view());
    }
    Ok(())
}

/// `RReLU_updateGradInput(input, gradOutput, gradInput, noise, lower, upper, train, inplace)`:
/// in training (when `upper - lower > 1e-6`, as torch7) `g * noise`, else `x <= 0 ? g * (lower
/// + upper) / 2 : g`.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn rrelu_update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &Tensor<T>,
    grad_input: &Tensor<T>,
    noise: Option<&View<T>>,
    lower: f64,
    upper: f64,
    train: bool,
    inplace: bool,
) -> Result<()> {
    check_nelement(&grad_output.view(), input, "input")?;
    let (lo, hi) = (real::<T>(lower), real::<T>(upper));
    if train && (hi - lo).to_f64() > 1e-6 {
        let noise = noise.ok_or_else(|| Error::null(5, "noise"))?;
        check::same_numel(noise, 5, "noise", input, "input")?;
        let k = Call::new("cmul");
        return backward::<true, T>(noise.clone(), &input.sizes, grad_output, grad_input, inplace, k, |r, g| g * r);
    }
    let s = (lo + hi) / real::<T>(2.0);
    let k = Call::new("nnRreluBack").value(T::from_r(s));
    backward::<true, T>(input.clone(), &input.sizes, grad_output, grad_input, inplace, k, move |x, g| {
        if x <= zero(x) { g * s } else { g }
    })
}
