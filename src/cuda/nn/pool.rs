//! The poolings' kernels of `kernels/nn_pool.cuh` as the device backend sees them: their one
//! parameter (`THNNPool`), their names per dtype and their launch. The layers built on them
//! (window tables, scatter/gather backward passes) are `nn::pool::device`.

use crate::core::dtype::{DType, Scalar};
use crate::core::error::Result;
use crate::cuda::launch::items;
use crate::cuda::runtime::Device as Dev;

/// `nn_pool.cuh`'s `THNNPool` (field meanings there; axes in (t, h, w) order).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct THNNPool {
    pub n: i64,
    pub src: u64,
    pub dst: u64,
    pub ind: u64,
    pub aux: u64,
    pub aux2: u64,
    pub tab: u64,
    pub c: i64,
    pub i: [i64; 3],
    pub o: [i64; 3],
    pub ss: [i64; 5],
    pub ds: [i64; 5],
    pub step: [i64; 3],
    pub ts: [i64; 3],
    pub tc: [i64; 3],
    pub td: [i64; 3],
    pub tlo: [i64; 3],
    pub thi: [i64; 3],
    pub ps: i64,
    pub power: f64,
}

/// The kernels: max and average forward, average backward, FeatureLPPooling's two passes.
pub const OPS: [&str; 5] = ["poolMax", "poolAvg", "poolAvgBack", "poolLp", "poolLpBack"];

/// The kernels of `nn_pool.cuh` whose dtype is `d` (for `kernels::kernels_of`).
pub fn kernel_names(d: DType) -> Vec<String> {
    if !matches!(d, DType::Float | DType::Double | DType::Half) {
        return vec![];
    }
    let sfx = crate::cuda::kernels::dtype_suffix(d);
    OPS.iter().flat_map(|op| ["i32", "i64"].map(|w| format!("th_{op}_{sfx}_{w}"))).collect()
}

/// Launches `th_<op>_<dtype>_<i32|i64>` with `p` over `p.n` elements written, one thread each;
/// `narrow`: every element offset and table entry fits an i32.
///
/// # Safety
/// The addresses, sizes, strides and table offsets in `p` stay inside device memory of `dev`
/// that the kernel may access (dst and ind written, the rest read; the tables' windows inside
/// the planes), and what it writes overlaps neither what it reads nor itself.
pub unsafe fn launch<T: Scalar>(dev: &Dev, op: &str, mut p: THNNPool, narrow: bool) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { items(dev, op, T::DTYPE, p.n, narrow, &mut p) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn layout_matches_nn_pool_cuh() {
        assert_eq!(size_of::<THNNPool>(), 352);
        assert_eq!(
            (offset_of!(THNNPool, c), offset_of!(THNNPool, ss), offset_of!(THNNPool, ts), offset_of!(THNNPool, power)),
            (56, 112, 216, 344)
        );
    }

    #[test]
    fn kernel_names_per_dtype() {
        assert_eq!(kernel_names(DType::Half)[9], "th_poolLpBack_half_i64");
        assert!(kernel_names(DType::Int).is_empty() && kernel_names(DType::BFloat16).is_empty());
    }
}
