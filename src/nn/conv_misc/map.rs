//! SpatialConvolutionMap and SpatialFullConvolutionMap: 2-D convolutions along a connection
//! table. `connTable` is `[nConn, 2]`, row `k` = (input plane, output plane), **0-based** (torch7:
//! 1-based); `weight` is `[nConn, kH, kW]`, kernel `k` joining the planes of row `k`; `bias`
//! is `[nOutputPlane]` (NULL: none). Input `[C, H, W]` or `[N, C, H, W]` with `C >=
//! nInputPlane` (planes beyond `nInputPlane` are not read); output `[nOutputPlane, H', W']`
//! (batched: `[N, ...]`).
//!
//! SpatialConvolutionMap: valid strided cross-correlation, `H' = (H - kH) / dH + 1`.
//! SpatialFullConvolutionMap: its transpose (full convolution), `H' = (H - 1) * dH + kH`.

use super::super::buf::{self, Grads, Out};
use super::{NnReal, Win, check, full_acc, image_dims, image_shape, out_len, xcorr_acc, xcorr_grad};
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};

/// The shape facts of a call.
struct Dims {
    batched: bool,
    n: usize,
    /// planes of the input (at least nInputPlane)
    c_in: usize,
    n_out: usize,
    ih: usize,
    iw: usize,
    oh: usize,
    ow: usize,
    win: Win,
    /// (input plane, output plane) of each kernel
    conns: Vec<(usize, usize)>,
    full: bool,
}

impl Dims {
    fn out_shape(&self) -> Vec<i64> {
        image_shape(self.batched, self.n, self.n_out, self.oh, self.ow)
    }
    /// The kernels into each output plane (`out == true`) or from each input plane.
    fn by_plane(&self, out: bool) -> Vec<Vec<usize>> {
        let mut v = vec![Vec::new(); if out { self.n_out } else { self.c_in }];
        for (k, &(i, o)) in self.conns.iter().enumerate() {
            v[if out { o } else { i }].push(k);
        }
        v
    }
}

/// Checks the kernels `weight` (argument `w_arg`, `w_name`), `connTable` (argument `ct_arg`),
/// `nInputPlane`, `nOutputPlane`, `dW`, `dH` (the four arguments after it) and `input`
/// (argument 2).
#[allow(clippy::too_many_arguments)] // the module's options
fn dims<T: NnReal>(
    input: &View<T>,
    weight: &View<T>,
    w_arg: u32,
    w_name: &str,
    conn_table: &View<T>,
    ct_arg: u32,
    n_in: i64,
    n_out: i64,
    dw: i64,
    dh: i64,
    full: bool,
) -> Result<Dims> {
    check::positive(n_in, ct_arg + 1, "nInputPlane")?;
    check::positive(n_out, ct_arg + 2, "nOutputPlane")?;
    check::positive(dw, ct_arg + 3, "dW")?;
    check::positive(dh, ct_arg + 4, "dH")?;
    check::dims(conn_table, ct_arg, "connTable", &[2])?;
    let nconn = conn_table.sizes[0];
    check::shape(conn_table, ct_arg, "connTable", &[nconn, 2])?;
    let table = buf::read(conn_table, &[])?;
    let mut conns = Vec::with_capacity(nconn as usize);
    for (k, row) in table.chunks(2).enumerate() {
        let (i, o) = (row[0].to_f64(), row[1].to_f64());
        for (v, lim, what) in [(i, n_in, "input plane"), (o, n_out, "output plane")] {
            if v.fract() != 0.0 || v < 0.0 || v >= lim as f64 {
                return Err(check::index_err(
                    ct_arg,
                    "connTable",
                    format_args!("row {k}: {what} {v} is not an integer in [0, {lim}) (plane numbers are 0-based)"),
                ));
            }
        }
        conns.push((i as usize, o as usize));
    }
    check::dims(weight, w_arg, w_name, &[3])?;
    let (kh, kw) = (weight.sizes[1], weight.sizes[2]);
    check::shape(weight, w_arg, w_name, &[nconn, kh, kw])?;
    if kh < 1 || kw < 1 {
        return Err(check::size_err(w_arg, w_name, format_args!("empty kernels: {}", weight.desc())));
    }
    check::dims(input, 2, "input", &[3, 4])?;
    let (batched, n, c_in, ih, iw) = image_dims(input);
    if (c_in as i64) < n_in {
        return Err(check::size_err(
            2,
            "input",
            format_args!("expected at least {n_in} planes (nInputPlane), got {}", input.desc()),
        ));
    }
    let (oh, ow) = if full {
        if ih == 0 || iw == 0 {
            return Err(check::size_err(2, "input", format_args!("empty image: {}", input.desc())));
        }
        ((ih - 1) * dh as usize + kh as usize, (iw - 1) * dw as usize + kw as usize)
    } else {
        (out_len(ih as i64, kh, dh, 0, 2, "input", "height")?, out_len(iw as i64, kw, dw, 0, 2, "input", "width")?)
    };
    let win = Win { kh: kh as usize, kw: kw as usize, dh: dh as usize, dw: dw as usize };
    Ok(Dims { batched, n, c_in, n_out: n_out as usize, ih, iw, oh, ow, win, conns, full })
}

