use super::*;
use crate::kernels::simd::{Lane, Lanes};

/// (batches, input volumes, output volumes).
type Dense = (usize, usize, usize);
/// Input sizes, kernel sizes, strides, volumes.
type Case = ([usize; 3], [usize; 3], [usize; 3], Dense);
/// Runs one job.
type Runner<'a> = &'a dyn Fn(&mut [f64], &Operands<f64>);

/// The tile loop on plain arrays of `N` lanes, tiles of `MR` x `NV` vectors (any CPU, Miri).
unsafe fn plain<E: ConvK + Lane, const N: usize, const MR: usize, const NV: usize>(
    plan: &Plan<E>,
    lo: usize,
    hi: usize,
) {
    // SAFETY: forwarded contract; plain arrays need no instruction set.
    unsafe { tiles::<Lanes<E, N>, MR, NV>(plan, lo, hi) }
}

/// `plain` as a kernel.
fn plain_kernel<E: ConvK + Lane, const N: usize, const MR: usize, const NV: usize>() -> Kernel<E> {
    Kernel { mr: MR, np: NV * N, f: plain::<E, N, MR, NV> }
}

/// `out[v][u] += sum_{(iv, kv) in pairs(v)} sum_t ker[kv][t] * inp[iv][u*su + t*st]`
/// (positions and taps as 3-D coordinates; valid: `su` the strides, `st` 1; Rev: the
/// other way round) one element at a time.
fn naive(
    inp: &[f64],
    ker: &[f64],
    g: &Geom,
    o: [usize; 3],
    (su, st): ([usize; 3], [usize; 3]),
    pairs: &dyn Fn(usize) -> Vec<(usize, usize)>,
    out: &mut [f64],
) {
    let [_, ir, ic] = g.i;
    let [_, kr, kc] = g.k;
    let [_, or, oc] = o;
    let at = |u: usize, t: usize, d: usize| u * su[d] + t * st[d];
    let (plen, klen, op) = (g.in_len(), g.k_len(), o.iter().product::<usize>());
    for (v, dst) in out.chunks_exact_mut(op).enumerate() {
        for (u, d) in dst.iter_mut().enumerate() {
            let (uz, uy, ux) = (u / (or * oc), (u / oc) % or, u % oc);
            let mut s = 0.0;
            for (iv, kv) in pairs(v) {
                for t in 0..klen {
                    let (tz, ty, tx) = (t / (kr * kc), (t / kc) % kr, t % kc);
                    s +=
                        ker[kv * klen + t] * inp[iv * plen + (at(uz, tz, 0) * ir + at(uy, ty, 1)) * ic + at(ux, tx, 2)];
                }
            }
            *d += s;
        }
    }
}

/// Runs every case through `run` and through the naive `want` (both add to the same start)
/// and compares them exactly: the values are small integers, so every order of summation
/// is exact. Valid jobs run a second time on an output of NaNs marked `fresh`, which must
/// come out as the sums alone. The last element of the first input row is infinite: it meets only the last
/// output column (mv) or the last weight column (Rev), and must reach no other (all
/// weights are non-zero, so a stray read would show as infinity or NaN).
fn check(cases: &[Case], rev: bool, run: Runner) {
    for &(i, k, s, dense) in cases {
        let (batches, nin, nout) = dense;
        let g = Geom { i, k, s };
        let o: [usize; 3] =
            std::array::from_fn(|d| if rev { i[d] - (k[d] - 1) * s[d] } else { (i[d] - k[d]) / s[d] + 1 });
        let strides = if rev { ([1; 3], s) } else { (s, [1; 3]) };
        let mut inp: Vec<f64> = (0..batches * nin * g.in_len()).map(|v| ((v * 7) % 13) as f64 - 6.0).collect();
        inp[i[2] - 1] = f64::INFINITY;
        let kvols = if rev { batches * nout } else { nout * nin };
        let ker: Vec<f64> = (0..kvols * g.k_len()).map(|v| (v % 7) as f64 + 1.0).collect();
        let outs = if rev { nout * nin } else { batches * nout };
        let start: Vec<f64> = (0..outs * o.iter().product::<usize>()).map(|v| (v % 3) as f64).collect();
        let mut want = vec![0.0; start.len()];
        if rev {
            // output volume (q, i) sums (input (b, i), kernel (b, q)) over batches
            naive(
                &inp,
                &ker,
                &g,
                o,
                strides,
                &|v| (0..batches).map(|b| (b * nin + v % nin, b * nout + v / nin)).collect(),
                &mut want,
            );
        } else {
            // output volume (b, q) sums (input (b, i), kernel (q, i)) over input volumes
            naive(
                &inp,
                &ker,
                &g,
                o,
                strides,
                &|v| (0..nin).map(|i| (v / nout * nin + i, v % nout * nin + i)).collect(),
                &mut want,
            );
        }
        assert!(want.iter().any(|v| v.is_infinite()));
        if !rev {
            let mut got = vec![f64::NAN; start.len()];
            run(&mut got, &Operands { inp: &inp, ker: &ker, g, o, dense, fresh: true });
            assert_eq!(got, want, "fresh: input {i:?} kernel {k:?} strides {s:?} {dense:?}");
        }
        let want: Vec<f64> = start.iter().zip(&want).map(|(a, b)| a + b).collect();
        let mut got = start;
        run(&mut got, &Operands { inp: &inp, ker: &ker, g, o, dense, fresh: false });
        assert_eq!(got, want, "input {i:?} kernel {k:?} strides {s:?} {dense:?}");
    }
}

