//! The device half of the convolutions: THC's 2-D convolutions (`THCTensorConv.h`) on device
//! tensors, built on the products: the input is unfolded on the device (`kernels/conv.cuh`'s
//! `th_convUnfold`, im2col: one column per output position, one row per (input plane, kernel
//! tap); launched through `cuda::conv`) and multiplied by the kernel matrix with one strided
//! batched GEMM (`cuda::blas::bmm`, cuBLAS). Float (THC's only type), Double and Half (the same
//! code: bmm and the kernels exist for all three).
//!
//! Semantics are TH's (the host half, `ops::conv`), with THC's signatures (cutorch's
//! `THCTensorConv.cu`):
//! - `type` is two characters, `'v'`/`'f'` (valid / full) then `'x'`/`'c'` (cross-correlation /
//!   convolution, the flipped kernel); anything else is `TH_ERR_INVALID_ARG`.
//! - Full mode with a stride is TH's (the strided scatter, the transpose of a strided valid
//!   correlation: the input dilated by the stride and zero-padded by kernel-1). cutorch padded
//!   the undilated input and strided the output instead; the two agree at stride 1.
//! - The output is resized; it is zeroed instead of scaled when it was empty, its element count
//!   changed, or `beta == 0` (so NaN in an old output is ignored: cuBLAS does not read C when
//!   beta is 0). `conv2Dmv`/`conv2Dmm` have no alpha (1).
//! - The checks and their error classes are the host's (`Geom::new`): sizes and strides, input
//!   smaller than the kernel in valid mode, plane and batch counts; every check runs before
//!   anything is written, so a failed call leaves the output untouched.
//! - `conv2Dmap` (cutorch's, not TH's map): `output[o] += sum_f xcorr(input[table[o*fanin+f][0]-1],
//!   kernel[table[o*fanin+f][1]-1])`, valid mode, `stride_x` along columns and `stride_y` along
//!   rows; the table is `(nOutputPlane*fanin) x 2` with 1-based integral values (checked on a host
//!   copy: `TH_ERR_INDEX`). As in THC the output accumulates (callers fill it, e.g. with a bias);
//!   it is zeroed first when its element count changes. It runs as a direct kernel
//!   (`th_convMap`, one thread per output element): each output plane gathers its own planes,
//!   which as a GEMM would be one 1-row product per plane over duplicated unfolded planes.

use super::{Geom, Kind};
use crate::core::dtype::Scalar;
use crate::core::error::{Error, Result};
use crate::core::tensor::{Tensor, View};
use crate::cuda::blas::{as_batch, bmm};
use crate::cuda::conv::{THCConv, has, launch};
use crate::cuda::copy::empty_like;
use crate::cuda::launch::device_base;
use crate::cuda::ops::copy_kernel;
use crate::cuda::runtime::{self, Device as Dev};
use crate::exec::backend::Backend;
use crate::exec::overlap::self_overlapping;
use crate::linalg::gemm::Gemm;
use crate::ops::resize_out;

mod map;
pub use map::map;

/// A `type` string: (full, convolution).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Type {
    pub full: bool,
    pub conv: bool,
}

/// Parses THC's `type` (its first two bytes; `None`: NULL), argument `arg` of the C call.
pub fn parse_type(t: Option<[u8; 2]>, arg: u32) -> Result<Type> {
    let [a, b] = t.ok_or_else(|| Error::null(arg, "type"))?;
    let bad = |what: &str, c: u8| {
        Error::invalid(format!("type of convolution can be {what}, got '{}'", (c as char).escape_default())).at_arg(arg)
    };
    let full = match a {
        b'v' => false,
        b'f' => true,
        _ => return Err(bad("'v' or 'f'", a)),
    };
    let conv = match b {
        b'x' => false,
        b'c' => true,
        _ => return Err(bad("'x' or 'c' after 'v'/'f'", b)),
    };
    Ok(Type { full, conv })
}

fn expect_dims<T: Scalar>(v: &View<T>, n: usize, what: &str, arg: u32) -> Result<()> {
    if v.ndim() != n {
        return Err(Error::size(format!("{what}: {n}D Tensor expected, got {}D", v.ndim())).at_arg(arg));
    }
    Ok(())
}

