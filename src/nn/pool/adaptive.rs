//! SpatialAdaptiveMaxPooling and SpatialAdaptiveAveragePooling: output `o` of an axis of `n`
//! inputs pooled to `m` covers the inputs `floor(o * n / m) .. ceil((o + 1) * n / m)` (integer
//! arithmetic, as PyTorch; torch7 computed the bounds in float).

use super::device::{self, Layout};
use super::{Planes, Windows, max_forward, on_device, scatter_backward};
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::nn::buf::{self, Out};
use crate::nn::check;
use crate::nn::{NnElem, NnReal, native_tensor, native_view};

/// The windows of `m` outputs over `n` inputs.
fn windows(n: usize, m: usize) -> Windows {
    let start: Vec<usize> = (0..m).map(|o| o * n / m).collect();
    let count = (0..m).map(|o| ((o + 1) * n).div_ceil(m) - start[o]).collect();
    Windows { start, count, step: 1 }
}

/// The output plane size `[1, oheight, owidth]` after checking them (arguments `arg_w`,
/// `arg_w + 1`).
fn out_size(owidth: i32, oheight: i32, arg_w: u32) -> Result<[usize; 3]> {
    check::positive(owidth as i64, arg_w, "owidth")?;
    check::positive(oheight as i64, arg_w + 1, "oheight")?;
    Ok([1, oheight as usize, owidth as usize])
}

/// The output plane size given by `gradOutput` (argument 3), which must have `pl`'s batch and
/// planes.
fn grad_size<T: crate::Scalar>(pl: &Planes, grad_output: &View<T>) -> Result<[usize; 3]> {
    let g = Planes::of(grad_output, 2, 3, "gradOutput")?;
    if g.batched != pl.batched || g.n != pl.n || g.c != pl.c {
        return Err(check::size_err(
            3,
            "gradOutput",
            format_args!(
                "expected {} planes{}, got {}",
                pl.c,
                if pl.batched { format!(" in a batch of {}", pl.n) } else { String::new() },
                grad_output.desc()
            ),
        ));
    }
    Ok(g.size)
}

/// `SpatialAdaptiveMaxPooling_updateOutput(input, output, indices, owidth, oheight)`: the max of
/// each window and its 0-based offset in the input plane (`h * W + w`).
pub fn max_update_output<T: NnElem>(
    input: &View<T>,
    output: &Tensor<T>,
    indices: &Tensor<i64>,
    owidth: i32,
    oheight: i32,
) -> Result<()> {
    if on_device(&[input.device(), output.with_view(|v| v.device()), indices.with_view(|v| v.device())])? {
        let pl = Planes::of(input, 2, 2, "input")?;
        super::nonempty(&pl, input)?;
        let osz = out_size(owidth, oheight, 5)?;
        let w = all_windows(&pl, osz);
        return device::max_forward(input, output, indices, Layout::of(&pl), &pl, &pl.shape(osz), &[w], [1; 3]);
    }
    host_max_update_output(native_view(input)?, native_tensor(output)?, indices, owidth, oheight)
}

/// The windows of each axis (T, H, W) from `pl`'s planes to `osz`.
fn all_windows(pl: &Planes, osz: [usize; 3]) -> [Windows; 3] {
    [windows(1, 1), windows(pl.size[1], osz[1]), windows(pl.size[2], osz[2])]
}

fn host_max_update_output<T: NnReal>(
    input: &View<T>,
    output: &Tensor<T>,
    indices: &Tensor<i64>,
    owidth: i32,
    oheight: i32,
) -> Result<()> {
    let pl = Planes::of(input, 2, 2, "input")?;
    super::nonempty(&pl, input)?;
    let osz = out_size(owidth, oheight, 5)?;
    let (wh, ww) = (windows(pl.size[1], osz[1]), windows(pl.size[2], osz[2]));
    let (work, iw) = (pl.len() + osz[1] * osz[2], pl.size[2]);
    max_forward(input, output, indices, &pl, osz, work, |_, xp, out| {
        for (&hs, &hn) in wh.start.iter().zip(&wh.count) {
            for (&ws, &wn) in ww.start.iter().zip(&ww.count) {
                let pos = (hs..hs + hn).flat_map(|h| h * iw + ws..h * iw + ws + wn);
                out.push(super::first_max(xp, pos));
            }
        }
    })
}

/// `SpatialAdaptiveMaxPooling_updateGradInput(input, gradOutput, gradInput, indices)`: each
/// `gradOutput` element added at its `indices` offset of `gradInput` (shaped like `input`).
pub fn max_update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    indices: &View<i64>,
) -> Result<()> {
    let pl = Planes::of(input, 2, 2, "input")?;
    super::nonempty(&pl, input)?;
    let osz = grad_size(&pl, grad_output)?;
    scatter_backward(input, &pl, grad_output, grad_input, indices, osz, (3, 5))
}

