//! The `api` fuzz driver: interprets bytes as a program of C API calls on a few slots of
//! tensors and storages of several dtypes, and checks the library's promises after every call.
//!
//! Shared by the libFuzzer target (`fuzz/fuzz_targets/api.rs`, run by `cargo fuzz`) and by the
//! stable regression test (`tests/fuzz_api.rs`, which includes this file with `#[path]` and runs
//! the saved inputs in `fuzz/regressions/api/` plus a few thousand pseudo-random programs).
//! It calls the exported `extern "C"` functions exactly as a C caller does, keeping to the
//! caller's side of the safety contract (live handles or NULL, buffers as long as the count
//! passed); every other argument (sizes, strides, offsets, dims, indices, values) is hostile.
//!
//! THNN layers (Float, Double) take part too: slot tensors as inputs, outputs and parameters,
//! hostile kernel sizes, strides and paddings.
//!
//! Checked after each call (a violation panics, which libFuzzer reports as a crash):
//! - no call ends in `TH_ERR_PANIC` or `TH_ERR_INTERNAL` (a caught panic is still a bug);
//! - a failing call leaves its output tensor as it was: geometry, storage and storage bytes;
//! - every live tensor has sizes >= 1 and strides >= 0, and the elements it addresses lie inside
//!   its storage, unless some storage was shrunk or swapped by the program (TH allows that); then
//!   reading the tensor must fail with an error instead of reading outside the storage;
//! - at the end, once every handle is freed, every storage made with the counting allocator has
//!   been released exactly once (refcounts balance); leaks of anything else are LeakSanitizer's
//!   (cargo fuzz) or valgrind's job.
//!
//! Sizes come from a small-number range plus a table of hostile values; "huge" values are all
//! at least 2^42 so that an allocation they drive fails (more than the machine's memory and than
//! ASan's 1 TiB cap) rather than succeeding lazily and being filled. Data operations are only
//! called on tensors of at most `MAX_DATA` elements so that stride-0 expansions of huge logical
//! size do not turn into timeouts; geometry operations take any tensor.

#![allow(clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicI64, Ordering};

use th::core::allocator::THAllocator;
use th::ffi::general::{THClearLastError, THGetLastError, THGetLastErrorCode};
use th::ffi::index::*;
use th::ffi::math::*;
use th::ffi::reduce::*;
use th::ffi::storage::*;
use th::ffi::tensor::*;
use th::ffi::*;

/// Tensors and storages per dtype.
const NT: usize = 5;
const NS: usize = 3;
/// Largest element count a data operation is run on.
const MAX_DATA: i64 = 1 << 12;
/// Calls per program.
const MAX_STEPS: usize = 96;

/// Error codes that mean a bug in the library.
const TH_ERR_INTERNAL: c_int = 10;
const TH_ERR_PANIC: c_int = 11;

/// Values for sizes, strides, offsets and indices that have broken C libraries before.
const HOSTILE: [i64; 16] = [
    i64::MAX,
    i64::MIN,
    i64::MIN + 1,
    1 << 62,
    (1 << 62) + 1,
    3 << 61,
    1 << 42,
    (1 << 42) + 7,
    1 << 50,
    -(1 << 42),
    -(1 << 62),
    -1,
    -2,
    -3,
    i64::MAX / 3,
    (i64::MAX / 2) + 2,
];

/// Bytes as a stream of choices; exhausted input reads as zeros.
pub struct Input<'a> {
    d: &'a [u8],
    p: usize,
}

impl<'a> Input<'a> {
    pub fn new(d: &'a [u8]) -> Self {
        Input { d, p: 0 }
    }
    fn done(&self) -> bool {
        self.p >= self.d.len()
    }
    fn u8(&mut self) -> u8 {
        let b = self.d.get(self.p).copied().unwrap_or(0);
        self.p += 1;
        b
    }
    fn below(&mut self, n: usize) -> usize {
        self.u8() as usize % n
    }
    fn flag(&mut self) -> bool {
        self.u8() & 1 == 1
    }
    /// A size, stride, offset or index: mostly small, sometimes hostile.
    fn num(&mut self) -> i64 {
        let b = self.u8();
        match b >> 5 {
            0..=3 => (b & 31) as i64 - 3,
            4 => (b & 7) as i64,
            5 => HOSTILE[(b & 15) as usize],
            6 => i64::from(u16::from_le_bytes([self.u8(), self.u8()])) % 33,
            _ => 1 + (b & 3) as i64,
        }
    }
    /// A dimension: mostly in range, sometimes not.
    fn dim(&mut self) -> c_int {
        let b = self.u8();
        match b >> 5 {
            0..=5 => (b & 7) as c_int % 5,
            6 => [-1, -2, 5, 64, 1000][(b & 7) as usize % 5],
            _ => [c_int::MIN, c_int::MAX, c_int::MIN + 1, -100][(b & 3) as usize],
        }
    }
    /// An element value (small integers, so every dtype holds it; some negative).
    fn val(&mut self) -> i64 {
        (self.u8() as i8 as i64) % 20
    }
}

// ---- a counting allocator: refcount balance --------------------------------------------------

unsafe extern "C" fn cnt_malloc(ctx: *mut c_void, size: isize) -> *mut c_void {
    // SAFETY: ctx is the run's live counter (see `State`).
    let live = unsafe { &*(ctx as *const AtomicI64) };
    if size <= 0 {
        return std::ptr::null_mut();
    }
    // SAFETY: plain malloc of a positive size.
    let p = unsafe { libc::malloc(size as usize) };
    if !p.is_null() {
        live.fetch_add(1, Ordering::SeqCst);
    }
    p
}

unsafe extern "C" fn cnt_realloc(ctx: *mut c_void, p: *mut c_void, size: isize) -> *mut c_void {
    // SAFETY: ctx is the run's live counter.
    let live = unsafe { &*(ctx as *const AtomicI64) };
    if size <= 0 {
        if !p.is_null() {
            live.fetch_sub(1, Ordering::SeqCst);
            // SAFETY: p came from cnt_malloc/cnt_realloc.
            unsafe { libc::free(p) };
        }
        return std::ptr::null_mut();
    }
    // SAFETY: p is NULL or ours; realloc keeps it on failure.
    let q = unsafe { libc::realloc(p, size as usize) };
    if p.is_null() && !q.is_null() {
        live.fetch_add(1, Ordering::SeqCst);
    }
    q
}

unsafe extern "C" fn cnt_free(ctx: *mut c_void, p: *mut c_void) {
    // SAFETY: ctx is the run's live counter.
    let live = unsafe { &*(ctx as *const AtomicI64) };
    if !p.is_null() {
        live.fetch_sub(1, Ordering::SeqCst);
        // SAFETY: p came from cnt_malloc/cnt_realloc.
        unsafe { libc::free(p) };
    }
}

static COUNTING: THAllocator =
    THAllocator { malloc: Some(cnt_malloc), realloc: Some(cnt_realloc), free: Some(cnt_free) };

// ---- per-dtype access to the C API ------------------------------------------------------------

pub struct Slots<D: Dt> {
    t: [*mut D::T; NT],
    s: [*mut D::S; NS],
}

impl<D: Dt> Default for Slots<D> {
    fn default() -> Self {
        Slots { t: [std::ptr::null_mut(); NT], s: [std::ptr::null_mut(); NS] }
    }
}

