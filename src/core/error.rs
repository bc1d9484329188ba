//! Errors of the safe core, and the per-thread "last error" plus handler machinery that the C
//! boundary reports them through.
//!
//! Core functions return `Result<T>`; nothing in the core panics on bad input. The `ffi` layer
//! turns an `Err` into: the thread-local last error (code + message), one call of the installed
//! handler, and a sentinel return value.

use std::cell::RefCell;
use std::ffi::{CString, c_char, c_int, c_void};
use std::fmt;
use std::sync::Mutex;

/// Defines the C enum `THErrorCode` and its `from_int` from one list of codes; a code followed
/// by `=> name` also gets the constructor `Error::name(msg)`.
macro_rules! error_codes {
    (
        $(#[$m:meta])*
        pub enum $E:ident {
            $($(#[$doc:meta])* $code:ident = $v:literal $(=> $ctor:ident)?,)*
        }
    ) => {
        $(#[$m])*
        pub enum $E {
            $($(#[$doc])* $code = $v,)*
        }

        impl $E {
            /// The code with this value, if any.
            pub fn from_int(v: c_int) -> Option<Self> {
                [$($E::$code),*].into_iter().find(|&c| c as c_int == v)
            }
        }

        impl Error {
            $($(
                #[doc = concat!("A `", stringify!($code), "` error.")]
                #[cold]
                pub fn $ctor(msg: impl Into<String>) -> Self {
                    Self::new($E::$code, msg)
                }
            )?)*
        }
    };
}

error_codes! {
    /// Error codes returned by `THGetLastErrorCode`.
    #[repr(C)]
    #[allow(non_camel_case_types)]
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum THErrorCode {
        /// No error.
        TH_OK = 0,
        /// A required pointer argument was NULL.
        TH_ERR_NULL_ARG = 1,
        /// An argument was out of its domain (bad flag, bad mode, ...).
        TH_ERR_INVALID_ARG = 2 => invalid,
        /// Sizes or strides were negative, overflowed, or did not fit together.
        TH_ERR_SIZE = 3 => size,
        /// A dimension or index was out of range.
        TH_ERR_INDEX = 4 => index,
        /// The operation is not defined for this dtype.
        TH_ERR_DTYPE = 5 => dtype,
        /// Memory could not be allocated (or mapped).
        TH_ERR_ALLOC = 6 => alloc,
        /// CUDA is unavailable: the library was built without it, or no driver (libcuda) or
        /// NVRTC library could be loaded.
        TH_ERR_NO_CUDA = 7 => no_cuda,
        /// A CUDA call failed (the message names the CUDA error and its code).
        TH_ERR_CUDA = 8 => cuda,
        /// A file or shared-memory operation failed.
        TH_ERR_IO = 9 => io,
        /// An internal invariant failed (a bug).
        TH_ERR_INTERNAL = 10 => internal,
        /// A panic was caught at the C boundary (a bug).
        TH_ERR_PANIC = 11,
        /// Raised by C code through `_THError` / `_THArgCheck` / `_THAssertionFailed`.
        TH_ERR_USER = 12,
        /// A CUDA driver is installed but there is no such device (none at all, or a bad ordinal).
        TH_ERR_NO_DEVICE = 13 => no_device,
    }
}

pub use THErrorCode as Code;

/// A core error: a code, a message, and (for argument errors) the 1-based position of the
/// offending argument of the C function, as TH's `THArgCheck` reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct Error {
    pub code: Code,
    pub msg: String,
    pub arg: Option<u32>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

// The constructors are cold: errors are the rare path, so their code stays out of the callers'
// (out of every exported function and generic op instantiation that can fail).
impl Error {
    #[cold]
    pub fn new(code: Code, msg: impl Into<String>) -> Self {
        Error { code, msg: msg.into(), arg: None }
    }
    /// Marks the error as concerning argument `n` (1-based) of the C call.
    pub fn at_arg(mut self, n: u32) -> Self {
        if self.arg.is_none() {
            self.arg = Some(n);
        }
        self
    }
    #[cold]
    #[inline(never)]
    pub fn null(arg: u32, what: &str) -> Self {
        Self::new(Code::TH_ERR_NULL_ARG, format!("argument {arg} ({what}) is NULL")).at_arg(arg)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for Error {}

/// `bail!(Error::size(...))`-style early return, and `ensure!(cond, err)`.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $err:expr) => {
        if !$cond {
            return Err($err);
        }
    };
}

/// TH's handler types (`THGeneral.h`).
pub type THErrorHandlerFunction = Option<unsafe extern "C" fn(msg: *const c_char, data: *mut c_void)>;
pub type THArgErrorHandlerFunction =
    Option<unsafe extern "C" fn(arg_number: c_int, msg: *const c_char, data: *mut c_void)>;

#[derive(Clone, Copy)]
pub(crate) struct Handler<F> {
    pub f: F,
    pub data: *mut c_void,
}

// SAFETY: the handler is a C function pointer plus an opaque pointer the caller asked us to pass
// back; TH's contract makes the caller responsible for `data` being usable from any thread that
// may call into the library (the same as torch7's process-global default handler).
unsafe impl<F> Send for Handler<F> {}

struct LastError {
    code: Code,
    msg: CString,
}

thread_local! {
    static LAST: RefCell<Option<LastError>> = const { RefCell::new(None) };
    static HANDLER: RefCell<Option<Handler<THErrorHandlerFunction>>> = const { RefCell::new(None) };
    static ARG_HANDLER: RefCell<Option<Handler<THArgErrorHandlerFunction>>> = const { RefCell::new(None) };
}

static DEFAULT_HANDLER: Mutex<Option<Handler<THErrorHandlerFunction>>> = Mutex::new(None);
static DEFAULT_ARG_HANDLER: Mutex<Option<Handler<THArgErrorHandlerFunction>>> = Mutex::new(None);

fn to_cstring(s: &str) -> CString {
    CString::new(s.replace('\0', "\\0")).unwrap_or_default()
}

/// Records `err` as this thread's last error without calling any handler.
pub(crate) fn record(err: &Error) {
    let msg = to_cstring(&err.msg);
    LAST.with(|l| *l.borrow_mut() = Some(LastError { code: err.code, msg }));
}

/// Records `err` and calls the installed handler exactly once: an argument error goes to the
/// argument handler (this thread's, else the default one) when one is installed; everything
/// else, and argument errors with no argument handler installed, go to the error handler
/// (this thread's, else the default). With no handler installed the error is only recorded.
pub(crate) fn report(err: &Error) {
    record(err);
    // Copy the handler out and build the message before calling, so no borrow or lock is held
    // while C code runs (the handler may call back into the library).
    let msg_ptr = LAST.with(|l| l.borrow().as_ref().map(|e| e.msg.as_ptr()).unwrap_or(std::ptr::null()));
    if let Some(n) = err.arg {
        let h = ARG_HANDLER
            .with(|h| *h.borrow())
            .or_else(|| *DEFAULT_ARG_HANDLER.lock().unwrap_or_else(|e| e.into_inner()));
        if let Some(Handler { f: Some(f), data }) = h {
            // SAFETY: a C function installed through THSet*ArgErrorHandler with its data pointer;
            // `msg_ptr` points into this thread's last-error slot, alive for the call.
            unsafe { f(n as c_int, msg_ptr, data) };
            return;
        }
    }
    let h = HANDLER.with(|h| *h.borrow()).or_else(|| *DEFAULT_HANDLER.lock().unwrap_or_else(|e| e.into_inner()));
    if let Some(Handler { f: Some(f), data }) = h {
        // SAFETY: as above, for the error handler.
        unsafe { f(msg_ptr, data) };
    }
}

pub(crate) fn last_message() -> *const c_char {
    LAST.with(|l| l.borrow().as_ref().map(|e| e.msg.as_ptr()).unwrap_or(std::ptr::null()))
}

pub(crate) fn last_code() -> Code {
    LAST.with(|l| l.borrow().as_ref().map(|e| e.code).unwrap_or(Code::TH_OK))
}

pub(crate) fn clear() {
    LAST.with(|l| *l.borrow_mut() = None);
}

pub(crate) fn set_handler(f: THErrorHandlerFunction, data: *mut c_void) {
    HANDLER.with(|h| *h.borrow_mut() = f.map(|_| Handler { f, data }));
}

pub(crate) fn set_arg_handler(f: THArgErrorHandlerFunction, data: *mut c_void) {
    ARG_HANDLER.with(|h| *h.borrow_mut() = f.map(|_| Handler { f, data }));
}

pub(crate) fn set_default_handler(f: THErrorHandlerFunction, data: *mut c_void) {
    *DEFAULT_HANDLER.lock().unwrap_or_else(|e| e.into_inner()) = f.map(|_| Handler { f, data });
}

pub(crate) fn set_default_arg_handler(f: THArgErrorHandlerFunction, data: *mut c_void) {
    *DEFAULT_ARG_HANDLER.lock().unwrap_or_else(|e| e.into_inner()) = f.map(|_| Handler { f, data });
}

#[cfg(test)]
mod thread_tests {
    use super::*;

    /// Each thread records its own errors and sees only those (also run under ThreadSanitizer
    /// by scripts/sanitize_rust.sh).
    #[test]
    fn last_error_is_per_thread() {
        let codes = [Code::TH_ERR_SIZE, Code::TH_ERR_INDEX, Code::TH_ERR_ALLOC, Code::TH_ERR_IO];
        let rounds = if cfg!(miri) { 40 } else { 500 };
        let hs: Vec<_> = (0..8)
            .map(|i| {
                std::thread::spawn(move || {
                    let mine = codes[i % codes.len()];
                    for k in 0..rounds {
                        assert_eq!(last_code(), if k == 0 { Code::TH_OK } else { mine });
                        report(&Error::new(mine, format!("thread {i} error {k}")));
                        assert_eq!(last_code(), mine);
                        // SAFETY: the message pointer is valid until this thread's next error.
                        let msg = unsafe { std::ffi::CStr::from_ptr(last_message()) }.to_str().unwrap().to_owned();
                        assert_eq!(msg, format!("thread {i} error {k}"));
                    }
                    clear();
                    assert_eq!(last_code(), Code::TH_OK);
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
    }
}
