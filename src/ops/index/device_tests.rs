//! Index ops on the emulated device (`TH_CUDA_EMULATOR=1`) where the launch trace matters: a long
//! sort runs the radix passes (a bounded number of launches, a thread per 8 elements each), and
//! gives the host's values and positions, NaN and signed zeros included.

use super::*;
use crate::core::refcount::Rc;
use crate::cuda;

fn device_copy<T: Scalar>(host: &View<T>) -> View<T> {
    let d = View::on_storage(Some(cuda::storage::new::<T>(0, host.numel()).unwrap()), 0, &host.sizes, None).unwrap();
    cuda::copy::copy(&d, host).unwrap();
    d
}

fn fetch<T: Scalar>(t: &Tensor<T>) -> Vec<T> {
    let v = t.view();
    let h = View::contiguous(&v.sizes).unwrap();
    cuda::copy::copy(&h, &v).unwrap();
    h.to_vec().unwrap()
}

fn out<T: Scalar>(device: bool) -> Rc<Tensor<T>> {
    let v = if device {
        View::on_storage(Some(cuda::storage::new::<T>(0, 0).unwrap()), 0, &[0], None).unwrap()
    } else {
        View::empty()
    };
    Tensor::new(v)
}

#[test]
fn long_sorts_run_the_radix_passes() {
    cuda::use_emulator_in_tests();
    let n = 1usize << 16;
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let vals: Vec<f32> = (0..n)
        .map(|i| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            match i % 97 {
                0 => f32::NAN,
                1 => -0.0,
                2 => 0.0,
                3 => f32::NEG_INFINITY,
                _ => ((x >> 40) % 2000) as f32 / 8.0 - 125.0,
            }
        })
        .collect();
    let h = View::from_slice(&vals, &[n as i64]).unwrap();
    let d = device_copy(&h);
    for desc in [false, true] {
        let (hv, hi, dv, di) = (out::<f32>(false), out::<i64>(false), out::<f32>(true), out::<i64>(true));
        sort(&hv, &hi, &h, 0, desc).unwrap();
        let ((), trace) = cuda::trace::capture(|| sort(&dv, &di, &d, 0, desc).unwrap());
        let launches: Vec<&String> = trace.iter().filter(|l| l.starts_with("launch")).collect();
        assert!(launches.len() <= 40, "{} launches: {launches:?}", launches.len());
        let passes: Vec<&&String> = launches.iter().filter(|l| l.contains("radixScatter")).collect();
        assert_eq!(passes.len(), 8, "{launches:?}");
        for l in launches.iter().filter(|l| l.contains("radixCount") || l.contains("radixScatter")) {
            // one thread per 8 elements: 2^13 here, 2^17 for a 2^20 sort
            let f: Vec<&str> = l.split('\t').collect();
            let (g, b): (u64, u64) =
                (f[2].split(',').next().unwrap().parse().unwrap(), f[3].split(',').next().unwrap().parse().unwrap());
            assert_eq!(g * b, n as u64 / 8, "{l}");
        }
        assert!(trace.iter().all(|l| !l.starts_with("copy") && !l.starts_with("sync")), "{trace:?}");
        let (wv, wi, gv, gi) = (hv.view().to_vec().unwrap(), hi.view().to_vec().unwrap(), fetch(&dv), fetch(&di));
        assert_eq!(gi, wi, "positions, desc {desc}");
        let bits = |v: &[f32]| v.iter().map(|x| if x.is_nan() { u32::MAX } else { x.to_bits() }).collect::<Vec<_>>();
        assert_eq!(bits(&gv), bits(&wv), "values, desc {desc}");
    }
}

/// maskedSelect ranks its mask with the tiled scan: several blocks per launch past a tile (no
/// line walked by one thread), and the host's result.
#[test]
fn masked_select_ranks_in_parallel() {
    cuda::use_emulator_in_tests();
    let n = 5000usize;
    let vals: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let mask: Vec<u8> = (0..n).map(|i| ((i * 7919) % 3 == 0) as u8).collect();
    let (hv, hm) = (View::from_slice(&vals, &[n as i64]).unwrap(), View::from_slice(&mask, &[n as i64]).unwrap());
    let (dv, dm) = (device_copy(&hv), device_copy(&hm));
    let (hr, dr) = (out::<f32>(false), out::<f32>(true));
    masks::masked_select(&hr, &hv, &hm).unwrap();
    let ((), trace) = cuda::trace::capture(|| masks::masked_select(&dr, &dv, &dm).unwrap());
    let tiles: Vec<&String> = trace.iter().filter(|l| l.contains("cumsumTiles_long")).collect();
    assert_eq!(tiles.len(), 1, "{trace:?}");
    assert!(tiles[0].split('\t').nth(2).unwrap().starts_with("3,"), "{tiles:?}");
    assert_eq!(fetch(&dr), hr.view().to_vec().unwrap());
}

/// A pseudo-random stream for the tests below.
fn lcg(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed;
    move || {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        x >> 33
    }
}

