//! File and POSIX shared-memory mappings: TH's `THMapAllocator` and `THRefcountedMapAllocator`.
//!
//! A `THMapAllocatorContext` names what to map (a file path or a shm object name) and how
//! (`TH_ALLOCATOR_MAPPED_*` flags). The allocator's `malloc(ctx, size)` opens and maps it, growing
//! a shared file to `size` bytes (or mapping the whole file when `size <= 0`); `free` unmaps,
//! closes, unlinks where TH does, and frees the context: a storage owns its context.
//!
//! The refcounted variant keeps an atomic count of users in a 64-byte header in front of the data,
//! inside the shared segment, so the segment is unlinked when its last user anywhere goes.

use crate::core::allocator::{THAllocator, fail};
use crate::core::error::{Error, Result};
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::ptr;
use std::sync::atomic::{AtomicI32, Ordering};

pub const TH_ALLOCATOR_MAPPED_SHARED: c_int = 1;
pub const TH_ALLOCATOR_MAPPED_SHAREDMEM: c_int = 2;
pub const TH_ALLOCATOR_MAPPED_EXCLUSIVE: c_int = 4;
pub const TH_ALLOCATOR_MAPPED_NOCREATE: c_int = 8;
pub const TH_ALLOCATOR_MAPPED_KEEPFD: c_int = 16;
pub const TH_ALLOCATOR_MAPPED_FROMFD: c_int = 32;
pub const TH_ALLOCATOR_MAPPED_UNLINK: c_int = 64;
const ALL_FLAGS: c_int = 127;

/// Bytes in front of the data of a refcounted mapping (holds the shared count).
pub(crate) const REFCOUNT_HEADER: usize = 64;

/// What to map and how (opaque to C).
pub struct THMapAllocatorContext {
    filename: CString,
    flags: c_int,
    fd: c_int,
    /// Usable bytes mapped (after a successful malloc).
    size: usize,
    /// Start of the whole mapping (the header, for refcounted mappings).
    base: *mut u8,
    map_len: usize,
}

fn errno_msg() -> String {
    std::io::Error::last_os_error().to_string()
}

impl THMapAllocatorContext {
    /// TH's `THMapAllocatorContext_new(filename, flags)` (+ `fd` for `_newWithFd`).
    pub fn new(filename: Option<&CStr>, fd: c_int, flags: c_int) -> Result<Box<Self>> {
        if flags & !ALL_FLAGS != 0 {
            return Err(Error::invalid(format!("unknown TH_ALLOCATOR_MAPPED_* flags {flags:#x}")));
        }
        let shared = flags & (TH_ALLOCATOR_MAPPED_SHARED | TH_ALLOCATOR_MAPPED_SHAREDMEM) != 0;
        if flags & TH_ALLOCATOR_MAPPED_EXCLUSIVE != 0 && !shared {
            return Err(Error::invalid(
                "TH_ALLOCATOR_MAPPED_EXCLUSIVE is only valid with TH_ALLOCATOR_MAPPED_SHARED or _SHAREDMEM",
            ));
        }
        let filename = filename.map(CStr::to_owned).unwrap_or_else(|| c"filename not specified".to_owned());
        Ok(Box::new(THMapAllocatorContext { filename, flags, fd, size: 0, base: ptr::null_mut(), map_len: 0 }))
    }

    pub fn filename(&self) -> *const c_char {
        self.filename.as_ptr()
    }
    pub fn fd(&self) -> c_int {
        self.fd
    }
    pub fn size(&self) -> usize {
        self.size
    }
    pub fn flags(&self) -> c_int {
        self.flags
    }

    fn has(&self, f: c_int) -> bool {
        self.flags & f != 0
    }

    fn name(&self) -> String {
        self.filename.to_string_lossy().into_owned()
    }

    fn open(&self) -> Result<c_int> {
        if self.has(TH_ALLOCATOR_MAPPED_FROMFD) {
            if self.fd < 0 {
                return Err(Error::invalid("TH_ALLOCATOR_MAPPED_FROMFD needs a file descriptor"));
            }
            return Ok(self.fd);
        }
        let shared = self.has(TH_ALLOCATOR_MAPPED_SHARED) || self.has(TH_ALLOCATOR_MAPPED_SHAREDMEM);
        let mut oflag = if shared { libc::O_RDWR } else { libc::O_RDONLY };
        if shared && !self.has(TH_ALLOCATOR_MAPPED_NOCREATE) {
            oflag |= libc::O_CREAT;
        }
        if shared && self.has(TH_ALLOCATOR_MAPPED_EXCLUSIVE) {
            oflag |= libc::O_EXCL;
        }
        oflag |= libc::O_CLOEXEC;
        let fd = if self.has(TH_ALLOCATOR_MAPPED_SHAREDMEM) {
            // SAFETY: a NUL-terminated name and plain flags.
            unsafe { libc::shm_open(self.filename.as_ptr(), oflag, 0o600 as libc::mode_t) }
        } else {
            // SAFETY: a NUL-terminated path and plain flags.
            unsafe { libc::open(self.filename.as_ptr(), oflag, 0o600 as libc::c_uint) }
        };
        if fd < 0 {
            let kind = if self.has(TH_ALLOCATOR_MAPPED_SHAREDMEM) { "shared memory object" } else { "file" };
            return Err(Error::io(format!("unable to open {kind} <{}>: {}", self.name(), errno_msg())));
        }
        Ok(fd)
    }

