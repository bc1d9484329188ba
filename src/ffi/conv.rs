//! `generic/THTensorConv.h` (TH_API.md §7): convolutions and cross-correlations, for Byte, Char,
//! Short, Int, Long, Float, Double (as TH) and Half, BFloat16 (computed in f32).
//!
//! Every function computes `r_ = beta*r_ + alpha*conv(...)`; `r_` is resized by the callee and
//! zeroed instead of scaled when it was empty, changed element count, or `beta == 0`. `vf` is
//! "V" (valid) or "F" (full), `xc` "X" (cross-correlation) or "C" (convolution); only the first
//! character is read. Also exported (undeclared in torch7's header, as there): `conv2Dmap`,
//! `conv3Dmap` (map rows are 1-based (from, to) plane pairs, as in TH), `conv2d`, `conv3d`
//! (pointer helpers dispatching on vf/xc) and `convsize`. The pointer helpers read contiguous
//! row-major buffers and add into `r_` (no beta).

use super::*;
use crate::ops::conv::{self, Kind, Mode};
use std::ffi::c_char;

/// The first character of a C string (None for NULL).
///
/// # Safety
/// `p` must be NULL or point to at least one readable byte.
unsafe fn first(p: *const c_char) -> Option<u8> {
    if p.is_null() {
        None
    } else {
        // SAFETY: caller contract.
        Some(unsafe { *p } as u8)
    }
}

/// The convolution mode from `vf` and `xc` (errors name argument `arg`, `vf`'s position). As a
/// conversion (`vf: *const c_char as mode(xc)`) it hands the body the mode as `vf`.
///
/// # Safety
/// As for `first`.
unsafe fn mode(vf: *const c_char, xc: *const c_char, arg: u32) -> crate::Result<Mode> {
    // SAFETY: forwarded contract.
    conv::parse_mode(unsafe { first(vf) }, unsafe { first(xc) }, arg)
}

