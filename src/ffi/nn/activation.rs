//! Activations (`nn.Abs`, `ELU`, `GatedLinearUnit`, `HardShrink`, `HardTanh`, `LeakyReLU`,
//! `LogSigmoid`, `LogSoftMax`, `PReLU`, `RReLU`, `Sigmoid`, `SoftMax`, `SoftPlus`, `SoftShrink`,
//! `Sqrt`, `Square`, `Tanh`, `Threshold`): elementwise layers and the normalizations over one
//! dimension. `inplace = true` overwrites `input` (forward) or `gradOutput` (backward) and makes
//! `output` / `gradInput` a view of it.

use super::*;
use crate::nn::activation::{self as act, param, softmax};
use std::ffi::c_int;

macro_rules! activation_api {
    // The modules of both families: `$S` the state type, `$A` the scalar options' type
    // (torch's accreal).
    (@both $R:ident, $T:ty, $S:ty, $A:ty) => { pastey::paste! { nn_fn! {
        /// `output = |input|`.
        fn [<THNN_ $R Abs_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj) {
            act::abs_update_output::<$T>(&input, output)
        }
        /// `gradInput = gradOutput * (input >= 0 ? 1 : -1)`.
        fn [<THNN_ $R Abs_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as obj, grad_input: *mut [<TH $R Tensor>] as obj) {
            act::abs_update_grad_input::<$T>(&input, grad_output, grad_input)
        }
        /// `output = input > 0 ? input : alpha * (exp(input) - 1)`.
        fn [<THNN_ $R ELU_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as obj, output: *mut [<TH $R Tensor>] as obj, alpha: $A, inplace: bool) {
            act::elu_update_output::<$T>(input, output, alpha.into(), inplace)
        }
        /// From `output`: `gradInput = output > 0 ? gradOutput : gradOutput * (output + alpha)`.
        fn [<THNN_ $R ELU_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as obj, grad_input: *mut [<TH $R Tensor>] as obj, output: *mut [<TH $R Tensor>] as view, alpha: $A, inplace: bool) {
            act::elu_update_grad_input::<$T>(&input, grad_output, grad_input, &output, alpha.into(), inplace)
        }
        /// `output = input` clamped to `[min_val, max_val]`.
        fn [<THNN_ $R HardTanh_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as obj, output: *mut [<TH $R Tensor>] as obj, min_val: $A, max_val: $A, inplace: bool) {
            act::hard_tanh_update_output::<$T>(input, output, min_val.into(), max_val.into(), inplace)
        }
        /// `gradInput = min_val < input < max_val ? gradOutput : 0`.
        fn [<THNN_ $R HardTanh_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as obj, grad_input: *mut [<TH $R Tensor>] as obj, min_val: $A, max_val: $A, inplace: bool) {
            act::hard_tanh_update_grad_input::<$T>(&input, grad_output, grad_input, min_val.into(), max_val.into(), inplace)
        }
        /// `output = input > 0 ? input : negval * input`.
        fn [<THNN_ $R LeakyReLU_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as obj, output: *mut [<TH $R Tensor>] as obj, negval: $A, inplace: bool) {
            act::leaky_relu_update_output::<$T>(input, output, negval.into(), inplace)
        }
        /// `gradInput = input > 0 ? gradOutput : negval * gradOutput`.
        fn [<THNN_ $R LeakyReLU_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as obj, grad_input: *mut [<TH $R Tensor>] as obj, negval: $A, inplace: bool) {
            act::leaky_relu_update_grad_input::<$T>(&input, grad_output, grad_input, negval.into(), inplace)
        }
        /// `output = log(sigmoid(input))`; `buffer` is not used (may be NULL).
        fn [<THNN_ $R LogSigmoid_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as obj, output: *mut [<TH $R Tensor>] as obj, buffer: *mut [<TH $R Tensor>]) {
            let _ = buffer;
            act::log_sigmoid_update_output::<$T>(input, output)
        }
        /// `gradInput = gradOutput * (1 - sigmoid(input))`; `buffer` is not used (may be NULL).
        fn [<THNN_ $R LogSigmoid_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as obj, grad_input: *mut [<TH $R Tensor>] as obj, buffer: *mut [<TH $R Tensor>]) {
            let _ = buffer;
            act::log_sigmoid_update_grad_input::<$T>(&input, grad_output, grad_input)
        }
        /// `output = 1 / (1 + exp(-input))`.
        fn [<THNN_ $R Sigmoid_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj) {
            act::sigmoid_update_output::<$T>(&input, output)
        }
        /// From `output`: `gradInput = gradOutput * (1 - output) * output` (`input` is not read).
        fn [<THNN_ $R Sigmoid_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>], grad_output: *mut [<TH $R Tensor>] as obj, grad_input: *mut [<TH $R Tensor>] as obj, output: *mut [<TH $R Tensor>] as view) {
            let _ = input;
            act::sigmoid_update_grad_input::<$T>(grad_output, grad_input, &output)
        }
        /// `output = input * beta > threshold ? input : log(1 + exp(beta * input)) / beta`.
        fn [<THNN_ $R SoftPlus_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as obj, output: *mut [<TH $R Tensor>] as obj, beta: $A, threshold: $A) {
            act::soft_plus_update_output::<$T>(input, output, beta.into(), threshold.into())
        }
        /// From `output`: `gradInput = output * beta > threshold ? gradOutput : gradOutput * (1 - exp(-beta * output))`.
        fn [<THNN_ $R SoftPlus_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as obj, grad_input: *mut [<TH $R Tensor>] as obj, output: *mut [<TH $R Tensor>] as view, beta: $A, threshold: $A) {
            act::soft_plus_update_grad_input::<$T>(&input, grad_output, grad_input, &output, beta.into(), threshold.into())
        }
        /// `output = input -/+ lambda` beyond `[-lambda, lambda]`, 0 inside.
        fn [<THNN_ $R SoftShrink_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as obj, output: *mut [<TH $R Tensor>] as obj, lambda: $A) {
            act::soft_shrink_update_output::<$T>(input, output, lambda.into())
        }
        /// `gradInput = |input| > lambda ? gradOutput : 0`.
        fn [<THNN_ $R SoftShrink_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as obj, grad_input: *mut [<TH $R Tensor>] as obj, lambda: $A) {
            act::soft_shrink_update_grad_input::<$T>(&input, grad_output, grad_input, lambda.into())
        }
        /// `output = sqrt(input)` (`eps` is not used, as in torch7).
        fn [<THNN_ $R Sqrt_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, eps: $A) {
            let _ = eps;
            act::sqrt_update_output::<$T>(&input, output)
        }
        /// From `output`: `gradInput = output == 0 ? 0 : gradOutput / (2 * output)`.
        fn [<THNN_ $R Sqrt_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as obj, grad_input: *mut [<TH $R Tensor>] as obj, output: *mut [<TH $R Tensor>] as view) {
            act::sqrt_update_grad_input::<$T>(&input, grad_output, grad_input, &output)
        }
        /// `output = input * input`.
        fn [<THNN_ $R Square_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as obj, output: *mut [<TH $R Tensor>] as obj) {
            act::square_update_output::<$T>(input, output)
        }
        /// `gradInput = 2 * gradOutput * input`.
        fn [<THNN_ $R Square_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as obj, grad_input: *mut [<TH $R Tensor>] as obj) {
            act::square_update_grad_input::<$T>(&input, grad_output, grad_input)
        }
        /// `output = tanh(input)`.
        fn [<THNN_ $R Tanh_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj) {
            act::tanh_update_output::<$T>(&input, output)
        }
        /// From `output`: `gradInput = gradOutput * (1 - output^2)` (`input` is not read).
        fn [<THNN_ $R Tanh_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>], grad_output: *mut [<TH $R Tensor>] as obj, grad_input: *mut [<TH $R Tensor>] as obj, output: *mut [<TH $R Tensor>] as view) {
            let _ = input;
            act::tanh_update_grad_input::<$T>(grad_output, grad_input, &output)
        }
        /// `output = input <= threshold ? val : input`.
        fn [<THNN_ $R Threshold_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as obj, output: *mut [<TH $R Tensor>] as obj, threshold: $A, val: $A, inplace: bool) {
            act::threshold_update_output::<$T>(input, output, threshold.into(), val.into(), inplace)
        }
        /// `gradInput = input <= threshold ? 0 : gradOutput` (`val` is not used).
        fn [<THNN_ $R Threshold_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as obj, grad_input: *mut [<TH $R Tensor>] as obj, threshold: $A, val: $A, inplace: bool) {
            let _ = val;
            act::threshold_update_grad_input::<$T>(&input, grad_output, grad_input, threshold.into(), inplace)
        }
        /// Log-softmax over dimension 0 of a 1-D or 3-D input, 1 of a 2-D or 4-D input.
        fn [<THNN_ $R LogSoftMax_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj) {
            softmax::log_soft_max_update_output::<$T>(&input, output)
        }
        /// From `output`: `gradInput = gradOutput - exp(output) * sum(gradOutput)`.
        fn [<THNN_ $R LogSoftMax_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, output: *mut [<TH $R Tensor>] as view) {
            softmax::log_soft_max_update_grad_input::<$T>(&input, &grad_output, grad_input, &output)
        }
        /// Softmax over dimension 0 of a 1-D or 3-D input, 1 of a 2-D or 4-D input.
        fn [<THNN_ $R SoftMax_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj) {
            softmax::soft_max_update_output::<$T>(&input, output)
        }
        /// From `output`: `gradInput = output * (gradOutput - sum(gradOutput * output))`.
        fn [<THNN_ $R SoftMax_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, output: *mut [<TH $R Tensor>] as view) {
            softmax::soft_max_update_grad_input::<$T>(&input, &grad_output, grad_input, &output)
        }
        /// `output = a * sigmoid(b)`, `a` and `b` the halves of `input` along `dim` (0-based).
        fn [<THNN_ $R GatedLinear_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, dim: c_int) {
            param::glu_update_output::<$T>(&input, output, dim)
        }
        /// The gradient of GatedLinear with respect to both halves of `input`.
        fn [<THNN_ $R GatedLinear_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, dim: c_int) {
            param::glu_update_grad_input::<$T>(&input, &grad_output, grad_input, dim)
        }
        /// `output = input > 0 ? input : w * input`, `w` per plane (`nOutputPlane` weights) or
        /// shared (`nOutputPlane = 0`, one weight).
        fn [<THNN_ $R PReLU_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as obj, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, n_output_plane: i64) {
            param::prelu_update_output::<$T>(input, output, &weight, n_output_plane)
        }
        /// `gradInput = input > 0 ? gradOutput : w * gradOutput`.
        fn [<THNN_ $R PReLU_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as obj, grad_input: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, n_output_plane: i64) {
            param::prelu_update_grad_input::<$T>(&input, grad_output, grad_input, &weight, n_output_plane)
        }
        /// `gradWeight += scale * sum(input * gradOutput)` over each plane's elements with
        /// `input <= 0`. `gradInput`, `gradWeightBuf` and `gradWeightBuf2` are not used (may be NULL).
        fn [<THNN_ $R PReLU_accGradParameters>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>], weight: *mut [<TH $R Tensor>] as view, grad_weight: *mut [<TH $R Tensor>] as obj, grad_weight_buf: *mut [<TH $R Tensor>], grad_weight_buf2: *mut [<TH $R Tensor>], n_output_plane: i64, scale: $A) {
            let _ = (grad_input, grad_weight_buf, grad_weight_buf2);
            param::prelu_acc_grad_parameters::<$T>(&input, &grad_output, &weight, grad_weight, n_output_plane, scale.into())
        }
        /// Training: `gradInput = gradOutput * noise`; evaluation: slope `(lower + upper) / 2`.
        fn [<THNN_ $R RReLU_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as obj, grad_input: *mut [<TH $R Tensor>] as obj, noise: *mut [<TH $R Tensor>] as opt_view, lower: f64, upper: f64, train: bool, inplace: bool) {
            param::rrelu_update_grad_input::<$T>(&input, grad_output, grad_input, noise.as_ref(), lower, upper, train, inplace)
        }
    } } };
    // THNN's modules that THCUNN lacks (HardShrink), and RReLU's forward with THNN's generator.
    (@thnn $R:ident, $T:ty) => { pastey::paste! { nn_fn! {
        /// `output = |input| > lambda ? input : 0`.
        fn [<THNN_ $R HardShrink_updateOutput>](state: *mut THNNState, input: *mut [<TH $R Tensor>] as obj, output: *mut [<TH $R Tensor>] as obj, lambda: f64) {
            act::hard_shrink_update_output::<$T>(input, output, lambda)
        }
        /// `gradInput = |input| > lambda ? gradOutput : 0`.
        fn [<THNN_ $R HardShrink_updateGradInput>](state: *mut THNNState, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as obj, grad_input: *mut [<TH $R Tensor>] as obj, lambda: f64) {
            act::hard_shrink_update_grad_input::<$T>(&input, grad_output, grad_input, lambda)
        }
        /// Training: slopes drawn in `[lower, upper)` from `generator` for the elements `<= 0`,
        /// kept in `noise`. Evaluation: slope `(lower + upper) / 2` (`noise`, `generator` may be NULL).
        fn [<THNN_ $R RReLU_updateOutput>](state: *mut THNNState, input: *mut [<TH $R Tensor>] as obj, output: *mut [<TH $R Tensor>] as obj, noise: *mut [<TH $R Tensor>] as opt_obj, lower: f64, upper: f64, train: bool, inplace: bool, generator: *mut crate::ffi::random::THGenerator as opt_obj) {
            param::rrelu_update_output::<$T>(input, output, noise.map(|t| &**t), lower, upper, train, inplace, generator.map(|g| &**g))
        }
    } } };
    (@thnn $R:ident, $T:ty, $S:ty, $A:ty, $I:ty) => { activation_api!(@both $R, $T, $S, $A); activation_api!(@thnn $R, $T); };
    (@thcunn $R:ident, $T:ty, $S:ty, $A:ty, $I:ty) => {
        activation_api!(@both $R, $T, $S, $A);
        pastey::paste! { nn_fn! {
            /// Training: slopes drawn in `[lower, upper)` by the device's generator for every
            /// element, kept in `noise` where `input <= 0` (1 elsewhere); `generator` is cunn's
            /// unused `void *`. Evaluation: slope `(lower + upper) / 2` (`noise` may be NULL).
            fn [<THNN_ $R RReLU_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as obj, output: *mut [<TH $R Tensor>] as obj, noise: *mut [<TH $R Tensor>] as opt_obj, lower: f64, upper: f64, train: bool, inplace: bool, generator: *mut std::ffi::c_void) {
                let _ = generator;
                param::rrelu_update_output::<$T>(input, output, noise.map(|t| &**t), lower, upper, train, inplace, None)
            }
        } }
    };
}
nn_families!(activation_api);
