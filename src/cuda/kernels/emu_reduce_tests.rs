//! The reduction kernels on the CPU emulator, planned by `cuda::reduce` over host buffers and
//! checked against naive loops: every fold and dtype, contiguous / transposed / gapped /
//! broadcast / 3-d layouts, one or several reduced dims, both index widths, NaN and first-index
//! rules, chunk boundaries (k past 4096), and the same bits whatever the grid cap.
//!
//! Values are chosen so float sums are exact in any order (multiples of 1/8, small), so sums,
//! counts, max/min and integer folds compare exactly; moments and fractional p-norms within a
//! tolerance.

use super::emu_data::{Sample, bits, is_nan};
use super::emu_launch;
use crate::core::dtype::{Bool, DType, Prim, Scalar};
use crate::cuda::gpu::LaunchCfg;
use crate::cuda::reduce::{DeviceFold, Exec, THCReduce, execute, plan};
use crate::exec::reduce::Geometry;
use crate::ops::num::Num;
use half::{bf16, f16};

/// "Device" memory is host memory on the emulator.
struct HostExec {
    bufs: Vec<Vec<u64>>,
    launches: Vec<(String, LaunchCfg)>,
}

impl Exec for HostExec {
    fn alloc(&mut self, bytes: usize) -> crate::core::error::Result<u64> {
        self.bufs.push(vec![0x5555_5555_5555_5555; bytes.div_ceil(8).max(1)]);
        Ok(self.bufs.last().unwrap().as_ptr() as u64)
    }
    unsafe fn launch(&mut self, kernel: &str, cfg: &LaunchCfg, p: &mut THCReduce) -> crate::core::error::Result<()> {
        self.launches.push((kernel.to_string(), *cfg));
        let mut args = [p as *mut THCReduce as *mut std::ffi::c_void];
        // SAFETY: forwarded contract.
        unsafe { emu_launch(kernel, cfg, &mut args) }
    }
    unsafe fn read(&mut self, dst: &mut [u8], src: u64) -> crate::core::error::Result<()> {
        // SAFETY: forwarded contract (host memory).
        unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }
}

/// A reduction of `sizes` over operands laid out by `strides` in `data` (offsets >= 0).
struct Case<'a, T, const N: usize> {
    sizes: &'a [i64],
    strides: [&'a [i64]; N],
    mask: &'a [bool],
    data: [&'a [T]; N],
}

impl<T: Scalar, const N: usize> Case<'_, T, N> {
    /// The device's accumulator bytes, after checking they are the same with other grid caps
    /// and with 64-bit indexing.
    fn device(&self, fold: DeviceFold, variants: bool) -> Vec<u8> {
        let g = Geometry::<N>::new(self.sizes, self.strides, self.mask);
        let pl = plan(fold, T::DTYPE, &g).unwrap();
        let bases = self.data.map(|d| d.as_ptr() as u64);
        let run = |pl: &crate::cuda::reduce::Plan, cap: u32| {
            let mut ex = HostExec { bufs: vec![], launches: vec![] };
            // SAFETY: the strides reach only inside `data` (each case's construction).
            unsafe { execute(pl, &bases, &mut ex, cap) }.unwrap()
        };
        let want = run(&pl, 4096);
        if variants {
            for cap in [1, 3] {
                assert_eq!(run(&pl, cap), want, "{} with at most {cap} blocks", pl.kernel);
            }
            let wide = crate::cuda::reduce::Plan { kernel: pl.kernel.replace("_i32", "_i64"), ..pl.clone() };
            assert_eq!(run(&wide, 4096), want, "{}", wide.kernel);
        }
        want
    }

    /// For each output (row-major over the kept dims): its elements (one per operand) in
    /// row-major order of the reduced dims, with their position.
    fn slices(&self) -> Vec<Vec<[T; N]>> {
        let nd = self.sizes.len();
        let kept: Vec<usize> = (0..nd).filter(|&d| !self.mask[d]).collect();
        let red: Vec<usize> = (0..nd).filter(|&d| self.mask[d]).collect();
        let count = |dims: &[usize]| dims.iter().map(|&d| self.sizes[d] as usize).product::<usize>();
        let index = |mut i: usize, dims: &[usize], idx: &mut [usize]| {
            for &d in dims.iter().rev() {
                idx[d] = i % self.sizes[d] as usize;
                i /= self.sizes[d] as usize;
            }
        };
        let mut idx = vec![0usize; nd];
        (0..count(&kept))
            .map(|o| {
                index(o, &kept, &mut idx);
                (0..count(&red))
                    .map(|r| {
                        index(r, &red, &mut idx);
                        std::array::from_fn(|q| {
                            let off: i64 = (0..nd).map(|d| idx[d] as i64 * self.strides[q][d]).sum();
                            self.data[q][off as usize]
                        })
                    })
                    .collect()
            })
            .collect()
    }
}

