//! SpatialGridSamplerBilinear: `output[n, c, h, w]` samples `input[n, c]` bilinearly at the
//! point `grid[n, h, w] = (x, y)`, given in [-1, 1] with -1 and 1 at the centres of the corner
//! pixels (`F.grid_sample(mode='bilinear', padding_mode='zeros', align_corners=True)`); taps
//! outside the input count as zeros. Coordinates and weights are computed in f64.

use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::nn::NnReal;
use crate::nn::buf::{self, Out};
use crate::nn::check;

/// The shape facts: batch, channels, input height and width, output height and width.
#[derive(Clone, Copy)]
struct Dims {
    n: usize,
    c: usize,
    ih: usize,
    iw: usize,
    h: usize,
    w: usize,
}

fn dims<T: NnReal>(input: &View<T>, grid: &View<T>, grid_arg: u32) -> Result<Dims> {
    check::dims(input, 2, "input", &[4])?;
    check::dims(grid, grid_arg, "grid", &[4])?;
    let s = |v: &View<T>, i: usize| v.sizes[i] as usize;
    let d = Dims { n: s(input, 0), c: s(input, 1), ih: s(input, 2), iw: s(input, 3), h: s(grid, 1), w: s(grid, 2) };
    if grid.sizes[0] != input.sizes[0] || grid.sizes[3] != 2 {
        return Err(check::size_err(
            grid_arg,
            "grid",
            format_args!("expected size {} x H x W x 2 (input is {}), got {}", d.n, input.desc(), grid.desc()),
        ));
    }
    Ok(d)
}

/// One sampling point: its input coordinates (pixels), the corner (x0, y0) below them, and its
/// four taps (x0, y0), (x0 + 1, y0), (x0, y0 + 1), (x0 + 1, y0 + 1): flat index in a plane and
/// whether the tap lies inside the input.
struct Point {
    ix: f64,
    iy: f64,
    x0: f64,
    y0: f64,
    idx: [usize; 4],
    ok: [bool; 4],
}

impl Point {
    fn new(gx: f64, gy: f64, d: &Dims) -> Self {
        let ix = (gx + 1.0) / 2.0 * (d.iw as f64 - 1.0);
        let iy = (gy + 1.0) / 2.0 * (d.ih as f64 - 1.0);
        let (x0, y0) = (ix.floor(), iy.floor());
        let mut p = Point { ix, iy, x0, y0, idx: [0; 4], ok: [false; 4] };
        for (t, (dx, dy)) in [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)].into_iter().enumerate() {
            let (x, y) = (x0 + dx, y0 + dy);
            if x >= 0.0 && x < d.iw as f64 && y >= 0.0 && y < d.ih as f64 {
                p.ok[t] = true;
                p.idx[t] = y as usize * d.iw + x as usize;
            }
        }
        p
    }

    /// The four taps' bilinear weights.
    fn weights(&self) -> [f64; 4] {
        let (ex, ey) = (self.ix - self.x0, self.iy - self.y0);
        [(1.0 - ex) * (1.0 - ey), ex * (1.0 - ey), (1.0 - ex) * ey, ex * ey]
    }
}

/// The points of batch item `b`.
fn points<T: NnReal>(grid: &[T], b: usize, d: &Dims) -> Vec<Point> {
    let hw = d.h * d.w;
    grid[b * hw * 2..(b + 1) * hw * 2].chunks_exact(2).map(|g| Point::new(g[0].to_f64(), g[1].to_f64(), d)).collect()
}

/// `SpatialGridSamplerBilinear_updateOutput(state, input, grid, output)`: `input` N x C x IH x
/// IW, `grid` N x H x W x 2 (x, y), `output` N x C x H x W.
pub fn update_output<T: NnReal>(input: &View<T>, grid: &View<T>, output: &Tensor<T>) -> Result<()> {
    let d = dims(input, grid, 3)?;
    let mut out = Out::new(output, &[d.n as i64, d.c as i64, d.h as i64, d.w as i64])?;
    let x = buf::read(input, &[out.view()])?;
    let gr = buf::read(grid, &[out.view()])?;
    let (ip, op) = (d.ih * d.iw, d.h * d.w);
    buf::par_chunks(out.as_mut(), d.c * op, d.n * d.c * op * 4, |b, o| {
        let pts = points(&gr, b, &d);
        let ws: Vec<[f64; 4]> = pts.iter().map(Point::weights).collect();
        for (ch, oplane) in o.chunks_exact_mut(op).enumerate() {
            let inp = &x[(b * d.c + ch) * ip..][..ip];
            for ((o, p), w) in oplane.iter_mut().zip(&pts).zip(&ws) {
                let mut acc = 0.0;
                for t in 0..4 {
                    if p.ok[t] {
                        acc += w[t] * inp[p.idx[t]].to_f64();
                    }
                }
                *o = T::from_f64(acc);
            }
        }
    });
    out.finish()
}

