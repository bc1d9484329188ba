//! Tests.

use super::*;
use crate::kernels::simd::Lanes;

/// `c = beta*c + alpha*(a @ b)` by the definition, in f64.
fn naive(m: usize, n: usize, k: usize, alpha: f64, a: MatRef<f64>, b: MatRef<f64>, beta: f64, c: &mut [f64]) {
    for i in 0..m {
        for j in 0..n {
            let s = (0..k).fold(0.0, |s, p| {
                // SAFETY: (i, p) and (p, j) are inside the test's matrices.
                s + unsafe {
                    *a.ptr.offset(i as isize * a.rs + p as isize * a.cs)
                        * *b.ptr.offset(p as isize * b.rs + j as isize * b.cs)
                }
            });
            let old = if beta == 0.0 { 0.0 } else { beta * c[i * n + j] };
            c[i * n + j] = old + alpha * s;
        }
    }
}

/// A matrix of `rows x cols` small integers (exact sums) in one of four layouts: row-major,
/// column-major, row-major with padded rows, or with both strides above 1. Returns the
/// storage and the view.
fn matrix(rows: usize, cols: usize, layout: usize, seed: usize) -> (Vec<f64>, isize, isize) {
    let (rs, cs, len) = match layout {
        0 => (cols, 1, rows * cols),
        1 => (1, rows, rows * cols),
        2 => (cols + 3, 1, rows * (cols + 3)),
        _ => (2, 2 * rows + 1, (2 * rows + 1) * cols),
    };
    let mut v = vec![f64::NAN; len]; // elements outside the view must not be read
    for i in 0..rows {
        for j in 0..cols {
            v[i * rs + j * cs] = ((i * 7 + j * 3 + seed) % 11) as f64 - 5.0;
        }
    }
    (v, rs as isize, cs as isize)
}

/// The compute loop on plain arrays of `N` lanes (any CPU, Miri).
unsafe fn plain<E: Lane, const N: usize, const R: usize>(
    blk: &Block<E>,
    ic: usize,
    mb: usize,
    cols: Range<usize>,
    apack: *const E,
) {
    // SAFETY: forwarded contract; plain arrays need no instruction set.
    unsafe { tiles::<Lanes<E, N>, R>(blk, ic, mb, cols, apack) }
}

/// The matrix-vector loop on plain arrays of `N` lanes.
unsafe fn plain_dots<E: Lane, const N: usize>(
    rows: Range<usize>,
    k: usize,
    alpha: E,
    a: MatRef<E>,
    x: *const E,
    beta: E,
    y: MatMut<E>,
) {
    // SAFETY: forwarded contract; plain arrays need no instruction set.
    unsafe { dots::<Lanes<E, N>>(rows, k, alpha, a, x, beta, y) }
}

/// The column matrix-vector loop on plain arrays of `N` lanes.
unsafe fn plain_cols<E: Lane, const N: usize>(
    rows: Range<usize>,
    k: usize,
    alpha: E,
    a: MatRef<E>,
    x: MatRef<E>,
    beta: E,
    y: MatMut<E>,
) {
    // SAFETY: forwarded contract; plain arrays need no instruction set.
    unsafe { columns::<Lanes<E, N>>(rows, k, alpha, a, x, beta, y) }
}

/// The loops on plain arrays of `N` lanes, tiles of `R` rows.
fn lanes<E: Lane, const N: usize, const R: usize>() -> Kernel<E> {
    Kernel { lanes: N, mr: R, kc: KC, tiles: plain::<E, N, R>, dots: plain_dots::<E, N>, cols: plain_cols::<E, N> }
}

/// How a test builds its elements from (small integer or NaN) f64 values.
struct Types<E, S> {
    kernel: Kernel<E>,
    elem: fn(f64) -> E,
    source: fn(f64) -> S,
}

