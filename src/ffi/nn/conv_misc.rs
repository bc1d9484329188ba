//! The other convolutions: TemporalConvolution, TemporalSubSampling, TemporalRowConvolution,
//! SpatialSubSampling, SpatialConvolutionMap, SpatialFullConvolutionMap,
//! SpatialConvolutionLocal (see `nn::conv_misc` for the shapes).

use super::*;
use crate::nn::conv_misc::{local, map, row, subsampling as sub, temporal};
use std::ffi::c_int;

macro_rules! conv_misc_api {
    // The modules of both THNN and THCUNN (cunn's signatures are THNN's; scale is accreal).
    (@both $R:ident, $T:ty, $S:ty, $A:ty) => { pastey::paste! { nn_fn! {
        /// Time-major 1-D convolution: `input` `[T, inputFrameSize]` or `[N, T, inputFrameSize]`,
        /// `weight` `[outputFrameSize, kW*inputFrameSize]`, `bias` `[outputFrameSize]` (may be
        /// NULL); `output` `[T', outputFrameSize]` (batched `[N, T', ...]`), `T' = (T-kW)/dW+1`.
        fn [<THNN_ $R TemporalConvolution_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>] as opt_view, k_w: c_int, d_w: c_int, input_frame_size: c_int, output_frame_size: c_int) {
            temporal::update_output::<$T>(&input, output, &weight, bias.as_ref(), k_w as i64, d_w as i64, input_frame_size as i64, output_frame_size as i64)
        }
        /// `gradInput` (shaped like `input`) of TemporalConvolution.
        fn [<THNN_ $R TemporalConvolution_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, k_w: c_int, d_w: c_int) {
            temporal::update_grad_input::<$T>(&input, &grad_output, grad_input, &weight, k_w as i64, d_w as i64)
        }
        /// `gradWeight`, `gradBias` (may be NULL) `+= scale *` the parameter gradients.
        fn [<THNN_ $R TemporalConvolution_accGradParameters>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_weight: *mut [<TH $R Tensor>] as obj, grad_bias: *mut [<TH $R Tensor>] as opt_obj, k_w: c_int, d_w: c_int, scale: $A) {
            temporal::acc_grad_parameters::<$T>(&input, &grad_output, grad_weight, grad_bias.map(|t| &**t), k_w as i64, d_w as i64, scale.into())
        }

        /// Depthwise 1-D convolution: `weight` `[F, 1, kW]`, `bias` `[F]` (may be NULL), zero
        /// padding `padW`; `input` `[F, T]`/`[N, F, T]` with `featFirst`, else `[T, F]`/`[N, T,
        /// F]`; `output` in the same layout. `finput`, `fgradInput` are not used (may be NULL).
        fn [<THNN_ $R TemporalRowConvolution_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>] as opt_view, finput: *mut [<TH $R Tensor>], fgrad_input: *mut [<TH $R Tensor>], k_w: c_int, d_w: c_int, pad_w: c_int, feat_first: bool) {
            let _ = (finput, fgrad_input);
            row::update_output::<$T>(&input, output, &weight, bias.as_ref(), k_w as i64, d_w as i64, pad_w as i64, feat_first)
        }
        /// `gradInput` (shaped like `input`) of TemporalRowConvolution.
        fn [<THNN_ $R TemporalRowConvolution_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, finput: *mut [<TH $R Tensor>], fgrad_input: *mut [<TH $R Tensor>], k_w: c_int, d_w: c_int, pad_w: c_int, feat_first: bool) {
            let _ = (finput, fgrad_input);
            row::update_grad_input::<$T>(&input, &grad_output, grad_input, &weight, k_w as i64, d_w as i64, pad_w as i64, feat_first)
        }
        /// `gradWeight`, `gradBias` (may be NULL) `+= scale *` the parameter gradients (from
        /// `input`, not `finput`).
        fn [<THNN_ $R TemporalRowConvolution_accGradParameters>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_weight: *mut [<TH $R Tensor>] as obj, grad_bias: *mut [<TH $R Tensor>] as opt_obj, finput: *mut [<TH $R Tensor>], fgrad_input: *mut [<TH $R Tensor>], k_w: c_int, d_w: c_int, pad_w: c_int, feat_first: bool, scale: $A) {
            let _ = (finput, fgrad_input);
            row::acc_grad_parameters::<$T>(&input, &grad_output, grad_weight, grad_bias.map(|t| &**t), k_w as i64, d_w as i64, pad_w as i64, feat_first, scale.into())
        }

        /// `output[c] = weight[c] * (kH x kW window sums of input[c], strides dH, dW) +
        /// bias[c]`: `input` `[C, H, W]` or `[N, C, H, W]`, `bias` may be NULL.
        fn [<THNN_ $R SpatialSubSampling_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>] as opt_view, k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int) {
            sub::spatial_update_output::<$T>(&input, output, &weight, bias.as_ref(), k_w as i64, k_h as i64, d_w as i64, d_h as i64)
        }
        /// `gradInput` (shaped like `input`) of SpatialSubSampling.
        fn [<THNN_ $R SpatialSubSampling_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int) {
            sub::spatial_update_grad_input::<$T>(&input, &grad_output, grad_input, &weight, k_w as i64, k_h as i64, d_w as i64, d_h as i64)
        }
        /// `gradWeight`, `gradBias` (may be NULL) `+= scale *` the parameter gradients.
        fn [<THNN_ $R SpatialSubSampling_accGradParameters>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_weight: *mut [<TH $R Tensor>] as obj, grad_bias: *mut [<TH $R Tensor>] as opt_obj, k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, scale: $A) {
            sub::spatial_acc_grad_parameters::<$T>(&input, &grad_output, grad_weight, grad_bias.map(|t| &**t), k_w as i64, k_h as i64, d_w as i64, d_h as i64, scale.into())
        }

        /// Unshared-weight 2-D convolution: `weight` `[oH*oW, nOutputPlane, nInputPlane*kH*kW]`
        /// (or 6-D `[oH, oW, nOutputPlane, nInputPlane, kH, kW]`), `bias` `[nOutputPlane, oH,
        /// oW]` (may be NULL). `finput` is scratch (resized; may be NULL), `fgradInput` unused.
        fn [<THNN_ $R SpatialConvolutionLocal_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>] as opt_view, finput: *mut [<TH $R Tensor>] as opt_obj, fgrad_input: *mut [<TH $R Tensor>], k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int, input_width: i64, input_height: i64, output_width: i64, output_height: i64) {
            let _ = fgrad_input;
            let o = local::Opts { kw: k_w as i64, kh: k_h as i64, dw: d_w as i64, dh: d_h as i64, padw: pad_w as i64, padh: pad_h as i64, input_width, input_height, output_width, output_height };
            local::update_output::<$T>(&input, output, &weight, bias.as_ref(), finput.map(|t| &**t), o)
        }
        /// `gradInput` (shaped like `input`) of SpatialConvolutionLocal; `fgradInput` is scratch
        /// (resized; may be NULL), `finput` unused.
        fn [<THNN_ $R SpatialConvolutionLocal_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, finput: *mut [<TH $R Tensor>], fgrad_input: *mut [<TH $R Tensor>] as opt_obj, k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int, input_width: i64, input_height: i64, output_width: i64, output_height: i64) {
            let _ = finput;
            let o = local::Opts { kw: k_w as i64, kh: k_h as i64, dw: d_w as i64, dh: d_h as i64, padw: pad_w as i64, padh: pad_h as i64, input_width, input_height, output_width, output_height };
            local::update_grad_input::<$T>(&input, &grad_output, grad_input, &weight, fgrad_input.map(|t| &**t), o)
        }
        /// `gradWeight`, `gradBias` (may be NULL) `+= scale *` the parameter gradients; `finput`
        /// is scratch (resized; may be NULL), `fgradInput` unused.
        fn [<THNN_ $R SpatialConvolutionLocal_accGradParameters>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_weight: *mut [<TH $R Tensor>] as obj, grad_bias: *mut [<TH $R Tensor>] as opt_obj, finput: *mut [<TH $R Tensor>] as opt_obj, fgrad_input: *mut [<TH $R Tensor>], k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int, input_width: i64, input_height: i64, output_width: i64, output_height: i64, scale: $A) {
            let _ = fgrad_input;
            let o = local::Opts { kw: k_w as i64, kh: k_h as i64, dw: d_w as i64, dh: d_h as i64, padw: pad_w as i64, padh: pad_h as i64, input_width, input_height, output_width, output_height };
            local::acc_grad_parameters::<$T>(&input, &grad_output, grad_weight, grad_bias.map(|t| &**t), finput.map(|t| &**t), o, scale.into())
        }
    } } };
    // THNN's modules that THCUNN lacks (TemporalSubSampling, SpatialConvolutionMap,
    // SpatialFullConvolutionMap).
    (@thnn $R:ident, $T:ty) => { pastey::paste! { nn_fn! {
        /// `output[t][f] = weight[f] * sum_{k<kW} input[t*dW+k][f] + bias[f]`: `input` `[T,
        /// inputFrameSize]` (or `[N, T, inputFrameSize]`), `bias` may be NULL.
        fn [<THNN_ $R TemporalSubSampling_updateOutput>](state: *mut THNNState, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>] as opt_view, k_w: c_int, d_w: c_int, input_frame_size: c_int) {
            sub::temporal_update_output::<$T>(&input, output, &weight, bias.as_ref(), k_w as i64, d_w as i64, input_frame_size as i64)
        }
        /// `gradInput` (shaped like `input`) of TemporalSubSampling.
        fn [<THNN_ $R TemporalSubSampling_updateGradInput>](state: *mut THNNState, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, k_w: c_int, d_w: c_int) {
            sub::temporal_update_grad_input::<$T>(&input, &grad_output, grad_input, &weight, k_w as i64, d_w as i64)
        }
        /// `gradWeight`, `gradBias` (may be NULL) `+= scale *` the parameter gradients.
        fn [<THNN_ $R TemporalSubSampling_accGradParameters>](state: *mut THNNState, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_weight: *mut [<TH $R Tensor>] as obj, grad_bias: *mut [<TH $R Tensor>] as opt_obj, k_w: c_int, d_w: c_int, scale: f64) {
            sub::temporal_acc_grad_parameters::<$T>(&input, &grad_output, grad_weight, grad_bias.map(|t| &**t), k_w as i64, d_w as i64, scale)
        }

        /// Valid strided cross-correlation along `connTable` (`[nConn, 2]` of 0-based (input
        /// plane, output plane)), `weight` `[nConn, kH, kW]`, `bias` `[nOutputPlane]` (may be
        /// NULL); `input` `[C, H, W]` or `[N, C, H, W]`, `C >= nInputPlane`.
        fn [<THNN_ $R SpatialConvolutionMap_updateOutput>](state: *mut THNNState, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>] as opt_view, conn_table: *mut [<TH $R Tensor>] as view, n_input_plane: c_int, n_output_plane: c_int, d_w: c_int, d_h: c_int) {
            map::update_output::<$T>(&input, output, &weight, bias.as_ref(), &conn_table, n_input_plane as i64, n_output_plane as i64, d_w as i64, d_h as i64, false)
        }
        /// `gradInput` (shaped like `input`) of SpatialConvolutionMap; `bias` is unused (may be NULL).
        fn [<THNN_ $R SpatialConvolutionMap_updateGradInput>](state: *mut THNNState, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>], conn_table: *mut [<TH $R Tensor>] as view, n_input_plane: c_int, n_output_plane: c_int, d_w: c_int, d_h: c_int) {
            let _ = bias;
            map::update_grad_input::<$T>(&input, &grad_output, grad_input, &weight, &conn_table, n_input_plane as i64, n_output_plane as i64, d_w as i64, d_h as i64, false)
        }
        /// `gradWeight`, `gradBias` (may be NULL) `+= scale *` the parameter gradients.
        fn [<THNN_ $R SpatialConvolutionMap_accGradParameters>](state: *mut THNNState, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_weight: *mut [<TH $R Tensor>] as obj, grad_bias: *mut [<TH $R Tensor>] as opt_obj, conn_table: *mut [<TH $R Tensor>] as view, n_input_plane: c_int, n_output_plane: c_int, d_w: c_int, d_h: c_int, scale: f64) {
            map::acc_grad_parameters::<$T>(&input, &grad_output, grad_weight, grad_bias.map(|t| &**t), &conn_table, n_input_plane as i64, n_output_plane as i64, d_w as i64, d_h as i64, scale, false)
        }

        /// Full (transposed) strided convolution along `connTable` (as SpatialConvolutionMap's):
        /// output `[nOutputPlane, (H-1)*dH+kH, (W-1)*dW+kW]` (batched `[N, ...]`).
        fn [<THNN_ $R SpatialFullConvolutionMap_updateOutput>](state: *mut THNNState, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>] as opt_view, conn_table: *mut [<TH $R Tensor>] as view, n_input_plane: c_int, n_output_plane: c_int, d_w: c_int, d_h: c_int) {
            map::update_output::<$T>(&input, output, &weight, bias.as_ref(), &conn_table, n_input_plane as i64, n_output_plane as i64, d_w as i64, d_h as i64, true)
        }
        /// `gradInput` (shaped like `input`) of SpatialFullConvolutionMap; `bias` is unused (may be NULL).
        fn [<THNN_ $R SpatialFullConvolutionMap_updateGradInput>](state: *mut THNNState, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>], conn_table: *mut [<TH $R Tensor>] as view, n_input_plane: c_int, n_output_plane: c_int, d_w: c_int, d_h: c_int) {
            let _ = bias;
            map::update_grad_input::<$T>(&input, &grad_output, grad_input, &weight, &conn_table, n_input_plane as i64, n_output_plane as i64, d_w as i64, d_h as i64, true)
        }
        /// `gradWeight`, `gradBias` (may be NULL) `+= scale *` the parameter gradients.
        fn [<THNN_ $R SpatialFullConvolutionMap_accGradParameters>](state: *mut THNNState, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_weight: *mut [<TH $R Tensor>] as obj, grad_bias: *mut [<TH $R Tensor>] as opt_obj, conn_table: *mut [<TH $R Tensor>] as view, n_input_plane: c_int, n_output_plane: c_int, d_w: c_int, d_h: c_int, scale: f64) {
            map::acc_grad_parameters::<$T>(&input, &grad_output, grad_weight, grad_bias.map(|t| &**t), &conn_table, n_input_plane as i64, n_output_plane as i64, d_w as i64, d_h as i64, scale, true)
        }

    } } };
    (@thnn $R:ident, $T:ty, $S:ty, $A:ty, $I:ty) => { conv_misc_api!(@both $R, $T, $S, $A); conv_misc_api!(@thnn $R, $T); };
    (@thcunn $R:ident, $T:ty, $S:ty, $A:ty, $I:ty) => { conv_misc_api!(@both $R, $T, $S, $A); };
}
nn_families!(conv_misc_api);
