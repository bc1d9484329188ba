//! Padding (reflection, replication), upsampling (nearest, bilinear, trilinear) and the
//! bilinear grid sampler.
//!
//! Padding and nearest upsampling are the same operation: every output element copies the input
//! element that per-dimension index maps designate, and the backward pass adds each gradient
//! back to that element ([`Geom`], [`gather`], [`scatter`]). Bilinear and trilinear upsampling
//! combine two taps per dimension ([`Taps`]). All of them work plane by plane (the leading
//! dimensions, batch and channels, flattened), in parallel over planes; each plane of an output
//! is computed by one piece in a fixed order, so results never depend on the thread count.
//!
//! On the device (THCUNN) the same maps and taps become per-dimension tables for one kernel
//! (`device`), which reproduces the host's sums term for term.

pub(crate) mod device;
pub mod grid;
pub mod pad;
pub mod upsample;

use super::NnReal;
use super::buf;
use super::check;
use crate::core::error::{Error, Result};
use crate::core::tensor::View;

/// The geometry of a plane-wise operation: `planes` planes of input sizes `i` and output sizes
/// `o` (depth, height, width; depth 1 for 2-D operations).
#[derive(Clone, Debug)]
pub(crate) struct Geom {
    pub planes: usize,
    pub i: [usize; 3],
    pub o: [usize; 3],
}

impl Geom {
    fn in_plane(&self) -> usize {
        self.i.iter().product()
    }
    fn out_plane(&self) -> usize {
        self.o.iter().product()
    }
}

/// The leading dimensions of `sizes` (batch, channels) and its last `k` sizes as (depth,
/// height, width), depth 1 when `k` is 2.
pub(crate) fn split(sizes: &[i64], k: usize) -> (usize, [usize; 3]) {
    let lead = sizes.len() - k;
    let planes = sizes[..lead].iter().map(|&v| v as usize).product();
    let mut sp = [1usize; 3];
    for (d, &v) in sp[3 - k..].iter_mut().zip(&sizes[lead..]) {
        *d = v as usize;
    }
    (planes, sp)
}

/// `sizes` with its last `k` sizes replaced by the output's (`o`'s last `k`).
pub(crate) fn out_shape(sizes: &[i64], k: usize, o: [usize; 3]) -> Vec<i64> {
    let lead = sizes.len() - k;
    let mut s = sizes[..lead].to_vec();
    s.extend(o[3 - k..].iter().map(|&v| v as i64));
    s
}

/// Per-dimension index maps: output index -> input index (each below the input size).
pub(crate) type Maps = [Vec<usize>; 3];

/// Checks that every map entry lies inside its input dimension (an internal invariant of the
/// map builders; an error rather than a panic if it ever failed).
fn maps_fit(g: &Geom, m: &Maps) -> Result<()> {
    for (d, md) in m.iter().enumerate() {
        if md.len() != g.o[d] || md.iter().any(|&v| v >= g.i[d]) {
            return Err(Error::internal("nn sample: index map out of range"));
        }
    }
    Ok(())
}

/// `out[p, z, y, x] = x_in[p, mz[z], my[y], mx[x]]` for every plane `p`.
pub(crate) fn gather<T: NnReal>(x: &[T], out: &mut [T], g: &Geom, m: &Maps) -> Result<()> {
    maps_fit(g, m)?;
    let (ip, op) = (g.in_plane(), g.out_plane());
    if x.len() != g.planes * ip || out.len() != g.planes * op {
        return Err(Error::internal("nn sample: buffer sizes"));
    }
    let [_, ih, iw] = g.i;
    let ow = g.o[2];
    buf::par_chunks(out, op, g.planes * op, |p, o| {
        let inp = &x[p * ip..(p + 1) * ip];
        for (orow, (z, y)) in o.chunks_exact_mut(ow).zip(m[0].iter().flat_map(|&z| m[1].iter().map(move |&y| (z, y)))) {
            let src = &inp[(z * ih + y) * iw..][..iw];
            for (d, &j) in orow.iter_mut().zip(&m[2]) {
                *d = src[j];
            }
        }
    });
    Ok(())
}

/// The adjoint of `gather`: `gi` (zeroed here) receives every `go[p, z, y, x]` added at `[p,
/// mz[z], my[y], mx[x]]`.
pub(crate) fn scatter<T: NnReal>(go: &[T], gi: &mut [T], g: &Geom, m: &Maps) -> Result<()> {
    maps_fit(g, m)?;
    let (ip, op) = (g.in_plane(), g.out_plane());
    if gi.len() != g.planes * ip || go.len() != g.planes * op {
        return Err(Error::internal("nn sample: buffer sizes"));
    }
    let [_, ih, iw] = g.i;
    let ow = g.o[2];
    buf::par_chunks(gi, ip, g.planes * (ip + op), |p, gi| {
        gi.fill(T::zero());
        let src = &go[p * op..(p + 1) * op];
        for (srow, (z, y)) in src.chunks_exact(ow).zip(m[0].iter().flat_map(|&z| m[1].iter().map(move |&y| (z, y)))) {
            let dst = &mut gi[(z * ih + y) * iw..][..iw];
            for (&v, &j) in srow.iter().zip(&m[2]) {
                dst[j] += v;
            }
        }
    });
    Ok(())
}

/// Two-tap linear interpolation along one dimension, `align_corners=True` (torch7's): output
/// `o` of `out` samples input position `o * (in - 1) / (out - 1)` (0 when `out` is 1) from
/// `i0[o]` (weight `l0[o]`) and `i1[o]` (weight `l1[o]`; `i1 == i0` at the last input index).
pub(crate) struct Taps<T> {
    pub i0: Vec<usize>,
    pub i1: Vec<usize>,
    pub l0: Vec<T>,
    pub l1: Vec<T>,
}

