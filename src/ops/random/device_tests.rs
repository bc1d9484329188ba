//! The device random fills on the emulator (`TH_CUDA_EMULATOR=1`): Philox4x32-10 against the
//! Random123 known-answer vectors (an implementation written here from the paper, independent
//! of `random.cuh`), uniform bits against that reference element by element (any layout, past
//! the grid cap), reproducibility, statistics of every distribution, integer ranges, bernoulli
//! with probability tensors, multinomial and the alias method, and refused calls that leave
//! outputs and the generator as they were.
//!
//! Statistical bounds are stated per test; seeds are fixed, so each outcome is deterministic.

use super::device as dev;
use super::*;
use crate::core::refcount::Rc;
use crate::cuda;
use crate::cuda::random::{PhiloxState, manual_seed, state};
use half::{bf16, f16};

/// The device generator is shared by the tests of this file: they take turns.
fn lock() -> std::sync::MutexGuard<'static, ()> {
    cuda::use_emulator_in_tests();
    static L: std::sync::Mutex<()> = std::sync::Mutex::new(());
    L.lock().unwrap_or_else(|e| e.into_inner())
}

/// Philox4x32-10 from Salmon et al. (SC'11): rounds of two 32x32->64 multiplies, a Weyl key
/// schedule between rounds.
fn philox(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let (mut x, mut k) = (ctr, key);
    for round in 0..10 {
        if round > 0 {
            k = [k[0].wrapping_add(0x9E37_79B9), k[1].wrapping_add(0xBB67_AE85)];
        }
        let a = 0xD251_1F53u64 * x[0] as u64;
        let b = 0xCD9E_8D57u64 * x[2] as u64;
        x = [(b >> 32) as u32 ^ x[1] ^ k[0], b as u32, (a >> 32) as u32 ^ x[3] ^ k[1], a as u32];
    }
    x
}

/// Word `j` of a call that started at `st` (the stream contract of `cuda::random`).
fn word(st: PhiloxState, j: u64) -> u32 {
    let b = st.offset.wrapping_add(j / 4);
    philox([b as u32, (b >> 32) as u32, 0, 0], [st.seed as u32, (st.seed >> 32) as u32])[(j % 4) as usize]
}

fn u32_uniform(w: u32) -> f64 {
    w as f64 / 4_294_967_296.0
}

fn u53_uniform(hi: u32, lo: u32) -> f64 {
    ((((hi as u64) << 32) | lo as u64) >> 11) as f64 / 9_007_199_254_740_992.0
}

fn device<T: Scalar>(sizes: &[i64]) -> Rc<Tensor<T>> {
    let n: i64 = sizes.iter().product();
    let st = cuda::storage::new::<T>(0, n as usize).unwrap();
    Tensor::new(View::on_storage(Some(st), 0, sizes, None).unwrap())
}

fn upload<T: Scalar>(data: &[T], sizes: &[i64]) -> View<T> {
    let t = device::<T>(sizes);
    cuda::copy::copy(&t.view(), &View::from_slice(data, sizes).unwrap()).unwrap();
    t.view()
}

fn fetch<T: Scalar>(v: &View<T>) -> Vec<T> {
    crate::ops::copy::values(v).unwrap()
}

fn f64s<T: Num>(v: &View<T>) -> Vec<f64> {
    fetch(v).into_iter().map(|x| x.to_f64()).collect()
}

#[test]
fn philox_known_answers() {
    // Random123's kat_vectors, the three philox4x32 10 lines: counter, key, result.
    assert_eq!(philox([0; 4], [0; 2]), [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]);
    assert_eq!(philox([u32::MAX; 4], [u32::MAX; 2]), [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]);
    let ctr = [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344];
    assert_eq!(philox(ctr, [0xa409_3822, 0x299f_31d0]), [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1]);
}

