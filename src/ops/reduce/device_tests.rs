//! The reductions on emulated device tensors (`TH_CUDA_EMULATOR=1`, set here before the first
//! device use) against the same calls on host tensors of the same layout: contiguous,
//! transposed, gapped and broadcast-expanded views, every dim, keepdim or not, whole-tensor
//! forms, and clear errors from the functions that stay host-only.
//!
//! Values are multiples of 1/8 in [-2, 2), so sums and small products are exact in any order
//! and compare bit for bit; variances, norms with fractional p and long products within a
//! tolerance.

use super::*;
use crate::core::dtype::Prim;
use crate::core::refcount::Rc;
use crate::cuda;
use half::f16;

fn values<T: Scalar>(n: usize, seed: u64) -> Vec<T> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let v = ((x >> 33) % 32) as f64 / 8.0 - 2.0;
            match T::DTYPE {
                DType::Byte => T::from_prim(Prim::I((x >> 40) as i64 % 7)),
                d if !matches!(d.format(), crate::core::dtype::Format::Float | crate::core::dtype::Format::BFloat) => {
                    T::from_prim(Prim::I((v * 4.0) as i64))
                }
                _ => T::from_prim(Prim::F(v)),
            }
        })
        .collect()
}

use crate::core::dtype::DType;

/// The same layouts on the host and the device: (host view, device view) of `sizes` over
/// storage holding `data`.
fn pair<T: Scalar>(data: &[T], offset: isize, sizes: &[i64], strides: &[i64]) -> (View<T>, View<T>) {
    let n = data.len() as i64;
    let host = View::from_slice(data, &[n]).unwrap();
    let st = cuda::storage::new::<T>(0, data.len()).unwrap();
    let dev = View::on_storage(Some(st.clone()), 0, &[n], None).unwrap();
    cuda::copy::copy(&dev, &host).unwrap();
    let h = View::on_storage(host.storage.clone(), offset, sizes, Some(strides)).unwrap();
    let d = View::on_storage(Some(st), offset, sizes, Some(strides)).unwrap();
    (h, d)
}

fn device_out<T: Scalar>() -> Rc<Tensor<T>> {
    Tensor::new(View::on_storage(Some(cuda::storage::new::<T>(0, 0).unwrap()), 0, &[0], None).unwrap())
}

fn host_out<T: Scalar>() -> Rc<Tensor<T>> {
    Tensor::new(View::empty())
}

/// A device tensor's elements (row-major) and shape.
fn fetch<T: Scalar>(t: &Tensor<T>) -> (Vec<i64>, Vec<T>) {
    let v = t.view();
    let h = View::contiguous(&v.sizes).unwrap();
    cuda::copy::copy(&h, &v).unwrap();
    (v.sizes.clone(), if v.numel() == 0 { vec![] } else { h.to_vec().unwrap() })
}

fn close(g: f64, w: f64, tol: f64) -> bool {
    g == w || (g.is_nan() && w.is_nan()) || (g - w).abs() <= tol * w.abs().max(1.0)
}

fn f64_of<T: Scalar>(x: T) -> f64 {
    match x.to_prim() {
        Prim::I(v) => v as f64,
        Prim::F(v) => v,
    }
}

fn same_tensor<T: Scalar>(what: &str, h: &Tensor<T>, d: &Tensor<T>, tol: f64) {
    let (hs, hv) = (h.view().sizes.clone(), h.view().to_vec().unwrap());
    let (ds, dv) = fetch(d);
    assert_eq!(ds, hs, "{what}: sizes");
    for (i, (&a, &b)) in dv.iter().zip(&hv).enumerate() {
        assert!(close(f64_of(a), f64_of(b), tol), "{what} [{i}]: device {a:?}, host {b:?}");
    }
}

/// The layouts of a 3 x 4 x 5 tensor: contiguous, transposed (dims 0 and 2), gapped (every
/// other element, at an offset), broadcast-expanded from 4 x 5.
const LAYOUTS: [(&str, isize, [i64; 3], [i64; 3]); 4] = [
    ("contiguous", 0, [3, 4, 5], [20, 5, 1]),
    ("transposed", 0, [3, 4, 5], [1, 3, 12]),
    ("gapped", 3, [3, 4, 5], [40, 10, 2]),
    ("broadcast", 0, [3, 4, 5], [0, 5, 1]),
];

