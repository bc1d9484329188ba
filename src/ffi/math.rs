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
unsafe fn view<'a, H: Handle<Obj = crate::core::tensor::Tensor<T>>, T: crate::Scalar>(
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
            fn [<TH $R Tensor_ $name>](r_: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>], value: $C) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(r_, 1)?, view(t, 2)?) };
                arith::scalar_op(r, &t, ScalarOp::$op, <$T>::from_c(value))
            }
        }
    )* } };
}

macro_rules! binary_fns {
    ($R:ident, $T:ty; $($name:ident => $op:ident, $doc:literal;)*) => { pastey::paste! { $(
        th_fn! {
            #[doc = $doc]
            fn [<TH $R Tensor_ $name>](r_: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>], src: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (r, t, s) = unsafe { (obj(r_, 1)?, view(t, 2)?, view(src, 3)?) };
                arith::binary_op(r, &t, BinaryOp::$op, &s)
            }
        }
    )* } };
}

macro_rules! cmp_fns {
    ($R:ident, $T:ty, $C:ty; $($name:ident => $op:ident;)*) => { pastey::paste! { $(
        th_fn! {
            #[doc = "`r_[i] = (t[i] " $name " value)`, 1 or 0, into a Byte tensor resized like `t`."]
            fn [<TH $R Tensor_ $name Value>](r_: *mut THByteTensor, t: *mut [<TH $R Tensor>], value: $C) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(r_, 1)?, view(t, 2)?) };
                arith::cmp_value(r, &t, Cmp::$op, <$T>::from_c(value))
            }
        }
        th_fn! {
            #[doc = "`r_[i] = (t[i] " $name " value)`, 1 or 0, in `t`'s own type."]
            fn [<TH $R Tensor_ $name ValueT>](r_: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>], value: $C) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(r_, 1)?, view(t, 2)?) };
                arith::cmp_value(r, &t, Cmp::$op, <$T>::from_c(value))
            }
        }
        th_fn! {
            #[doc = "`r_ = (ta " $name " tb)`, 1 or 0, into a Byte tensor (broadcasting)."]
            fn [<TH $R Tensor_ $name Tensor>](r_: *mut THByteTensor, ta: *mut [<TH $R Tensor>], tb: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (r, a, b) = unsafe { (obj(r_, 1)?, view(ta, 2)?, view(tb, 3)?) };
                arith::cmp_tensor(r, &a, Cmp::$op, &b)
            }
        }
        th_fn! {
            #[doc = "`r_ = (ta " $name " tb)`, 1 or 0, in the inputs' own type (broadcasting)."]
            fn [<TH $R Tensor_ $name TensorT>](r_: *mut [<TH $R Tensor>], ta: *mut [<TH $R Tensor>], tb: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (r, a, b) = unsafe { (obj(r_, 1)?, view(ta, 2)?, view(tb, 3)?) };
                arith::cmp_tensor(r, &a, Cmp::$op, &b)
            }
        }
    )* } };
}

