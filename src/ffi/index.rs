//! `generic/THTensorMath.h`, index/shape part: masks (Byte and Bool), nonzero, index ops,
//! gather/scatter, constructors, reshape, sort/topk, tril/triu, cat/catArray, cross, ranges.
//! Index tensors are `THLongTensor`s of 0-based indices, checked before anything is written.
//! See `ops::index` for the semantics.

use super::storage::required_list;
use super::*;
use crate::core::tensor::View;
use crate::ops::index as ix;
use std::ffi::c_int;

/// The sizes in a required `THLongStorage` argument.
///
/// # Safety
/// `p` must be NULL or a live handle.
pub(super) unsafe fn sizes(p: *mut THLongStorage, arg: u32) -> Result<Vec<i64>> {
    // SAFETY: forwarded contract.
    unsafe { required_list(p, "THLongStorage", arg) }
}

/// The views of an array of `n` tensor handles (argument `arg`).
///
/// # Safety
/// `p` must be NULL or point to `n` handles, each NULL or live.
pub(super) unsafe fn views<H: Handle<Obj = Tensor<T>>, T: Scalar>(
    p: *mut *mut H,
    n: c_int,
    arg: u32,
) -> Result<Vec<View<T>>> {
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
            fn [<TH $R Tensor_maskedFill $($sfx)?>](tensor: *mut [<TH $R Tensor>] as view, mask: *mut [<TH $M Tensor>] as view, value: $C) {
                ix::masked_fill(&tensor, &mask, <$T>::from_c(value))
            }
            #[doc = "Where `mask[i]` is set, `tensor[i]` takes the next element of `src` in row-major order (in place; " $what " mask). `src` needs at least as many elements as the mask has set values."]
            fn [<TH $R Tensor_maskedCopy $($sfx)?>](tensor: *mut [<TH $R Tensor>] as view, mask: *mut [<TH $M Tensor>] as view, src: *mut [<TH $R Tensor>] as view) {
                ix::masked_copy(&tensor, &mask, &src)
            }
            #[doc = "`tensor` = the elements of `src` where `mask` is set, 1-D in row-major order (" $what " mask; `src` and `mask` broadcast together)."]
            fn [<TH $R Tensor_maskedSelect $($sfx)?>](tensor: *mut [<TH $R Tensor>] as obj, src: *mut [<TH $R Tensor>] as view, mask: *mut [<TH $M Tensor>] as view) {
                ix::masked_select(tensor, &src, &mask)
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
            fn [<TH $R Tensor_nonzero>](subscript: *mut THLongTensor as obj, tensor: *mut [<TH $R Tensor>] as view) {
                ix::nonzero(subscript, &tensor)
            }
        }
        index_api!(@addressed $R, $T, $C;
            /// `tensor` = `src` with `index` (1-D, 0-based) selecting entries along `dim`;
            /// `tensor` is resized to `src`'s sizes with `size[dim] = nElement(index)`.
            indexSelect => ix::index_select;
            /// `tensor.select(dim, index[i]) = src.select(dim, i)` (in place; `src` has `tensor`'s
            /// sizes except `size[dim] = nElement(index)`; repeated indices: the last wins).
            indexCopy => ix::index_copy;
            /// `tensor.select(dim, index[i]) = val` for every index (in place).
            indexFill => ix::index_fill;
        );
        index_api!(@addressed $R, $T, $C;
            /// `tensor[p] = src[p with coordinate dim replaced by index[p]]`; `index` has `src`'s
            /// rank and sizes except along `dim`; `tensor` is resized like `index`.
            gather => ix::gather;
            /// `tensor[p with coordinate dim replaced by index[p]] = src[p]` (in place; `index`
            /// has `tensor`'s sizes except along `dim`; repeated indices: the last wins).
            scatter => ix::scatter;
            /// `tensor[p with coordinate dim replaced by index[p]] = val` (in place).
            scatterFill => ix::scatter_fill;
        );
        th_fn! {
            /// `r_` resized to `size` and filled with zeros.
            fn [<TH $R Tensor_zeros>](r_: *mut [<TH $R Tensor>] as obj, size: *mut THLongStorage as sizes) {
                ix::zeros(r_, &size)
            }
            /// `r_` resized like `input` and filled with zeros.
            fn [<TH $R Tensor_zerosLike>](r_: *mut [<TH $R Tensor>] as obj, input: *mut [<TH $R Tensor>] as view) {
                ix::zeros_like(r_, &input)
            }
            /// `r_` resized to `size` and filled with ones.
            fn [<TH $R Tensor_ones>](r_: *mut [<TH $R Tensor>] as obj, size: *mut THLongStorage as sizes) {
                ix::ones(r_, &size)
            }
            /// `r_` resized like `input` and filled with ones.
            fn [<TH $R Tensor_onesLike>](r_: *mut [<TH $R Tensor>] as obj, input: *mut [<TH $R Tensor>] as view) {
                ix::ones_like(r_, &input)
            }
            /// `t` 1-D: `r_` = the square matrix with `t` on diagonal `k` (zeros elsewhere);
            /// `t` 2-D: `r_` = diagonal `k` of `t`, 1-D (empty when `k` is past the matrix).
            fn [<TH $R Tensor_diag>](r_: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as view, k: c_int) {
                ix::diag(r_, &t, k)
            }
            /// `r_` = the `n` x `m` identity matrix (`m <= 0`: `m = n`; `n > 0` required).
            fn [<TH $R Tensor_eye>](r_: *mut [<TH $R Tensor>] as obj, n: i64, m: i64) {
                ix::eye(r_, n, m)
            }
            /// `r_` = `xmin, xmin+step, ...` below `xmax` (excluded), computed in accreal;
            /// `xmin == xmax` gives an empty tensor. `r_` keeps its shape when it already has as
            /// many elements.
            fn [<TH $R Tensor_arange>](r_: *mut [<TH $R Tensor>] as obj, xmin: $A, xmax: $A, step: $A) {
                ix::range::<$T, $A>(r_, xmin, xmax, step, false)
            }
            /// `r_` = `xmin, xmin+step, ...` up to `xmax` (included), computed in accreal;
            /// `n = floor((xmax-xmin)/step) + 1`. `r_` keeps its shape when it already has `n`
            /// elements.
            fn [<TH $R Tensor_range>](r_: *mut [<TH $R Tensor>] as obj, xmin: $A, xmax: $A, step: $A) {
                ix::range::<$T, $A>(r_, xmin, xmax, step, true)
            }
            /// `r_` resized to `size` (no -1 inference) holding `t`'s elements in row-major order
            /// (element counts must match).
            fn [<TH $R Tensor_reshape>](r_: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as view, size: *mut THLongStorage as sizes) {
                ix::reshape(r_, &t, &size)
            }
            /// `rt_` = `t` sorted along `dimension` (stable; ascending, or descending when
            /// `descendingOrder` is nonzero; NaN sorts as the largest value), `ri_` = the 0-based
            /// source positions.
            fn [<TH $R Tensor_sort>](rt_: *mut [<TH $R Tensor>] as obj, ri_: *mut THLongTensor as obj, t: *mut [<TH $R Tensor>] as view, dimension: c_int, descending_order: c_int) {
                ix::sort(rt_, ri_, &t, dimension, descending_order != 0)
            }
            /// The `k` largest (`dir != 0`) or smallest (`dir == 0`) elements along `dim`, into
            /// `rt_` and their 0-based positions into `ri_` (`size[dim] = k`). Always in sorted
            /// order (descending for the largest) whatever `sorted` says; ties by position.
            fn [<TH $R Tensor_topk>](rt_: *mut [<TH $R Tensor>] as obj, ri_: *mut THLongTensor as obj, t: *mut [<TH $R Tensor>] as view, k: i64, dim: c_int, dir: c_int, sorted: c_int) {
                let _ = sorted;
                ix::topk(rt_, ri_, &t, k, dim, dir != 0)
            }
            /// `r_` = the matrix `t` with the elements above diagonal `k` zeroed (keeps `c <= r + k`).
            fn [<TH $R Tensor_tril>](r_: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as view, k: i64) {
                ix::tril(r_, &t, k)
            }
            /// `r_` = the matrix `t` with the elements below diagonal `k` zeroed (keeps `c >= r + k`).
            fn [<TH $R Tensor_triu>](r_: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as view, k: i64) {
                ix::triu(r_, &t, k)
            }
            /// `r_` = `ta` and `tb` joined along `dimension` (`catArray` of the two).
            fn [<TH $R Tensor_cat>](r_: *mut [<TH $R Tensor>] as obj, ta: *mut [<TH $R Tensor>] as view, tb: *mut [<TH $R Tensor>] as view, dimension: c_int) {
                ix::cat(r_, &[ta, tb], dimension)
            }
            /// `result` = the `numInputs` tensors joined along `dimension` (-1: the last). Empty
            /// inputs are skipped; missing trailing dims count as size 1; all other sizes must match.
            fn [<TH $R Tensor_catArray>](result: *mut [<TH $R Tensor>] as obj, inputs: *mut *mut [<TH $R Tensor>] as views(num_inputs), num_inputs: c_int, dimension: c_int) {
                ix::cat(result, &inputs, dimension)
            }
        }
    } };
    // `index*` and `gather`/`scatter*` address `tensor` alike (along `dim`, through a `THLongTensor`
    // of indices): one arm makes each triple of selecting, copying and filling functions.
    (@addressed $R:ident, $T:ty, $C:ty;
        $(#[$sd:meta])* $select:ident => $sf:path;
        $(#[$cd:meta])* $copy:ident => $cf:path;
        $(#[$fd:meta])* $fill:ident => $ff:path;
    ) => { pastey::paste! { th_fn! {
        $(#[$sd])*
        fn [<TH $R Tensor_ $select>](tensor: *mut [<TH $R Tensor>] as obj, src: *mut [<TH $R Tensor>] as view, dim: c_int, index: *mut THLongTensor as view) {
            $sf(tensor, &src, dim, &index)
        }
        $(#[$cd])*
        fn [<TH $R Tensor_ $copy>](tensor: *mut [<TH $R Tensor>] as view, dim: c_int, index: *mut THLongTensor as view, src: *mut [<TH $R Tensor>] as view) {
            $cf(&tensor, dim, &index, &src)
        }
        $(#[$fd])*
        fn [<TH $R Tensor_ $fill>](tensor: *mut [<TH $R Tensor>] as view, dim: c_int, index: *mut THLongTensor as view, val: $C) {
            $ff(&tensor, dim, &index, <$T>::from_c(val))
        }
    } } };
    (@num bool $R:ident, $T:ty, $C:ty) => {};
    (@num $k:ident $R:ident, $T:ty, $C:ty) => { pastey::paste! {
        th_fn! {
            /// `tensor.select(dim, index[i]) += src.select(dim, i)` (in place; repeated indices accumulate).
            fn [<TH $R Tensor_indexAdd>](tensor: *mut [<TH $R Tensor>] as view, dim: c_int, index: *mut THLongTensor as view, src: *mut [<TH $R Tensor>] as view) {
                ix::index_add(&tensor, dim, &index, &src)
            }
            /// `tensor[p with coordinate dim replaced by index[p]] += src[p]` (in place; repeated
            /// indices accumulate).
            fn [<TH $R Tensor_scatterAdd>](tensor: *mut [<TH $R Tensor>] as view, dim: c_int, index: *mut THLongTensor as view, src: *mut [<TH $R Tensor>] as view) {
                ix::scatter_add(&tensor, dim, &index, &src)
            }
            /// `r_` = the cross product of `a` and `b` (broadcast together) along `dimension`
            /// (size 3; `dimension < 0`: the first dimension of size 3).
            fn [<TH $R Tensor_cross>](r_: *mut [<TH $R Tensor>] as obj, a: *mut [<TH $R Tensor>] as view, b: *mut [<TH $R Tensor>] as view, dimension: c_int) {
                ix::cross(r_, &a, &b, dimension)
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
            fn [<TH $R Tensor_linspace>](r_: *mut [<TH $R Tensor>] as obj, a: $C, b: $C, n: i64) {
                ix::linspace(r_, <$T>::from_c(a), <$T>::from_c(b), n)
            }
            /// `r_` = `10^x` for `n` points `x` from `a` to `b` inclusive (as `linspace`).
            fn [<TH $R Tensor_logspace>](r_: *mut [<TH $R Tensor>] as obj, a: $C, b: $C, n: i64) {
                ix::logspace(r_, <$T>::from_c(a), <$T>::from_c(b), n)
            }
        }
    } };
}
crate::th_dtypes!(index_api);
