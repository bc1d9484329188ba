//! Pooling: max, dilated max, average, adaptive max/average, fractional max, unpooling (spatial, volumetric), TemporalMaxPooling, FeatureLPPooling.
//!
//! Every `indices` tensor holds 0-based flat offsets into the input plane (`h * W + w`, or
//! `t * H * W + h * W + w`; TemporalMaxPooling: the input frame), as PyTorch's
//! `return_indices`; unpooling reads offsets into its output plane. THCUNN's (Cuda, CudaDouble,
//! CudaHalf) run on the device where their tensors live (`nn::pool::device`).

use super::*;
use crate::nn::pool::fractional::Frac;
use crate::nn::pool::maxavg::Geo;
use crate::nn::pool::unpool::Unpool;
use crate::nn::pool::{adaptive, fractional, lp, maxavg, temporal, unpool};
use std::ffi::c_int;

macro_rules! pool_api {
    (@$fam:ident $R:ident, $T:ty, $S:ty, $A:ty, $I:ty) => { pastey::paste! { nn_fn! {
        /// `output`, `indices` = max over `kH x kW` windows (stride, padding) of each plane of
        /// `input` (C x H x W or N x C x H x W).
        fn [<THNN_ $R SpatialMaxPooling_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, indices: *mut $I as obj, k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int, ceil_mode: bool) {
            maxavg::max_update_output::<$T>(&input, output, indices, &Geo::spatial(k_w, k_h, d_w, d_h, pad_w, pad_h, None, ceil_mode, 5))
        }
        /// `gradInput` = `gradOutput` scattered to the `indices` of the forward.
        fn [<THNN_ $R SpatialMaxPooling_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, indices: *mut $I as view, k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int, ceil_mode: bool) {
            maxavg::max_update_grad_input::<$T>(&input, &grad_output, grad_input, &indices, &Geo::spatial(k_w, k_h, d_w, d_h, pad_w, pad_h, None, ceil_mode, 6))
        }
        /// As SpatialMaxPooling, windows dilated by `dilationH x dilationW`.
        fn [<THNN_ $R SpatialDilatedMaxPooling_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, indices: *mut $I as obj, k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int, dilation_w: c_int, dilation_h: c_int, ceil_mode: bool) {
            maxavg::max_update_output::<$T>(&input, output, indices, &Geo::spatial(k_w, k_h, d_w, d_h, pad_w, pad_h, Some((dilation_w, dilation_h)), ceil_mode, 5))
        }
        /// `gradInput` = `gradOutput` scattered to the `indices` of the forward.
        fn [<THNN_ $R SpatialDilatedMaxPooling_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, indices: *mut $I as view, k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int, dilation_w: c_int, dilation_h: c_int, ceil_mode: bool) {
            maxavg::max_update_grad_input::<$T>(&input, &grad_output, grad_input, &indices, &Geo::spatial(k_w, k_h, d_w, d_h, pad_w, pad_h, Some((dilation_w, dilation_h)), ceil_mode, 6))
        }
        /// `output` = mean over `kH x kW` windows (padding counted when `count_include_pad`).
        fn [<THNN_ $R SpatialAveragePooling_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int, ceil_mode: bool, count_include_pad: bool) {
            maxavg::avg_update_output::<$T>(&input, output, &Geo::spatial(k_w, k_h, d_w, d_h, pad_w, pad_h, None, ceil_mode, 4), count_include_pad)
        }
        /// `gradInput` of the average pooling.
        fn [<THNN_ $R SpatialAveragePooling_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int, ceil_mode: bool, count_include_pad: bool) {
            maxavg::avg_update_grad_input::<$T>(&input, &grad_output, grad_input, &Geo::spatial(k_w, k_h, d_w, d_h, pad_w, pad_h, None, ceil_mode, 5), count_include_pad)
        }
        /// `output`, `indices` = max over `kT x kH x kW` windows of each volume of `input`
        /// (C x T x H x W or N x C x T x H x W).
        fn [<THNN_ $R VolumetricMaxPooling_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, indices: *mut $I as obj, k_t: c_int, k_w: c_int, k_h: c_int, d_t: c_int, d_w: c_int, d_h: c_int, p_t: c_int, p_w: c_int, p_h: c_int, ceil_mode: bool) {
            maxavg::max_update_output::<$T>(&input, output, indices, &Geo::volumetric([k_t, k_w, k_h], [d_t, d_w, d_h], [p_t, p_w, p_h], None, ceil_mode, 5, "p"))
        }
        /// `gradInput` = `gradOutput` scattered to the `indices` of the forward.
        fn [<THNN_ $R VolumetricMaxPooling_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, indices: *mut $I as view, k_t: c_int, k_w: c_int, k_h: c_int, d_t: c_int, d_w: c_int, d_h: c_int, p_t: c_int, p_w: c_int, p_h: c_int, ceil_mode: bool) {
            maxavg::max_update_grad_input::<$T>(&input, &grad_output, grad_input, &indices, &Geo::volumetric([k_t, k_w, k_h], [d_t, d_w, d_h], [p_t, p_w, p_h], None, ceil_mode, 6, "p"))
        }
        /// As VolumetricMaxPooling, windows dilated by `dilationT x dilationH x dilationW`.
        fn [<THNN_ $R VolumetricDilatedMaxPooling_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, indices: *mut $I as obj, k_t: c_int, k_w: c_int, k_h: c_int, d_t: c_int, d_w: c_int, d_h: c_int, p_t: c_int, p_w: c_int, p_h: c_int, dilation_t: c_int, dilation_w: c_int, dilation_h: c_int, ceil_mode: bool) {
            maxavg::max_update_output::<$T>(&input, output, indices, &Geo::volumetric([k_t, k_w, k_h], [d_t, d_w, d_h], [p_t, p_w, p_h], Some([dilation_t, dilation_w, dilation_h]), ceil_mode, 5, "p"))
        }
        /// `gradInput` = `gradOutput` scattered to the `indices` of the forward.
        fn [<THNN_ $R VolumetricDilatedMaxPooling_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, indices: *mut $I as view, k_t: c_int, k_w: c_int, k_h: c_int, d_t: c_int, d_w: c_int, d_h: c_int, p_t: c_int, p_w: c_int, p_h: c_int, dilation_t: c_int, dilation_w: c_int, dilation_h: c_int, ceil_mode: bool) {
            maxavg::max_update_grad_input::<$T>(&input, &grad_output, grad_input, &indices, &Geo::volumetric([k_t, k_w, k_h], [d_t, d_w, d_h], [p_t, p_w, p_h], Some([dilation_t, dilation_w, dilation_h]), ceil_mode, 6, "p"))
        }
        /// `output` = mean over `kT x kH x kW` windows (padding counted when `count_include_pad`).
        fn [<THNN_ $R VolumetricAveragePooling_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, k_t: c_int, k_w: c_int, k_h: c_int, d_t: c_int, d_w: c_int, d_h: c_int, pad_t: c_int, pad_w: c_int, pad_h: c_int, ceil_mode: bool, count_include_pad: bool) {
            maxavg::avg_update_output::<$T>(&input, output, &Geo::volumetric([k_t, k_w, k_h], [d_t, d_w, d_h], [pad_t, pad_w, pad_h], None, ceil_mode, 4, "pad"), count_include_pad)
        }
        /// `gradInput` of the average pooling.
        fn [<THNN_ $R VolumetricAveragePooling_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, k_t: c_int, k_w: c_int, k_h: c_int, d_t: c_int, d_w: c_int, d_h: c_int, pad_t: c_int, pad_w: c_int, pad_h: c_int, ceil_mode: bool, count_include_pad: bool) {
            maxavg::avg_update_grad_input::<$T>(&input, &grad_output, grad_input, &Geo::volumetric([k_t, k_w, k_h], [d_t, d_w, d_h], [pad_t, pad_w, pad_h], None, ceil_mode, 5, "pad"), count_include_pad)
        }
        /// `output`, `indices` = max over the `oheight x owidth` adaptive windows of each plane.
        fn [<THNN_ $R SpatialAdaptiveMaxPooling_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, indices: *mut $I as obj, owidth: c_int, oheight: c_int) {
            adaptive::max_update_output::<$T>(&input, output, indices, owidth, oheight)
        }
        /// `gradInput` = `gradOutput` scattered to the `indices` of the forward.
        fn [<THNN_ $R SpatialAdaptiveMaxPooling_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, indices: *mut $I as view) {
            adaptive::max_update_grad_input::<$T>(&input, &grad_output, grad_input, &indices)
        }
        /// `output` = mean over the `oheight x owidth` adaptive windows of each plane.
        fn [<THNN_ $R SpatialAdaptiveAveragePooling_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, owidth: c_int, oheight: c_int) {
            adaptive::avg_update_output::<$T>(&input, output, owidth, oheight)
        }
        /// `gradInput` of the adaptive average pooling (output size from `gradOutput`).
        fn [<THNN_ $R SpatialAdaptiveAveragePooling_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj) {
            adaptive::avg_update_grad_input::<$T>(&input, &grad_output, grad_input)
        }
        /// Fractional max pooling to `outputH x outputW` with `poolSizeH x poolSizeW` windows
        /// placed by `randomSamples` (N x C x 2, samples (w, h), each in [0, 1)).
        fn [<THNN_ $R SpatialFractionalMaxPooling_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, output_w: c_int, output_h: c_int, pool_size_w: c_int, pool_size_h: c_int, indices: *mut $I as obj, random_samples: *mut [<TH $R Tensor>] as view) {
            fractional::update_output::<$T>(&input, output, &Frac::spatial(output_w, output_h, pool_size_w, pool_size_h, 4), indices, &random_samples)
        }
        /// `gradInput` = `gradOutput` scattered to the `indices` of the forward.
        fn [<THNN_ $R SpatialFractionalMaxPooling_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, output_w: c_int, output_h: c_int, pool_size_w: c_int, pool_size_h: c_int, indices: *mut $I as view) {
            fractional::update_grad_input::<$T>(&input, &grad_output, grad_input, &Frac::spatial(output_w, output_h, pool_size_w, pool_size_h, 5), &indices)
        }
        /// Fractional max pooling of volumes (C x T x H x W or N x C x T x H x W) with
        /// `randomSamples` N x C x 3 (samples (t, h, w)).
        fn [<THNN_ $R VolumetricFractionalMaxPooling_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, output_t: c_int, output_w: c_int, output_h: c_int, pool_size_t: c_int, pool_size_w: c_int, pool_size_h: c_int, indices: *mut $I as obj, random_samples: *mut [<TH $R Tensor>] as view) {
            fractional::update_output::<$T>(&input, output, &Frac::volumetric([output_t, output_w, output_h], [pool_size_t, pool_size_w, pool_size_h], 4), indices, &random_samples)
        }
        /// `gradInput` = `gradOutput` scattered to the `indices` of the forward.
        fn [<THNN_ $R VolumetricFractionalMaxPooling_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, output_t: c_int, output_w: c_int, output_h: c_int, pool_size_t: c_int, pool_size_w: c_int, pool_size_h: c_int, indices: *mut $I as view) {
            fractional::update_grad_input::<$T>(&input, &grad_output, grad_input, &Frac::volumetric([output_t, output_w, output_h], [pool_size_t, pool_size_w, pool_size_h], 5), &indices)
        }
        /// `output` (planes `oheight x owidth`) is zero but for each input element placed at its
        /// 0-based `indices` offset.
        fn [<THNN_ $R SpatialMaxUnpooling_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, indices: *mut $I as view, owidth: c_int, oheight: c_int) {
            unpool::update_output::<$T>(&input, output, &indices, &Unpool::spatial(owidth, oheight, 5))
        }
        /// `gradInput` = `gradOutput` gathered at `indices`.
        fn [<THNN_ $R SpatialMaxUnpooling_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, indices: *mut $I as view, owidth: c_int, oheight: c_int) {
            unpool::update_grad_input::<$T>(&input, &grad_output, grad_input, &indices, &Unpool::spatial(owidth, oheight, 6))
        }
        /// `output` (volumes `oT x oH x oW`) is zero but for each input element placed at its
        /// 0-based `indices` offset; strides and paddings are only checked.
        fn [<THNN_ $R VolumetricMaxUnpooling_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, indices: *mut $I as view, o_t: c_int, o_w: c_int, o_h: c_int, d_t: c_int, d_w: c_int, d_h: c_int, p_t: c_int, p_w: c_int, p_h: c_int) {
            unpool::update_output::<$T>(&input, output, &indices, &Unpool::volumetric([o_t, o_w, o_h], [d_t, d_w, d_h], [p_t, p_w, p_h], 5))
        }
        /// `gradInput` = `gradOutput` gathered at `indices`.
        fn [<THNN_ $R VolumetricMaxUnpooling_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, indices: *mut $I as view, o_t: c_int, o_w: c_int, o_h: c_int, d_t: c_int, d_w: c_int, d_h: c_int, p_t: c_int, p_w: c_int, p_h: c_int) {
            unpool::update_grad_input::<$T>(&input, &grad_output, grad_input, &indices, &Unpool::volumetric([o_t, o_w, o_h], [d_t, d_w, d_h], [p_t, p_w, p_h], 6))
        }
        /// `output`, `indices` = max over windows of `kW` frames (stride `dW`) of `input` (T x F
        /// or N x T x F), each feature separately; `indices` are input frames.
        fn [<THNN_ $R TemporalMaxPooling_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, indices: *mut $I as obj, k_w: c_int, d_w: c_int) {
            temporal::update_output::<$T>(&input, output, indices, k_w, d_w)
        }
        /// `gradInput` = `gradOutput` scattered to the frames in `indices`.
        fn [<THNN_ $R TemporalMaxPooling_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, indices: *mut $I as view, k_w: c_int, d_w: c_int) {
            temporal::update_grad_input::<$T>(&input, &grad_output, grad_input, &indices, k_w, d_w)
        }
        /// `output` = Lp norm (`power`) over windows of `width` features (stride `stride`) of the
        /// feature dimension (the second when `batchMode`, else the first).
        fn [<THNN_ $R FeatureLPPooling_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, power: $A, width: c_int, stride: c_int, batch_mode: bool) {
            lp::update_output::<$T>(&input, output, power.into(), width, stride, batch_mode)
        }
        /// `gradInput` of FeatureLPPooling, from the forward's `output`.
        fn [<THNN_ $R FeatureLPPooling_updateGradInput>](state: *mut $S, grad_output: *mut [<TH $R Tensor>] as view, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, power: $A, width: c_int, stride: c_int, batch_mode: bool) {
            lp::update_grad_input::<$T>(&grad_output, &input, &output, grad_input, power.into(), width, stride, batch_mode)
        }
    } } };
}
nn_families!(pool_api);