/// `SpatialGridSamplerBilinear_updateGradInput(state, input, gradInput, grid, gradGrid,
/// gradOutput)`: `gradInput` (shaped like `input`) and `gradGrid` (like `grid`, with respect to
/// the normalized coordinates) from `gradOutput` (N x C x H x W). Both are overwritten, not
/// accumulated, as in torch7; either may be NULL (not computed).
pub fn update_grad_input<T: NnReal>(
    input: &View<T>,
    grad_input: Option<&Tensor<T>>,
    grid: &View<T>,
    grad_grid: Option<&Tensor<T>>,
    grad_output: &View<T>,
) -> Result<()> {
    let d = dims(input, grid, 4)?;
    check::shape(grad_output, 6, "gradOutput", &[d.n as i64, d.c as i64, d.h as i64, d.w as i64])?;
    let mut gi = grad_input.map(|t| Out::new(t, &input.sizes)).transpose()?;
    let mut gg = grad_grid.map(|t| Out::new(t, &grid.sizes)).transpose()?;
    let outs: Vec<&View<T>> = [gi.as_ref(), gg.as_ref()].into_iter().flatten().map(|o| o.view()).collect();
    let x = buf::read(input, &outs)?;
    let gr = buf::read(grid, &outs)?;
    let go = buf::read(grad_output, &outs)?;
    let (ip, op) = (d.ih * d.iw, d.h * d.w);
    if let Some(gi) = &mut gi {
        buf::par_chunks(gi.as_mut(), d.c * ip, d.n * d.c * (ip + op * 4), |b, gi| {
            gi.fill(T::zero());
            let pts = points(&gr, b, &d);
            let ws: Vec<[f64; 4]> = pts.iter().map(Point::weights).collect();
            for (ch, gplane) in gi.chunks_exact_mut(ip).enumerate() {
                let g = &go[(b * d.c + ch) * op..][..op];
                for ((&gv, p), w) in g.iter().zip(&pts).zip(&ws) {
                    for t in 0..4 {
                        if p.ok[t] {
                            let v = &mut gplane[p.idx[t]];
                            *v = T::from_f64(v.to_f64() + w[t] * gv.to_f64());
                        }
                    }
                }
            }
        });
    }
    if let Some(gg) = &mut gg {
        let (sx, sy) = ((d.iw as f64 - 1.0) / 2.0, (d.ih as f64 - 1.0) / 2.0);
        buf::par_chunks(gg.as_mut(), op * 2, d.n * d.c * op * 5, |b, gg| {
            let pts = points(&gr, b, &d);
            for (k, (o, p)) in gg.chunks_exact_mut(2).zip(&pts).enumerate() {
                let (ex, ey) = (p.ix - p.x0, p.iy - p.y0);
                // d(weight)/d(ix) and d(weight)/d(iy) of the four taps
                let dx = [-(1.0 - ey), 1.0 - ey, -ey, ey];
                let dy = [-(1.0 - ex), -ex, 1.0 - ex, ex];
                let (mut gx, mut gy) = (0.0, 0.0);
                for ch in 0..d.c {
                    let gv = go[(b * d.c + ch) * op + k].to_f64();
                    let inp = &x[(b * d.c + ch) * ip..][..ip];
                    for t in 0..4 {
                        if p.ok[t] {
                            let v = inp[p.idx[t]].to_f64() * gv;
                            gx += dx[t] * v;
                            gy += dy[t] * v;
                        }
                    }
                }
                o[0] = T::from_f64(gx * sx);
                o[1] = T::from_f64(gy * sy);
            }
        });
    }
    for o in [gi, gg].into_iter().flatten() {
        o.finish()?;
    }
    Ok(())
}