fn check_num<T: NumAcc>(tol: f64)
where
    T::Acc: Scalar,
{
    crate::cuda::use_emulator_in_tests();
    let data = values::<T>(130, 7);
    for (name, off, sizes, strides) in LAYOUTS {
        let (h, d) = pair(&data, off, &sizes, &strides);
        for dim in 0..3 {
            for keep in [false, true] {
                let what = |op: &str| format!("{op} {} {name} dim {dim} keepdim {keep}", T::DTYPE);
                let (rh, rd) = (host_out::<T>(), device_out::<T>());
                sum(&rh, &h, dim, keep).unwrap();
                sum(&rd, &d, dim, keep).unwrap();
                same_tensor(&what("sum"), &rh, &rd, 0.0);
                prod(&rh, &h, dim, keep).unwrap();
                prod(&rd, &d, dim, keep).unwrap();
                same_tensor(&what("prod"), &rh, &rd, 0.0);
                let (ih, id) = (host_out::<i64>(), device_out::<i64>());
                for m in [true, false] {
                    let f = if m { max::<T> } else { min::<T> };
                    f(&rh, &ih, &h, dim, keep).unwrap();
                    f(&rd, &id, &d, dim, keep).unwrap();
                    same_tensor(&what(if m { "max" } else { "min" }), &rh, &rd, 0.0);
                    same_tensor(&what("indices"), &ih, &id, 0.0);
                }
            }
        }
        let w = format!("{} {name}", T::DTYPE);
        assert_eq!(f64_of(sumall(&d).unwrap()), f64_of(sumall(&h).unwrap()), "sumall {w}");
        assert!(close(f64_of(prodall(&d).unwrap()), f64_of(prodall(&h).unwrap()), tol), "prodall {w}");
        assert_eq!(maxall(&d).unwrap(), maxall(&h).unwrap(), "maxall {w}");
        assert_eq!(minall(&d).unwrap(), minall(&h).unwrap(), "minall {w}");
        assert_eq!(count_nonzero(&d).unwrap(), count_nonzero(&h).unwrap(), "count {w}");
        let (h2, d2) = pair(&values::<T>(60, 9), 0, &sizes, &[1, 3, 12]);
        assert_eq!(f64_of(dot(&d, &d2).unwrap()), f64_of(dot(&h, &h2).unwrap()), "dot {w}");
        assert_eq!(equal(&d, &d2).unwrap(), equal(&h, &h2).unwrap(), "equal {w}");
        assert!(equal(&d, &d).unwrap(), "equal to itself {w}");
    }
    // Median sorts every line on the device and picks there.
    let (h, d) = pair(&data, 0, &[2, 5], &[5, 1]);
    let (rd, id) = (device_out::<T>(), device_out::<i64>());
    let (rh, ih) = (host_out::<T>(), host_out::<i64>());
    median(&rd, &id, &d, 1, false).unwrap();
    median(&rh, &ih, &h, 1, false).unwrap();
    same_tensor("median values", &rh, &rd, 0.0);
    same_tensor("median indices", &ih, &id, 0.0);
    assert_eq!(f64_of(medianall(&d).unwrap()), f64_of(medianall(&h).unwrap()), "medianall");
    // The other selections and the scans run on the device too (cuda::sort), with the host's bits.
    kthvalue(&rd, &id, &d, 2, 1, true).unwrap();
    kthvalue(&rh, &ih, &h, 2, 1, true).unwrap();
    same_tensor("kthvalue values", &rh, &rd, 0.0);
    same_tensor("kthvalue indices", &ih, &id, 0.0);
    cumsum(&rd, &d, 1).unwrap();
    cumsum(&rh, &h, 1).unwrap();
    same_tensor("cumsum", &rh, &rd, 0.0);
    assert!(kthvalue(&rd, &id, &d, 6, 1, false).is_err(), "k past the dim");
    // Empty device tensors: identities, and the errors of the host.
    let (_, e) = pair(&data, 0, &[0, 3], &[3, 1]);
    assert_eq!(f64_of(sumall(&e).unwrap()), 0.0);
    assert!(maxall(&e).is_err());
}

