//! The device half of BatchNormalization, on th's device engines: the per-feature sums by the
//! f64 dimension reductions (`sum_to`, deterministic: a fixed combine order) of f64 copies of the
//! operands (`nn::widened`), the statistics, saved values and running estimates formed on the
//! host from those sums exactly as the host layer forms them, and the elementwise passes as
//! broadcast pointwise ops in the compute type (the host's operations in the host's order;
//! Half computes in f32 and rounds once into the output).
//!
//! The sums are the host's up to the order of the f64 additions, so f32 results match the
//! host's and f64 ones agree within a few ulps.

use super::{Dims, eval_stats};
use crate::core::dtype::Scalar;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::cuda::launch::Call;
use crate::nn::activation::paired;
use crate::nn::conv::device::in_r;
use crate::nn::{NnElem, widened};
use crate::ops::num::Num;
use crate::ops::{self, arith, reduce::sum_to};

/// A view's elements in row-major order on the host.
pub(super) fn host_vec<T: Scalar>(v: &View<T>) -> Result<Vec<T>> {
    let h = View::contiguous(&v.sizes)?;
    ops::copy::copy(&h, v)?;
    h.to_vec()
}

/// A per-feature device tensor's values as f64 (`dflt` for each feature when absent).
pub(super) fn values<T: NnElem>(v: Option<&View<T>>, c: usize, dflt: f64) -> Result<Vec<f64>> {
    match v {
        Some(v) => Ok(host_vec(v)?.into_iter().map(|x| x.to_f64()).collect()),
        None => Ok(vec![dflt; c]),
    }
}

/// Writes `vals` into the elements of `v` (on `v`'s device, in row-major order).
fn store<T: Scalar>(v: &View<T>, vals: &[T]) -> Result<()> {
    ops::copy::copy(v, &View::from_slice(vals, &v.sizes)?)
}

/// `vals` (one per feature) on the device of `like`, as a `(1, c, 1)` view broadcast to `d`.
fn per_feature<R: Scalar, L: Scalar>(like: &View<L>, vals: &[R], d: Dims) -> Result<View<R>> {
    let t = ops::temp_like::<R, L>(like, &[1, d.c as i64, 1])?;
    ops::copy::copy(&t, &View::from_slice(vals, &[1, d.c as i64, 1])?)?;
    t.expand(&shape(d))
}

fn shape(d: Dims) -> [i64; 3] {
    [d.n as i64, d.c as i64, d.s as i64]
}

/// A fresh device tensor of `sizes` like `like`.
fn temp<R: Scalar, L: Scalar>(like: &View<L>, sizes: &[i64]) -> Result<crate::core::refcount::Rc<Tensor<R>>> {
    Ok(Tensor::new(ops::temp_like::<R, L>(like, sizes)?))
}

/// `r = a - b`, `r = a * b`, `r = a + b` on (broadcast) operands.
fn sub<R: Num>(r: &Tensor<R>, a: &View<R>, b: &View<R>) -> Result<()> {
    arith::csub(r, a, R::one(), b)
}
fn mul<R: Num>(r: &Tensor<R>, a: &View<R>, b: &View<R>) -> Result<()> {
    ops::pointwise2(r, a, b, Call::new("cmul"), |x: R, y: R| x.mul(y))
}
fn add<R: Num>(r: &Tensor<R>, a: &View<R>, b: &View<R>) -> Result<()> {
    arith::cadd(r, a, R::one(), b)
}

/// The per-feature sums of `v` (f64, `(n, c, s)`).
fn feature_sums<L: Scalar>(v: &View<f64>, d: Dims, like: &View<L>) -> Result<Vec<f64>> {
    let r = temp::<f64, L>(like, &[1, d.c as i64, 1])?;
    sum_to(&r, v, &[1, d.c as i64, 1])?;
    host_vec(&r.view())
}

