//! The AVX-512 slice kernels of f32 `tanh` and `ln` and f64 `ln`, in explicit intrinsics: they
//! look coefficients up in tables held in registers (`vpermt2ps` / `vpermt2pd`) and use
//! `vgetmant` / `vgetexp`, which LLVM does not produce from the generic scalar code of `super`.
//! None divides (a 512-bit division takes as long as several multiply-adds). `isa()` hands them out
//! through `super::block` for contiguous runs only; strided runs and the other instruction sets
//! keep the generic functions, whose results differ from these in the last bit (both within
//! the bounds the tests check, these over every f32 in `every_f32`).
//!
//! - `tanh`: |x| (clamped to 9.875, where tanh rounds to 1) falls in one of 31 intervals,
//!   indexed by the exponent and top three mantissa bits of |x| + 3/4: 1/16 wide up to 1/4,
//!   then 1/8, 1/4, 1/2 and 1 wide, each width over twice the last (finest near 0, where the
//!   relative error counts); on each a fitted polynomial of degree 4 in |x| minus the interval's
//!   start; the sign of x put back. Max error 1 ulp.
//! - `ln`: x = 2^k m with m in [3/4, 3/2) (`vgetmantps`, exact, subnormals included; k from
//!   `vgetexpps`); m's top five mantissa bits pick c ~ 1/m from a table, r = m c - 1 (one
//!   multiply-add), ln x = k ln2 + ln(1/c) + log1p(r), log1p(r) = r + r^2 q(r) with q of degree
//!   2 for |r| <= 1/32. The intervals next to 1 have c = 1, so ln x near 1 has no cancellation.
//!   Specials fall out of the instructions: ln 0 = -inf (k = -inf), ln inf = inf, ln x<0 = NaN
//!   (`vgetmantps` gives NaN for negative inputs, not -0). Max error 1 ulp.
//! - f64 `ln`: the same with 16 entries (m's top four mantissa bits), c of 9 bits, -ln c as
//!   two doubles, q of degree 9 for r in [-1/32, 1/16]. Max error 1 ulp against libm over
//!   10^8 random inputs (the unit tests check sampled inputs).
//!
//! The coefficients come from scripts/vmath_fit.py (`--tables`).

use std::arch::x86_64::*;

/// Where tanh(x) rounds to 1 in f32 (from ~9.01); below the end of the last fitted interval.
const TANH_CAP: f32 = 9.875;
/// Added to |x| for the interval index (its intervals start at multiples of their width).
const TANH_OFF: f32 = 0.75;

/// A 16-entry f64 table as two registers.
#[inline(always)]
fn table64(t: &[u64; 16]) -> (__m512d, __m512d) {
    // SAFETY: t holds 16 doubles' bits; unaligned loads (AVX-512F: the kernels' copies have it).
    unsafe { (_mm512_loadu_pd(t.as_ptr() as *const f64), _mm512_loadu_pd(t.as_ptr().add(8) as *const f64)) }
}

/// Entry idx & 15 of `t` in each lane.
#[inline(always)]
fn lookup64(t: (__m512d, __m512d), idx: __m512i) -> __m512d {
    // SAFETY: a register operation (AVX-512F).
    unsafe { _mm512_permutex2var_pd(t.0, idx, t.1) }
}

/// A 32-entry table as two registers.
#[inline(always)]
fn table(t: &[u32; 32]) -> (__m512, __m512) {
    // SAFETY: t holds 32 floats' bits; unaligned loads (AVX-512F: the kernels' copies have it).
    unsafe { (_mm512_loadu_ps(t.as_ptr() as *const f32), _mm512_loadu_ps(t.as_ptr().add(16) as *const f32)) }
}

/// Entry idx & 31 of `t` in each lane.
#[inline(always)]
fn lookup(t: (__m512, __m512), idx: __m512i) -> __m512 {
    // SAFETY: a register operation (AVX-512F).
    unsafe { _mm512_permutex2var_ps(t.0, idx, t.1) }
}

/// A float type's 512-bit vector: its lanes, loads and stores (plain and under a mask of the
/// first `k` lanes).
trait Lanes: Sized {
    type V: Copy;
    const N: usize;
    /// # Safety
    /// `p` valid for the first `k` (<= N) elements.
    unsafe fn load(p: *const Self, k: usize) -> Self::V;
    /// # Safety
    /// `p` valid for the first `k` (<= N) elements.
    unsafe fn store(p: *mut Self, k: usize, v: Self::V);
}

