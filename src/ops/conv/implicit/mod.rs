//! Valid correlations of many input volumes with many kernels (`mv`/`mm`, the full mode run on
//! a zero-padded input) and the kernel gradients (Rev: `Revger`/`Revgerm`) as an implicit
//! GEMM: no im2col columns, no packing of the input.
//!
//! Valid jobs: within one output depth slice, output positions are numbered as the input's:
//! `p = y*ic + x` (`ic` input columns). The input element that tap `r = (i, kz, ky, kx)` meets
//! at position `p` is then `input[off[r] + p]`, `off[r] = i*plen + kz*ir*ic + ky*ic + kx`, so a
//! run of consecutive positions reads consecutive input elements. A tile of `MR` output
//! volumes x `NV` vectors of positions accumulates in registers over every tap (the kernel
//! broadcast from a packed panel, the input loaded straight from the input volume), then adds
//! its valid positions (`x < oc`) to the output (or stores them, on an output that holds no
//! values yet: `Operands::fresh`); the `ic - oc` positions of a row past `oc` are
//! computed and dropped (`fits` bounds that waste). `MR` and `NV` depend on the instruction set
//! (see `Simd`).
//!
//! Rev jobs: each weight sums the kernel's rows, runs of consecutive taps that meet runs of
//! consecutive input elements; `UR` weights x 2 kernels accumulate in vectors over the runs
//! (the last vector of a run masked, so that no element outside the sum is read).
//!
//! Strides: the input is first split into stride phases (`phases`), in which the elements a
//! tap meets (valid) or a weight meets (Rev) are consecutive again.
//!
//! Each output element sums its taps in a fixed order, so the result depends neither on the
//! tiling nor on the thread count.
//!
//! `valid` holds the valid jobs' tiles, `rev` the Rev jobs' items; this module picks the
//! kernel for the CPU and splits strided inputs into phases.

use super::{ConvK, Geom, Operands};
use crate::kernels::simd::{MAX_LANES, Vector};
#[cfg(target_arch = "x86_64")]
use crate::kernels::simd::{avx2, avx512};
use std::borrow::Cow;

mod rev;
#[cfg(test)]
mod tests;
mod valid;

use rev::{RevFn, RevPlan, rev_drive, rev_items};
use valid::{Plan, TilesFn, drive, tiles};

/// Most rows of a tile (output volumes sharing each input load) and vectors of positions in a
/// tile, over the instruction sets (see `Simd`).
const MAX_MR: usize = 8;
const MAX_NV: usize = 3;
/// Most positions a tile can have (`MAX_NV` vectors of the widest lane count).
const MAX_NP: usize = MAX_NV * MAX_LANES;

/// A tile loop and the tile shape it was built for: output volumes per kernel panel (`mr`,
/// the tile's rows) and positions per tile (`np`, its vectors times the lanes).
#[derive(Clone, Copy)]
pub(crate) struct Kernel<E> {
    mr: usize,
    np: usize,
    f: TilesFn<E>,
}

/// Whether a valid job suits the implicit GEMM: at most half of the computed positions
/// dropped (`x >= oc` of every row of `ceil(ic / sx)` columns, see `drive`).
pub(crate) fn fits(g: &Geom, o: [usize; 3]) -> bool {
    o[2] * 2 >= g.i[2].div_ceil(g.s[2])
}

/// The element types with a kernel: the tile loop (and its tile shape) the CPU runs best for
/// valid jobs, and the item loop for Rev jobs, if it has them.
///
/// Tile shapes: AVX2 (16 registers) takes 6 x 2 (12 accumulators, 2 input vectors and a
/// broadcast, one register to spare; with 4 x 3 the compiler spilled an accumulator).
/// AVX-512 (32 registers) takes 8 x 3: per tap, 24 FMAs against 8 broadcasts and 3 input
/// loads, which are unaligned and so each split over two cache lines (two load slots), so the
/// two load ports keep up with the two FMA pipes with room to spare (6 x 2 needs 10 load slots
/// for 12 FMAs, so there the loads, not the FMAs, set the pace); and 8 rows divide the usual
/// channel counts (16, 32, 64) with no ragged last panel.
pub(crate) trait Simd: ConvK {
    /// The loops for the instruction set in use (AVX2 + FMA, AVX-512F), if any: the tile loop
    /// and the Rev item loop.
    fn loops() -> Option<(Kernel<Self>, RevFn<Self>)>;
    fn kernel() -> Option<Kernel<Self>> {
        Self::loops().map(|(k, _)| k)
    }
    fn rev_kernel() -> Option<RevFn<Self>> {
        Self::loops().map(|(_, f)| f)
    }
}

