//! TH's matrix products over tensors (`THTensorMath.h` §4.9): addmm, addmv, addr, addbmm,
//! baddbmm, match. All run through [`gemm::gemm`] on the operands' own strides (a transposed or
//! narrowed operand is never copied, except when it shares memory with the output).
//!
//! Conventions (TH's): `r = beta*t + alpha*(product)`; `r` is resized to the result's shape
//! (kept with its strides when it already has it); `beta == 0` ignores `t` entirely (NaN in it
//! does not propagate); `alpha == 0` does not read the other operands; `r` may be `t`. An
//! output that shares memory with an operand of the product, or that has a zero stride, is
//! computed into a temporary and copied. Shapes are checked before anything is written.
//!
//! Device operands (all on one device, `Backend::of`, checked with the shapes before anything
//! is written) run on `cuda::blas` (cuBLAS for the floating types, a kernel for the integer
//! ones) under the same rules; the temporaries are then device memory.

use super::gemm::{self, Gemm, MatMut, MatRef};
use crate::core::error::{Error, Result};
use crate::core::limits::try_filled;
use crate::core::tensor::{Tensor, View, size_desc};
use crate::cuda::blas::{as_batch, bmm};
use crate::exec::backend::Backend;
use crate::exec::overlap::{may_overlap, self_overlapping};
use crate::exec::parallel;
use crate::ops::copy::copy;
use crate::ops::{resize_out, temp_like};
use std::sync::Mutex;

/// The first element's address.
fn base<T: Gemm>(v: &View<T>) -> Result<*mut T> {
    match v.host_ptr()? {
        // SAFETY: offset is inside the storage (host_ptr checked the whole view).
        Some(p) => Ok(unsafe { p.add(v.offset) }),
        None => Err(Error::internal("product operand has no elements")),
    }
}

fn mat<T: Gemm>(v: &View<T>) -> Result<MatRef<T>> {
    Ok(MatRef { ptr: base(v)?, rs: v.strides[0] as isize, cs: v.strides[1] as isize })
}

/// A 1-D view as a column (`len x 1`).
fn col<T: Gemm>(v: &View<T>) -> Result<MatRef<T>> {
    let s = v.strides[0] as isize;
    Ok(MatRef { ptr: base(v)?, rs: s, cs: (s * v.sizes[0] as isize).max(1) })
}

/// A 1-D view as a row (`1 x len`).
fn row<T: Gemm>(v: &View<T>) -> Result<MatRef<T>> {
    let s = v.strides[0] as isize;
    Ok(MatRef { ptr: base(v)?, rs: (s * v.sizes[0] as isize).max(1), cs: s })
}

fn mutable<T>(m: MatRef<T>) -> MatMut<T> {
    MatMut { ptr: m.ptr as *mut T, rs: m.rs, cs: m.cs }
}

/// Runs `compute(target, beta)` where `target` is `r` resized to `shape` holding `t` (when
/// `beta != 0`) and `compute` must make `target = beta*target + alpha*product`. Goes through
/// a temporary when `r` overlaps an operand of the product or itself.
fn into_output<T: Gemm>(
    r: &Tensor<T>,
    shape: &[i64],
    beta: T,
    t: &View<T>,
    operands: &[&View<T>],
    compute: impl FnOnce(&View<T>) -> Result<()>,
) -> Result<()> {
    let out = resize_out(r, shape)?;
    let direct = !self_overlapping(&out.sizes, &out.strides) && !operands.iter().any(|v| may_overlap(&out, v));
    let target = if direct { out.clone() } else { temp_like(&out, shape)? };
    if !beta.is_zero() && !target.is_set_to(t) {
        copy(&target, t)?;
    }
    compute(&target)?;
    if !direct {
        copy(&out, &target)?;
    }
    Ok(())
}

/// The engine of a product: every operand (and the output) on one device.
fn backend<T: Gemm>(r: &Tensor<T>, operands: &[&View<T>]) -> Result<Backend> {
    let mut devices = vec![r.with_view(|v| v.device())];
    devices.extend(operands.iter().map(|v| v.device()));
    Backend::of(&devices)
}

/// A matrix `[rows, cols]` view as a batch of one (`cuda::blas::bmm`'s operands).
fn one<T: Gemm>(v: &View<T>) -> View<T> {
    as_batch(v, [1, v.sizes[0], v.sizes[1]], [0, v.strides[0], v.strides[1]])
}

