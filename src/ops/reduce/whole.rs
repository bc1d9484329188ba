//! Whole-tensor reductions (§4.4, 4.17, 4.19).

use super::*;

/// Number of elements (TH's `numel`).
pub fn numel<T: Scalar>(t: &View<T>) -> usize {
    t.numel()
}

/// Sum of all elements in `accreal` (0 for an empty tensor).
pub fn sumall<T: NumAcc>(t: &View<T>) -> Result<T::Acc> {
    Ok(reduce([t], &vec![true; t.ndim()], &sum_reducer::<T>())?[0])
}

/// Product of all elements in `accreal` (1 for an empty tensor).
pub fn prodall<T: NumAcc>(t: &View<T>) -> Result<T::Acc> {
    Ok(reduce([t], &vec![true; t.ndim()], &prod_reducer::<T>())?[0])
}

/// Number of non-zero (true) elements.
pub fn count_nonzero<T: Elem>(t: &View<T>) -> Result<i64> {
    Ok(reduce([t], &vec![true; t.ndim()], &count_reducer::<T>())?[0])
}

/// `sum(t[i] * src[i])` in `accreal` over elements paired in row-major order.
pub fn dot<T: NumAcc>(t: &View<T>, src: &View<T>) -> Result<T::Acc> {
    let (a, b) = paired(t, src, "dot")?;
    let r = Assoc { id: T::zero().to_acc(), g: |x: T, y: T| T::acc_mul(x.to_acc(), y.to_acc()), c: T::acc_add };
    let r = on_device(r, DeviceFold::Dot);
    Ok(reduce([&a, &b], &vec![true; a.ndim()], &r)?[0])
}

/// The largest element; NaN propagates. An empty tensor is an error.
pub fn maxall<T: Elem>(t: &View<T>) -> Result<T> {
    nonempty(t, "maxall")?;
    let r = on_device(Assoc { id: T::lowest(), g: |x: T| x, c: nan_max::<T> }, DeviceFold::Max);
    Ok(reduce([t], &vec![true; t.ndim()], &r)?[0].canon())
}

/// The smallest element; NaN propagates. An empty tensor is an error.
pub fn minall<T: Elem>(t: &View<T>) -> Result<T> {
    nonempty(t, "minall")?;
    let r = on_device(Assoc { id: T::highest(), g: |x: T| x, c: nan_min::<T> }, DeviceFold::Min);
    Ok(reduce([t], &vec![true; t.ndim()], &r)?[0].canon())
}

/// The lower median: element `(n-1)/2` of the elements in row-major order sorted stably (NaN
/// sorts last; of equal values such as -0.0 and 0.0, the earlier comes first).
pub fn medianall<T: Elem>(t: &View<T>) -> Result<T> {
    nonempty(t, "medianall")?;
    let k = (t.numel() - 1) / 2;
    if let crate::core::allocator::Device::Cuda(dev) = t.device() {
        let f = flat(t)?;
        let s = crate::cuda::sort::Sorted::new(dev, &f, 0, false)?;
        let at = View { sizes: vec![1], strides: vec![1], offset: s.keys.offset + k, ..s.keys.clone() };
        return Ok(crate::ops::copy::values(&at)?[0]);
    }
    let mut v: Vec<(T, i64)> = crate::ops::copy::values(t)?.into_iter().zip(0..).collect();
    Ok(v.select_nth_unstable_by(k, by_value_then_pos).1.0)
}

/// 1 when `ta` and `tb` have the same sizes and equal elements (NaN is not equal to itself).
pub fn equal<T: Elem>(ta: &View<T>, tb: &View<T>) -> Result<bool> {
    if ta.sizes != tb.sizes {
        return Ok(false);
    }
    let r = on_device(Assoc { id: 0i64, g: |x: T, y: T| (!x.same(y)) as i64, c: i64::wrapping_add }, DeviceFold::Equal);
    Ok(reduce([ta, tb], &vec![true; ta.ndim()], &r)?[0] == 0)
}

/// Sum of the main diagonal of a 2-D tensor (need not be square), in `accreal`.
pub fn trace<T: NumAcc>(t: &View<T>) -> Result<T::Acc> {
    if t.ndim() != 2 {
        return Err(Error::size(format!("trace: expected a 2-D tensor, got size {}", size_desc(&t.sizes))).at_arg(1));
    }
    let diag =
        View { sizes: vec![t.sizes[0].min(t.sizes[1])], strides: vec![t.strides[0] + t.strides[1]], ..t.clone() };
    sumall(&diag)
}

/// 1 when every element is non-zero (Byte, Bool). An empty tensor is an error (as TH).
pub fn logicalall<T: Elem>(t: &View<T>) -> Result<bool> {
    nonempty(t, "logicalall")?;
    Ok(count_nonzero(t)? as usize == t.numel())
}

/// 1 when some element is non-zero (0 for an empty tensor).
pub fn logicalany<T: Elem>(t: &View<T>) -> Result<bool> {
    Ok(count_nonzero(t)? > 0)
}

/// Mean of all elements in `accreal`. An empty tensor is an error.
pub fn meanall<T: FloatAcc>(t: &View<T>) -> Result<T::Acc> {
    nonempty(t, "meanall")?;
    Ok(sumall(t)?.div(<T::Acc as Num>::from_f64(t.numel() as f64)))
}

