//! `generic/THTensor.h` and `generic/THTensorCopy.h` for every dtype.
//!
//! Ownership: `new*` return a new reference (+1; `newContiguous` may return its argument with
//! one more reference), `retain` adds one, `free`/`release` drop one; `storage()` is borrowed;
//! every other argument is borrowed. In-place view functions take `(self, src, ...)` with
//! `src == NULL` meaning `self`; on error `self` is unchanged.

use super::general::{THDescBuff, c_sizes};
use super::home::{Cuda, Home, Host};
use super::storage::{long_list, new_long_storage, required_list};
use super::thc::*;
use super::*;
use crate::core::dtype::Scalar;
use crate::core::error::{Error, Result};
use crate::core::refcount::{Rc, Shared};
use crate::core::storage::Storage;
use crate::core::tensor::{Tensor, View, broadcast_shapes, size_desc};
use std::ffi::{c_char, c_int};
use std::ptr;

/// The only tensor flag: retain/free count references (clear it to make them no-ops).
pub const TH_TENSOR_REFCOUNTED: c_char = 1;

/// The tensor behind `src`, or `self_` (argument 1) when `src` is NULL: TH's in-place view
/// convention, as a conversion of `src` (`src: .. as or_self(self_)`).
///
/// # Safety
/// Both must be NULL or live handles.
unsafe fn or_self<'a, H: Handle>(src: *mut H, self_: *mut H, arg: u32) -> Result<&'a Shared<H::Obj>> {
    // SAFETY: forwarded contract.
    unsafe { if src.is_null() { obj(self_, 1) } else { obj(src, arg) } }
}

/// An optional C array of `n` sizes or strides (NULL: none).
///
/// # Safety
/// As for `c_sizes`.
unsafe fn opt_c_sizes<'a>(p: *const i64, n: i64, arg: u32) -> Result<Option<&'a [i64]>> {
    // SAFETY: forwarded contract.
    if p.is_null() { Ok(None) } else { unsafe { c_sizes(p, n, arg) }.map(Some) }
}

/// Sizes and strides from two optional `THLongStorage`s of equal length.
///
/// # Safety
/// Both must be NULL or live handles.
unsafe fn size_stride(
    size: *const THLongStorage,
    stride: *const THLongStorage,
    arg: u32,
) -> Result<(Vec<i64>, Option<Vec<i64>>)> {
    // SAFETY: forwarded contract.
    let (sz, st) = unsafe { (long_list(size, arg)?, long_list(stride, arg + 1)?) };
    let sz = sz.unwrap_or_default();
    if let Some(st) = &st
        && st.len() != sz.len()
    {
        return Err(Error::size(format!("inconsistent size ({} dims) and stride ({} dims)", sz.len(), st.len()))
            .at_arg(arg + 1));
    }
    Ok((sz, st))
}

/// View errors carry positions of the in-place form `(self, src, dim, ...)`; the `new*` forms
/// drop `self`, so every position moves down by one.
fn shift_arg(e: Error) -> Error {
    Error { arg: e.arg.map(|a| a.saturating_sub(1).max(1)), ..e }
}

/// A new tensor (+1) on `f`'s view of `t`; errors carry the positions of the `new*` form.
fn new_view<T: Scalar, H: Handle<Obj = Tensor<T>>>(
    t: &Tensor<T>,
    f: impl FnOnce(&View<T>) -> Result<View<T>>,
) -> Result<*mut H> {
    Ok(into_handle(Tensor::new(t.with_view(f).map_err(shift_arg)?)))
}

/// A storage that is too small and not resizable is the storage argument's fault (at `pos`).
fn blame_storage(e: Error, pos: u32) -> Error {
    if e.code == crate::core::error::Code::TH_ERR_INVALID_ARG { e.at_arg(pos) } else { e }
}

/// The given storage, or a fresh one of the family's home (NULL in TH means "make one").
fn given_or_fresh<T: Scalar, H: Home>(st: Option<Rc<Storage<T>>>) -> Result<Option<Rc<Storage<T>>>> {
    match st {
        Some(s) => Ok(Some(s)),
        None => H::fresh(),
    }
}

fn new_on_storage<T: Scalar, H: Home>(
    st: Option<Rc<Storage<T>>>,
    offset: isize,
    sizes: &[i64],
    strides: Option<&[i64]>,
) -> Result<Rc<Tensor<T>>> {
    let st = given_or_fresh::<T, H>(st)?;
    Ok(Tensor::new(View::on_storage(st, offset, sizes, strides).map_err(|e| blame_storage(e, 1))?))
}

