//! `generic/THTensorMath.h`, index/shape part: masks (Byte and Bool), nonzero, index ops,
//! gather/scatter, constructors, reshape, sort/topk, tril/triu, cat/catArray, cross, ranges.
//! Index tensors are `THLongTensor`s of 0-based indices, checked before anything is written.
//! See `ops::index` for the semantics.

use super::storage::long_list;
use super::*;
use crate::core::tensor::View;
use crate::ops::index as ix;
use std::ffi::c_int;

/// The view of a borrowed tensor argument.
///
/// # Safety
/// `p` must be NULL or a live handle.
unsafe fn view<H: Handle<Obj = Tensor<T>>, T: Scalar>(p: *mut H, arg: u32) -> Result<View<T>> {
    // SAFETY: forwarded contract.
    Ok(unsafe { obj(p, arg)? }.view())
}

/// The sizes in a required `THLongStorage` argument.
///
/// # Safety
/// `p` must be NULL or a live handle.
unsafe fn sizes(p: *mut THLongStorage, arg: u32) -> Result<Vec<i64>> {
    // SAFETY: forwarded contract.
    unsafe { long_list(p, arg)? }.ok_or_else(|| Error::null(arg, "THLongStorage"))
}

/// The views of an array of `n` tensor handles (argument `arg`).
///
/// # Safety
/// `p` must be NULL or point to `n` handles, each NULL or live.
unsafe fn views<H: Handle<Obj = Tensor<T>>, T: Scalar>(p: *mut *mut H, n: c_int, arg: u32) -> Result<Vec<View<T>>> {
    let n = usize::try_from(n)
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| Error::size(format!("invalid number of inputs {n}")).at_arg(arg + 1))?;
    if p.is_null() {
        return Err(Error::null(arg, "tensor array"));
    }
    // SAFETY: caller contract: p points to n handles, each NULL (an error) or live.
    (0..n).map(|i| unsafe { view(*p.add(i), arg) }).collect()
}

macro_rules! mask_fns {
    ($R:ident, $T:ty, $C:ty, $M:ident, [$($sfx:ident)?], $what:literal) => { pastey::paste! {
        th_fn! {
            #[doc = "Sets `tensor[i] = value` where `mask[i]` is set (in place; " $what " mask broadcast to `tensor`, or with as many elements)."]
            fn [<TH $R Tensor_maskedFill $($sfx)?>](tensor: *mut [<TH $R Tensor>], mask: *mut [<TH $M Tensor>], value: $C) {
                // SAFETY: handles from the caller.
                let (t, m) = unsafe { (view(tensor, 1)?, view(mask, 2)?) };
                ix::masked_fill(&t, &m, <$T>::from_c(value))
            }
        }
        th_fn! {
            #[doc = "Where `mask[i]` is set, `tensor[i]` takes the next element of `src` in row-major order (in place; " $what " mask). `src` needs at least as many elements as the mask has set values."]
            fn [<TH $R Tensor_maskedCopy $($sfx)?>](tensor: *mut [<TH $R Tensor>], mask: *mut [<TH $M Tensor>], src: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (t, m, s) = unsafe { (view(tensor, 1)?, view(mask, 2)?, view(src, 3)?) };
                ix::masked_copy(&t, &m, &s)
            }
        }
        th_fn! {
            #[doc = "`tensor` = the elements of `src` where `mask` is set, 1-D in row-major order (" $what " mask; `src` and `mask` broadcast together)."]
            fn [<TH $R Tensor_maskedSelect $($sfx)?>](tensor: *mut [<TH $R Tensor>], src: *mut [<TH $R Tensor>], mask: *mut [<TH $M Tensor>]) {
                // SAFETY: handles from the caller.
                let (r, s, m) = unsafe { (obj(tensor, 1)?, view(src, 2)?, view(mask, 3)?) };
                ix::masked_select(r, &s, &m)
            }
        }
    } };
}

