//! Index op tests.

use super::*;

/// xorshift64*: a small deterministic generator for the tests.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: i64) -> i64 {
        (self.next() % n as u64) as i64
    }
    fn shape(&mut self, max_nd: i64) -> Vec<i64> {
        (0..1 + self.below(max_nd)).map(|_| 1 + self.below(4)).collect()
    }
}

fn from_vec<T: Scalar>(v: Vec<T>, shape: &[i64]) -> View<T> {
    View::from_slice(&v, shape).unwrap()
}

fn randv(rng: &mut Rng, shape: &[i64]) -> View<f64> {
    let n = numel(shape).unwrap();
    from_vec((0..n).map(|_| rng.below(19) as f64 - 9.0).collect(), shape)
}

/// The same values as `v`, stored transposed (a non-contiguous view) when `flip`.
fn maybe_strided(v: &View<f64>, flip: bool) -> View<f64> {
    if !flip || v.ndim() < 2 {
        return v.clone();
    }
    let nd = v.ndim() as i32;
    let t = v.transpose(0, nd - 1).unwrap();
    let c = dense(&t).unwrap();
    c.transpose(0, nd - 1).unwrap()
}

/// All multi-indices of `shape` in row-major order.
fn positions(shape: &[i64]) -> Vec<Vec<i64>> {
    let n = numel(shape).unwrap();
    let mut out = Vec::with_capacity(n);
    let mut at = vec![0i64; shape.len()];
    for _ in 0..n {
        out.push(at.clone());
        for e in (0..shape.len()).rev() {
            at[e] += 1;
            if at[e] < shape[e] {
                break;
            }
            at[e] = 0;
        }
    }
    out
}

fn tensor<T: Scalar>(v: View<T>) -> Rc<Tensor<T>> {
    Tensor::new(v)
}

/// The random cases of the gather/scatter and index tests: for each, the generator, the case
/// number, a shape of 1 to 4 dims, a dim of it and a random source of that shape (stored
/// transposed in every other case: the odd ones when `odd`).
fn random_cases(seed: u64, odd: bool, mut f: impl FnMut(&mut Rng, usize, &[i64], usize, View<f64>)) {
    let mut rng = Rng(seed);
    for case in 0..if cfg!(miri) { 10 } else { 200 } {
        let shape = rng.shape(4);
        let d = rng.below(shape.len() as i64) as usize;
        let src = maybe_strided(&randv(&mut rng, &shape), case % 2 == odd as usize);
        f(&mut rng, case, &shape, d, src);
    }
}

/// `before` (row-major, of shape `dshape`) after, for each position `p` of `vals` in order,
/// element `target(p)` is set to `vals[p]` (mode 0), has `vals[p]` added (mode 1) or is set to
/// `fill` (mode 2).
fn naive_update(
    before: Vec<f64>,
    dshape: &[i64],
    vals: &View<f64>,
    target: impl Fn(&[i64]) -> Vec<i64>,
    mode: usize,
    fill: f64,
) -> Vec<f64> {
    let mut want = before;
    let dpos = positions(dshape);
    for p in positions(&vals.sizes) {
        let f = dpos.iter().position(|x| *x == target(&p)).unwrap();
        let v = vals.get(&p).unwrap();
        want[f] = match mode {
            0 => v,
            1 => want[f] + v,
            _ => fill,
        };
    }
    want
}

#[test]
fn gather_scatter_match_naive() {
    random_cases(0x1234_5678, false, |rng, case, shape, d, src| {
        let mut ishape = shape.to_vec();
        ishape[d] = 1 + rng.below(5);
        let n = numel(&ishape).unwrap();
        let idx = from_vec((0..n).map(|_| rng.below(shape[d])).collect(), &ishape);
        let target = |p: &[i64]| {
            let mut q = p.to_vec();
            q[d] = idx.get(p).unwrap();
            q
        };
        // gather
        let r = tensor(View::<f64>::empty());
        gather(&r, &src, d as i32, &idx).unwrap();
        let got = r.view();
        assert_eq!(got.sizes, ishape);
        for p in positions(&ishape) {
            assert_eq!(got.get(&p).unwrap(), src.get(&target(&p)).unwrap());
        }
        // scatter / scatterAdd / scatterFill into a copy of `dst` (shape like src except along d)
        let mut dshape = ishape.clone();
        dshape[d] = shape[d];
        let dst0 = randv(rng, &dshape);
        let vals = randv(rng, &ishape);
        for mode in 0..3 {
            let dst = maybe_strided(&dst0, case % 3 == 0);
            let want = naive_update(dst0.to_vec().unwrap(), &dshape, &vals, target, mode, 7.5);
            match mode {
                0 => scatter(&dst, d as i32, &idx, &vals).unwrap(),
                1 => scatter_add(&dst, d as i32, &idx, &vals).unwrap(),
                _ => scatter_fill(&dst, d as i32, &idx, 7.5).unwrap(),
            }
            assert_eq!(dst.to_vec().unwrap(), want, "mode {mode} shape {shape:?} d {d}");
        }
    });
}

