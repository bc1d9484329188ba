//! SpatialDepthWiseConvolution: each input plane `i` convolved with `nOutputPlane` (the depth
//! multiplier `M`) kernels of its own: `output[b, i*M + m] = bias[m][i] + weight[m][i] (*)
//! input[b, i]` (`F.conv2d(groups = nInputPlane)` with its weight's planes in the order `i*M +
//! m`). Weight `M x nInputPlane x kH x kW` (or `M x nInputPlane*kH*kW`), bias `M x
//! nInputPlane`, output `[B,] nInputPlane*M x oH x oW`; `gradOutput` has the output's shape or
//! `[B,] nInputPlane x M x oH x oW`. `finput` and `fgradInput` are not used.
//!
//! Direct loops, no unfolding. Each plane is first copied into a zero-padded scratch plane (in
//! L1 for the usual sizes), so the kernels run over it with no bounds tests: the forward pass
//! and gradInput are one valid correlation kernel (gradInput: of the flipped kernel over
//! gradOutput placed `stride` apart with `k - 1 - pad` zeros around it), gradWeight a
//! per-tap dot product. Output columns go in blocks of `L` lanes (the accumulators stay in
//! registers over all the taps), compiled per instruction set by `multiversion!` with fused
//! multiply-adds where the copy has FMA. Forward and gradInput run in parallel over (sample,
//! input plane), gradWeight over input planes with the samples in order, so results do not
//! depend on the thread count.
//!
//! Device tensors (THCUNN, also Half) take the same checks and run in `depthwise_device`
//! (im2col, per-plane batched GEMMs, col2im).

use super::super::buf::{self, Grads, Out};
use super::super::check;
use super::super::{NnReal, native_tensor, native_view};
use super::depthwise_device as device;
use super::engine::sum;
use super::{ConvElem, on_device};
use crate::core::dtype::Scalar;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::kernels::{Avx2, Avx512, Base, multiversion};
use std::ffi::c_int;

/// The shape facts of a call.
struct Dw {
    batched: bool,
    n: usize,
    c: usize,
    mult: usize,
    i: [usize; 2],
    o: [usize; 2],
    k: [usize; 2],
    s: [usize; 2],
    p: [usize; 2],
}

impl Dw {
    /// The call as the device half sees it.
    fn dev(&self) -> device::Dg {
        let g = device::geom2(self.c, self.i, self.o, self.k, self.s, self.p);
        device::Dg { n: self.n, c: self.c, mult: self.mult, g }
    }
    fn out_shape(&self) -> Vec<i64> {
        let mut v = if self.batched { vec![self.n as i64] } else { vec![] };
        v.extend([(self.c * self.mult) as i64, self.o[0] as i64, self.o[1] as i64]);
        v
    }
    /// The 5-D (4-D unbatched) form of the output's shape torch7 also accepts for gradOutput.
    fn split_shape(&self) -> Vec<i64> {
        let mut v = if self.batched { vec![self.n as i64] } else { vec![] };
        v.extend([self.c as i64, self.mult as i64, self.o[0] as i64, self.o[1] as i64]);
        v
    }
    fn taps(&self) -> usize {
        self.k[0] * self.k[1]
    }
    fn iplane(&self) -> usize {
        self.i[0] * self.i[1]
    }
    fn oplane(&self) -> usize {
        self.o[0] * self.o[1]
    }
}

