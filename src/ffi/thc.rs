//! THC's general API (`THCGeneral.h`, `THCStream.h`, the caching allocators) and its handle
//! types. The per-dtype storage and tensor functions come from the same macros as TH's
//! (`storage.rs`, `tensor.rs`, through `thc_family!`).
//!
//! State: THC kept everything in a `THCState`. Here devices and allocators are process-wide and
//! the current device and stream are per thread, so a `THCState` is only a token every function
//! accepts (NULL included); `THCudaInit` is where device discovery errors are reported early,
//! though any THC call discovers devices lazily. CUDA types (`cudaStream_t`) are opaque pointers.

use super::home::{Cuda, Home};
use super::*;
use crate::core::allocator::{self, THAllocator};
use crate::core::error::{Code, Error, Result};
use crate::cuda::runtime;
use std::cell::RefCell;
use std::ffi::{c_int, c_void};
use std::ptr;

/// THC's state token (see the module docs); from `THCState_alloc`, released by `THCState_free`.
pub struct THCState {
    _private: u8,
}

/// A CUDA stream (`cudaStream_t`): an opaque pointer, NULL for the default stream.
#[allow(non_camel_case_types)]
pub type cudaStream_t = *mut CUstream_st;

/// The opaque target of `cudaStream_t`.
#[allow(non_camel_case_types)]
pub struct CUstream_st {
    _private: [u8; 0],
}

/// A refcounted stream of one device (`THCStream_new` / `THCStream_defaultStream`).
pub struct Stream {
    device: i32,
    id: u64,
    owned: bool,
}

impl Drop for Stream {
    fn drop(&mut self) {
        if self.owned
            && let Ok(d) = runtime::device(self.device)
        {
            let _ = d.gpu.stream_free(self.id);
        }
    }
}

handle!(
    /// Opaque handle to a refcounted CUDA stream.
    THCStream => Stream
);

