//! Elementary functions written so that LLVM vectorizes them inside the kernels' loops: no
//! calls, no data-dependent branches (every special case is a select), integer tricks instead
//! of conversions. Compiled under the kernels' `#[target_feature]` copies they become AVX2 /
//! AVX-512 code; the plain copy is ordinary SSE2. Every multiply-add goes through `Fma`: fused
//! in the copies that have the instruction, a product and a sum in the plain one.
//!
//! Accuracy (checked by the tests below against the C library in f64 over wide ranges, for both
//! evaluations; f32 also over every float by the ignored test `every_f32`):
//! f32 within 2 ulp, f64 within 3 ulp of the correctly rounded result; inf, NaN, signed zero,
//! overflow to inf and underflow through the subnormals as the C library does.
//!
//! - `exp`: x = n ln2 + r (Cody-Waite, ln2 split in two), |r| <= ln2/2, e^r = 1 + r + r^2 q(r)
//!   (f32: q a fitted minimax polynomial of degree 4; f64: Taylor, degree 11), times 2^n
//!   applied as two factors 2^(n/2) so that results down in the subnormals round once.
//! - `expm1` (finite inputs up to ~44, for `tanh`): the same reduction; e^r - 1 without its
//!   leading 1, so small arguments keep full relative accuracy (f32: q of degree 5, as tanh
//!   passes expm1's relative error on almost undamped).
//! - `ln`: x = 2^k m with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(s), s = (m-1)/(m+1), an odd
//!   series in s; subnormal inputs are scaled first.
//! - `tanh`: expm1(2|x|) / (expm1(2|x|) + 2) with the sign of x; |x| clamped where tanh is 1.
//! - `sigmoid`: 1 / (1 + exp(-|x|)), or exp(-|x|) / (1 + exp(-|x|)) for x < 0.
//!
//! f32 `tanh` and `ln` and f64 `ln` also have AVX-512 slice kernels in explicit intrinsics
//! (`avx512`, other algorithms: tables in registers, no division), which `block` hands out for
//! contiguous runs.

#[cfg(all(target_arch = "x86_64", not(miri)))]
mod avx512;

use crate::kernels::pointwise::Block;

/// How the functions evaluate `a * b + c`. `Fused`: one rounding, the FMA instruction, for the
/// kernel copies compiled with FMA (AVX2, AVX-512); it saves an instruction in every Horner
/// step and makes the reductions more accurate. `Unfused`: a product and a sum, for the plain
/// copy, where `mul_add` would be a libm call per element. Results differ in the last bits
/// between the two (each within the stated bounds); the device kernels follow `Fused`.
pub trait Fma<F> {
    fn fma(a: F, b: F, c: F) -> F;
}

/// The evaluation of `a * b + c` chosen by the caller for its kernel copy (see `Fma`).
pub trait Mode: Fma<f32> + Fma<f64> {}

/// `a * b + c` as one FMA (only where the kernel copy has the instruction).
pub struct Fused;
/// `a * b + c` as a product and a sum.
pub struct Unfused;

macro_rules! fma_impls {
    ($($F:ident),*) => {$(
        impl Fma<$F> for Fused {
            #[inline(always)]
            fn fma(a: $F, b: $F, c: $F) -> $F {
                a.mul_add(b, c)
            }
        }
        impl Fma<$F> for Unfused {
            #[inline(always)]
            fn fma(a: $F, b: $F, c: $F) -> $F {
                a * b + c
            }
        }
    )*};
}
fma_impls!(f32, f64);
impl Mode for Fused {}
impl Mode for Unfused {}

/// Functions the float kernels compute in their own precision, `M` evaluating the
/// multiply-adds.
pub trait VMath: Copy {
    fn vexp<M: Mode>(self) -> Self;
    fn vln<M: Mode>(self) -> Self;
    fn vtanh<M: Mode>(self) -> Self;
    fn vsigmoid<M: Mode>(self) -> Self;
}

/// The functions with slice kernels (`block`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sliced {
    Tanh,
    Ln,
}

