//! Tests.

use super::*;
use half::bf16;

#[allow(clippy::too_many_arguments)] // m, n, k, alpha, a, b, beta, c
fn naive<T: Num>(m: usize, n: usize, k: usize, alpha: T, a: &[T], b: &[T], beta: T, c: &mut [T]) {
    for i in 0..m {
        for j in 0..n {
            let mut s = T::zero();
            for p in 0..k {
                s = s.add(a[i * k + p].mul(b[p * n + j]));
            }
            let old = if beta.is_zero() { T::zero() } else { beta.mul(c[i * n + j]) };
            c[i * n + j] = old.add(alpha.mul(s));
        }
    }
}

/// `v` as a row-major matrix of `cols` columns.
fn rows<T>(v: &[T], cols: usize) -> MatRef<T> {
    MatRef { ptr: v.as_ptr(), rs: cols as isize, cs: 1 }
}

/// `v` as a writable row-major matrix of `cols` columns.
fn rows_mut<T>(v: &mut [T], cols: usize) -> MatMut<T> {
    MatMut { ptr: v.as_mut_ptr(), rs: cols as isize, cs: 1 }
}

/// `v` as a writable column-major matrix of `rows` rows.
fn cols_mut<T>(v: &mut [T], rows: usize) -> MatMut<T> {
    MatMut { ptr: v.as_mut_ptr(), rs: 1, cs: rows as isize }
}

/// The column-major `m x n` result `c` equals the row-major `want`.
fn assert_col_major<T: PartialEq + std::fmt::Debug>(c: &[T], want: &[T], m: usize, n: usize) {
    for i in 0..m {
        for j in 0..n {
            assert_eq!(c[i + j * m], want[i * n + j]);
        }
    }
}

#[test]
fn int_kernel_matches_naive_with_wrapping() {
    // past MC in m, KC in k, NC in n, and ragged against MR x NR (narrower under Miri)
    let blocked = if cfg!(miri) { (66, 5, 260) } else { (70, 33, 300) };
    for &(m, n, k) in &[(1, 1, 1), (5, 17, 3), blocked, (4, 4100, 2)] {
        let a: Vec<i8> = (0..m * k).map(|i| (i * 37 % 251) as i8).collect();
        let b: Vec<i8> = (0..k * n).map(|i| (i * 91 % 253) as i8).collect();
        let mut c: Vec<i8> = (0..m * n).map(|i| (i * 7) as i8).collect();
        let mut want = c.clone();
        naive(m, n, k, 3, &a, &b, -2, &mut want);
        // SAFETY: row-major buffers of the stated shapes.
        unsafe { gemm(m, n, k, 3i8, rows(&a, k), rows(&b, n), -2, rows_mut(&mut c, n)).unwrap() };
        assert_eq!(c, want, "{m}x{n}x{k}");
    }
}

#[test]
fn float_kernels_copy_slow_layouts() {
    slow_layouts::<f32>();
    slow_layouts::<f64>();
}

fn slow_layouts<T: Gemm + std::fmt::Debug>() {
    // a column-major under a row-major c, b row-major under a column-major c: the operand is
    // copied (register-transposed 8x8 or 4x4 blocks, then ragged edges) before faer runs;
    // beta not in {0, 1} scales c first.
    let (m, n, k) = if cfg!(miri) { (33, 34, 5) } else { (70, 65, 67) };
    let v = |x: usize| T::from_f64(x as f64);
    let a: Vec<T> = (0..m * k).map(|i| v(i % 11).sub(v(5))).collect(); // row-major m x k
    let b: Vec<T> = (0..k * n).map(|i| v(i % 9).sub(v(4))).collect(); // row-major k x n
    let c0: Vec<T> = (0..m * n).map(|i| v(i % 5)).collect(); // row-major m x n
    let (two, half) = (T::from_f64(2.0), T::from_f64(0.5));
    let mut want = c0.clone();
    naive(m, n, k, two, &a, &b, half, &mut want);
    let at: Vec<T> = (0..m * k).map(|q| a[(q % m) * k + q / m]).collect(); // column-major a
    let mut c = c0.clone();
    let at_m = MatRef { ptr: at.as_ptr(), rs: 1, cs: m as isize };
    // SAFETY: buffers of the stated shapes and layouts.
    unsafe { gemm(m, n, k, two, at_m, rows(&b, n), half, rows_mut(&mut c, n)).unwrap() };
    assert_eq!(c, want);
    let mut cc: Vec<T> = (0..m * n).map(|q| c0[(q % m) * n + q / m]).collect(); // column-major c
    // SAFETY: as above.
    unsafe { gemm(m, n, k, two, rows(&a, k), rows(&b, n), half, cols_mut(&mut cc, m)).unwrap() };
    assert_col_major(&cc, &want, m, n);
}