/// The C functions of one dtype that every dtype has (geometry, storage, copy, a few data ops).
pub trait Dt: Sized {
    type T;
    type S;
    type C: Copy;
    const NAME: &'static str;
    const ELSIZE: usize;
    fn slots(st: &mut State) -> &mut Slots<Self>;
    fn c(v: i64) -> Self::C;
    unsafe fn t_new() -> *mut Self::T;
    unsafe fn t_new4(a: i64, b: i64, c: i64, d: i64) -> *mut Self::T;
    unsafe fn t_new_size(sz: *mut THLongStorage, st: *mut THLongStorage) -> *mut Self::T;
    unsafe fn t_new_storage(
        s: *mut Self::S,
        off: isize,
        sz: *mut THLongStorage,
        st: *mut THLongStorage,
    ) -> *mut Self::T;
    unsafe fn t_new_storage2(s: *mut Self::S, off: isize, a: i64, sa: i64, b: i64, sb: i64) -> *mut Self::T;
    unsafe fn t_new_with_tensor(t: *mut Self::T) -> *mut Self::T;
    unsafe fn t_new_clone(t: *mut Self::T) -> *mut Self::T;
    unsafe fn t_new_contiguous(t: *mut Self::T) -> *mut Self::T;
    unsafe fn t_new_narrow(t: *mut Self::T, d: c_int, f: i64, n: i64) -> *mut Self::T;
    unsafe fn t_new_select(t: *mut Self::T, d: c_int, i: i64) -> *mut Self::T;
    unsafe fn t_new_transpose(t: *mut Self::T, a: c_int, b: c_int) -> *mut Self::T;
    unsafe fn t_new_unfold(t: *mut Self::T, d: c_int, n: i64, step: i64) -> *mut Self::T;
    unsafe fn t_new_expand(t: *mut Self::T, sz: *mut THLongStorage) -> *mut Self::T;
    unsafe fn t_new_view(t: *mut Self::T, sz: *mut THLongStorage) -> *mut Self::T;
    unsafe fn t_free(t: *mut Self::T);
    unsafe fn t_retain(t: *mut Self::T);
    unsafe fn narrow(r: *mut Self::T, t: *mut Self::T, d: c_int, f: i64, n: i64);
    unsafe fn select(r: *mut Self::T, t: *mut Self::T, d: c_int, i: i64);
    unsafe fn transpose(r: *mut Self::T, t: *mut Self::T, a: c_int, b: c_int);
    unsafe fn unfold(r: *mut Self::T, t: *mut Self::T, d: c_int, n: i64, step: i64);
    unsafe fn squeeze(r: *mut Self::T, t: *mut Self::T);
    unsafe fn squeeze1d(r: *mut Self::T, t: *mut Self::T, d: c_int);
    unsafe fn unsqueeze1d(r: *mut Self::T, t: *mut Self::T, d: c_int);
    unsafe fn expand(r: *mut Self::T, t: *mut Self::T, sz: *mut THLongStorage);
    unsafe fn set_storage_nd(t: *mut Self::T, s: *mut Self::S, off: isize, nd: c_int, sz: *mut i64, st: *mut i64);
    unsafe fn set_storage2d(t: *mut Self::T, s: *mut Self::S, off: isize, a: i64, sa: i64, b: i64, sb: i64);
    unsafe fn set_storage(t: *mut Self::T, s: *mut Self::S, off: isize, sz: *mut THLongStorage, st: *mut THLongStorage);
    unsafe fn resize_nd(t: *mut Self::T, nd: c_int, sz: *mut i64, st: *mut i64);
    unsafe fn resize5d(t: *mut Self::T, a: i64, b: i64, c: i64, d: i64, e: i64);
    unsafe fn resize(t: *mut Self::T, sz: *mut THLongStorage, st: *mut THLongStorage);
    unsafe fn resize_as(t: *mut Self::T, s: *mut Self::T);
    unsafe fn set(t: *mut Self::T, s: *mut Self::T);
    unsafe fn get2d(t: *mut Self::T, i: i64, j: i64) -> Self::C;
    unsafe fn set2d(t: *mut Self::T, i: i64, j: i64, v: Self::C);
    unsafe fn copy(t: *mut Self::T, s: *mut Self::T);
    unsafe fn copy_long(t: *mut Self::T, s: *mut THLongTensor);
    unsafe fn copy_half(t: *mut Self::T, s: *mut THHalfTensor);
    unsafe fn copy_bool(t: *mut Self::T, s: *mut THBoolTensor);
    unsafe fn fill(t: *mut Self::T, v: Self::C);
    unsafe fn zero(t: *mut Self::T);
    unsafe fn cat(r: *mut Self::T, a: *mut Self::T, b: *mut Self::T, d: c_int);
    unsafe fn reshape(r: *mut Self::T, t: *mut Self::T, sz: *mut THLongStorage);
    unsafe fn gather(r: *mut Self::T, t: *mut Self::T, d: c_int, idx: *mut THLongTensor);
    unsafe fn scatter(r: *mut Self::T, d: c_int, idx: *mut THLongTensor, src: *mut Self::T);
    unsafe fn sort(r: *mut Self::T, ri: *mut THLongTensor, t: *mut Self::T, d: c_int, desc: c_int);
    unsafe fn topk(r: *mut Self::T, ri: *mut THLongTensor, t: *mut Self::T, k: i64, d: c_int, dir: c_int, s: c_int);
    unsafe fn nonzero(r: *mut THLongTensor, t: *mut Self::T);
    unsafe fn maxall(t: *mut Self::T) -> Self::C;
    unsafe fn ndim(t: *mut Self::T) -> c_int;
    unsafe fn size(t: *mut Self::T, d: c_int) -> i64;
    unsafe fn stride(t: *mut Self::T, d: c_int) -> i64;
    unsafe fn offset(t: *mut Self::T) -> isize;
    unsafe fn nelement(t: *mut Self::T) -> isize;
    unsafe fn storage(t: *mut Self::T) -> *mut Self::S;
    unsafe fn s_new(n: isize) -> *mut Self::S;
    unsafe fn s_new_alloc(n: isize, ctx: *mut c_void) -> *mut Self::S;
    unsafe fn s_free(s: *mut Self::S);
    unsafe fn s_retain(s: *mut Self::S);
    unsafe fn s_resize(s: *mut Self::S, n: isize);
    unsafe fn s_fill(s: *mut Self::S, v: Self::C);
    unsafe fn s_swap(a: *mut Self::S, b: *mut Self::S);
    unsafe fn s_copy(a: *mut Self::S, b: *mut Self::S);
    unsafe fn s_set(s: *mut Self::S, i: isize, v: Self::C);
    unsafe fn s_get(s: *mut Self::S, i: isize) -> Self::C;
    unsafe fn s_size(s: *mut Self::S) -> isize;
    unsafe fn s_data(s: *mut Self::S) -> *mut u8;
}

/// Math that numeric dtypes have.
pub trait Num: Dt {
    unsafe fn add(r: *mut Self::T, t: *mut Self::T, v: Self::C);
    unsafe fn cadd(r: *mut Self::T, t: *mut Self::T, v: Self::C, s: *mut Self::T);
    unsafe fn cmul(r: *mut Self::T, t: *mut Self::T, s: *mut Self::T);
    unsafe fn cdiv(r: *mut Self::T, t: *mut Self::T, s: *mut Self::T);
    unsafe fn abs(r: *mut Self::T, t: *mut Self::T);
    unsafe fn clamp(r: *mut Self::T, t: *mut Self::T, lo: Self::C, hi: Self::C);
    unsafe fn sum(r: *mut Self::T, t: *mut Self::T, d: c_int, keep: c_int);
    unsafe fn prod(r: *mut Self::T, t: *mut Self::T, d: c_int, keep: c_int);
    unsafe fn max(r: *mut Self::T, ri: *mut THLongTensor, t: *mut Self::T, d: c_int, keep: c_int);
    unsafe fn cumsum(r: *mut Self::T, t: *mut Self::T, d: c_int);
    unsafe fn index_select(r: *mut Self::T, t: *mut Self::T, d: c_int, idx: *mut THLongTensor);
    unsafe fn index_add(r: *mut Self::T, d: c_int, idx: *mut THLongTensor, s: *mut Self::T);
    unsafe fn masked_fill(r: *mut Self::T, m: *mut THByteTensor, v: Self::C);
    unsafe fn masked_select(r: *mut Self::T, t: *mut Self::T, m: *mut THByteTensor);
    unsafe fn eq_value(r: *mut THByteTensor, t: *mut Self::T, v: Self::C);
    unsafe fn sumall(t: *mut Self::T);
    unsafe fn dot(t: *mut Self::T, s: *mut Self::T);
}