fn check_float<T: FloatAcc>(tol: f64)
where
    T::Acc: Scalar,
{
    check_num::<T>(tol);
    let data = values::<T>(130, 11);
    for (name, off, sizes, strides) in LAYOUTS {
        let (h, d) = pair(&data, off, &sizes, &strides);
        for dim in 0..3 {
            for keep in [false, true] {
                let what = |op: &str| format!("{op} {} {name} dim {dim} keepdim {keep}", T::DTYPE);
                let (rh, rd) = (host_out::<T>(), device_out::<T>());
                mean(&rh, &h, dim, keep).unwrap();
                mean(&rd, &d, dim, keep).unwrap();
                same_tensor(&what("mean"), &rh, &rd, tol);
                for biased in [false, true] {
                    var(&rh, &h, dim, biased, keep).unwrap();
                    var(&rd, &d, dim, biased, keep).unwrap();
                    same_tensor(&what("var"), &rh, &rd, tol);
                    std(&rh, &h, dim, biased, keep).unwrap();
                    std(&rd, &d, dim, biased, keep).unwrap();
                    same_tensor(&what("std"), &rh, &rd, tol);
                }
                for p in [0.0, 1.0, 2.0, 3.5, f64::INFINITY] {
                    let pt = T::from_prim(Prim::F(p));
                    norm(&rh, &h, pt, dim, keep).unwrap();
                    norm(&rd, &d, pt, dim, keep).unwrap();
                    same_tensor(&what(&format!("norm {p}")), &rh, &rd, tol);
                }
            }
        }
        let w = format!("{} {name}", T::DTYPE);
        let c = |a: T::Acc, b: T::Acc| close(f64_of(a), f64_of(b), tol);
        assert!(c(meanall(&d).unwrap(), meanall(&h).unwrap()), "meanall {w}");
        assert!(c(varall(&d, false).unwrap(), varall(&h, false).unwrap()), "varall {w}");
        assert!(c(stdall(&d, true).unwrap(), stdall(&h, true).unwrap()), "stdall {w}");
        for p in [0.0, 1.0, 2.0, 3.5, f64::INFINITY, f64::NEG_INFINITY] {
            let pt = T::from_prim(Prim::F(p));
            assert!(c(normall(&d, pt).unwrap(), normall(&h, pt).unwrap()), "normall {p} {w}");
            let (h2, d2) = pair(&values::<T>(60, 13), 0, &sizes, &[1, 3, 12]);
            assert!(c(dist(&d, &d2, pt).unwrap(), dist(&h, &h2, pt).unwrap()), "dist {p} {w}");
        }
    }
}

#[test]
fn device_reductions_float() {
    check_float::<f32>(1e-5);
}

#[test]
fn device_reductions_double() {
    check_float::<f64>(1e-12);
}

#[test]
fn device_reductions_half() {
    check_float::<f16>(2e-3);
}

#[test]
fn device_reductions_int_and_byte() {
    check_num::<i32>(0.0);
    check_num::<u8>(0.0);
}

#[test]
fn device_reductions_bool_and_logical() {
    crate::cuda::use_emulator_in_tests();
    let data: Vec<Bool> = (0..24).map(|i| Bool::from(i % 3 != 0)).collect();
    let (h, d) = pair(&data, 0, &[4, 6], &[1, 4]);
    assert_eq!(logicalall(&d).unwrap(), logicalall(&h).unwrap());
    assert_eq!(logicalany(&d).unwrap(), logicalany(&h).unwrap());
    assert_eq!(count_nonzero(&d).unwrap(), 16);
    let ones = vec![Bool::from(true); 6];
    let (_, all) = pair(&ones, 0, &[6], &[1]);
    assert!(logicalall(&all).unwrap());
    for dim in 0..2 {
        let (rh, rd, ih, id) = (host_out::<Bool>(), device_out::<Bool>(), host_out::<i64>(), device_out::<i64>());
        max(&rh, &ih, &h, dim, true).unwrap();
        max(&rd, &id, &d, dim, true).unwrap();
        same_tensor("bool max", &rh, &rd, 0.0);
        same_tensor("bool max indices", &ih, &id, 0.0);
    }
    let bytes: Vec<u8> = vec![1, 0, 3, 2];
    let (hb, db) = pair(&bytes, 0, &[4], &[1]);
    assert_eq!((logicalall(&db).unwrap(), logicalany(&db).unwrap()), (logicalall(&hb).unwrap(), true));
}

