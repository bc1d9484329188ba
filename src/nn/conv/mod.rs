//! Convolutions by unfolding and GEMM: SpatialConvolutionMM, SpatialDilatedConvolution,
//! SpatialFullConvolution, SpatialFullDilatedConvolution, VolumetricConvolution,
//! VolumetricConvolutionMM, VolumetricDilatedConvolution, VolumetricFullConvolution,
//! VolumetricFullDilatedConvolution (one N-d core: a 2-D image is a 3-D one of depth 1),
//! SpatialDepthWiseConvolution (direct per-channel loops) and `unfolded_copy` / `unfolded_acc`.
//!
//! A convolution (`Module::transposed == false`) unfolds its input into columns and multiplies
//! them by the weight (`nOutputPlane x nInputPlane*taps`); its input gradient multiplies the
//! transposed weight by the output gradient and folds the columns back; its weight gradient
//! multiplies the output gradient by the input's columns. A transposed ("full") convolution
//! swaps the roles: its forward is a convolution's input gradient and its input gradient a
//! convolution's forward (weight `nInputPlane x nOutputPlane x taps`). Work and buffers: see
//! [`engine`].
//!
//! Buffers (`finput`, `fgradInput`, `columns`, `gradColumns`): the one the C wrapper names is
//! used as scratch (resized to `pieces x len`, its values unspecified afterwards, left alone
//! when no scratch is needed); NULL or a buffer sharing storage with an operand makes th use a
//! private one. Unlike torch7, `accGradParameters` never reads what `updateOutput` left in
//! `finput`/`columns`: it unfolds the input again. The `ones` buffers are not used.

pub mod depthwise;
pub(crate) mod depthwise_device;
pub(crate) mod device;
pub mod engine;
mod implicit;
pub mod unfold;

use super::buf::{self, Grads, Out};
use super::check;
use super::{NnElem, NnReal, native_tensor, native_view};
use crate::core::dtype::Scalar;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::exec::backend::Backend;
use crate::linalg::gemm::Gemm;
use engine::Scratch;
use std::ffi::c_int;
use unfold::Geom;

/// The element types of the GEMM convolutions on both engines: f32 and f64 (THNN, Cuda,
/// CudaDouble) and Half (CudaHalf), with a GEMM of their own and of their compute type.
pub trait ConvElem: NnElem<R: NnReal> + Gemm {}

impl<T: NnElem<R: NnReal> + Gemm> ConvElem for T {}

/// What distinguishes the GEMM convolution modules.
pub struct Module {
    /// 2 (Spatial: input C x H x W) or 3 (Volumetric: C x T x H x W).
    pub nd: usize,
    /// A transposed ("full") convolution.
    pub transposed: bool,
    /// The kernel sizes are among the int arguments (else they are the weight's last sizes).
    pub kernel_args: bool,
    /// Dilation arguments follow the padding.
    pub dilation: bool,
    /// Output adjustment (`adj`) arguments come last.
    pub adj: bool,
    /// A 2-D weight (`nOutputPlane x nInputPlane*taps`) is accepted too.
    pub weight_2d: bool,
    /// Names of the padding arguments, in the C order.
    pub pad: &'static [&'static str],
}

/// The geometry arguments, per dimension (t, h, w): kernel (None: from the weight), stride,
/// padding, dilation, output adjustment.
struct Params {
    k: Option<[usize; 3]>,
    s: [usize; 3],
    p: [usize; 3],
    d: [usize; 3],
    a: [usize; 3],
}

/// The C order of a group of `nd` values (W, H or T, W, H) as (t, h, w) indices.
fn internal(nd: usize, c: &[c_int], fill: usize) -> [usize; 3] {
    if nd == 2 { [fill, c[1] as usize, c[0] as usize] } else { [c[0] as usize, c[2] as usize, c[1] as usize] }
}

