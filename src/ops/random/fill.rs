//! Tensor fills: every TH random function over a tensor, drawn in row-major order.

use super::*;

/// Writes `f()` into every element of `out`, in row-major order.
fn fill_seq<T: Scalar>(out: &View<T>, mut f: impl FnMut() -> T) -> Result<()> {
    let Some(p) = out.host_ptr()? else { return Ok(()) };
    let n = out.numel();
    if out.is_contiguous() {
        for i in 0..n {
            // SAFETY: host_ptr checked that the view's elements, here offset..offset+n, lie inside
            // the storage.
            unsafe { p.add(out.offset + i).write(f()) };
        }
    } else {
        for o in Offsets::new(out.offset, &out.sizes, &out.strides, n) {
            // SAFETY: every offset of the view lies inside the storage (host_ptr).
            unsafe { p.add(o).write(f()) };
        }
    }
    Ok(())
}

/// `t`'s elements filled in place from the generator.
fn fill_in_place<T: Scalar>(t: &Tensor<T>, g: &Generator, mut f: impl FnMut(&mut Mt19937) -> T) -> Result<()> {
    let v = t.view();
    let mut mt = g.lock();
    fill_seq(&v, || f(&mut mt))
}

#[inline]
fn from_i64<T: Scalar>(v: i64) -> T {
    T::from_prim(Prim::I(v))
}

/// The modulus `random` reduces the 32-bit output by (torch7's per-type table; Half and BFloat16
/// follow the Float/Double rule `2^mantissa_digits + 1`).
pub(super) fn random_modulus(d: DType) -> u64 {
    match d.format() {
        Format::UInt | Format::Int => 1 << d.digits(),
        Format::Float | Format::BFloat => (1 << d.digits()) + 1,
        Format::Bool => 2,
    }
}

/// The largest integer such that it and every integer below it down to 0 are exact in `d`.
fn max_exact_int(d: DType) -> i64 {
    match d.format() {
        Format::UInt | Format::Int => ((1u64 << d.digits()) - 1) as i64,
        Format::Float | Format::BFloat => 1 << d.digits(),
        Format::Bool => 1,
    }
}

/// `random() % modulus` per element (see `random_modulus`).
pub fn random<T: Num>(t: &Tensor<T>, g: &Generator) -> Result<()> {
    let m = random_modulus(T::DTYPE);
    fill_in_place(t, g, |mt| from_i64((mt.random() as u64 % m) as i64))
}

/// `(random() % (max - min)) + min`: integers in `[min, max)` (32 bits of randomness, as torch7).
pub fn clamped_random<T: Num>(t: &Tensor<T>, g: &Generator, min: i64, max: i64) -> Result<()> {
    if max <= min {
        return Err(Error::invalid(format!("max ({max}) must be greater than min ({min})")).at_arg(4));
    }
    let range = (max as i128 - min as i128) as u128;
    fill_in_place(t, g, |mt| from_i64((min as i128 + (mt.random() as u128 % range) as i128) as i64))
}

/// `clampedRandom(0, max)`.
pub fn capped_random<T: Num>(t: &Tensor<T>, g: &Generator, max: i64) -> Result<()> {
    if max <= 0 {
        return Err(Error::invalid(format!("max ({max}) must be positive")).at_arg(3));
    }
    clamped_random(t, g, 0, max)
}

pub fn geometric<T: Num>(t: &Tensor<T>, g: &Generator, p: f64) -> Result<()> {
    check_geometric(p, 3)?;
    fill_in_place(t, g, |mt| T::from_prim(Prim::F(mt.geometric(p))))
}

pub fn bernoulli<T: Num>(t: &Tensor<T>, g: &Generator, p: f64) -> Result<()> {
    check_prob(p, 3)?;
    fill_in_place(t, g, |mt| from_i64(mt.bernoulli(p) as i64))
}

/// Per-element probabilities from `p` (same element count, paired in row-major order; each in
/// [0, 1], checked before drawing).
pub fn bernoulli_tensor<T: Num, P: Num>(t: &Tensor<T>, g: &Generator, p: &View<P>) -> Result<()> {
    let v = t.view();
    if v.numel() != p.numel() {
        return Err(Error::size(format!(
            "probability tensor has {} elements (size {}) but the output has {} (size {})",
            p.numel(),
            size_desc(&p.sizes),
            v.numel(),
            size_desc(&v.sizes)
        ))
        .at_arg(3));
    }
    let ps: Vec<f64> = p.to_vec()?.into_iter().map(|x| x.to_f64()).collect();
    if let Some(bad) = ps.iter().find(|x| !(0.0..=1.0).contains(*x)) {
        return Err(Error::invalid(format!("probabilities must be in [0, 1], found {bad}")).at_arg(3));
    }
    let mut it = ps.into_iter();
    let mut mt = g.lock();
    fill_seq(&v, || from_i64(mt.bernoulli(it.next().unwrap_or(0.0)) as i64))
}