macro_rules! conv_api {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => { $( conv_api!(@one $R, $T, $C); )* };
    (@one Bool, $T:ty, $C:ty) => {};
    (@one $R:ident, $T:ty, $C:ty) => { pastey::paste! {
        conv_api!(@ptrs $R, $T, $C;
            validXCorr => Valid, false,
                "`r_` (`(ir-kr)/sr+1` x `(ic-kc)/sc+1`) += `alpha` * valid cross-correlation of `t_` (`ir x ic`) with `k_` (`kr x kc`).",
                "3-D validXCorr2Dptr: `r_` (`(it-kt)/st+1` x `(ir-kr)/sr+1` x `(ic-kc)/sc+1`).";
            validConv => Valid, true,
                "`r_` += `alpha` * valid convolution (flipped kernel) of `t_` with `k_`; sizes as validXCorr2Dptr.",
                "3-D validConv2Dptr.";
            fullXCorr => Full, true,
                "`r_` (`(ir-1)*sr+kr` x `(ic-1)*sc+kc`) += `alpha` * full cross-correlation of `t_` with `k_`.",
                "3-D fullXCorr2Dptr: `r_` (`(it-1)*st+kt` x `(ir-1)*sr+kr` x `(ic-1)*sc+kc`).";
            fullConv => Full, false,
                "`r_` (`(ir-1)*sr+kr` x `(ic-1)*sc+kc`) += `alpha` * full convolution of `t_` with `k_` (`r_[y*sr+ky][x*sc+kx] += t_[y][x]*k_[ky][kx]`).",
                "3-D fullConv2Dptr.";
            validXCorr Rev => Rev, false,
                "`r_` (`ir-(kr-1)*sr` x `ic-(kc-1)*sc`) += `alpha` * sum over (yy, xx) of `k_[yy][xx] * t_[yy*sr + .][xx*sc + .]` (kernel gradient of a strided valid cross-correlation).",
                "3-D validXCorr2DRevptr: `r_` (`it-(kt-1)*st` x `ir-(kr-1)*sr` x `ic-(kc-1)*sc`).";
        );

        th_fn! {
            /// `output_data += alpha * conv` of one 2-D plane, mode from `vf` ("V"/"F") and `xc` ("X"/"C").
            fn [<TH $R Tensor_conv2d>](output_data: *mut $C, alpha: $C, ptr_input: *mut $C, n_input_rows: i64, n_input_cols: i64, ptr_weight: *mut $C, n_kernel_rows: i64, n_kernel_cols: i64, srow: i64, scol: i64, vf: *const c_char as mode(xc), xc: *const c_char) {
                let (kind, flip) = conv::ptr_mode(vf);
                // SAFETY: buffers from the caller; $C and $T share their representation.
                unsafe {
                    conv::ptr_op::<$T>(output_data as *mut $T, <$T>::from_c(alpha), ptr_input as *const $T, [1, n_input_rows, n_input_cols],
                        ptr_weight as *const $T, [1, n_kernel_rows, n_kernel_cols], [1, srow, scol], [0, 9, 10], kind, flip, "conv2d")
                }
            }
            /// `output_data += alpha * conv` of one 3-D volume, mode from `vf` and `xc`.
            fn [<TH $R Tensor_conv3d>](output_data: *mut $C, alpha: $C, ptr_input: *mut $C, n_input_depth: i64, n_input_rows: i64, n_input_cols: i64, ptr_weight: *mut $C, n_kernel_depth: i64, n_kernel_rows: i64, n_kernel_cols: i64, sdepth: i64, srow: i64, scol: i64, vf: *const c_char as mode(xc), xc: *const c_char) {
                let (kind, flip) = conv::ptr_mode(vf);
                // SAFETY: buffers from the caller; $C and $T share their representation.
                unsafe {
                    conv::ptr_op::<$T>(output_data as *mut $T, <$T>::from_c(alpha), ptr_input as *const $T, [n_input_depth, n_input_rows, n_input_cols],
                        ptr_weight as *const $T, [n_kernel_depth, n_kernel_rows, n_kernel_cols], [sdepth, srow, scol], [11, 12, 13], kind, flip, "conv3d")
                }
            }
            /// Output size of one dimension: "V" `(x-k)/s + 1`, "F" `(x-1)*s + k`.
            fn [<TH $R Tensor_convsize>](x: i64, k: i64, s: i64, vf: *const c_char) -> i64 = 0; {
                // SAFETY: a C string from the caller.
                let full = match unsafe { first(vf) } {
                    Some(b'V') => false,
                    Some(b'F') => true,
                    None => return Err(crate::Error::null(4, "vf")),
                    Some(c) => return Err(crate::Error::invalid(format!("type of convolution can be 'V' or 'F', got '{}'", (c as char).escape_default())).at_arg(4)),
                };
                conv::convsize(x, k, s, full)
            }

            /// `r_` (nKernelPlane x nInputPlane x `ir-(kr-1)*srow` x `ic-(kc-1)*scol`) = beta*r_ + alpha*Rev(t_[i], k_[k]); `t_` 3-D (planes x rows x cols), `k_` 3-D.
            fn [<TH $R Tensor_conv2DRevger>](r_: *mut [<TH $R Tensor>] as obj, beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>] as view, k_: *mut [<TH $R Tensor>] as view, srow: i64, scol: i64) {
                conv::ger::<$T>(r_, <$T>::from_c(beta), <$T>::from_c(alpha), &t_, &k_, &[srow, scol], None, "conv2DRevger")
            }
            /// Batched conv2DRevger: `t_` (B x nInputPlane x rows x cols), `k_` (B x nKernelPlane x kr x kc); the batch is summed.
            fn [<TH $R Tensor_conv2DRevgerm>](r_: *mut [<TH $R Tensor>] as obj, beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>] as view, k_: *mut [<TH $R Tensor>] as view, srow: i64, scol: i64) {
                conv::revgerm::<$T>(r_, <$T>::from_c(beta), <$T>::from_c(alpha), &t_, &k_, &[srow, scol])
            }
            /// `r_` (nKernelPlane x nInputPlane x out) = beta*r_ + alpha*conv(t_[i], k_[k]) for every pair; `t_`, `k_` 3-D.
            fn [<TH $R Tensor_conv2Dger>](r_: *mut [<TH $R Tensor>] as obj, beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>] as view, k_: *mut [<TH $R Tensor>] as view, srow: i64, scol: i64, vf: *const c_char as mode(xc), xc: *const c_char) {
                conv::ger::<$T>(r_, <$T>::from_c(beta), <$T>::from_c(alpha), &t_, &k_, &[srow, scol], Some(vf), "conv2Dger")
            }
            /// `r_` (nOutputPlane x out) = beta*r_ + alpha * sum_i conv(t_[i], k_[o][i]); `t_` 3-D, `k_` 4-D (nOutputPlane x nInputPlane x kr x kc).
            fn [<TH $R Tensor_conv2Dmv>](r_: *mut [<TH $R Tensor>] as obj, beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>] as view, k_: *mut [<TH $R Tensor>] as view, srow: i64, scol: i64, vf: *const c_char as mode(xc), xc: *const c_char) {
                conv::mv::<$T>(r_, <$T>::from_c(beta), <$T>::from_c(alpha), &t_, &k_, &[srow, scol], vf, "conv2Dmv")
            }
            /// Batched conv2Dmv: `t_` (B x nInputPlane x rows x cols), `r_` (B x nOutputPlane x out).
            fn [<TH $R Tensor_conv2Dmm>](r_: *mut [<TH $R Tensor>] as obj, beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>] as view, k_: *mut [<TH $R Tensor>] as view, srow: i64, scol: i64, vf: *const c_char as mode(xc), xc: *const c_char) {
                conv::mm::<$T>(r_, <$T>::from_c(beta), <$T>::from_c(alpha), &t_, &k_, &[srow, scol], vf)
            }
            /// `r_` (2-D) = beta*r_ + alpha*conv(t_, k_) for 2-D `t_` and `k_`.
            fn [<TH $R Tensor_conv2Dmul>](r_: *mut [<TH $R Tensor>] as obj, beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>] as view, k_: *mut [<TH $R Tensor>] as view, srow: i64, scol: i64, vf: *const c_char as mode(xc), xc: *const c_char) {
                conv::mul::<$T>(r_, <$T>::from_c(beta), <$T>::from_c(alpha), &t_, &k_, &[srow, scol], vf, "conv2Dmul")
            }
            /// `r_[p]` = beta*r_[p] + alpha*conv(t_[p], k_[p]) for 3-D `t_`, `k_` with equal plane counts.
            fn [<TH $R Tensor_conv2Dcmul>](r_: *mut [<TH $R Tensor>] as obj, beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>] as view, k_: *mut [<TH $R Tensor>] as view, srow: i64, scol: i64, vf: *const c_char as mode(xc), xc: *const c_char) {
                conv::cmul::<$T>(r_, <$T>::from_c(beta), <$T>::from_c(alpha), &t_, &k_, &[srow, scol], vf, "conv2Dcmul")
            }
            /// `r_` = beta*r_, then for each row m of `map` (1-based from, to): `r_[to] += alpha*conv(t_[from], k_[m])`.
            fn [<TH $R Tensor_conv2Dmap>](r_: *mut [<TH $R Tensor>] as obj, beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>] as view, k_: *mut [<TH $R Tensor>] as view, map: *mut [<TH $R Tensor>] as view, srow: i64, scol: i64, vf: *const c_char as mode(xc), xc: *const c_char) {
                conv::map::<$T>(r_, <$T>::from_c(beta), <$T>::from_c(alpha), &t_, &k_, &map, &[srow, scol], vf, "conv2Dmap")
            }
            /// 3-D conv2DRevger: `t_`, `k_` 4-D (planes x depth x rows x cols), `r_` 5-D.
            fn [<TH $R Tensor_conv3DRevger>](r_: *mut [<TH $R Tensor>] as obj, beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>] as view, k_: *mut [<TH $R Tensor>] as view, sdepth: i64, srow: i64, scol: i64) {
                conv::ger::<$T>(r_, <$T>::from_c(beta), <$T>::from_c(alpha), &t_, &k_, &[sdepth, srow, scol], None, "conv3DRevger")
            }
            /// 3-D conv2Dger: `t_`, `k_` 4-D, `r_` 5-D (nKernelPlane x nInputPlane x out).
            fn [<TH $R Tensor_conv3Dger>](r_: *mut [<TH $R Tensor>] as obj, beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>] as view, k_: *mut [<TH $R Tensor>] as view, sdepth: i64, srow: i64, scol: i64, vf: *const c_char as mode(xc), xc: *const c_char) {
                conv::ger::<$T>(r_, <$T>::from_c(beta), <$T>::from_c(alpha), &t_, &k_, &[sdepth, srow, scol], Some(vf), "conv3Dger")
            }
            /// 3-D conv2Dmv: `t_` 4-D, `k_` 5-D (nOutputPlane x nInputPlane x kt x kr x kc), `r_` 4-D.
            fn [<TH $R Tensor_conv3Dmv>](r_: *mut [<TH $R Tensor>] as obj, beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>] as view, k_: *mut [<TH $R Tensor>] as view, sdepth: i64, srow: i64, scol: i64, vf: *const c_char as mode(xc), xc: *const c_char) {
                conv::mv::<$T>(r_, <$T>::from_c(beta), <$T>::from_c(alpha), &t_, &k_, &[sdepth, srow, scol], vf, "conv3Dmv")
            }
            /// 3-D conv2Dmul: `t_`, `k_`, `r_` 3-D volumes.
            fn [<TH $R Tensor_conv3Dmul>](r_: *mut [<TH $R Tensor>] as obj, beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>] as view, k_: *mut [<TH $R Tensor>] as view, sdepth: i64, srow: i64, scol: i64, vf: *const c_char as mode(xc), xc: *const c_char) {
                conv::mul::<$T>(r_, <$T>::from_c(beta), <$T>::from_c(alpha), &t_, &k_, &[sdepth, srow, scol], vf, "conv3Dmul")
            }
            /// 3-D conv2Dcmul: `t_`, `k_`, `r_` 4-D with equal plane counts.
            fn [<TH $R Tensor_conv3Dcmul>](r_: *mut [<TH $R Tensor>] as obj, beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>] as view, k_: *mut [<TH $R Tensor>] as view, sdepth: i64, srow: i64, scol: i64, vf: *const c_char as mode(xc), xc: *const c_char) {
                conv::cmul::<$T>(r_, <$T>::from_c(beta), <$T>::from_c(alpha), &t_, &k_, &[sdepth, srow, scol], vf, "conv3Dcmul")
            }
            /// 3-D conv2Dmap: `t_`, `k_`, `r_` 4-D; `map` rows are 1-based (from, to) plane pairs.
            fn [<TH $R Tensor_conv3Dmap>](r_: *mut [<TH $R Tensor>] as obj, beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>] as view, k_: *mut [<TH $R Tensor>] as view, map: *mut [<TH $R Tensor>] as view, sdepth: i64, srow: i64, scol: i64, vf: *const c_char as mode(xc), xc: *const c_char) {
                conv::map::<$T>(r_, <$T>::from_c(beta), <$T>::from_c(alpha), &t_, &k_, &map, &[sdepth, srow, scol], vf, "conv3Dmap")
            }
        }
    } };
    // The pointer forms, named `<pre>2D[Rev]ptr` then `<pre>3D[Rev]ptr` (all 2-D ones first, as in TH).
    (@ptrs $R:ident, $T:ty, $C:ty; $($pre:ident $($rev:ident)? => $kind:ident, $flip:expr, $doc2:literal, $doc3:literal;)*) => { pastey::paste! {
        th_fn! {
            $(
                #[doc = $doc2]
                fn [<TH $R Tensor_ $pre 2D $($rev)? ptr>](r_: *mut $C, alpha: $C, t_: *mut $C, ir: i64, ic: i64, k_: *mut $C, kr: i64, kc: i64, sr: i64, sc: i64) {
                    // SAFETY: buffers from the caller; $C and $T share their representation.
                    unsafe {
                        conv::ptr_op::<$T>(r_ as *mut $T, <$T>::from_c(alpha), t_ as *const $T, [1, ir, ic], k_ as *const $T, [1, kr, kc],
                            [1, sr, sc], [0, 9, 10], Kind::$kind, $flip, stringify!([<TH $R Tensor_ $pre 2D $($rev)? ptr>]))
                    }
                }
            )*
            $(
                #[doc = $doc3]
                fn [<TH $R Tensor_ $pre 3D $($rev)? ptr>](r_: *mut $C, alpha: $C, t_: *mut $C, it: i64, ir: i64, ic: i64, k_: *mut $C, kt: i64, kr: i64, kc: i64, st: i64, sr: i64, sc: i64) {
                    // SAFETY: buffers from the caller; $C and $T share their representation.
                    unsafe {
                        conv::ptr_op::<$T>(r_ as *mut $T, <$T>::from_c(alpha), t_ as *const $T, [it, ir, ic], k_ as *const $T, [kt, kr, kc],
                            [st, sr, sc], [11, 12, 13], Kind::$kind, $flip, stringify!([<TH $R Tensor_ $pre 3D $($rev)? ptr>]))
                    }
                }
            )*
        }
    } };
}
crate::th_dtypes!(conv_api);