macro_rules! thc_handles {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => { $( thc_handles!(@one $R, $T); )* };
    (@one Float, $T:ty) => {
        handle!(/** Opaque handle to a Float storage on a CUDA device. */ THCudaStorage => Storage<$T>);
        handle!(/** Opaque handle to a Float tensor on a CUDA device. */ THCudaTensor => Tensor<$T>);
        /// THC's name for the Float storage in the per-dtype copy functions.
        pub type THCudaFloatStorage = THCudaStorage;
        /// THC's name for the Float tensor in the per-dtype copy functions.
        pub type THCudaFloatTensor = THCudaTensor;
    };
    (@one $R:ident, $T:ty) => { pastey::paste! {
        handle!(#[doc = "Opaque handle to a " $R " storage on a CUDA device."] [<THCuda $R Storage>] => Storage<$T>);
        handle!(#[doc = "Opaque handle to a " $R " tensor on a CUDA device."] [<THCuda $R Tensor>] => Tensor<$T>);
    } };
}
crate::th_dtypes!(thc_handles);

thread_local! {
    /// The `THCStream` objects set as current on this thread, per device (for `getStream`).
    static CURRENT: RefCell<Vec<Option<Rc<Stream>>>> = const { RefCell::new(Vec::new()) };
}

fn current_device() -> Result<&'static runtime::Device> {
    runtime::device(runtime::current())
}

/// The default stream of `device` as a stream object.
fn default_stream(device: i32) -> Result<Rc<Stream>> {
    runtime::device(device)?;
    Ok(Rc::new(Stream { device, id: 0, owned: false }))
}

/// This thread's current stream object on `device` (its default stream if none was set).
fn current_stream(device: i32) -> Result<Rc<Stream>> {
    let set = CURRENT.with(|c| c.borrow().get(device.max(0) as usize).cloned().flatten());
    set.map_or_else(|| default_stream(device), Ok)
}

/// `THCudaHostAllocator`'s callbacks: pinned host memory from the current device's cache.
unsafe extern "C" fn host_malloc(_ctx: *mut c_void, size: isize) -> *mut c_void {
    match current_device().and_then(|d| d.host.malloc(size.max(0) as usize)) {
        Ok(p) => p as *mut c_void,
        Err(e) => {
            allocator::fail(e);
            ptr::null_mut()
        }
    }
}

unsafe extern "C" fn host_free(_ctx: *mut c_void, p: *mut c_void) {
    if p.is_null() {
        return;
    }
    if let Err(e) = current_device().and_then(|d| d.host.free(p as u64)) {
        error::record(&e);
    }
}

/// The pinned-host `THAllocator` (THC's `THCudaHostAllocator`, from `THCState_getCudaHostAllocator`).
pub static CUDA_HOST_ALLOCATOR: THAllocator =
    THAllocator { malloc: Some(host_malloc), realloc: None, free: Some(host_free) };

th_fn! {
    /// A new state token (never NULL).
    fn THCState_alloc() -> *mut THCState = ptr::null_mut(); {
        Ok(Box::into_raw(Box::new(THCState { _private: 0 })))
    }
    /// Frees a state token (NULL is ignored).
    fn THCState_free(state: *mut THCState) {
        if !state.is_null() {
            // SAFETY: a token from THCState_alloc (caller contract), freed once.
            drop(unsafe { Box::from_raw(state) });
        }
        Ok(())
    }
    /// Finds the devices now and reports why there are none (`TH_ERR_NO_CUDA`: no driver or built
    /// without CUDA; `TH_ERR_NO_DEVICE`: a driver but no GPU).
    fn THCudaInit @[state: *mut THCState]() {
        runtime::devices().map(|_| ())
    }
    /// Waits for all work, then releases every cached device and pinned block.
    fn THCudaShutdown @[state: *mut THCState]() {
        if !runtime::initialized() {
            return Ok(());
        }
        // Nothing to release when discovery failed (no driver or no device): not an error here.
        let Ok(devices) = runtime::devices() else { return Ok(()) };
        for d in devices {
            d.gpu.sync()?;
            d.cache.empty_cache();
            d.host.empty_cache();
        }
        Ok(())
    }
    /// Number of devices (0 when CUDA is unavailable; the reason is recorded).
    fn THCState_getNumDevices @[state: *mut THCState]() -> c_int = 0; {
        Ok(runtime::devices()?.len() as c_int)
    }
    /// This thread's current device.
    fn THCudaGetDevice @[state: *mut THCState]() -> c_int = -1; {
        current_device().map(|d| d.ordinal)
    }
    /// Makes `device` this thread's current device (checked).
    fn THCudaSetDevice @[state: *mut THCState](device: c_int) {
        runtime::set_current(device).map_err(|e| e.at_arg(1))
    }
    /// Waits until all work on the current device has completed.
    fn THCudaSynchronize @[state: *mut THCState]() {
        current_device()?.gpu.sync()
    }
    /// The current stream of `device` on this thread (NULL: the default stream).
    fn THCState_getCurrentStreamOnDevice @[state: *mut THCState](device: c_int) -> cudaStream_t = ptr::null_mut(); {
        runtime::device(device).map_err(|e| e.at_arg(1))?;
        Ok(runtime::stream(device) as cudaStream_t)
    }
    /// The current stream of the current device on this thread (NULL: the default stream).
    fn THCState_getCurrentStream @[state: *mut THCState]() -> cudaStream_t = ptr::null_mut(); {
        Ok(runtime::stream(current_device()?.ordinal) as cudaStream_t)
    }
    /// The current stream object of the current device (borrowed).
    fn THCState_getStream @[state: *mut THCState]() -> *mut THCStream = ptr::null_mut(); {
        let d = current_device()?.ordinal;
        let s = current_stream(d)?;
        let h = as_handle(&s);
        // Keep the object alive while it is current (the default one is made on demand).
        CURRENT.with(|c| {
            let mut c = c.borrow_mut();
            if c.len() <= d as usize {
                c.resize(d as usize + 1, None);
            }
            c[d as usize] = Some(s);
        });
        Ok(h)
    }
    /// Makes `stream` (retained; NULL: the default stream) current on its device for this thread.
    fn THCState_setStream @[state: *mut THCState](stream: *mut THCStream as opt_rc) {
        let s = match stream {
            Some(s) => s,
            None => default_stream(current_device()?.ordinal)?,
        };
        let d = s.device;
        runtime::set_stream(d, s.id);
        CURRENT.with(|c| {
            let mut c = c.borrow_mut();
            if c.len() <= d as usize {
                c.resize(d as usize + 1, None);
            }
            c[d as usize] = Some(s);
        });
        Ok(())
    }
    /// A new stream on the current device (+1); `flags` 1 = `cudaStreamNonBlocking`.
    fn THCStream_new(flags: c_int) -> *mut THCStream = ptr::null_mut(); {
        let d = current_device()?;
        let id = d.gpu.stream_new(flags & 1 != 0, 0)?;
        Ok(into_handle(Rc::new(Stream { device: d.ordinal, id, owned: true })))
    }
    /// A new stream with a priority (lower is higher priority, as in CUDA) (+1).
    fn THCStream_newWithPriority(flags: c_int, priority: c_int) -> *mut THCStream = ptr::null_mut(); {
        let d = current_device()?;
        let id = d.gpu.stream_new(flags & 1 != 0, priority)?;
        Ok(into_handle(Rc::new(Stream { device: d.ordinal, id, owned: true })))
    }
    /// The default stream of `device` (+1).
    fn THCStream_defaultStream(device: c_int) -> *mut THCStream = ptr::null_mut(); {
        Ok(into_handle(default_stream(device).map_err(|e| e.at_arg(1))?))
    }
    /// The `cudaStream_t` of a stream object.
    fn THCStream_stream(stream: *mut THCStream as obj) -> cudaStream_t = ptr::null_mut(); {
        Ok(stream.id as cudaStream_t)
    }
    /// The device of a stream object.
    fn THCStream_device(stream: *mut THCStream as obj) -> c_int = -1; {
        Ok(stream.device)
    }
}

/// Adds a reference to a stream (NULL is ignored).
///
/// # Safety
/// `stream` must be NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn THCStream_retain(stream: *mut THCStream) {
    // SAFETY: caller contract.
    unsafe { retain(stream) }
}

