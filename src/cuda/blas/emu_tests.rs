//! The products on emulated device tensors (`TH_CUDA_EMULATOR=1`, set before the first device
//! use) against the same calls on host tensors of the same layouts: contiguous, transposed,
//! narrowed, strided (copied to a contiguous operand), expanded (stride 0), size-1 dims,
//! outputs that need a temporary, `r` being `t`, and every numeric dtype. Values are small
//! multiples of 1/8 (integers for the integer dtypes), so float products are exact in any
//! order and the device results equal the host's bit for bit (16-bit floats: both sides
//! accumulate in f32 and round once).

use crate::core::dtype::{DType, Format, Prim, Scalar};
use crate::core::refcount::Rc;
use crate::core::tensor::{Tensor, View};
use crate::cuda;
use crate::linalg::gemm::Gemm;
use crate::linalg::products;
use half::{bf16, f16};

fn values<T: Scalar>(n: usize, seed: u64) -> Vec<T> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let r = ((x >> 33) % 32) as i64;
            match T::DTYPE.format() {
                Format::Float | Format::BFloat => T::from_prim(Prim::F(r as f64 / 8.0 - 2.0)),
                // Wide enough that integer products wrap in Byte and Char.
                _ => T::from_prim(Prim::I(r * 9 - 100)),
            }
        })
        .collect()
}

/// A layout: offset, sizes, strides.
type Lay<'a> = (usize, &'a [i64], &'a [i64]);

fn span(l: Lay) -> usize {
    l.0 + 1 + l.1.iter().zip(l.2).map(|(&s, &st)| ((s - 1).max(0) * st) as usize).sum::<usize>()
}

/// The same values in the same layout on the host and on the device.
fn pair<T: Scalar>(l: Lay, seed: u64) -> (View<T>, View<T>) {
    let data = values::<T>(span(l), seed);
    let n = data.len() as i64;
    let host = View::from_slice(&data, &[n]).unwrap();
    let st = cuda::storage::new::<T>(0, data.len()).unwrap();
    let whole = View::on_storage(Some(st.clone()), 0, &[n], None).unwrap();
    cuda::copy::copy(&whole, &host).unwrap();
    let h = View::on_storage(host.storage.clone(), l.0 as isize, l.1, Some(l.2)).unwrap();
    let d = View::on_storage(Some(st), l.0 as isize, l.1, Some(l.2)).unwrap();
    (h, d)
}

/// A whole storage's elements (device storages read back).
fn storage_of<T: Scalar>(v: &View<T>) -> Vec<T> {
    let s = v.storage.as_ref().unwrap();
    let n = s.raw_parts().1 as i64;
    let whole = View::on_storage(Some(s.clone()), 0, &[n], None).unwrap();
    let h = View::contiguous(&[n]).unwrap();
    cuda::copy::copy(&h, &whole).unwrap();
    h.to_vec().unwrap()
}

type Product<T> = fn(&Tensor<T>, T, &View<T>, T, &View<T>, &View<T>) -> crate::core::error::Result<()>;

/// `f(r, beta, t, alpha, x, y)` on both engines: `r` a fresh tensor, or `t` itself (`alias`);
/// the results (and, when aliased, `t`'s whole storage) must be equal.
fn same<T: Gemm>(f: Product<T>, lays: [Lay; 3], (alpha, beta): (f64, f64), alias: bool, what: &str) {
    crate::cuda::use_emulator_in_tests();
    let (th, td) = pair::<T>(lays[0], 1);
    let (xh, xd) = pair::<T>(lays[1], 2);
    let (yh, yd) = pair::<T>(lays[2], 3);
    let (a, b) = (T::from_prim(Prim::F(alpha)), T::from_prim(Prim::F(beta)));
    let (rh, rd) = if alias {
        (Tensor::new(th.clone()), Tensor::new(td.clone()))
    } else {
        let dev = View::on_storage(Some(cuda::storage::new::<T>(0, 0).unwrap()), 0, &[0], None).unwrap();
        (Tensor::new(View::empty()), Tensor::new(dev))
    };
    let (rh, rd): (Rc<Tensor<T>>, Rc<Tensor<T>>) = (rh, rd);
    f(&rh, b, &th, a, &xh, &yh).unwrap();
    f(&rd, b, &td, a, &xd, &yd).unwrap();
    let (vh, vd) = (rh.view(), rd.view());
    assert_eq!(vh.sizes, vd.sizes, "{what} {:?}", T::DTYPE);
    let got = {
        let h = View::<T>::contiguous(&vd.sizes).unwrap();
        cuda::copy::copy(&h, &vd).unwrap();
        h.to_vec().unwrap()
    };
    assert_eq!(got, vh.to_vec().unwrap(), "{what} {:?} alpha {alpha} beta {beta}", T::DTYPE);
    if alias {
        assert_eq!(storage_of(&td), storage_of(&th), "{what} {:?}: t's storage", T::DTYPE);
    }
}

