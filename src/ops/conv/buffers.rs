//! Buffers: the plane jobs' contiguous copies, the im2col columns and the GEMM jobs.

use super::*;

/// A zero-filled vector, with allocation failure as an error.
pub(super) fn zeros<K: Copy + Default>(n: usize) -> Result<Vec<K>> {
    crate::core::limits::try_filled(n, K::default())
}

/// The elements of `v` in row-major order as compute values: borrowed when `v` is contiguous,
/// computes natively and `borrow` allows it; else a copy.
fn load<T: ConvElem>(v: &View<T>, borrow: bool) -> Result<Cow<'_, [T::K]>> {
    let n = v.numel();
    if borrow && v.is_contiguous() && n > 0 {
        let p = v.data_ptr()?;
        // SAFETY: data_ptr checked (via host_ptr) that the n contiguous elements lie in the
        // storage, which `v` keeps alive; nothing writes them during the call (the caller passes
        // borrow = false when the output shares the storage).
        let s: &[T] = unsafe { std::slice::from_raw_parts(p, n) };
        if let Some(k) = T::as_k(s) {
            return Ok(Cow::Borrowed(k));
        }
    }
    let vals = v.to_vec()?;
    let mut out = zeros::<T::K>(n)?;
    for (o, x) in out.iter_mut().zip(vals) {
        *o = x.to_k();
    }
    Ok(Cow::Owned(out))
}

/// The kernel volumes of `k` (`planes` volumes of `len` elements), times `alpha`, each reversed
/// (flipped in every dimension) when `flip`.
pub(super) fn prep_kernel<K: ConvK>(k: &[K], len: usize, alpha: K, flip: bool) -> Result<Vec<K>> {
    let mut out = zeros::<K>(k.len())?;
    for (o, s) in out.chunks_mut(len).zip(k.chunks(len)) {
        if flip {
            for (a, &b) in o.iter_mut().zip(s.iter().rev()) {
                *a = alpha.mul(b);
            }
        } else {
            for (a, &b) in o.iter_mut().zip(s) {
                *a = alpha.mul(b);
            }
        }
    }
    Ok(out)
}

/// Runs `f(index, plane)` over the `plane`-sized chunks of `out`, in parallel when `work` is
/// large enough.
pub(super) fn par_planes<K: ConvK>(out: &mut [K], plane: usize, work: usize, f: impl Fn(usize, &mut [K]) + Sync) {
    let n = out.len() / plane;
    let base = crate::exec::parallel::SharedPtr(out.as_mut_ptr());
    crate::exec::parallel::for_range(n, work, |a, b| {
        for p in a..b {
            // SAFETY: chunk p of `out` (p < n); the ranges handed to workers are disjoint, so no
            // two threads make a slice of the same chunk, and `out` outlives the loop.
            let s = unsafe { std::slice::from_raw_parts_mut(base.offset((p * plane) as isize), plane) };
            f(p, s);
        }
    });
}

/// What one tensor-level call computes: `n_out` output volumes; output volume `p` receives the
/// (input volume, kernel volume) pairs `contrib(p)` lists.
/// Lists the (input volume, kernel volume) pairs of one output volume.
type Contrib<'a> = &'a (dyn Fn(usize, &mut Vec<(usize, usize)>) + Sync);

/// An input volume and its prepared kernel volume.
type Pair<'a, K> = (&'a [K], &'a [K]);

pub(super) struct Job<'a> {
    pub(super) kind: Kind,
    pub(super) g: Geom,
    pub(super) o: [usize; 3],
    pub(super) n_out: usize,
    pub(super) contrib: Contrib<'a>,
    /// `Some((batches, nin, nout))` when the job can run as GEMMs (what `contrib` lists):
    /// - valid or full `mv`/`mm`: output volume `b * nout + q` sums input volumes `b * nin + i`
    ///   with kernel volumes `q * nin + i`, for every `i < nin` (one GEMM per batch);
    /// - Rev (`ger`, `Revgerm`): output volume `q * nin + i` sums input volumes `b * nin + i`
    ///   with kernel volumes `b * nout + q`, for every `b < batches` (one GEMM per input
    ///   volume and batch).
    pub(super) dense: Option<(usize, usize, usize)>,
}

