//! `generic/THStorage.h`, `generic/THStorageCopy.h` for every dtype, and the non-generic
//! `THLongStorage_*` helpers of `THStorage.h`.
//!
//! Ownership: `new*` return a new reference (+1), `retain` adds one, `free`/`release` drop one;
//! every other argument is borrowed.

use super::allocator::is_map_allocator;
use super::general::{THDescBuff, c_sizes};
use super::home::{Cuda, Home, Host};
use super::thc::*;
use super::*;
use crate::core::allocator::{Allocator, THAllocator};
use crate::core::error::{Error, Result};
use crate::core::storage::{Storage, TH_STORAGE_REFCOUNTED, check_len};
use crate::core::tensor::{broadcast_shapes, infer_size, size_desc};
use std::ffi::{CStr, c_char, c_int, c_void};
use std::ptr;

/// Applies TH's `setFlag`/`clearFlag` to a storage handle (REFCOUNTED lives on the refcount).
fn storage_flags<T: crate::Scalar>(s: &crate::core::refcount::Shared<Storage<T>>, set: c_char, clear: c_char) {
    let (set, clear) = (set as u8, clear as u8);
    if set & TH_STORAGE_REFCOUNTED != 0 {
        s.set_refcounted(true);
    }
    if clear & TH_STORAGE_REFCOUNTED != 0 {
        s.set_refcounted(false);
    }
    s.set_flags(set, clear);
}

/// Builds a storage over a C allocator; map allocators take their size from the mapping.
///
/// # Safety
/// `allocator` must be NULL or a valid allocator that outlives the storage.
unsafe fn with_allocator<T: crate::Scalar>(
    size: isize,
    allocator: *mut THAllocator,
    ctx: *mut c_void,
) -> Result<crate::core::refcount::Rc<Storage<T>>> {
    // SAFETY: caller contract.
    let a = unsafe { Allocator::from_c(allocator, ctx) }.map_err(|e| e.at_arg(2))?;
    if is_map_allocator(allocator) {
        return Storage::from_map_allocator(a, size);
    }
    Storage::with_allocator(check_len(size).map_err(|e| e.at_arg(1))?, a)
}

