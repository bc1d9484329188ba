//! The AVX-512 slice kernels of f32 `tanh` and `ln`, in explicit intrinsics: they look
//! coefficients up in tables held in registers (`vpermt2ps`, 32 entries) and use `vgetmantps` /
//! `vgetexpps`, which LLVM does not produce from the generic scalar code of `super`. Neither
//! divides (a 512-bit division costs as much as ten multiply-adds here). `isa()` hands them out
//! through `super::block` for contiguous runs only; strided runs and the other instruction sets
//! keep the generic functions, whose results differ from these in the last bit (both within
//! the bounds the tests check, these over every f32 in `every_f32`).
//!
//! - `tanh`: |x| (clamped to 9.875, where tanh rounds to 1) falls in one of 32 intervals, four
//!   per binade from 1/16 up to 16 (the first from 0), indexed by its exponent and top two
//!   mantissa bits; on each a fitted polynomial of degree 5 in |x| minus the interval's start;
//!   the sign of x put back. Max error 1 ulp.
//! - `ln`: x = 2^k m with m in [3/4, 3/2) (`vgetmantps`, exact, subnormals included; k from
//!   `vgetexpps`); m's top five mantissa bits pick c ~ 1/m from a table, r = m c - 1 (one
//!   multiply-add), ln x = k ln2 + ln(1/c) + log1p(r), log1p(r) = r + r^2 q(r) with q of degree
//!   2 for |r| <= 1/32. The intervals next to 1 have c = 1, so ln x near 1 has no cancellation.
//!   Specials fall out of the instructions: ln 0 = -inf (k = -inf), ln inf = inf, ln x<0 = NaN
//!   (`vgetmantps` gives NaN for negative inputs, not -0). Max error 1 ulp.
//!
//! The coefficients come from scripts/vmath_fit.py (`--tables`).

use std::arch::x86_64::*;

/// Where tanh(x) rounds to 1 in f32 (from ~9.01); below the end of the last fitted interval.
const TANH_CAP: f32 = 9.875;
/// The index of tanh's first interval: the bits of 1/16 (biased exponent 123) shifted right by
/// 21, the exponent and the top two mantissa bits.
const TANH_FIRST: i16 = 123 << 2;

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

/// `o[i] = f(a[i])` for `i < n`, 16 lanes at a time, the tail under a mask (the same
/// arithmetic for every element, wherever it falls).
///
/// # Safety
/// `a` and `o` valid for `n` floats (equal or not overlapping); the CPU has AVX-512F.
#[inline(always)]
unsafe fn each16(a: *const f32, o: *mut f32, n: usize, f: impl Fn(__m512) -> __m512) {
    let mut i = 0;
    // SAFETY: caller contract: i + 16 <= n in the loop; the tail's mask covers only i..n.
    unsafe {
        while i + 16 <= n {
            _mm512_storeu_ps(o.add(i), f(_mm512_loadu_ps(a.add(i))));
            i += 16;
        }
        if i < n {
            let m: __mmask16 = (1u32 << (n - i)) as u16 - 1;
            _mm512_mask_storeu_ps(o.add(i), m, f(_mm512_maskz_loadu_ps(m, a.add(i))));
        }
    }
}