fn f64_of<T: Scalar>(x: T) -> f64 {
    match x.to_prim() {
        Prim::I(v) => v as f64,
        Prim::F(v) => v,
    }
}

fn i64_of<T: Scalar>(x: T) -> i64 {
    match x.to_prim() {
        Prim::I(v) => v,
        Prim::F(v) => v as i64,
    }
}

/// a < b and a == b as values (integers exactly; NaN unordered).
fn lt<T: Scalar>(a: T, b: T) -> bool {
    match (a.to_prim(), b.to_prim()) {
        (Prim::I(x), Prim::I(y)) => x < y,
        _ => f64_of(a) < f64_of(b),
    }
}

fn same<T: Scalar>(a: T, b: T) -> bool {
    match (a.to_prim(), b.to_prim()) {
        (Prim::I(x), Prim::I(y)) => x == y,
        _ => f64_of(a) == f64_of(b),
    }
}

fn is_float(d: DType) -> bool {
    matches!(d, DType::Float | DType::Double | DType::Half | DType::BFloat16)
}

/// The accumulators (8 or 4 bytes each, or `per` bytes for the wider ones) as f64.
fn accs(raw: &[u8], d: DType, fold: DeviceFold) -> Vec<Vec<f64>> {
    let w = fold.acc_bytes(d);
    let narrow = matches!(d, DType::Half | DType::BFloat16);
    let int = !is_float(d) || matches!(fold, DeviceFold::Count | DeviceFold::Equal);
    raw.chunks_exact(w)
        .map(|c| {
            let step = if narrow && !int { 4 } else { 8 };
            c.chunks_exact(step)
                .map(|b| match (step, int) {
                    (4, _) => f32::from_le_bytes(b.try_into().unwrap()) as f64,
                    (_, true) => i64::from_le_bytes(b.try_into().unwrap()) as f64,
                    _ => f64::from_le_bytes(b.try_into().unwrap()),
                })
                .collect()
        })
        .collect()
}

/// Checks the exact folds (sum, prod, count, dot, equal) and max/min of a case.
fn check_exact<T: Sample + Num, const N: usize>(c: &Case<'_, T, N>, variants: bool) {
    let d = T::DTYPE;
    let slices = c.slices();
    let folds: &[DeviceFold] =
        if N == 2 { &[DeviceFold::Dot, DeviceFold::Equal] } else { &[DeviceFold::Sum, DeviceFold::Count] };
    for &fold in folds {
        let got = accs(&c.device(fold, variants), d, fold);
        for (o, s) in slices.iter().enumerate() {
            let want = match fold {
                DeviceFold::Count => s.iter().filter(|x| f64_of(x[0]) != 0.0).count() as f64,
                DeviceFold::Equal => s.iter().filter(|x| !same(x[0], x[N - 1])).count() as f64,
                _ if is_float(d) => s.iter().map(|x| f64_of(x[0]) * f64_of(x[N - 1]).powi(N as i32 - 1)).sum(),
                DeviceFold::Sum => s.iter().fold(0i64, |a, x| a.wrapping_add(i64_of(x[0]))) as f64,
                _ => s.iter().fold(0i64, |a, x| a.wrapping_add(i64_of(x[0]).wrapping_mul(i64_of(x[1])))) as f64,
            };
            // integers: compared through f64 after the same wrapping, which is exact for
            // the sample magnitudes' sums below 2^53 and otherwise equal bit patterns' casts
            assert_eq!(got[o][0], want, "{fold:?} {d} output {o}");
        }
    }
}