/// A float element type the random fills can write.
pub trait RandFloat: Float {
    /// The largest value of the type below `self` (finite, non-NaN `self`).
    fn next_below(self) -> Self;
}

macro_rules! next_below_impl {
    ($($T:ty, $sign:expr);*) => {$(
        impl RandFloat for $T {
            fn next_below(self) -> Self {
                let b = self.to_bits();
                if b & !$sign == 0 {
                    <$T>::from_bits($sign | 1) // +-0: the negative smallest subnormal
                } else if b & $sign == 0 {
                    <$T>::from_bits(b - 1)
                } else {
                    <$T>::from_bits(b + 1)
                }
            }
        }
    )*};
}
next_below_impl!(f32, 0x8000_0000u32; f64, 0x8000_0000_0000_0000u64; half::f16, 0x8000u16; half::bf16, 0x8000u16);

/// `uniform(a, b)` rounded to `T`, kept below `b`: where rounding to `T` would give a value
/// `>= b` (torch7 then returned `b`), the largest `T` below `b` is used instead.
fn uniform_fn<T: RandFloat>(a: f64, b: f64) -> impl Fn(&mut Mt19937) -> T {
    let mut below = T::from_f64(b);
    if below.to_f64() >= b {
        below = below.next_below();
    }
    let clamp = a < b && below.to_f64() >= a;
    move |mt| {
        let v = T::from_f64(mt.uniform(a, b));
        if clamp && v.to_f64() >= b { below } else { v }
    }
}

/// Uniform in `[a, b)`.
pub fn uniform<T: RandFloat>(t: &Tensor<T>, g: &Generator, a: f64, b: f64) -> Result<()> {
    check_range(a, b, 3)?;
    fill_in_place(t, g, uniform_fn(a, b))
}

pub fn normal<T: Float>(t: &Tensor<T>, g: &Generator, mean: f64, stdv: f64) -> Result<()> {
    check_stdv(stdv, 4)?;
    fill_in_place(t, g, |mt| T::from_f64(mt.normal(mean, stdv)))
}

/// `self` resized like `means`, `normal(0, stddev) + means` (computed in `T`, as torch7's
/// normal-then-cadd). `means` is read before anything is written, so it may be `self`.
pub fn normal_means<T: Float>(r: &Tensor<T>, g: &Generator, means: &View<T>, stddev: f64) -> Result<()> {
    check_stdv(stddev, 4)?;
    let ms = means.to_vec()?;
    let out = crate::ops::resize_out(r, &means.sizes)?;
    let mut it = ms.into_iter();
    let mut mt = g.lock();
    fill_seq(&out, || T::from_f64(mt.normal(0.0, stddev)).add(it.next().unwrap_or_else(T::zero)))
}

pub(super) fn check_stddevs<T: Num>(s: &[T], arg: u32) -> Result<()> {
    match s.iter().find(|x| x.to_f64().is_nan() || x.to_f64() < 0.0) {
        Some(bad) => Err(Error::invalid(format!("standard deviations must be >= 0, found {bad:?}")).at_arg(arg)),
        None => Ok(()),
    }
}

/// `self` resized like `stddevs`, `normal(0, 1) * stddevs + mean` (each stddev >= 0).
pub fn normal_stddevs<T: Float>(r: &Tensor<T>, g: &Generator, mean: f64, stddevs: &View<T>) -> Result<()> {
    let ss = stddevs.to_vec()?;
    check_stddevs(&ss, 4)?;
    let out = crate::ops::resize_out(r, &stddevs.sizes)?;
    let m = T::from_f64(mean);
    let mut it = ss.into_iter();
    let mut mt = g.lock();
    fill_seq(&out, || T::from_f64(mt.normal(0.0, 1.0)).mul(it.next().unwrap_or_else(T::zero)).add(m))
}

