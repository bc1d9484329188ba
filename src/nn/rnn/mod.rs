//! The fused GRU and LSTM cells (GRUFused, LSTMFused): the pointwise part of one recurrent
//! step, after the caller has multiplied the input and the previous hidden state by their
//! weight matrices. torch7 has these only in THCUNN (its THNN versions abort "Not implemented
//! for CPU"); th computes THCUNN's formulas on the CPU. PyTorch: `torch._thnn_fused_gru_cell`
//! / `torch._thnn_fused_lstm_cell` (the CUDA kernels behind `nn.GRUCell` / `nn.LSTMCell`).
//!
//! Shapes: the state (`hx`, `cx`, outputs) has any shape whose last size is the hidden size
//! `H`; the gate tensors (`input`, `hidden`, their gradients) hold 3 (GRU) or 4 (LSTM) times as
//! many elements, read row-major as rows of `3H` / `4H`: row `r` holds the gates of the state
//! row `r`, gate by gate. `bias1` / `bias2` (3H or 4H elements) are added to every row; either
//! may be NULL (zero). Gate order: GRU (reset, update, new), LSTM (input, forget, cell, output).
//! Rows are computed in parallel on the host; on the device ([`device`]) one thread per state
//! element.

mod device;

use super::buf::{self, Out, SharedPtr};
use super::check;
use super::{NnElem, NnReal, native_tensor, native_view};
use crate::core::allocator::Device;
use crate::core::dtype::Scalar;
use crate::core::error::{Error, Result};
use crate::core::tensor::{Tensor, View};
use crate::exec::backend::Backend;
use crate::exec::parallel;
use std::borrow::Cow;

/// Runs `f(row, [slice of each output])` for `rows` rows, output `k` being split into rows of
/// `widths[k]` elements, in parallel when `work` is large enough; each row goes to one call.
fn par_rows<T: Send + Sync, const K: usize>(
    outs: [&mut [T]; K],
    widths: [usize; K],
    rows: usize,
    work: usize,
    f: impl Fn(usize, [&mut [T]; K]) + Sync,
) -> Result<()> {
    if outs.iter().zip(widths).any(|(o, w)| o.len() < rows * w) {
        return Err(Error::internal("fused rnn: output smaller than its rows"));
    }
    let ptrs = outs.map(|o| SharedPtr(o.as_mut_ptr()));
    parallel::for_range(rows, work, |a, b| {
        for r in a..b {
            let slices = std::array::from_fn(|k| {
                // SAFETY: output k holds at least rows * widths[k] elements (checked above) and
                // is borrowed mutably for the whole loop; row r (< rows) of each output is handed
                // to this call only (the pieces' ranges are disjoint), so the slices never overlap.
                unsafe { std::slice::from_raw_parts_mut(ptrs[k].offset((r * widths[k]) as isize), widths[k]) }
            });
            f(r, slices);
        }
    });
    Ok(())
}

/// The hidden size (last size) and element count of a state tensor (argument `arg`).
fn state_dims<T: Scalar>(v: &View<T>, arg: u32, name: &str) -> Result<(usize, usize)> {
    if v.ndim() == 0 {
        return Err(check::size_err(
            arg,
            name,
            format_args!("expected a tensor of 1 or more dimensions, got {}", v.desc()),
        ));
    }
    Ok((*v.sizes.last().unwrap_or(&0) as usize, v.numel()))
}

/// `sizes` with the last size multiplied by `k`.
fn gates_shape(sizes: &[i64], k: i64) -> Vec<i64> {
    let mut s = sizes.to_vec();
    if let Some(l) = s.last_mut() {
        *l *= k;
    }
    s
}

/// Checks an optional bias (argument `arg`) of `n` elements and reads it (zeros when NULL).
fn bias<'a, T: Scalar>(b: Option<&'a View<T>>, arg: u32, name: &str, n: usize) -> Result<Option<&'a View<T>>> {
    if let Some(v) = b {
        check::numel(v, arg, name, n)?;
    }
    Ok(b)
}