/// `updateOutput` on the device (checked by the caller).
#[allow(clippy::too_many_arguments)] // torch7's operands
pub(super) fn update_output<T: NnElem>(
    d: Dims,
    input: &View<T>,
    output: &Tensor<T>,
    weight: Option<&View<T>>,
    bias: Option<&View<T>>,
    running_mean: Option<&Tensor<T>>,
    running_var: Option<&Tensor<T>>,
    save_mean: Option<&Tensor<T>>,
    save_std: Option<&Tensor<T>>,
    train: bool,
    momentum: f64,
    eps: f64,
) -> Result<()> {
    let x = paired(input.clone(), &shape(d))?;
    let w = values(weight, d.c, 1.0)?;
    let b = values(bias, d.c, 0.0)?;
    let rm_view = running_mean.map(|t| t.view());
    let rv_view = running_var.map(|t| t.view());
    let rm = values(rm_view.as_ref(), d.c, 0.0)?;
    let rv = values(rv_view.as_ref(), d.c, 1.0)?;
    let count = d.count();
    let (stats, sums) = if !train {
        (eval_stats(&rm, &rv, eps), Vec::new())
    } else if count == 0 {
        (vec![(0.0, 0.0); d.c], Vec::new())
    } else {
        // each feature's sums shifted by its first value, as the host's
        let first = x.narrow(0, 0, 1)?.narrow(2, 0, 1)?;
        let shift = values(Some(&first), d.c, 0.0)?;
        let xw = widened(&x)?.reshape_view(&shape(d))?;
        let dv = temp::<f64, T>(&x, &shape(d))?;
        sub(&dv, &xw, &per_feature(&x, &shift, d)?)?;
        let s1 = feature_sums(&dv.view(), d, &x)?;
        let dd = dv.view();
        mul(&dv, &dd, &dd)?;
        let s2 = feature_sums(&dv.view(), d, &x)?;
        let sums: Vec<(f64, f64)> = s1.into_iter().zip(s2).collect();
        let stats = (0..d.c).map(|f| super::batch_stats(count, shift[f], sums[f], eps)).collect();
        (stats, sums)
    };
    // output = (x - mean) * (invstd * w) + b, in the compute type
    let coef = |k: usize| -> Vec<T::R> {
        (0..d.c)
            .map(|f| {
                let (m, is) = stats[f];
                T::R::from_f64([m, is * w[f], b[f]][k])
            })
            .collect()
    };
    let xr = in_r(&x)?;
    let t = temp::<T::R, T>(&x, &shape(d))?;
    let tv = t.view();
    sub(&t, &xr, &per_feature(&x, &coef(0), d)?)?;
    mul(&t, &tv, &per_feature(&x, &coef(1), d)?)?;
    add(&t, &tv, &per_feature(&x, &coef(2), d)?)?;
    let out = ops::resize_out(output, &input.sizes)?;
    ops::copy::copy(&out, &tv.reshape_view(&input.sizes)?)?;
    if !train {
        return Ok(());
    }
    for (k, t) in [save_mean, save_std].into_iter().enumerate() {
        if let Some(t) = t {
            let o = ops::resize_out(t, &[d.c as i64])?;
            let v: Vec<T> = stats.iter().map(|s| T::from_f64(if k == 0 { s.0 } else { s.1 })).collect();
            store(&o, &v)?;
        }
    }
    if count > 0 {
        let cn = count as f64;
        if let Some(t) = running_mean {
            let v: Vec<T> =
                stats.iter().zip(&rm).map(|(s, r)| T::from_f64(momentum * s.0 + (1.0 - momentum) * r)).collect();
            store(&t.view(), &v)?;
        }
        if let Some(t) = running_var {
            let v: Vec<T> = (0..d.c)
                .map(|f| {
                    let (s1, s2) = sums[f];
                    let unbiased = (s2 - s1 * s1 / cn).max(0.0) / (cn - 1.0);
                    T::from_f64(momentum * unbiased + (1.0 - momentum) * rv[f])
                })
                .collect();
            store(&t.view(), &v)?;
        }
    }
    Ok(())
}

