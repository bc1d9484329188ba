//! Activations: elementwise layers ([`elementwise`]: Abs, ELU, HardShrink, HardTanh, LeakyReLU,
//! LogSigmoid, Sigmoid, SoftPlus, SoftShrink, Sqrt, Square, Tanh, Threshold), the normalizations over
//! one dimension ([`softmax`]: SoftMax, LogSoftMax) and the layers with parameters, noise or
//! halves ([`param`]: PReLU, RReLU, GatedLinear).
//!
//! Conventions of the family:
//! - Elementwise layers run on th's pointwise engine (`ops::pointwise1/2/3`): any strides,
//!   threads for large tensors, SIMD copies of the kernel, an output that partially overlaps an
//!   input computed through a temporary. Scalar options (`accreal` in the C API) are converted
//!   to the element type first, as torch7 does (`TH_CONVERT_ACCREAL_TO_REAL`).
//! - A backward pass pairs `input` (or `output`) with `gradOutput` element by element in
//!   row-major order: they must hold as many elements (the same shape where torch7 checks
//!   shapes: Square, Sqrt, Tanh, SoftMax, LogSoftMax). `gradInput` is resized like `input` (like
//!   `output` for the layers whose backward reads `output`).
//! - `inplace`: the forward pass overwrites `input` and makes `output` a view of it (torch7's
//!   `THTensor_set`); the backward pass overwrites `gradOutput` (keeping its shape) and makes
//!   `gradInput` a view of it.
//! - NaN: comparisons are written so that a NaN input stays NaN in the forward pass of
//!   Threshold and HardTanh, whether in place or not (torch7's two code paths disagree there).

mod device;
pub mod elementwise;
pub mod param;
pub mod softmax;

pub use elementwise::*;

use super::check;
use super::{NnElem, NnReal};
use crate::core::dtype::Scalar;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::cuda::launch::Call;
use crate::ops;

/// The element types of the activations: [`NnReal`] plus `expm1` and the vectorizable
/// functions of `kernels::vmath`.
pub trait ActReal: NnReal + crate::kernels::vmath::VMath {
    /// `exp(self) - 1`, accurate near 0.
    fn expm1(self) -> Self;
}

impl ActReal for f32 {
    #[inline(always)]
    fn expm1(self) -> f32 {
        self.exp_m1()
    }
}

impl ActReal for f64 {
    #[inline(always)]
    fn expm1(self) -> f64 {
        self.exp_m1()
    }
}

/// A scalar option rounded to the element type (torch7 converts `accreal` to `real` first),
/// as the device kernels take it.
#[inline]
fn value<T: NnElem>(v: f64) -> T {
    T::from_f64(v)
}

/// A scalar option as the closures compute with it: rounded to the element type, then widened
/// to the compute type (f32 for Half).
#[inline]
fn real<T: NnElem>(v: f64) -> T::R {
    value::<T>(v).to_r()
}

/// `v` with the sizes `sizes` (same element count, checked by the caller): itself, a
/// reshaped view when contiguous, else a contiguous copy in the same memory (torch7 pairs
/// elements by position).
pub(crate) fn paired<T: Scalar>(v: View<T>, sizes: &[i64]) -> Result<View<T>> {
    if v.sizes == sizes {
        return Ok(v);
    }
    if v.is_contiguous() {
        return v.reshape_view(sizes);
    }
    let c = ops::temp_like(&v, &v.sizes)?;
    ops::copy::copy(&c, &v)?;
    c.reshape_view(sizes)
}

/// `output = f(input)` elementwise, `f` in the compute type; in place: `input = f(input)` and
/// `output` set to `input`. `k`: the device kernel computing the same. `SIMD`: whether the host
/// kernel gets vectorized copies (false for libm calls).
fn forward<const SIMD: bool, T: NnElem>(
    input: &Tensor<T>,
    output: &Tensor<T>,
    inplace: bool,
    k: Call,
    f: impl Fn(T::R) -> T::R + Sync,
) -> Result<()> {
    let x = input.view();
    let r = if inplace { input } else { output };
    let f = move |v: T| T::from_r(f(v.to_r()));
    if SIMD {
        ops::pointwise1(r, &x, k, f)?
    } else {
        ops::pointwise1_plain(r, &x, k, f)?
    }
    if inplace {
        output.set_view(input.view());
    }
    Ok(())
}

/// `gradInput = f(x, gradOutput)` elementwise in the compute type, shaped `shape` (`x`:
/// `input` or `output`, as many elements as `gradOutput`, checked by the caller). In place:
/// `gradOutput = f(x, gradOutput)` (its shape kept) and `gradInput` set to `gradOutput`.
fn backward<const SIMD: bool, T: NnElem>(
    x: View<T>,
    shape: &[i64],
    grad_output: &Tensor<T>,
    grad_input: &Tensor<T>,
    inplace: bool,
    k: Call,
    f: impl Fn(T::R, T::R) -> T::R + Sync,
) -> Result<()> {
    let g = grad_output.view();
    let (r, x, g) = if inplace {
        let sizes = g.sizes.clone();
        (grad_output, paired(x, &sizes)?, g)
    } else {
        (grad_input, paired(x, shape)?, paired(g, shape)?)
    };
    let f = move |a: T, b: T| T::from_r(f(a.to_r(), b.to_r()));
    if SIMD {
        ops::pointwise2(r, &x, &g, k, f)?
    } else {
        ops::pointwise2_plain(r, &x, &g, k, f)?
    }
    if inplace {
        grad_input.set_view(grad_output.view());
    }
    Ok(())
}

/// `backward` from `input`, the usual case: `gradOutput` must hold as many elements as `input`,
/// and `gradInput` is shaped like it.
fn input_backward<const SIMD: bool, T: NnElem>(
    input: &View<T>,
    grad_output: &Tensor<T>,
    grad_input: &Tensor<T>,
    inplace: bool,
    k: Call,
    f: impl Fn(T::R, T::R) -> T::R + Sync,
) -> Result<()> {
    check_nelement(&grad_output.view(), input, "input")?;
    backward::<SIMD, T>(input.clone(), &input.sizes, grad_output, grad_input, inplace, k, f)
}

/// `gradOutput` (argument 3) holds as many elements as `like` (argument `arg`, `name`).
fn check_nelement<T: Scalar>(grad_output: &View<T>, like: &View<T>, name: &str) -> Result<()> {
    check::same_numel(grad_output, 3, "gradOutput", like, name)
}
