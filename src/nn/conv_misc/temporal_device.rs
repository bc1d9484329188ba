//! TemporalConvolution on the device (THCUNN): the host's products as cuBLAS GEMMs on strided
//! views, in the compute type (Half's operands converted to f32, results rounded once).
//! - forward: `output[b] = bias + windows(input[b]) @ weight^T`, the windows the input's rows
//!   `dW*C` apart (overlapping when `kW > dW`: the GEMM's operand then is a dense copy of them);
//! - gradInput: as the host, the output frames `ceil(kW/dW)` apart (disjoint windows) one GEMM
//!   each, accumulated in place, in an f32 image for Half;
//! - accGradParameters: the windows of all samples as one `N*T' x kW*C` matrix, one GEMM with
//!   gradOutput^T; the bias gradient by the device's f64 dim sums; both added as `g + scale*s`.

use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::cuda::blas::{as_batch, bmm};
use crate::nn::conv::ConvElem;
use crate::nn::conv::device::{add_scaled, dense, in_r};
use crate::nn::widened;
use crate::ops;
use crate::ops::num::Num;

/// The sizes of a call: samples, input frames and features, output frames and features,
/// kernel width and step.
pub(super) struct Sizes {
    pub n: usize,
    pub t: usize,
    pub c: usize,
    pub to: usize,
    pub co: usize,
    pub kw: usize,
    pub dw: usize,
}

impl Sizes {
    fn k(&self) -> i64 {
        (self.kw * self.c) as i64
    }
    /// The windows of dense input `x` as `[n, T', kW*C]`.
    fn windows<U: crate::core::dtype::Scalar>(&self, x: &View<U>) -> View<U> {
        as_batch(x, [self.n as i64, self.to as i64, self.k()], [(self.t * self.c) as i64, (self.dw * self.c) as i64, 1])
    }
}

/// `output` (`shape`) = the convolution of `input` (+ bias), checked by the caller.
pub(super) fn update_output<T: ConvElem>(
    z: &Sizes,
    input: &View<T>,
    output: &Tensor<T>,
    weight: &View<T>,
    bias: Option<&View<T>>,
    shape: &[i64],
) -> Result<()> {
    let out = ops::resize_out(output, shape)?;
    let (n, to, co) = (z.n as i64, z.to as i64, z.co as i64);
    let o = ops::temp_like::<T::R, T>(&out, &[n, to, co])?;
    let beta = if let Some(b) = bias {
        let b = crate::nn::activation::paired(b.clone(), &[co])?;
        let e = View {
            storage: b.storage.clone(),
            offset: b.offset,
            sizes: vec![n, to, co],
            strides: vec![0, 0, b.strides[0]],
        };
        ops::copy::copy(&o, &e)?;
        <T::R as Num>::one()
    } else {
        <T::R as Num>::zero()
    };
    let (x, w) = (in_r(&dense(input)?)?, in_r(&dense(weight)?)?);
    let wt = as_batch(&w, [1, z.k(), co], [0, 1, z.k()]);
    bmm(<T::R as Num>::one(), &z.windows(&x), &wt, beta, &o)?;
    ops::copy::copy(&out, &o.reshape_view(shape)?)
}

/// `gradInput` (shaped like `input`) from `gradOutput`, checked by the caller.
pub(super) fn update_grad_input<T: ConvElem>(
    z: &Sizes,
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    weight: &View<T>,
) -> Result<()> {
    let gin = ops::resize_out(grad_input, &input.sizes)?;
    let (n, k, co) = (z.n as i64, z.k(), z.co as i64);
    let gi = ops::temp_like::<T::R, T>(&gin, &[n, z.t as i64, z.c as i64])?;
    crate::cuda::ops::fill(crate::nn::conv::device::dev_of(&gin)?, &gi, <T::R as Num>::zero())?;
    let (g, w) = (in_r(&dense(grad_output)?)?, in_r(&dense(weight)?)?);
    let wm = as_batch(&w, [1, co, k], [0, k, 1]);
    let ofs = (z.kw - 1) / z.dw + 1;
    for first in 0..ofs.min(z.to) {
        let frames = (z.to - first).div_ceil(ofs) as i64;
        let mut a = as_batch(&g, [n, frames, co], [(z.to * z.co) as i64, (ofs * z.co) as i64, 1]);
        a.offset += first * z.co;
        let mut c = as_batch(&gi, [n, frames, k], [(z.t * z.c) as i64, (ofs * z.dw * z.c) as i64, 1]);
        c.offset += first * z.dw * z.c;
        bmm(<T::R as Num>::one(), &a, &wm, <T::R as Num>::one(), &c)?;
    }
    ops::copy::copy(&gin, &gi.reshape_view(&input.sizes)?)
}

/// `gradWeight += scale * dL/dweight`, `gradBias += scale * dL/dbias`, checked by the caller.
pub(super) fn acc_grad_parameters<T: ConvElem>(
    z: &Sizes,
    input: &View<T>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    grad_bias: Option<&Tensor<T>>,
    scale: f64,
) -> Result<()> {
    let (rows, k, co) = ((z.n * z.to) as i64, z.k(), z.co as i64);
    let (x, g) = (in_r(&dense(input)?)?, in_r(&dense(grad_output)?)?);
    let cols = ops::temp_like::<T::R, T>(input, &[z.n as i64, z.to as i64, k])?;
    ops::copy::copy(&cols, &z.windows(&x))?;
    let sum = ops::temp_like::<T::R, T>(input, &[co * k])?;
    let gt = as_batch(&g, [1, co, rows], [0, 1, co]);
    let cm = as_batch(&cols, [1, rows, k], [0, k, 1]);
    let c = as_batch(&sum, [1, co, k], [0, k, 1]);
    bmm(<T::R as Num>::one(), &gt, &cm, <T::R as Num>::zero(), &c)?;
    add_scaled(grad_weight, &sum, z.co * z.kw * z.c, scale)?;
    if let Some(gb) = grad_bias {
        let wide = widened(grad_output)?.reshape_view(&[rows, co])?;
        let sums = Tensor::new(ops::temp_like::<f64, T>(input, &[co])?);
        ops::reduce::sum(&sums, &wide, 0, false)?;
        let narrowed = ops::temp_like::<T::R, T>(input, &[co])?;
        ops::copy::copy(&narrowed, &sums.view())?;
        add_scaled(gb, &narrowed, z.co, scale)?;
    }
    Ok(())
}