macro_rules! lanes {
    ($F:ty, $V:ty, $N:literal, $M:ty, $load:ident, $mload:ident, $store:ident, $mstore:ident) => {
        impl Lanes for $F {
            type V = $V;
            const N: usize = $N;
            #[inline(always)]
            unsafe fn load(p: *const $F, k: usize) -> $V {
                // SAFETY: caller contract (the masked load touches only the first k lanes).
                unsafe { if k == $N { $load(p) } else { $mload(((1u32 << k) - 1) as $M, p) } }
            }
            #[inline(always)]
            unsafe fn store(p: *mut $F, k: usize, v: $V) {
                // SAFETY: as in load.
                unsafe { if k == $N { $store(p, v) } else { $mstore(p, ((1u32 << k) - 1) as $M, v) } }
            }
        }
    };
}
lanes!(f32, __m512, 16, __mmask16, _mm512_loadu_ps, _mm512_maskz_loadu_ps, _mm512_storeu_ps, _mm512_mask_storeu_ps);
lanes!(f64, __m512d, 8, __mmask8, _mm512_loadu_pd, _mm512_maskz_loadu_pd, _mm512_storeu_pd, _mm512_mask_storeu_pd);

/// `o[i] = f(a[i])` for `i < n`, a vector at a time (two per step: the loop overhead is then
/// small, and the two interleave better), the rest under a mask (the same arithmetic for every
/// element, wherever it falls).
///
/// # Safety
/// `a` and `o` valid for `n` elements (equal or not overlapping); the CPU has AVX-512F.
#[inline(always)]
unsafe fn each<F: Lanes>(a: *const F, o: *mut F, n: usize, f: impl Fn(F::V) -> F::V) {
    let (w, mut i) = (F::N, 0);
    // SAFETY: caller contract: the loads and stores stay below n (i + 2w <= n in the loop, the
    // last ones cover only i..n).
    unsafe {
        while i + 2 * w <= n {
            let (x0, x1) = (F::load(a.add(i), w), F::load(a.add(i + w), w));
            let (y0, y1) = (f(x0), f(x1));
            F::store(o.add(i), w, y0);
            F::store(o.add(i + w), w, y1);
            i += 2 * w;
        }
        while i < n {
            let k = (n - i).min(w);
            F::store(o.add(i), k, f(F::load(a.add(i), k)));
            i += k;
        }
    }
}

/// `o[i] = tanh(a[i])`, i < n.
///
/// # Safety
/// As `each16`; the CPU has AVX-512 F/BW/DQ/VL (`isa()` is `Avx512`).
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,fma")]
pub unsafe fn tanh_f32(a: *const f32, o: *mut f32, n: usize) {
    let [start, c0, c1, c2, c3, c4] = TANH.each_ref().map(table);
    let (cap, off) = (_mm512_set1_ps(TANH_CAP), _mm512_set1_ps(TANH_OFF));
    let sign = _mm512_set1_epi32(i32::MIN);
    // SAFETY: caller contract.
    unsafe {
        each(a, o, n, |x| {
            // (min returns its second operand, |x|, when that is NaN: NaN stays NaN)
            let ax = _mm512_min_ps(cap, _mm512_abs_ps(x));
            // the exponent and top three mantissa bits of |x| + 3/4 (lookup takes the low five,
            // distinct for the intervals up to the cap); |x| + 3/4 may round up to the next
            // interval, whose polynomial holds a little beyond its start
            let idx = _mm512_srli_epi32::<20>(_mm512_castps_si512(_mm512_add_ps(ax, off)));
            let t = _mm512_sub_ps(ax, lookup(start, idx));
            let mut p = lookup(c4, idx);
            for c in [c3, c2, c1, c0] {
                p = _mm512_fmadd_ps(p, t, lookup(c, idx));
            }
            // p >= 0: or in x's sign bit
            _mm512_castsi512_ps(_mm512_ternarylogic_epi32::<0xF8>(_mm512_castps_si512(p), _mm512_castps_si512(x), sign))
        })
    }
}