macro_rules! unary_fns {
    ($R:ident, $T:ty; $($name:ident => $op:ident, $doc:literal;)*) => { pastey::paste! { $(
        th_fn! {
            #[doc = $doc]
            fn [<TH $R Tensor_ $name>](r_: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(r_, 1)?, view(t, 2)?) };
                arith::unary(r, &t, Unary::$op)
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
            fn [<TH $R Tensor_fill>](r_: *mut [<TH $R Tensor>], value: $C) {
                // SAFETY: a handle from the caller.
                arith::fill(unsafe { obj(r_, 1)? }, <$T>::from_c(value))
            }
        }
        th_fn! {
            /// Sets every element of `r_` to 0 (in place, no resize).
            fn [<TH $R Tensor_zero>](r_: *mut [<TH $R Tensor>]) {
                // SAFETY: a handle from the caller.
                arith::fill(unsafe { obj(r_, 1)? }, <$T>::default())
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
            fn [<TH $R Tensor_cadd>](r_: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>], value: $C, src: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (r, t, s) = unsafe { (obj(r_, 1)?, view(t, 2)?, view(src, 4)?) };
                arith::cadd(r, &t, <$T>::from_c(value), &s)
            }
        }
        th_fn! {
            /// `self = src1 - value * src2`.
            fn [<TH $R Tensor_csub>](self_: *mut [<TH $R Tensor>], src1: *mut [<TH $R Tensor>], value: $C, src2: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (r, t, s) = unsafe { (obj(self_, 1)?, view(src1, 2)?, view(src2, 4)?) };
                arith::csub(r, &t, <$T>::from_c(value), &s)
            }
        }
        th_fn! {
            /// `r_ = t + value * src1 * src2`.
            fn [<TH $R Tensor_addcmul>](r_: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>], value: $C, src1: *mut [<TH $R Tensor>], src2: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (r, t, a, b) = unsafe { (obj(r_, 1)?, view(t, 2)?, view(src1, 4)?, view(src2, 5)?) };
                arith::addcmul(r, &t, <$T>::from_c(value), &a, &b)
            }
        }
        th_fn! {
            /// `r_ = t + value * src1 / src2`.
            fn [<TH $R Tensor_addcdiv>](r_: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>], value: $C, src1: *mut [<TH $R Tensor>], src2: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (r, t, a, b) = unsafe { (obj(r_, 1)?, view(t, 2)?, view(src1, 4)?, view(src2, 5)?) };
                arith::addcdiv(r, &t, <$T>::from_c(value), &a, &b)
            }
        }
        th_fn! {
            /// `r_ = min(max(t, min_value), max_value)`.
            fn [<TH $R Tensor_clamp>](r_: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>], min_value: $C, max_value: $C) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(r_, 1)?, view(t, 2)?) };
                arith::clamp(r, &t, <$T>::from_c(min_value), <$T>::from_c(max_value))
            }
        }
        th_fn! {
            /// `self = -src` (integers wrap).
            fn [<TH $R Tensor_neg>](self_: *mut [<TH $R Tensor>], src: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(self_, 1)?, view(src, 2)?) };
                arith::neg(r, &t)
            }
        }
        th_fn! {
            /// `self = 1 / src` (integers: a zero is an error).
            fn [<TH $R Tensor_cinv>](self_: *mut [<TH $R Tensor>], src: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(self_, 1)?, view(src, 2)?) };
                arith::cinv(r, &t)
            }
        }
        th_fn! {
            /// `r_ = |t|`.
            fn [<TH $R Tensor_abs>](r_: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(r_, 1)?, view(t, 2)?) };
                arith::abs(r, &t)
            }
        }
        th_fn! {
            /// `r_ = sign(t)`: -1, 0 or 1.
            fn [<TH $R Tensor_sign>](r_: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(r_, 1)?, view(t, 2)?) };
                arith::sign(r, &t)
            }
        }
        th_fn! {
            /// `r_ = value ^ t`.
            fn [<TH $R Tensor_tpow>](r_: *mut [<TH $R Tensor>], value: $C, t: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(r_, 1)?, view(t, 3)?) };
                arith::tpow(r, <$T>::from_c(value), &t)
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
            fn [<TH $R Tensor_atan2>](r_: *mut [<TH $R Tensor>], tx: *mut [<TH $R Tensor>], ty: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (r, a, b) = unsafe { (obj(r_, 1)?, view(tx, 2)?, view(ty, 3)?) };
                arith::atan2(r, &a, &b)
            }
        }
        th_fn! {
            /// `r_ = a + weight * (b - a)`.
            fn [<TH $R Tensor_lerp>](r_: *mut [<TH $R Tensor>], a: *mut [<TH $R Tensor>], b: *mut [<TH $R Tensor>], weight: $C) {
                // SAFETY: handles from the caller.
                let (r, x, y) = unsafe { (obj(r_, 1)?, view(a, 2)?, view(b, 3)?) };
                arith::lerp(r, &x, &y, <$T>::from_c(weight))
            }
        }
    } };
}
crate::th_dtypes!(math_api);