/// The slice kernel of `f` for `T` (`o[i] = f(a[i])` over a contiguous run): the AVX-512 one
/// when there is one for `T` (f32 `tanh` and `ln`, f64 `ln`) and `isa()` runs AVX-512; `None`
/// otherwise (the caller's per-element code).
pub fn block<T: 'static>(f: Sliced) -> Option<Block<T, T>> {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if crate::kernels::isa() == crate::kernels::Isa::Avx512 {
        let (b32, b64): (Block<f32, f32>, Option<Block<f64, f64>>) = match f {
            Sliced::Tanh => (avx512::tanh_f32, None),
            Sliced::Ln => (avx512::ln_f32, Some(avx512::ln_f64)),
        };
        let as_t = |b: &dyn std::any::Any| b.downcast_ref::<Block<T, T>>().copied();
        return as_t(&b32).or_else(|| b64.and_then(|b| as_t(&b)));
    }
    let _ = f;
    None
}

/// c[0] + t (c[1] + t (c[2] + ...)), by Horner's rule from the last coefficient.
#[inline(always)]
fn horner<F: Copy, M: Fma<F>>(t: F, c: &[F]) -> F {
    let mut p = c[c.len() - 1];
    let mut k = c.len() - 1;
    while k > 0 {
        k -= 1;
        p = M::fma(t, p, c[k]);
    }
    p
}

/// `exp`, `expm1`, `tanh` and `ln` of one float type, as `exp_$F`, ...: `$F` with its bits as
/// `$I` (signed) and `$U`, `$MANT` stored mantissa bits, exponent bias `$BIAS`; `ln2` split in
/// two for an exact n*LN2_HI; the `exp` argument clamp; the `tanh` argument cap; the
/// coefficients of q (e^r = 1 + r + r^2 q(r)) for `exp` and for `expm1`, lowest first; the
/// series coefficients 2/(2k+1) (k = 1..) of `ln`,
/// and the bits of sqrt(1/2). Also `VMath` for `$F` (with `sigmoid_$F`).
macro_rules! vmath {
    // `VMath::v$f` is `$f_$F`.
    (@impl $F:ident: $($f:ident),*) => { pastey::paste! {
        impl VMath for $F {
            $(
                #[inline(always)]
                fn [<v $f>]<M: Mode>(self) -> $F {
                    [<$f _ $F>]::<M>(self)
                }
            )*
        }
    }};
    ($F:ident, $I:ident, $U:ident, mantissa $MANT:literal, bias $BIAS:literal,
     ln2 [$LN2_HI:expr, $LN2_LO:expr], exp_clamp [$XLO:expr, $XHI:expr], tanh_cap $CAP:expr,
     exp $XC:expr, expm1 $EC:expr, ln $LC:expr, sqrt_half_bits $SH:expr) => {
        pastey::paste! {
            const [<LN2_HI_ $F:upper>]: $F = $F::from_bits($LN2_HI);
            const [<LN2_LO_ $F:upper>]: $F = $F::from_bits($LN2_LO);

            /// `(n, r)` with x = n ln2 + r: n = round(x / ln2) as an integer, from the bits of the
            /// magic-number rounding (exact for |x / ln2| < 2^(MANT-1)). n LN2_HI is exact, so
            /// the first step of r is exact fused or not.
            #[inline(always)]
            fn [<reduce_ $F>]<M: Fma<$F>>(x: $F) -> ($I, $F) {
                const MAGIC: $F = (3u64 << ($MANT - 1)) as $F; // 1.5 * 2^MANT
                let t = M::fma(x, std::$F::consts::LOG2_E, MAGIC);
                let nf = t - MAGIC;
                let n = (t.to_bits() as $I).wrapping_sub(MAGIC.to_bits() as $I);
                let r = M::fma(-nf, [<LN2_LO_ $F:upper>], M::fma(-nf, [<LN2_HI_ $F:upper>], x));
                (n, r)
            }

            /// 2^n for n in the normal exponent range.
            #[inline(always)]
            fn [<pow2_ $F>](n: $I) -> $F {
                $F::from_bits((n.wrapping_add($BIAS) as $U) << $MANT)
            }

            #[inline(always)]
            pub fn [<exp_ $F>]<M: Fma<$F>>(x: $F) -> $F {
                // Past these bounds the result is inf / 0 anyway; NaN fails both tests and stays NaN.
                let xc = x.clamp($XLO, $XHI);
                let (n, r) = [<reduce_ $F>]::<M>(xc);
                // 1 + r (1 + r q(r)): two multiply-adds past q.
                let p = M::fma(r, M::fma(r, horner::<$F, M>(r, &$XC), 1.0), 1.0);
                // (multiplied, not added to p's exponent field, which would turn a NaN finite)
                let h = n >> 1;
                p * [<pow2_ $F>](h) * [<pow2_ $F>](n - h)
            }

            /// e^x - 1 for finite x in [-2 cap, 2 cap] (callers clamp).
            #[inline(always)]
            fn [<expm1_ $F>]<M: Fma<$F>>(x: $F) -> $F {
                let (n, r) = [<reduce_ $F>]::<M>(x);
                // e^r - 1 = r + r^2 q(r) for |r| <= ~0.35
                let q = M::fma(r * r, horner::<$F, M>(r, &$EC), r);
                let s = [<pow2_ $F>](n);
                M::fma(s, q, s - 1.0)
            }

            #[inline(always)]
            pub fn [<tanh_ $F>]<M: Fma<$F>>(x: $F) -> $F {
                let a = x.abs();
                // tanh(a) rounds to 1 below the cap; NaN fails the test and stays NaN.
                let a = if a > $CAP { $CAP } else { a };
                let e = [<expm1_ $F>]::<M>(a + a);
                (e / (e + 2.0)).copysign(x)
            }

            #[inline(always)]
            pub fn [<ln_ $F>]<M: Fma<$F>>(x: $F) -> $F {
                // ln m = 2s + s z (2/3 + z (2/5 + ...)), z = s^2, |s| <= 0.1716.
                let sub = x < $F::MIN_POSITIVE;
                let xs = x * if sub { (1u64 << $MANT) as $F } else { 1.0 };
                let ix = xs.to_bits() as $I;
                let k = ix.wrapping_sub($SH) >> $MANT;
                let m = $F::from_bits(ix.wrapping_sub(k << $MANT) as $U);
                let kf = (k - if sub { $MANT } else { 0 }) as $F;
                let f = m - 1.0;
                let s = f / (2.0 + f);
                let z = s * s;
                let lnm = M::fma(s * z, horner::<$F, M>(z, &$LC), s + s);
                // k LN2_HI is exact.
                let y = M::fma(kf, [<LN2_HI_ $F:upper>], M::fma(kf, [<LN2_LO_ $F:upper>], lnm));
                // 0 < x < inf (subnormals included) in one unsigned comparison of the bits.
                let finite_positive = (x.to_bits().wrapping_sub(1)) < $F::INFINITY.to_bits() - 1;
                // Specials: ln 0 = -inf, ln x<0 = NaN (and NaN stays NaN), ln inf = inf.
                if finite_positive {
                    y
                } else if x == 0.0 {
                    $F::NEG_INFINITY
                } else if x > 0.0 {
                    $F::INFINITY
                } else {
                    $F::NAN
                }
            }

            vmath!(@impl $F: exp, ln, tanh, sigmoid);
        }
    };
}

