//! The device half of the LAPACK routines: THC's `THCTensorMathMagma.h` (cutorch ran it on
//! MAGMA) for device tensors, staged through the host LAPACK (the parent module) as
//! `lu::btrifact` is: every output gets a host *shadow*
//! with its geometry and contents, the host function runs on the shadows and on host copies of
//! the inputs (an in-place input is its output's shadow), and only then are the shadows' final
//! geometries and elements landed on the device outputs. So the host's rules hold unchanged:
//! its checks and errors, its output layouts (column-major outputs, kept layouts, in place
//! through the output's strides), and a failing call leaves every device output untouched.
//!
//! Where cutorch's MAGMA code differed from TH's host function, cutorch's rule is kept:
//! `gesv`'s `b` must be 2-D (TH also took a 1-D `b`), and `gels` needs `m >= n` (TH also solved
//! underdetermined systems).

use crate::core::allocator::Device;
use crate::core::dtype::Scalar;
use crate::core::error::{Error, Result};
use crate::core::tensor::{Tensor, View};
use crate::exec::backend::Backend;
use crate::linalg::lapack::{self, Input, Real};
use crate::ops::copy::copy;

pub mod lu;

/// How the host function sees the operands: as they are (host operands) or staged.
#[derive(Clone, Copy)]
pub struct Stage {
    staged: bool,
}

impl Stage {
    /// The input `v` as the host function reads it (a contiguous host copy when staged).
    pub fn view<T: Scalar>(self, v: &View<T>) -> Result<View<T>> {
        if !self.staged {
            return Ok(v.clone());
        }
        let h = View::contiguous(&v.sizes)?;
        if v.numel() > 0 {
            copy(&h, v)?;
        }
        Ok(h)
    }

    /// An input that may be the output `out` (in place: then `out` is the shadow to use).
    pub fn input<T: Scalar>(self, x: &Input<T>, out: &Tensor<T>) -> Result<Input<T>> {
        if x.in_place {
            return Ok(Input { view: out.view(), in_place: true });
        }
        Ok(Input { view: self.view(&x.view)?, in_place: false })
    }
}

fn device<T: Scalar>(t: &Tensor<T>) -> Device {
    t.with_view(|v| v.device())
}

/// A host tensor with `d`'s sizes and strides (offset 0) and its elements.
fn shadow<T: Scalar>(d: &Tensor<T>) -> Result<crate::core::refcount::Rc<Tensor<T>>> {
    let v = d.view();
    let h = View::on_storage(None, 0, &v.sizes, Some(&v.strides))?;
    if v.numel() > 0 {
        copy(&h, &v)?;
    }
    Ok(Tensor::new(h))
}

/// Runs `f` (a host LAPACK function over the outputs `outs`, reading its inputs through the
/// `Stage`) on device operands: `outs` and `ins` must share one device (all on the host: `f`
/// runs on them directly). See the module docs for the staging and its guarantee.
pub fn staged<T: Scalar, const N: usize>(
    outs: [&Tensor<T>; N],
    ins: &[&View<T>],
    f: impl FnOnce([&Tensor<T>; N], Stage) -> Result<()>,
) -> Result<()> {
    let mut devices: Vec<Device> = outs.iter().map(|t| device(t)).collect();
    devices.extend(ins.iter().map(|v| v.device()));
    if Backend::of(&devices)? == Backend::Host {
        return f(outs, Stage { staged: false });
    }
    let shadows = outs.iter().map(|d| shadow(d)).collect::<Result<Vec<_>>>()?;
    let refs: [&Tensor<T>; N] = std::array::from_fn(|i| &*shadows[i]);
    f(refs, Stage { staged: true })?;
    // The host call succeeded: give each output the shadow's final geometry on its own
    // storage and offset (growing it as the host grew the shadow's), then the elements.
    let mut landed = Vec::with_capacity(N);
    for (d, s) in outs.iter().zip(&shadows) {
        let (dv, hv) = (d.view(), s.view());
        let nv = if dv.sizes == hv.sizes && dv.strides == hv.strides && hv.offset == 0 {
            dv.clone()
        } else {
            View::on_storage(dv.storage.clone(), (dv.offset + hv.offset) as isize, &hv.sizes, Some(&hv.strides))?
        };
        landed.push((nv, hv));
    }
    for (nv, hv) in &landed {
        if hv.numel() > 0 {
            copy(nv, hv)?;
        }
    }
    for (d, (nv, _)) in outs.iter().zip(landed) {
        d.set_view(nv);
    }
    Ok(())
}

