//! The dtype list, written once, and the `Scalar` trait every element type implements.
//!
//! `th_dtypes!(callback)` hands the whole list to `callback!`. Everything that exists once per
//! dtype (the `DType` enum, `Scalar` impls, the C API in `ffi/`, tests) is generated from it, the
//! way torch7's `THGenerateAllTypes.h` re-includes a generic file once per type.

use std::fmt;

/// THE list of dtypes. Columns: TH name, Rust element type, C ABI type, accumulator (TH's
/// `accreal`; Half/BFloat16 accumulate in f32, Bool as Long), `DType` variant, kind (`int`,
/// `float`, `half`: a reduced-precision float computed in f32, `bool`). The C API selects the
/// functions a dtype has by its kind, never by its name.
///
/// Two forms: `th_dtypes!(cb)` hands every row to `cb!`; `th_dtypes!(cb; int float)` hands
/// `cb!` only the Rust element types of the rows of those kinds (`cb!(u8, i8, ..., f64)`), for
/// the per-family trait impls; `th_dtypes!(cb[tokens]; kinds)` puts `tokens` before the types.
#[macro_export]
macro_rules! th_dtypes {
    (@rows $($then:tt)*) => {
        $crate::th_dtypes! { @$($then)* [
            (Byte, u8, u8, i64, Byte, int),
            (Char, i8, i8, i64, Char, int),
            (Short, i16, i16, i64, Short, int),
            (Int, i32, i32, i64, Int, int),
            (Long, i64, i64, i64, Long, int),
            (Float, f32, f32, f64, Float, float),
            (Double, f64, f64, f64, Double, float),
            (Half, half::f16, $crate::core::dtype::THHalf, f32, Half, half),
            (BFloat16, half::bf16, $crate::core::dtype::THBFloat16, f32, BFloat16, half),
            (Bool, $crate::core::dtype::Bool, $crate::core::dtype::Bool, i64, Bool, bool),
        ] }
    };
    ($cb:ident) => { $crate::th_dtypes! { @rows all $cb } };
    ($cb:ident; $($kind:ident)+) => { $crate::th_dtypes! { @rows kinds $cb [] [] [$($kind)+] } };
    ($cb:ident [$($pre:tt)*]; $($kind:ident)+) => {
        $crate::th_dtypes! { @rows kinds $cb [$($pre)*] [] [$($kind)+] }
    };
    (@all $cb:ident [$($row:tt)*]) => { $cb! { $($row)* } };
    // Kind by kind, scan the rows and collect the element types of that kind.
    (@kinds $cb:ident [$($pre:tt)*] [$($acc:ty),*] [] $rows:tt) => { $cb!($($pre)* $($acc),*); };
    (@kinds $cb:ident $pre:tt $acc:tt [$kind:ident $($kinds:ident)*] $rows:tt) => {
        $crate::th_dtypes! { @scan $cb $pre $acc [$($kinds)*] $rows $kind $rows }
    };
    (@scan $cb:ident $pre:tt $acc:tt $kinds:tt $rows:tt $kind:ident []) => {
        $crate::th_dtypes! { @kinds $cb $pre $acc $kinds $rows }
    };
    (@scan $cb:ident $pre:tt [$($acc:ty),*] $kinds:tt $rows:tt $kind:ident [
        ($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident), $($rest:tt)*]) => {
        $crate::th_dtypes! { @if $kind $K
            [@scan $cb $pre [$($acc,)* $T] $kinds $rows $kind [$($rest)*]]
            [@scan $cb $pre [$($acc),*] $kinds $rows $kind [$($rest)*]] }
    };
    (@if int int [$($yes:tt)*] $no:tt) => { $crate::th_dtypes! { $($yes)* } };
    (@if float float [$($yes:tt)*] $no:tt) => { $crate::th_dtypes! { $($yes)* } };
    (@if half half [$($yes:tt)*] $no:tt) => { $crate::th_dtypes! { $($yes)* } };
    (@if bool bool [$($yes:tt)*] $no:tt) => { $crate::th_dtypes! { $($yes)* } };
    (@if $kind:ident $other:ident $yes:tt [$($no:tt)*]) => { $crate::th_dtypes! { $($no)* } };
}

/// IEEE half as C sees it (`typedef struct THHalf { uint16_t x; } THHalf;`, as in torch7).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct THHalf {
    pub x: u16,
}

/// bfloat16 as C sees it: the top 16 bits of an IEEE float.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct THBFloat16 {
    pub x: u16,
}