/// `o[i] = ln(a[i])`, i < n.
///
/// # Safety
/// As `tanh_f32`.
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,fma")]
pub unsafe fn ln_f32(a: *const f32, o: *mut f32, n: usize) {
    let (inv, logc) = (table(&LN_INV), table(&LN_LOGC));
    let [q0, q1, q2] = LN_Q.map(|c| _mm512_set1_ps(f32::from_bits(c)));
    let one = _mm512_set1_ps(1.0);
    let ln2 = _mm512_set1_ps(std::f32::consts::LN_2);
    // SAFETY: caller contract.
    unsafe {
        each(a, o, n, |x| {
            // x = 2^k m, m in [3/4, 3/2) (NaN for x < 0 and NaN; 0 for 0, 1 for inf); getexp
            // is floor(log2 |x|) (-inf for 0), one less than k where m < 1
            let m = _mm512_getmant_ps::<_MM_MANT_NORM_P75_1P5, _MM_MANT_SIGN_NAN>(x);
            let e = _mm512_getexp_ps(x);
            let k = _mm512_mask_add_ps(e, _mm512_cmp_ps_mask::<_CMP_LT_OQ>(m, one), e, one);
            // m's top five mantissa bits: [1, 3/2) in 16 steps, then [3/4, 1) in 16
            let idx = _mm512_srli_epi32::<18>(_mm512_castps_si512(m));
            let r = _mm512_fmsub_ps(m, lookup(inv, idx), one);
            let q = _mm512_fmadd_ps(_mm512_fmadd_ps(q2, r, q1), r, q0);
            let lp = _mm512_fmadd_ps(_mm512_mul_ps(r, r), q, r);
            // ln2's rounding (k ln2 to 2^-25 relative) and two roundings: within 1 ulp
            _mm512_fmadd_ps(k, ln2, _mm512_add_ps(lookup(logc, idx), lp))
        })
    }
}

/// `o[i] = ln(a[i])`, i < n, for f64.
///
/// # Safety
/// As `tanh_f32`.
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,fma")]
pub unsafe fn ln_f64(a: *const f64, o: *mut f64, n: usize) {
    let (inv, logc, logc_lo) = (table64(&LN64_INV), table64(&LN64_LOGC), table64(&LN64_LOGC_LO));
    let q = LN64_Q.map(|c| _mm512_set1_pd(f64::from_bits(c)));
    let one = _mm512_set1_pd(1.0);
    let ln2 = _mm512_set1_pd(std::f64::consts::LN_2);
    // SAFETY: caller contract.
    unsafe {
        each(a, o, n, |x| {
            // as in ln_f32
            let m = _mm512_getmant_pd::<_MM_MANT_NORM_P75_1P5, _MM_MANT_SIGN_NAN>(x);
            let e = _mm512_getexp_pd(x);
            let k = _mm512_mask_add_pd(e, _mm512_cmp_pd_mask::<_CMP_LT_OQ>(m, one), e, one);
            // m's top four mantissa bits: [1, 3/2) in 8 steps, then [3/4, 1) in 8
            let idx = _mm512_srli_epi64::<48>(_mm512_castpd_si512(m));
            let r = _mm512_fmsub_pd(m, lookup64(inv, idx), one);
            let mut p = q[9];
            for &c in q[..9].iter().rev() {
                p = _mm512_fmadd_pd(p, r, c);
            }
            let lp = _mm512_add_pd(_mm512_fmadd_pd(_mm512_mul_pd(r, r), p, r), lookup64(logc_lo, idx));
            _mm512_fmadd_pd(k, ln2, _mm512_add_pd(lookup64(logc, idx), lp))
        })
    }
}

// Generated by scripts/vmath_fit.py --tables (then cargo fmt).