/// `o[i] = tanh(a[i])`, i < n.
///
/// # Safety
/// As `each16`; the CPU has AVX-512 F/BW/DQ/VL (`isa()` is `Avx512`).
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,fma")]
pub unsafe fn tanh_f32(a: *const f32, o: *mut f32, n: usize) {
    let [start, c0, c1, c2, c3, c4, c5] = TANH.each_ref().map(table);
    let cap = _mm512_set1_ps(TANH_CAP);
    let first = _mm512_set1_epi16(TANH_FIRST);
    let sign = _mm512_set1_epi32(i32::MIN);
    // SAFETY: caller contract.
    unsafe {
        each16(a, o, n, |x| {
            // (min returns its second operand, |x|, when that is NaN: NaN stays NaN)
            let ax = _mm512_min_ps(cap, _mm512_abs_ps(x));
            // exponent and top two mantissa bits, less the first interval's, saturating at 0
            // (in the low 16 bits; the high ones are 0); at most 31 below the cap
            let idx = _mm512_subs_epu16(_mm512_srli_epi32::<21>(_mm512_castps_si512(ax)), first);
            let t = _mm512_sub_ps(ax, lookup(start, idx));
            let mut p = lookup(c5, idx);
            for c in [c4, c3, c2, c1, c0] {
                p = _mm512_fmadd_ps(p, t, lookup(c, idx));
            }
            // p >= 0: or in x's sign bit
            _mm512_castsi512_ps(_mm512_ternarylogic_epi32::<0xF8>(
                _mm512_castps_si512(p),
                _mm512_castps_si512(x),
                sign,
            ))
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
        each16(a, o, n, |x| {
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

// Generated by scripts/vmath_fit.py (`tanh` intervals and `ln` tables); do not edit by hand.

/// `tanh`: per interval i, its start and the coefficients c0..c5 of the polynomial in |x| - start.
pub(super) const TANH: [[u32; 32]; 7] = [
    [
        0x00000000, 0x3da00000, 0x3dc00000, 0x3de00000, 0x3e000000, 0x3e200000, 0x3e400000, 0x3e600000,
        0x3e800000, 0x3ea00000, 0x3ec00000, 0x3ee00000, 0x3f000000, 0x3f200000, 0x3f400000, 0x3f600000,
        0x3f800000, 0x3fa00000, 0x3fc00000, 0x3fe00000, 0x40000000, 0x40200000, 0x40400000, 0x40600000,
        0x40800000, 0x40a00000, 0x40c00000, 0x40e00000, 0x41000000, 0x41200000, 0x41400000, 0x41600000,
    ],
    [
        0x00000000, 0x3d9facdf, 0x3dbf7081, 0x3ddf1c6c, 0x3dfeacc9, 0x3e1eb5e4, 0x3e3dc7fd, 0x3e5c7e82,
        0x3e7acbf5, 0x3e9afcc5, 0x3eb77a9f, 0x3ed2b94f, 0x3eec9a9f, 0x3f0dfa3f, 0x3f22991f, 0x3f343328,
        0x3f42f7d6, 0x3f59291e, 0x3f67b7cc, 0x3f70fdfd, 0x3f76ca83, 0x3f7c92c1, 0x3f7ebbe9, 0x3f7f8896,
        0x3f7fd40c, 0x3f7ffa0d, 0x3f7fff32, 0x3f7fffe4, 0x3f7ffffc, 0x3f800000, 0x3f800000, 0x3f800000,
    ],
    [
        0x3f800000, 0x3f7e7104, 0x3f7dc395, 0x3f7cf65f, 0x3f7c0adf, 0x3f79d970, 0x3f773428, 0x3f742177,
        0x3f70a4fb, 0x3f688ac6, 0x3f5f1fcb, 0x3f54a392, 0x3f49546b, 0x3f3142ea, 0x3f18ba1c, 0x3f012897,
        0x3ed70663, 0x3e8f9258, 0x3e390a72, 0x3de914be, 0x3d90b104, 0x3cd9d947, 0x3c2198f9, 0x3b6eae22,
        0x3aaf85dd, 0x393d6801, 0x37ca01b4, 0x3672b142, 0x35510db3, 0x00000000, 0x00000000, 0x00000000,
    ],
    [
        0x3300f798, 0xbd94cd04, 0xbdc1684b, 0xbddf134e, 0xbdfd2f69, 0xbe19e1ff, 0xbe340ee7, 0xbe528dc7,
        0xbe6c188b, 0xbe8cd4e9, 0xbe9fd7d6, 0xbeafbef2, 0xbeb9f683, 0xbec4e2d7, 0xbec223cd, 0xbeb61d9f,
        0xbea3b534, 0xbe738a36, 0xbe2767c5, 0xbddb3a08, 0xbd8b741b, 0xbcd6f4b8, 0xbc2009d4, 0xbb6f3c4f,
        0xbaad2d8e, 0xb935c0b2, 0xb7ac3972, 0xb6bd03cf, 0xb5eae35c, 0x00000000, 0x00000000, 0x00000000,
    ],
    [
        0xbeaaab1e, 0xbf9a3d35, 0x3a4da844, 0xbdb0fb57, 0xbe50b047, 0xbec8be35, 0xbf12983b, 0xbe7ea024,
        0xbe7777fa, 0xbe5ca13d, 0xbe3d8ec6, 0xbd9549a5, 0xbdcb6407, 0xbbc148ba, 0x3d432faf, 0x3dc18e38,
        0x3dd21897, 0x3ddd2dc6, 0x3db202be, 0x3d7d5fc5, 0x3d2be54e, 0x3c8b2c0e, 0x3bca85ec, 0x3b23863b,
        0x3a56e3ca, 0x38c7a913, 0x369d39df, 0x3710a523, 0x360c2cac, 0x00000000, 0x00000000, 0x00000000,
    ],
    [
        0x38f45a28, 0x4282432c, 0xc1be0882, 0xc187e8a9, 0xc07e015a, 0x405bc311, 0x41298582, 0xbf4b445a,
        0xbe12a97e, 0x3da9c351, 0x3e93cecf, 0xbf7ebbf6, 0x3e5a04d5, 0x3ce756ce, 0x3d3c0923, 0xbd6671fa,
        0x3cfb5914, 0xbc495fe7, 0xbcaeb511, 0xbc99a703, 0xbc8e45a9, 0xbbfdfb61, 0xbb1c5b9e, 0xbaafda59,
        0xb9a48149, 0xb7cc1a05, 0x36cbe6a7, 0xb70b4b53, 0xb597c3e5, 0x00000000, 0x00000000, 0x00000000,
    ],
    [
        0x3e072f14, 0xc4d21621, 0x44199290, 0x43dbdf3f, 0x4252037f, 0xc22bef1b, 0xc3071024, 0x413f244a,
        0x3ff28785, 0x3f05f7cf, 0xbf43ec3f, 0x40ef89f6, 0xbe450147, 0x3e9696e3, 0x3de077e5, 0x3ea3f839,
        0xbd30961c, 0xbc65eebd, 0xbbc682db, 0xbb5ba81d, 0x3b82717a, 0x3b07ed69, 0x39a8dcbe, 0x39fbc3c0,
        0x386ad220, 0x34a017dc, 0xb678c46f, 0x3653381b, 0x346d4aaa, 0x00000000, 0x00000000, 0x00000000,
    ],
];

/// `ln`: per interval i of the mantissa, 1/c (rounded so that ln c is near a float) ...
pub(super) const LN_INV: [u32; 32] = [
    0x3f800000, 0x3f748845, 0x3f6d7136, 0x3f66c92b, 0x3f607b32, 0x3f5a79c4, 0x3f54c42f, 0x3f4f6005,
    0x3f4a50b0, 0x3f456c29, 0x3f40c9d6, 0x3f3c53fa, 0x3f38128c, 0x3f3401a2, 0x3f30315f, 0x3f2c7f10,
    0x3fa8f2dd, 0x3fa580cb, 0x3fa22ea2, 0x3f9f10cc, 0x3f9c144f, 0x3f992154, 0x3f965ad2, 0x3f939b25,
    0x3f910409, 0x3f8e73ec, 0x3f8c0cc4, 0x3f89add9, 0x3f875c67, 0x3f852fff, 0x3f831529, 0x3f800000,
];
/// `ln`: -ln(LN_INV[i]) rounded.
pub(super) const LN_LOGC: [u32; 32] = [
    0x00000000, 0x3d3bb844, 0x3d9a1e4b, 0x3dd45a0d, 0x3e0689e1, 0x3e224e95, 0x3e3d6c26, 0x3e57b432,
    0x3e70ffc2, 0x3e85089d, 0x3e9131f0, 0x3e9d2e13, 0x3ea8e1d7, 0x3eb4519d, 0x3ebf4846, 0x3eca236a,
    0xbe8e1cf8, 0xbe839037, 0xbe725ed5, 0xbe5e805b, 0xbe4b181b, 0xbe378f76, 0xbe24d4a0, 0xbe11efda,
    0xbdff9d87, 0xbddb18a4, 0xbdb8414a, 0xbd954a21, 0xbd6506bc, 0xbd22b956, 0xbcc2f3aa, 0x00000000,
];
/// `ln`: q of log1p(r) = r + r^2 q(r), lowest first.
pub(super) const LN_Q: [u32; 3] = [0xbf000000, 0x3eaaafce, 0xbe7ba8bd];