/// uniform(a, b) on `t` as the reference computes element i of a call at `st`.
fn uniform_ref<T: RandFloat>(st: PhiloxState, i: u64, a: f64, b: f64) -> T {
    let u = if T::DTYPE == DType::Double {
        u53_uniform(word(st, 2 * i), word(st, 2 * i + 1))
    } else {
        u32_uniform(word(st, i))
    };
    let v = T::from_f64(u * (b - a) + a);
    if v.to_f64() >= b { T::from_f64(b).next_below() } else { v }
}

fn check_uniform_bits<T: RandFloat>(n: i64, a: f64, b: f64) {
    manual_seed(0, 0x1234_5678_9abc_def0).unwrap();
    let t = device::<T>(&[n]);
    let st = state(0).unwrap();
    assert_eq!(st, PhiloxState { seed: 0x1234_5678_9abc_def0, offset: 0 });
    dev::uniform(&t, a, b).unwrap();
    let got = fetch(&t.view());
    for (i, g) in got.iter().enumerate() {
        let want = uniform_ref::<T>(st, i as u64, a, b);
        assert_eq!(g.to_f64().to_bits(), want.to_f64().to_bits(), "{} element {i}", T::DTYPE);
    }
    let words = if T::DTYPE == DType::Double { 2 } else { 1 };
    assert_eq!(state(0).unwrap().offset, (n as u64 * words).div_ceil(4), "the call's blocks");
}

#[test]
fn uniform_bits_match_the_reference() {
    let _g = lock();
    check_uniform_bits::<f32>(1001, -2.0, 3.0);
    check_uniform_bits::<f64>(999, 0.0, 1.0);
    check_uniform_bits::<f16>(1000, 1.0, 2.0);
    check_uniform_bits::<bf16>(77, -1.0, 1.0);
}

#[test]
fn values_depend_on_position_not_layout_or_grid() {
    let _g = lock();
    // A transposed view at an offset: element (r, c) is row-major element r*5+c of the call.
    manual_seed(0, 99).unwrap();
    let st = cuda::storage::new::<f32>(0, 40).unwrap();
    let v = View::on_storage(Some(st), 3, &[4, 5], Some(&[1, 6])).unwrap();
    let t = Tensor::new(v.clone());
    dev::uniform(&t, 0.0, 1.0).unwrap();
    let got = fetch(&v);
    let s0 = PhiloxState { seed: 99, offset: 0 };
    for (i, g) in got.iter().enumerate() {
        assert_eq!(g.to_bits(), uniform_ref::<f32>(s0, i as u64, 0.0, 1.0).to_bits(), "element {i}");
    }
    // Past the grid cap (4096 blocks of 512 threads): the grid-stride loop's later rounds.
    let n = 4096 * 512 + 1000;
    manual_seed(0, 5).unwrap();
    let t = device::<f32>(&[n]);
    dev::uniform(&t, 0.0, 1.0).unwrap();
    let got = fetch(&t.view());
    let s0 = PhiloxState { seed: 5, offset: 0 };
    for i in (0..n as usize).step_by(997).chain([n as usize - 1]) {
        assert_eq!(got[i].to_bits(), uniform_ref::<f32>(s0, i as u64, 0.0, 1.0).to_bits(), "element {i}");
    }
}

#[test]
fn reproducible_and_state_round_trip() {
    let _g = lock();
    let draw = || {
        let t = device::<f64>(&[3, 7]);
        dev::normal(&t, 1.0, 2.0).unwrap();
        fetch(&t.view())
    };
    manual_seed(0, 42).unwrap();
    let (a, b) = (draw(), draw());
    assert_ne!(a, b, "consecutive calls use fresh counters");
    manual_seed(0, 42).unwrap();
    assert_eq!(draw(), a, "same seed, same bits");
    let saved = state(0).unwrap();
    assert_eq!(saved.offset, 11, "21 doubles as 11 Box-Muller pairs of 4 words: 11 blocks");
    let c = draw();
    cuda::random::set_state(0, saved).unwrap();
    assert_eq!(draw(), c);
    // getRNGState's bytes restore the same stream.
    let bytes = saved.to_bytes();
    cuda::random::set_state(0, PhiloxState::from_bytes(&bytes).unwrap()).unwrap();
    assert_eq!(draw(), c);
}

fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    (m, x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0))
}

/// Kolmogorov-Smirnov distance of the sample to the CDF `f`.
fn ks(x: &[f64], f: impl Fn(f64) -> f64) -> f64 {
    let mut s = x.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len() as f64;
    s.iter()
        .enumerate()
        .map(|(i, &v)| (f(v) - i as f64 / n).abs().max((f(v) - (i + 1) as f64 / n).abs()))
        .fold(0.0, f64::max)
}

/// erf by Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7, ample for KS bounds of ~1e-2).
fn erf(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let y = 1.0
        - t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))))
            * (-x * x).exp();
    if x < 0.0 { -y } else { y }
}

fn phi(x: f64) -> f64 {
    0.5 * (1.0 + erf(x / std::f64::consts::SQRT_2))
}

/// n = 20000 draws: KS distances below 0.02 (the 1% critical value is 1.63 / sqrt(n) = 0.0115;
/// 16-bit rounding adds at most a few 1e-3), means within 0.05 standard deviations.
fn check_float_dists<T: RandFloat>() {
    const N: i64 = 20000;
    let what = T::DTYPE;
    let t = device::<T>(&[N]);
    let tol = 0.02;
    manual_seed(0, 1000 + what as u64).unwrap();
    dev::uniform(&t, -1.0, 3.0).unwrap();
    let x = f64s(&t.view());
    assert!(x.iter().all(|&v| (-1.0..3.0).contains(&v)), "{what} uniform range");
    assert!(ks(&x, |v| ((v + 1.0) / 4.0).clamp(0.0, 1.0)) < tol, "{what} uniform KS");

    dev::normal(&t, 2.0, 3.0).unwrap();
    let x = f64s(&t.view());
    let (m, var) = mean_var(&x);
    assert!((m - 2.0).abs() < 0.15 && (var.sqrt() - 3.0).abs() < 0.1, "{what} normal mean {m} var {var}");
    assert!(ks(&x, |v| phi((v - 2.0) / 3.0)) < tol, "{what} normal KS");

    dev::log_normal(&t, 0.5, 0.25).unwrap();
    let x = f64s(&t.view());
    assert!(x.iter().all(|&v| v > 0.0), "{what} logNormal positive");
    let lx: Vec<f64> = x.iter().map(|v| v.ln()).collect();
    assert!(ks(&lx, |v| phi((v - 0.5) / 0.25)) < tol, "{what} logNormal KS of the log");

    dev::exponential(&t, 2.0).unwrap();
    let x = f64s(&t.view());
    assert!(x.iter().all(|&v| v >= 0.0), "{what} exponential sign");
    assert!(ks(&x, |v| 1.0 - (-2.0 * v).exp()) < tol, "{what} exponential KS");

    dev::cauchy(&t, -1.0, 0.5).unwrap();
    let x = f64s(&t.view());
    assert!(ks(&x, |v| 0.5 + ((v + 1.0) / 0.5).atan() / std::f64::consts::PI) < tol, "{what} cauchy KS");

    dev::geometric(&t, 0.75).unwrap();
    let x = f64s(&t.view());
    assert!(x.iter().all(|&v| v >= 1.0 && v.fract() == 0.0), "{what} geometric support");
    let (m, _) = mean_var(&x);
    assert!((m - 4.0).abs() < 0.1, "{what} geometric mean {m} (1 / (1 - p) = 4)");

    dev::bernoulli(&t, 0.3).unwrap();
    let x = f64s(&t.view());
    assert!(x.iter().all(|&v| v == 0.0 || v == 1.0));
    let (m, _) = mean_var(&x);
    assert!((m - 0.3).abs() < 0.015, "{what} bernoulli mean {m}");
}

#[test]
fn float_distributions_statistics() {
    let _g = lock();
    check_float_dists::<f32>();
    check_float_dists::<f64>();
    check_float_dists::<f16>();
    check_float_dists::<bf16>();
}