#[test]
fn index_ops_match_naive() {
    random_cases(0xdead_beef, true, |rng, case, shape, d, src| {
        let k = 1 + rng.below(6);
        let idx = from_vec((0..k).map(|_| rng.below(shape[d])).collect(), &[k]);
        let target = |p: &[i64]| {
            let mut q = p.to_vec();
            q[d] = idx.get(&[p[d]]).unwrap();
            q
        };
        let r = tensor(View::<f64>::empty());
        index_select(&r, &src, d as i32, &idx).unwrap();
        let got = r.view();
        let mut oshape = shape.to_vec();
        oshape[d] = k;
        assert_eq!(got.sizes, oshape);
        for p in positions(&oshape) {
            assert_eq!(got.get(&p).unwrap(), src.get(&target(&p)).unwrap());
        }
        // indexCopy / indexAdd / indexFill: src of size k along d
        let vals = randv(rng, &oshape);
        for mode in 0..3 {
            let t = maybe_strided(&src, case % 3 == 0);
            let t = dense(&t).unwrap();
            let want = naive_update(t.to_vec().unwrap(), shape, &vals, target, mode, -1.0);
            match mode {
                0 => index_copy(&t, d as i32, &idx, &vals).unwrap(),
                1 => index_add(&t, d as i32, &idx, &vals).unwrap(),
                _ => index_fill(&t, d as i32, &idx, -1.0).unwrap(),
            }
            assert_eq!(t.to_vec().unwrap(), want);
        }
    });
}

#[test]
fn bad_indices_leave_outputs_untouched() {
    let src = from_vec((0..12).map(|x| x as f64).collect(), &[3, 4]);
    let idx = from_vec(vec![0i64, 5], &[2]);
    let r = tensor(from_vec(vec![9.0; 2], &[2]));
    let e = index_select(&r, &src, 0, &idx).unwrap_err();
    assert!(e.msg.contains("index 5") && e.msg.contains("size 3"), "{}", e.msg);
    assert_eq!(r.view().sizes, vec![2]);
    assert_eq!(r.view().to_vec().unwrap(), vec![9.0; 2]);
    let t = dense(&src).unwrap();
    let neg = from_vec(vec![1i64, -1], &[2]);
    assert!(index_fill(&t, 1, &neg, 0.0).is_err());
    assert!(index_copy(&t, 0, &idx, &from_vec(vec![0.0; 8], &[2, 4])).is_err());
    let gi = from_vec(vec![0i64, 1, 2, 3, 0, 1, 2, 4, 0, 0, 0, 0], &[3, 4]);
    assert!(scatter(&t, 1, &gi, &src).is_err());
    assert!(scatter_fill(&t, 1, &gi, 1.0).is_err());
    assert_eq!(t.to_vec().unwrap(), src.to_vec().unwrap());
    let g = tensor(View::<f64>::empty());
    assert!(gather(&g, &src, 1, &gi).is_err());
    assert_eq!(g.view().ndim(), 0);
    assert!(gather(&g, &src, 2, &gi).is_err());
}

