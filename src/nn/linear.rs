//! Linear: `output = input @ weight^T + bias` for a vector (1-D) or a batch of rows (2-D), with
//! `weight` (outputSize x inputSize) and an optional `bias` (outputSize), through the library's
//! GEMM. torch7's `addBuffer` (a column of ones it multiplies the bias by) is resized to the
//! batch size and filled with ones as torch7 does, but th adds the bias directly.

use super::NnReal;
use super::buf::{self, Grads, Mat, Out};
use super::check;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};

/// The shape facts of a call: rows (1 for a vector), input and output sizes.
struct Dims {
    rows: usize,
    n_in: usize,
    n_out: usize,
}

/// Checks `input` (argument 2), `weight` (argument `w_arg`) and `bias` (`bias_arg`).
fn dims<T: NnReal>(
    input: &View<T>,
    weight: &View<T>,
    w_arg: u32,
    bias: Option<&View<T>>,
    bias_arg: u32,
) -> Result<Dims> {
    check::dims(input, 2, "input", &[1, 2])?;
    check::dims(weight, w_arg, "weight", &[2])?;
    let (n_out, n_in) = (weight.sizes[0] as usize, weight.sizes[1] as usize);
    let last = *input.sizes.last().unwrap_or(&0) as usize;
    if last != n_in {
        return Err(check::size_err(
            2,
            "input",
            format_args!("expected {n_in} features (weight is {}), got {}", weight.desc(), input.desc()),
        ));
    }
    if let Some(b) = bias {
        check::numel(b, bias_arg, "bias", n_out)?;
    }
    let rows = if input.ndim() == 2 { input.sizes[0] as usize } else { 1 };
    Ok(Dims { rows, n_in, n_out })
}

/// The output's shape: `[n_out]` for a vector, `[rows, n_out]` for a batch.
fn out_shape<T: NnReal>(input: &View<T>, d: &Dims) -> Vec<i64> {
    if input.ndim() == 1 { vec![d.n_out as i64] } else { vec![d.rows as i64, d.n_out as i64] }
}

/// torch7's addBuffer: `rows` ones (left alone when it already holds `rows` elements).
fn add_buffer<T: NnReal>(add_buffer: Option<&Tensor<T>>, input: &View<T>, rows: usize) -> Result<()> {
    match add_buffer {
        Some(ab) if input.ndim() == 2 && ab.view().numel() != rows => {
            let mut o = Out::new(ab, &[rows as i64])?;
            o.as_mut().fill(T::one());
            o.finish()
        }
        _ => Ok(()),
    }
}

/// `Linear_updateOutput(state, input, output, weight, bias, addBuffer)`.
pub fn update_output<T: NnReal>(
    input: &View<T>,
    output: &Tensor<T>,
    weight: &View<T>,
    bias: Option<&View<T>>,
    add_buf: Option<&Tensor<T>>,
) -> Result<()> {
    let d = dims(input, weight, 4, bias, 5)?;
    let mut out = Out::new(output, &out_shape(input, &d))?;
    let x = buf::read(input, &[out.view()])?;
    let w = buf::read(weight, &[out.view()])?;
    let b = bias.map(|b| buf::read(b, &[out.view()])).transpose()?;
    let o = out.as_mut();
    let beta = match &b {
        Some(b) => {
            for row in o.chunks_mut(d.n_out) {
                row.copy_from_slice(b);
            }
            T::one()
        }
        None => T::zero(),
    };
    buf::gemm(d.rows, d.n_out, d.n_in, T::one(), Mat::n(&x, d.n_in), Mat::t(&w, d.n_in), beta, o, d.n_out)?;
    out.finish()?;
    add_buffer(add_buf, input, d.rows)
}

/// `Linear_updateGradInput(state, input, gradOutput, gradInput, weight)`: `gradInput =
/// gradOutput @ weight`, shaped like `input` (nothing when `gradInput` is NULL).
pub fn update_grad_input<T: NnReal>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: Option<&Tensor<T>>,
    weight: &View<T>,
) -> Result<()> {
    let d = dims(input, weight, 5, None, 0)?;
    check::shape(grad_output, 3, "gradOutput", &out_shape(input, &d))?;
    let Some(gi) = grad_input else { return Ok(()) };
    let mut out = Out::new(gi, &input.sizes)?;
    let g = buf::read(grad_output, &[out.view()])?;
    let w = buf::read(weight, &[out.view()])?;
    buf::gemm(
        d.rows,
        d.n_in,
        d.n_out,
        T::one(),
        Mat::n(&g, d.n_out),
        Mat::n(&w, d.n_in),
        T::zero(),
        out.as_mut(),
        d.n_in,
    )?;
    out.finish()
}

/// `Linear_accGradParameters(state, input, gradOutput, gradInput, weight, bias, gradWeight,
/// gradBias, addBuffer, scale)`: `gradWeight += scale * gradOutput^T @ input`, `gradBias +=
/// scale * (column sums of gradOutput)` (when `bias` is given).
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn acc_grad_parameters<T: NnReal>(
    input: &View<T>,
    grad_output: &View<T>,
    weight: &View<T>,
    bias: Option<&View<T>>,
    grad_weight: &Tensor<T>,
    grad_bias: Option<&Tensor<T>>,
    add_buf: Option<&Tensor<T>>,
    scale: f64,
) -> Result<()> {
    let d = dims(input, weight, 5, bias, 6)?;
    check::shape(grad_output, 3, "gradOutput", &out_shape(input, &d))?;
    let grad_bias = match (bias, grad_bias) {
        (Some(_), None) => return Err(crate::core::error::Error::null(8, "gradBias")),
        (Some(_), Some(gb)) => Some(gb),
        (None, _) => None,
    };
    let mut grads = Grads::new(grad_weight, d.n_out * d.n_in, grad_bias, d.n_out, 7)?;
    let scale = T::from_f64(scale);
    let outs = grads.views();
    let x = buf::read(input, &outs)?;
    let g = buf::read(grad_output, &outs)?;
    buf::gemm(
        d.n_out,
        d.n_in,
        d.rows,
        scale,
        Mat::t(&g, d.n_out),
        Mat::n(&x, d.n_in),
        T::one(),
        grads.w.as_mut(),
        d.n_in,
    )?;
    if let Some(gb) = &mut grads.b {
        buf::add_rows(gb.as_mut(), &g, scale);
    }
    grads.finish()?;
    add_buffer(add_buf, input, d.rows)
}
