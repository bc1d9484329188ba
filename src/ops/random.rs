//! Random numbers (`THRandom.h`, `generic/THTensorRandom.h`): torch7's MT19937 generator,
//! reproducing its streams bit for bit, and the tensor fills built on it.
//!
//! `Mt19937` is the generator state, field for field torch7's `THGenerator` (Cokus-style
//! `left`/`next` bookkeeping, the cached second Box-Muller value). `Generator` is the shared
//! object behind a C `THGenerator *`: the state behind a mutex, so one generator may be used from
//! several threads (each call sees a consistent state; the interleaving is the callers').
//!
//! Every tensor fill draws from the generator sequentially, one element after the other in
//! row-major order (TH_TENSOR_APPLY's order), holding the lock for the whole fill: results depend
//! only on the seed, never on the thread count. Parameters are checked before anything is
//! written or resized, so a failing call leaves its outputs untouched.

use super::num::{Float, Num};
use crate::core::dtype::{DType, Prim, Scalar};
use crate::core::error::{Error, Result};
use crate::core::geometry::Offsets;
use crate::core::tensor::{Tensor, View, parse_sizes, size_desc};
use std::sync::{Mutex, MutexGuard};

/// MT19937 state length (torch7's `THRandom.h` name).
pub const _MERSENNE_STATE_N: usize = 624;
/// MT19937 shift (torch7's `THRandom.h` name).
pub const _MERSENNE_STATE_M: usize = 397;
const N: usize = _MERSENNE_STATE_N;
const M: usize = _MERSENNE_STATE_M;
const MATRIX_A: u32 = 0x9908_b0df;
const UMASK: u32 = 0x8000_0000;
const LMASK: u32 = 0x7fff_ffff;

/// Byte length of the serialised state: `sizeof(THGenerator)` of torch7 on LP64.
pub(crate) const STATE_BYTES: usize = 5048;

/// torch7's generator state.
#[derive(Clone, Debug, PartialEq)]
pub struct Mt19937 {
    initial_seed: u64,
    /// Draws left before the next refill (1 right after seeding: the first draw refills).
    left: u32,
    seeded: bool,
    /// Index of the next state word to temper.
    next: u32,
    state: [u32; N],
    normal_x: f64,
    normal_y: f64,
    normal_rho: f64,
    normal_is_valid: bool,
}

#[inline]
fn twist(u: u32, v: u32) -> u32 {
    (((u & UMASK) | (v & LMASK)) >> 1) ^ if v & 1 != 0 { MATRIX_A } else { 0 }
}

fn check_stdv(stdv: f64, arg: u32) -> Result<()> {
    if stdv > 0.0 {
        Ok(())
    } else {
        Err(Error::invalid(format!("standard deviation must be strictly positive, got {stdv}")).at_arg(arg))
    }
}

fn check_prob(p: f64, arg: u32) -> Result<()> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(Error::invalid(format!("probability must be in [0, 1], got {p}")).at_arg(arg))
    }
}

fn check_geometric(p: f64, arg: u32) -> Result<()> {
    if p > 0.0 && p < 1.0 {
        Ok(())
    } else {
        Err(Error::invalid(format!("geometric parameter p must be in (0, 1), got {p}")).at_arg(arg))
    }
}

fn check_positive(what: &str, v: f64, arg: u32) -> Result<()> {
    if v > 0.0 { Ok(()) } else { Err(Error::invalid(format!("{what} must be strictly positive, got {v}")).at_arg(arg)) }
}

fn check_range(a: f64, b: f64, arg: u32) -> Result<()> {
    if a <= b && a.is_finite() && b.is_finite() {
        Ok(())
    } else {
        Err(Error::invalid(format!("uniform range [{a}, {b}) is invalid: need finite a <= b")).at_arg(arg))
    }
}