/// Checks the arguments: `input` (2), the weight (`w_arg`), ints `kW, kH, dW, dH, padW, padH`
/// from argument `first`.
fn plan<T: Scalar>(input: &View<T>, w: &View<T>, w_arg: u32, w_name: &str, ints: &[c_int], first: u32) -> Result<Dw> {
    let names = ["kW", "kH", "dW", "dH", "padW", "padH"];
    for (j, (&v, name)) in ints.iter().zip(names).enumerate() {
        let f = if j < 4 { check::positive } else { check::non_negative };
        f(v as i64, first + j as u32, name)?;
    }
    let k = [ints[1] as usize, ints[0] as usize];
    let s = [ints[3] as usize, ints[2] as usize];
    let p = [ints[5] as usize, ints[4] as usize];
    check::dims(w, w_arg, w_name, &[2, 4])?;
    let ws: Vec<usize> = w.sizes.iter().map(|&x| x as usize).collect();
    let taps = k[0] * k[1];
    let (mult, c) = if ws.len() == 4 {
        if ws[2] != k[0] || ws[3] != k[1] {
            return Err(check::size_err(
                w_arg,
                w_name,
                format_args!("expected a {}x{} kernel (from the arguments), got {}", k[0], k[1], w.desc()),
            ));
        }
        (ws[0], ws[1])
    } else {
        if !ws[1].is_multiple_of(taps) {
            return Err(check::size_err(
                w_arg,
                w_name,
                format_args!("a 2D weight needs a multiple of the kernel's {taps} taps per row, got {}", w.desc()),
            ));
        }
        (ws[0], ws[1] / taps)
    };
    if mult == 0 || c == 0 {
        return Err(check::size_err(w_arg, w_name, format_args!("has an empty dimension: {}", w.desc())));
    }
    check::dims(input, 2, "input", &[3, 4])?;
    let batched = input.ndim() == 4;
    let c0 = batched as usize;
    if input.sizes[c0] as usize != c || input.sizes[c0 + 1..].iter().any(|&x| x < 1) {
        return Err(check::size_err(
            2,
            "input",
            format_args!(
                "expected {c} input planes (from {w_name} {}) and non-empty sizes, got {}",
                w.desc(),
                input.desc()
            ),
        ));
    }
    let i = [input.sizes[c0 + 1] as usize, input.sizes[c0 + 2] as usize];
    let mut o = [0; 2];
    for j in 0..2 {
        if i[j] + 2 * p[j] < k[j] {
            return Err(check::size_err(
                2,
                "input",
                format_args!(
                    "input {} is smaller than the padded kernel: the output size would be below 1",
                    input.desc()
                ),
            ));
        }
        o[j] = (i[j] + 2 * p[j] - k[j]) / s[j] + 1;
    }
    let n = if batched { input.sizes[0] as usize } else { 1 };
    Ok(Dw { batched, n, c, mult, i, o, k, s, p })
}

/// Checks `gradOutput` (argument 3): the output's shape or its split form.
fn check_grad_output<T: Scalar>(g: &View<T>, d: &Dw) -> Result<()> {
    if g.sizes == d.split_shape() {
        return Ok(());
    }
    check::shape(g, 3, "gradOutput", &d.out_shape())
}

/// Output columns per block: the accumulators of a block stay in registers over all the taps.
const L: usize = 16;

/// How a kernel copy evaluates `a * b + c` (the marker `multiversion!` passes): fused where
/// the copy has FMA, a product and a sum in the plain copy (where `mul_add` is a libm call).
trait Fuse {
    const FUSED: bool;
}
impl Fuse for Base {
    const FUSED: bool = false;
}
impl Fuse for Avx2 {
    const FUSED: bool = true;
}
impl Fuse for Avx512 {
    const FUSED: bool = true;
}

#[inline(always)]
fn madd<I: Fuse, T: NnReal>(a: T, b: T, c: T) -> T {
    if I::FUSED { a.mul_add(b, c) } else { a * b + c }
}

/// `n` rounded up to a whole number of blocks.
fn blocks(n: usize) -> usize {
    n.div_ceil(L) * L
}

/// A zero-padded scratch plane: `rows` rows of `stride` elements.
#[derive(Clone, Copy)]
struct Pad {
    rows: usize,
    stride: usize,
}

