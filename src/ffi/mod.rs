//! The C ABI. Every exported function is written through `th_fn!`, which runs the body inside
//! `boundary`: panics are caught, an `Err` becomes the thread's last error plus one handler
//! call, and the caller gets a sentinel (NULL, 0, or nothing). This module is the only place
//! raw handle pointers are turned into core objects.
//!
//! Safety contract of every exported function: each handle argument is NULL (an error, except
//! where documented) or a live handle of the declared type on which the caller holds a
//! reference; each raw buffer argument points to as many elements as the function reads or
//! writes. Everything else (sizes, indices, dimensions, flags, overflow) is checked.

pub mod allocator;
pub mod conv;
pub mod dlpack;
pub mod file;
pub mod general;
pub mod index;
pub mod lapack;
pub mod linalg;
pub mod math;
pub mod npy;
pub mod random;
pub mod reduce;
pub mod storage;
pub mod tensor;

use crate::core::dtype::{Bool, Scalar, THBFloat16, THHalf};
use crate::core::error::{self, Code, Error, Result};
use crate::core::refcount::{Rc, Shared};
use crate::core::storage::Storage;
use crate::core::tensor::Tensor;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs `f` for the exported function `name`; on error records it, calls the handler once and
/// returns `sentinel`.
pub(crate) fn boundary<R>(name: &'static str, sentinel: R, f: impl FnOnce() -> Result<R>) -> R {
    let err = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => return v,
        Ok(Err(e)) => e,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Error::new(Code::TH_ERR_PANIC, format!("internal error (panic): {what}"))
        }
    };
    let err = Error { msg: format!("{name}: {}", err.msg), ..err };
    error::report(&err);
    sentinel
}

/// Defines an exported C function whose body runs inside `boundary`.
/// `fn name(args) -> Ret = sentinel; { body returning Result<Ret> }`
macro_rules! th_fn {
    ($(#[$m:meta])* fn $name:ident($($a:ident : $t:ty),* $(,)?) -> $ret:ty = $sentinel:expr; $body:block) => {
        $(#[$m])*
        #[allow(clippy::missing_safety_doc)] // one contract for all: see the module docs
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($a: $t),*) -> $ret {
            $crate::ffi::boundary(stringify!($name), $sentinel, move || -> $crate::core::error::Result<$ret> { $body })
        }
    };
    ($(#[$m:meta])* fn $name:ident($($a:ident : $t:ty),* $(,)?) $body:block) => {
        $(#[$m])*
        #[allow(clippy::missing_safety_doc)] // one contract for all: see the module docs
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($a: $t),*) {
            $crate::ffi::boundary(stringify!($name), (), move || -> $crate::core::error::Result<()> { $body })
        }
    };
}
pub(crate) use th_fn;

/// A C handle type and the core object it points to (a `Shared<Obj>`).
pub trait Handle {
    type Obj;
    const WHAT: &'static str;
}

/// Borrows the object behind a handle; NULL is an error naming argument `arg`.
///
/// # Safety
/// `p` must be NULL or a live handle of this type.
pub(crate) unsafe fn obj<'a, H: Handle>(p: *const H, arg: u32) -> Result<&'a Shared<H::Obj>> {
    if p.is_null() {
        return Err(Error::null(arg, H::WHAT));
    }
    // SAFETY: caller contract: a live handle is a pointer to its Shared<Obj>.
    Ok(unsafe { &*(p as *const Shared<H::Obj>) })
}

/// A new reference to the object behind a handle.
///
/// # Safety
/// As for `obj`.
pub(crate) unsafe fn rc<H: Handle>(p: *const H, arg: u32) -> Result<Rc<H::Obj>> {
    // SAFETY: forwarded contract; obj checked NULL.
    unsafe { obj(p, arg)? };
    // SAFETY: p is a live Shared<Obj>.
    Ok(unsafe { Rc::clone_raw(p as *const Shared<H::Obj>) })
}

/// Gives one reference away to C as a handle.
pub(crate) fn into_handle<H: Handle>(r: Rc<H::Obj>) -> *mut H {
    Rc::into_raw(r) as *mut H
}

/// The handle of an object without changing its count (a borrowed pointer).
pub(crate) fn as_handle<H: Handle>(r: &Rc<H::Obj>) -> *mut H {
    Rc::as_ptr(r) as *mut H
}

/// Adds one reference (NULL is ignored).
///
/// # Safety
/// `p` must be NULL or a live handle.
pub(crate) unsafe fn retain<H: Handle>(p: *mut H) {
    if !p.is_null() {
        // SAFETY: caller contract.
        unsafe { Rc::retain_raw(p as *const Shared<H::Obj>) }
    }
}

/// Drops one reference (NULL is ignored).
///
/// # Safety
/// `p` must be NULL or a live handle the caller owns a reference on.
pub(crate) unsafe fn release<H: Handle>(p: *mut H) {
    if !p.is_null() {
        // SAFETY: caller contract.
        unsafe { Rc::release_raw(p as *mut Shared<H::Obj>) }
    }
}

/// An element type as it crosses the C boundary.
pub trait CRepr: Scalar {
    type C: Copy;
    fn from_c(c: Self::C) -> Self;
    fn to_c(self) -> Self::C;
}

macro_rules! same_repr {
    ($($T:ty),*) => {$(
        impl CRepr for $T {
            type C = $T;
            #[inline] fn from_c(c: $T) -> $T { c }
            #[inline] fn to_c(self) -> $T { self }
        }
    )*};
}
same_repr!(u8, i8, i16, i32, i64, f32, f64);

impl CRepr for Bool {
    type C = Bool;
    fn from_c(c: Bool) -> Bool {
        Bool::from(c.get())
    }
    fn to_c(self) -> Bool {
        self
    }
}
impl CRepr for half::f16 {
    type C = THHalf;
    fn from_c(c: THHalf) -> Self {
        half::f16::from_bits(c.x)
    }
    fn to_c(self) -> THHalf {
        THHalf { x: self.to_bits() }
    }
}
impl CRepr for half::bf16 {
    type C = THBFloat16;
    fn from_c(c: THBFloat16) -> Self {
        half::bf16::from_bits(c.x)
    }
    fn to_c(self) -> THBFloat16 {
        THBFloat16 { x: self.to_bits() }
    }
}

macro_rules! handles {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => { pastey::paste! { $(
        #[doc = "Opaque handle to a " $R " storage (a refcounted buffer)."]
        pub struct [<TH $R Storage>] {
            _private: [u8; 0],
        }
        impl Handle for [<TH $R Storage>] {
            type Obj = Storage<$T>;
            const WHAT: &'static str = concat!("TH", stringify!($R), "Storage");
        }
        #[doc = "Opaque handle to a " $R " tensor (a refcounted view of a storage)."]
        pub struct [<TH $R Tensor>] {
            _private: [u8; 0],
        }
        impl Handle for [<TH $R Tensor>] {
            type Obj = Tensor<$T>;
            const WHAT: &'static str = concat!("TH", stringify!($R), "Tensor");
        }
    )* } };
}
crate::th_dtypes!(handles);
