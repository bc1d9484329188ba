//! cuBLAS's `gemmStridedBatched` contract implemented literally on host memory: the emulator's
//! BLAS, and the reference the layout tests run the mapped calls through. Element `(i, j)` of
//! `op(A)` is `A[i + j*lda]`, or `A[j + i*lda]` when transposed; nothing here knows about
//! row-major tensors, so a wrong mapping gives wrong numbers instead of being papered over.
//!
//! Accumulation: f32 for Float, Half, BFloat16 (cuBLAS's `CUBLAS_COMPUTE_32F`), f64 for
//! Double; `alpha*sum + beta*c` is formed in that type and rounded once to the element type.

use crate::core::dtype::DType;
use crate::core::error::{Code, Error, Result};
use crate::cuda::gpu::GemmCall;
use half::{bf16, f16};

/// A cuBLAS status as a `TH_ERR_CUDA` error.
pub fn status_error(what: &str, status: &str) -> Error {
    Error::new(Code::TH_ERR_CUDA, format!("{what}: cuBLAS error {status}"))
}

/// cuBLAS's argument checks of `gemmStridedBatched` (`CUBLAS_STATUS_INVALID_VALUE`): negative
/// sizes or batch count, a leading dimension below `max(1, rows)` of its stored matrix.
pub fn validate(g: &GemmCall) -> Result<()> {
    let rows_a = if g.transa { g.k } else { g.m };
    let rows_b = if g.transb { g.n } else { g.k };
    let bad = g.m < 0
        || g.n < 0
        || g.k < 0
        || g.batch < 0
        || g.lda < rows_a.max(1)
        || g.ldb < rows_b.max(1)
        || g.ldc < g.m.max(1);
    if bad {
        return Err(status_error("gemmStridedBatched", "CUBLAS_STATUS_INVALID_VALUE"));
    }
    Ok(())
}

/// An element type of the float GEMM and its compute type.
trait Elem: Copy {
    type A: Copy + PartialEq + std::ops::Add<Output = Self::A> + std::ops::Mul<Output = Self::A>;
    const ZERO: Self::A;
    fn get(self) -> Self::A;
    fn put(a: Self::A) -> Self;
    fn scalar(x: f64) -> Self::A;
}

macro_rules! elem {
    ($T:ty, $A:ty, $get:expr, $put:expr) => {
        impl Elem for $T {
            type A = $A;
            const ZERO: $A = 0.0;
            fn get(self) -> $A {
                $get(self)
            }
            fn put(a: $A) -> Self {
                $put(a)
            }
            fn scalar(x: f64) -> $A {
                x as $A
            }
        }
    };
}
elem!(f32, f32, |x| x, |a| a);
elem!(f64, f64, |x| x, |a| a);
elem!(f16, f32, f16::to_f32, f16::from_f32);
elem!(bf16, f32, bf16::to_f32, bf16::from_f32);

/// Runs `g` on host memory (the addresses are host addresses).
///
/// # Safety
/// As `Gpu::gemm`, with host memory.
pub unsafe fn gemm(g: &GemmCall) -> Result<()> {
    validate(g)?;
    // SAFETY: forwarded contract.
    unsafe {
        match g.dtype {
            DType::Float => run::<f32>(g),
            DType::Double => run::<f64>(g),
            DType::Half => run::<f16>(g),
            DType::BFloat16 => run::<bf16>(g),
            _ => return Err(status_error("gemmStridedBatched", "CUBLAS_STATUS_NOT_SUPPORTED")),
        }
    }
    Ok(())
}

/// # Safety
/// As `gemm`.
unsafe fn run<T: Elem>(g: &GemmCall) {
    let (alpha, beta) = (T::scalar(g.alpha), T::scalar(g.beta));
    let reads = alpha != T::ZERO && g.k > 0;
    for p in 0..g.batch as isize {
        let a = (g.a as *const T).wrapping_offset(p * g.stride_a as isize);
        let b = (g.b as *const T).wrapping_offset(p * g.stride_b as isize);
        let c = (g.c as *mut T).wrapping_offset(p * g.stride_c as isize);
        for j in 0..g.n as isize {
            for i in 0..g.m as isize {
                let mut acc = T::ZERO;
                if reads {
                    for l in 0..g.k as isize {
                        let ai = if g.transa { l + i * g.lda as isize } else { i + l * g.lda as isize };
                        let bi = if g.transb { j + l * g.ldb as isize } else { l + j * g.ldb as isize };
                        // SAFETY: (i, l) of op(A) and (l, j) of op(B) are inside the matrices
                        // the caller vouches for.
                        acc = acc + unsafe { (*a.offset(ai)).get() * (*b.offset(bi)).get() };
                    }
                }
                let ci = c.wrapping_offset(i + j * g.ldc as isize);
                // SAFETY: (i, j) of C is inside it (caller contract); beta == 0 does not read it.
                unsafe {
                    let old = if beta == T::ZERO { T::ZERO } else { beta * (*ci).get() };
                    *ci = T::put(alpha * acc + old);
                }
            }
        }
    }
}