#[test]
fn split_products_cover_every_piece() {
    // in the split range (PAR_WORK..SPLIT_WORK) with the long side in rows, then in columns,
    // ragged against the 16-element piece boundaries, with beta not in {0, 1}
    let shapes: &[(usize, usize, usize)] =
        if cfg!(miri) { &[(70, 3, 2), (3, 70, 2)] } else { &[(211, 130, 150), (40, 301, 200)] };
    for &(m, n, k) in shapes {
        let a: Vec<f64> = (0..m * k).map(|i| (i % 13) as f64 - 6.0).collect();
        let b: Vec<f64> = (0..k * n).map(|i| (i % 7) as f64 - 3.0).collect();
        let c0: Vec<f64> = (0..m * n).map(|i| (i % 5) as f64).collect();
        let mut want = c0.clone();
        naive(m, n, k, 2.0, &a, &b, -0.5, &mut want);
        let mut c = c0.clone();
        let pieces = std::sync::Mutex::new(0);
        let p = Product { m, n, k, alpha: 2.0, a: rows(&a, k), b: rows(&b, n), beta: -0.5, c: rows_mut(&mut c, n) };
        if !cfg!(miri) {
            split_product(p, |_, _| *pieces.lock().unwrap() += 1);
            let threads = parallel::pool().map_or(1, |p| p.current_num_threads());
            assert_eq!(*pieces.lock().unwrap() > 1, threads > 1, "{m}x{n}x{k}");
        }
        // SAFETY: row-major buffers of the stated shapes.
        unsafe { gemm(m, n, k, p.alpha, p.a, p.b, p.beta, p.c).unwrap() };
        assert_eq!(c, want, "{m}x{n}x{k}");
    }
}

#[test]
fn float_kernels_transposed_and_beta_zero() {
    let (m, n, k) = (37, 29, 41);
    let a: Vec<f64> = (0..m * k).map(|i| (i % 13) as f64 - 6.0).collect();
    let b: Vec<f64> = (0..k * n).map(|i| (i % 7) as f64 - 3.0).collect();
    let mut want = vec![0.0; m * n];
    naive(m, n, k, 2.0, &a, &b, 0.0, &mut want);
    // a row-major (its transpose's column-major layout), c column-major starting as NaN.
    let mut c = vec![f64::NAN; m * n];
    // SAFETY: as above; c is column-major m x n.
    unsafe { gemm(m, n, k, 2.0, rows(&a, k), rows(&b, n), 0.0, cols_mut(&mut c, m)).unwrap() };
    assert_col_major(&c, &want, m, n);
    let ab: Vec<bf16> = a.iter().map(|&x| bf16::from_f64(x)).collect();
    let bb: Vec<bf16> = b.iter().map(|&x| bf16::from_f64(x)).collect();
    let mut cb = vec![bf16::NAN; m * n];
    let two = bf16::from_f32(2.0);
    // SAFETY: as above.
    unsafe { gemm(m, n, k, two, rows(&ab, k), rows(&bb, n), bf16::ZERO, rows_mut(&mut cb, n)).unwrap() };
    for i in 0..m * n {
        assert_eq!(cb[i], bf16::from_f64(want[i]));
    }
}
