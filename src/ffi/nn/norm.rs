//! BatchNormalization (`nn.BatchNormalization`, `nn.SpatialBatchNormalization`,
//! `nn.VolumetricBatchNormalization`): per-feature normalization over dimension 1.

use super::*;
use crate::nn::norm;

macro_rules! norm_api {
    ($R:ident, $T:ty) => { pastey::paste! { nn_fn! {
        /// `output` = (`input` - mean) * invstd * `weight` + `bias` per feature (dimension 1 of
        /// an input of 2 or more dimensions; `weight`, `bias` may be NULL). `train`: the batch's
        /// statistics, stored in `save_mean` / `save_std` (1 / sqrt(var + eps); resized here,
        /// may be NULL), `running_mean` / `running_var` updated with `momentum` (unbiased
        /// variance; may be NULL). Otherwise the running statistics are used (required).
        fn [<THNN_ $R BatchNormalization_updateOutput>](state: *mut THNNState, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as opt_view, bias: *mut [<TH $R Tensor>] as opt_view, running_mean: *mut [<TH $R Tensor>] as opt_obj, running_var: *mut [<TH $R Tensor>] as opt_obj, save_mean: *mut [<TH $R Tensor>] as opt_obj, save_std: *mut [<TH $R Tensor>] as opt_obj, train: bool, momentum: f64, eps: f64) {
            norm::update_output::<$T>(&input, output, weight.as_ref(), bias.as_ref(), running_mean.map(|t| &**t), running_var.map(|t| &**t), save_mean.map(|t| &**t), save_std.map(|t| &**t), train, momentum, eps)
        }
        /// `gradInput` (may be NULL) from `gradOutput`, with the statistics of `save_mean` /
        /// `save_std` (`train`) or `running_mean` / `running_var` (evaluation); `gradWeight +=
        /// scale * sum(gradOutput * xhat)`, `gradBias += scale * sum(gradOutput)` per feature
        /// (each may be NULL; they must hold one value per feature).
        fn [<THNN_ $R BatchNormalization_backward>](state: *mut THNNState, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as opt_obj, grad_weight: *mut [<TH $R Tensor>] as opt_obj, grad_bias: *mut [<TH $R Tensor>] as opt_obj, weight: *mut [<TH $R Tensor>] as opt_view, running_mean: *mut [<TH $R Tensor>] as opt_view, running_var: *mut [<TH $R Tensor>] as opt_view, save_mean: *mut [<TH $R Tensor>] as opt_view, save_std: *mut [<TH $R Tensor>] as opt_view, train: bool, scale: f64, eps: f64) {
            norm::backward::<$T>(&input, &grad_output, grad_input.map(|t| &**t), grad_weight.map(|t| &**t), grad_bias.map(|t| &**t), weight.as_ref(), running_mean.as_ref(), running_var.as_ref(), save_mean.as_ref(), save_std.as_ref(), train, scale, eps)
        }
    } } };
}
nn_reals!(norm_api);
