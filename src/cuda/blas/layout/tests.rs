//! The mapping, run through the literal column-major reference (`reference::gemm`) on host
//! memory, against the CPU engine's `linalg::gemm::gemm` on the original strided layouts and a
//! naive triple loop.

use super::*;
use crate::core::dtype::DType;
use crate::cuda::blas::reference;
use crate::cuda::gpu::GemmCall;
use crate::linalg::gemm::{self, MatMut, MatRef};

/// Ways a `rows x cols` matrix sits in its buffer (offset 1 in every case).
#[derive(Clone, Copy, Debug)]
enum Lay {
    Row,
    Col,
    /// Rows narrowed out of wider ones.
    NarrowRow,
    /// Columns narrowed out of longer ones.
    NarrowCol,
    /// Every other row and column: no transposition fits.
    Strided,
    /// One row expanded (row stride 0): inputs only.
    Expanded,
}

const LAYS: [Lay; 6] = [Lay::Row, Lay::Col, Lay::NarrowRow, Lay::NarrowCol, Lay::Strided, Lay::Expanded];

fn mat_of(l: Lay, rows: i64, cols: i64) -> Mat {
    let (rs, cs) = match l {
        Lay::Row => (cols, 1),
        Lay::Col => (1, rows),
        Lay::NarrowRow => (cols + 3, 1),
        Lay::NarrowCol => (1, rows + 2),
        Lay::Strided => (2 * cols, 2),
        Lay::Expanded => (0, 1),
    };
    Mat::new(rows, cols, rs, cs)
}

fn span(m: Mat) -> usize {
    (1 + (m.rows - 1) * m.rs + (m.cols - 1) * m.cs + 1) as usize
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 40) % 19) as f64 - 9.0
    }
    fn fill(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.next()).collect()
    }
}

fn at(buf: &[f64], m: Mat, i: i64, j: i64) -> f64 {
    buf[(1 + i * m.rs + j * m.cs) as usize]
}

/// A row-major contiguous copy (offset 1) of `m` in `buf`.
fn packed(buf: &[f64], m: Mat) -> (Vec<f64>, Mat) {
    let c = m.contiguous();
    let mut out = vec![0.0; span(c)];
    for i in 0..m.rows {
        for j in 0..m.cols {
            out[(1 + i * c.rs + j * c.cs) as usize] = at(buf, m, i, j);
        }
    }
    (out, c)
}

/// What the device engine does, with the reference BLAS on host buffers.
fn mapped(alpha: f64, a: (&[f64], Mat), b: (&[f64], Mat), beta: f64, c: (&mut Vec<f64>, Mat)) -> Copies {
    let (a, b) = ((a.0.to_vec(), a.1), (b.0.to_vec(), b.1));
    let (cbuf, cm) = c;
    match map(a.1, b.1, cm) {
        Ok(mp) => {
            let (x, y) = if mp.swapped { (&b, &a) } else { (&a, &b) };
            let call = GemmCall {
                dtype: DType::Double,
                transa: mp.a.trans,
                transb: mp.b.trans,
                m: mp.m,
                n: mp.n,
                k: mp.k,
                alpha,
                a: x.0[1..].as_ptr() as u64,
                lda: mp.a.ld,
                stride_a: 0,
                b: y.0[1..].as_ptr() as u64,
                ldb: mp.b.ld,
                stride_b: 0,
                beta,
                c: cbuf[1..].as_mut_ptr() as u64,
                ldc: mp.ldc,
                stride_c: 0,
                batch: 1,
            };
            // SAFETY: the mapping reaches the buffers' elements only (what this test checks,
            // with the reference reading exactly op(A), op(B) and C).
            unsafe { reference::gemm(&call) }.unwrap();
            Copies::default()
        }
        Err(copies) => {
            let a = if copies.a { packed(&a.0, a.1) } else { a };
            let b = if copies.b { packed(&b.0, b.1) } else { b };
            if copies.out {
                let (mut tmp, tm) = packed(cbuf, cm);
                mapped(alpha, (&a.0, a.1), (&b.0, b.1), beta, (&mut tmp, tm));
                for i in 0..cm.rows {
                    for j in 0..cm.cols {
                        cbuf[(1 + i * cm.rs + j * cm.cs) as usize] = at(&tmp, tm, i, j);
                    }
                }
            } else {
                mapped(alpha, (&a.0, a.1), (&b.0, b.1), beta, (cbuf, cm));
            }
            copies
        }
    }
}

fn cpu(alpha: f64, a: (&[f64], Mat), b: (&[f64], Mat), beta: f64, c: (&mut [f64], Mat)) {
    let r = |(buf, m): (&[f64], Mat)| MatRef { ptr: buf[1..].as_ptr(), rs: m.rs as isize, cs: m.cs as isize };
    let cm = MatMut { ptr: c.0[1..].as_mut_ptr(), rs: c.1.rs as isize, cs: c.1.cs as isize };
    let (m, n, k) = (c.1.rows as usize, c.1.cols as usize, a.1.cols as usize);
    // SAFETY: every matrix lies inside its buffer (span), c's elements are distinct.
    unsafe { gemm::gemm(m, n, k, alpha, r(a), r(b), beta, cm) }.unwrap();
}