pub(super) fn var_of<A: Real + Num>((n, _, m2): (A, A, A), biased: bool) -> A {
    m2.div(if biased { n } else { n.sub(A::one()) })
}

/// Variance of all elements (divided by n when `biased`, else n-1; n == 1 unbiased is NaN).
pub fn varall<T: FloatAcc>(t: &View<T>, biased: bool) -> Result<T::Acc> {
    nonempty(t, "varall")?;
    Ok(var_of(reduce([t], &vec![true; t.ndim()], &Moments::<T>::new())?[0], biased))
}

/// `sqrt(varall)`.
pub fn stdall<T: FloatAcc>(t: &View<T>, biased: bool) -> Result<T::Acc> {
    Ok(varall(t, biased)?.sqrt())
}

/// The p-norm accumulations of `elem(x, ..)` over `views` (one or two operands) and the dims in
/// `mask`, with their roots (see `pnorm`); `$fold` is the device fold of the same (`Norm`,
/// `Dist`). One branch per form of p, so each fold is a closure the kernels see statically.
macro_rules! pnorm_of {
    ($T:ty, $views:expr, $mask:expr, $p:expr, $fold:expr, |$($x:ident),+| $elem:expr) => {{
        let (views, mask, p, fold) = ($views, $mask, $p, $fold);
        let zero = <<$T as Scalar>::Acc as Num>::zero();
        let one = <<$T as Scalar>::Acc as Num>::one();
        let add = |a: <$T as Scalar>::Acc, b: <$T as Scalar>::Acc| a.add(b);
        let elem = |$($x: $T),+| -> $T { $elem };
        // (a macro, not a closure: each branch's reducer has its own type)
        macro_rules! run {
            ($r:expr) => {
                reduce(views, mask, &on_device($r, fold))
            };
        }
        if p == 0.0 {
            run!(Assoc { id: zero, g: |$($x: $T),+| if elem($($x),+).nonzero() { one } else { zero }, c: add })?
        } else if p == 1.0 {
            run!(Assoc { id: zero, g: |$($x: $T),+| elem($($x),+).to_acc().abs(), c: add })?
        } else if p == 2.0 {
            let g = |$($x: $T),+| {
                let y = elem($($x),+).to_acc();
                y.mul(y)
            };
            run!(Assoc { id: zero, g, c: add })?.into_iter().map(|s| s.sqrt()).collect()
        } else if p == f64::INFINITY {
            let c = |a: <$T as Scalar>::Acc, b| a.max_nan(b);
            run!(Assoc { id: zero, g: |$($x: $T),+| elem($($x),+).to_acc().abs(), c })?
        } else if p == f64::NEG_INFINITY {
            let inf = <<$T as Scalar>::Acc as Num>::from_f64(f64::INFINITY);
            let c = |a: <$T as Scalar>::Acc, b| a.min_nan(b);
            run!(Assoc { id: inf, g: |$($x: $T),+| elem($($x),+).to_acc().abs(), c })?
        } else {
            let pa = <<$T as Scalar>::Acc as Num>::from_f64(p);
            let inv = one.div(pa);
            let g = |$($x: $T),+| elem($($x),+).to_acc().abs().powf(pa);
            run!(Assoc { id: zero, g, c: add })?.into_iter().map(|s| s.powf(inv)).collect()
        }
    }};
}

/// The p-norms of `t` over the dims in `mask`, in `accreal`: p == 0 counts non-zeros, p == inf
/// is max |x| and p == -inf min |x| (NaN propagates), otherwise `(sum |x|^p)^(1/p)`.
pub(super) fn pnorm<T: FloatAcc>(t: &View<T>, mask: &[bool], p: f64) -> Result<Vec<T::Acc>> {
    Ok(pnorm_of!(T, [t], mask, p, DeviceFold::Norm(p), |x| x))
}

/// The p-norm of all elements (see `pnorm`; 0 for an empty tensor with p > 0).
pub fn normall<T: FloatAcc>(t: &View<T>, p: T) -> Result<T::Acc> {
    Ok(pnorm(t, &vec![true; t.ndim()], p.to_f64())?[0])
}

/// The p-norm of `a - b` (differences computed in the element type, as TH; elements paired in
/// row-major order).
pub fn dist<T: FloatAcc>(a: &View<T>, b: &View<T>, p: T) -> Result<T::Acc> {
    let (a, b) = paired(a, b, "dist")?;
    if let crate::core::allocator::Device::Cuda(_) = a.device() {
        // One fold over both operands: the differences are rounded to T inside the kernel.
        let p = p.to_f64();
        let mask = vec![true; a.ndim()];
        let v: Vec<T::Acc> = pnorm_of!(T, [&a, &b], &mask, p, DeviceFold::Dist(p), |x, y| x.sub(y));
        return Ok(v[0]);
    }
    let d = if a.numel() == 0 { View::empty() } else { View::contiguous(&a.sizes)? };
    map2(&d, &a, &b, Call::new("csub").value(T::one()), |x: T, y: T| x.sub(y))?;
    normall(&d, p)
}