/// The operands of a dense job as the GEMM paths take them (see `Job::dense`): the input
/// volumes, the prepared kernels, the geometry, the output size and `(batches, nin, nout)`.
/// `fresh` (valid and full jobs only): the output holds no values yet (it was not zeroed),
/// so the job sets every element instead of adding to it.
pub struct Operands<'a, K> {
    pub inp: &'a [K],
    pub ker: &'a [K],
    pub g: Geom,
    pub o: [usize; 3],
    pub dense: (usize, usize, usize),
    pub fresh: bool,
}

/// Bytes of im2col columns built at a time (the GEMM's right operand; about L2..L3).
const COLS_BYTES: usize = 4 << 20;

/// The dense shape of a job that runs as GEMM (implicit, or im2col + GEMM): valid jobs, full
/// jobs with unit strides and finite kernels `ker` (a valid job on a zero-padded input) and Rev
/// jobs, with enough output planes, reduction length and output positions for the GEMM's
/// blocking to beat the direct kernels.
fn gemm_shape<K: ConvK>(job: &Job, ker: &[K]) -> Option<(usize, usize, usize)> {
    let (_, nin, nout) = job.dense?;
    let (klen, op) = (job.g.k_len(), job.o.iter().product::<usize>());
    let fits = match job.kind {
        Kind::Valid => nout >= 4 && nin * klen >= 16 && op >= 16,
        // the full-mode GEMM multiplies the zero padding by every kernel value: an infinite or
        // NaN one would add NaN where TH's scatter form (input elements only) does not
        Kind::Full => {
            job.g.s == [1, 1, 1] && nout >= 4 && nin * klen >= 16 && op >= 16 && ker.iter().all(|&w| w.finite())
        }
        Kind::Rev => nout >= 4 && klen >= 64,
    };
    (K::GEMM && fits).then_some(job.dense?)
}

/// `cols[r][j] = input[...]` for rows `r = (i, kz, ky, kx)` of the kernel volume (`nin` input
/// volumes) and columns `j` = output positions `c0 + j` (flattened `(z, y, x)`): the input
/// element that kernel tap `r` meets at that output position. Valid mode steps output
/// positions by the strides, Rev mode (`rev`) steps kernel taps by them. Rows are split between
/// threads unless the caller runs on one of the pool's pieces already (`par == false`).
#[allow(clippy::too_many_arguments)]
fn im2col<K: ConvK>(cols: &mut [K], input: &[K], g: &Geom, o: [usize; 3], c0: usize, w: usize, rev: bool, par: bool) {
    let [_, ir, ic] = g.i;
    let [_, kr, kc] = g.k;
    let (ts, [st, sr, sc]) = if rev { (g.s, [1; 3]) } else { ([1; 3], g.s) };
    let [_, or, oc] = o;
    let (klen, ip, plen) = (g.k_len(), ir * ic, g.in_len());
    let work = if par { cols.len() } else { 0 };
    par_planes(cols, w, work, |r, row| {
        let (i, t) = (r / klen, r % klen);
        let (kz, ky, kx) = (t / (kr * kc), (t / kc) % kr, t % kc);
        let base = i * plen + kz * ts[0] * ip + ky * ts[1] * ic + kx * ts[2];
        let (mut c, mut j) = (c0, 0);
        while j < w {
            let (zy, x) = (c / oc, c % oc);
            let (z, y) = (zy / or, zy % or);
            let run = (oc - x).min(w - j);
            let start = base + z * st * ip + y * sr * ic + x * sc;
            if sc == 1 {
                row[j..j + run].copy_from_slice(&input[start..start + run]);
            } else {
                for (q, v) in row[j..j + run].iter_mut().enumerate() {
                    *v = input[start + q * sc];
                }
            }
            j += run;
            c += run;
        }
    });
}

