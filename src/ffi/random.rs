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

use super::storage::required_list;
use super::*;
use crate::ops::random::{self as rnd, Generator};
use std::ffi::c_int;
use std::ptr;

handle!(
    /// Opaque handle to a random generator (torch7's `THGenerator`; C never sees its fields).
    THGenerator => Generator
);

th_fn! {
    /// A new generator seeded from `/dev/urandom` (+1; release with `THGenerator_free`).
    fn THGenerator_new() -> *mut THGenerator = ptr::null_mut(); {
        Ok(into_handle(crate::core::refcount::Rc::new(Generator::new())))
    }

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
    fn THGenerator_isValid(_generator: *mut THGenerator as obj) -> c_int = 0; {
        Ok(_generator.lock().is_valid() as c_int)
    }

    /// Reseeds from `/dev/urandom` and returns the seed.
    fn THRandom_seed(_generator: *mut THGenerator as obj) -> u64 = 0; {
        Ok(_generator.seed())
    }

    /// Reseeds with `the_seed_` (its low 32 bits seed MT19937, as torch7) and clears the cached
    /// normal value.
    fn THRandom_manualSeed(_generator: *mut THGenerator as obj, the_seed_: u64) {
        _generator.manual_seed(the_seed_);
        Ok(())
    }

    /// The seed last given to `manualSeed`/`seed`.
    fn THRandom_initialSeed(_generator: *mut THGenerator as obj) -> u64 = 0; {
        Ok(_generator.lock().initial_seed())
    }

    /// The next tempered 32-bit MT19937 output.
    fn THRandom_random(_generator: *mut THGenerator as obj) -> u64 = 0; {
        Ok(_generator.lock().random() as u64)
    }

    /// `random() / 2^32 * (b - a) + a`, in `[a, b)` (finite `a <= b`; NaN on error).
    fn THRandom_uniform(_generator: *mut THGenerator as obj, a: f64, b: f64) -> f64 = f64::NAN; {
        _generator.uniform(a, b)
    }

    /// Box-Muller normal (pairs: every other call returns the cached second value); `stdv > 0`.
    fn THRandom_normal(_generator: *mut THGenerator as obj, mean: f64, stdv: f64) -> f64 = f64::NAN; {
        _generator.normal(mean, stdv)
    }

    /// `-1/lambda * log(1 - u)`; `lambda > 0`.
    fn THRandom_exponential(_generator: *mut THGenerator as obj, lambda: f64) -> f64 = f64::NAN; {
        _generator.exponential(lambda)
    }

    /// `median + sigma * tan(pi * (u - 0.5))`; `sigma > 0`.
    fn THRandom_cauchy(_generator: *mut THGenerator as obj, median: f64, sigma: f64) -> f64 = f64::NAN; {
        _generator.cauchy(median, sigma)
    }

    /// `exp(normal(mean, stdv))`; `stdv > 0`.
    fn THRandom_logNormal(_generator: *mut THGenerator as obj, mean: f64, stdv: f64) -> f64 = f64::NAN; {
        _generator.log_normal(mean, stdv)
    }

    /// `(int)(log(1 - u) / log(p)) + 1`, `0 < p < 1`: `P(X = i) = (1-p) p^(i-1)` (torch7's
    /// convention, mean `1/(1-p)`; 0 on error).
    fn THRandom_geometric(_generator: *mut THGenerator as obj, p: f64) -> c_int = 0; {
        _generator.geometric(p)
    }

    /// 1 with probability `p` (`u <= p`; `p == 0` never), `0 <= p <= 1`.
    fn THRandom_bernoulli(_generator: *mut THGenerator as obj, p: f64) -> c_int = 0; {
        Ok(_generator.bernoulli(p)? as c_int)
    }

    /// `self` resized to 5048 bytes: the generator state in torch7's `THGenerator` layout (LP64).
    fn THByteTensor_getRNGState(_generator: *mut THGenerator as obj, self_: *mut THByteTensor as obj) {
        rnd::get_rng_state(_generator, self_)
    }

    /// Restores a state made by `getRNGState` (5048 elements; rejected unless valid).
    fn THByteTensor_setRNGState(_generator: *mut THGenerator as obj, self_: *mut THByteTensor as obj) {
        rnd::set_rng_state(_generator, &self_.view())
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
            fn [<TH $R Tensor_random>](self_: *mut [<TH $R Tensor>] as obj, _generator: *mut THGenerator as obj) {
                rnd::random(self_, _generator)
            }
            /// In place: integers in `[min, max)`: `random() % (max - min) + min`; `max > min`.
            fn [<TH $R Tensor_clampedRandom>](self_: *mut [<TH $R Tensor>] as obj, _generator: *mut THGenerator as obj, min: i64, max: i64) {
                rnd::clamped_random(self_, _generator, min, max)
            }
            /// In place: integers in `[0, max)`; `max > 0`.
            fn [<TH $R Tensor_cappedRandom>](self_: *mut [<TH $R Tensor>] as obj, _generator: *mut THGenerator as obj, max: i64) {
                rnd::capped_random(self_, _generator, max)
            }
            /// In place: geometric samples, `P(X = i) = (1-p) p^(i-1)` for i >= 1 (torch7's
            /// convention, mean `1/(1-p)`), `0 < p < 1`.
            fn [<TH $R Tensor_geometric>](self_: *mut [<TH $R Tensor>] as obj, _generator: *mut THGenerator as obj, p: f64) {
                rnd::geometric(self_, _generator, p)
            }
            /// In place: 1 with probability `p`, else 0; `0 <= p <= 1`.
            fn [<TH $R Tensor_bernoulli>](self_: *mut [<TH $R Tensor>] as obj, _generator: *mut THGenerator as obj, p: f64) {
                rnd::bernoulli(self_, _generator, p)
            }
            /// In place: element i is 1 with probability `p[i]` (same element count, row-major
            /// pairing; every probability in [0, 1]).
            fn [<TH $R Tensor_bernoulli_FloatTensor>](self_: *mut [<TH $R Tensor>] as obj, _generator: *mut THGenerator as obj, p: *mut THFloatTensor as view) {
                rnd::bernoulli_tensor(self_, _generator, &p)
            }
            /// As `bernoulli_FloatTensor` with double probabilities.
            fn [<TH $R Tensor_bernoulli_DoubleTensor>](self_: *mut [<TH $R Tensor>] as obj, _generator: *mut THGenerator as obj, p: *mut THDoubleTensor as view) {
                rnd::bernoulli_tensor(self_, _generator, &p)
            }
            /// `r_` resized to 1-D `n`: a random permutation of 0..n-1 (0-based); `n > 0` and
            /// `n - 1` exactly representable in the dtype.
            fn [<TH $R Tensor_randperm>](r_: *mut [<TH $R Tensor>] as obj, _generator: *mut THGenerator as obj, n: i64) {
                rnd::randperm(r_, _generator, n)
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
            fn [<TH $R Tensor_uniform>](self_: *mut [<TH $R Tensor>] as obj, _generator: *mut THGenerator as obj, a: f64, b: f64) {
                rnd::uniform(self_, _generator, a, b)
            }
            /// In place: normal(mean, stdv), `stdv > 0`.
            fn [<TH $R Tensor_normal>](self_: *mut [<TH $R Tensor>] as obj, _generator: *mut THGenerator as obj, mean: f64, stdv: f64) {
                rnd::normal(self_, _generator, mean, stdv)
            }
            /// `self` resized like `means`: `normal(0, stddev) + means` (`stddev > 0`; `means` may
            /// be `self`).
            fn [<TH $R Tensor_normal_means>](self_: *mut [<TH $R Tensor>] as obj, generator: *mut THGenerator as obj, means: *mut [<TH $R Tensor>] as view, stddev: f64) {
                rnd::normal_means(self_, generator, &means, stddev)
            }
            /// `self` resized like `stddevs`: `normal(0, 1) * stddevs + mean` (each stddev >= 0).
            fn [<TH $R Tensor_normal_stddevs>](self_: *mut [<TH $R Tensor>] as obj, generator: *mut THGenerator as obj, mean: f64, stddevs: *mut [<TH $R Tensor>] as view) {
                rnd::normal_stddevs(self_, generator, mean, &stddevs)
            }
            /// `self` resized to the broadcast shape of `means` and `stddevs`:
            /// `normal(0, 1) * stddevs + means` (each stddev >= 0).
            fn [<TH $R Tensor_normal_means_stddevs>](self_: *mut [<TH $R Tensor>] as obj, generator: *mut THGenerator as obj, means: *mut [<TH $R Tensor>] as view, stddevs: *mut [<TH $R Tensor>] as view) {
                rnd::normal_means_stddevs(self_, generator, &means, &stddevs)
            }
            /// In place: exponential with rate `lambda > 0`.
            fn [<TH $R Tensor_exponential>](self_: *mut [<TH $R Tensor>] as obj, _generator: *mut THGenerator as obj, lambda: f64) {
                rnd::exponential(self_, _generator, lambda)
            }
            /// In place: Cauchy(median, sigma), `sigma > 0`.
            fn [<TH $R Tensor_cauchy>](self_: *mut [<TH $R Tensor>] as obj, _generator: *mut THGenerator as obj, median: f64, sigma: f64) {
                rnd::cauchy(self_, _generator, median, sigma)
            }
            /// In place: `exp(normal(mean, stdv))`, `stdv > 0`.
            fn [<TH $R Tensor_logNormal>](self_: *mut [<TH $R Tensor>] as obj, _generator: *mut THGenerator as obj, mean: f64, stdv: f64) {
                rnd::log_normal(self_, _generator, mean, stdv)
            }
            /// `self` resized to `(rows, n_sample)` (`(n_sample)` for a 1-D `prob_dist`): 0-based
            /// categories drawn from each row's weights (>= 0, positive sum). Without replacement
            /// `n_sample` may not exceed a row's count of nonzero weights.
            fn [<TH $R Tensor_multinomial>](self_: *mut THLongTensor as obj, _generator: *mut THGenerator as obj, prob_dist: *mut [<TH $R Tensor>] as view, n_sample: c_int, with_replacement: c_int) {
                rnd::multinomial(self_, _generator, &prob_dist, n_sample, with_replacement != 0)
            }
            /// Alias tables for `prob_dist`'s weights: `J` (0-based alias indices) and `q`
            /// (keep probabilities), both resized to 1-D of `prob_dist`'s element count.
            #[allow(non_snake_case)] // TH names the alias table J
            fn [<TH $R Tensor_multinomialAliasSetup>](prob_dist: *mut [<TH $R Tensor>] as view, J: *mut THLongTensor as obj, q: *mut [<TH $R Tensor>] as obj) {
                rnd::multinomial_alias_setup(&prob_dist, J, q)
            }
            /// In place: every element of `self` a 0-based category drawn with the alias tables.
            #[allow(non_snake_case)] // TH names the alias table J
            fn [<TH $R Tensor_multinomialAliasDraw>](self_: *mut THLongTensor as obj, _generator: *mut THGenerator as obj, J: *mut THLongTensor as view, q: *mut [<TH $R Tensor>] as view) {
                rnd::multinomial_alias_draw(self_, _generator, &J, &q)
            }
            /// `r_` resized to `size`, uniform in [0, 1).
            fn [<TH $R Tensor_rand>](r_: *mut [<TH $R Tensor>] as obj, _generator: *mut THGenerator as obj, size: *mut THLongStorage as required_list("size")) {
                rnd::rand(r_, _generator, &size)
            }
            /// `r_` resized to `size`, standard normal.
            fn [<TH $R Tensor_randn>](r_: *mut [<TH $R Tensor>] as obj, _generator: *mut THGenerator as obj, size: *mut THLongStorage as required_list("size")) {
                rnd::randn(r_, _generator, &size)
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
