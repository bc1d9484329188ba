//! The other convolutions of torch7's THNN: TemporalConvolution (time-major 1-D convolution),
//! TemporalRowConvolution (depthwise 1-D), TemporalSubSampling and SpatialSubSampling (a
//! weighted window sum per plane), SpatialConvolutionMap and SpatialFullConvolutionMap
//! (convolutions along a connection table) and SpatialConvolutionLocal (unshared weights per
//! output location).
//!
//! Scalar integer arguments (`int`, `long` in C) arrive as `i64`. The small 1-D and 2-D kernels
//! shared by the modules are here; every module checks all of its arguments before it writes.

pub mod local;
pub mod map;
mod misc_device;
pub mod row;
pub mod subsampling;
pub mod temporal;
mod temporal_device;

use super::NnReal;
use super::buf;
use super::check;
use crate::core::dtype::Scalar;
use crate::core::error::{Error, Result};
use crate::core::tensor::View;
use crate::exec::backend::Backend;

/// Whether the operands (all on one engine, else the "same device" error) are on a device.
fn on_device(devices: &[crate::core::allocator::Device]) -> Result<bool> {
    Ok(matches!(Backend::of(devices)?, Backend::Cuda(_)))
}

/// The number of positions of a window of `k` sliding by `d` over `n` elements padded by `pad`
/// on both sides; an error about argument `arg` (`name`, the input) when the window does not
/// fit.
fn out_len(n: i64, k: i64, d: i64, pad: i64, arg: u32, name: &str, what: &str) -> Result<usize> {
    let padded = n + 2 * pad;
    if padded < k {
        return Err(check::size_err(
            arg,
            name,
            format_args!("{what} {n} (with padding {padded}) is smaller than the kernel size {k}"),
        ));
    }
    Ok(((padded - k) / d + 1) as usize)
}

/// The planes of an image input `[C, H, W]` or `[N, C, H, W]`: (batched, N, C, H, W).
fn image_dims<T: Scalar>(input: &View<T>) -> (bool, usize, usize, usize, usize) {
    let s: Vec<usize> = input.sizes.iter().map(|&x| x as usize).collect();
    match s.len() {
        4 => (true, s[0], s[1], s[2], s[3]),
        _ => (false, 1, s[0], s[1], s[2]),
    }
}

/// `[N, C, H, W]` when batched, else `[C, H, W]`.
fn image_shape(batched: bool, n: usize, c: usize, h: usize, w: usize) -> Vec<i64> {
    let mut v = vec![c as i64, h as i64, w as i64];
    if batched {
        v.insert(0, n as i64);
    }
    v
}

/// `buf::par_chunks` for a body that may fail: the first error (in no particular order) is
/// returned once every chunk has run.
fn par_try<T: Send + Sync>(
    out: &mut [T],
    len: usize,
    work: usize,
    f: impl Fn(usize, &mut [T]) -> Result<()> + Sync,
) -> Result<()> {
    let err: std::sync::Mutex<Option<Error>> = std::sync::Mutex::new(None);
    buf::par_chunks(out, len, work, |i, c| {
        if let Err(e) = f(i, c) {
            let mut g = err.lock().unwrap_or_else(|p| p.into_inner());
            g.get_or_insert(e);
        }
    });
    match err.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// `out[i] += a * x[i * step]` for every `i < out.len()` (as far as `x` reaches).
#[inline]
fn axpy_step<T: NnReal>(out: &mut [T], a: T, x: &[T], step: usize) {
    if step == 1 {
        for (o, &v) in out.iter_mut().zip(x) {
            *o += a * v;
        }
    } else {
        for (o, &v) in out.iter_mut().zip(x.iter().step_by(step)) {
            *o += a * v;
        }
    }
}

/// `out[i * step] += a * x[i]` for every `i < x.len()` (as far as `out` reaches).
#[inline]
fn scatter_step<T: NnReal>(out: &mut [T], a: T, x: &[T], step: usize) {
    if step == 1 {
        for (o, &v) in out.iter_mut().zip(x) {
            *o += a * v;
        }
    } else {
        for (o, &v) in out.iter_mut().step_by(step).zip(x) {
            *o += a * v;
        }
    }
}

/// `sum_i a[i] * b[i * step]` over `i < a.len()` (as far as `b` reaches).
#[inline]
fn dot_step<T: NnReal>(a: &[T], b: &[T], step: usize) -> T {
    if step == 1 {
        a.iter().zip(b).map(|(&x, &y)| x * y).sum()
    } else {
        a.iter().zip(b.iter().step_by(step)).map(|(&x, &y)| x * y).sum()
    }
}

/// Transposes the `rows x cols` row-major matrix `src` into `dst` (`cols x rows`).
fn transpose<T: NnReal>(src: &[T], rows: usize, cols: usize, dst: &mut [T]) {
    for (c, drow) in dst.chunks_mut(rows.max(1)).take(cols).enumerate() {
        for (r, d) in drow.iter_mut().enumerate() {
            *d = src[r * cols + c];
        }
    }
}

/// The geometry of a 2-D window: kernel `kh x kw`, strides `dh`, `dw`.
#[derive(Clone, Copy)]
struct Win {
    kh: usize,
    kw: usize,
    dh: usize,
    dw: usize,
}

/// Valid strided cross-correlation, accumulated: `out[y][x] += sum_{ky,kx} k[ky][kx] *
/// big[y*dh + ky][x*dw + kx]` for the `oh x ow` plane `out` and a `big` plane `bw` wide (it
/// must hold the rows and columns the windows reach).
fn xcorr_acc<T: NnReal>(out: &mut [T], ow: usize, big: &[T], bw: usize, k: &[T], g: Win) {
    for (y, orow) in out.chunks_mut(ow.max(1)).enumerate() {
        for ky in 0..g.kh {
            let brow = &big[(y * g.dh + ky) * bw..];
            for (kx, &w) in k[ky * g.kw..(ky + 1) * g.kw].iter().enumerate() {
                axpy_step(orow, w, &brow[kx..], g.dw);
            }
        }
    }
}

/// Full (transposed) strided convolution, accumulated: `big[y*dh + ky][x*dw + kx] += small[y][x]
/// * k[ky][kx]` for the `sh x sw` plane `small` and a `big` plane `bw` wide.
fn full_acc<T: NnReal>(big: &mut [T], bw: usize, small: &[T], sw: usize, k: &[T], g: Win) {
    for (y, srow) in small.chunks(sw.max(1)).enumerate() {
        for ky in 0..g.kh {
            let brow = &mut big[(y * g.dh + ky) * bw..];
            for (kx, &w) in k[ky * g.kw..(ky + 1) * g.kw].iter().enumerate() {
                scatter_step(&mut brow[kx..], w, srow, g.dw);
            }
        }
    }
}

/// The kernel gradient of `xcorr_acc`, accumulated: `gk[ky][kx] += alpha * sum_{y,x} small[y][x]
/// * big[y*dh + ky][x*dw + kx]` for the `sh x sw` plane `small`.
fn xcorr_grad<T: NnReal>(gk: &mut [T], small: &[T], sw: usize, big: &[T], bw: usize, g: Win, alpha: T) {
    for ky in 0..g.kh {
        for kx in 0..g.kw {
            let mut s = T::zero();
            for (y, srow) in small.chunks(sw.max(1)).enumerate() {
                s += dot_step(srow, &big[(y * g.dh + ky) * bw + kx..], g.dw);
            }
            gk[ky * g.kw + kx] += alpha * s;
        }
    }
}
