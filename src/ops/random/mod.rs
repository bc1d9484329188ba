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

pub mod device;
#[cfg(all(test, feature = "cuda-emulator"))]
mod device_tests;
mod fill;

pub use fill::*;

use super::num::{Float, Num};
use crate::core::dtype::{DType, Format, Prim, Scalar};
use crate::core::error::{Error, Result};
use crate::core::geometry::Offsets;
use crate::core::seed::os_seed;
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

#[cfg(test)]
mod tests;