/// `normal(0, 1) * stddevs + means`, `means` and `stddevs` broadcast together (or paired in
/// row-major order when they have equal element counts), `self` resized to their shape.
pub fn normal_means_stddevs<T: Float>(r: &Tensor<T>, g: &Generator, means: &View<T>, stddevs: &View<T>) -> Result<()> {
    let (shape, vs) = crate::ops::broadcast_all(&[means, stddevs]).map_err(|e| e.at_arg(4))?;
    let ms = vs[0].to_vec()?;
    let ss = vs[1].to_vec()?;
    check_stddevs(&ss, 4)?;
    let out = crate::ops::resize_out(r, &shape)?;
    let mut it = ms.into_iter().zip(ss);
    let mut mt = g.lock();
    fill_seq(&out, || {
        let (m, s) = it.next().unwrap_or((T::zero(), T::zero()));
        T::from_f64(mt.normal(0.0, 1.0)).mul(s).add(m)
    })
}

pub fn exponential<T: Float>(t: &Tensor<T>, g: &Generator, lambda: f64) -> Result<()> {
    check_positive("lambda", lambda, 3)?;
    fill_in_place(t, g, |mt| T::from_f64(mt.exponential(lambda)))
}

pub fn cauchy<T: Float>(t: &Tensor<T>, g: &Generator, median: f64, sigma: f64) -> Result<()> {
    check_positive("sigma", sigma, 4)?;
    fill_in_place(t, g, |mt| T::from_f64(mt.cauchy(median, sigma)))
}

pub fn log_normal<T: Float>(t: &Tensor<T>, g: &Generator, mean: f64, stdv: f64) -> Result<()> {
    check_stdv(stdv, 4)?;
    fill_in_place(t, g, |mt| T::from_f64(mt.log_normal(mean, stdv)))
}

/// `r` resized to `sizes` (a TH size list), uniform in [0, 1).
pub fn rand<T: RandFloat>(r: &Tensor<T>, g: &Generator, sizes: &[i64]) -> Result<()> {
    let shape = parse_sizes(sizes).map_err(|e| e.at_arg(3))?;
    let out = crate::ops::resize_out(r, &shape)?;
    let f = uniform_fn::<T>(0.0, 1.0);
    let mut mt = g.lock();
    fill_seq(&out, || f(&mut mt))
}

/// `r` resized to `sizes`, standard normal.
pub fn randn<T: Float>(r: &Tensor<T>, g: &Generator, sizes: &[i64]) -> Result<()> {
    let shape = parse_sizes(sizes).map_err(|e| e.at_arg(3))?;
    let out = crate::ops::resize_out(r, &shape)?;
    let mut mt = g.lock();
    fill_seq(&out, || T::from_f64(mt.normal(0.0, 1.0)))
}

/// `r` resized to 1-D `n`: a random permutation of `0..n` (torch7's swap loop, 0-based).
pub fn randperm<T: Num>(r: &Tensor<T>, g: &Generator, n: i64) -> Result<()> {
    if n <= 0 {
        return Err(Error::invalid(format!("randperm: n must be strictly positive, got {n}")).at_arg(3));
    }
    let top = max_exact_int(T::DTYPE);
    if n - 1 > top {
        return Err(Error::invalid(format!(
            "randperm: n = {n} does not fit: {} holds every integer only up to {top}",
            T::DTYPE
        ))
        .at_arg(3));
    }
    let len = usize::try_from(n).map_err(|_| Error::alloc(format!("randperm: n = {n} is too large")))?;
    let out = crate::ops::resize_out(r, &[n])?;
    let mut perm: Vec<i64> = crate::core::limits::try_collect(len, 0..n)?;
    {
        let mut mt = g.lock();
        for i in 0..len.saturating_sub(1) {
            let z = (mt.random() as u64 % (len - i) as u64) as usize;
            perm.swap(i, i + z);
        }
    }
    let mut it = perm.into_iter();
    fill_seq(&out, || from_i64(it.next().unwrap_or(0)))
}

/// Checks one distribution (each entry finite and >= 0, the sum positive and finite) and
/// returns it as f64 with its sum.
fn check_dist(p: &[f64], what: &str, arg: u32) -> Result<f64> {
    if let Some(bad) = p.iter().find(|x| !(x.is_finite() && **x >= 0.0)) {
        return Err(Error::invalid(format!("invalid {what} (a probability is {bad}; each must be finite and >= 0)"))
            .at_arg(arg));
    }
    let sum: f64 = p.iter().sum();
    if !(sum > 0.0 && sum.is_finite()) {
        return Err(Error::invalid(format!("invalid {what} (the probabilities sum to {sum})")).at_arg(arg));
    }
    Ok(sum)
}

