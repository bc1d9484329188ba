//! SIMD vectors for the hand-written kernels (the implicit-GEMM convolutions, the packed GEMM):
//! one trait, `Vector`, over AVX2 + FMA registers (`avx2`), AVX-512 registers (`avx512`) and, in
//! tests, plain arrays
//! (`Lanes`, which run anywhere, Miri included). A kernel is written once, generic over
//! `Vector`, and instantiated inside a `#[target_feature]` function per instruction set.

/// The prefetch with x86 hint `H` (`_MM_HINT_*`) of the line of `p`; nothing elsewhere and under
/// Miri. Any address may be passed: a prefetch never faults.
#[inline(always)]
fn prefetch_hint<const H: i32, T>(p: *const T) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: a prefetch is a hint; it reads nothing the program sees and never faults (SSE is
    // part of x86_64; a CPU without `prefetchw` runs that hint as a no-op).
    unsafe {
        std::arch::x86_64::_mm_prefetch::<H>(p.cast());
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = p;
}

// (the `_MM_HINT_*` values, which only x86's module defines)
const T0: i32 = 3;
const T1: i32 = 2;
const ET0: i32 = 7;
#[cfg(target_arch = "x86_64")]
const _: () = {
    use std::arch::x86_64::{_MM_HINT_ET0, _MM_HINT_T0, _MM_HINT_T1};
    assert!(T0 == _MM_HINT_T0 && T1 == _MM_HINT_T1 && ET0 == _MM_HINT_ET0);
};

/// Asks the CPU to bring the cache line of `p` into L1.
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    prefetch_hint::<T0, T>(p)
}

/// `prefetch` into L2 only (`prefetcht1`): for lines wanted a while from now, which would only
/// crowd L1 (and hold its few line-fill buffers) if fetched all the way.
#[inline(always)]
pub(crate) fn prefetch_l2<T>(p: *const T) {
    prefetch_hint::<T1, T>(p)
}

/// `prefetch` for a line about to be written (`prefetchw`: the line in exclusive state).
#[inline(always)]
pub(crate) fn prefetch_w<T>(p: *const T) {
    prefetch_hint::<ET0, T>(p)
}

/// An element type of a vector: f32, f64.
pub(crate) trait Lane: Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static {
    fn zero() -> Self;
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
}

macro_rules! lane {
    ($($T:ty),*) => {$(
        impl Lane for $T {
            #[inline(always)]
            fn zero() -> Self {
                0.0
            }
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self + o
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self * o
            }
        }
    )*};
}
crate::th_dtypes!(lane; float);

/// One SIMD vector of `E` (or, in tests, a plain array of them: `Lanes`).
pub(crate) trait Vector: Copy {
    type E: Lane;
    const LANES: usize;
    /// # Safety
    /// The CPU has the vector's instruction set (as for every method).
    unsafe fn zero() -> Self;
    /// Loads `LANES` elements from `p` (no alignment needed).
    ///
    /// # Safety
    /// `p..p + LANES` is readable.
    unsafe fn load(p: *const Self::E) -> Self;
    /// `*p` in every lane.
    ///
    /// # Safety
    /// `p` is readable.
    unsafe fn splat(p: *const Self::E) -> Self;
    /// `self + a * b` (fused where the CPU fuses).
    ///
    /// # Safety
    /// As `zero`.
    unsafe fn mul_add(self, a: Self, b: Self) -> Self;
    /// Stores the lanes at `p`.
    ///
    /// # Safety
    /// `p..p + LANES` is writable.
    unsafe fn store(self, p: *mut Self::E);
    /// Loads the first `n` lanes (`n < LANES`) from `p`, zero in the others (which are not
    /// read).
    ///
    /// # Safety
    /// `p..p + n` is readable.
    unsafe fn load_part(p: *const Self::E, n: usize) -> Self;
    /// The lanes summed in lane order.
    ///
    /// # Safety
    /// As `zero`.
    #[inline(always)]
    unsafe fn sum(self) -> Self::E {
        let mut l = [Self::E::zero(); MAX_LANES];
        // SAFETY: the CPU has the instruction set (the caller's contract); LANES <= MAX_LANES.
        unsafe { self.store(l.as_mut_ptr()) };
        l[..Self::LANES].iter().fold(Self::E::zero(), |s, &x| s.add(x))
    }
}

/// The widest vector's lane count.
pub(crate) const MAX_LANES: usize = 16;

/// `N` lanes as a plain array (any CPU, Miri).
#[cfg(test)]
#[derive(Clone, Copy)]
pub(crate) struct Lanes<E, const N: usize>([E; N]);