fn set_storage<T: Scalar, H: Home>(
    t: &Tensor<T>,
    st: Option<Rc<Storage<T>>>,
    offset: isize,
    sizes: &[i64],
    strides: Option<&[i64]>,
) -> Result<()> {
    let st = given_or_fresh::<T, H>(st)?;
    t.set_view(View::on_storage(st, offset, sizes, strides).map_err(|e| blame_storage(e, 2))?);
    Ok(())
}

fn resize<T: Scalar>(t: &Tensor<T>, sizes: &[i64], strides: Option<&[i64]>) -> Result<()> {
    let v = t.with_view(|v| v.resize(sizes, strides))?;
    t.set_view(v);
    Ok(())
}

fn clone_tensor<T: Scalar, H: Home>(t: &Tensor<T>) -> Result<Rc<Tensor<T>>> {
    let src = t.view();
    let dst = View::on_storage(H::fresh()?, 0, &src.sizes, None)?;
    H::copy(&dst, &src)?;
    Ok(Tensor::new(dst))
}

fn size_of_dim<T: Scalar>(t: &Tensor<T>, dim: c_int, strides: bool) -> Result<i64> {
    t.with_view(|v| {
        let d = usize::try_from(dim)
            .ok()
            .filter(|&d| d < v.ndim())
            .ok_or_else(|| Error::index(format!("dimension {dim} out of range of {}D tensor", v.ndim())).at_arg(2))?;
        Ok(if strides { v.strides[d] } else { v.sizes[d] })
    })
}

/// TH's `expandNd`: every `rets[i]` becomes `ops[i]` broadcast to the common shape (all or none).
///
/// # Safety
/// `rets` and `ops` must point to `count` live handles each.
unsafe fn expand_nd<H: Handle<Obj = Tensor<T>>, T: Scalar>(
    rets: *mut *mut H,
    ops: *mut *mut H,
    count: c_int,
) -> Result<()> {
    let n = usize::try_from(count)
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| Error::size(format!("count must be positive, got {count}")).at_arg(3))?;
    if rets.is_null() || ops.is_null() {
        return Err(Error::null(if rets.is_null() { 1 } else { 2 }, "tensor array"));
    }
    let mut views = Vec::with_capacity(n);
    let mut shape: Vec<i64> = Vec::new();
    for i in 0..n {
        // SAFETY: caller contract: n handles in each array.
        let (r, o) = unsafe { (obj(*rets.add(i), 1)?, obj(*ops.add(i), 2)?) };
        let v = o.view();
        if v.ndim() == 0 {
            return Err(Error::size(format!("can't expand empty tensor {i}")).at_arg(2));
        }
        shape = broadcast_shapes(&shape, &v.sizes).map_err(|e| e.at_arg(2))?;
        views.push((r, v));
    }
    let expanded: Vec<_> = views.iter().map(|(r, v)| v.expand(&shape).map(|e| (*r, e))).collect::<Result<_>>()?;
    for (r, e) in expanded {
        r.set_view(e);
    }
    Ok(())
}