#[test]
fn rand_randn_resize() {
    let _g = lock();
    let t = device::<f32>(&[0]);
    dev::rand(&t, &[30, 40]).unwrap();
    assert_eq!(t.view().sizes, [30, 40]);
    assert!(f64s(&t.view()).iter().all(|&v| (0.0..1.0).contains(&v)));
    dev::randn(&t, &[100, 100]).unwrap();
    let (m, var) = mean_var(&f64s(&t.view()));
    assert!(m.abs() < 0.05 && (var - 1.0).abs() < 0.05, "randn {m} {var}");
    assert!(dev::rand(&t, &[2, -3]).is_err());
    assert_eq!(t.view().sizes, [100, 100], "a refused size list leaves the tensor as it was");
}

fn check_ints<T: Num>(lo: i64, hi: i64) {
    let t = device::<T>(&[4000]);
    let range = |t: &Tensor<T>| {
        let x: Vec<i64> = fetch(&t.view())
            .into_iter()
            .map(|v| match v.to_prim() {
                Prim::I(i) => i,
                Prim::F(f) => f as i64,
            })
            .collect();
        (*x.iter().min().unwrap(), *x.iter().max().unwrap(), x)
    };
    dev::random(&t).unwrap();
    let (mn, mx, _) = range(&t);
    assert!(mn >= 0 && mx <= hi, "{} random in [0, {hi}]: {mn}..{mx}", T::DTYPE);
    dev::clamped_random(&t, lo, lo + 7).unwrap();
    let (mn, mx, x) = range(&t);
    assert_eq!((mn, mx), (lo, lo + 6), "{} clampedRandom", T::DTYPE);
    for v in lo..lo + 7 {
        let c = x.iter().filter(|&&y| y == v).count();
        assert!((480..660).contains(&c), "{} value {v} drawn {c} times of 4000 (expected 571)", T::DTYPE);
    }
    dev::capped_random(&t, 3).unwrap();
    let (mn, mx, _) = range(&t);
    assert_eq!((mn, mx), (0, 2));
}

#[test]
fn integer_ranges() {
    let _g = lock();
    manual_seed(0, 7).unwrap();
    check_ints::<u8>(10, 255);
    check_ints::<i8>(-3, 127);
    check_ints::<i16>(-100, 32767);
    check_ints::<i32>(-1_000_000, i32::MAX as i64);
    check_ints::<i64>(i64::MIN, i64::MAX);
    check_ints::<f32>(-5, 1 << 24);
    check_ints::<f64>(1 << 40, 1 << 53);
    check_ints::<f16>(-8, 1 << 11);
    // The full i64 range: clampedRandom(MIN, MAX) draws 32 bits above MIN (as the host).
    let t = device::<i64>(&[100]);
    dev::clamped_random(&t, i64::MIN, i64::MAX).unwrap();
    assert!(fetch(&t.view()).iter().all(|&v| v < i64::MIN + (1 << 32)));
}

#[test]
fn bernoulli_with_probability_tensors() {
    let _g = lock();
    manual_seed(0, 3).unwrap();
    let n = 3000usize;
    let p: Vec<f64> = (0..n).map(|i| [0.0, 1.0, 0.25][i % 3]).collect();
    let pd = upload(&p, &[3, 1000]);
    let t = device::<u8>(&[1000, 3]); // another shape, same count: row-major pairing
    dev::bernoulli_tensor(&t, &pd).unwrap();
    let x = fetch(&t.view());
    assert!(x.iter().step_by(3).all(|&v| v == 0), "p = 0 never");
    assert!(x.iter().skip(1).step_by(3).all(|&v| v == 1), "p = 1 always");
    let ones = x.iter().skip(2).step_by(3).filter(|&&v| v == 1).count();
    assert!((200..300).contains(&ones), "p = 0.25: {ones} of 1000");
    let pf: Vec<f32> = p.iter().map(|&v| v as f32).collect();
    let t = device::<f64>(&[n as i64]);
    dev::bernoulli_tensor(&t, &upload(&pf, &[n as i64])).unwrap();
    assert!(fetch(&t.view()).iter().step_by(3).all(|&v| v == 0.0));
}

