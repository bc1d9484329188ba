//! `generic/THTensorMath.h`, pointwise part: fill/zero, scalar and tensor arithmetic,
//! addcmul/addcdiv, clamp, neg/cinv/abs/sign, cmax/cmin, comparisons and the float functions.
//! Outputs (`r_`, `self`) are resized by the callee; inputs broadcast (numpy rules, or TH's
//! element-count pairing when shapes don't broadcast); `r_` may be one of the inputs.

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
    ($R:ident, $T:ty, $C:ty; $($name:ident => $op:ident, $doc:literal;)*) => { pastey::paste! { $(
        th_fn! {
            #[doc = $doc]
            fn [<TH $R Tensor_ $name>](r_: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as operand, value: $C) {
                arith::scalar_op(r_, &t, ScalarOp::$op, <$T>::from_c(value))
            }
        }
    )* } };
}

macro_rules! binary_fns {
    ($R:ident, $T:ty; $($name:ident => $op:ident, $doc:literal;)*) => { pastey::paste! { $(
        th_fn! {
            #[doc = $doc]
            fn [<TH $R Tensor_ $name>](r_: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as operand, src: *mut [<TH $R Tensor>] as operand) {
                arith::binary_op(r_, &t, BinaryOp::$op, &src)
            }
        }
    )* } };
}

macro_rules! cmp_fns {
    ($R:ident, $T:ty, $C:ty; $($name:ident => $op:ident;)*) => { pastey::paste! { $(
        th_fn! {
            #[doc = "`r_[i] = (t[i] " $name " value)`, 1 or 0, into a Byte tensor resized like `t`."]
            fn [<TH $R Tensor_ $name Value>](r_: *mut THByteTensor as obj, t: *mut [<TH $R Tensor>] as operand, value: $C) {
                arith::cmp_value(r_, &t, Cmp::$op, <$T>::from_c(value))
            }
            #[doc = "`r_[i] = (t[i] " $name " value)`, 1 or 0, in `t`'s own type."]
            fn [<TH $R Tensor_ $name ValueT>](r_: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as operand, value: $C) {
                arith::cmp_value(r_, &t, Cmp::$op, <$T>::from_c(value))
            }
            #[doc = "`r_ = (ta " $name " tb)`, 1 or 0, into a Byte tensor (broadcasting)."]
            fn [<TH $R Tensor_ $name Tensor>](r_: *mut THByteTensor as obj, ta: *mut [<TH $R Tensor>] as operand, tb: *mut [<TH $R Tensor>] as operand) {
                arith::cmp_tensor(r_, &ta, Cmp::$op, &tb)
            }
            #[doc = "`r_ = (ta " $name " tb)`, 1 or 0, in the inputs' own type (broadcasting)."]
            fn [<TH $R Tensor_ $name TensorT>](r_: *mut [<TH $R Tensor>] as obj, ta: *mut [<TH $R Tensor>] as operand, tb: *mut [<TH $R Tensor>] as operand) {
                arith::cmp_tensor(r_, &ta, Cmp::$op, &tb)
            }
        }
    )* } };
}

macro_rules! unary_fns {
    ($R:ident, $T:ty; $($name:ident => $op:ident, $doc:literal;)*) => { pastey::paste! { $(
        th_fn! {
            #[doc = $doc]
            fn [<TH $R Tensor_ $name>](r_: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as operand) {
                arith::unary(r_, &t, Unary::$op)
            }
        }
    )* } };
}