/// A dense valid job as GEMM: for each batch, `out[b]` (nout x positions) += the prepared
/// kernel (nout x nin*klen, row-major) @ the im2col columns of input group `b`, built
/// `COLS_BYTES` at a time.
fn valid_gemm<K: ConvK>(out: &mut [K], ops: &Operands<K>) -> Result<()> {
    let (inp, ker, g, o) = (ops.inp, ops.ker, &ops.g, ops.o);
    let (batches, nin, nout) = ops.dense;
    let op: usize = o.iter().product();
    let kk = nin * g.k_len();
    let group = nin * g.in_len();
    if ker.len() != nout * kk || inp.len() < batches * group || out.len() != batches * nout * op {
        return Err(Error::internal("conv: GEMM operands of unexpected sizes"));
    }
    if K::implicit(false, out, ops)? {
        return Ok(());
    }
    if ops.fresh {
        out.fill(K::zero());
    }
    let chunk = (COLS_BYTES / (kk * size_of::<K>()).max(1)).clamp(1, op);
    let mut cols = zeros::<K>(kk * chunk)?;
    for b in 0..batches {
        let input = &inp[b * group..(b + 1) * group];
        let dst = &mut out[b * nout * op..(b + 1) * nout * op];
        let mut c0 = 0;
        while c0 < op {
            let w = chunk.min(op - c0);
            let cols = &mut cols[..kk * w];
            im2col(cols, input, g, o, c0, w, false, true);
            let a = MatRef { ptr: ker.as_ptr(), rs: kk as isize, cs: 1 };
            let bm = MatRef { ptr: cols.as_ptr(), rs: w as isize, cs: 1 };
            let c = MatMut { ptr: dst[c0..].as_mut_ptr(), rs: op as isize, cs: 1 };
            // SAFETY: ker is nout x kk, cols kk x w, and c addresses columns c0..c0 + w of the
            // nout rows (op apart) of dst, which holds nout * op elements; dst is distinct from
            // both operands (the output was copied away from any shared input by `run`).
            unsafe { K::gemm_acc(nout, w, kk, a, bm, c)? };
            c0 += w;
        }
    }
    Ok(())
}

/// A dense full job with unit strides as GEMM: the full correlation of an input with a kernel
/// is the valid one of the input zero-padded by `k - 1` on both sides of every dimension with
/// the kernel reversed (`out[y] += ker[t] * in[y - t]` with `u = k - 1 - t`). `ker` arrives
/// reversed already (`run` prepares it with the opposite flip).
fn full_gemm<K: ConvK>(out: &mut [K], ops: &Operands<K>) -> Result<()> {
    let (inp, ker, g, o) = (ops.inp, ops.ker, &ops.g, ops.o);
    let (batches, nin, nout) = ops.dense;
    let [it, ir, ic] = g.i;
    let [kt, kr, kc] = g.k;
    let p = [it + 2 * (kt - 1), ir + 2 * (kr - 1), ic + 2 * (kc - 1)];
    let (plen, ilen) = (p.iter().product::<usize>(), g.in_len());
    let olen = nout * o.iter().product::<usize>();
    if inp.len() < batches * nin * ilen || out.len() != batches * olen {
        return Err(Error::internal("conv: GEMM operands of unexpected sizes"));
    }
    // one batch's padded input volumes at a time (the zero borders are written once)
    let mut pad = zeros::<K>(nin * plen)?;
    for b in 0..batches {
        par_planes(&mut pad, plen, nin * plen, |v, dst| {
            let src = &inp[(b * nin + v) * ilen..(b * nin + v + 1) * ilen];
            for z in 0..it {
                for y in 0..ir {
                    let d = ((z + kt - 1) * p[1] + y + kr - 1) * p[2] + kc - 1;
                    let s = (z * ir + y) * ic;
                    dst[d..d + ic].copy_from_slice(&src[s..s + ic]);
                }
            }
        });
        let padded = Operands {
            inp: &pad,
            ker,
            g: Geom { i: p, k: g.k, s: [1; 3] },
            o,
            dense: (1, nin, nout),
            fresh: ops.fresh,
        };
        valid_gemm(&mut out[b * olen..(b + 1) * olen], &padded)?;
    }
    Ok(())
}