/// Ragged panels (nout % MR != 0), tiles across rows and slices, each slice's last tile
/// (overlapping the one before), a slice smaller than a tile (one element at a time), 3-D,
/// several batches, several blocks of taps (13 volumes of 11 rows: 7 or 11 volumes per
/// block), several groups of panels (100 output volumes) and strides (phase volumes, with
/// inputs that do not divide by the stride).
#[test]
fn implicit_tiles_match_naive() {
    // (under Miri, which interprets ~1000x slower: the first four and one plain kernel)
    let cases = [
        ([1, 4, 4], [1, 4, 4], [1; 3], (1, 1, 3)),
        ([1, 12, 6], [1, 11, 2], [1; 3], (2, 13, 7)),
        ([1, 11, 23], [1, 3, 5], [1, 2, 2], (2, 2, 7)),
        ([3, 5, 7], [2, 2, 3], [1; 3], (2, 2, 6)),
        ([1, 9, 11], [1, 3, 4], [1; 3], (1, 2, 5)),
        ([1, 6, 30], [1, 2, 3], [1; 3], (2, 3, 4)),
        ([1, 5, 9], [1, 2, 2], [1; 3], (1, 2, 40)),
        ([1, 10, 25], [1, 2, 4], [1, 3, 3], (1, 3, 5)),
        ([5, 7, 13], [2, 3, 3], [2, 1, 2], (1, 2, 3)),
    ];
    let cases = if cfg!(miri) { &cases[..4] } else { &cases[..] };
    let mut kernels = vec![plain_kernel::<f64, 4, 6, 2>()];
    if !cfg!(miri) {
        kernels.push(plain_kernel::<f64, 1, 8, 3>());
    }
    kernels.extend(f64::kernel());
    for k in kernels {
        check(cases, false, &|out, ops| drive(out, ops, k).unwrap());
    }
}

/// Kernel rows of whole and partial vectors, 1..6 output positions per item, an odd
/// number of kernels (a zero row), 3-D and several batches.
#[test]
fn implicit_rev_matches_naive() {
    // (under Miri: the first three and one plain kernel)
    let cases = [
        ([1, 9, 14], [1, 6, 11], [1; 3], (1, 2, 3)),
        ([1, 12, 25], [1, 4, 9], [1, 2, 2], (2, 2, 3)),
        ([3, 6, 12], [2, 4, 9], [1; 3], (2, 2, 5)),
        ([1, 8, 13], [1, 6, 8], [1; 3], (2, 3, 2)),
        ([1, 7, 20], [1, 7, 20], [1; 3], (1, 1, 1)),
        ([4, 7, 30], [2, 3, 10], [2, 3, 3], (1, 2, 2)),
    ];
    let cases = if cfg!(miri) { &cases[..3] } else { &cases[..] };
    let mut kernels: Vec<RevFn<f64>> = vec![plain_rev::<f64, 4>];
    if !cfg!(miri) {
        kernels.push(plain_rev::<f64, 1>);
    }
    kernels.extend(f64::rev_kernel());
    for f in kernels {
        check(cases, true, &|out, ops| rev_drive(out, ops, f).unwrap());
    }
}

/// The Rev item loop on plain arrays.
unsafe fn plain_rev<E: ConvK + Lane, const N: usize>(plan: &RevPlan<E>, lo: usize, hi: usize) {
    // SAFETY: forwarded contract; plain arrays need no instruction set.
    unsafe { rev_items::<Lanes<E, N>>(plan, lo, hi) }
}

#[test]
fn implicit_f32_kernel_matches_plain() {
    let Some(k) = f32::kernel() else { return };
    let g = Geom { i: [1, 20, 37], k: [1, 5, 5], s: [1; 3] };
    let o = [1, 16, 33];
    let (nin, nout) = (3, 7);
    let inp: Vec<f32> = (0..nin * g.in_len()).map(|v| ((v * 7) % 13) as f32 - 6.0).collect();
    let ker: Vec<f32> = (0..nout * nin * 25).map(|v| ((v * 5) % 11) as f32 - 5.0).collect();
    let mut a = vec![1.0f32; nout * 16 * 33];
    let mut b = a.clone();
    let ops = Operands { inp: &inp, ker: &ker, g, o, dense: (1, nin, nout), fresh: false };
    drive(&mut a, &ops, k).unwrap();
    drive(&mut b, &ops, plain_kernel::<f32, 8, 6, 2>()).unwrap();
    assert_eq!(a, b);
}