/// `tiles` (tiles of `$mr` x `$nv` vectors) and `rev_items` on one instruction set's vectors
/// `$V` (`$isa`: `Avx2` or `Avx512`), as `Simd::loops` returns them.
#[cfg(target_arch = "x86_64")]
macro_rules! isa_loops {
    ($V:ty, $isa:ident, $mr:literal x $nv:literal) => {{
        type E = <$V as Vector>::E;
        crate::kernels::multiversion!(@copy $isa,
            /// # Safety
            /// As `tiles`, on a CPU with these features.
            fn tiles_isa(plan: &Plan<E>, lo: usize, hi: usize) => tiles::<$V, $mr, $nv>(plan, lo, hi));
        crate::kernels::multiversion!(@copy $isa,
            /// # Safety
            /// As `rev_items`, on a CPU with these features.
            fn rev_isa(plan: &RevPlan<E>, lo: usize, hi: usize) => rev_items::<$V>(plan, lo, hi));
        let k = Kernel { mr: $mr, np: $nv * <$V as Vector>::LANES, f: tiles_isa as TilesFn<E> };
        (k, rev_isa as RevFn<E>)
    }};
}

macro_rules! simd {
    ($E:ty, $V2:ident, $V5:ident) => {
        impl Simd for $E {
            fn loops() -> Option<(Kernel<Self>, RevFn<Self>)> {
                #[cfg(target_arch = "x86_64")]
                {
                    use crate::kernels::{Isa, isa};
                    match isa() {
                        Isa::Avx512 => return Some(isa_loops!(avx512::$V5, Avx512, 8 x 3)),
                        Isa::Avx2 => return Some(isa_loops!(avx2::$V2, Avx2, 6 x 2)),
                        Isa::Scalar => {}
                    }
                }
                None
            }
        }
    };
}
simd!(f32, F32x8, F32x16);
simd!(f64, F64x4, F64x8);

/// Runs a job with the CPU's kernel for `E`:
/// - valid (`!rev`): `out[b][q] += sum_i xcorr(input[b][i], ker[q][i])` (output strides), `dense
///   = (batches, nin, nout)`, kernels prepared as `nout x nin*klen` (row-major), when the job
///   `fits`;
/// - Rev: `out[q][i] += sum_b xcorr(input[b][i], ker[b][q])` (taps strides apart), kernels
///   prepared as `batches x nout x klen`, output `nout x nin x op`, when kernel rows have at
///   least 8 taps.
///
/// `Ok(false)`: not run (no kernel for this CPU and type, or the job does not suit one).
pub(crate) fn run<E: Simd>(rev: bool, out: &mut [E], ops: &Operands<E>) -> crate::core::error::Result<bool> {
    let (g, o) = (&ops.g, ops.o);
    if rev {
        match E::rev_kernel() {
            Some(f) if g.k[2] >= 8 => rev_drive(out, ops, f).map(|()| true),
            _ => Ok(false),
        }
    } else {
        match E::kernel() {
            Some(k) if fits(g, o) => drive(out, ops, k).map(|()| true),
            _ => Ok(false),
        }
    }
}

/// The input as the tiles read it, and the size of its (phase) volumes. With unit strides,
/// the input itself. With strides `(sz, sy, sx)`, each of the `n` input volumes becomes
/// `sz*sy*sx` phase volumes of `ceil(i / s)` elements per dimension, phase `(a, b, c)` holding
/// input element `(z*sz + a, y*sy + b, x*sx + c)` at `(z, y, x)` (zero past the input): the
/// elements a tap meets under consecutive output positions, `sx` apart in the input, are
/// consecutive in the phase volume of the tap's remainders, at the tap's quotients.
#[allow(clippy::type_complexity)]
fn phases<'a, E: ConvK>(inp: &'a [E], g: &Geom, n: usize) -> crate::core::error::Result<(Cow<'a, [E]>, [usize; 3])> {
    if g.s == [1; 3] {
        return Ok((Cow::Borrowed(inp), g.i));
    }
    let [id, ir, ic] = g.i;
    let [sz, sy, sx] = g.s;
    let dims: [usize; 3] = std::array::from_fn(|d| g.i[d].div_ceil(g.s[d]));
    let [pd, ph, pw] = dims;
    let phase = pd * ph * pw;
    let vol = phase * sz * sy * sx;
    let mut out = crate::ops::conv::zeros::<E>(n * vol)?;
    crate::ops::conv::par_planes(&mut out, vol, n * vol, |v, dst| {
        let src = &inp[v * g.in_len()..(v + 1) * g.in_len()];
        for (which, dst) in dst.chunks_exact_mut(phase).enumerate() {
            let (a, b, c) = (which / (sy * sx), (which / sx) % sy, which % sx);
            for (zy, row) in dst.chunks_exact_mut(pw).enumerate() {
                let (z, y) = ((zy / ph) * sz + a, (zy % ph) * sy + b);
                if z >= id || y >= ir {
                    continue;
                }
                let line = &src[(z * ir + y) * ic..(z * ir + y + 1) * ic];
                for (x, d) in row.iter_mut().enumerate() {
                    if let Some(&v) = line.get(x * sx + c) {
                        *d = v;
                    }
                }
            }
        }
    });
    Ok((Cow::Owned(out), dims))
}
