//! Scans, sumTo, renorm, histograms.

use super::*;

fn scan<T: NumAcc>(r: &Tensor<T>, t: &View<T>, dim: i32, prod: bool) -> Result<()> {
    let d = check_dim(dim, t.ndim(), 3)?;
    if let crate::exec::backend::Backend::Cuda(dev) =
        crate::exec::backend::Backend::of(&[r.with_view(|v| v.device()), t.device()])?
    {
        return scan_on_device(dev, r, t, d, prod);
    }
    let shape = t.sizes.clone();
    let n = t.numel();
    let k = shape[d] as usize;
    let inner: usize = shape[d + 1..].iter().product::<i64>() as usize;
    // The lines: every dim but d, with (input stride, output stride) of the row-major output.
    let mut lines: Vec<Dim<2>> = Vec::new();
    let mut ostride = n;
    for (i, (&sz, &st)) in shape.iter().zip(&t.strides).enumerate() {
        ostride /= sz as usize;
        if i != d && sz > 1 {
            push_merged(&mut lines, Dim { size: sz as usize, st: [st as isize, ostride as isize] });
        }
    }
    let mut out = crate::core::limits::try_filled(n, T::default())?;
    let p = t.host_ptr()?.ok_or_else(|| Error::internal("scan: a view with elements has no storage"))?;
    let addr = SharedPtr(p.wrapping_add(t.offset));
    let step = t.strides[d] as isize;
    let sink = Sink(out.as_mut_ptr());
    let id = if prod { T::one().to_acc() } else { T::zero().to_acc() };
    let op = |a: T::Acc, x: T| if prod { T::acc_mul(a, x.to_acc()) } else { T::acc_add(a, x.to_acc()) };
    // When the lines' innermost dim is closer in memory than the scan dim (e.g. dim 0 of a
    // row-major matrix), scan a tile of adjacent lines together, walking memory in order.
    let tiled = lines.last().is_some_and(|l| l.size >= 8 && l.st[0].unsigned_abs() < step.unsigned_abs());
    if tiled {
        let tile = lines.pop().unwrap_or(Dim::UNIT);
        let w = tile.size.min(SCAN_TILE);
        let ntiles = tile.size.div_ceil(w);
        let items = (n / k / tile.size) * ntiles;
        parallel::for_range(items, n, |a, b| {
            let mut acc = vec![id; w];
            for it in a..b {
                let (mo, t0) = (it / ntiles, it % ntiles);
                let o = Odometer::new(&lines, mo);
                let j0 = t0 * w;
                let wl = w.min(tile.size - j0);
                acc[..wl].fill(id);
                for i in 0..k {
                    let q = addr.offset(o.off[0] + i as isize * step + j0 as isize * tile.st[0]).cast_const();
                    let ob = o.off[1] as usize + i * inner + j0 * tile.st[1] as usize;
                    for (j, a) in acc[..wl].iter_mut().enumerate() {
                        // SAFETY: element (i, j0 + j) of this tile lies inside the view (host_ptr).
                        *a = op(*a, unsafe { q.offset(j as isize * tile.st[0]).read() });
                        // SAFETY: each output position belongs to exactly one tile, owned by
                        // this worker.
                        unsafe { sink.put(ob + j * tile.st[1] as usize, T::from_acc(*a)) };
                    }
                }
            }
        });
        return store(r, &shape, &out);
    }
    let m = n / k;
    parallel::for_range(m, n, |a, b| {
        let mut o = Odometer::new(&lines, a);
        for mi in a..b {
            let q = addr.offset(o.off[0]).cast_const();
            let mut acc = id;
            for i in 0..k {
                // SAFETY: element i of this line lies inside the view (host_ptr).
                acc = op(acc, unsafe { q.offset(i as isize * step).read() });
                // SAFETY: each output position belongs to exactly one line, owned by this worker.
                unsafe { sink.put(o.off[1] as usize + i * inner, T::from_acc(acc)) };
            }
            if mi + 1 < b {
                o.advance();
            }
        }
    });
    store(r, &shape, &out)
}

