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
pub mod home;
pub mod index;
pub mod lapack;
pub mod linalg;
pub mod math;
pub mod nn;
pub mod npy;
pub mod random;
pub mod reduce;
pub mod storage;
pub mod tensor;
pub mod thc;
pub mod thc_blas;
pub mod thc_conv;
pub mod thc_general;
pub mod thc_half;
pub mod thc_index;
pub mod thc_lapack;
pub mod thc_math;
pub mod thc_random;
pub mod thc_reduce;
pub mod thc_sort;
pub mod thc_storage;

use crate::core::dtype::{Bool, Scalar, THBFloat16, THHalf};
use crate::core::error::{self, Code, Error, Result};
use crate::core::refcount::{Rc, Shared};
use crate::core::storage::Storage;
use crate::core::tensor::{Tensor, View};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs `f` for the exported function `name`; on error records it, calls the handler once and
/// returns `sentinel`.
///
/// Instantiated once per exported function: only the call and the match are generic, the
/// error path is `failed`, compiled once.
#[inline]
pub(crate) fn boundary<R>(name: &'static str, sentinel: R, f: impl FnOnce() -> Result<R>) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            failed(name, Ok(e));
            sentinel
        }
        Err(payload) => {
            failed(name, Err(payload));
            sentinel
        }
    }
}

/// The error path of `boundary`: an error, or the payload of a caught panic, of the exported
/// function `name` becomes the thread's last error, and the handler is called once.
#[cold]
#[inline(never)]
fn failed(name: &'static str, err: std::result::Result<Error, Box<dyn std::any::Any + Send>>) {
    let err = err.unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        Error::new(Code::TH_ERR_PANIC, format!("internal error (panic): {what}"))
    });
    let err = Error { msg: format!("{name}: {}", err.msg), ..err };
    error::report(&err);
}

