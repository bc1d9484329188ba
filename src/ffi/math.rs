//! `generic/THTensorMath.h`, pointwise part: fill/zero, scalar and tensor arithmetic,
//! addcmul/addcdiv, clamp, neg/cinv/abs/sign, cmax/cmin, comparisons and the float functions.
//! Outputs (`r_`, `self`) are resized by the callee; inputs broadcast (numpy rules, or TH's
//! element-count pairing when shapes don't broadcast); `r_` may be one of the inputs.

use super::thc::*;
use super::*;
use crate::ops::arith::{self, BinaryOp, Cmp, ScalarOp, Unary};

/// A borrowed tensor argument (read in place by the pointwise functions: `ops::Operand`).
///
/// # Safety
/// `p` must be NULL or a live handle.
unsafe fn operand<'a, H: Handle<Obj = crate::core::tensor::Tensor<T>>, T: crate::Scalar>(
    p: *mut H,
    arg: u32,
) -> crate::Result<&'a crate::core::tensor::Tensor<T>> {
    // SAFETY: forwarded contract.
    Ok(unsafe { obj(p, arg)? })
}

macro_rules! scalar_fns {
    ($P:tt $L:tt $F:ident, $T:ty, $C:ty; $($name:ident => $op:ident, $doc:literal;)*) => { $( scalar_fns!(@one $P $L $F, $T, $C; $name => $op, $doc); )* };
    (@one [$($P:tt)*] [$($lead:tt)*] $F:ident, $T:ty, $C:ty; $name:ident => $op:ident, $doc:literal) => { pastey::paste! {
        th_fn! {
            #[doc = $doc]
            fn [<$($P)* Tensor_ $name>] @[$($lead)*](r_: *mut [<$($P)* Tensor>] as obj, t: *mut [<$($P)* Tensor>] as operand, value: $C) {
                arith::scalar_op(r_, &t, ScalarOp::$op, <$T>::from_c(value))
            }
        }
    } };
}

macro_rules! binary_fns {
    ($P:tt $L:tt $F:ident, $T:ty; $($name:ident => $op:ident, $doc:literal;)*) => { $( binary_fns!(@one $P $L $F, $T; $name => $op, $doc); )* };
    (@one [$($P:tt)*] [$($lead:tt)*] $F:ident, $T:ty; $name:ident => $op:ident, $doc:literal) => { pastey::paste! {
        th_fn! {
            #[doc = $doc]
            fn [<$($P)* Tensor_ $name>] @[$($lead)*](r_: *mut [<$($P)* Tensor>] as obj, t: *mut [<$($P)* Tensor>] as operand, src: *mut [<$($P)* Tensor>] as operand) {
                arith::binary_op(r_, &t, BinaryOp::$op, &src)
            }
        }
    } };
}

macro_rules! cmp_fns {
    ($P:tt $L:tt $F:ident, $T:ty, $C:ty; $($name:ident => $op:ident;)*) => { $( cmp_fns!(@one $P $L $F, $T, $C; $name => $op); )* };
    (@one [$($P:tt)*] [$($lead:tt)*] $F:ident, $T:ty, $C:ty; $name:ident => $op:ident) => { pastey::paste! {
        th_fn! {
            #[doc = "`r_[i] = (t[i] " $name " value)`, 1 or 0, into a Byte tensor resized like `t`."]
            fn [<$($P)* Tensor_ $name Value>] @[$($lead)*](r_: *mut [<$F ByteTensor>] as obj, t: *mut [<$($P)* Tensor>] as operand, value: $C) {
                arith::cmp_value(r_, &t, Cmp::$op, <$T>::from_c(value))
            }
            #[doc = "`r_[i] = (t[i] " $name " value)`, 1 or 0, in `t`'s own type."]
            fn [<$($P)* Tensor_ $name ValueT>] @[$($lead)*](r_: *mut [<$($P)* Tensor>] as obj, t: *mut [<$($P)* Tensor>] as operand, value: $C) {
                arith::cmp_value(r_, &t, Cmp::$op, <$T>::from_c(value))
            }
            #[doc = "`r_ = (ta " $name " tb)`, 1 or 0, into a Byte tensor (broadcasting)."]
            fn [<$($P)* Tensor_ $name Tensor>] @[$($lead)*](r_: *mut [<$F ByteTensor>] as obj, ta: *mut [<$($P)* Tensor>] as operand, tb: *mut [<$($P)* Tensor>] as operand) {
                arith::cmp_tensor(r_, &ta, Cmp::$op, &tb)
            }
            #[doc = "`r_ = (ta " $name " tb)`, 1 or 0, in the inputs' own type (broadcasting)."]
            fn [<$($P)* Tensor_ $name TensorT>] @[$($lead)*](r_: *mut [<$($P)* Tensor>] as obj, ta: *mut [<$($P)* Tensor>] as operand, tb: *mut [<$($P)* Tensor>] as operand) {
                arith::cmp_tensor(r_, &ta, Cmp::$op, &tb)
            }
        }
    } };
}

