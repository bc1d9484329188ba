//! A convolution's forward through th's implicit-GEMM kernels (`ops::conv`'s valid jobs): the
//! batch's images, zero-padded once when the layer pads, are read in place by the kernel's
//! tiles, so no im2col columns are built; the tiles split over the library's pool themselves.
//! Taken where the kernels apply (float types on a CPU with AVX2 or AVX-512, no dilation,
//! rows wide enough for the tiles); else `engine::unfold_mm` builds columns as before. (The
//! weight gradient stays with columns: the kernels' Rev jobs measured slower than im2col +
//! GEMM on the layers' usual shapes.)

use super::super::NnReal;
use super::unfold::Geom;
use crate::core::error::Result;
use crate::ops::conv::{Operands, implicit_fits};
use std::borrow::Cow;

/// `dst_b = w @ im2col(src_b)` (+ `bias`, one value per row) for each of `n` samples, as
/// `engine::unfold_mm` computes it (`w`: `m x g.rows()`, `dst_b`: `m x g.cols()`, `src`: `n`
/// contiguous images); `Ok(false)`: not taken (`dst` may then hold the bias rows: the column
/// path overwrites it).
#[allow(clippy::too_many_arguments)]
pub fn forward<T: NnReal>(
    g: &Geom,
    n: usize,
    m: usize,
    w: &[T],
    src: &[T],
    dst: &mut [T],
    bias: Option<&[T]>,
) -> Result<bool> {
    // Small products stay with the GEMM path (as ops::conv's own choice: enough output planes,
    // reduction length and positions for the tiles to pay).
    // 1x1 kernels too: their columns are the image (or a subsample of it), cheap to build.
    if g.k == [1; 3] || g.d != [1; 3] || g.p.iter().any(|&p| p < 0) || m < 4 || g.rows() < 16 {
        return Ok(false);
    }
    let padded: [usize; 3] = std::array::from_fn(|d| g.i[d] + 2 * g.p[d] as usize);
    let vg = crate::ops::conv::Geom { i: padded, k: g.k, s: g.s };
    if g.cols() < 16 || !implicit_fits(&vg, g.o) {
        return Ok(false);
    }
    let inp = if g.p == [0; 3] { Cow::Borrowed(src) } else { Cow::Owned(pad(g, n, src, padded)?) };
    // each sample's m rows start at their bias (the kernel accumulates onto them: `fresh`)
    for out in dst.chunks_mut(m * g.cols()) {
        super::engine::bias_rows(out, bias, g.cols());
    }
    let ops = Operands { inp: &inp, ker: w, g: vg, o: g.o, dense: (n, g.c, m), fresh: bias.is_none() };
    T::conv_implicit(dst, &ops)
}

/// The `n * g.c` planes of `src`, each zero-padded by `g.p` on both sides of every dim (`to`
/// elements per dim).
fn pad<T: NnReal>(g: &Geom, n: usize, src: &[T], to: [usize; 3]) -> Result<Vec<T>> {
    let [pd, ph, pw] = to;
    let (plane, vol) = (g.plane(), pd * ph * pw);
    let [p0, p1, p2] = g.p.map(|p| p as usize);
    let [id, ih, iw] = g.i;
    let mut out = crate::core::limits::try_filled(n * g.c * vol, T::zero())?;
    let base = crate::exec::parallel::SharedPtr(out.as_mut_ptr());
    crate::exec::parallel::for_range(n * g.c, n * g.c * vol, |a, b| {
        for v in a..b {
            // SAFETY: plane v of `out` (v < n * c); the ranges handed to workers are disjoint,
            // and `out` outlives the loop.
            let dst = unsafe { std::slice::from_raw_parts_mut(base.offset((v * vol) as isize), vol) };
            let s = &src[v * plane..(v + 1) * plane];
            for z in 0..id {
                for y in 0..ih {
                    let (at, from) = (((z + p0) * ph + y + p1) * pw + p2, (z * ih + y) * iw);
                    dst[at..at + iw].copy_from_slice(&s[from..from + iw]);
                }
            }
        }
    });
    Ok(out)
}