/// `dot` and `dist` pair elements in row-major order when the shapes differ: a strided device
/// operand is flattened on the device (not through a host temporary).
#[test]
fn device_dot_and_dist_pair_elements_of_different_shapes() {
    crate::cuda::use_emulator_in_tests();
    let data: Vec<f32> = values(24, 7);
    let (ha, da) = pair(&data, 0, &[4, 6], &[1, 4]); // transposed: not contiguous
    let (hb, db) = pair(&values::<f32>(24, 8), 0, &[2, 3, 4], &[12, 4, 1]);
    assert_eq!(dot(&da, &db).unwrap(), dot(&ha, &hb).unwrap());
    let (h, d) = (dist(&ha, &hb, 2.0).unwrap(), dist(&da, &db, 2.0).unwrap());
    assert!(close(d, h, 1e-6), "dist: device {d}, host {h}");
}

/// Reductions along a dim finish on the device: nothing is copied to the host (the trace shows
/// launches only), with either layout (threads across outputs when the kept dims are inner,
/// lanes across the reduced range otherwise), with and without combine passes, and the same
/// values as the host. Outputs that cannot take finished values (not contiguous, or sharing the
/// input's storage) still get the right ones.
#[test]
fn device_dim_reductions_stay_on_the_device() {
    crate::cuda::use_emulator_in_tests();
    for (sizes, strides) in [([300, 70], [70, 1]), ([70, 300], [1, 70]), ([5000, 3], [3, 1]), ([3, 5000], [5000, 1])] {
        let data = values::<f32>(21000, 21);
        let (h, d) = pair(&data, 0, &sizes, &strides);
        for dim in 0..2 {
            let what = |op: &str| format!("{op} {sizes:?} strides {strides:?} dim {dim}");
            let (rh, rd, ih, id) = (host_out::<f32>(), device_out::<f32>(), host_out::<i64>(), device_out::<i64>());
            let ((), trace) = cuda::trace::capture(|| {
                sum(&rd, &d, dim, false).unwrap();
            });
            assert!(
                trace.iter().all(|l| !l.starts_with("copy") && !l.starts_with("sync")),
                "{}: {trace:?}",
                what("sum")
            );
            assert!(trace.iter().any(|l| l.starts_with("launch\tth_reduce_sum_float")), "{trace:?}");
            sum(&rh, &h, dim, false).unwrap();
            same_tensor(&what("sum"), &rh, &rd, 0.0);
            let ((), trace) = cuda::trace::capture(|| {
                mean(&rd, &d, dim, true).unwrap();
                var(&rd, &d, dim, false, true).unwrap();
                std(&rd, &d, dim, true, true).unwrap();
                norm(&rd, &d, 3.0, dim, true).unwrap();
                max(&rd, &id, &d, dim, true).unwrap();
            });
            assert!(trace.iter().all(|l| l.starts_with("launch")), "{}: {trace:?}", what("mean..max"));
            max(&rh, &ih, &h, dim, true).unwrap();
            same_tensor(&what("max"), &rh, &rd, 0.0);
            same_tensor(&what("max indices"), &ih, &id, 0.0);
            norm(&rh, &h, 3.0, dim, true).unwrap();
            min(&rd, &id, &d, dim, true).unwrap();
            min(&rh, &ih, &h, dim, true).unwrap();
            same_tensor(&what("min"), &rh, &rd, 0.0);
            same_tensor(&what("min indices"), &ih, &id, 0.0);
            for biased in [false, true] {
                var(&rd, &d, dim, biased, false).unwrap();
                var(&rh, &h, dim, biased, false).unwrap();
                same_tensor(&what("var"), &rh, &rd, 1e-5);
                std(&rd, &d, dim, biased, false).unwrap();
                std(&rh, &h, dim, biased, false).unwrap();
                same_tensor(&what("std"), &rh, &rd, 1e-5);
            }
            mean(&rd, &d, dim, false).unwrap();
            mean(&rh, &h, dim, false).unwrap();
            same_tensor(&what("mean"), &rh, &rd, 1e-6);
        }
    }
    // A transposed output of the right shape keeps its strides: finished on the host's path.
    let data = values::<f32>(60, 5);
    let (h, d) = pair(&data, 0, &[3, 4, 5], &[20, 5, 1]);
    let rd = device_out::<f32>();
    rd.set_view(View::on_storage(Some(cuda::storage::new::<f32>(0, 20).unwrap()), 0, &[4, 5], Some(&[1, 4])).unwrap());
    let rh = host_out::<f32>();
    sum(&rd, &d, 0, false).unwrap();
    sum(&rh, &h, 0, false).unwrap();
    assert_eq!(rd.view().strides, vec![1, 4]);
    same_tensor("sum into a transposed output", &rh, &rd, 0.0);
    // The output is the input: every input element is read before any output is written.
    let (_, d) = pair(&data, 0, &[6, 10], &[10, 1]);
    let rd = Tensor::new(d.clone());
    sum(&rd, &d, 1, false).unwrap();
    let want: Vec<f32> = data.chunks(10).map(|c| c.iter().sum()).collect();
    assert_eq!(fetch(&rd).1, want, "sum into its own input");
}

