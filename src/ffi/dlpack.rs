//! DLPack export/import for every dtype, and the PyCapsule destructors Python bindings use.
//!
//! Ownership: `toDLPack*` return a managed tensor the caller owns (call its `deleter` exactly
//! once); it holds a reference on the tensor's storage. `fromDLPack*` take over `m` on success
//! (a new tensor, +1; the producer's deleter runs when the last tensor on the memory is freed);
//! on error `m` stays the caller's.
//!
//! THC's forms (`THCuda{Real}Tensor_toDLPack(state, t)`, ...) are the same mechanism for device
//! tensors: `device_type = kDLCUDA`, `device_id` = the ordinal, the data pointer a device address.
//! Their import takes kDLCUDA memory of an existing device (and kDLCUDAManaged memory, on the
//! current device); the producer's memory never enters the caching allocator. Host and device
//! functions refuse each other's tensors and capsules. `THCState_dlpackSync` orders the
//! consumer's stream after the producer's (`__dlpack__(stream=...)`).

use super::thc::*;
use super::*;
use crate::io::dlpack::{self, DLManagedTensor, DLManagedTensorVersioned, Side};
use std::ffi::c_void;
use std::ptr;

macro_rules! dlpack_api {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => { pastey::paste! { $(
        th_fn! {
            /// A versioned DLPack view of `t` (zero-copy; the caller calls its deleter once). It
            /// keeps the storage alive; resizing the storage meanwhile invalidates it, as in TH.
            fn [<TH $R Tensor_toDLPack>](t: *mut [<TH $R Tensor>] as obj) -> *mut DLManagedTensorVersioned = ptr::null_mut(); {
                dlpack::to_dlpack(t, Side::Host)
            }
            /// A new tensor (+1) over a versioned DLPack tensor's memory (zero-copy). Takes over
            /// `m` on success; on error (dtype, device, version, read-only, negative strides)
            /// `m` stays the caller's.
            fn [<TH $R Tensor_fromDLPack>](m: *mut DLManagedTensorVersioned) -> *mut [<TH $R Tensor>] = ptr::null_mut(); {
                // SAFETY: the managed tensor from the caller.
                Ok(into_handle(unsafe { dlpack::from_dlpack::<$T>(m, Side::Host)? }))
            }
            /// As `toDLPack`, in the legacy unversioned form (`DLManagedTensor`).
            fn [<TH $R Tensor_toDLPackUnversioned>](t: *mut [<TH $R Tensor>] as obj) -> *mut DLManagedTensor = ptr::null_mut(); {
                dlpack::to_dlpack_unversioned(t, Side::Host)
            }
            /// As `fromDLPack`, for a legacy unversioned `DLManagedTensor`.
            fn [<TH $R Tensor_fromDLPackUnversioned>](m: *mut DLManagedTensor) -> *mut [<TH $R Tensor>] = ptr::null_mut(); {
                // SAFETY: the managed tensor from the caller.
                Ok(into_handle(unsafe { dlpack::from_dlpack_unversioned::<$T>(m, Side::Host)? }))
            }
        }
    )* } };
}
crate::th_dtypes!(dlpack_api);

macro_rules! thc_dlpack_api {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => { $( thc_family!(thc_dlpack_api [] $R, $T, $C); )* };
    (@gen $all:tt $R:ident, $T:ty, $C:ty; [$($P:tt)*] [$($lead:tt)*] $H:ident) => { pastey::paste! {
        th_fn! {
            /// A versioned DLPack view of the device tensor `t` (kDLCUDA, its device ordinal;
            /// zero-copy; the caller calls its deleter once). It keeps the storage alive. Call
            /// `THCState_dlpackSync` for the consumer's stream first.
            fn [<$($P)* Tensor_toDLPack>] @[$($lead)*](t: *mut [<$($P)* Tensor>] as obj) -> *mut DLManagedTensorVersioned = ptr::null_mut(); {
                dlpack::to_dlpack(t, Side::Cuda)
            }
            /// A new device tensor (+1) over a versioned kDLCUDA (or kDLCUDAManaged) DLPack
            /// tensor (zero-copy; the producer's deleter runs when the last tensor on it goes).
            /// Takes over `m` on success; on error (device, dtype, version, read-only, negative
            /// strides) `m` stays the caller's.
            fn [<$($P)* Tensor_fromDLPack>] @[$($lead)*](m: *mut DLManagedTensorVersioned) -> *mut [<$($P)* Tensor>] = ptr::null_mut(); {
                // SAFETY: the managed tensor from the caller.
                Ok(into_handle(unsafe { dlpack::from_dlpack::<$T>(m, Side::Cuda)? }))
            }
            /// As `toDLPack`, in the legacy unversioned form (`DLManagedTensor`).
            fn [<$($P)* Tensor_toDLPackUnversioned>] @[$($lead)*](t: *mut [<$($P)* Tensor>] as obj) -> *mut DLManagedTensor = ptr::null_mut(); {
                dlpack::to_dlpack_unversioned(t, Side::Cuda)
            }
            /// As `fromDLPack`, for a legacy unversioned `DLManagedTensor`.
            fn [<$($P)* Tensor_fromDLPackUnversioned>] @[$($lead)*](m: *mut DLManagedTensor) -> *mut [<$($P)* Tensor>] = ptr::null_mut(); {
                // SAFETY: the managed tensor from the caller.
                Ok(into_handle(unsafe { dlpack::from_dlpack_unversioned::<$T>(m, Side::Cuda)? }))
            }
        }
    } };
}
crate::th_dtypes!(thc_dlpack_api);

th_fn! {
    /// The producer's side of `__dlpack__(stream=stream)` for memory on `device`: makes the
    /// consumer's `stream` wait (an event, not a host or device-wide sync) for the work queued
    /// so far on this thread's current stream of `device`. `stream`: -1 no synchronization,
    /// 1 the legacy default stream, 2 the per-thread default stream, other values a
    /// `cudaStream_t`; 0 is an error (ambiguous, as the DLPack specification says).
    fn THCState_dlpackSync @[state: *mut THCState](device: std::ffi::c_int, stream: i64) {
        crate::cuda::dlpack::sync(device, stream)
    }
}

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
