//! Device storages: a `Storage<T>` whose allocator hands out device addresses from the device's
//! caching allocator, so every host-side storage and view operation (refcounts, flags, views,
//! resize keeping the prefix, swap) works unchanged and only element access differs.
//!
//! The `THAllocator` context is the device ordinal (+1, so it is never NULL). Allocations are
//! made on the calling thread's current stream of that device, as THC's were.

use super::runtime::{self, Device as Dev};
use crate::core::allocator::{self, Allocator, Device, THAllocator};
use crate::core::dtype::Scalar;
use crate::core::error::{Code, Error, Result};
use crate::core::refcount::Rc;
use crate::core::storage::Storage;
use std::ffi::c_void;
use std::ptr;
use std::sync::Mutex;

fn ordinal(ctx: *mut c_void) -> i32 {
    (ctx as usize as i32) - 1
}

type GcHandler = (Option<unsafe extern "C" fn(*mut c_void)>, usize);
static GC_HANDLER: Mutex<GcHandler> = Mutex::new((None, 0));

/// `THCSetGCHandler`: called (then the allocation retried once) when device memory runs out
/// even after the caching allocator released what it held.
pub fn set_gc_handler(handler: Option<unsafe extern "C" fn(*mut c_void)>, data: *mut c_void) {
    *GC_HANDLER.lock().unwrap_or_else(|e| e.into_inner()) = (handler, data as usize);
}

/// `bytes` of device memory on `dev` for its current stream (the caching allocator, then the
/// GC handler and one retry when memory is out).
pub fn malloc(dev: &Dev, bytes: usize) -> Result<u64> {
    let stream = runtime::stream(dev.ordinal);
    dev.cache.malloc(bytes, stream).or_else(|e| {
        let (h, data) = *GC_HANDLER.lock().unwrap_or_else(|e| e.into_inner());
        match h {
            Some(h) if e.code == Code::TH_ERR_ALLOC => {
                // SAFETY: a C function installed by THCSetGCHandler with its own data.
                unsafe { h(data as *mut c_void) };
                dev.cache.malloc(bytes, stream)
            }
            _ => Err(e),
        }
    })
}

unsafe extern "C" fn dev_malloc(ctx: *mut c_void, size: isize) -> *mut c_void {
    let r = runtime::device(ordinal(ctx)).and_then(|d| malloc(d, size as usize));
    match r {
        Ok(p) => p as *mut c_void,
        Err(e) => {
            allocator::fail(e);
            ptr::null_mut()
        }
    }
}

/// Moves a block to a new size on the device (a fresh block, the common prefix copied on the
/// current stream, the old block returned to the cache).
unsafe extern "C" fn dev_realloc(ctx: *mut c_void, old: *mut c_void, size: isize) -> *mut c_void {
    let r = runtime::device(ordinal(ctx)).and_then(|d| {
        let new = malloc(d, size as usize)?;
        if !old.is_null() {
            let keep = d.cache.block_size(old as u64).unwrap_or(0).min(size as usize);
            if new != 0 && keep > 0 {
                // SAFETY: both are live device blocks of at least `keep` bytes.
                unsafe { d.gpu.dtod(new, old as u64, keep, runtime::stream(d.ordinal))? };
            }
            d.cache.free(old as u64)?;
        }
        Ok(new)
    });
    match r {
        Ok(p) => p as *mut c_void,
        Err(e) => {
            allocator::fail(e);
            ptr::null_mut()
        }
    }
}

unsafe extern "C" fn dev_free(ctx: *mut c_void, p: *mut c_void) {
    if p.is_null() {
        return;
    }
    if let Err(e) = runtime::device(ordinal(ctx)).and_then(|d| d.cache.free(p as u64)) {
        // A free cannot fail the caller (it runs from a release); leave the reason for THGetLastError.
        crate::core::error::record(&e);
    }
}

static DEVICE_VTABLE: THAllocator =
    THAllocator { malloc: Some(dev_malloc), realloc: Some(dev_realloc), free: Some(dev_free) };

/// The allocator of device storages on `ordinal` (checked to exist).
pub fn allocator(ordinal: i32) -> Result<Allocator> {
    runtime::device(ordinal)?;
    Ok(Allocator::for_device(&DEVICE_VTABLE, (ordinal as usize + 1) as *mut c_void, Device::Cuda(ordinal)))
}

/// A storage of `n` uninitialised elements on device `ordinal`.
pub fn new<T: Scalar>(ordinal: i32, n: usize) -> Result<Rc<Storage<T>>> {
    Storage::with_allocator(n, allocator(ordinal)?)
}

/// The device of a storage, or an error naming argument `arg` when it is host memory.
pub fn device_of<T: Scalar>(s: &Storage<T>, arg: u32) -> Result<&'static Dev> {
    match s.device() {
        Device::Cuda(i) => runtime::device(i),
        Device::Cpu => Err(Error::invalid("expected a CUDA storage or tensor, got one in host memory").at_arg(arg)),
    }
}
