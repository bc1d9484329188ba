//! The GEMM convolutions (`nn::conv`): Spatial/Volumetric Convolution(MM), Dilated, Full
//! (transposed), FullDilated, SpatialDepthWiseConvolution, and `unfolded_copy` / `unfolded_acc`.

use super::*;
use crate::nn::conv::{self, depthwise, unfold};
use std::ffi::c_int;

macro_rules! conv_api {
    // The modules of both THNN and THCUNN (cunn's signatures are THNN's; cunn names
    // SpatialConvolutionMM's buffers columns and ones); scale is accreal.
    (@both $R:ident, $T:ty, $S:ty, $A:ty) => { pastey::paste! { nn_fn! {
        /// SpatialConvolutionMM (`F.conv2d`; weight nOutputPlane x nInputPlane*kH*kW or 4-D; `finput`/`fgradInput` scratch). Forward: `output` = the convolution of `input` (bias may be NULL).
        fn [<THNN_ $R SpatialConvolutionMM_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>] as opt_view, finput: *mut [<TH $R Tensor>] as opt_obj, fgrad_input: *mut [<TH $R Tensor>], k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int) {
            let _ = fgrad_input; conv::update_output::<$T>(&conv::SPATIAL_MM, &input, output, &weight, bias.as_ref(), finput.map(|t| &**t), &[k_w, k_h, d_w, d_h, pad_w, pad_h], 8)
        }
        /// SpatialConvolutionMM (`F.conv2d`; weight nOutputPlane x nInputPlane*kH*kW or 4-D; `finput`/`fgradInput` scratch). `gradInput` (shaped like `input`) from `gradOutput`.
        fn [<THNN_ $R SpatialConvolutionMM_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, finput: *mut [<TH $R Tensor>], fgrad_input: *mut [<TH $R Tensor>] as opt_obj, k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int) {
            let _ = finput; conv::update_grad_input::<$T>(&conv::SPATIAL_MM, &input, &grad_output, grad_input, &weight, fgrad_input.map(|t| &**t), &[k_w, k_h, d_w, d_h, pad_w, pad_h], 8)
        }
        /// SpatialConvolutionMM (`F.conv2d`; weight nOutputPlane x nInputPlane*kH*kW or 4-D; `finput`/`fgradInput` scratch). `gradWeight += scale * dL/dweight`, `gradBias += scale * dL/dbias` (gradBias may be NULL).
        fn [<THNN_ $R SpatialConvolutionMM_accGradParameters>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_weight: *mut [<TH $R Tensor>] as obj, grad_bias: *mut [<TH $R Tensor>] as opt_obj, finput: *mut [<TH $R Tensor>] as opt_obj, fgrad_input: *mut [<TH $R Tensor>], k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int, scale: $A) {
            let _ = fgrad_input; conv::acc_grad_parameters::<$T>(&conv::SPATIAL_MM, &input, &grad_output, grad_weight, grad_bias.map(|t| &**t), finput.map(|t| &**t), &[k_w, k_h, d_w, d_h, pad_w, pad_h], 8, scale.into())
        }
        /// SpatialDilatedConvolution (`F.conv2d(dilation=)`; weight nOutputPlane x nInputPlane x kH x kW; `columns` scratch, `ones` unused). Forward: `output` = the convolution of `input` (bias may be NULL).
        fn [<THNN_ $R SpatialDilatedConvolution_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>] as opt_view, columns: *mut [<TH $R Tensor>] as opt_obj, ones: *mut [<TH $R Tensor>], k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int, dilation_w: c_int, dilation_h: c_int) {
            let _ = ones; conv::update_output::<$T>(&conv::SPATIAL_DILATED, &input, output, &weight, bias.as_ref(), columns.map(|t| &**t), &[k_w, k_h, d_w, d_h, pad_w, pad_h, dilation_w, dilation_h], 8)
        }
        /// SpatialDilatedConvolution (`F.conv2d(dilation=)`; weight nOutputPlane x nInputPlane x kH x kW; `columns` scratch, `ones` unused). `gradInput` (shaped like `input`) from `gradOutput`.
        fn [<THNN_ $R SpatialDilatedConvolution_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, grad_columns: *mut [<TH $R Tensor>] as opt_obj, k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int, dilation_w: c_int, dilation_h: c_int) {
            conv::update_grad_input::<$T>(&conv::SPATIAL_DILATED, &input, &grad_output, grad_input, &weight, grad_columns.map(|t| &**t), &[k_w, k_h, d_w, d_h, pad_w, pad_h, dilation_w, dilation_h], 7)
        }
        /// SpatialDilatedConvolution (`F.conv2d(dilation=)`; weight nOutputPlane x nInputPlane x kH x kW; `columns` scratch, `ones` unused). `gradWeight += scale * dL/dweight`, `gradBias += scale * dL/dbias` (gradBias may be NULL).
        fn [<THNN_ $R SpatialDilatedConvolution_accGradParameters>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_weight: *mut [<TH $R Tensor>] as obj, grad_bias: *mut [<TH $R Tensor>] as opt_obj, columns: *mut [<TH $R Tensor>] as opt_obj, ones: *mut [<TH $R Tensor>], k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int, dilation_w: c_int, dilation_h: c_int, scale: $A) {
            let _ = ones; conv::acc_grad_parameters::<$T>(&conv::SPATIAL_DILATED, &input, &grad_output, grad_weight, grad_bias.map(|t| &**t), columns.map(|t| &**t), &[k_w, k_h, d_w, d_h, pad_w, pad_h, dilation_w, dilation_h], 8, scale.into())
        }
        /// SpatialFullConvolution (`F.conv_transpose2d(output_padding=adj)`; weight nInputPlane x nOutputPlane x kH x kW; `columns` scratch, `ones` unused). Forward: `output` = the convolution of `input` (bias may be NULL).
        fn [<THNN_ $R SpatialFullConvolution_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>] as opt_view, columns: *mut [<TH $R Tensor>] as opt_obj, ones: *mut [<TH $R Tensor>], k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int, adj_w: c_int, adj_h: c_int) {
            let _ = ones; conv::update_output::<$T>(&conv::SPATIAL_FULL, &input, output, &weight, bias.as_ref(), columns.map(|t| &**t), &[k_w, k_h, d_w, d_h, pad_w, pad_h, adj_w, adj_h], 8)
        }
        /// SpatialFullConvolution (`F.conv_transpose2d(output_padding=adj)`; weight nInputPlane x nOutputPlane x kH x kW; `columns` scratch, `ones` unused). `gradInput` (shaped like `input`) from `gradOutput`.
        fn [<THNN_ $R SpatialFullConvolution_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, grad_columns: *mut [<TH $R Tensor>] as opt_obj, k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int, adj_w: c_int, adj_h: c_int) {
            conv::update_grad_input::<$T>(&conv::SPATIAL_FULL, &input, &grad_output, grad_input, &weight, grad_columns.map(|t| &**t), &[k_w, k_h, d_w, d_h, pad_w, pad_h, adj_w, adj_h], 7)
        }
        /// SpatialFullConvolution (`F.conv_transpose2d(output_padding=adj)`; weight nInputPlane x nOutputPlane x kH x kW; `columns` scratch, `ones` unused). `gradWeight += scale * dL/dweight`, `gradBias += scale * dL/dbias` (gradBias may be NULL).
        fn [<THNN_ $R SpatialFullConvolution_accGradParameters>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_weight: *mut [<TH $R Tensor>] as obj, grad_bias: *mut [<TH $R Tensor>] as opt_obj, columns: *mut [<TH $R Tensor>] as opt_obj, ones: *mut [<TH $R Tensor>], k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int, adj_w: c_int, adj_h: c_int, scale: $A) {
            let _ = ones; conv::acc_grad_parameters::<$T>(&conv::SPATIAL_FULL, &input, &grad_output, grad_weight, grad_bias.map(|t| &**t), columns.map(|t| &**t), &[k_w, k_h, d_w, d_h, pad_w, pad_h, adj_w, adj_h], 8, scale.into())
        }
        /// SpatialFullDilatedConvolution (`F.conv_transpose2d(dilation=, output_padding=adj)`; weight nInputPlane x nOutputPlane x kH x kW; `columns` scratch, `ones` unused). Forward: `output` = the convolution of `input` (bias may be NULL).
        fn [<THNN_ $R SpatialFullDilatedConvolution_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>] as opt_view, columns: *mut [<TH $R Tensor>] as opt_obj, ones: *mut [<TH $R Tensor>], k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int, dilation_w: c_int, dilation_h: c_int, adj_w: c_int, adj_h: c_int) {
            let _ = ones; conv::update_output::<$T>(&conv::SPATIAL_FULL_DILATED, &input, output, &weight, bias.as_ref(), columns.map(|t| &**t), &[k_w, k_h, d_w, d_h, pad_w, pad_h, dilation_w, dilation_h, adj_w, adj_h], 8)
        }
        /// SpatialFullDilatedConvolution (`F.conv_transpose2d(dilation=, output_padding=adj)`; weight nInputPlane x nOutputPlane x kH x kW; `columns` scratch, `ones` unused). `gradInput` (shaped like `input`) from `gradOutput`.
        fn [<THNN_ $R SpatialFullDilatedConvolution_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, grad_columns: *mut [<TH $R Tensor>] as opt_obj, k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int, dilation_w: c_int, dilation_h: c_int, adj_w: c_int, adj_h: c_int) {
            conv::update_grad_input::<$T>(&conv::SPATIAL_FULL_DILATED, &input, &grad_output, grad_input, &weight, grad_columns.map(|t| &**t), &[k_w, k_h, d_w, d_h, pad_w, pad_h, dilation_w, dilation_h, adj_w, adj_h], 7)
        }
        /// SpatialFullDilatedConvolution (`F.conv_transpose2d(dilation=, output_padding=adj)`; weight nInputPlane x nOutputPlane x kH x kW; `columns` scratch, `ones` unused). `gradWeight += scale * dL/dweight`, `gradBias += scale * dL/dbias` (gradBias may be NULL).
        fn [<THNN_ $R SpatialFullDilatedConvolution_accGradParameters>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_weight: *mut [<TH $R Tensor>] as obj, grad_bias: *mut [<TH $R Tensor>] as opt_obj, columns: *mut [<TH $R Tensor>] as opt_obj, ones: *mut [<TH $R Tensor>], k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int, dilation_w: c_int, dilation_h: c_int, adj_w: c_int, adj_h: c_int, scale: $A) {
            let _ = ones; conv::acc_grad_parameters::<$T>(&conv::SPATIAL_FULL_DILATED, &input, &grad_output, grad_weight, grad_bias.map(|t| &**t), columns.map(|t| &**t), &[k_w, k_h, d_w, d_h, pad_w, pad_h, dilation_w, dilation_h, adj_w, adj_h], 8, scale.into())
        }
        /// VolumetricConvolution (`F.conv3d(padding=)`; weight nOutputPlane x nInputPlane x kT x kH x kW gives the kernel; `finput` scratch). Forward: `output` = the convolution of `input` (bias may be NULL).
        fn [<THNN_ $R VolumetricConvolution_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>] as opt_view, finput: *mut [<TH $R Tensor>] as opt_obj, fgrad_input: *mut [<TH $R Tensor>], d_t: c_int, d_w: c_int, d_h: c_int, p_t: c_int, p_w: c_int, p_h: c_int) {
            let _ = fgrad_input; conv::update_output::<$T>(&conv::VOLUMETRIC, &input, output, &weight, bias.as_ref(), finput.map(|t| &**t), &[d_t, d_w, d_h, p_t, p_w, p_h], 8)
        }
        /// VolumetricConvolution (`F.conv3d(padding=)`; weight nOutputPlane x nInputPlane x kT x kH x kW gives the kernel; `finput` scratch). `gradInput` (shaped like `input`) from `gradOutput`.
        fn [<THNN_ $R VolumetricConvolution_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, finput: *mut [<TH $R Tensor>] as opt_obj, d_t: c_int, d_w: c_int, d_h: c_int, p_t: c_int, p_w: c_int, p_h: c_int) {
            conv::update_grad_input::<$T>(&conv::VOLUMETRIC, &input, &grad_output, grad_input, &weight, finput.map(|t| &**t), &[d_t, d_w, d_h, p_t, p_w, p_h], 7)
        }
        /// VolumetricConvolution (`F.conv3d(padding=)`; weight nOutputPlane x nInputPlane x kT x kH x kW gives the kernel; `finput` scratch). `gradWeight += scale * dL/dweight`, `gradBias += scale * dL/dbias` (gradBias may be NULL).
        fn [<THNN_ $R VolumetricConvolution_accGradParameters>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_weight: *mut [<TH $R Tensor>] as obj, grad_bias: *mut [<TH $R Tensor>] as opt_obj, finput: *mut [<TH $R Tensor>] as opt_obj, fgrad_input: *mut [<TH $R Tensor>], d_t: c_int, d_w: c_int, d_h: c_int, p_t: c_int, p_w: c_int, p_h: c_int, scale: $A) {
            let _ = fgrad_input; conv::acc_grad_parameters::<$T>(&conv::VOLUMETRIC, &input, &grad_output, grad_weight, grad_bias.map(|t| &**t), finput.map(|t| &**t), &[d_t, d_w, d_h, p_t, p_w, p_h], 8, scale.into())
        }
        /// VolumetricDilatedConvolution (`F.conv3d(dilation=)`; 5-D weight; `columns` scratch, `ones` unused). Forward: `output` = the convolution of `input` (bias may be NULL).
        fn [<THNN_ $R VolumetricDilatedConvolution_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>] as opt_view, columns: *mut [<TH $R Tensor>] as opt_obj, ones: *mut [<TH $R Tensor>], k_t: c_int, k_w: c_int, k_h: c_int, d_t: c_int, d_w: c_int, d_h: c_int, pad_t: c_int, pad_w: c_int, pad_h: c_int, dilation_t: c_int, dilation_w: c_int, dilation_h: c_int) {
            let _ = ones; conv::update_output::<$T>(&conv::VOLUMETRIC_DILATED, &input, output, &weight, bias.as_ref(), columns.map(|t| &**t), &[k_t, k_w, k_h, d_t, d_w, d_h, pad_t, pad_w, pad_h, dilation_t, dilation_w, dilation_h], 8)
        }
        /// VolumetricDilatedConvolution (`F.conv3d(dilation=)`; 5-D weight; `columns` scratch, `ones` unused). `gradInput` (shaped like `input`) from `gradOutput`.
        fn [<THNN_ $R VolumetricDilatedConvolution_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, grad_columns: *mut [<TH $R Tensor>] as opt_obj, k_t: c_int, k_w: c_int, k_h: c_int, d_t: c_int, d_w: c_int, d_h: c_int, pad_t: c_int, pad_w: c_int, pad_h: c_int, dilation_t: c_int, dilation_w: c_int, dilation_h: c_int) {
            conv::update_grad_input::<$T>(&conv::VOLUMETRIC_DILATED, &input, &grad_output, grad_input, &weight, grad_columns.map(|t| &**t), &[k_t, k_w, k_h, d_t, d_w, d_h, pad_t, pad_w, pad_h, dilation_t, dilation_w, dilation_h], 7)
        }
        /// VolumetricDilatedConvolution (`F.conv3d(dilation=)`; 5-D weight; `columns` scratch, `ones` unused). `gradWeight += scale * dL/dweight`, `gradBias += scale * dL/dbias` (gradBias may be NULL).
        fn [<THNN_ $R VolumetricDilatedConvolution_accGradParameters>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_weight: *mut [<TH $R Tensor>] as obj, grad_bias: *mut [<TH $R Tensor>] as opt_obj, columns: *mut [<TH $R Tensor>] as opt_obj, ones: *mut [<TH $R Tensor>], k_t: c_int, k_w: c_int, k_h: c_int, d_t: c_int, d_w: c_int, d_h: c_int, pad_t: c_int, pad_w: c_int, pad_h: c_int, dilation_t: c_int, dilation_w: c_int, dilation_h: c_int, scale: $A) {
            let _ = ones; conv::acc_grad_parameters::<$T>(&conv::VOLUMETRIC_DILATED, &input, &grad_output, grad_weight, grad_bias.map(|t| &**t), columns.map(|t| &**t), &[k_t, k_w, k_h, d_t, d_w, d_h, pad_t, pad_w, pad_h, dilation_t, dilation_w, dilation_h], 8, scale.into())
        }
        /// VolumetricFullConvolution (`F.conv_transpose3d(output_padding=a)`; weight nInputPlane x nOutputPlane x kT x kH x kW gives the kernel; `finput` scratch). Forward: `output` = the convolution of `input` (bias may be NULL).
        fn [<THNN_ $R VolumetricFullConvolution_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>] as opt_view, finput: *mut [<TH $R Tensor>] as opt_obj, fgrad_input: *mut [<TH $R Tensor>], d_t: c_int, d_w: c_int, d_h: c_int, p_t: c_int, p_w: c_int, p_h: c_int, a_t: c_int, a_w: c_int, a_h: c_int) {
            let _ = fgrad_input; conv::update_output::<$T>(&conv::VOLUMETRIC_FULL, &input, output, &weight, bias.as_ref(), finput.map(|t| &**t), &[d_t, d_w, d_h, p_t, p_w, p_h, a_t, a_w, a_h], 8)
        }
        /// VolumetricFullConvolution (`F.conv_transpose3d(output_padding=a)`; weight nInputPlane x nOutputPlane x kT x kH x kW gives the kernel; `finput` scratch). `gradInput` (shaped like `input`) from `gradOutput`.
        fn [<THNN_ $R VolumetricFullConvolution_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, finput: *mut [<TH $R Tensor>] as opt_obj, fgrad_input: *mut [<TH $R Tensor>], d_t: c_int, d_w: c_int, d_h: c_int, p_t: c_int, p_w: c_int, p_h: c_int, a_t: c_int, a_w: c_int, a_h: c_int) {
            let _ = fgrad_input; conv::update_grad_input::<$T>(&conv::VOLUMETRIC_FULL, &input, &grad_output, grad_input, &weight, finput.map(|t| &**t), &[d_t, d_w, d_h, p_t, p_w, p_h, a_t, a_w, a_h], 8)
        }
        /// VolumetricFullConvolution (`F.conv_transpose3d(output_padding=a)`; weight nInputPlane x nOutputPlane x kT x kH x kW gives the kernel; `finput` scratch). `gradWeight += scale * dL/dweight`, `gradBias += scale * dL/dbias` (gradBias may be NULL).
        fn [<THNN_ $R VolumetricFullConvolution_accGradParameters>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_weight: *mut [<TH $R Tensor>] as obj, grad_bias: *mut [<TH $R Tensor>] as opt_obj, finput: *mut [<TH $R Tensor>] as opt_obj, fgrad_input: *mut [<TH $R Tensor>], d_t: c_int, d_w: c_int, d_h: c_int, p_t: c_int, p_w: c_int, p_h: c_int, a_t: c_int, a_w: c_int, a_h: c_int, scale: $A) {
            let _ = fgrad_input; conv::acc_grad_parameters::<$T>(&conv::VOLUMETRIC_FULL, &input, &grad_output, grad_weight, grad_bias.map(|t| &**t), finput.map(|t| &**t), &[d_t, d_w, d_h, p_t, p_w, p_h, a_t, a_w, a_h], 8, scale.into())
        }
        /// VolumetricFullDilatedConvolution (`F.conv_transpose3d(dilation=, output_padding=a)`; weight nInputPlane x nOutputPlane x kT x kH x kW; `finput` scratch). Forward: `output` = the convolution of `input` (bias may be NULL).
        fn [<THNN_ $R VolumetricFullDilatedConvolution_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>] as opt_view, finput: *mut [<TH $R Tensor>] as opt_obj, fgrad_input: *mut [<TH $R Tensor>], d_t: c_int, d_w: c_int, d_h: c_int, p_t: c_int, p_w: c_int, p_h: c_int, dilation_t: c_int, dilation_w: c_int, dilation_h: c_int, a_t: c_int, a_w: c_int, a_h: c_int) {
            let _ = fgrad_input; conv::update_output::<$T>(&conv::VOLUMETRIC_FULL_DILATED, &input, output, &weight, bias.as_ref(), finput.map(|t| &**t), &[d_t, d_w, d_h, p_t, p_w, p_h, dilation_t, dilation_w, dilation_h, a_t, a_w, a_h], 8)
        }
        /// VolumetricFullDilatedConvolution (`F.conv_transpose3d(dilation=, output_padding=a)`; weight nInputPlane x nOutputPlane x kT x kH x kW; `finput` scratch). `gradInput` (shaped like `input`) from `gradOutput`.
        fn [<THNN_ $R VolumetricFullDilatedConvolution_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, finput: *mut [<TH $R Tensor>] as opt_obj, fgrad_input: *mut [<TH $R Tensor>], d_t: c_int, d_w: c_int, d_h: c_int, p_t: c_int, p_w: c_int, p_h: c_int, dilation_t: c_int, dilation_w: c_int, dilation_h: c_int, a_t: c_int, a_w: c_int, a_h: c_int) {
            let _ = fgrad_input; conv::update_grad_input::<$T>(&conv::VOLUMETRIC_FULL_DILATED, &input, &grad_output, grad_input, &weight, finput.map(|t| &**t), &[d_t, d_w, d_h, p_t, p_w, p_h, dilation_t, dilation_w, dilation_h, a_t, a_w, a_h], 8)
        }
        /// VolumetricFullDilatedConvolution (`F.conv_transpose3d(dilation=, output_padding=a)`; weight nInputPlane x nOutputPlane x kT x kH x kW; `finput` scratch). `gradWeight += scale * dL/dweight`, `gradBias += scale * dL/dbias` (gradBias may be NULL).
        fn [<THNN_ $R VolumetricFullDilatedConvolution_accGradParameters>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_weight: *mut [<TH $R Tensor>] as obj, grad_bias: *mut [<TH $R Tensor>] as opt_obj, finput: *mut [<TH $R Tensor>] as opt_obj, fgrad_input: *mut [<TH $R Tensor>], d_t: c_int, d_w: c_int, d_h: c_int, p_t: c_int, p_w: c_int, p_h: c_int, dilation_t: c_int, dilation_w: c_int, dilation_h: c_int, a_t: c_int, a_w: c_int, a_h: c_int, scale: $A) {
            let _ = fgrad_input; conv::acc_grad_parameters::<$T>(&conv::VOLUMETRIC_FULL_DILATED, &input, &grad_output, grad_weight, grad_bias.map(|t| &**t), finput.map(|t| &**t), &[d_t, d_w, d_h, p_t, p_w, p_h, dilation_t, dilation_w, dilation_h, a_t, a_w, a_h], 8, scale.into())
        }
        /// SpatialDepthWiseConvolution (`F.conv2d(groups=nInputPlane)`; weight M x nInputPlane x kH x kW, bias M x nInputPlane; `finput`/`fgradInput` unused). Forward.
        fn [<THNN_ $R SpatialDepthWiseConvolution_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>] as opt_view, finput: *mut [<TH $R Tensor>], fgrad_input: *mut [<TH $R Tensor>], k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int) {
            let _ = (finput, fgrad_input); depthwise::update_output::<$T>(&input, output, &weight, bias.as_ref(), &[k_w, k_h, d_w, d_h, pad_w, pad_h])
        }
        /// SpatialDepthWiseConvolution (`F.conv2d(groups=nInputPlane)`; weight M x nInputPlane x kH x kW, bias M x nInputPlane; `finput`/`fgradInput` unused). `gradInput` from `gradOutput`.
        fn [<THNN_ $R SpatialDepthWiseConvolution_updateGradInput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, finput: *mut [<TH $R Tensor>], fgrad_input: *mut [<TH $R Tensor>], k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int) {
            let _ = (finput, fgrad_input); depthwise::update_grad_input::<$T>(&input, &grad_output, grad_input, &weight, &[k_w, k_h, d_w, d_h, pad_w, pad_h])
        }
        /// SpatialDepthWiseConvolution (`F.conv2d(groups=nInputPlane)`; weight M x nInputPlane x kH x kW, bias M x nInputPlane; `finput`/`fgradInput` unused). Parameter gradients, scaled.
        fn [<THNN_ $R SpatialDepthWiseConvolution_accGradParameters>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_weight: *mut [<TH $R Tensor>] as obj, grad_bias: *mut [<TH $R Tensor>] as opt_obj, finput: *mut [<TH $R Tensor>], fgrad_input: *mut [<TH $R Tensor>], k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int, scale: $A) {
            let _ = (finput, fgrad_input); depthwise::acc_grad_parameters::<$T>(&input, &grad_output, grad_weight, grad_bias.map(|t| &**t), &[k_w, k_h, d_w, d_h, pad_w, pad_h], scale.into())
        }
    } } };
    // THNN's modules that THCUNN lacks (VolumetricConvolutionMM, unfolded_*).
    (@thnn $R:ident, $T:ty) => { pastey::paste! { nn_fn! {
        /// VolumetricConvolutionMM (`F.conv3d(padding=)`; weight nOutputPlane x nInputPlane*kT*kH*kW or 5-D; `finput`/`fgradInput` scratch). Forward: `output` = the convolution of `input` (bias may be NULL).
        fn [<THNN_ $R VolumetricConvolutionMM_updateOutput>](state: *mut THNNState, input: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, bias: *mut [<TH $R Tensor>] as opt_view, finput: *mut [<TH $R Tensor>] as opt_obj, k_t: c_int, k_w: c_int, k_h: c_int, d_t: c_int, d_w: c_int, d_h: c_int, p_t: c_int, p_w: c_int, p_h: c_int) {
            conv::update_output::<$T>(&conv::VOLUMETRIC_MM, &input, output, &weight, bias.as_ref(), finput.map(|t| &**t), &[k_t, k_w, k_h, d_t, d_w, d_h, p_t, p_w, p_h], 7)
        }
        /// VolumetricConvolutionMM (`F.conv3d(padding=)`; weight nOutputPlane x nInputPlane*kT*kH*kW or 5-D; `finput`/`fgradInput` scratch). `gradInput` (shaped like `input`) from `gradOutput`.
        fn [<THNN_ $R VolumetricConvolutionMM_updateGradInput>](state: *mut THNNState, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_input: *mut [<TH $R Tensor>] as obj, weight: *mut [<TH $R Tensor>] as view, finput: *mut [<TH $R Tensor>], fgrad_input: *mut [<TH $R Tensor>] as opt_obj, k_t: c_int, k_w: c_int, k_h: c_int, d_t: c_int, d_w: c_int, d_h: c_int, p_t: c_int, p_w: c_int, p_h: c_int) {
            let _ = finput; conv::update_grad_input::<$T>(&conv::VOLUMETRIC_MM, &input, &grad_output, grad_input, &weight, fgrad_input.map(|t| &**t), &[k_t, k_w, k_h, d_t, d_w, d_h, p_t, p_w, p_h], 8)
        }
        /// VolumetricConvolutionMM (`F.conv3d(padding=)`; weight nOutputPlane x nInputPlane*kT*kH*kW or 5-D; `finput`/`fgradInput` scratch). `gradWeight += scale * dL/dweight`, `gradBias += scale * dL/dbias` (gradBias may be NULL).
        fn [<THNN_ $R VolumetricConvolutionMM_accGradParameters>](state: *mut THNNState, input: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_weight: *mut [<TH $R Tensor>] as obj, grad_bias: *mut [<TH $R Tensor>] as opt_obj, finput: *mut [<TH $R Tensor>] as opt_obj, k_t: c_int, k_w: c_int, k_h: c_int, d_t: c_int, d_w: c_int, d_h: c_int, p_t: c_int, p_w: c_int, p_h: c_int, scale: f64) {
            conv::acc_grad_parameters::<$T>(&conv::VOLUMETRIC_MM, &input, &grad_output, grad_weight, grad_bias.map(|t| &**t), finput.map(|t| &**t), &[k_t, k_w, k_h, d_t, d_w, d_h, p_t, p_w, p_h], 7, scale)
        }
    }
    $crate::ffi::th_fn! {
        /// torch7's im2col: `finput` (nInputPlane*kH*kW x outputHeight*outputWidth elements,
        /// written in place) = the columns of `input` (as `F.unfold`). No state argument.
        fn [<THNN_ $R unfolded_copy>](finput: *mut [<TH $R Tensor>] as obj, input: *mut [<TH $R Tensor>] as view, k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int, n_input_plane: c_int, input_width: c_int, input_height: c_int, output_width: c_int, output_height: c_int) {
            unfold::unfolded_copy::<$T>(finput, &input, [k_w, k_h], [d_w, d_h], [pad_w, pad_h], n_input_plane, [input_width, input_height], [output_width, output_height])
        }
        /// torch7's col2im: `input` += the columns `finput` folded back (as `F.fold`, added to
        /// `input`'s values). No state argument.
        fn [<THNN_ $R unfolded_acc>](finput: *mut [<TH $R Tensor>] as view, input: *mut [<TH $R Tensor>] as obj, k_w: c_int, k_h: c_int, d_w: c_int, d_h: c_int, pad_w: c_int, pad_h: c_int, n_input_plane: c_int, input_width: c_int, input_height: c_int, output_width: c_int, output_height: c_int) {
            unfold::unfolded_acc::<$T>(&finput, input, [k_w, k_h], [d_w, d_h], [pad_w, pad_h], n_input_plane, [input_width, input_height], [output_width, output_height])
        }
    }

    } };
    (@thnn $R:ident, $T:ty, $S:ty, $A:ty, $I:ty) => { conv_api!(@both $R, $T, $S, $A); conv_api!(@thnn $R, $T); };
    (@thcunn $R:ident, $T:ty, $S:ty, $A:ty, $I:ty) => { conv_api!(@both $R, $T, $S, $A); };
}
nn_families!(conv_api);
