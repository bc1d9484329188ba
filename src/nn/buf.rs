//! Data access for the layers: inputs as contiguous slices, outputs and accumulated gradients
//! as mutable contiguous slices, parallel loops over disjoint chunks, and the GEMM on slices.
//!
//! Inputs are read in place when contiguous and copied once otherwise. An output is written in
//! place when (after TH's `resizeAs` rule) it is contiguous; otherwise the layer computes into a
//! temporary that `finish` copies into the caller's view. A borrowed input never aliases an
//! output's slice: `read` copies an input that shares storage with any output it is given.

use crate::Scalar;
use crate::core::error::{Error, Result};
use crate::core::tensor::{Tensor, View};
use crate::exec::parallel;
use crate::linalg::gemm::{self, Gemm, MatMut, MatRef};
use std::borrow::Cow;

/// The elements of `v` in row-major order: borrowed when `v` is contiguous and shares no
/// storage with any view of `outs`, else a copy.
pub fn read<'a, T: Scalar>(v: &'a View<T>, outs: &[&View<T>]) -> Result<Cow<'a, [T]>> {
    let n = v.numel();
    if n == 0 {
        return Ok(Cow::Borrowed(&[]));
    }
    if v.is_contiguous() && !outs.iter().any(|o| o.same_storage(v)) {
        let p = v.data_ptr()?;
        // SAFETY: data_ptr checked that the view's n contiguous elements lie in its host
        // storage, which `v` keeps alive for 'a; no output of this call shares the storage, so
        // nothing writes these elements while the slice lives (TH's thread-safety contract
        // excludes other threads writing an input during a call).
        return Ok(Cow::Borrowed(unsafe { std::slice::from_raw_parts(p, n) }));
    }
    Ok(Cow::Owned(v.to_vec()?))
}

/// An output being written: a contiguous slice of the caller's tensor, or a temporary that
/// `finish` copies into it.
#[must_use = "call finish() to store a temporary output"]
pub struct Out<T: Scalar> {
    view: View<T>,
    /// The first element of a contiguous view with elements (checked by `data_ptr`), else NULL.
    ptr: *mut T,
    temp: Option<Vec<T>>,
}

impl<T: Scalar> Out<T> {
    /// `r` resized to `shape` by TH's `resizeAs` rule (kept with its strides when it already
    /// has `shape`, else made contiguous). Its values are unspecified until written.
    pub fn new(r: &Tensor<T>, shape: &[i64]) -> Result<Self> {
        let view = crate::ops::resize_out(r, shape)?;
        Self::on(view, false)
    }

    /// As `new`, every element set to zero.
    pub fn zeros(r: &Tensor<T>, shape: &[i64]) -> Result<Self> {
        let mut o = Self::new(r, shape)?;
        o.as_mut().fill(T::default());
        Ok(o)
    }

    /// The existing elements of `r` (no resize; they keep their values): for gradients that are
    /// accumulated. `r` must hold exactly `n` elements (error: argument `arg`, `name`).
    pub fn acc(r: &Tensor<T>, n: usize, arg: u32, name: &str) -> Result<Self> {
        let view = r.view();
        acc_len(&view, n, arg, name)?;
        Self::on(view, true)
    }

    fn on(view: View<T>, keep: bool) -> Result<Self> {
        if view.numel() == 0 {
            return Ok(Out { view, ptr: std::ptr::null_mut(), temp: None });
        }
        if view.is_contiguous() {
            let ptr = view.data_ptr()?;
            return Ok(Out { view, ptr, temp: None });
        }
        let temp = if keep { view.to_vec()? } else { crate::core::limits::try_filled(view.numel(), T::default())? };
        Ok(Out { view, ptr: std::ptr::null_mut(), temp: Some(temp) })
    }

    /// The view being written (to pass to `read` as an output).
    pub fn view(&self) -> &View<T> {
        &self.view
    }

    /// Stores a temporary into the caller's view.
    pub fn finish(self) -> Result<()> {
        match self.temp {
            None => Ok(()),
            Some(t) => {
                let src = View::from_slice(&t, &self.view.sizes)?;
                crate::ops::copy::copy(&self.view, &src)
            }
        }
    }
}

impl<T: Scalar> AsMut<[T]> for Out<T> {
    /// The elements, row-major.
    fn as_mut(&mut self) -> &mut [T] {
        if let Some(t) = &mut self.temp {
            return t;
        }
        if self.ptr.is_null() {
            return &mut [];
        }
        // SAFETY: `ptr` starts the view's numel() contiguous elements inside its host storage
        // (data_ptr checked), kept alive by `self.view`; the slice borrows `self` mutably, so no
        // other slice of this output exists, and inputs sharing its storage were copied (`read`).
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.view.numel()) }
    }
}

/// `Out::acc`'s check (for device halves that accumulate on the device): `v` holds exactly
/// `n` elements, else an error about argument `arg` (`name`).
pub fn acc_len<T: Scalar>(v: &View<T>, n: usize, arg: u32, name: &str) -> Result<()> {
    if v.numel() != n {
        return Err(super::check::size_err(
            arg,
            name,
            format_args!("expected {n} elements (the parameter's), got {}", v.desc()),
        ));
    }
    Ok(())
}

/// The parameter gradients a layer accumulates into: `gradWeight` (argument `arg`) and, unless
/// NULL, `gradBias` (argument `arg + 1`), each the caller's tensor holding exactly as many
/// elements as its parameter (`Out::acc`).
#[must_use = "call finish() to store temporary gradients"]
pub struct Grads<T: Scalar> {
    pub w: Out<T>,
    pub b: Option<Out<T>>,
}