/// A vector as a batch of one `len x 1` column.
fn column<T: Gemm>(v: &View<T>) -> View<T> {
    as_batch(v, [1, v.sizes[0], 1], [0, v.strides[0], 1])
}

/// A vector as a batch of one `1 x len` row.
fn row1<T: Gemm>(v: &View<T>) -> View<T> {
    as_batch(v, [1, 1, v.sizes[0]], [0, 1, v.strides[0]])
}

/// An operand, and its name in errors.
type Named<'a, T> = (&'a str, &'a View<T>);

/// A size error at argument `arg`: `head`, then each operand's name and size (`size mismatch,
/// m1: [2 x 3], m2: [4 x 5]`).
fn sizes_error<T: Gemm>(head: &str, operands: &[Named<T>], arg: u32) -> Error {
    let sizes: Vec<String> = operands.iter().map(|(name, v)| format!("{name}: {}", size_desc(&v.sizes))).collect();
    Error::size(format!("{head}, {}", sizes.join(", "))).at_arg(arg)
}

/// `t` (argument 3) has the result's `shape`, else a size error naming it and the operands.
fn expect_t<T: Gemm>(t: &View<T>, shape: &[i64], (x, y): (Named<T>, Named<T>)) -> Result<()> {
    if t.sizes != shape {
        return Err(sizes_error("size mismatch", &[("t", t), x, y], 3));
    }
    Ok(())
}

/// The operands `x` (argument 5) and `y` (argument 6) of a product have `dims` dimensions, and
/// `x`'s last size is `y`'s first.
fn expect_operands<T: Gemm>((x, y): (Named<T>, Named<T>), dims: [usize; 2]) -> Result<()> {
    expect_dims(x.1, dims[0], x.0, 5)?;
    expect_dims(y.1, dims[1], y.0, 6)?;
    if x.1.sizes[dims[0] - 1] != y.1.sizes[0] {
        return Err(sizes_error("size mismatch", &[x, y], 6));
    }
    Ok(())
}

fn expect_dims<T: Gemm>(v: &View<T>, n: usize, what: &str, arg: u32) -> Result<()> {
    if v.ndim() != n {
        let kind = match n {
            1 => "vector",
            2 => "matrix",
            _ => "3D tensor",
        };
        return Err(Error::size(format!(
            "{kind} expected for {what}, got a {}D tensor of size {}",
            v.ndim(),
            size_desc(&v.sizes)
        ))
        .at_arg(arg));
    }
    Ok(())
}

/// `r = beta*t + alpha*(m1 @ m2)`; `m1` is n x k, `m2` k x p, `t` n x p.
pub fn addmm<T: Gemm>(r: &Tensor<T>, beta: T, t: &View<T>, alpha: T, m1: &View<T>, m2: &View<T>) -> Result<()> {
    let operands = (("m1", m1), ("m2", m2));
    expect_operands(operands, [2, 2])?;
    let shape = [m1.sizes[0], m2.sizes[1]];
    expect_t(t, &shape, operands)?;
    let engine = backend(r, &[t, m1, m2])?;
    let (m, n, k) = (shape[0] as usize, shape[1] as usize, m1.sizes[1] as usize);
    into_output(r, &shape, beta, t, &[m1, m2], |o| match engine {
        Backend::Cuda(_) => bmm(alpha, &one(m1), &one(m2), beta, &one(o)),
        // SAFETY: the views were checked against their storages; o does not overlap m1/m2.
        Backend::Host => unsafe { gemm::gemm(m, n, k, alpha, mat(m1)?, mat(m2)?, beta, mutable(mat(o)?)) },
    })
}

/// `r = beta*t + alpha*(mat @ vec)`; `mat` is n x k, `vec` k, `t` n.
pub fn addmv<T: Gemm>(r: &Tensor<T>, beta: T, t: &View<T>, alpha: T, mat_: &View<T>, vec: &View<T>) -> Result<()> {
    let operands = (("mat", mat_), ("vec", vec));
    expect_operands(operands, [2, 1])?;
    let shape = [mat_.sizes[0]];
    expect_t(t, &shape, operands)?;
    let engine = backend(r, &[t, mat_, vec])?;
    let (m, k) = (shape[0] as usize, vec.sizes[0] as usize);
    into_output(r, &shape, beta, t, &[mat_, vec], |o| match engine {
        Backend::Cuda(_) => bmm(alpha, &one(mat_), &column(vec), beta, &column(o)),
        // SAFETY: as in addmm.
        Backend::Host => unsafe { gemm::gemm(m, 1, k, alpha, mat(mat_)?, col(vec)?, beta, mutable(col(o)?)) },
    })
}