impl Mt19937 {
    /// The state `manualSeed(seed)` makes.
    pub fn with_seed(seed: u64) -> Self {
        let mut state = [0u32; N];
        state[0] = seed as u32;
        for j in 1..N {
            let p = state[j - 1];
            state[j] = 1_812_433_253u32.wrapping_mul(p ^ (p >> 30)).wrapping_add(j as u32);
        }
        Mt19937 {
            initial_seed: seed,
            left: 1,
            seeded: true,
            next: 0,
            state,
            normal_x: 0.0,
            normal_y: 0.0,
            normal_rho: 0.0,
            normal_is_valid: false,
        }
    }

    pub fn initial_seed(&self) -> u64 {
        self.initial_seed
    }

    /// Refills the state (torch7's `THRandom_nextState`).
    fn next_state(&mut self) {
        let s = &mut self.state;
        for j in 0..N - M {
            s[j] = s[j + M] ^ twist(s[j], s[j + 1]);
        }
        for j in N - M..N - 1 {
            s[j] = s[j + M - N] ^ twist(s[j], s[j + 1]);
        }
        s[N - 1] = s[M - 1] ^ twist(s[N - 1], s[0]);
        self.left = N as u32;
        self.next = 0;
    }

    /// The next tempered 32-bit output (`THRandom_random`).
    #[inline]
    pub fn random(&mut self) -> u32 {
        self.left -= 1;
        if self.left == 0 {
            self.next_state();
        }
        let mut y = self.state[self.next as usize];
        self.next += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^= y >> 18;
        y
    }

    /// `random() / 2^32`, in [0, 1).
    #[inline]
    fn unit(&mut self) -> f64 {
        self.random() as f64 * (1.0 / 4_294_967_296.0)
    }

    /// `THRandom_uniform` (unchecked): `u * (b - a) + a`.
    #[inline]
    pub fn uniform(&mut self, a: f64, b: f64) -> f64 {
        self.unit() * (b - a) + a
    }

    /// `THRandom_normal` (unchecked): Box-Muller in pairs, the second value cached.
    #[inline]
    pub fn normal(&mut self, mean: f64, stdv: f64) -> f64 {
        if !self.normal_is_valid {
            self.normal_x = self.unit();
            self.normal_y = self.unit();
            self.normal_rho = (-2.0 * (1.0 - self.normal_y).ln()).sqrt();
            self.normal_is_valid = true;
            self.normal_rho * (2.0 * std::f64::consts::PI * self.normal_x).cos() * stdv + mean
        } else {
            self.normal_is_valid = false;
            self.normal_rho * (2.0 * std::f64::consts::PI * self.normal_x).sin() * stdv + mean
        }
    }

    /// `THRandom_exponential` (unchecked).
    #[inline]
    pub fn exponential(&mut self, lambda: f64) -> f64 {
        (-1.0 / lambda) * (1.0 - self.unit()).ln()
    }

    /// `THRandom_cauchy` (unchecked).
    #[inline]
    pub fn cauchy(&mut self, median: f64, sigma: f64) -> f64 {
        median + sigma * (std::f64::consts::PI * (self.unit() - 0.5)).tan()
    }

    /// `THRandom_logNormal` (unchecked).
    #[inline]
    pub fn log_normal(&mut self, mean: f64, stdv: f64) -> f64 {
        self.normal(mean, stdv).exp()
    }

    /// `THRandom_geometric` (unchecked) as a double: `trunc(log(1-u) / log(p)) + 1`, so
    /// `P(X = i) = (1-p) p^(i-1)` (torch7's convention: `p` is the probability of another trial,
    /// the mean is `1/(1-p)`).
    #[inline]
    pub fn geometric(&mut self, p: f64) -> f64 {
        ((1.0 - self.unit()).ln() / p.ln()).trunc() + 1.0
    }

    /// `THRandom_bernoulli` (unchecked): `u <= p`, except that `p == 0` is never true.
    #[inline]
    pub fn bernoulli(&mut self, p: f64) -> bool {
        let u = self.unit();
        u <= p && p > 0.0
    }

