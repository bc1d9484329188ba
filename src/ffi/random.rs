//! `THRandom.h` (the generator) and `generic/THTensorRandom.h` plus `randperm`, `rand`, `randn`.
//!
//! `THGenerator` is an opaque, reference-counted handle to a mutex-protected MT19937 state
//! (`ops::random::Generator`): `THGenerator_new` returns a new one (+1, seeded from
//! `/dev/urandom`), `THGenerator_free` releases it; one generator may be used from several
//! threads. Streams are torch7's bit for bit. Tensor fills draw sequentially in row-major order,
//! so results depend on the seed only (never on `THSetNumThreads`). Every function checks its
//! parameters before drawing or writing: a failing call leaves the generator and the outputs as
//! they were.
//!
//! Dtypes: the "all types" functions (`random`, `clampedRandom`, `cappedRandom`, `geometric`,
//! `bernoulli*`, `randperm`) exist for Byte, Char, Short, Int, Long, Float, Double, Half and
//! BFloat16; the float ones for Float, Double, Half and BFloat16; the RNG state functions for
//! Byte. Category indices (`multinomial*`, `randperm`) are 0-based.

use super::*;
use crate::ops::random::{self as rnd, Generator};
use std::ffi::c_int;
use std::ptr;

/// Opaque handle to a random generator (torch7's `THGenerator`; C never sees its fields).
pub struct THGenerator {
    _private: [u8; 0],
}

impl Handle for THGenerator {
    type Obj = Generator;
    const WHAT: &'static str = "THGenerator";
}

th_fn! {
    /// A new generator seeded from `/dev/urandom` (+1; release with `THGenerator_free`).
    fn THGenerator_new() -> *mut THGenerator = ptr::null_mut(); {
        Ok(into_handle(crate::core::refcount::Rc::new(Generator::new())))
    }
}

th_fn! {
    /// Copies the whole state of `from` into `self` (seed, position, cached normal); returns
    /// `self` (borrowed, no new reference).
    fn THGenerator_copy(self_: *mut THGenerator, from: *mut THGenerator) -> *mut THGenerator = ptr::null_mut(); {
        // SAFETY: handles from the caller.
        let (s, f) = unsafe { (obj(self_, 1)?, obj(from, 2)?) };
        s.set_state(f.state());
        Ok(self_)
    }
}

/// Drops a reference; the last one frees the generator (NULL is ignored).
///
/// # Safety
/// `generator` must be NULL or a live generator the caller owns a reference on.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn THGenerator_free(generator: *mut THGenerator) {
    // SAFETY: caller contract.
    unsafe { release(generator) }
}

th_fn! {
    /// 1 when the generator's state is one torch7 accepts (seeded, position in range), else 0.
    fn THGenerator_isValid(_generator: *mut THGenerator) -> c_int = 0; {
        // SAFETY: a handle from the caller.
        Ok(unsafe { obj(_generator, 1)? }.lock().is_valid() as c_int)
    }
}

th_fn! {
    /// Reseeds from `/dev/urandom` and returns the seed.
    fn THRandom_seed(_generator: *mut THGenerator) -> u64 = 0; {
        // SAFETY: a handle from the caller.
        Ok(unsafe { obj(_generator, 1)? }.seed())
    }
}

th_fn! {
    /// Reseeds with `the_seed_` (its low 32 bits seed MT19937, as torch7) and clears the cached
    /// normal value.
    fn THRandom_manualSeed(_generator: *mut THGenerator, the_seed_: u64) {
        // SAFETY: a handle from the caller.
        unsafe { obj(_generator, 1)? }.manual_seed(the_seed_);
        Ok(())
    }
}

th_fn! {
    /// The seed last given to `manualSeed`/`seed`.
    fn THRandom_initialSeed(_generator: *mut THGenerator) -> u64 = 0; {
        // SAFETY: a handle from the caller.
        Ok(unsafe { obj(_generator, 1)? }.lock().initial_seed())
    }
}

