//! Elementary functions written so that LLVM vectorizes them inside the kernels' loops: no
//! calls, no data-dependent branches (every special case is a select), integer tricks instead
//! of conversions. Compiled under the kernels' `#[target_feature]` copies they become AVX2 /
//! AVX-512 code; the plain copy is ordinary SSE2.
//!
//! Accuracy (checked by the tests below against the C library in f64 over wide ranges):
//! f32 within 2 ulp, f64 within 3 ulp of the correctly rounded result; inf, NaN, signed zero,
//! overflow to inf and underflow through the subnormals as the C library does.
//!
//! - `exp`: x = n ln2 + r (Cody-Waite, ln2 split in two), |r| <= ln2/2, e^r by its Taylor
//!   polynomial (degree 7 for f32, 13 for f64), times 2^n applied as two factors 2^(n/2) so
//!   that results down in the subnormals round once.
//! - `expm1` (finite inputs up to ~44, for `tanh`): the same reduction; e^r - 1 without its
//!   leading 1, so small arguments keep full relative accuracy.
//! - `ln`: x = 2^k m with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(s), s = (m-1)/(m+1), an odd
//!   series in s; subnormal inputs are scaled first.
//! - `tanh`: expm1(2|x|) / (expm1(2|x|) + 2) with the sign of x; |x| clamped where tanh is 1.
//! - `sigmoid`: 1 / (1 + exp(-|x|)), times exp(-|x|) for x < 0.

/// Functions the float kernels compute in their own precision.
pub trait VMath: Copy {
    fn vexp(self) -> Self;
    fn vln(self) -> Self;
    fn vtanh(self) -> Self;
    fn vsigmoid(self) -> Self;
}

// ln 2 split for exact n*LN2_HI (n has at most 8 bits for f32, 11 for f64).
const LN2_HI_F32: f32 = f32::from_bits(0x3f31_7000); // 0.693115234375
const LN2_LO_F32: f32 = f32::from_bits(0x3805_fdf4); // ln2 - LN2_HI_F32 = 3.1946183e-5
const LN2_HI_F64: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000); // 0.6931471803691238
const LN2_LO_F64: f64 = f64::from_bits(0x3dea_39ef_3579_3c76); // ln2 - LN2_HI_F64 = 1.9082149292705877e-10

/// `(n, r)` with x = n ln2 + r: n = round(x / ln2) as an integer, from the bits of the
/// magic-number rounding (exact for |x / ln2| < 2^22).
#[inline(always)]
fn reduce_f32(x: f32) -> (i32, f32, f32) {
    const MAGIC: f32 = 12_582_912.0; // 1.5 * 2^23
    let t = x * std::f32::consts::LOG2_E + MAGIC;
    let nf = t - MAGIC;
    let n = (t.to_bits() as i32).wrapping_sub(MAGIC.to_bits() as i32);
    let r = (x - nf * LN2_HI_F32) - nf * LN2_LO_F32;
    (n, nf, r)
}

#[inline(always)]
fn reduce_f64(x: f64) -> (i64, f64, f64) {
    const MAGIC: f64 = 6_755_399_441_055_744.0; // 1.5 * 2^52
    let t = x * std::f64::consts::LOG2_E + MAGIC;
    let nf = t - MAGIC;
    let n = (t.to_bits() as i64).wrapping_sub(MAGIC.to_bits() as i64);
    let r = (x - nf * LN2_HI_F64) - nf * LN2_LO_F64;
    (n, nf, r)
}

/// 2^n for n in the normal exponent range.
#[inline(always)]
fn pow2_f32(n: i32) -> f32 {
    f32::from_bits((n.wrapping_add(127) as u32) << 23)
}

#[inline(always)]
fn pow2_f64(n: i64) -> f64 {
    f64::from_bits((n.wrapping_add(1023) as u64) << 52)
}

/// e^r - 1 for |r| <= ~0.35 (Taylor to r^7 / r^13: truncation below 0.1 ulp).
#[inline(always)]
fn expm1_poly_f32(r: f32) -> f32 {
    const C: [f32; 6] = [1.0 / 2.0, 1.0 / 6.0, 1.0 / 24.0, 1.0 / 120.0, 1.0 / 720.0, 1.0 / 5040.0];
    let p = C[4] + r * C[5];
    let p = C[3] + r * p;
    let p = C[2] + r * p;
    let p = C[1] + r * p;
    let p = C[0] + r * p;
    r + (r * r) * p
}

