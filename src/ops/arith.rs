//! Pointwise arithmetic, comparisons and float math (`THTensorMath.h` §4.5-4.8, 4.11, 4.14-4.16).
//!
//! Every function resizes its output like TH (`resizeAs`, or to the broadcast shape), accepts
//! `r` aliasing an input exactly, and runs through `ops::pointwise*` and the pointwise plan (`exec::plan`).

use super::num::{Float, Num, Real};
use super::{Operand, map0, pointwise1, pointwise1_block, pointwise1_plain, pointwise2, pointwise2_plain, pointwise3};
// The comparison ops below take it; their callers name it here.
pub use crate::core::compare::Cmp;
use crate::core::dtype::Scalar;
use crate::core::error::{Error, Result};
use crate::core::tensor::{Tensor, View};
use crate::cuda::launch::Call;
use crate::kernels::vmath::{self, Fused, Mode, Sliced, Unfused, VMath};
use crate::kernels::{Isa, isa};

/// `r` filled with `v` in place (no resize).
pub fn fill<T: Scalar>(r: &Tensor<T>, v: T) -> Result<()> {
    r.with_view(|o| fill_view(o, v))
}

/// The view `o` filled with `v`: every fill of a dtype shares this one kernel.
pub fn fill_view<T: Scalar>(o: &View<T>, v: T) -> Result<()> {
    map0(o, Call::new("fill").value(v), move || v)
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
    if src.with(crate::ops::copy::values)?.iter().any(|x| x.is_zero()) {
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

/// The binary element operations, with a value (`scalar_op`: `r = op(t, value)`) or a tensor
/// (`binary_op`: `r = op(t, src)` with broadcasting) as the right operand. `CmaxValue` /
/// `CminValue` and `Max` / `Min` are TH's names of the same operations in the two forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
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
    CmaxValue,
    CminValue,
    Max,
    Min,
}

/// Scalar ops: `r = op(t, value)`.
pub type ScalarOp = ArithOp;
/// Tensor ops: `r = op(t, src)` with broadcasting.
pub type BinaryOp = ArithOp;

/// The right operand of an `ArithOp`.
enum Rhs<'a, T, S> {
    Value(T),
    Tensor(&'a S),
}

pub fn scalar_op<T: Num>(r: &Tensor<T>, t: &impl Operand<T>, op: ScalarOp, v: T) -> Result<()> {
    arith_op(r, t, op, Rhs::<T, Tensor<T>>::Value(v))
}

pub fn binary_op<T: Num>(r: &Tensor<T>, t: &impl Operand<T>, op: BinaryOp, src: &impl Operand<T>) -> Result<()> {
    arith_op(r, t, op, Rhs::Tensor(src))
}

fn arith_op<T: Num, S: Operand<T>>(r: &Tensor<T>, t: &impl Operand<T>, op: ArithOp, rhs: Rhs<'_, T, S>) -> Result<()> {
    use ArithOp::*;
    match op {
        Div | Fmod | Remainder => match rhs {
            Rhs::Value(v) => int_divisor(v)?,
            Rhs::Tensor(src) => int_divisors(src)?,
        },
        BitAnd | BitOr | BitXor => no_float_bits::<T>()?,
        _ => {}
    }
    // TH's `pow(r, t, value)` special-cases some values (`Num::pow_value`); `cpow` is C's pow.
    if let (Pow, Rhs::Value(v)) = (op, &rhs) {
        let v = *v;
        // (floats: `t*t`, `sqrt(t)`, ... for the common values vectorize; integers call pow)
        return if T::IS_FLOAT {
            pointwise1(r, t, Call::new("pow").value(v), move |x: T| x.pow_value(v))
        } else {
            pointwise1_plain(r, t, Call::new("pow").value(v), move |x: T| x.pow_value(v))
        };
    }
    // Each operation is the `Num` method `$f` of (element, right operand); every arm writes its
    // own closure, so each operation keeps its own monomorphic kernel.
    // The device kernels: `<op>` with a value, `c<op>` with a tensor (`cadd`/`csub` take a
    // factor, 1 here).
    // `$simd`: whether the op's loop vectorizes for `T`, so that its kernel is worth its AVX2
    // and AVX-512 copies; the others (libm calls, integer division, the bitwise ops of float
    // types, which return an error before they run) get the plain kernel alone.
    macro_rules! dispatch {
        ($($($op:ident)|+ => $f:ident [$kv:literal $kt:literal] $simd:expr),* $(,)?) => {
            match (op, rhs) {
                $(
                    ($($op)|+, Rhs::Value(v)) => {
                        let k = Call::new($kv).value(v);
                        if $simd {
                            pointwise1(r, t, k, move |x: T| x.$f(v))
                        } else {
                            pointwise1_plain(r, t, k, move |x: T| x.$f(v))
                        }
                    }
                    ($($op)|+, Rhs::Tensor(src)) => {
                        let k = Call::new($kt);
                        let k = if matches!(op, Add | Sub) { k.value(T::one()) } else { k };
                        if $simd {
                            pointwise2(r, t, src, k, |a: T, b: T| a.$f(b))
                        } else {
                            pointwise2_plain(r, t, src, k, |a: T, b: T| a.$f(b))
                        }
                    }
                )*
            }
        };
    }
    let (float, int) = (T::IS_FLOAT, !T::IS_FLOAT);
    dispatch!(Add => add ["add" "cadd"] true, Sub => sub ["sub" "csub"] true, Mul => mul ["mul" "cmul"] true,
        Div => div ["div" "cdiv"] float, Pow => pow ["pow" "cpow"] false, Lshift => shl ["lshift" "clshift"] int,
        Rshift => shr ["rshift" "crshift"] int, Fmod => fmod ["fmod" "cfmod"] false,
        Remainder => remainder ["remainder" "cremainder"] float, BitAnd => bitand ["bitand" "cbitand"] int,
        BitOr => bitor ["bitor" "cbitor"] int, BitXor => bitxor ["bitxor" "cbitxor"] int,
        CmaxValue | Max => th_max ["cmaxValue" "cmax"] true, CminValue | Min => th_min ["cminValue" "cmin"] true)
}

/// `r = t + value * src` (TH's `cadd`).
pub fn cadd<T: Num>(r: &Tensor<T>, t: &impl Operand<T>, value: T, src: &impl Operand<T>) -> Result<()> {
    let k = Call::new("cadd").value(value);
    if value == T::one() {
        pointwise2(r, t, src, k, |a: T, b: T| a.add(b))
    } else {
        pointwise2(r, t, src, k, move |a: T, b: T| a.add(value.mul(b)))
    }
}

/// `r = t - value * src`.
pub fn csub<T: Num>(r: &Tensor<T>, t: &impl Operand<T>, value: T, src: &impl Operand<T>) -> Result<()> {
    let k = Call::new("csub").value(value);
    if value == T::one() {
        pointwise2(r, t, src, k, |a: T, b: T| a.sub(b))
    } else {
        pointwise2(r, t, src, k, move |a: T, b: T| a.sub(value.mul(b)))
    }
}

/// `r = t + value * s1 * s2`.
pub fn addcmul<T: Num, X: Operand<T>>(r: &Tensor<T>, t: &X, value: T, s1: &X, s2: &X) -> Result<()> {
    pointwise3(r, t, s1, s2, Call::new("addcmul").value(value), move |a: T, b: T, c: T| a.add(value.mul(b).mul(c)))
}

/// `r = t + value * s1 / s2` (C's promotions: `Num::addcdiv`).
pub fn addcdiv<T: Num, X: Operand<T>>(r: &Tensor<T>, t: &X, value: T, s1: &X, s2: &X) -> Result<()> {
    int_divisors(s2)?;
    pointwise3(r, t, s1, s2, Call::new("addcdiv").value(value), move |a: T, b: T, c: T| a.addcdiv(value, b, c))
}

/// TH's `t < lo ? lo : (t > hi ? hi : t)`: NaN elements and NaN bounds leave `t`; with
/// `lo > hi`, elements below `lo` give `lo`.
pub fn clamp<T: Num>(r: &Tensor<T>, t: &impl Operand<T>, lo: T, hi: T) -> Result<()> {
    pointwise1(r, t, Call::new("clamp").value(lo).value(hi), move |x: T| {
        if x < lo {
            lo
        } else if x > hi {
            hi
        } else {
            x
        }
    })
}

pub fn neg<T: Num>(r: &Tensor<T>, t: &impl Operand<T>) -> Result<()> {
    pointwise1(r, t, Call::new("neg"), |x: T| x.neg())
}

pub fn abs<T: Num>(r: &Tensor<T>, t: &impl Operand<T>) -> Result<()> {
    pointwise1(r, t, Call::new("abs"), |x: T| x.abs())
}

pub fn sign<T: Num>(r: &Tensor<T>, t: &impl Operand<T>) -> Result<()> {
    pointwise1(r, t, Call::new("sign"), |x: T| x.sign())
}

/// `r = 1 / t` (integer types: division by zero is an error; 1/x truncates).
pub fn cinv<T: Num>(r: &Tensor<T>, t: &impl Operand<T>) -> Result<()> {
    int_divisors(t)?;
    pointwise1(r, t, Call::new("cinv"), |x: T| T::one().div(x))
}

/// `r = (t op value) ? 1 : 0` into any output dtype `O` (Byte for TH's `*Value`, T for `*ValueT`).
pub fn cmp_value<O: Scalar, T: Scalar + PartialOrd>(r: &Tensor<O>, t: &impl Operand<T>, op: Cmp, v: T) -> Result<()> {
    let k = Call::new("cmpValue").value(v).comparing(op);
    let (one, zero) = (O::from_prim(crate::core::dtype::Prim::I(1)), O::from_prim(crate::core::dtype::Prim::I(0)));
    match op {
        Cmp::Lt => pointwise1(r, t, k, move |x: T| if x < v { one } else { zero }),
        Cmp::Le => pointwise1(r, t, k, move |x: T| if x <= v { one } else { zero }),
        Cmp::Gt => pointwise1(r, t, k, move |x: T| if x > v { one } else { zero }),
        Cmp::Ge => pointwise1(r, t, k, move |x: T| if x >= v { one } else { zero }),
        Cmp::Ne => pointwise1(r, t, k, move |x: T| if x != v { one } else { zero }),
        Cmp::Eq => pointwise1(r, t, k, move |x: T| if x == v { one } else { zero }),
    }
}

/// `r = (a op b) ? 1 : 0` with broadcasting.
pub fn cmp_tensor<O: Scalar, T: Scalar + PartialOrd>(
    r: &Tensor<O>,
    a: &impl Operand<T>,
    op: Cmp,
    b: &impl Operand<T>,
) -> Result<()> {
    let k = Call::new("cmpTensor").comparing(op);
    let (one, zero) = (O::from_prim(crate::core::dtype::Prim::I(1)), O::from_prim(crate::core::dtype::Prim::I(0)));
    match op {
        Cmp::Lt => pointwise2(r, a, b, k, move |x: T, y: T| if x < y { one } else { zero }),
        Cmp::Le => pointwise2(r, a, b, k, move |x: T, y: T| if x <= y { one } else { zero }),
        Cmp::Gt => pointwise2(r, a, b, k, move |x: T, y: T| if x > y { one } else { zero }),
        Cmp::Ge => pointwise2(r, a, b, k, move |x: T, y: T| if x >= y { one } else { zero }),
        Cmp::Ne => pointwise2(r, a, b, k, move |x: T, y: T| if x != y { one } else { zero }),
        Cmp::Eq => pointwise2(r, a, b, k, move |x: T, y: T| if x == y { one } else { zero }),
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

impl Unary {
    /// The device kernel's op name.
    fn kernel(self) -> &'static str {
        match self {
            Unary::Sigmoid => "sigmoid",
            Unary::Log => "log",
            Unary::Lgamma => "lgamma",
            Unary::Log1p => "log1p",
            Unary::Exp => "exp",
            Unary::Cos => "cos",
            Unary::Acos => "acos",
            Unary::Cosh => "cosh",
            Unary::Sin => "sin",
            Unary::Asin => "asin",
            Unary::Sinh => "sinh",
            Unary::Tan => "tan",
            Unary::Atan => "atan",
            Unary::Tanh => "tanh",
            Unary::Sqrt => "sqrt",
            Unary::Rsqrt => "rsqrt",
            Unary::Ceil => "ceil",
            Unary::Floor => "floor",
            Unary::Round => "round",
            Unary::Trunc => "trunc",
            Unary::Frac => "frac",
            Unary::Cinv => "cinv",
        }
    }
}

/// `$pw`: `pointwise1` for the functions that vectorize (`kernels::vmath`, the float
/// instructions), `pointwise1_plain` for the libm calls.
macro_rules! unary_dispatch {
    ($op:expr, $r:expr, $t:expr, $T:ty; $($name:ident $pw:ident => |$x:ident| $e:expr),* $(,)?) => {
        match $op {
            $(Unary::$name => $pw($r, $t, Call::new($op.kernel()), |v: $T| { let $x = v.to_r(); <$T>::from_r($e) }),)*
        }
    };
}

pub fn unary<T: Float>(r: &Tensor<T>, t: &impl Operand<T>, op: Unary) -> Result<()> {
    // The kernel copies with FMA (AVX2, AVX-512: the ones isa() runs from Avx2 up) evaluate
    // `kernels::vmath` with fused multiply-adds, the plain copy without (`vmath::Fma`).
    if isa() >= Isa::Avx2 && matches!(op, Unary::Sigmoid | Unary::Log | Unary::Exp | Unary::Tanh) {
        return unary_vmath::<T, Fused>(r, t, op);
    }
    let one = <T::R as Num>::one();
    unary_dispatch!(op, r, t, T;
        Sigmoid pointwise1 => |x| x.vsigmoid::<Unfused>(),
        Log pointwise1 => |x| x.vln::<Unfused>(),
        Lgamma pointwise1_plain => |x| x.lgamma(),
        Log1p pointwise1_plain => |x| x.ln_1p(),
        Exp pointwise1 => |x| x.vexp::<Unfused>(),
        Cos pointwise1_plain => |x| x.cos(),
        Acos pointwise1_plain => |x| x.acos(),
        Cosh pointwise1_plain => |x| x.cosh(),
        Sin pointwise1_plain => |x| x.sin(),
        Asin pointwise1_plain => |x| x.asin(),
        Sinh pointwise1_plain => |x| x.sinh(),
        Tan pointwise1_plain => |x| x.tan(),
        Atan pointwise1_plain => |x| x.atan(),
        Tanh pointwise1 => |x| x.vtanh::<Unfused>(),
        Sqrt pointwise1 => |x| x.sqrt(),
        Rsqrt pointwise1 => |x| one.div(x.sqrt()),
        Ceil pointwise1 => |x| x.ceil(),
        Floor pointwise1 => |x| x.floor(),
        Round pointwise1 => |x| x.round(),
        Trunc pointwise1 => |x| x.trunc(),
        Frac pointwise1 => |x| x.sub(x.trunc()),
        Cinv pointwise1 => |x| x.recip(),
    )
}

/// `unary` of the `kernels::vmath` functions, multiply-adds evaluated by `M`.
fn unary_vmath<T: Float, M: Mode>(r: &Tensor<T>, t: &impl Operand<T>, op: Unary) -> Result<()> {
    let call = Call::new(op.kernel());
    // (closures naming the function: a function pointer would be an indirect call per element)
    match op {
        Unary::Sigmoid => pointwise1(r, t, call, |v: T| T::from_r(v.to_r().vsigmoid::<M>())),
        Unary::Log => pointwise1_block(r, t, call, vmath::block(Sliced::Ln), |v: T| T::from_r(v.to_r().vln::<M>())),
        Unary::Exp => pointwise1(r, t, call, |v: T| T::from_r(v.to_r().vexp::<M>())),
        Unary::Tanh => {
            pointwise1_block(r, t, call, vmath::block(Sliced::Tanh), |v: T| T::from_r(v.to_r().vtanh::<M>()))
        }
        _ => unreachable!("not a vmath function"),
    }
}

/// `r = atan2(a, b)` (C order: `a` is the "y" argument).
pub fn atan2<T: Float>(r: &Tensor<T>, a: &impl Operand<T>, b: &impl Operand<T>) -> Result<()> {
    pointwise2_plain(r, a, b, Call::new("atan2"), |x: T, y: T| T::from_r(x.to_r().atan2(y.to_r())))
}

/// `r = value ^ t`.
pub fn tpow<T: Num>(r: &Tensor<T>, value: T, t: &impl Operand<T>) -> Result<()> {
    pointwise1_plain(r, t, Call::new("tpow").value(value), move |x: T| value.pow(x))
}

/// `r = a + weight * (b - a)`.
pub fn lerp<T: Float>(r: &Tensor<T>, a: &impl Operand<T>, b: &impl Operand<T>, weight: T) -> Result<()> {
    let w = weight.to_r();
    pointwise2(r, a, b, Call::new("lerp").value(weight), move |x: T, y: T| {
        let (x, y) = (x.to_r(), y.to_r());
        T::from_r(x.add(w.mul(y.sub(x))))
    })
}
