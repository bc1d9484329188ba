//! Criterions (losses): ClassNLL, SpatialClassNLL, BCE, MSE, Abs, SmoothL1, SoftMargin, Margin,
//! MultiMargin, MultiLabelMargin, DistKLDiv, L1Cost. `output` (and `total_weight`) become
//! 1-element tensors; `gradInput` takes `input`'s shape. Class targets are 0-based
//! `THLongTensor`s.

use super::*;
use crate::nn::criterion::{class_nll, margin, pointwise};

/// The elementwise criterions with torch7's `(input, target, output|gradInput, sizeAverage)`
/// signature: `$m` (the module's name), `$f` (the `pointwise::` prefix), a doc line for each pass.
macro_rules! pair_api {
    ($R:ident, $T:ty, $S:ty, $m:ident, $f:ident, $out_doc:literal, $grad_doc:literal) => { pastey::paste! { nn_fn! {
        #[doc = $out_doc]
        fn [<THNN_ $R $m _updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, target: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, size_average: bool) {
            pointwise::[<$f _update_output>]::<$T>(&input, &target, output, size_average)
        }
        #[doc = $grad_doc]
        fn [<THNN_ $R $m _updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, target: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, size_average: bool) {
            pointwise::[<$f _update_grad_input>]::<$T>(&input, &target, grad_input, size_average)
        }
    } } };
}

