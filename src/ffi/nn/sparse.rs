//! LookupTable, LookupTableBag (THCUNN only), IndexLinear, SparseLinear (and its legacy
//! forms), for THNN and THCUNN. Every index is 0-based (torch7's are 1-based): lookup rows and
//! `paddingValue`, bag offsets and `offset2bag`, `key + keysOffset`, SparseLinear's rows and
//! features.

use super::*;
use crate::nn::sparse::{self, SparseFormat};
use std::ffi::c_int;

/// IndexLinear and SparseLinear, both families.
macro_rules! sparse_api {
    (@index $R:ident, $T:ty, $S:ty, $A:ty, $I:ty) => { pastey::paste! { nn_fn! {
        /// `output[j] = bias + sum over sample j's (key, value) pairs of value * weight[key +
        /// keysOffset]` (0-based rows); max-normalized when `weight` has 4 extra columns (then
        /// `normalizedValues`, may be NULL, receives the normalized values and `train` updates
        /// the per-key statistics in `weight`).
        fn [<THNN_ $R IndexLinear_updateOutput>](state: *mut $S, keys: *mut $I as view, keys_offset: i64, values: *mut [<TH $R Tensor>] as view, sizes: *mut $I as view, cum_sum_sizes: *mut $I as view, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as obj, bias: *mut [<TH $R Tensor>] as view, normalized_values: *mut [<TH $R Tensor>] as opt_obj, train: c_int) {
            sparse::index_linear_update_output::<$T>(&keys, keys_offset, &values, &sizes, &cum_sum_sizes, output, weight, &bias, normalized_values.map(|t| &**t), train != 0)
        }
        /// `gradWeight` (resized: one row per key) = the per-key gradient; `gradBias += scale *
        /// sum(gradOutput)`. `valuesBuffer` (may be NULL) and `weightDecay` are unused.
        fn [<THNN_ $R IndexLinear_accGradParameters>](state: *mut $S, keys: *mut $I as view, keys_offset: i64, values: *mut [<TH $R Tensor>] as view, sizes: *mut $I as view, cum_sum_sizes: *mut $I as view, grad_output: *mut [<TH $R Tensor>] as view, grad_weight: *mut [<TH $R Tensor>] as obj, grad_bias: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>] as view, values_buffer: *mut [<TH $R Tensor>], weight_decay: $A, scale: $A) {
            let _ = (values_buffer, weight_decay);
            sparse::index_linear_acc_grad_parameters::<$T>(&keys, keys_offset, &values, &sizes, &cum_sum_sizes, &grad_output, grad_weight, grad_bias, &weight, &bias, scale.into())
        }
        /// The gradient step applied to `weight` and `bias` directly, pair by pair (with
        /// `weightDecay` on the touched rows).
        fn [<THNN_ $R IndexLinear_accUpdateGradParameters>](state: *mut $S, keys: *mut $I as view, keys_offset: i64, values: *mut [<TH $R Tensor>] as view, sizes: *mut $I as view, cum_sum_sizes: *mut $I as view, grad_output: *mut [<TH $R Tensor>] as view, weight: *mut [<TH $R Tensor>] as obj, bias: *mut [<TH $R Tensor>] as obj, weight_decay: $A, scale: $A) {
            sparse::index_linear_acc_update_grad_parameters::<$T>(&keys, keys_offset, &values, &sizes, &cum_sum_sizes, &grad_output, weight, bias, weight_decay.into(), scale.into())
        }
        /// Applies the per-key `gradWeight` (rows for `runningKeys`) and `gradBias` with
        /// `learningRate` and `weightDecay`. `cumSumSizes` is unused (may be NULL).
        fn [<THNN_ $R IndexLinear_updateParameters>](state: *mut $S, grad_weight: *mut [<TH $R Tensor>] as view, grad_bias: *mut [<TH $R Tensor>] as view, weight: *mut [<TH $R Tensor>] as obj, bias: *mut [<TH $R Tensor>] as obj, running_keys: *mut $I as view, cum_sum_sizes: *mut $I, keys_offset: i64, weight_decay: $A, learning_rate: $A) {
            let _ = cum_sum_sizes;
            sparse::index_linear_update_parameters::<$T>(&grad_weight, &grad_bias, weight, bias, &running_keys, keys_offset, weight_decay.into(), learning_rate.into())
        }
    } } };
    (@sparse $R:ident, $T:ty, $S:ty, $A:ty) => { pastey::paste! { nn_fn! {
        /// `output` (batch x outputSize) = `bias` + the COO `input` (nnz x 3: 0-based row,
        /// 0-based feature, value) times `weight`^T; the batch is `output`'s first size when it
        /// is 2-D, else 1 + the largest row.
        fn [<THNN_ $R SparseLinear_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>] as view) {
            sparse::sparse_linear_update_output::<$T>(&input, output, &weight, &bias, SparseFormat::Coo)
        }
        /// `gradWeight += scale * gradOutput^T @ input (+ weightDecay * weight)`, `gradBias +=
        /// scale * sum(gradOutput)`; COO `input`. `bias` is unused (may be NULL).
        fn [<THNN_ $R SparseLinear_accGradParameters>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_weight: *mut [<TH $R Tensor>] as obj, grad_bias: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>], weight_decay: $A, scale: $A) {
            let _ = bias;
            sparse::sparse_linear_acc_grad_parameters::<$T>(&input, &grad_output, grad_weight, grad_bias, &weight, weight_decay.into(), scale.into(), SparseFormat::Coo)
        }
        /// Zeroes `gradBias` and the `gradWeight` columns of the features in `lastInput` (COO).
        fn [<THNN_ $R SparseLinear_zeroGradParameters>](state: *mut $S, grad_weight: *mut [<TH $R Tensor>] as obj, grad_bias: *mut [<TH $R Tensor>] as obj, last_input: *mut [<TH $R Tensor>] as view) {
            sparse::sparse_linear_zero_grad_parameters::<$T>(grad_weight, grad_bias, &last_input, SparseFormat::Coo)
        }
        /// `bias -= learningRate * gradBias`; `weight[:, c] -= learningRate * gradWeight[:, c]`
        /// for the features `c` in `lastInput` (COO).
        fn [<THNN_ $R SparseLinear_updateParameters>](state: *mut $S, weight: *mut [<TH $R Tensor>] as obj, bias: *mut [<TH $R Tensor>] as obj, grad_weight: *mut [<TH $R Tensor>] as view, grad_bias: *mut [<TH $R Tensor>] as view, last_input: *mut [<TH $R Tensor>] as view, learning_rate: $A) {
            sparse::sparse_linear_update_parameters::<$T>(weight, bias, &grad_weight, &grad_bias, &last_input, learning_rate.into(), SparseFormat::Coo)
        }
        /// As `SparseLinear_updateOutput` for a batch x nnz x 2 `input` of (0-based feature,
        /// value) pairs; `output` is resized to batch x outputSize.
        fn [<THNN_ $R SparseLinear_legacyUpdateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>] as view) {
            sparse::sparse_linear_update_output::<$T>(&input, output, &weight, &bias, SparseFormat::Legacy)
        }
        /// As `SparseLinear_accGradParameters` for a batch x nnz x 2 `input`.
        fn [<THNN_ $R SparseLinear_legacyAccGradParameters>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_weight: *mut [<TH $R Tensor>] as obj, grad_bias: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>], weight_decay: $A, scale: $A) {
            let _ = bias;
            sparse::sparse_linear_acc_grad_parameters::<$T>(&input, &grad_output, grad_weight, grad_bias, &weight, weight_decay.into(), scale.into(), SparseFormat::Legacy)
        }
        /// As `SparseLinear_zeroGradParameters` for a batch x nnz x 2 `lastInput`.
        fn [<THNN_ $R SparseLinear_legacyZeroGradParameters>](state: *mut $S, grad_weight: *mut [<TH $R Tensor>] as obj, grad_bias: *mut [<TH $R Tensor>] as obj, last_input: *mut [<TH $R Tensor>] as view) {
            sparse::sparse_linear_zero_grad_parameters::<$T>(grad_weight, grad_bias, &last_input, SparseFormat::Legacy)
        }
        /// As `SparseLinear_updateParameters` for a batch x nnz x 2 `lastInput`.
        fn [<THNN_ $R SparseLinear_legacyUpdateParameters>](state: *mut $S, weight: *mut [<TH $R Tensor>] as obj, bias: *mut [<TH $R Tensor>] as obj, grad_weight: *mut [<TH $R Tensor>] as view, grad_bias: *mut [<TH $R Tensor>] as view, last_input: *mut [<TH $R Tensor>] as view, learning_rate: $A) {
            sparse::sparse_linear_update_parameters::<$T>(weight, bias, &grad_weight, &grad_bias, &last_input, learning_rate.into(), SparseFormat::Legacy)
        }
    } } };
    // both families: THNN's and THCUNN's arms are the same
    (@$fam:ident $R:ident, $T:ty, $S:ty, $A:ty, $I:ty) => {
        sparse_api!(@index $R, $T, $S, $A, $I);
        sparse_api!(@sparse $R, $T, $S, $A);
    };
}
nn_families!(sparse_api);

