//! Python capsule destructors: run a managed tensor's deleter when its capsule was never
//! consumed, without touching Python's error state.

use super::*;

type IsValidFn = unsafe extern "C" fn(*mut c_void, *const std::ffi::c_char) -> std::ffi::c_int;
type GetPointerFn = unsafe extern "C" fn(*mut c_void, *const std::ffi::c_char) -> *mut c_void;

static CAPSULE_API: std::sync::RwLock<Option<(IsValidFn, GetPointerFn)>> = std::sync::RwLock::new(None);

/// Records CPython's `PyCapsule_IsValid` and `PyCapsule_GetPointer` (NULL falls back to looking
/// them up in the process).
///
/// # Safety
/// Non-NULL arguments must be those two functions.
pub unsafe fn set_capsule_api(is_valid: *mut c_void, get_pointer: *mut c_void) {
    let api = if is_valid.is_null() || get_pointer.is_null() {
        None
    } else {
        // SAFETY: caller contract: the addresses of the two CPython functions.
        Some(unsafe {
            (
                std::mem::transmute::<*mut c_void, IsValidFn>(is_valid),
                std::mem::transmute::<*mut c_void, GetPointerFn>(get_pointer),
            )
        })
    };
    *CAPSULE_API.write().unwrap_or_else(|e| e.into_inner()) = api;
}

fn capsule_api() -> Option<(IsValidFn, GetPointerFn)> {
    if let Some(a) = *CAPSULE_API.read().unwrap_or_else(|e| e.into_inner()) {
        return Some(a);
    }
    // SAFETY: dlsym on the global namespace with NUL-terminated names.
    let (v, g) = unsafe {
        (
            libc::dlsym(libc::RTLD_DEFAULT, c"PyCapsule_IsValid".as_ptr()),
            libc::dlsym(libc::RTLD_DEFAULT, c"PyCapsule_GetPointer".as_ptr()),
        )
    };
    if v.is_null() || g.is_null() {
        return None;
    }
    // SAFETY: the process's own CPython functions.
    unsafe { set_capsule_api(v, g) };
    *CAPSULE_API.read().unwrap_or_else(|e| e.into_inner())
}

/// The body of a capsule destructor: if the capsule still has its unconsumed `name`, the managed
/// tensor inside was never taken, so its deleter runs. Never touches Python's error state.
///
/// # Safety
/// `capsule` must be a live PyCapsule; `call` must be the deleter call for that capsule's kind.
pub unsafe fn capsule_destructor(capsule: *mut c_void, name: &std::ffi::CStr, call: unsafe fn(*mut c_void)) {
    let Some((is_valid, get_pointer)) = capsule_api() else { return };
    // SAFETY: CPython functions on a live capsule; both are documented not to raise when the
    // name matches (IsValid never raises).
    unsafe {
        if is_valid(capsule, name.as_ptr()) != 0 {
            let p = get_pointer(capsule, name.as_ptr());
            if !p.is_null() {
                call(p);
            }
        }
    }
}
/// Calls a versioned managed tensor's deleter.
///
/// # Safety
/// `p` must be a live `DLManagedTensorVersioned` owned by the caller.
pub unsafe fn call_versioned_deleter(p: *mut c_void) {
    // SAFETY: caller contract.
    unsafe { call_deleter(p as *mut DLManagedTensorVersioned) }
}

/// Calls a legacy managed tensor's deleter.
///
/// # Safety
/// `p` must be a live `DLManagedTensor` owned by the caller.
pub unsafe fn call_unversioned_deleter(p: *mut c_void) {
    // SAFETY: caller contract.
    unsafe { call_deleter(p as *mut DLManagedTensor) }
}