/// Checks the int arguments (`ints`, in C order, the first being argument `first`).
fn params(m: &Module, ints: &[c_int], first: u32) -> Result<Params> {
    let nd = m.nd;
    let (kn, sn, dn, an): (&[&str], &[&str], &[&str], &[&str]) = if nd == 2 {
        (&["kW", "kH"], &["dW", "dH"], &["dilationW", "dilationH"], &["adjW", "adjH"])
    } else {
        (&["kT", "kW", "kH"], &["dT", "dW", "dH"], &["dilationT", "dilationW", "dilationH"], &["aT", "aW", "aH"])
    };
    let group = |at: usize, names: &[&str], f: fn(i64, u32, &str) -> Result<()>| -> Result<[c_int; 3]> {
        let mut g = [0; 3];
        for (j, name) in names.iter().enumerate() {
            let v = ints[at + j];
            f(v as i64, first + (at + j) as u32, name)?;
            g[j] = v;
        }
        Ok(g)
    };
    let mut at = 0usize;
    let mut next = |present: bool| {
        let here = at;
        if present {
            at += nd;
        }
        here
    };
    let (ka, sa, pa) = (next(m.kernel_args), next(true), next(true));
    let (da, adj_at) = (next(m.dilation), next(m.adj));
    let k = if m.kernel_args { Some(internal(nd, &group(ka, kn, check::positive)?, 1)) } else { None };
    let s = internal(nd, &group(sa, sn, check::positive)?, 1);
    let p = internal(nd, &group(pa, m.pad, check::non_negative)?, 0);
    let d = if m.dilation { internal(nd, &group(da, dn, check::positive)?, 1) } else { [1; 3] };
    let a = if m.adj { internal(nd, &group(adj_at, an, check::non_negative)?, 0) } else { [0; 3] };
    for j in 0..3 {
        if a[j] >= s[j] && a[j] >= d[j] {
            // the C position of internal dimension j
            let c = if nd == 2 { [0, 1, 0][j] } else { [0, 2, 1][j] };
            return Err(check::invalid(
                first + (adj_at + c) as u32,
                an[c],
                format_args!(
                    "output padding must be smaller than either stride or dilation, got {} (stride {}, dilation {})",
                    a[j], s[j], d[j]
                ),
            ));
        }
    }
    Ok(Params { k, s, p, d, a })
}

/// The shape facts of a call.
struct Plan {
    batched: bool,
    n: usize,
    cin: usize,
    cout: usize,
    nd: usize,
    isz: [usize; 3],
    osz: [usize; 3],
    /// The unfolding: the image is the input (convolution) or the output (transposed).
    g: Geom,
}

impl Plan {
    fn shape(&self, c: usize, sz: &[usize; 3]) -> Vec<i64> {
        let mut v = Vec::with_capacity(5);
        if self.batched {
            v.push(self.n as i64);
        }
        v.push(c as i64);
        v.extend(sz[3 - self.nd..].iter().map(|&x| x as i64));
        v
    }
    fn in_shape(&self) -> Vec<i64> {
        self.shape(self.cin, &self.isz)
    }
    fn out_shape(&self) -> Vec<i64> {
        self.shape(self.cout, &self.osz)
    }
    /// The weight as a matrix: its rows (nOutputPlane, or nInputPlane when transposed).
    fn m(&self) -> usize {
        if self.g.c == self.cin { self.cout } else { self.cin }
    }
}

