//! SpatialReflectionPadding, SpatialReplicationPadding, VolumetricReplicationPadding: the input
//! padded (positive pads) or cropped (negative pads) on each side of its last 2 or 3
//! dimensions, as `F.pad(mode='reflect' / 'replicate')`. Output index `o` of a dimension with
//! leading pad `p` reads input index `o - p`, reflected about the edges (without repeating the
//! edge) or clamped to them.

use super::{Geom, Maps, device, gather, nonempty, out_shape, scatter, split};
use crate::core::allocator::Device;
use crate::core::dtype::Scalar;
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::exec::backend::Backend;
use crate::nn::buf::{self, Out};
use crate::nn::check;
use crate::nn::{NnElem, native_tensor, native_view};

/// How an index outside the input is brought back into it.
#[derive(Clone, Copy, PartialEq)]
pub enum Mode {
    Reflect,
    Replicate,
}

/// A padding layer: its mode, spatial dimensions (2 or 3) and pads, in torch7's argument order
/// (left, right, top, bottom[, front, back]).
pub struct Pad<'a> {
    pub mode: Mode,
    pub k: usize,
    pub pads: &'a [i64],
}

const NAMES2: [&str; 4] = ["pad_l", "pad_r", "pad_t", "pad_b"];
const NAMES3: [&str; 6] = ["pleft", "pright", "ptop", "pbottom", "pfront", "pback"];

impl Pad<'_> {
    /// The pads' C names.
    fn names(&self) -> &'static [&'static str] {
        if self.k == 2 { &NAMES2 } else { &NAMES3 }
    }

    /// Checks `input` and the pads (the first at argument `pad_arg`); the geometry and maps.
    fn geometry<T: Scalar>(&self, input: &View<T>, pad_arg: u32) -> Result<(Geom, Maps)> {
        let k = self.k;
        check::dims(input, 2, "input", &[k + 1, k + 2])?;
        nonempty(input, k, 2, "input")?;
        let (planes, i) = split(&input.sizes, k);
        let mut o = i;
        let mut maps: Maps = [vec![0], vec![0], vec![0]];
        for (s, d) in (0..k).rev().zip(3 - k..3) {
            // pads (2s, 2s + 1) belong to dimension d: (left, right) -> width, ...
            let (p0, p1) = (self.pads[2 * s], self.pads[2 * s + 1]);
            let n = i[d] as i64;
            if self.mode == Mode::Reflect {
                for (j, p) in [p0, p1].into_iter().enumerate() {
                    if p >= n {
                        let arg = pad_arg + (2 * s + j) as u32;
                        let name = self.names()[2 * s + j];
                        return Err(check::invalid(
                            arg,
                            name,
                            format_args!(
                                "must be less than the input size {n} it reflects ({}), got {p}",
                                input.desc()
                            ),
                        ));
                    }
                }
            }
            let on = n + p0 + p1;
            if on < 1 {
                return Err(check::size_err(
                    2,
                    "input",
                    format_args!("{} is too small for the pads ({p0}, {p1}): output size {on}", input.desc()),
                ));
            }
            o[d] = on as usize;
            maps[d] = (0..on)
                .map(|j| {
                    let x = j - p0;
                    let x = match self.mode {
                        Mode::Reflect if x < 0 => -x,
                        Mode::Reflect if x >= n => 2 * (n - 1) - x,
                        Mode::Reflect => x,
                        Mode::Replicate => x.clamp(0, n - 1),
                    };
                    x.clamp(0, n - 1) as usize
                })
                .collect();
        }
        Ok((Geom { planes, i, o }, maps))
    }

    /// `<Module>_updateOutput(state, input, output, pads...)`.
    pub fn update_output<T: NnElem>(&self, input: &View<T>, output: &Tensor<T>) -> Result<()> {
        Backend::of(&[input.device(), output.with_view(|v| v.device())])?;
        let (g, maps) = self.geometry(input, 4)?;
        let shape = out_shape(&input.sizes, self.k, g.o);
        if let Device::Cuda(_) = input.device() {
            return device::gather(input, output, &shape, &g, &maps);
        }
        let (input, output) = (native_view(input)?, native_tensor(output)?);
        let mut out = Out::new(output, &shape)?;
        let x = buf::read(input, &[out.view()])?;
        gather(&x, out.as_mut(), &g, &maps)?;
        out.finish()
    }

    /// `<Module>_updateGradInput(state, input, gradOutput, gradInput, pads...)`: each gradient
    /// added to the input element it was copied from.
    pub fn update_grad_input<T: NnElem>(
        &self,
        input: &View<T>,
        grad_output: &View<T>,
        grad_input: &Tensor<T>,
    ) -> Result<()> {
        Backend::of(&[input.device(), grad_output.device(), grad_input.with_view(|v| v.device())])?;
        let (g, maps) = self.geometry(input, 5)?;
        check::shape(grad_output, 3, "gradOutput", &out_shape(&input.sizes, self.k, g.o))?;
        if let Device::Cuda(_) = input.device() {
            return device::scatter(grad_output, grad_input, &input.sizes, &g, &maps);
        }
        let (input, grad_output, grad_input) =
            (native_view(input)?, native_view(grad_output)?, native_tensor(grad_input)?);
        let mut gi = Out::new(grad_input, &input.sizes)?;
        let go = buf::read(grad_output, &[gi.view()])?;
        scatter(&go, gi.as_mut(), &g, &maps)?;
        gi.finish()
    }
}
