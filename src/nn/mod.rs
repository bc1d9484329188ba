//! THNN: the layers of torch7's `nn` package on the CPU (`lib/THNN`), for Float and Double.
//!
//! Each family's file holds the forward (`updateOutput`), backward (`updateGradInput`) and
//! parameter-gradient (`accGradParameters`, `accUpdateGradParameters`) passes of its modules,
//! generic over [`NnReal`] (f32, f64). The C wrappers (`ffi::nn`) only convert handles; every
//! check and every computation is here.
//!
//! Conventions shared by the families (docs/nn.md has the user-facing version):
//! - **Checks first, then writes.** A function validates every argument (dimensionality,
//!   sizes, indices, targets, buffer sizes) before it resizes or writes any output, so a
//!   refused call leaves its outputs as they were. Errors name the argument by its 1-based
//!   position in the C call, the state counting as argument 1 (as torch7's `THArgCheck`s do):
//!   [`check`] builds them.
//! - **Outputs** are resized by the callee ([`buf::Out`]); a caller's output that already has
//!   the right shape keeps its strides. Gradients of parameters are accumulated into the
//!   caller's tensors, which must already hold as many elements as the parameter
//!   ([`buf::Grads`]).
//! - **Inputs** may be any strided view: contiguous ones are read in place, others copied once
//!   ([`buf::read`]).
//! - **Indices are 0-based** (class targets, pooling indices, lookup rows), like the rest of th.
//! - `accreal` is f64 for both types: scalar arguments arrive as f64 and sums that torch7
//!   keeps in `accreal` are kept in f64.

pub mod buf;
pub mod check;

pub mod activation;
pub mod conv;
pub mod conv_misc;
pub mod criterion;
pub mod linear;
pub mod norm;
pub mod pool;
pub mod rnn;
pub mod sample;
pub mod sparse;

use crate::core::error::{Error, Result};
use crate::core::tensor::{Tensor, View};
use crate::linalg::gemm::Gemm;
use crate::ops::num::{Float, Real};
use std::any::Any;

/// The element types of the layers that run on both engines: THNN's f32 and f64, and THCUNN's
/// Half as well. Each computes in its [`NnReal`] `R` (f32 for Half; itself for f32 and f64)
/// and rounds once per stored value, the rule of th's Half everywhere.
pub trait NnElem: Float<R: activation::ActReal> + crate::ops::reduce::Elem + crate::ops::random::RandFloat {}

impl<T: Float<R: activation::ActReal> + crate::ops::reduce::Elem + crate::ops::random::RandFloat> NnElem for T {}

/// `v` as a view of its compute type, for the host kernels written over [`NnReal`]: itself for
/// f32 and f64; Half layers run on the device only (THNN has no Half), so a Half host view is
/// refused.
pub(crate) fn native_view<T: NnElem>(v: &View<T>) -> Result<&View<T::R>> {
    (v as &dyn Any).downcast_ref().ok_or_else(half_on_host)
}

/// `native_view` for a tensor.
pub(crate) fn native_tensor<T: NnElem>(t: &Tensor<T>) -> Result<&Tensor<T::R>> {
    (t as &dyn Any).downcast_ref().ok_or_else(half_on_host)
}

fn half_on_host() -> Error {
    Error::invalid("the Half layers (THCUNN's CudaHalf) take device tensors only")
}

/// `v`'s elements in row-major order as a flat f64 vector in the same memory (host or its
/// device): the operand of the f64 sums that both engines keep as the host does.
pub(crate) fn widened<T: crate::core::dtype::Scalar>(v: &View<T>) -> Result<View<f64>> {
    let t = crate::ops::temp_like::<f64, T>(v, &v.sizes)?;
    crate::ops::copy::copy(&t, v)?;
    t.reshape_view(&[v.numel() as i64])
}

/// 0 in the compute type of `_like` (closures over `NnElem::R` infer their type from it).
#[inline(always)]
pub(crate) fn zero<R: NnReal>(_like: R) -> R {
    R::zero()
}

/// 1 in the compute type of `_like`.
#[inline(always)]
pub(crate) fn one<R: NnReal>(_like: R) -> R {
    R::one()
}

/// THNN's element types: f32 and f64, computed natively (`Float::R == Self`), with a GEMM.
pub trait NnReal:
    Float<R = Self>
    + Real
    + crate::ops::reduce::Elem
    + crate::ops::random::RandFloat
    + Gemm
    + crate::ops::conv::ConvElem<K = Self>
    + std::iter::Sum
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
    + std::ops::AddAssign
    + std::ops::SubAssign
    + std::ops::MulAssign
    + std::ops::DivAssign
{
    /// The type's epsilon (used by criterions that clamp logarithms, as torch7's do).
    const EPS: Self;
    /// `ops::conv`'s implicit-GEMM run of a valid job (`ConvK::implicit`): `Ok(false)` where
    /// the CPU has no kernel for the type or the job does not suit one.
    fn conv_implicit(out: &mut [Self], ops: &crate::ops::conv::Operands<Self>) -> crate::core::error::Result<bool>;
    /// `self * a + b` with one rounding (the FMA instruction in kernel copies compiled with
    /// FMA; a libm call elsewhere, so plain copies should not use it).
    fn mul_add(self, a: Self, b: Self) -> Self;
}

macro_rules! nn_real {
    ($($T:ident),*) => {$(
        impl NnReal for $T {
            const EPS: $T = $T::EPSILON;
            fn conv_implicit(out: &mut [$T], ops: &crate::ops::conv::Operands<$T>) -> crate::core::error::Result<bool> {
                <$T as crate::ops::conv::ConvK>::implicit(false, out, ops)
            }
            #[inline(always)]
            fn mul_add(self, a: $T, b: $T) -> $T {
                <$T>::mul_add(self, a, b)
            }
        }
    )*};
}
nn_real!(f32, f64);