/// `Spatial[Full]ConvolutionMap_updateOutput(state, input, output, weight, bias, connTable,
/// nInputPlane, nOutputPlane, dW, dH)`; `full` picks the module.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn update_output<T: NnReal>(
    input: &View<T>,
    output: &Tensor<T>,
    weight: &View<T>,
    bias: Option<&View<T>>,
    conn_table: &View<T>,
    n_in: i64,
    n_out: i64,
    dw: i64,
    dh: i64,
    full: bool,
) -> Result<()> {
    let d = dims(input, weight, 4, "weight", conn_table, 6, n_in, n_out, dw, dh, full)?;
    if let Some(b) = bias {
        check::numel(b, 5, "bias", d.n_out)?;
    }
    let mut out = Out::new(output, &d.out_shape())?;
    let x = buf::read(input, &[out.view()])?;
    let w = buf::read(weight, &[out.view()])?;
    let b = bias.map(|b| buf::read(b, &[out.view()])).transpose()?;
    let by_out = d.by_plane(true);
    let (ip, op, kk) = (d.ih * d.iw, d.oh * d.ow, d.win.kh * d.win.kw);
    let work = d.n * d.conns.len() * kk * if full { ip } else { op };
    buf::par_chunks(out.as_mut(), op, work, |r, o| {
        let (s, p) = (r / d.n_out, r % d.n_out);
        o.fill(b.as_ref().map_or(T::zero(), |b| b[p]));
        for &k in &by_out[p] {
            let plane = (s * d.c_in + d.conns[k].0) * ip;
            let (xi, wk) = (&x[plane..plane + ip], &w[k * kk..(k + 1) * kk]);
            if d.full {
                full_acc(o, d.ow, xi, d.iw, wk, d.win);
            } else {
                xcorr_acc(o, d.ow, xi, d.iw, wk, d.win);
            }
        }
    });
    out.finish()
}

/// `Spatial[Full]ConvolutionMap_updateGradInput(state, input, gradOutput, gradInput, weight,
/// bias, connTable, nInputPlane, nOutputPlane, dW, dH)`: `gradInput` has `input`'s shape
/// (zero on planes no kernel reads); `bias` is unused (torch7's signature).
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn update_grad_input<T: NnReal>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    weight: &View<T>,
    conn_table: &View<T>,
    n_in: i64,
    n_out: i64,
    dw: i64,
    dh: i64,
    full: bool,
) -> Result<()> {
    let d = dims(input, weight, 5, "weight", conn_table, 7, n_in, n_out, dw, dh, full)?;
    check::shape(grad_output, 3, "gradOutput", &d.out_shape())?;
    let mut out = Out::new(grad_input, &input.sizes)?;
    let g = buf::read(grad_output, &[out.view()])?;
    let w = buf::read(weight, &[out.view()])?;
    let by_in = d.by_plane(false);
    let (ip, op, kk) = (d.ih * d.iw, d.oh * d.ow, d.win.kh * d.win.kw);
    let work = d.n * d.conns.len() * kk * if full { ip } else { op };
    buf::par_chunks(out.as_mut(), ip, work, |r, gi| {
        let (s, i) = (r / d.c_in, r % d.c_in);
        gi.fill(T::zero());
        for &k in &by_in[i] {
            let plane = (s * d.n_out + d.conns[k].1) * op;
            let (go, wk) = (&g[plane..plane + op], &w[k * kk..(k + 1) * kk]);
            if d.full {
                xcorr_acc(gi, d.iw, go, d.ow, wk, d.win);
            } else {
                full_acc(gi, d.iw, go, d.ow, wk, d.win);
            }
        }
    });
    out.finish()
}

/// `Spatial[Full]ConvolutionMap_accGradParameters(state, input, gradOutput, gradWeight,
/// gradBias, connTable, nInputPlane, nOutputPlane, dW, dH, scale)`: `gradWeight[k] += scale *`
/// the kernel gradient of connection `k`, `gradBias[p] += scale * sum gradOutput[p]` (skipped
/// when `gradBias` is NULL), summed over the batch in order.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn acc_grad_parameters<T: NnReal>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_weight: &Tensor<T>,
    grad_bias: Option<&Tensor<T>>,
    conn_table: &View<T>,
    n_in: i64,
    n_out: i64,
    dw: i64,
    dh: i64,
    scale: f64,
    full: bool,
) -> Result<()> {
    let d = dims(input, &grad_weight.view(), 4, "gradWeight", conn_table, 6, n_in, n_out, dw, dh, full)?;
    check::shape(grad_output, 3, "gradOutput", &d.out_shape())?;
    let (ip, op, kk) = (d.ih * d.iw, d.oh * d.ow, d.win.kh * d.win.kw);
    let mut grads = Grads::new(grad_weight, d.conns.len() * kk, grad_bias, d.n_out, 4)?;
    let outs = grads.views();
    let x = buf::read(input, &outs)?;
    let g = buf::read(grad_output, &outs)?;
    let scale = T::from_f64(scale);
    let work = d.n * d.conns.len() * kk * if full { ip } else { op };
    buf::par_chunks(grads.w.as_mut(), kk, work, |k, gk| {
        let (i, o) = d.conns[k];
        for s in 0..d.n {
            let xi = &x[(s * d.c_in + i) * ip..(s * d.c_in + i + 1) * ip];
            let go = &g[(s * d.n_out + o) * op..(s * d.n_out + o + 1) * op];
            if d.full {
                xcorr_grad(gk, xi, d.iw, go, d.ow, d.win, scale);
            } else {
                xcorr_grad(gk, go, d.ow, xi, d.iw, d.win, scale);
            }
        }
    });
    if let Some(gb) = &mut grads.b {
        for (r, plane) in g.chunks(op).enumerate() {
            let s: T = plane.iter().copied().sum();
            gb.as_mut()[r % d.n_out] += scale * s;
        }
    }
    grads.finish()
}