/// max/min: the value's bits and the first position (the first NaN wins).
fn check_best<T: Sample>(c: &Case<'_, T, 1>, variants: bool) {
    for (fold, max) in [(DeviceFold::Max, true), (DeviceFold::Min, false)] {
        let raw = c.device(fold, variants);
        for (o, s) in c.slices().iter().enumerate() {
            let mut best = 0usize;
            for (i, x) in s.iter().enumerate() {
                let (b, x) = (s[best][0], x[0]);
                if is_nan(b) {
                    break;
                }
                let better = if max { lt(b, x) } else { lt(x, b) };
                if is_nan(x) || better {
                    best = i;
                }
            }
            let r = &raw[16 * o..16 * o + 16];
            let v: T = crate::cuda::reduce::DeviceAcc::read(r).unwrap();
            let idx = i64::from_le_bytes(r[8..16].try_into().unwrap());
            assert_eq!((bits(v), idx), (bits(s[best][0]), best as i64), "{fold:?} {} output {o}", T::DTYPE);
        }
    }
}

/// Moments and p-norms (floats), within `tol` relative.
fn check_float<T: Sample + Num>(c: &Case<'_, T, 1>, tol: f64) {
    let close = |g: f64, w: f64, what: &str| {
        assert!((g - w).abs() <= tol * w.abs().max(1.0) || (g.is_nan() && w.is_nan()), "{what}: {g} vs {w}");
    };
    let slices = c.slices();
    let got = accs(&c.device(DeviceFold::Moments, false), T::DTYPE, DeviceFold::Moments);
    for (o, s) in slices.iter().enumerate() {
        let n = s.len() as f64;
        let mean = s.iter().map(|x| f64_of(x[0])).sum::<f64>() / n;
        let m2: f64 = s.iter().map(|x| (f64_of(x[0]) - mean).powi(2)).sum();
        for (g, w) in got[o].iter().zip([n, mean, m2]) {
            close(*g, w, &format!("moments {} output {o}", T::DTYPE));
        }
    }
    for p in [0.0, 1.0, 2.0, 3.5, f64::INFINITY, f64::NEG_INFINITY] {
        let got = accs(&c.device(DeviceFold::Norm(p), false), T::DTYPE, DeviceFold::Norm(p));
        for (o, s) in slices.iter().enumerate() {
            let a = s.iter().map(|x| f64_of(x[0]).abs());
            let want = match p {
                0.0 => a.filter(|&x| x != 0.0).count() as f64,
                2.0 => a.map(|x| x * x).sum(),
                3.5 => a.map(|x| x.powf(3.5)).sum(),
                f64::INFINITY => a.fold(0.0, f64::max),
                f64::NEG_INFINITY => a.fold(f64::INFINITY, f64::min),
                _ => a.sum(),
            };
            close(got[o][0], want, &format!("norm {p} {} output {o}", T::DTYPE));
        }
    }
}

/// Values whose float sums are exact in any order: multiples of 1/8 in [-8, 8), or the
/// integers' samples.
fn values<T: Sample>(n: usize, seed: u64) -> Vec<T> {
    let s = T::samples();
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|i| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            if is_float(T::DTYPE) {
                T::from_prim(Prim::F(((x >> 33) % 128) as f64 / 8.0 - 8.0))
            } else if T::DTYPE == DType::Bool {
                T::from_prim(Prim::I((x >> 40).is_multiple_of(3) as i64))
            } else {
                s[(i * 7 + (x >> 40) as usize) % s.len()]
            }
        })
        .collect()
}