macro_rules! index_api {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => {
        $( index_api!(@all $R, $T, $C, $A); index_api!(@num $K $R, $T, $C); index_api!(@float $K $R, $T, $C); )*
    };
    (@all $R:ident, $T:ty, $C:ty, $A:ty) => { pastey::paste! {
        mask_fns!($R, $T, $C, Byte, [], "a 0/1 Byte");
        mask_fns!($R, $T, $C, Bool, [Bool], "a Bool");
        th_fn! {
            /// `subscript` (nnz x nDimension) = the 0-based subscripts of the nonzero elements of
            /// `tensor` in row-major order (empty when there are none).
            fn [<TH $R Tensor_nonzero>](subscript: *mut THLongTensor, tensor: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(subscript, 1)?, view(tensor, 2)?) };
                ix::nonzero(r, &t)
            }
        }
        th_fn! {
            /// `tensor` = `src` with `index` (1-D, 0-based) selecting entries along `dim`;
            /// `tensor` is resized to `src`'s sizes with `size[dim] = nElement(index)`.
            fn [<TH $R Tensor_indexSelect>](tensor: *mut [<TH $R Tensor>], src: *mut [<TH $R Tensor>], dim: c_int, index: *mut THLongTensor) {
                // SAFETY: handles from the caller.
                let (r, s, i) = unsafe { (obj(tensor, 1)?, view(src, 2)?, view(index, 4)?) };
                ix::index_select(r, &s, dim, &i)
            }
        }
        th_fn! {
            /// `tensor.select(dim, index[i]) = src.select(dim, i)` (in place; `src` has `tensor`'s
            /// sizes except `size[dim] = nElement(index)`; repeated indices: the last wins).
            fn [<TH $R Tensor_indexCopy>](tensor: *mut [<TH $R Tensor>], dim: c_int, index: *mut THLongTensor, src: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (t, i, s) = unsafe { (view(tensor, 1)?, view(index, 3)?, view(src, 4)?) };
                ix::index_copy(&t, dim, &i, &s)
            }
        }
        th_fn! {
            /// `tensor.select(dim, index[i]) = val` for every index (in place).
            fn [<TH $R Tensor_indexFill>](tensor: *mut [<TH $R Tensor>], dim: c_int, index: *mut THLongTensor, val: $C) {
                // SAFETY: handles from the caller.
                let (t, i) = unsafe { (view(tensor, 1)?, view(index, 3)?) };
                ix::index_fill(&t, dim, &i, <$T>::from_c(val))
            }
        }
        th_fn! {
            /// `tensor[p] = src[p with coordinate dim replaced by index[p]]`; `index` has `src`'s
            /// rank and sizes except along `dim`; `tensor` is resized like `index`.
            fn [<TH $R Tensor_gather>](tensor: *mut [<TH $R Tensor>], src: *mut [<TH $R Tensor>], dim: c_int, index: *mut THLongTensor) {
                // SAFETY: handles from the caller.
                let (r, s, i) = unsafe { (obj(tensor, 1)?, view(src, 2)?, view(index, 4)?) };
                ix::gather(r, &s, dim, &i)
            }
        }
        th_fn! {
            /// `tensor[p with coordinate dim replaced by index[p]] = src[p]` (in place; `index`
            /// has `tensor`'s sizes except along `dim`; repeated indices: the last wins).
            fn [<TH $R Tensor_scatter>](tensor: *mut [<TH $R Tensor>], dim: c_int, index: *mut THLongTensor, src: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (t, i, s) = unsafe { (view(tensor, 1)?, view(index, 3)?, view(src, 4)?) };
                ix::scatter(&t, dim, &i, &s)
            }
        }
        th_fn! {
            /// `tensor[p with coordinate dim replaced by index[p]] = val` (in place).
            fn [<TH $R Tensor_scatterFill>](tensor: *mut [<TH $R Tensor>], dim: c_int, index: *mut THLongTensor, val: $C) {
                // SAFETY: handles from the caller.
                let (t, i) = unsafe { (view(tensor, 1)?, view(index, 3)?) };
                ix::scatter_fill(&t, dim, &i, <$T>::from_c(val))
            }
        }
        th_fn! {
            /// `r_` resized to `size` and filled with zeros.
            fn [<TH $R Tensor_zeros>](r_: *mut [<TH $R Tensor>], size: *mut THLongStorage) {
                // SAFETY: handles from the caller.
                let (r, sz) = unsafe { (obj(r_, 1)?, sizes(size, 2)?) };
                ix::zeros(r, &sz)
            }
        }
        th_fn! {
            /// `r_` resized like `input` and filled with zeros.
            fn [<TH $R Tensor_zerosLike>](r_: *mut [<TH $R Tensor>], input: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(r_, 1)?, view(input, 2)?) };
                ix::zeros_like(r, &t)
            }
        }
        th_fn! {
            /// `r_` resized to `size` and filled with ones.
            fn [<TH $R Tensor_ones>](r_: *mut [<TH $R Tensor>], size: *mut THLongStorage) {
                // SAFETY: handles from the caller.
                let (r, sz) = unsafe { (obj(r_, 1)?, sizes(size, 2)?) };
                ix::ones(r, &sz)
            }
        }
        th_fn! {
            /// `r_` resized like `input` and filled with ones.
            fn [<TH $R Tensor_onesLike>](r_: *mut [<TH $R Tensor>], input: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(r_, 1)?, view(input, 2)?) };
                ix::ones_like(r, &t)
            }
        }
        th_fn! {
            /// `t` 1-D: `r_` = the square matrix with `t` on diagonal `k` (zeros elsewhere);
            /// `t` 2-D: `r_` = diagonal `k` of `t`, 1-D (empty when `k` is past the matrix).
            fn [<TH $R Tensor_diag>](r_: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>], k: c_int) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(r_, 1)?, view(t, 2)?) };
                ix::diag(r, &t, k)
            }
        }
        th_fn! {
            /// `r_` = the `n` x `m` identity matrix (`m <= 0`: `m = n`; `n > 0` required).
            fn [<TH $R Tensor_eye>](r_: *mut [<TH $R Tensor>], n: i64, m: i64) {
                // SAFETY: a handle from the caller.
                ix::eye(unsafe { obj(r_, 1)? }, n, m)
            }
        }
        th_fn! {
            /// `r_` = `xmin, xmin+step, ...` below `xmax` (excluded), computed in accreal;
            /// `xmin == xmax` gives an empty tensor. `r_` keeps its shape when it already has as
            /// many elements.
            fn [<TH $R Tensor_arange>](r_: *mut [<TH $R Tensor>], xmin: $A, xmax: $A, step: $A) {
                // SAFETY: a handle from the caller.
                ix::range::<$T, $A>(unsafe { obj(r_, 1)? }, xmin, xmax, step, false)
            }
        }
        th_fn! {
            /// `r_` = `xmin, xmin+step, ...` up to `xmax` (included), computed in accreal;
            /// `n = floor((xmax-xmin)/step) + 1`. `r_` keeps its shape when it already has `n`
            /// elements.
            fn [<TH $R Tensor_range>](r_: *mut [<TH $R Tensor>], xmin: $A, xmax: $A, step: $A) {
                // SAFETY: a handle from the caller.
                ix::range::<$T, $A>(unsafe { obj(r_, 1)? }, xmin, xmax, step, true)
            }
        }
        th_fn! {
            /// `r_` resized to `size` (no -1 inference) holding `t`'s elements in row-major order
            /// (element counts must match).
            fn [<TH $R Tensor_reshape>](r_: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>], size: *mut THLongStorage) {
                // SAFETY: handles from the caller.
                let (r, t, sz) = unsafe { (obj(r_, 1)?, view(t, 2)?, sizes(size, 3)?) };
                ix::reshape(r, &t, &sz)
            }
        }
        th_fn! {
            /// `rt_` = `t` sorted along `dimension` (stable; ascending, or descending when
            /// `descendingOrder` is nonzero; NaN sorts as the largest value), `ri_` = the 0-based
            /// source positions.
            fn [<TH $R Tensor_sort>](rt_: *mut [<TH $R Tensor>], ri_: *mut THLongTensor, t: *mut [<TH $R Tensor>], dimension: c_int, descending_order: c_int) {
                // SAFETY: handles from the caller.
                let (rt, ri, t) = unsafe { (obj(rt_, 1)?, obj(ri_, 2)?, view(t, 3)?) };
                ix::sort(rt, ri, &t, dimension, descending_order != 0)
            }
        }
        th_fn! {
            /// The `k` largest (`dir != 0`) or smallest (`dir == 0`) elements along `dim`, into
            /// `rt_` and their 0-based positions into `ri_` (`size[dim] = k`). Always in sorted
            /// order (descending for the largest) whatever `sorted` says; ties by position.
            fn [<TH $R Tensor_topk>](rt_: *mut [<TH $R Tensor>], ri_: *mut THLongTensor, t: *mut [<TH $R Tensor>], k: i64, dim: c_int, dir: c_int, sorted: c_int) {
                // SAFETY: handles from the caller.
                let (rt, ri, t) = unsafe { (obj(rt_, 1)?, obj(ri_, 2)?, view(t, 3)?) };
                let _ = sorted;
                ix::topk(rt, ri, &t, k, dim, dir != 0)
            }
        }
        th_fn! {
            /// `r_` = the matrix `t` with the elements above diagonal `k` zeroed (keeps `c <= r + k`).
            fn [<TH $R Tensor_tril>](r_: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>], k: i64) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(r_, 1)?, view(t, 2)?) };
                ix::tril(r, &t, k)
            }
        }
        th_fn! {
            /// `r_` = the matrix `t` with the elements below diagonal `k` zeroed (keeps `c >= r + k`).
            fn [<TH $R Tensor_triu>](r_: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>], k: i64) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(r_, 1)?, view(t, 2)?) };
                ix::triu(r, &t, k)
            }
        }
        th_fn! {
            /// `r_` = `ta` and `tb` joined along `dimension` (`catArray` of the two).
            fn [<TH $R Tensor_cat>](r_: *mut [<TH $R Tensor>], ta: *mut [<TH $R Tensor>], tb: *mut [<TH $R Tensor>], dimension: c_int) {
                // SAFETY: handles from the caller.
                let (r, a, b) = unsafe { (obj(r_, 1)?, view(ta, 2)?, view(tb, 3)?) };
                ix::cat(r, &[a, b], dimension)
            }
        }
        th_fn! {
            /// `result` = the `numInputs` tensors joined along `dimension` (-1: the last). Empty
            /// inputs are skipped; missing trailing dims count as size 1; all other sizes must match.
            fn [<TH $R Tensor_catArray>](result: *mut [<TH $R Tensor>], inputs: *mut *mut [<TH $R Tensor>], num_inputs: c_int, dimension: c_int) {
                // SAFETY: a handle and an array of `num_inputs` handles from the caller.
                let (r, vs) = unsafe { (obj(result, 1)?, views(inputs, num_inputs, 2)?) };
                ix::cat(r, &vs, dimension)
            }
        }
    } };
    (@num bool $R:ident, $T:ty, $C:ty) => {};
    (@num $k:ident $R:ident, $T:ty, $C:ty) => { pastey::paste! {
        th_fn! {
            /// `tensor.select(dim, index[i]) += src.select(dim, i)` (in place; repeated indices accumulate).
            fn [<TH $R Tensor_indexAdd>](tensor: *mut [<TH $R Tensor>], dim: c_int, index: *mut THLongTensor, src: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (t, i, s) = unsafe { (view(tensor, 1)?, view(index, 3)?, view(src, 4)?) };
                ix::index_add(&t, dim, &i, &s)
            }
        }
        th_fn! {
            /// `tensor[p with coordinate dim replaced by index[p]] += src[p]` (in place; repeated
            /// indices accumulate).
            fn [<TH $R Tensor_scatterAdd>](tensor: *mut [<TH $R Tensor>], dim: c_int, index: *mut THLongTensor, src: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (t, i, s) = unsafe { (view(tensor, 1)?, view(index, 3)?, view(src, 4)?) };
                ix::scatter_add(&t, dim, &i, &s)
            }
        }
        th_fn! {
            /// `r_` = the cross product of `a` and `b` (broadcast together) along `dimension`
            /// (size 3; `dimension < 0`: the first dimension of size 3).
            fn [<TH $R Tensor_cross>](r_: *mut [<TH $R Tensor>], a: *mut [<TH $R Tensor>], b: *mut [<TH $R Tensor>], dimension: c_int) {
                // SAFETY: handles from the caller.
                let (r, a, b) = unsafe { (obj(r_, 1)?, view(a, 2)?, view(b, 3)?) };
                ix::cross(r, &a, &b, dimension)
            }
        }
    } };
    (@float float $R:ident, $T:ty, $C:ty) => { index_api!(@floatfns $R, $T, $C); };
    (@float half $R:ident, $T:ty, $C:ty) => { index_api!(@floatfns $R, $T, $C); };
    (@float $k:ident $R:ident, $T:ty, $C:ty) => {};
    (@floatfns $R:ident, $T:ty, $C:ty) => { pastey::paste! {
        th_fn! {
            /// `r_` = `n` points from `a` to `b` inclusive (`n > 1`, or `n == 1` with `a == b`);
            /// resized to 1-D only when its element count differs.
            fn [<TH $R Tensor_linspace>](r_: *mut [<TH $R Tensor>], a: $C, b: $C, n: i64) {
                // SAFETY: a handle from the caller.
                ix::linspace(unsafe { obj(r_, 1)? }, <$T>::from_c(a), <$T>::from_c(b), n)
            }
        }
        th_fn! {
            /// `r_` = `10^x` for `n` points `x` from `a` to `b` inclusive (as `linspace`).
            fn [<TH $R Tensor_logspace>](r_: *mut [<TH $R Tensor>], a: $C, b: $C, n: i64) {
                // SAFETY: a handle from the caller.
                ix::logspace(unsafe { obj(r_, 1)? }, <$T>::from_c(a), <$T>::from_c(b), n)
            }
        }
    } };
}
crate::th_dtypes!(index_api);