impl Pad {
    /// The scratch plane of a valid correlation (strides `s`, kernel `k`) with `o` outputs:
    /// `rows x cols` (the padded plane), its rows widened where the last, partial block of
    /// output columns reads past `cols`.
    fn for_corr(rows: usize, cols: usize, o: [usize; 2], k: [usize; 2], s: [usize; 2]) -> Pad {
        debug_assert!(rows >= (o[0] - 1) * s[0] + k[0] && cols >= (o[1] - 1) * s[1] + k[1]);
        Pad { rows, stride: cols.max((blocks(o[1]) - 1) * s[1] + k[1]) }
    }
    fn len(&self) -> usize {
        self.rows * self.stride
    }
    /// A scratch plane of zeros, for `fill`.
    fn zeros<T: NnReal>(&self) -> Vec<T> {
        vec![T::zero(); self.len()]
    }
    /// Places the `h x w` plane `src` in `dst` (`len()` elements), its element `(r, c)` at
    /// `(top + r*step[0], left + c*step[1])`; elements falling outside are dropped (a negative
    /// offset crops). The other elements of `dst` are left alone: they must be zero (`dst` from
    /// `zeros`, or filled before with the same geometry: each call writes the same positions).
    #[allow(clippy::too_many_arguments)]
    fn fill<T: NnReal>(&self, dst: &mut [T], src: &[T], h: usize, w: usize, top: isize, left: isize, step: [usize; 2]) {
        let [sr, sc] = step;
        // the source columns that land inside a row: c0..c1, the first at column u0
        let ceil = |n: isize| if n <= 0 { 0 } else { ((n - 1) as usize / sc + 1).min(w) };
        let c0 = ceil(-left);
        let c1 = ceil(self.stride as isize - left).max(c0);
        if c0 == c1 {
            return;
        }
        let u0 = (left + (c0 * sc) as isize) as usize;
        // the source rows that land inside: r0..r1, the first at row t0
        let rows = |n: isize| if n <= 0 { 0 } else { ((n - 1) as usize / sr + 1).min(h) };
        let r0 = rows(-top);
        let r1 = rows(self.rows as isize - top).max(r0);
        for r in r0..r1 {
            let t = (top + (r * sr) as isize) as usize;
            let from = &src[r * w..][c0..c1];
            let row = &mut dst[t * self.stride..][..self.stride];
            if sc == 1 {
                copy(&mut row[u0..u0 + from.len()], from);
            } else {
                for (j, &v) in from.iter().enumerate() {
                    row[u0 + j * sc] = v;
                }
            }
        }
    }
}

/// `dst = src` (equal lengths) in whole blocks: a library call per short row would cost more
/// than the copy.
#[inline(always)]
fn copy<T: NnReal>(dst: &mut [T], src: &[T]) {
    let n = dst.len().min(src.len());
    if n < L {
        dst[..n].copy_from_slice(&src[..n]);
        return;
    }
    let (d, _) = dst[..n].as_chunks_mut::<L>();
    let (s, _) = src[..n].as_chunks::<L>();
    for (d, s) in d.iter_mut().zip(s) {
        *d = *s;
    }
    // the last block again, overlapping: the same values over the same positions
    if let (Some(d), Some(s)) = (dst[..n].last_chunk_mut::<L>(), src[..n].last_chunk::<L>()) {
        *d = *s;
    }
}

/// `out` (rows of `ow`) = `bias` (or, with `add`, its own values) + the valid correlation,
/// strides `sy` (rows) and `s` (columns), of the `kh x kw` kernel `ker` (rows of `kw`) over the
/// scratch plane `src` (rows of `stride`, sized by `Pad::for_corr`).
///
/// # Safety
/// None beyond the signature (unsafe for `multiversion!`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn corr_body<I: Fuse, T: NnReal>(
    src: &[T],
    stride: usize,
    ker: &[T],
    kw: usize,
    sy: usize,
    s: usize,
    out: &mut [T],
    ow: usize,
    bias: T,
    add: bool,
) {
    // the usual strides get their own loops, with the lane step known
    match s {
        1 => corr_s::<I, T, 1>(src, stride, ker, kw, sy, 1, out, ow, bias, add),
        2 => corr_s::<I, T, 2>(src, stride, ker, kw, sy, 2, out, ow, bias, add),
        _ => corr_s::<I, T, 0>(src, stride, ker, kw, sy, s, out, ow, bias, add),
    }
}
multiversion!(fn corr<T: NnReal>(src: &[T], stride: usize, ker: &[T], kw: usize, sy: usize, s: usize, out: &mut [T], ow: usize, bias: T, add: bool) => corr_body);