macro_rules! storage_api {
    ($($row:tt),* $(,)?) => { with_all_dtypes!(storage_api; $($row),*); };
    (@one $all:tt $R:ident, $T:ty, $C:ty) => {
        storage_api!(@gen $all $R, $T, $C; [TH $R] [] Host);
        storage_api!(@host $R, $T, $C);
        thc_family!(storage_api $all $R, $T, $C);
    };
    (@copy_from $S:ident, $ST:ty; $R:ident, $T:ty, $C:ty; [$($P:tt)*] [$($lead:tt)*] $H:ident) => { pastey::paste! {
            th_fn! {
                #[doc = "Copies a " $S " storage into this one, converting each element as a C cast (sizes must match)."]
                fn [<$($P)* Storage_copy $S>] @[$($lead)*](storage: *mut [<$($P)* Storage>] as obj, src: *mut [<TH $S Storage>] as obj) {
                    $H::storage_copy::<$T, $ST>(storage, src)
                }
            }
    } };
    (@gen $all:tt $R:ident, $T:ty, $C:ty; $Pg:tt $Lg:tt $H:ident) => { storage_api!(@body $all $R, $T, $C; $Pg $Lg $H; $Pg $Lg); };
    (@body [$(($S:ident, $ST:ty)),*] $R:ident, $T:ty, $C:ty; [$($P:tt)*] [$($lead:tt)*] $H:ident; $Pg:tt $Lg:tt) => { pastey::paste! {
        th_fn! {
            /// Pointer to the elements (borrowed; NULL when empty). Invalidated by resize/swap.
            fn [<$($P)* Storage_data>] @[$($lead)*](storage: *const [<$($P)* Storage>] as obj) -> *mut $C = ptr::null_mut(); {
                Ok(storage.data_ptr() as *mut $C)
            }
            /// Number of elements.
            fn [<$($P)* Storage_size>] @[$($lead)*](storage: *const [<$($P)* Storage>] as obj) -> isize = 0; {
                Ok(storage.len() as isize)
            }
        }
        th_fn! {
            /// `storage[index] = value` (0-based, bounds-checked).
            fn [<$($P)* Storage_set>] @[$($lead)*](storage: *mut [<$($P)* Storage>] as obj, index: isize, value: $C) {
                $H::storage_set(storage, index, <$T>::from_c(value))
            }
            /// `storage[index]` (0-based, bounds-checked; 0 on error).
            fn [<$($P)* Storage_get>] @[$($lead)*](storage: *const [<$($P)* Storage>] as obj, index: isize) -> $C = <$T>::default().to_c(); {
                Ok($H::storage_get(storage, index)?.to_c())
            }
            /// A new empty storage (+1).
            fn [<$($P)* Storage_new>] @[$($lead)*]() -> *mut [<$($P)* Storage>] = ptr::null_mut(); {
                Ok(into_handle($H::new_storage::<$T>(0)?))
            }
            /// A new storage of `size` uninitialised elements, 64-byte aligned (+1).
            fn [<$($P)* Storage_newWithSize>] @[$($lead)*](size: isize) -> *mut [<$($P)* Storage>] = ptr::null_mut(); {
                Ok(into_handle($H::new_storage::<$T>(check_len(size).map_err(|e| e.at_arg(1))?)?))
            }
            /// A new storage `{a}` (+1).
            fn [<$($P)* Storage_newWithSize1>] @[$($lead)*](a: $C) -> *mut [<$($P)* Storage>] = ptr::null_mut(); {
                Ok(into_handle($H::storage_from(&[<$T>::from_c(a)])?))
            }
            /// A new storage `{a, b}` (+1).
            fn [<$($P)* Storage_newWithSize2>] @[$($lead)*](a: $C, b: $C) -> *mut [<$($P)* Storage>] = ptr::null_mut(); {
                Ok(into_handle($H::storage_from(&[<$T>::from_c(a), <$T>::from_c(b)])?))
            }
            /// A new storage `{a, b, c}` (+1).
            fn [<$($P)* Storage_newWithSize3>] @[$($lead)*](a: $C, b: $C, c: $C) -> *mut [<$($P)* Storage>] = ptr::null_mut(); {
                Ok(into_handle($H::storage_from(&[<$T>::from_c(a), <$T>::from_c(b), <$T>::from_c(c)])?))
            }
            /// A new storage `{a, b, c, d}` (+1).
            fn [<$($P)* Storage_newWithSize4>] @[$($lead)*](a: $C, b: $C, c: $C, d: $C) -> *mut [<$($P)* Storage>] = ptr::null_mut(); {
                let v = [<$T>::from_c(a), <$T>::from_c(b), <$T>::from_c(c), <$T>::from_c(d)];
                Ok(into_handle($H::storage_from(&v)?))
            }
            /// Sets `TH_STORAGE_*` flag bits.
            fn [<$($P)* Storage_setFlag>] @[$($lead)*](storage: *mut [<$($P)* Storage>] as obj, flag: c_char) {
                storage_flags(storage, flag, 0);
                Ok(())
            }
            /// Clears `TH_STORAGE_*` flag bits (clearing REFCOUNTED makes retain/free no-ops).
            fn [<$($P)* Storage_clearFlag>] @[$($lead)*](storage: *mut [<$($P)* Storage>] as obj, flag: c_char) {
                storage_flags(storage, 0, flag);
                Ok(())
            }
        }
        refcount_fns!([<$($P)* Storage>], storage, "the storage", [$($lead)*]);
        th_fn! {
            /// Exchanges the contents (data, size, flags, allocator) of two storages, not their refcounts.
            fn [<$($P)* Storage_swap>] @[$($lead)*](storage1: *mut [<$($P)* Storage>] as obj, storage2: *mut [<$($P)* Storage>] as obj) {
                storage1.swap(storage2);
                // TH_STORAGE_REFCOUNTED is storage1 flag like the others (kept on the refcount).
                let (ra, rb) = (storage1.is_refcounted(), storage2.is_refcounted());
                storage1.set_refcounted(rb);
                storage2.set_refcounted(ra);
                Ok(())
            }
            /// Resizes to `size` elements keeping the common prefix (needs `TH_STORAGE_RESIZABLE`).
            fn [<$($P)* Storage_resize>] @[$($lead)*](storage: *mut [<$($P)* Storage>] as obj, size: isize) {
                storage.resize(check_len(size).map_err(|e| e.at_arg(2))?)
            }
            /// Sets every element to `value`.
            fn [<$($P)* Storage_fill>] @[$($lead)*](storage: *mut [<$($P)* Storage>] as obj, value: $C) {
                $H::storage_fill(storage, <$T>::from_c(value))
            }
            /// Copies `src` into `storage` (sizes must match).
            fn [<$($P)* Storage_copy>] @[$($lead)*](storage: *mut [<$($P)* Storage>] as obj, src: *mut [<$($P)* Storage>] as obj) {
                $H::storage_copy::<$T, $T>(storage, src)
            }
        }
        $( storage_api!(@copy_from $S, $ST; $R, $T, $C; $Pg $Lg $H); )*
    } };
    (@host $R:ident, $T:ty, $C:ty) => { pastey::paste! {
        /// Size of one element in bytes.
        #[unsafe(no_mangle)]
        pub extern "C" fn [<TH $R Storage_elementSize>]() -> usize {
            std::mem::size_of::<$T>()
        }
        th_fn! {
            /// A new storage mapping `filename` (+1): a file, or a POSIX shared-memory object with
            /// `TH_ALLOCATOR_MAPPED_SHAREDMEM`. `size <= 0` maps the whole object. Not resizable.
            fn [<TH $R Storage_newWithMapping>](filename: *const c_char, size: isize, flags: c_int) -> *mut [<TH $R Storage>] = ptr::null_mut(); {
                if filename.is_null() {
                    return Err(Error::null(1, "filename"));
                }
                // SAFETY: a NUL-terminated string from the caller.
                let name = unsafe { CStr::from_ptr(filename) };
                Ok(into_handle(Storage::<$T>::mapped(Some(name), size, flags)?))
            }
            /// A new storage (+1) taking ownership of `size` elements at `data`, which must come from
            /// `THAlloc` or `malloc` (it is released with `free`). On error `data` stays the caller's.
            fn [<TH $R Storage_newWithData>](data: *mut $C, size: isize) -> *mut [<TH $R Storage>] = ptr::null_mut(); {
                let n = check_len(size).map_err(|e| e.at_arg(2))?;
                // SAFETY: caller contract: a C-heap block of n elements handed over.
                Ok(into_handle(unsafe { Storage::from_raw(data as *mut $T, n, Allocator::default())? }))
            }
            /// A new storage of `size` elements from `allocator->malloc(allocatorContext, bytes)` (+1).
            /// The allocator must stay valid while the storage lives.
            fn [<TH $R Storage_newWithAllocator>](size: isize, allocator: *mut THAllocator, allocator_context: *mut c_void) -> *mut [<TH $R Storage>] = ptr::null_mut(); {
                // SAFETY: allocator from the caller (contract above).
                Ok(into_handle(unsafe { with_allocator::<$T>(size, allocator, allocator_context)? }))
            }
            /// A new storage (+1) taking ownership of `data` (`size` elements), released later with
            /// `allocator->free(allocatorContext, data)`. On error `data` stays the caller's.
            fn [<TH $R Storage_newWithDataAndAllocator>](data: *mut $C, size: isize, allocator: *mut THAllocator, allocator_context: *mut c_void) -> *mut [<TH $R Storage>] = ptr::null_mut(); {
                let n = check_len(size).map_err(|e| e.at_arg(2))?;
                // SAFETY: allocator and block from the caller (contract above).
                let a = unsafe { Allocator::from_c(allocator, allocator_context) }.map_err(|e| e.at_arg(3))?;
                // SAFETY: as above.
                Ok(into_handle(unsafe { Storage::from_raw(data as *mut $T, n, a)? }))
            }
            /// Copies `size()` elements from the raw pointer `src`.
            fn [<TH $R Storage_rawCopy>](storage: *mut [<TH $R Storage>], src: *mut $C) {
                // SAFETY: a handle and a buffer of size() elements from the caller.
                unsafe { obj(storage, 1)?.raw_copy(src as *const $T) }
            }
        }
    } };
}
crate::th_dtypes!(storage_api);