/// `scan` on device `dev`: one thread per line, in order, as the host (a partially
/// overlapping output is computed through a temporary).
fn scan_on_device<T: NumAcc>(dev: i32, r: &Tensor<T>, t: &View<T>, d: usize, prod: bool) -> Result<()> {
    use crate::exec::overlap::{Alias, alias};
    let out = resize_out(r, &t.sizes)?;
    crate::cuda::sort::check_output(if prod { "cumprod" } else { "cumsum" }, &out)?;
    if t.numel() == 0 {
        return Ok(());
    }
    if matches!(alias(&out, t), Alias::Same | Alias::Disjoint) {
        return crate::cuda::scan::scan(dev, &out, t, d, prod);
    }
    let tmp = crate::ops::temp_like(t, &t.sizes)?;
    crate::cuda::scan::scan(dev, &tmp, t, d, prod)?;
    copy(&out, &tmp)
}

/// `r_ = cumulative sum of t along dim` (in `accreal`), `r_` resized like `t`.
pub fn cumsum<T: NumAcc>(r: &Tensor<T>, t: &View<T>, dim: i32) -> Result<()> {
    scan(r, t, dim, false)
}

/// `r_ = cumulative product of t along dim` (in `accreal`).
pub fn cumprod<T: NumAcc>(r: &Tensor<T>, t: &View<T>, dim: i32) -> Result<()> {
    scan(r, t, dim, true)
}

/// `r = t` summed down to `shape` (numpy broadcasting undone): `t`'s extra leading dims and
/// the dims where `shape` has 1 are summed (in `accreal`); `r` gets `shape`. `t`'s shape
/// must broadcast from `shape`.
pub fn sum_to<T: NumAcc>(r: &Tensor<T>, t: &View<T>, shape: &[i64]) -> Result<()> {
    let shape = parse_sizes(shape).map_err(|e| e.at_arg(3))?;
    let nd = t.ndim();
    let fits = !shape.is_empty()
        && shape.len() <= nd
        && shape.iter().zip(&t.sizes[nd - shape.len()..]).all(|(&s, &n)| s == n || s == 1);
    if !fits {
        return Err(Error::size(format!(
            "sumTo: size {} of the tensor does not broadcast from size {}",
            size_desc(&t.sizes),
            size_desc(&shape)
        ))
        .at_arg(3));
    }
    let lead = nd - shape.len();
    let mask: Vec<bool> = (0..nd).map(|i| i < lead || (shape[i - lead] == 1 && t.sizes[i] != 1)).collect();
    let data: Vec<T> = reduce([t], &mask, &sum_reducer::<T>())?.into_iter().map(T::from_acc).collect();
    store(r, &shape, &data)
}

/// `r_ = t` with every slice along `dim` whose p-norm exceeds `maxnorm` scaled by
/// `maxnorm / (norm + 1e-7)` (the norm in `accreal`, the scaling in the element type).
pub fn renorm<T: FloatAcc>(r: &Tensor<T>, t: &View<T>, p: T, dim: i32, maxnorm: T) -> Result<()> {
    let pv = p.to_f64();
    if pv.is_nan() || pv <= 0.0 {
        return Err(Error::invalid(format!("renorm: the norm order must be positive, got {pv}")).at_arg(3));
    }
    let d = check_dim(dim, t.ndim(), 4)?;
    crate::exec::backend::Backend::of(&[r.with_view(|v| v.device()), t.device()])?;
    if t.ndim() < 2 {
        return Err(
            Error::size(format!("renorm: need at least 2 dimensions, got size {}", size_desc(&t.sizes))).at_arg(2)
        );
    }
    let mx = maxnorm.to_acc();
    let eps = <T::Acc as Num>::from_f64(1e-7);
    let factors: Vec<T> = pnorm(t, &all_but(t.ndim(), d), pv)?
        .into_iter()
        .map(|nrm| if nrm > mx { T::from_acc(mx.div(nrm.add(eps))) } else { T::one() })
        .collect();
    let mut fshape = vec![1i64; t.ndim()];
    fshape[d] = t.sizes[d];
    let mut f = View::from_slice(&factors, &fshape)?;
    if let crate::core::allocator::Device::Cuda(_) = t.device() {
        let on_device = crate::ops::temp_like(t, &fshape)?;
        copy(&on_device, &f)?;
        f = on_device;
    }
    let f = f.expand(&t.sizes)?;
    pointwise2(r, t, &f, Call::new("cmul"), |x: T, s: T| x.mul(s))
}

