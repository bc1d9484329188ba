//! The unfolding at the heart of every convolution here: `im2col` copies the patches of an
//! image (`c` planes of `t x h x w`, 2-D images having depth 1) into a column matrix of
//! `c * kt * kh * kw` rows by `ot * oh * ow` columns (one column per kernel position, zero where
//! the patch reaches into the padding), and `col2im` adds such a matrix back into an image.
//! Also torch7's `unfolded_copy` / `unfolded_acc` (2-D im2col and col2im on tensors).

use super::super::NnReal;
use super::super::buf::{self, Out};
use super::super::check;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};

/// The geometry of one unfolding: an image of `c` planes of size `i` (t, h, w), a grid of `o`
/// kernel positions, the kernel `k`, stride `s`, padding `p` and dilation `d` (all t, h, w).
/// Grid position `y` of a dimension reads image index `y * s - p + tap * d`; a block of grid
/// rows is the geometry with fewer rows and the padding less the skipped rows' strides
/// (negative then).
#[derive(Clone, Copy, Debug)]
pub struct Geom {
    pub c: usize,
    pub i: [usize; 3],
    pub o: [usize; 3],
    pub k: [usize; 3],
    pub s: [usize; 3],
    pub p: [isize; 3],
    pub d: [usize; 3],
}

impl Geom {
    /// Rows of the column matrix: `c * kt * kh * kw`.
    pub fn rows(&self) -> usize {
        self.c * self.k.iter().product::<usize>()
    }
    /// Columns of the column matrix: the grid's positions.
    pub fn cols(&self) -> usize {
        self.o.iter().product()
    }
    /// Elements of one image plane.
    pub fn plane(&self) -> usize {
        self.i.iter().product()
    }
    /// Elements of the image.
    pub fn img(&self) -> usize {
        self.c * self.plane()
    }
    /// Whether the column matrix is the image itself (1x1x1 kernel, stride 1, no padding).
    pub fn identity(&self) -> bool {
        self.k == [1; 3] && self.s == [1; 3] && self.p == [0; 3] && self.i == self.o
    }

    /// Grid rows (h) per block: a block's columns take about `COL_BLOCK` elements (fixed by
    /// the shapes, so the order of sums never depends on the thread count).
    fn block_rows(&self) -> usize {
        (COL_BLOCK / (self.rows() * self.o[2]).max(1)).clamp(1, self.o[1].max(1))
    }

    /// Elements of one block's columns.
    pub fn block_len(&self) -> usize {
        self.rows() * self.block_rows().min(self.o[1]) * self.o[2]
    }

    /// The blocks of the grid, in order: (geometry of the block, first column, columns). A
    /// block is a run of grid rows of one grid plane (t), so its columns are contiguous.
    pub fn blocks(&self) -> impl Iterator<Item = (Geom, usize, usize)> + '_ {
        let hb = self.block_rows();
        let (oh, ow) = (self.o[1], self.o[2]);
        (0..self.o[0]).flat_map(move |t| {
            (0..oh).step_by(hb).map(move |h0| {
                let rows = hb.min(oh - h0);
                let p = [self.p[0] - (t * self.s[0]) as isize, self.p[1] - (h0 * self.s[1]) as isize, self.p[2]];
                (Geom { o: [1, rows, ow], p, ..*self }, (t * oh + h0) * ow, rows * ow)
            })
        })
    }
}

/// Elements of a block of columns (256 KB of f32: the columns are written and read by the
/// GEMM while they are in L2).
const COL_BLOCK: usize = 1 << 16;

/// The grid positions `[lo, hi)` of one dimension whose image index `o * s + off` lies in
/// `[0, len_in)`.
#[inline]
pub(super) fn valid(off: isize, s: usize, len_in: usize, len_out: usize) -> (usize, usize) {
    let s = s as isize;
    let lo = if off >= 0 { 0 } else { (-off + s - 1) / s };
    let hi = if len_in as isize <= off { 0 } else { (len_in as isize - off + s - 1) / s };
    let hi = hi.clamp(0, len_out as isize) as usize;
    ((lo as usize).min(hi), hi)
}

/// The image offset of kernel tap `kk` in a dimension: `kk * d - p`.
#[inline]
fn tap(g: &Geom, dim: usize, kk: usize) -> isize {
    (kk * g.d[dim]) as isize - g.p[dim]
}