#[test]
fn normal_with_tensor_parameters() {
    let _g = lock();
    manual_seed(0, 11).unwrap();
    let n = 6000;
    let means: Vec<f32> = (0..n).map(|i| [0.0, 100.0, -50.0][i % 3]).collect();
    let md = upload(&means, &[n as i64]);
    let r = device::<f32>(&[0]);
    dev::normal_means(&r, &md, 2.0).unwrap();
    let x = f64s(&r.view());
    for (k, &mk) in means.iter().enumerate().take(3) {
        let col: Vec<f64> = x.iter().skip(k).step_by(3).copied().collect();
        let (m, var) = mean_var(&col);
        assert!((m - mk as f64).abs() < 0.2 && (var.sqrt() - 2.0).abs() < 0.15, "means {k}: {m} {var}");
    }
    let sds: Vec<f32> = (0..n).map(|i| [0.0, 1.0, 10.0][i % 3]).collect();
    let sd = upload(&sds, &[n as i64]);
    dev::normal_stddevs(&r, 5.0, &sd).unwrap();
    let x = f64s(&r.view());
    assert!(x.iter().step_by(3).all(|&v| v == 5.0), "stddev 0 gives the mean");
    let (_, var) = mean_var(&x.iter().skip(2).step_by(3).copied().collect::<Vec<_>>());
    assert!((var.sqrt() - 10.0).abs() < 0.7, "stddev 10: {}", var.sqrt());
    // Broadcast: means (3, 1), stddevs (1, 4) -> (3, 4); stddevs 0 give the means exactly.
    let m3 = upload(&[1.0f32, 2.0, 3.0], &[3, 1]);
    let s4 = upload(&[0.0f32; 4], &[1, 4]);
    dev::normal_means_stddevs(&r, &m3, &s4).unwrap();
    assert_eq!(r.view().sizes, [3, 4]);
    assert_eq!(fetch(&r.view()), [1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0, 3.0]);
    // A negative stddev is refused before anything is written.
    let bad = upload(&[1.0f32, -1.0], &[2]);
    let before = fetch(&r.view());
    assert!(dev::normal_stddevs(&r, 0.0, &bad).is_err());
    assert_eq!((r.view().sizes.clone(), fetch(&r.view())), (vec![3, 4], before));
}

#[test]
fn multinomial_with_and_without_replacement() {
    let _g = lock();
    manual_seed(0, 21).unwrap();
    let w: Vec<f64> = vec![1.0, 0.0, 3.0, 0.0, 4.0, 2.0, 0.0, 0.0, 5.0, 5.0];
    let prob = upload(&w, &[2, 5]);
    let out = device::<i64>(&[0]);
    dev::multinomial(&out, &prob, 4000, true).unwrap();
    assert_eq!(out.view().sizes, [2, 4000]);
    let x = fetch(&out.view());
    for (r, row) in x.chunks(4000).enumerate() {
        let wr = &w[r * 5..r * 5 + 5];
        let total: f64 = wr.iter().sum();
        for (c, &wc) in wr.iter().enumerate() {
            let k = row.iter().filter(|&&v| v == c as i64).count() as f64;
            if wc == 0.0 {
                assert_eq!(k, 0.0, "row {r}: zero-weight category {c} drawn");
            } else {
                assert!((k / 4000.0 - wc / total).abs() < 0.03, "row {r} category {c}: {k}");
            }
        }
    }
    // Without replacement: distinct, never a zero weight, all nonzero ones when n_sample is their count.
    for _ in 0..20 {
        dev::multinomial(&out, &prob, 3, false).unwrap();
        let x = fetch(&out.view());
        for (r, row) in x.chunks(3).enumerate() {
            let mut s = row.to_vec();
            s.sort();
            s.dedup();
            assert_eq!(s.len(), 3, "row {r} distinct: {row:?}");
            assert!(row.iter().all(|&c| w[r * 5 + c as usize] > 0.0), "row {r}: {row:?}");
        }
        assert_eq!(x[..3].iter().map(|&c| 1 << c).sum::<i64>(), 1 | 4 | 16);
    }
    // 1-D probabilities, Float: shape (n_sample).
    let p1 = upload(&[0.0f32, 1.0, 0.0], &[3]);
    dev::multinomial(&out, &p1, 5, true).unwrap();
    assert_eq!((out.view().sizes.clone(), fetch(&out.view())), (vec![5], vec![1; 5]));
    // Refused: too many samples without replacement, a negative weight; nothing changes.
    let offset = state(0).unwrap().offset;
    assert!(dev::multinomial(&out, &p1, 2, false).is_err());
    assert!(dev::multinomial(&out, &upload(&[1.0f32, -1.0], &[2]), 1, true).is_err());
    assert_eq!((out.view().sizes.clone(), state(0).unwrap().offset), (vec![5], offset));
}