/// The Bool element: one byte, 0 is false and any other value is true (memory handed in from C
/// or a file may hold any byte, so this is not Rust's `bool`). Writes always store 0 or 1.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bool(pub u8);

impl Bool {
    pub fn get(self) -> bool {
        self.0 != 0
    }
}

impl From<bool> for Bool {
    fn from(b: bool) -> Self {
        Bool(b as u8)
    }
}

/// A value in transit between dtypes: integers as i64, floating point as f64 (both exact for
/// every source dtype), so `cast` is one rounding, as C's `(real)x` is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Prim {
    I(i64),
    F(f64),
}

/// How a dtype's element encodes a value: with its size and `Scalar::DIGITS`, the source of every
/// per-dtype fact outside the list (DLPack codes, `.npy` descrs, text formats, exact ranges).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Unsigned binary integer.
    UInt,
    /// Two's complement integer.
    Int,
    /// IEEE 754 binary float (binary16, binary32, binary64).
    Float,
    /// bfloat16: the upper half of a binary32.
    BFloat,
    /// One byte; zero is false.
    Bool,
}

macro_rules! dtype_enum {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => {
        /// Every element type the library has.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum DType { $($D),* }

        impl DType {
            /// All dtypes in list order.
            pub const ALL: &'static [DType] = &[$(DType::$D),*];

            /// TH's name infix (`Float` in `THFloatTensor`).
            pub fn name(self) -> &'static str {
                match self { $(DType::$D => stringify!($R)),* }
            }

            /// Size of one element in bytes.
            pub fn size(self) -> usize {
                match self { $(DType::$D => std::mem::size_of::<$T>()),* }
            }

            /// How an element encodes its value (`Scalar::FORMAT`).
            pub fn format(self) -> Format {
                match self { $(DType::$D => <$T as Scalar>::FORMAT),* }
            }

            /// `Scalar::DIGITS` of the dtype.
            pub fn digits(self) -> u32 {
                match self { $(DType::$D => <$T as Scalar>::DIGITS),* }
            }
        }
    };
}
th_dtypes!(dtype_enum);

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

mod sealed {
    pub trait Sealed {}
}

/// An element type. Sealed: the set is `th_dtypes!`.
pub trait Scalar: Copy + Send + Sync + Default + PartialEq + fmt::Debug + 'static + sealed::Sealed {
    const DTYPE: DType;
    /// How the element encodes its value.
    const FORMAT: Format;
    /// Binary digits of value: an integer's bits without the sign bit, a float's significand
    /// digits (the implicit bit included), 1 for Bool.
    const DIGITS: u32;
    /// TH's `accreal`.
    type Acc: Copy + Default + fmt::Debug;
    fn to_prim(self) -> Prim;
    fn from_prim(p: Prim) -> Self;
    /// `(U)self` with C conversion semantics (integers wrap, floats round, Bool is `!= 0`;
    /// float to integer saturates and NaN becomes 0, where C leaves it undefined).
    #[inline]
    fn cast<U: Scalar>(self) -> U {
        U::from_prim(self.to_prim())
    }
}

/// `Scalar` for a Rust number type `$T` (`DType::$D`): its value goes to `Prim::$V` as a `$P`
/// and comes back from either `Prim` with `as` (C's cast; from floats, saturating).
macro_rules! prim_scalar {
    ($T:ty => $D:ident, $V:ident($P:ty), format $format:expr, digits $digits:expr, acc $A:ty) => {
        impl sealed::Sealed for $T {}
        impl Scalar for $T {
            const DTYPE: DType = DType::$D;
            const FORMAT: Format = $format;
            const DIGITS: u32 = $digits;
            type Acc = $A;
            #[inline]
            fn to_prim(self) -> Prim {
                Prim::$V(self as $P)
            }
            #[inline]
            fn from_prim(p: Prim) -> Self {
                match p {
                    Prim::I(v) => v as $T,
                    Prim::F(v) => v as $T,
                }
            }
        }
    };
}

macro_rules! int_scalar {
    ($($T:ty => $D:ident),*) => {$(
        prim_scalar!($T => $D, I(i64), format if <$T>::MIN == 0 { Format::UInt } else { Format::Int },
            digits <$T>::BITS - (<$T>::MIN != 0) as u32, acc i64);
    )*};
}
int_scalar!(u8 => Byte, i8 => Char, i16 => Short, i32 => Int, i64 => Long);

macro_rules! float_scalar {
    ($($T:ty => $D:ident, $A:ty);*) => {$(
        prim_scalar!($T => $D, F(f64), format Format::Float, digits <$T>::MANTISSA_DIGITS, acc $A);
    )*};
}
float_scalar!(f32 => Float, f64; f64 => Double, f64);

