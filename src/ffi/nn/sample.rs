//! Padding (`nn.SpatialReflectionPadding`, `nn.SpatialReplicationPadding`,
//! `nn.VolumetricReplicationPadding`), upsampling (`nn.SpatialUpSamplingNearest`,
//! `nn.SpatialUpSamplingBilinear`, `nn.VolumetricUpSamplingNearest`,
//! `nn.VolumetricUpSamplingTrilinear`) and `nn.SpatialGridSamplerBilinear`.

use super::*;
use crate::nn::sample::pad::{Mode, Pad};
use crate::nn::sample::{grid, upsample};
use std::ffi::c_int;

macro_rules! sample_api {
    // Padding and upsampling, on both engines (cunn's signatures are THNN's).
    (@both $R:ident, $T:ty, $S:ty) => { pastey::paste! { nn_fn! {
        /// `output`: `input` (C x H x W or N x C x H x W) padded by reflection (the edge not
        /// repeated) by `pad_l`, `pad_r` (width) and `pad_t`, `pad_b` (height); a negative pad
        /// crops. Each pad must be less than the input size it reflects.
        fn [<THNN_ $R SpatialReflectionPadding_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, pad_l: c_int, pad_r: c_int, pad_t: c_int, pad_b: c_int) {
            Pad { mode: Mode::Reflect, k: 2, pads: &[pad_l as i64, pad_r as i64, pad_t as i64, pad_b as i64] }.update_output::<$T>(&input, output)
        }
        /// `gradInput` (like `input`): each element of `gradOutput` added to the input element
        /// it was copied from.
        fn [<THNN_ $R SpatialReflectionPadding_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, pad_l: c_int, pad_r: c_int, pad_t: c_int, pad_b: c_int) {
            Pad { mode: Mode::Reflect, k: 2, pads: &[pad_l as i64, pad_r as i64, pad_t as i64, pad_b as i64] }.update_grad_input::<$T>(&input, &grad_output, grad_input)
        }
        /// `output`: `input` (C x H x W or N x C x H x W) padded by repeating its edges by
        /// `pad_l`, `pad_r` (width) and `pad_t`, `pad_b` (height); a negative pad crops.
        fn [<THNN_ $R SpatialReplicationPadding_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, pad_l: c_int, pad_r: c_int, pad_t: c_int, pad_b: c_int) {
            Pad { mode: Mode::Replicate, k: 2, pads: &[pad_l as i64, pad_r as i64, pad_t as i64, pad_b as i64] }.update_output::<$T>(&input, output)
        }
        /// `gradInput` (like `input`): each element of `gradOutput` added to the input element
        /// it was copied from.
        fn [<THNN_ $R SpatialReplicationPadding_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, pad_l: c_int, pad_r: c_int, pad_t: c_int, pad_b: c_int) {
            Pad { mode: Mode::Replicate, k: 2, pads: &[pad_l as i64, pad_r as i64, pad_t as i64, pad_b as i64] }.update_grad_input::<$T>(&input, &grad_output, grad_input)
        }
        /// `output`: `input` (C x D x H x W or N x C x D x H x W) padded by repeating its edges
        /// by `pleft`, `pright` (width), `ptop`, `pbottom` (height), `pfront`, `pback` (depth);
        /// a negative pad crops.
        fn [<THNN_ $R VolumetricReplicationPadding_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, pleft: c_int, pright: c_int, ptop: c_int, pbottom: c_int, pfront: c_int, pback: c_int) {
            Pad { mode: Mode::Replicate, k: 3, pads: &[pleft as i64, pright as i64, ptop as i64, pbottom as i64, pfront as i64, pback as i64] }.update_output::<$T>(&input, output)
        }
        /// `gradInput` (like `input`): each element of `gradOutput` added to the input element
        /// it was copied from.
        fn [<THNN_ $R VolumetricReplicationPadding_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, pleft: c_int, pright: c_int, ptop: c_int, pbottom: c_int, pfront: c_int, pback: c_int) {
            Pad { mode: Mode::Replicate, k: 3, pads: &[pleft as i64, pright as i64, ptop as i64, pbottom as i64, pfront as i64, pback as i64] }.update_grad_input::<$T>(&input, &grad_output, grad_input)
        }
        /// `output`: each element of `input` (C x H x W or N x C x H x W) repeated
        /// `scale_factor` (>= 1) times along height and width.
        fn [<THNN_ $R SpatialUpSamplingNearest_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, scale_factor: c_int) {
            upsample::nearest_output::<$T>(&input, output, 2, scale_factor)
        }
        /// `gradInput` (like `input`): the sums of `gradOutput` over each element's block.
        fn [<THNN_ $R SpatialUpSamplingNearest_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, scale_factor: c_int) {
            upsample::nearest_grad_input::<$T>(&input, &grad_output, grad_input, 2, scale_factor)
        }
        /// `output`: each element of `input` (C x D x H x W or N x C x D x H x W) repeated
        /// `scale_factor` (>= 1) times along depth, height and width.
        fn [<THNN_ $R VolumetricUpSamplingNearest_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, scale_factor: c_int) {
            upsample::nearest_output::<$T>(&input, output, 3, scale_factor)
        }
        /// `gradInput` (like `input`): the sums of `gradOutput` over each element's block.
        fn [<THNN_ $R VolumetricUpSamplingNearest_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, scale_factor: c_int) {
            upsample::nearest_grad_input::<$T>(&input, &grad_output, grad_input, 3, scale_factor)
        }
        /// `output` (N x C x outputHeight x outputWidth): `input` (N x C x H x W) interpolated
        /// bilinearly with the corner pixels aligned.
        fn [<THNN_ $R SpatialUpSamplingBilinear_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, output_height: c_int, output_width: c_int) {
            upsample::linear_output::<$T>(&input, output, &[output_height, output_width])
        }
        /// `gradInput` (nbatch x nchannels x inputHeight x inputWidth) from `gradOutput`
        /// (nbatch x nchannels x outputHeight x outputWidth).
        fn [<THNN_ $R SpatialUpSamplingBilinear_updateGradInput>](state: *mut $S, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, nbatch: c_int, nchannels: c_int, input_height: c_int, input_width: c_int, output_height: c_int, output_width: c_int) {
            upsample::linear_grad_input::<$T>(&grad_output, grad_input, nbatch, nchannels, &[input_height, input_width], &[output_height, output_width])
        }
        /// `output` (N x C x outputDepth x outputHeight x outputWidth): `input` (N x C x D x H x
        /// W) interpolated trilinearly with the corner voxels aligned.
        fn [<THNN_ $R VolumetricUpSamplingTrilinear_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, output_depth: c_int, output_height: c_int, output_width: c_int) {
            upsample::linear_output::<$T>(&input, output, &[output_depth, output_height, output_width])
        }
        /// `gradInput` (nbatch x nchannels x input sizes) from `gradOutput` (nbatch x nchannels
        /// x output sizes).
        fn [<THNN_ $R VolumetricUpSamplingTrilinear_updateGradInput>](state: *mut $S, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, nbatch: c_int, nchannels: c_int, input_depth: c_int, input_height: c_int, input_width: c_int, output_depth: c_int, output_height: c_int, output_width: c_int) {
            upsample::linear_grad_input::<$T>(&grad_output, grad_input, nbatch, nchannels, &[input_depth, input_height, input_width], &[output_depth, output_height, output_width])
        }
    } } };
    // The grid sampler: THNN's only (cunn's is not part of this family's device half).
    (@grid $R:ident, $T:ty) => { pastey::paste! { nn_fn! {
        /// `output` (N x C x H x W): `input` (N x C x IH x IW) sampled bilinearly at `grid` (N x
        /// H x W x 2, (x, y) in [-1, 1], corners aligned), zero outside.
        fn [<THNN_ $R SpatialGridSamplerBilinear_updateOutput>](state: *mut THNNState, input: *mut [<TH $R Tensor>] as view, grid: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj) {
            grid::update_output::<$T>(&input, &grid, output)
        }
        /// `gradInput` (like `input`) and `gradGrid` (like `grid`) from `gradOutput`; either may
        /// be NULL (not computed).
        fn [<THNN_ $R SpatialGridSamplerBilinear_updateGradInput>](state: *mut THNNState, input: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as opt_obj, grid: *mut [<TH $R Tensor>] as view, grad_grid: *mut [<TH $R Tensor>] as opt_obj, grad_output: *mut [<TH $R Tensor>] as view) {
            grid::update_grad_input::<$T>(&input, grad_input.map(|t| &**t), &grid, grad_grid.map(|t| &**t), &grad_output)
        }
    } } };
    (@thnn $R:ident, $T:ty, $S:ty, $A:ty, $I:ty) => { sample_api!(@both $R, $T, $S); sample_api!(@grid $R, $T); };
    (@thcunn $R:ident, $T:ty, $S:ty, $A:ty, $I:ty) => { sample_api!(@both $R, $T, $S); };
}
nn_families!(sample_api);
