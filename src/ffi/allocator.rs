//! `THAllocator.h`: the exported allocator objects and the map-allocator context functions.

use super::th_fn;
use crate::core::allocator::{DEFAULT_VTABLE, THAllocator};
use crate::core::error::Error;
use crate::io::mapping::{self, MAP_VTABLE, RC_MAP_VTABLE, THMapAllocatorContext};
use std::ffi::{CStr, c_char, c_int, c_void};
use std::ptr;

/// The default allocator: 64-byte aligned C heap memory (`THAlloc`/`THRealloc`/`THFree`).
/// Declared non-const as in TH so `&THDefaultAllocator` passes as `THAllocator *`; never modify it.
#[unsafe(no_mangle)]
pub static mut THDefaultAllocator: THAllocator = DEFAULT_VTABLE;

/// Maps a file or shared-memory object described by a `THMapAllocatorContext` (the storage
/// owns the context; `free` unmaps and frees it).
#[unsafe(no_mangle)]
pub static mut THMapAllocator: THAllocator = MAP_VTABLE;

/// Like `THMapAllocator` over POSIX shared memory, with a cross-process count of users; the
/// segment is unlinked when the last one frees it.
#[unsafe(no_mangle)]
pub static mut THRefcountedMapAllocator: THAllocator = RC_MAP_VTABLE;

/// True for the two exported map allocators (their storages take their size from the mapping).
pub(crate) fn is_map_allocator(a: *const THAllocator) -> bool {
    ptr::eq(a, &raw const THMapAllocator) || ptr::eq(a, &raw const THRefcountedMapAllocator)
}

/// # Safety
/// `filename` must be NULL or NUL-terminated.
unsafe fn opt_cstr<'a>(filename: *const c_char) -> Option<&'a CStr> {
    // SAFETY: caller contract.
    (!filename.is_null()).then(|| unsafe { CStr::from_ptr(filename) })
}

/// # Safety
/// `ctx` must be NULL or a live context.
unsafe fn ctx_ref<'a>(ctx: *mut THMapAllocatorContext, arg: u32) -> crate::Result<&'a mut THMapAllocatorContext> {
    if ctx.is_null() {
        return Err(Error::null(arg, "THMapAllocatorContext"));
    }
    // SAFETY: caller contract.
    Ok(unsafe { &mut *ctx })
}

th_fn! {
    /// A new mapping description (+1 owner: a storage made with it, or `THMapAllocatorContext_free`).
    /// `filename` NULL means "filename not specified"; flags are `TH_ALLOCATOR_MAPPED_*`.
    fn THMapAllocatorContext_new(filename: *const c_char, flags: c_int) -> *mut THMapAllocatorContext = ptr::null_mut(); {
        // SAFETY: C string from the caller.
        let name = unsafe { opt_cstr(filename) };
        Ok(Box::into_raw(THMapAllocatorContext::new(name, -1, flags).map_err(|e| e.at_arg(2))?))
    }

    /// As `THMapAllocatorContext_new`, mapping the open descriptor `fd` (with `TH_ALLOCATOR_MAPPED_FROMFD`).
    fn THMapAllocatorContext_newWithFd(filename: *const c_char, fd: c_int, flags: c_int) -> *mut THMapAllocatorContext = ptr::null_mut(); {
        // SAFETY: C string from the caller.
        let name = unsafe { opt_cstr(filename) };
        Ok(Box::into_raw(THMapAllocatorContext::new(name, fd, flags).map_err(|e| e.at_arg(3))?))
    }

    /// The file or shared-memory name (borrowed; lives as long as the context).
    fn THMapAllocatorContext_filename(ctx: *mut THMapAllocatorContext as ctx_ref) -> *mut c_char = ptr::null_mut(); {
        Ok(ctx.filename() as *mut c_char)
    }

    /// The kept file descriptor (`TH_ALLOCATOR_MAPPED_KEEPFD`), else -1.
    fn THMapAllocatorContext_fd(ctx: *mut THMapAllocatorContext as ctx_ref) -> c_int = -1; {
        Ok(ctx.fd())
    }

    /// Usable bytes mapped (0 before the mapping is made).
    fn THMapAllocatorContext_size(ctx: *mut THMapAllocatorContext as ctx_ref) -> isize = 0; {
        Ok(ctx.size() as isize)
    }
}

/// Frees a context that was never given to a storage (NULL is fine).
///
/// # Safety
/// `ctx` must be NULL or a live, unmapped context from `THMapAllocatorContext_new*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn THMapAllocatorContext_free(ctx: *mut THMapAllocatorContext) {
    if !ctx.is_null() {
        // SAFETY: caller contract: the caller owns the context.
        drop(unsafe { Box::from_raw(ctx) });
    }
}

th_fn! {
    /// One more user of the refcounted shared segment whose data is `data`.
    fn THRefcountedMapAllocator_incref(ctx: *mut THMapAllocatorContext as ctx_ref, data: *mut c_void) {
        mapping::rc_incref(ctx, data)
    }

    /// One user fewer; returns 1 when none are left.
    fn THRefcountedMapAllocator_decref(ctx: *mut THMapAllocatorContext as ctx_ref, data: *mut c_void) -> c_int = 0; {
        Ok(mapping::rc_decref(ctx, data)? as c_int)
    }
}
