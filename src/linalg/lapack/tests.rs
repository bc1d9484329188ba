//! Tests.

use super::*;

#[test]
fn swap_sequence_round_trips() {
    // fwd = [2, 0, 1]: position 0 holds row 2, ...; swaps (0<->2), then (1<->2).
    let ipiv = swaps_of(&[2, 0, 1]);
    assert_eq!(ipiv, vec![3, 3, 3]);
    let mut b = Mat::from_fn(3, 1, |i, _| i as f64);
    apply_ipiv(b.as_mut(), &ipiv);
    assert_eq!((b[(0, 0)], b[(1, 0)], b[(2, 0)]), (2.0, 0.0, 1.0));
}

#[test]
fn unblocked_lu_skips_zero_pivots() {
    let a = Mat::from_fn(3, 3, |i, j| if j == 1 { 0.0 } else { (i * 3 + j + 1) as f64 });
    let f = lu_factor(a.as_ref());
    assert_eq!(f.info, 2);
    assert!(all_finite(f.lu.as_ref()));
}
