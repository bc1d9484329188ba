//! The random fills on device tensors (THC's `THCTensorRandom.h`): the host functions' checks
//! and semantics, drawn by device `i`'s Philox generator (`cuda::random`, whose docs give the
//! stream contract) with the kernels of `cuda/kernels/random.cuh`. There is no generator
//! argument: a tensor on `cuda:i` uses device i's generator.
//!
//! Argument positions in errors are THC's (the `THCState *` not counted, no generator): in
//! `THCudaTensor_uniform(state, self, a, b)`, `a` is argument 2. Every check runs before anything
//! is drawn or written; checks on tensor parameters (probabilities, standard deviations, alias
//! tables, multinomial weights) read their values on the host (a device-to-host copy).

use super::*;
use crate::core::allocator::Device;
use crate::cuda::launch::{Operand, device_base};
use crate::cuda::random::{self as crand, Dist, Draw};
use crate::exec::overlap::{Alias, alias};

/// The device of `t`: the call's engine (THC functions take device tensors).
fn device_of<T: Scalar>(v: &View<T>, what: &str) -> Result<i32> {
    match v.device() {
        Device::Cuda(i) => Ok(i),
        Device::Cpu => Err(Error::invalid(format!("{what}: expected a CUDA device tensor, got one in host memory"))),
    }
}

/// Every operand on the output's device (THC's rule).
fn same_device(dev: i32, devices: &[Device]) -> Result<()> {
    let mut all = vec![Device::Cuda(dev)];
    all.extend_from_slice(devices);
    crate::exec::backend::Backend::of(&all).map(|_| ())
}

fn operand<T: Scalar>(v: &View<T>) -> Result<Operand<'_>> {
    crate::cuda::ops::operand(v)
}

/// `v` with `out`'s shape (same element count, row-major pairing), readable while `out` is
/// written: a contiguous device copy when `v` is not contiguous, has another shape, or shares
/// elements with `out` other than position for position.
fn input_for<T: Scalar, O: Scalar>(v: &View<T>, out: &View<O>) -> Result<View<T>> {
    if v.sizes == out.sizes && !matches!(alias(v, out), Alias::Partial) {
        return Ok(v.clone());
    }
    let c = crate::ops::temp_like::<T, T>(v, &v.sizes)?;
    crate::ops::copy::copy(&c, v)?;
    View::on_storage(c.storage.clone(), 0, &out.sizes, None)
}

fn fill<T: Scalar>(t: &Tensor<T>, op: &str, draw: Draw, pairs: bool) -> Result<()> {
    let v = t.view();
    device_of(&v, op)?;
    crand::run(&format!("{op}_{}", crate::cuda::kernels::dtype_suffix(T::DTYPE)), &v, [None, None], draw, pairs, [0; 2])
}

/// Words per element of a float distribution: 2 for Double (53-bit uniforms), else 1.
fn float_words<T: Scalar>() -> u32 {
    if T::DTYPE == DType::Double { 2 } else { 1 }
}

/// `lo + w % range` per element (`random`: lo 0, range the dtype's modulus).
fn int_fill<T: Num>(t: &Tensor<T>, lo: i64, range: u64) -> Result<()> {
    fill(t, "int", Draw { lo, range, words: 1, ..Draw::default() }, false)
}

/// In place: `w % m` (the host's `random` modulus per dtype).
pub fn random<T: Num>(t: &Tensor<T>) -> Result<()> {
    int_fill(t, 0, random_modulus(T::DTYPE))
}

/// In place: integers in `[min, max)`.
pub fn clamped_random<T: Num>(t: &Tensor<T>, min: i64, max: i64) -> Result<()> {
    if max <= min {
        return Err(Error::invalid(format!("max ({max}) must be greater than min ({min})")).at_arg(3));
    }
    int_fill(t, min, (max as i128 - min as i128) as u64)
}

/// In place: integers in `[0, max)`.
pub fn capped_random<T: Num>(t: &Tensor<T>, max: i64) -> Result<()> {
    if max <= 0 {
        return Err(Error::invalid(format!("max ({max}) must be positive")).at_arg(2));
    }
    int_fill(t, 0, max as u64)
}

pub fn geometric<T: Num>(t: &Tensor<T>, p: f64) -> Result<()> {
    check_geometric(p, 2)?;
    fill(t, "geometric", Draw { a: p, words: 1, ..Draw::default() }, false)
}