macro_rules! tensor_api {
    ($($row:tt),* $(,)?) => { with_all_dtypes!(tensor_api; $($row),*); };
    (@one $all:tt $R:ident, $T:ty, $C:ty) => {
        tensor_api!(@gen $all $R, $T, $C; [TH $R] [] Host);
        thc_family!(tensor_api $all $R, $T, $C);
    };
    (@copy_from $S:ident, $ST:ty; $R:ident, $T:ty, $C:ty; [$($P:tt)*] [$($lead:tt)*] $H:ident) => { pastey::paste! {
            th_fn! {
                #[doc = "Copies a " $S " tensor into this one (C casts; element counts must match)."]
                fn [<$($P)* Tensor_copy $S>] @[$($lead)*](tensor: *mut [<$($P)* Tensor>] as obj, src: *mut [<TH $S Tensor>] as obj) {
                    $H::copy::<$T, $ST>(&tensor.view(), &src.view())
                }
            }
    } };
    (@gen $all:tt $R:ident, $T:ty, $C:ty; $Pg:tt $Lg:tt $H:ident) => { tensor_api!(@body $all $R, $T, $C; $Pg $Lg $H; $Pg $Lg); };
    (@body [$(($S:ident, $ST:ty)),*] $R:ident, $T:ty, $C:ty; [$($P:tt)*] [$($lead:tt)*] $H:ident; $Pg:tt $Lg:tt) => { pastey::paste! {
        th_fn! {
            /// The storage (borrowed, not retained; NULL for a tensor without one).
            fn [<$($P)* Tensor_storage>] @[$($lead)*](self_: *const [<$($P)* Tensor>] as obj) -> *mut [<$($P)* Storage>] = ptr::null_mut(); {
                // The storage stays alive after the snapshot is dropped: the tensor holds it.
                Ok(self_.with_view(|v| v.storage.as_ref().map_or(ptr::null_mut(), as_handle)))
            }
            /// Offset of the first element in the storage, in elements.
            fn [<$($P)* Tensor_storageOffset>] @[$($lead)*](self_: *const [<$($P)* Tensor>] as obj) -> isize = 0; {
                Ok(self_.with_view(|v| v.offset as isize))
            }
            /// Number of dimensions (0 for an empty tensor).
            fn [<$($P)* Tensor_nDimension>] @[$($lead)*](self_: *const [<$($P)* Tensor>] as obj) -> c_int = 0; {
                Ok(self_.with_view(|v| v.ndim() as c_int))
            }
            /// Size of dimension `dim` (0-based).
            fn [<$($P)* Tensor_size>] @[$($lead)*](self_: *const [<$($P)* Tensor>] as obj, dim: c_int) -> i64 = 0; {
                size_of_dim(self_, dim, false)
            }
            /// Stride of dimension `dim` (0-based), in elements.
            fn [<$($P)* Tensor_stride>] @[$($lead)*](self_: *const [<$($P)* Tensor>] as obj, dim: c_int) -> i64 = 0; {
                size_of_dim(self_, dim, true)
            }
            /// The sizes as a new `THLongStorage` (+1).
            fn [<$($P)* Tensor_newSizeOf>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj) -> *mut THLongStorage = ptr::null_mut(); {
                self_.with_view(|v| new_long_storage(&v.sizes))
            }
            /// The strides as a new `THLongStorage` (+1).
            fn [<$($P)* Tensor_newStrideOf>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj) -> *mut THLongStorage = ptr::null_mut(); {
                self_.with_view(|v| new_long_storage(&v.strides))
            }
            /// Pointer to the first element (borrowed; NULL without storage).
            fn [<$($P)* Tensor_data>] @[$($lead)*](self_: *const [<$($P)* Tensor>] as obj) -> *mut $C = ptr::null_mut(); {
                Ok(self_.with_view(|v| $H::data_ptr(v))? as *mut $C)
            }
            /// Sets flag bits (`TH_TENSOR_REFCOUNTED`).
            fn [<$($P)* Tensor_setFlag>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj, flag: c_char) {
                if flag & TH_TENSOR_REFCOUNTED != 0 { self_.set_refcounted(true); }
                Ok(())
            }
            /// Clears flag bits (clearing `TH_TENSOR_REFCOUNTED` makes retain/free no-ops).
            fn [<$($P)* Tensor_clearFlag>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj, flag: c_char) {
                if flag & TH_TENSOR_REFCOUNTED != 0 { self_.set_refcounted(false); }
                Ok(())
            }
            /// A new empty tensor (+1): no dimensions, no storage.
            fn [<$($P)* Tensor_new>] @[$($lead)*]() -> *mut [<$($P)* Tensor>] = ptr::null_mut(); {
                Ok(into_handle(Tensor::<$T>::new(View::on_storage($H::fresh()?, 0, &[], None)?)))
            }
            /// A new tensor viewing the same storage with the same geometry (+1).
            fn [<$($P)* Tensor_newWithTensor>] @[$($lead)*](tensor: *mut [<$($P)* Tensor>] as obj) -> *mut [<$($P)* Tensor>] = ptr::null_mut(); {
                Ok(into_handle(Tensor::new(tensor.view())))
            }
            /// A new tensor on `storage` (retained; NULL creates one) at `storageOffset` with `size`
            /// and `stride` (negative entries or NULL: contiguous). A too-small storage is grown.
            fn [<$($P)* Tensor_newWithStorage>] @[$($lead)*](storage: *mut [<$($P)* Storage>], storage_offset: isize, size: *mut THLongStorage, stride: *mut THLongStorage) -> *mut [<$($P)* Tensor>] = ptr::null_mut(); {
                // SAFETY: handles from the caller.
                let (st, (sz, sd)) = unsafe { (opt_rc(storage, 1)?, size_stride(size, stride, 3)?) };
                Ok(into_handle(new_on_storage::<_, $H>(st, storage_offset, &sz, sd.as_deref())?))
            }
            /// 1-d `newWithStorage` (a size of 0 or -1 ends the dimension list, as in TH).
            fn [<$($P)* Tensor_newWithStorage1d>] @[$($lead)*](storage: *mut [<$($P)* Storage>] as opt_rc, storage_offset: isize, size0: i64, stride0: i64) -> *mut [<$($P)* Tensor>] = ptr::null_mut(); {
                Ok(into_handle(new_on_storage::<_, $H>(storage, storage_offset, &[size0], Some(&[stride0]))?))
            }
            /// 2-d `newWithStorage`.
            fn [<$($P)* Tensor_newWithStorage2d>] @[$($lead)*](storage: *mut [<$($P)* Storage>] as opt_rc, storage_offset: isize, size0: i64, stride0: i64, size1: i64, stride1: i64) -> *mut [<$($P)* Tensor>] = ptr::null_mut(); {
                Ok(into_handle(new_on_storage::<_, $H>(storage, storage_offset, &[size0, size1], Some(&[stride0, stride1]))?))
            }
            /// 3-d `newWithStorage`.
            fn [<$($P)* Tensor_newWithStorage3d>] @[$($lead)*](storage: *mut [<$($P)* Storage>] as opt_rc, storage_offset: isize, size0: i64, stride0: i64, size1: i64, stride1: i64, size2: i64, stride2: i64) -> *mut [<$($P)* Tensor>] = ptr::null_mut(); {
                Ok(into_handle(new_on_storage::<_, $H>(storage, storage_offset, &[size0, size1, size2], Some(&[stride0, stride1, stride2]))?))
            }
            /// 4-d `newWithStorage`.
            fn [<$($P)* Tensor_newWithStorage4d>] @[$($lead)*](storage: *mut [<$($P)* Storage>] as opt_rc, storage_offset: isize, size0: i64, stride0: i64, size1: i64, stride1: i64, size2: i64, stride2: i64, size3: i64, stride3: i64) -> *mut [<$($P)* Tensor>] = ptr::null_mut(); {
                Ok(into_handle(new_on_storage::<_, $H>(storage, storage_offset, &[size0, size1, size2, size3], Some(&[stride0, stride1, stride2, stride3]))?))
            }
            /// A new tensor with fresh storage of `size` (uninitialised), `stride` as in `newWithStorage`.
            fn [<$($P)* Tensor_newWithSize>] @[$($lead)*](size: *mut THLongStorage, stride: *mut THLongStorage) -> *mut [<$($P)* Tensor>] = ptr::null_mut(); {
                // SAFETY: handles from the caller.
                let (sz, sd) = unsafe { size_stride(size, stride, 1)? };
                Ok(into_handle(new_on_storage::<$T, $H>(None, 0, &sz, sd.as_deref())?))
            }
            /// A new contiguous 1-d tensor (uninitialised; size 0 or -1 gives an empty tensor).
            fn [<$($P)* Tensor_newWithSize1d>] @[$($lead)*](size0: i64) -> *mut [<$($P)* Tensor>] = ptr::null_mut(); {
                Ok(into_handle(new_on_storage::<$T, $H>(None, 0, &[size0], None)?))
            }
            /// A new contiguous 2-d tensor (uninitialised).
            fn [<$($P)* Tensor_newWithSize2d>] @[$($lead)*](size0: i64, size1: i64) -> *mut [<$($P)* Tensor>] = ptr::null_mut(); {
                Ok(into_handle(new_on_storage::<$T, $H>(None, 0, &[size0, size1], None)?))
            }
            /// A new contiguous 3-d tensor (uninitialised).
            fn [<$($P)* Tensor_newWithSize3d>] @[$($lead)*](size0: i64, size1: i64, size2: i64) -> *mut [<$($P)* Tensor>] = ptr::null_mut(); {
                Ok(into_handle(new_on_storage::<$T, $H>(None, 0, &[size0, size1, size2], None)?))
            }
            /// A new contiguous 4-d tensor (uninitialised).
            fn [<$($P)* Tensor_newWithSize4d>] @[$($lead)*](size0: i64, size1: i64, size2: i64, size3: i64) -> *mut [<$($P)* Tensor>] = ptr::null_mut(); {
                Ok(into_handle(new_on_storage::<$T, $H>(None, 0, &[size0, size1, size2, size3], None)?))
            }
            /// A new contiguous copy (+1).
            fn [<$($P)* Tensor_newClone>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj) -> *mut [<$($P)* Tensor>] = ptr::null_mut(); {
                Ok(into_handle(clone_tensor::<_, $H>(self_)?))
            }
            /// `tensor` itself with one more reference if it is contiguous, else a contiguous copy
            /// (+1 either way: always `free` the result; writes may go to `tensor`).
            fn [<$($P)* Tensor_newContiguous>] @[$($lead)*](tensor: *mut [<$($P)* Tensor>]) -> *mut [<$($P)* Tensor>] = ptr::null_mut(); {
                // SAFETY: a handle from the caller.
                let t = unsafe { obj(tensor, 1)? };
                if t.with_view(|v| v.is_contiguous()) {
                    // SAFETY: a live handle.
                    unsafe { retain(tensor) };
                    return Ok(tensor);
                }
                Ok(into_handle(clone_tensor::<_, $H>(t)?))
            }
            /// A new view (+1) with dimension `dimension` fixed at `sliceIndex` (needs >= 2 dims).
            fn [<$($P)* Tensor_newSelect>] @[$($lead)*](tensor: *mut [<$($P)* Tensor>] as obj, dimension: c_int, slice_index: i64) -> *mut [<$($P)* Tensor>] = ptr::null_mut(); {
                new_view(tensor, |v| v.select(dimension, slice_index))
            }
            /// A new view (+1) of `size` entries of `dimension` starting at `firstIndex`.
            fn [<$($P)* Tensor_newNarrow>] @[$($lead)*](tensor: *mut [<$($P)* Tensor>] as obj, dimension: c_int, first_index: i64, size: i64) -> *mut [<$($P)* Tensor>] = ptr::null_mut(); {
                new_view(tensor, |v| v.narrow(dimension, first_index, size))
            }
            /// A new view (+1) with two dimensions swapped.
            fn [<$($P)* Tensor_newTranspose>] @[$($lead)*](tensor: *mut [<$($P)* Tensor>] as obj, dimension1: c_int, dimension2: c_int) -> *mut [<$($P)* Tensor>] = ptr::null_mut(); {
                new_view(tensor, |v| v.transpose(dimension1, dimension2))
            }
            /// A new view (+1) of all windows of `size` along `dimension`, `step` apart (a new last dim).
            fn [<$($P)* Tensor_newUnfold>] @[$($lead)*](tensor: *mut [<$($P)* Tensor>] as obj, dimension: c_int, size: i64, step: i64) -> *mut [<$($P)* Tensor>] = ptr::null_mut(); {
                new_view(tensor, |v| v.unfold(dimension, size, step))
            }
            /// A new view (+1) of a contiguous tensor with new sizes (one may be -1: inferred).
            fn [<$($P)* Tensor_newView>] @[$($lead)*](tensor: *mut [<$($P)* Tensor>] as obj, size: *mut THLongStorage as required_list("size")) -> *mut [<$($P)* Tensor>] = ptr::null_mut(); {
                Ok(into_handle(Tensor::new(tensor.with_view(|v| v.reshape_view(&size))?)))
            }
            /// A new view (+1) broadcast to `size` (size-1 dims get stride 0; -1 keeps a size).
            fn [<$($P)* Tensor_newExpand>] @[$($lead)*](tensor: *mut [<$($P)* Tensor>] as obj, size: *mut THLongStorage as required_list("size")) -> *mut [<$($P)* Tensor>] = ptr::null_mut(); {
                Ok(into_handle(Tensor::new(tensor.with_view(|v| v.expand(&size)).map_err(|e| Error { arg: Some(2), ..e })?)))
            }
            /// `r` becomes `tensor` broadcast to `size`.
            fn [<$($P)* Tensor_expand>] @[$($lead)*](r: *mut [<$($P)* Tensor>] as obj, tensor: *mut [<$($P)* Tensor>] as obj, size: *mut THLongStorage as required_list("size")) {
                r.update_from(tensor, |v| v.expand(&size))
            }
            /// `rets[i]` becomes `ops[i]` broadcast to the common shape of all `ops` (all or none).
            fn [<$($P)* Tensor_expandNd>] @[$($lead)*](rets: *mut *mut [<$($P)* Tensor>], ops: *mut *mut [<$($P)* Tensor>], count: c_int) {
                // SAFETY: arrays of `count` handles from the caller.
                unsafe { expand_nd(rets, ops, count) }
            }
            /// Resizes to `size` (`stride` NULL or negative entries: contiguous). Keeps the storage
            /// and its data; grows it when needed, never shrinks it.
            fn [<$($P)* Tensor_resize>] @[$($lead)*](tensor: *mut [<$($P)* Tensor>], size: *mut THLongStorage, stride: *mut THLongStorage) {
                // SAFETY: handles from the caller.
                let (t, (sz, sd)) = unsafe { (obj(tensor, 1)?, size_stride(size, stride, 2)?) };
                if size.is_null() {
                    return Err(Error::null(2, "size"));
                }
                resize(t, &sz, sd.as_deref())
            }
            /// Resizes to `src`'s sizes (no-op if they already match, whatever the strides).
            fn [<$($P)* Tensor_resizeAs>] @[$($lead)*](tensor: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as obj) {
                let sizes = src.with_view(|v| v.sizes.clone());
                resize(tensor, &sizes, None)
            }
            /// Resizes to `nDimension` sizes from `size` (the list ends at the first 0 or -1);
            /// `stride` may be NULL.
            fn [<$($P)* Tensor_resizeNd>] @[$($lead)*](tensor: *mut [<$($P)* Tensor>] as obj, n_dimension: c_int, size: *mut i64 as c_sizes(n_dimension as i64), stride: *mut i64 as opt_c_sizes(n_dimension as i64)) {
                resize(tensor, size, stride)
            }
            /// Resizes to 1-d.
            fn [<$($P)* Tensor_resize1d>] @[$($lead)*](tensor: *mut [<$($P)* Tensor>] as obj, size0: i64) {
                resize(tensor, &[size0], None)
            }
            /// Resizes to 2-d.
            fn [<$($P)* Tensor_resize2d>] @[$($lead)*](tensor: *mut [<$($P)* Tensor>] as obj, size0: i64, size1: i64) {
                resize(tensor, &[size0, size1], None)
            }
            /// Resizes to 3-d.
            fn [<$($P)* Tensor_resize3d>] @[$($lead)*](tensor: *mut [<$($P)* Tensor>] as obj, size0: i64, size1: i64, size2: i64) {
                resize(tensor, &[size0, size1, size2], None)
            }
            /// Resizes to 4-d.
            fn [<$($P)* Tensor_resize4d>] @[$($lead)*](tensor: *mut [<$($P)* Tensor>] as obj, size0: i64, size1: i64, size2: i64, size3: i64) {
                resize(tensor, &[size0, size1, size2, size3], None)
            }
            /// Resizes to 5-d.
            fn [<$($P)* Tensor_resize5d>] @[$($lead)*](tensor: *mut [<$($P)* Tensor>] as obj, size0: i64, size1: i64, size2: i64, size3: i64, size4: i64) {
                resize(tensor, &[size0, size1, size2, size3, size4], None)
            }
            /// `self` becomes a view of `src` (same storage, offset, sizes, strides).
            fn [<$($P)* Tensor_set>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as obj) {
                self_.update_from(src, |v| Ok(v.clone()))
            }
            /// Re-points `self` at `storage` (retained; NULL allowed) with `size`/`stride`.
            fn [<$($P)* Tensor_setStorage>] @[$($lead)*](self_: *mut [<$($P)* Tensor>], storage: *mut [<$($P)* Storage>], storage_offset: isize, size: *mut THLongStorage, stride: *mut THLongStorage) {
                // SAFETY: handles from the caller.
                let (t, st, (sz, sd)) = unsafe { (obj(self_, 1)?, opt_rc(storage, 2)?, size_stride(size, stride, 4)?) };
                set_storage::<_, $H>(t, st, storage_offset, &sz, sd.as_deref())
            }
            /// Re-points `self` at `storage` with `nDimension` sizes/strides from C arrays.
            fn [<$($P)* Tensor_setStorageNd>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj, storage: *mut [<$($P)* Storage>] as opt_rc, storage_offset: isize, n_dimension: c_int, size: *mut i64 as c_sizes(n_dimension as i64), stride: *mut i64 as opt_c_sizes(n_dimension as i64)) {
                set_storage::<_, $H>(self_, storage, storage_offset, size, stride)
            }
            /// 1-d `setStorage`.
            fn [<$($P)* Tensor_setStorage1d>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj, storage: *mut [<$($P)* Storage>] as opt_rc, storage_offset: isize, size0: i64, stride0: i64) {
                set_storage::<_, $H>(self_, storage, storage_offset, &[size0], Some(&[stride0]))
            }
            /// 2-d `setStorage`.
            fn [<$($P)* Tensor_setStorage2d>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj, storage: *mut [<$($P)* Storage>] as opt_rc, storage_offset: isize, size0: i64, stride0: i64, size1: i64, stride1: i64) {
                set_storage::<_, $H>(self_, storage, storage_offset, &[size0, size1], Some(&[stride0, stride1]))
            }
            /// 3-d `setStorage`.
            fn [<$($P)* Tensor_setStorage3d>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj, storage: *mut [<$($P)* Storage>] as opt_rc, storage_offset: isize, size0: i64, stride0: i64, size1: i64, stride1: i64, size2: i64, stride2: i64) {
                set_storage::<_, $H>(self_, storage, storage_offset, &[size0, size1, size2], Some(&[stride0, stride1, stride2]))
            }
            /// 4-d `setStorage`.
            fn [<$($P)* Tensor_setStorage4d>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj, storage: *mut [<$($P)* Storage>] as opt_rc, storage_offset: isize, size0: i64, stride0: i64, size1: i64, stride1: i64, size2: i64, stride2: i64, size3: i64, stride3: i64) {
                set_storage::<_, $H>(self_, storage, storage_offset, &[size0, size1, size2, size3], Some(&[stride0, stride1, stride2, stride3]))
            }
            /// `self` becomes `src` narrowed to `size` entries of `dimension` from `firstIndex`.
            fn [<$($P)* Tensor_narrow>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as or_self(self_), dimension: c_int, first_index: i64, size: i64) {
                self_.update_from(src, |v| v.narrow(dimension, first_index, size))
            }
            /// `self` becomes `src` with `dimension` fixed at `sliceIndex` (src needs >= 2 dims).
            fn [<$($P)* Tensor_select>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as or_self(self_), dimension: c_int, slice_index: i64) {
                self_.update_from(src, |v| v.select(dimension, slice_index))
            }
            /// `self` becomes `src` with two dimensions swapped.
            fn [<$($P)* Tensor_transpose>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as or_self(self_), dimension1: c_int, dimension2: c_int) {
                self_.update_from(src, |v| v.transpose(dimension1, dimension2))
            }
            /// `self` becomes the windows of `size` along `dimension` of `src`, `step` apart.
            fn [<$($P)* Tensor_unfold>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as or_self(self_), dimension: c_int, size: i64, step: i64) {
                self_.update_from(src, |v| v.unfold(dimension, size, step))
            }
            /// `self` becomes `src` without its size-1 dimensions (all ones: 1-d of size 1).
            fn [<$($P)* Tensor_squeeze>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as or_self(self_)) {
                self_.update_from(src, |v| Ok(v.squeeze()))
            }
            /// `self` becomes `src` without `dimension` if it has size 1 and is not the only one.
            fn [<$($P)* Tensor_squeeze1d>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as or_self(self_), dimension: c_int) {
                self_.update_from(src, |v| v.squeeze1d(dimension))
            }
            /// `self` becomes `src` with a size-1 dimension inserted at `dimension` (0..=nDimension).
            fn [<$($P)* Tensor_unsqueeze1d>] @[$($lead)*](self_: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as or_self(self_), dimension: c_int) {
                self_.update_from(src, |v| v.unsqueeze1d(dimension))
            }
            /// 1 if row-major contiguous (size-1 dims ignored; empty counts as contiguous).
            fn [<$($P)* Tensor_isContiguous>] @[$($lead)*](self_: *const [<$($P)* Tensor>] as obj) -> c_int = 0; {
                Ok(self_.with_view(|v| v.is_contiguous()) as c_int)
            }
            /// 1 if both have the same sizes (strides ignored).
            fn [<$($P)* Tensor_isSameSizeAs>] @[$($lead)*](self_: *const [<$($P)* Tensor>] as obj, src: *const [<$($P)* Tensor>] as obj) -> c_int = 0; {
                let sa = self_.with_view(|v| v.sizes.clone());
                Ok(src.with_view(|v| v.sizes == sa) as c_int)
            }
            /// 1 if `self` views exactly what `src` views (same storage, offset, sizes, strides).
            fn [<$($P)* Tensor_isSetTo>] @[$($lead)*](self_: *const [<$($P)* Tensor>] as obj, src: *const [<$($P)* Tensor>] as obj) -> c_int = 0; {
                let va = self_.view();
                Ok(src.with_view(|v| va.is_set_to(v)) as c_int)
            }
            /// 1 if the sizes equal `dims`.
            fn [<$($P)* Tensor_isSize>] @[$($lead)*](self_: *const [<$($P)* Tensor>] as obj, dims: *const THLongStorage as required_list("dims")) -> c_int = 0; {
                Ok(self_.with_view(|v| v.sizes == dims) as c_int)
            }
            /// Number of elements (0 when empty).
            fn [<$($P)* Tensor_nElement>] @[$($lead)*](self_: *const [<$($P)* Tensor>] as obj) -> isize = 0; {
                Ok(self_.with_view(|v| v.numel() as isize))
            }
        }
        refcount_fns!([<$($P)* Tensor>], self_, "the tensor and its storage reference", [$($lead)*]);
        th_fn! {
            /// Copies `self` into `dst` (unless they are the same), then drops the caller's reference
            /// on `self` (also when the copy fails).
            fn [<$($P)* Tensor_freeCopyTo>] @[$($lead)*](self_: *mut [<$($P)* Tensor>], dst: *mut [<$($P)* Tensor>]) {
                // SAFETY: handles from the caller; `self_` is released exactly once below.
                let r = unsafe { (|| -> Result<()> {
                    let s = obj(self_, 1)?;
                    if !ptr::eq(self_, dst) {
                        $H::copy(&obj(dst, 2)?.view(), &s.view())?;
                    }
                    Ok(())
                })() };
                // SAFETY: the caller's reference on self_.
                unsafe { release(self_) };
                r
            }
            /// `tensor[x0] = value` (1-d tensors only; bounds-checked).
            fn [<$($P)* Tensor_set1d>] @[$($lead)*](tensor: *mut [<$($P)* Tensor>] as obj, x0: i64, value: $C) {
                tensor.with_view(|v| $H::set(v, &[x0], <$T>::from_c(value)))
            }
            /// `tensor[x0][x1] = value` (2-d tensors only; bounds-checked).
            fn [<$($P)* Tensor_set2d>] @[$($lead)*](tensor: *mut [<$($P)* Tensor>] as obj, x0: i64, x1: i64, value: $C) {
                tensor.with_view(|v| $H::set(v, &[x0, x1], <$T>::from_c(value)))
            }
            /// `tensor[x0][x1][x2] = value` (3-d tensors only; bounds-checked).
            fn [<$($P)* Tensor_set3d>] @[$($lead)*](tensor: *mut [<$($P)* Tensor>] as obj, x0: i64, x1: i64, x2: i64, value: $C) {
                tensor.with_view(|v| $H::set(v, &[x0, x1, x2], <$T>::from_c(value)))
            }
            /// `tensor[x0][x1][x2][x3] = value` (4-d tensors only; bounds-checked).
            fn [<$($P)* Tensor_set4d>] @[$($lead)*](tensor: *mut [<$($P)* Tensor>] as obj, x0: i64, x1: i64, x2: i64, x3: i64, value: $C) {
                tensor.with_view(|v| $H::set(v, &[x0, x1, x2, x3], <$T>::from_c(value)))
            }
            /// `tensor[x0]` (1-d tensors only; bounds-checked; 0 on error).
            fn [<$($P)* Tensor_get1d>] @[$($lead)*](tensor: *const [<$($P)* Tensor>] as obj, x0: i64) -> $C = <$T>::default().to_c(); {
                Ok(tensor.with_view(|v| $H::get(v, &[x0]))?.to_c())
            }
            /// `tensor[x0][x1]` (2-d tensors only).
            fn [<$($P)* Tensor_get2d>] @[$($lead)*](tensor: *const [<$($P)* Tensor>] as obj, x0: i64, x1: i64) -> $C = <$T>::default().to_c(); {
                Ok(tensor.with_view(|v| $H::get(v, &[x0, x1]))?.to_c())
            }
            /// `tensor[x0][x1][x2]` (3-d tensors only).
            fn [<$($P)* Tensor_get3d>] @[$($lead)*](tensor: *const [<$($P)* Tensor>] as obj, x0: i64, x1: i64, x2: i64) -> $C = <$T>::default().to_c(); {
                Ok(tensor.with_view(|v| $H::get(v, &[x0, x1, x2]))?.to_c())
            }
            /// `tensor[x0][x1][x2][x3]` (4-d tensors only).
            fn [<$($P)* Tensor_get4d>] @[$($lead)*](tensor: *const [<$($P)* Tensor>] as obj, x0: i64, x1: i64, x2: i64, x3: i64) -> $C = <$T>::default().to_c(); {
                Ok(tensor.with_view(|v| $H::get(v, &[x0, x1, x2, x3]))?.to_c())
            }
            #[doc = "`\"torch." $R "Tensor of size 2x3\"`."]
            fn [<$($P)* Tensor_desc>] @[$($lead)*](tensor: *const [<$($P)* Tensor>] as obj) -> THDescBuff = THDescBuff::empty(); {
                Ok(THDescBuff::from_str(&tensor.with_view(|v| v.desc())))
            }
            /// `"[2 x 3]"`.
            fn [<$($P)* Tensor_sizeDesc>] @[$($lead)*](tensor: *const [<$($P)* Tensor>] as obj) -> THDescBuff = THDescBuff::empty(); {
                Ok(THDescBuff::from_str(&tensor.with_view(|v| size_desc(&v.sizes))))
            }
            /// Copies `src` into `tensor` element by element in row-major order of each (element
            /// counts must match, shapes need not; no resize). Overlapping views are handled.
            fn [<$($P)* Tensor_copy>] @[$($lead)*](tensor: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as obj) {
                $H::copy(&tensor.view(), &src.view())
            }
        }
        $( tensor_api!(@copy_from $S, $ST; $R, $T, $C; $Pg $Lg $H); )*
    } };
}
crate::th_dtypes!(tensor_api);