    /// The state as torch7's `THGenerator` struct bytes on LP64 (`getRNGState`): seed @0,
    /// left @8, seeded @12, next @16, state[624] as 64-bit words @24, normal_x/y/rho @5016..5040,
    /// normal_is_valid @5040, 4 bytes of zero padding.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(STATE_BYTES);
        b.extend_from_slice(&self.initial_seed.to_ne_bytes());
        b.extend_from_slice(&(self.left as i32).to_ne_bytes());
        b.extend_from_slice(&(self.seeded as i32).to_ne_bytes());
        b.extend_from_slice(&(self.next as u64).to_ne_bytes());
        for &w in &self.state {
            b.extend_from_slice(&(w as u64).to_ne_bytes());
        }
        for x in [self.normal_x, self.normal_y, self.normal_rho] {
            b.extend_from_slice(&x.to_ne_bytes());
        }
        b.extend_from_slice(&(self.normal_is_valid as i32).to_ne_bytes());
        b.extend_from_slice(&[0u8; 4]);
        debug_assert_eq!(b.len(), STATE_BYTES);
        b
    }

    /// Parses `to_bytes`' layout, rejecting states torch7's `isValid` rejects and every state
    /// that could make a later draw read outside the state array.
    pub fn from_bytes(b: &[u8]) -> Result<Self> {
        if b.len() != STATE_BYTES {
            return Err(Error::size(format!("RNG state must be {STATE_BYTES} bytes, got {}", b.len())));
        }
        let u64_at = |o: usize| u64::from_ne_bytes(b[o..o + 8].try_into().unwrap_or_default());
        let i32_at = |o: usize| i32::from_ne_bytes(b[o..o + 4].try_into().unwrap_or_default());
        let invalid = |why: &str| Error::invalid(format!("invalid RNG state: {why}"));
        let (left, seeded, next) = (i32_at(8), i32_at(12), u64_at(16));
        if seeded != 1 {
            return Err(invalid("not seeded"));
        }
        if !(1..=N as i32).contains(&left) || next > N as u64 || next + left as u64 > N as u64 + 1 {
            return Err(invalid(&format!("position (left {left}, next {next}) is out of range")));
        }
        let mut state = [0u32; N];
        for (j, w) in state.iter_mut().enumerate() {
            let v = u64_at(24 + 8 * j);
            *w = u32::try_from(v).map_err(|_| invalid(&format!("state word {j} ({v}) exceeds 32 bits")))?;
        }
        let f64_at = |o: usize| f64::from_bits(u64_at(o));
        let valid = i32_at(5040);
        if valid != 0 && valid != 1 {
            return Err(invalid("normal cache flag is not 0 or 1"));
        }
        Ok(Mt19937 {
            initial_seed: u64_at(0),
            left: left as u32,
            seeded: true,
            next: next as u32,
            state,
            normal_x: f64_at(5016),
            normal_y: f64_at(5024),
            normal_rho: f64_at(5032),
            normal_is_valid: valid == 1,
        })
    }

    /// torch7's `THGenerator_isValid`.
    pub fn is_valid(&self) -> bool {
        self.seeded && (1..=N as u32).contains(&self.left) && self.next <= N as u32
    }
}

/// 64 bits from the OS (`/dev/urandom`, as torch7), else from the standard library's
/// randomly keyed hasher.
pub fn os_seed() -> u64 {
    use std::io::Read;
    let mut b = [0u8; 8];
    if std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b)).is_ok() {
        return u64::from_ne_bytes(b);
    }
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.finish()
}

/// The object behind a C `THGenerator *`.
pub struct Generator {
    mt: Mutex<Mt19937>,
}

impl Default for Generator {
    fn default() -> Self {
        Self::new()
    }
}

impl Generator {
    /// A generator seeded from the OS (`THGenerator_new`).
    pub fn new() -> Self {
        Self::with_seed(os_seed())
    }