pub fn bernoulli<T: Num>(t: &Tensor<T>, p: f64) -> Result<()> {
    check_prob(p, 2)?;
    let v = t.view();
    device_of(&v, "bernoulli")?;
    // The Float-tensor kernel with no tensor (arg[2] address 0) reads the scalar.
    let op = format!("bernoulli_{}_float", crate::cuda::kernels::dtype_suffix(T::DTYPE));
    crand::run(&op, &v, [None, None], Draw { a: p, words: 1, ..Draw::default() }, false, [0; 2])
}

/// Element i is 1 with probability `p[i]` (`p` Float or Double on the same device, same element
/// count, row-major pairing, every value in [0, 1]).
pub fn bernoulli_tensor<T: Num, P: Num>(t: &Tensor<T>, p: &View<P>) -> Result<()> {
    let v = t.view();
    let dev = device_of(&v, "bernoulli")?;
    same_device(dev, &[p.device()])?;
    if !matches!(P::DTYPE, DType::Float | DType::Double) {
        return Err(Error::dtype("bernoulli: probabilities must be a Float or Double tensor").at_arg(2));
    }
    if v.numel() != p.numel() {
        return Err(Error::size(format!(
            "probability tensor has {} elements (size {}) but the output has {} (size {})",
            p.numel(),
            size_desc(&p.sizes),
            v.numel(),
            size_desc(&v.sizes)
        ))
        .at_arg(2));
    }
    let ps = crate::ops::copy::values(p)?;
    if let Some(bad) = ps.iter().map(|x| x.to_f64()).find(|x| !(0.0..=1.0).contains(x)) {
        return Err(Error::invalid(format!("probabilities must be in [0, 1], found {bad}")).at_arg(2));
    }
    let pin = input_for(p, &v)?;
    let op = format!(
        "bernoulli_{}_{}",
        crate::cuda::kernels::dtype_suffix(T::DTYPE),
        crate::cuda::kernels::dtype_suffix(P::DTYPE)
    );
    crand::run(&op, &v, [Some(operand(&pin)?), None], Draw { words: 1, ..Draw::default() }, false, [0; 2])
}

/// Uniform in `[a, b)` (values that round up to `b` in `T` become the largest `T` below `b`).
pub fn uniform<T: RandFloat>(t: &Tensor<T>, a: f64, b: f64) -> Result<()> {
    check_range(a, b, 2)?;
    uniform_unchecked(t, a, b)
}

fn uniform_unchecked<T: RandFloat>(t: &Tensor<T>, a: f64, b: f64) -> Result<()> {
    let mut below = T::from_f64(b);
    if below.to_f64() >= b {
        below = below.next_below();
    }
    let clamp = a < b && below.to_f64() >= a;
    let d = Draw {
        a,
        b,
        c: below.to_f64(),
        lo: clamp as i64,
        dist: Dist::Uniform as i32,
        words: float_words::<T>(),
        ..Draw::default()
    };
    fill(t, "dist", d, false)
}

fn dist<T: Float>(t: &Tensor<T>, which: Dist, a: f64, b: f64) -> Result<()> {
    let pairs = matches!(which, Dist::Normal | Dist::LogNormal);
    fill(t, "dist", Draw { a, b, dist: which as i32, words: float_words::<T>(), ..Draw::default() }, pairs)
}

pub fn normal<T: Float>(t: &Tensor<T>, mean: f64, stdv: f64) -> Result<()> {
    check_stdv(stdv, 3)?;
    dist(t, Dist::Normal, mean, stdv)
}

pub fn log_normal<T: Float>(t: &Tensor<T>, mean: f64, stdv: f64) -> Result<()> {
    check_stdv(stdv, 3)?;
    dist(t, Dist::LogNormal, mean, stdv)
}

pub fn exponential<T: Float>(t: &Tensor<T>, lambda: f64) -> Result<()> {
    check_positive("lambda", lambda, 2)?;
    dist(t, Dist::Exponential, lambda, 0.0)
}

pub fn cauchy<T: Float>(t: &Tensor<T>, median: f64, sigma: f64) -> Result<()> {
    check_positive("sigma", sigma, 3)?;
    dist(t, Dist::Cauchy, median, sigma)
}