/// One multinomial draw from weights `w` (all >= 0, `total` > 0): torch7's normalised
/// cumulative distribution with a binary search for the first bucket whose cumulative mass is
/// >= u; never a zero-weight category.
fn draw_category(mt: &mut Mt19937, w: &[f64], cum: &mut [f64], total: f64) -> usize {
    let mut acc = 0.0;
    for (c, &x) in cum.iter_mut().zip(w) {
        acc += x;
        *c = acc / total;
    }
    // The last category with weight gets everything up to 1 (torch7 forces the last bucket to 1).
    let last = w.iter().rposition(|&x| x > 0.0).unwrap_or(w.len() - 1);
    for c in &mut cum[last..] {
        *c = 1.0;
    }
    let u = mt.uniform(0.0, 1.0);
    let (mut lo, mut hi) = (0usize, w.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if cum[mid] < u { lo = mid + 1 } else { hi = mid }
    }
    let mut k = lo.min(last);
    while w[k] <= 0.0 && k < last {
        k += 1; // only when u == 0 falls on leading zero-weight buckets
    }
    k
}

/// The checks of `multinomial` (shared with the device version): `prob` (sizes `sizes`, values
/// `p` in row-major order) 1-D or 2-D with valid rows, `n_sample` positive and, without
/// replacement, at most each row's count of nonzero weights. Returns (rows, categories, the
/// rows' sums). `arg_p`, `arg_n`: the argument positions of `prob` and `n_sample`.
pub(crate) fn check_multinomial(
    sizes: &[i64],
    p: &[f64],
    n_sample: i32,
    with_replacement: bool,
    arg_p: u32,
    arg_n: u32,
) -> Result<(usize, usize, Vec<f64>)> {
    let (n_dist, n_cat) = match sizes[..] {
        [c] => (1usize, c as usize),
        [d, c] => (d as usize, c as usize),
        _ => {
            return Err(
                Error::size(format!("prob_dist must be 1-D or 2-D, got size {}", size_desc(sizes))).at_arg(arg_p)
            );
        }
    };
    if n_cat == 0 {
        return Err(Error::size("prob_dist has no categories").at_arg(arg_p));
    }
    if n_sample <= 0 {
        return Err(Error::invalid(format!("cannot sample n_sample = {n_sample} <= 0 samples")).at_arg(arg_n));
    }
    let ns = n_sample as usize;
    if !with_replacement && ns > n_cat {
        return Err(Error::invalid(format!(
            "cannot sample n_sample = {n_sample} > {n_cat} categories without replacement"
        ))
        .at_arg(arg_n));
    }
    let mut sums = Vec::with_capacity(n_dist);
    for (i, row) in p.chunks(n_cat).enumerate() {
        sums.push(check_dist(row, &format!("multinomial distribution (row {i})"), arg_p)?);
        let nonzero = row.iter().filter(|&&x| x > 0.0).count();
        if !with_replacement && ns > nonzero {
            return Err(Error::invalid(format!(
                "cannot sample n_sample = {n_sample} without replacement from row {i}, which has only \
                 {nonzero} categories with nonzero probability"
            ))
            .at_arg(arg_n));
        }
    }
    Ok((n_dist, n_cat, sums))
}

/// `self` (Long) resized to `(n_dist, n_sample)` (or `(n_sample)` for a 1-D `prob`): 0-based
/// category indices drawn from each row of `prob` (weights, normalised per row).
pub fn multinomial<T: Float>(
    out: &Tensor<i64>,
    g: &Generator,
    prob: &View<T>,
    n_sample: i32,
    with_replacement: bool,
) -> Result<()> {
    let p: Vec<f64> = prob.to_vec()?.into_iter().map(|x| x.to_f64()).collect();
    let (n_dist, n_cat, sums) = check_multinomial(&prob.sizes, &p, n_sample, with_replacement, 3, 4)?;
    let ns = n_sample as usize;
    let shape: Vec<i64> = if prob.ndim() == 1 { vec![ns as i64] } else { vec![n_dist as i64, ns as i64] };
    let cells =
        n_dist.checked_mul(ns).ok_or_else(|| Error::size(format!("multinomial: {n_dist} x {ns} samples overflow")))?;
    let mut res = crate::core::limits::try_vec(cells)?;
    {
        let mut mt = g.lock();
        let mut cum = vec![0.0; n_cat];
        for (row, &sum) in p.chunks(n_cat).zip(&sums) {
            if with_replacement {
                for _ in 0..ns {
                    res.push(draw_category(&mut mt, row, &mut cum, sum) as i64);
                }
            } else {
                let mut w = row.to_vec();
                let mut total = sum;
                for _ in 0..ns {
                    let k = draw_category(&mut mt, &w, &mut cum, total);
                    res.push(k as i64);
                    w[k] = 0.0;
                    total = w.iter().sum();
                }
            }
        }
    }
    let view = crate::ops::resize_out(out, &shape)?;
    let mut it = res.into_iter();
    fill_seq(&view, || it.next().unwrap_or(0))
}

