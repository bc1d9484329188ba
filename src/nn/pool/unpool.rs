//! SpatialMaxUnpooling and VolumetricMaxUnpooling: the inverse of a max pooling given its
//! indices, as PyTorch's `max_unpool2d/3d`. `indices` (shaped like `input`) holds 0-based flat
//! offsets into each output plane (`h * oW + w`, or `t * oH * oW + h * oW + w`), as the max
//! poolings here produce; an offset outside the output plane is an error. Where several inputs
//! share an offset, the last one (in row-major order) is kept.
//!
//! The volumetric strides and paddings are checked (positive, non-negative) but otherwise
//! unused: with flat indices they are not needed to place the values (torch7 needed them to
//! decode its packed window offsets).

use super::{Planes, device, on_device};
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::nn::buf::{self, Out};
use crate::nn::check;
use crate::nn::{NnElem, NnReal, native_tensor, native_view};

/// The output plane size (C order `[oT,] oW, oH`) and, for the volumetric module, strides and
/// paddings (C order T, W, H), with the argument number of the first output size.
#[derive(Clone, Debug)]
pub struct Unpool {
    nd: usize,
    out: [i64; 3],
    stride: [i64; 3],
    pad: [i64; 3],
    arg0: u32,
}

impl Unpool {
    /// Spatial: `owidth, oheight`, `owidth` being argument `arg0`.
    pub fn spatial(ow: i32, oh: i32, arg0: u32) -> Unpool {
        Unpool { nd: 2, out: [1, oh as i64, ow as i64], stride: [1; 3], pad: [0; 3], arg0 }
    }

    /// Volumetric: `oT, oW, oH, dT, dW, dH, pT, pW, pH`, `oT` being argument `arg0`.
    pub fn volumetric(o: [i32; 3], d: [i32; 3], p: [i32; 3], arg0: u32) -> Unpool {
        let r = |v: [i32; 3]| [v[0] as i64, v[2] as i64, v[1] as i64];
        Unpool { nd: 3, out: r(o), stride: r(d), pad: r(p), arg0 }
    }

    /// Checks the parameters; the output plane size.
    fn check(&self) -> Result<[usize; 3]> {
        let names: &[(usize, &str)] =
            if self.nd == 2 { &[(2, "W"), (1, "H")] } else { &[(0, "T"), (2, "W"), (1, "H")] };
        let n = self.nd as u32;
        for (j, &(a, s)) in names.iter().enumerate() {
            let j = j as u32;
            let oname =
                if self.nd == 2 { format!("o{}", if s == "W" { "width" } else { "height" }) } else { format!("o{s}") };
            check::positive(self.out[a], self.arg0 + j, &oname)?;
            if self.nd == 3 {
                check::positive(self.stride[a], self.arg0 + n + j, &format!("d{s}"))?;
                check::non_negative(self.pad[a], self.arg0 + 2 * n + j, &format!("p{s}"))?;
            }
        }
        Ok([self.out[0] as usize, self.out[1] as usize, self.out[2] as usize])
    }
}

/// Checks `input` (argument 2) and `indices` (argument `ind_arg`, shaped like `input`, every
/// value an offset into an output plane of `olen` elements); the planes, output plane size and
/// indices.
fn prepare<'a, T: crate::Scalar>(
    input: &View<T>,
    indices: &'a View<i64>,
    u: &Unpool,
    ind_arg: u32,
) -> Result<(Planes, [usize; 3], std::borrow::Cow<'a, [i64]>)> {
    let pl = Planes::of(input, u.nd, 2, "input")?;
    let osz = u.check()?;
    check::same_shape(indices, ind_arg, "indices", input, "input")?;
    let ind = buf::read(indices, &[])?;
    let olen: usize = osz.iter().product();
    check::indices(&ind, ind_arg, "indices", 0, olen as i64, None)?;
    Ok((pl, osz, ind))
}

/// `prepare` for device operands: the indices checked on the device.
fn prepare_on<T: crate::Scalar>(
    input: &View<T>,
    indices: &View<i64>,
    u: &Unpool,
    ind_arg: u32,
) -> Result<(Planes, [usize; 3])> {
    let pl = Planes::of(input, u.nd, 2, "input")?;
    let osz = u.check()?;
    check::same_shape(indices, ind_arg, "indices", input, "input")?;
    device::check_indices(indices, ind_arg, "indices", osz.iter().product::<usize>() as i64)?;
    Ok((pl, osz))
}

/// `*MaxUnpooling_updateOutput`: `output` (planes of the given size) is zero but for
/// `output[plane][indices[i]] = input[plane][i]`. Arguments: input 2, output 3, indices 4,
/// sizes from 5. On the device: a zero fill and the device's `scatter`.
pub fn update_output<T: NnElem>(input: &View<T>, output: &Tensor<T>, indices: &View<i64>, u: &Unpool) -> Result<()> {
    if on_device(&[input.device(), output.with_view(|v| v.device()), indices.device()])? {
        let (pl, osz) = prepare_on(input, indices, u, 4)?;
        return device::unpool_forward(input, output, indices, &pl, &pl.shape(osz), osz.iter().product());
    }
    host_update_output(native_view(input)?, native_tensor(output)?, indices, u)
}

fn host_update_output<T: NnReal>(input: &View<T>, output: &Tensor<T>, indices: &View<i64>, u: &Unpool) -> Result<()> {
    let (pl, osz, ind) = prepare(input, indices, u, 4)?;
    let mut out = Out::new(output, &pl.shape(osz))?;
    let x = buf::read(input, &[out.view()])?;
    let (ilen, olen) = (pl.len(), osz.iter().product::<usize>());
    super::par_planes(out.as_mut(), olen, olen + ilen, |p, o| {
        o.fill(T::zero());
        for (&v, &i) in x[p * ilen..(p + 1) * ilen].iter().zip(&ind[p * ilen..(p + 1) * ilen]) {
            o[i as usize] = v;
        }
    });
    out.finish()
}

/// `*MaxUnpooling_updateGradInput`: `gradInput[plane][i] = gradOutput[plane][indices[i]]`.
/// Arguments: input 2, gradOutput 3, gradInput 4, indices 5, sizes from 6. On the device: the
/// device's `gather`.
pub fn update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    indices: &View<i64>,
    u: &Unpool,
) -> Result<()> {
    if on_device(&[input.device(), grad_output.device(), grad_input.with_view(|v| v.device()), indices.device()])? {
        let (pl, osz) = prepare_on(input, indices, u, 5)?;
        check::shape(grad_output, 3, "gradOutput", &pl.shape(osz))?;
        return device::unpool_backward(input, grad_output, grad_input, indices, &pl, osz.iter().product());
    }
    host_update_grad_input(native_view(input)?, native_view(grad_output)?, native_tensor(grad_input)?, indices, u)
}

fn host_update_grad_input<T: NnReal>(
    input: &View<T>,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    indices: &View<i64>,
    u: &Unpool,
) -> Result<()> {
    let (pl, osz, ind) = prepare(input, indices, u, 5)?;
    check::shape(grad_output, 3, "gradOutput", &pl.shape(osz))?;
    let mut gi = Out::new(grad_input, &input.sizes)?;
    let go = buf::read(grad_output, &[gi.view()])?;
    let (ilen, olen) = (pl.len(), osz.iter().product::<usize>());
    super::par_planes(gi.as_mut(), ilen, olen + ilen, |p, g| {
        let gop = &go[p * olen..(p + 1) * olen];
        for (e, &i) in g.iter_mut().zip(&ind[p * ilen..(p + 1) * ilen]) {
            *e = gop[i as usize];
        }
    });
    gi.finish()
}