    pub fn with_seed(seed: u64) -> Self {
        Generator { mt: Mutex::new(Mt19937::with_seed(seed)) }
    }

    /// Exclusive access to the state (a poisoned lock is recovered: every state is valid).
    pub fn lock(&self) -> MutexGuard<'_, Mt19937> {
        self.mt.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A copy of the state.
    pub fn state(&self) -> Mt19937 {
        self.lock().clone()
    }

    pub fn set_state(&self, s: Mt19937) {
        *self.lock() = s;
    }

    /// `THRandom_manualSeed`: resets everything, including the cached normal.
    pub fn manual_seed(&self, seed: u64) {
        self.set_state(Mt19937::with_seed(seed));
    }

    /// `THRandom_seed`: reseeds from the OS and returns the seed.
    pub fn seed(&self) -> u64 {
        let s = os_seed();
        self.manual_seed(s);
        s
    }

    pub fn uniform(&self, a: f64, b: f64) -> Result<f64> {
        check_range(a, b, 2)?;
        Ok(self.lock().uniform(a, b))
    }

    pub fn normal(&self, mean: f64, stdv: f64) -> Result<f64> {
        check_stdv(stdv, 3)?;
        Ok(self.lock().normal(mean, stdv))
    }

    pub fn exponential(&self, lambda: f64) -> Result<f64> {
        check_positive("lambda", lambda, 2)?;
        Ok(self.lock().exponential(lambda))
    }

    pub fn cauchy(&self, median: f64, sigma: f64) -> Result<f64> {
        check_positive("sigma", sigma, 3)?;
        Ok(self.lock().cauchy(median, sigma))
    }

    pub fn log_normal(&self, mean: f64, stdv: f64) -> Result<f64> {
        check_stdv(stdv, 3)?;
        Ok(self.lock().log_normal(mean, stdv))
    }

    /// As an `int` (saturating, where torch7's cast was undefined).
    pub fn geometric(&self, p: f64) -> Result<i32> {
        check_geometric(p, 2)?;
        Ok(self.lock().geometric(p) as i32)
    }

    pub fn bernoulli(&self, p: f64) -> Result<bool> {
        check_prob(p, 2)?;
        Ok(self.lock().bernoulli(p))
    }
}

// ---------------------------------------------------------------------------------------------
// Tensor fills

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
fn random_modulus(d: DType) -> u64 {
    match d {
        DType::Byte => 1 << 8,
        DType::Char => 1 << 7,
        DType::Short => 1 << 15,
        DType::Int => 1 << 31,
        DType::Long => 1 << 63,
        DType::Float => (1 << 24) + 1,
        DType::Double => (1 << 53) + 1,
        DType::Half => (1 << 11) + 1,
        DType::BFloat16 => (1 << 8) + 1,
        DType::Bool => 2,
    }
}