/// Visits row `r` of the column matrix: `f(grid_row, Some((image_row, off, lo, hi)))` for every
/// grid row (t, h) whose image row exists, `f(grid_row, None)` for the others. In a visited
/// row, columns `[lo, hi)` read image elements `off, off + s, ...` and the rest lie in the
/// padding.
#[inline]
fn walk_row(g: &Geom, r: usize, mut f: impl FnMut(usize, Option<(usize, usize, usize, usize)>)) {
    let kvol = g.k[0] * g.k[1] * g.k[2];
    let (ch, rest) = (r / kvol, r % kvol);
    let (kt, kh, kw) = (rest / (g.k[1] * g.k[2]), rest / g.k[2] % g.k[1], rest % g.k[2]);
    let (ot, oh) = (g.o[0], g.o[1]);
    let (t0, h0, w0) = (tap(g, 0, kt), tap(g, 1, kh), tap(g, 2, kw));
    let (tlo, thi) = valid(t0, g.s[0], g.i[0], ot);
    let (hlo, hhi) = valid(h0, g.s[1], g.i[1], oh);
    let (lo, hi) = valid(w0, g.s[2], g.i[2], g.o[2]);
    let w0 = (w0 + (lo * g.s[2]) as isize) as usize; // image column of grid column lo
    for y in 0..ot {
        for x in 0..oh {
            let gr = y * oh + x;
            if y < tlo || y >= thi || x < hlo || x >= hhi || lo == hi {
                f(gr, None);
                continue;
            }
            let it = (t0 + (y * g.s[0]) as isize) as usize;
            let ih = (h0 + (x * g.s[1]) as isize) as usize;
            f(gr, Some(((ch * g.i[0] + it) * g.i[1] + ih, w0, lo, hi)));
        }
    }
}

/// Row `r` of the column matrix of `img` into `dst` (`g.cols()` elements).
fn im2col_row<T: NnReal>(g: &Geom, img: &[T], r: usize, dst: &mut [T]) {
    let (ow, iw, sw) = (g.o[2], g.i[2], g.s[2]);
    let zero = T::zero();
    walk_row(g, r, |gr, at| {
        let row = &mut dst[gr * ow..(gr + 1) * ow];
        let Some((ir, w0, lo, hi)) = at else {
            row.fill(zero);
            return;
        };
        let src = &img[ir * iw..(ir + 1) * iw];
        row[..lo].fill(zero);
        row[hi..].fill(zero);
        if sw == 1 {
            row[lo..hi].copy_from_slice(&src[w0..w0 + (hi - lo)]);
        } else {
            for (o, &v) in row[lo..hi].iter_mut().zip(src[w0..].iter().step_by(sw)) {
                *o = v;
            }
        }
    });
}

/// Adds row `r` of a column matrix (`src`, `g.cols()` elements) into `img`.
fn col2im_row<T: NnReal>(g: &Geom, src: &[T], r: usize, img: &mut [T]) {
    let (ow, iw, sw) = (g.o[2], g.i[2], g.s[2]);
    walk_row(g, r, |gr, at| {
        let Some((ir, w0, lo, hi)) = at else { return };
        let row = &src[gr * ow + lo..gr * ow + hi];
        let dst = &mut img[ir * iw..(ir + 1) * iw];
        if sw == 1 {
            for (o, &v) in dst[w0..w0 + (hi - lo)].iter_mut().zip(row) {
                *o += v;
            }
        } else {
            for (o, &v) in dst[w0..].iter_mut().step_by(sw).zip(row) {
                *o += v;
            }
        }
    });
}

/// The column matrix of `img` (`g.img()` elements) into `col` (`g.rows() x g.cols()`), rows in
/// parallel on the library's pool when large enough (on this thread inside a parallel piece).
pub fn im2col<T: NnReal>(g: &Geom, img: &[T], col: &mut [T]) {
    let n = g.cols();
    buf::par_chunks(&mut col[..g.rows() * n], n, g.rows() * n, |r, dst| im2col_row(g, img, r, dst));
}

/// `img` (`g.img()` elements) += the column matrix `col`, channels in parallel (each channel's
/// rows added in order, so the result does not depend on the thread count).
pub fn col2im<T: NnReal>(g: &Geom, col: &[T], img: &mut [T]) {
    let (n, kvol, plane) = (g.cols(), g.rows() / g.c.max(1), g.plane());
    buf::par_chunks(&mut img[..g.img()], plane, g.rows() * n, |ch, dst| {
        for r in ch * kvol..(ch + 1) * kvol {
            // the channel's plane is `dst`: address it as channel 0
            col2im_row(&Geom { c: 1, ..*g }, &col[r * n..(r + 1) * n], r - ch * kvol, dst);
        }
    });
}