fn check_all<T: Sample + Num>() {
    let a = values::<T>(200, 1);
    let b: Vec<T> =
        values::<T>(200, 2).iter().zip(&a).enumerate().map(|(i, (&y, &x))| if i % 3 == 0 { x } else { y }).collect();
    let layouts: [(&[i64], [&[i64]; 2]); 5] = [
        (&[5, 9], [&[9, 1], &[9, 1]]),
        (&[5, 9], [&[1, 5], &[9, 1]]),
        (&[5, 9], [&[18, 2], &[1, 5]]),
        (&[5, 9], [&[0, 1], &[9, 1]]),
        (&[3, 4, 5], [&[20, 5, 1], &[1, 3, 12]]),
    ];
    for (sizes, st) in layouts {
        let nd = sizes.len();
        let mut masks: Vec<Vec<bool>> = (0..nd).map(|d| (0..nd).map(|i| i == d).collect()).collect();
        masks.push(vec![true; nd]);
        if nd == 3 {
            masks.push(vec![true, false, true]);
        }
        for mask in &masks {
            let one = Case { sizes, strides: [st[0]], mask, data: [&a] };
            check_exact(&one, false);
            // (positions are along one reduced dim; over several they follow memory order)
            if mask.iter().filter(|&&r| r).count() == 1 {
                check_best(&one, false);
            }
            check_exact(&Case { sizes, strides: st, mask, data: [&a, &b] }, false);
            if is_float(T::DTYPE) {
                check_float(&one, if size_of::<T>() == 2 { 1e-5 } else { 1e-12 });
            }
        }
    }
    // Products: powers of two (exact in any order), or the integers' wrapping products.
    let pw: Vec<T> = values::<T>(45, 5)
        .iter()
        .enumerate()
        .map(
            |(i, &x)| {
                if is_float(T::DTYPE) { T::from_prim(Prim::F([1.0, -1.0, 2.0, 0.5, -2.0, -0.5][i % 6])) } else { x }
            },
        )
        .collect();
    for mask in [[false, true], [true, false], [true, true]] {
        let c = Case { sizes: &[5, 9], strides: [&[1, 5]], mask: &mask, data: [&pw] };
        let got = accs(&c.device(DeviceFold::Prod, true), T::DTYPE, DeviceFold::Prod);
        for (o, s) in c.slices().iter().enumerate() {
            let want = if is_float(T::DTYPE) {
                s.iter().map(|x| f64_of(x[0])).product()
            } else {
                s.iter().fold(1i64, |a, x| a.wrapping_mul(i64_of(x[0]))) as f64
            };
            assert_eq!(got[o][0], want, "prod {} output {o}", T::DTYPE);
        }
    }
    // Chunk boundaries: 3 chunks and a bit per output; grid caps and index widths agree.
    let big = values::<T>(2 * 12293, 3);
    let mask = [false, true];
    let c = Case { sizes: &[2, 12293], strides: [&[12293, 1]], mask: &mask, data: [&big] };
    check_exact(&c, true);
    check_best(&c, true);
}

/// max/min with NaNs, infinities and signed zeros (every sample, in two orders).
fn check_specials<T: Sample>() {
    let mut s = T::samples();
    let mut r = s.clone();
    r.reverse();
    s.extend(r);
    let n = s.len() as i64;
    check_best(&Case { sizes: &[2, n / 2], strides: [&[n / 2, 1]], mask: &[false, true], data: [&s] }, true);
    check_best(&Case { sizes: &[n], strides: [&[1]], mask: &[true], data: [&s] }, false);
}

macro_rules! reduce_tests {
    ($($name:ident: $T:ty;)*) => {$(
        #[test]
        fn $name() {
            check_all::<$T>();
            check_specials::<$T>();
        }
    )*};
}

reduce_tests! {
    reduce_byte: u8;
    reduce_char: i8;
    reduce_short: i16;
    reduce_int: i32;
    reduce_long: i64;
    reduce_float: f32;
    reduce_double: f64;
    reduce_half: f16;
    reduce_bfloat16: bf16;
}

#[test]
fn reduce_bool() {
    let a: Vec<Bool> = values(45, 4);
    let b: Vec<Bool> = (0..45).map(|i| Bool::from(i % 4 == 0)).collect();
    for mask in [[false, true], [true, false], [true, true]] {
        let c = Case { sizes: &[5, 9], strides: [&[1, 5]], mask: &mask, data: [&a] };
        check_best(&c, true);
        let got = accs(&c.device(DeviceFold::Count, true), DType::Bool, DeviceFold::Count);
        let c2 = Case { sizes: &[5, 9], strides: [&[9, 1], &[1, 5]], mask: &mask, data: [&a, &b] };
        let eq = accs(&c2.device(DeviceFold::Equal, true), DType::Bool, DeviceFold::Equal);
        for (o, (s, s2)) in c.slices().iter().zip(c2.slices()).enumerate() {
            assert_eq!(got[o][0], s.iter().filter(|x| x[0].get()).count() as f64);
            assert_eq!(eq[o][0], s2.iter().filter(|x| x[0].get() != x[1].get()).count() as f64);
        }
    }
    // Non-canonical bytes are true, and equal to 1.
    let raw = [Bool(0), Bool(7), Bool(1), Bool(0)];
    let c = Case { sizes: &[4], strides: [&[1]], mask: &[true], data: [&raw] };
    assert_eq!(accs(&c.device(DeviceFold::Count, false), DType::Bool, DeviceFold::Count)[0][0], 2.0);
    let raw2 = [Bool(0), Bool(1), Bool(1), Bool(0)];
    let c2 = Case { sizes: &[4], strides: [&[1], &[1]], mask: &[true], data: [&raw, &raw2] };
    assert_eq!(accs(&c2.device(DeviceFold::Equal, false), DType::Bool, DeviceFold::Equal)[0][0], 0.0);
}