impl<T: NnReal> Taps<T> {
    /// The taps from `n_in >= 1` to `n_out >= 1` positions (coordinates computed in f64).
    pub fn new(n_in: usize, n_out: usize) -> Self {
        let r = if n_out > 1 { (n_in - 1) as f64 / (n_out - 1) as f64 } else { 0.0 };
        let mut t =
            Taps { i0: Vec::with_capacity(n_out), i1: Vec::with_capacity(n_out), l0: Vec::new(), l1: Vec::new() };
        for o in 0..n_out {
            let src = r * o as f64;
            let i0 = (src.floor() as usize).min(n_in - 1);
            let i1 = if i0 + 1 < n_in { i0 + 1 } else { i0 };
            let l1 = src - i0 as f64;
            t.i0.push(i0);
            t.i1.push(i1);
            t.l0.push(T::from_f64(1.0 - l1));
            t.l1.push(T::from_f64(l1));
        }
        t
    }

    /// The single tap of a dimension that is not interpolated (size 1 to 1, weight 1).
    pub fn unit() -> Self {
        Taps { i0: vec![0], i1: vec![0], l0: vec![T::one()], l1: vec![T::zero()] }
    }

    /// The (index, weight) pairs of output `o` (one when the dimension is not interpolated).
    fn pairs(&self, o: usize, unit: bool) -> impl Iterator<Item = (usize, T)> + '_ {
        let n = if unit { 1 } else { 2 };
        [(self.i0[o], self.l0[o]), (self.i1[o], self.l1[o])].into_iter().take(n)
    }
}

/// The three dimensions' taps of a linear upsampling (depth `unit` for bilinear).
pub(crate) struct Linear<T> {
    pub t: [Taps<T>; 3],
    pub unit_depth: bool,
}

impl<T: NnReal> Linear<T> {
    pub fn new(g: &Geom, unit_depth: bool) -> Self {
        let d = if unit_depth { Taps::unit() } else { Taps::new(g.i[0], g.o[0]) };
        Linear { t: [d, Taps::new(g.i[1], g.o[1]), Taps::new(g.i[2], g.o[2])], unit_depth }
    }

    fn fits(&self, g: &Geom) -> bool {
        (0..3).all(|d| {
            let t = &self.t[d];
            t.i0.len() == g.o[d] && t.i0.iter().chain(&t.i1).all(|&v| v < g.i[d])
        })
    }

    /// Linear interpolation of every plane of `x` into `out`.
    pub fn forward(&self, x: &[T], out: &mut [T], g: &Geom) -> Result<()> {
        let (ip, op) = (g.in_plane(), g.out_plane());
        if !self.fits(g) || x.len() != g.planes * ip || out.len() != g.planes * op {
            return Err(Error::internal("nn upsampling: taps or buffer sizes"));
        }
        let [_, ih, iw] = g.i;
        let [_, oh, ow] = g.o;
        let [td, th, tw] = &self.t;
        buf::par_chunks(out, op, g.planes * op * 8, |p, o| {
            let inp = &x[p * ip..(p + 1) * ip];
            for (r, orow) in o.chunks_exact_mut(ow).enumerate() {
                let (z, y) = (r / oh, r % oh);
                orow.fill(T::zero());
                for (zi, wz) in td.pairs(z, self.unit_depth) {
                    for (yi, wy) in th.pairs(y, false) {
                        let c = wz * wy;
                        let src = &inp[(zi * ih + yi) * iw..][..iw];
                        for (j, d) in orow.iter_mut().enumerate() {
                            *d += c * (tw.l0[j] * src[tw.i0[j]] + tw.l1[j] * src[tw.i1[j]]);
                        }
                    }
                }
            }
        });
        Ok(())
    }

    /// The adjoint of `forward`: `gi` (zeroed here) receives the weighted gradients.
    pub fn backward(&self, go: &[T], gi: &mut [T], g: &Geom) -> Result<()> {
        let (ip, op) = (g.in_plane(), g.out_plane());
        if !self.fits(g) || gi.len() != g.planes * ip || go.len() != g.planes * op {
            return Err(Error::internal("nn upsampling: taps or buffer sizes"));
        }
        let [_, ih, iw] = g.i;
        let [_, oh, ow] = g.o;
        let [td, th, tw] = &self.t;
        buf::par_chunks(gi, ip, g.planes * (ip + op * 8), |p, gi| {
            gi.fill(T::zero());
            let src = &go[p * op..(p + 1) * op];
            for (r, srow) in src.chunks_exact(ow).enumerate() {
                let (z, y) = (r / oh, r % oh);
                for (zi, wz) in td.pairs(z, self.unit_depth) {
                    for (yi, wy) in th.pairs(y, false) {
                        let c = wz * wy;
                        let dst = &mut gi[(zi * ih + yi) * iw..][..iw];
                        for (j, &v) in srow.iter().enumerate() {
                            let cv = c * v;
                            dst[tw.i0[j]] += tw.l0[j] * cv;
                            dst[tw.i1[j]] += tw.l1[j] * cv;
                        }
                    }
                }
            }
        });
        Ok(())
    }
}

/// Checks that each spatial size of `i` (the last `k`) is at least 1.
pub(crate) fn nonempty<T: crate::core::dtype::Scalar>(input: &View<T>, k: usize, arg: u32, name: &str) -> Result<()> {
    let n = input.ndim();
    if input.sizes[n - k..].iter().any(|&v| v < 1) {
        return Err(check::size_err(
            arg,
            name,
            format_args!("expected non-empty spatial dimensions (the last {k}), got {}", input.desc()),
        ));
    }
    Ok(())
}