    fn unlink(&self) {
        // SAFETY: NUL-terminated name; failure (already gone) is harmless.
        unsafe {
            if self.has(TH_ALLOCATOR_MAPPED_SHAREDMEM) {
                libc::shm_unlink(self.filename.as_ptr());
            } else {
                libc::unlink(self.filename.as_ptr());
            }
        }
    }

    /// Opens and maps; `header` extra bytes are mapped in front of the `size` usable bytes.
    fn map(&mut self, size: isize, header: usize) -> Result<*mut u8> {
        let fd = self.open()?;
        let close = |fd| {
            // SAFETY: fd is an open descriptor we own (or the caller handed over with FROMFD).
            unsafe { libc::close(fd) };
        };
        let r = self.map_fd(fd, size, header);
        if r.is_err() || !self.has(TH_ALLOCATOR_MAPPED_KEEPFD) {
            close(fd);
            if r.is_ok() {
                self.fd = -1;
            }
        } else {
            self.fd = fd;
        }
        if r.is_ok() && self.has(TH_ALLOCATOR_MAPPED_UNLINK) {
            self.unlink();
        }
        r
    }

    fn map_fd(&mut self, fd: c_int, size: isize, header: usize) -> Result<*mut u8> {
        // SAFETY: fstat into a zeroed struct on an open fd.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            return Err(Error::io(format!("unable to stat <{}>: {}", self.name(), errno_msg())));
        }
        let file_size = st.st_size.max(0) as usize;
        let shared = self.has(TH_ALLOCATOR_MAPPED_SHARED) || self.has(TH_ALLOCATOR_MAPPED_SHAREDMEM);
        let total = if size > 0 {
            let want = (size as usize)
                .checked_add(header)
                .ok_or_else(|| Error::alloc(format!("mapping of {size} bytes overflows")))?;
            if file_size < want {
                if !shared {
                    return Err(Error::io(format!(
                        "file <{}> size ({file_size} bytes) is smaller than the required mapping size ({want} bytes)",
                        self.name()
                    )));
                }
                let len = libc::off_t::try_from(want).map_err(|_| Error::alloc("mapping size overflows off_t"))?;
                // SAFETY: ftruncate on an fd opened read-write.
                if unsafe { libc::ftruncate(fd, len) } != 0 {
                    return Err(Error::io(format!(
                        "unable to resize <{}> to {want} bytes: {}",
                        self.name(),
                        errno_msg()
                    )));
                }
            }
            want
        } else {
            if file_size <= header {
                return Err(Error::io(format!("cannot map <{}>: it is empty", self.name())));
            }
            file_size
        };
        let prot = libc::PROT_READ | libc::PROT_WRITE;
        let kind = if shared { libc::MAP_SHARED } else { libc::MAP_PRIVATE };
        // SAFETY: a fresh mapping of `total` bytes of an open fd; the kernel checks the rest.
        let p = unsafe { libc::mmap(ptr::null_mut(), total, prot, kind, fd, 0) };
        if p == libc::MAP_FAILED {
            return Err(Error::alloc(format!("unable to mmap {total} bytes of <{}>: {}", self.name(), errno_msg())));
        }
        self.base = p as *mut u8;
        self.map_len = total;
        self.size = total - header;
        // SAFETY: header < total, inside the mapping.
        Ok(unsafe { self.base.add(header) })
    }

    fn unmap(&mut self) {
        if !self.base.is_null() {
            // SAFETY: base/map_len describe the live mapping made by `map`.
            unsafe { libc::munmap(self.base as *mut c_void, self.map_len) };
            self.base = ptr::null_mut();
        }
        if self.fd >= 0 && self.has(TH_ALLOCATOR_MAPPED_KEEPFD) {
            // SAFETY: a descriptor kept open by `map`.
            unsafe { libc::close(self.fd) };
            self.fd = -1;
        }
    }

    fn refcount(&self) -> &AtomicI32 {
        // SAFETY: the header of a live refcounted mapping is 64 bytes, page-aligned, shared.
        unsafe { AtomicI32::from_ptr(self.base as *mut i32) }
    }
}

fn ctx_mut<'a>(ctx: *mut c_void) -> Result<&'a mut THMapAllocatorContext> {
    if ctx.is_null() {
        return Err(Error::null(0, "THMapAllocatorContext"));
    }
    // SAFETY: map allocators are only ever given contexts made by THMapAllocatorContext_new.
    Ok(unsafe { &mut *(ctx as *mut THMapAllocatorContext) })
}

