//! The convolution kernels of `kernels/conv.cuh` as the device backend sees them: their one
//! parameter (`THCConv`), their names per dtype, and their launch. The convolutions built on
//! them (THC's `THCTensorConv.h`: unfolding plus batched GEMM, and `conv2Dmap`'s direct kernel)
//! are `ops::conv::device`.

use super::runtime::Device as Dev;
use crate::core::dtype::{DType, Scalar};
use crate::core::error::Result;

/// `conv.cuh`'s `THCConv` (field meanings there).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct THCConv {
    pub n: i64,
    pub out: u64,
    pub inp: u64,
    pub ker: u64,
    pub table: u64,
    pub g: [i64; 2],
    pub k: [i64; 2],
    pub o: [i64; 2],
    pub i: [i64; 2],
    pub lim: [i64; 2],
    pub is: [i64; 4],
    pub os: [i64; 3],
    pub ks: [i64; 3],
    pub ts: [i64; 2],
    pub step: [i64; 2],
    pub dil: [i64; 2],
    pub full: i32,
    pub flip: i32,
}

/// The dtypes with convolution kernels.
pub fn has(d: DType) -> bool {
    matches!(d, DType::Float | DType::Double | DType::Half)
}

/// The kernels of `conv.cuh` whose dtype is `d` (for `kernels::kernels_of`).
pub fn kernel_names(d: DType) -> Vec<String> {
    if !has(d) {
        return vec![];
    }
    let sfx = super::kernels::dtype_suffix(d);
    let mut v = Vec::new();
    for op in ["convUnfold", "convMap"] {
        for w in ["i32", "i64"] {
            v.push(format!("th_{op}_{sfx}_{w}"));
        }
    }
    v
}

/// Launches `th_<op>_<dtype>_<i32|i64>` with `p` over `p.n` items; `narrow`: every offset fits
/// an i32.
///
/// # Safety
/// The addresses and strides in `p` stay inside device memory of `dev` that the kernel may
/// access (the columns or output written, the rest read), and the output does not overlap the
/// inputs.
pub unsafe fn launch<T: Scalar>(dev: &Dev, op: &str, mut p: THCConv, narrow: bool) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { super::launch::items(dev, op, T::DTYPE, p.n, narrow, &mut p) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn layout_matches_conv_cuh() {
        assert_eq!(size_of::<THCConv>(), 256);
        let offs = (offset_of!(THCConv, g), offset_of!(THCConv, is), offset_of!(THCConv, os));
        assert_eq!(offs, (40, 120, 152));
        assert_eq!((offset_of!(THCConv, step), offset_of!(THCConv, full)), (216, 248));
    }

    #[test]
    fn kernel_names_per_dtype() {
        assert_eq!(kernel_names(DType::Half)[3], "th_convMap_half_i64");
        assert!(kernel_names(DType::Int).is_empty() && kernel_names(DType::BFloat16).is_empty());
    }
}