/// `r = beta*t + alpha*outer(vec1, vec2)`; `t` is len(vec1) x len(vec2).
pub fn addr<T: Gemm>(r: &Tensor<T>, beta: T, t: &View<T>, alpha: T, vec1: &View<T>, vec2: &View<T>) -> Result<()> {
    expect_dims(vec1, 1, "vec1", 5)?;
    expect_dims(vec2, 1, "vec2", 6)?;
    let shape = [vec1.sizes[0], vec2.sizes[0]];
    expect_t(t, &shape, (("vec1", vec1), ("vec2", vec2)))?;
    let engine = backend(r, &[t, vec1, vec2])?;
    let (m, n) = (shape[0] as usize, shape[1] as usize);
    into_output(r, &shape, beta, t, &[vec1, vec2], |o| match engine {
        Backend::Cuda(_) => bmm(alpha, &column(vec1), &row1(vec2), beta, &one(o)),
        // SAFETY: as in addmm.
        Backend::Host => unsafe { gemm::gemm(m, n, 1, alpha, col(vec1)?, row(vec2)?, beta, mutable(mat(o)?)) },
    })
}

fn check_batches<T: Gemm>(b1: &View<T>, b2: &View<T>) -> Result<()> {
    expect_dims(b1, 3, "batch1", 5)?;
    expect_dims(b2, 3, "batch2", 6)?;
    if b1.sizes[0] != b2.sizes[0] {
        return Err(Error::size(format!(
            "equal number of batches expected, got {}, {} (batch1: {}, batch2: {})",
            b1.sizes[0],
            b2.sizes[0],
            size_desc(&b1.sizes),
            size_desc(&b2.sizes)
        ))
        .at_arg(6));
    }
    if b1.sizes[2] != b2.sizes[1] {
        return Err(sizes_error("wrong matrix size", &[("batch1", b1), ("batch2", b2)], 6));
    }
    Ok(())
}

/// Matrix `i` of a 3-D view.
fn slice<T>(m: MatRef<T>, stride0: i64, i: usize) -> MatRef<T> {
    MatRef { ptr: m.ptr.wrapping_offset(stride0 as isize * i as isize), ..m }
}

/// `r = beta*t + alpha * sum_b batch1[b] @ batch2[b]`; `t` is n x p.
pub fn addbmm<T: Gemm>(r: &Tensor<T>, beta: T, t: &View<T>, alpha: T, b1: &View<T>, b2: &View<T>) -> Result<()> {
    check_batches(b1, b2)?;
    let shape = [b1.sizes[1], b2.sizes[2]];
    expect_t(t, &shape, (("batch1", b1), ("batch2", b2)))?;
    let engine = backend(r, &[t, b1, b2])?;
    let (nb, m, n, k) = (b1.sizes[0] as usize, shape[0] as usize, shape[1] as usize, b1.sizes[2] as usize);
    into_output(r, &shape, beta, t, &[b1, b2], |o| {
        if let Backend::Cuda(_) = engine {
            return device_addbmm(beta, alpha, b1, b2, o);
        }
        let (a, b, c) = (view3(b1)?, view3(b2)?, mutable(mat(o)?));
        for i in 0..nb {
            let be = if i == 0 { beta } else { T::one() };
            // SAFETY: as in addmm; matrix i of each batch lies inside its view.
            unsafe { gemm::gemm(m, n, k, alpha, slice(a, b1.strides[0], i), slice(b, b2.strides[0], i), be, c)? };
        }
        Ok(())
    })
}

/// `addbmm` on a device: one product per batch into `o`, `beta` for the first and 1 after
/// (the host's order of accumulation; with no batch, as there, nothing is computed).
fn device_addbmm<T: Gemm>(beta: T, alpha: T, b1: &View<T>, b2: &View<T>, o: &View<T>) -> Result<()> {
    let (nb, k) = (b1.sizes[0], b1.sizes[2]);
    let c = one(o);
    for i in 0..nb {
        let at = |v: &View<T>, rows, cols| {
            let mut x = as_batch(v, [1, rows, cols], [0, v.strides[1], v.strides[2]]);
            x.offset = (v.offset as i64 + i * v.strides[0]) as usize;
            x
        };
        let be = if i == 0 { beta } else { T::one() };
        bmm(alpha, &at(b1, o.sizes[0], k), &at(b2, k, o.sizes[1]), be, &c)?;
    }
    Ok(())
}