fn read_bias<'a, T: NnReal>(b: Option<&'a View<T>>, n: usize, outs: &[&View<T>]) -> Result<Cow<'a, [T]>> {
    match b {
        Some(v) => buf::read(v, outs),
        None => Ok(Cow::Owned(vec![T::zero(); n])),
    }
}

fn sigmoid<T: NnReal>(x: T) -> T {
    T::one() / (T::one() + (-x).exp())
}

/// `GRUFused_updateOutput(state, input, hidden, bias1, bias2, hx, hy, storage)`: with `input`
/// and `hidden` the gate pre-activations of the input and of the previous state `hx`:
/// `r = sigmoid(i_r + h_r + b1_r + b2_r)`, `z = sigmoid(i_z + h_z + b1_z + b2_z)`,
/// `n = tanh(i_n + b1_n + r * (h_n + b2_n))`, `hy = n + z * (hx - n)` (resized like `hx`).
/// `storage` is resized to `hx`'s shape with the last size times 5 and receives, row by row,
/// `[r, z, n, hx, h_n + b2_n]` for `updateGradInput` (THCUNN requires it pre-sized).
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn gru_update_output<T: NnElem>(
    input: &View<T>,
    hidden: &View<T>,
    bias1: Option<&View<T>>,
    bias2: Option<&View<T>>,
    hx: &View<T>,
    hy: &Tensor<T>,
    storage: &Tensor<T>,
) -> Result<()> {
    let mut devices = vec![input.device(), hidden.device(), hx.device(), dev_of(hy), dev_of(storage)];
    devices.extend(bias1.iter().chain(bias2.iter()).map(|b| b.device()));
    Backend::of(&devices)?;
    let (h, n) = state_dims(hx, 6, "hx")?;
    check::numel(input, 2, "input", 3 * n)?;
    check::numel(hidden, 3, "hidden", 3 * n)?;
    let b1 = bias(bias1, 4, "bias1", 3 * h)?;
    let b2 = bias(bias2, 5, "bias2", 3 * h)?;
    if let Device::Cuda(dev) = hx.device() {
        return device::gru(dev, (h, n), input, hidden, b1, b2, hx, hy, storage);
    }
    let (b1, b2) = (b1.map(native_view).transpose()?, b2.map(native_view).transpose()?);
    gru_host(
        (h, n),
        native_view(input)?,
        native_view(hidden)?,
        (b1, b2),
        native_view(hx)?,
        native_tensor(hy)?,
        native_tensor(storage)?,
    )
}

/// The device a tensor's elements live on.
fn dev_of<T: Scalar>(t: &Tensor<T>) -> Device {
    t.with_view(|v| v.device())
}

fn gru_host<T: NnReal>(
    (h, n): (usize, usize),
    input: &View<T>,
    hidden: &View<T>,
    (b1, b2): (Option<&View<T>>, Option<&View<T>>),
    hx: &View<T>,
    hy: &Tensor<T>,
    storage: &Tensor<T>,
) -> Result<()> {
    let rows = n.checked_div(h).unwrap_or(0);

    let mut out = Out::new(hy, &hx.sizes)?;
    let mut st = Out::new(storage, &gates_shape(&hx.sizes, 5))?;
    let outs = [out.view(), st.view()];
    let (x, hid, prev) = (buf::read(input, &outs)?, buf::read(hidden, &outs)?, buf::read(hx, &outs)?);
    let (b1, b2) = (read_bias(b1, 3 * h, &outs)?, read_bias(b2, 3 * h, &outs)?);
    par_rows([out.as_mut(), st.as_mut()], [h, 5 * h], rows, n * 30, |r, [y, s]| {
        let (gi, gh, hx) =
            (&x[3 * h * r..3 * h * (r + 1)], &hid[3 * h * r..3 * h * (r + 1)], &prev[h * r..h * (r + 1)]);
        for i in 0..h {
            let rg = sigmoid(gi[i] + gh[i] + b1[i] + b2[i]);
            let zg = sigmoid(gi[h + i] + gh[h + i] + b1[h + i] + b2[h + i]);
            let hn = gh[2 * h + i] + b2[2 * h + i];
            let ng = (gi[2 * h + i] + b1[2 * h + i] + rg * hn).tanh();
            y[i] = ng + zg * (hx[i] - ng);
            s[i] = rg;
            s[h + i] = zg;
            s[2 * h + i] = ng;
            s[3 * h + i] = hx[i];
            s[4 * h + i] = hn;
        }
    })?;
    out.finish()?;
    st.finish()
}