/// The device of a call whose operands are `r` and `views` (all on one device, with kernels
/// for `T`).
fn device_of<T: Scalar>(r: &Tensor<T>, views: &[&View<T>], name: &str) -> Result<&'static Dev> {
    let mut devices = vec![r.with_view(|v| v.device())];
    devices.extend(views.iter().map(|v| v.device()));
    match Backend::of(&devices)? {
        Backend::Cuda(i) if has(T::DTYPE) => runtime::device(i),
        Backend::Cuda(_) => Err(Error::dtype(format!("{name} is not defined for {}", T::DTYPE))),
        Backend::Host => Err(Error::invalid(format!("{name}: THC functions take device tensors"))),
    }
}

/// `v` with a leading dimension of size 1.
fn lead1<T: Scalar>(v: &View<T>) -> View<T> {
    let mut w = v.clone();
    w.sizes.insert(0, 1);
    w.strides.insert(0, 0);
    w
}

/// `v` as a contiguous device tensor of its own (a copy when it is not contiguous, or when
/// `copy`: it shares the output's storage, which the call writes).
fn detached<T: Scalar>(dev: &Dev, v: &View<T>, copy: bool) -> Result<View<T>> {
    if v.is_contiguous() && !copy {
        return Ok(v.clone());
    }
    let t = empty_like::<T>(dev, &v.sizes)?;
    copy_kernel(dev, &t, v)?;
    Ok(t)
}

fn shares<T: Scalar>(r: &Tensor<T>, v: &View<T>) -> bool {
    r.with_view(|o| o.same_storage(v))
}

/// One stride for a dimension pair (sizes `na`, `nb`, strides `sa`, `sb`) walked row-major.
fn merged(na: i64, sa: i64, nb: i64, sb: i64) -> Option<i64> {
    if nb == 1 {
        Some(sa)
    } else if na == 1 || sa == nb * sb {
        Some(sb)
    } else {
        None
    }
}

/// Refuses an output that keeps its shape but has overlapping elements (threads would race).
fn check_out<T: Scalar>(r: &Tensor<T>, shape: &[i64], name: &str) -> Result<()> {
    r.with_view(|v| {
        if v.sizes == shape && self_overlapping(&v.sizes, &v.strides) {
            return Err(Error::invalid(format!(
                "{name}: the output has overlapping elements (an expanded or stride-0 view), which device \
                 threads cannot write deterministically; write into a contiguous tensor"
            ))
            .at_arg(1));
        }
        Ok(())
    })
}

/// Resizes `r` to `shape` and runs `compute(out, beta)` on it, `beta` 0 where TH zeroes the
/// output (it was empty, its element count changed, or beta is 0). `view` makes the product's
/// 3-D output view, or None when the output's strides give none (then a contiguous temporary
/// is computed and copied back).
fn into_out<T: Gemm>(
    dev: &Dev,
    r: &Tensor<T>,
    shape: &[i64],
    beta: T,
    view: impl Fn(&View<T>) -> Option<View<T>>,
    compute: impl FnOnce(&View<T>, T) -> Result<()>,
) -> Result<()> {
    let nelem = r.with_view(|v| v.numel());
    let out = resize_out(r, shape)?;
    let zero = nelem == 0 || beta.is_zero() || nelem != out.numel();
    let beta = if zero { T::zero() } else { beta };
    if let Some(v) = view(&out) {
        return compute(&v, beta);
    }
    let tmp = empty_like::<T>(dev, shape)?;
    if !zero {
        copy_kernel(dev, &tmp, &out)?;
    }
    let v = view(&tmp).ok_or_else(|| Error::internal("conv: no product view of a contiguous output"))?;
    compute(&v, beta)?;
    copy_kernel(dev, &out, &tmp)
}

/// The product of `xs`, or a size error when it overflows.
fn prod(xs: &[i64]) -> Result<i64> {
    xs.iter()
        .try_fold(1i64, |a, &b| a.checked_mul(b))
        .ok_or_else(|| Error::size(format!("convolution sizes {xs:?} overflow int64_t")))
}

/// Largest element offset of `sizes`/`strides` (an i32 index suffices below 2^31).
fn reach(sizes: &[i64], strides: &[i64]) -> i64 {
    sizes.iter().zip(strides).map(|(&n, &s)| (n - 1).max(0).saturating_mul(s.abs())).fold(0i64, i64::saturating_add)
}

