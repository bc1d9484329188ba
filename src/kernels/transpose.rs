//! Square-block transposes through vector shuffles, for the GEMM packing routines and the
//! plan's tiled walk: bits move, no arithmetic touches them.

/// The side of the square blocks `transpose_block` moves for elements of `size` bytes.
const fn side(size: usize) -> usize {
    match size {
        1 => 16,
        2 | 4 => 8,
        8 => 4,
        _ => 0,
    }
}

/// The side of the square blocks `transpose_block` moves for elements of type `T` (16 for
/// 1-byte elements, 8 for 2- and 4-byte ones, 4 for 8-byte ones), or 0 where it has no such
/// block (other sizes, no AVX2).
pub(crate) fn block_lanes<T>() -> usize {
    let avx = cfg!(target_arch = "x86_64") && super::isa() != super::Isa::Scalar;
    if avx { side(size_of::<T>()) } else { 0 }
}

/// Copies the `L x L` block (`L = block_lanes::<T>()`) whose column `j` is the `L` contiguous
/// elements at `src + j*cs` to `dst` transposed: its row `i` is `L` contiguous elements at
/// `dst + i*ld`. The bits move through vector shuffles, no arithmetic touches them.
///
/// # Safety
/// `block_lanes::<T>()` is not 0; the block's elements are readable at `src` and writable at
/// `dst` as described.
#[inline]
pub(crate) unsafe fn transpose_block<T>(src: *const T, cs: isize, dst: *mut T, ld: isize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: forwarded contract: the CPU has AVX2 (block_lanes checked isa()).
    unsafe {
        block_avx2(src, cs, dst, ld)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (src, cs, dst, ld);
        unreachable!("transpose_block called without a block shape");
    }
}

#[cfg(target_arch = "x86_64")]
super::multiversion!(@copy Avx2,
/// `transpose_block` (its contract), with AVX2 on the CPU: the element size selects the block.
#[inline]
fn block_avx2<T>(src: *const T, cs: isize, dst: *mut T, ld: isize) => {
    match size_of::<T>() {
        1 => transpose_16x16_8(src.cast(), cs, dst.cast(), ld),
        2 => transpose_8x8_16(src.cast(), cs, dst.cast(), ld),
        4 => transpose_8x8_32(src.cast(), cs, dst.cast(), ld),
        _ => transpose_4x4_64(src.cast(), cs, dst.cast(), ld),
    }
});

/// Lines to fetch while a region is transposed: `cols` columns of `bytes` bytes each, the
/// first at `at`, the next ones `stride` bytes apart (a prefetch never faults: any address
/// may be given).
#[derive(Clone, Copy)]
pub(crate) struct Upcoming {
    pub at: *const u8,
    pub stride: isize,
    pub cols: usize,
    pub bytes: usize,
}

/// `transpose_block` over a `rows x cols` region, both multiples of `L = block_lanes::<T>()`:
/// column `j` is the `rows` contiguous elements at `src + j*cs`, row `i` of the result the
/// `cols` contiguous elements at `dst + i*ld`. Block column by block column, it also fetches
/// the same-numbered columns of `next` into L2, so that the lines of a next region arrive while
/// this one is moved (into L2 only: they are wanted a whole region later). One call for the region: the loop runs inside the instruction-set copy, with
/// the block kernel inlined.
///
/// # Safety
/// `block_lanes::<T>()` is not 0; the region's elements are readable at `src` and writable at
/// `dst` as described.
#[inline]
pub(crate) unsafe fn transpose_region<T>(
    src: *const T,
    cs: isize,
    dst: *mut T,
    ld: isize,
    rows: usize,
    cols: usize,
    next: Option<Upcoming>,
) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: forwarded contract: the CPU has AVX2 (block_lanes checked isa()).
    unsafe {
        region_avx2(src, cs, dst, ld, rows, cols, next)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (src, cs, dst, ld, rows, cols, next);
        unreachable!("transpose_region called without a block shape");
    }
}