/// `SpatialAdaptiveAveragePooling_updateOutput(input, output, owidth, oheight)`: the mean of
/// each window.
pub fn avg_update_output<T: NnElem>(input: &View<T>, output: &Tensor<T>, owidth: i32, oheight: i32) -> Result<()> {
    if on_device(&[input.device(), output.with_view(|v| v.device())])? {
        let pl = Planes::of(input, 2, 2, "input")?;
        super::nonempty(&pl, input)?;
        let osz = out_size(owidth, oheight, 4)?;
        let w = all_windows(&pl, osz);
        let div = [w[0].count.clone(), w[1].count.clone(), w[2].count.clone()];
        let shape = pl.shape(osz);
        return device::avg_forward("poolAvg", input, output, Layout::of(&pl), &pl, &shape, &w, &div, 0.0);
    }
    host_avg_update_output(native_view(input)?, native_tensor(output)?, owidth, oheight)
}

fn host_avg_update_output<T: NnReal>(input: &View<T>, output: &Tensor<T>, owidth: i32, oheight: i32) -> Result<()> {
    let pl = Planes::of(input, 2, 2, "input")?;
    super::nonempty(&pl, input)?;
    let osz = out_size(owidth, oheight, 4)?;
    let (wh, ww) = (windows(pl.size[1], osz[1]), windows(pl.size[2], osz[2]));
    let mut out = Out::new(output, &pl.shape(osz))?;
    let x = buf::read(input, &[out.view()])?;
    let (ilen, olen, iw) = (pl.len(), osz[1] * osz[2], pl.size[2]);
    super::par_planes(out.as_mut(), olen, ilen + olen, |p, o| {
        let xp = &x[p * ilen..(p + 1) * ilen];
        let mut q = 0;
        for (&hs, &hn) in wh.start.iter().zip(&wh.count) {
            for (&ws, &wn) in ww.start.iter().zip(&ww.count) {
                let mut s = T::zero();
                for h in hs..hs + hn {
                    for &v in &xp[h * iw + ws..h * iw + ws + wn] {
                        s += v;
                    }
                }
                o[q] = s / T::from_f64((hn * wn) as f64);
                q += 1;
            }
        }
    });
    out.finish()
}

/// `SpatialAdaptiveAveragePooling_updateGradInput(input, gradOutput, gradInput)`: each
/// `gradOutput` element divided by its window's size and added over the window.
pub fn avg_update_grad_input<T: NnElem>(input: &View<T>, grad_output: &View<T>, grad_input: &Tensor<T>) -> Result<()> {
    if on_device(&[input.device(), grad_output.device(), grad_input.with_view(|v| v.device())])? {
        let pl = Planes::of(input, 2, 2, "input")?;
        super::nonempty(&pl, input)?;
        let osz = grad_size(&pl, grad_output)?;
        let w = all_windows(&pl, osz);
        let div = [w[0].count.clone(), w[1].count.clone(), w[2].count.clone()];
        let l = Layout::of(&pl);
        return device::avg_backward("poolAvgBack", grad_output, grad_input, &input.sizes, l, &pl, &w, &div, None);
    }
    host_avg_update_grad_input(native_view(input)?, native_view(grad_output)?, native_tensor(grad_input)?)
}

fn host_avg_update_grad_input<T: NnReal>(input: &View<T>, grad_output: &View<T>, grad_input: &Tensor<T>) -> Result<()> {
    let pl = Planes::of(input, 2, 2, "input")?;
    super::nonempty(&pl, input)?;
    let osz = grad_size(&pl, grad_output)?;
    let (wh, ww) = (windows(pl.size[1], osz[1]), windows(pl.size[2], osz[2]));
    let mut gi = Out::new(grad_input, &input.sizes)?;
    let go = buf::read(grad_output, &[gi.view()])?;
    let (ilen, olen, iw) = (pl.len(), osz[1] * osz[2], pl.size[2]);
    super::par_planes(gi.as_mut(), ilen, ilen + olen, |p, gp| {
        gp.fill(T::zero());
        let gop = &go[p * olen..(p + 1) * olen];
        let mut q = 0;
        for (&hs, &hn) in wh.start.iter().zip(&wh.count) {
            for (&ws, &wn) in ww.start.iter().zip(&ww.count) {
                let v = gop[q] / T::from_f64((hn * wn) as f64);
                for h in hs..hs + hn {
                    for e in &mut gp[h * iw + ws..h * iw + ws + wn] {
                        *e += v;
                    }
                }
                q += 1;
            }
        }
    });
    gi.finish()
}