/// The columns of `t` (`[g0, g1, rows, cols]`): a new contiguous tensor of `g0*g1*kh*kw*oh*ow`
/// elements, group (a, b) at `a*os[0] + b*os[1]` (see `th_conv_unfold`).
#[allow(clippy::too_many_arguments)]
fn unfold<T: Scalar>(
    dev: &Dev,
    t: &View<T>,
    k: [i64; 2],
    o: [i64; 2],
    os: [i64; 2],
    step: [i64; 2],
    dil: [i64; 2],
    (full, flip): (bool, bool),
) -> Result<View<T>> {
    let n = prod(&[t.sizes[0], t.sizes[1], k[0], k[1], o[0], o[1]])?;
    let cols = empty_like::<T>(dev, &[n])?;
    let p = THCConv {
        n,
        out: device_base(&cols)?,
        inp: device_base(t)?,
        g: [t.sizes[0], t.sizes[1]],
        k,
        o,
        i: [t.sizes[2], t.sizes[3]],
        is: [t.strides[0], t.strides[1], t.strides[2], t.strides[3]],
        os: [os[0], os[1], 0],
        step,
        dil,
        full: full as i32,
        flip: flip as i32,
        ..THCConv::default()
    };
    let narrow = reach(&t.sizes, &t.strides) <= i32::MAX as i64 && n <= i32::MAX as i64;
    // SAFETY: `t` and `cols` were checked against their storages (device_base) on this device;
    // the kernel reads `t` only inside its sizes (checked per element) and writes the n columns.
    unsafe { launch::<T>(dev, "convUnfold", p, narrow) }?;
    Ok(cols)
}

/// conv2Dmv (`batch == false`: input `C x H x W`, output `O x oh x ow`) and conv2Dmm (input
/// `B x C x H x W`, output `B x O x oh x ow`); kernel `O x C x kh x kw`.
#[allow(clippy::too_many_arguments)]
pub fn mm<T: Gemm>(
    r: &Tensor<T>,
    beta: T,
    t: &View<T>,
    k: &View<T>,
    srow: i64,
    scol: i64,
    ty: Type,
    batch: bool,
) -> Result<()> {
    let name = if batch { "conv2Dmm" } else { "conv2Dmv" };
    expect_dims(t, 3 + batch as usize, "input", 3)?;
    expect_dims(k, 4, "kernel", 4)?;
    let dev = device_of(r, &[t, k], name)?;
    let t4 = if batch { t.clone() } else { lead1(t) };
    let [b, c, h, w] = [t4.sizes[0], t4.sizes[1], t4.sizes[2], t4.sizes[3]];
    let [no, kc, kh, kw] = [k.sizes[0], k.sizes[1], k.sizes[2], k.sizes[3]];
    let kind = if ty.full { Kind::Full } else { Kind::Valid };
    let (_, o) = Geom::new([1, h, w], [1, kh, kw], [1, srow, scol], kind, name, [0, 5, 6])?;
    let (oh, ow) = (o[1] as i64, o[2] as i64);
    if kc != c {
        return Err(
            Error::size(format!("{name}: invalid number of input planes (kernel has {kc}, input {c})")).at_arg(4)
        );
    }
    let shape = if batch { vec![b, no, oh, ow] } else { vec![no, oh, ow] };
    check_out(r, &shape, name)?;
    let (taps, p) = (prod(&[kh, kw])?, prod(&[oh, ow])?);
    prod(&[c, taps, p])?;
    let cols = unfold(
        dev,
        &t4,
        [kh, kw],
        [oh, ow],
        [c * taps * p, taps * p],
        [srow, scol],
        [1, 1],
        (ty.full, ty.conv != ty.full),
    )?;
    let kmat = detached(dev, k, shares(r, k))?;
    let a = as_batch(&kmat, [1, no, c * taps], [0, c * taps, 1]);
    let bm = as_batch(&cols, [b, c * taps, p], [c * taps * p, p, 1]);
    let view = |v: &View<T>| {
        let d = v.ndim();
        let m = merged(v.sizes[d - 2], v.strides[d - 2], v.sizes[d - 1], v.strides[d - 1])?;
        let bs = if batch { v.strides[0] } else { 0 };
        Some(as_batch(v, [b, no, p], [bs, v.strides[d - 3], m]))
    };
    into_out(dev, r, &shape, beta, view, |out, beta| bmm(T::one(), &a, &bm, beta, out))
}