/// `GRUFused_updateGradInput(state, gradInInput, gradInHidden, gradOutput, gradInputHx,
/// storage)`: from `gradOutput` (the gradient of `hy`) and the forward's `storage` (5 times its
/// elements): `gradInInput` = the gradient of the input gates `[r, z, n]`, `gradInHidden` the
/// same except its `n` part, the gradient of `h_n` (= the input's times r), both resized to
/// `gradOutput`'s shape with the last size times 3; `gradInputHx` (resized like `gradOutput`)
/// `= gradOutput * z`.
pub fn gru_update_grad_input<T: NnElem>(
    grad_in_input: &Tensor<T>,
    grad_in_hidden: &Tensor<T>,
    grad_output: &View<T>,
    grad_input_hx: &Tensor<T>,
    storage: &View<T>,
) -> Result<()> {
    let outs = [dev_of(grad_in_input), dev_of(grad_in_hidden), dev_of(grad_input_hx)];
    Backend::of(&[&[grad_output.device(), storage.device()][..], &outs].concat())?;
    let (h, n) = state_dims(grad_output, 4, "gradOutput")?;
    check::numel(storage, 6, "storage", 5 * n)?;
    if let Device::Cuda(dev) = grad_output.device() {
        return device::gru_back(dev, (h, n), grad_in_input, grad_in_hidden, grad_output, grad_input_hx, storage);
    }
    gru_grad_host(
        (h, n),
        native_tensor(grad_in_input)?,
        native_tensor(grad_in_hidden)?,
        native_view(grad_output)?,
        native_tensor(grad_input_hx)?,
        native_view(storage)?,
    )
}

fn gru_grad_host<T: NnReal>(
    (h, n): (usize, usize),
    grad_in_input: &Tensor<T>,
    grad_in_hidden: &Tensor<T>,
    grad_output: &View<T>,
    grad_input_hx: &Tensor<T>,
    storage: &View<T>,
) -> Result<()> {
    let rows = n.checked_div(h).unwrap_or(0);
    let gshape = gates_shape(&grad_output.sizes, 3);
    let mut gi_out = Out::new(grad_in_input, &gshape)?;
    let mut gh_out = Out::new(grad_in_hidden, &gshape)?;
    let mut ghx_out = Out::new(grad_input_hx, &grad_output.sizes)?;
    let outs = [gi_out.view(), gh_out.view(), ghx_out.view()];
    let (go, st) = (buf::read(grad_output, &outs)?, buf::read(storage, &outs)?);
    let one = T::one();
    par_rows(
        [gi_out.as_mut(), gh_out.as_mut(), ghx_out.as_mut()],
        [3 * h, 3 * h, h],
        rows,
        n * 20,
        |r, [gi, gh, ghx]| {
            let (g, s) = (&go[h * r..h * (r + 1)], &st[5 * h * r..5 * h * (r + 1)]);
            for i in 0..h {
                let (rg, zg, ng, hx, hn) = (s[i], s[h + i], s[2 * h + i], s[3 * h + i], s[4 * h + i]);
                let gz = g[i] * (hx - ng) * (one - zg) * zg;
                let gn = g[i] * (one - zg) * (one - ng * ng);
                let gr = gn * hn * (one - rg) * rg;
                gi[i] = gr;
                gi[h + i] = gz;
                gi[2 * h + i] = gn;
                gh[i] = gr;
                gh[h + i] = gz;
                gh[2 * h + i] = gn * rg;
                ghx[i] = g[i] * zg;
            }
        },
    )?;
    gi_out.finish()?;
    gh_out.finish()?;
    ghx_out.finish()
}

