//! Reduction tests, against naive loops.

use super::*;
use half::{bf16, f16};

/// A small deterministic generator.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn arange<T: Scalar>(sizes: &[i64], f: impl Fn(usize) -> T) -> View<T> {
    let n: i64 = sizes.iter().product();
    View::from_slice(&(0..n as usize).map(f).collect::<Vec<_>>(), sizes).unwrap()
}

/// Row-major multi-indices of `sizes`.
fn indices(sizes: &[i64]) -> Vec<Vec<i64>> {
    let n: i64 = sizes.iter().product();
    (0..n)
        .map(|mut i| {
            let mut idx = vec![0; sizes.len()];
            for d in (0..sizes.len()).rev() {
                idx[d] = i % sizes[d];
                i /= sizes[d];
            }
            idx
        })
        .collect()
}

/// Naive reduction along `d`: for each output (row-major over the other dims), the slice.
fn slices<T: Scalar>(v: &View<T>, d: usize) -> Vec<Vec<T>> {
    let mut osz = v.sizes.clone();
    osz[d] = 1;
    indices(&osz)
        .into_iter()
        .map(|mut idx| {
            (0..v.sizes[d])
                .map(|i| {
                    idx[d] = i;
                    v.get(&idx).unwrap()
                })
                .collect()
        })
        .collect()
}

fn random_view(rng: &mut Lcg, nd: usize) -> View<f64> {
    let sizes: Vec<i64> = (0..nd).map(|_| 1 + rng.below(7) as i64).collect();
    let base = arange(&sizes, |i| ((i * 37 % 23) as f64) - 11.0 + (i % 3) as f64 * 0.25);
    // a random permutation of dims, viewed back: a non-contiguous view of the same values
    let mut v = base;
    for _ in 0..nd {
        let (a, b) = (rng.below(nd as u64) as i32, rng.below(nd as u64) as i32);
        v = v.transpose(a, b).unwrap();
    }
    v
}

fn out<T: Scalar>() -> crate::core::refcount::Rc<Tensor<T>> {
    Tensor::new(View::empty())
}

#[test]
fn dim_reductions_match_naive() {
    let mut rng = Lcg(7);
    for case in 0..if cfg!(miri) { 5 } else { 300 } {
        let v = random_view(&mut rng, 1 + case % 5);
        let d = rng.below(v.ndim() as u64) as usize;
        let keep = case % 2 == 0;
        let sl = slices(&v, d);
        let shape = reduced_shape(&v.sizes, d, keep);
        let r = out::<f64>();
        sum(&r, &v, d as i32, keep).unwrap();
        assert_eq!(r.view().sizes, shape);
        let want: Vec<f64> = sl.iter().map(|s| s.iter().sum()).collect();
        for (g, w) in r.view().to_vec().unwrap().iter().zip(&want) {
            assert!((g - w).abs() < 1e-9, "sum {g} vs {w}");
        }
        prod(&r, &v, d as i32, keep).unwrap();
        let want: Vec<f64> = sl.iter().map(|s| s.iter().product()).collect();
        for (g, w) in r.view().to_vec().unwrap().iter().zip(&want) {
            assert!((g - w).abs() <= 1e-9 * w.abs().max(1.0), "prod {g} vs {w}");
        }
        let idx = out::<i64>();
        type ArgFn = fn(&Tensor<f64>, &Tensor<i64>, &View<f64>, i32, bool) -> crate::core::error::Result<()>;
        type Fold = fn(f64, f64) -> f64;
        let best_of: [(ArgFn, f64, Fold); 2] = [(max, f64::NEG_INFINITY, f64::max), (min, f64::INFINITY, f64::min)];
        for (arg_best, start, better) in best_of {
            arg_best(&r, &idx, &v, d as i32, keep).unwrap();
            let (vals, ids) = (r.view().to_vec().unwrap(), idx.view().to_vec().unwrap());
            for (s, (g, i)) in sl.iter().zip(vals.iter().zip(&ids)) {
                let best = s.iter().cloned().fold(start, better);
                assert_eq!(*g, best);
                assert_eq!(*i as usize, s.iter().position(|&x| x == best).unwrap());
            }
        }
        var(&r, &v, d as i32, false, keep).unwrap();
        for (s, g) in sl.iter().zip(r.view().to_vec().unwrap()) {
            let n = s.len() as f64;
            let m = s.iter().sum::<f64>() / n;
            let w = s.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
            assert!((g - w).abs() < 1e-9 * w.abs().max(1.0) || (g.is_nan() && w.is_nan()), "var {g} vs {w}");
        }
        median(&r, &idx, &v, d as i32, keep).unwrap();
        for (s, g) in sl.iter().zip(r.view().to_vec().unwrap()) {
            let mut t = s.clone();
            t.sort_by(|a, b| a.partial_cmp(b).unwrap());
            assert_eq!(g, t[(t.len() - 1) / 2]);
        }
        cumsum(&r, &v, d as i32).unwrap();
        assert_eq!(r.view().sizes, v.sizes);
        for idx in indices(&v.sizes) {
            let mut j = idx.clone();
            let w: f64 = (0..=idx[d])
                .map(|i| {
                    j[d] = i;
                    v.get(&j).unwrap()
                })
                .sum();
            assert!((r.view().get(&idx).unwrap() - w).abs() < 1e-9);
        }
    }
}

