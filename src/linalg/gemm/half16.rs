//! Half, BFloat16: the f32 kernel, one rounding of the result.

use super::float::{float_gemm, try_packed};
use super::*;
use crate::core::limits::try_filled;
use crate::linalg::packed::Source;
use crate::ops::num::Float;
use half::slice::HalfFloatSliceExt;

/// The 16-bit floats, computed through f32 (`Float::to_r`, `Float::from_r`).
pub(super) trait Half16: Float<R = f32> + Send + Sync + Source<f32> {
    /// `dst[j] = src[j].to_r()` (the `half` crate's slice conversion: F16C where the CPU has it).
    fn row_to_f32(src: &[Self], dst: &mut [f32]);
    /// `dst[j] = from_r(src[j])`.
    fn row_of_f32(src: &[f32], dst: &mut [Self]);
}

macro_rules! half16 {
    ($($T:ty),*) => {$(
        impl Half16 for $T {
            fn row_to_f32(src: &[Self], dst: &mut [f32]) {
                src.convert_to_f32_slice(dst)
            }
            fn row_of_f32(src: &[f32], dst: &mut [Self]) {
                dst.convert_from_f32_slice(src)
            }
        }
    )*};
}
crate::th_dtypes!(half16; half);

/// A row-major f32 copy of the `rows x cols` matrix `x`.
///
/// # Safety
/// `x` must be readable for `rows x cols` elements.
unsafe fn to_f32<T: Half16>(x: MatRef<T>, rows: usize, cols: usize) -> Result<Vec<f32>> {
    let mut out = try_filled(rows * cols, 0f32)?;
    let dst = MatMut { ptr: out.as_mut_ptr(), rs: cols as isize, cs: 1 };
    parallel::for_range(rows, rows * cols, |lo, hi| {
        for i in lo..hi {
            // SAFETY: row i of dst (cols elements) is written by this piece alone.
            let drow = unsafe { std::slice::from_raw_parts_mut(dst.at(i, 0), cols) };
            if x.cs == 1 {
                // SAFETY: row i of x is cols contiguous elements (caller contract).
                T::row_to_f32(unsafe { std::slice::from_raw_parts(x.at(i, 0), cols) }, drow);
            } else {
                for (j, d) in drow.iter_mut().enumerate() {
                    // SAFETY: (i, j) is inside x.
                    *d = unsafe { *x.at(i, j) }.to_r();
                }
            }
        }
    });
    Ok(out)
}

/// An f32 copy of the `rows x cols` operand `x`: column-major when `x` is (its columns then
/// convert as contiguous runs), else row-major.
///
/// # Safety
/// `x` must be readable for `rows x cols` elements.
unsafe fn operand_f32<T: Half16>(x: MatRef<T>, rows: usize, cols: usize) -> Result<(Vec<f32>, MatRef<f32>)> {
    let (v, rs, cs) = if x.rs == 1 && x.cs != 1 && cols > 1 {
        // SAFETY: the transpose of x (cols x rows, rows contiguous) covers the same elements.
        (unsafe { to_f32(MatRef { ptr: x.ptr, rs: x.cs, cs: 1 }, cols, rows)? }, 1, rows as isize)
    } else {
        // SAFETY: forwarded contract.
        (unsafe { to_f32(x, rows, cols)? }, cols as isize, 1)
    };
    let m = MatRef { ptr: v.as_ptr(), rs, cs };
    Ok((v, m))
}

/// Half/BFloat16: the f32 kernel, one rounding of the result (the `gemm` crate's own f16 kernel
/// came out several f16 ulps off at k ~ 600, beyond one rounding). The sums go to an f32 copy
/// of `c`; the packed kernel converts the operands as it packs them, faer's path (no AVX2,
/// small shapes) takes f32 copies of them.
///
/// # Safety
/// As [`Gemm::kernel`].
pub(super) unsafe fn via_f32<T: Half16>(p: Product<T>) -> Result<()> {
    let Product { m, n, k, alpha, a, b, beta, c } = p;
    let read = !beta.is_zero();
    // SAFETY: forwarded contract (shapes as documented).
    let mut c32 = if read { unsafe { to_f32(c.as_ref(), m, n)? } } else { try_filled(m * n, 0f32)? };
    let cm = MatMut { ptr: c32.as_mut_ptr(), rs: n as isize, cs: 1 };
    let (alpha, beta) = (alpha.to_r(), beta.to_r());
    // SAFETY: as above; c32 is distinct from the operands.
    if !unsafe { try_packed(Product { m, n, k, alpha, a, b, beta, c: cm }) } {
        // SAFETY: as above.
        let ((_a32, a), (_b32, b)) = unsafe { (operand_f32(a, m, k)?, operand_f32(b, k, n)?) };
        // SAFETY: the three f32 buffers hold exactly these shapes at these strides and are
        // distinct.
        unsafe { float_gemm(Product { m, n, k, alpha, a, b, beta, c: cm })? };
    }
    let src = cm.as_ref();
    parallel::for_range(m, m * n, |lo, hi| {
        for i in lo..hi {
            // SAFETY: row i of the row-major f32 result (n elements).
            let srow = unsafe { std::slice::from_raw_parts(src.at(i, 0), n) };
            if c.cs == 1 {
                // SAFETY: row i of c is n contiguous elements, written by this piece alone.
                T::row_of_f32(srow, unsafe { std::slice::from_raw_parts_mut(c.at(i, 0), n) });
            } else {
                for (j, &v) in srow.iter().enumerate() {
                    // SAFETY: (i, j) is inside c; rows are split between threads.
                    unsafe { *c.at(i, j) = T::from_r(v) };
                }
            }
        }
    });
    Ok(())
}