/// `LSTMFused_updateOutput(state, input, hidden, bias1, bias2, cx, hy, cy)`: with `input` and
/// `hidden` the gate pre-activations: `i = sigmoid(.)`, `f = sigmoid(.)`, `g = tanh(.)`,
/// `o = sigmoid(.)` of `input + hidden + bias1 + bias2`, `cy = f * cx + i * g`,
/// `hy = o * tanh(cy)` (both resized like `cx`). As in THCUNN, `input` is overwritten with the
/// activated gates `[i, f, g, o]`: it is the `storage` of `updateGradInput`.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn lstm_update_output<T: NnElem>(
    input: &Tensor<T>,
    hidden: &View<T>,
    bias1: Option<&View<T>>,
    bias2: Option<&View<T>>,
    cx: &View<T>,
    hy: &Tensor<T>,
    cy: &Tensor<T>,
) -> Result<()> {
    let mut devices = vec![dev_of(input), hidden.device(), cx.device(), dev_of(hy), dev_of(cy)];
    devices.extend(bias1.iter().chain(bias2.iter()).map(|b| b.device()));
    Backend::of(&devices)?;
    let (h, n) = state_dims(cx, 6, "cx")?;
    check::numel(&input.view(), 2, "input", 4 * n)?;
    check::numel(hidden, 3, "hidden", 4 * n)?;
    let b1 = bias(bias1, 4, "bias1", 4 * h)?;
    let b2 = bias(bias2, 5, "bias2", 4 * h)?;
    if let Device::Cuda(dev) = cx.device() {
        return device::lstm(dev, (h, n), input, hidden, b1, b2, cx, hy, cy);
    }
    let (b1, b2) = (b1.map(native_view).transpose()?, b2.map(native_view).transpose()?);
    lstm_host(
        (h, n),
        native_tensor(input)?,
        native_view(hidden)?,
        (b1, b2),
        native_view(cx)?,
        native_tensor(hy)?,
        native_tensor(cy)?,
    )
}

fn lstm_host<T: NnReal>(
    (h, n): (usize, usize),
    input: &Tensor<T>,
    hidden: &View<T>,
    (b1, b2): (Option<&View<T>>, Option<&View<T>>),
    cx: &View<T>,
    hy: &Tensor<T>,
    cy: &Tensor<T>,
) -> Result<()> {
    let rows = n.checked_div(h).unwrap_or(0);

    let mut gates = Out::acc(input, 4 * n, 2, "input")?;
    let mut hy_out = Out::new(hy, &cx.sizes)?;
    let mut cy_out = Out::new(cy, &cx.sizes)?;
    let outs = [gates.view(), hy_out.view(), cy_out.view()];
    let (hid, c) = (buf::read(hidden, &outs)?, buf::read(cx, &outs)?);
    let (b1, b2) = (read_bias(b1, 4 * h, &outs)?, read_bias(b2, 4 * h, &outs)?);
    par_rows([gates.as_mut(), hy_out.as_mut(), cy_out.as_mut()], [4 * h, h, h], rows, n * 40, |r, [g, y, cn]| {
        let (gh, c) = (&hid[4 * h * r..4 * h * (r + 1)], &c[h * r..h * (r + 1)]);
        for (k, (x, &y)) in g.iter_mut().zip(gh).enumerate() {
            *x = *x + y + b1[k] + b2[k];
        }
        for i in 0..h {
            let ig = sigmoid(g[i]);
            let fg = sigmoid(g[h + i]);
            let cg = g[2 * h + i].tanh();
            let og = sigmoid(g[3 * h + i]);
            let c1 = fg * c[i] + ig * cg;
            cn[i] = c1;
            y[i] = og * c1.tanh();
            g[i] = ig;
            g[h + i] = fg;
            g[2 * h + i] = cg;
            g[3 * h + i] = og;
        }
    })?;
    gates.finish()?;
    hy_out.finish()?;
    cy_out.finish()
}