/// The matrix at batch 0 of a 3-D view (dims 1, 2).
fn view3<T: Gemm>(v: &View<T>) -> Result<MatRef<T>> {
    Ok(MatRef { ptr: base(v)?, rs: v.strides[1] as isize, cs: v.strides[2] as isize })
}

/// `r[b] = beta*t[b] + alpha * batch1[b] @ batch2[b]`; `t` is B x n x p.
pub fn baddbmm<T: Gemm>(r: &Tensor<T>, beta: T, t: &View<T>, alpha: T, b1: &View<T>, b2: &View<T>) -> Result<()> {
    check_batches(b1, b2)?;
    let shape = [b1.sizes[0], b1.sizes[1], b2.sizes[2]];
    expect_t(t, &shape, (("batch1", b1), ("batch2", b2)))?;
    let engine = backend(r, &[t, b1, b2])?;
    let (nb, m, n, k) = (shape[0] as usize, shape[1] as usize, shape[2] as usize, b1.sizes[2] as usize);
    into_output(r, &shape, beta, t, &[b1, b2], |o| {
        if let Backend::Cuda(_) = engine {
            return bmm(alpha, b1, b2, beta, o);
        }
        let (a, b, c) = (view3(b1)?, view3(b2)?, mutable(view3(o)?));
        let (sa, sb, sc) = (b1.strides[0], b2.strides[0], o.strides[0]);
        let per = m.saturating_mul(n).saturating_mul(k);
        // Small matrices: one thread per group of batches; large ones: threads inside gemm.
        let work = if per < gemm::PAR_WORK { nb.saturating_mul(per) } else { 0 };
        let err = Mutex::new(None);
        parallel::for_range(nb, work, |lo, hi| {
            for i in lo..hi {
                let ci = mutable(slice(c.as_ref(), sc, i));
                // SAFETY: as in addmm; the batches of o are disjoint (not self-overlapping).
                if let Err(e) = unsafe { gemm::gemm(m, n, k, alpha, slice(a, sa, i), slice(b, sb, i), beta, ci) } {
                    *err.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                    return;
                }
            }
        });
        match err.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    })
}

/// `r[i, j] = gain * sum_d (m1[i, d] - m2[j, d])^2` with `m1`, `m2` flattened to 2-D (rows by
/// their first dim); the difference is in the element type, the sum in `accreal`.
pub fn match_<T: Gemm>(r: &Tensor<T>, m1: &View<T>, m2: &View<T>, gain: T) -> Result<()> {
    if m1.ndim() == 0 || m2.ndim() == 0 {
        return Err(Error::size("match: m1 and m2 must be non-empty").at_arg(if m1.ndim() == 0 { 2 } else { 3 }));
    }
    let (n1, n2) = (m1.sizes[0] as usize, m2.sizes[0] as usize);
    let (d1, d2) = (m1.numel() / n1, m2.numel() / n2);
    if d1 != d2 {
        return Err(Error::size(format!(
            "m1 and m2 must have the same inner vector dim, got m1: {}, m2: {}",
            size_desc(&m1.sizes),
            size_desc(&m2.sizes)
        ))
        .at_arg(3));
    }
    let (a, b) = (m1.to_vec()?, m2.to_vec()?);
    let mut out = try_filled(n1 * n2, T::zero())?;
    let op = MatMut { ptr: out.as_mut_ptr(), rs: n2 as isize, cs: 1 };
    parallel::for_range(n1, n1 * n2 * d1, |lo, hi| {
        let op = &op;
        for i in lo..hi {
            let x = &a[i * d1..(i + 1) * d1];
            for j in 0..n2 {
                let y = &b[j * d1..(j + 1) * d1];
                let mut s = T::zero().to_acc();
                for (&u, &v) in x.iter().zip(y) {
                    let d = u.sub(v).to_acc();
                    s = T::acc_add(s, T::acc_mul(d, d));
                }
                // SAFETY: (i, j) is inside out; rows are split between threads.
                unsafe { *op.ptr.add(i * n2 + j) = gain.mul(T::from_acc(s)) };
            }
        }
    });
    let res = View::from_slice(&out, &[n1 as i64, n2 as i64])?;
    let o = resize_out(r, &[n1 as i64, n2 as i64])?;
    copy(&o, &res)
}