/// `corr_body` with the stride `S` fixed (0: `s`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn corr_s<I: Fuse, T: NnReal, const S: usize>(
    src: &[T],
    stride: usize,
    ker: &[T],
    kw: usize,
    sy: usize,
    s: usize,
    out: &mut [T],
    ow: usize,
    bias: T,
    add: bool,
) {
    let s = if S == 0 { s } else { S };
    // each tap's offset in the scratch plane and weight, so that a block's taps are one flat loop
    let taps: Vec<(usize, T)> = ker.iter().enumerate().map(|(t, &wv)| ((t / kw) * stride + t % kw, wv)).collect();
    for (y, orow) in out.chunks_exact_mut(ow).enumerate() {
        let base = y * sy * stride;
        // whole blocks in place (fixed-size, so the accumulators stay in registers), then the
        // partial one through a copy
        let (whole, part) = orow.as_chunks_mut::<L>();
        for (q, o) in whole.iter_mut().enumerate() {
            let init = if add { *o } else { [bias; L] };
            *o = block::<I, T, S>(init, &src[base + q * L * s..], &taps, s);
        }
        if !part.is_empty() && !add && !whole.is_empty() {
            // the last L outputs again, overlapping the whole blocks (the same values)
            let at = ow - L;
            let r = block::<I, T, S>([bias; L], &src[base + at * s..], &taps, s);
            if let Some(o) = orow.last_chunk_mut::<L>() {
                *o = r;
            }
        } else if !part.is_empty() {
            let mut init = [bias; L];
            if add {
                init[..part.len()].copy_from_slice(part);
            }
            let r = block::<I, T, S>(init, &src[base + whole.len() * L * s..], &taps, s);
            part.copy_from_slice(&r[..part.len()]);
        }
    }
}

/// `acc` plus the taps (offset in `src`, weight) of one block of outputs, its first input at
/// `src[0]`.
#[inline(always)]
fn block<I: Fuse, T: NnReal, const S: usize>(mut acc: [T; L], src: &[T], taps: &[(usize, T)], s: usize) -> [T; L] {
    let s = if S == 0 { s } else { S };
    let span = (L - 1) * s + 1;
    for &(off, wv) in taps {
        let v = &src[off..off + span];
        for (j, acc) in acc.iter_mut().enumerate() {
            *acc = madd::<I, T>(wv, v[j * s], *acc);
        }
    }
    acc
}

/// Adds to `gw` (`kh x kw` taps) the correlation, strides `sy` (rows) and `s` (columns), of
/// `g` (rows of `gs`, a whole number of blocks, zero past the outputs) over the scratch plane
/// `src` (rows of `stride`).
///
/// # Safety
/// None beyond the signature (unsafe for `multiversion!`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn wgrad_body<I: Fuse, T: NnReal>(
    src: &[T],
    stride: usize,
    g: &[T],
    gs: usize,
    kw: usize,
    sy: usize,
    s: usize,
    gw: &mut [T],
) {
    match s {
        1 => wgrad_s::<I, T, 1>(src, stride, g, gs, kw, sy, 1, gw),
        2 => wgrad_s::<I, T, 2>(src, stride, g, gs, kw, sy, 2, gw),
        _ => wgrad_s::<I, T, 0>(src, stride, g, gs, kw, sy, s, gw),
    }
}
multiversion!(fn wgrad<T: NnReal>(src: &[T], stride: usize, g: &[T], gs: usize, kw: usize, sy: usize, s: usize, gw: &mut [T]) => wgrad_body);

/// `wgrad_body` with the stride `S` fixed (0: `s`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn wgrad_s<I: Fuse, T: NnReal, const S: usize>(
    src: &[T],
    stride: usize,
    g: &[T],
    gs: usize,
    kw: usize,
    sy: usize,
    s: usize,
    gw: &mut [T],
) {
    let s = if S == 0 { s } else { S };
    let span = (L - 1) * s + 1;
    // four blocks in flight: four independent chains of multiply-adds
    const Q: usize = 4;
    for (tap, gwv) in gw.iter_mut().enumerate() {
        let (a, b) = (tap / kw, tap % kw);
        let mut acc = [[T::zero(); L]; Q];
        for (y, grow) in g.chunks_exact(gs).enumerate() {
            let row = &src[(y * sy + a) * stride + b..];
            let (quads, rest) = grow.as_chunks::<{ Q * L }>();
            for (qi, quad) in quads.iter().enumerate() {
                let (gq, _) = quad.as_chunks::<L>();
                for (k, (acc, gb)) in acc.iter_mut().zip(gq).enumerate() {
                    let v = &row[(qi * Q + k) * L * s..][..span];
                    for (j, (acc, &gv)) in acc.iter_mut().zip(gb).enumerate() {
                        *acc = madd::<I, T>(gv, v[j * s], *acc);
                    }
                }
            }
            let (rb, _) = rest.as_chunks::<L>();
            for (k, (acc, gb)) in acc.iter_mut().zip(rb).enumerate() {
                let v = &row[(quads.len() * Q + k) * L * s..][..span];
                for (j, (acc, &gv)) in acc.iter_mut().zip(gb).enumerate() {
                    *acc = madd::<I, T>(gv, v[j * s], *acc);
                }
            }
        }
        let mut t = T::zero();
        for lanes in &acc {
            for &v in lanes {
                t += v;
            }
        }
        *gwv += t;
    }
}