/// Defines exported C functions whose bodies run inside `boundary`, one or more per call:
/// `fn name(args) -> Ret = sentinel; { body returning Result<Ret> }`, or `fn name(args) { .. }`
/// for `()`.
///
/// Leading parameters in brackets after the name (`fn THCudaTensor_abs @[state: *mut THCState](..)`)
/// are part of the C signature but not of the numbering: THC's `THCState *` comes first and
/// argument positions in errors count from the parameter after it, as in THC.
///
/// An argument written `name: Type as conv` (or `as conv(extra, ..)`) reaches the body as
/// `conv(name, extra, .., position)?`, `position` being its 1-based place in the argument list
/// (errors name it). These conversions run first, in argument order, in one `unsafe` block: in
/// `fn THFloatTensor_abs(r_: *mut THFloatTensor as obj, t: *mut THFloatTensor as view) { .. }`
/// the body sees `r_ = obj(r_, 1)?` and `t = view(t, 2)?`.
macro_rules! th_fn {
    (@fn [$($attr:tt)*] $name:ident $lead:tt [$ret:ty = $sentinel:expr] $args:tt $body:block) => {
        $crate::ffi::th_fn!(@def [$($attr)*] $name $lead [-> $ret] [$ret] [$sentinel] $args $body);
    };
    (@fn [$($attr:tt)*] $name:ident $lead:tt [] $args:tt $body:block) => {
        $crate::ffi::th_fn!(@def [$($attr)*] $name $lead [] [()] [()] $args $body);
    };
    (@def [$($attr:tt)*] $name:ident [$($l:ident: $lt:ty),*] [$($arrow:tt)*] [$ret:ty] [$sentinel:expr]
        ($($a:ident: $t:ty $(as $conv:ident $(($($x:expr),*))?)?),* $(,)?) $body:block) => {
        $($attr)*
        #[allow(clippy::missing_safety_doc)] // one contract for all: see the module docs
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($l: $lt,)* $($a: $t),*) $($arrow)* {
            $(let _ = $l;)*
            $crate::ffi::boundary(stringify!($name), $sentinel, move || -> $crate::core::error::Result<$ret> {
                $crate::ffi::th_fn! { @convert [] [1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20] $($a $(as $conv $(($($x),*))?)?),* }
                $body
            })
        }
    };
    // The conversions, numbered: `$done` collects `(name, call)` pairs, `[$n ..]` the positions left.
    (@convert [$($done:tt)*] [$n:literal $($ns:literal)*] $a:ident as $conv:ident $(($($x:expr),*))? $(, $($rest:tt)*)?) => {
        $crate::ffi::th_fn! { @convert [$($done)* ($a, $conv($a, $($($x,)*)? $n))] [$($ns)*] $($($rest)*)? }
    };
    (@convert $done:tt [$n:literal $($ns:literal)*] $a:ident $(, $($rest:tt)*)?) => {
        $crate::ffi::th_fn! { @convert $done [$($ns)*] $($($rest)*)? }
    };
    (@convert [] $ns:tt) => {};
    (@convert [($a:ident, $e:expr)] $ns:tt) => {
        // SAFETY: a handle, string or array from the C caller, as the module docs require.
        let $a = unsafe { $e? };
    };
    (@convert [$(($a:ident, $e:expr))+] $ns:tt) => {
        // SAFETY: handles, strings and arrays from the C caller, as the module docs require.
        let ($($a),+) = unsafe { ($($e?),+) };
    };
    ($($(#[$m:meta])* fn $name:ident $(@[$($l:ident: $lt:ty),*])? ($($args:tt)*) $(-> $ret:ty = $sentinel:expr;)? $body:block)+) => {
        $( $crate::ffi::th_fn!(@fn [$(#[$m])*] $name [$($($l: $lt),*)?] [$($ret = $sentinel)?] ($($args)*) $body); )+
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

/// The view of a borrowed tensor argument (a snapshot of its geometry).
///
/// # Safety
/// As for `obj`.
pub(crate) unsafe fn view<H: Handle<Obj = Tensor<T>>, T: Scalar>(p: *const H, arg: u32) -> Result<View<T>> {
    // SAFETY: forwarded contract.
    Ok(unsafe { obj(p, arg)? }.view())
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

/// A new reference to the object behind an optional handle (NULL: none).
///
/// # Safety
/// As for `obj`.
pub(crate) unsafe fn opt_rc<H: Handle>(p: *const H, arg: u32) -> Result<Option<Rc<H::Obj>>> {
    // SAFETY: forwarded contract.
    if p.is_null() { Ok(None) } else { Ok(Some(unsafe { rc(p, arg)? })) }
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
crate::th_dtypes!(same_repr; int float);

impl CRepr for Bool {
    type C = Bool;
    fn from_c(c: Bool) -> Bool {
        Bool::from(c.get())
    }
    fn to_c(self) -> Bool {
        self
    }
}

/// 16-bit floats cross as their bits in a one-field struct (`THHalf`, `THBFloat16`).
macro_rules! bits_repr {
    ($($T:ty => $C:ident),*) => {$(
        impl CRepr for $T {
            type C = $C;
            fn from_c(c: $C) -> Self {
                <$T>::from_bits(c.x)
            }
            fn to_c(self) -> $C {
                $C { x: self.to_bits() }
            }
        }
    )*};
}
bits_repr!(half::f16 => THHalf, half::bf16 => THBFloat16);

/// A `th_dtypes!` callback for APIs with a function per pair of dtypes (`copy<Src>`): runs
/// `$api!(@one [(S, ST), ..] R, T, C)` for every dtype, the list holding every dtype.
macro_rules! with_all_dtypes {
    ($api:ident; $(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => {
        $crate::ffi::with_all_dtypes!(@each $api [$(($R, $T)),*] $(($R, $T, $C)),*);
    };
    (@each $api:ident $all:tt $(($R:ident, $T:ty, $C:ty)),*) => {
        $( $api!(@one $all $R, $T, $C); )*
    };
}
pub(crate) use with_all_dtypes;

/// Exports `retain`, `free` and `release` for the handle type `$H` (`$arg` names the argument,
/// `$frees` says what the last reference frees).
macro_rules! refcount_fns {
    ($H:ident, $arg:ident, $frees:literal $(, [$($l:ident: $lt:ty),*])?) => {
        pastey::paste! {
            /// Adds a reference (NULL is ignored).
            ///
            /// # Safety
            #[doc = " `" $arg "` must be NULL or a live handle."]
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn [<$H _retain>]($($($l: $lt,)*)? $arg: *mut $H) {
                $($(let _ = $l;)*)?
                // SAFETY: caller contract.
                unsafe { $crate::ffi::retain($arg) }
            }
            #[doc = " Drops a reference; the last one frees " $frees " (NULL is ignored)."]
            ///
            /// # Safety
            #[doc = " `" $arg "` must be NULL or a live handle the caller owns a reference on."]
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn [<$H _free>]($($($l: $lt,)*)? $arg: *mut $H) {
                $($(let _ = $l;)*)?
                // SAFETY: caller contract.
                unsafe { $crate::ffi::release($arg) }
            }
            /// Same as `free` (the design card's name).
            ///
            /// # Safety
            /// As for `free`.
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn [<$H _release>]($($($l: $lt,)*)? $arg: *mut $H) {
                $($(let _ = $l;)*)?
                // SAFETY: caller contract.
                unsafe { $crate::ffi::release($arg) }
            }
        }
    };
}
pub(crate) use refcount_fns;

/// Declares an opaque C handle type for a core object (its C name is also its error name).
macro_rules! handle {
    ($(#[$m:meta])* $H:ident => $Obj:ty) => {
        $(#[$m])*
        pub struct $H {
            _private: [u8; 0],
        }
        impl $crate::ffi::Handle for $H {
            type Obj = $Obj;
            const WHAT: &'static str = stringify!($H);
        }
    };
}
pub(crate) use handle;

macro_rules! handles {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => { pastey::paste! { $(
        handle!(#[doc = "Opaque handle to a " $R " storage (a refcounted buffer)."] [<TH $R Storage>] => Storage<$T>);
        handle!(#[doc = "Opaque handle to a " $R " tensor (a refcounted view of a storage)."] [<TH $R Tensor>] => Tensor<$T>);
    )* } };
}
crate::th_dtypes!(handles);

/// Generates THC's family of an API for one dtype: `$api!(@gen ..)` with THC's names
/// (`THCuda` for Float, `THCuda{Real}` for the others), `THCState *` as an uncounted first
/// parameter, and the `Cuda` home.
macro_rules! thc_family {
    ($api:ident $all:tt Float, $T:ty, $C:ty) => {
        $api!(@gen $all Float, $T, $C; [THCuda] [state: *mut $crate::ffi::thc::THCState] Cuda);
    };
    ($api:ident $all:tt $R:ident, $T:ty, $C:ty) => {
        $api!(@gen $all $R, $T, $C; [THCuda $R] [state: *mut $crate::ffi::thc::THCState] Cuda);
    };
}
pub(crate) use thc_family;
