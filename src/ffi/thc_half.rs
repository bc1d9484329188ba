//! `THCHalf.h`: half <-> float conversions on the host and over device arrays, and what the
//! current device does with half precision.

use super::thc::*;
use super::*;
use crate::cuda::{ops, runtime};
use std::ffi::c_int;

/// THC's name of the descriptive buffer `sizeDesc` returns (the same type as TH's).
pub type THCDescBuff = super::general::THDescBuff;

/// float -> half (round to nearest even), on the host.
#[unsafe(no_mangle)]
pub extern "C" fn THC_float2half(a: f32) -> THHalf {
    half::f16::from_f32(a).to_c()
}

/// half -> float, on the host.
#[unsafe(no_mangle)]
pub extern "C" fn THC_half2float(a: THHalf) -> f32 {
    half::f16::from_c(a).to_f32()
}

/// The current device's compute capability.
fn arch() -> Result<(i32, i32)> {
    Ok(runtime::device(runtime::current())?.gpu.info().arch)
}

th_fn! {
    /// `out[i] = (half) in[i]` for `len` elements, both device arrays on the current device
    /// (on its current stream).
    fn THCFloat2Half @[state: *mut THCState](out: *mut THHalf, input: *mut f32, len: isize) {
        convert::<half::f16, f32>(out as u64, input as u64, len)
    }
    /// `out[i] = (float) in[i]` for `len` elements, both device arrays on the current device.
    fn THCHalf2Float @[state: *mut THCState](out: *mut f32, input: *mut THHalf, len: isize) {
        convert::<f32, half::f16>(out as u64, input as u64, len)
    }
    /// 1 when the current device has half-precision arithmetic instructions (compute
    /// capability 5.3 or later), else 0. th's kernels compute Half in f32 either way.
    fn THC_nativeHalfInstructions @[state: *mut THCState]() -> c_int = 0; {
        let (major, minor) = arch()?;
        Ok((major > 5 || (major == 5 && minor >= 3)) as c_int)
    }
    /// 1 when the current device runs half arithmetic at twice the f32 rate (compute
    /// capability 6.0, or 7.0 and later), else 0.
    fn THC_fastHalfInstructions @[state: *mut THCState]() -> c_int = 0; {
        let (major, minor) = arch()?;
        Ok((major >= 7 || (major == 6 && minor == 0)) as c_int)
    }
}

fn convert<D: crate::Scalar, S: crate::Scalar>(out: u64, input: u64, len: isize) -> Result<()> {
    let n = crate::core::storage::check_len(len).map_err(|e| e.at_arg(3))?;
    if n == 0 {
        return Ok(());
    }
    if out == 0 {
        return Err(Error::null(1, "out"));
    }
    if input == 0 {
        return Err(Error::null(2, "in"));
    }
    let dev = runtime::device(runtime::current())?;
    // SAFETY: caller contract: two device arrays of `len` elements on the current device.
    unsafe { ops::convert_raw::<D, S>(dev, out, input, n) }
}
