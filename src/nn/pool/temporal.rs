//! TemporalMaxPooling: max over windows of `kW` frames (stride `dW`) of a sequence `T x F` or
//! `N x T x F`, each feature separately; `T' = (T - kW) / dW + 1` frames out, as PyTorch's
//! `max_pool1d` over the transposed `N x F x T` input. `indices` holds the 0-based frame of each
//! max in the input (torch7 stored the offset within the window).

use super::device::{self, Layout};
use super::{Planes, Windows, on_device};
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::nn::buf::{self, Out};
use crate::nn::check;
use crate::nn::{NnElem, NnReal, native_tensor, native_view};

/// `(batch, frames in, frames out, features)` after the checks (`kW`, `dW` at arguments
/// `arg_k`, `arg_k + 1`).
fn dims<T: crate::Scalar>(input: &View<T>, kw: i32, dw: i32, arg_k: u32) -> Result<(usize, usize, usize, usize)> {
    check::positive(kw as i64, arg_k, "kW")?;
    check::positive(dw as i64, arg_k + 1, "dW")?;
    check::dims(input, 2, "input", &[2, 3])?;
    let s = &input.sizes[input.ndim() - 2..];
    let (t, f) = (s[0] as usize, s[1] as usize);
    if t < kw as usize {
        return Err(check::size_err(
            2,
            "input",
            format_args!("input sequence length ({t}) smaller than kW ({kw}) ({})", input.desc()),
        ));
    }
    let n = if input.ndim() == 3 { input.sizes[0] as usize } else { 1 };
    Ok((n, t, (t - kw as usize) / dw as usize + 1, f))
}

fn out_shape<T: crate::Scalar>(input: &View<T>, to: usize, f: usize) -> Vec<i64> {
    let mut s = input.sizes.clone();
    let nd = s.len();
    s[nd - 2] = to as i64;
    s[nd - 1] = f as i64;
    s
}

/// `TemporalMaxPooling_updateOutput(input, output, indices, kW, dW)`. On the device: the max
/// pooling kernel with the features as planes and the frames as the pooled axis.
pub fn update_output<T: NnElem>(
    input: &View<T>,
    output: &Tensor<T>,
    indices: &Tensor<i64>,
    kw: i32,
    dw: i32,
) -> Result<()> {
    if on_device(&[input.device(), output.with_view(|v| v.device()), indices.with_view(|v| v.device())])? {
        let (n, ti, to, f) = dims(input, kw, dw, 5)?;
        let pl = Planes { nd: 1, batched: input.ndim() == 3, n, c: f, size: [1, 1, ti] };
        let one = || Windows { start: vec![0], count: vec![1], step: 1 };
        let frames =
            Windows { start: (0..to).map(|t| t * dw as usize).collect(), count: vec![kw as usize; to], step: 1 };
        let shape = out_shape(input, to, f);
        return device::max_forward(
            input,
            output,
            indices,
            Layout::Lines,
            &pl,
            &shape,
            &[[one(), one(), frames]],
            [1; 3],
        );
    }
    host_update_output(native_view(input)?, native_tensor(output)?, indices, kw, dw)
}

fn host_update_output<T: NnReal>(
    input: &View<T>,
    output: &Tensor<T>,
    indices: &Tensor<i64>,
    kw: i32,
    dw: i32,
) -> Result<()> {
    let (n, ti, to, f) = dims(input, kw, dw, 5)?;
    let shape = out_shape(input, to, f);
    let mut out = Out::new(output, &shape)?;
    let mut ind = Out::new(indices, &shape)?;
    let x = buf::read(input, &[out.view()])?;
    let (kw, dw) = (kw as usize, dw as usize);
    let _ = n;
    super::par_planes2(out.as_mut(), ind.as_mut(), to * f, to * f * kw, |b, o, id| {
        let xb = &x[b * ti * f..(b + 1) * ti * f];
        for (t, (orow, irow)) in o.chunks_mut(f.max(1)).zip(id.chunks_mut(f.max(1))).enumerate() {
            let t0 = t * dw;
            orow.copy_from_slice(&xb[t0 * f..(t0 + 1) * f]);
            irow.fill(t0 as i64);
            for s in t0 + 1..t0 + kw {
                for ((m, i), &v) in orow.iter_mut().zip(irow.iter_mut()).zip(&xb[s * f..(s + 1) * f]) {
                    if v > *m || v.is_nan() {
                        *m = v;
                        *i = s as i64;
                    }
                }
            }
        }
    });
    out.finish()?;
    ind.finish()
}

/// `TemporalMaxPooling_updateGradInput(input, gradOutput, gradInput, indices, kW, dW)`: each
/// `gradOutput` element added to `gradInput` at its feature in frame `indices` (which must lie
/// in the input). On the device: a zero fill and the device's `scatterAdd` along the frames.
pub fn update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    indices: &View<i64>,
    kw: i32,
    dw: i32,
) -> Result<()> {
    if on_device(&[input.device(), grad_output.device(), grad_input.with_view(|v| v.device()), indices.device()])? {
        let (n, ti, to, f) = dims(input, kw, dw, 6)?;
        let shape = out_shape(input, to, f);
        check::shape(grad_output, 3, "gradOutput", &shape)?;
        check::shape(indices, 5, "indices", &shape)?;
        let (n, ti, to, f) = (n as i64, ti as i64, to as i64, f as i64);
        return device::temporal_backward(input, grad_output, grad_input, indices, [n, ti, f], [n, to, f]);
    }
    host_update_grad_input(native_view(input)?, native_view(grad_output)?, native_tensor(grad_input)?, indices, kw, dw)
}

fn host_update_grad_input<T: NnReal>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    indices: &View<i64>,
    kw: i32,
    dw: i32,
) -> Result<()> {
    let (_, ti, to, f) = dims(input, kw, dw, 6)?;
    let shape = out_shape(input, to, f);
    check::shape(grad_output, 3, "gradOutput", &shape)?;
    check::shape(indices, 5, "indices", &shape)?;
    let ind = buf::read(indices, &[])?;
    check::indices(&ind, 5, "indices", 0, ti as i64, None)?;
    let mut gi = Out::new(grad_input, &input.sizes)?;
    let go = buf::read(grad_output, &[gi.view()])?;
    let olen = to * f;
    super::par_planes(gi.as_mut(), ti * f, ti * f + olen, |b, g| {
        g.fill(T::zero());
        let (gb, ib) = (&go[b * olen..(b + 1) * olen], &ind[b * olen..(b + 1) * olen]);
        for (grow, irow) in gb.chunks(f.max(1)).zip(ib.chunks(f.max(1))) {
            for (j, (&v, &i)) in grow.iter().zip(irow).enumerate() {
                g[i as usize * f + j] += v;
            }
        }
    });
    gi.finish()
}