#[inline(always)]
fn expm1_poly_f64(r: f64) -> f64 {
    // 1/k! for k = 2..=13
    const C: [f64; 12] = [
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
    let mut p = C[11];
    let mut k = 11;
    while k > 0 {
        k -= 1;
        p = C[k] + r * p;
    }
    r + (r * r) * p
}

#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    // Past these bounds the result is inf / 0 anyway; NaN fails both tests and stays NaN.
    let xc = x.clamp(-104.0, 89.0);
    let (n, _, r) = reduce_f32(xc);
    let p = 1.0 + expm1_poly_f32(r);
    let h = n >> 1;
    p * pow2_f32(h) * pow2_f32(n - h)
}

#[inline(always)]
pub fn exp_f64(x: f64) -> f64 {
    let xc = x.clamp(-746.0, 710.0);
    let (n, _, r) = reduce_f64(xc);
    let p = 1.0 + expm1_poly_f64(r);
    let h = n >> 1;
    p * pow2_f64(h) * pow2_f64(n - h)
}

/// e^x - 1 for finite x in [-20, 20] (callers clamp).
#[inline(always)]
fn expm1_f32(x: f32) -> f32 {
    let (n, _, r) = reduce_f32(x);
    let q = expm1_poly_f32(r);
    let s = pow2_f32(n);
    s * q + (s - 1.0)
}

#[inline(always)]
fn expm1_f64(x: f64) -> f64 {
    let (n, _, r) = reduce_f64(x);
    let q = expm1_poly_f64(r);
    let s = pow2_f64(n);
    s * q + (s - 1.0)
}

#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    let a = x.abs();
    // tanh(a) rounds to 1 from a ~ 9.01; NaN fails the test and stays NaN.
    let a = if a > 10.0 { 10.0 } else { a };
    let e = expm1_f32(a + a);
    (e / (e + 2.0)).copysign(x)
}

#[inline(always)]
pub fn tanh_f64(x: f64) -> f64 {
    // tanh(a) rounds to 1 from a ~ 19.06.
    let a = x.abs();
    let a = if a > 20.0 { 20.0 } else { a };
    let e = expm1_f64(a + a);
    (e / (e + 2.0)).copysign(x)
}

#[inline(always)]
pub fn ln_f32(x: f32) -> f32 {
    // 2/(2k+1) for k = 1..=4: ln m = 2s + s z (2/3 + z (2/5 + ...)), z = s^2, |s| <= 0.1716.
    const C: [f32; 4] = [2.0 / 3.0, 2.0 / 5.0, 2.0 / 7.0, 2.0 / 9.0];
    const SQRT_HALF_BITS: i32 = 0x3f35_04f3;
    let sub = x < f32::MIN_POSITIVE;
    let xs = if sub { x * 8_388_608.0 } else { x }; // 2^23
    let ix = xs.to_bits() as i32;
    let k = ix.wrapping_sub(SQRT_HALF_BITS) >> 23;
    let m = f32::from_bits(ix.wrapping_sub(k << 23) as u32);
    let kf = (k - if sub { 23 } else { 0 }) as f32;
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let p = C[2] + z * C[3];
    let p = C[1] + z * p;
    let p = C[0] + z * p;
    let lnm = (s + s) + (s * z) * p;
    let y = kf * LN2_HI_F32 + (lnm + kf * LN2_LO_F32);
    // Specials: ln 0 = -inf, ln x<0 = NaN (and NaN stays NaN), ln inf = inf.
    if x == 0.0 {
        f32::NEG_INFINITY
    } else if x < 0.0 || x.is_nan() {
        f32::NAN
    } else if x == f32::INFINITY {
        x
    } else {
        y
    }
}