fn check<E: Packed + Into<f64>, S: Source<E>>(
    ty: &Types<E, S>,
    (m, n, k): (usize, usize, usize),
    layouts: [usize; 3],
    alpha: f64,
    beta: f64,
    threads: usize,
) {
    let (av, ars, acs) = matrix(m, k, layouts[0], 1);
    let (bv, brs, bcs) = matrix(k, n, layouts[1], 2);
    let (mut cv, crs, ccs) = matrix(m, n, layouts[2], 3);
    let (a, b) = (MatRef { ptr: av.as_ptr(), rs: ars, cs: acs }, MatRef { ptr: bv.as_ptr(), rs: brs, cs: bcs });
    let at = |i: usize, j: usize| i * crs as usize + j * ccs as usize;
    let mut want: Vec<f64> = (0..m * n).map(|q| cv[at(q / n, q % n)]).collect();
    if beta == 0.0 {
        // not read: NaN where c's elements are
        for q in 0..m * n {
            cv[at(q / n, q % n)] = f64::NAN;
        }
    }
    naive(m, n, k, alpha, a, b, beta, &mut want);
    let (sa, sb): (Vec<S>, Vec<S>) =
        (av.iter().map(|&x| (ty.source)(x)).collect(), bv.iter().map(|&x| (ty.source)(x)).collect());
    let mut ce: Vec<E> = cv.iter().map(|&x| (ty.elem)(x)).collect();
    let (a, b) = (MatRef { ptr: sa.as_ptr(), rs: ars, cs: acs }, MatRef { ptr: sb.as_ptr(), rs: brs, cs: bcs });
    let c = MatMut { ptr: ce.as_mut_ptr(), rs: crs, cs: ccs };
    let (alpha, beta) = ((ty.elem)(alpha), (ty.elem)(beta));
    // SAFETY: the views are inside their buffers and c's elements are distinct; the kernel
    // runs on this CPU (plain arrays, or `Packed::kernel`).
    let run = || assert!(unsafe { gemm(ty.kernel, Product { m, n, k, alpha, a, b, beta, c }, threads) });
    if threads == 1 && layouts[0] == 2 {
        // this thread's packed-a buffer in use: the tasks pack one panel at a time instead
        E::with_buffer(Slot::A, 1, |_| run());
    } else {
        run();
    }
    for (q, &w) in want.iter().enumerate() {
        let (i, j) = (q / n, q % n);
        let got: f64 = ce[at(i, j)].into();
        assert_eq!(got, w, "{m}x{n}x{k} layouts {layouts:?} threads {threads} ({i}, {j})");
    }
}

/// Shapes: single tiles, ragged edges against 6 x 8 tiles, several k blocks, several `a`
/// blocks (mc = 72 rows of f64) and `b` blocks (nc = 1024 columns of f64). Under Miri three
/// small ones (13 x 17 x 260 ran past an hour there, with the pool).
fn shapes() -> Vec<(usize, usize, usize)> {
    if cfg!(miri) {
        vec![(6, 8, 3), (7, 9, 5), (7, 9, 260)]
    } else {
        vec![(1, 1, 1), (6, 8, 3), (7, 9, 5), (13, 17, 260), (80, 30, 513), (5, 1030, 7), (150, 20, 40)]
    }
}

fn run_all<E: Packed + Into<f64>, S: Source<E>>(ty: Types<E, S>) {
    for shape in shapes() {
        for (q, layouts) in [[0, 0, 0], [1, 1, 0], [1, 0, 1], [2, 3, 2], [3, 2, 3], [0, 1, 0]].into_iter().enumerate() {
            for (alpha, beta) in [(1.0, 0.0), (2.0, 1.0), (-1.0, 0.5)] {
                // one thread, and pieces of rows or columns (run on the pool or in turn)
                check(&ty, shape, layouts, alpha, beta, 1 + q % 3);
            }
        }
    }
}

fn doubles(kernel: Kernel<f64>) -> Types<f64, f64> {
    Types { kernel, elem: |x| x, source: |x| x }
}

#[test]
fn packed_matches_naive() {
    run_all(doubles(lanes::<f64, 4, MR>()));
    if !cfg!(miri) {
        run_all(doubles(lanes::<f64, 2, MR>()));
        // AVX-512's tile shape (12 rows x 2 vectors of 8)
        run_all(doubles(lanes::<f64, 8, MAX_MR>()));
    }
}

/// The kernels of every instruction set this CPU has (none under Miri).
fn cpu_kernels<E: Packed>() -> Vec<Kernel<E>> {
    if cfg!(miri) {
        return Vec::new();
    }
    [Isa::Avx2, Isa::Avx512].into_iter().filter_map(E::kernel_for).collect()
}

#[test]
fn packed_simd_matches_naive() {
    // AVX2 and AVX-512, where the CPU has them
    for kernel in cpu_kernels::<f64>() {
        run_all(doubles(kernel));
    }
    for kernel in cpu_kernels::<f32>() {
        run_all(Types { kernel, elem: |x| x as f32, source: |x| x as f32 });
    }
}

/// The kernels the matrix-vector tests run: plain arrays of 4 and 2 lanes, and every
/// instruction set this CPU has.
fn f64_kernels() -> Vec<Kernel<f64>> {
    let mut kernels = vec![lanes::<f64, 4, MR>(), lanes::<f64, 2, MR>()];
    kernels.extend(cpu_kernels::<f64>());
    kernels
}