/// Reads a `THLongStorage` as a list of sizes.
///
/// # Safety
/// `p` must be NULL or a live handle.
pub(crate) unsafe fn long_list(p: *const THLongStorage, arg: u32) -> Result<Option<Vec<i64>>> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: caller contract.
    let s = unsafe { obj(p, arg)? };
    let (ptr, n) = s.raw_parts();
    // SAFETY: the storage holds n elements.
    Ok(Some(if n == 0 { Vec::new() } else { unsafe { std::slice::from_raw_parts(ptr, n) }.to_vec() }))
}

/// Reads a `THLongStorage` that must be given (NULL is an error naming `what`).
///
/// # Safety
/// As for `long_list`.
pub(crate) unsafe fn required_list(p: *const THLongStorage, what: &str, arg: u32) -> Result<Vec<i64>> {
    // SAFETY: forwarded contract.
    unsafe { long_list(p, arg)? }.ok_or_else(|| Error::null(arg, what))
}

/// A new `THLongStorage` holding `v` (+1).
pub(crate) fn new_long_storage(v: &[i64]) -> Result<*mut THLongStorage> {
    Ok(into_handle(Storage::from_slice(v)?))
}

th_fn! {
    /// `"[2 x 3]"` for a size storage.
    fn THLongStorage_sizeDesc(size: *const THLongStorage as required_list("size")) -> THDescBuff = THDescBuff::empty(); {
        Ok(THDescBuff::from_str(&size_desc(&size)))
    }

    /// A new size storage (+1) with its one -1 entry inferred so it holds `nElement` elements.
    fn THLongStorage_newInferSize(size: *mut THLongStorage as required_list("size"), n_element: isize) -> *mut THLongStorage = ptr::null_mut(); {
        let n = check_len(n_element).map_err(|e| e.at_arg(2))?;
        new_long_storage(&infer_size(&size, n)?)
    }
}