#[inline(always)]
pub fn ln_f64(x: f64) -> f64 {
    // 2/(2k+1) for k = 1..=10.
    const C: [f64; 10] = [
        2.0 / 3.0,
        2.0 / 5.0,
        2.0 / 7.0,
        2.0 / 9.0,
        2.0 / 11.0,
        2.0 / 13.0,
        2.0 / 15.0,
        2.0 / 17.0,
        2.0 / 19.0,
        2.0 / 21.0,
    ];
    const SQRT_HALF_BITS: i64 = 0x3fe6_a09e_667f_3bcd;
    let sub = x < f64::MIN_POSITIVE;
    let xs = if sub { x * 4_503_599_627_370_496.0 } else { x }; // 2^52
    let ix = xs.to_bits() as i64;
    let k = ix.wrapping_sub(SQRT_HALF_BITS) >> 52;
    let m = f64::from_bits(ix.wrapping_sub(k << 52) as u64);
    let kf = (k - if sub { 52 } else { 0 }) as f64;
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let mut p = C[9];
    let mut j = 9;
    while j > 0 {
        j -= 1;
        p = C[j] + z * p;
    }
    let lnm = (s + s) + (s * z) * p;
    let y = kf * LN2_HI_F64 + (lnm + kf * LN2_LO_F64);
    if x == 0.0 {
        f64::NEG_INFINITY
    } else if x < 0.0 || x.is_nan() {
        f64::NAN
    } else if x == f64::INFINITY {
        x
    } else {
        y
    }
}

impl VMath for f32 {
    #[inline(always)]
    fn vexp(self) -> f32 {
        exp_f32(self)
    }
    #[inline(always)]
    fn vln(self) -> f32 {
        ln_f32(self)
    }
    #[inline(always)]
    fn vtanh(self) -> f32 {
        tanh_f32(self)
    }
    #[inline(always)]
    fn vsigmoid(self) -> f32 {
        // e = exp(-|x|) never overflows; for x < 0, sigmoid = e / (1 + e) (reaches the
        // subnormals instead of flushing to 0 where exp(-x) would overflow).
        // The quotient is formed in f64 and rounded once, so only exp's error remains (scaled
        // down by 1 - sigmoid for x < 0): within 2 ulp. In f32 the division and the product
        // added two more roundings (3 ulp seen at x = -1.1010135).
        let e = exp_f32(-self.abs()) as f64;
        let s = if self < 0.0 { e / (1.0 + e) } else { 1.0 / (1.0 + e) };
        s as f32
    }
}

