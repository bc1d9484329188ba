//! The GEMM convolutions' kernels of `kernels/nn_conv.cuh` as the device backend sees them:
//! their one parameter (`THNNConv`), their names per dtype and their launch. The layers built
//! on them (unfolding, cuBLAS GEMMs, folding) are `nn::conv::device`.

use crate::core::dtype::{DType, Scalar};
use crate::core::error::Result;
use crate::cuda::launch::items;
use crate::cuda::runtime::Device as Dev;

/// `nn_conv.cuh`'s `THNNConv` (field meanings there; dimensions in (t, h, w) order).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct THNNConv {
    pub n: i64,
    pub img: u64,
    pub col: u64,
    pub bias: u64,
    pub nb: i64,
    pub c: i64,
    pub i: [i64; 3],
    pub o: [i64; 3],
    pub k: [i64; 3],
    pub s: [i64; 3],
    pub p: [i64; 3],
    pub d: [i64; 3],
    pub is: [i64; 5],
    pub cs: [i64; 2],
    pub bs: i64,
}

/// The dtypes with these kernels.
pub fn has(d: DType) -> bool {
    matches!(d, DType::Float | DType::Double | DType::Half)
}

/// The kernels of `nn_conv.cuh` whose dtype is `d` (for `kernels::kernels_of`).
pub fn kernel_names(d: DType) -> Vec<String> {
    if !has(d) {
        return vec![];
    }
    let sfx = crate::cuda::kernels::dtype_suffix(d);
    let mut v = Vec::new();
    for op in ["nnIm2col", "nnCol2im"] {
        for w in ["i32", "i64"] {
            v.push(format!("th_{op}_{sfx}_{w}"));
        }
    }
    v
}

/// Launches `th_<op>_<dtype>_<i32|i64>` (`op`: `nnIm2col` or `nnCol2im`) with `p` over `p.n`
/// items; `narrow`: every element offset fits an i32.
///
/// # Safety
/// The addresses and strides in `p` stay inside device memory of `dev` that the kernel may
/// access (the columns or image written, the rest read), and what it writes does not overlap
/// what it reads or itself.
pub unsafe fn launch<T: Scalar>(dev: &Dev, op: &str, mut p: THNNConv, narrow: bool) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { items(dev, op, T::DTYPE, p.n, narrow, &mut p) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn layout_matches_nn_conv_cuh() {
        assert_eq!(size_of::<THNNConv>(), 256);
        assert_eq!((offset_of!(THNNConv, nb), offset_of!(THNNConv, is), offset_of!(THNNConv, bs)), (32, 192, 248));
    }

    #[test]
    fn kernel_names_per_dtype() {
        assert_eq!(kernel_names(DType::Half)[3], "th_nnCol2im_half_i64");
        assert!(kernel_names(DType::Int).is_empty() && kernel_names(DType::BFloat16).is_empty());
    }
}
