//! SpatialCrossMapLRN (cunn's `nn.SpatialCrossMapLRN`; THNN has none: THCUNN only): local
//! response normalization across channels of a `C x H x W` or `N x C x H x W` input,
//!
//!   scale[c] = k + alpha / size * sum_{c' = c - (size - 1) / 2}^{c + size / 2} input[c']^2
//!   output[c] = input[c] * scale[c]^-beta
//!
//! (channels outside `0..C` count as zero; for an odd `size` the window is centred on `c`, as in
//! `F.local_response_norm`), and its gradient
//!
//!   gradInput[c] = gradOutput[c] * scale[c]^-beta
//!                  - 2 alpha beta / size * input[c] * sum_{c' whose window holds c} gradOutput[c'] * output[c'] / scale[c']
//!
//! with `scale` written by `updateOutput` and read back (with `output`) by `updateGradInput`.
//! On the device: the window sums are the padding kernel's table map along the channels (one
//! thread per element, each sum in channel order: deterministic; the backward pass's window is
//! the forward's transposed), the rest broadcast pointwise ops, all in the compute type (Half:
//! f32, each stored value rounded once).

use crate::core::allocator::Device;
use crate::core::error::{Error, Result};
use crate::core::tensor::{Tensor, View};
use crate::exec::backend::Backend;
use crate::nn::NnElem;
use crate::nn::check;
use crate::nn::conv::device::in_r;
use crate::nn::sample::device::{Table, along};
use crate::ops::arith::{ArithOp, binary_op, scalar_op};
use crate::ops::num::Num;
use crate::ops::{self, copy::copy};

/// (planes, channels, elements per channel plane) of a 3-D or 4-D input.
fn geometry<T: NnElem>(input: &View<T>, size: i32, size_arg: u32) -> Result<(usize, usize, usize)> {
    check::dims(input, 2, "input", &[3, 4])?;
    check::positive(size as i64, size_arg, "size")?;
    let s = &input.sizes;
    let nd = s.len();
    let planes = if nd == 4 { s[0] as usize } else { 1 };
    Ok((planes, s[nd - 3] as usize, (s[nd - 2] * s[nd - 1]) as usize))
}

fn on_device(devices: &[Device]) -> Result<()> {
    match Backend::of(devices)? {
        Backend::Cuda(_) => Ok(()),
        Backend::Host => Err(Error::invalid("SpatialCrossMapLRN runs on the device only (THNN has no host version)")),
    }
}

fn dev_of<T: NnElem>(t: &Tensor<T>) -> Device {
    t.with_view(|v| v.device())
}

/// A fresh compute-type temporary shaped `(planes, c, inner)` on `like`'s device.
fn temp<T: NnElem>(like: &View<T>, g: (usize, usize, usize)) -> Result<crate::core::refcount::Rc<Tensor<T::R>>> {
    Ok(Tensor::new(ops::temp_like::<T::R, T>(like, &[g.0 as i64, g.1 as i64, g.2 as i64])?))
}

/// `v` in the compute type as a `(planes, c, inner)` view.
fn flat_r<T: NnElem>(v: &View<T>, g: (usize, usize, usize)) -> Result<View<T::R>> {
    let r = in_r(&crate::nn::activation::paired(v.clone(), &[g.0 as i64, g.1 as i64, g.2 as i64])?)?;
    crate::nn::activation::paired(r, &[g.0 as i64, g.1 as i64, g.2 as i64])
}

/// `SpatialCrossMapLRN_updateOutput(state, input, output, scale, size, alpha, beta, k)`: `output`
/// and `scale` resized like `input`.
pub fn update_output<T: NnElem>(
    input: &View<T>,
    output: &Tensor<T>,
    scale: &Tensor<T>,
    size: i32,
    alpha: f64,
    beta: f64,
    k: f64,
) -> Result<()> {
    on_device(&[input.device(), dev_of(output), dev_of(scale)])?;
    let g = geometry(input, size, 5)?;
    let size = size as usize;
    let r = |v: f64| T::R::from_f64(v);
    let x = flat_r(input, g)?;
    let sq = temp(input, g)?;
    binary_op(&sq, &x, ArithOp::Mul, &x)?;
    let sums = temp(input, g)?;
    along::<T::R>(&sq.view(), &sums, g, Table::window(g.1, (size - 1) / 2, size / 2, T::R::one()))?;
    let sc = sums.view();
    scalar_op(&sums, &sc, ArithOp::Mul, r(alpha / size as f64))?;
    scalar_op(&sums, &sc, ArithOp::Add, r(k))?;
    // output = input * scale^-beta (from the unrounded scale)
    scalar_op(&sq, &sc, ArithOp::Pow, r(-beta))?;
    let y = sq.view();
    binary_op(&sq, &y, ArithOp::Mul, &x)?;
    let so = ops::resize_out(scale, &input.sizes)?;
    let yo = ops::resize_out(output, &input.sizes)?;
    copy(&yo, &y.reshape_view(&input.sizes)?)?;
    copy(&so, &sc.reshape_view(&input.sizes)?)
}

/// `SpatialCrossMapLRN_updateGradInput(state, input, gradOutput, gradInput, scale, output, size,
/// alpha, beta, k)`: `gradInput` resized like `input`; `gradOutput`, `scale` and `output` (as
/// `updateOutput` left them) shaped like `input`. `k` is unused (it is in `scale`).
#[allow(clippy::too_many_arguments)] // cunn's signature
pub fn update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    scale: &View<T>,
    output: &View<T>,
    size: i32,
    alpha: f64,
    beta: f64,
    k: f64,
) -> Result<()> {
    let _ = k;
    on_device(&[input.device(), grad_output.device(), dev_of(grad_input), scale.device(), output.device()])?;
    let g = geometry(input, size, 7)?;
    check::same_shape(grad_output, 3, "gradOutput", input, "input")?;
    check::same_shape(scale, 5, "scale", input, "input")?;
    check::same_shape(output, 6, "output", input, "input")?;
    let size = size as usize;
    let r = |v: f64| T::R::from_f64(v);
    let (x, go, sc, y) = (flat_r(input, g)?, flat_r(grad_output, g)?, flat_r(scale, g)?, flat_r(output, g)?);
    // ratio = gradOutput * output / scale, summed over the windows that hold each channel
    let ratio = temp(input, g)?;
    let rv = ratio.view();
    binary_op(&ratio, &go, ArithOp::Mul, &y)?;
    binary_op(&ratio, &rv, ArithOp::Div, &sc)?;
    let fwd = Table::window(g.1, (size - 1) / 2, size / 2, T::R::one());
    let sums = temp(input, g)?;
    along::<T::R>(&rv, &sums, g, fwd.transposed(g.1))?;
    // gradInput = gradOutput * scale^-beta - (2 alpha beta / size) * input * sums
    let sv = sums.view();
    binary_op(&sums, &sv, ArithOp::Mul, &x)?;
    scalar_op(&sums, &sv, ArithOp::Mul, r(2.0 * alpha * beta / size as f64))?;
    scalar_op(&ratio, &sc, ArithOp::Pow, r(-beta))?;
    binary_op(&ratio, &rv, ArithOp::Mul, &go)?;
    binary_op(&ratio, &rv, ArithOp::Sub, &sv)?;
    let gi = ops::resize_out(grad_input, &input.sizes)?;
    copy(&gi, &rv.reshape_view(&input.sizes)?)
}