/// A Rev job as GEMM: for each input volume `i`, the output volumes `(q, i)` of every kernel
/// `q` form an `nout x positions` matrix (rows `nin` volumes apart) that receives, for each
/// batch `b`, kernel group `b` (`nout x klen`) @ the Rev im2col columns of input volume
/// `(b, i)`. Input volumes are split between threads, each with its own columns.
fn rev_gemm<K: ConvK>(out: &mut [K], ops: &Operands<K>) -> Result<()> {
    let (inp, ker, g, o) = (ops.inp, ops.ker, &ops.g, ops.o);
    let (batches, nin, nout) = ops.dense;
    let op: usize = o.iter().product();
    let (klen, plen) = (g.k_len(), g.in_len());
    if ker.len() != batches * nout * klen || inp.len() < batches * nin * plen || out.len() != nout * nin * op {
        return Err(Error::internal("conv: GEMM operands of unexpected sizes"));
    }
    if K::implicit(true, out, ops)? {
        return Ok(());
    }
    let chunk = (COLS_BYTES / (klen * size_of::<K>()).max(1)).clamp(1, op);
    let failed = std::sync::Mutex::new(None);
    let base = crate::exec::parallel::SharedPtr(out.as_mut_ptr());
    let work = batches.saturating_mul(nin).saturating_mul(nout).saturating_mul(klen).saturating_mul(op);
    crate::exec::parallel::for_range(nin, work, |lo, hi| {
        let mut cols = match zeros::<K>(klen * chunk) {
            Ok(c) => c,
            Err(e) => {
                *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                return;
            }
        };
        for i in lo..hi {
            let mut c0 = 0;
            while c0 < op {
                let w = chunk.min(op - c0);
                let cols = &mut cols[..klen * w];
                for b in 0..batches {
                    let v = b * nin + i;
                    im2col(cols, &inp[v * plen..(v + 1) * plen], g, o, c0, w, true, false);
                    let a = MatRef { ptr: ker[b * nout * klen..].as_ptr(), rs: klen as isize, cs: 1 };
                    let bm = MatRef { ptr: cols.as_ptr(), rs: w as isize, cs: 1 };
                    let c = MatMut { ptr: base.offset((i * op + c0) as isize), rs: (nin * op) as isize, cs: 1 };
                    // SAFETY: kernel group b is nout x klen inside ker, cols is klen x w, and c
                    // addresses positions c0..c0 + w of the nout output volumes (q, i), which lie
                    // inside out (checked above); input volumes i are split between threads, so
                    // no other thread touches them, and out is distinct from both operands.
                    if let Err(e) = unsafe { K::gemm_acc(nout, w, klen, a, bm, c) } {
                        *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                        return;
                    }
                }
                c0 += w;
            }
        }
    });
    match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// `r = beta*r + alpha*job` with TH's output rules: `r` is resized to `shape` (kept when it has
/// that shape already, whatever its strides); it is zeroed (not scaled) when it was empty, its
/// element count changed, or `beta == 0`.
#[allow(clippy::too_many_arguments)]
pub(super) fn run<T: ConvElem>(
    r: &Tensor<T>,
    shape: &[i64],
    beta: T,
    alpha: T,
    t: &View<T>,
    k: &View<T>,
    flip: bool,
    job: Job,
) -> Result<()> {
    let cur = r.view();
    let n: usize = shape.iter().product::<i64>() as usize;
    let borrow_t = !cur.same_storage(t);
    let borrow_k = !cur.same_storage(k);
    let inp = load(t, borrow_t)?;
    let kraw = load(k, borrow_k)?;
    let klen = job.g.k_len();
    let gemm = gemm_shape::<T::K>(&job, &kraw);
    // the full-mode GEMM runs a valid correlation with the kernel reversed (see `full_gemm`)
    let flip = flip != (gemm.is_some() && job.kind == Kind::Full);
    // (alpha = 1 without a flip leaves the kernel as it is: no copy)
    let ker = if alpha.to_k() == T::K::one() && !flip {
        kraw
    } else {
        let ker = prep_kernel(&kraw, klen, alpha.to_k(), flip)?;
        drop(kraw);
        Cow::Owned(ker)
    };
    let keep = cur.sizes == shape;
    let direct = T::as_k(&[]).is_some() && (!keep || cur.is_contiguous());
    let mut tmp = if direct { None } else { Some(zeros::<T::K>(n)?) };
    let nelem = cur.numel();
    drop(cur);

    let out_view = crate::ops::resize_out(r, shape)?;
    let bk = beta.to_k();
    let zero = nelem == 0 || bk == T::K::zero() || nelem != n;
    let out: &mut [T::K] = match tmp.as_mut() {
        None => {
            let p = out_view.data_ptr()?;
            // SAFETY: the resized output is contiguous with n elements inside its storage
            // (checked by data_ptr), kept alive by out_view; inputs sharing its storage were
            // copied above, so nothing else reads or writes these elements during the call.
            let s: &mut [T] = unsafe { std::slice::from_raw_parts_mut(p, n) };
            T::as_k_mut(s).ok_or_else(|| Error::internal("conv: direct output on a non-native dtype"))?
        }
        Some(v) => {
            if !zero {
                for (o, x) in v.iter_mut().zip(out_view.to_vec()?) {
                    *o = x.to_k();
                }
            }
            v.as_mut_slice()
        }
    };
    // a valid or full GEMM job sets every output element itself (`Operands::fresh`): the
    // implicit GEMM then writes the output once instead of zeroing it and adding to it
    let fresh = zero && gemm.is_some() && job.kind != Kind::Rev;
    if zero && !fresh {
        out.fill(T::K::zero());
    } else if !zero && bk != T::K::one() {
        for x in out.iter_mut() {
            *x = x.mul(bk);
        }
    }

    if let Some(dense) = gemm {
        let ops = Operands { inp: &inp, ker: &ker, g: job.g, o: job.o, dense, fresh };
        match job.kind {
            Kind::Valid => valid_gemm(out, &ops)?,
            Kind::Full => full_gemm(out, &ops)?,
            Kind::Rev => rev_gemm(out, &ops)?,
        }
        return finish(tmp, &out_view, shape);
    }
    let plen_in = job.g.in_len();
    let plen_out: usize = job.o.iter().product();
    let work = job.n_out.saturating_mul(macs(job.kind, &job.g, job.o));
    let (kind, g, o) = (job.kind, job.g, job.o);
    let contrib = job.contrib;
    let inp: &[T::K] = &inp;
    let ker: &[T::K] = &ker;
    debug_assert_eq!(out.len(), job.n_out * plen_out);
    par_planes(out, plen_out, work, |p, dst| {
        let mut list = Vec::new();
        contrib(p, &mut list);
        let pairs: Vec<Pair<T::K>> = list
            .iter()
            .map(|&(i, kk)| (&inp[i * plen_in..(i + 1) * plen_in], &ker[kk * klen..(kk + 1) * klen]))
            .collect();
        plane(dst, kind, &g, o, &pairs);
    });
    finish(tmp, &out_view, shape)
}

/// Stores a computed temporary (non-native dtypes, or an output that was not contiguous) into
/// the output view.
fn finish<T: ConvElem>(tmp: Option<Vec<T::K>>, out_view: &View<T>, shape: &[i64]) -> Result<()> {
    if let Some(v) = tmp {
        let vals: Vec<T> = v.into_iter().map(T::from_k).collect();
        let src = View::from_slice(&vals, shape)?;
        crate::ops::copy::copy(out_view, &src)?;
    }
    Ok(())
}

pub(super) fn dims<T: Scalar>(v: &View<T>, n: usize, what: &str, arg: u32) -> Result<Vec<i64>> {
    if v.ndim() != n {
        return Err(Error::size(format!("{what}: {n}D Tensor expected, got {}D", v.ndim())).at_arg(arg));
    }
    Ok(v.sizes.clone())
}

pub(super) fn mode_kind(m: Option<Mode>) -> (Kind, bool) {
    match m {
        None => (Kind::Rev, false),
        Some(m) => (Kind::of(m), m.flip != m.full),
    }
}