/// Checks `input` (argument 2), the weight (`w`: the weight or gradWeight, argument `w_arg`) and
/// the bias, and computes the output size.
fn plan<T: Scalar>(
    m: &Module,
    pr: &Params,
    input: &View<T>,
    w: &View<T>,
    w_arg: u32,
    w_name: &str,
    bias: Option<(&View<T>, u32)>,
) -> Result<Plan> {
    let nd = m.nd;
    let full = nd + 2;
    let allowed: &[usize] = if m.weight_2d { &[2, full] } else { &[full] };
    check::dims(w, w_arg, w_name, allowed)?;
    if w.sizes.iter().any(|&s| s < 1) {
        return Err(check::size_err(w_arg, w_name, format_args!("has an empty dimension: {}", w.desc())));
    }
    let ws: Vec<usize> = w.sizes.iter().map(|&s| s as usize).collect();
    let (p0, p1, k) = if ws.len() == 2 {
        let k = pr.k.unwrap_or([1; 3]);
        let taps = k.iter().try_fold(1usize, |a, &x| a.checked_mul(x)).unwrap_or(usize::MAX);
        if taps > ws[1] || !ws[1].is_multiple_of(taps) {
            return Err(check::size_err(
                w_arg,
                w_name,
                format_args!("a 2D weight needs a multiple of the kernel's {taps} taps per row, got {}", w.desc()),
            ));
        }
        (ws[0], ws[1] / taps, k)
    } else {
        let wk = if nd == 2 { [1, ws[2], ws[3]] } else { [ws[2], ws[3], ws[4]] };
        if let Some(k) = pr.k
            && k != wk
        {
            let want: Vec<String> = k[3 - nd..].iter().map(|x| x.to_string()).collect();
            return Err(check::size_err(
                w_arg,
                w_name,
                format_args!("expected a kernel of {} (from the arguments), got {}", want.join("x"), w.desc()),
            ));
        }
        (ws[0], ws[1], wk)
    };
    let (cin, cout) = if m.transposed { (p0, p1) } else { (p1, p0) };
    if let Some((b, arg)) = bias {
        check::numel(b, arg, "bias", cout)?;
    }
    check::dims(input, 2, "input", &[nd + 1, nd + 2])?;
    let batched = input.ndim() == nd + 2;
    let c0 = batched as usize;
    if input.sizes[c0] as usize != cin || input.sizes[c0 + 1..].iter().any(|&s| s < 1) {
        return Err(check::size_err(
            2,
            "input",
            format_args!(
                "expected {cin} input planes (from {w_name} {}) and non-empty sizes, got {}",
                w.desc(),
                input.desc()
            ),
        ));
    }
    let sp: Vec<usize> = input.sizes[c0 + 1..].iter().map(|&s| s as usize).collect();
    let isz = if nd == 2 { [1, sp[0], sp[1]] } else { [sp[0], sp[1], sp[2]] };
    let mut osz = [1usize; 3];
    for j in 0..3 {
        let ke = (pr.d[j] * (k[j] - 1) + 1) as i64;
        let (i, s, p) = (isz[j] as i64, pr.s[j] as i64, pr.p[j] as i64);
        let o = if m.transposed {
            (i - 1) * s - 2 * p + ke + pr.a[j] as i64
        } else if i + 2 * p < ke {
            0
        } else {
            (i + 2 * p - ke) / s + 1
        };
        if o < 1 {
            return Err(check::size_err(
                2,
                "input",
                format_args!(
                    "input {} is too small for the kernel (dilated size {ke}, stride {s}, padding {p}): the output size would be below 1",
                    input.desc()
                ),
            ));
        }
        osz[j] = o as usize;
    }
    let n = if batched { input.sizes[0] as usize } else { 1 };
    let (c, i, o) = if m.transposed { (cout, osz, isz) } else { (cin, isz, osz) };
    let p = pr.p.map(|x| x as isize);
    let g = Geom { c, i, o, k, s: pr.s, p, d: pr.d };
    Ok(Plan { batched, n, cin, cout, nd, isz, osz, g })
}

/// Whether the operands (all on one engine, else the "same device" error) are on a device.
fn on_device(devices: &[crate::core::allocator::Device]) -> Result<bool> {
    Ok(matches!(Backend::of(devices)?, Backend::Cuda(_)))
}

/// `<Module>_updateOutput(state, input, output, weight, bias, buffers..., ints...)`: `ints` are
/// the geometry arguments in C order, the first being argument `first`; `scratch` the buffer
/// used as working memory (on the host; not used on the device).
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn update_output<T: ConvElem>(
    m: &Module,
    input: &View<T>,
    output: &Tensor<T>,
    weight: &View<T>,
    bias: Option<&View<T>>,
    scratch: Option<&Tensor<T>>,
    ints: &[c_int],
    first: u32,
) -> Result<()> {
    let pr = params(m, ints, first)?;
    let pl = plan(m, &pr, input, weight, 4, "weight", bias.map(|b| (b, 5)))?;
    let mut devs = vec![input.device(), output.with_view(|v| v.device()), weight.device()];
    devs.extend(bias.map(|b| b.device()));
    if on_device(&devs)? {
        return device::update_output(m.transposed, &pl, input, output, weight, bias);
    }
    let bias = bias.map(native_view).transpose()?;
    let scratch = scratch.map(native_tensor).transpose()?;
    host_update_output(m, &pl, native_view(input)?, native_tensor(output)?, native_view(weight)?, bias, scratch)
}

