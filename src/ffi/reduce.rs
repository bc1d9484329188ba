//! `generic/THTensorMath.h`, reductions: whole-tensor reductions (§4.4), per-dimension
//! reductions and scans (§4.10), statistics and norms (§4.17, floating types), `logicalall` /
//! `logicalany` (§4.19, Byte and Bool), and `sumTo`.
//!
//! Dtypes: `numel`, `equal`, `maxall`, `minall`, `max`, `min` exist for every dtype; `sumall`
//! for every dtype (Bool counts the true elements); the other sums, products, selections and
//! scans for every numeric dtype (not Bool); the statistics, norms and histograms for Float,
//! Double, Half and BFloat16; `logicalall`/`logicalany` for Byte and Bool. `accreal` results
//! are `int64_t` (integer dtypes, Bool), `double` (Float, Double) or `float` (Half, BFloat16).
//! Outputs are resized by the callee (reduced dims get size 1, removed unless `keepdim`, a
//! 1-D input stays 1-D); index outputs are `THLongTensor`s of 0-based positions.

use super::storage::long_list;
use super::*;
use crate::ops::reduce;
use std::ffi::c_int;

/// The view of a borrowed tensor argument.
///
/// # Safety
/// `p` must be NULL or a live handle.
unsafe fn view<H: Handle<Obj = crate::core::tensor::Tensor<T>>, T: crate::Scalar>(
    p: *mut H,
    arg: u32,
) -> crate::Result<crate::core::tensor::View<T>> {
    // SAFETY: forwarded contract.
    Ok(unsafe { obj(p, arg)? }.view())
}