#[cfg(test)]
impl<E: Lane, const N: usize> Vector for Lanes<E, N> {
    type E = E;
    const LANES: usize = N;
    #[inline(always)]
    unsafe fn zero() -> Self {
        Lanes([E::zero(); N])
    }
    #[inline(always)]
    unsafe fn load(p: *const E) -> Self {
        // SAFETY: the caller guarantees p..p + N is readable.
        Lanes(std::array::from_fn(|l| unsafe { *p.add(l) }))
    }
    #[inline(always)]
    unsafe fn splat(p: *const E) -> Self {
        // SAFETY: the caller guarantees p is readable.
        Lanes([unsafe { *p }; N])
    }
    #[inline(always)]
    unsafe fn mul_add(self, a: Self, b: Self) -> Self {
        Lanes(std::array::from_fn(|l| self.0[l].add(a.0[l].mul(b.0[l]))))
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut E) {
        for (l, v) in self.0.iter().enumerate() {
            // SAFETY: the caller guarantees p..p + N is writable.
            unsafe { *p.add(l) = *v };
        }
    }
    #[inline(always)]
    unsafe fn load_part(p: *const E, n: usize) -> Self {
        // SAFETY: the caller guarantees p..p + n is readable.
        Lanes(std::array::from_fn(|l| if l < n { unsafe { *p.add(l) } } else { E::zero() }))
    }
}

/// The vector `$V` over the x86 register type `$R` of `$n` lanes of `$E`, and its `Vector`
/// impl from its intrinsics: `$splat` takes the element, `$part(p, n)` loads the first `n`
/// lanes (zeroing the others). Every method's caller guarantees the register type's
/// instruction set.
#[cfg(target_arch = "x86_64")]
macro_rules! x86_vector {
    ($(#[$doc:meta])* $V:ident($R:ty), $E:ty, $n:expr, $zero:ident, $load:ident, $splat:ident, $fma:ident,
     $store:ident, |$pp:ident, $pn:ident| $part:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy)]
        pub(crate) struct $V($R);

        impl Vector for $V {
            type E = $E;
            const LANES: usize = $n;
            #[inline(always)]
            unsafe fn zero() -> Self {
                // SAFETY: the caller guarantees the instruction set.
                $V(unsafe { $zero() })
            }
            #[inline(always)]
            unsafe fn load(p: *const $E) -> Self {
                // SAFETY: the caller guarantees the instruction set and LANES readable elements.
                $V(unsafe { $load(p) })
            }
            #[inline(always)]
            unsafe fn splat(p: *const $E) -> Self {
                // SAFETY: the caller guarantees the instruction set and a readable p.
                $V(unsafe { $splat(*p) })
            }
            #[inline(always)]
            unsafe fn mul_add(self, a: Self, b: Self) -> Self {
                // SAFETY: the caller guarantees the instruction set.
                $V(unsafe { $fma(a.0, b.0, self.0) })
            }
            #[inline(always)]
            unsafe fn store(self, p: *mut $E) {
                // SAFETY: the caller guarantees the instruction set and LANES writable elements.
                unsafe { $store(p, self.0) }
            }
            #[inline(always)]
            unsafe fn load_part($pp: *const $E, $pn: usize) -> Self {
                // SAFETY: the caller guarantees the instruction set and n readable elements; the
                // masked load reads lanes < n only (masked-off lanes never fault) and zeroes the
                // others.
                $V(unsafe { $part })
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2 {
    use super::Vector;
    use std::arch::x86_64::*;

    /// Lanes `< n` of 8 x 32 bits set.
    #[inline(always)]
    unsafe fn mask32(n: usize) -> __m256i {
        // SAFETY: the caller guarantees AVX2.
        unsafe { _mm256_cmpgt_epi32(_mm256_set1_epi32(n as i32), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)) }
    }
    /// Lanes `< n` of 4 x 64 bits set.
    #[inline(always)]
    unsafe fn mask64(n: usize) -> __m256i {
        // SAFETY: the caller guarantees AVX2.
        unsafe { _mm256_cmpgt_epi64(_mm256_set1_epi64x(n as i64), _mm256_setr_epi64x(0, 1, 2, 3)) }
    }
    x86_vector! {
        /// 8 f32 lanes (AVX2 + FMA).
        F32x8(__m256), f32, 8, _mm256_setzero_ps, _mm256_loadu_ps, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_storeu_ps,
        |p, n| _mm256_maskload_ps(p, mask32(n))
    }
    x86_vector! {
        /// 4 f64 lanes (AVX2 + FMA).
        F64x4(__m256d), f64, 4, _mm256_setzero_pd, _mm256_loadu_pd, _mm256_set1_pd, _mm256_fmadd_pd, _mm256_storeu_pd,
        |p, n| _mm256_maskload_pd(p, mask64(n))
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512 {
    use super::Vector;
    use std::arch::x86_64::*;

    // lanes < n set (n < LANES <= 16: the shift does not overflow)
    x86_vector! {
        /// 16 f32 lanes (AVX-512F).
        F32x16(__m512), f32, 16, _mm512_setzero_ps, _mm512_loadu_ps, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_storeu_ps,
        |p, n| _mm512_maskz_loadu_ps(((1u32 << n) - 1) as __mmask16, p)
    }
    x86_vector! {
        /// 8 f64 lanes (AVX-512F).
        F64x8(__m512d), f64, 8, _mm512_setzero_pd, _mm512_loadu_pd, _mm512_set1_pd, _mm512_fmadd_pd, _mm512_storeu_pd,
        |p, n| _mm512_maskz_loadu_pd(((1u32 << n) - 1) as __mmask8, p)
    }
}