macro_rules! dt_impl {
    ($D:ident, $R:ident, $field:ident, $C:ty, $el:expr, |$v:ident| $conv:expr) => { pastey::paste! {
        pub struct $D;
        impl Dt for $D {
            type T = [<TH $R Tensor>];
            type S = [<TH $R Storage>];
            type C = $C;
            const NAME: &'static str = stringify!($R);
            const ELSIZE: usize = $el;
            fn slots(st: &mut State) -> &mut Slots<Self> { &mut st.$field }
            fn c($v: i64) -> $C { $conv }
            unsafe fn t_new() -> *mut Self::T { unsafe { [<TH $R Tensor_new>]() } }
            unsafe fn t_new4(a: i64, b: i64, c: i64, d: i64) -> *mut Self::T { unsafe { [<TH $R Tensor_newWithSize4d>](a, b, c, d) } }
            unsafe fn t_new_size(sz: *mut THLongStorage, st: *mut THLongStorage) -> *mut Self::T { unsafe { [<TH $R Tensor_newWithSize>](sz, st) } }
            unsafe fn t_new_storage(s: *mut Self::S, off: isize, sz: *mut THLongStorage, st: *mut THLongStorage) -> *mut Self::T { unsafe { [<TH $R Tensor_newWithStorage>](s, off, sz, st) } }
            unsafe fn t_new_storage2(s: *mut Self::S, off: isize, a: i64, sa: i64, b: i64, sb: i64) -> *mut Self::T { unsafe { [<TH $R Tensor_newWithStorage2d>](s, off, a, sa, b, sb) } }
            unsafe fn t_new_with_tensor(t: *mut Self::T) -> *mut Self::T { unsafe { [<TH $R Tensor_newWithTensor>](t) } }
            unsafe fn t_new_clone(t: *mut Self::T) -> *mut Self::T { unsafe { [<TH $R Tensor_newClone>](t) } }
            unsafe fn t_new_contiguous(t: *mut Self::T) -> *mut Self::T { unsafe { [<TH $R Tensor_newContiguous>](t) } }
            unsafe fn t_new_narrow(t: *mut Self::T, d: c_int, f: i64, n: i64) -> *mut Self::T { unsafe { [<TH $R Tensor_newNarrow>](t, d, f, n) } }
            unsafe fn t_new_select(t: *mut Self::T, d: c_int, i: i64) -> *mut Self::T { unsafe { [<TH $R Tensor_newSelect>](t, d, i) } }
            unsafe fn t_new_transpose(t: *mut Self::T, a: c_int, b: c_int) -> *mut Self::T { unsafe { [<TH $R Tensor_newTranspose>](t, a, b) } }
            unsafe fn t_new_unfold(t: *mut Self::T, d: c_int, n: i64, step: i64) -> *mut Self::T { unsafe { [<TH $R Tensor_newUnfold>](t, d, n, step) } }
            unsafe fn t_new_expand(t: *mut Self::T, sz: *mut THLongStorage) -> *mut Self::T { unsafe { [<TH $R Tensor_newExpand>](t, sz) } }
            unsafe fn t_new_view(t: *mut Self::T, sz: *mut THLongStorage) -> *mut Self::T { unsafe { [<TH $R Tensor_newView>](t, sz) } }
            unsafe fn t_free(t: *mut Self::T) { unsafe { [<TH $R Tensor_free>](t) } }
            unsafe fn t_retain(t: *mut Self::T) { unsafe { [<TH $R Tensor_retain>](t) } }
            unsafe fn narrow(r: *mut Self::T, t: *mut Self::T, d: c_int, f: i64, n: i64) { unsafe { [<TH $R Tensor_narrow>](r, t, d, f, n) } }
            unsafe fn select(r: *mut Self::T, t: *mut Self::T, d: c_int, i: i64) { unsafe { [<TH $R Tensor_select>](r, t, d, i) } }
            unsafe fn transpose(r: *mut Self::T, t: *mut Self::T, a: c_int, b: c_int) { unsafe { [<TH $R Tensor_transpose>](r, t, a, b) } }
            unsafe fn unfold(r: *mut Self::T, t: *mut Self::T, d: c_int, n: i64, step: i64) { unsafe { [<TH $R Tensor_unfold>](r, t, d, n, step) } }
            unsafe fn squeeze(r: *mut Self::T, t: *mut Self::T) { unsafe { [<TH $R Tensor_squeeze>](r, t) } }
            unsafe fn squeeze1d(r: *mut Self::T, t: *mut Self::T, d: c_int) { unsafe { [<TH $R Tensor_squeeze1d>](r, t, d) } }
            unsafe fn unsqueeze1d(r: *mut Self::T, t: *mut Self::T, d: c_int) { unsafe { [<TH $R Tensor_unsqueeze1d>](r, t, d) } }
            unsafe fn expand(r: *mut Self::T, t: *mut Self::T, sz: *mut THLongStorage) { unsafe { [<TH $R Tensor_expand>](r, t, sz) } }
            unsafe fn set_storage_nd(t: *mut Self::T, s: *mut Self::S, off: isize, nd: c_int, sz: *mut i64, st: *mut i64) { unsafe { [<TH $R Tensor_setStorageNd>](t, s, off, nd, sz, st) } }
            unsafe fn set_storage2d(t: *mut Self::T, s: *mut Self::S, off: isize, a: i64, sa: i64, b: i64, sb: i64) { unsafe { [<TH $R Tensor_setStorage2d>](t, s, off, a, sa, b, sb) } }
            unsafe fn set_storage(t: *mut Self::T, s: *mut Self::S, off: isize, sz: *mut THLongStorage, st: *mut THLongStorage) { unsafe { [<TH $R Tensor_setStorage>](t, s, off, sz, st) } }
            unsafe fn resize_nd(t: *mut Self::T, nd: c_int, sz: *mut i64, st: *mut i64) { unsafe { [<TH $R Tensor_resizeNd>](t, nd, sz, st) } }
            unsafe fn resize5d(t: *mut Self::T, a: i64, b: i64, c: i64, d: i64, e: i64) { unsafe { [<TH $R Tensor_resize5d>](t, a, b, c, d, e) } }
            unsafe fn resize(t: *mut Self::T, sz: *mut THLongStorage, st: *mut THLongStorage) { unsafe { [<TH $R Tensor_resize>](t, sz, st) } }
            unsafe fn resize_as(t: *mut Self::T, s: *mut Self::T) { unsafe { [<TH $R Tensor_resizeAs>](t, s) } }
            unsafe fn set(t: *mut Self::T, s: *mut Self::T) { unsafe { [<TH $R Tensor_set>](t, s) } }
            unsafe fn get2d(t: *mut Self::T, i: i64, j: i64) -> Self::C { unsafe { [<TH $R Tensor_get2d>](t, i, j) } }
            unsafe fn set2d(t: *mut Self::T, i: i64, j: i64, v: Self::C) { unsafe { [<TH $R Tensor_set2d>](t, i, j, v) } }
            unsafe fn copy(t: *mut Self::T, s: *mut Self::T) { unsafe { [<TH $R Tensor_copy>](t, s) } }
            unsafe fn copy_long(t: *mut Self::T, s: *mut THLongTensor) { unsafe { [<TH $R Tensor_copyLong>](t, s) } }
            unsafe fn copy_half(t: *mut Self::T, s: *mut THHalfTensor) { unsafe { [<TH $R Tensor_copyHalf>](t, s) } }
            unsafe fn copy_bool(t: *mut Self::T, s: *mut THBoolTensor) { unsafe { [<TH $R Tensor_copyBool>](t, s) } }
            unsafe fn fill(t: *mut Self::T, v: Self::C) { unsafe { [<TH $R Tensor_fill>](t, v) } }
            unsafe fn zero(t: *mut Self::T) { unsafe { [<TH $R Tensor_zero>](t) } }
            unsafe fn cat(r: *mut Self::T, a: *mut Self::T, b: *mut Self::T, d: c_int) { unsafe { [<TH $R Tensor_cat>](r, a, b, d) } }
            unsafe fn reshape(r: *mut Self::T, t: *mut Self::T, sz: *mut THLongStorage) { unsafe { [<TH $R Tensor_reshape>](r, t, sz) } }
            unsafe fn gather(r: *mut Self::T, t: *mut Self::T, d: c_int, idx: *mut THLongTensor) { unsafe { [<TH $R Tensor_gather>](r, t, d, idx) } }
            unsafe fn scatter(r: *mut Self::T, d: c_int, idx: *mut THLongTensor, src: *mut Self::T) { unsafe { [<TH $R Tensor_scatter>](r, d, idx, src) } }
            unsafe fn sort(r: *mut Self::T, ri: *mut THLongTensor, t: *mut Self::T, d: c_int, desc: c_int) { unsafe { [<TH $R Tensor_sort>](r, ri, t, d, desc) } }
            unsafe fn topk(r: *mut Self::T, ri: *mut THLongTensor, t: *mut Self::T, k: i64, d: c_int, dir: c_int, s: c_int) { unsafe { [<TH $R Tensor_topk>](r, ri, t, k, d, dir, s) } }
            unsafe fn nonzero(r: *mut THLongTensor, t: *mut Self::T) { unsafe { [<TH $R Tensor_nonzero>](r, t) } }
            unsafe fn maxall(t: *mut Self::T) -> Self::C { unsafe { [<TH $R Tensor_maxall>](t) } }
            unsafe fn ndim(t: *mut Self::T) -> c_int { unsafe { [<TH $R Tensor_nDimension>](t) } }
            unsafe fn size(t: *mut Self::T, d: c_int) -> i64 { unsafe { [<TH $R Tensor_size>](t, d) } }
            unsafe fn stride(t: *mut Self::T, d: c_int) -> i64 { unsafe { [<TH $R Tensor_stride>](t, d) } }
            unsafe fn offset(t: *mut Self::T) -> isize { unsafe { [<TH $R Tensor_storageOffset>](t) } }
            unsafe fn nelement(t: *mut Self::T) -> isize { unsafe { [<TH $R Tensor_nElement>](t) } }
            unsafe fn storage(t: *mut Self::T) -> *mut Self::S { unsafe { [<TH $R Tensor_storage>](t) } }
            unsafe fn s_new(n: isize) -> *mut Self::S { unsafe { [<TH $R Storage_newWithSize>](n) } }
            unsafe fn s_new_alloc(n: isize, ctx: *mut c_void) -> *mut Self::S {
                unsafe { [<TH $R Storage_newWithAllocator>](n, &COUNTING as *const THAllocator as *mut THAllocator, ctx) }
            }
            unsafe fn s_free(s: *mut Self::S) { unsafe { [<TH $R Storage_free>](s) } }
            unsafe fn s_retain(s: *mut Self::S) { unsafe { [<TH $R Storage_retain>](s) } }
            unsafe fn s_resize(s: *mut Self::S, n: isize) { unsafe { [<TH $R Storage_resize>](s, n) } }
            unsafe fn s_fill(s: *mut Self::S, v: Self::C) { unsafe { [<TH $R Storage_fill>](s, v) } }
            unsafe fn s_swap(a: *mut Self::S, b: *mut Self::S) { unsafe { [<TH $R Storage_swap>](a, b) } }
            unsafe fn s_copy(a: *mut Self::S, b: *mut Self::S) { unsafe { [<TH $R Storage_copy>](a, b) } }
            unsafe fn s_set(s: *mut Self::S, i: isize, v: Self::C) { unsafe { [<TH $R Storage_set>](s, i, v) } }
            unsafe fn s_get(s: *mut Self::S, i: isize) -> Self::C { unsafe { [<TH $R Storage_get>](s, i) } }
            unsafe fn s_size(s: *mut Self::S) -> isize { unsafe { [<TH $R Storage_size>](s) } }
            unsafe fn s_data(s: *mut Self::S) -> *mut u8 { unsafe { [<TH $R Storage_data>](s) as *mut u8 } }
        }
    } };
}

