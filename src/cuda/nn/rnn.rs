//! The fused GRU and LSTM cells' kernels (`kernels/nn_rnn.cuh`): their parameter (`THCRnn`),
//! names per dtype and launch, for `nn::rnn`'s device half.

use crate::core::dtype::{DType, Scalar};
use crate::core::error::Result;
use crate::cuda::kernels::dtype_suffix;
use crate::cuda::launch::items;
use crate::cuda::runtime::Device as Dev;

/// `nn_rnn.cuh`'s `THCRnn`: `n` state elements of hidden size `h`, the operands' addresses in
/// the order each kernel lists (0: an absent bias).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct THCRnn {
    pub n: i64,
    pub h: i64,
    pub p: [u64; 7],
}

/// The kernels: GRU and LSTM, forward and backward.
pub const OPS: [&str; 4] = ["rnnGru", "rnnGruBack", "rnnLstm", "rnnLstmBack"];

/// The kernels of `nn_rnn.cuh` whose dtype is `d` (Float, Double, Half).
pub fn kernel_names(d: DType) -> Vec<String> {
    if !matches!(d, DType::Float | DType::Double | DType::Half) {
        return vec![];
    }
    let sfx = dtype_suffix(d);
    OPS.iter().flat_map(|op| ["i32", "i64"].map(|w| format!("th_{op}_{sfx}_{w}"))).collect()
}

/// Launches `th_<op>_<dtype>_<i32|i64>` over `p.n` state elements, one thread each.
///
/// # Safety
/// Every nonzero address in `p` is device memory of `dev` holding the contiguous elements the
/// kernel reads or writes for `p.n` state elements of hidden size `p.h` (gate rows of 3h or 4h,
/// GRU's storage rows of 5h, biases of 3h or 4h), and no written operand overlaps another
/// operand except where the kernel says so (LSTM's gates, rewritten in place).
pub unsafe fn launch<T: Scalar>(dev: &Dev, op: &str, mut p: THCRnn) -> Result<()> {
    if p.h == 0 {
        return Ok(());
    }
    // i32 offsets while the largest operand (GRU's storage: 5n elements) fits
    let narrow = p.n.checked_mul(5).is_some_and(|m| m <= i32::MAX as i64);
    // SAFETY: the caller's contract.
    unsafe { items(dev, op, T::DTYPE, p.n, narrow, &mut p) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_nn_rnn_cuh() {
        assert_eq!((size_of::<THCRnn>(), std::mem::offset_of!(THCRnn, p)), (72, 16));
    }

    #[test]
    fn kernel_names_per_dtype() {
        assert_eq!(kernel_names(DType::Half)[7], "th_rnnLstmBack_half_i64");
        assert!(kernel_names(DType::BFloat16).is_empty());
    }
}
