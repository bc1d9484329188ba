//! The device engine of TH's matrix products (`linalg::products` calls it for device
//! operands): batched `C = beta*C + alpha*A@B` on 3-D device views.
//!
//! - Float, Double, Half, BFloat16: one `Gpu::gemm` (cuBLAS's `gemmStridedBatched`; the
//!   emulator's literal column-major reference), the strided views mapped to column-major
//!   operands by `layout` (THC's swap of the operands for row-major outputs, leading-dimension
//!   fix-ups for size-1 dims, a contiguous device copy only where no transposition fits).
//! - Byte, Char, Short, Int, Long: the `th_gemm_<dtype>` kernel of `kernels/blas.cuh`, one
//!   thread per output element on any strides, in the element type's wrapping arithmetic (as
//!   the CPU's `linalg::gemm::int`, so results are bit-equal).
//!
//! addmv (`gemv`), addr (`ger`), addmm and baddbmm are one call each (a vector is an `n x 1` or
//! `1 x n` matrix); addbmm is one call per batch into the same output. `dot` is the device
//! reduction (`ops::reduce::dot`). `raw` holds THC's `THCudaBlas_*` on device pointers, `getr`
//! their batched LU (`getrf`/`getrs`/`getri`). THC's LAPACK on device tensors, staged through
//! the host, is `linalg::lapack::device`.

pub mod getr;
pub mod layout;
pub mod raw;
pub mod reference;

#[cfg(all(test, feature = "cuda-emulator"))]
mod emu_tests;

use super::copy::{contiguous_on, empty_like};
use super::gpu::{GemmCall, LaunchCfg};
use super::launch::{BLOCK, Call, MAX_GRID, device_base};
use super::ops::copy_kernel;
use super::runtime::{self, Device as Dev};
use crate::core::allocator::Device;
use crate::core::dtype::{DType, Format, Prim, Scalar};
use crate::core::error::{Error, Result};
use crate::core::tensor::View;
use crate::linalg::gemm::Gemm;
use layout::Mat;
use std::ffi::c_void;

/// The integer GEMM kernels (`blas.cuh`) of a dtype's module (`kernels::kernels_of`).
pub fn kernels_of(d: DType) -> Vec<String> {
    match d.format() {
        Format::UInt | Format::Int if d != DType::Bool => {
            vec![format!("th_gemm_{}", super::kernels::dtype_suffix(d))]
        }
        _ => vec![],
    }
}

/// `v`'s storage seen with other sizes and strides (a product's operand as a batch of
/// matrices: `[batch, rows, cols]`). The caller keeps it inside the storage.
pub fn as_batch<T: Scalar>(v: &View<T>, sizes: [i64; 3], strides: [i64; 3]) -> View<T> {
    View { storage: v.storage.clone(), offset: v.offset, sizes: sizes.to_vec(), strides: strides.to_vec() }
}

/// A scalar as `GemmCall` and the integer kernel take it.
fn value<T: Scalar>(x: T) -> (f64, i64) {
    match x.to_prim() {
        Prim::F(f) => (f, 0),
        Prim::I(i) => (i as f64, i),
    }
}

/// cuBLAS takes sizes and leading dimensions as `int` (THC checked the same).
fn int(x: i64, what: &str) -> Result<i64> {
    if x > i32::MAX as i64 {
        return Err(Error::size(format!("{what} = {x} exceeds cuBLAS's int range (at most {})", i32::MAX)));
    }
    Ok(x)
}