th_fn! {
    /// The next tempered 32-bit MT19937 output.
    fn THRandom_random(_generator: *mut THGenerator) -> u64 = 0; {
        // SAFETY: a handle from the caller.
        Ok(unsafe { obj(_generator, 1)? }.lock().random() as u64)
    }
}

th_fn! {
    /// `random() / 2^32 * (b - a) + a`, in `[a, b)` (finite `a <= b`; NaN on error).
    fn THRandom_uniform(_generator: *mut THGenerator, a: f64, b: f64) -> f64 = f64::NAN; {
        // SAFETY: a handle from the caller.
        unsafe { obj(_generator, 1)? }.uniform(a, b)
    }
}

th_fn! {
    /// Box-Muller normal (pairs: every other call returns the cached second value); `stdv > 0`.
    fn THRandom_normal(_generator: *mut THGenerator, mean: f64, stdv: f64) -> f64 = f64::NAN; {
        // SAFETY: a handle from the caller.
        unsafe { obj(_generator, 1)? }.normal(mean, stdv)
    }
}

th_fn! {
    /// `-1/lambda * log(1 - u)`; `lambda > 0`.
    fn THRandom_exponential(_generator: *mut THGenerator, lambda: f64) -> f64 = f64::NAN; {
        // SAFETY: a handle from the caller.
        unsafe { obj(_generator, 1)? }.exponential(lambda)
    }
}

th_fn! {
    /// `median + sigma * tan(pi * (u - 0.5))`; `sigma > 0`.
    fn THRandom_cauchy(_generator: *mut THGenerator, median: f64, sigma: f64) -> f64 = f64::NAN; {
        // SAFETY: a handle from the caller.
        unsafe { obj(_generator, 1)? }.cauchy(median, sigma)
    }
}

th_fn! {
    /// `exp(normal(mean, stdv))`; `stdv > 0`.
    fn THRandom_logNormal(_generator: *mut THGenerator, mean: f64, stdv: f64) -> f64 = f64::NAN; {
        // SAFETY: a handle from the caller.
        unsafe { obj(_generator, 1)? }.log_normal(mean, stdv)
    }
}

th_fn! {
    /// `(int)(log(1 - u) / log(p)) + 1`, `0 < p < 1`: `P(X = i) = (1-p) p^(i-1)` (torch7's
    /// convention, mean `1/(1-p)`; 0 on error).
    fn THRandom_geometric(_generator: *mut THGenerator, p: f64) -> c_int = 0; {
        // SAFETY: a handle from the caller.
        unsafe { obj(_generator, 1)? }.geometric(p)
    }
}

th_fn! {
    /// 1 with probability `p` (`u <= p`; `p == 0` never), `0 <= p <= 1`.
    fn THRandom_bernoulli(_generator: *mut THGenerator, p: f64) -> c_int = 0; {
        // SAFETY: a handle from the caller.
        Ok(unsafe { obj(_generator, 1)? }.bernoulli(p)? as c_int)
    }
}

th_fn! {
    /// `self` resized to 5048 bytes: the generator state in torch7's `THGenerator` layout (LP64).
    fn THByteTensor_getRNGState(_generator: *mut THGenerator, self_: *mut THByteTensor) {
        // SAFETY: handles from the caller.
        let (g, t) = unsafe { (obj(_generator, 1)?, obj(self_, 2)?) };
        rnd::get_rng_state(g, t)
    }
}

th_fn! {
    /// Restores a state made by `getRNGState` (5048 elements; rejected unless valid).
    fn THByteTensor_setRNGState(_generator: *mut THGenerator, self_: *mut THByteTensor) {
        // SAFETY: handles from the caller.
        let (g, t) = unsafe { (obj(_generator, 1)?, obj(self_, 2)?) };
        rnd::set_rng_state(g, &t.view())
    }
}

