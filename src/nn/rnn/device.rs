//! The device half of the fused GRU and LSTM cells: one kernel launch per pass
//! (`kernels/nn_rnn.cuh`), one thread per state element computing its unit's gates, the host's
//! formulas operation for operation. The kernels take contiguous operands: a strided one is
//! copied first, and an output that is strided or shares memory with an input is written to a
//! temporary and copied back.

use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::cuda::launch::device_base;
use crate::cuda::nn::rnn::{THCRnn, launch};
use crate::cuda::runtime;
use crate::nn::NnElem;
use crate::ops;

/// `v`'s elements as a contiguous view on its device: itself or a copy.
fn dense<T: NnElem>(v: &View<T>) -> Result<View<T>> {
    if v.is_contiguous() {
        return Ok(v.clone());
    }
    let c = ops::temp_like(v, &v.sizes)?;
    ops::copy::copy(&c, v)?;
    Ok(c)
}

/// An output resized to `sizes`, and where the kernel writes it: itself, or a contiguous
/// temporary when it is strided or shares memory with one of `inputs`.
struct Written<T: NnElem> {
    out: View<T>,
    at: View<T>,
}

impl<T: NnElem> Written<T> {
    fn new(t: &Tensor<T>, sizes: &[i64], inputs: &[&View<T>]) -> Result<Self> {
        let out = ops::resize_out(t, sizes)?;
        let at = if out.is_contiguous() && !inputs.iter().any(|v| v.same_storage(&out)) {
            out.clone()
        } else {
            ops::temp_like(&out, sizes)?
        };
        Ok(Written { out, at })
    }

    fn addr(&self) -> Result<u64> {
        device_base(&self.at)
    }

    fn finish(self) -> Result<()> {
        if self.at.same_storage(&self.out) { Ok(()) } else { ops::copy::copy(&self.out, &self.at) }
    }
}

fn addr<T: NnElem>(v: &View<T>) -> Result<u64> {
    device_base(v)
}

fn bias_addr<T: NnElem>(b: Option<&View<T>>) -> Result<(Option<View<T>>, u64)> {
    match b {
        Some(v) => {
            let d = dense(v)?;
            let a = addr(&d)?;
            Ok((Some(d), a))
        }
        None => Ok((None, 0)),
    }
}

/// Runs kernel `op` on device `dev` for `n` state elements of hidden size `h`.
fn run<T: NnElem>(dev: i32, op: &str, n: usize, h: usize, p: [u64; 7]) -> Result<()> {
    let d = runtime::device(dev)?;
    // SAFETY: every address comes from `device_base` of a contiguous view on this device holding
    // the elements the kernel touches (the callers checked the element counts against n and h);
    // written operands are fresh or private (`Written`), LSTM's gates rewritten in place by the
    // thread that reads them.
    unsafe { launch::<T>(d, op, THCRnn { n: n as i64, h: h as i64, p }) }
}

/// GRU's forward (checked by the caller: `n` state elements of hidden size `h`).
#[allow(clippy::too_many_arguments)] // torch7's operands
pub(super) fn gru<T: NnElem>(
    dev: i32,
    (h, n): (usize, usize),
    input: &View<T>,
    hidden: &View<T>,
    bias1: Option<&View<T>>,
    bias2: Option<&View<T>>,
    hx: &View<T>,
    hy: &Tensor<T>,
    storage: &Tensor<T>,
) -> Result<()> {
    let (x, hid, prev) = (dense(input)?, dense(hidden)?, dense(hx)?);
    let (b1, a1) = bias_addr(bias1)?;
    let (b2, a2) = bias_addr(bias2)?;
    let mut inputs = vec![&x, &hid, &prev];
    inputs.extend(b1.iter().chain(&b2));
    let y = Written::new(hy, &hx.sizes, &inputs)?;
    let st = Written::new(storage, &super::gates_shape(&hx.sizes, 5), &inputs)?;
    run::<T>(dev, "rnnGru", n, h, [addr(&x)?, addr(&hid)?, a1, a2, addr(&prev)?, y.addr()?, st.addr()?])?;
    y.finish()?;
    st.finish()
}