macro_rules! num_impl {
    ($D:ident, $R:ident) => { pastey::paste! {
        impl Num for $D {
            unsafe fn add(r: *mut Self::T, t: *mut Self::T, v: Self::C) { unsafe { [<TH $R Tensor_add>](r, t, v) } }
            unsafe fn cadd(r: *mut Self::T, t: *mut Self::T, v: Self::C, s: *mut Self::T) { unsafe { [<TH $R Tensor_cadd>](r, t, v, s) } }
            unsafe fn cmul(r: *mut Self::T, t: *mut Self::T, s: *mut Self::T) { unsafe { [<TH $R Tensor_cmul>](r, t, s) } }
            unsafe fn cdiv(r: *mut Self::T, t: *mut Self::T, s: *mut Self::T) { unsafe { [<TH $R Tensor_cdiv>](r, t, s) } }
            unsafe fn abs(r: *mut Self::T, t: *mut Self::T) { unsafe { [<TH $R Tensor_abs>](r, t) } }
            unsafe fn clamp(r: *mut Self::T, t: *mut Self::T, lo: Self::C, hi: Self::C) { unsafe { [<TH $R Tensor_clamp>](r, t, lo, hi) } }
            unsafe fn sum(r: *mut Self::T, t: *mut Self::T, d: c_int, keep: c_int) { unsafe { [<TH $R Tensor_sum>](r, t, d, keep) } }
            unsafe fn prod(r: *mut Self::T, t: *mut Self::T, d: c_int, keep: c_int) { unsafe { [<TH $R Tensor_prod>](r, t, d, keep) } }
            unsafe fn max(r: *mut Self::T, ri: *mut THLongTensor, t: *mut Self::T, d: c_int, keep: c_int) { unsafe { [<TH $R Tensor_max>](r, ri, t, d, keep) } }
            unsafe fn cumsum(r: *mut Self::T, t: *mut Self::T, d: c_int) { unsafe { [<TH $R Tensor_cumsum>](r, t, d) } }
            unsafe fn index_select(r: *mut Self::T, t: *mut Self::T, d: c_int, idx: *mut THLongTensor) { unsafe { [<TH $R Tensor_indexSelect>](r, t, d, idx) } }
            unsafe fn index_add(r: *mut Self::T, d: c_int, idx: *mut THLongTensor, s: *mut Self::T) { unsafe { [<TH $R Tensor_indexAdd>](r, d, idx, s) } }
            unsafe fn masked_fill(r: *mut Self::T, m: *mut THByteTensor, v: Self::C) { unsafe { [<TH $R Tensor_maskedFill>](r, m, v) } }
            unsafe fn masked_select(r: *mut Self::T, t: *mut Self::T, m: *mut THByteTensor) { unsafe { [<TH $R Tensor_maskedSelect>](r, t, m) } }
            unsafe fn eq_value(r: *mut THByteTensor, t: *mut Self::T, v: Self::C) { unsafe { [<TH $R Tensor_eqValue>](r, t, v) } }
            unsafe fn sumall(t: *mut Self::T) { unsafe { [<TH $R Tensor_sumall>](t); } }
            unsafe fn dot(t: *mut Self::T, s: *mut Self::T) { unsafe { [<TH $R Tensor_dot>](t, s); } }
        }
    } };
}

dt_impl!(DFloat, Float, f, f32, 4, |v| v as f32);
dt_impl!(DDouble, Double, d, f64, 8, |v| v as f64);
dt_impl!(DHalf, Half, h, th::core::dtype::THHalf, 2, |v| th::core::dtype::THHalf {
    x: half::f16::from_f32(v as f32).to_bits()
});
dt_impl!(DLong, Long, l, i64, 8, |v| v);
dt_impl!(DInt, Int, i, i32, 4, |v| v as i32);
dt_impl!(DByte, Byte, b, u8, 1, |v| v as u8);
dt_impl!(DBool, Bool, o, th::core::dtype::Bool, 1, |v| th::core::dtype::Bool::from(v != 0));
num_impl!(DFloat, Float);
num_impl!(DDouble, Double);
num_impl!(DHalf, Half);
num_impl!(DLong, Long);
num_impl!(DInt, Int);
num_impl!(DByte, Byte);

// ---- the interpreter --------------------------------------------------------------------------

/// Every handle the program holds, per dtype, and what the checks need to know.
pub struct State {
    f: Slots<DFloat>,
    d: Slots<DDouble>,
    h: Slots<DHalf>,
    l: Slots<DLong>,
    i: Slots<DInt>,
    b: Slots<DByte>,
    o: Slots<DBool>,
    /// Some storage was shrunk (or swapped, which can shrink it): tensors over it may now
    /// address past its end, which TH allows; data access must then fail.
    shrunk: bool,
    /// Live blocks of the counting allocator.
    live: Box<AtomicI64>,
}