/// Drops a reference; the last one destroys the stream (NULL is ignored).
///
/// # Safety
/// `stream` must be NULL or a live handle the caller owns a reference on.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn THCStream_free(stream: *mut THCStream) {
    // SAFETY: caller contract.
    unsafe { release(stream) }
}

/// Runs `f` and returns THC's `cudaError_t`-style status: 0, or the `THErrorCode` of the
/// failure (also recorded, with one handler call).
fn status(name: &'static str, f: impl FnOnce() -> Result<()>) -> c_int {
    let mut code = Code::TH_ERR_PANIC as c_int;
    boundary(name, (), || {
        let r = f();
        code = r.as_ref().map_or_else(|e| e.code as c_int, |_| 0);
        r
    });
    code
}

/// `*ptr` = `size` bytes of device memory from the caching allocator on the current device and
/// stream. Returns 0, or the error code (recorded as for any call).
///
/// # Safety
/// `ptr` must be NULL (an error) or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn THCudaMalloc(_state: *mut THCState, ptr: *mut *mut c_void, size: usize) -> c_int {
    status("THCudaMalloc", || {
        if ptr.is_null() {
            return Err(Error::null(1, "ptr"));
        }
        let p = crate::cuda::storage::malloc(current_device()?, size)?;
        // SAFETY: checked non-NULL; caller contract.
        unsafe { *ptr = p as *mut c_void };
        Ok(())
    })
}

/// Returns a block from `THCudaMalloc` to the cache (NULL is ignored). 0 or the error code.
///
/// # Safety
/// `ptr` must be NULL or a live block from `THCudaMalloc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn THCudaFree(_state: *mut THCState, ptr: *mut c_void) -> c_int {
    status("THCudaFree", || current_device()?.cache.free(ptr as u64))
}