macro_rules! math_api {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => {
        $( math_api!(@all $R, $T, $C); math_api!(@num $K $R, $T, $C); math_api!(@float $K $R, $T, $C); )*
    };
    (@all $R:ident, $T:ty, $C:ty) => { pastey::paste! {
        th_fn! {
            /// Sets every element of `r_` to `value` (in place, no resize).
            fn [<TH $R Tensor_fill>](r_: *mut [<TH $R Tensor>] as obj, value: $C) {
                arith::fill(r_, <$T>::from_c(value))
            }
            /// Sets every element of `r_` to 0 (in place, no resize).
            fn [<TH $R Tensor_zero>](r_: *mut [<TH $R Tensor>] as obj) {
                arith::fill(r_, <$T>::default())
            }
        }
        cmp_fns!($R, $T, $C; lt => Lt; le => Le; gt => Gt; ge => Ge; ne => Ne; eq => Eq;);
    } };
    (@num bool $R:ident, $T:ty, $C:ty) => {};
    (@num $k:ident $R:ident, $T:ty, $C:ty) => { pastey::paste! {
        scalar_fns!($R, $T, $C;
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
            cmaxValue => CmaxValue, "`r_ = max(t, value)` (NaN wins).";
            cminValue => CminValue, "`r_ = min(t, value)` (NaN wins).";
            pow => Pow, "`r_ = t ^ value` (integers computed in double).";
        );
        binary_fns!($R, $T;
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
            cmax => Max, "`r_ = max(t, src)` (NaN wins).";
            cmin => Min, "`r_ = min(t, src)` (NaN wins).";
        );
        th_fn! {
            /// `r_ = t + value * src` (broadcasting; `r_` may be `t`).
            fn [<TH $R Tensor_cadd>](r_: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as operand, value: $C, src: *mut [<TH $R Tensor>] as operand) {
                arith::cadd(r_, &t, <$T>::from_c(value), &src)
            }
            /// `self = src1 - value * src2`.
            fn [<TH $R Tensor_csub>](self_: *mut [<TH $R Tensor>] as obj, src1: *mut [<TH $R Tensor>] as operand, value: $C, src2: *mut [<TH $R Tensor>] as operand) {
                arith::csub(self_, &src1, <$T>::from_c(value), &src2)
            }
            /// `r_ = t + value * src1 * src2`.
            fn [<TH $R Tensor_addcmul>](r_: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as operand, value: $C, src1: *mut [<TH $R Tensor>] as operand, src2: *mut [<TH $R Tensor>] as operand) {
                arith::addcmul(r_, &t, <$T>::from_c(value), &src1, &src2)
            }
            /// `r_ = t + value * src1 / src2`.
            fn [<TH $R Tensor_addcdiv>](r_: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as operand, value: $C, src1: *mut [<TH $R Tensor>] as operand, src2: *mut [<TH $R Tensor>] as operand) {
                arith::addcdiv(r_, &t, <$T>::from_c(value), &src1, &src2)
            }
            /// `r_ = min(max(t, min_value), max_value)`.
            fn [<TH $R Tensor_clamp>](r_: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as operand, min_value: $C, max_value: $C) {
                arith::clamp(r_, &t, <$T>::from_c(min_value), <$T>::from_c(max_value))
            }
            /// `self = -src` (integers wrap).
            fn [<TH $R Tensor_neg>](self_: *mut [<TH $R Tensor>] as obj, src: *mut [<TH $R Tensor>] as operand) {
                arith::neg(self_, &src)
            }
            /// `self = 1 / src` (integers: a zero is an error).
            fn [<TH $R Tensor_cinv>](self_: *mut [<TH $R Tensor>] as obj, src: *mut [<TH $R Tensor>] as operand) {
                arith::cinv(self_, &src)
            }
            /// `r_ = |t|`.
            fn [<TH $R Tensor_abs>](r_: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as operand) {
                arith::abs(r_, &t)
            }
            /// `r_ = sign(t)`: -1, 0 or 1.
            fn [<TH $R Tensor_sign>](r_: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as operand) {
                arith::sign(r_, &t)
            }
            /// `r_ = value ^ t`.
            fn [<TH $R Tensor_tpow>](r_: *mut [<TH $R Tensor>] as obj, value: $C, t: *mut [<TH $R Tensor>] as operand) {
                arith::tpow(r_, <$T>::from_c(value), &t)
            }
        }
    } };
    (@float float $R:ident, $T:ty, $C:ty) => { math_api!(@floatfns $R, $T, $C); };
    (@float half $R:ident, $T:ty, $C:ty) => { math_api!(@floatfns $R, $T, $C); };
    (@float $k:ident $R:ident, $T:ty, $C:ty) => {};
    (@floatfns $R:ident, $T:ty, $C:ty) => { pastey::paste! {
        unary_fns!($R, $T;
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
            fn [<TH $R Tensor_atan2>](r_: *mut [<TH $R Tensor>] as obj, tx: *mut [<TH $R Tensor>] as operand, ty: *mut [<TH $R Tensor>] as operand) {
                arith::atan2(r_, &tx, &ty)
            }
            /// `r_ = a + weight * (b - a)`.
            fn [<TH $R Tensor_lerp>](r_: *mut [<TH $R Tensor>] as obj, a: *mut [<TH $R Tensor>] as operand, b: *mut [<TH $R Tensor>] as operand, weight: $C) {
                arith::lerp(r_, &a, &b, <$T>::from_c(weight))
            }
        }
    } };
}
crate::th_dtypes!(math_api);
