//! THC's convolutions (`THCTensorConv.h`) on device tensors: `THCudaTensor_conv2Dmv`,
//! `_conv2Dmm`, `_conv2DRevger`, `_conv2DRevgerm`, `_conv2Dmap` (cutorch's signatures), and the
//! same five for `THCudaDoubleTensor` and `THCudaHalfTensor` (THC had Float only; the engine,
//! `ops::conv::device`, is generic over the three). Semantics, `type` strings and the checks:
//! see `ops::conv::device`. Results equal TH's host functions of the same name (`THFloatTensor_conv2Dmv`
//! with alpha 1, ...) up to the summation order of the device GEMM.

#![allow(clippy::too_many_arguments)] // THC's signatures

use super::thc::*;
use super::*;
use crate::ops::conv::device::{self as conv, Type};
use std::ffi::{c_char, c_long};

/// THC's `type` argument (two characters, `'v'`/`'f'` then `'x'`/`'c'`) at position `arg`.
///
/// # Safety
/// `p` is NULL or a NUL-terminated C string.
unsafe fn conv_type(p: *const c_char, arg: u32) -> Result<Type> {
    let bytes = if p.is_null() {
        None
    } else {
        // SAFETY: a C string: its first byte is readable, and the second when the first is not NUL.
        let (a, b) = unsafe {
            let a = *p as u8;
            (a, if a == 0 { 0 } else { *p.add(1) as u8 })
        };
        Some([a, b])
    };
    conv::parse_type(bytes, arg)
}

macro_rules! thc_conv {
    ($($P:ident $T:ty, $C:ty;)*) => { $( pastey::paste! {
        th_fn! {
            /// `output` (nOutputPlane x oh x ow) = beta*output + sum_i conv(input[i], kernel[o][i]):
            /// `input` 3-D (planes x rows x cols), `kernel` 4-D (nOutputPlane x nInputPlane x kh x
            /// kw), `type` "vx", "vc", "fx" or "fc".
            fn [<$P Tensor_conv2Dmv>] @[state: *mut THCState](output: *mut [<$P Tensor>] as obj, beta: $C, input: *mut [<$P Tensor>] as view, kernel: *mut [<$P Tensor>] as view, srow: c_long, scol: c_long, type_: *const c_char as conv_type) {
                conv::mm::<$T>(output, <$T>::from_c(beta), &input, &kernel, srow, scol, type_, false)
            }
            /// Batched conv2Dmv: `input` B x nInputPlane x rows x cols, `output` B x
            /// nOutputPlane x oh x ow.
            fn [<$P Tensor_conv2Dmm>] @[state: *mut THCState](output: *mut [<$P Tensor>] as obj, beta: $C, input: *mut [<$P Tensor>] as view, kernel: *mut [<$P Tensor>] as view, srow: c_long, scol: c_long, type_: *const c_char as conv_type) {
                conv::mm::<$T>(output, <$T>::from_c(beta), &input, &kernel, srow, scol, type_, true)
            }
            /// `output` (nKernelPlane x nInputPlane x (rows-(kh-1)*srow) x (cols-(kw-1)*scol)) =
            /// beta*output + alpha*Rev(input[i], kernel[k]) (the kernel gradient of a strided valid
            /// cross-correlation); `input`, `kernel` 3-D.
            fn [<$P Tensor_conv2DRevger>] @[state: *mut THCState](output: *mut [<$P Tensor>] as obj, beta: $C, alpha: $C, input: *mut [<$P Tensor>] as view, kernel: *mut [<$P Tensor>] as view, srow: c_long, scol: c_long) {
                conv::revger::<$T>(output, <$T>::from_c(beta), <$T>::from_c(alpha), &input, &kernel, srow, scol, false)
            }
            /// Batched conv2DRevger: `input` B x nInputPlane x rows x cols, `kernel` B x
            /// nKernelPlane x kh x kw; the batch is summed.
            fn [<$P Tensor_conv2DRevgerm>] @[state: *mut THCState](output: *mut [<$P Tensor>] as obj, beta: $C, alpha: $C, input: *mut [<$P Tensor>] as view, kernel: *mut [<$P Tensor>] as view, srow: c_long, scol: c_long) {
                conv::revger::<$T>(output, <$T>::from_c(beta), <$T>::from_c(alpha), &input, &kernel, srow, scol, true)
            }
            /// `output[o] += sum_f xcorr(input[table[o*fanin+f][0]-1], kernel[table[o*fanin+f][1]-1])`,
            /// valid, `stride_x` along columns, `stride_y` along rows; `output` (kernel planes / fanin)
            /// x oh x ow, zeroed first only when its element count changes.
            fn [<$P Tensor_conv2Dmap>] @[state: *mut THCState](output: *mut [<$P Tensor>] as obj, input: *mut [<$P Tensor>] as view, kernel: *mut [<$P Tensor>] as view, stride_x: c_long, stride_y: c_long, table: *mut [<$P Tensor>] as view, fanin: c_long) {
                conv::map::<$T>(output, &input, &kernel, stride_x, stride_y, &table, fanin)
            }
        }
    } )* };
}
thc_conv! {
    THCuda f32, f32;
    THCudaDouble f64, f64;
    THCudaHalf half::f16, crate::core::dtype::THHalf;
}