impl VMath for f64 {
    #[inline(always)]
    fn vexp(self) -> f64 {
        exp_f64(self)
    }
    #[inline(always)]
    fn vln(self) -> f64 {
        ln_f64(self)
    }
    #[inline(always)]
    fn vtanh(self) -> f64 {
        tanh_f64(self)
    }
    #[inline(always)]
    fn vsigmoid(self) -> f64 {
        // e = exp(-|x|) never overflows; for x < 0, sigmoid = e / (1 + e) (reaches the
        // subnormals instead of flushing to 0 where exp(-x) would overflow).
        let e = exp_f64(-self.abs());
        let s = 1.0 / (1.0 + e);
        if self < 0.0 { e * s } else { s }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distance in units in the last place between two f32 (0 when both NaN or equal).
    fn ulps32(a: f32, b: f32) -> u64 {
        if a.is_nan() && b.is_nan() || a == b {
            return 0;
        }
        if a.is_nan() || b.is_nan() || a.is_infinite() || b.is_infinite() {
            return u64::MAX;
        }
        let key = |x: f32| {
            let i = x.to_bits() as i32;
            (if i < 0 { i32::MIN - i } else { i }) as i64
        };
        (key(a) - key(b)).unsigned_abs()
    }

    fn ulps64(a: f64, b: f64) -> u64 {
        if a.is_nan() && b.is_nan() || a == b {
            return 0;
        }
        if a.is_nan() || b.is_nan() || a.is_infinite() || b.is_infinite() {
            return u64::MAX;
        }
        let key = |x: f64| {
            let i = x.to_bits() as i64;
            (if i < 0 { i64::MIN - i } else { i }) as i128
        };
        (key(a) - key(b)).unsigned_abs() as u64
    }

    /// f32 inputs: a stride through every bit pattern (both signs, all exponents) plus a dense
    /// uniform sweep of [lo, hi] and the edge cases.
    fn inputs32(lo: f32, hi: f32) -> Vec<f32> {
        let mut v: Vec<f32> = (0..=u32::MAX / 9973).map(|i| f32::from_bits(i.wrapping_mul(9973))).collect();
        let n = 300_000;
        v.extend((0..=n).map(|i| lo + (hi - lo) * (i as f32 / n as f32)));
        v.extend([
            0.0,
            -0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            f32::from_bits(1),
            f32::from_bits(0x8000_0001),
            f32::MAX,
            f32::MIN,
            1.0,
            -1.0,
            88.72283,
            88.72284,
            -87.33654,
            -103.97208,
            -103.9721,
            -104.0,
            89.0,
        ]);
        v
    }

    fn inputs64(lo: f64, hi: f64) -> Vec<f64> {
        let mut v: Vec<f64> =
            (0..2_000_000u64).map(|i| f64::from_bits(i.wrapping_mul(0x0000_8a5c_d789_635d))).collect();
        let n = 300_000;
        v.extend((0..=n).map(|i| lo + (hi - lo) * (i as f64 / n as f64)));
        v.extend([
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
            f64::from_bits(1),
            f64::MAX,
            f64::MIN,
            1.0,
            -1.0,
            709.782712893384,
            709.7827128933841,
            -708.3964185322641,
            -745.1332191019411,
            -745.1332191019412,
            -746.0,
            710.0,
        ]);
        v
    }

    fn check32(name: &str, f: fn(f32) -> f32, reference: fn(f64) -> f64, lo: f32, hi: f32, max_ulps: u64) {
        let mut worst = (0u64, 0f32);
        for x in inputs32(lo, hi) {
            let want = reference(x as f64) as f32;
            let d = ulps32(f(x), want);
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
            reference(worst.1 as f64) as f32
        );
    }

    fn check64(name: &str, f: fn(f64) -> f64, reference: fn(f64) -> f64, lo: f64, hi: f64, max_ulps: u64) {
        let mut worst = (0u64, 0f64);
        for x in inputs64(lo, hi) {
            let d = ulps64(f(x), reference(x));
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
            reference(worst.1)
        );
    }

    #[test]
    #[cfg_attr(miri, ignore = "millions of inputs checked in ulps against libm, which Miri models with extra error")]
    fn exp_accuracy() {
        check32("exp f32", exp_f32, f64::exp, -110.0, 90.0, 2);
        check64("exp f64", exp_f64, f64::exp, -750.0, 712.0, 3);
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f64(0.0), 1.0);
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp_f64(f64::INFINITY), f64::INFINITY);
        assert!(exp_f32(f32::NAN).is_nan() && exp_f64(f64::NAN).is_nan());
        assert_eq!(exp_f32(-103.0), (-103.0f64).exp() as f32); // subnormal result
    }

    #[test]
    #[cfg_attr(miri, ignore = "millions of inputs checked in ulps against libm, which Miri models with extra error")]
    fn ln_accuracy() {
        check32("ln f32", ln_f32, f64::ln, 0.0, 100.0, 2);
        check64("ln f64", ln_f64, f64::ln, 0.0, 100.0, 3);
        check32("ln f32 near 1", ln_f32, f64::ln, 0.5, 2.0, 2);
        check64("ln f64 near 1", ln_f64, f64::ln, 0.5, 2.0, 3);
        assert_eq!(ln_f32(1.0), 0.0);
        assert_eq!(ln_f32(0.0), f32::NEG_INFINITY);
        assert_eq!(ln_f64(-0.0), f64::NEG_INFINITY);
        assert!(ln_f32(-1.0).is_nan() && ln_f64(f64::NEG_INFINITY).is_nan() && ln_f64(f64::NAN).is_nan());
        assert_eq!(ln_f64(f64::INFINITY), f64::INFINITY);
    }

    #[test]
    #[cfg_attr(miri, ignore = "millions of inputs checked in ulps against libm, which Miri models with extra error")]
    fn tanh_sigmoid_accuracy() {
        check32("tanh f32", tanh_f32, f64::tanh, -12.0, 12.0, 2);
        check64("tanh f64", tanh_f64, f64::tanh, -25.0, 25.0, 3);
        let sig = |x: f64| if x < 0.0 { x.exp() / (1.0 + x.exp()) } else { 1.0 / (1.0 + (-x).exp()) };
        check32("sigmoid f32", VMath::vsigmoid, sig, -110.0, 110.0, 2);
        check64("sigmoid f64", VMath::vsigmoid, sig, -750.0, 750.0, 3);
        assert_eq!(tanh_f32(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(tanh_f64(f64::NEG_INFINITY), -1.0);
        assert!(tanh_f32(f32::NAN).is_nan() && 1.0f64.vsigmoid() > 0.73);
    }
}
