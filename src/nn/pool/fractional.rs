//! SpatialFractionalMaxPooling and VolumetricFractionalMaxPooling (Graham's fractional max
//! pooling) with caller-given samples, as PyTorch's `fractional_max_pool2d/3d(...,
//! _random_samples=)`: each plane has one sample `u` in [0, 1) per pooled axis, and output `o`
//! of an axis of `n` inputs pooled to `m` with windows of `k` starts at `floor((o + u) * a) -
//! floor(u * a)` with `a = (n - k) / (m - 1)` (computed in the element type), the last window
//! at `n - k`.
//!
//! Layout and sample order follow PyTorch: planes are `H x W` with samples `(w, h)`, or `T x H x
//! W` with samples `(t, h, w)`; `randomSamples` is `N x C x 2` (or 3), `N = 1` for an unbatched
//! input. torch7's volumetric module read its input as `H x W x T` and its samples as `(t, w,
//! h)`; th uses the layout of the other volumetric modules.

use super::device::{self, Layout};
use super::{Planes, Windows, max_forward, on_device, scatter_backward};
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::nn::buf;
use crate::nn::check;
use crate::nn::{NnElem, NnReal, native_tensor, native_view};

/// Output and pool sizes as the caller gave them (C order `[T,] W, H`), with the argument
/// number of the first output size.
#[derive(Clone, Debug)]
pub struct Frac {
    nd: usize,
    out: [i64; 3],
    pool: [i64; 3],
    arg0: u32,
}

impl Frac {
    /// Spatial: `outputW, outputH, poolSizeW, poolSizeH`, `outputW` being argument `arg0`.
    pub fn spatial(ow: i32, oh: i32, pw: i32, ph: i32, arg0: u32) -> Frac {
        Frac { nd: 2, out: [1, oh as i64, ow as i64], pool: [1, ph as i64, pw as i64], arg0 }
    }

    /// Volumetric: `outputT, outputW, outputH, poolSizeT, poolSizeW, poolSizeH`.
    pub fn volumetric(o: [i32; 3], p: [i32; 3], arg0: u32) -> Frac {
        let r = |v: [i32; 3]| [v[0] as i64, v[2] as i64, v[1] as i64];
        Frac { nd: 3, out: r(o), pool: r(p), arg0 }
    }

    /// Argument number and name of `group` (0 output size, 1 pool size) of axis `a` (T, H, W).
    fn arg(&self, group: usize, a: usize) -> (u32, String) {
        super::axis_arg(self.nd, self.arg0, group, a, ["output", "poolSize"][group])
    }

    /// Checks the sizes against the input's planes; the output plane size.
    fn check(&self, pl: &Planes) -> Result<[usize; 3]> {
        let axes = 3 - self.nd..3;
        for g in 0..2 {
            for a in axes.clone() {
                let (arg, name) = self.arg(g, a);
                check::positive([self.out, self.pool][g][a], arg, &name)?;
            }
        }
        for a in axes {
            if self.out[a] + self.pool[a] - 1 > pl.size[a] as i64 {
                let (arg, name) = self.arg(1, a);
                return Err(check::invalid(
                    arg,
                    &name,
                    format_args!(
                        "{name} ({}) too large for {} outputs from an input of size {}",
                        self.pool[a], self.out[a], pl.size[a]
                    ),
                ));
            }
        }
        Ok([self.out[0] as usize, self.out[1] as usize, self.out[2] as usize])
    }
}

/// The windows of `m` outputs of `k` positions over `n` inputs for sample `u`.
fn windows<T: NnReal>(u: T, n: usize, m: usize, k: usize) -> Windows {
    let last = n - k;
    let mut start = vec![last; m];
    if m > 1 {
        let alpha = T::from_f64((n - k) as f64) / T::from_f64((m - 1) as f64);
        let base = (u * alpha).to_f64() as i64;
        for (o, s) in start.iter_mut().take(m - 1).enumerate() {
            let v = ((T::from_f64(o as f64) + u) * alpha).to_f64() as i64 - base;
            *s = v.clamp(0, last as i64) as usize;
        }
    }
    Windows { start, count: vec![k; m], step: 1 }
}