#[test]
fn aliasing_outputs() {
    // index_select into its own source (a permutation): computed through a temporary.
    let v = from_vec(vec![10.0, 11.0, 12.0, 13.0], &[4]);
    let t = tensor(v.clone());
    let perm = from_vec(vec![3i64, 2, 1, 0], &[4]);
    index_select(&t, &v, 0, &perm).unwrap();
    assert_eq!(t.view().to_vec().unwrap(), vec![13.0, 12.0, 11.0, 10.0]);
    // scatter from a view of the destination itself
    let m = from_vec((0..6).map(|x| x as f64).collect(), &[2, 3]);
    let idx = from_vec(vec![2i64, 1, 0, 2, 1, 0], &[2, 3]);
    scatter(&m, 1, &idx, &m.clone()).unwrap();
    assert_eq!(m.to_vec().unwrap(), vec![2.0, 1.0, 0.0, 5.0, 4.0, 3.0]);
    // in-place sort
    let s = from_vec(vec![3.0, 1.0, 2.0, 0.0], &[2, 2]);
    let st = tensor(s.clone());
    let si = tensor(View::<i64>::empty());
    sort(&st, &si, &s, 1, false).unwrap();
    assert_eq!(s.to_vec().unwrap(), vec![1.0, 3.0, 0.0, 2.0]);
    assert_eq!(si.view().to_vec().unwrap(), vec![1, 0, 1, 0]);
    // cat with the output as an input
    let a = from_vec(vec![1.0, 2.0], &[2]);
    let ta = tensor(a.clone());
    cat(&ta, &[a.clone(), a.clone()], 0).unwrap();
    assert_eq!(ta.view().to_vec().unwrap(), vec![1.0, 2.0, 1.0, 2.0]);
}

#[test]
fn masks() {
    let t = from_vec((0..6).map(|x| x as f32).collect(), &[2, 3]);
    let m = from_vec(vec![1u8, 0, 1, 0, 1, 0], &[2, 3]);
    masked_fill(&t, &m, -1.0).unwrap();
    assert_eq!(t.to_vec().unwrap(), vec![-1.0, 1.0, -1.0, 3.0, -1.0, 5.0]);
    // a row mask broadcast over both rows, Bool with a non-canonical true byte
    let bm = from_vec(vec![Bool(0), Bool(9), Bool(0)], &[3]);
    masked_fill(&t, &bm, 7.0).unwrap();
    assert_eq!(t.to_vec().unwrap(), vec![-1.0, 7.0, -1.0, 3.0, 7.0, 5.0]);
    // Byte masks must be 0/1, checked before writing
    let bad = from_vec(vec![1u8, 2, 0, 0, 0, 0], &[2, 3]);
    let before = t.to_vec().unwrap();
    assert!(masked_fill(&t, &bad, 0.0).is_err());
    assert!(masked_copy(&t, &bad, &from_vec(vec![0.0f32; 6], &[6])).is_err());
    assert_eq!(t.to_vec().unwrap(), before);
    // maskedCopy takes successive source elements; too few is an error
    masked_copy(&t, &m, &from_vec(vec![100.0, 200.0, 300.0], &[3])).unwrap();
    assert_eq!(t.to_vec().unwrap(), vec![100.0, 7.0, 200.0, 3.0, 300.0, 5.0]);
    assert!(masked_copy(&t, &m, &from_vec(vec![1.0, 2.0], &[2])).is_err());
    // maskedSelect, transposed source
    let r = tensor(View::<f32>::empty());
    masked_select(&r, &t.transpose(0, 1).unwrap(), &from_vec(vec![1u8, 1, 0, 0, 0, 1], &[3, 2])).unwrap();
    assert_eq!(r.view().to_vec().unwrap(), vec![100.0, 3.0, 5.0]);
    masked_select(&r, &t, &from_vec(vec![0u8; 6], &[6])).unwrap();
    assert_eq!(r.view().ndim(), 0);
    // nonzero
    let z = from_vec(vec![0.0f64, f64::NAN, -0.0, 2.0], &[2, 2]);
    let s = tensor(View::<i64>::empty());
    nonzero(&s, &z).unwrap();
    assert_eq!(s.view().sizes, vec![2, 2]);
    assert_eq!(s.view().to_vec().unwrap(), vec![0, 1, 1, 1]);
    nonzero(&s, &from_vec(vec![0i32; 3], &[3])).unwrap();
    assert_eq!(s.view().ndim(), 0);
}