/// Writes `msg` (cut to fit) and a NUL into the caller's buffer, if any.
///
/// # Safety
/// `buf` is NULL or valid for `len` bytes.
unsafe fn write_error(buf: *mut c_char, len: c_int, msg: &str) {
    if buf.is_null() || len <= 0 {
        return;
    }
    let n = (len as usize - 1).min(msg.len());
    // SAFETY: the caller gave a buffer of `len` bytes (contract); we write n + 1 <= len.
    unsafe {
        ptr::copy_nonoverlapping(msg.as_ptr() as *const c_char, buf, n);
        *buf.add(n) = 0;
    }
}

/// Stores `shape` into `output` (resized) or writes the error to the buffer; 0 or -1.
fn broadcast_result(
    output: *mut THLongStorage,
    shape: Result<Vec<i64>>,
    buf: *mut c_char,
    len: c_int,
) -> Result<c_int> {
    match shape {
        Ok(shape) => {
            // SAFETY: a handle from the caller.
            let out = unsafe { obj(output, 1)? };
            out.resize(shape.len())?;
            for (i, &s) in shape.iter().enumerate() {
                out.set(i as isize, s)?;
            }
            Ok(0)
        }
        Err(e) => {
            // SAFETY: the C caller's buffer of `len` bytes.
            unsafe { write_error(buf, len, &e.msg) };
            Ok(-1)
        }
    }
}