/// conv2DRevger (`batch == false`: input `C x H x W`, kernel `K x kh x kw`) and conv2DRevgerm
/// (input `B x C x H x W`, kernel `B x K x kh x kw`, summed over the batch); output
/// `K x C x (H-(kh-1)*srow) x (W-(kw-1)*scol)`.
#[allow(clippy::too_many_arguments)]
pub fn revger<T: Gemm>(
    r: &Tensor<T>,
    beta: T,
    alpha: T,
    t: &View<T>,
    k: &View<T>,
    srow: i64,
    scol: i64,
    batch: bool,
) -> Result<()> {
    let name = if batch { "conv2DRevgerm" } else { "conv2DRevger" };
    let nd = 3 + batch as usize;
    expect_dims(t, nd, "input", 3)?;
    expect_dims(k, nd, "kernel", 4)?;
    let dev = device_of(r, &[t, k], name)?;
    let (t4, k4) = if batch { (t.clone(), k.clone()) } else { (lead1(t), lead1(k)) };
    let [b, c, h, w] = [t4.sizes[0], t4.sizes[1], t4.sizes[2], t4.sizes[3]];
    let [kb, nk, kh, kw] = [k4.sizes[0], k4.sizes[1], k4.sizes[2], k4.sizes[3]];
    let (_, o) = Geom::new([1, h, w], [1, kh, kw], [1, srow, scol], Kind::Rev, name, [0, 5, 6])?;
    let (oh, ow) = (o[1] as i64, o[2] as i64);
    if kb != b {
        return Err(
            Error::size(format!("{name}: Input batch and kernel batch is not same size ({b} and {kb})")).at_arg(4)
        );
    }
    let shape = [nk, c, oh, ow];
    check_out(r, &shape, name)?;
    let (taps, p) = (prod(&[kh, kw])?, prod(&[oh, ow])?);
    prod(&[b, taps, p])?;
    // columns [c][b][tap][position]: one (b*taps) x positions matrix per input plane
    let cols = unfold(dev, &t4, [kh, kw], [oh, ow], [taps * p, b * taps * p], [1, 1], [srow, scol], (false, false))?;
    // the kernel as nk x (b*taps): [b, nk, kh, kw] permuted to [nk, b, kh, kw], contiguous
    let perm = View {
        storage: k4.storage.clone(),
        offset: k4.offset,
        sizes: vec![nk, b, kh, kw],
        strides: vec![k4.strides[1], k4.strides[0], k4.strides[2], k4.strides[3]],
    };
    let kmat = detached(dev, &perm, shares(r, k))?;
    let a = as_batch(&kmat, [1, nk, b * taps], [0, b * taps, 1]);
    let bm = as_batch(&cols, [c, b * taps, p], [b * taps * p, p, 1]);
    let view = |v: &View<T>| {
        let m = merged(oh, v.strides[2], ow, v.strides[3])?;
        Some(as_batch(v, [c, nk, p], [v.strides[1], v.strides[0], m]))
    };
    into_out(dev, r, &shape, beta, view, |out, beta| bmm(alpha, &a, &bm, beta, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_and_merged_strides() {
        assert_eq!(parse_type(Some(*b"vx"), 7).unwrap(), Type { full: false, conv: false });
        assert_eq!(parse_type(Some(*b"fc"), 7).unwrap(), Type { full: true, conv: true });
        for bad in [*b"Vx", *b"vX", *b"v\0", *b"xv"] {
            let e = parse_type(Some(bad), 7).unwrap_err();
            assert_eq!(e.code, crate::core::error::Code::TH_ERR_INVALID_ARG);
        }
        assert_eq!(parse_type(None, 7).unwrap_err().code, crate::core::error::Code::TH_ERR_NULL_ARG);
        assert_eq!(
            (merged(3, 4, 4, 1), merged(3, 1, 4, 3), merged(1, 9, 4, 2), merged(3, 7, 1, 5)),
            (Some(1), None, Some(2), Some(7))
        );
    }
}