/// LookupTable for both families: `$C` is the count buffer's handle, `$B` the `sorted` one
/// (THNN: `THIntTensor` and a real tensor; THCUNN: `THCudaLongTensor` both).
macro_rules! lookup_api {
    (@thnn $R:ident, $T:ty, $S:ty, $A:ty, $I:ty) => { pastey::paste! { lookup_api!(@with $R, $T, $S, $A, $I, THIntTensor, [<TH $R Tensor>]); } };
    (@thcunn $R:ident, $T:ty, $S:ty, $A:ty, $I:ty) => { lookup_api!(@with $R, $T, $S, $A, $I, $I, $I); };
    (@with $R:ident, $T:ty, $S:ty, $A:ty, $I:ty, $C:ty, $B:ty) => { pastey::paste! { nn_fn! {
        /// `gradWeight[k] += scale * gradOutput[i]` for each position `i` of `input` (1-D or
        /// 2-D, 0-based rows) whose row `k` is not `paddingValue` (0-based; out of range, e.g.
        /// -1: none); with `scaleGradByFreq` divided by `k`'s count in `input`, and `count` (may
        /// be NULL) set to those counts. `sorted` and `indices` are ignored (may be NULL).
        fn [<THNN_ $R LookupTable_accGradParameters>](state: *mut $S, input: *mut $I as view, grad_output: *mut [<TH $R Tensor>] as view, grad_weight: *mut [<TH $R Tensor>] as obj, count: *mut $C as opt_obj, sorted: *mut $B, indices: *mut $I, scale_grad_by_freq: bool, padding_value: c_int, scale: $A) {
            let _ = (sorted, indices);
            sparse::lookup_table_acc_grad_parameters::<$T, _>(&input, &grad_output, grad_weight, count.map(|t| &**t), scale_grad_by_freq, padding_value as i64, scale.into())
        }
        /// Scales the rows of `weight` named in `idx` (1-D, 0-based; left unchanged) whose
        /// `normType`-norm exceeds `maxNorm` by `maxNorm / (norm + 1e-7)`.
        fn [<THNN_ $R LookupTable_renorm>](state: *mut $S, idx: *mut $I as view, weight: *mut [<TH $R Tensor>] as obj, max_norm: $A, norm_type: $A) {
            sparse::lookup_table_renorm::<$T>(&idx, weight, max_norm.into(), norm_type.into())
        }
    } } };
}
nn_families!(lookup_api);