/// Long lines scan tile by tile (cuda::scan): several tiles and a partial last one, lines along
/// a contiguous or a strided dim, in place, every width of accumulator. Sums of multiples of 1/8
/// are exact in any order, so they match the host bit for bit; float products within a bound.
fn check_long_scans<T: NumAcc>(tol: f64)
where
    T::Acc: Scalar,
{
    crate::cuda::use_emulator_in_tests();
    let near_one = |n: usize| -> Vec<T> {
        values::<T>(n, 3)
            .into_iter()
            .map(|x| match T::DTYPE.format() {
                crate::core::dtype::Format::Float | crate::core::dtype::Format::BFloat => {
                    T::from_prim(Prim::F(1.0 + f64_of(x) / 128.0))
                }
                _ => x,
            })
            .collect()
    };
    for (sizes, strides, dim) in [([3, 5000], [5000, 1], 1), ([5000, 3], [3, 1], 0), ([2, 1024], [1, 2], 1)] {
        let n = (sizes[0] * sizes[1]) as usize;
        for prod in [false, true] {
            let data = if prod { near_one(n) } else { values::<T>(n, 17) };
            let (h, d) = pair(&data, 0, &sizes, &strides);
            let (rh, rd) = (host_out::<T>(), device_out::<T>());
            let what =
                format!("{} {} {sizes:?} {strides:?} dim {dim}", T::DTYPE, if prod { "cumprod" } else { "cumsum" });
            let f = if prod { cumprod::<T> } else { cumsum::<T> };
            let ((), trace) = cuda::trace::capture(|| f(&rd, &d, dim).unwrap());
            let tiles: Vec<&String> = trace.iter().filter(|l| l.contains("Tiles_")).collect();
            assert_eq!(tiles.len(), 1, "{what}: {trace:?}");
            f(&rh, &h, dim).unwrap();
            same_tensor(&what, &rh, &rd, if prod { tol } else { 0.0 });
            // in place
            let (h2, d2) = pair(&data, 0, &sizes, &strides);
            let (th, td) = (Tensor::new(h2.clone()), Tensor::new(d2.clone()));
            f(&th, &h2, dim).unwrap();
            f(&td, &d2, dim).unwrap();
            same_tensor(&format!("{what} in place"), &th, &td, if prod { tol } else { 0.0 });
        }
    }
}

#[test]
fn device_long_scans() {
    check_long_scans::<f32>(1e-6);
    check_long_scans::<f64>(1e-13);
    check_long_scans::<f16>(2e-3);
    check_long_scans::<half::bf16>(2e-2);
    check_long_scans::<i64>(0.0);
    check_long_scans::<i32>(0.0);
    check_long_scans::<i16>(0.0);
    check_long_scans::<i8>(0.0);
    check_long_scans::<u8>(0.0);
}