/// `gesv`: `b` must be 2-D (cutorch).
pub fn gesv<T: Real>(rb: &Tensor<T>, ra: &Tensor<T>, b: &Input<T>, a: &Input<T>) -> Result<()> {
    if b.ndim() != 2 {
        return Err(Error::size(format!("b should be 2 dimensional, but has {}", b.ndim())).at_arg(2));
    }
    staged([rb, ra], &[b, a], |[hb, ha], s| lapack::gesv(hb, ha, &s.input(b, hb)?, &s.input(a, ha)?))
}

/// `gels`: `b` 2-D and `A` with `m >= n` (cutorch).
pub fn gels<T: Real>(rb: &Tensor<T>, ra: &Tensor<T>, b: &Input<T>, a: &Input<T>) -> Result<()> {
    if b.ndim() != 2 {
        return Err(Error::size(format!("b should be 2 dimensional, but has {}", b.ndim())).at_arg(1));
    }
    if a.ndim() == 2 && a.sizes[0] < a.sizes[1] {
        return Err(Error::size(format!("A should have m >= n, got {} x {}", a.sizes[0], a.sizes[1])).at_arg(2));
    }
    staged([rb, ra], &[b, a], |[hb, ha], s| lapack::gels(hb, ha, &s.input(b, hb)?, &s.input(a, ha)?))
}

pub fn syev<T: Real>(re: &Tensor<T>, rv: &Tensor<T>, a: &Input<T>, jobz: Option<u8>, uplo: Option<u8>) -> Result<()> {
    staged([re, rv], &[a], |[he, hv], s| lapack::syev(he, hv, &s.input(a, hv)?, jobz, uplo))
}

pub fn geev<T: Real>(re: &Tensor<T>, rv: &Tensor<T>, a: &View<T>, jobvr: Option<u8>) -> Result<()> {
    staged([re, rv], &[a], |[he, hv], s| lapack::geev(he, hv, &s.view(a)?, jobvr))
}

/// `gesvd` (`ra == None`) and `gesvd2`; `jobu_arg` names `jobu` in errors.
pub fn gesvd<T: Real>(
    [ru, rs, rv]: [&Tensor<T>; 3],
    ra: Option<&Tensor<T>>,
    a: &Input<T>,
    jobu: Option<u8>,
    jobu_arg: u32,
) -> Result<()> {
    match ra {
        None => staged([ru, rs, rv], &[a], |[hu, hs, hv], s| {
            lapack::gesvd(hu, hs, hv, None, &Input { view: s.view(a)?, in_place: false }, jobu, jobu_arg)
        }),
        Some(ra) => staged([ru, rs, rv, ra], &[a], |[hu, hs, hv, ha], s| {
            lapack::gesvd(hu, hs, hv, Some(ha), &s.input(a, ha)?, jobu, jobu_arg)
        }),
    }
}

pub fn getri<T: Real>(ra: &Tensor<T>, a: &Input<T>) -> Result<()> {
    staged([ra], &[a], |[h], s| lapack::getri(h, &s.input(a, h)?))
}

pub fn potrf<T: Real>(ra: &Tensor<T>, a: &Input<T>, uplo: Option<u8>) -> Result<()> {
    staged([ra], &[a], |[h], s| lapack::potrf(h, &s.input(a, h)?, uplo))
}

pub fn potri<T: Real>(ra: &Tensor<T>, a: &Input<T>, uplo: Option<u8>) -> Result<()> {
    staged([ra], &[a], |[h], s| lapack::potri(h, &s.input(a, h)?, uplo))
}

pub fn potrs<T: Real>(rb: &Tensor<T>, b: &Input<T>, a: &View<T>, uplo: Option<u8>) -> Result<()> {
    staged([rb], &[b, a], |[h], s| lapack::potrs(h, &s.input(b, h)?, &s.view(a)?, uplo))
}

pub fn qr<T: Real>(rq: &Tensor<T>, rr: &Tensor<T>, a: &View<T>) -> Result<()> {
    staged([rq, rr], &[a], |[hq, hr], s| lapack::qr(hq, hr, &s.view(a)?))
}