#[test]
fn every_layout_matches_the_cpu_engine_and_a_naive_loop() {
    let mut rng = Rng(7);
    let mut copied = 0;
    for (m, n, k) in [(1, 1, 1), (1, 4, 3), (4, 1, 3), (3, 4, 1), (2, 3, 5), (5, 2, 1), (1, 1, 6), (3, 1, 1)] {
        for la in LAYS {
            for lb in LAYS {
                for lc in LAYS.into_iter().filter(|l| !matches!(l, Lay::Expanded)) {
                    let (am, bm, cm) = (mat_of(la, m, k), mat_of(lb, k, n), mat_of(lc, m, n));
                    let (a, b, c0) = (rng.fill(span(am)), rng.fill(span(bm)), rng.fill(span(cm)));
                    for (alpha, beta) in [(1.0, 0.0), (2.0, -3.0), (0.0, 2.0)] {
                        let mut dev = c0.clone();
                        let copies = mapped(alpha, (&a, am), (&b, bm), beta, (&mut dev, cm));
                        copied += copies.a as usize + copies.b as usize + copies.out as usize;
                        let mut host = c0.clone();
                        cpu(alpha, (&a, am), (&b, bm), beta, (&mut host, cm));
                        assert_eq!(dev, host, "{m}x{n}x{k} {la:?} {lb:?} {lc:?} alpha {alpha} beta {beta}");
                        for i in 0..m {
                            for j in 0..n {
                                let s: f64 = (0..k).map(|l| at(&a, am, i, l) * at(&b, bm, l, j)).sum();
                                let want = alpha * s + beta * at(&c0, cm, i, j);
                                assert_eq!(at(&dev, cm, i, j), want, "{m}x{n}x{k} {la:?} {lb:?} {lc:?}");
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(copied > 0);
}

#[test]
fn contiguous_row_major_is_thcs_swapped_call() {
    let (m, n, k) = (2, 3, 4);
    let mp = map(Mat::new(m, k, k, 1), Mat::new(k, n, n, 1), Mat::new(m, n, n, 1)).unwrap();
    let no = |ld| Op { trans: false, ld };
    assert_eq!(mp, Mapping { swapped: true, m: n, n: m, k, a: no(n), b: no(k), ldc: n });
    // Transposed operands become transposition flags, not copies.
    let mp = map(Mat::new(m, k, 1, m), Mat::new(k, n, 1, k), Mat::new(m, n, n, 1)).unwrap();
    let yes = |ld| Op { trans: true, ld };
    assert_eq!(mp, Mapping { swapped: true, m: n, n: m, k, a: yes(k), b: yes(m), ldc: n });
    // A column-major output keeps the operands in place.
    let mp = map(Mat::new(m, k, k, 1), Mat::new(k, n, n, 1), Mat::new(m, n, 1, m)).unwrap();
    assert_eq!(mp, Mapping { swapped: false, m, n, k, a: yes(k), b: yes(n), ldc: m });
}

#[test]
fn size_one_dims_get_valid_leading_dimensions() {
    // A column vector with any stride: transposed, ld = its stride; its unused column stride
    // (0 or huge) places no condition.
    assert_eq!(as_op(Mat::new(5, 1, 3, 0)), Some(Op { trans: true, ld: 3 }));
    assert_eq!(as_op(Mat::new(5, 1, 1, 0)), Some(Op { trans: false, ld: 5 }));
    // A row: either flag, ld >= 1 whatever the unused row stride.
    assert_eq!(as_op(Mat::new(1, 4, 0, 2)), Some(Op { trans: false, ld: 2 }));
    assert_eq!(as_op(Mat::new(1, 1, 0, 0)), Some(Op { trans: false, ld: 1 }));
    // No fit: both strides > 1, a zero stride on a real dim, overlapping rows.
    assert_eq!(as_op(Mat::new(3, 4, 8, 2)), None);
    assert_eq!(as_op(Mat::new(3, 4, 0, 1)), None);
    assert_eq!(as_op(Mat::new(3, 4, 1, 1)), None);
    assert_eq!(output(Mat::new(3, 4, 8, 2)), None);
    // ld below the rows of the stored matrix (columns overlapping) is refused.
    assert_eq!(as_op(Mat::new(4, 3, 1, 2)), None);
}

#[test]
fn the_reference_rejects_what_cublas_rejects() {
    let good = GemmCall {
        dtype: DType::Float,
        transa: false,
        transb: true,
        m: 3,
        n: 2,
        k: 4,
        alpha: 1.0,
        a: 0,
        lda: 3,
        stride_a: 0,
        b: 0,
        ldb: 2,
        stride_b: 0,
        beta: 0.0,
        c: 0,
        ldc: 3,
        stride_c: 0,
        batch: 1,
    };
    assert!(reference::validate(&good).is_ok());
    for bad in [
        GemmCall { lda: 2, ..good },
        GemmCall { ldb: 1, ..good },
        GemmCall { ldc: 2, ..good },
        GemmCall { transa: true, ..good }, // lda 3 < k = 4
        GemmCall { m: -1, ..good },
        GemmCall { batch: -1, ..good },
        GemmCall { m: 0, lda: 0, ..good },
    ] {
        let e = reference::validate(&bad).unwrap_err();
        assert_eq!(e.code, crate::core::error::Code::TH_ERR_CUDA);
        assert!(e.msg.contains("CUBLAS_STATUS_INVALID_VALUE"), "{}", e.msg);
    }
}
