//! SpatialUpSamplingNearest, VolumetricUpSamplingNearest (each input element repeated
//! `scale_factor` times along the last 2 or 3 dimensions, `F.interpolate(scale_factor=,
//! mode='nearest')`), SpatialUpSamplingBilinear and VolumetricUpSamplingTrilinear (linear
//! interpolation to given output sizes with the corners aligned, `F.interpolate(size=,
//! mode='bilinear' / 'trilinear', align_corners=True)`).

use super::{Geom, Linear, Maps, device, gather, nonempty, out_shape, scatter, split};
use crate::core::allocator::Device;
use crate::core::dtype::Scalar;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::exec::backend::Backend;
use crate::nn::buf::{self, Out};
use crate::nn::check;
use crate::nn::{NnElem, native_tensor, native_view};

/// Nearest upsampling over the last `k` (2 or 3) dimensions of a `k + 1` or `k + 2`
/// dimensional input; `scale_arg` is the position of `scale_factor` in the call.
fn nearest_geometry<T: Scalar>(input: &View<T>, k: usize, scale: i32, scale_arg: u32) -> Result<(Geom, Maps)> {
    check::positive(scale as i64, scale_arg, "scale_factor")?;
    check::dims(input, 2, "input", &[k + 1, k + 2])?;
    let (planes, i) = split(&input.sizes, k);
    let s = scale as usize;
    let mut o = i;
    let mut maps: Maps = [vec![0], vec![0], vec![0]];
    for d in 3 - k..3 {
        o[d] = i[d]
            .checked_mul(s)
            .filter(|&v| v <= i64::MAX as usize)
            .ok_or_else(|| check::size_err(2, "input", format_args!("{} times {s} overflows", input.desc())))?;
        maps[d] = (0..o[d]).map(|j| j / s).collect();
    }
    Ok((Geom { planes, i, o }, maps))
}

/// `<Spatial|Volumetric>UpSamplingNearest_updateOutput(state, input, output, scale_factor)`
/// (`k` = 2 or 3).
pub fn nearest_output<T: NnElem>(input: &View<T>, output: &Tensor<T>, k: usize, scale: i32) -> Result<()> {
    Backend::of(&[input.device(), output.with_view(|v| v.device())])?;
    let (g, maps) = nearest_geometry(input, k, scale, 4)?;
    let shape = out_shape(&input.sizes, k, g.o);
    if let Device::Cuda(_) = input.device() {
        return device::gather(input, output, &shape, &g, &maps);
    }
    let (input, output) = (native_view(input)?, native_tensor(output)?);
    let mut out = Out::new(output, &shape)?;
    let x = buf::read(input, &[out.view()])?;
    gather(&x, out.as_mut(), &g, &maps)?;
    out.finish()
}

/// `<Spatial|Volumetric>UpSamplingNearest_updateGradInput(state, input, gradOutput, gradInput,
/// scale_factor)`: each input element's gradient is the sum over its block of `gradOutput`.
pub fn nearest_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    k: usize,
    scale: i32,
) -> Result<()> {
    Backend::of(&[input.device(), grad_output.device(), grad_input.with_view(|v| v.device())])?;
    let (g, maps) = nearest_geometry(input, k, scale, 5)?;
    check::shape(grad_output, 3, "gradOutput", &out_shape(&input.sizes, k, g.o))?;
    if let Device::Cuda(_) = input.device() {
        return device::scatter(grad_output, grad_input, &input.sizes, &g, &maps);
    }
    let (input, grad_output, grad_input) = (native_view(input)?, native_view(grad_output)?, native_tensor(grad_input)?);
    let mut gi = Out::new(grad_input, &input.sizes)?;
    let go = buf::read(grad_output, &[gi.view()])?;
    scatter(&go, gi.as_mut(), &g, &maps)?;
    gi.finish()
}

/// Checks the output sizes (arguments `first_arg`, ...: depth (3-D), height, width) and names.
fn positive_sizes(sizes: &[i32], first_arg: u32, names: &[&str]) -> Result<()> {
    for (j, (&v, name)) in sizes.iter().zip(names).enumerate() {
        check::positive(v as i64, first_arg + j as u32, name)?;
    }
    Ok(())
}

