//! Pooling: max, dilated max and average pooling over 2-D and 3-D planes (one N-d core where a
//! spatial plane is a volume of depth 1), adaptive max/average, fractional max, max unpooling,
//! TemporalMaxPooling and FeatureLPPooling.
//!
//! Layout: a spatial input is `C x H x W` or `N x C x H x W`, a volumetric one `C x T x H x W` or
//! `N x C x T x H x W`; each of the `N * C` planes is pooled on its own (and by one parallel
//! piece, so results never depend on the thread count).
//!
//! **Indices are 0-based flat offsets into the input plane** (`h * W + w`, or
//! `t * H * W + h * W + w`), as PyTorch's `return_indices` gives them, for every max pooling
//! here (torch7 stored 1-based offsets, window-relative ones for TemporalMaxPooling, packed
//! window offsets for the volumetric modules and `(y, x)` pairs for SpatialAdaptiveMaxPooling).
//! TemporalMaxPooling's indices are frame numbers in the input. Unpooling reads the same
//! convention, offsets into the output plane; backward passes check every index before
//! writing.
//!
//! A max is the first largest element of its window in row-major order, NaN winning (as
//! PyTorch's kernels pick it).

pub mod adaptive;
pub(crate) mod device;
pub mod fractional;
pub mod lp;
pub mod maxavg;
pub mod temporal;
pub mod unpool;

use super::buf::{self, Out, SharedPtr};
use super::check;
use super::{NnElem, NnReal};
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::exec::backend::Backend;
use crate::exec::parallel;

/// Whether the operands (all on one engine, else the "same device" error) are on a device.
pub(crate) fn on_device(devices: &[crate::core::allocator::Device]) -> Result<bool> {
    Ok(matches!(Backend::of(devices)?, Backend::Cuda(_)))
}

/// An input's planes: `n` batch entries (1 unbatched) of `c` planes of sizes `[t, h, w]` (t = 1
/// for a spatial input).
#[derive(Clone, Debug)]
pub(crate) struct Planes {
    pub nd: usize,
    pub batched: bool,
    pub n: usize,
    pub c: usize,
    pub size: [usize; 3],
}

impl Planes {
    /// The planes of `v` (argument `arg`), `nd` (2 or 3) pooled dimensions after an optional
    /// batch and the planes.
    pub fn of<T: crate::Scalar>(v: &View<T>, nd: usize, arg: u32, name: &str) -> Result<Planes> {
        check::dims(v, arg, name, &[nd + 1, nd + 2])?;
        let batched = v.ndim() == nd + 2;
        let s: Vec<usize> = v.sizes.iter().map(|&x| x as usize).collect();
        let b = usize::from(batched);
        let n = if batched { s[0] } else { 1 };
        let sp = &s[b + 1..];
        let size = if nd == 2 { [1, sp[0], sp[1]] } else { [sp[0], sp[1], sp[2]] };
        Ok(Planes { nd, batched, n, c: s[b], size })
    }

    /// Elements of one plane.
    pub fn len(&self) -> usize {
        self.size.iter().product()
    }

    /// The shape of a tensor with these batch/plane dimensions and plane sizes `size`.
    pub fn shape(&self, size: [usize; 3]) -> Vec<i64> {
        let mut v = Vec::with_capacity(5);
        if self.batched {
            v.push(self.n as i64);
        }
        v.push(self.c as i64);
        let sp = if self.nd == 2 { &size[1..] } else { &size[..] };
        v.extend(sp.iter().map(|&x| x as i64));
        v
    }
}

/// A pooled axis's windows: output `o` reads the input positions `start[o] + i * step` for `i`
/// in `0..count[o]` (all inside the input).
pub(crate) struct Windows {
    pub start: Vec<usize>,
    pub count: Vec<usize>,
    pub step: usize,
}

impl Windows {
    pub fn len(&self) -> usize {
        self.start.len()
    }
}

/// `buf::par_chunks` over planes of `len` elements, `work` being what one plane touches (the
/// loop's total is that times the plane count).
pub(crate) fn par_planes<T: Send + Sync>(out: &mut [T], len: usize, work: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    let n = out.len().checked_div(len).unwrap_or(0);
    buf::par_chunks(out, len, work.saturating_mul(n), f)
}

/// Runs `f(plane, out_plane, idx_plane)` over the planes of two outputs (`out` and `idx`
/// hold `out.len() / olen` planes of `olen` elements), in parallel, one piece per plane;
/// `work` is what one plane touches.
pub(crate) fn par_planes2<T: Send + Sync, U: Send + Sync>(
    out: &mut [T],
    idx: &mut [U],
    olen: usize,
    work: usize,
    f: impl Fn(usize, &mut [T], &mut [U]) + Sync,
) {
    if olen == 0 || idx.len() != out.len() {
        return;
    }
    let n = out.len() / olen;
    let (po, pi) = (SharedPtr(out.as_mut_ptr()), SharedPtr(idx.as_mut_ptr()));
    parallel::for_range(n, work.saturating_mul(n), |a, b| {
        for p in a..b {
            // SAFETY: plane p (< n) of both buffers, which hold n * olen elements; the pieces get
            // disjoint ranges of planes, so no two slices overlap, and the buffers outlive the loop.
            let (o, i) = unsafe {
                (
                    std::slice::from_raw_parts_mut(po.offset((p * olen) as isize), olen),
                    std::slice::from_raw_parts_mut(pi.offset((p * olen) as isize), olen),
                )
            };
            f(p, o, i);
        }
    });
}