unsafe extern "C" fn map_malloc(ctx: *mut c_void, size: isize) -> *mut c_void {
    let r = ctx_mut(ctx).and_then(|c| {
        if !c.base.is_null() {
            return Err(Error::invalid("THMapAllocatorContext is already mapped"));
        }
        c.map(size, 0)
    });
    match r {
        Ok(p) => p as *mut c_void,
        Err(e) => {
            fail(e);
            ptr::null_mut()
        }
    }
}

unsafe extern "C" fn map_realloc(_ctx: *mut c_void, _p: *mut c_void, _size: isize) -> *mut c_void {
    fail(Error::invalid("cannot realloc mapped data"));
    ptr::null_mut()
}

unsafe extern "C" fn map_free(ctx: *mut c_void, _p: *mut c_void) {
    if ctx.is_null() {
        return;
    }
    // SAFETY: the context was made by THMapAllocatorContext_new and is owned by the storage
    // being freed; this is its last use.
    let mut c = unsafe { Box::from_raw(ctx as *mut THMapAllocatorContext) };
    let owned_name = !c.has(TH_ALLOCATOR_MAPPED_FROMFD) && !c.has(TH_ALLOCATOR_MAPPED_UNLINK);
    c.unmap();
    if c.has(TH_ALLOCATOR_MAPPED_SHAREDMEM) && owned_name {
        c.unlink();
    }
}

fn check_refcounted_flags(c: &THMapAllocatorContext) -> Result<()> {
    if !c.has(TH_ALLOCATOR_MAPPED_SHAREDMEM) {
        return Err(Error::invalid("THRefcountedMapAllocator requires TH_ALLOCATOR_MAPPED_SHAREDMEM"));
    }
    if c.has(TH_ALLOCATOR_MAPPED_FROMFD | TH_ALLOCATOR_MAPPED_KEEPFD | TH_ALLOCATOR_MAPPED_UNLINK) {
        return Err(Error::invalid("THRefcountedMapAllocator does not support FROMFD, KEEPFD or UNLINK"));
    }
    Ok(())
}

unsafe extern "C" fn rc_map_malloc(ctx: *mut c_void, size: isize) -> *mut c_void {
    let r = ctx_mut(ctx).and_then(|c| {
        check_refcounted_flags(c)?;
        if !c.base.is_null() {
            return Err(Error::invalid("THMapAllocatorContext is already mapped"));
        }
        let p = c.map(size, REFCOUNT_HEADER)?;
        // A fresh segment is zero-filled, so its creator moves the count from 0 to 1.
        c.refcount().fetch_add(1, Ordering::AcqRel);
        Ok(p)
    });
    match r {
        Ok(p) => p as *mut c_void,
        Err(e) => {
            fail(e);
            ptr::null_mut()
        }
    }
}

unsafe extern "C" fn rc_map_free(ctx: *mut c_void, _p: *mut c_void) {
    if ctx.is_null() {
        return;
    }
    // SAFETY: as in map_free.
    let mut c = unsafe { Box::from_raw(ctx as *mut THMapAllocatorContext) };
    let last = !c.base.is_null() && c.refcount().fetch_sub(1, Ordering::AcqRel) == 1;
    c.unmap();
    if last {
        c.unlink();
    }
}

/// The callbacks of `THMapAllocator`.
pub const MAP_VTABLE: THAllocator =
    THAllocator { malloc: Some(map_malloc), realloc: Some(map_realloc), free: Some(map_free) };
/// The callbacks of `THRefcountedMapAllocator`.
pub const RC_MAP_VTABLE: THAllocator =
    THAllocator { malloc: Some(rc_map_malloc), realloc: Some(map_realloc), free: Some(rc_map_free) };

static MAP: THAllocator = MAP_VTABLE;

/// The allocator `newWithMapping` uses.
pub fn map_allocator() -> &'static THAllocator {
    &MAP
}

/// `THRefcountedMapAllocator_incref`: one more user of the segment holding `data`.
pub fn rc_incref(ctx: &THMapAllocatorContext, data: *mut c_void) -> Result<()> {
    check_rc_data(ctx, data)?;
    ctx.refcount().fetch_add(1, Ordering::AcqRel);
    Ok(())
}

/// `THRefcountedMapAllocator_decref`: returns true when the count reached zero.
pub fn rc_decref(ctx: &THMapAllocatorContext, data: *mut c_void) -> Result<bool> {
    check_rc_data(ctx, data)?;
    Ok(ctx.refcount().fetch_sub(1, Ordering::AcqRel) == 1)
}

fn check_rc_data(ctx: &THMapAllocatorContext, data: *mut c_void) -> Result<()> {
    check_refcounted_flags(ctx)?;
    // SAFETY: pointer arithmetic on a live mapping (only compared, never dereferenced here).
    if ctx.base.is_null() || data as *mut u8 != unsafe { ctx.base.add(REFCOUNT_HEADER) } {
        return Err(Error::invalid("data is not the mapping of this THMapAllocatorContext"));
    }
    Ok(())
}
