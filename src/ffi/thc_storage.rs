//! THC's storage constructors that take raw device memory or a caller's allocator
//! (`THCStorage.h`: `newWithData`, `newWithAllocator`, `newWithDataAndAllocator`,
//! `newWithMapping`) and `rawCopy` (`THCStorageCopy.h`), for every dtype. Device pointers are
//! the caller's: th checks what it can (NULL, alignment, the device exists), not that the
//! memory is really on that device.

use super::thc::*;
use super::*;
use crate::core::allocator::{self, Allocator, Device, THAllocator};
use crate::core::error::Code;
use crate::core::storage::check_len;
use crate::cuda::{runtime, storage as dev_storage};
use std::ffi::{c_char, c_int, c_void};
use std::ptr;

/// THC's device allocator interface (`THCDeviceAllocator`, as in THC's `THCGeneral.h`): each
/// callback returns a CUDA error code, 0 for success, and gets `state` first. `realloc`,
/// `emptyCache` and `cacheInfo` may be NULL; th calls only `malloc` and `free`.
#[repr(C)]
#[allow(non_snake_case)]
pub struct THCDeviceAllocator {
    pub malloc: Option<unsafe extern "C" fn(*mut c_void, *mut *mut c_void, usize, cudaStream_t) -> c_int>,
    pub realloc: Option<unsafe extern "C" fn(*mut c_void, *mut *mut c_void, usize, usize, cudaStream_t) -> c_int>,
    pub free: Option<unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int>,
    pub emptyCache: Option<unsafe extern "C" fn(*mut c_void) -> c_int>,
    pub cacheInfo: Option<unsafe extern "C" fn(*mut c_void, c_int, *mut usize, *mut usize) -> c_int>,
    pub state: *mut c_void,
}

/// The context of a storage whose memory comes from a caller's `THCDeviceAllocator`: owned by
/// the storage, dropped by its one `free` (such storages are not resizable, so nothing calls
/// the allocator after that).
struct UserAlloc {
    vt: *const THCDeviceAllocator,
    ctx: *mut c_void,
    ordinal: i32,
}

unsafe extern "C" fn user_malloc(ctx: *mut c_void, size: isize) -> *mut c_void {
    // SAFETY: the context is the storage's UserAlloc (`user_allocator`), alive until user_free.
    let u = unsafe { &*(ctx as *const UserAlloc) };
    let mut p: *mut c_void = ptr::null_mut();
    // SAFETY: the caller's allocator, alive while the storage lives.
    let Some(malloc) = (unsafe { (*u.vt).malloc }) else { return ptr::null_mut() };
    let stream = runtime::stream(u.ordinal) as cudaStream_t;
    // SAFETY: the caller's callback with its own context.
    let rc = unsafe { malloc(u.ctx, &mut p, size as usize, stream) };
    if rc != 0 {
        allocator::fail(Error::new(
            Code::TH_ERR_ALLOC,
            format!("THCDeviceAllocator malloc of {size} bytes failed with cuda error {rc}"),
        ));
        return ptr::null_mut();
    }
    p
}

unsafe extern "C" fn user_free(ctx: *mut c_void, p: *mut c_void) {
    // SAFETY: the storage's UserAlloc; this is its last use (see UserAlloc).
    let u = unsafe { Box::from_raw(ctx as *mut UserAlloc) };
    if p.is_null() {
        return;
    }
    // SAFETY: the caller's allocator, alive while the storage lives.
    let Some(free) = (unsafe { (*u.vt).free }) else { return };
    // SAFETY: the callback releasing its own block.
    let rc = unsafe { free(u.ctx, p) };
    if rc != 0 {
        crate::core::error::record(&Error::cuda(format!("THCDeviceAllocator free failed with cuda error {rc}")));
    }
}

static USER_VTABLE: THAllocator = THAllocator { malloc: Some(user_malloc), realloc: None, free: Some(user_free) };

