//! Pointwise arithmetic, comparisons and float math (`THTensorMath.h` §4.5-4.8, 4.11, 4.14-4.16).
//!
//! Every function resizes its output like TH (`resizeAs`, or to the broadcast shape), accepts
//! `r` aliasing an input exactly, and runs through `ops::pointwise*` and the pointwise plan (`exec::plan`).

use super::num::{Float, Num, Real};
use super::{Operand, map0, pointwise1, pointwise2, pointwise3};
use crate::core::dtype::Scalar;
use crate::core::error::{Error, Result};
use crate::core::tensor::Tensor;
use crate::kernels::vmath::VMath;

/// `r` filled with `v` in place (no resize).
pub fn fill<T: Scalar>(r: &Tensor<T>, v: T) -> Result<()> {
    r.with_view(|o| map0(o, || v))
}

fn int_divisor<T: Num>(v: T) -> Result<()> {
    if !T::IS_FLOAT && v.is_zero() {
        return Err(Error::invalid("integer division by zero").at_arg(3));
    }
    Ok(())
}

/// Integer ops with a tensor divisor: any zero in it is an error (checked before writing).
fn int_divisors<T: Num>(src: &impl Operand<T>) -> Result<()> {
    if T::IS_FLOAT {
        return Ok(());
    }
    if src.with(|v| v.to_vec())?.iter().any(|x| x.is_zero()) {
        return Err(Error::invalid("integer division by zero").at_arg(3));
    }
    Ok(())
}

fn no_float_bits<T: Num>() -> Result<()> {
    if T::IS_FLOAT {
        return Err(Error::dtype(format!("bitwise operations are only defined for integer types, not {}", T::DTYPE)));
    }
    Ok(())
}

/// Scalar ops: `r = op(t, value)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarOp {
    Add,
    Sub,
    Mul,
    Div,
    Lshift,
    Rshift,
    Fmod,
    Remainder,
    BitAnd,
    BitOr,
    BitXor,
    CmaxValue,
    CminValue,
    Pow,
}

/// Tensor ops: `r = op(t, src)` with broadcasting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Mul,
    Div,
    Pow,
    Lshift,
    Rshift,
    Fmod,
    Remainder,
    BitAnd,
    BitOr,
    BitXor,
    Max,
    Min,
}

pub fn scalar_op<T: Num>(r: &Tensor<T>, t: &impl Operand<T>, op: ScalarOp, v: T) -> Result<()> {
    use ScalarOp::*;
    match op {
        Add => pointwise1(r, t, move |x: T| x.add(v)),
        Sub => pointwise1(r, t, move |x: T| x.sub(v)),
        Mul => pointwise1(r, t, move |x: T| x.mul(v)),
        Div => {
            int_divisor(v)?;
            pointwise1(r, t, move |x: T| x.div(v))
        }
        Lshift => pointwise1(r, t, move |x: T| x.shl(v)),
        Rshift => pointwise1(r, t, move |x: T| x.shr(v)),
        Fmod => {
            int_divisor(v)?;
            pointwise1(r, t, move |x: T| x.fmod(v))
        }
        Remainder => {
            int_divisor(v)?;
            pointwise1(r, t, move |x: T| x.remainder(v))
        }
        BitAnd => {
            no_float_bits::<T>()?;
            pointwise1(r, t, move |x: T| x.bitand(v))
        }
        BitOr => {
            no_float_bits::<T>()?;
            pointwise1(r, t, move |x: T| x.bitor(v))
        }
        BitXor => {
            no_float_bits::<T>()?;
            pointwise1(r, t, move |x: T| x.bitxor(v))
        }
        CmaxValue => pointwise1(r, t, move |x: T| x.max_nan(v)),
        CminValue => pointwise1(r, t, move |x: T| x.min_nan(v)),
        Pow => pointwise1(r, t, move |x: T| x.pow(v)),
    }
}

