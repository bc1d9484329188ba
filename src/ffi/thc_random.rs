//! THC's random numbers (`THCTensorRandom.h`) on device tensors, with THC's names and C types.
//!
//! Generator: one per device, Philox4x32-10 (a 64-bit seed and a 64-bit block offset), created
//! at first use with a seed from `/dev/urandom`; a tensor on `cuda:i` draws from device i's.
//! Results depend on (seed, offset, element position) only, never on the launch grid
//! (`cuda::random` documents the stream). `THCRandom_*` act on the current device's generator
//! (`*All` on every device's).
//!
//! - Every dtype but Bool: `bernoulli` (scalar p), `bernoulli_FloatTensor`,
//!   `bernoulli_DoubleTensor` (p tensors on the same device, row-major pairing), `geometric`,
//!   and, beyond THC's header (the CPU side has them), `random`, `clampedRandom`, `cappedRandom`.
//! - Float, Double, Half and BFloat16 (BFloat16 beyond THC's header): `uniform`, `normal`,
//!   `normal_means`, `normal_stddevs`, `normal_means_stddevs`, `logNormal`, `exponential`,
//!   `cauchy`, `rand`, `randn`, `multinomial`, `multinomialAliasSetup` (tables computed on the
//!   host from the staged probabilities, written back to the device), `multinomialAliasDraw`.
//! - Parameters are checked as the CPU side does, before anything is drawn or written; tensor
//!   parameters are read on the host for those checks. Categories are 0-based.
//! - `getRNGState`/`setRNGState` use a host `THByteTensor` of 24 bytes: the tag `THCphx10`, the
//!   seed, the offset (native-endian 64-bit); `setRNGState` rejects anything else.

use super::storage::required_list;
use super::thc::*;
use super::*;
use crate::cuda::random as crand;
use crate::cuda::runtime;
use crate::ops::random::device as rnd;
use std::ffi::c_int;

/// cuRAND's MTGP32 state (`curandStateMtgp32`): opaque, never created here (see
/// `THCRandom_generatorStates`).
#[allow(non_camel_case_types)]
pub struct curandStateMtgp32 {
    _private: [u8; 0],
}

th_fn! {
    /// Discovers the devices (generators are created lazily at their first use, so there is
    /// nothing else to set up); `num_devices` and `current_device` are not used.
    fn THCRandom_init @[state: *mut THCState](num_devices: c_int, current_device: c_int) {
        let _ = (num_devices, current_device);
        runtime::devices().map(|_| ())
    }

    /// Forgets every device generator: each is reseeded from the OS at its next use.
    fn THCRandom_shutdown @[state: *mut THCState]() {
        crand::reset_all();
        Ok(())
    }

    /// Reseeds the current device's generator from `/dev/urandom` (offset 0); returns the seed.
    fn THCRandom_seed @[state: *mut THCState]() -> u64 = 0; {
        let s = crate::core::seed::os_seed();
        crand::manual_seed(runtime::current(), s)?;
        Ok(s)
    }

    /// Reseeds every device's generator with one seed from `/dev/urandom`; returns it.
    fn THCRandom_seedAll @[state: *mut THCState]() -> u64 = 0; {
        let s = crate::core::seed::os_seed();
        for d in 0..runtime::devices()?.len() {
            crand::manual_seed(d as i32, s)?;
        }
        Ok(s)
    }

    /// Seeds the current device's generator with all 64 bits of `the_seed_` (offset 0).
    fn THCRandom_manualSeed @[state: *mut THCState](the_seed_: u64) {
        crand::manual_seed(runtime::current(), the_seed_)
    }

    /// Seeds every device's generator with `the_seed_`.
    fn THCRandom_manualSeedAll @[state: *mut THCState](the_seed_: u64) {
        for d in 0..runtime::devices()?.len() {
            crand::manual_seed(d as i32, the_seed_)?;
        }
        Ok(())
    }

    /// The current device generator's seed.
    fn THCRandom_initialSeed @[state: *mut THCState]() -> u64 = 0; {
        Ok(crand::state(runtime::current())?.seed)
    }

    /// `rng_state` (a host Byte tensor) resized to 24 bytes: the current device generator's
    /// state (tag, seed, offset).
    fn THCRandom_getRNGState @[state: *mut THCState](rng_state: *mut THByteTensor as obj) {
        let bytes = crand::state(runtime::current())?.to_bytes();
        let v = crate::ops::resize_out(rng_state, &[bytes.len() as i64])?;
        crate::ops::copy::copy(&v, &crate::core::tensor::View::from_slice(&bytes, &[bytes.len() as i64])?)
    }

    /// Restores a state made by `getRNGState` on the current device (24 bytes with its tag,
    /// any layout; rejected otherwise, the generator unchanged).
    fn THCRandom_setRNGState @[state: *mut THCState](rng_state: *mut THByteTensor as view) {
        let st = crand::PhiloxState::from_bytes(&crate::ops::copy::values(&rng_state)?).map_err(|e| e.at_arg(1))?;
        crand::set_state(runtime::current(), st)
    }

    /// NULL: THC returned its cuRAND MTGP32 states; the generator here is counter-based (a seed
    /// and an offset, no per-thread state), so there are none to expose. Not an error.
    fn THCRandom_generatorStates @[state: *mut THCState]() -> *mut curandStateMtgp32 = std::ptr::null_mut(); {
        Ok(std::ptr::null_mut())
    }
}

