//! `THGeneral.h`: errors and handlers, `THAlloc`/`THRealloc`/`THFree`, threads, half-precision
//! conversion, log-space helpers and size utilities.

use super::{CRepr, th_fn};
use crate::core::allocator;
use crate::core::dtype::{THBFloat16, THHalf};
use crate::core::error::{self, Error, THArgErrorHandlerFunction, THErrorCode, THErrorHandlerFunction};
use crate::core::tensor::size_desc;
use crate::exec::parallel;
use crate::ops::num;
use std::ffi::{CStr, c_char, c_int, c_void};

/// Length of the text buffer in `THDescBuff`.
pub const TH_DESC_BUFF_LEN: usize = 64;

/// A short description returned by value (`desc`, `sizeDesc`), NUL-terminated.
#[repr(C)]
pub struct THDescBuff {
    pub str: [c_char; TH_DESC_BUFF_LEN],
}

impl THDescBuff {
    /// Copies `s`, truncating to `"...]"` when it does not fit (as TH does).
    pub(crate) fn from_str(s: &str) -> Self {
        let mut b = THDescBuff { str: [0; TH_DESC_BUFF_LEN] };
        let bytes = s.as_bytes();
        let src: Vec<u8> = if bytes.len() < TH_DESC_BUFF_LEN {
            bytes.to_vec()
        } else {
            let mut v = bytes[..TH_DESC_BUFF_LEN - 5].to_vec();
            v.extend_from_slice(b"...]");
            v
        };
        for (d, &c) in b.str.iter_mut().zip(&src) {
            *d = c as c_char;
        }
        b
    }
    pub(crate) fn empty() -> Self {
        THDescBuff { str: [0; TH_DESC_BUFF_LEN] }
    }
}

/// Exports the handler setters: each stores `(new_handler, data)` through its `error` function.
macro_rules! handler_setters {
    ($($(#[$m:meta])* fn $name:ident($F:ty) => $set:path;)*) => {$(
        $(#[$m])*
        #[unsafe(no_mangle)]
        pub extern "C" fn $name(new_handler: $F, data: *mut c_void) {
            $set(new_handler, data)
        }
    )*};
}
handler_setters! {
    /// Installs this thread's error handler (NULL restores the default: record only).
    /// Unlike torch7, a handler may return; the failed call then returns its sentinel.
    fn THSetErrorHandler(THErrorHandlerFunction) => error::set_handler;
    /// Installs the process-wide error handler used by threads without their own.
    fn THSetDefaultErrorHandler(THErrorHandlerFunction) => error::set_default_handler;
    /// Installs this thread's argument-error handler (`argNumber` is the 1-based position of the
    /// offending argument). Argument errors go to the error handler when no argument handler is set.
    fn THSetArgErrorHandler(THArgErrorHandlerFunction) => error::set_arg_handler;
    /// Installs the process-wide argument-error handler.
    fn THSetDefaultArgErrorHandler(THArgErrorHandlerFunction) => error::set_default_arg_handler;
}

/// Message of the last failed call on this thread, or NULL. Valid until the next failure or
/// `THClearLastError` on this thread. Successful calls do not clear it.
#[unsafe(no_mangle)]
pub extern "C" fn THGetLastError() -> *const c_char {
    error::last_message()
}

/// Code of the last failed call on this thread (`TH_OK` when none since the last clear).
#[unsafe(no_mangle)]
pub extern "C" fn THGetLastErrorCode() -> c_int {
    error::last_code() as c_int
}

/// Forgets this thread's last error.
#[unsafe(no_mangle)]
pub extern "C" fn THClearLastError() {
    error::clear()
}

/// Reports an error from C code (used by `_THError`, `_THArgCheck`, `_THAssertionFailed`):
/// records it and calls the handler. `arg_number <= 0` means "not an argument error".
///
/// # Safety
/// `msg` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn THReportError(code: c_int, arg_number: c_int, msg: *const c_char) {
    let text = if msg.is_null() {
        String::from("(no message)")
    } else {
        // SAFETY: caller contract.
        unsafe { CStr::from_ptr(msg) }.to_string_lossy().into_owned()
    };
    let code = THErrorCode::from_int(code).filter(|&c| c != THErrorCode::TH_OK).unwrap_or(THErrorCode::TH_ERR_USER);
    let mut e = Error::new(code, text);
    if arg_number > 0 {
        e = e.at_arg(arg_number as u32);
    }
    error::report(&e);
}

/// Sets a function called (then the allocation retried once) when `THAlloc`/`THRealloc` fail.
#[unsafe(no_mangle)]
pub extern "C" fn THSetGCHandler(
    torch_gc_handler_function: Option<unsafe extern "C" fn(data: *mut c_void)>,
    data: *mut c_void,
) {
    allocator::set_gc_handler(torch_gc_handler_function, data);
}

/// Lets custom allocators report heap usage changes (kept as a running total).
#[unsafe(no_mangle)]
pub extern "C" fn THHeapUpdate(size: isize) {
    allocator::heap_update(size);
}

th_fn! {
    /// Allocates `size` bytes aligned to 64 (NULL for 0). Release with `THFree` or `free`.
    fn THAlloc(size: isize) -> *mut c_void = std::ptr::null_mut(); {
        allocator::with_gc_retry(|| allocator::th_alloc(size)).map(|p| p as *mut c_void)
    }

    /// Resizes a `THAlloc` block, keeping its prefix and alignment. `(NULL, n)` allocates,
    /// `(p, 0)` frees and returns NULL. On failure returns NULL and `ptr` is untouched.
    fn THRealloc(ptr: *mut c_void, size: isize) -> *mut c_void = std::ptr::null_mut(); {
        // SAFETY: the caller passes NULL or a THAlloc/malloc block.
        allocator::with_gc_retry(|| unsafe { allocator::th_realloc(ptr as *mut u8, size) }).map(|p| p as *mut c_void)
    }
}

/// Frees a `THAlloc` block (NULL is fine).
///
/// # Safety
/// `ptr` must be NULL or a live block from `THAlloc`/`THRealloc`/`malloc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn THFree(ptr: *mut c_void) {
    // SAFETY: caller contract.
    unsafe { allocator::th_free(ptr as *mut u8) }
}