#[test]
fn alias_method() {
    let _g = lock();
    manual_seed(0, 8).unwrap();
    let w = [0.1f64, 0.0, 0.4, 0.2, 0.3];
    let prob = upload(&w, &[5]);
    let (j, q) = (device::<i64>(&[0]), device::<f64>(&[0]));
    dev::multinomial_alias_setup(&prob, &j, &q).unwrap();
    assert_eq!((j.view().sizes.clone(), q.view().sizes.clone()), (vec![5], vec![5]));
    let out = device::<i64>(&[20000]);
    dev::multinomial_alias_draw(&out, &j.view(), &q.view()).unwrap();
    let x = fetch(&out.view());
    for (c, &wc) in w.iter().enumerate() {
        let f = x.iter().filter(|&&v| v == c as i64).count() as f64 / 20000.0;
        assert!((f - wc).abs() < 0.015, "category {c}: {f} vs {wc}");
    }
    assert_eq!(state(0).unwrap().offset, 20000 * 2 / 4, "two words per draw");
    let bad_q = upload(&[0.5f64, 2.0, 1.0, 1.0, 1.0], &[5]);
    let before = fetch(&out.view());
    assert!(dev::multinomial_alias_draw(&out, &j.view(), &bad_q).is_err());
    assert_eq!(fetch(&out.view()), before);
}

#[test]
fn refused_calls_change_nothing() {
    let _g = lock();
    manual_seed(0, 1).unwrap();
    let t = device::<f32>(&[50]);
    dev::uniform(&t, 0.0, 1.0).unwrap();
    let (before, st) = (fetch(&t.view()), state(0).unwrap());
    assert!(dev::bernoulli(&t, 1.5).is_err());
    assert!(dev::uniform(&t, 2.0, 1.0).is_err());
    assert!(dev::normal(&t, 0.0, 0.0).is_err());
    assert!(dev::exponential(&t, -1.0).is_err());
    assert!(dev::cauchy(&t, 0.0, 0.0).is_err());
    assert!(dev::log_normal(&t, 0.0, -1.0).is_err());
    assert!(dev::geometric(&t, 1.0).is_err());
    assert!(dev::clamped_random(&t, 5, 5).is_err());
    assert!(dev::capped_random(&t, 0).is_err());
    let e = dev::bernoulli_tensor(&t, &upload(&[0.5f32; 49], &[49])).unwrap_err();
    assert!(e.to_string().contains("49 elements"), "{e}");
    let bad: Vec<f64> = (0..50).map(|i| if i == 7 { -0.1 } else { 0.5 }).collect();
    assert!(dev::bernoulli_tensor(&t, &upload(&bad, &[50])).is_err());
    assert_eq!((fetch(&t.view()), state(0).unwrap()), (before, st));
    // A host tensor is refused by name.
    let h = Tensor::new(View::<f32>::contiguous(&[3]).unwrap());
    assert!(dev::uniform(&h, 0.0, 1.0).unwrap_err().to_string().contains("host memory"));
}
