//! THC's `btrifact` / `btrisolve` (batched LU with pivots in Int tensors, and the solve with
//! it) for device tensors, staged through the host LAPACK (`linalg::lapack`): the operands are
//! copied to the host, factored or solved there with TH's checks and errors, and the results
//! copied into the device outputs (resized as on the host). Nothing is written on the device
//! before the host call succeeded. Float and Double, as the CPU side (a device LU, cuBLAS's
//! `getrfBatched`, is not wired yet).

use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::exec::backend::Backend;
use crate::linalg::lapack::{self, Real};
use crate::ops::copy::copy;
use crate::ops::resize_out;

fn device<T: crate::core::dtype::Scalar>(t: &Tensor<T>) -> crate::core::allocator::Device {
    t.with_view(|v| v.device())
}

/// A contiguous host copy of `v`.
fn host<T: crate::core::dtype::Scalar>(v: &View<T>) -> Result<View<T>> {
    let h = View::contiguous(&v.sizes)?;
    if v.numel() > 0 {
        copy(&h, v)?;
    }
    Ok(h)
}

/// `dst` resized as the host result `src`, then filled from it.
fn back<T: crate::core::dtype::Scalar>(dst: &Tensor<T>, src: &Tensor<T>) -> Result<()> {
    let s = src.view();
    let o = resize_out(dst, &s.sizes)?;
    if s.numel() > 0 { copy(&o, &s) } else { Ok(()) }
}

/// `lapack::btrifact` on device operands (all on one device), through the host.
pub fn btrifact<T: Real>(
    ra: &Tensor<T>,
    rpivots: &Tensor<i32>,
    rinfo: Option<&Tensor<i32>>,
    pivot: bool,
    a: &View<T>,
) -> Result<()> {
    let mut devices = vec![device(ra), device(rpivots), a.device()];
    devices.extend(rinfo.map(device));
    if Backend::of(&devices)? == Backend::Host {
        return lapack::btrifact(ra, rpivots, rinfo, pivot, a);
    }
    let ha = host(a)?;
    let (hra, hpiv, hinfo) = (Tensor::new(View::empty()), Tensor::new(View::empty()), Tensor::new(View::empty()));
    lapack::btrifact(&hra, &hpiv, rinfo.map(|_| &*hinfo), pivot, &ha)?;
    back(ra, &hra)?;
    back(rpivots, &hpiv)?;
    match rinfo {
        Some(i) => back(i, &hinfo),
        None => Ok(()),
    }
}

/// `lapack::btrisolve` on device operands (all on one device), through the host.
pub fn btrisolve<T: Real>(rb: &Tensor<T>, b: &View<T>, atf: &View<T>, pivots: &View<i32>) -> Result<()> {
    if Backend::of(&[device(rb), b.device(), atf.device(), pivots.device()])? == Backend::Host {
        return lapack::btrisolve(rb, b, atf, pivots);
    }
    let hrb = Tensor::new(View::empty());
    lapack::btrisolve(&hrb, &host(b)?, &host(atf)?, &host(pivots)?)?;
    back(rb, &hrb)
}