impl<T: Scalar> Grads<T> {
    /// `grad_weight` with `nw` elements and `grad_bias` (if any) with `nb`.
    pub fn new(grad_weight: &Tensor<T>, nw: usize, grad_bias: Option<&Tensor<T>>, nb: usize, arg: u32) -> Result<Self> {
        let w = Out::acc(grad_weight, nw, arg, "gradWeight")?;
        let b = grad_bias.map(|t| Out::acc(t, nb, arg + 1, "gradBias")).transpose()?;
        Ok(Grads { w, b })
    }

    /// The views being written (to pass to `read` as outputs).
    pub fn views(&self) -> Vec<&View<T>> {
        std::iter::once(self.w.view()).chain(self.b.as_ref().map(|b| b.view())).collect()
    }

    /// Stores temporaries into the caller's tensors.
    pub fn finish(self) -> Result<()> {
        self.w.finish()?;
        self.b.map_or(Ok(()), Out::finish)
    }
}

/// `acc[j] += scale * g[i * acc.len() + j]` over the rows `i` of `g`, in order: a bias gradient
/// from gradOutput rows of one value per output feature.
pub fn add_rows<T: Scalar + std::ops::Mul<Output = T> + std::ops::AddAssign>(acc: &mut [T], g: &[T], scale: T) {
    for row in g.chunks(acc.len().max(1)) {
        for (a, &v) in acc.iter_mut().zip(row) {
            *a += scale * v;
        }
    }
}

/// A raw pointer to a buffer whose disjoint parts parallel pieces write.
pub(crate) use crate::exec::parallel::SharedPtr;

/// Runs `f(index, chunk)` over the `len`-element chunks of `out`, in parallel on the library's
/// pool when `work` (elements touched in all) is large enough. Each chunk is handed to exactly
/// one call, so results never depend on the thread count.
pub fn par_chunks<T: Send + Sync>(out: &mut [T], len: usize, work: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    par_chunks_with(out, len, work, || (), |_, i, s| f(i, s));
}

/// As `par_chunks`, with a state (scratch space) made by `init` once per piece of the loop and
/// handed to each of its calls `f(state, index, chunk)`.
pub fn par_chunks_with<T: Send + Sync, S>(
    out: &mut [T],
    len: usize,
    work: usize,
    init: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, usize, &mut [T]) + Sync,
) {
    if len == 0 {
        return;
    }
    let n = out.len() / len;
    let base = SharedPtr(out.as_mut_ptr());
    parallel::for_range(n, work, |a, b| {
        let mut state = init();
        for i in a..b {
            // SAFETY: chunk i (< n) of `out`; the ranges given to the pieces are disjoint, so no
            // two threads make a slice of the same chunk, and `out` outlives the loop.
            let s = unsafe { std::slice::from_raw_parts_mut(base.offset((i * len) as isize), len) };
            f(&mut state, i, s);
        }
    });
}

/// A row-major or transposed matrix operand on a slice: `rows x cols` with leading dimension
/// `ld` (`Mat::n(s, ld)` row-major, `Mat::t(s, ld)` the transpose of a row-major matrix).
#[derive(Clone, Copy)]
pub struct Mat<'a, T> {
    s: &'a [T],
    rs: usize,
    cs: usize,
}

impl<'a, T> Mat<'a, T> {
    /// Row-major with rows `ld` apart.
    pub fn n(s: &'a [T], ld: usize) -> Self {
        Mat { s, rs: ld, cs: 1 }
    }
    /// The transpose of a row-major matrix with rows `ld` apart.
    pub fn t(s: &'a [T], ld: usize) -> Self {
        Mat { s, rs: 1, cs: ld }
    }
    fn fits(&self, rows: usize, cols: usize) -> bool {
        rows == 0 || cols == 0 || (rows - 1) * self.rs + (cols - 1) * self.cs < self.s.len()
    }
}

/// `c = beta*c + alpha*(a @ b)` with `c` (m x n, row-major, rows `ldc` apart), `a` m x k and
/// `b` k x n, through the library's GEMM (packed kernels, threaded for large products).
#[allow(clippy::too_many_arguments)] // the BLAS shape
pub fn gemm<T: Gemm>(
    m: usize,
    n: usize,
    k: usize,
    alpha: T,
    a: Mat<T>,
    b: Mat<T>,
    beta: T,
    c: &mut [T],
    ldc: usize,
) -> Result<()> {
    if m == 0 || n == 0 {
        return Ok(());
    }
    if !a.fits(m, k) || !b.fits(k, n) || (m - 1) * ldc + n > c.len() || n > ldc {
        return Err(Error::internal(format!("nn gemm: operands too small for {m}x{n}x{k}")));
    }
    let ar = MatRef { ptr: a.s.as_ptr(), rs: a.rs as isize, cs: a.cs as isize };
    let br = MatRef { ptr: b.s.as_ptr(), rs: b.rs as isize, cs: b.cs as isize };
    let cm = MatMut { ptr: c.as_mut_ptr(), rs: ldc as isize, cs: 1 };
    // SAFETY: the bounds were checked above; `c` is a distinct &mut slice, so it overlaps
    // neither `a` nor `b`, and its rows (n <= ldc) are distinct elements.
    unsafe { gemm::gemm(m, n, k, alpha, ar, br, beta, cm) }
}