// n has at most 8 bits; tanh(a) rounds to 1 from a ~ 9.01.
vmath!(f32, i32, u32, mantissa 23, bias 127,
    ln2 [0x3f31_7000, 0x3805_fdf4], // 0.693115234375, ln2 - that = 3.1946183e-5
    exp_clamp [-104.0, 89.0], tanh_cap 10.0,
    // minimax (scripts/vmath_fit.py): e^r - 1 - r - r^2 q(r) within 1.4e-8 (exp) and 4.3e-10
    // (expm1) relative
    exp [0.5, f32::from_bits(0x3e2a_aa5c), f32::from_bits(0x3d2a_aade), f32::from_bits(0x3c09_116c),
        f32::from_bits(0x3ab6_2967)],
    expm1 [0.5, f32::from_bits(0x3e2a_aaaa), f32::from_bits(0x3d2a_aa7c), f32::from_bits(0x3c08_896e),
        f32::from_bits(0x3ab6_9d2a), f32::from_bits(0x394f_3376)],
    ln [2.0 / 3.0, 2.0 / 5.0, 2.0 / 7.0, 2.0 / 9.0],
    sqrt_half_bits 0x3f35_04f3);

/// 1/k!, k = 2..13: e^r - 1 - r - r^2 q(r) for |r| <= ln2/2 below 0.1 ulp.
const TAYLOR_F64: [f64; 12] = [
    1.0 / 2.0,
    1.0 / 6.0,
    1.0 / 24.0,
    1.0 / 120.0,
    1.0 / 720.0,
    1.0 / 5040.0,
    1.0 / 40320.0,
    1.0 / 362880.0,
    1.0 / 3628800.0,
    1.0 / 39916800.0,
    1.0 / 479001600.0,
    1.0 / 6227020800.0,
];