/// `*FractionalMaxPooling_updateOutput`: the max of each window and its 0-based offset in the
/// input plane. Arguments: input 2, output 3, sizes from 4, then indices and randomSamples. On
/// the device: `device::max_forward` with each plane's windows (the samples read back to the
/// host, the windows computed there in the compute type as the host computes them).
pub fn update_output<T: NnElem>(
    input: &View<T>,
    output: &Tensor<T>,
    f: &Frac,
    indices: &Tensor<i64>,
    samples: &View<T>,
) -> Result<()> {
    let devs = [input.device(), output.with_view(|v| v.device()), indices.with_view(|v| v.device()), samples.device()];
    if on_device(&devs)? {
        let pl = Planes::of(input, f.nd, 2, "input")?;
        let osz = f.check(&pl)?;
        let s_arg = f.arg0 + 2 * f.nd as u32 + 1;
        check::shape(samples, s_arg, "randomSamples", &[pl.n as i64, pl.c as i64, f.nd as i64])?;
        let u: Vec<T::R> = crate::ops::copy::values(samples)?.into_iter().map(|v| v.to_r()).collect();
        samples_in_range(&u, s_arg)?;
        let k = [f.pool[0] as usize, f.pool[1] as usize, f.pool[2] as usize];
        let w: Vec<[Windows; 3]> = u
            .chunks(f.nd)
            .map(|up| {
                let us = if f.nd == 2 {
                    [<T::R as crate::ops::num::Num>::zero(), up[1], up[0]]
                } else {
                    [up[0], up[1], up[2]]
                };
                std::array::from_fn(|a| windows(us[a], pl.size[a], osz[a], k[a]))
            })
            .collect();
        return device::max_forward(input, output, indices, Layout::of(&pl), &pl, &pl.shape(osz), &w, [1; 3]);
    }
    host_update_output(native_view(input)?, native_tensor(output)?, f, indices, native_view(samples)?)
}

/// Every sample lies in [0, 1) (error on `randomSamples`, argument `s_arg`).
fn samples_in_range<T: NnReal>(u: &[T], s_arg: u32) -> Result<()> {
    if let Some((i, v)) = u.iter().enumerate().find(|(_, v)| !(v.to_f64() >= 0.0 && v.to_f64() < 1.0)) {
        return Err(check::invalid(
            s_arg,
            "randomSamples",
            format_args!("element {i} is {}, expected a value in [0, 1)", v.to_f64()),
        ));
    }
    Ok(())
}

fn host_update_output<T: NnReal>(
    input: &View<T>,
    output: &Tensor<T>,
    f: &Frac,
    indices: &Tensor<i64>,
    samples: &View<T>,
) -> Result<()> {
    let pl = Planes::of(input, f.nd, 2, "input")?;
    let osz = f.check(&pl)?;
    let s_arg = f.arg0 + 2 * f.nd as u32 + 1;
    check::shape(samples, s_arg, "randomSamples", &[pl.n as i64, pl.c as i64, f.nd as i64])?;
    let u = buf::read(samples, &[])?;
    samples_in_range(&u, s_arg)?;
    let (hw, iw) = (pl.size[1] * pl.size[2], pl.size[2]);
    let k = [f.pool[0] as usize, f.pool[1] as usize, f.pool[2] as usize];
    let work = osz.iter().product::<usize>() * k.iter().product::<usize>();
    max_forward(input, output, indices, &pl, osz, work, |p, xp, out| {
        let up = &u[p * f.nd..(p + 1) * f.nd];
        // samples (w, h) or (t, h, w) -> axes T, H, W
        let us = if f.nd == 2 { [T::zero(), up[1], up[0]] } else { [up[0], up[1], up[2]] };
        let w: Vec<Windows> = (0..3).map(|a| windows(us[a], pl.size[a], osz[a], k[a])).collect();
        for &ts in &w[0].start {
            for &hs in &w[1].start {
                for &ws in &w[2].start {
                    let pos = (ts..ts + k[0]).flat_map(|t| {
                        (hs..hs + k[1]).flat_map(move |h| t * hw + h * iw + ws..t * hw + h * iw + ws + k[2])
                    });
                    out.push(super::first_max(xp, pos));
                }
            }
        }
    })
}

/// `*FractionalMaxPooling_updateGradInput`: each `gradOutput` element added at its `indices`
/// offset of `gradInput` (shaped like `input`). Arguments: input 2, gradOutput 3, gradInput 4,
/// sizes from 5, then indices.
pub fn update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    f: &Frac,
    indices: &View<i64>,
) -> Result<()> {
    let pl = Planes::of(input, f.nd, 2, "input")?;
    let osz = f.check(&pl)?;
    scatter_backward(input, &pl, grad_output, grad_input, indices, osz, (3, f.arg0 + 2 * f.nd as u32))
}
