//! Allocators: TH's `THAllocator` (three C function pointers + a context), the default 64-byte
//! aligned host allocator behind `THAlloc`/`THRealloc`/`THFree`, and the adapter the storage uses
//! to call any allocator safely.
//!
//! Every storage owns an `Allocator` (vtable + context). The default, user-supplied C allocators
//! and the file/shared-memory mapping allocators (`mapping.rs`) all go through the same struct,
//! as in TH. Allocator callbacks report failure by returning NULL; the detail of why (errno, the
//! file name) is left in a per-thread slot by our own allocators and picked up by the storage
//! layer, so that the C caller gets one error and one handler call.

use crate::core::error::{Error, Result};
use std::cell::RefCell;
use std::ffi::c_void;
use std::ptr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicIsize, Ordering};

/// TH's custom allocator (`THAllocator.h`). The first argument of every callback is the
/// `allocatorContext` stored with the storage.
#[repr(C)]
pub struct THAllocator {
    pub malloc: Option<unsafe extern "C" fn(ctx: *mut c_void, size: isize) -> *mut c_void>,
    pub realloc: Option<unsafe extern "C" fn(ctx: *mut c_void, ptr: *mut c_void, size: isize) -> *mut c_void>,
    pub free: Option<unsafe extern "C" fn(ctx: *mut c_void, ptr: *mut c_void)>,
}

/// Alignment of every default allocation (a cache line; enough for AVX-512 loads).
pub(crate) const ALIGN: usize = 64;

thread_local! {
    static DETAIL: RefCell<Option<Error>> = const { RefCell::new(None) };
}

/// Called by our allocator callbacks before they return NULL: leaves the reason for the storage
/// layer and also records it as the thread's last error (for C code calling a callback directly).
pub(crate) fn fail(err: Error) {
    crate::core::error::record(&err);
    DETAIL.with(|d| *d.borrow_mut() = Some(err));
}

fn take_detail() -> Option<Error> {
    DETAIL.with(|d| d.borrow_mut().take())
}

/// `THAlloc`: `size` bytes aligned to 64, NULL for 0 bytes. Memory comes from the C heap
/// (`posix_memalign`), so `free()` and `THFree` release it and `newWithData` accepts it.
pub fn th_alloc(size: isize) -> Result<*mut u8> {
    if size < 0 {
        return Err(Error::alloc(format!("invalid memory size {size} -- maybe an overflow?")));
    }
    if size == 0 {
        return Ok(ptr::null_mut());
    }
    let mut p: *mut c_void = ptr::null_mut();
    // SAFETY: posix_memalign writes an allocation of `size` bytes to `p` or returns an error.
    let rc = unsafe { libc::posix_memalign(&mut p, ALIGN, size as usize) };
    if rc != 0 || p.is_null() {
        return Err(Error::alloc(format!("not enough memory: tried to allocate {size} bytes")));
    }
    advise_huge(p as *mut u8, size as usize);
    Ok(p as *mut u8)
}

/// Allocations from this size up are backed by transparent huge pages where the kernel leaves
/// that to the program (`/sys/kernel/mm/transparent_hugepage/enabled` = `madvise`, a common
/// default), as numpy and PyTorch do: a streaming kernel over a large tensor then takes a TLB
/// miss per 2 MiB instead of per 4 KiB, and first touch faults 512 times less often.
const HUGE_PAGE_MIN: usize = 4 << 20;