th_fn! {
    /// Broadcasts two size arrays (numpy rules) into `output`; returns 0, or -1 with a message
    /// in `error_buffer`.
    fn THLongStorage_inferSize2(output: *mut THLongStorage, sizes_a: *mut i64 as c_sizes(dims_a), dims_a: i64, sizes_b: *mut i64 as c_sizes(dims_b), dims_b: i64, error_buffer: *mut c_char, buffer_len: c_int) -> c_int = -1; {
        broadcast_result(output, broadcast_shapes(sizes_a, sizes_b), error_buffer, buffer_len)
    }

    /// Broadcasts `n` size arrays into `output`; returns 0, or -1 with a message in `error_buffer`.
    fn THLongStorage_inferSizeN(output: *mut THLongStorage, n: c_int, sizes: *mut *mut i64, dims: *mut i64, error_buffer: *mut c_char, buffer_len: c_int) -> c_int = -1; {
        let n = usize::try_from(n).ok().filter(|&n| n > 0).ok_or_else(|| Error::size("n must be positive").at_arg(2))?;
        if sizes.is_null() || dims.is_null() {
            return Err(Error::null(3, "sizes/dims"));
        }
        let mut shape: Result<Vec<i64>> = Ok(Vec::new());
        for i in 0..n {
            // SAFETY: the caller passes n arrays and n lengths.
            let s = unsafe { c_sizes(*sizes.add(i), *dims.add(i), 3)? };
            shape = shape.and_then(|acc| broadcast_shapes(&acc, s));
        }
        broadcast_result(output, shape, error_buffer, buffer_len)
    }

    /// Sizes and strides of a tensor expanded to `sizes` (broadcast dims get stride 0), in new
    /// `THAlloc` arrays the caller frees with `THFree`; returns 0, or -1 with a message.
    fn THLongStorage_inferExpandGeometry(tensor_sizes: *mut i64 as c_sizes(tensor_dim), tensor_strides: *mut i64 as c_sizes(tensor_dim), tensor_dim: i64, sizes: *mut THLongStorage as required_list("sizes"), expanded_sizes: *mut *mut i64, expanded_strides: *mut *mut i64, error_buffer: *mut c_char, buffer_len: c_int) -> c_int = -1; {
        if expanded_sizes.is_null() || expanded_strides.is_null() {
            return Err(Error::null(5, "expandedSizes/expandedStrides"));
        }
        match crate::core::tensor::expand_geometry(tensor_sizes, tensor_strides, &sizes) {
            Ok((sizes, strides)) => {
                let bytes = (sizes.len() * 8) as isize;
                let ps = crate::core::allocator::th_alloc(bytes)? as *mut i64;
                let pt = match crate::core::allocator::th_alloc(bytes) {
                    Ok(p) => p as *mut i64,
                    Err(err) => {
                        // SAFETY: ps was just allocated by th_alloc.
                        unsafe { crate::core::allocator::th_free(ps as *mut u8) };
                        return Err(err);
                    }
                };
                // SAFETY: fresh arrays of sizes.len() entries; output pointers checked above.
                unsafe {
                    ptr::copy_nonoverlapping(sizes.as_ptr(), ps, sizes.len());
                    ptr::copy_nonoverlapping(strides.as_ptr(), pt, sizes.len());
                    *expanded_sizes = ps;
                    *expanded_strides = pt;
                }
                Ok(0)
            }
            Err(e) => {
                // SAFETY: the C caller's buffer of `buffer_len` bytes.
                unsafe { write_error(error_buffer, buffer_len, &e.msg) };
                Ok(-1)
            }
        }
    }
}