/// `LSTMFused_updateGradInput(state, storage, gradInGates, cx, cy, gradOutput, gradOutputCell,
/// gradInputCx)`: from the activated gates `storage` (the forward's `input`), the states `cx`,
/// `cy` and the gradients of `hy` (`gradOutput`) and `cy` (`gradOutputCell`): `gradInGates`
/// (resized to `gradOutput`'s shape with the last size times 4) = the gradient of the gate
/// pre-activations `[i, f, g, o]` (the same for the input and the hidden side), `gradInputCx`
/// (resized like `gradOutput`) = the gradient of `cx`.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn lstm_update_grad_input<T: NnElem>(
    storage: &View<T>,
    grad_in_gates: &Tensor<T>,
    cx: &View<T>,
    cy: &View<T>,
    grad_output: &View<T>,
    grad_output_cell: &View<T>,
    grad_input_cx: &Tensor<T>,
) -> Result<()> {
    let ins = [storage.device(), cx.device(), cy.device(), grad_output.device(), grad_output_cell.device()];
    Backend::of(&[&ins[..], &[dev_of(grad_in_gates), dev_of(grad_input_cx)]].concat())?;
    let (h, n) = state_dims(grad_output, 6, "gradOutput")?;
    check::numel(storage, 2, "storage", 4 * n)?;
    check::numel(cx, 4, "cx", n)?;
    check::numel(cy, 5, "cy", n)?;
    check::numel(grad_output_cell, 7, "gradOutputCell", n)?;
    if let Device::Cuda(dev) = grad_output.device() {
        let (gg, gcx) = (grad_in_gates, grad_input_cx);
        return device::lstm_back(dev, (h, n), storage, gg, cx, cy, grad_output, grad_output_cell, gcx);
    }
    lstm_grad_host(
        (h, n),
        native_view(storage)?,
        native_tensor(grad_in_gates)?,
        (native_view(cx)?, native_view(cy)?),
        native_view(grad_output)?,
        native_view(grad_output_cell)?,
        native_tensor(grad_input_cx)?,
    )
}

fn lstm_grad_host<T: NnReal>(
    (h, n): (usize, usize),
    storage: &View<T>,
    grad_in_gates: &Tensor<T>,
    (cx, cy): (&View<T>, &View<T>),
    grad_output: &View<T>,
    grad_output_cell: &View<T>,
    grad_input_cx: &Tensor<T>,
) -> Result<()> {
    let rows = n.checked_div(h).unwrap_or(0);
    let mut gg_out = Out::new(grad_in_gates, &gates_shape(&grad_output.sizes, 4))?;
    let mut gcx_out = Out::new(grad_input_cx, &grad_output.sizes)?;
    let outs = [gg_out.view(), gcx_out.view()];
    let st = buf::read(storage, &outs)?;
    let (c0, c1) = (buf::read(cx, &outs)?, buf::read(cy, &outs)?);
    let (go, goc) = (buf::read(grad_output, &outs)?, buf::read(grad_output_cell, &outs)?);
    let one = T::one();
    par_rows([gg_out.as_mut(), gcx_out.as_mut()], [4 * h, h], rows, n * 30, |r, [gg, gcx]| {
        let s = &st[4 * h * r..4 * h * (r + 1)];
        let (lo, hi) = (h * r, h * (r + 1));
        let (c0, c1, go, goc) = (&c0[lo..hi], &c1[lo..hi], &go[lo..hi], &goc[lo..hi]);
        for i in 0..h {
            let (ig, fg, cg, og) = (s[i], s[h + i], s[2 * h + i], s[3 * h + i]);
            let t = c1[i].tanh();
            let gc = go[i] * og * (one - t * t) + goc[i];
            gg[i] = gc * cg * (one - ig) * ig;
            gg[h + i] = gc * c0[i] * (one - fg) * fg;
            gg[2 * h + i] = gc * ig * (one - cg * cg);
            gg[3 * h + i] = go[i] * t * (one - og) * og;
            gcx[i] = gc * fg;
        }
    })?;
    gg_out.finish()?;
    gcx_out.finish()
}
