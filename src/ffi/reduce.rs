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

use super::storage::required_list;
use super::*;
use crate::ops::reduce;
use std::ffi::c_int;

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
            fn [<TH $R Tensor_numel>](t: *mut [<TH $R Tensor>] as view) -> isize = 0; {
                Ok(reduce::numel(&t) as isize)
            }
            /// 1 when `ta` and `tb` have the same sizes and equal elements, else 0.
            fn [<TH $R Tensor_equal>](ta: *mut [<TH $R Tensor>] as view, tb: *mut [<TH $R Tensor>] as view) -> c_int = 0; {
                Ok(reduce::equal(&ta, &tb)? as c_int)
            }
            /// The largest element (NaN propagates); an empty tensor is an error.
            fn [<TH $R Tensor_maxall>](t: *mut [<TH $R Tensor>] as view) -> $C = <$T as CRepr>::to_c(<$T>::default()); {
                Ok(reduce::maxall(&t)?.to_c())
            }
            /// The smallest element (NaN propagates); an empty tensor is an error.
            fn [<TH $R Tensor_minall>](t: *mut [<TH $R Tensor>] as view) -> $C = <$T as CRepr>::to_c(<$T>::default()); {
                Ok(reduce::minall(&t)?.to_c())
            }
            /// `values_` = max of `t` along `dimension`, `indices_` = its 0-based position (the
            /// first occurrence; the first NaN wins). Both are resized to `t`'s size with size 1
            /// at `dimension`, which is removed unless `keepdim` (a 1-D `t` gives size 1).
            fn [<TH $R Tensor_max>](values_: *mut [<TH $R Tensor>] as obj, indices_: *mut THLongTensor as obj, t: *mut [<TH $R Tensor>] as view, dimension: c_int, keepdim: c_int) {
                reduce::max(values_, indices_, &t, dimension, keepdim != 0)
            }
            /// `values_` = min of `t` along `dimension`, `indices_` = its 0-based position (as `max`).
            fn [<TH $R Tensor_min>](values_: *mut [<TH $R Tensor>] as obj, indices_: *mut THLongTensor as obj, t: *mut [<TH $R Tensor>] as view, dimension: c_int, keepdim: c_int) {
                reduce::min(values_, indices_, &t, dimension, keepdim != 0)
            }
        }
    } };
    (@num bool $R:ident, $T:ty, $C:ty, $A:ty) => { pastey::paste! {
        th_fn! {
            /// Number of true elements.
            fn [<TH $R Tensor_sumall>](t: *mut [<TH $R Tensor>] as view) -> i64 = 0; {
                reduce::count_nonzero(&t)
            }
        }
    } };
    (@num $k:ident $R:ident, $T:ty, $C:ty, $A:ty) => { pastey::paste! {
        th_fn! {
            /// `sum(t[i] * src[i])` in `accreal` over elements paired in row-major order (the
            /// element counts must match; the shapes need not).
            fn [<TH $R Tensor_dot>](t: *mut [<TH $R Tensor>] as view, src: *mut [<TH $R Tensor>] as view) -> $A = <$A>::default(); {
                reduce::dot(&t, &src)
            }
            /// The lower median of all elements (element (n-1)/2 of the sorted elements); an
            /// empty tensor is an error.
            fn [<TH $R Tensor_medianall>](t: *mut [<TH $R Tensor>] as view) -> $C = <$T as CRepr>::to_c(<$T>::default()); {
                Ok(reduce::medianall(&t)?.to_c())
            }
            /// Sum of all elements in `accreal` (0 when empty).
            fn [<TH $R Tensor_sumall>](t: *mut [<TH $R Tensor>] as view) -> $A = <$A>::default(); {
                reduce::sumall(&t)
            }
            /// Product of all elements in `accreal` (1 when empty).
            fn [<TH $R Tensor_prodall>](t: *mut [<TH $R Tensor>] as view) -> $A = <$A>::default(); {
                reduce::prodall(&t)
            }
            /// Sum of the main diagonal of a 2-D tensor (need not be square), in `accreal`.
            fn [<TH $R Tensor_trace>](t: *mut [<TH $R Tensor>] as view) -> $A = <$A>::default(); {
                reduce::trace(&t)
            }
            /// `values_` = the `k`-th smallest (k is 1-based) along `dimension`, `indices_` its
            /// 0-based position (equal values count in position order; NaN sorts last).
            fn [<TH $R Tensor_kthvalue>](values_: *mut [<TH $R Tensor>] as obj, indices_: *mut THLongTensor as obj, t: *mut [<TH $R Tensor>] as view, k: i64, dimension: c_int, keepdim: c_int) {
                reduce::kthvalue(values_, indices_, &t, k, dimension, keepdim != 0)
            }
            /// `values_` = the most frequent value along `dimension` (ties: the smallest value),
            /// `indices_` = the 0-based position of its last occurrence.
            fn [<TH $R Tensor_mode>](values_: *mut [<TH $R Tensor>] as obj, indices_: *mut THLongTensor as obj, t: *mut [<TH $R Tensor>] as view, dimension: c_int, keepdim: c_int) {
                reduce::mode(values_, indices_, &t, dimension, keepdim != 0)
            }
            /// `values_` = the lower median along `dimension` (`kthvalue` with k = (n-1)/2 + 1).
            fn [<TH $R Tensor_median>](values_: *mut [<TH $R Tensor>] as obj, indices_: *mut THLongTensor as obj, t: *mut [<TH $R Tensor>] as view, dimension: c_int, keepdim: c_int) {
                reduce::median(values_, indices_, &t, dimension, keepdim != 0)
            }
            /// `r_` = sum of `t` along `dimension` (accumulated in `accreal`).
            fn [<TH $R Tensor_sum>](r_: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as view, dimension: c_int, keepdim: c_int) {
                reduce::sum(r_, &t, dimension, keepdim != 0)
            }
            /// `r_` = product of `t` along `dimension` (accumulated in `accreal`).
            fn [<TH $R Tensor_prod>](r_: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as view, dimension: c_int, keepdim: c_int) {
                reduce::prod(r_, &t, dimension, keepdim != 0)
            }
            /// `r_` = cumulative sum of `t` along `dimension` (in `accreal`), resized like `t`.
            fn [<TH $R Tensor_cumsum>](r_: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as view, dimension: c_int) {
                reduce::cumsum(r_, &t, dimension)
            }
            /// `r_` = cumulative product of `t` along `dimension` (in `accreal`), resized like `t`.
            fn [<TH $R Tensor_cumprod>](r_: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as view, dimension: c_int) {
                reduce::cumprod(r_, &t, dimension)
            }
            /// `r` = `t` summed down to `shape` (undoes numpy broadcasting: `t`'s extra leading
            /// dims and the dims where `shape` has size 1 are summed, in `accreal`); `r` gets
            /// `shape`. An error unless `t`'s shape broadcasts from `shape`.
            fn [<TH $R Tensor_sumTo>](r: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as view, shape: *mut THLongStorage as required_list("shape")) {
                reduce::sum_to(r, &t, &shape)
            }
        }
    } };
    (@float float $R:ident, $T:ty, $C:ty, $A:ty) => { reduce_api!(@floatfns $R, $T, $C, $A); };
    (@float half $R:ident, $T:ty, $C:ty, $A:ty) => { reduce_api!(@floatfns $R, $T, $C, $A); };
    (@float $k:ident $R:ident, $T:ty, $C:ty, $A:ty) => {};
    (@floatfns $R:ident, $T:ty, $C:ty, $A:ty) => { pastey::paste! {
        th_fn! {
            /// Mean of all elements in `accreal`; an empty tensor is an error.
            fn [<TH $R Tensor_meanall>](self_: *mut [<TH $R Tensor>] as view) -> $A = 0.0; {
                reduce::meanall(&self_)
            }
            /// Variance of all elements (divided by n when `biased`, else n-1).
            fn [<TH $R Tensor_varall>](self_: *mut [<TH $R Tensor>] as view, biased: c_int) -> $A = 0.0; {
                reduce::varall(&self_, biased != 0)
            }
            /// Standard deviation of all elements (`sqrt(varall)`).
            fn [<TH $R Tensor_stdall>](self_: *mut [<TH $R Tensor>] as view, biased: c_int) -> $A = 0.0; {
                reduce::stdall(&self_, biased != 0)
            }
            /// The `value`-norm of all elements: `(sum |x|^p)^(1/p)`; p == 0 counts the non-zero
            /// elements, p == inf is max |x|, p == -inf min |x|.
            fn [<TH $R Tensor_normall>](t: *mut [<TH $R Tensor>] as view, value: $C) -> $A = 0.0; {
                reduce::normall(&t, <$T>::from_c(value))
            }
            /// The `value`-norm of `a - b` (elements paired in row-major order).
            fn [<TH $R Tensor_dist>](a: *mut [<TH $R Tensor>] as view, b: *mut [<TH $R Tensor>] as view, value: $C) -> $A = 0.0; {
                reduce::dist(&a, &b, <$T>::from_c(value))
            }
            /// `r_` = mean of `t` along `dimension`.
            fn [<TH $R Tensor_mean>](r_: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as view, dimension: c_int, keepdim: c_int) {
                reduce::mean(r_, &t, dimension, keepdim != 0)
            }
            /// `r_` = standard deviation of `t` along `dimension` (`/n` when `biased`, else `/(n-1)`).
            fn [<TH $R Tensor_std>](r_: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as view, dimension: c_int, biased: c_int, keepdim: c_int) {
                reduce::std(r_, &t, dimension, biased != 0, keepdim != 0)
            }
            /// `r_` = variance of `t` along `dimension` (`/n` when `biased`, else `/(n-1)`).
            fn [<TH $R Tensor_var>](r_: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as view, dimension: c_int, biased: c_int, keepdim: c_int) {
                reduce::var(r_, &t, dimension, biased != 0, keepdim != 0)
            }
            /// `r_` = `value`-norm of `t` along `dimension` (p == 0 counts non-zeros).
            fn [<TH $R Tensor_norm>](r_: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as view, value: $C, dimension: c_int, keepdim: c_int) {
                reduce::norm(r_, &t, <$T>::from_c(value), dimension, keepdim != 0)
            }
            /// `r_` = `t` with each slice along `dimension` whose `value`-norm exceeds `maxnorm`
            /// scaled by `maxnorm / (norm + 1e-7)`; `t` needs 2+ dims, `value` > 0.
            fn [<TH $R Tensor_renorm>](r_: *mut [<TH $R Tensor>] as obj, t: *mut [<TH $R Tensor>] as view, value: $C, dimension: c_int, maxnorm: $C) {
                reduce::renorm(r_, &t, <$T>::from_c(value), dimension, <$T>::from_c(maxnorm))
            }
            /// `hist` (resized to `nbins`) = histogram of `tensor` over `[minvalue, maxvalue]`
            /// (equal bounds: the data's min and max); values outside are ignored.
            fn [<TH $R Tensor_histc>](hist: *mut [<TH $R Tensor>] as obj, tensor: *mut [<TH $R Tensor>] as view, nbins: i64, minvalue: $C, maxvalue: $C) {
                reduce::histc(hist, &tensor, nbins, <$T>::from_c(minvalue), <$T>::from_c(maxvalue))
            }
            /// Row-wise `histc` of a 2-D `tensor`: `hist` resized to rows x `nbins`.
            fn [<TH $R Tensor_bhistc>](hist: *mut [<TH $R Tensor>] as obj, tensor: *mut [<TH $R Tensor>] as view, nbins: i64, minvalue: $C, maxvalue: $C) {
                reduce::bhistc(hist, &tensor, nbins, <$T>::from_c(minvalue), <$T>::from_c(maxvalue))
            }
        }
    } };
    (@logical Byte, $T:ty, $C:ty, $A:ty) => { reduce_api!(@logicalfns Byte); };
    (@logical Bool, $T:ty, $C:ty, $A:ty) => { reduce_api!(@logicalfns Bool); };
    (@logical $R:ident, $T:ty, $C:ty, $A:ty) => {};
    (@logicalfns $R:ident) => { pastey::paste! {
        th_fn! {
            /// 1 when every element is non-zero; an empty tensor is an error.
            fn [<TH $R Tensor_logicalall>](self_: *mut [<TH $R Tensor>] as view) -> c_int = 0; {
                Ok(reduce::logicalall(&self_)? as c_int)
            }
            /// 1 when some element is non-zero (0 when empty).
            fn [<TH $R Tensor_logicalany>](self_: *mut [<TH $R Tensor>] as view) -> c_int = 0; {
                Ok(reduce::logicalany(&self_)? as c_int)
            }
        }
    } };
}
crate::th_dtypes!(reduce_api);
