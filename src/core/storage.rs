//! `Storage<T>`: a typed buffer with an allocator, TH's storage flags and a device.
//!
//! A storage is shared (`Rc<Storage<T>>`) by every tensor viewing it and by C handles. Its buffer
//! may be replaced (resize, swap) through any of those owners; the buffer description sits in a
//! `ContractCell`, since as in TH mutating a storage while another thread uses it is the
//! caller's to avoid (concurrent reads are fine). Element memory itself is only ever touched
//! through raw pointers, never through `&[T]`/`&mut [T]`, because C code may alias it freely.

use crate::core::allocator::{Allocator, Device, THAllocator};
use crate::core::dtype::Scalar;
use crate::core::error::{Error, Result};
use crate::io::mapping::{self, THMapAllocatorContext};

use crate::core::cell::{ContractCell, Read, Write};
use crate::core::refcount::Rc;
use std::ffi::{CStr, c_int, c_void};
use std::marker::PhantomData;
use std::ptr;

pub const TH_STORAGE_REFCOUNTED: u8 = 1;
pub const TH_STORAGE_RESIZABLE: u8 = 2;
pub const TH_STORAGE_FREEMEM: u8 = 4;
pub const TH_STORAGE_VIEW: u8 = 8;

struct Buf {
    ptr: *mut u8,
    len: usize,
    flags: u8,
    alloc: Allocator,
}

/// A typed buffer. See the module docs.
pub struct Storage<T: Scalar> {
    buf: ContractCell<Buf>,
    _t: PhantomData<T>,
}

// SAFETY: the buffer is plain memory of `T: Send + Sync` elements owned by the storage; the
// description is in a `ContractCell`, and element access goes through raw pointers under TH's
// "no concurrent mutation" contract.
unsafe impl<T: Scalar> Send for Storage<T> {}
// SAFETY: see above.
unsafe impl<T: Scalar> Sync for Storage<T> {}

fn bytes_for<T>(n: usize) -> Result<usize> {
    n.checked_mul(std::mem::size_of::<T>())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| Error::size(format!("storage of {n} elements overflows the address space")))
}

/// Converts a C element count to `usize`, rejecting negative values.
pub fn check_len(n: isize) -> Result<usize> {
    usize::try_from(n).map_err(|_| Error::size(format!("invalid storage size {n}: must be >= 0")))
}

impl<T: Scalar> Storage<T> {
    fn wrap(ptr: *mut u8, len: usize, flags: u8, alloc: Allocator) -> Rc<Self> {
        Rc::new(Storage { buf: ContractCell::new(Buf { ptr, len, flags, alloc }), _t: PhantomData })
    }