/// Free and total bytes of the current device. 0 or the error code.
///
/// # Safety
/// Both pointers must be NULL (an error) or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn THCudaMemGetInfo(
    _state: *mut THCState,
    free_bytes: *mut usize,
    total_bytes: *mut usize,
) -> c_int {
    status("THCudaMemGetInfo", || {
        if free_bytes.is_null() || total_bytes.is_null() {
            return Err(Error::null(if free_bytes.is_null() { 1 } else { 2 }, "output"));
        }
        let d = current_device()?;
        let (free, total) = d.gpu.mem_info()?;
        let cached = d.cache.stats().cached_free;
        // SAFETY: checked non-NULL.
        unsafe {
            *free_bytes = free + cached;
            *total_bytes = total;
        }
        Ok(())
    })
}

/// As `THCudaMemGetInfo`, counting memory held by the cache as free, plus the largest cached
/// free block. 0 or the error code.
///
/// # Safety
/// All pointers must be NULL (an error) or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn THCudaMemGetInfoCached(
    _state: *mut THCState,
    free_bytes: *mut usize,
    total_bytes: *mut usize,
    largest_block: *mut usize,
) -> c_int {
    status("THCudaMemGetInfoCached", || {
        if free_bytes.is_null() || total_bytes.is_null() || largest_block.is_null() {
            return Err(Error::null(1, "output"));
        }
        let d = current_device()?;
        let (free, total) = d.gpu.mem_info()?;
        let s = d.cache.stats();
        // SAFETY: checked non-NULL.
        unsafe {
            *free_bytes = free + s.cached_free;
            *total_bytes = total;
            *largest_block = d.cache.largest_free().max(free);
        }
        Ok(())
    })
}

th_fn! {
    /// `size` bytes of pinned host memory (THC's caching host allocator; NULL on error).
    fn THCudaHostAlloc @[state: *mut THCState](size: usize) -> *mut c_void = ptr::null_mut(); {
        Ok(current_device()?.host.malloc(size)? as *mut c_void)
    }
    /// Returns a block from `THCudaHostAlloc`; it is reused once the copies recorded on it are done.
    fn THCudaHostFree @[state: *mut THCState](ptr: *mut c_void) {
        // SAFETY: the host allocator's own free.
        unsafe { host_free(ptr::null_mut(), ptr) };
        Ok(())
    }
    /// Records that the current stream uses the pinned block `ptr` (after an async copy).
    fn THCudaHostRecord @[state: *mut THCState](ptr: *mut c_void) {
        let d = current_device()?;
        d.host.record_event(ptr as u64, runtime::stream(d.ordinal))
    }
    /// The pinned-host allocator (`THCudaHostAllocator`).
    fn THCState_getCudaHostAllocator @[state: *mut THCState]() -> *mut THAllocator = ptr::null_mut(); {
        Ok(&CUDA_HOST_ALLOCATOR as *const THAllocator as *mut THAllocator)
    }
    /// 1: device storages come from the caching allocator (always).
    fn THCState_isCachingAllocatorEnabled @[state: *mut THCState]() -> c_int = 0; {
        Ok(1)
    }
    /// Sets the function called (then the allocation retried once) when device memory runs out.
    fn THCSetGCHandler @[state: *mut THCState](handler: Option<unsafe extern "C" fn(*mut c_void)>, data: *mut c_void) {
        crate::cuda::storage::set_gc_handler(handler, data);
        Ok(())
    }
    /// Releases every cached device block of every device (`cudaEmptyCache`).
    fn THCudaEmptyCache @[state: *mut THCState]() {
        for d in runtime::devices()? {
            d.cache.empty_cache();
        }
        Ok(())
    }
    /// The base address and size of the segment holding device block `ptr`.
    fn THCCachingAllocator_getBaseAllocation(ptr: *mut c_void, size: *mut usize) -> *mut c_void = ptr::null_mut(); {
        let (base, n) = current_device()?
            .cache
            .base_allocation(ptr as u64)
            .ok_or_else(|| Error::invalid(format!("{ptr:p} is not a device block of the caching allocator")).at_arg(1))?;
        if !size.is_null() {
            // SAFETY: a writable size_t from the caller.
            unsafe { *size = n };
        }
        Ok(base as *mut c_void)
    }
    /// Marks that `stream` uses device block `ptr`: it is not reused until that work completes.
    fn THCCachingAllocator_recordStream(ptr: *mut c_void, stream: *mut THCStream as obj) {
        runtime::device(stream.device)?.cache.record_stream(ptr as u64, stream.id)
    }
    /// Records that `stream` uses the pinned block `ptr` (0 or an error code).
    fn THCCachingHostAllocator_recordEvent(ptr: *mut c_void, stream: *mut THCStream as obj) -> c_int = Code::TH_ERR_CUDA as c_int; {
        runtime::device(stream.device)?.host.record_event(ptr as u64, stream.id)?;
        Ok(0)
    }
    /// Releases every cached pinned block whose copies are done.
    fn THCCachingHostAllocator_emptyCache() {
        for d in runtime::devices()? {
            d.host.empty_cache();
        }
        Ok(())
    }
    /// Memory statistics of `device`'s caching allocator, in bytes: currently allocated,
    /// reserved from the device, and the peaks of both.
    fn THCudaMemoryStats @[state: *mut THCState](device: c_int, allocated: *mut usize, reserved: *mut usize, peak_allocated: *mut usize, peak_reserved: *mut usize) {
        let s = runtime::device(device).map_err(|e| e.at_arg(1))?.cache.stats();
        for (p, v) in [(allocated, s.allocated), (reserved, s.reserved), (peak_allocated, s.peak_allocated), (peak_reserved, s.peak_reserved)] {
            if !p.is_null() {
                // SAFETY: a writable size_t from the caller (NULL skipped).
                unsafe { *p = v };
            }
        }
        Ok(())
    }
}