fn host_update_output<T: NnReal>(
    m: &Module,
    pl: &Plan,
    input: &View<T>,
    output: &Tensor<T>,
    weight: &View<T>,
    bias: Option<&View<T>>,
    scratch: Option<&Tensor<T>>,
) -> Result<()> {
    let mut out = Out::new(output, &pl.out_shape())?;
    let outs = [out.view()];
    let x = buf::read(input, &outs)?;
    let w = buf::read(weight, &outs)?;
    let b = bias.map(|b| buf::read(b, &outs)).transpose()?;
    let mut avoid = vec![out.view(), input, weight];
    avoid.extend(bias);
    let mut sc = Scratch::new(scratch, engine::pieces(pl.n), engine::mm_scratch(&pl.g, pl.n), &avoid)?;
    if m.transposed {
        engine::mm_fold(&pl.g, pl.n, pl.m(), &w, &x, out.as_mut(), b.as_deref(), sc.slice())?;
    } else {
        engine::unfold_mm(&pl.g, pl.n, pl.m(), &w, &x, out.as_mut(), b.as_deref(), sc.slice())?;
    }
    out.finish()
}

/// `<Module>_updateGradInput(state, input, gradOutput, gradInput, weight, buffers..., ints...)`:
/// `gradInput` (shaped like `input`) = the gradient of the output's `gradOutput` w.r.t. the input.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn update_grad_input<T: ConvElem>(
    m: &Module,
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    weight: &View<T>,
    scratch: Option<&Tensor<T>>,
    ints: &[c_int],
    first: u32,
) -> Result<()> {
    let pr = params(m, ints, first)?;
    let pl = plan(m, &pr, input, weight, 5, "weight", None)?;
    check::shape(grad_output, 3, "gradOutput", &pl.out_shape())?;
    let devs = [input.device(), grad_output.device(), grad_input.with_view(|v| v.device()), weight.device()];
    if on_device(&devs)? {
        return device::update_grad_input(m.transposed, &pl, grad_output, grad_input, weight);
    }
    let (input, grad_output, weight) = (native_view(input)?, native_view(grad_output)?, native_view(weight)?);
    let grad_input = native_tensor(grad_input)?;
    let scratch = scratch.map(native_tensor).transpose()?;
    let mut gin = Out::new(grad_input, &pl.in_shape())?;
    let outs = [gin.view()];
    let go = buf::read(grad_output, &outs)?;
    let w = buf::read(weight, &outs)?;
    let avoid = [gin.view(), input, grad_output, weight];
    let mut sc = Scratch::new(scratch, engine::pieces(pl.n), engine::mm_scratch(&pl.g, pl.n), &avoid)?;
    if m.transposed {
        engine::unfold_mm(&pl.g, pl.n, pl.m(), &w, &go, gin.as_mut(), None, sc.slice())?;
    } else {
        engine::mm_fold(&pl.g, pl.n, pl.m(), &w, &go, gin.as_mut(), None, sc.slice())?;
    }
    gin.finish()
}

/// `<Module>_accGradParameters(state, input, gradOutput, gradWeight, gradBias, buffers...,
/// ints..., scale)`: `gradWeight += scale * dL/dweight`, `gradBias += scale * dL/dbias` (when
/// not NULL). The weight's shape is read from `gradWeight`.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn acc_grad_parameters<T: ConvElem>(
    m: &Module,
    input: &View<T>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    grad_bias: Option<&Tensor<T>>,
    scratch: Option<&Tensor<T>>,
    ints: &[c_int],
    first: u32,
    scale: f64,
) -> Result<()> {
    let pr = params(m, ints, first)?;
    let gwv = grad_weight.view();
    let pl = plan(m, &pr, input, &gwv, 4, "gradWeight", None)?;
    check::shape(grad_output, 3, "gradOutput", &pl.out_shape())?;
    let mut devs = vec![input.device(), grad_output.device(), gwv.device()];
    devs.extend(grad_bias.map(|b| b.with_view(|v| v.device())));
    if on_device(&devs)? {
        let nw = gwv.numel();
        if let Some(gb) = grad_bias {
            check::numel(&gb.view(), 5, "gradBias", pl.cout)?;
        }
        return device::acc_grad_parameters(m.transposed, &pl, input, grad_output, grad_weight, grad_bias, nw, scale);
    }
    let (input, grad_output) = (native_view(input)?, native_view(grad_output)?);
    let grad_weight = native_tensor(grad_weight)?;
    let grad_bias = grad_bias.map(native_tensor).transpose()?;
    let scratch = scratch.map(native_tensor).transpose()?;
    let mut grads = Grads::new(grad_weight, gwv.numel(), grad_bias, pl.cout, 4)?;
    let outs = grads.views();
    let x = buf::read(input, &outs)?;
    let go = buf::read(grad_output, &outs)?;
    let mut avoid = outs.clone();
    avoid.extend([input, grad_output]);
    let mut sc = Scratch::new(scratch, 1, engine::acc_scratch(&pl.g, pl.n, pl.m()), &avoid)?;
    let scale = <T::R as crate::ops::num::Num>::from_f64(scale);
    let (a, src) = if m.transposed { (&x, &go) } else { (&go, &x) };
    engine::acc(&pl.g, pl.n, pl.m(), a, src, grads.w.as_mut(), scale, sc.slice())?;
    if let Some(gb) = &mut grads.b {
        engine::bias_grad(&go, pl.n, pl.osz.iter().product(), gb.as_mut(), scale);
    }
    grads.finish()
}