#[test]
fn sort_is_stable_with_nan_last() {
    let v = from_vec(vec![2.0f32, f32::NAN, 1.0, 2.0, -0.0, 0.0, f32::NAN, 1.0], &[8]);
    let (rt, ri) = (tensor(View::<f32>::empty()), tensor(View::<i64>::empty()));
    sort(&rt, &ri, &v, 0, false).unwrap();
    assert_eq!(ri.view().to_vec().unwrap(), vec![4, 5, 2, 7, 0, 3, 1, 6]);
    sort(&rt, &ri, &v, 0, true).unwrap();
    assert_eq!(ri.view().to_vec().unwrap(), vec![1, 6, 0, 3, 2, 7, 4, 5]);
    topk(&rt, &ri, &v, 3, 0, true).unwrap();
    assert_eq!(ri.view().to_vec().unwrap(), vec![1, 6, 0]);
    topk(&rt, &ri, &v, 3, 0, false).unwrap();
    assert_eq!(ri.view().to_vec().unwrap(), vec![4, 5, 2]);
    assert_eq!(rt.view().sizes, vec![3]);
    assert!(topk(&rt, &ri, &v, 9, 0, false).is_err());
    topk(&rt, &ri, &v, 0, 0, false).unwrap();
    assert_eq!(rt.view().ndim(), 0);
    // random 3-D sorts along each dim against a naive stable sort
    let mut rng = Rng(77);
    for _ in 0..50 {
        let shape = rng.shape(3);
        let t = randv(&mut rng, &shape);
        let d = rng.below(shape.len() as i64) as usize;
        let desc = rng.below(2) == 1;
        let k = 1 + rng.below(shape[d]);
        let (vt, it) = (tensor(View::<f64>::empty()), tensor(View::<i64>::empty()));
        sort(&vt, &it, &t, d as i32, desc).unwrap();
        let (kv, ki) = (tensor(View::<f64>::empty()), tensor(View::<i64>::empty()));
        topk(&kv, &ki, &t, k, d as i32, desc).unwrap();
        let mut sshape = shape.clone();
        sshape[d] = 1;
        for p in positions(&sshape) {
            let mut col: Vec<(f64, i64)> = (0..shape[d])
                .map(|i| {
                    let mut q = p.clone();
                    q[d] = i;
                    (t.get(&q).unwrap(), i)
                })
                .collect();
            if desc {
                col.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
            } else {
                col.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
            }
            for (i, &(val, pos)) in col.iter().enumerate() {
                let mut q = p.clone();
                q[d] = i as i64;
                assert_eq!(vt.view().get(&q).unwrap(), val);
                assert_eq!(it.view().get(&q).unwrap(), pos);
                if (i as i64) < k {
                    assert_eq!(kv.view().get(&q).unwrap(), val);
                    assert_eq!(ki.view().get(&q).unwrap(), pos);
                }
            }
        }
    }
}