// n has at most 11 bits; tanh(a) rounds to 1 from a ~ 19.06.
vmath!(f64, i64, u64, mantissa 52, bias 1023,
    ln2 [0x3fe6_2e42_fee0_0000, 0x3dea_39ef_3579_3c76], // 0.6931471803691238, 1.9082149292705877e-10
    exp_clamp [-746.0, 710.0], tanh_cap 20.0,
    exp TAYLOR_F64, expm1 TAYLOR_F64,
    ln [2.0 / 3.0, 2.0 / 5.0, 2.0 / 7.0, 2.0 / 9.0, 2.0 / 11.0, 2.0 / 13.0, 2.0 / 15.0, 2.0 / 17.0,
        2.0 / 19.0, 2.0 / 21.0],
    sqrt_half_bits 0x3fe6_a09e_667f_3bcd);

/// e = exp(-|x|) never overflows; for x < 0, sigmoid = e / (1 + e) (reaches the subnormals
/// instead of flushing to 0 where exp(-x) would overflow).
#[inline(always)]
fn sigmoid_f32<M: Mode>(x: f32) -> f32 {
    // One f32 division, the numerator selected: exp's error (scaled down by 1 / (1 + e))
    // plus the two roundings stay within 2 ulp (checked over every f32 in the tests).
    let e = exp_f32::<M>(-x.abs());
    let num = if x < 0.0 { e } else { 1.0 };
    num / (1.0 + e)
}

