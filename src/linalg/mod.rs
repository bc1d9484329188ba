//! Linear algebra: the one GEMM path (`gemm`), TH's matrix products over tensors (`products`)
//! and the raw-pointer `THBlas_` / `THVector_` kernels (`blas`); LAPACK-level factorizations
//! on `faer` (`lapack`).
//!
//! Every product (addmm, addmv, addr, addbmm, baddbmm, THBlas gemm/gemv/ger) ends in
//! [`gemm::gemm`]: Float and Double run on the packed AVX2 kernel (`packed`) or, on other CPUs
//! and for small shapes, on `faer`'s matmul (x86 assembly kernels, AVX2 or AVX-512 picked at run
//! time), threads from the library's pool; Half and BFloat16 convert to f32 and run the f32
//! path; the integer types run a blocked kernel with C's wrapping arithmetic. Bool has no products
//! (TH has none).

pub mod blas;
pub mod gemm;
pub mod lapack;
mod packed;
pub mod products;