/// `x` rounded to f32 with round-to-odd: exact values stay, inexact ones are truncated toward
/// zero and get their last mantissa bit set. Rounding that result once more to a format with at
/// most 11 significant bits (f16, bf16) then equals rounding `x` directly (f32 has 24 >= 2*11+2
/// bits), so f64 -> f16/bf16 is a single correct rounding, as C's cast is.
pub fn f64_to_f32_round_odd(x: f64) -> f32 {
    let f = x as f32;
    if (f as f64) == x || x.is_nan() {
        return f;
    }
    let mut bits = f.to_bits();
    if (f as f64).abs() > x.abs() {
        bits -= 1; // one step toward zero (also turns an overflowed inf into f32::MAX)
    }
    f32::from_bits(bits | 1)
}

macro_rules! half_scalar {
    ($($T:ty => $D:ident, $F:ident),*) => {$(
        impl sealed::Sealed for $T {}
        impl Scalar for $T {
            const DTYPE: DType = DType::$D;
            const FORMAT: Format = Format::$F;
            const DIGITS: u32 = <$T>::MANTISSA_DIGITS;
            type Acc = f32;
            #[inline]
            fn to_prim(self) -> Prim { Prim::F(self.to_f64()) }
            #[inline]
            fn from_prim(p: Prim) -> Self {
                let v = match p { Prim::I(v) => v as f64, Prim::F(v) => v };
                <$T>::from_f32(f64_to_f32_round_odd(v))
            }
        }
    )*};
}
half_scalar!(half::f16 => Half, Float, half::bf16 => BFloat16, BFloat);

impl sealed::Sealed for Bool {}
impl Scalar for Bool {
    const DTYPE: DType = DType::Bool;
    const FORMAT: Format = Format::Bool;
    const DIGITS: u32 = 1;
    type Acc = i64;
    #[inline]
    fn to_prim(self) -> Prim {
        Prim::I(self.get() as i64)
    }
    #[inline]
    fn from_prim(p: Prim) -> Self {
        match p {
            Prim::I(v) => Bool::from(v != 0),
            Prim::F(v) => Bool::from(v != 0.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    #[test]
    fn casts_follow_c() {
        assert_eq!(300i32.cast::<u8>(), 44);
        assert_eq!((-1i64).cast::<u8>(), 255);
        assert_eq!((-2.7f64).cast::<i32>(), -2);
        assert_eq!(2.5f32.cast::<f16>(), f16::from_f32(2.5));
        assert_eq!(f16::from_f32(-3.0).cast::<i16>(), -3);
        assert_eq!(bf16::from_f32(1.0).cast::<f64>(), 1.0);
        assert_eq!(Bool(7).cast::<i32>(), 1);
        assert_eq!(0.5f32.cast::<Bool>(), Bool(1));
        assert_eq!(0i8.cast::<Bool>(), Bool(0));
        assert_eq!(16_777_217i64.cast::<f32>(), 16_777_216.0);
        // one rounding from double (the half crate's own f64 path rounds twice)
        assert_eq!((1.0 + 2f64.powi(-11) + 2f64.powi(-40)).cast::<f16>().to_bits(), 0x3C01);
        assert_eq!((1.0 + 2f64.powi(-8) + 2f64.powi(-40)).cast::<bf16>().to_bits(), 0x3F81);
        assert_eq!((1.0 + 2f64.powi(-11)).cast::<f16>().to_bits(), 0x3C00); // tie: to even
        assert_eq!(1e300f64.cast::<f16>(), f16::INFINITY);
        assert_eq!((-1e300f64).cast::<bf16>(), bf16::NEG_INFINITY);
        assert!(f64::NAN.cast::<f16>().is_nan());
    }

    #[test]
    fn dtype_table() {
        assert_eq!(DType::ALL.len(), 10);
        assert_eq!(DType::Half.size(), 2);
        assert_eq!(DType::Bool.size(), 1);
        assert_eq!(DType::Long.name(), "Long");
        assert_eq!(<f32 as Scalar>::DTYPE, DType::Float);
        let facts: Vec<(Format, u32)> = DType::ALL.iter().map(|d| (d.format(), d.digits())).collect();
        use Format::*;
        assert_eq!(
            facts,
            [
                (UInt, 8),
                (Int, 7),
                (Int, 15),
                (Int, 31),
                (Int, 63),
                (Float, 24),
                (Float, 53),
                (Float, 11),
                (BFloat, 8),
                (Bool, 1)
            ]
        );
    }
}