pub fn binary_op<T: Num>(r: &Tensor<T>, t: &impl Operand<T>, op: BinaryOp, src: &impl Operand<T>) -> Result<()> {
    use BinaryOp::*;
    match op {
        Mul => pointwise2(r, t, src, |a: T, b: T| a.mul(b)),
        Div => {
            int_divisors(src)?;
            pointwise2(r, t, src, |a: T, b: T| a.div(b))
        }
        Pow => pointwise2(r, t, src, |a: T, b: T| a.pow(b)),
        Lshift => pointwise2(r, t, src, |a: T, b: T| a.shl(b)),
        Rshift => pointwise2(r, t, src, |a: T, b: T| a.shr(b)),
        Fmod => {
            int_divisors(src)?;
            pointwise2(r, t, src, |a: T, b: T| a.fmod(b))
        }
        Remainder => {
            int_divisors(src)?;
            pointwise2(r, t, src, |a: T, b: T| a.remainder(b))
        }
        BitAnd => {
            no_float_bits::<T>()?;
            pointwise2(r, t, src, |a: T, b: T| a.bitand(b))
        }
        BitOr => {
            no_float_bits::<T>()?;
            pointwise2(r, t, src, |a: T, b: T| a.bitor(b))
        }
        BitXor => {
            no_float_bits::<T>()?;
            pointwise2(r, t, src, |a: T, b: T| a.bitxor(b))
        }
        Max => pointwise2(r, t, src, |a: T, b: T| a.max_nan(b)),
        Min => pointwise2(r, t, src, |a: T, b: T| a.min_nan(b)),
    }
}

/// `r = t + value * src` (TH's `cadd`).
pub fn cadd<T: Num>(r: &Tensor<T>, t: &impl Operand<T>, value: T, src: &impl Operand<T>) -> Result<()> {
    if value == T::one() {
        pointwise2(r, t, src, |a: T, b: T| a.add(b))
    } else {
        pointwise2(r, t, src, move |a: T, b: T| a.add(value.mul(b)))
    }
}

/// `r = t - value * src`.
pub fn csub<T: Num>(r: &Tensor<T>, t: &impl Operand<T>, value: T, src: &impl Operand<T>) -> Result<()> {
    if value == T::one() {
        pointwise2(r, t, src, |a: T, b: T| a.sub(b))
    } else {
        pointwise2(r, t, src, move |a: T, b: T| a.sub(value.mul(b)))
    }
}

/// `r = t + value * s1 * s2`.
pub fn addcmul<T: Num>(
    r: &Tensor<T>,
    t: &impl Operand<T>,
    value: T,
    s1: &impl Operand<T>,
    s2: &impl Operand<T>,
) -> Result<()> {
    pointwise3(r, t, s1, s2, move |a: T, b: T, c: T| a.add(value.mul(b).mul(c)))
}

/// `r = t + value * s1 / s2`.
pub fn addcdiv<T: Num>(
    r: &Tensor<T>,
    t: &impl Operand<T>,
    value: T,
    s1: &impl Operand<T>,
    s2: &impl Operand<T>,
) -> Result<()> {
    int_divisors(s2)?;
    pointwise3(r, t, s1, s2, move |a: T, b: T, c: T| a.add(value.mul(b).div(c)))
}

/// `r = min(max(t, lo), hi)`.
pub fn clamp<T: Num>(r: &Tensor<T>, t: &impl Operand<T>, lo: T, hi: T) -> Result<()> {
    pointwise1(r, t, move |x: T| {
        let y = if x < lo { lo } else { x };
        if y > hi { hi } else { y }
    })
}

pub fn neg<T: Num>(r: &Tensor<T>, t: &impl Operand<T>) -> Result<()> {
    pointwise1(r, t, |x: T| x.neg())
}

pub fn abs<T: Num>(r: &Tensor<T>, t: &impl Operand<T>) -> Result<()> {
    pointwise1(r, t, |x: T| x.abs())
}

pub fn sign<T: Num>(r: &Tensor<T>, t: &impl Operand<T>) -> Result<()> {
    pointwise1(r, t, |x: T| x.sign())
}

/// `r = 1 / t` (integer types: division by zero is an error; 1/x truncates).
pub fn cinv<T: Num>(r: &Tensor<T>, t: &impl Operand<T>) -> Result<()> {
    int_divisors(t)?;
    pointwise1(r, t, |x: T| T::one().div(x))
}

/// The six comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Ne,
    Eq,
}

impl Cmp {
    #[inline(always)]
    pub fn test<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
            Cmp::Ne => a != b,
            Cmp::Eq => a == b,
        }
    }
}

/// `r = (t op value) ? 1 : 0` into any output dtype `O` (Byte for TH's `*Value`, T for `*ValueT`).
pub fn cmp_value<O: Scalar, T: Scalar + PartialOrd>(r: &Tensor<O>, t: &impl Operand<T>, op: Cmp, v: T) -> Result<()> {
    let (one, zero) = (O::from_prim(crate::core::dtype::Prim::I(1)), O::from_prim(crate::core::dtype::Prim::I(0)));
    match op {
        Cmp::Lt => pointwise1(r, t, move |x: T| if x < v { one } else { zero }),
        Cmp::Le => pointwise1(r, t, move |x: T| if x <= v { one } else { zero }),
        Cmp::Gt => pointwise1(r, t, move |x: T| if x > v { one } else { zero }),
        Cmp::Ge => pointwise1(r, t, move |x: T| if x >= v { one } else { zero }),
        Cmp::Ne => pointwise1(r, t, move |x: T| if x != v { one } else { zero }),
        Cmp::Eq => pointwise1(r, t, move |x: T| if x == v { one } else { zero }),
    }
}