#[test]
fn whole_reductions_match_naive() {
    let mut rng = Lcg(11);
    for case in 0..if cfg!(miri) { 8 } else { 100 } {
        let v = random_view(&mut rng, 1 + case % 5);
        let all = v.to_vec().unwrap();
        assert!((sumall(&v).unwrap() - all.iter().sum::<f64>()).abs() < 1e-9);
        assert_eq!(maxall(&v).unwrap(), all.iter().cloned().fold(f64::NEG_INFINITY, f64::max));
        assert_eq!(minall(&v).unwrap(), all.iter().cloned().fold(f64::INFINITY, f64::min));
        let l2 = all.iter().map(|x| x * x).sum::<f64>().sqrt();
        assert!((normall(&v, 2.0).unwrap() - l2).abs() < 1e-9);
        assert_eq!(normall(&v, 0.0).unwrap(), all.iter().filter(|&&x| x != 0.0).count() as f64);
        let l3 = all.iter().map(|x| x.abs().powf(3.0)).sum::<f64>().powf(1.0 / 3.0);
        assert!((normall(&v, 3.0).unwrap() - l3).abs() < 1e-9 * l3.max(1.0));
        let contiguous = View::from_slice(&all, &[all.len() as i64]).unwrap();
        assert!((dot(&v, &contiguous).unwrap() - all.iter().map(|x| x * x).sum::<f64>()).abs() < 1e-9);
        assert!(equal(&v, &v).unwrap());
        assert_eq!(dist(&v, &contiguous, 2.0).unwrap(), 0.0);
    }
}

#[test]
fn float_sums_are_exact_and_thread_independent() {
    // (60 000 under Miri: still many blocks, and above the parallel grain)
    let n = if cfg!(miri) { 60_000usize } else { 3_000_000 };
    let ones = View::from_slice(&vec![1f32; n], &[n as i64]).unwrap();
    assert_eq!(sumall(&ones).unwrap(), n as f64);
    let h = View::from_slice(&vec![f16::ONE; n], &[n as i64]).unwrap();
    assert_eq!(sumall(&h).unwrap(), n as f32);
    let b = View::from_slice(&vec![bf16::ONE; n], &[1000, (n / 1000) as i64]).unwrap();
    assert_eq!(sumall(&b).unwrap(), n as f32);
    // columns of ones: each column sums n / 30 ones exactly
    let r = out::<f32>();
    let cols = View::from_slice(&vec![1f32; n], &[(n / 30) as i64, 30]).unwrap();
    sum(&r, &cols, 0, false).unwrap();
    assert!(r.view().to_vec().unwrap().iter().all(|&x| x == (n / 30) as f32));
    // thread independence: same bits for 1 and 2 threads on awkward values
    let vals: Vec<f32> = (0..n).map(|i| ((i * 7919 % 10007) as f32).sin() * 1e3).collect();
    let v = View::from_slice(&vals, &[n as i64]).unwrap();
    let m = View::from_slice(&vals, &[(n / 1000) as i64, 1000]).unwrap();
    let old = parallel::num_threads();
    let mut results = Vec::new();
    for t in [1, 2, 3] {
        parallel::set_num_threads(t);
        let r0 = out::<f32>();
        let r1 = out::<f32>();
        sum(&r0, &m, 0, false).unwrap();
        sum(&r1, &m.transpose(0, 1).unwrap(), 0, false).unwrap();
        results.push((sumall(&v).unwrap(), r0.view().to_vec().unwrap(), r1.view().to_vec().unwrap()));
    }
    parallel::set_num_threads(old);
    assert!(results.windows(2).all(|w| w[0] == w[1]));
    let exact: f64 = vals.iter().map(|&x| x as f64).sum();
    assert!((results[0].0 - exact).abs() < 1e-6 * exact.abs().max(1.0));
}