/// Walker/Vose alias tables for the distribution `prob` (any shape, its elements in row-major
/// order; weights normalised): `J` (Long) and `q` resized to 1-D of `prob`'s element count.
/// Category `k` is drawn as: `k` with probability `q[k]`, else `J[k]`.
pub fn multinomial_alias_setup<T: Float>(prob: &View<T>, j_out: &Tensor<i64>, q_out: &Tensor<T>) -> Result<()> {
    let k = prob.numel();
    if k == 0 {
        return Err(Error::size("prob_dist is empty").at_arg(1));
    }
    let p: Vec<f64> = prob.to_vec()?.into_iter().map(|x| x.to_f64()).collect();
    let sum = check_dist(&p, "multinomial distribution", 1)?;
    let mut q: Vec<f64> = p.iter().map(|&x| x * k as f64 / sum).collect();
    let mut j: Vec<i64> = (0..k as i64).collect();
    let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..k).partition(|&i| q[i] < 1.0);
    while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
        small.pop();
        j[s] = l as i64;
        q[l] -= 1.0 - q[s];
        if q[l] < 1.0 {
            large.pop();
            small.push(l);
        }
    }
    // What is left over is 1 up to rounding.
    for i in small.into_iter().chain(large) {
        q[i] = 1.0;
    }
    let jv = crate::ops::resize_out(j_out, &[k as i64])?;
    let qv = crate::ops::resize_out(q_out, &[k as i64])?;
    let mut ji = j.into_iter();
    fill_seq(&jv, || ji.next().unwrap_or(0))?;
    let mut qi = q.into_iter();
    fill_seq(&qv, || T::from_f64(qi.next().unwrap_or(1.0)))
}

/// Every element of `self` (in place) drawn with the alias tables `J`, `q`: `k = floor(u * K)`
/// then `k` if `bernoulli(q[k])` else `J[k]` (two draws per sample, as torch7).
pub fn multinomial_alias_draw<T: Float>(out: &Tensor<i64>, g: &Generator, j: &View<i64>, q: &View<T>) -> Result<()> {
    let k = j.numel();
    if k == 0 || q.numel() != k {
        return Err(Error::size(format!(
            "alias tables J (size {}) and q (size {}) must be non-empty with equal element counts",
            size_desc(&j.sizes),
            size_desc(&q.sizes)
        ))
        .at_arg(3));
    }
    let jv = j.to_vec()?;
    if let Some(bad) = jv.iter().find(|&&x| x < 0 || x >= k as i64) {
        return Err(Error::index(format!("alias table J holds {bad}, outside [0, {k})")).at_arg(3));
    }
    let qv: Vec<f64> = q.to_vec()?.into_iter().map(|x| x.to_f64()).collect();
    if let Some(bad) = qv.iter().find(|x| !(0.0..=1.0).contains(*x)) {
        return Err(Error::invalid(format!("alias table q holds {bad}, outside [0, 1]")).at_arg(4));
    }
    let v = out.view();
    let mut mt = g.lock();
    fill_seq(&v, || {
        let i = (mt.uniform(0.0, k as f64) as usize).min(k - 1);
        if mt.bernoulli(qv[i]) { i as i64 } else { jv[i] }
    })
}

/// `self` (Byte) resized to `STATE_BYTES`: the generator state (torch7's struct layout).
pub fn get_rng_state(g: &Generator, out: &Tensor<u8>) -> Result<()> {
    let bytes = g.state().to_bytes();
    let v = crate::ops::resize_out(out, &[STATE_BYTES as i64])?;
    let mut it = bytes.into_iter();
    fill_seq(&v, || it.next().unwrap_or(0))
}

/// The generator state from `src` (`STATE_BYTES` elements, any layout), validated first.
pub fn set_rng_state(g: &Generator, src: &View<u8>) -> Result<()> {
    if src.numel() != STATE_BYTES {
        return Err(Error::size(format!("RNG state must have {STATE_BYTES} elements, got {}", src.numel())).at_arg(2));
    }
    let s = Mt19937::from_bytes(&src.to_vec()?).map_err(|e| e.at_arg(2))?;
    g.set_state(s);
    Ok(())
}