/// `madvise(MADV_HUGEPAGE)` over the whole pages inside `[p, p + size)` of a large block. Only
/// advice: failure (an old kernel, THP disabled) changes nothing and is ignored.
fn advise_huge(p: *mut u8, size: usize) {
    #[cfg(all(target_os = "linux", not(miri)))]
    if size >= HUGE_PAGE_MIN {
        const PAGE: usize = 4096;
        let start = (p as usize).next_multiple_of(PAGE);
        let end = (p as usize + size) / PAGE * PAGE;
        if end > start {
            // SAFETY: [start, end) lies inside the live block [p, p + size) and is page-aligned;
            // MADV_HUGEPAGE changes only how the kernel backs the pages, never their contents.
            unsafe { libc::madvise(start as *mut c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
    let _ = (p, size, HUGE_PAGE_MIN);
}

/// `THRealloc`: keeps the prefix, keeps 64-byte alignment; `(NULL, n)` allocates, `(p, 0)` frees.
///
/// # Safety
/// `p` must be NULL or a live allocation from the C heap (THAlloc / malloc).
pub unsafe fn th_realloc(p: *mut u8, size: isize) -> Result<*mut u8> {
    if p.is_null() {
        return th_alloc(size);
    }
    if size < 0 {
        return Err(Error::alloc(format!("invalid memory size {size} -- maybe an overflow?")));
    }
    if size == 0 {
        // SAFETY: p is a live C-heap allocation (caller contract).
        unsafe { libc::free(p as *mut c_void) };
        return Ok(ptr::null_mut());
    }
    // SAFETY: p is a live C-heap allocation; on failure realloc leaves it untouched.
    let r = unsafe { libc::realloc(p as *mut c_void, size as usize) } as *mut u8;
    if r.is_null() {
        return Err(Error::alloc(format!("not enough memory: tried to reallocate {size} bytes")));
    }
    if (r as usize).is_multiple_of(ALIGN) {
        advise_huge(r, size as usize);
        return Ok(r);
    }
    // realloc only promises malloc's alignment: move to an aligned block when one is available
    // (if not, the unaligned block is still correct, only slower for vector loads).
    let Ok(a) = th_alloc(size) else { return Ok(r) };
    // SAFETY: both blocks hold at least `size` bytes and are distinct.
    unsafe {
        ptr::copy_nonoverlapping(r, a, size as usize);
        libc::free(r as *mut c_void);
    }
    Ok(a)
}

/// `THFree`.
///
/// # Safety
/// `p` must be NULL or a live allocation from the C heap.
pub unsafe fn th_free(p: *mut u8) {
    // SAFETY: caller contract.
    unsafe { libc::free(p as *mut c_void) }
}

unsafe extern "C" fn default_malloc(_ctx: *mut c_void, size: isize) -> *mut c_void {
    match th_alloc(size) {
        Ok(p) => p as *mut c_void,
        Err(e) => {
            fail(e);
            ptr::null_mut()
        }
    }
}

unsafe extern "C" fn default_realloc(_ctx: *mut c_void, p: *mut c_void, size: isize) -> *mut c_void {
    // SAFETY: the default allocator only ever sees pointers it (or malloc) produced.
    match unsafe { th_realloc(p as *mut u8, size) } {
        Ok(p) => p as *mut c_void,
        Err(e) => {
            fail(e);
            ptr::null_mut()
        }
    }
}

unsafe extern "C" fn default_free(_ctx: *mut c_void, p: *mut c_void) {
    // SAFETY: the default allocator only ever sees pointers it (or malloc) produced.
    unsafe { th_free(p as *mut u8) }
}

/// The callbacks of `THDefaultAllocator`.
pub const DEFAULT_VTABLE: THAllocator =
    THAllocator { malloc: Some(default_malloc), realloc: Some(default_realloc), free: Some(default_free) };

static DEFAULT: THAllocator = DEFAULT_VTABLE;

/// Where a storage's memory lives: the host, or a CUDA device (`cuda::storage`'s allocator).
/// Host-only code checks `Device::Cpu` before touching memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    Cpu,
    Cuda(i32),
}

/// An allocator as a storage holds it: a vtable and its context.
#[derive(Clone, Copy, Debug)]
pub struct Allocator {
    vt: *const THAllocator,
    ctx: *mut c_void,
    device: Device,
}

// SAFETY: an allocator is a table of C functions plus a context pointer; TH's contract (and ours,
// in docs/reliability.md) is that a custom allocator may be called from whatever thread frees the storage.
unsafe impl Send for Allocator {}
// SAFETY: see above; the struct itself is immutable.
unsafe impl Sync for Allocator {}

impl Default for Allocator {
    fn default() -> Self {
        Allocator { vt: &DEFAULT, ctx: ptr::null_mut(), device: Device::Cpu }
    }
}

fn bytes_isize(bytes: usize) -> Result<isize> {
    isize::try_from(bytes).map_err(|_| Error::alloc(format!("allocation of {bytes} bytes overflows ptrdiff_t")))
}

impl Allocator {
    /// Wraps a C allocator.
    ///
    /// # Safety
    /// `vt` must be NULL or point to a `THAllocator` that stays valid (and unchanged) for as long
    /// as any storage uses it; its callbacks must behave like malloc/realloc/free on `ctx`.
    pub unsafe fn from_c(vt: *const THAllocator, ctx: *mut c_void) -> Result<Self> {
        if vt.is_null() {
            return Err(Error::null(0, "allocator"));
        }
        // SAFETY: caller contract: vt points to a live THAllocator.
        let t = unsafe { &*vt };
        if t.malloc.is_none() || t.free.is_none() {
            return Err(Error::invalid("allocator has a NULL malloc or free callback"));
        }
        Ok(Allocator { vt, ctx, device: Device::Cpu })
    }

    /// One of the library's own device allocators: its callbacks take and return addresses on
    /// `device`, which host code must never dereference.
    pub(crate) fn for_device(vt: &'static THAllocator, ctx: *mut c_void, device: Device) -> Self {
        Allocator { vt, ctx, device }
    }

    fn vt(&self) -> &THAllocator {
        // SAFETY: `from_c`'s contract / our own static.
        unsafe { &*self.vt }
    }

    pub fn device(&self) -> Device {
        self.device
    }

    pub fn ctx(&self) -> *mut c_void {
        self.ctx
    }

    pub fn is_vtable(&self, vt: *const THAllocator) -> bool {
        ptr::eq(self.vt, vt)
    }

    fn failed(&self, what: &str, bytes: usize) -> Error {
        take_detail().unwrap_or_else(|| Error::alloc(format!("allocator {what} of {bytes} bytes returned NULL")))
    }

    /// Allocates `bytes`. A NULL result for 0 bytes is success (TH: `THAlloc(0) == NULL`).
    pub fn malloc(&self, bytes: usize) -> Result<*mut u8> {
        let n = bytes_isize(bytes)?;
        take_detail();
        let f = self.vt().malloc.ok_or_else(|| Error::invalid("allocator has no malloc"))?;
        // SAFETY: a valid allocator callback called with its own context.
        let p = unsafe { f(self.ctx, n) } as *mut u8;
        if p.is_null() && (bytes > 0 || take_detail_peek()) {
            return Err(self.failed("malloc", bytes));
        }
        Ok(p)
    }

    /// Grows or shrinks `p` (holding `old` bytes) to `new` bytes, keeping the common prefix.
    /// Uses the allocator's realloc, or malloc + copy + free when it has none.
    ///
    /// # Safety
    /// `p` must be NULL or a live block of `old` bytes from this allocator.
    pub unsafe fn realloc(&self, p: *mut u8, old: usize, new: usize) -> Result<*mut u8> {
        let n = bytes_isize(new)?;
        take_detail();
        if let Some(r) = self.vt().realloc {
            // SAFETY: caller contract; callback from a valid allocator.
            let q = unsafe { r(self.ctx, p as *mut c_void, n) } as *mut u8;
            if q.is_null() && new > 0 {
                return Err(self.failed("realloc", new));
            }
            return Ok(q);
        }
        let q = self.malloc(new)?;
        if !p.is_null() && !q.is_null() {
            // SAFETY: distinct blocks, both at least min(old, new) bytes.
            unsafe { ptr::copy_nonoverlapping(p, q, old.min(new)) };
        }
        if !p.is_null() {
            // SAFETY: p came from this allocator.
            unsafe { self.free(p) };
        }
        Ok(q)
    }

    /// Releases `p`.
    ///
    /// # Safety
    /// `p` must be NULL or a live block from this allocator; it must not be used afterwards.
    pub unsafe fn free(&self, p: *mut u8) {
        if let Some(f) = self.vt().free {
            // SAFETY: caller contract.
            unsafe { f(self.ctx, p as *mut c_void) }
        }
    }
}

fn take_detail_peek() -> bool {
    DETAIL.with(|d| d.borrow().is_some())
}

// ---------------------------------------------------------------------------------------------
// The GC hook of THAlloc/THRealloc

type GcHandler = (Option<unsafe extern "C" fn(*mut c_void)>, usize);
static GC_HANDLER: Mutex<GcHandler> = Mutex::new((None, 0));
static HEAP_DELTA: AtomicIsize = AtomicIsize::new(0);

/// Sets a function called (then the allocation retried once) when `THAlloc`/`THRealloc` fail.
pub fn set_gc_handler(handler: Option<unsafe extern "C" fn(*mut c_void)>, data: *mut c_void) {
    *GC_HANDLER.lock().unwrap_or_else(|e| e.into_inner()) = (handler, data as usize);
}

/// Lets custom allocators report heap usage changes (kept as a running total).
pub fn heap_update(size: isize) {
    HEAP_DELTA.fetch_add(size, Ordering::Relaxed);
}

/// `f()`, and once more after calling the GC handler (if one is set) when it fails.
pub fn with_gc_retry<T>(f: impl Fn() -> crate::Result<T>) -> crate::Result<T> {
    f().or_else(|e| {
        let (h, data) = *GC_HANDLER.lock().unwrap_or_else(|e| e.into_inner());
        match h {
            Some(h) => {
                // SAFETY: a C function installed by THSetGCHandler with its own data.
                unsafe { h(data as *mut c_void) };
                f()
            }
            None => Err(e),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_resizable() {
        let a = Allocator::default();
        let p = a.malloc(1000).unwrap();
        assert_eq!(p as usize % ALIGN, 0);
        // SAFETY: p holds 1000 bytes.
        unsafe {
            for i in 0..1000 {
                *p.add(i) = i as u8;
            }
            let q = a.realloc(p, 1000, 100_000).unwrap();
            assert_eq!(q as usize % ALIGN, 0);
            for i in 0..1000 {
                assert_eq!(*q.add(i), i as u8);
            }
            a.free(q);
        }
        assert!(a.malloc(0).unwrap().is_null());
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri stops at an allocation it cannot satisfy instead of failing it")]
    fn failure_is_an_error() {
        assert!(th_alloc(-1).is_err());
        let e = Allocator::default().malloc(usize::MAX / 2).unwrap_err();
        assert_eq!(e.code, crate::core::error::Code::TH_ERR_ALLOC);
        assert!(Allocator::default().malloc(usize::MAX).is_err());
    }
}