    fn read(&self) -> Read<'_, Buf> {
        self.buf.read()
    }

    fn write(&self) -> Write<'_, Buf> {
        self.buf.write()
    }

    /// `n` uninitialised elements from `alloc` (TH's `newWithAllocator`).
    pub fn with_allocator(n: usize, alloc: Allocator) -> Result<Rc<Self>> {
        let ptr = alloc.malloc(bytes_for::<T>(n)?)?;
        let flags = TH_STORAGE_REFCOUNTED | TH_STORAGE_RESIZABLE | TH_STORAGE_FREEMEM;
        Ok(Self::wrap(ptr, n, flags, alloc))
    }

    /// `n` uninitialised elements, 64-byte aligned (TH's `newWithSize`).
    pub fn new(n: usize) -> Result<Rc<Self>> {
        Self::with_allocator(n, Allocator::default())
    }

    /// A storage holding a copy of `v`.
    pub fn from_slice(v: &[T]) -> Result<Rc<Self>> {
        let s = Self::new(v.len())?;
        if !v.is_empty() {
            // SAFETY: fresh buffer of v.len() elements, distinct from v.
            unsafe { ptr::copy_nonoverlapping(v.as_ptr(), s.data_ptr(), v.len()) };
        }
        Ok(s)
    }

    /// Takes ownership of `n` elements at `data`, to be released by `alloc` (TH's
    /// `newWithDataAndAllocator`; `newWithData` with the default allocator).
    ///
    /// # Safety
    /// `data` must be NULL or a block holding `n` elements that `alloc.free` can release, aligned
    /// for `T`, not used by the caller afterwards except through this storage.
    pub unsafe fn from_raw(data: *mut T, n: usize, alloc: Allocator) -> Result<Rc<Self>> {
        bytes_for::<T>(n)?;
        if data.is_null() && n > 0 {
            return Err(Error::null(1, "data"));
        }
        if !(data as usize).is_multiple_of(std::mem::align_of::<T>()) {
            return Err(Error::invalid(format!("data {data:p} is not aligned for {}", T::DTYPE)));
        }
        let flags = TH_STORAGE_REFCOUNTED | TH_STORAGE_RESIZABLE | TH_STORAGE_FREEMEM;
        Ok(Self::wrap(data as *mut u8, n, flags, alloc))
    }

    /// Maps a file or shared-memory object (TH's `newWithMapping`): `n <= 0` maps the whole
    /// object and takes its size from it. Not resizable.
    pub fn mapped(filename: Option<&CStr>, n: isize, flags: c_int) -> Result<Rc<Self>> {
        Self::mapped_with(mapping::map_allocator(), filename, n, flags)
    }

    /// `mapped` through a given map allocator (plain or refcounted). The context is created
    /// here and freed here if mapping fails.
    pub fn mapped_with(vt: &'static THAllocator, filename: Option<&CStr>, n: isize, flags: c_int) -> Result<Rc<Self>> {
        let ctx = Box::into_raw(THMapAllocatorContext::new(filename, -1, flags)?);
        // SAFETY: a static map vtable and a fresh context.
        let alloc = unsafe { Allocator::from_c(vt, ctx as *mut c_void)? };
        Self::from_map_allocator(alloc, n).inspect_err(|_| {
            // SAFETY: the mapping failed, so no storage owns the context; we made it.
            drop(unsafe { Box::from_raw(ctx) });
        })
    }

    /// `newWithAllocator` for a map allocator, whose context knows the mapped size: `n <= 0`
    /// maps the whole object. Not resizable. On failure the context is left to the caller.
    pub fn from_map_allocator(alloc: Allocator, n: isize) -> Result<Rc<Self>> {
        let bytes = if n > 0 { bytes_for::<T>(n as usize)? } else { 0 };
        let ptr = alloc.malloc(bytes)?;
        if ptr.is_null() {
            return Err(Error::alloc("map allocator returned NULL"));
        }
        // SAFETY: map allocators' contexts are THMapAllocatorContext, live until free.
        let mapped = unsafe { (*(alloc.ctx() as *const THMapAllocatorContext)).size() };
        let len = mapped / std::mem::size_of::<T>();
        let flags = TH_STORAGE_REFCOUNTED | TH_STORAGE_FREEMEM;
        Ok(Self::wrap(ptr, len, flags, alloc))
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.read().len
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element pointer (NULL for an empty default storage). Valid until the next
    /// resize/swap of this storage.
    pub fn data_ptr(&self) -> *mut T {
        self.read().ptr as *mut T
    }

    /// Pointer and length read together.
    pub fn raw_parts(&self) -> (*mut T, usize) {
        let b = self.read();
        (b.ptr as *mut T, b.len)
    }

    pub fn device(&self) -> Device {
        self.read().alloc.device()
    }

    /// Pointer and length read together, when the storage is host memory
    /// (the pointwise fast path; `View::host_ptr` gives the reason when it is not).
    pub fn host_parts(&self) -> Option<(*mut T, usize)> {
        let b = self.read();
        (b.alloc.device() == Device::Cpu).then_some((b.ptr as *mut T, b.len))
    }

    pub fn flags(&self) -> u8 {
        self.read().flags
    }

    pub fn set_flags(&self, set: u8, clear: u8) {
        let mut b = self.write();
        b.flags = (b.flags | set) & !clear;
    }

    pub fn allocator(&self) -> Allocator {
        self.read().alloc
    }

    fn check_index(b: &Buf, i: isize) -> Result<usize> {
        usize::try_from(i)
            .ok()
            .filter(|&u| u < b.len)
            .ok_or_else(|| Error::index(format!("index {i} out of bounds for storage of size {}", b.len)).at_arg(2))
    }

    fn check_host(b: &Buf) -> Result<()> {
        match b.alloc.device() {
            Device::Cpu => Ok(()),
            d => Err(Error::new(
                crate::core::error::Code::TH_ERR_INVALID_ARG,
                format!("storage lives on {d:?}, not the host"),
            )),
        }
    }

    pub fn get(&self, i: isize) -> Result<T> {
        let b = self.read();
        Self::check_host(&b)?;
        let i = Self::check_index(&b, i)?;
        // SAFETY: i < len, buffer live while `b` is read.
        Ok(unsafe { ptr::read((b.ptr as *const T).add(i)) })
    }

    pub fn set(&self, i: isize, v: T) -> Result<()> {
        let b = self.read();
        Self::check_host(&b)?;
        let i = Self::check_index(&b, i)?;
        // SAFETY: i < len, buffer live while `b` is read (element writes are the caller's to order).
        unsafe { ptr::write((b.ptr as *mut T).add(i), v) };
        Ok(())
    }

    pub fn fill(&self, v: T) -> Result<()> {
        let b = self.read();
        Self::check_host(&b)?;
        let p = b.ptr as *mut T;
        for i in 0..b.len {
            // SAFETY: i < len.
            unsafe { ptr::write(p.add(i), v) };
        }
        Ok(())
    }

    /// Resizes to `n` elements keeping the common prefix (TH: only if RESIZABLE).
    pub fn resize(&self, n: usize) -> Result<()> {
        let bytes = bytes_for::<T>(n)?;
        let mut b = self.write();
        if b.flags & TH_STORAGE_RESIZABLE == 0 {
            return Err(Error::invalid("trying to resize storage that is not resizable").at_arg(1));
        }
        if n == b.len {
            return Ok(());
        }
        let old = b.len * std::mem::size_of::<T>();
        // SAFETY: b.ptr is this allocator's live block of `old` bytes (FREEMEM storages), or
        // memory we don't own (no FREEMEM): then we allocate fresh and copy, never freeing it.
        let p = unsafe {
            if b.flags & TH_STORAGE_FREEMEM != 0 {
                b.alloc.realloc(b.ptr, old, bytes)?
            } else {
                if b.alloc.device() != Device::Cpu {
                    return Err(Error::invalid("cannot resize a device storage whose memory it does not own").at_arg(1));
                }
                let q = b.alloc.malloc(bytes)?;
                if !b.ptr.is_null() && !q.is_null() {
                    ptr::copy_nonoverlapping(b.ptr, q, old.min(bytes));
                }
                b.flags |= TH_STORAGE_FREEMEM;
                q
            }
        };
        b.ptr = p;
        b.len = n;
        Ok(())
    }

    /// Exchanges buffers, sizes, flags and allocators (not refcounts) with `other`.
    pub fn swap(&self, other: &Self) {
        if ptr::eq(self, other) {
            return;
        }
        let mut a = self.write();
        let mut b = other.write();
        std::mem::swap(&mut *a, &mut *b);
    }

    /// Copies `src` (any dtype, converted as C casts) into this storage; sizes must match.
    pub fn copy_from<U: Scalar>(&self, src: &Storage<U>) -> Result<()> {
        let (sp, sn) = src.raw_parts();
        let b = self.read();
        Self::check_host(&b)?;
        if sn != b.len {
            return Err(Error::size(format!(
                "size mismatch: cannot copy a storage of {sn} elements into one of {}",
                b.len
            ))
            .at_arg(2));
        }
        let dp = b.ptr as *mut T;
        // Same dtype: a plain copy (Bool goes through `cast`, which stores 0/1 for any byte).
        if std::any::TypeId::of::<T>() == std::any::TypeId::of::<U>() && T::DTYPE != crate::core::dtype::DType::Bool {
            if sn > 0 {
                // SAFETY: both buffers hold sn elements; `copy` allows them to be the same.
                unsafe { ptr::copy(sp as *const T, dp, sn) };
            }
            return Ok(());
        }
        for i in 0..sn {
            // SAFETY: i < sn for both buffers.
            unsafe { ptr::write(dp.add(i), ptr::read(sp.add(i)).cast::<T>()) };
        }
        Ok(())
    }

    /// Copies `len()` elements from `src` (TH's `rawCopy`).
    ///
    /// # Safety
    /// `src` must point to at least `len()` readable elements.
    pub unsafe fn raw_copy(&self, src: *const T) -> Result<()> {
        let b = self.read();
        Self::check_host(&b)?;
        if b.len > 0 {
            if src.is_null() {
                return Err(Error::null(2, "src"));
            }
            // SAFETY: caller guarantees src has len elements; `copy` tolerates overlap.
            unsafe { ptr::copy(src, b.ptr as *mut T, b.len) };
        }
        Ok(())
    }
}

