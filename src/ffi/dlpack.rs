//! DLPack export/import for every dtype, and the PyCapsule destructors Python bindings use.
//!
//! Ownership: `toDLPack*` return a managed tensor the caller owns (call its `deleter` exactly
//! once); it holds a reference on the tensor's storage. `fromDLPack*` take over `m` on success
//! (a new tensor, +1; the producer's deleter runs when the last tensor on the memory is freed);
//! on error `m` stays the caller's.

use super::*;
use crate::io::dlpack::{self, DLManagedTensor, DLManagedTensorVersioned};
use std::ffi::c_void;
use std::ptr;

macro_rules! dlpack_api {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => { pastey::paste! { $(
        th_fn! {
            /// A versioned DLPack view of `t` (zero-copy; the caller calls its deleter once). It
            /// keeps the storage alive; resizing the storage meanwhile invalidates it, as in TH.
            fn [<TH $R Tensor_toDLPack>](t: *mut [<TH $R Tensor>] as obj) -> *mut DLManagedTensorVersioned = ptr::null_mut(); {
                dlpack::to_dlpack(t)
            }
            /// A new tensor (+1) over a versioned DLPack tensor's memory (zero-copy). Takes over
            /// `m` on success; on error (dtype, device, version, read-only, negative strides)
            /// `m` stays the caller's.
            fn [<TH $R Tensor_fromDLPack>](m: *mut DLManagedTensorVersioned) -> *mut [<TH $R Tensor>] = ptr::null_mut(); {
                // SAFETY: the managed tensor from the caller.
                Ok(into_handle(unsafe { dlpack::from_dlpack::<$T>(m)? }))
            }
            /// As `toDLPack`, in the legacy unversioned form (`DLManagedTensor`).
            fn [<TH $R Tensor_toDLPackUnversioned>](t: *mut [<TH $R Tensor>] as obj) -> *mut DLManagedTensor = ptr::null_mut(); {
                dlpack::to_dlpack_unversioned(t)
            }
            /// As `fromDLPack`, for a legacy unversioned `DLManagedTensor`.
            fn [<TH $R Tensor_fromDLPackUnversioned>](m: *mut DLManagedTensor) -> *mut [<TH $R Tensor>] = ptr::null_mut(); {
                // SAFETY: the managed tensor from the caller.
                Ok(into_handle(unsafe { dlpack::from_dlpack_unversioned::<$T>(m)? }))
            }
        }
    )* } };
}
crate::th_dtypes!(dlpack_api);

/// Hands in CPython's `PyCapsule_IsValid` and `PyCapsule_GetPointer` for the capsule
/// destructors (NULL: look them up in the process, the default). libth never links libpython.
///
/// # Safety
/// Non-NULL arguments must be exactly those two CPython functions.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn THDLPack_setCapsuleApi(is_valid: *mut c_void, get_pointer: *mut c_void) {
    // SAFETY: caller contract.
    unsafe { dlpack::set_capsule_api(is_valid, get_pointer) }
}

/// A PyCapsule destructor for capsules named `"dltensor_versioned"` holding a
/// `DLManagedTensorVersioned`: if nobody consumed the capsule (it still has that name) the
/// managed tensor's deleter runs. Safe while a Python exception is pending. Pass its address as
/// the destructor of `PyCapsule_New`.
///
/// # Safety
/// `capsule` must be a live PyCapsule; called by CPython with the GIL held.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn THDLPack_capsuleDestructor(capsule: *mut c_void) {
    // SAFETY: caller contract.
    unsafe { dlpack::capsule_destructor(capsule, c"dltensor_versioned", dlpack::call_versioned_deleter) }
}

/// As `THDLPack_capsuleDestructor`, for legacy capsules named `"dltensor"` (`DLManagedTensor`).
///
/// # Safety
/// As for `THDLPack_capsuleDestructor`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn THDLPack_capsuleDestructorUnversioned(capsule: *mut c_void) {
    // SAFETY: caller contract.
    unsafe { dlpack::capsule_destructor(capsule, c"dltensor", dlpack::call_unversioned_deleter) }
}