macro_rules! unary_fns {
    ($P:tt $L:tt $F:ident, $T:ty; $($name:ident => $op:ident, $doc:literal;)*) => { $( unary_fns!(@one $P $L $F, $T; $name => $op, $doc); )* };
    (@one [$($P:tt)*] [$($lead:tt)*] $F:ident, $T:ty; $name:ident => $op:ident, $doc:literal) => { pastey::paste! {
        th_fn! {
            #[doc = $doc]
            fn [<$($P)* Tensor_ $name>] @[$($lead)*](r_: *mut [<$($P)* Tensor>] as obj, t: *mut [<$($P)* Tensor>] as operand) {
                arith::unary(r_, &t, Unary::$op)
            }
        }
    } };
}

macro_rules! math_api {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => {
        $( math_api!(@fam [TH $R] [] TH $K $T, $C); math_api!(@thc $K $R, $T, $C); )*
    };
    // THC's family: `THCudaTensor` for Float, `THCuda{Real}Tensor` for the others, THCState first.
    (@thc $K:ident Float, $T:ty, $C:ty) => { math_api!(@fam [THCuda] [state: *mut super::thc::THCState] THCuda $K $T, $C); };
    (@thc $K:ident $R:ident, $T:ty, $C:ty) => { math_api!(@fam [THCuda $R] [state: *mut super::thc::THCState] THCuda $K $T, $C); };
    (@fam $P:tt $L:tt $F:ident $K:ident $T:ty, $C:ty) => {
        math_api!(@all $P $L $F, $T, $C); math_api!(@num $K $P $L $F, $T, $C); math_api!(@float $K $P $L $F, $T, $C);
    };
    (@all [$($P:tt)*] [$($lead:tt)*] $F:ident, $T:ty, $C:ty) => { pastey::paste! {
        th_fn! {
            /// Sets every element of `r_` to `value` (in place, no resize).
            fn [<$($P)* Tensor_fill>] @[$($lead)*](r_: *mut [<$($P)* Tensor>] as obj, value: $C) {
                arith::fill(r_, <$T>::from_c(value))
            }
            /// Sets every element of `r_` to 0 (in place, no resize).
            fn [<$($P)* Tensor_zero>] @[$($lead)*](r_: *mut [<$($P)* Tensor>] as obj) {
                arith::fill(r_, <$T>::default())
            }
        }
        cmp_fns!([$($P)*] [$($lead)*] $F, $T, $C; lt => Lt; le => Le; gt => Gt; ge => Ge; ne => Ne; eq => Eq;);
    } };
    (@num bool $($x:tt)*) => {};
    (@num $k:ident [$($P:tt)*] [$($lead:tt)*] $F:ident, $T:ty, $C:ty) => { pastey::paste! {
        scalar_fns!([$($P)*] [$($lead)*] $F, $T, $C;
            add => Add, "`r_ = t + value`, `r_` resized like `t`.";
            sub => Sub, "`r_ = t - value`.";
            mul => Mul, "`r_ = t * value`.";
            div => Div, "`r_ = t / value` (integers: C division; 0 is an error).";
            lshift => Lshift, "`r_ = t << value` (integers, through the unsigned type) or `t * 2^value`.";
            rshift => Rshift, "`r_ = t >> value` (integers, logical) or `t / 2^value`.";
            fmod => Fmod, "`r_ = fmod(t, value)` (sign of the dividend; integers: 0 is an error).";
            remainder => Remainder, "`r_ = t mod value` with the sign of the divisor (floats: `t - value*floor(t/value)`).";
            bitand => BitAnd, "`r_ = t & value` (integer types; an error for floating types).";
            bitor => BitOr, "`r_ = t | value` (integer types).";
            bitxor => BitXor, "`r_ = t ^ value` (integer types).";
            cmaxValue => CmaxValue, "`r_ = t > value ? t : value` (TH's rule: a NaN `t` gives `value`).";
            cminValue => CminValue, "`r_ = t < value ? t : value` (TH's rule: a NaN `t` gives `value`).";
            pow => Pow, "`r_ = t ^ value` (integers computed in double).";
        );
        binary_fns!([$($P)*] [$($lead)*] $F, $T;
            cmul => Mul, "`r_ = t * src` (broadcasting).";
            cdiv => Div, "`r_ = t / src` (integers: a zero divisor is an error).";
            cpow => Pow, "`r_ = pow(t, src)`.";
            clshift => Lshift, "`r_ = t << src`.";
            crshift => Rshift, "`r_ = t >> src`.";
            cfmod => Fmod, "`r_ = fmod(t, src)`.";
            cremainder => Remainder, "`r_ = t mod src` with the sign of the divisor.";
            cbitand => BitAnd, "`r_ = t & src` (integer types).";
            cbitor => BitOr, "`r_ = t | src` (integer types).";
            cbitxor => BitXor, "`r_ = t ^ src` (integer types).";
            cmax => Max, "`r_ = t > src ? t : src` (TH's rule: a NaN in either gives `src`).";
            cmin => Min, "`r_ = t < src ? t : src` (TH's rule: a NaN in either gives `src`).";
        );
        th_fn! {
            /// `r_ = t + value * src` (broadcasting; `r_` may be `t`).
            fn [<$($P)* Tensor_cadd>] @[$($lead)*](r_: *mut [<$($P)* Tensor>] as obj, t: *mut [<$($P)* Tensor>] as operand, value: $C, src: *mut [<$($P)* Tensor>] as operand) {
                arith::cadd(r_, &t, <$T>::from_c(value), &src)
            }
            /// `self = src1 - value * src2`.
            fn [<$($P)* Tensor_csub>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj, src1: *mut [<$($P)* Tensor>] as operand, value: $C, src2: *mut [<$($P)* Tensor>] as operand) {
                arith::csub(self_, &src1, <$T>::from_c(value), &src2)
            }
            /// `r_ = t + value * src1 * src2`.
            fn [<$($P)* Tensor_addcmul>] @[$($lead)*](r_: *mut [<$($P)* Tensor>] as obj, t: *mut [<$($P)* Tensor>] as operand, value: $C, src1: *mut [<$($P)* Tensor>] as operand, src2: *mut [<$($P)* Tensor>] as operand) {
                arith::addcmul(r_, &t, <$T>::from_c(value), &src1, &src2)
            }
            /// `r_ = t + value * src1 / src2`.
            fn [<$($P)* Tensor_addcdiv>] @[$($lead)*](r_: *mut [<$($P)* Tensor>] as obj, t: *mut [<$($P)* Tensor>] as operand, value: $C, src1: *mut [<$($P)* Tensor>] as operand, src2: *mut [<$($P)* Tensor>] as operand) {
                arith::addcdiv(r_, &t, <$T>::from_c(value), &src1, &src2)
            }
            /// `r_ = min(max(t, min_value), max_value)`.
            fn [<$($P)* Tensor_clamp>] @[$($lead)*](r_: *mut [<$($P)* Tensor>] as obj, t: *mut [<$($P)* Tensor>] as operand, min_value: $C, max_value: $C) {
                arith::clamp(r_, &t, <$T>::from_c(min_value), <$T>::from_c(max_value))
            }
            /// `self = -src` (integers wrap).
            fn [<$($P)* Tensor_neg>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as operand) {
                arith::neg(self_, &src)
            }
            /// `self = 1 / src` (integers: a zero is an error).
            fn [<$($P)* Tensor_cinv>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as operand) {
                arith::cinv(self_, &src)
            }
            /// `r_ = |t|`.
            fn [<$($P)* Tensor_abs>] @[$($lead)*](r_: *mut [<$($P)* Tensor>] as obj, t: *mut [<$($P)* Tensor>] as operand) {
                arith::abs(r_, &t)
            }
            /// `r_ = sign(t)`: -1, 0 or 1.
            fn [<$($P)* Tensor_sign>] @[$($lead)*](r_: *mut [<$($P)* Tensor>] as obj, t: *mut [<$($P)* Tensor>] as operand) {
                arith::sign(r_, &t)
            }
            /// `r_ = value ^ t`.
            fn [<$($P)* Tensor_tpow>] @[$($lead)*](r_: *mut [<$($P)* Tensor>] as obj, value: $C, t: *mut [<$($P)* Tensor>] as operand) {
                arith::tpow(r_, <$T>::from_c(value), &t)
            }
        }
    } };
    (@float float $($x:tt)*) => { math_api!(@floatfns $($x)*); };
    (@float half $($x:tt)*) => { math_api!(@floatfns $($x)*); };
    (@float $k:ident $($x:tt)*) => {};
    (@floatfns [$($P:tt)*] [$($lead:tt)*] $F:ident, $T:ty, $C:ty) => { pastey::paste! {
        unary_fns!([$($P)*] [$($lead)*] $F, $T;
            sigmoid => Sigmoid, "`r_ = 1 / (1 + exp(-t))`.";
            log => Log, "`r_ = log(t)`.";
            lgamma => Lgamma, "`r_ = log|gamma(t)|`.";
            log1p => Log1p, "`r_ = log(1 + t)`.";
            exp => Exp, "`r_ = exp(t)`.";
            cos => Cos, "`r_ = cos(t)`.";
            acos => Acos, "`r_ = acos(t)`.";
            cosh => Cosh, "`r_ = cosh(t)`.";
            sin => Sin, "`r_ = sin(t)`.";
            asin => Asin, "`r_ = asin(t)`.";
            sinh => Sinh, "`r_ = sinh(t)`.";
            tan => Tan, "`r_ = tan(t)`.";
            atan => Atan, "`r_ = atan(t)`.";
            tanh => Tanh, "`r_ = tanh(t)`.";
            sqrt => Sqrt, "`r_ = sqrt(t)`.";
            rsqrt => Rsqrt, "`r_ = 1 / sqrt(t)`.";
            ceil => Ceil, "`r_ = ceil(t)`.";
            floor => Floor, "`r_ = floor(t)`.";
            round => Round, "`r_ = round(t)` (halves away from zero).";
            trunc => Trunc, "`r_ = trunc(t)`.";
            frac => Frac, "`r_ = t - trunc(t)`.";
        );
        th_fn! {
            /// `r_ = atan2(tx, ty)` (C order: `tx` is the "y" argument).
            fn [<$($P)* Tensor_atan2>] @[$($lead)*](r_: *mut [<$($P)* Tensor>] as obj, tx: *mut [<$($P)* Tensor>] as operand, ty: *mut [<$($P)* Tensor>] as operand) {
                arith::atan2(r_, &tx, &ty)
            }
            /// `r_ = a + weight * (b - a)`.
            fn [<$($P)* Tensor_lerp>] @[$($lead)*](r_: *mut [<$($P)* Tensor>] as obj, a: *mut [<$($P)* Tensor>] as operand, b: *mut [<$($P)* Tensor>] as operand, weight: $C) {
                arith::lerp(r_, &a, &b, <$T>::from_c(weight))
            }
        }
    } };
}
crate::th_dtypes!(math_api);
