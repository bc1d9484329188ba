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