fn every_product<T: Gemm>() {
    let scalars = [(1.0, 0.0), (2.0, -1.0), (0.0, 3.0)];
    for &s in &scalars {
        // addmm: m1 3x4, m2 4x5, t 3x5.
        let mm: Product<T> = products::addmm;
        let t = (0, &[3i64, 5][..], &[5i64, 1][..]);
        for (x, y, what) in [
            ((0, &[3i64, 4][..], &[4i64, 1][..]), (0, &[4i64, 5][..], &[5i64, 1][..]), "contiguous"),
            ((1, &[3, 4][..], &[1, 3][..]), (2, &[4, 5][..], &[1, 4][..]), "transposed"),
            ((2, &[3, 4][..], &[7, 1][..]), (1, &[4, 5][..], &[1, 6][..]), "narrowed"),
            ((0, &[3, 4][..], &[8, 2][..]), (0, &[4, 5][..], &[0, 1][..]), "strided and expanded"),
            ((0, &[3, 4][..], &[0, 0][..]), (3, &[4, 5][..], &[10, 2][..]), "all expanded"),
        ] {
            same(mm, [t, x, y], s, false, &format!("addmm {what}"));
        }
        same(mm, [(1, &[3, 5], &[1, 4]), (0, &[3, 4], &[4, 1]), (0, &[4, 5], &[5, 1])], s, true, "addmm r=t^T");
        same(mm, [(0, &[3, 5], &[10, 2]), (0, &[3, 4], &[4, 1]), (0, &[4, 5], &[1, 4])], s, true, "addmm strided r=t");
        same(mm, [(0, &[1, 1], &[1, 1]), (0, &[1, 3], &[3, 1]), (0, &[3, 1], &[1, 1])], s, false, "addmm 1x1");
        // addmv
        let mv: Product<T> = products::addmv;
        same(mv, [(0, &[3], &[1]), (0, &[3, 4], &[4, 1]), (0, &[4], &[1])], s, false, "addmv");
        same(mv, [(0, &[3], &[2]), (0, &[3, 4], &[1, 3]), (1, &[4], &[3])], s, true, "addmv strided r=t");
        same(mv, [(0, &[3], &[1]), (0, &[3, 4], &[4, 1]), (0, &[4], &[0])], s, false, "addmv expanded vec");
        // addr
        let r: Product<T> = products::addr;
        same(r, [(0, &[3, 4], &[4, 1]), (0, &[3], &[1]), (0, &[4], &[1])], s, false, "addr");
        same(r, [(0, &[3, 4], &[1, 3]), (2, &[3], &[2]), (0, &[4], &[0])], s, true, "addr transposed r=t");
        // baddbmm: 2 batches of 3x4 @ 4x5.
        let bb: Product<T> = products::baddbmm;
        let t3 = (0, &[2i64, 3, 5][..], &[15i64, 5, 1][..]);
        same(bb, [t3, (0, &[2, 3, 4], &[12, 4, 1]), (0, &[2, 4, 5], &[20, 5, 1])], s, false, "baddbmm");
        same(bb, [t3, (1, &[2, 3, 4], &[12, 1, 3]), (0, &[2, 4, 5], &[0, 1, 4])], s, true, "baddbmm mixed r=t");
        same(
            bb,
            [(0, &[2, 3, 5], &[1, 10, 2]), (0, &[2, 3, 4], &[12, 4, 1]), (0, &[2, 4, 5], &[20, 5, 1])],
            s,
            true,
            "baddbmm odd r=t",
        );
        // addbmm
        let ab: Product<T> = products::addbmm;
        same(ab, [t, (0, &[2, 3, 4], &[12, 4, 1]), (0, &[2, 4, 5], &[1, 10, 2])], s, false, "addbmm");
        same(
            ab,
            [(0, &[3, 5], &[1, 3]), (0, &[3, 3, 4], &[1, 12, 3]), (0, &[3, 4, 5], &[20, 5, 1])],
            s,
            true,
            "addbmm r=t",
        );
    }
}

#[test]
fn device_products_equal_the_host_engine() {
    every_product::<f32>();
    every_product::<f64>();
    every_product::<f16>();
    every_product::<bf16>();
    every_product::<u8>();
    every_product::<i8>();
    every_product::<i16>();
    every_product::<i32>();
    every_product::<i64>();
}

#[test]
fn checks_come_first_and_mixed_devices_are_refused() {
    crate::cuda::use_emulator_in_tests();
    let (_, t) = pair::<f32>((0, &[3, 5], &[5, 1]), 1);
    let (_, x) = pair::<f32>((0, &[3, 4], &[4, 1]), 2);
    let (_, bad) = pair::<f32>((0, &[3, 5], &[5, 1]), 3);
    let (host_y, y) = pair::<f32>((0, &[4, 5], &[5, 1]), 3);
    let before = storage_of(&t);
    let r = Tensor::new(t.clone());
    let e = products::addmm(&r, 1.0, &t, 1.0, &x, &bad).unwrap_err();
    assert_eq!(e.arg, Some(6), "{}", e.msg);
    assert!(products::addmm(&r, 1.0, &t, 1.0, &x, &host_y).unwrap_err().msg.contains("same device"));
    assert_eq!(storage_of(&t), before);
    products::addmm(&r, 1.0, &t, 1.0, &x, &y).unwrap();
    assert_ne!(storage_of(&t), before);
}

#[test]
fn the_integer_kernels_are_listed_for_their_modules() {
    assert_eq!(super::kernels_of(DType::Long), vec!["th_gemm_long".to_string()]);
    assert!(super::kernels_of(DType::Float).is_empty() && super::kernels_of(DType::Bool).is_empty());
    assert_eq!(crate::cuda::kernels::module_of("th_gemm_byte").unwrap().name, "byte");
}
