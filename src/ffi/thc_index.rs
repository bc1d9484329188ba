//! THC's index, mask and scatter/gather functions (`THCTensorIndex.h`, `THCTensorMasked.h`,
//! `THCTensorScatterGather.h`, and `nonzero` of `THCTensorMath.h`) on device tensors, with
//! THC's names and C types. They run the same `ops::index` functions as TH's (`ffi::index`),
//! whose engine picks the device kernels for device tensors.
//!
//! - Indices are 0-based, as in this library's TH API; an index out of range (or a Byte mask
//!   value other than 0 and 1) is an error and nothing is written.
//! - `index*` take a `THCudaLongTensor` of indices; the `_long` forms take a host
//!   `THLongTensor`, copied to the tensor's device first.
//! - `masked*` take a `THCudaByteTensor` mask (values 0 or 1); the `*Byte` forms a host
//!   `THByteTensor` mask (copied to the device first); the `*Bool` forms a `THCudaBoolTensor`
//!   mask (any nonzero byte is true), as this library's TH API has Bool masks too.
//! - Every dtype has every function but `indexAdd`/`indexAdd_long`/`scatterAdd`, which Bool lacks.
//! - Not here: `calculateAdvancedIndexingOffsets`, the helper of THC's Lua/PyTorch advanced
//!   indexing (it turns per-dimension indexer tensors into linear storage offsets for a later
//!   gather); this library's API has no advanced indexing that would consume those offsets.

use super::thc::*;
use super::*;
use crate::core::tensor::View;
use crate::ops::index as ix;
use std::ffi::c_int;

/// `v` as given (the device forms: an operand elsewhere is refused by the engine).
fn same<T: Scalar, L: Scalar>(v: &View<T>, _like: &View<L>) -> Result<View<T>> {
    Ok(v.clone())
}

/// `v` in the memory `like` lives in: itself when already there, else a copy (a host index or
/// mask given to a device function). A copy keeps `v`'s sizes, so the shape checks that follow
/// see what the caller passed.
fn beside<T: Scalar, L: Scalar>(v: &View<T>, like: &View<L>) -> Result<View<T>> {
    if v.device() == like.device() {
        return Ok(v.clone());
    }
    let d = crate::ops::temp_like(like, &v.sizes)?;
    crate::ops::copy::copy(&d, v)?;
    Ok(d)
}