macro_rules! criterion_api {
    // The modules of both families (`$S` the state type, `$A` the scalar options' type).
    (@both $R:ident, $T:ty, $S:ty, $A:ty, $I:ty) => {
        pair_api!($R, $T, $S, AbsCriterion, abs,
            "`output` = sum of `|input - target|` (mean with `sizeAverage`); `input` and `target` hold as many elements.",
            "`gradInput` = `sign(input - target)` (0 where equal), divided by the element count with `sizeAverage`.");
        pair_api!($R, $T, $S, MSECriterion, mse,
            "`output` = sum of `(input - target)^2` (mean with `sizeAverage`).",
            "`gradInput` = `2 (input - target)`, divided by the element count with `sizeAverage`.");
        pair_api!($R, $T, $S, SmoothL1Criterion, smooth_l1,
            "`output` = sum of `z^2/2` (`z = |input - target| < 1`) or `z - 1/2` (mean with `sizeAverage`).",
            "`gradInput` = `input - target` clamped to [-1, 1], divided by the element count with `sizeAverage`.");
        pair_api!($R, $T, $S, SoftMarginCriterion, soft_margin,
            "`output` = sum of `log(1 + exp(-input * target))` (mean with `sizeAverage`).",
            "`gradInput` = `-target * sigmoid(-input * target)`, divided by the element count with `sizeAverage`.");
        pair_api!($R, $T, $S, DistKLDivCriterion, dist_kl_div,
            "`output` = sum of `target * (log(target) - input)` over `target > 0` (mean over all elements with `sizeAverage`).",
            "`gradInput` = `-target` where `target > 0`, else 0, divided by the element count with `sizeAverage`.");
        pastey::paste! { nn_fn! {
            /// `output` = sum of `max(0, margin - input * target)` (mean with `sizeAverage`).
            fn [<THNN_ $R MarginCriterion_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, target: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, size_average: bool, margin: $A) {
                pointwise::margin_update_output::<$T>(&input, &target, output, size_average, margin.into())
            }
            /// `gradInput` = `-target` where `input * target < margin`, else 0 (over the count with `sizeAverage`).
            fn [<THNN_ $R MarginCriterion_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, target: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, size_average: bool, margin: $A) {
                pointwise::margin_update_grad_input::<$T>(&input, &target, grad_input, size_average, margin.into())
            }
            /// Binary cross-entropy of probabilities `input` (each in [0, 1]) against `target`,
            /// each term times `weights` (as many elements as `input`; may be NULL); logarithms
            /// clamped at -100 (PyTorch's rule).
            fn [<THNN_ $R BCECriterion_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, target: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, size_average: bool, weights: *mut [<TH $R Tensor>] as opt_view) {
                pointwise::bce_update_output::<$T>(&input, &target, output, size_average, weights.as_ref())
            }
            /// `gradInput` = `weights * (input - target) / max(input (1 - input), 1e-12)` (over the count with `sizeAverage`).
            fn [<THNN_ $R BCECriterion_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, target: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, size_average: bool, weights: *mut [<TH $R Tensor>] as opt_view) {
                pointwise::bce_update_grad_input::<$T>(&input, &target, grad_input, size_average, weights.as_ref())
            }
            /// `output` = `sum |input|`.
            fn [<THNN_ $R L1Cost_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj) {
                pointwise::l1_cost_update_output::<$T>(&input, output)
            }
            /// `gradInput` = `sign(input)`; `gradOutput` may be NULL, else it must hold as many
            /// elements as `input` (its values are not used, as in torch7).
            fn [<THNN_ $R L1Cost_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as opt_view, grad_input: *mut [<TH $R Tensor>] as obj) {
                pointwise::l1_cost_update_grad_input::<$T>(&input, grad_output.as_ref(), grad_input)
            }
            /// Negative log-likelihood: `input` (C, or N x C) log-probabilities, `target` 0-based
            /// classes (one, or N); targets equal to `ignore_index` are skipped. `output` =
            /// `-sum w[t] input[i, t]` (divided by `total_weight` = `sum w[t]` with
            /// `sizeAverage`); `weights` (C, may be NULL) default to 1.
            fn [<THNN_ $R ClassNLLCriterion_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, target: *mut $I as view, output: *mut [<TH $R Tensor>] as obj, size_average: bool, weights: *mut [<TH $R Tensor>] as opt_view, total_weight: *mut [<TH $R Tensor>] as obj, ignore_index: i64) {
                class_nll::update_output::<$T>(&input, &target, output, size_average, weights.as_ref(), total_weight, ignore_index)
            }
            /// `gradInput` (shaped like `input`) = `-w[t]` (over `total_weight`, the one the
            /// forward stored, with `sizeAverage`) at each (i, target[i]) not ignored, 0 elsewhere.
            fn [<THNN_ $R ClassNLLCriterion_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, target: *mut $I as view, grad_input: *mut [<TH $R Tensor>] as obj, size_average: bool, weights: *mut [<TH $R Tensor>] as opt_view, total_weight: *mut [<TH $R Tensor>] as view, ignore_index: i64) {
                class_nll::update_grad_input::<$T>(&input, &target, grad_input, size_average, weights.as_ref(), &total_weight, ignore_index)
            }
            /// ClassNLL at every position of N x C x H x W log-probabilities, `target` N x H x W.
            fn [<THNN_ $R SpatialClassNLLCriterion_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, target: *mut $I as view, output: *mut [<TH $R Tensor>] as obj, size_average: bool, weights: *mut [<TH $R Tensor>] as opt_view, total_weight: *mut [<TH $R Tensor>] as obj) {
                class_nll::spatial_update_output::<$T>(&input, &target, output, size_average, weights.as_ref(), total_weight)
            }
            /// The gradient of SpatialClassNLL (as ClassNLL's, per position).
            fn [<THNN_ $R SpatialClassNLLCriterion_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, target: *mut $I as view, grad_input: *mut [<TH $R Tensor>] as obj, size_average: bool, weights: *mut [<TH $R Tensor>] as opt_view, total_weight: *mut [<TH $R Tensor>] as view) {
                class_nll::spatial_update_grad_input::<$T>(&input, &target, grad_input, size_average, weights.as_ref(), &total_weight)
            }
        } }
        pastey::paste! { nn_fn! {
            /// Multi-class hinge loss: for each frame of `input` (dim, or nframe x dim) with 0-based
            /// class `target`, `sum over d != y of w[y] max(0, margin - input[y] + input[d])^p`
            /// over dim (and nframe with `sizeAverage`); `p` is 1 or 2, `weights` (dim) may be NULL.
            fn [<THNN_ $R MultiMarginCriterion_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, target: *mut $I as view, output: *mut [<TH $R Tensor>] as obj, size_average: bool, p: std::ffi::c_int, weights: *mut [<TH $R Tensor>] as opt_view, margin: $A) {
                margin::multi_margin_update_output::<$T>(&input, &target, output, size_average, p, weights.as_ref(), margin.into())
            }
            /// The gradient of MultiMargin, shaped like `input`.
            fn [<THNN_ $R MultiMarginCriterion_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, target: *mut $I as view, grad_input: *mut [<TH $R Tensor>] as obj, size_average: bool, p: std::ffi::c_int, weights: *mut [<TH $R Tensor>] as opt_view, margin: $A) {
                margin::multi_margin_update_grad_input::<$T>(&input, &target, grad_input, size_average, p, weights.as_ref(), margin.into())
            }
            /// Multi-label hinge loss: `target` (shaped like `input`) lists each frame's classes,
            /// 0-based, ended by the first -1; `isTarget` is set to the 0/1 mask of listed classes.
            fn [<THNN_ $R MultiLabelMarginCriterion_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, target: *mut $I as view, output: *mut [<TH $R Tensor>] as obj, is_target: *mut [<TH $R Tensor>] as obj, size_average: bool) {
                margin::multi_label_update_output::<$T>(&input, &target, output, is_target, size_average)
            }
            /// The gradient of MultiLabelMargin; `isTarget` is the mask the forward set.
            fn [<THNN_ $R MultiLabelMarginCriterion_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, target: *mut $I as view, grad_input: *mut [<TH $R Tensor>] as obj, is_target: *mut [<TH $R Tensor>] as view, size_average: bool) {
                margin::multi_label_update_grad_input::<$T>(&input, &target, grad_input, &is_target, size_average)
            }
        } }
    };
    // Every criterion runs on both engines.
    (@$family:ident $R:ident, $T:ty, $S:ty, $A:ty, $I:ty) => { criterion_api!(@both $R, $T, $S, $A, $I); };
}
nn_families!(criterion_api);