impl State {
    fn ctx(&self) -> *mut c_void {
        &*self.live as *const AtomicI64 as *mut c_void
    }
}

fn last_error() -> String {
    let p = THGetLastError();
    if p.is_null() {
        return "(no message)".into();
    }
    // SAFETY: the library returns a NUL-terminated thread-local string.
    unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// Runs one C call with a clean error state; returns its error code. A caught panic or an
/// internal error is a bug.
fn call<R>(what: &str, f: impl FnOnce() -> R) -> (R, c_int) {
    THClearLastError();
    let r = f();
    let code = THGetLastErrorCode();
    assert!(code != TH_ERR_PANIC && code != TH_ERR_INTERNAL, "{what}: library bug reported: {}", last_error());
    (r, code)
}

/// What must not change when a call fails.
#[derive(Debug, PartialEq)]
struct Snap {
    geometry: Vec<i64>,
    storage: usize,
    bytes: Option<u64>,
}

unsafe fn snap<D: Dt>(t: *mut D::T) -> Option<Snap> {
    if t.is_null() {
        return None;
    }
    // SAFETY: t is a live handle.
    unsafe {
        let nd = D::ndim(t);
        let mut g = vec![nd as i64, D::offset(t) as i64];
        for k in 0..nd {
            g.push(D::size(t, k));
            g.push(D::stride(t, k));
        }
        let s = D::storage(t);
        let bytes = if s.is_null() {
            None
        } else {
            let n = D::s_size(s);
            g.push(n as i64);
            let p = D::s_data(s);
            if p.is_null() || n as usize > (1 << 16) {
                None
            } else {
                let sl = std::slice::from_raw_parts(p, n as usize * D::ELSIZE);
                Some(sl.iter().fold(0xcbf29ce484222325u64, |h, &x| (h ^ x as u64).wrapping_mul(0x100000001b3)))
            }
        };
        Some(Snap { geometry: g, storage: s as usize, bytes })
    }
}

/// Runs a call that writes `out`; on failure `out` must be exactly as before.
fn guarded<D: Dt, R>(what: &str, out: *mut D::T, f: impl FnOnce() -> R) -> c_int {
    // SAFETY: out is NULL or a live handle.
    let before = unsafe { snap::<D>(out) };
    let (_, code) = call(what, f);
    if code != 0 {
        // SAFETY: as above.
        let after = unsafe { snap::<D>(out) };
        assert_eq!(before, after, "{} {what} failed ({}) but changed its output", D::NAME, last_error());
    }
    code
}

/// Invariants of one live tensor (see the module docs).
unsafe fn check_tensor<D: Dt>(t: *mut D::T, shrunk: bool) {
    if t.is_null() {
        return;
    }
    // SAFETY: t is a live handle; the accessors cannot fail on one.
    unsafe {
        let nd = D::ndim(t);
        // cat may add dimensions up to MAX_NEW_DIMS (1024); each step adds at most one more.
        assert!((0..=2048).contains(&nd), "{} tensor with {nd} dims", D::NAME);
        if nd == 0 {
            return;
        }
        let mut hi: i128 = D::offset(t) as i128;
        assert!(hi >= 0, "negative storage offset");
        let mut n: i128 = 1;
        for k in 0..nd {
            let (sz, st) = (D::size(t, k), D::stride(t, k));
            assert!(sz >= 1 && st >= 0, "{} dim {k}: size {sz} stride {st}", D::NAME);
            hi += (sz as i128 - 1) * st as i128;
            n *= sz as i128;
        }
        assert_eq!(n, D::nelement(t) as i128, "nElement disagrees with the sizes");
        let s = D::storage(t);
        assert!(!s.is_null(), "{} tensor with {nd} dims has no storage", D::NAME);
        let len = D::s_size(s) as i128;
        if hi >= len {
            assert!(shrunk, "{} tensor addresses element {hi} of a storage of {len}, no storage was shrunk", D::NAME);
            let (c, code) = call("newClone of an out-of-storage tensor", || D::t_new_clone(t));
            assert!(c.is_null() && code != 0, "{} reading a tensor past its storage did not fail", D::NAME);
        }
    }
}

unsafe fn check_all<D: Dt>(st: &mut State) {
    let shrunk = st.shrunk;
    let ts = D::slots(st).t;
    for t in ts {
        // SAFETY: slots hold live handles or NULL.
        unsafe { check_tensor::<D>(t, shrunk) };
    }
}

/// A tensor slot's handle, or NULL (about one pick in eight).
fn pick_t<D: Dt>(st: &mut State, inp: &mut Input) -> *mut D::T {
    let k = inp.below(NT + 1);
    if k == NT { std::ptr::null_mut() } else { D::slots(st).t[k] }
}

fn pick_s<D: Dt>(st: &mut State, inp: &mut Input) -> *mut D::S {
    let k = inp.below(NS + 1);
    if k == NS { std::ptr::null_mut() } else { D::slots(st).s[k] }
}

/// Puts a new reference into a tensor slot, releasing what was there.
fn put_t<D: Dt>(st: &mut State, k: usize, t: *mut D::T) {
    let old = std::mem::replace(&mut D::slots(st).t[k], t);
    // SAFETY: the slot owned one reference (or was NULL).
    unsafe { D::t_free(old) };
}

fn put_s<D: Dt>(st: &mut State, k: usize, s: *mut D::S) {
    let old = std::mem::replace(&mut D::slots(st).s[k], s);
    // SAFETY: as above.
    unsafe { D::s_free(old) };
}

/// A `THLongStorage` of sizes/strides made from the input (owned by the caller), or NULL.
fn longs(inp: &mut Input) -> *mut THLongStorage {
    let n = inp.below(8);
    if n == 7 {
        return std::ptr::null_mut();
    }
    // SAFETY: plain constructor and in-range sets.
    unsafe {
        let s = THLongStorage_newWithSize(n as isize);
        for k in 0..n {
            THLongStorage_set(s, k as isize, inp.num());
        }
        s
    }
}

fn free_longs(s: *mut THLongStorage) {
    // SAFETY: s is NULL or a storage made by `longs`.
    unsafe { THLongStorage_free(s) }
}

fn small<D: Dt>(t: *mut D::T) -> bool {
    // SAFETY: NULL or live; nElement of NULL is an error returning 0.
    t.is_null() || unsafe { D::nelement(t) } as i64 <= MAX_DATA
}

/// Geometry, storage and copy operations: every dtype.
fn step_common<D: Dt>(st: &mut State, inp: &mut Input) {
    let op = inp.below(40);
    let k = inp.below(NT);
    let name = D::NAME;
    // SAFETY (whole match): every handle passed is NULL or live in a slot; every raw array
    // passed is at least as long as the count passed with it.
    unsafe {
        match op {
            0 => put_t::<D>(st, k, call("new", || D::t_new()).0),
            1 => {
                let (a, b, c, d) = (inp.num(), inp.num(), inp.num(), inp.num());
                let (t, code) = call("newWithSize4d", || D::t_new4(a, b, c, d));
                assert!(t.is_null() == (code != 0), "{name} newWithSize4d result/error mismatch");
                put_t::<D>(st, k, t)
            }
            2 => {
                let (sz, sd) = (longs(inp), longs(inp));
                let t = call("newWithSize", || D::t_new_size(sz, sd)).0;
                free_longs(sz);
                free_longs(sd);
                put_t::<D>(st, k, t)
            }
            3 => {
                let s = pick_s::<D>(st, inp);
                let off = inp.num() as isize;
                let (sz, sd) = (longs(inp), longs(inp));
                let t = call("newWithStorage", || D::t_new_storage(s, off, sz, sd)).0;
                free_longs(sz);
                free_longs(sd);
                put_t::<D>(st, k, t)
            }
            4 => {
                let s = pick_s::<D>(st, inp);
                let (o, a, sa, b, sb) = (inp.num() as isize, inp.num(), inp.num(), inp.num(), inp.num());
                put_t::<D>(st, k, call("newWithStorage2d", || D::t_new_storage2(s, o, a, sa, b, sb)).0)
            }
            5 => {
                let t = pick_t::<D>(st, inp);
                put_t::<D>(st, k, call("newWithTensor", || D::t_new_with_tensor(t)).0)
            }
            6 => {
                let t = pick_t::<D>(st, inp);
                if small::<D>(t) {
                    put_t::<D>(st, k, call("newClone", || D::t_new_clone(t)).0)
                }
            }
            7 => {
                let t = pick_t::<D>(st, inp);
                if small::<D>(t) {
                    put_t::<D>(st, k, call("newContiguous", || D::t_new_contiguous(t)).0)
                }
            }
            8 => {
                let t = pick_t::<D>(st, inp);
                let (d, f, n) = (inp.dim(), inp.num(), inp.num());
                put_t::<D>(st, k, call("newNarrow", || D::t_new_narrow(t, d, f, n)).0)
            }
            9 => {
                let t = pick_t::<D>(st, inp);
                let (d, i) = (inp.dim(), inp.num());
                put_t::<D>(st, k, call("newSelect", || D::t_new_select(t, d, i)).0)
            }
            10 => {
                let t = pick_t::<D>(st, inp);
                let (a, b) = (inp.dim(), inp.dim());
                put_t::<D>(st, k, call("newTranspose", || D::t_new_transpose(t, a, b)).0)
            }
            11 => {
                let t = pick_t::<D>(st, inp);
                let (d, n, s) = (inp.dim(), inp.num(), inp.num());
                put_t::<D>(st, k, call("newUnfold", || D::t_new_unfold(t, d, n, s)).0)
            }
            12 => {
                let t = pick_t::<D>(st, inp);
                let sz = longs(inp);
                let r = call("newExpand", || D::t_new_expand(t, sz)).0;
                free_longs(sz);
                put_t::<D>(st, k, r)
            }
            13 => {
                let t = pick_t::<D>(st, inp);
                let sz = longs(inp);
                let r = call("newView", || D::t_new_view(t, sz)).0;
                free_longs(sz);
                put_t::<D>(st, k, r)
            }
            14 => put_t::<D>(st, k, std::ptr::null_mut()),
            15 => {
                // retain: the same handle in two slots, each owning one reference
                let t = D::slots(st).t[k];
                D::t_retain(t);
                let j = inp.below(NT);
                put_t::<D>(st, j, t);
            }
            16 => {
                let (r, t) = (pick_t::<D>(st, inp), pick_t::<D>(st, inp));
                let (d, f, n) = (inp.dim(), inp.num(), inp.num());
                guarded::<D, _>("narrow", r, || D::narrow(r, t, d, f, n));
            }
            17 => {
                let (r, t) = (pick_t::<D>(st, inp), pick_t::<D>(st, inp));
                let (d, i) = (inp.dim(), inp.num());
                guarded::<D, _>("select", r, || D::select(r, t, d, i));
            }
            18 => {
                let (r, t) = (pick_t::<D>(st, inp), pick_t::<D>(st, inp));
                let (a, b) = (inp.dim(), inp.dim());
                guarded::<D, _>("transpose", r, || D::transpose(r, t, a, b));
            }
            19 => {
                let (r, t) = (pick_t::<D>(st, inp), pick_t::<D>(st, inp));
                let (d, n, s) = (inp.dim(), inp.num(), inp.num());
                guarded::<D, _>("unfold", r, || D::unfold(r, t, d, n, s));
            }
            20 => {
                let (r, t) = (pick_t::<D>(st, inp), pick_t::<D>(st, inp));
                let d = inp.dim();
                match inp.below(3) {
                    0 => guarded::<D, _>("squeeze", r, || D::squeeze(r, t)),
                    1 => guarded::<D, _>("squeeze1d", r, || D::squeeze1d(r, t, d)),
                    _ => guarded::<D, _>("unsqueeze1d", r, || D::unsqueeze1d(r, t, d)),
                };
            }
            21 => {
                let (r, t) = (pick_t::<D>(st, inp), pick_t::<D>(st, inp));
                let sz = longs(inp);
                guarded::<D, _>("expand", r, || D::expand(r, t, sz));
                free_longs(sz);
            }
            22 => {
                let t = pick_t::<D>(st, inp);
                let s = pick_s::<D>(st, inp);
                let off = inp.num() as isize;
                let n = inp.below(7);
                let mut sz: Vec<i64> = (0..n).map(|_| inp.num()).collect();
                let mut sd: Vec<i64> = (0..n).map(|_| inp.num()).collect();
                let nd = match inp.below(8) {
                    0 => -(inp.below(3) as c_int) - 1,
                    _ => n as c_int,
                };
                let (psz, psd) = (
                    if inp.below(10) == 0 && nd <= 0 { std::ptr::null_mut() } else { sz.as_mut_ptr() },
                    if inp.flag() { std::ptr::null_mut() } else { sd.as_mut_ptr() },
                );
                guarded::<D, _>("setStorageNd", t, || D::set_storage_nd(t, s, off, nd, psz, psd));
            }
            23 => {
                let t = pick_t::<D>(st, inp);
                let s = pick_s::<D>(st, inp);
                let (o, a, sa, b, sb) = (inp.num() as isize, inp.num(), inp.num(), inp.num(), inp.num());
                guarded::<D, _>("setStorage2d", t, || D::set_storage2d(t, s, o, a, sa, b, sb));
            }
            24 => {
                let t = pick_t::<D>(st, inp);
                let s = pick_s::<D>(st, inp);
                let off = inp.num() as isize;
                let (sz, sd) = (longs(inp), longs(inp));
                guarded::<D, _>("setStorage", t, || D::set_storage(t, s, off, sz, sd));
                free_longs(sz);
                free_longs(sd);
            }
            25 => {
                let t = pick_t::<D>(st, inp);
                let n = inp.below(7);
                let mut sz: Vec<i64> = (0..n).map(|_| inp.num()).collect();
                let mut sd: Vec<i64> = (0..n).map(|_| inp.num()).collect();
                let psd = if inp.flag() { std::ptr::null_mut() } else { sd.as_mut_ptr() };
                guarded::<D, _>("resizeNd", t, || D::resize_nd(t, n as c_int, sz.as_mut_ptr(), psd));
            }
            26 => {
                let t = pick_t::<D>(st, inp);
                let (a, b, c, d, e) = (inp.num(), inp.num(), inp.num(), inp.num(), inp.num());
                guarded::<D, _>("resize5d", t, || D::resize5d(t, a, b, c, d, e));
            }
            27 => {
                let t = pick_t::<D>(st, inp);
                let (sz, sd) = (longs(inp), longs(inp));
                guarded::<D, _>("resize", t, || D::resize(t, sz, sd));
                free_longs(sz);
                free_longs(sd);
            }
            28 => {
                let (t, s) = (pick_t::<D>(st, inp), pick_t::<D>(st, inp));
                if small::<D>(s) {
                    guarded::<D, _>("resizeAs", t, || D::resize_as(t, s));
                }
            }
            29 => {
                let (t, s) = (pick_t::<D>(st, inp), pick_t::<D>(st, inp));
                guarded::<D, _>("set", t, || D::set(t, s));
            }
            30 => {
                let t = pick_t::<D>(st, inp);
                let (i, j, v) = (inp.num(), inp.num(), D::c(inp.val()));
                if inp.flag() {
                    call("get2d", || D::get2d(t, i, j));
                } else {
                    guarded::<D, _>("set2d", t, || D::set2d(t, i, j, v));
                }
            }
            31 => {
                let (t, s) = (pick_t::<D>(st, inp), pick_t::<D>(st, inp));
                if small::<D>(t) && small::<D>(s) {
                    guarded::<D, _>("copy", t, || D::copy(t, s));
                }
            }
            32 => {
                let t = pick_t::<D>(st, inp);
                let which = inp.below(3);
                let (l, h, o) = (pick_t::<DLong>(st, inp), pick_t::<DHalf>(st, inp), pick_t::<DBool>(st, inp));
                if small::<D>(t) && small::<DLong>(l) && small::<DHalf>(h) && small::<DBool>(o) {
                    match which {
                        0 => guarded::<D, _>("copyLong", t, || D::copy_long(t, l)),
                        1 => guarded::<D, _>("copyHalf", t, || D::copy_half(t, h)),
                        _ => guarded::<D, _>("copyBool", t, || D::copy_bool(t, o)),
                    };
                }
            }
            33 => {
                let t = pick_t::<D>(st, inp);
                let v = D::c(inp.val());
                if small::<D>(t) {
                    if inp.flag() {
                        guarded::<D, _>("fill", t, || D::fill(t, v));
                    } else {
                        guarded::<D, _>("zero", t, || D::zero(t));
                    }
                }
            }
            34 => {
                let (r, a, b) = (pick_t::<D>(st, inp), pick_t::<D>(st, inp), pick_t::<D>(st, inp));
                let d = inp.dim();
                let sz = longs(inp);
                let i = pick_t::<DLong>(st, inp);
                let ri = pick_t::<DLong>(st, inp);
                let (kk, dir) = (inp.num(), inp.flag() as c_int);
                if small::<D>(r) && small::<D>(a) && small::<D>(b) && small::<DLong>(i) && small::<DLong>(ri) {
                    match inp.below(7) {
                        0 => guarded::<D, _>("cat", r, || D::cat(r, a, b, d)),
                        1 => guarded::<D, _>("reshape", r, || D::reshape(r, a, sz)),
                        2 => guarded::<D, _>("gather", r, || D::gather(r, a, d, i)),
                        3 => guarded::<D, _>("scatter", r, || D::scatter(r, d, i, a)),
                        4 => guarded::<D, _>("sort", r, || D::sort(r, ri, a, d, dir)),
                        5 => guarded::<D, _>("topk", r, || D::topk(r, ri, a, kk, d, dir, 1)),
                        _ => guarded::<DLong, _>("nonzero", ri, || D::nonzero(ri, a)),
                    };
                }
                free_longs(sz);
            }
            35 => {
                let t = pick_t::<D>(st, inp);
                if small::<D>(t) {
                    call("maxall", || D::maxall(t));
                }
            }
            // storages
            36 => {
                let j = inp.below(NS);
                let n = inp.num() as isize;
                let s = if inp.flag() {
                    call("Storage_newWithSize", || D::s_new(n)).0
                } else {
                    let ctx = st.ctx();
                    call("Storage_newWithAllocator", || D::s_new_alloc(n, ctx)).0
                };
                if !s.is_null() && n > 0 && n as i64 <= MAX_DATA {
                    D::s_fill(s, D::c(1));
                }
                put_s::<D>(st, j, s)
            }
            37 => {
                let s = pick_s::<D>(st, inp);
                let n = inp.num() as isize;
                let before = if s.is_null() { 0 } else { D::s_size(s) };
                let code = call("Storage_resize", || D::s_resize(s, n)).1;
                if code == 0 && n < before {
                    st.shrunk = true;
                }
                if code != 0 && !s.is_null() {
                    assert_eq!(before, D::s_size(s), "{name} Storage_resize failed but changed the size");
                }
            }
            38 => {
                let (a, b) = (pick_s::<D>(st, inp), pick_s::<D>(st, inp));
                match inp.below(5) {
                    0 => {
                        let code = call("Storage_swap", || D::s_swap(a, b)).1;
                        if code == 0 {
                            st.shrunk = true;
                        }
                    }
                    1 => {
                        call("Storage_copy", || D::s_copy(a, b));
                    }
                    2 => {
                        let (i, v) = (inp.num() as isize, D::c(inp.val()));
                        call("Storage_set", || D::s_set(a, i, v));
                    }
                    3 => {
                        let i = inp.num() as isize;
                        call("Storage_get", || D::s_get(a, i));
                    }
                    _ => {
                        // retain: the same storage in two slots
                        D::s_retain(a);
                        let j = inp.below(NS);
                        put_s::<D>(st, j, a);
                    }
                }
            }
            _ => {
                // a tensor's own storage into a storage slot (borrowed, so retain it)
                let t = D::slots(st).t[k];
                if !t.is_null() {
                    let s = D::storage(t);
                    D::s_retain(s);
                    let j = inp.below(NS);
                    put_s::<D>(st, j, s);
                }
            }
        }
    }
}

/// Math operations of numeric dtypes.
fn step_num<D: Num>(st: &mut State, inp: &mut Input) {
    let op = inp.below(17);
    let (r, a, b) = (pick_t::<D>(st, inp), pick_t::<D>(st, inp), pick_t::<D>(st, inp));
    let (i, m) = (pick_t::<DLong>(st, inp), pick_t::<DByte>(st, inp));
    let (v, w) = (D::c(inp.val()), D::c(inp.val()));
    let (d, keep) = (inp.dim(), inp.flag() as c_int);
    if !(small::<D>(r) && small::<D>(a) && small::<D>(b) && small::<DLong>(i) && small::<DByte>(m)) {
        return;
    }
    // SAFETY (whole match): every handle passed is NULL or live in a slot.
    unsafe {
        match op {
            0 => guarded::<D, _>("add", r, || D::add(r, a, v)),
            1 => guarded::<D, _>("cadd", r, || D::cadd(r, a, v, b)),
            2 => guarded::<D, _>("cmul", r, || D::cmul(r, a, b)),
            3 => guarded::<D, _>("cdiv", r, || D::cdiv(r, a, b)),
            4 => guarded::<D, _>("abs", r, || D::abs(r, a)),
            5 => guarded::<D, _>("clamp", r, || D::clamp(r, a, v, w)),
            6 => guarded::<D, _>("sum", r, || D::sum(r, a, d, keep)),
            7 => guarded::<D, _>("prod", r, || D::prod(r, a, d, keep)),
            8 => guarded::<D, _>("max", r, || D::max(r, i, a, d, keep)),
            9 => guarded::<D, _>("cumsum", r, || D::cumsum(r, a, d)),
            10 => guarded::<D, _>("indexSelect", r, || D::index_select(r, a, d, i)),
            11 => guarded::<D, _>("indexAdd", r, || D::index_add(r, d, i, a)),
            12 => guarded::<D, _>("maskedFill", r, || D::masked_fill(r, m, v)),
            13 => guarded::<D, _>("maskedSelect", r, || D::masked_select(r, a, m)),
            14 => guarded::<DByte, _>("eqValue", m, || D::eq_value(m, a, v)),
            15 => call("sumall", || D::sumall(a)).1,
            _ => call("dot", || D::dot(a, b)).1,
        };
    }
}

/// A NULL handle of any type (the THNN state, optional tensors).
fn z<T>() -> *mut T {
    std::ptr::null_mut()
}

/// THNN layers of Float and Double (`$D`): slot tensors as inputs, outputs and parameters,
/// hostile kernel sizes, strides, paddings and flags. The main output must be untouched when
/// a call fails (`guarded`); the layers' checks must reject every bad combination without a
/// panic or an internal error.
macro_rules! nn_steps {
    ($f:ident, $D:ident, $R:ident) => { pastey::paste! {
        fn $f(st: &mut State, inp: &mut Input) {
            use th::ffi::nn::{activation::*, conv::*, conv_misc::*, criterion::*, linear::*, norm::*, pool::*, sample::*, sparse::*};
            let op = inp.below(22);
            let t: [*mut [<TH $R Tensor>]; 6] = std::array::from_fn(|_| pick_t::<$D>(st, inp));
            let (idx, cnt) = (pick_t::<DLong>(st, inp), pick_t::<DInt>(st, inp));
            let k: [c_int; 8] = std::array::from_fn(|_| inp.num().clamp(c_int::MIN as i64, c_int::MAX as i64) as c_int);
            let (flag, flag2, val) = (inp.flag(), inp.flag(), inp.val() as f64);
            let ignore = inp.num();
            if !(t.iter().all(|&x| small::<$D>(x)) && small::<DLong>(idx) && small::<DInt>(cnt)) {
                return;
            }
            // SAFETY (whole match): every handle passed is NULL or live in a slot.
            unsafe {
                match op {
                    0 => guarded::<$D, _>("Linear_updateOutput", t[1], || [<THNN_ $R Linear_updateOutput>](z(), t[0], t[1], t[2], t[3], t[4])),
                    1 => guarded::<$D, _>("Linear_accGradParameters", t[4], || [<THNN_ $R Linear_accGradParameters>](z(), t[0], t[1], z(), t[2], t[3], t[4], t[5], z(), val)),
                    2 => guarded::<$D, _>("Threshold_updateOutput", t[1], || [<THNN_ $R Threshold_updateOutput>](z(), t[0], t[1], val, 0.0, flag)),
                    3 => guarded::<$D, _>("SoftMax_updateOutput", t[1], || [<THNN_ $R SoftMax_updateOutput>](z(), t[0], t[1])),
                    4 => guarded::<$D, _>("LogSoftMax_updateGradInput", t[2], || [<THNN_ $R LogSoftMax_updateGradInput>](z(), t[0], t[1], t[2], t[3])),
                    5 => guarded::<$D, _>("ClassNLLCriterion_updateOutput", t[1], || [<THNN_ $R ClassNLLCriterion_updateOutput>](z(), t[0], idx, t[1], flag, t[2], t[3], ignore)),
                    6 => guarded::<$D, _>("MSECriterion_updateOutput", t[2], || [<THNN_ $R MSECriterion_updateOutput>](z(), t[0], t[1], t[2], flag)),
                    7 => guarded::<$D, _>("MultiLabelMarginCriterion_updateOutput", t[1], || [<THNN_ $R MultiLabelMarginCriterion_updateOutput>](z(), t[0], idx, t[1], t[2], flag)),
                    8 => guarded::<$D, _>("SpatialMaxPooling_updateOutput", t[1], || [<THNN_ $R SpatialMaxPooling_updateOutput>](z(), t[0], t[1], idx, k[0], k[1], k[2], k[3], k[4], k[5], flag)),
                    9 => guarded::<$D, _>("SpatialMaxPooling_updateGradInput", t[2], || [<THNN_ $R SpatialMaxPooling_updateGradInput>](z(), t[0], t[1], t[2], idx, k[0], k[1], k[2], k[3], k[4], k[5], flag)),
                    10 => guarded::<$D, _>("SpatialAveragePooling_updateOutput", t[1], || [<THNN_ $R SpatialAveragePooling_updateOutput>](z(), t[0], t[1], k[0], k[1], k[2], k[3], k[4], k[5], flag, flag2)),
                    11 => guarded::<$D, _>("SpatialAdaptiveAveragePooling_updateOutput", t[1], || [<THNN_ $R SpatialAdaptiveAveragePooling_updateOutput>](z(), t[0], t[1], k[0], k[1])),
                    12 => guarded::<$D, _>("SpatialMaxUnpooling_updateOutput", t[1], || [<THNN_ $R SpatialMaxUnpooling_updateOutput>](z(), t[0], t[1], idx, k[0], k[1])),
                    13 => guarded::<$D, _>("TemporalConvolution_updateOutput", t[1], || [<THNN_ $R TemporalConvolution_updateOutput>](z(), t[0], t[1], t[2], t[3], k[0], k[1], k[2], k[3])),
                    14 => guarded::<$D, _>("SpatialSubSampling_updateOutput", t[1], || [<THNN_ $R SpatialSubSampling_updateOutput>](z(), t[0], t[1], t[2], t[3], k[0], k[1], k[2], k[3])),
                    15 => guarded::<$D, _>("LookupTable_accGradParameters", t[1], || [<THNN_ $R LookupTable_accGradParameters>](z(), idx, t[0], t[1], cnt, t[2], z(), flag, k[0], val)),
                    16 => guarded::<$D, _>("SpatialConvolutionMM_updateOutput", t[1], || [<THNN_ $R SpatialConvolutionMM_updateOutput>](z(), t[0], t[1], t[2], t[3], t[4], t[5], k[0], k[1], k[2], k[3], k[4], k[5])),
                    17 => guarded::<$D, _>("SpatialConvolutionMM_updateGradInput", t[2], || [<THNN_ $R SpatialConvolutionMM_updateGradInput>](z(), t[0], t[1], t[2], t[3], t[4], t[5], k[0], k[1], k[2], k[3], k[4], k[5])),
                    18 => guarded::<$D, _>("SpatialFullConvolution_updateOutput", t[1], || [<THNN_ $R SpatialFullConvolution_updateOutput>](z(), t[0], t[1], t[2], t[3], t[4], t[5], k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7])),
                    19 => guarded::<$D, _>("BatchNormalization_updateOutput", t[1], || [<THNN_ $R BatchNormalization_updateOutput>](z(), t[0], t[1], t[2], t[3], t[4], t[5], z(), z(), flag, 0.1, val.abs())),
                    20 => guarded::<$D, _>("SpatialReflectionPadding_updateOutput", t[1], || [<THNN_ $R SpatialReflectionPadding_updateOutput>](z(), t[0], t[1], k[0], k[1], k[2], k[3])),
                    _ => guarded::<$D, _>("SpatialUpSamplingBilinear_updateOutput", t[1], || [<THNN_ $R SpatialUpSamplingBilinear_updateOutput>](z(), t[0], t[1], k[0], k[1])),
                };
            }
        }
    } };
}
nn_steps!(step_nn_float, DFloat, Float);
nn_steps!(step_nn_double, DDouble, Double);