const OUT2: [&str; 2] = ["outputHeight", "outputWidth"];
const OUT3: [&str; 3] = ["outputDepth", "outputHeight", "outputWidth"];

/// `SpatialUpSamplingBilinear_updateOutput(state, input, output, outputHeight, outputWidth)`
/// (`k` = 2, a 4-D input) or `VolumetricUpSamplingTrilinear_updateOutput(state, input, output,
/// outputDepth, outputHeight, outputWidth)` (`k` = 3, a 5-D input).
pub fn linear_output<T: NnElem>(input: &View<T>, output: &Tensor<T>, out_sizes: &[i32]) -> Result<()> {
    Backend::of(&[input.device(), output.with_view(|v| v.device())])?;
    let k = out_sizes.len();
    check::dims(input, 2, "input", &[k + 2])?;
    nonempty(input, k, 2, "input")?;
    positive_sizes(out_sizes, 4, if k == 2 { &OUT2 } else { &OUT3 })?;
    let (planes, i) = split(&input.sizes, k);
    let mut o = [1usize; 3];
    for (d, &v) in (3 - k..3).zip(out_sizes) {
        o[d] = v as usize;
    }
    let g = Geom { planes, i, o };
    let shape = out_shape(&input.sizes, k, o);
    if let Device::Cuda(_) = input.device() {
        return device::linear(input, output, &shape, &g, k == 2);
    }
    let (input, output) = (native_view(input)?, native_tensor(output)?);
    let mut out = Out::new(output, &shape)?;
    let x = buf::read(input, &[out.view()])?;
    Linear::new(&g, k == 2).forward(&x, out.as_mut(), &g)?;
    out.finish()
}

/// `SpatialUpSamplingBilinear_updateGradInput(state, gradOutput, gradInput, nbatch, nchannels,
/// inputHeight, inputWidth, outputHeight, outputWidth)` or the trilinear one (input and output
/// depth too): `gradInput` (resized to nbatch x nchannels x input sizes) receives the
/// interpolation weights' share of `gradOutput` (nbatch x nchannels x output sizes).
pub fn linear_grad_input<T: NnElem>(
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    nbatch: i32,
    nchannels: i32,
    in_sizes: &[i32],
    out_sizes: &[i32],
) -> Result<()> {
    Backend::of(&[grad_output.device(), grad_input.with_view(|v| v.device())])?;
    let k = out_sizes.len();
    check::non_negative(nbatch as i64, 4, "nbatch")?;
    check::non_negative(nchannels as i64, 5, "nchannels")?;
    let (in_names, out_names): (&[&str], &[&str]) = if k == 2 {
        (&["inputHeight", "inputWidth"], &OUT2)
    } else {
        (&["inputDepth", "inputHeight", "inputWidth"], &OUT3)
    };
    positive_sizes(in_sizes, 6, in_names)?;
    positive_sizes(out_sizes, 6 + k as u32, out_names)?;
    let lead = [nbatch as i64, nchannels as i64];
    let in_shape: Vec<i64> = lead.iter().copied().chain(in_sizes.iter().map(|&v| v as i64)).collect();
    let out_shape: Vec<i64> = lead.iter().copied().chain(out_sizes.iter().map(|&v| v as i64)).collect();
    check::shape(grad_output, 2, "gradOutput", &out_shape)?;
    let (planes, i) = split(&in_shape, k);
    let (_, o) = split(&out_shape, k);
    let g = Geom { planes, i, o };
    if let Device::Cuda(_) = grad_output.device() {
        return device::linear_back(grad_output, grad_input, &in_shape, &g, k == 2);
    }
    let (grad_output, grad_input) = (native_view(grad_output)?, native_tensor(grad_input)?);
    let mut gi = Out::new(grad_input, &in_shape)?;
    let go = buf::read(grad_output, &[gi.view()])?;
    Linear::new(&g, k == 2).backward(&go, gi.as_mut(), &g)?;
    gi.finish()
}