/// `normal_tensor`: mode bit 0 means (a tensor), bit 1 stddevs (a tensor); `out` already sized.
fn normal_tensor<T: Float>(
    out: &View<T>,
    means: Option<&View<T>>,
    sds: Option<&View<T>>,
    a: f64,
    b: f64,
) -> Result<()> {
    let m = means.map(|m| input_for(m, out)).transpose()?;
    let s = sds.map(|s| input_for(s, out)).transpose()?;
    let mode = m.is_some() as i32 | (s.is_some() as i32) << 1;
    let ins = [m.as_ref().map(operand).transpose()?, s.as_ref().map(operand).transpose()?];
    let d = Draw { a, b, dist: mode, words: float_words::<T>(), ..Draw::default() };
    crand::run(&format!("normal_tensor_{}", crate::cuda::kernels::dtype_suffix(T::DTYPE)), out, ins, d, true, [0; 2])
}

/// `self` resized like `means`: `normal(0, stddev) + means`.
pub fn normal_means<T: Float>(r: &Tensor<T>, means: &View<T>, stddev: f64) -> Result<()> {
    let dev = device_of(&r.view(), "normal_means")?;
    same_device(dev, &[means.device()])?;
    check_stdv(stddev, 3)?;
    let out = crate::ops::resize_out(r, &means.sizes)?;
    normal_tensor(&out, Some(means), None, 0.0, stddev)
}

fn check_stddev_values<T: Float>(s: &View<T>, arg: u32) -> Result<()> {
    check_stddevs(&crate::ops::copy::values(s)?, arg)
}

/// `self` resized like `stddevs`: `normal(0, 1) * stddevs + mean` (each stddev >= 0).
pub fn normal_stddevs<T: Float>(r: &Tensor<T>, mean: f64, stddevs: &View<T>) -> Result<()> {
    let dev = device_of(&r.view(), "normal_stddevs")?;
    same_device(dev, &[stddevs.device()])?;
    check_stddev_values(stddevs, 3)?;
    let out = crate::ops::resize_out(r, &stddevs.sizes)?;
    normal_tensor(&out, None, Some(stddevs), mean, 1.0)
}

/// `normal(0, 1) * stddevs + means`, broadcast together, `self` resized to their shape.
pub fn normal_means_stddevs<T: Float>(r: &Tensor<T>, means: &View<T>, stddevs: &View<T>) -> Result<()> {
    let dev = device_of(&r.view(), "normal_means_stddevs")?;
    same_device(dev, &[means.device(), stddevs.device()])?;
    let (shape, vs) = crate::ops::broadcast_all(&[means, stddevs]).map_err(|e| e.at_arg(3))?;
    check_stddev_values(&vs[1], 3)?;
    let out = crate::ops::resize_out(r, &shape)?;
    normal_tensor(&out, Some(&vs[0]), Some(&vs[1]), 0.0, 1.0)
}

/// `r` resized to `sizes`, uniform in [0, 1).
pub fn rand<T: RandFloat>(r: &Tensor<T>, sizes: &[i64]) -> Result<()> {
    device_of(&r.view(), "rand")?;
    let shape = parse_sizes(sizes).map_err(|e| e.at_arg(2))?;
    crate::ops::resize_out(r, &shape)?;
    uniform_unchecked(r, 0.0, 1.0)
}

/// `r` resized to `sizes`, standard normal.
pub fn randn<T: Float>(r: &Tensor<T>, sizes: &[i64]) -> Result<()> {
    device_of(&r.view(), "randn")?;
    let shape = parse_sizes(sizes).map_err(|e| e.at_arg(2))?;
    crate::ops::resize_out(r, &shape)?;
    dist(r, Dist::Normal, 0.0, 1.0)
}