macro_rules! reduce_api {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => {
        $(
            reduce_api!(@all $R, $T, $C, $A);
            reduce_api!(@num $K $R, $T, $C, $A);
            reduce_api!(@float $K $R, $T, $C, $A);
            reduce_api!(@logical $R, $T, $C, $A);
        )*
    };
    (@all $R:ident, $T:ty, $C:ty, $A:ty) => { pastey::paste! {
        th_fn! {
            /// Number of elements (0 when empty).
            fn [<TH $R Tensor_numel>](t: *mut [<TH $R Tensor>]) -> isize = 0; {
                // SAFETY: a handle from the caller.
                Ok(reduce::numel(&unsafe { view(t, 1)? }) as isize)
            }
        }
        th_fn! {
            /// 1 when `ta` and `tb` have the same sizes and equal elements, else 0.
            fn [<TH $R Tensor_equal>](ta: *mut [<TH $R Tensor>], tb: *mut [<TH $R Tensor>]) -> c_int = 0; {
                // SAFETY: handles from the caller.
                let (a, b) = unsafe { (view(ta, 1)?, view(tb, 2)?) };
                Ok(reduce::equal(&a, &b)? as c_int)
            }
        }
        th_fn! {
            /// The largest element (NaN propagates); an empty tensor is an error.
            fn [<TH $R Tensor_maxall>](t: *mut [<TH $R Tensor>]) -> $C = <$T as CRepr>::to_c(<$T>::default()); {
                // SAFETY: a handle from the caller.
                Ok(reduce::maxall(&unsafe { view(t, 1)? })?.to_c())
            }
        }
        th_fn! {
            /// The smallest element (NaN propagates); an empty tensor is an error.
            fn [<TH $R Tensor_minall>](t: *mut [<TH $R Tensor>]) -> $C = <$T as CRepr>::to_c(<$T>::default()); {
                // SAFETY: a handle from the caller.
                Ok(reduce::minall(&unsafe { view(t, 1)? })?.to_c())
            }
        }
        th_fn! {
            /// `values_` = max of `t` along `dimension`, `indices_` = its 0-based position (the
            /// first occurrence; the first NaN wins). Both are resized to `t`'s size with size 1
            /// at `dimension`, which is removed unless `keepdim` (a 1-D `t` gives size 1).
            fn [<TH $R Tensor_max>](values_: *mut [<TH $R Tensor>], indices_: *mut THLongTensor, t: *mut [<TH $R Tensor>], dimension: c_int, keepdim: c_int) {
                // SAFETY: handles from the caller.
                let (v, i, t) = unsafe { (obj(values_, 1)?, obj(indices_, 2)?, view(t, 3)?) };
                reduce::max(v, i, &t, dimension, keepdim != 0)
            }
        }
        th_fn! {
            /// `values_` = min of `t` along `dimension`, `indices_` = its 0-based position (as `max`).
            fn [<TH $R Tensor_min>](values_: *mut [<TH $R Tensor>], indices_: *mut THLongTensor, t: *mut [<TH $R Tensor>], dimension: c_int, keepdim: c_int) {
                // SAFETY: handles from the caller.
                let (v, i, t) = unsafe { (obj(values_, 1)?, obj(indices_, 2)?, view(t, 3)?) };
                reduce::min(v, i, &t, dimension, keepdim != 0)
            }
        }
    } };
    (@num bool $R:ident, $T:ty, $C:ty, $A:ty) => { pastey::paste! {
        th_fn! {
            /// Number of true elements.
            fn [<TH $R Tensor_sumall>](t: *mut [<TH $R Tensor>]) -> i64 = 0; {
                // SAFETY: a handle from the caller.
                reduce::count_nonzero(&unsafe { view(t, 1)? })
            }
        }
    } };
    (@num $k:ident $R:ident, $T:ty, $C:ty, $A:ty) => { pastey::paste! {
        th_fn! {
            /// `sum(t[i] * src[i])` in `accreal` over elements paired in row-major order (the
            /// element counts must match; the shapes need not).
            fn [<TH $R Tensor_dot>](t: *mut [<TH $R Tensor>], src: *mut [<TH $R Tensor>]) -> $A = <$A>::default(); {
                // SAFETY: handles from the caller.
                let (a, b) = unsafe { (view(t, 1)?, view(src, 2)?) };
                reduce::dot(&a, &b)
            }
        }
        th_fn! {
            /// The lower median of all elements (element (n-1)/2 of the sorted elements); an
            /// empty tensor is an error.
            fn [<TH $R Tensor_medianall>](t: *mut [<TH $R Tensor>]) -> $C = <$T as CRepr>::to_c(<$T>::default()); {
                // SAFETY: a handle from the caller.
                Ok(reduce::medianall(&unsafe { view(t, 1)? })?.to_c())
            }
        }
        th_fn! {
            /// Sum of all elements in `accreal` (0 when empty).
            fn [<TH $R Tensor_sumall>](t: *mut [<TH $R Tensor>]) -> $A = <$A>::default(); {
                // SAFETY: a handle from the caller.
                reduce::sumall(&unsafe { view(t, 1)? })
            }
        }
        th_fn! {
            /// Product of all elements in `accreal` (1 when empty).
            fn [<TH $R Tensor_prodall>](t: *mut [<TH $R Tensor>]) -> $A = <$A>::default(); {
                // SAFETY: a handle from the caller.
                reduce::prodall(&unsafe { view(t, 1)? })
            }
        }
        th_fn! {
            /// Sum of the main diagonal of a 2-D tensor (need not be square), in `accreal`.
            fn [<TH $R Tensor_trace>](t: *mut [<TH $R Tensor>]) -> $A = <$A>::default(); {
                // SAFETY: a handle from the caller.
                reduce::trace(&unsafe { view(t, 1)? })
            }
        }
        th_fn! {
            /// `values_` = the `k`-th smallest (k is 1-based) along `dimension`, `indices_` its
            /// 0-based position (equal values count in position order; NaN sorts last).
            fn [<TH $R Tensor_kthvalue>](values_: *mut [<TH $R Tensor>], indices_: *mut THLongTensor, t: *mut [<TH $R Tensor>], k: i64, dimension: c_int, keepdim: c_int) {
                // SAFETY: handles from the caller.
                let (v, i, t) = unsafe { (obj(values_, 1)?, obj(indices_, 2)?, view(t, 3)?) };
                reduce::kthvalue(v, i, &t, k, dimension, keepdim != 0)
            }
        }
        th_fn! {
            /// `values_` = the most frequent value along `dimension` (ties: the smallest value),
            /// `indices_` = the 0-based position of its last occurrence.
            fn [<TH $R Tensor_mode>](values_: *mut [<TH $R Tensor>], indices_: *mut THLongTensor, t: *mut [<TH $R Tensor>], dimension: c_int, keepdim: c_int) {
                // SAFETY: handles from the caller.
                let (v, i, t) = unsafe { (obj(values_, 1)?, obj(indices_, 2)?, view(t, 3)?) };
                reduce::mode(v, i, &t, dimension, keepdim != 0)
            }
        }
        th_fn! {
            /// `values_` = the lower median along `dimension` (`kthvalue` with k = (n-1)/2 + 1).
            fn [<TH $R Tensor_median>](values_: *mut [<TH $R Tensor>], indices_: *mut THLongTensor, t: *mut [<TH $R Tensor>], dimension: c_int, keepdim: c_int) {
                // SAFETY: handles from the caller.
                let (v, i, t) = unsafe { (obj(values_, 1)?, obj(indices_, 2)?, view(t, 3)?) };
                reduce::median(v, i, &t, dimension, keepdim != 0)
            }
        }
        th_fn! {
            /// `r_` = sum of `t` along `dimension` (accumulated in `accreal`).
            fn [<TH $R Tensor_sum>](r_: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>], dimension: c_int, keepdim: c_int) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(r_, 1)?, view(t, 2)?) };
                reduce::sum(r, &t, dimension, keepdim != 0)
            }
        }
        th_fn! {
            /// `r_` = product of `t` along `dimension` (accumulated in `accreal`).
            fn [<TH $R Tensor_prod>](r_: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>], dimension: c_int, keepdim: c_int) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(r_, 1)?, view(t, 2)?) };
                reduce::prod(r, &t, dimension, keepdim != 0)
            }
        }
        th_fn! {
            /// `r_` = cumulative sum of `t` along `dimension` (in `accreal`), resized like `t`.
            fn [<TH $R Tensor_cumsum>](r_: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>], dimension: c_int) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(r_, 1)?, view(t, 2)?) };
                reduce::cumsum(r, &t, dimension)
            }
        }
        th_fn! {
            /// `r_` = cumulative product of `t` along `dimension` (in `accreal`), resized like `t`.
            fn [<TH $R Tensor_cumprod>](r_: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>], dimension: c_int) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(r_, 1)?, view(t, 2)?) };
                reduce::cumprod(r, &t, dimension)
            }
        }
        th_fn! {
            /// `r` = `t` summed down to `shape` (undoes numpy broadcasting: `t`'s extra leading
            /// dims and the dims where `shape` has size 1 are summed, in `accreal`); `r` gets
            /// `shape`. An error unless `t`'s shape broadcasts from `shape`.
            fn [<TH $R Tensor_sumTo>](r: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>], shape: *mut THLongStorage) {
                // SAFETY: handles from the caller.
                let (r, t, s) = unsafe { (obj(r, 1)?, view(t, 2)?, long_list(shape, 3)?) };
                let s = s.ok_or_else(|| Error::null(3, "shape"))?;
                reduce::sum_to(r, &t, &s)
            }
        }
    } };
    (@float float $R:ident, $T:ty, $C:ty, $A:ty) => { reduce_api!(@floatfns $R, $T, $C, $A); };
    (@float half $R:ident, $T:ty, $C:ty, $A:ty) => { reduce_api!(@floatfns $R, $T, $C, $A); };
    (@float $k:ident $R:ident, $T:ty, $C:ty, $A:ty) => {};
    (@floatfns $R:ident, $T:ty, $C:ty, $A:ty) => { pastey::paste! {
        th_fn! {
            /// Mean of all elements in `accreal`; an empty tensor is an error.
            fn [<TH $R Tensor_meanall>](self_: *mut [<TH $R Tensor>]) -> $A = 0.0; {
                // SAFETY: a handle from the caller.
                reduce::meanall(&unsafe { view(self_, 1)? })
            }
        }
        th_fn! {
            /// Variance of all elements (divided by n when `biased`, else n-1).
            fn [<TH $R Tensor_varall>](self_: *mut [<TH $R Tensor>], biased: c_int) -> $A = 0.0; {
                // SAFETY: a handle from the caller.
                reduce::varall(&unsafe { view(self_, 1)? }, biased != 0)
            }
        }
        th_fn! {
            /// Standard deviation of all elements (`sqrt(varall)`).
            fn [<TH $R Tensor_stdall>](self_: *mut [<TH $R Tensor>], biased: c_int) -> $A = 0.0; {
                // SAFETY: a handle from the caller.
                reduce::stdall(&unsafe { view(self_, 1)? }, biased != 0)
            }
        }
        th_fn! {
            /// The `value`-norm of all elements: `(sum |x|^p)^(1/p)`; p == 0 counts the non-zero
            /// elements, p == inf is max |x|, p == -inf min |x|.
            fn [<TH $R Tensor_normall>](t: *mut [<TH $R Tensor>], value: $C) -> $A = 0.0; {
                // SAFETY: a handle from the caller.
                reduce::normall(&unsafe { view(t, 1)? }, <$T>::from_c(value))
            }
        }
        th_fn! {
            /// The `value`-norm of `a - b` (elements paired in row-major order).
            fn [<TH $R Tensor_dist>](a: *mut [<TH $R Tensor>], b: *mut [<TH $R Tensor>], value: $C) -> $A = 0.0; {
                // SAFETY: handles from the caller.
                let (a, b) = unsafe { (view(a, 1)?, view(b, 2)?) };
                reduce::dist(&a, &b, <$T>::from_c(value))
            }
        }
        th_fn! {
            /// `r_` = mean of `t` along `dimension`.
            fn [<TH $R Tensor_mean>](r_: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>], dimension: c_int, keepdim: c_int) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(r_, 1)?, view(t, 2)?) };
                reduce::mean(r, &t, dimension, keepdim != 0)
            }
        }
        th_fn! {
            /// `r_` = standard deviation of `t` along `dimension` (`/n` when `biased`, else `/(n-1)`).
            fn [<TH $R Tensor_std>](r_: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>], dimension: c_int, biased: c_int, keepdim: c_int) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(r_, 1)?, view(t, 2)?) };
                reduce::std(r, &t, dimension, biased != 0, keepdim != 0)
            }
        }
        th_fn! {
            /// `r_` = variance of `t` along `dimension` (`/n` when `biased`, else `/(n-1)`).
            fn [<TH $R Tensor_var>](r_: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>], dimension: c_int, biased: c_int, keepdim: c_int) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(r_, 1)?, view(t, 2)?) };
                reduce::var(r, &t, dimension, biased != 0, keepdim != 0)
            }
        }
        th_fn! {
            /// `r_` = `value`-norm of `t` along `dimension` (p == 0 counts non-zeros).
            fn [<TH $R Tensor_norm>](r_: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>], value: $C, dimension: c_int, keepdim: c_int) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(r_, 1)?, view(t, 2)?) };
                reduce::norm(r, &t, <$T>::from_c(value), dimension, keepdim != 0)
            }
        }
        th_fn! {
            /// `r_` = `t` with each slice along `dimension` whose `value`-norm exceeds `maxnorm`
            /// scaled by `maxnorm / (norm + 1e-7)`; `t` needs 2+ dims, `value` > 0.
            fn [<TH $R Tensor_renorm>](r_: *mut [<TH $R Tensor>], t: *mut [<TH $R Tensor>], value: $C, dimension: c_int, maxnorm: $C) {
                // SAFETY: handles from the caller.
                let (r, t) = unsafe { (obj(r_, 1)?, view(t, 2)?) };
                reduce::renorm(r, &t, <$T>::from_c(value), dimension, <$T>::from_c(maxnorm))
            }
        }
        th_fn! {
            /// `hist` (resized to `nbins`) = histogram of `tensor` over `[minvalue, maxvalue]`
            /// (equal bounds: the data's min and max); values outside are ignored.
            fn [<TH $R Tensor_histc>](hist: *mut [<TH $R Tensor>], tensor: *mut [<TH $R Tensor>], nbins: i64, minvalue: $C, maxvalue: $C) {
                // SAFETY: handles from the caller.
                let (h, t) = unsafe { (obj(hist, 1)?, view(tensor, 2)?) };
                reduce::histc(h, &t, nbins, <$T>::from_c(minvalue), <$T>::from_c(maxvalue))
            }
        }
        th_fn! {
            /// Row-wise `histc` of a 2-D `tensor`: `hist` resized to rows x `nbins`.
            fn [<TH $R Tensor_bhistc>](hist: *mut [<TH $R Tensor>], tensor: *mut [<TH $R Tensor>], nbins: i64, minvalue: $C, maxvalue: $C) {
                // SAFETY: handles from the caller.
                let (h, t) = unsafe { (obj(hist, 1)?, view(tensor, 2)?) };
                reduce::bhistc(h, &t, nbins, <$T>::from_c(minvalue), <$T>::from_c(maxvalue))
            }
        }
    } };
    (@logical Byte, $T:ty, $C:ty, $A:ty) => { reduce_api!(@logicalfns Byte); };
    (@logical Bool, $T:ty, $C:ty, $A:ty) => { reduce_api!(@logicalfns Bool); };
    (@logical $R:ident, $T:ty, $C:ty, $A:ty) => {};
    (@logicalfns $R:ident) => { pastey::paste! {
        th_fn! {
            /// 1 when every element is non-zero; an empty tensor is an error.
            fn [<TH $R Tensor_logicalall>](self_: *mut [<TH $R Tensor>]) -> c_int = 0; {
                // SAFETY: a handle from the caller.
                Ok(reduce::logicalall(&unsafe { view(self_, 1)? })? as c_int)
            }
        }
        th_fn! {
            /// 1 when some element is non-zero (0 when empty).
            fn [<TH $R Tensor_logicalany>](self_: *mut [<TH $R Tensor>]) -> c_int = 0; {
                // SAFETY: a handle from the caller.
                Ok(reduce::logicalany(&unsafe { view(self_, 1)? })? as c_int)
            }
        }
    } };
}
crate::th_dtypes!(reduce_api);