macro_rules! thc_index {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => {
        $( thc_index!(@pre $R, $T, $C, $K); )*
    };
    (@pre Float, $T:ty, $C:ty, $K:ident) => { thc_index!(@gen [THCuda] $T, $C, $K); };
    (@pre $R:ident, $T:ty, $C:ty, $K:ident) => { thc_index!(@gen [THCuda $R] $T, $C, $K); };
    (@gen [$($P:tt)*] $T:ty, $C:ty, $K:ident) => {
        thc_index!(@all [$($P)*] $T, $C);
        thc_index!(@masks [$($P)*] $T, $C, THCudaByteTensor, same, []);
        thc_index!(@masks [$($P)*] $T, $C, THByteTensor, beside, [Byte]);
        thc_index!(@masks [$($P)*] $T, $C, THCudaBoolTensor, same, [Bool]);
        thc_index!(@num $K [$($P)*] $T, $C);
    };
    (@all [$($P:tt)*] $T:ty, $C:ty) => { pastey::paste! {
        thc_index!(@index [$($P)*] $T, $C, THCudaLongTensor, same, []);
        thc_index!(@index [$($P)*] $T, $C, THLongTensor, beside, [_long]);
        th_fn! {
            /// `tensor` = `src` with `index[p]` replacing coordinate `dim` of each position `p`
            /// (`index` has `src`'s rank and sizes except along `dim`; `tensor` resized like it).
            fn [<$($P)* Tensor_gather>] @[state: *mut THCState](tensor: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as view, dim: c_int, index: *mut THCudaLongTensor as view) {
                ix::gather(tensor, &src, dim, &index)
            }
            /// `tensor[p with coordinate dim replaced by index[p]] = src[p]` (in place; repeated
            /// indices: the last in index order wins).
            fn [<$($P)* Tensor_scatter>] @[state: *mut THCState](tensor: *mut [<$($P)* Tensor>] as view, dim: c_int, index: *mut THCudaLongTensor as view, src: *mut [<$($P)* Tensor>] as view) {
                ix::scatter(&tensor, dim, &index, &src)
            }
            /// `tensor[p with coordinate dim replaced by index[p]] = value` (in place).
            fn [<$($P)* Tensor_scatterFill>] @[state: *mut THCState](tensor: *mut [<$($P)* Tensor>] as view, dim: c_int, index: *mut THCudaLongTensor as view, value: $C) {
                ix::scatter_fill(&tensor, dim, &index, <$T>::from_c(value))
            }
            /// `tensor` (nnz x nDimension) = the 0-based subscripts of the nonzero elements of
            /// `self` in row-major order.
            fn [<$($P)* Tensor_nonzero>] @[state: *mut THCState](tensor: *mut THCudaLongTensor as obj, self_: *mut [<$($P)* Tensor>] as view) {
                ix::nonzero(tensor, &self_)
            }
        }
    } };
    // indexCopy/Fill/Select with a device (`[]`) or host (`[_long]`) index.
    (@index [$($P:tt)*] $T:ty, $C:ty, $I:ident, $mv:ident, [$($sfx:ident)?]) => { pastey::paste! {
        th_fn! {
            /// `res_.select(dim, indices[i]) = src.select(dim, i)` (in place; `src` has `res_`'s
            /// sizes except `size[dim] = nElement(indices)`; repeated indices: the last wins).
            fn [<$($P)* Tensor_indexCopy $($sfx)?>] @[state: *mut THCState](res_: *mut [<$($P)* Tensor>] as view, dim: c_int, indices: *mut $I as view, src: *mut [<$($P)* Tensor>] as view) {
                ix::index_copy(&res_, dim, &$mv(&indices, &res_)?, &src)
            }
            /// `tensor.select(dim, index[i]) = val` for every index (in place).
            fn [<$($P)* Tensor_indexFill $($sfx)?>] @[state: *mut THCState](tensor: *mut [<$($P)* Tensor>] as view, dim: c_int, index: *mut $I as view, val: $C) {
                ix::index_fill(&tensor, dim, &$mv(&index, &tensor)?, <$T>::from_c(val))
            }
            /// `tensor` = `src` with `index` (1-D) selecting entries along `dim`; resized to
            /// `src`'s sizes with `size[dim] = nElement(index)`.
            fn [<$($P)* Tensor_indexSelect $($sfx)?>] @[state: *mut THCState](tensor: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as view, dim: c_int, index: *mut $I as view) {
                ix::index_select(tensor, &src, dim, &$mv(&index, &src)?)
            }
        }
    } };
    (@masks [$($P:tt)*] $T:ty, $C:ty, $M:ident, $mv:ident, [$($sfx:ident)?]) => { pastey::paste! {
        th_fn! {
            /// `tensor[i] = value` where `mask[i]` is set (in place; the mask broadcast to
            /// `tensor`, or with as many elements).
            fn [<$($P)* Tensor_maskedFill $($sfx)?>] @[state: *mut THCState](tensor: *mut [<$($P)* Tensor>] as view, mask: *mut $M as view, value: $C) {
                ix::masked_fill(&tensor, &$mv(&mask, &tensor)?, <$T>::from_c(value))
            }
            /// Where `mask[i]` is set, `tensor[i]` takes the next element of `src` in row-major
            /// order (in place; `src` needs as many elements as the mask has set values).
            fn [<$($P)* Tensor_maskedCopy $($sfx)?>] @[state: *mut THCState](tensor: *mut [<$($P)* Tensor>] as view, mask: *mut $M as view, src: *mut [<$($P)* Tensor>] as view) {
                ix::masked_copy(&tensor, &$mv(&mask, &tensor)?, &src)
            }
            /// `tensor` = the elements of `src` where `mask` is set, 1-D in row-major order
            /// (`src` and `mask` broadcast together).
            fn [<$($P)* Tensor_maskedSelect $($sfx)?>] @[state: *mut THCState](tensor: *mut [<$($P)* Tensor>] as obj, src: *mut [<$($P)* Tensor>] as view, mask: *mut $M as view) {
                ix::masked_select(tensor, &src, &$mv(&mask, &src)?)
            }
        }
    } };
    (@num bool [$($P:tt)*] $T:ty, $C:ty) => {};
    (@num $k:ident [$($P:tt)*] $T:ty, $C:ty) => { pastey::paste! {
        thc_index!(@add [$($P)*] THCudaLongTensor, same, []);
        thc_index!(@add [$($P)*] THLongTensor, beside, [_long]);
        th_fn! {
            /// `tensor[p with coordinate dim replaced by index[p]] += src[p]` (in place; repeated
            /// indices accumulate in index order).
            fn [<$($P)* Tensor_scatterAdd>] @[state: *mut THCState](tensor: *mut [<$($P)* Tensor>] as view, dim: c_int, index: *mut THCudaLongTensor as view, src: *mut [<$($P)* Tensor>] as view) {
                ix::scatter_add(&tensor, dim, &index, &src)
            }
        }
    } };
    (@add [$($P:tt)*] $I:ident, $mv:ident, [$($sfx:ident)?]) => { pastey::paste! {
        th_fn! {
            /// `res_.select(dim, indices[i]) += src.select(dim, i)` (in place; repeated indices
            /// accumulate in index order).
            fn [<$($P)* Tensor_indexAdd $($sfx)?>] @[state: *mut THCState](res_: *mut [<$($P)* Tensor>] as view, dim: c_int, indices: *mut $I as view, src: *mut [<$($P)* Tensor>] as view) {
                ix::index_add(&res_, dim, &$mv(&indices, &res_)?, &src)
            }
        }
    } };
}
crate::th_dtypes!(thc_index);