/// A storage on device `ordinal` whose memory comes from the caller's allocator: `n` fresh
/// elements (`data` NULL), or the `n` elements at `data`, which it takes over. Not resizable.
///
/// # Safety
/// `vt` must be NULL or a `THCDeviceAllocator` valid while the storage lives; `data` must be
/// NULL or a block of `n` elements on that device that `vt.free` releases.
unsafe fn with_user_allocator<T: Scalar>(
    ordinal: i32,
    vt: *const THCDeviceAllocator,
    ctx: *mut c_void,
    data: *mut T,
    n: usize,
) -> Result<Rc<Storage<T>>> {
    // SAFETY: caller contract: NULL or a live allocator.
    let usable = unsafe { vt.as_ref() }.is_some_and(|a| a.malloc.is_some() && a.free.is_some());
    if !usable {
        return Err(Error::null(0, "THCDeviceAllocator with malloc and free"));
    }
    let ctx = Box::into_raw(Box::new(UserAlloc { vt, ctx, ordinal })) as *mut c_void;
    let alloc = Allocator::for_device(&USER_VTABLE, ctx, Device::Cuda(ordinal));
    let made = if data.is_null() {
        Storage::with_allocator(n, alloc)
    } else {
        // SAFETY: caller contract on `data`.
        unsafe { Storage::from_raw(data, n, alloc) }
    };
    match made {
        Ok(s) => {
            s.set_flags(0, crate::core::storage::TH_STORAGE_RESIZABLE);
            Ok(s)
        }
        Err(e) => {
            // SAFETY: no storage was made, so nothing else owns the context.
            drop(unsafe { Box::from_raw(ctx as *mut UserAlloc) });
            Err(e)
        }
    }
}

/// The current device's ordinal, checked to exist.
fn current() -> Result<i32> {
    let o = runtime::current();
    runtime::device(o)?;
    Ok(o)
}

macro_rules! thc_storage_api {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => { $( thc_storage_api!(@name $R, $T, $C); )* };
    (@name Float, $T:ty, $C:ty) => { thc_storage_api!(@fns THCudaStorage, $T, $C); };
    (@name $R:ident, $T:ty, $C:ty) => { pastey::paste! { thc_storage_api!(@fns [<THCuda $R Storage>], $T, $C); } };
    (@fns $S:ident, $T:ty, $C:ty) => { pastey::paste! {
        th_fn! {
            /// Always an error, as in THC: device memory cannot map a file (map a host storage
            /// and copy it to the device instead).
            fn [<$S _newWithMapping>] @[state: *mut THCState](filename: *const c_char, size: isize, shared: c_int) -> *mut $S = ptr::null_mut(); {
                let _ = (filename, size, shared);
                Err::<*mut $S, _>(Error::invalid(concat!(stringify!([<$S _newWithMapping>]), ": device storages cannot map files (THC does not either); map a host storage and copy it")))
            }
            /// A new storage (+1) on the current device taking over `size` elements at the device
            /// address `data`, which must be a block from `THCudaMalloc` on that device (it is
            /// returned to the caching allocator). On error `data` stays the caller's.
            fn [<$S _newWithData>] @[state: *mut THCState](data: *mut $C, size: isize) -> *mut $S = ptr::null_mut(); {
                let n = check_len(size).map_err(|e| e.at_arg(2))?;
                let a = dev_storage::allocator(current()?)?;
                // SAFETY: caller contract: a caching-allocator block of n elements handed over.
                Ok(into_handle(unsafe { Storage::from_raw(data as *mut $T, n, a)? }))
            }
            /// A new storage (+1) of `size` elements on the current device from
            /// `allocator->malloc(allocatorContext, ...)`, released by `allocator->free`; the
            /// allocator must outlive the storage. Not resizable.
            fn [<$S _newWithAllocator>] @[state: *mut THCState](size: isize, allocator: *mut THCDeviceAllocator, allocator_context: *mut c_void) -> *mut $S = ptr::null_mut(); {
                let n = check_len(size).map_err(|e| e.at_arg(1))?;
                // SAFETY: allocator from the caller (contract above); no data.
                Ok(into_handle(unsafe { with_user_allocator::<$T>(current()?, allocator, allocator_context, ptr::null_mut(), n) }.map_err(|e| e.at_arg(2))?))
            }
            /// A new storage (+1) on the current device taking over `size` elements at the device
            /// address `data`, released later by `allocator->free(allocatorContext, data)`. Not
            /// resizable. On error `data` stays the caller's.
            fn [<$S _newWithDataAndAllocator>] @[state: *mut THCState](data: *mut $C, size: isize, allocator: *mut THCDeviceAllocator, allocator_context: *mut c_void) -> *mut $S = ptr::null_mut(); {
                let n = check_len(size).map_err(|e| e.at_arg(2))?;
                if data.is_null() && n > 0 {
                    return Err(Error::null(1, "data"));
                }
                // SAFETY: allocator and block from the caller (contract above).
                Ok(into_handle(unsafe { with_user_allocator::<$T>(current()?, allocator, allocator_context, data as *mut $T, n) }.map_err(|e| e.at_arg(3))?))
            }
            /// Copies `size()` elements from the device address `src` (device to device, on the
            /// current stream).
            fn [<$S _rawCopy>] @[state: *mut THCState](storage: *mut $S as obj, src: *mut $C) {
                let dev = dev_storage::device_of(storage, 1)?;
                let (p, n) = storage.raw_parts();
                if n == 0 {
                    return Ok(());
                }
                if src.is_null() {
                    return Err(Error::null(2, "src"));
                }
                // SAFETY: caller contract: `src` holds size() elements on this device; the
                // storage holds n of them.
                unsafe { dev.gpu.dtod(p as u64, src as u64, n * size_of::<$T>(), runtime::stream(dev.ordinal)) }
            }
        }
    } };
}
crate::th_dtypes!(thc_storage_api);