/// `backward` on the device (checked by the caller; `stats` are the (mean, invstd) used).
#[allow(clippy::too_many_arguments)] // torch7's operands
pub(super) fn backward<T: NnElem>(
    d: Dims,
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: Option<&Tensor<T>>,
    grad_weight: Option<&Tensor<T>>,
    grad_bias: Option<&Tensor<T>>,
    weight: Option<&View<T>>,
    stats: &[(f64, f64)],
    train: bool,
    scale: f64,
) -> Result<()> {
    let x = paired(input.clone(), &shape(d))?;
    let g = paired(grad_output.clone(), &shape(d))?;
    let w = values(weight, d.c, 1.0)?;
    // the mean as the forward pass used it (in the compute type)
    let mean_r: Vec<T::R> = stats.iter().map(|s| T::R::from_f64(s.0)).collect();
    let mean: Vec<f64> = mean_r.iter().map(|m| m.to_f64()).collect();
    let need_sums = (grad_input.is_some() && train) || grad_weight.is_some() || grad_bias.is_some();
    let (mut sa, mut sb) = (vec![0.0; d.c], vec![0.0; d.c]);
    if need_sums && d.numel() > 0 {
        // a = sum(g), b = sum((x - mean) * g), in f64
        let gw = widened(&g)?.reshape_view(&shape(d))?;
        let xw = widened(&x)?.reshape_view(&shape(d))?;
        let dv = temp::<f64, T>(&x, &shape(d))?;
        sub(&dv, &xw, &per_feature(&x, &mean, d)?)?;
        let dd = dv.view();
        mul(&dv, &dd, &gw)?;
        sb = feature_sums(&dd, d, &x)?;
        sa = feature_sums(&gw, d, &x)?;
    }
    let cn = d.count() as f64;
    if let Some(gi) = grad_input {
        let gr = in_r(&g)?;
        let t = temp::<T::R, T>(&x, &shape(d))?;
        let tv = t.view();
        if train {
            // gradInput = (g - mean(g) - (x - mean) * k) * invstd * w, k = mean(g * xhat) * invstd
            let (mut gm, mut k, mut a) = (Vec::new(), Vec::new(), Vec::new());
            for f in 0..d.c {
                let invstd = stats[f].1;
                k.push(T::R::from_f64(sb[f] * invstd * invstd / cn));
                gm.push(T::R::from_f64(sa[f] / cn));
                a.push(T::R::from_f64(invstd * w[f]));
            }
            let xr = in_r(&x)?;
            let u = temp::<T::R, T>(&x, &shape(d))?;
            let uv = u.view();
            sub(&u, &xr, &per_feature(&x, &mean_r, d)?)?;
            mul(&u, &uv, &per_feature(&x, &k, d)?)?;
            sub(&t, &gr, &per_feature(&x, &gm, d)?)?;
            sub(&t, &tv, &uv)?;
            mul(&t, &tv, &per_feature(&x, &a, d)?)?;
        } else {
            // gradInput = g * invstd * w
            let a: Vec<T::R> = (0..d.c).map(|f| T::R::from_f64(stats[f].1 * w[f])).collect();
            mul(&t, &gr, &per_feature(&x, &a, d)?)?;
        }
        let out = ops::resize_out(gi, &input.sizes)?;
        ops::copy::copy(&out, &tv.reshape_view(&input.sizes)?)?;
    }
    if let Some(gw) = grad_weight {
        let v = gw.view();
        let old = host_vec(&v)?;
        let new: Vec<T> =
            old.iter().enumerate().map(|(f, o)| T::from_f64(o.to_f64() + scale * sb[f] * stats[f].1)).collect();
        store(&v, &new)?;
    }
    if let Some(gb) = grad_bias {
        let v = gb.view();
        let old = host_vec(&v)?;
        let new: Vec<T> = old.iter().enumerate().map(|(f, o)| T::from_f64(o.to_f64() + scale * sa[f])).collect();
        store(&v, &new)?;
    }
    Ok(())
}
