//! BatchNormalization (`nn.BatchNormalization`, `nn.SpatialBatchNormalization`,
//! `nn.VolumetricBatchNormalization`): per-feature normalization over dimension 1.

use super::*;
use crate::nn::norm;
use std::ffi::c_int;

macro_rules! norm_api {
    // cunn's signatures are THNN's (momentum, eps and scale are doubles in both).
    (@both $R:ident, $T:ty, $S:ty) => { pastey::paste! { nn_fn! {
        /// `output` = (`input` - mean) * invstd * `weight` + `bias` per feature (dimension 1 of
        /// an input of 2 or more dimensions; `weight`, `bias` may be NULL). `train`: the batch's
        /// statistics, stored in `save_mean` / `save_std` (1 / sqrt(var + eps); resized here,
        /// may be NULL), `running_mean` / `running_var` updated with `momentum` (unbiased
        /// variance; may be NULL). Otherwise the running statistics are used (required).
        fn [<THNN_ $R BatchNormalization_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as opt_view, bias: *mut [<TH $R Tensor>] as opt_view, running_mean: *mut [<TH $R Tensor>] as opt_obj, running_var: *mut [<TH $R Tensor>] as opt_obj, save_mean: *mut [<TH $R Tensor>] as opt_obj, save_std: *mut [<TH $R Tensor>] as opt_obj, train: bool, momentum: f64, eps: f64) {
            norm::update_output::<$T>(&input, output, weight.as_ref(), bias.as_ref(), running_mean.map(|t| &**t), running_var.map(|t| &**t), save_mean.map(|t| &**t), save_std.map(|t| &**t), train, momentum, eps)
        }
        /// `gradInput` (may be NULL) from `gradOutput`, with the statistics of `save_mean` /
        /// `save_std` (`train`) or `running_mean` / `running_var` (evaluation); `gradWeight +=
        /// scale * sum(gradOutput * xhat)`, `gradBias += scale * sum(gradOutput)` per feature
        /// (each may be NULL; they must hold one value per feature).
        fn [<THNN_ $R BatchNormalization_backward>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as opt_obj, grad_weight: *mut [<TH $R Tensor>] as opt_obj, grad_bias: *mut [<TH $R Tensor>] as opt_obj, weight: *mut [<TH $R Tensor>] as opt_view, running_mean: *mut [<TH $R Tensor>] as opt_view, running_var: *mut [<TH $R Tensor>] as opt_view, save_mean: *mut [<TH $R Tensor>] as opt_view, save_std: *mut [<TH $R Tensor>] as opt_view, train: bool, scale: f64, eps: f64) {
            norm::backward::<$T>(&input, &grad_output, grad_input.map(|t| &**t), grad_weight.map(|t| &**t), grad_bias.map(|t| &**t), weight.as_ref(), running_mean.as_ref(), running_var.as_ref(), save_mean.as_ref(), save_std.as_ref(), train, scale, eps)
        }
    } } };
    (@thnn $R:ident, $T:ty, $S:ty, $A:ty, $I:ty) => { norm_api!(@both $R, $T, $S); };
    (@thcunn $R:ident, $T:ty, $S:ty, $A:ty, $I:ty) => { norm_api!(@both $R, $T, $S); pastey::paste! { nn_fn! {
        /// `output` = `input` (C x H x W or N x C x H x W) * `scale`^-`beta`, `scale` = `k` +
        /// `alpha` / `size` * the sum of `input`^2 over the `size` channels around each channel
        /// (zero outside); both resized like `input`. THCUNN only.
        fn [<THNN_ $R SpatialCrossMapLRN_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, scale: *mut [<TH $R Tensor>] as obj, size: c_int, alpha: $A, beta: $A, k: $A) {
            norm::lrn::update_output::<$T>(&input, output, scale, size, alpha.into(), beta.into(), k.into())
        }
        /// `gradInput` (like `input`) from `gradOutput` and the `scale` and `output` that
        /// `updateOutput` left.
        fn [<THNN_ $R SpatialCrossMapLRN_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, scale: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as view, size: c_int, alpha: $A, beta: $A, k: $A) {
            norm::lrn::update_grad_input::<$T>(&input, &grad_output, grad_input, &scale, &output, size, alpha.into(), beta.into(), k.into())
        }
    } } };
}
nn_families!(norm_api);