/// SpatialConvolutionMM: weight `nOutputPlane x nInputPlane*kH*kW` or `nOutputPlane x
/// nInputPlane x kH x kW`; ints `kW, kH, dW, dH, padW, padH`.
pub const SPATIAL_MM: Module = Module {
    nd: 2,
    transposed: false,
    kernel_args: true,
    dilation: false,
    adj: false,
    weight_2d: true,
    pad: &["padW", "padH"],
};
/// SpatialDilatedConvolution: weight `nOutputPlane x nInputPlane x kH x kW`; ints `kW, kH, dW,
/// dH, padW, padH, dilationW, dilationH`.
pub const SPATIAL_DILATED: Module = Module {
    nd: 2,
    transposed: false,
    kernel_args: true,
    dilation: true,
    adj: false,
    weight_2d: false,
    pad: &["padW", "padH"],
};
/// SpatialFullConvolution: weight `nInputPlane x nOutputPlane x kH x kW`; ints `kW, kH, dW, dH,
/// padW, padH, adjW, adjH`.
pub const SPATIAL_FULL: Module = Module {
    nd: 2,
    transposed: true,
    kernel_args: true,
    dilation: false,
    adj: true,
    weight_2d: false,
    pad: &["padW", "padH"],
};
/// SpatialFullDilatedConvolution: as SpatialFullConvolution with `dilationW, dilationH` before
/// the adjustments.
pub const SPATIAL_FULL_DILATED: Module = Module {
    nd: 2,
    transposed: true,
    kernel_args: true,
    dilation: true,
    adj: true,
    weight_2d: false,
    pad: &["padW", "padH"],
};
/// VolumetricConvolution: weight `nOutputPlane x nInputPlane x kT x kH x kW` (the kernel's
/// size); ints `dT, dW, dH, pT, pW, pH`.
pub const VOLUMETRIC: Module = Module {
    nd: 3,
    transposed: false,
    kernel_args: false,
    dilation: false,
    adj: false,
    weight_2d: false,
    pad: &["pT", "pW", "pH"],
};
/// VolumetricConvolutionMM: weight `nOutputPlane x nInputPlane*kT*kH*kW` or 5-D; ints `kT, kW,
/// kH, dT, dW, dH, pT, pW, pH`.
pub const VOLUMETRIC_MM: Module = Module {
    nd: 3,
    transposed: false,
    kernel_args: true,
    dilation: false,
    adj: false,
    weight_2d: true,
    pad: &["pT", "pW", "pH"],
};
/// VolumetricDilatedConvolution: 5-D weight; ints `kT, kW, kH, dT, dW, dH, padT, padW, padH,
/// dilationT, dilationW, dilationH`.
pub const VOLUMETRIC_DILATED: Module = Module {
    nd: 3,
    transposed: false,
    kernel_args: true,
    dilation: true,
    adj: false,
    weight_2d: false,
    pad: &["padT", "padW", "padH"],
};
/// VolumetricFullConvolution: weight `nInputPlane x nOutputPlane x kT x kH x kW`; ints `dT, dW,
/// dH, pT, pW, pH, aT, aW, aH`.
pub const VOLUMETRIC_FULL: Module = Module {
    nd: 3,
    transposed: true,
    kernel_args: false,
    dilation: false,
    adj: true,
    weight_2d: false,
    pad: &["pT", "pW", "pH"],
};
/// VolumetricFullDilatedConvolution: as VolumetricFullConvolution with `dilationT, dilationW,
/// dilationH` before the adjustments.
pub const VOLUMETRIC_FULL_DILATED: Module = Module {
    nd: 3,
    transposed: true,
    kernel_args: false,
    dilation: true,
    adj: true,
    weight_2d: false,
    pad: &["pT", "pW", "pH"],
};