/// The C argument number and name (`{prefix}T`, `H` or `W`) of axis `a` (0 T, 1 H, 2 W) in
/// parameter group `group` of a module taking groups of `nd` per-axis arguments from `arg0`:
/// torch7 orders a group W, H in 2-D and T, W, H in 3-D.
pub(crate) fn axis_arg(nd: usize, arg0: u32, group: usize, a: usize, prefix: &str) -> (u32, String) {
    let pos = match (nd, a) {
        (3, 0) => 0,
        (3, 1) => 2,
        (3, _) => 1,
        (_, 1) => 1,
        _ => 0,
    };
    (arg0 + (group * nd + pos) as u32, format!("{prefix}{}", ["T", "H", "W"][a]))
}

/// One plane's outputs of a max pooling, filled in row-major order by [`MaxOut::push`].
pub(crate) struct MaxOut<'a, T> {
    o: &'a mut [T],
    id: &'a mut [i64],
    q: usize,
}

impl<T> MaxOut<'_, T> {
    /// Stores the next output's `(value, offset in the input plane)`.
    #[inline(always)]
    pub(crate) fn push(&mut self, (v, at): (T, usize)) {
        self.o[self.q] = v;
        self.id[self.q] = at as i64;
        self.q += 1;
    }
}

/// The forward of a max pooling once its arguments are checked: `output` and `indices` resized
/// to `pl.shape(osz)`, and `plane(p, x, out)` run on each plane `p` of the input (`x`, its
/// elements), pushing that plane's outputs into `out` in row-major order. `work`: what one plane
/// touches.
pub(crate) fn max_forward<T: NnReal>(
    input: &View<T>,
    output: &Tensor<T>,
    indices: &Tensor<i64>,
    pl: &Planes,
    osz: [usize; 3],
    work: usize,
    plane: impl Fn(usize, &[T], &mut MaxOut<T>) + Sync,
) -> Result<()> {
    let shape = pl.shape(osz);
    let mut out = Out::new(output, &shape)?;
    let mut ind = Out::new(indices, &shape)?;
    let x = buf::read(input, &[out.view()])?;
    let (ilen, olen) = (pl.len(), osz.iter().product::<usize>());
    par_planes2(out.as_mut(), ind.as_mut(), olen, work, |p, o, id| {
        plane(p, &x[p * ilen..(p + 1) * ilen], &mut MaxOut { o, id, q: 0 });
    });
    out.finish()?;
    ind.finish()
}

/// The max of `x` at the positions `pos` yields, with the first one's position on ties and NaN
/// winning: `(value, position)`. `pos` must yield at least one in-range position.
#[inline(always)]
pub(crate) fn first_max<T: NnReal>(x: &[T], mut pos: impl Iterator<Item = usize>) -> (T, usize) {
    let Some(p0) = pos.next() else { return (T::from_f64(f64::NAN), 0) };
    let (mut best, mut at) = (x[p0], p0);
    for p in pos {
        let v = x[p];
        if v > best || v.is_nan() {
            best = v;
            at = p;
        }
    }
    (best, at)
}

/// The backward of a max pooling by its indices: `gradInput` (shaped like `input`) is zero but
/// for `gradInput[plane][indices[o]] += gradOutput[o]` over each plane's outputs. `out` is the
/// pooled plane sizes (gradOutput and indices must have that shape); `args` are the C argument
/// numbers of gradOutput and indices. Every index is checked to lie in its plane first. On the
/// device: `device::scatter_backward`.
pub(crate) fn scatter_backward<T: NnElem>(
    input: &View<T>,
    pl: &Planes,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    indices: &View<i64>,
    out: [usize; 3],
    args: (u32, u32),
) -> Result<()> {
    let dev =
        on_device(&[input.device(), grad_output.device(), grad_input.with_view(|v| v.device()), indices.device()])?;
    let oshape = pl.shape(out);
    check::shape(grad_output, args.0, "gradOutput", &oshape)?;
    check::shape(indices, args.1, "indices", &oshape)?;
    if dev {
        let olen = out.iter().product();
        return device::scatter_backward(input, pl, grad_output, grad_input, indices, olen, args.1);
    }
    host_scatter_backward(
        super::native_view(input)?,
        pl,
        super::native_view(grad_output)?,
        super::native_tensor(grad_input)?,
        indices,
        out,
        args,
    )
}

fn host_scatter_backward<T: NnReal>(
    input: &View<T>,
    pl: &Planes,
    grad_output: &View<T>,
    grad_input: &Tensor<T>,
    indices: &View<i64>,
    out: [usize; 3],
    args: (u32, u32),
) -> Result<()> {
    let ind = buf::read(indices, &[])?;
    check::indices(&ind, args.1, "indices", 0, pl.len() as i64, None)?;
    let mut gi = Out::new(grad_input, &input.sizes)?;
    let go = buf::read(grad_output, &[gi.view()])?;
    let olen: usize = out.iter().product();
    let ilen = pl.len();
    par_planes(gi.as_mut(), ilen, ilen + olen, |p, g| {
        g.fill(T::zero());
        let (gp, ip) = (&go[p * olen..(p + 1) * olen], &ind[p * olen..(p + 1) * olen]);
        for (&v, &i) in gp.iter().zip(ip) {
            // in range: checked above
            g[i as usize] += v;
        }
    });
    gi.finish()
}

/// The planes are not empty along any pooled dimension (error on `input`, argument 2).
pub(crate) fn nonempty<T: crate::Scalar>(pl: &Planes, input: &View<T>) -> Result<()> {
    if pl.size.contains(&0) {
        return Err(check::size_err(2, "input", format_args!("expected non-empty planes, got {}", input.desc())));
    }
    Ok(())
}