/// `r = (a op b) ? 1 : 0` with broadcasting.
pub fn cmp_tensor<O: Scalar, T: Scalar + PartialOrd>(
    r: &Tensor<O>,
    a: &impl Operand<T>,
    op: Cmp,
    b: &impl Operand<T>,
) -> Result<()> {
    let (one, zero) = (O::from_prim(crate::core::dtype::Prim::I(1)), O::from_prim(crate::core::dtype::Prim::I(0)));
    match op {
        Cmp::Lt => pointwise2(r, a, b, move |x: T, y: T| if x < y { one } else { zero }),
        Cmp::Le => pointwise2(r, a, b, move |x: T, y: T| if x <= y { one } else { zero }),
        Cmp::Gt => pointwise2(r, a, b, move |x: T, y: T| if x > y { one } else { zero }),
        Cmp::Ge => pointwise2(r, a, b, move |x: T, y: T| if x >= y { one } else { zero }),
        Cmp::Ne => pointwise2(r, a, b, move |x: T, y: T| if x != y { one } else { zero }),
        Cmp::Eq => pointwise2(r, a, b, move |x: T, y: T| if x == y { one } else { zero }),
    }
}

/// Unary float functions (TH §4.16).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unary {
    Sigmoid,
    Log,
    Lgamma,
    Log1p,
    Exp,
    Cos,
    Acos,
    Cosh,
    Sin,
    Asin,
    Sinh,
    Tan,
    Atan,
    Tanh,
    Sqrt,
    Rsqrt,
    Ceil,
    Floor,
    Round,
    Trunc,
    Frac,
    Cinv,
}

macro_rules! unary_dispatch {
    ($op:expr, $r:expr, $t:expr, $T:ty; $($name:ident => |$x:ident| $e:expr),* $(,)?) => {
        match $op {
            $(Unary::$name => pointwise1($r, $t, |v: $T| { let $x = v.to_r(); <$T>::from_r($e) }),)*
        }
    };
}

pub fn unary<T: Float>(r: &Tensor<T>, t: &impl Operand<T>, op: Unary) -> Result<()> {
    let one = <T::R as Num>::one();
    unary_dispatch!(op, r, t, T;
        Sigmoid => |x| x.vsigmoid(),
        Log => |x| x.vln(),
        Lgamma => |x| x.lgamma(),
        Log1p => |x| x.ln_1p(),
        Exp => |x| x.vexp(),
        Cos => |x| x.cos(),
        Acos => |x| x.acos(),
        Cosh => |x| x.cosh(),
        Sin => |x| x.sin(),
        Asin => |x| x.asin(),
        Sinh => |x| x.sinh(),
        Tan => |x| x.tan(),
        Atan => |x| x.atan(),
        Tanh => |x| x.vtanh(),
        Sqrt => |x| x.sqrt(),
        Rsqrt => |x| one.div(x.sqrt()),
        Ceil => |x| x.ceil(),
        Floor => |x| x.floor(),
        Round => |x| x.round(),
        Trunc => |x| x.trunc(),
        Frac => |x| x.sub(x.trunc()),
        Cinv => |x| x.recip(),
    )
}

/// `r = atan2(a, b)` (C order: `a` is the "y" argument).
pub fn atan2<T: Float>(r: &Tensor<T>, a: &impl Operand<T>, b: &impl Operand<T>) -> Result<()> {
    pointwise2(r, a, b, |x: T, y: T| T::from_r(x.to_r().atan2(y.to_r())))
}

/// `r = value ^ t`.
pub fn tpow<T: Num>(r: &Tensor<T>, value: T, t: &impl Operand<T>) -> Result<()> {
    pointwise1(r, t, move |x: T| value.pow(x))
}

/// `r = a + weight * (b - a)`.
pub fn lerp<T: Float>(r: &Tensor<T>, a: &impl Operand<T>, b: &impl Operand<T>, weight: T) -> Result<()> {
    let w = weight.to_r();
    pointwise2(r, a, b, move |x: T, y: T| {
        let (x, y) = (x.to_r(), y.to_r());
        T::from_r(x.add(w.mul(y.sub(x))))
    })
}