/// `SpatialDepthWiseConvolution_updateOutput(state, input, output, weight, bias, finput,
/// fgradInput, kW, kH, dW, dH, padW, padH)`.
pub fn update_output<T: ConvElem>(
    input: &View<T>,
    output: &Tensor<T>,
    weight: &View<T>,
    bias: Option<&View<T>>,
    ints: &[c_int],
) -> Result<()> {
    let d = plan(input, weight, 4, "weight", ints, 8)?;
    if let Some(b) = bias {
        check::numel(b, 5, "bias", d.mult * d.c)?;
    }
    let mut devs = vec![input.device(), output.with_view(|v| v.device()), weight.device()];
    devs.extend(bias.map(|b| b.device()));
    if on_device(&devs)? {
        let out = crate::ops::resize_out(output, &d.out_shape())?;
        let mut inputs = vec![input, weight];
        inputs.extend(bias);
        let tgt = super::device::target(&out, &inputs)?;
        let img = device::planes5(input, d.batched);
        device::forward(&d.dev(), &img, weight, bias, &tgt.0)?;
        return super::device::finish(&out, tgt);
    }
    let bias = bias.map(native_view).transpose()?;
    host_update_output(&d, native_view(input)?, native_tensor(output)?, native_view(weight)?, bias)
}

fn host_update_output<T: NnReal>(
    d: &Dw,
    input: &View<T>,
    output: &Tensor<T>,
    weight: &View<T>,
    bias: Option<&View<T>>,
) -> Result<()> {
    let mut out = Out::new(output, &d.out_shape())?;
    let outs = [out.view()];
    let x = buf::read(input, &outs)?;
    let w = buf::read(weight, &outs)?;
    let b = bias.map(|b| buf::read(b, &outs)).transpose()?;
    let (op, ip, taps) = (d.oplane(), d.iplane(), d.taps());
    let work = d.n * d.c * d.mult * op * taps;
    let pad = Pad::for_corr(d.i[0] + 2 * d.p[0], d.i[1] + 2 * d.p[1], d.o, d.k, d.s);
    let (top, left) = (d.p[0] as isize, d.p[1] as isize);
    buf::par_chunks_with(
        out.as_mut(),
        d.mult * op,
        work,
        || pad.zeros(),
        |scratch, bi, chunk| {
            let ch = bi % d.c;
            pad.fill(scratch, &x[bi * ip..(bi + 1) * ip], d.i[0], d.i[1], top, left, [1, 1]);
            for (m, plane) in chunk.chunks_exact_mut(op).enumerate() {
                let bv = b.as_ref().map_or(T::zero(), |b| b[m * d.c + ch]);
                let wk = &w[(m * d.c + ch) * taps..][..taps];
                // SAFETY: no contract beyond the signature.
                unsafe { corr(scratch, pad.stride, wk, d.k[1], d.s[0], d.s[1], plane, d.o[1], bv, false) };
            }
        },
    );
    out.finish()
}

/// `SpatialDepthWiseConvolution_updateGradInput(state, input, gradOutput, gradInput, weight,
/// finput, fgradInput, kW, kH, dW, dH, padW, padH)`.
pub fn update_grad_input<T: ConvElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    weight: &View<T>,
    ints: &[c_int],
) -> Result<()> {
    let d = plan(input, weight, 5, "weight", ints, 8)?;
    check_grad_output(grad_output, &d)?;
    let devs = [input.device(), grad_output.device(), grad_input.with_view(|v| v.device()), weight.device()];
    if on_device(&devs)? {
        let gin = crate::ops::resize_out(grad_input, &input.sizes)?;
        let tgt = super::device::target(&gin, &[grad_output, weight])?;
        device::grad_input(&d.dev(), grad_output, weight, &device::planes5(&tgt.0, d.batched))?;
        return super::device::finish(&gin, tgt);
    }
    let (grad_output, weight) = (native_view(grad_output)?, native_view(weight)?);
    host_update_grad_input(&d, &input.sizes, grad_output, native_tensor(grad_input)?, weight)
}