impl<T: Scalar> Drop for Storage<T> {
    fn drop(&mut self) {
        let b = self.buf.get_mut();
        if b.flags & TH_STORAGE_FREEMEM != 0 {
            // SAFETY: FREEMEM means the buffer belongs to this allocator and no one else frees it;
            // this is the last owner.
            unsafe { b.alloc.free(b.ptr) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basics() {
        let s = Storage::<f32>::from_slice(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s.data_ptr() as usize % 64, 0);
        assert_eq!(s.get(1).unwrap(), 2.0);
        assert!(s.get(3).is_err());
        assert!(s.get(-1).is_err());
        s.set(2, 9.0).unwrap();
        s.resize(5).unwrap();
        assert_eq!(s.get(2).unwrap(), 9.0);
        s.fill(4.0).unwrap();
        assert_eq!(s.get(4).unwrap(), 4.0);
        let d = Storage::<i16>::new(5).unwrap();
        d.copy_from(&s).unwrap();
        assert_eq!(d.get(3).unwrap(), 4);
        let small = Storage::<i16>::new(2).unwrap();
        assert!(small.copy_from(&s).is_err());
    }

    #[test]
    fn swap_and_flags() {
        let a = Storage::<i32>::from_slice(&[1, 2]).unwrap();
        let b = Storage::<i32>::from_slice(&[7]).unwrap();
        a.swap(&b);
        assert_eq!(a.len(), 1);
        assert_eq!(b.get(1).unwrap(), 2);
        a.set_flags(0, TH_STORAGE_RESIZABLE);
        assert!(a.resize(10).is_err());
        assert_eq!(a.len(), 1);
    }
}