/// A CUDA runtime error code for an error (`cudaErrorMemoryAllocation`, `cudaErrorNoDevice`,
/// else `cudaErrorInvalidValue`).
fn cuda_error(e: &Error) -> c_int {
    match e.code {
        Code::TH_ERR_ALLOC => 2,
        Code::TH_ERR_NO_DEVICE | Code::TH_ERR_NO_CUDA => 100,
        _ => 1,
    }
}

unsafe extern "C" fn caching_malloc(
    _ctx: *mut c_void,
    ptr: *mut *mut c_void,
    size: usize,
    stream: cudaStream_t,
) -> c_int {
    if ptr.is_null() {
        return 1;
    }
    match runtime::device(runtime::current()).and_then(|d| d.cache.malloc(size, stream as u64)) {
        Ok(p) => {
            // SAFETY: checked non-NULL out-parameter.
            unsafe { *ptr = p as *mut c_void };
            0
        }
        Err(e) => {
            crate::core::error::record(&e);
            cuda_error(&e)
        }
    }
}

unsafe extern "C" fn caching_free(_ctx: *mut c_void, ptr: *mut c_void) -> c_int {
    if ptr.is_null() {
        return 0;
    }
    // The block's device: the current one first, then the others.
    let Ok(devices) = runtime::devices() else { return 100 };
    let cur = runtime::current();
    let order = devices.iter().filter(|d| d.ordinal == cur).chain(devices.iter().filter(|d| d.ordinal != cur));
    for d in order {
        if d.cache.block_size(ptr as u64).is_some() {
            return d.cache.free(ptr as u64).map_or_else(|e| cuda_error(&e), |_| 0);
        }
    }
    17 // cudaErrorInvalidDevicePointer
}

unsafe extern "C" fn caching_empty(_ctx: *mut c_void) -> c_int {
    if let Ok(devices) = runtime::devices() {
        for d in devices {
            d.cache.empty_cache();
        }
    }
    0
}

unsafe extern "C" fn caching_info(_ctx: *mut c_void, device: c_int, cached: *mut usize, largest: *mut usize) -> c_int {
    if cached.is_null() || largest.is_null() {
        return 1;
    }
    match runtime::device(device) {
        Ok(d) => {
            // SAFETY: checked non-NULL out-parameters.
            unsafe {
                *cached = d.cache.stats().cached_free;
                *largest = d.cache.largest_free();
            }
            0
        }
        Err(e) => cuda_error(&e),
    }
}

struct SyncAllocator(THCDeviceAllocator);
// SAFETY: the table holds function pointers and a NULL state, never written.
unsafe impl Sync for SyncAllocator {}

static CACHING_ALLOCATOR: SyncAllocator = SyncAllocator(THCDeviceAllocator {
    malloc: Some(caching_malloc),
    realloc: None,
    free: Some(caching_free),
    emptyCache: Some(caching_empty),
    cacheInfo: Some(caching_info),
    state: ptr::null_mut(),
});

/// THC's caching device allocator as a `THCDeviceAllocator` (the one device storages use): its
/// `malloc` allocates on the current device for the given stream, `free` returns a block to
/// its device's cache, `emptyCache` releases every device's cached blocks, `cacheInfo` gives a
/// device's cached free bytes and largest cached block. Static: never freed.
#[unsafe(no_mangle)]
pub extern "C" fn THCCachingAllocator_get() -> *mut THCDeviceAllocator {
    &CACHING_ALLOCATOR.0 as *const THCDeviceAllocator as *mut THCDeviceAllocator
}

th_fn! {
    /// The device allocator of device storages: the caching allocator (`THCCachingAllocator_get`).
    fn THCState_getDeviceAllocator @[state: *mut THCState]() -> *mut THCDeviceAllocator = ptr::null_mut(); {
        Ok(THCCachingAllocator_get())
    }
}