#[inline(always)]
fn sigmoid_f64<M: Mode>(x: f64) -> f64 {
    let e = exp_f64::<M>(-x.abs());
    let s = 1.0 / (1.0 + e);
    if x < 0.0 { e * s } else { s }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The accuracy checks of one float type (`ulps_$F`, `inputs_$F`, `check_$F`): `$I` its bits
    /// as a signed integer, `strided` inputs through its bit patterns, `edges` its own edge cases
    /// (overflow and underflow bounds) beyond the common ones.
    macro_rules! probe {
        ($F:ident, $I:ident, strided $strided:expr, edges [$($edge:expr),* $(,)?]) => { pastey::paste! {
            /// Distance in units in the last place (0 when both NaN or equal).
            fn [<ulps_ $F>](a: $F, b: $F) -> u64 {
                if a.is_nan() && b.is_nan() || a == b {
                    return 0;
                }
                if a.is_nan() || b.is_nan() || a.is_infinite() || b.is_infinite() {
                    return u64::MAX;
                }
                let key = |x: $F| {
                    let i = x.to_bits() as $I;
                    (if i < 0 { $I::MIN - i } else { i }) as i128
                };
                (key(a) - key(b)).unsigned_abs() as u64
            }

            /// A stride through the bit patterns (both signs, all exponents) plus a dense
            /// uniform sweep of [lo, hi] and the edge cases.
            fn [<inputs_ $F>](lo: $F, hi: $F) -> Vec<$F> {
                let mut v: Vec<$F> = $strided.collect();
                let n = 300_000;
                v.extend((0..=n).map(|i| lo + (hi - lo) * (i as $F / n as $F)));
                v.extend([
                    0.0,
                    -0.0,
                    $F::INFINITY,
                    $F::NEG_INFINITY,
                    $F::NAN,
                    $F::MIN_POSITIVE,
                    $F::from_bits(1),
                    $F::MAX,
                    $F::MIN,
                    1.0,
                    -1.0,
                    $($edge),*
                ]);
                v
            }

            /// `f` within `max_ulps` of `reference` (computed in f64, rounded to `$F`) on `inputs`.
            fn [<check_ $F>](name: &str, f: fn($F) -> $F, reference: fn(f64) -> f64, lo: $F, hi: $F, max_ulps: u64) {
                let want = |x: $F| reference(x as f64) as $F;
                let mut worst = (0u64, 0.0);
                for x in [<inputs_ $F>](lo, hi) {
                    let d = [<ulps_ $F>](f(x), want(x));
                    if d > worst.0 {
                        worst = (d, x);
                    }
                }
                assert!(
                    worst.0 <= max_ulps,
                    "{name}: {} ulps at x = {:e} (got {:e}, want {:e})",
                    worst.0,
                    worst.1,
                    f(worst.1),
                    want(worst.1)
                );
            }
        }};
    }

    probe!(f32, i32, strided (0..=u32::MAX / 9973).map(|i| f32::from_bits(i.wrapping_mul(9973))),
        edges [-f32::MIN_POSITIVE, f32::from_bits(0x8000_0001), 88.72283, 88.72284, -87.33654, -103.97208,
            -103.9721, -104.0, 89.0]);
    probe!(f64, i64, strided (0..2_000_000u64).map(|i| f64::from_bits(i.wrapping_mul(0x0000_8a5c_d789_635d))),
        edges [709.782712893384, 709.7827128933841, -708.3964185322641, -745.1332191019411, -745.1332191019412,
            -746.0, 710.0]);

    /// Every check runs for both evaluations of the multiply-adds (`Fused` is libm's `fma` in
    /// a copy without the instruction: correctly rounded, so the same bits as the FMA).
    fn exp_checks<M: Mode>() {
        check_f32("exp f32", exp_f32::<M>, f64::exp, -110.0, 90.0, 2);
        check_f64("exp f64", exp_f64::<M>, f64::exp, -750.0, 712.0, 3);
        assert_eq!(exp_f32::<M>(0.0), 1.0);
        assert_eq!(exp_f64::<M>(0.0), 1.0);
        assert_eq!(exp_f32::<M>(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp_f64::<M>(f64::INFINITY), f64::INFINITY);
        assert!(exp_f32::<M>(f32::NAN).is_nan() && exp_f64::<M>(f64::NAN).is_nan());
        assert_eq!(exp_f32::<M>(-103.0), (-103.0f64).exp() as f32); // subnormal result
    }

    fn ln_checks<M: Mode>() {
        check_f32("ln f32", ln_f32::<M>, f64::ln, 0.0, 100.0, 2);
        check_f64("ln f64", ln_f64::<M>, f64::ln, 0.0, 100.0, 3);
        check_f32("ln f32 near 1", ln_f32::<M>, f64::ln, 0.5, 2.0, 2);
        check_f64("ln f64 near 1", ln_f64::<M>, f64::ln, 0.5, 2.0, 3);
        assert_eq!(ln_f32::<M>(1.0), 0.0);
        assert_eq!(ln_f32::<M>(0.0), f32::NEG_INFINITY);
        assert_eq!(ln_f64::<M>(-0.0), f64::NEG_INFINITY);
        assert!(
            ln_f32::<M>(-1.0).is_nan() && ln_f64::<M>(f64::NEG_INFINITY).is_nan() && ln_f64::<M>(f64::NAN).is_nan()
        );
        assert_eq!(ln_f64::<M>(f64::INFINITY), f64::INFINITY);
    }

    fn tanh_sigmoid_checks<M: Mode>() {
        check_f32("tanh f32", tanh_f32::<M>, f64::tanh, -12.0, 12.0, 2);
        check_f64("tanh f64", tanh_f64::<M>, f64::tanh, -25.0, 25.0, 3);
        let sig = |x: f64| if x < 0.0 { x.exp() / (1.0 + x.exp()) } else { 1.0 / (1.0 + (-x).exp()) };
        check_f32("sigmoid f32", VMath::vsigmoid::<M>, sig, -110.0, 110.0, 2);
        check_f64("sigmoid f64", VMath::vsigmoid::<M>, sig, -750.0, 750.0, 3);
        assert_eq!(tanh_f32::<M>(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(tanh_f64::<M>(f64::NEG_INFINITY), -1.0);
        assert!(tanh_f32::<M>(f32::NAN).is_nan() && 1.0f64.vsigmoid::<M>() > 0.73);
    }

    #[test]
    #[cfg_attr(miri, ignore = "millions of inputs checked in ulps against libm, which Miri models with extra error")]
    fn exp_accuracy() {
        exp_checks::<Fused>();
        exp_checks::<Unfused>();
    }

    #[test]
    #[cfg_attr(miri, ignore = "millions of inputs checked in ulps against libm, which Miri models with extra error")]
    fn ln_accuracy() {
        ln_checks::<Fused>();
        ln_checks::<Unfused>();
    }

    #[test]
    #[cfg_attr(miri, ignore = "millions of inputs checked in ulps against libm, which Miri models with extra error")]
    fn tanh_sigmoid_accuracy() {
        tanh_sigmoid_checks::<Fused>();
        tanh_sigmoid_checks::<Unfused>();
    }

    /// The AVX-512 slice kernel of `f` as a function of one float (the masked tail), when this
    /// CPU runs it.
    fn sliced(f: Sliced) -> Option<impl Fn(f32) -> f32> {
        let b = block::<f32>(f)?;
        Some(move |x: f32| {
            let mut y = 0.0;
            // SAFETY: one float each way; block only hands out kernels the CPU can run.
            unsafe { b(&x, &mut y, 1) };
            y
        })
    }

    #[test]
    #[cfg_attr(miri, ignore = "no AVX-512 kernels under Miri")]
    fn sliced_accuracy() {
        // (fn items: check_f32 takes function pointers)
        fn tanh(x: f32) -> f32 {
            sliced(Sliced::Tanh).unwrap()(x)
        }
        fn ln(x: f32) -> f32 {
            sliced(Sliced::Ln).unwrap()(x)
        }
        if block::<f32>(Sliced::Tanh).is_none() {
            return; // not an AVX-512 run
        }
        assert!(block::<f64>(Sliced::Tanh).is_none() && block::<i32>(Sliced::Ln).is_none());
        fn ln64(x: f64) -> f64 {
            let b = block::<f64>(Sliced::Ln).unwrap();
            let mut y = 0.0;
            // SAFETY: one double each way; block only hands out kernels the CPU can run.
            unsafe { b(&x, &mut y, 1) };
            y
        }
        check_f64("ln f64 sliced", ln64, f64::ln, 0.0, 100.0, 2);
        check_f64("ln f64 sliced near 1", ln64, f64::ln, 0.5, 2.0, 2);
        assert!(ln64(0.0) == f64::NEG_INFINITY && ln64(-0.0) == f64::NEG_INFINITY && ln64(1.0) == 0.0);
        assert!(ln64(f64::INFINITY) == f64::INFINITY && ln64(-1.0).is_nan() && ln64(f64::NAN).is_nan());
        assert_eq!(ln64(f64::from_bits(1)), (f64::from_bits(1)).ln());
        check_f32("tanh f32 sliced", tanh, f64::tanh, -12.0, 12.0, 1);
        check_f32("ln f32 sliced", ln, f64::ln, 0.0, 100.0, 1);
        check_f32("ln f32 sliced near 1", ln, f64::ln, 0.5, 2.0, 1);
        for (x, want) in
            [(0.0, f32::NEG_INFINITY), (-0.0, f32::NEG_INFINITY), (f32::INFINITY, f32::INFINITY), (1.0, 0.0)]
        {
            assert_eq!(ln(x), want, "ln {x}");
        }
        for x in [-1.0, -f32::from_bits(1), f32::NEG_INFINITY, f32::NAN] {
            assert!(ln(x).is_nan(), "ln {x}");
        }
        assert!(tanh(f32::NAN).is_nan() && tanh(f32::INFINITY) == 1.0 && tanh(-10.0) == -1.0);
        assert_eq!(tanh(-0.0).to_bits(), (-0.0f32).to_bits());
        // Whole vectors and masked tails give the same results, in place too.
        let b = block::<f32>(Sliced::Tanh).unwrap();
        let x: Vec<f32> = (0..77).map(|i| i as f32 * 0.13 - 5.0).collect();
        for n in [0, 1, 15, 16, 17, 77] {
            let mut y = vec![7.0f32; 78];
            let mut z = x.clone();
            // SAFETY: x and y hold at least n floats; z (in place) holds 77.
            unsafe {
                b(x.as_ptr(), y.as_mut_ptr(), n);
                b(z.as_ptr(), z.as_mut_ptr(), n);
            }
            for i in 0..n {
                assert_eq!(y[i], tanh(x[i]), "n {n} i {i}");
                assert_eq!(z[i], y[i]);
            }
            assert_eq!(y[n], 7.0, "n {n}: wrote past the end");
        }
    }

    /// Every f32 of each function's range (both signs up to where the result saturates; every
    /// positive float for ln), both evaluations and the AVX-512 slice kernels where the CPU
    /// runs them, on all cores: about 2^31 inputs per function and evaluation, minutes in a
    /// release build: `cargo test --release --lib every_f32 -- --ignored --nocapture` (prints
    /// each worst case).
    #[test]
    #[ignore = "minutes: every f32 input; run in release"]
    fn every_f32() {
        /// `f` over slices: the slice kernel itself, or a function of one float in a loop.
        type Batch<'a> = &'a (dyn Fn(&[f32], &mut [f32]) + Sync);
        fn sweep(name: &str, f: Batch, reference: fn(f64) -> f64, lo: f32, hi: f32) {
            // through the bit patterns in order: key is monotonic in the value
            let key = |x: f32| {
                let i = x.to_bits() as i32;
                (if i < 0 { i32::MIN - i } else { i }) as i64
            };
            let of = |k: i64| {
                let k = k as i32;
                f32::from_bits(if k < 0 { (i32::MIN - k) as u32 } else { k as u32 })
            };
            let (a, b) = (key(lo), key(hi));
            let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as i64;
            let worst = std::thread::scope(|s| {
                let parts: Vec<_> = (0..threads)
                    .map(|t| {
                        s.spawn(move || {
                            let mut worst = (0u64, 0.0f32);
                            let (mut x, mut y) = (Vec::with_capacity(4096), vec![0.0f32; 4096]);
                            let (start, end) = (a + (b - a + 1) * t / threads, a + (b - a + 1) * (t + 1) / threads);
                            for k0 in (start..end).step_by(4096) {
                                x.clear();
                                x.extend((k0..end.min(k0 + 4096)).map(of));
                                f(&x, &mut y[..x.len()]);
                                for (&x, &y) in x.iter().zip(&y) {
                                    let d = ulps_f32(y, reference(x as f64) as f32);
                                    if d > worst.0 {
                                        worst = (d, x);
                                    }
                                }
                            }
                            worst
                        })
                    })
                    .collect();
                parts.into_iter().map(|p| p.join().unwrap()).max_by_key(|w| w.0).unwrap()
            });
            println!("{name}: max {} ulp (at x = {:e})", worst.0, worst.1);
            assert!(worst.0 <= 2, "{name}: {} ulps at x = {:e}", worst.0, worst.1);
        }
        fn one(f: fn(f32) -> f32) -> impl Fn(&[f32], &mut [f32]) + Sync {
            move |x, y| x.iter().zip(y).for_each(|(&x, y)| *y = f(x))
        }
        let sig = |x: f64| if x < 0.0 { x.exp() / (1.0 + x.exp()) } else { 1.0 / (1.0 + (-x).exp()) };
        fn each<M: Mode>(sig: fn(f64) -> f64) {
            sweep("exp", &one(exp_f32::<M>), f64::exp, -105.0, 90.0);
            sweep("ln", &one(ln_f32::<M>), f64::ln, 0.0, f32::INFINITY);
            sweep("tanh", &one(tanh_f32::<M>), f64::tanh, -10.0, 10.0);
            sweep("sigmoid", &one(VMath::vsigmoid::<M>), sig, -105.0, 105.0);
        }
        each::<Fused>(sig);
        each::<Unfused>(sig);
        for (f, name, reference, lo, hi) in [
            (Sliced::Tanh, "tanh sliced", f64::tanh as fn(f64) -> f64, -10.0, 10.0),
            (Sliced::Ln, "ln sliced", f64::ln, 0.0, f32::INFINITY),
        ] {
            if let Some(b) = block::<f32>(f) {
                // SAFETY: x and y have the same length; block only hands out kernels the CPU runs.
                sweep(name, &|x, y| unsafe { b(x.as_ptr(), y.as_mut_ptr(), x.len()) }, reference, lo, hi);
            }
        }
    }
}