#[test]
fn large_shapes_take_the_blocked_and_tiled_paths() {
    // sizes beyond BLOCK, ROW_BLOCK, SCAN_TILE and the small-run lanes, through views
    // (under Miri a smaller matrix that still passes every one of those sizes, one view)
    let shape: [i64; 2] = if cfg!(miri) { [130, 520] } else { [300, 700] };
    let m = arange(&shape, |i| ((i * 31 % 17) as i64) - 8);
    let views = [m.clone(), m.transpose(0, 1).unwrap(), m.narrow(1, 3, shape[1] - 50).unwrap()];
    for v in views.into_iter().take(if cfg!(miri) { 1 } else { 3 }) {
        for d in 0..2 {
            let sl = slices(&v, d);
            let r = out::<i64>();
            sum(&r, &v, d as i32, false).unwrap();
            assert_eq!(r.view().to_vec().unwrap(), sl.iter().map(|s| s.iter().sum()).collect::<Vec<i64>>());
            let idx = out::<i64>();
            min(&r, &idx, &v, d as i32, false).unwrap();
            let want: Vec<i64> =
                sl.iter().map(|s| s.iter().position(|x| x == s.iter().min().unwrap()).unwrap() as i64).collect();
            assert_eq!(idx.view().to_vec().unwrap(), want);
            cumsum(&r, &v, d as i32).unwrap();
            for (s, got) in sl.iter().zip(slices(&r.view(), d)) {
                let want: Vec<i64> = s.iter().scan(0, |acc, x| Some(*acc + x).inspect(|&y| *acc = y)).collect();
                assert_eq!(got, want);
            }
        }
        assert_eq!(sumall(&v).unwrap(), v.to_vec().unwrap().iter().sum::<i64>());
    }
}

#[test]
fn keepdim_and_errors() {
    let v = arange(&[3], |i| i as i32);
    let r = out::<i32>();
    sum(&r, &v, 0, false).unwrap();
    assert_eq!((r.view().sizes, r.view().to_vec().unwrap()), (vec![1], vec![3]));
    let m = arange(&[2, 3, 4], |i| i as i32);
    sum(&r, &m, 1, true).unwrap();
    assert_eq!(r.view().sizes, vec![2, 1, 4]);
    sum(&r, &m, 1, false).unwrap();
    assert_eq!(r.view().sizes, vec![2, 4]);
    assert_eq!(sum(&r, &m, 3, false).unwrap_err().arg, Some(3));
    let idx = out::<i64>();
    assert!(kthvalue(&r, &idx, &m, 0, 0, false).is_err());
    assert!(kthvalue(&r, &idx, &m, 3, 0, false).is_err());
    kthvalue(&r, &idx, &m, 2, 0, false).unwrap();
    assert_eq!(r.view().to_vec().unwrap(), (12..24).collect::<Vec<_>>());
    assert!(maxall(&View::<f32>::empty()).is_err());
    assert_eq!(sumall(&View::<f32>::empty()).unwrap(), 0.0);
    assert_eq!(prodall(&View::<i8>::empty()).unwrap(), 1);
}

#[test]
fn nan_and_ties() {
    let v = View::from_slice(&[1.0f32, f32::NAN, 3.0, f32::NAN, 3.0], &[5]).unwrap();
    assert!(maxall(&v).unwrap().is_nan() && minall(&v).unwrap().is_nan());
    let (r, idx) = (out::<f32>(), out::<i64>());
    max(&r, &idx, &v, 0, false).unwrap();
    assert!(r.view().to_vec().unwrap()[0].is_nan());
    assert_eq!(idx.view().to_vec().unwrap(), vec![1]);
    let t = View::from_slice(&[2i16, 5, 5, 1, 5, 1, 1], &[7]).unwrap();
    let (r, idx) = (out::<i16>(), out::<i64>());
    max(&r, &idx, &t, 0, true).unwrap();
    assert_eq!((r.view().to_vec().unwrap(), idx.view().to_vec().unwrap()), (vec![5], vec![1]));
    mode(&r, &idx, &t, 0, false).unwrap();
    // 5 and 1 both appear 3 times: the smaller value wins; last occurrence
    assert_eq!((r.view().to_vec().unwrap(), idx.view().to_vec().unwrap()), (vec![1], vec![6]));
    kthvalue(&r, &idx, &t, 5, 0, false).unwrap();
    assert_eq!((r.view().to_vec().unwrap(), idx.view().to_vec().unwrap()), (vec![5], vec![1]));
    let b = View::from_slice(&[Bool(0), Bool(7), Bool(1)], &[3]).unwrap();
    assert_eq!(count_nonzero(&b).unwrap(), 2);
    assert_eq!(maxall(&b).unwrap(), Bool(1));
    assert!(!logicalall(&b).unwrap() && logicalany(&b).unwrap());
    assert!(equal(&b, &View::from_slice(&[Bool(0), Bool(1), Bool(1)], &[3]).unwrap()).unwrap());
}