fn host_update_grad_input<T: NnReal>(
    d: &Dw,
    in_shape: &[i64],
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    weight: &View<T>,
) -> Result<()> {
    let mut gin = Out::new(grad_input, in_shape)?;
    let outs = [gin.view()];
    let g = buf::read(grad_output, &outs)?;
    let w = buf::read(weight, &outs)?;
    let (op, ip, taps) = (d.oplane(), d.iplane(), d.taps());
    let work = d.n * d.c * d.mult * op * taps;
    // gradInput = the stride-1 valid correlation of the flipped kernel over gradOutput spread
    // `stride` apart, with `k - 1 - pad` zeros before it (a negative count crops)
    let pad = Pad::for_corr(d.i[0] + d.k[0] - 1, d.i[1] + d.k[1] - 1, d.i, d.k, [1, 1]);
    let top = d.k[0] as isize - 1 - d.p[0] as isize;
    let left = d.k[1] as isize - 1 - d.p[1] as isize;
    let init = || (pad.zeros(), vec![T::zero(); taps]);
    buf::par_chunks_with(gin.as_mut(), ip, work, init, |(scratch, flipped), bi, plane| {
        let ch = bi % d.c;
        let gp = &g[bi * d.mult * op..(bi + 1) * d.mult * op];
        for (m, gm) in gp.chunks_exact(op).enumerate() {
            pad.fill(scratch, gm, d.o[0], d.o[1], top, left, d.s);
            for (f, &v) in flipped.iter_mut().zip(w[(m * d.c + ch) * taps..][..taps].iter().rev()) {
                *f = v;
            }
            // SAFETY: no contract beyond the signature.
            unsafe { corr(scratch, pad.stride, flipped, d.k[1], 1, 1, plane, d.i[1], T::zero(), m > 0) };
        }
    });
    gin.finish()
}

/// `SpatialDepthWiseConvolution_accGradParameters(state, input, gradOutput, gradWeight,
/// gradBias, finput, fgradInput, kW, kH, dW, dH, padW, padH, scale)`.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn acc_grad_parameters<T: ConvElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    grad_bias: Option<&Tensor<T>>,
    ints: &[c_int],
    scale: f64,
) -> Result<()> {
    let gwv = grad_weight.view();
    let d = plan(input, &gwv, 4, "gradWeight", ints, 8)?;
    check_grad_output(grad_output, &d)?;
    let mut devs = vec![input.device(), grad_output.device(), gwv.device()];
    devs.extend(grad_bias.map(|b| b.with_view(|v| v.device())));
    if on_device(&devs)? {
        if let Some(gb) = grad_bias {
            buf::acc_len(&gb.view(), d.mult * d.c, 5, "gradBias")?;
        }
        let img = device::planes5(input, d.batched);
        return device::acc(&d.dev(), &img, grad_output, grad_weight, grad_bias, scale);
    }
    let (input, grad_output) = (native_view(input)?, native_view(grad_output)?);
    let grad_bias = grad_bias.map(native_tensor).transpose()?;
    host_acc(&d, input, grad_output, native_tensor(grad_weight)?, grad_bias, scale)
}

