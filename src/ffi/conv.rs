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

/// The view of a borrowed tensor argument.
///
/// # Safety
/// `p` must be NULL or a live handle.
unsafe fn view<H: Handle<Obj = crate::core::tensor::Tensor<T>>, T: crate::Scalar>(
    p: *mut H,
    arg: u32,
) -> crate::Result<crate::core::tensor::View<T>> {
    // SAFETY: forwarded contract.
    Ok(unsafe { obj(p, arg)? }.view())
}

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
        conv_api!(@ptr2 $R, $T, $C, [<TH $R Tensor_validXCorr2Dptr>], Valid, false,
            "`r_` (`(ir-kr)/sr+1` x `(ic-kc)/sc+1`) += `alpha` * valid cross-correlation of `t_` (`ir x ic`) with `k_` (`kr x kc`).");
        conv_api!(@ptr2 $R, $T, $C, [<TH $R Tensor_validConv2Dptr>], Valid, true,
            "`r_` += `alpha` * valid convolution (flipped kernel) of `t_` with `k_`; sizes as validXCorr2Dptr.");
        conv_api!(@ptr2 $R, $T, $C, [<TH $R Tensor_fullXCorr2Dptr>], Full, true,
            "`r_` (`(ir-1)*sr+kr` x `(ic-1)*sc+kc`) += `alpha` * full cross-correlation of `t_` with `k_`.");
        conv_api!(@ptr2 $R, $T, $C, [<TH $R Tensor_fullConv2Dptr>], Full, false,
            "`r_` (`(ir-1)*sr+kr` x `(ic-1)*sc+kc`) += `alpha` * full convolution of `t_` with `k_` (`r_[y*sr+ky][x*sc+kx] += t_[y][x]*k_[ky][kx]`).");
        conv_api!(@ptr2 $R, $T, $C, [<TH $R Tensor_validXCorr2DRevptr>], Rev, false,
            "`r_` (`ir-(kr-1)*sr` x `ic-(kc-1)*sc`) += `alpha` * sum over (yy, xx) of `k_[yy][xx] * t_[yy*sr + .][xx*sc + .]` (kernel gradient of a strided valid cross-correlation).");
        conv_api!(@ptr3 $R, $T, $C, [<TH $R Tensor_validXCorr3Dptr>], Valid, false,
            "3-D validXCorr2Dptr: `r_` (`(it-kt)/st+1` x `(ir-kr)/sr+1` x `(ic-kc)/sc+1`).");
        conv_api!(@ptr3 $R, $T, $C, [<TH $R Tensor_validConv3Dptr>], Valid, true,
            "3-D validConv2Dptr.");
        conv_api!(@ptr3 $R, $T, $C, [<TH $R Tensor_fullXCorr3Dptr>], Full, true,
            "3-D fullXCorr2Dptr: `r_` (`(it-1)*st+kt` x `(ir-1)*sr+kr` x `(ic-1)*sc+kc`).");
        conv_api!(@ptr3 $R, $T, $C, [<TH $R Tensor_fullConv3Dptr>], Full, false,
            "3-D fullConv2Dptr.");
        conv_api!(@ptr3 $R, $T, $C, [<TH $R Tensor_validXCorr3DRevptr>], Rev, false,
            "3-D validXCorr2DRevptr: `r_` (`it-(kt-1)*st` x `ir-(kr-1)*sr` x `ic-(kc-1)*sc`).");

        th_fn! {
            /// `output_data += alpha * conv` of one 2-D plane, mode from `vf` ("V"/"F") and `xc` ("X"/"C").
            fn [<TH $R Tensor_conv2d>](output_data: *mut $C, alpha: $C, ptr_input: *mut $C, n_input_rows: i64, n_input_cols: i64, ptr_weight: *mut $C, n_kernel_rows: i64, n_kernel_cols: i64, srow: i64, scol: i64, vf: *const c_char, xc: *const c_char) {
                // SAFETY: C strings from the caller.
                let m = unsafe { mode(vf, xc, 11)? };
                let (kind, flip) = conv::ptr_mode(m);
                // SAFETY: buffers from the caller; $C and $T share their representation.
                unsafe {
                    conv::ptr_op::<$T>(output_data as *mut $T, <$T>::from_c(alpha), ptr_input as *const $T, [1, n_input_rows, n_input_cols],
                        ptr_weight as *const $T, [1, n_kernel_rows, n_kernel_cols], [1, srow, scol], [0, 9, 10], kind, flip, "conv2d")
                }
            }
        }
        th_fn! {
            /// `output_data += alpha * conv` of one 3-D volume, mode from `vf` and `xc`.
            fn [<TH $R Tensor_conv3d>](output_data: *mut $C, alpha: $C, ptr_input: *mut $C, n_input_depth: i64, n_input_rows: i64, n_input_cols: i64, ptr_weight: *mut $C, n_kernel_depth: i64, n_kernel_rows: i64, n_kernel_cols: i64, sdepth: i64, srow: i64, scol: i64, vf: *const c_char, xc: *const c_char) {
                // SAFETY: C strings from the caller.
                let m = unsafe { mode(vf, xc, 14)? };
                let (kind, flip) = conv::ptr_mode(m);
                // SAFETY: buffers from the caller; $C and $T share their representation.
                unsafe {
                    conv::ptr_op::<$T>(output_data as *mut $T, <$T>::from_c(alpha), ptr_input as *const $T, [n_input_depth, n_input_rows, n_input_cols],
                        ptr_weight as *const $T, [n_kernel_depth, n_kernel_rows, n_kernel_cols], [sdepth, srow, scol], [11, 12, 13], kind, flip, "conv3d")
                }
            }
        }
        th_fn! {
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
        }

        th_fn! {
            /// `r_` (nKernelPlane x nInputPlane x `ir-(kr-1)*srow` x `ic-(kc-1)*scol`) = beta*r_ + alpha*Rev(t_[i], k_[k]); `t_` 3-D (planes x rows x cols), `k_` 3-D.
            fn [<TH $R Tensor_conv2DRevger>](r_: *mut [<TH $R Tensor>], beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>], k_: *mut [<TH $R Tensor>], srow: i64, scol: i64) {
                // SAFETY: handles from the caller.
                let (r, t, k) = unsafe { (obj(r_, 1)?, view(t_, 4)?, view(k_, 5)?) };
                conv::ger::<$T>(r, <$T>::from_c(beta), <$T>::from_c(alpha), &t, &k, &[srow, scol], None, "conv2DRevger")
            }
        }
        th_fn! {
            /// Batched conv2DRevger: `t_` (B x nInputPlane x rows x cols), `k_` (B x nKernelPlane x kr x kc); the batch is summed.
            fn [<TH $R Tensor_conv2DRevgerm>](r_: *mut [<TH $R Tensor>], beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>], k_: *mut [<TH $R Tensor>], srow: i64, scol: i64) {
                // SAFETY: handles from the caller.
                let (r, t, k) = unsafe { (obj(r_, 1)?, view(t_, 4)?, view(k_, 5)?) };
                conv::revgerm::<$T>(r, <$T>::from_c(beta), <$T>::from_c(alpha), &t, &k, &[srow, scol])
            }
        }
        th_fn! {
            /// `r_` (nKernelPlane x nInputPlane x out) = beta*r_ + alpha*conv(t_[i], k_[k]) for every pair; `t_`, `k_` 3-D.
            fn [<TH $R Tensor_conv2Dger>](r_: *mut [<TH $R Tensor>], beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>], k_: *mut [<TH $R Tensor>], srow: i64, scol: i64, vf: *const c_char, xc: *const c_char) {
                // SAFETY: handles and strings from the caller.
                let (r, t, k, m) = unsafe { (obj(r_, 1)?, view(t_, 4)?, view(k_, 5)?, mode(vf, xc, 8)?) };
                conv::ger::<$T>(r, <$T>::from_c(beta), <$T>::from_c(alpha), &t, &k, &[srow, scol], Some(m), "conv2Dger")
            }
        }
        th_fn! {
            /// `r_` (nOutputPlane x out) = beta*r_ + alpha * sum_i conv(t_[i], k_[o][i]); `t_` 3-D, `k_` 4-D (nOutputPlane x nInputPlane x kr x kc).
            fn [<TH $R Tensor_conv2Dmv>](r_: *mut [<TH $R Tensor>], beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>], k_: *mut [<TH $R Tensor>], srow: i64, scol: i64, vf: *const c_char, xc: *const c_char) {
                // SAFETY: handles and strings from the caller.
                let (r, t, k, m) = unsafe { (obj(r_, 1)?, view(t_, 4)?, view(k_, 5)?, mode(vf, xc, 8)?) };
                conv::mv::<$T>(r, <$T>::from_c(beta), <$T>::from_c(alpha), &t, &k, &[srow, scol], m, "conv2Dmv")
            }
        }
        th_fn! {
            /// Batched conv2Dmv: `t_` (B x nInputPlane x rows x cols), `r_` (B x nOutputPlane x out).
            fn [<TH $R Tensor_conv2Dmm>](r_: *mut [<TH $R Tensor>], beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>], k_: *mut [<TH $R Tensor>], srow: i64, scol: i64, vf: *const c_char, xc: *const c_char) {
                // SAFETY: handles and strings from the caller.
                let (r, t, k, m) = unsafe { (obj(r_, 1)?, view(t_, 4)?, view(k_, 5)?, mode(vf, xc, 8)?) };
                conv::mm::<$T>(r, <$T>::from_c(beta), <$T>::from_c(alpha), &t, &k, &[srow, scol], m)
            }
        }
        th_fn! {
            /// `r_` (2-D) = beta*r_ + alpha*conv(t_, k_) for 2-D `t_` and `k_`.
            fn [<TH $R Tensor_conv2Dmul>](r_: *mut [<TH $R Tensor>], beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>], k_: *mut [<TH $R Tensor>], srow: i64, scol: i64, vf: *const c_char, xc: *const c_char) {
                // SAFETY: handles and strings from the caller.
                let (r, t, k, m) = unsafe { (obj(r_, 1)?, view(t_, 4)?, view(k_, 5)?, mode(vf, xc, 8)?) };
                conv::mul::<$T>(r, <$T>::from_c(beta), <$T>::from_c(alpha), &t, &k, &[srow, scol], m, "conv2Dmul")
            }
        }
        th_fn! {
            /// `r_[p]` = beta*r_[p] + alpha*conv(t_[p], k_[p]) for 3-D `t_`, `k_` with equal plane counts.
            fn [<TH $R Tensor_conv2Dcmul>](r_: *mut [<TH $R Tensor>], beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>], k_: *mut [<TH $R Tensor>], srow: i64, scol: i64, vf: *const c_char, xc: *const c_char) {
                // SAFETY: handles and strings from the caller.
                let (r, t, k, m) = unsafe { (obj(r_, 1)?, view(t_, 4)?, view(k_, 5)?, mode(vf, xc, 8)?) };
                conv::cmul::<$T>(r, <$T>::from_c(beta), <$T>::from_c(alpha), &t, &k, &[srow, scol], m, "conv2Dcmul")
            }
        }
        th_fn! {
            /// `r_` = beta*r_, then for each row m of `map` (1-based from, to): `r_[to] += alpha*conv(t_[from], k_[m])`.
            fn [<TH $R Tensor_conv2Dmap>](r_: *mut [<TH $R Tensor>], beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>], k_: *mut [<TH $R Tensor>], map: *mut [<TH $R Tensor>], srow: i64, scol: i64, vf: *const c_char, xc: *const c_char) {
                // SAFETY: handles and strings from the caller.
                let (r, t, k, mp, m) = unsafe { (obj(r_, 1)?, view(t_, 4)?, view(k_, 5)?, view(map, 6)?, mode(vf, xc, 9)?) };
                conv::map::<$T>(r, <$T>::from_c(beta), <$T>::from_c(alpha), &t, &k, &mp, &[srow, scol], m, "conv2Dmap")
            }
        }
        th_fn! {
            /// 3-D conv2DRevger: `t_`, `k_` 4-D (planes x depth x rows x cols), `r_` 5-D.
            fn [<TH $R Tensor_conv3DRevger>](r_: *mut [<TH $R Tensor>], beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>], k_: *mut [<TH $R Tensor>], sdepth: i64, srow: i64, scol: i64) {
                // SAFETY: handles from the caller.
                let (r, t, k) = unsafe { (obj(r_, 1)?, view(t_, 4)?, view(k_, 5)?) };
                conv::ger::<$T>(r, <$T>::from_c(beta), <$T>::from_c(alpha), &t, &k, &[sdepth, srow, scol], None, "conv3DRevger")
            }
        }
        th_fn! {
            /// 3-D conv2Dger: `t_`, `k_` 4-D, `r_` 5-D (nKernelPlane x nInputPlane x out).
            fn [<TH $R Tensor_conv3Dger>](r_: *mut [<TH $R Tensor>], beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>], k_: *mut [<TH $R Tensor>], sdepth: i64, srow: i64, scol: i64, vf: *const c_char, xc: *const c_char) {
                // SAFETY: handles and strings from the caller.
                let (r, t, k, m) = unsafe { (obj(r_, 1)?, view(t_, 4)?, view(k_, 5)?, mode(vf, xc, 9)?) };
                conv::ger::<$T>(r, <$T>::from_c(beta), <$T>::from_c(alpha), &t, &k, &[sdepth, srow, scol], Some(m), "conv3Dger")
            }
        }
        th_fn! {
            /// 3-D conv2Dmv: `t_` 4-D, `k_` 5-D (nOutputPlane x nInputPlane x kt x kr x kc), `r_` 4-D.
            fn [<TH $R Tensor_conv3Dmv>](r_: *mut [<TH $R Tensor>], beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>], k_: *mut [<TH $R Tensor>], sdepth: i64, srow: i64, scol: i64, vf: *const c_char, xc: *const c_char) {
                // SAFETY: handles and strings from the caller.
                let (r, t, k, m) = unsafe { (obj(r_, 1)?, view(t_, 4)?, view(k_, 5)?, mode(vf, xc, 9)?) };
                conv::mv::<$T>(r, <$T>::from_c(beta), <$T>::from_c(alpha), &t, &k, &[sdepth, srow, scol], m, "conv3Dmv")
            }
        }
        th_fn! {
            /// 3-D conv2Dmul: `t_`, `k_`, `r_` 3-D volumes.
            fn [<TH $R Tensor_conv3Dmul>](r_: *mut [<TH $R Tensor>], beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>], k_: *mut [<TH $R Tensor>], sdepth: i64, srow: i64, scol: i64, vf: *const c_char, xc: *const c_char) {
                // SAFETY: handles and strings from the caller.
                let (r, t, k, m) = unsafe { (obj(r_, 1)?, view(t_, 4)?, view(k_, 5)?, mode(vf, xc, 9)?) };
                conv::mul::<$T>(r, <$T>::from_c(beta), <$T>::from_c(alpha), &t, &k, &[sdepth, srow, scol], m, "conv3Dmul")
            }
        }
        th_fn! {
            /// 3-D conv2Dcmul: `t_`, `k_`, `r_` 4-D with equal plane counts.
            fn [<TH $R Tensor_conv3Dcmul>](r_: *mut [<TH $R Tensor>], beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>], k_: *mut [<TH $R Tensor>], sdepth: i64, srow: i64, scol: i64, vf: *const c_char, xc: *const c_char) {
                // SAFETY: handles and strings from the caller.
                let (r, t, k, m) = unsafe { (obj(r_, 1)?, view(t_, 4)?, view(k_, 5)?, mode(vf, xc, 9)?) };
                conv::cmul::<$T>(r, <$T>::from_c(beta), <$T>::from_c(alpha), &t, &k, &[sdepth, srow, scol], m, "conv3Dcmul")
            }
        }
        th_fn! {
            /// 3-D conv2Dmap: `t_`, `k_`, `r_` 4-D; `map` rows are 1-based (from, to) plane pairs.
            fn [<TH $R Tensor_conv3Dmap>](r_: *mut [<TH $R Tensor>], beta: $C, alpha: $C, t_: *mut [<TH $R Tensor>], k_: *mut [<TH $R Tensor>], map: *mut [<TH $R Tensor>], sdepth: i64, srow: i64, scol: i64, vf: *const c_char, xc: *const c_char) {
                // SAFETY: handles and strings from the caller.
                let (r, t, k, mp, m) = unsafe { (obj(r_, 1)?, view(t_, 4)?, view(k_, 5)?, view(map, 6)?, mode(vf, xc, 10)?) };
                conv::map::<$T>(r, <$T>::from_c(beta), <$T>::from_c(alpha), &t, &k, &mp, &[sdepth, srow, scol], m, "conv3Dmap")
            }
        }
    } };
    (@ptr2 $R:ident, $T:ty, $C:ty, $name:ident, $kind:ident, $flip:expr, $doc:expr) => {
        th_fn! {
            #[doc = $doc]
            fn $name(r_: *mut $C, alpha: $C, t_: *mut $C, ir: i64, ic: i64, k_: *mut $C, kr: i64, kc: i64, sr: i64, sc: i64) {
                // SAFETY: buffers from the caller; $C and $T share their representation.
                unsafe {
                    conv::ptr_op::<$T>(r_ as *mut $T, <$T>::from_c(alpha), t_ as *const $T, [1, ir, ic], k_ as *const $T, [1, kr, kc],
                        [1, sr, sc], [0, 9, 10], Kind::$kind, $flip, stringify!($name))
                }
            }
        }
    };
    (@ptr3 $R:ident, $T:ty, $C:ty, $name:ident, $kind:ident, $flip:expr, $doc:expr) => {
        th_fn! {
            #[doc = $doc]
            fn $name(r_: *mut $C, alpha: $C, t_: *mut $C, it: i64, ir: i64, ic: i64, k_: *mut $C, kt: i64, kr: i64, kc: i64, st: i64, sr: i64, sc: i64) {
                // SAFETY: buffers from the caller; $C and $T share their representation.
                unsafe {
                    conv::ptr_op::<$T>(r_ as *mut $T, <$T>::from_c(alpha), t_ as *const $T, [it, ir, ic], k_ as *const $T, [kt, kr, kc],
                        [st, sr, sc], [11, 12, 13], Kind::$kind, $flip, stringify!($name))
                }
            }
        }
    };
}
crate::th_dtypes!(conv_api);