#[test]
fn sum_to_undoes_broadcast() {
    let t = arange(&[2, 3, 4], |i| i as i64);
    let r = out::<i64>();
    sum_to(&r, &t, &[3, 1]).unwrap();
    assert_eq!(r.view().sizes, vec![3, 1]);
    let want: Vec<i64> = (0..3).map(|j| (0..2).flat_map(|i| (0..4).map(move |k| i * 12 + j * 4 + k)).sum()).collect();
    assert_eq!(r.view().to_vec().unwrap(), want);
    sum_to(&r, &t, &[4]).unwrap();
    assert_eq!(r.view().to_vec().unwrap(), (0..4).map(|k| (0..6).map(|i| i * 4 + k).sum()).collect::<Vec<i64>>());
    sum_to(&r, &t, &[2, 3, 4]).unwrap();
    assert_eq!(r.view().to_vec().unwrap(), t.to_vec().unwrap());
    assert!(sum_to(&r, &t, &[2, 4]).is_err());
    assert!(sum_to(&r, &t, &[1, 2, 3, 4]).is_err());
}

#[test]
fn stats_histograms_renorm() {
    let v = View::from_slice(&[1.0f64, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    assert_eq!(meanall(&v).unwrap(), 2.5);
    assert!((varall(&v, false).unwrap() - 5.0 / 3.0).abs() < 1e-12);
    assert!((varall(&v, true).unwrap() - 1.25).abs() < 1e-12);
    assert!(varall(&View::from_slice(&[1.0f64], &[1]).unwrap(), false).unwrap().is_nan());
    assert_eq!(trace(&v).unwrap(), 5.0);
    assert_eq!(trace(&v.transpose(0, 1).unwrap()).unwrap(), 5.0);
    let h = out::<f64>();
    histc(&h, &v, 3, 0.0, 0.0).unwrap();
    assert_eq!(h.view().to_vec().unwrap(), vec![1.0, 1.0, 2.0]);
    histc(&h, &v, 4, 2.0, 3.0).unwrap();
    assert_eq!(h.view().to_vec().unwrap(), vec![1.0, 0.0, 0.0, 1.0]);
    bhistc(&h, &v, 2, 0.0, 4.0).unwrap();
    assert_eq!((h.view().sizes, h.view().to_vec().unwrap()), (vec![2, 2], vec![1.0, 1.0, 0.0, 2.0]));
    assert!(histc(&h, &v, 0, 0.0, 1.0).is_err());
    assert!(histc(&h, &v, 3, 2.0, 1.0).is_err());
    let r = out::<f64>();
    renorm(&r, &v, 2.0, 0, 3.0).unwrap();
    let got = r.view().to_vec().unwrap();
    assert_eq!(&got[..2], &[1.0, 2.0]);
    let f = 3.0 / (5.0 + 1e-7);
    assert!((got[2] - 3.0 * f).abs() < 1e-12 && (got[3] - 4.0 * f).abs() < 1e-12);
    norm(&r, &v, f64::INFINITY, 1, false).unwrap();
    assert_eq!(r.view().to_vec().unwrap(), vec![2.0, 4.0]);
    std(&r, &v, 0, true, false).unwrap();
    assert_eq!(r.view().to_vec().unwrap(), vec![1.0, 1.0]);
    mean(&r, &v, 1, true).unwrap();
    assert_eq!((r.view().sizes, r.view().to_vec().unwrap()), (vec![2, 1], vec![1.5, 3.5]));
}