th_fn! {
    /// Sets the number of threads for parallel loops (must be >= 1).
    fn THSetNumThreads(num_threads: c_int) {
        if num_threads < 1 {
            return Err(Error::invalid(format!("number of threads must be >= 1, got {num_threads}")).at_arg(1));
        }
        parallel::set_num_threads(num_threads as usize);
        Ok(())
    }
}

/// Number of threads parallel loops use.
#[unsafe(no_mangle)]
pub extern "C" fn THGetNumThreads() -> c_int {
    parallel::num_threads() as c_int
}

/// Number of cores available to this process.
#[unsafe(no_mangle)]
pub extern "C" fn THGetNumCores() -> c_int {
    parallel::num_cores() as c_int
}

/// Resets the thread count to its default (`TH_NUM_THREADS` or the number of cores).
#[unsafe(no_mangle)]
pub extern "C" fn THInferNumThreads() {
    parallel::infer_num_threads();
}

/// `log(1 + x)`, accurate for small `x`.
#[unsafe(no_mangle)]
pub extern "C" fn THLog1p(x: f64) -> f64 {
    x.ln_1p()
}

/// `log(2*pi)`.
#[unsafe(no_mangle)]
pub static THLog2Pi: f64 = 1.837_877_066_409_345_5;
/// The log of zero used by `THLogAdd`/`THLogSub`.
#[unsafe(no_mangle)]
pub static THLogZero: f64 = f64::NEG_INFINITY;
/// The log of one.
#[unsafe(no_mangle)]
pub static THLogOne: f64 = 0.0;

/// `log(exp(a) + exp(b))` without overflow.
#[unsafe(no_mangle)]
pub extern "C" fn THLogAdd(log_a: f64, log_b: f64) -> f64 {
    num::log_add(log_a, log_b)
}

th_fn! {
    /// `log(exp(a) - exp(b))`; requires `log_a >= log_b` (an error otherwise, returning 0).
    fn THLogSub(log_a: f64, log_b: f64) -> f64 = 0.0; {
        num::log_sub(log_a, log_b)
    }
}

/// Fast approximation of `exp(-x)` for `x >= 0` (TH's polynomial; 0 for `x >= 13`).
#[unsafe(no_mangle)]
pub extern "C" fn THExpMinusApprox(x: f64) -> f64 {
    num::exp_minus_approx(x)
}

/// Reads `n` sizes from a C array (NULL with `n > 0` is an error).
///
/// # Safety
/// `p` must point to `n` readable values when non-NULL.
pub(crate) unsafe fn c_sizes<'a>(p: *const i64, n: i64, arg: u32) -> crate::Result<&'a [i64]> {
    let n = usize::try_from(n).map_err(|_| Error::size(format!("invalid number of dimensions {n}")).at_arg(arg + 1))?;
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Error::null(arg, "sizes"));
    }
    // SAFETY: caller contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

th_fn! {
    /// `"[2 x 3 x 4]"` for a size array.
    fn _THSizeDesc(size: *const i64 as c_sizes(ndim), ndim: i64) -> THDescBuff = THDescBuff::empty(); {
        Ok(THDescBuff::from_str(&size_desc(size)))
    }

    /// 1 if the two size arrays are equal.
    fn THSize_isSameSizeAs(size_a: *const i64 as c_sizes(dims_a), dims_a: i64, size_b: *const i64 as c_sizes(dims_b), dims_b: i64) -> c_int = 0; {
        Ok((size_a == size_b) as c_int)
    }

    /// Product of `dims` sizes (0 when `dims == 0`); overflow is an error.
    fn THSize_nElement(dims: i64, size: *mut i64 as c_sizes(dims)) -> isize = 0; {
        Ok(crate::core::tensor::numel(size)? as isize)
    }
}

/// float -> IEEE half bits (round to nearest even).
///
/// # Safety
/// Both pointers must be valid (NULL is ignored).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TH_float2halfbits(src: *mut f32, dest: *mut u16) {
    if !src.is_null() && !dest.is_null() {
        // SAFETY: caller contract.
        unsafe { *dest = half::f16::from_f32(*src).to_bits() }
    }
}

/// IEEE half bits -> float.
///
/// # Safety
/// Both pointers must be valid (NULL is ignored).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn TH_halfbits2float(src: *mut u16, dest: *mut f32) {
    if !src.is_null() && !dest.is_null() {
        // SAFETY: caller contract.
        unsafe { *dest = half::f16::from_bits(*src).to_f32() }
    }
}

/// Exports `float -> C type` and back for the 16-bit floats (through their `CRepr`).
macro_rules! float16_conversions {
    ($($T:ty => $C:ident: $to:ident, $from:ident;)*) => {$(
        #[doc = concat!(" float -> `", stringify!($C), "` (round to nearest even).")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $to(a: f32) -> $C {
            <$T>::from_f32(a).to_c()
        }
        #[doc = concat!(" `", stringify!($C), "` -> float.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $from(a: $C) -> f32 {
            <$T>::from_c(a).to_f32()
        }
    )*};
}
float16_conversions! {
    half::f16 => THHalf: TH_float2half, TH_half2float;
    half::bf16 => THBFloat16: TH_float2bfloat16, TH_bfloat162float;
}