/// `self` (Long, same device) resized to `(rows, n_sample)` (`(n_sample)` for a 1-D `prob`):
/// categories drawn from each row's weights, distinct within a row without replacement.
pub fn multinomial<T: Float>(out: &Tensor<i64>, prob: &View<T>, n_sample: i32, with_replacement: bool) -> Result<()> {
    let dev = device_of(&out.view(), "multinomial")?;
    same_device(dev, &[prob.device()])?;
    let p: Vec<f64> = crate::ops::copy::values(prob)?.into_iter().map(|x| x.to_f64()).collect();
    let (rows, nc, _) = check_multinomial(&prob.sizes, &p, n_sample, with_replacement, 2, 3)?;
    let ns = n_sample as i64;
    let shape: Vec<i64> = if prob.ndim() == 1 { vec![ns] } else { vec![rows as i64, ns] };
    let o = crate::ops::resize_out(out, &shape)?;
    if rows == 0 {
        return Ok(());
    }
    let o_st = if prob.ndim() == 1 { [0, o.strides[0]] } else { [o.strides[0], o.strides[1]] };
    let p_st = if prob.ndim() == 1 { [0, prob.strides[0]] } else { [prob.strides[0], prob.strides[1]] };
    let scratch: Option<View<f64>> =
        if with_replacement { None } else { Some(crate::ops::temp_like(prob, &[(rows * nc) as i64])?) };
    let sbase = scratch.as_ref().map(device_base).transpose()?.unwrap_or(0);
    crand::run_multinomial::<T>(
        dev,
        device_base(&o)?,
        o_st,
        device_base(prob)?,
        p_st,
        [rows as i64, ns, nc as i64],
        sbase,
        with_replacement,
    )?;
    // The scratch returns to the caching allocator only after the kernel (stream order).
    drop(scratch);
    Ok(())
}

/// Alias tables of `prob`'s weights: computed on the host (a sequential pass over the staged
/// probabilities, as `multinomial_alias_setup`), `J` and `q` (same device) written back.
pub fn multinomial_alias_setup<T: Float>(prob: &View<T>, j: &Tensor<i64>, q: &Tensor<T>) -> Result<()> {
    let dev = device_of(prob, "multinomialAliasSetup")?;
    same_device(dev, &[j.with_view(|v| v.device()), q.with_view(|v| v.device())])?;
    let host = View::from_slice(&crate::ops::copy::values(prob)?, &prob.sizes)?;
    let (jh, qh) = (Tensor::new(View::<i64>::empty()), Tensor::new(View::<T>::empty()));
    super::multinomial_alias_setup(&host, &jh, &qh)?;
    let k = [prob.numel() as i64];
    crate::cuda::copy::copy(&crate::ops::resize_out(j, &k)?, &jh.view())?;
    crate::cuda::copy::copy(&crate::ops::resize_out(q, &k)?, &qh.view())
}

/// In place: every element of `self` a category drawn with the alias tables `J`, `q` (checked
/// on the host: equal non-zero element counts, J in [0, K), q in [0, 1]).
pub fn multinomial_alias_draw<T: Float>(out: &Tensor<i64>, j: &View<i64>, q: &View<T>) -> Result<()> {
    let v = out.view();
    let dev = device_of(&v, "multinomialAliasDraw")?;
    same_device(dev, &[j.device(), q.device()])?;
    let k = j.numel();
    if k == 0 || q.numel() != k {
        return Err(Error::size(format!(
            "alias tables J (size {}) and q (size {}) must be non-empty with equal element counts",
            size_desc(&j.sizes),
            size_desc(&q.sizes)
        ))
        .at_arg(2));
    }
    if let Some(bad) = crate::ops::copy::values(j)?.into_iter().find(|&x| x < 0 || x >= k as i64) {
        return Err(Error::index(format!("alias table J holds {bad}, outside [0, {k})")).at_arg(2));
    }
    if let Some(bad) = crate::ops::copy::values(q)?.into_iter().map(|x| x.to_f64()).find(|x| !(0.0..=1.0).contains(x)) {
        return Err(Error::invalid(format!("alias table q holds {bad}, outside [0, 1]")).at_arg(3));
    }
    let jd = contiguous_flat(j)?;
    let qd = contiguous_flat(q)?;
    let d = Draw { lo: k as i64, words: 2, ..Draw::default() };
    let op = format!("alias_{}", crate::cuda::kernels::dtype_suffix(T::DTYPE));
    crand::run(&op, &v, [None, None], d, false, [device_base(&jd)?, device_base(&qd)?])
}

/// A contiguous device copy of `v` (or `v` when already contiguous).
fn contiguous_flat<T: Scalar>(v: &View<T>) -> Result<View<T>> {
    if v.is_contiguous() {
        return Ok(v.clone());
    }
    let c = crate::ops::temp_like::<T, T>(v, &v.sizes)?;
    crate::ops::copy::copy(&c, v)?;
    Ok(c)
}