fn check_everything(st: &mut State) {
    // SAFETY: slots hold live handles or NULL.
    unsafe {
        check_all::<DFloat>(st);
        check_all::<DDouble>(st);
        check_all::<DHalf>(st);
        check_all::<DLong>(st);
        check_all::<DInt>(st);
        check_all::<DByte>(st);
        check_all::<DBool>(st);
    }
}

fn release_all<D: Dt>(st: &mut State) {
    for k in 0..NT {
        put_t::<D>(st, k, std::ptr::null_mut());
    }
    for k in 0..NS {
        put_s::<D>(st, k, std::ptr::null_mut());
    }
}

/// Runs the program in `data`. Panics on any broken promise.
pub fn run(data: &[u8]) {
    let mut inp = Input::new(data);
    let mut st = State {
        f: Slots::default(),
        d: Slots::default(),
        h: Slots::default(),
        l: Slots::default(),
        i: Slots::default(),
        b: Slots::default(),
        o: Slots::default(),
        shrunk: false,
        live: Box::new(AtomicI64::new(0)),
    };
    for _ in 0..MAX_STEPS {
        if inp.done() {
            break;
        }
        match inp.u8() % 13 {
            0 | 1 => step_common::<DFloat>(&mut st, &mut inp),
            2 => step_common::<DDouble>(&mut st, &mut inp),
            3 => step_common::<DHalf>(&mut st, &mut inp),
            4 | 5 => step_common::<DLong>(&mut st, &mut inp),
            6 => step_common::<DInt>(&mut st, &mut inp),
            7 => step_common::<DByte>(&mut st, &mut inp),
            8 => step_common::<DBool>(&mut st, &mut inp),
            9 => step_num::<DFloat>(&mut st, &mut inp),
            10 => match inp.below(5) {
                0 => step_num::<DDouble>(&mut st, &mut inp),
                1 => step_num::<DHalf>(&mut st, &mut inp),
                2 => step_num::<DInt>(&mut st, &mut inp),
                _ => step_num::<DByte>(&mut st, &mut inp),
            },
            11 => step_num::<DLong>(&mut st, &mut inp),
            _ => match inp.below(2) {
                0 => step_nn_float(&mut st, &mut inp),
                _ => step_nn_double(&mut st, &mut inp),
            },
        }
        check_everything(&mut st);
    }
    release_all::<DFloat>(&mut st);
    release_all::<DDouble>(&mut st);
    release_all::<DHalf>(&mut st);
    release_all::<DLong>(&mut st);
    release_all::<DInt>(&mut st);
    release_all::<DByte>(&mut st);
    release_all::<DBool>(&mut st);
    let live = st.live.load(Ordering::SeqCst);
    assert_eq!(live, 0, "{live} blocks of the counting allocator outlived every handle (refcount leak)");
    THClearLastError();
}

/// `count` pseudo-random programs of up to `len` bytes from `seed` (splitmix64): the stable,
/// libFuzzer-free smoke run used by `cargo test`.
pub fn random_programs(seed: u64, count: usize, len: usize) {
    let mut x = seed;
    let mut next = || {
        x = x.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    };
    let mut buf = Vec::with_capacity(len);
    for _ in 0..count {
        buf.clear();
        let n = (next() as usize % len) + 1;
        while buf.len() < n {
            buf.extend_from_slice(&next().to_le_bytes());
        }
        buf.truncate(n);
        run(&buf);
    }
}