#[test]
fn dist_rounds_differences_to_the_element_type() {
    // 2049 - 1 in f16 is 2048 (2047 is not representable... it is: but 2049 rounds to 2048).
    let a: Vec<f16> = [2048.0f32, 3.0, -1.5].map(f16::from_f32).to_vec();
    let b: Vec<f16> = [-1.0f32, 1.0, 0.25].map(f16::from_f32).to_vec();
    let c = Case { sizes: &[3], strides: [&[1], &[1]], mask: &[true], data: [&a, &b] };
    let got = accs(&c.device(DeviceFold::Dist(1.0), true), DType::Half, DeviceFold::Dist(1.0));
    let want: f64 = a.iter().zip(&b).map(|(&x, &y)| f64_of(x.sub(y)).abs()).sum();
    assert_eq!(got[0][0], want);
    assert_eq!(want, 2048.0 + 2.0 + 1.75);
}

#[test]
fn combine_passes_follow_the_chunk_count() {
    // A fake executor records the passes of a huge reduction without running it: 2^31 elements
    // in 2^19 chunks, then 128 partials, then 1.
    struct Record(Vec<(String, i64, i64, u32)>);
    impl Exec for Record {
        fn alloc(&mut self, _bytes: usize) -> crate::core::error::Result<u64> {
            Ok(8)
        }
        unsafe fn launch(&mut self, k: &str, cfg: &LaunchCfg, p: &mut THCReduce) -> crate::core::error::Result<()> {
            self.0.push((k.to_string(), p.k, p.nchunks, cfg.grid[0]));
            Ok(())
        }
        unsafe fn read(&mut self, _dst: &mut [u8], _src: u64) -> crate::core::error::Result<()> {
            Ok(())
        }
    }
    let g = Geometry::<1>::new(&[1 << 31], [&[1]], &[true]);
    let pl = plan(DeviceFold::Sum, DType::Float, &g).unwrap();
    let mut rec = Record(vec![]);
    // SAFETY: nothing is launched.
    unsafe { execute(&pl, &[0], &mut rec, 4096) }.unwrap();
    let want = [
        ("th_reduce_sum_float_i64", 1i64 << 31, 1i64 << 19, 4096u32),
        ("th_combine_sum_float", 1 << 19, 128, 128),
        ("th_combine_sum_float", 128, 1, 1),
    ];
    assert_eq!(rec.0, want.map(|(k, a, b, c)| (k.to_string(), a, b, c)));
}

#[test]
fn combine_kernel_over_many_partials() {
    // 5000 partials of one output: 2 chunks of 4096, then one; integers, so exact.
    let parts: Vec<i64> = (0..5000).map(|i| i * i - 7).collect();
    let mut ex = HostExec { bufs: vec![], launches: vec![] };
    let mut out = vec![0i64; 2];
    let mut p = THCReduce {
        k: 5000,
        nchunks: 2,
        lanes: 256,
        m: 1,
        data: [parts.as_ptr() as u64, 0],
        out: out.as_mut_ptr() as u64,
        ..plan(DeviceFold::Sum, DType::Long, &Geometry::<1>::new(&[3], [&[1]], &[true])).unwrap().params
    };
    let cfg = crate::cuda::reduce::grid(2, 256, 4096);
    // SAFETY: 5000 partials in, 2 out.
    unsafe { ex.launch("th_combine_sum_long", &cfg, &mut p) }.unwrap();
    assert_eq!(out, [parts[..4096].iter().sum::<i64>(), parts[4096..].iter().sum::<i64>()]);
}
