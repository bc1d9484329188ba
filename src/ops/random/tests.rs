//! Tests.

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
