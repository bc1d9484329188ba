//! Linear (`nn.Linear`): `output = input @ weight^T + bias` for 1-D or 2-D input.

use super::*;
use crate::nn::linear;

macro_rules! linear_api {
    ($R:ident, $T:ty) => { pastey::paste! { nn_fn! {
        /// `output` (outputSize, or nframe x outputSize) = `input` (inputSize, or nframe x
        /// inputSize) @ `weight`^T (`weight`: outputSize x inputSize) + `bias` (may be NULL).
        /// `addBuffer` (may be NULL) is set to nframe ones for a 2-D input, as in torch7.
        fn [<THNN_ $R Linear_updateOutput>](state: *mut THNNState, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>] as opt_view, add_buffer: *mut [<TH $R Tensor>] as opt_obj) {
            linear::update_output::<$T>(&input, output, &weight, bias.as_ref(), add_buffer.map(|t| &**t))
        }
        /// `gradInput` (shaped like `input`) = `gradOutput` @ `weight`; nothing when `gradInput` is NULL.
        fn [<THNN_ $R Linear_updateGradInput>](state: *mut THNNState, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as opt_obj, weight: *mut [<TH $R Tensor>] as view) {
            linear::update_grad_input::<$T>(&input, &grad_output, grad_input.map(|t| &**t), &weight)
        }
        /// `gradWeight += scale * gradOutput^T @ input`; with `bias`, `gradBias += scale *
        /// gradOutput` summed over the batch. `gradInput` is unused (torch7's signature).
        fn [<THNN_ $R Linear_accGradParameters>](state: *mut THNNState, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>], weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>] as opt_view, grad_weight: *mut [<TH $R Tensor>] as obj, grad_bias: *mut [<TH $R Tensor>] as opt_obj, add_buffer: *mut [<TH $R Tensor>] as opt_obj, scale: f64) {
            let _ = grad_input;
            linear::acc_grad_parameters::<$T>(&input, &grad_output, &weight, bias.as_ref(), grad_weight, grad_bias.map(|t| &**t), add_buffer.map(|t| &**t), scale)
        }
    } } };
}
nn_reals!(linear_api);
