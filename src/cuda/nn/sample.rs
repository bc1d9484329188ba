//! The padding and upsampling kernel (`kernels/nn_sample.cuh`): its parameter (`THCSample`),
//! names per dtype and launch, for `nn::sample`'s device half.

use crate::core::dtype::{DType, Scalar};
use crate::core::error::Result;
use crate::cuda::kernels::dtype_suffix;
use crate::cuda::launch::items;
use crate::cuda::runtime::Device as Dev;

/// `nn_sample.cuh`'s `THCSample` (field meanings there; dimensions in (depth, height, width)
/// order).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct THCSample {
    pub n: i64,
    pub o: [i32; 3],
    pub i: [i32; 3],
    pub mode: i32,
    pub pad_: i32,
    pub x: u64,
    pub y: u64,
    pub ints: u64,
    pub wts: u64,
    pub rp: [i32; 3],
    pub col: [i32; 3],
    pub w: [i32; 3],
    pub pad2_: i32,
}

/// `TH_SAMPLE_COPY`: the sums start at -0 (a single term is copied exactly).
pub(crate) const COPY: i32 = 1;

/// The kernels of `nn_sample.cuh` whose dtype is `d` (Float, Double, Half).
pub fn kernel_names(d: DType) -> Vec<String> {
    if !matches!(d, DType::Float | DType::Double | DType::Half) {
        return vec![];
    }
    let sfx = dtype_suffix(d);
    ["nnSample", "nnSampleBack"].iter().flat_map(|op| ["i32", "i64"].map(|w| format!("th_{op}_{sfx}_{w}"))).collect()
}

/// Launches `th_nnSample_<dtype>_<i32|i64>` (`adjoint`: `th_nnSampleBack_...`, each term
/// weighted as `wx * ((wz * wy) * v)`, the host's backward passes) over `p.n` output elements,
/// one thread each; `narrow`: every element offset of the input and output fits an i32.
///
/// # Safety
/// `p.x` is device memory of `dev` holding the contiguous input (`planes * i[0] * i[1] * i[2]`
/// elements of `T`, `planes = n / (o[0] * o[1] * o[2])`), `p.y` the contiguous output (`n`
/// elements, not overlapping the input); a plane of the input and of the output has at most
/// `i32::MAX` elements; per dimension `d`, the `i32`s at `ints` hold from offset `rp[d]` on
/// `o[d] + 1` nondecreasing row pointers into the positions from offset `col[d]` (each below
/// `i[d]`) and into the weights (`T`'s compute type) at `wts` from offset `w[d]`.
pub unsafe fn launch<T: Scalar>(dev: &Dev, mut p: THCSample, adjoint: bool, narrow: bool) -> Result<()> {
    let op = if adjoint { "nnSampleBack" } else { "nnSample" };
    // SAFETY: the caller's contract.
    unsafe { items(dev, op, T::DTYPE, p.n, narrow, &mut p) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn layout_matches_nn_sample_cuh() {
        assert_eq!(size_of::<THCSample>(), 112);
        assert_eq!((offset_of!(THCSample, x), offset_of!(THCSample, rp)), (40, 72));
    }

    #[test]
    fn kernel_names_per_dtype() {
        assert_eq!(kernel_names(DType::Half)[3], "th_nnSampleBack_half_i64");
        assert!(kernel_names(DType::Long).is_empty());
    }
}