/// LookupTableBag: THCUNN only (THNN has no host version), so the THNN arm is empty.
macro_rules! lookup_bag_api {
    (@thnn $R:ident, $T:ty, $S:ty, $A:ty, $I:ty) => {};
    (@thcunn $R:ident, $T:ty, $S:ty, $A:ty, $I:ty) => { pastey::paste! { nn_fn! {
        /// `output` (numBags x dim) = per bag the sum (`mode` 0) or mean (1) of the rows
        /// `weight[input[i]]` of its positions (0-based rows; `offsets`: the 0-based start of
        /// each bag, the first 0); `offset2bag` set to each position's 0-based bag, `seq_length`
        /// (may be NULL) to the bag sizes.
        fn [<THNN_ $R LookupTableBag_updateOutput>](state: *mut $S, input: *mut $I as view, offsets: *mut $I as view, weight: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, offset2bag: *mut $I as obj, mode: c_int, seq_length: *mut $I as opt_obj) {
            sparse::lookup_table_bag_update_output::<$T>(&input, &offsets, &weight, output, offset2bag, mode, seq_length.map(|t| &**t))
        }
        /// `gradWeight[input[i]] += scale * gradOutput[offset2bag[i]]` for every position `i`,
        /// over the row's count with `scaleGradByFreq` (`count`, may be NULL, set to the
        /// counts) and over the bag's size `seq_length[b]` in mean mode. `sortedIndices` and
        /// `origIndices` are ignored (may be NULL).
        fn [<THNN_ $R LookupTableBag_accGradParameters>](state: *mut $S, input: *mut $I as view, grad_output: *mut [<TH $R Tensor>] as view, grad_weight: *mut [<TH $R Tensor>] as obj, offset2bag: *mut $I as view, count: *mut $I as opt_obj, sorted_indices: *mut $I, orig_indices: *mut $I, scale_grad_by_freq: bool, mode: c_int, seq_length: *mut $I as opt_view, scale: $A) {
            let _ = (sorted_indices, orig_indices);
            sparse::lookup_table_bag_acc_grad_parameters::<$T>(&input, &grad_output, grad_weight, &offset2bag, count.map(|t| &**t), scale_grad_by_freq, mode, seq_length.as_ref(), scale.into())
        }
    } } };
}
nn_families!(lookup_bag_api);