macro_rules! random_api {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => {
        $( random_api!(@num $K $R, $T); random_api!(@float $K $R, $T); )*
    };
    (@num bool $R:ident, $T:ty) => {};
    (@num $k:ident $R:ident, $T:ty) => { pastey::paste! {
        th_fn! {
            /// In place: `random() % m` with m = 256 (Byte), 2^7 (Char), 2^15 (Short), 2^31 (Int),
            /// 2^63 (Long), 2^24+1 (Float), 2^53+1 (Double), 2^11+1 (Half), 2^8+1 (BFloat16).
            fn [<TH $R Tensor_random>](self_: *mut [<TH $R Tensor>], _generator: *mut THGenerator) {
                // SAFETY: handles from the caller.
                let (t, g) = unsafe { (obj(self_, 1)?, obj(_generator, 2)?) };
                rnd::random(t, g)
            }
        }
        th_fn! {
            /// In place: integers in `[min, max)`: `random() % (max - min) + min`; `max > min`.
            fn [<TH $R Tensor_clampedRandom>](self_: *mut [<TH $R Tensor>], _generator: *mut THGenerator, min: i64, max: i64) {
                // SAFETY: handles from the caller.
                let (t, g) = unsafe { (obj(self_, 1)?, obj(_generator, 2)?) };
                rnd::clamped_random(t, g, min, max)
            }
        }
        th_fn! {
            /// In place: integers in `[0, max)`; `max > 0`.
            fn [<TH $R Tensor_cappedRandom>](self_: *mut [<TH $R Tensor>], _generator: *mut THGenerator, max: i64) {
                // SAFETY: handles from the caller.
                let (t, g) = unsafe { (obj(self_, 1)?, obj(_generator, 2)?) };
                rnd::capped_random(t, g, max)
            }
        }
        th_fn! {
            /// In place: geometric samples, `P(X = i) = (1-p) p^(i-1)` for i >= 1 (torch7's
            /// convention, mean `1/(1-p)`), `0 < p < 1`.
            fn [<TH $R Tensor_geometric>](self_: *mut [<TH $R Tensor>], _generator: *mut THGenerator, p: f64) {
                // SAFETY: handles from the caller.
                let (t, g) = unsafe { (obj(self_, 1)?, obj(_generator, 2)?) };
                rnd::geometric(t, g, p)
            }
        }
        th_fn! {
            /// In place: 1 with probability `p`, else 0; `0 <= p <= 1`.
            fn [<TH $R Tensor_bernoulli>](self_: *mut [<TH $R Tensor>], _generator: *mut THGenerator, p: f64) {
                // SAFETY: handles from the caller.
                let (t, g) = unsafe { (obj(self_, 1)?, obj(_generator, 2)?) };
                rnd::bernoulli(t, g, p)
            }
        }
        th_fn! {
            /// In place: element i is 1 with probability `p[i]` (same element count, row-major
            /// pairing; every probability in [0, 1]).
            fn [<TH $R Tensor_bernoulli_FloatTensor>](self_: *mut [<TH $R Tensor>], _generator: *mut THGenerator, p: *mut THFloatTensor) {
                // SAFETY: handles from the caller.
                let (t, g, p) = unsafe { (obj(self_, 1)?, obj(_generator, 2)?, obj(p, 3)?.view()) };
                rnd::bernoulli_tensor(t, g, &p)
            }
        }
        th_fn! {
            /// As `bernoulli_FloatTensor` with double probabilities.
            fn [<TH $R Tensor_bernoulli_DoubleTensor>](self_: *mut [<TH $R Tensor>], _generator: *mut THGenerator, p: *mut THDoubleTensor) {
                // SAFETY: handles from the caller.
                let (t, g, p) = unsafe { (obj(self_, 1)?, obj(_generator, 2)?, obj(p, 3)?.view()) };
                rnd::bernoulli_tensor(t, g, &p)
            }
        }
        th_fn! {
            /// `r_` resized to 1-D `n`: a random permutation of 0..n-1 (0-based); `n > 0` and
            /// `n - 1` exactly representable in the dtype.
            fn [<TH $R Tensor_randperm>](r_: *mut [<TH $R Tensor>], _generator: *mut THGenerator, n: i64) {
                // SAFETY: handles from the caller.
                let (r, g) = unsafe { (obj(r_, 1)?, obj(_generator, 2)?) };
                rnd::randperm(r, g, n)
            }
        }
    } };
    (@float float $R:ident, $T:ty) => { random_api!(@floatfns $R, $T); };
    (@float half $R:ident, $T:ty) => { random_api!(@floatfns $R, $T); };
    (@float $k:ident $R:ident, $T:ty) => {};
    (@floatfns $R:ident, $T:ty) => { pastey::paste! {
        th_fn! {
            /// In place: uniform in `[a, b)` (finite `a <= b`; values that would round up to `b`
            /// in this dtype become the largest value below `b`).
            fn [<TH $R Tensor_uniform>](self_: *mut [<TH $R Tensor>], _generator: *mut THGenerator, a: f64, b: f64) {
                // SAFETY: handles from the caller.
                let (t, g) = unsafe { (obj(self_, 1)?, obj(_generator, 2)?) };
                rnd::uniform(t, g, a, b)
            }
        }
        th_fn! {
            /// In place: normal(mean, stdv), `stdv > 0`.
            fn [<TH $R Tensor_normal>](self_: *mut [<TH $R Tensor>], _generator: *mut THGenerator, mean: f64, stdv: f64) {
                // SAFETY: handles from the caller.
                let (t, g) = unsafe { (obj(self_, 1)?, obj(_generator, 2)?) };
                rnd::normal(t, g, mean, stdv)
            }
        }
        th_fn! {
            /// `self` resized like `means`: `normal(0, stddev) + means` (`stddev > 0`; `means` may
            /// be `self`).
            fn [<TH $R Tensor_normal_means>](self_: *mut [<TH $R Tensor>], generator: *mut THGenerator, means: *mut [<TH $R Tensor>], stddev: f64) {
                // SAFETY: handles from the caller.
                let (t, g, m) = unsafe { (obj(self_, 1)?, obj(generator, 2)?, obj(means, 3)?.view()) };
                rnd::normal_means(t, g, &m, stddev)
            }
        }
        th_fn! {
            /// `self` resized like `stddevs`: `normal(0, 1) * stddevs + mean` (each stddev >= 0).
            fn [<TH $R Tensor_normal_stddevs>](self_: *mut [<TH $R Tensor>], generator: *mut THGenerator, mean: f64, stddevs: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (t, g, s) = unsafe { (obj(self_, 1)?, obj(generator, 2)?, obj(stddevs, 4)?.view()) };
                rnd::normal_stddevs(t, g, mean, &s)
            }
        }
        th_fn! {
            /// `self` resized to the broadcast shape of `means` and `stddevs`:
            /// `normal(0, 1) * stddevs + means` (each stddev >= 0).
            fn [<TH $R Tensor_normal_means_stddevs>](self_: *mut [<TH $R Tensor>], generator: *mut THGenerator, means: *mut [<TH $R Tensor>], stddevs: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (t, g, m, s) = unsafe { (obj(self_, 1)?, obj(generator, 2)?, obj(means, 3)?.view(), obj(stddevs, 4)?.view()) };
                rnd::normal_means_stddevs(t, g, &m, &s)
            }
        }
        th_fn! {
            /// In place: exponential with rate `lambda > 0`.
            fn [<TH $R Tensor_exponential>](self_: *mut [<TH $R Tensor>], _generator: *mut THGenerator, lambda: f64) {
                // SAFETY: handles from the caller.
                let (t, g) = unsafe { (obj(self_, 1)?, obj(_generator, 2)?) };
                rnd::exponential(t, g, lambda)
            }
        }
        th_fn! {
            /// In place: Cauchy(median, sigma), `sigma > 0`.
            fn [<TH $R Tensor_cauchy>](self_: *mut [<TH $R Tensor>], _generator: *mut THGenerator, median: f64, sigma: f64) {
                // SAFETY: handles from the caller.
                let (t, g) = unsafe { (obj(self_, 1)?, obj(_generator, 2)?) };
                rnd::cauchy(t, g, median, sigma)
            }
        }
        th_fn! {
            /// In place: `exp(normal(mean, stdv))`, `stdv > 0`.
            fn [<TH $R Tensor_logNormal>](self_: *mut [<TH $R Tensor>], _generator: *mut THGenerator, mean: f64, stdv: f64) {
                // SAFETY: handles from the caller.
                let (t, g) = unsafe { (obj(self_, 1)?, obj(_generator, 2)?) };
                rnd::log_normal(t, g, mean, stdv)
            }
        }
        th_fn! {
            /// `self` resized to `(rows, n_sample)` (`(n_sample)` for a 1-D `prob_dist`): 0-based
            /// categories drawn from each row's weights (>= 0, positive sum). Without replacement
            /// `n_sample` may not exceed a row's count of nonzero weights.
            fn [<TH $R Tensor_multinomial>](self_: *mut THLongTensor, _generator: *mut THGenerator, prob_dist: *mut [<TH $R Tensor>], n_sample: c_int, with_replacement: c_int) {
                // SAFETY: handles from the caller.
                let (t, g, p) = unsafe { (obj(self_, 1)?, obj(_generator, 2)?, obj(prob_dist, 3)?.view()) };
                rnd::multinomial(t, g, &p, n_sample, with_replacement != 0)
            }
        }
        th_fn! {
            /// Alias tables for `prob_dist`'s weights: `J` (0-based alias indices) and `q`
            /// (keep probabilities), both resized to 1-D of `prob_dist`'s element count.
            #[allow(non_snake_case)] // TH names the alias table J
            fn [<TH $R Tensor_multinomialAliasSetup>](prob_dist: *mut [<TH $R Tensor>], J: *mut THLongTensor, q: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (p, j, q) = unsafe { (obj(prob_dist, 1)?.view(), obj(J, 2)?, obj(q, 3)?) };
                rnd::multinomial_alias_setup(&p, j, q)
            }
        }
        th_fn! {
            /// In place: every element of `self` a 0-based category drawn with the alias tables.
            #[allow(non_snake_case)] // TH names the alias table J
            fn [<TH $R Tensor_multinomialAliasDraw>](self_: *mut THLongTensor, _generator: *mut THGenerator, J: *mut THLongTensor, q: *mut [<TH $R Tensor>]) {
                // SAFETY: handles from the caller.
                let (t, g, j, q) = unsafe { (obj(self_, 1)?, obj(_generator, 2)?, obj(J, 3)?.view(), obj(q, 4)?.view()) };
                rnd::multinomial_alias_draw(t, g, &j, &q)
            }
        }
        th_fn! {
            /// `r_` resized to `size`, uniform in [0, 1).
            fn [<TH $R Tensor_rand>](r_: *mut [<TH $R Tensor>], _generator: *mut THGenerator, size: *mut THLongStorage) {
                // SAFETY: handles from the caller.
                let (r, g, s) = unsafe { (obj(r_, 1)?, obj(_generator, 2)?, super::storage::long_list(size, 3)?) };
                rnd::rand(r, g, &s.ok_or_else(|| Error::null(3, "size"))?)
            }
        }
        th_fn! {
            /// `r_` resized to `size`, standard normal.
            fn [<TH $R Tensor_randn>](r_: *mut [<TH $R Tensor>], _generator: *mut THGenerator, size: *mut THLongStorage) {
                // SAFETY: handles from the caller.
                let (r, g, s) = unsafe { (obj(r_, 1)?, obj(_generator, 2)?, super::storage::long_list(size, 3)?) };
                rnd::randn(r, g, &s.ok_or_else(|| Error::null(3, "size"))?)
            }
        }
    } };
}
crate::th_dtypes!(random_api);

/// Adds a reference (NULL is ignored); an extension used by the C++ wrapper (`th.hpp`).
///
/// # Safety
/// `generator` must be NULL or a live generator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn THGenerator_retain(generator: *mut THGenerator) {
    // SAFETY: caller contract.
    unsafe { retain(generator) }
}
