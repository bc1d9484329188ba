//! Convolution tests.

use super::*;

/// Direct definitions, one output element at a time.
#[allow(clippy::too_many_arguments)]
fn naive_valid(inp: &[f64], ir: usize, ic: usize, k: &[f64], kr: usize, kc: usize, sr: usize, sc: usize) -> Vec<f64> {
    let (or, oc) = ((ir - kr) / sr + 1, (ic - kc) / sc + 1);
    let mut o = vec![0.0; or * oc];
    for y in 0..or {
        for x in 0..oc {
            for ky in 0..kr {
                for kx in 0..kc {
                    o[y * oc + x] += k[ky * kc + kx] * inp[(y * sr + ky) * ic + x * sc + kx];
                }
            }
        }
    }
    o
}

#[test]
fn gather_blocks_match_naive() {
    // sizes around the block edges (R = 4, CH = 32 / 8 / 1)
    for &(ir, ic, kr, kc, sr, sc) in &[
        (5, 5, 2, 2, 1, 1),
        (9, 40, 3, 3, 1, 1),
        (12, 70, 5, 4, 2, 3),
        (3, 9, 3, 1, 1, 1),
        (40, 13, 1, 1, 3, 1),
        (6, 70, 2, 66, 1, 1),
        (7, 99, 3, 40, 2, 1),
    ] {
        let inp: Vec<f64> = (0..ir * ic).map(|v| ((v * 7) % 13) as f64 - 6.0).collect();
        let k: Vec<f64> = (0..kr * kc).map(|v| ((v * 5) % 7) as f64 - 3.0).collect();
        let want = naive_valid(&inp, ir, ic, &k, kr, kc, sr, sc);
        let g = Geom { i: [1, ir, ic], k: [1, kr, kc], s: [1, sr, sc] };
        let o = [1, (ir - kr) / sr + 1, (ic - kc) / sc + 1];
        let mut out = vec![0.0; want.len()];
        plane(&mut out, Kind::Valid, &g, o, &[(&inp, &k)]);
        assert_eq!(out, want, "{ir}x{ic} k {kr}x{kc} s {sr},{sc}");
    }
}

#[test]
fn modes_and_sizes() {
    assert_eq!(parse_mode(Some(b'F'), Some(b'C'), 7).unwrap(), Mode { full: true, flip: true });
    assert!(parse_mode(Some(b'v'), Some(b'X'), 7).is_err());
    assert!(parse_mode(Some(b'V'), None, 7).is_err());
    assert_eq!(convsize(10, 3, 2, false).unwrap(), 4);
    assert_eq!(convsize(10, 3, 2, true).unwrap(), 21);
    assert!(convsize(10, 3, 0, true).is_err());
    assert!(Geom::new([1, 3, 3], [1, 4, 1], [1, 1, 1], Kind::Valid, "t", [0, 5, 6]).is_err());
    assert!(Geom::new([1, 5, 5], [1, 4, 1], [1, 2, 1], Kind::Rev, "t", [0, 5, 6]).is_err());
    assert!(Geom::new([1, 3, 3], [1, 4, 1], [1, 1, 1], Kind::Full, "t", [0, 5, 6]).is_ok());
}