/// The histogram range: `[lo, hi]` as given, or the data's min and max when they are equal
/// (then widened by 1 each way if still equal). Must be finite with lo <= hi.
fn hist_range<T: FloatAcc>(t: &View<T>, lo: T, hi: T) -> Result<(T::R, T::R)> {
    let (mut a, mut b) = (lo.to_r(), hi.to_r());
    let finite = |x: T::R| x.to_f64().is_finite();
    if !finite(a) || !finite(b) {
        return Err(Error::invalid(format!("histc: range [{}, {}] is not finite", a.to_f64(), b.to_f64())).at_arg(4));
    }
    if a > b {
        return Err(Error::invalid(format!("histc: max {} is smaller than min {}", b.to_f64(), a.to_f64())).at_arg(5));
    }
    if a == b && t.numel() > 0 {
        a = minall(t)?.to_r();
        b = maxall(t)?.to_r();
        if !finite(a) || !finite(b) {
            return Err(Error::invalid(format!(
                "histc: the data range [{}, {}] is not finite",
                a.to_f64(),
                b.to_f64()
            ))
            .at_arg(2));
        }
    }
    if a == b {
        let one = <T::R as Num>::one();
        a = a.sub(one);
        b = b.add(one);
    }
    Ok((a, b))
}

/// Adds the elements of `v` into `counts` (TH's bin formula, in the element's compute type).
fn count_bins<T: FloatAcc>(v: &View<T>, lo: T::R, hi: T::R, counts: &mut [i64]) -> Result<()> {
    let nb = counts.len();
    let nbr = <T::R as Num>::from_f64(nb as f64);
    let width = hi.sub(lo);
    for_each(v, |x| {
        let x = x.to_r();
        if x >= lo && x <= hi {
            let bin = (x.sub(lo).div(width).mul(nbr).to_f64() as usize).min(nb - 1);
            counts[bin] += 1;
        }
    })
}

fn check_nbins(nbins: i64) -> Result<usize> {
    usize::try_from(nbins)
        .ok()
        .filter(|&n| n > 0 && n <= i64::MAX as usize / 8)
        .ok_or_else(|| Error::size(format!("histc: the number of bins must be positive, got {nbins}")).at_arg(3))
}

/// `hist` (resized to `nbins`) = histogram of `t` over `[minvalue, maxvalue]` (equal bounds:
/// the data's range); values outside are ignored, `maxvalue` goes to the last bin.
pub fn histc<T: FloatAcc>(hist: &Tensor<T>, t: &View<T>, nbins: i64, minvalue: T, maxvalue: T) -> Result<()> {
    let nb = check_nbins(nbins)?;
    let (lo, hi) = hist_range(t, minvalue, maxvalue)?;
    let mut counts = crate::core::limits::try_filled(nb, 0i64)?;
    count_bins(t, lo, hi, &mut counts)?;
    let data: Vec<T> = counts.iter().map(|&c| T::from_f64(c as f64)).collect();
    store(hist, &[nbins], &data)
}

/// Row-wise `histc` of a 2-D tensor: `hist` resized to rows x nbins; the range (when the
/// bounds are equal) comes from the whole tensor.
pub fn bhistc<T: FloatAcc>(hist: &Tensor<T>, t: &View<T>, nbins: i64, minvalue: T, maxvalue: T) -> Result<()> {
    let nb = check_nbins(nbins)?;
    if t.ndim() != 2 {
        return Err(Error::size(format!("bhistc: expected a 2-D tensor, got size {}", size_desc(&t.sizes))).at_arg(2));
    }
    let (lo, hi) = hist_range(t, minvalue, maxvalue)?;
    let rows = t.sizes[0] as usize;
    let cells = rows.checked_mul(nb).ok_or_else(|| Error::size(format!("bhistc: {rows} x {nb} bins overflow")))?;
    let mut counts = crate::core::limits::try_filled(cells, 0i64)?;
    for (i, c) in counts.chunks_mut(nb).enumerate() {
        let row = View {
            sizes: vec![t.sizes[1]],
            strides: vec![t.strides[1]],
            offset: t.offset + i * t.strides[0] as usize,
            ..t.clone()
        };
        count_bins(&row, lo, hi, c)?;
    }
    let data: Vec<T> = counts.iter().map(|&c| T::from_f64(c as f64)).collect();
    store(hist, &[t.sizes[0], nbins], &data)
}