/// The largest integer such that it and every integer below it down to 0 are exact in `d`.
fn max_exact_int(d: DType) -> i64 {
    match d {
        DType::Byte => u8::MAX as i64,
        DType::Char => i8::MAX as i64,
        DType::Short => i16::MAX as i64,
        DType::Int => i32::MAX as i64,
        DType::Long => i64::MAX,
        DType::Float => 1 << 24,
        DType::Double => 1 << 53,
        DType::Half => 1 << 11,
        DType::BFloat16 => 1 << 8,
        DType::Bool => 1,
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
    let out = super::resize_out(r, &means.sizes)?;
    let mut it = ms.into_iter();
    let mut mt = g.lock();
    fill_seq(&out, || T::from_f64(mt.normal(0.0, stddev)).add(it.next().unwrap_or_else(T::zero)))
}

fn check_stddevs<T: Num>(s: &[T], arg: u32) -> Result<()> {
    match s.iter().find(|x| x.to_f64().is_nan() || x.to_f64() < 0.0) {
        Some(bad) => Err(Error::invalid(format!("standard deviations must be >= 0, found {bad:?}")).at_arg(arg)),
        None => Ok(()),
    }
}

/// `self` resized like `stddevs`, `normal(0, 1) * stddevs + mean` (each stddev >= 0).
pub fn normal_stddevs<T: Float>(r: &Tensor<T>, g: &Generator, mean: f64, stddevs: &View<T>) -> Result<()> {
    let ss = stddevs.to_vec()?;
    check_stddevs(&ss, 4)?;
    let out = super::resize_out(r, &stddevs.sizes)?;
    let m = T::from_f64(mean);
    let mut it = ss.into_iter();
    let mut mt = g.lock();
    fill_seq(&out, || T::from_f64(mt.normal(0.0, 1.0)).mul(it.next().unwrap_or_else(T::zero)).add(m))
}

/// `normal(0, 1) * stddevs + means`, `means` and `stddevs` broadcast together (or paired in
/// row-major order when they have equal element counts), `self` resized to their shape.
pub fn normal_means_stddevs<T: Float>(r: &Tensor<T>, g: &Generator, means: &View<T>, stddevs: &View<T>) -> Result<()> {
    let (shape, vs) = super::broadcast_all(&[means, stddevs]).map_err(|e| e.at_arg(4))?;
    let ms = vs[0].to_vec()?;
    let ss = vs[1].to_vec()?;
    check_stddevs(&ss, 4)?;
    let out = super::resize_out(r, &shape)?;
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
    let out = super::resize_out(r, &shape)?;
    let f = uniform_fn::<T>(0.0, 1.0);
    let mut mt = g.lock();
    fill_seq(&out, || f(&mut mt))
}

/// `r` resized to `sizes`, standard normal.
pub fn randn<T: Float>(r: &Tensor<T>, g: &Generator, sizes: &[i64]) -> Result<()> {
    let shape = parse_sizes(sizes).map_err(|e| e.at_arg(3))?;
    let out = super::resize_out(r, &shape)?;
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
    let out = super::resize_out(r, &[n])?;
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

/// `self` (Long) resized to `(n_dist, n_sample)` (or `(n_sample)` for a 1-D `prob`): 0-based
/// category indices drawn from each row of `prob` (weights, normalised per row).
pub fn multinomial<T: Float>(
    out: &Tensor<i64>,
    g: &Generator,
    prob: &View<T>,
    n_sample: i32,
    with_replacement: bool,
) -> Result<()> {
    let (n_dist, n_cat) = match prob.sizes[..] {
        [c] => (1usize, c as usize),
        [d, c] => (d as usize, c as usize),
        _ => {
            return Err(
                Error::size(format!("prob_dist must be 1-D or 2-D, got size {}", size_desc(&prob.sizes))).at_arg(3)
            );
        }
    };
    if n_sample <= 0 {
        return Err(Error::invalid(format!("cannot sample n_sample = {n_sample} <= 0 samples")).at_arg(4));
    }
    let ns = n_sample as usize;
    if !with_replacement && ns > n_cat {
        return Err(Error::invalid(format!(
            "cannot sample n_sample = {n_sample} > {n_cat} categories without replacement"
        ))
        .at_arg(4));
    }
    let p: Vec<f64> = prob.to_vec()?.into_iter().map(|x| x.to_f64()).collect();
    let mut sums = Vec::with_capacity(n_dist);
    for (i, row) in p.chunks(n_cat).enumerate() {
        sums.push(check_dist(row, &format!("multinomial distribution (row {i})"), 3)?);
        let nonzero = row.iter().filter(|&&x| x > 0.0).count();
        if !with_replacement && ns > nonzero {
            return Err(Error::invalid(format!(
                "cannot sample n_sample = {n_sample} without replacement from row {i}, which has only \
                 {nonzero} categories with nonzero probability"
            ))
            .at_arg(4));
        }
    }
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
    let view = super::resize_out(out, &shape)?;
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
    let jv = super::resize_out(j_out, &[k as i64])?;
    let qv = super::resize_out(q_out, &[k as i64])?;
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
    let v = super::resize_out(out, &[STATE_BYTES as i64])?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor<T: Scalar>(sizes: &[i64]) -> crate::core::refcount::Rc<Tensor<T>> {
        Tensor::new(View::contiguous(sizes).unwrap())
    }

    #[test]
    fn mt19937_streams_match_the_reference() {
        // The reference MT19937 (init_genrand(5489)): first outputs and the 10000th.
        let mut mt = Mt19937::with_seed(5489);
        assert_eq!(mt.random(), 3_499_211_612);
        assert_eq!(mt.random(), 581_869_302);
        for _ in 2..9999 {
            mt.random();
        }
        assert_eq!(mt.random(), 4_123_659_995);
        // torch7 probes (TH_API.md §14.6).
        let g = Generator::with_seed(42);
        let v: Vec<u32> = (0..3).map(|_| g.lock().random()).collect();
        assert_eq!(v, [1_608_637_542, 3_421_126_067, 4_083_286_876]);
        g.manual_seed(42);
        let exact = |s: &str| s.parse::<f64>().unwrap();
        assert_eq!(g.uniform(0.0, 1.0).unwrap(), exact("0.37454011430963874"));
        assert_libm_eq(g.normal(0.0, 1.0).unwrap(), exact("0.70734813624035553"));
        assert_libm_eq(g.normal(0.0, 1.0).unwrap(), exact("-2.3494471019969621"));
        let t = tensor::<f32>(&[3]);
        g.manual_seed(1);
        uniform(&t, &g, 0.0, 1.0).unwrap();
        // printed with %.9g by the probe: identifies each float uniquely
        for (x, want) in t.view().to_vec().unwrap().into_iter().zip(["0.41702199", "0.997184813", "0.720324516"]) {
            assert!((x as f64 - exact(want)).abs() < 1e-9, "{x} vs {want}");
        }
    }

    /// Equality of values computed through libm (log, sin, cos in the normal draws): bit for
    /// bit natively; within 1e-12 under Miri, which gives libm functions a random few ulp of
    /// error on every call.
    fn assert_libm_eq(a: f64, b: f64) {
        if cfg!(miri) {
            assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} vs {b}");
        } else {
            assert_eq!(a, b);
        }
    }

    #[test]
    fn seeding_resets_the_normal_cache_and_uses_the_low_32_bits() {
        let g = Generator::with_seed(7);
        g.normal(0.0, 1.0).unwrap();
        g.manual_seed(7);
        let a = g.normal(0.0, 1.0).unwrap();
        assert_libm_eq(a, Generator::with_seed(7).normal(0.0, 1.0).unwrap());
        let hi = Generator::with_seed((1 << 40) | 7);
        assert_eq!(hi.lock().random(), Generator::with_seed(7).lock().random());
        assert_eq!(hi.state().initial_seed(), (1 << 40) | 7);
    }

    #[test]
    fn state_bytes_round_trip_and_validation() {
        let g = Generator::with_seed(3);
        for _ in 0..700 {
            g.lock().random();
        }
        g.normal(0.0, 1.0).unwrap();
        let s = g.state();
        let b = s.to_bytes();
        assert_eq!(b.len(), STATE_BYTES);
        assert_eq!(Mt19937::from_bytes(&b).unwrap(), s);
        assert!(s.is_valid());
        let mut bad = b.clone();
        bad[12] = 0; // seeded
        assert!(Mt19937::from_bytes(&bad).is_err());
        let mut bad = b.clone();
        bad[8..12].copy_from_slice(&625i32.to_ne_bytes());
        assert!(Mt19937::from_bytes(&bad).is_err());
        let mut bad = b.clone();
        bad[8..12].copy_from_slice(&5i32.to_ne_bytes());
        bad[16..24].copy_from_slice(&624u64.to_ne_bytes()); // would read past the state
        assert!(Mt19937::from_bytes(&bad).is_err());
        let mut bad = b.clone();
        bad[24 + 4] = 1; // a state word above 32 bits
        assert!(Mt19937::from_bytes(&bad).is_err());
        assert!(Mt19937::from_bytes(&b[1..]).is_err());
    }

    #[test]
    fn parameters_are_checked() {
        let g = Generator::with_seed(1);
        assert!(g.normal(0.0, 0.0).is_err());
        assert!(g.normal(0.0, f64::NAN).is_err());
        assert!(g.bernoulli(1.5).is_err());
        assert!(g.geometric(0.0).is_err());
        assert!(g.geometric(1.0).is_err());
        assert!(g.exponential(-1.0).is_err());
        assert!(g.uniform(1.0, 0.0).is_err());
        let before = g.state();
        let t = tensor::<f64>(&[4]);
        assert!(normal(&t, &g, 0.0, -1.0).is_err());
        assert!(bernoulli(&t, &g, -0.1).is_err());
        assert!(randperm(&t, &g, 0).is_err());
        assert!(randperm(&tensor::<u8>(&[1]), &g, 257).is_err());
        randperm(&tensor::<u8>(&[1]), &Generator::with_seed(1), 256).unwrap();
        assert!(clamped_random(&t, &g, 5, 5).is_err());
        assert_eq!(g.state(), before, "failed calls must not draw");
    }

    #[test]
    fn bernoulli_zero_and_one_are_exact() {
        let g = Generator::with_seed(11);
        let t = tensor::<u8>(&[1000]);
        bernoulli(&t, &g, 0.0).unwrap();
        assert!(t.view().to_vec().unwrap().iter().all(|&x| x == 0));
        bernoulli(&t, &g, 1.0).unwrap();
        assert!(t.view().to_vec().unwrap().iter().all(|&x| x == 1));
    }

    #[test]
    fn integer_fills_stay_in_range() {
        let g = Generator::with_seed(5);
        let t = tensor::<i8>(&[1000]);
        random(&t, &g).unwrap();
        assert!(t.view().to_vec().unwrap().iter().all(|&x| x >= 0));
        let l = tensor::<i64>(&[1000]);
        clamped_random(&l, &g, -7, 3).unwrap();
        let v = l.view().to_vec().unwrap();
        assert!(v.iter().all(|&x| (-7..3).contains(&x)));
        assert!(v.contains(&-7) && v.contains(&2));
        clamped_random(&l, &g, i64::MIN, i64::MAX).unwrap();
        let h = tensor::<half::f16>(&[1000]);
        random(&h, &g).unwrap();
        assert!(h.view().to_vec().unwrap().iter().all(|x| x.to_f64() <= 2048.0 && x.to_f64().fract() == 0.0));
    }

    #[test]
    fn uniform_stays_below_b_after_rounding() {
        let g = Generator::with_seed(9);
        let t = tensor::<half::bf16>(&[20000]);
        uniform(&t, &g, 0.0, 1.0).unwrap();
        assert!(t.view().to_vec().unwrap().iter().all(|x| (0.0..1.0).contains(&x.to_f64())));
        assert_eq!(0.0f32.next_below(), -f32::from_bits(1));
        assert_eq!(1.0f64.next_below(), 1.0 - f64::EPSILON / 2.0);
        assert_eq!((-1.0f32).next_below(), -1.0 - f32::EPSILON);
    }

    #[test]
    fn randperm_is_a_permutation() {
        let g = Generator::with_seed(2);
        let t = tensor::<i32>(&[1]);
        randperm(&t, &g, 1000).unwrap();
        let mut v = t.view().to_vec().unwrap();
        assert_eq!(t.view().sizes, [1000]);
        v.sort();
        assert_eq!(v, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn multinomial_respects_zeros_and_replacement() {
        let g = Generator::with_seed(4);
        let p = View::from_slice(&[0.0f64, 1.0, 0.0, 3.0, 0.0], &[5]).unwrap();
        let out = tensor::<i64>(&[1]);
        multinomial(&out, &g, &p, 4000, true).unwrap();
        let v = out.view().to_vec().unwrap();
        assert!(v.iter().all(|&x| x == 1 || x == 3));
        let ones = v.iter().filter(|&&x| x == 1).count() as f64 / 4000.0;
        assert!((ones - 0.25).abs() < 0.04, "{ones}");
        multinomial(&out, &g, &p, 2, false).unwrap();
        let mut w = out.view().to_vec().unwrap();
        w.sort();
        assert_eq!(w, [1, 3]);
        assert!(multinomial(&out, &g, &p, 3, false).is_err());
        let p2 = View::from_slice(&[1.0f32, 1.0, 1.0, 1.0, 2.0, 3.0], &[2, 3]).unwrap();
        multinomial(&out, &g, &p2, 3, false).unwrap();
        assert_eq!(out.view().sizes, [2, 3]);
        for row in out.view().to_vec().unwrap().chunks(3) {
            let mut r = row.to_vec();
            r.sort();
            assert_eq!(r, [0, 1, 2]);
        }
        let sparse = View::from_slice(&[1.0f32, 1.0, 1.0, 1.0, 0.0, 0.0], &[2, 3]).unwrap();
        assert!(multinomial(&out, &g, &sparse, 3, false).is_err());
        assert_eq!(out.view().sizes, [2, 3], "a failed call leaves the output alone");
        let neg = View::from_slice(&[1.0f32, -1.0], &[2]).unwrap();
        assert!(multinomial(&out, &g, &neg, 1, true).is_err());
        let zero = View::from_slice(&[0.0f32, 0.0], &[2]).unwrap();
        assert!(multinomial(&out, &g, &zero, 1, true).is_err());
    }

    #[test]
    fn alias_tables_sample_the_distribution() {
        let g = Generator::with_seed(6);
        let p = View::from_slice(&[0.1f64, 0.2, 0.0, 0.7], &[4]).unwrap();
        let (j, q) = (tensor::<i64>(&[1]), tensor::<f64>(&[1]));
        multinomial_alias_setup(&p, &j, &q).unwrap();
        // (fewer draws under Miri; the bound is still over 3 standard deviations)
        let n: i64 = if cfg!(miri) { 20_000 } else { 100_000 };
        let out = tensor::<i64>(&[n]);
        multinomial_alias_draw(&out, &g, &j.view(), &q.view()).unwrap();
        let mut counts = [0usize; 4];
        for x in out.view().to_vec().unwrap() {
            counts[x as usize] += 1;
        }
        assert_eq!(counts[2], 0);
        for (c, want) in counts.iter().zip([0.1, 0.2, 0.0, 0.7]) {
            assert!((*c as f64 / n as f64 - want).abs() < 0.01, "{counts:?}");
        }
        let bad_j = View::from_slice(&[0i64, 9, 0, 0], &[4]).unwrap();
        assert!(multinomial_alias_draw(&out, &g, &bad_j, &q.view()).is_err());
    }

    #[test]
    fn normal_variants_read_inputs_first() {
        let g = Generator::with_seed(8);
        let t = Tensor::new(View::from_slice(&[100.0f64; 6], &[2, 3]).unwrap());
        normal_means(&t, &g, &t.view(), 1e-9).unwrap();
        assert!(t.view().to_vec().unwrap().iter().all(|&x| (x - 100.0).abs() < 1e-6));
        let s = View::from_slice(&[0.0f64, 0.0, 0.0], &[3]).unwrap();
        normal_means_stddevs(&t, &g, &t.view(), &s).unwrap();
        assert!(t.view().to_vec().unwrap().iter().all(|&x| (x - 100.0).abs() < 1e-6));
        let neg = View::from_slice(&[-1.0f64], &[1]).unwrap();
        assert!(normal_stddevs(&t, &g, 0.0, &neg).is_err());
    }
}