/// Checks that the first launch of a kernel whose name contains `kernel` runs at least `items`
/// threads, in more than one block when there are more items than a block holds.
fn assert_threads(trace: &[String], kernel: &str, items: i64) {
    let l = trace.iter().find(|l| l.starts_with("launch") && l.contains(kernel));
    let f: Vec<&str> = l.unwrap_or_else(|| panic!("no {kernel} launch in {trace:?}")).split('\t').collect();
    let first = |s: &str| s.split(',').next().unwrap().parse::<u64>().unwrap();
    let (blocks, block) = (first(f[2]), first(f[3]));
    assert!(blocks * block >= items as u64 && (blocks > 1 || items as u64 <= block), "{items} items: {f:?}");
}

/// indexAdd/indexCopy with one long index line shared by few items (the network's sort at 100
/// indices, the radix sort's at 3000) and scatterAdd/scatter with a line per item: sorted
/// first, then a thread per (item, index); float sums of repeated indices keep the host's order,
/// so the bits are the host's. The fills run a thread per index element.
#[test]
fn long_scatters_run_sorted_in_parallel() {
    cuda::use_emulator_in_tests();
    let mut rnd = lcg(7);
    for (k, rows, cols) in [(100i64, 7i64, 3i64), (3000, 40, 2)] {
        // t: rows x cols, updated along dim 0 from src: k x cols
        let t0: Vec<f32> = (0..rows * cols).map(|_| (rnd() % 1000) as f32 * 0.37 - 150.0).collect();
        let src: Vec<f32> = (0..k * cols).map(|_| (rnd() % 100_000) as f32 * 1e-3 + 1e-7).collect();
        // few distinct targets, so runs of equal indices are long
        let index: Vec<i64> = (0..k).map(|_| (rnd() % 5) as i64 * (rows / 5)).collect();
        let (hs, hi) = (View::from_slice(&src, &[k, cols]).unwrap(), View::from_slice(&index, &[k]).unwrap());
        let (ds, di) = (device_copy(&hs), device_copy(&hi));
        for add in [true, false] {
            let ht = View::from_slice(&t0, &[rows, cols]).unwrap();
            let dt = device_copy(&ht);
            let run = |t: &View<f32>, i: &View<i64>, s: &View<f32>| {
                if add { select::index_add(t, 0, i, s) } else { select::index_copy(t, 0, i, s) }.unwrap()
            };
            run(&ht, &hi, &hs);
            let ((), trace) = cuda::trace::capture(|| run(&dt, &di, &ds));
            let kernel = if add { "scatterAddSorted" } else { "scatterSorted" };
            assert_threads(&trace, kernel, k * cols);
            // the index check's one round trip: min and max come back in one copy
            let copies: Vec<&String> = trace.iter().filter(|l| l.starts_with("copy")).collect();
            assert_eq!(copies, [&"copy\tDtoH\t32\tsync".to_string()], "{trace:?}");
            let got = fetch(&Tensor::new(dt));
            let want = ht.to_vec().unwrap();
            assert_eq!(
                got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                want.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            );
        }
        // scatter along dim 1: a line per row, k indices each
        let sidx: Vec<i64> = (0..rows * k).map(|_| (rnd() % cols as u64) as i64).collect();
        let ssrc: Vec<f32> = (0..rows * k).map(|_| (rnd() % 100_000) as f32 * 1e-3 - 7.0).collect();
        let (hs, hi) = (View::from_slice(&ssrc, &[rows, k]).unwrap(), View::from_slice(&sidx, &[rows, k]).unwrap());
        let (ds, di) = (device_copy(&hs), device_copy(&hi));
        for add in [true, false] {
            let ht = View::from_slice(&t0, &[rows, cols]).unwrap();
            let dt = device_copy(&ht);
            let run = |t: &View<f32>, i: &View<i64>, s: &View<f32>| {
                if add { select::scatter_add(t, 1, i, s) } else { select::scatter(t, 1, i, s) }.unwrap()
            };
            run(&ht, &hi, &hs);
            let ((), trace) = cuda::trace::capture(|| run(&dt, &di, &ds));
            let launches =
                trace.iter().filter(|l| l.starts_with("launch") && l.contains("catter") && l.contains("float")).count();
            assert_eq!(launches, 1, "{trace:?}");
            assert_threads(&trace, "Sorted", k * rows);
            let got = fetch(&Tensor::new(dt));
            assert_eq!(
                got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                ht.to_vec().unwrap().iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            );
        }
        // fills: one thread per index element
        let ht = View::from_slice(&t0, &[rows, cols]).unwrap();
        let dt = device_copy(&ht);
        select::scatter_fill(&ht, 1, &hi, 2.5).unwrap();
        let ((), trace) = cuda::trace::capture(|| select::scatter_fill(&dt, 1, &di, 2.5).unwrap());
        assert_threads(&trace, "scatterFill", k * rows);
        assert_eq!(fetch(&Tensor::new(dt)), ht.to_vec().unwrap());
    }
}