/// `c[p] = beta*c[p] + alpha*(a[p] @ b[p])` for each batch `p`: `a` is `[B, m, k]`, `b`
/// `[B, k, n]`, `c` `[B, m, n]`, all on one device (a batch stride of 0 in `a` or `b` reuses
/// one matrix). `c`'s elements must be distinct and not overlap `a` or `b` (the caller's
/// `into_output` guarantees it). `beta == 0` does not read `c`; `alpha == 0` or `k == 0` does
/// not read `a`, `b`.
pub fn bmm<T: Gemm>(alpha: T, a: &View<T>, b: &View<T>, beta: T, c: &View<T>) -> Result<()> {
    let Device::Cuda(ordinal) = c.device() else { return Err(Error::internal("cuda::blas::bmm on host memory")) };
    let dev = runtime::device(ordinal)?;
    let (nb, m, n, k) = (c.sizes[0], c.sizes[1], c.sizes[2], a.sizes[2]);
    if nb == 0 || m == 0 || n == 0 {
        return Ok(());
    }
    if k == 0 || alpha.is_zero() {
        // C = beta*C, A and B unread: a pointwise kernel (no layout needed for operands that
        // may be empty or broadcast, and nothing for cuBLAS to read).
        return scale(dev, beta, c);
    }
    if matches!(T::DTYPE.format(), Format::UInt | Format::Int) {
        return int_gemm(dev, alpha, a, b, beta, c);
    }
    let mat = |v: &View<T>| Mat::new(v.sizes[1], v.sizes[2], v.strides[1], v.strides[2]);
    let mp = match layout::map(mat(a), mat(b), mat(c)) {
        Ok(mp) => mp,
        Err(copies) if copies.out => {
            let tmp = empty_like::<T>(dev, &c.sizes)?;
            if !beta.is_zero() {
                copy_kernel(dev, &tmp, c)?;
            }
            bmm(alpha, a, b, beta, &tmp)?;
            return copy_kernel(dev, c, &tmp);
        }
        Err(copies) => {
            let a = if copies.a { contiguous_on(dev, a)? } else { a.clone() };
            let b = if copies.b { contiguous_on(dev, b)? } else { b.clone() };
            return bmm(alpha, &a, &b, beta, c);
        }
    };
    let batch_stride = |v: &View<T>| if nb == 1 { 0 } else { v.strides[0] };
    let (x, y) = if mp.swapped { (b, a) } else { (a, b) };
    let call = GemmCall {
        dtype: T::DTYPE,
        transa: mp.a.trans,
        transb: mp.b.trans,
        m: int(mp.m, "m")?,
        n: int(mp.n, "n")?,
        k: int(mp.k, "k")?,
        alpha: value(alpha).0,
        a: device_base(x)?,
        lda: int(mp.a.ld, "lda")?,
        stride_a: batch_stride(x),
        b: device_base(y)?,
        ldb: int(mp.b.ld, "ldb")?,
        stride_b: batch_stride(y),
        beta: value(beta).0,
        c: device_base(c)?,
        ldc: int(mp.ldc, "ldc")?,
        stride_c: batch_stride(c),
        batch: int(nb, "batch count")?,
    };
    // SAFETY: every address is an operand view checked against its storage on this device
    // (device_base), and the mapping reaches exactly the views' elements; c is distinct from
    // a and b (caller contract).
    unsafe { dev.gpu.gemm(&call, runtime::stream(ordinal)) }
}

/// `c = beta*c` (`beta == 0` writes zeros without reading; 1 leaves `c` alone), as the host's
/// `gemm::scale`.
fn scale<T: Gemm>(dev: &Dev, beta: T, c: &View<T>) -> Result<()> {
    if beta.is_zero() {
        return super::ops::fill(dev, c, T::zero());
    }
    if beta == T::one() {
        return Ok(());
    }
    super::ops::run(dev.ordinal, &Call::new("mul").value(beta), c, &[super::ops::operand(c)?])
}

/// `blas.cuh`'s `THCGemm`: the integer kernel's one parameter (element strides).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct THCGemm {
    pub a: u64,
    pub b: u64,
    pub c: u64,
    pub m: i64,
    pub n: i64,
    pub k: i64,
    pub batch: i64,
    /// Row, column and batch strides of a, b, c.
    pub sa: [i64; 3],
    pub sb: [i64; 3],
    pub sc: [i64; 3],
    /// Integer values (sign-extended for signed dtypes).
    pub alpha: i64,
    pub beta: i64,
}

fn strides3<T: Scalar>(v: &View<T>) -> [i64; 3] {
    [v.strides[1], v.strides[2], v.strides[0]]
}

fn int_gemm<T: Gemm>(dev: &Dev, alpha: T, a: &View<T>, b: &View<T>, beta: T, c: &View<T>) -> Result<()> {
    let mut p = THCGemm {
        a: device_base(a)?,
        b: device_base(b)?,
        c: device_base(c)?,
        m: c.sizes[1],
        n: c.sizes[2],
        k: a.sizes[2],
        batch: c.sizes[0],
        sa: strides3(a),
        sb: strides3(b),
        sc: strides3(c),
        alpha: value(alpha).1,
        beta: value(beta).1,
    };
    let total = (p.batch as u64).saturating_mul(p.m as u64).saturating_mul(p.n as u64);
    let blocks = total.div_ceil(BLOCK as u64).min(MAX_GRID as u64) as u32;
    let cfg = LaunchCfg { grid: [blocks, 1, 1], block: [BLOCK, 1, 1], shared: 0 };
    let kernel = format!("th_gemm_{}", super::kernels::dtype_suffix(T::DTYPE));
    let mut args = [&mut p as *mut THCGemm as *mut c_void];
    // SAFETY: the addresses are the views' element 0 (checked against their storages), the
    // kernel reaches their elements by the views' own strides, and c is distinct from a, b.
    unsafe { dev.gpu.launch(&kernel, &cfg, &mut args, runtime::stream(dev.ordinal)) }
}