#[test]
fn constructors_and_shapes() {
    let r = tensor(View::<i32>::empty());
    eye(&r, 2, 3).unwrap();
    assert_eq!(r.view().to_vec().unwrap(), vec![1, 0, 0, 0, 1, 0]);
    assert!(eye(&r, 0, 3).is_err());
    diag(&r, &from_vec(vec![1, 2], &[2]), -1).unwrap();
    assert_eq!(r.view().sizes, vec![3, 3]);
    assert_eq!(r.view().to_vec().unwrap(), vec![0, 0, 0, 1, 0, 0, 0, 2, 0]);
    let m = from_vec((0..12).collect::<Vec<i32>>(), &[3, 4]);
    diag(&r, &m, 1).unwrap();
    assert_eq!(r.view().to_vec().unwrap(), vec![1, 6, 11]);
    diag(&r, &m.transpose(0, 1).unwrap(), -2).unwrap();
    assert_eq!(r.view().to_vec().unwrap(), vec![2, 7]);
    diag(&r, &m, 4).unwrap();
    assert_eq!(r.view().ndim(), 0);
    tril(&r, &m, 0).unwrap();
    assert_eq!(r.view().to_vec().unwrap(), vec![0, 0, 0, 0, 4, 5, 0, 0, 8, 9, 10, 0]);
    triu(&r, &m, -1).unwrap();
    assert_eq!(r.view().to_vec().unwrap(), vec![0, 1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11]);
    zeros(&r, &[2, 2, -1]).unwrap();
    assert_eq!((r.view().sizes, r.view().to_vec().unwrap()), (vec![2, 2], vec![0; 4]));
    ones_like(&r, &m).unwrap();
    assert_eq!(r.view().to_vec().unwrap(), vec![1; 12]);
    reshape(&r, &m.transpose(0, 1).unwrap(), &[2, 6]).unwrap();
    assert_eq!(r.view().to_vec().unwrap(), vec![0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]);
    assert!(reshape(&r, &m, &[5]).is_err());
    // cat: mixed ranks, -1, a dimension one past the last
    let a = from_vec(vec![1, 2], &[2]);
    let b = from_vec(vec![3, 4, 5, 6], &[2, 2]);
    cat(&r, &[a.clone(), b.clone()], 1).unwrap();
    assert_eq!((r.view().sizes, r.view().to_vec().unwrap()), (vec![2, 3], vec![1, 3, 4, 2, 5, 6]));
    cat(&r, &[b.clone(), View::empty(), b.clone()], -1).unwrap();
    assert_eq!(r.view().sizes, vec![2, 4]);
    cat(&r, &[a.clone(), a.clone()], 1).unwrap();
    assert_eq!((r.view().sizes, r.view().to_vec().unwrap()), (vec![2, 2], vec![1, 1, 2, 2]));
    assert!(cat(&r, &[a.clone(), b.clone()], 0).is_err());
    assert!(cat(&r, &[a, b], -2).is_err());
    // ranges
    range(&r, 0i64, 3, 1, true).unwrap();
    assert_eq!(r.view().to_vec().unwrap(), vec![0, 1, 2, 3]);
    range(&r, 0i64, 3, 1, false).unwrap();
    assert_eq!(r.view().to_vec().unwrap(), vec![0, 1, 2]);
    range(&r, 5i64, -4, -3, false).unwrap();
    assert_eq!(r.view().to_vec().unwrap(), vec![5, 2, -1]);
    assert!(range(&r, 0i64, 3, -1, true).is_err());
    assert!(range(&r, 0i64, 3, 0, true).is_err());
    let q = tensor(from_vec(vec![0.0f64; 4], &[2, 2]));
    range(&q, 0.0f64, 3.0, 1.0, true).unwrap();
    assert_eq!((q.view().sizes, q.view().to_vec().unwrap()), (vec![2, 2], vec![0.0, 1.0, 2.0, 3.0]));
    linspace(&q, 1.0, 2.0, 5).unwrap();
    assert_eq!(q.view().to_vec().unwrap(), vec![1.0, 1.25, 1.5, 1.75, 2.0]);
    logspace(&q, 0.0, 2.0, 3).unwrap();
    // powf's accuracy is the platform libm's (Miri models a few ulp of error): compare
    // within 1e-14 rather than bit for bit.
    for (got, want) in q.view().to_vec().unwrap().into_iter().zip([1.0, 10.0, 100.0]) {
        assert!((got - want).abs() <= 1e-14 * want, "{got} vs {want}");
    }
    assert!(linspace(&q, 0.0, 1.0, 1).is_err());
}

#[test]
fn cross_matches_naive() {
    let mut rng = Rng(5);
    for _ in 0..30 {
        let mut shape = rng.shape(3);
        let d = rng.below(shape.len() as i64) as usize;
        shape[d] = 3;
        let (a, b) = (randv(&mut rng, &shape), randv(&mut rng, &shape));
        let r = tensor(View::<f64>::empty());
        cross(&r, &a, &maybe_strided(&b, true), d as i32).unwrap();
        let mut sshape = shape.clone();
        sshape[d] = 1;
        for p in positions(&sshape) {
            let at = |v: &View<f64>, i: i64| {
                let mut q = p.clone();
                q[d] = i;
                v.get(&q).unwrap()
            };
            let (x, y) = ([at(&a, 0), at(&a, 1), at(&a, 2)], [at(&b, 0), at(&b, 1), at(&b, 2)]);
            let want = [x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]];
            for (i, w) in want.iter().enumerate() {
                assert_eq!(at(&r.view(), i as i64), *w);
            }
        }
    }
    // in place: r == a
    let a = from_vec(vec![1i32, 0, 0], &[3]);
    let ta = tensor(a.clone());
    cross(&ta, &a, &from_vec(vec![0, 1, 0], &[3]), -1).unwrap();
    assert_eq!(ta.view().to_vec().unwrap(), vec![0, 0, 1]);
    assert!(cross(&ta, &from_vec(vec![1i32; 4], &[4]), &from_vec(vec![1; 4], &[4]), -1).is_err());
}