fn host_acc<T: NnReal>(
    d: &Dw,
    input: &View<T>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    grad_bias: Option<&Tensor<T>>,
    scale: f64,
) -> Result<()> {
    let gwv = grad_weight.view();
    let mut grads = Grads::new(grad_weight, gwv.numel(), grad_bias, d.mult * d.c, 4)?;
    let outs = grads.views();
    let x = buf::read(input, &outs)?;
    let g = buf::read(grad_output, &outs)?;
    let (op, ip, taps) = (d.oplane(), d.iplane(), d.taps());
    let scale = T::from_f64(scale);
    // per input plane: M x taps weight sums, then M bias sums
    let per = d.mult * (taps + 1);
    let mut tmp = crate::core::limits::try_filled(d.c * per, T::zero())?;
    let work = d.n * d.c * d.mult * op * taps;
    let pad = Pad::for_corr(d.i[0] + 2 * d.p[0], d.i[1] + 2 * d.p[1], d.o, d.k, d.s);
    // gradOutput's planes with their rows padded to whole blocks (zeros past the outputs)
    let gpad = Pad { rows: d.o[0], stride: blocks(d.o[1]) };
    let (top, left) = (d.p[0] as isize, d.p[1] as isize);
    buf::par_chunks_with(
        &mut tmp,
        per,
        work,
        || (pad.zeros(), gpad.zeros()),
        |(scratch, gs), ch, t| {
            let (tw, tb) = t.split_at_mut(d.mult * taps);
            for b in 0..d.n {
                let bi = b * d.c + ch;
                pad.fill(scratch, &x[bi * ip..(bi + 1) * ip], d.i[0], d.i[1], top, left, [1, 1]);
                for (m, (twm, tbm)) in tw.chunks_exact_mut(taps).zip(tb.iter_mut()).enumerate() {
                    let gm = &g[(bi * d.mult + m) * op..][..op];
                    *tbm += sum(gm);
                    gpad.fill(gs, gm, d.o[0], d.o[1], 0, 0, [1, 1]);
                    // SAFETY: no contract beyond the signature.
                    unsafe { wgrad(scratch, pad.stride, gs, gpad.stride, d.k[1], d.s[0], d.s[1], twm) };
                }
            }
        },
    );
    let gwm = grads.w.as_mut();
    for (ch, t) in tmp.chunks(per).enumerate() {
        for m in 0..d.mult {
            let dst = &mut gwm[(m * d.c + ch) * taps..(m * d.c + ch + 1) * taps];
            for (o, &v) in dst.iter_mut().zip(&t[m * taps..(m + 1) * taps]) {
                *o += scale * v;
            }
        }
    }
    if let Some(gb) = &mut grads.b {
        let gbm = gb.as_mut();
        for (ch, t) in tmp.chunks(per).enumerate() {
            for m in 0..d.mult {
                gbm[m * d.c + ch] += scale * t[d.mult * taps + m];
            }
        }
    }
    grads.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic values in [-1, 1).
    fn vals(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
            })
            .collect()
    }

    fn tensor(data: &[f64], sizes: &[i64]) -> crate::core::refcount::Rc<Tensor<f64>> {
        Tensor::new(View::from_slice(data, sizes).unwrap())
    }

    /// Forward, gradInput, gradWeight and gradBias by the definition (batched input).
    #[allow(clippy::type_complexity)]
    fn naive(x: &[f64], w: &[f64], b: &[f64], g: &[f64], d: &Dw) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
        let (c, m, [ih, iw], [oh, ow], [kh, kw]) = (d.c, d.mult, d.i, d.o, d.k);
        let mut out = vec![0.0; d.n * c * m * oh * ow];
        let mut gin = vec![0.0; x.len()];
        let mut gw = vec![0.0; w.len()];
        let mut gb = vec![0.0; b.len()];
        for n in 0..d.n {
            for ch in 0..c {
                for mm in 0..m {
                    let o = ((n * c + ch) * m + mm) * oh * ow;
                    for y in 0..oh {
                        for xx in 0..ow {
                            let gv = g[o + y * ow + xx];
                            let mut acc = b[mm * c + ch];
                            gb[mm * c + ch] += gv;
                            for a in 0..kh {
                                for bb in 0..kw {
                                    let r = (y * d.s[0] + a) as isize - d.p[0] as isize;
                                    let col = (xx * d.s[1] + bb) as isize - d.p[1] as isize;
                                    if r < 0 || col < 0 || r as usize >= ih || col as usize >= iw {
                                        continue;
                                    }
                                    let xi = ((n * c + ch) * ih + r as usize) * iw + col as usize;
                                    let wi = ((mm * c + ch) * kh + a) * kw + bb;
                                    acc += w[wi] * x[xi];
                                    gin[xi] += w[wi] * gv;
                                    gw[wi] += x[xi] * gv;
                                }
                            }
                            out[o + y * ow + xx] = acc;
                        }
                    }
                }
            }
        }
        (out, gin, gw, gb)
    }

    #[test]
    fn matches_the_definition() {
        // batch, C, M, (H, W), (kH, kW), (dH, dW), (padH, padW)
        let cases = [
            (2, 3, 1, [7, 40], [3, 3], [1, 1], [1, 1]),
            (1, 2, 3, [17, 33], [3, 3], [2, 2], [1, 1]),
            (2, 1, 2, [9, 50], [2, 5], [3, 4], [0, 2]),
            (1, 2, 1, [5, 6], [3, 2], [1, 1], [4, 3]),
            (3, 2, 1, [1, 1], [1, 1], [1, 1], [0, 0]),
            (1, 1, 1, [12, 16], [5, 1], [2, 1], [2, 0]),
        ];
        for (case, &(n, c, m, i, k, s, p)) in cases.iter().enumerate() {
            let o = [(i[0] + 2 * p[0] - k[0]) / s[0] + 1, (i[1] + 2 * p[1] - k[1]) / s[1] + 1];
            let d = Dw { batched: true, n, c, mult: m, i, o, k, s, p };
            let x = vals(n * c * i[0] * i[1], 1 + case as u64);
            let w = vals(m * c * k[0] * k[1], 20 + case as u64);
            let b = vals(m * c, 40 + case as u64);
            let g = vals(n * c * m * o[0] * o[1], 60 + case as u64);
            let want = naive(&x, &w, &b, &g, &d);
            let ints = [k[1], k[0], s[1], s[0], p[1], p[0]].map(|v| v as c_int);
            let xv = View::from_slice(&x, &[n, c, i[0], i[1]].map(|v| v as i64)).unwrap();
            let wv = View::from_slice(&w, &[m, c, k[0], k[1]].map(|v| v as i64)).unwrap();
            let bv = View::from_slice(&b, &[m as i64, c as i64]).unwrap();
            let gv = View::from_slice(&g, &d.out_shape()).unwrap();
            let out = tensor(&[], &[0]);
            update_output(&xv, &out, &wv, Some(&bv), &ints).unwrap();
            let gin = tensor(&[], &[0]);
            update_grad_input(&xv, &gv, &gin, &wv, &ints).unwrap();
            let gw = tensor(&vec![0.5; w.len()], &[m, c, k[0], k[1]].map(|v| v as i64));
            let gb = tensor(&vec![0.25; b.len()], &[m as i64, c as i64]);
            acc_grad_parameters(&xv, &gv, &gw, Some(&gb), &ints, 2.0).unwrap();
            let got = [out.view(), gin.view(), gw.view(), gb.view()].map(|v| v.to_vec().unwrap());
            let want = [
                want.0,
                want.1,
                want.2.iter().map(|v| 0.5 + 2.0 * v).collect(),
                want.3.iter().map(|v| 0.25 + 2.0 * v).collect(),
            ];
            for (what, (got, want)) in
                ["output", "gradInput", "gradWeight", "gradBias"].iter().zip(got.iter().zip(&want))
            {
                assert_eq!(got.len(), want.len(), "case {case} {what}");
                for (j, (a, e)) in got.iter().zip(want).enumerate() {
                    assert!((a - e).abs() <= 1e-12 * (1.0 + e.abs()) * 64.0, "case {case} {what}[{j}]: {a} vs {e}");
                }
            }
        }
    }

    #[test]
    fn pad_fill_places_crops_and_spreads() {
        let src: Vec<f64> = (1..=6).map(f64::from).collect(); // 2 x 3
        let pad = Pad { rows: 4, stride: 5 };
        let mut dst = pad.zeros();
        pad.fill(&mut dst, &src, 2, 3, 1, 1, [1, 1]);
        #[rustfmt::skip]
        assert_eq!(dst, [0., 0., 0., 0., 0.,
                         0., 1., 2., 3., 0.,
                         0., 4., 5., 6., 0.,
                         0., 0., 0., 0., 0.]);
        dst = pad.zeros();
        pad.fill(&mut dst, &src, 2, 3, -1, -1, [1, 1]);
        #[rustfmt::skip]
        assert_eq!(dst, [5., 6., 0., 0., 0.,
                         0., 0., 0., 0., 0.,
                         0., 0., 0., 0., 0.,
                         0., 0., 0., 0., 0.]);
        dst = pad.zeros();
        pad.fill(&mut dst, &src, 2, 3, 0, -1, [2, 2]);
        #[rustfmt::skip]
        assert_eq!(dst, [0., 2., 0., 3., 0.,
                         0., 0., 0., 0., 0.,
                         0., 5., 0., 6., 0.,
                         0., 0., 0., 0., 0.]);
        dst = pad.zeros();
        pad.fill(&mut dst, &src, 2, 3, 3, 3, [1, 2]);
        #[rustfmt::skip]
        assert_eq!(dst, [0., 0., 0., 0., 0.,
                         0., 0., 0., 0., 0.,
                         0., 0., 0., 0., 0.,
                         0., 0., 0., 1., 0.]);
    }
}