/// Checks the raw sizes of `unfolded_copy` / `unfolded_acc` and returns the geometry.
#[allow(clippy::too_many_arguments)] // torch7's signature
fn unfolded_geom<T: NnReal>(
    finput: &View<T>,
    input: &View<T>,
    k: [i32; 2],
    s: [i32; 2],
    p: [i32; 2],
    planes: i32,
    isz: [i32; 2],
    osz: [i32; 2],
) -> Result<Geom> {
    // positions: finput 1, input 2, kW 3, kH 4, dW 5, dH 6, padW 7, padH 8, nInputPlane 9,
    // inputWidth 10, inputHeight 11, outputWidth 12, outputHeight 13
    check::positive(k[0] as i64, 3, "kW")?;
    check::positive(k[1] as i64, 4, "kH")?;
    check::positive(s[0] as i64, 5, "dW")?;
    check::positive(s[1] as i64, 6, "dH")?;
    check::non_negative(p[0] as i64, 7, "padW")?;
    check::non_negative(p[1] as i64, 8, "padH")?;
    check::positive(planes as i64, 9, "nInputPlane")?;
    check::positive(isz[0] as i64, 10, "inputWidth")?;
    check::positive(isz[1] as i64, 11, "inputHeight")?;
    let names = [("outputWidth", 12), ("outputHeight", 13)];
    let mut o = [0usize; 2];
    for j in 0..2 {
        let span = isz[j] as i64 + 2 * p[j] as i64 - k[j] as i64;
        let want = if span < 0 { 0 } else { span / s[j] as i64 + 1 };
        if osz[j] as i64 != want || want < 1 {
            let (name, arg) = names[j];
            return Err(check::invalid(
                arg,
                name,
                format_args!("expected {want} (from the input size, kernel, stride and padding), got {}", osz[j]),
            ));
        }
        o[j] = want as usize;
    }
    let g = Geom {
        c: planes as usize,
        i: [1, isz[1] as usize, isz[0] as usize],
        o: [1, o[1], o[0]],
        k: [1, k[1] as usize, k[0] as usize],
        s: [1, s[1] as usize, s[0] as usize],
        p: [0, p[1] as isize, p[0] as isize],
        d: [1; 3],
    };
    check::numel(input, 2, "input", g.img())?;
    check::numel(finput, 1, "finput", g.rows() * g.cols())?;
    Ok(g)
}

/// `unfolded_copy(finput, input, kW, kH, dW, dH, padW, padH, nInputPlane, inputWidth,
/// inputHeight, outputWidth, outputHeight)`: `finput` (any shape of `nInputPlane*kH*kW x
/// outputHeight*outputWidth` elements, kept) = the columns of `input` (`nInputPlane*inputHeight*
/// inputWidth` elements, as `F.unfold`). The output sizes must be the ones the convolution gives.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn unfolded_copy<T: NnReal>(
    finput: &Tensor<T>,
    input: &View<T>,
    k: [i32; 2],
    s: [i32; 2],
    p: [i32; 2],
    planes: i32,
    isz: [i32; 2],
    osz: [i32; 2],
) -> Result<()> {
    let g = unfolded_geom(&finput.view(), input, k, s, p, planes, isz, osz)?;
    let mut out = Out::acc(finput, g.rows() * g.cols(), 1, "finput")?;
    let x = buf::read(input, &[out.view()])?;
    im2col(&g, &x, out.as_mut());
    out.finish()
}

/// `unfolded_acc(finput, input, ...)`: `input += col2im(finput)` (as `F.fold`, accumulated into
/// `input`'s existing values); the sizes as `unfolded_copy`'s.
#[allow(clippy::too_many_arguments)] // torch7's signature
pub fn unfolded_acc<T: NnReal>(
    finput: &View<T>,
    input: &Tensor<T>,
    k: [i32; 2],
    s: [i32; 2],
    p: [i32; 2],
    planes: i32,
    isz: [i32; 2],
    osz: [i32; 2],
) -> Result<()> {
    let g = unfolded_geom(finput, &input.view(), k, s, p, planes, isz, osz)?;
    let mut out = Out::acc(input, g.img(), 2, "input")?;
    let col = buf::read(finput, &[out.view()])?;
    col2im(&g, &col, out.as_mut());
    out.finish()
}