/// A matrix-vector loop `y = beta*y + alpha*(a @ x)` over `m` rows against the naive sums
/// (`sum(i)`: row `i` of `a @ x`), exactly: `run(rows, alpha, beta, y)` on rows `0..split`,
/// then `split..m` (as threads would), with `y` strided (its other elements must stay NaN) and
/// NaN in `y` when `beta == 0`.
fn check_matvec(
    m: usize,
    k: usize,
    split: usize,
    sum: impl Fn(usize) -> f64,
    run: impl Fn(Range<usize>, f64, f64, MatMut<f64>),
) {
    for (alpha, beta) in [(1.0, 0.0), (2.0, 1.0), (-1.0, 0.5)] {
        let mut y: Vec<f64> = (0..2 * m).map(|i| if beta == 0.0 || i % 2 == 1 { f64::NAN } else { i as f64 }).collect();
        let want: Vec<f64> = (0..m).map(|i| alpha * sum(i) + if beta == 0.0 { 0.0 } else { beta * y[2 * i] }).collect();
        let ym = MatMut { ptr: y.as_mut_ptr(), rs: 2, cs: 1 };
        for rows in [0..split, split..m] {
            run(rows, alpha, beta, ym);
        }
        for i in 0..m {
            assert_eq!(y[2 * i], want[i], "{m}x{k} alpha {alpha} beta {beta} row {i}");
            assert!(y[2 * i + 1].is_nan(), "y[{}] written", 2 * i + 1);
        }
    }
}

/// `dots` against the naive sum: row groups of 4 with a short last one, k across the
/// two-vector steps, the one-vector steps and a part vector, padded rows.
#[test]
fn dots_match_naive() {
    for kernel in f64_kernels() {
        for (m, k) in [(1, 1), (3, 7), (5, 8), (9, 13), (6, 40), (13, 67)] {
            let lda = k + 3;
            let a: Vec<f64> =
                (0..m * lda).map(|q| if q % lda < k { ((q * 7) % 11) as f64 - 5.0 } else { f64::NAN }).collect();
            let x: Vec<f64> = (0..k).map(|p| ((p * 3) % 7) as f64 - 3.0).collect();
            let am = MatRef { ptr: a.as_ptr(), rs: lda as isize, cs: 1 };
            let sum = |i: usize| (0..k).map(|p| a[i * lda + p] * x[p]).sum();
            check_matvec(m, k, m / 2, sum, |rows, alpha, beta, y| {
                // SAFETY: rows of a hold k elements each, x k, y's elements 2i are inside y.
                unsafe { (kernel.dots)(rows, k, alpha, am, x.as_ptr(), beta, y) }
            });
        }
    }
}

/// `columns` against the naive sum: whole row blocks and last blocks of whole and part
/// vectors, padded columns (NaN in the padding), a strided `x` (its other elements NaN).
#[test]
fn columns_match_naive() {
    for kernel in f64_kernels() {
        // (4500: a piece of 3000 rows crosses a block of COL_BYTES, 2048 f64 rows)
        for (m, k) in [(1, 1), (3, 7), (9, 2), (33, 5), (64, 9), (131, 4), (300, 3), (1030, 6), (4500, 5)] {
            if cfg!(miri) && m > 2000 {
                continue;
            }
            let lda = m + 3;
            let a: Vec<f64> =
                (0..k * lda).map(|q| if q % lda < m { ((q * 7) % 11) as f64 - 5.0 } else { f64::NAN }).collect();
            let x: Vec<f64> =
                (0..2 * k).map(|q| if q % 2 == 0 { ((q * 3) % 7) as f64 - 3.0 } else { f64::NAN }).collect();
            let am = MatRef { ptr: a.as_ptr(), rs: 1, cs: lda as isize };
            let xm = MatRef { ptr: x.as_ptr(), rs: 2, cs: 1 };
            let sum = |i: usize| (0..k).map(|p| a[p * lda + i] * x[2 * p]).sum();
            check_matvec(m, k, m / 3, sum, |rows, alpha, beta, y| {
                // SAFETY: a's columns hold m elements each, x's k elements and y's elements
                // 2i are inside their buffers.
                unsafe { (kernel.cols)(rows, k, alpha, am, xm, beta, y) }
            });
        }
    }
}

/// Products started at once from several threads share the pool: each caller runs its own
/// items, and a worker that claims one of them ends it, so none waits on another's product.
#[test]
#[cfg_attr(miri, ignore = "minutes under Miri; the pool's loops are covered by the tests above")]
fn concurrent_products_share_the_pool() {
    let kernel = <f64 as Packed>::kernel().unwrap_or(lanes::<f64, 4, MR>());
    std::thread::scope(|s| {
        for q in 0..3 {
            s.spawn(move || {
                for (alpha, beta) in [(1.0, 0.0), (2.0, 1.0)] {
                    check(&doubles(kernel), (150, 20 + q, 513), [q, 0, 0], alpha, beta, 2);
                    check(&doubles(kernel), (9, 300, 270), [0, q, 1], alpha, beta, 2);
                }
            });
        }
    });
}

/// Half and BFloat16 operands, converted to f32 as they are packed (the sums of these small
/// integers are exact in f32).
#[test]
fn packed_converts_half_operands() {
    let kernel = <f32 as Packed>::kernel().unwrap_or(lanes::<f32, 8, MR>());
    let elem = |x: f64| x as f32;
    run_all(Types { kernel, elem, source: half::f16::from_f64 });
    if !cfg!(miri) {
        run_all(Types { kernel, elem, source: half::bf16::from_f64 });
        run_all(Types { kernel: lanes::<f32, 4, MR>(), elem, source: |x| x as f32 });
    }
}