/// `tanh`: per entry, the start of its interval of |x|, then c0.. of its polynomial in |x| - start.
pub(super) const TANH: [[u32; 32]; 6] = [
    [
        0x3fa00000, 0x3fc00000, 0x3fe00000, 0x40000000, 0x40100000, 0x40200000, 0x40300000, 0x40400000, 0x40500000,
        0x40700000, 0x40880000, 0x40980000, 0x40a80000, 0x40b80000, 0x40c80000, 0x40d80000, 0x40e80000, 0x41040000,
        0x41140000, 0x41800000, 0x00000000, 0x3d800000, 0x3e000000, 0x3e400000, 0x3e800000, 0x3ec00000, 0x3f000000,
        0x3f200000, 0x3f400000, 0x3f600000, 0x3f800000, 0x3f900000,
    ],
    [
        0x3f59291e, 0x3f67b7cc, 0x3f70fdfd, 0x3f76ca83, 0x3f7a5feb, 0x3f7c92c1, 0x3f7dea85, 0x3f7ebbe9, 0x3f7f3b3d,
        0x3f7fb78c, 0x3f7fe556, 0x3f7ff631, 0x3f7ffc64, 0x3f7ffeac, 0x3f7fff83, 0x3f7fffd2, 0x3f7fffef, 0x3f7ffffe,
        0x3f800000, 0x3f800000, 0x00000000, 0x3d7faacd, 0x3dfeacc9, 0x3e3dc7fd, 0x3e7acbf5, 0x3eb77a9f, 0x3eec9a9f,
        0x3f0dfa3f, 0x3f22991f, 0x3f343328, 0x3f42f7d6, 0x3f4f2e5b,
    ],
    [
        0x3e8f92d3, 0x3e390b2a, 0x3de915f7, 0x3d90b0a0, 0x3d320841, 0x3cd9d7ec, 0x3c84d3c9, 0x3c21a531, 0x3bc460be,
        0x3b10c11c, 0x3a5545e4, 0x399cf438, 0x38e6fa4b, 0x3829f241, 0x377a18d2, 0x36b80198, 0x360759b9, 0x34936e02,
        0x332875a4, 0x00000000, 0x3f800000, 0x3f7f00ab, 0x3f7c0a92, 0x3f7734f2, 0x3f70a4cc, 0x3f5f1fde, 0x3f4954a4,
        0x3f314261, 0x3f18b9db, 0x3f012805, 0x3ed706e2, 0x3eb0a802,
    ],
    [
        0xbe73b033, 0xbe277fd0, 0xbddb5c1b, 0xbd8b6207, 0xbd2dfc39, 0xbcd6c617, 0xbc83b7a2, 0xbc211741, 0xbbc24dad,
        0xbb0f7114, 0xba545474, 0xb99ebe60, 0xb8e4d5e1, 0xb824e1c8, 0xb780c475, 0xb6b7c8c4, 0xb5ebe9d4, 0xb5908484,
        0xb5d34503, 0x00000000, 0x36c805e3, 0xbd7eb485, 0xbdfaa261, 0xbe375b8b, 0xbe6bb4a8, 0xbe9feb5c, 0xbeba19ed,
        0xbec49b1d, 0xbec20515, 0xbeb5d07b, 0xbea3cf07, 0xbe8efd3d,
    ],
    [
        0x3de0ce1d, 0x3db3fdef, 0x3d7fe2f5, 0x3d2a01c2, 0x3cd9eae5, 0x3c89013b, 0x3c2af807, 0x3bd763df, 0x3b70991e,
        0x3ab1effa, 0x3a0605d8, 0x395ca6de, 0x388b5cbc, 0x37ab75a7, 0x3745bd52, 0x366c421e, 0x3521e073, 0x360cb08e,
        0x36a5f4ee, 0x00000000, 0xbeaaf686, 0xbea80c2c, 0xbea163d7, 0xbe92182c, 0xbe844c62, 0xbe36d4bd, 0xbdbe2632,
        0xbc8f6c46, 0x3d300e46, 0x3da7d7e6, 0x3dd8b16c, 0x3de59110,
    ],
    [
        0xbcaa4fe1, 0xbcd03a9a, 0xbcad5223, 0xbc7649c1, 0xbc22e578, 0xbbd47818, 0xbb8bf096, 0xbb474456, 0xba9fd695,
        0xb9ecab21, 0xb9392e1b, 0xb8bff0f1, 0xb7aba17d, 0xb63519c8, 0xb6cdaf6f, 0xb5ab0de8, 0x32a32162, 0xb5a27275,
        0xb684d4f2, 0x00000000, 0x3c82e97e, 0x3d54d6f7, 0x3de2e367, 0x3db347f1, 0x3e201b15, 0x3e2d5958, 0x3e1c5a6f,
        0x3e021511, 0x3dabf162, 0x3d50e056, 0x3c25674a, 0xbbdffc10,
    ],
];
/// `ln`: per entry, c ~ 1/m.
pub(super) const LN_INV: [u32; 32] = [
    0x3f800000, 0x3f748845, 0x3f6d7136, 0x3f66c92b, 0x3f607b32, 0x3f5a79c4, 0x3f54c42f, 0x3f4f6005, 0x3f4a50b0,
    0x3f456c29, 0x3f40c9d6, 0x3f3c53fa, 0x3f38128c, 0x3f3401a2, 0x3f30315f, 0x3f2c7f10, 0x3fa8f2dd, 0x3fa580cb,
    0x3fa22ea2, 0x3f9f10cc, 0x3f9c144f, 0x3f992154, 0x3f965ad2, 0x3f939b25, 0x3f910409, 0x3f8e73ec, 0x3f8c0cc4,
    0x3f89add9, 0x3f875c67, 0x3f852fff, 0x3f831529, 0x3f800000,
];
/// `ln`: -ln c, rounded.
pub(super) const LN_LOGC: [u32; 32] = [
    0x00000000, 0x3d3bb844, 0x3d9a1e4b, 0x3dd45a0d, 0x3e0689e1, 0x3e224e95, 0x3e3d6c26, 0x3e57b432, 0x3e70ffc2,
    0x3e85089d, 0x3e9131f0, 0x3e9d2e13, 0x3ea8e1d7, 0x3eb4519d, 0x3ebf4846, 0x3eca236a, 0xbe8e1cf8, 0xbe839037,
    0xbe725ed5, 0xbe5e805b, 0xbe4b181b, 0xbe378f76, 0xbe24d4a0, 0xbe11efda, 0xbdff9d87, 0xbddb18a4, 0xbdb8414a,
    0xbd954a21, 0xbd6506bc, 0xbd22b956, 0xbcc2f3aa, 0x00000000,
];
/// f64 `ln`: per entry, c ~ 1/m.
pub(super) const LN64_INV: [u64; 16] = [
    0x3ff0000000000000,
    0x3fed400000000000,
    0x3febb00000000000,
    0x3fea400000000000,
    0x3fe9000000000000,
    0x3fe7d00000000000,
    0x3fe6c00000000000,
    0x3fe5d00000000000,
    0x3ff4e80000000000,
    0x3ff4180000000000,
    0x3ff3500000000000,
    0x3ff2a00000000000,
    0x3ff1f80000000000,
    0x3ff1580000000000,
    0x3ff0c80000000000,
    0x3ff0000000000000,
];
/// f64 `ln`: -ln c, rounded.
pub(super) const LN64_LOGC: [u64; 16] = [
    0x0000000000000000,
    0x3fb700d30aeac0e1,
    0x3fc28753bc11aba5,
    0x3fc95a5adcf7017f,
    0x3fcf991c6cb3b379,
    0x3fd2e9e2bce12286,
    0x3fd5d5bddf595f30,
    0x3fd8873658327ccf,
    0xbfd11e0e2dad9cb7,
    0xbfcd293581b6b3e7,
    0xbfc815c0a14357eb,
    0xbfc371fc201e8f74,
    0xbfbdb5270187d927,
    0xbfb4a50d3aa1b040,
    0xbfa868a83083f6cf,
    0x0000000000000000,
];
/// f64 `ln`: what -ln c's rounding left.
pub(super) const LN64_LOGC_LO: [u64; 16] = [
    0x0000000000000000,
    0xbc272566212cdd05,
    0xbc66394d9fa33311,
    0x3c5142c507fb7a3d,
    0x3c6f665066f980a2,
    0x3c18251a3b83d97a,
    0xbc76541148cbb8a2,
    0xbc5c43eff892d8d0,
    0xbc0dc0cc6917022b,
    0x3c5c04a2aa97ac8e,
    0x3c54be48073a0564,
    0xbc5de6cb62af18a0,
    0xbc5e15ab8607d2ac,
    0xbc2ecf768c1dd57b,
    0x3c2d09a5634943db,
    0x0000000000000000,
];
/// f64 `ln`: q(r) = -1/2 + q1 r + ... + q9 r^9.
pub(super) const LN64_Q: [u64; 10] = [
    0xbfe0000000000000,
    0x3fd555555555555d,
    0xbfd0000000000cca,
    0x3fc9999999988d8a,
    0xbfc5555553b09264,
    0x3fc2492488c56290,
    0xbfc00008c6171281,
    0x3fbc72ede3d314c7,
    0xbfb9808b4e863b47,
    0x3fb447cbbafa4886,
];
/// `ln`: q(r) = -1/2 + q1 r + q2 r^2.
pub(super) const LN_Q: [u32; 3] = [0xbf000000, 0x3eaaafcd, 0xbe7ba890];