#[cfg(target_arch = "x86_64")]
super::multiversion!(@copy Avx2,
/// `transpose_region` (its contract), with AVX2 on the CPU.
fn region_avx2<T>(src: *const T, cs: isize, dst: *mut T, ld: isize, rows: usize, cols: usize, next: Option<Upcoming>) => {
    let l = side(size_of::<T>());
    let mut j = 0;
    while j < cols {
        if let Some(n) = next {
            for c in j..(j + l).min(n.cols) {
                let at = n.at.wrapping_offset(c as isize * n.stride);
                let mut b = 0;
                while b < n.bytes {
                    super::simd::prefetch_l2(at.wrapping_add(b));
                    b += 64;
                }
            }
        }
        let (s, d) = (src.offset(j as isize * cs), dst.add(j));
        let mut i = 0;
        while i < rows {
            block_avx2(s.add(i), cs, d.offset(i as isize * ld), ld);
            i += l;
        }
        j += l;
    }
});

// The kernels: the L columns of L elements and the L rows of L elements they load and store
// (unaligned) are inside the blocks the caller vouched for.

/// `transpose_block` for `$E` elements, `$n` of them per 16-byte register: `$n` loads, log2
/// `$n` rounds of the perfect shuffle, `$n` stores. A round makes register `2i` (`2i + 1`) of
/// the interleaved low (high) halves of registers `i` and `i + $n/2` (unpacks of `$E`-wide
/// lanes). Read the bits of (register, lane) as one index: a round rotates it left by one,
/// so log2 `$n` rounds swap its two halves, which is the transpose.
macro_rules! shuffle_transpose {
    ($(#[$m:meta])* $name:ident, $E:ty, $n:literal, $lo:ident, $hi:ident) => {
        #[cfg(target_arch = "x86_64")]
        super::multiversion!(@copy Avx2,
        $(#[$m])*
        ///
        /// # Safety
        /// As `transpose_block`, with AVX2 on the CPU.
        #[inline]
        fn $name(src: *const $E, cs: isize, dst: *mut $E, ld: isize) => {
            use std::arch::x86_64::*;
            let mut v: [__m128i; $n] = std::array::from_fn(|j| _mm_loadu_si128(src.offset(j as isize * cs).cast()));
            for _ in 0..($n as u32).ilog2() {
                v = std::array::from_fn(|r| {
                    let (a, b) = (v[r / 2], v[r / 2 + $n / 2]);
                    if r % 2 == 0 { $lo(a, b) } else { $hi(a, b) }
                });
            }
            for (i, x) in v.iter().enumerate() {
                _mm_storeu_si128(dst.offset(i as isize * ld).cast(), *x);
            }
        });
    };
}

shuffle_transpose!(
    /// `transpose_block` for 1-byte elements (16 x 16).
    transpose_16x16_8, u8, 16, _mm_unpacklo_epi8, _mm_unpackhi_epi8);
shuffle_transpose!(
    /// `transpose_block` for 2-byte elements (8 x 8).
    transpose_8x8_16, u16, 8, _mm_unpacklo_epi16, _mm_unpackhi_epi16);

#[cfg(target_arch = "x86_64")]
super::multiversion!(@copy Avx2,
/// `transpose_block` for 4-byte elements (as f32 bit patterns): 8 loads, 24 shuffles, 8
/// stores.
///
/// # Safety
/// As `transpose_block`, with AVX2 on the CPU.
#[inline]
fn transpose_8x8_32(src: *const f32, cs: isize, dst: *mut f32, ld: isize) => {
    use std::arch::x86_64::*;
    let col = |j: isize| _mm256_loadu_ps(src.offset(j * cs));
    let (r0, r1, r2, r3, r4, r5, r6, r7) = (col(0), col(1), col(2), col(3), col(4), col(5), col(6), col(7));
    let (t0, t1) = (_mm256_unpacklo_ps(r0, r1), _mm256_unpackhi_ps(r0, r1));
    let (t2, t3) = (_mm256_unpacklo_ps(r2, r3), _mm256_unpackhi_ps(r2, r3));
    let (t4, t5) = (_mm256_unpacklo_ps(r4, r5), _mm256_unpackhi_ps(r4, r5));
    let (t6, t7) = (_mm256_unpacklo_ps(r6, r7), _mm256_unpackhi_ps(r6, r7));
    let (u0, u1) = (_mm256_shuffle_ps::<0x44>(t0, t2), _mm256_shuffle_ps::<0xEE>(t0, t2));
    let (u2, u3) = (_mm256_shuffle_ps::<0x44>(t1, t3), _mm256_shuffle_ps::<0xEE>(t1, t3));
    let (u4, u5) = (_mm256_shuffle_ps::<0x44>(t4, t6), _mm256_shuffle_ps::<0xEE>(t4, t6));
    let (u6, u7) = (_mm256_shuffle_ps::<0x44>(t5, t7), _mm256_shuffle_ps::<0xEE>(t5, t7));
    let row = |i: isize, v: __m256| _mm256_storeu_ps(dst.offset(i * ld), v);
    row(0, _mm256_permute2f128_ps::<0x20>(u0, u4));
    row(1, _mm256_permute2f128_ps::<0x20>(u1, u5));
    row(2, _mm256_permute2f128_ps::<0x20>(u2, u6));
    row(3, _mm256_permute2f128_ps::<0x20>(u3, u7));
    row(4, _mm256_permute2f128_ps::<0x31>(u0, u4));
    row(5, _mm256_permute2f128_ps::<0x31>(u1, u5));
    row(6, _mm256_permute2f128_ps::<0x31>(u2, u6));
    row(7, _mm256_permute2f128_ps::<0x31>(u3, u7));
});

#[cfg(target_arch = "x86_64")]
super::multiversion!(@copy Avx2,
/// `transpose_block` for 8-byte elements (as f64 bit patterns): 4 loads, 8 shuffles, 4
/// stores.
///
/// # Safety
/// As `transpose_block`, with AVX2 on the CPU.
#[inline]
fn transpose_4x4_64(src: *const f64, cs: isize, dst: *mut f64, ld: isize) => {
    use std::arch::x86_64::*;
    let col = |j: isize| _mm256_loadu_pd(src.offset(j * cs));
    let (r0, r1, r2, r3) = (col(0), col(1), col(2), col(3));
    let (t0, t1) = (_mm256_unpacklo_pd(r0, r1), _mm256_unpackhi_pd(r0, r1));
    let (t2, t3) = (_mm256_unpacklo_pd(r2, r3), _mm256_unpackhi_pd(r2, r3));
    let row = |i: isize, v: __m256d| _mm256_storeu_pd(dst.offset(i * ld), v);
    row(0, _mm256_permute2f128_pd::<0x20>(t0, t2));
    row(1, _mm256_permute2f128_pd::<0x20>(t1, t3));
    row(2, _mm256_permute2f128_pd::<0x31>(t0, t2));
    row(3, _mm256_permute2f128_pd::<0x31>(t1, t3));
});

#[cfg(test)]
mod tests {
    use super::*;

    /// Every block shape against the index formula, with column and row strides wider than
    /// the block.
    #[test]
    fn blocks_match_naive() {
        fn check<T: Copy + PartialEq + std::fmt::Debug>(make: impl Fn(usize) -> T) {
            let l = block_lanes::<T>();
            if l == 0 {
                return;
            }
            let (cs, ld) = (l + 3, l + 5);
            let src: Vec<T> = (0..l * cs).map(&make).collect();
            let mut dst = vec![make(0); l * ld];
            // SAFETY: l columns of l elements at stride cs, l rows of l elements at stride ld.
            unsafe { transpose_block(src.as_ptr(), cs as isize, dst.as_mut_ptr(), ld as isize) };
            for i in 0..l {
                for j in 0..l {
                    assert_eq!(dst[i * ld + j], src[j * cs + i], "{} bytes, row {i} col {j}", size_of::<T>());
                }
            }
        }
        check(|i| i as u8);
        check(|i| (i * 257) as u16);
        check(|i| i as f32);
        check(|i| i as f64);
    }
}
