//! Square-block transposes through vector shuffles, for the GEMM packing routines: bits move,
//! no arithmetic touches them.

/// The side of the square blocks `transpose_block` moves for elements of type `T` (8 for 4-byte
/// elements, 4 for 8-byte ones), or 0 where it has no such block (other sizes, no AVX).
pub(crate) fn block_lanes<T>() -> usize {
    let avx = cfg!(target_arch = "x86_64") && super::isa() != super::Isa::Scalar;
    match size_of::<T>() {
        4 if avx => 8,
        8 if avx => 4,
        _ => 0,
    }
}

/// Copies the `L x L` block (`L = block_lanes::<T>()`) whose column `j` is the `L` contiguous
/// elements at `src + j*cs` to `dst` transposed: its row `i` is `L` contiguous elements at
/// `dst + i*ld`. The bits move through AVX shuffles, no arithmetic touches them.
///
/// # Safety
/// `block_lanes::<T>()` is not 0; the block's elements are readable at `src` and writable at
/// `dst` as described.
#[inline]
pub(crate) unsafe fn transpose_block<T>(src: *const T, cs: isize, dst: *mut T, ld: isize) {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: forwarded contract: the CPU has AVX (block_lanes checked isa()), and the
        // element size selects the block's shape.
        unsafe {
            match size_of::<T>() {
                4 => return transpose_8x8_32(src.cast(), cs, dst.cast(), ld),
                8 => return transpose_4x4_64(src.cast(), cs, dst.cast(), ld),
                _ => {}
            }
        }
    }
    let _ = (src, cs, dst, ld);
    unreachable!("transpose_block called without a block shape");
}

// The kernels: the 8 (4) columns of 8 (4) elements and the 8 (4) rows of 8 (4) elements they
// load and store (unaligned) are inside the blocks the caller vouched for.

#[cfg(target_arch = "x86_64")]
super::multiversion!(@copy Avx2,
/// `transpose_block` for 4-byte elements (as f32 bit patterns): 8 loads, 24 shuffles, 8
/// stores.
///
/// # Safety
/// As `transpose_block`, with AVX2 on the CPU.
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