/// THC's per-dtype functions that TH has no counterpart of: device queries and the copies
/// between device families and from/to host families (`THCStorageCopy.h`, `THCTensorCopy.h`).
macro_rules! thc_only {
    ($($row:tt),* $(,)?) => { with_all_dtypes!(thc_only; $($row),*); };
    (@one $all:tt $R:ident, $T:ty, $C:ty) => { thc_family!(thc_only $all $R, $T, $C); };
    (@gen $all:tt $R:ident, $T:ty, $C:ty; $Pg:tt $Lg:tt $H:ident) => { thc_only!(@body $all $R, $T, $C; $Pg $Lg; $Pg $Lg); };
    (@body [$(($S:ident, $ST:ty)),*] $R:ident, $T:ty, $C:ty; [$($P:tt)*] [$($lead:tt)*]; $Pg:tt $Lg:tt) => { pastey::paste! {
        th_fn! {
            /// Size of one element in bytes.
            fn [<$($P)* Storage_elementSize>] @[$($lead)*]() -> c_int = 0; {
                Ok(size_of::<$T>() as c_int)
            }
            /// The device holding the storage.
            fn [<$($P)* Storage_getDevice>] @[$($lead)*](storage: *const [<$($P)* Storage>] as obj) -> c_int = -1; {
                Ok(crate::cuda::storage::device_of(storage, 1)?.ordinal)
            }
            /// The device holding the tensor (the current device for one without storage).
            fn [<$($P)* Tensor_getDevice>] @[$($lead)*](self_: *const [<$($P)* Tensor>] as obj) -> c_int = -1; {
                self_.with_view(|v| match &v.storage {
                    Some(s) => Ok(crate::cuda::storage::device_of(s, 1)?.ordinal),
                    None => current_device().map(|d| d.ordinal),
                })
            }
            /// Copies `src` into `self` (same dtype; element counts must match).
            fn [<$($P)* Tensor_copyCuda>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as obj) {
                Cuda::copy(&self_.view(), &src.view())
            }
            /// `copy` without THC's overlap check (overlaps are still handled here).
            fn [<$($P)* Tensor_copyIgnoringOverlaps>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as obj) {
                Cuda::copy(&self_.view(), &src.view())
            }
            /// Copies a host tensor of the same dtype into this device tensor.
            fn [<$($P)* Tensor_copyCPU>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<TH $R Tensor>] as obj) {
                Cuda::copy(&self_.view(), &src.view())
            }
            /// As `copyCPU` (the transfer completes before returning: the source is pageable memory).
            fn [<$($P)* Tensor_copyAsyncCPU>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<TH $R Tensor>] as obj) {
                Cuda::copy(&self_.view(), &src.view())
            }
            /// Copies this dtype's device tensor into a host tensor.
            fn [<TH $R Tensor_copyCuda>] @[$($lead)*](self_: *mut [<TH $R Tensor>] as obj, src: *mut [<$($P)* Tensor>] as obj) {
                Cuda::copy(&self_.view(), &src.view())
            }
            /// As `copyCuda` (completes before returning: the destination is pageable memory).
            fn [<TH $R Tensor_copyAsyncCuda>] @[$($lead)*](self_: *mut [<TH $R Tensor>] as obj, src: *mut [<$($P)* Tensor>] as obj) {
                Cuda::copy(&self_.view(), &src.view())
            }
            /// Copies `src` into `storage` (same dtype; sizes must match).
            fn [<$($P)* Storage_copyCuda>] @[$($lead)*](storage: *mut [<$($P)* Storage>] as obj, src: *mut [<$($P)* Storage>] as obj) {
                Cuda::storage_copy::<$T, $T>(storage, src)
            }
            /// Copies a host storage of the same dtype into this device storage.
            fn [<$($P)* Storage_copyCPU>] @[$($lead)*](storage: *mut [<$($P)* Storage>] as obj, src: *mut [<TH $R Storage>] as obj) {
                Cuda::storage_copy::<$T, $T>(storage, src)
            }
            /// Copies this dtype's device storage into a host storage.
            fn [<TH $R Storage_copyCuda>] @[$($lead)*](storage: *mut [<TH $R Storage>] as obj, src: *mut [<$($P)* Storage>] as obj) {
                Cuda::storage_copy::<$T, $T>(storage, src)
            }
        }
        $( thc_only!(@pair $S, $ST; $R, $T; $Pg $Lg); )*
    } };
    (@pair $S:ident, $ST:ty; $R:ident, $T:ty; [$($P:tt)*] [$($lead:tt)*]) => { pastey::paste! {
        th_fn! {
            #[doc = "Copies a " $S " device tensor into this one (C casts; element counts must match)."]
            fn [<$($P)* Tensor_copyCuda $S>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<THCuda $S Tensor>] as obj) {
                Cuda::copy::<$T, $ST>(&self_.view(), &src.view())
            }
            #[doc = "Copies a " $S " device tensor into this host tensor (C casts)."]
            fn [<TH $R Tensor_copyCuda $S>] @[$($lead)*](self_: *mut [<TH $R Tensor>] as obj, src: *mut [<THCuda $S Tensor>] as obj) {
                Cuda::copy::<$T, $ST>(&self_.view(), &src.view())
            }
            #[doc = "Copies a " $S " device storage into this one (C casts; sizes must match)."]
            fn [<$($P)* Storage_copyCuda $S>] @[$($lead)*](storage: *mut [<$($P)* Storage>] as obj, src: *mut [<THCuda $S Storage>] as obj) {
                Cuda::storage_copy::<$T, $ST>(storage, src)
            }
            #[doc = "Copies a " $S " device storage into this host storage (C casts; sizes must match)."]
            fn [<TH $R Storage_copyCuda $S>] @[$($lead)*](storage: *mut [<TH $R Storage>] as obj, src: *mut [<THCuda $S Storage>] as obj) {
                Cuda::storage_copy::<$T, $ST>(storage, src)
            }
        }
    } };
}
crate::th_dtypes!(thc_only);