/// GRU's backward (checked by the caller).
pub(super) fn gru_back<T: NnElem>(
    dev: i32,
    (h, n): (usize, usize),
    grad_in_input: &Tensor<T>,
    grad_in_hidden: &Tensor<T>,
    grad_output: &View<T>,
    grad_input_hx: &Tensor<T>,
    storage: &View<T>,
) -> Result<()> {
    let (go, st) = (dense(grad_output)?, dense(storage)?);
    let gshape = super::gates_shape(&grad_output.sizes, 3);
    let inputs = [&go, &st];
    let gi = Written::new(grad_in_input, &gshape, &inputs)?;
    let gh = Written::new(grad_in_hidden, &gshape, &inputs)?;
    let ghx = Written::new(grad_input_hx, &grad_output.sizes, &inputs)?;
    run::<T>(dev, "rnnGruBack", n, h, [gi.addr()?, gh.addr()?, addr(&go)?, ghx.addr()?, addr(&st)?, 0, 0])?;
    gi.finish()?;
    gh.finish()?;
    ghx.finish()
}

/// LSTM's forward (checked by the caller); `input` is rewritten with the activated gates.
#[allow(clippy::too_many_arguments)] // torch7's operands
pub(super) fn lstm<T: NnElem>(
    dev: i32,
    (h, n): (usize, usize),
    input: &Tensor<T>,
    hidden: &View<T>,
    bias1: Option<&View<T>>,
    bias2: Option<&View<T>>,
    cx: &View<T>,
    hy: &Tensor<T>,
    cy: &Tensor<T>,
) -> Result<()> {
    let xv = input.view();
    let gates = dense(&xv)?;
    let (hid, c) = (dense(hidden)?, dense(cx)?);
    let (b1, a1) = bias_addr(bias1)?;
    let (b2, a2) = bias_addr(bias2)?;
    let mut inputs = vec![&gates, &hid, &c];
    inputs.extend(b1.iter().chain(&b2));
    let y = Written::new(hy, &cx.sizes, &inputs)?;
    let cn = Written::new(cy, &cx.sizes, &inputs)?;
    run::<T>(dev, "rnnLstm", n, h, [addr(&gates)?, addr(&hid)?, a1, a2, addr(&c)?, y.addr()?, cn.addr()?])?;
    if !gates.same_storage(&xv) {
        ops::copy::copy(&xv, &gates)?;
    }
    y.finish()?;
    cn.finish()
}

/// LSTM's backward (checked by the caller).
#[allow(clippy::too_many_arguments)] // torch7's operands
pub(super) fn lstm_back<T: NnElem>(
    dev: i32,
    (h, n): (usize, usize),
    storage: &View<T>,
    grad_in_gates: &Tensor<T>,
    cx: &View<T>,
    cy: &View<T>,
    grad_output: &View<T>,
    grad_output_cell: &View<T>,
    grad_input_cx: &Tensor<T>,
) -> Result<()> {
    let (st, c0, c1) = (dense(storage)?, dense(cx)?, dense(cy)?);
    let (go, goc) = (dense(grad_output)?, dense(grad_output_cell)?);
    let inputs = [&st, &c0, &c1, &go, &goc];
    let gg = Written::new(grad_in_gates, &super::gates_shape(&grad_output.sizes, 4), &inputs)?;
    let gcx = Written::new(grad_input_cx, &grad_output.sizes, &inputs)?;
    let p = [addr(&st)?, gg.addr()?, addr(&c0)?, addr(&c1)?, addr(&go)?, addr(&goc)?, gcx.addr()?];
    run::<T>(dev, "rnnLstmBack", n, h, p)?;
    gg.finish()?;
    gcx.finish()
}