macro_rules! thc_random {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => {
        $( thc_random!(@pre $R, $T, $K); )*
    };
    (@pre Bool, $T:ty, $K:ident) => {};
    (@pre Float, $T:ty, $K:ident) => { thc_random!(@gen [THCuda] $T, $K); };
    (@pre $R:ident, $T:ty, $K:ident) => { thc_random!(@gen [THCuda $R] $T, $K); };
    (@gen [$($P:tt)*] $T:ty, $K:ident) => {
        thc_random!(@num [$($P)*] $T);
        thc_random!(@float $K [$($P)*] $T);
    };
    (@num [$($P:tt)*] $T:ty) => { pastey::paste! {
        th_fn! {
            /// In place: 1 with probability `p`, else 0; `0 <= p <= 1`.
            fn [<$($P)* Tensor_bernoulli>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, p: f64) {
                rnd::bernoulli(self_, p)
            }
            /// In place: element i is 1 with probability `p[i]` (a Float tensor on the same
            /// device, same element count, row-major pairing, values in [0, 1]).
            fn [<$($P)* Tensor_bernoulli_FloatTensor>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, p: *mut THCudaTensor as view) {
                rnd::bernoulli_tensor(self_, &p)
            }
            /// As `bernoulli_FloatTensor` with a Double tensor.
            fn [<$($P)* Tensor_bernoulli_DoubleTensor>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, p: *mut THCudaDoubleTensor as view) {
                rnd::bernoulli_tensor(self_, &p)
            }
            /// In place: geometric samples, `P(X = i) = (1-p) p^(i-1)` for i >= 1 (torch7's
            /// convention, mean `1/(1-p)`), `0 < p < 1`.
            fn [<$($P)* Tensor_geometric>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, p: f64) {
                rnd::geometric(self_, p)
            }
            /// In place: a 32-bit draw modulo 2^8 (Byte), 2^7, 2^15, 2^31, 2^63 (Long), 2^24+1
            /// (Float), 2^53+1, 2^11+1 (Half), 2^8+1 (BFloat16), as the CPU side.
            fn [<$($P)* Tensor_random>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj) {
                rnd::random(self_)
            }
            /// In place: integers in `[min, max)` (a 32-bit draw modulo `max - min`); `max > min`.
            fn [<$($P)* Tensor_clampedRandom>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, min: i64, max: i64) {
                rnd::clamped_random(self_, min, max)
            }
            /// In place: integers in `[0, max)`; `max > 0`.
            fn [<$($P)* Tensor_cappedRandom>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, max: i64) {
                rnd::capped_random(self_, max)
            }
        }
    } };
    (@float int [$($P:tt)*] $T:ty) => {};
    (@float $k:ident [$($P:tt)*] $T:ty) => { pastey::paste! {
        th_fn! {
            /// In place: uniform in `[a, b)` (finite `a <= b`; values that would round up to `b`
            /// become the largest value below `b`).
            fn [<$($P)* Tensor_uniform>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, a: f64, b: f64) {
                rnd::uniform(self_, a, b)
            }
            /// `r_` resized to `size` (a host size list), uniform in [0, 1).
            fn [<$($P)* Tensor_rand>] @[state: *mut THCState](r_: *mut [<$($P)* Tensor>] as obj, size: *mut THLongStorage as required_list("size")) {
                rnd::rand(r_, &size)
            }
            /// `r_` resized to `size`, standard normal.
            fn [<$($P)* Tensor_randn>] @[state: *mut THCState](r_: *mut [<$($P)* Tensor>] as obj, size: *mut THLongStorage as required_list("size")) {
                rnd::randn(r_, &size)
            }
            /// In place: normal(mean, stdv), `stdv > 0`.
            fn [<$($P)* Tensor_normal>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, mean: f64, stdv: f64) {
                rnd::normal(self_, mean, stdv)
            }
            /// `self` resized like `means`: `normal(0, stddev) + means` (`stddev > 0`).
            fn [<$($P)* Tensor_normal_means>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, means: *mut [<$($P)* Tensor>] as view, stddev: f64) {
                rnd::normal_means(self_, &means, stddev)
            }
            /// `self` resized like `stddevs`: `normal(0, 1) * stddevs + mean` (each stddev >= 0).
            fn [<$($P)* Tensor_normal_stddevs>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, mean: f64, stddevs: *mut [<$($P)* Tensor>] as view) {
                rnd::normal_stddevs(self_, mean, &stddevs)
            }
            /// `self` resized to the broadcast shape of `means` and `stddevs`:
            /// `normal(0, 1) * stddevs + means` (each stddev >= 0).
            fn [<$($P)* Tensor_normal_means_stddevs>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, means: *mut [<$($P)* Tensor>] as view, stddevs: *mut [<$($P)* Tensor>] as view) {
                rnd::normal_means_stddevs(self_, &means, &stddevs)
            }
            /// In place: `exp(normal(mean, stdv))`, `stdv > 0`.
            fn [<$($P)* Tensor_logNormal>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, mean: f64, stdv: f64) {
                rnd::log_normal(self_, mean, stdv)
            }
            /// In place: exponential with rate `lambda > 0`.
            fn [<$($P)* Tensor_exponential>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, lambda: f64) {
                rnd::exponential(self_, lambda)
            }
            /// In place: Cauchy(median, sigma), `sigma > 0`.
            fn [<$($P)* Tensor_cauchy>] @[state: *mut THCState](self_: *mut [<$($P)* Tensor>] as obj, median: f64, sigma: f64) {
                rnd::cauchy(self_, median, sigma)
            }
            /// `self` resized to `(rows, n_sample)` (`(n_sample)` for a 1-D `prob_dist`): 0-based
            /// categories drawn from each row's weights (>= 0, positive sum). Without
            /// replacement the categories of a row are distinct and `n_sample` may not exceed a
            /// row's count of nonzero weights.
            fn [<$($P)* Tensor_multinomial>] @[state: *mut THCState](self_: *mut THCudaLongTensor as obj, prob_dist: *mut [<$($P)* Tensor>] as view, n_sample: c_int, with_replacement: c_int) {
                rnd::multinomial(self_, &prob_dist, n_sample, with_replacement != 0)
            }
            /// Alias tables for `probs`' weights: `J` (0-based alias indices) and `q` (keep
            /// probabilities), resized to 1-D of `probs`' element count.
            #[allow(non_snake_case)] // THC names the alias table J
            fn [<$($P)* Tensor_multinomialAliasSetup>] @[state: *mut THCState](probs: *mut [<$($P)* Tensor>] as view, J: *mut THCudaLongTensor as obj, q: *mut [<$($P)* Tensor>] as obj) {
                rnd::multinomial_alias_setup(&probs, J, q)
            }
            /// In place: every element of `self` a 0-based category drawn with the alias tables.
            #[allow(non_snake_case)] // THC names the tables _J, _q
            fn [<$($P)* Tensor_multinomialAliasDraw>] @[state: *mut THCState](self_: *mut THCudaLongTensor as obj, _J: *mut THCudaLongTensor as view, _q: *mut [<$($P)* Tensor>] as view) {
                rnd::multinomial_alias_draw(self_, &_J, &_q)
            }
        }
    } };
}
crate::th_dtypes!(thc_random);
