//! The math core: safe, generic functions over `View`s and `Tensor`s that the C API wraps.
//!
//! `map0..map3` run a closure elementwise over same-shaped views through the pointwise plan (`exec::plan`);
//! `pointwise1..3` add TH's conventions on top: broadcasting the inputs (numpy rules, or TH's
//! old "same element count" pairing when shapes don't broadcast), resizing the output like
//! `resizeAs`, and computing through a temporary when the output partially overlaps an input.

pub mod arith;
pub mod conv;
pub mod copy;
pub mod index;
pub mod num;
pub mod random;
pub mod reduce;

use crate::core::dtype::Scalar;
use crate::core::error::{Error, Result};
use crate::core::tensor::{Tensor, View, broadcast_shapes, fill_strides, size_desc};
use crate::cuda::{self, launch::Call, ops::operand};
use crate::exec::backend::{Backend, host_base};
use crate::exec::overlap::{partial_overlap, self_overlapping};
use crate::exec::parallel::{self, SharedPtr};
use crate::exec::plan::Plan;
use crate::kernels::pointwise::{self as kernels, Block, Strided};

fn check_same<A: Scalar, B: Scalar>(o: &View<A>, a: &View<B>) -> Result<()> {
    if o.sizes != a.sizes {
        return Err(Error::internal(format!(
            "apply: sizes {} and {} differ",
            size_desc(&o.sizes),
            size_desc(&a.sizes)
        )));
    }
    Ok(())
}

/// `o[i] = f()` for every element.
pub fn map0<O: Scalar>(o: &View<O>, k: Call, f: impl Fn() -> O + Sync) -> Result<()> {
    if o.numel() == 0 {
        return Ok(());
    }
    if let Backend::Cuda(d) = Backend::of(&[o.device()])? {
        return cuda::ops::run(d, &k, o, &[]);
    }
    let mut plan = Plan::<1>::new(&o.sizes, [&o.strides]);
    let nt = streams(o.numel(), size_of::<O>());
    plan.set_fence(nt.then_some(kernels::store_fence as fn()));
    plan.set_tiling(true); // pointwise: the kernel reads each input only at its run
    let b = host_base(o)?;
    // SAFETY: the view was checked against its storage; runs write disjoint output elements.
    unsafe {
        plan.run([b], [size_of::<O>()], self_overlapping(&o.sizes, &o.strides), |p, s, n| {
            kernels::fill_run(n, Strided(p[0] as *mut O, s[0]), nt, &f);
        })
    };
    Ok(())
}

/// `o[i] = f(a[i])` for same-shaped views.
pub fn map1<O: Scalar, A: Scalar>(o: &View<O>, a: &View<A>, k: Call, f: impl Fn(A) -> O + Sync) -> Result<()> {
    map1_with::<true, O, A>(o, a, k, None, f)
}

/// `map1`; `SIMD`: whether the kernel gets its AVX2 / AVX-512 copies (see `pointwise1_plain`);
/// `block`: a slice kernel for the contiguous runs (see `pointwise1_block`).
fn map1_with<const SIMD: bool, O: Scalar, A: Scalar>(
    o: &View<O>,
    a: &View<A>,
    k: Call,
    block: Option<Block<O, A>>,
    f: impl Fn(A) -> O + Sync,
) -> Result<()> {
    check_same(o, a)?;
    if o.numel() == 0 {
        return Ok(());
    }
    if let Backend::Cuda(d) = Backend::of(&[o.device(), a.device()])? {
        return cuda::ops::run(d, &k, o, &[operand(a)?]);
    }
    let mut plan = Plan::<2>::new(&o.sizes, [&o.strides, &a.strides]);
    let nt = streams(o.numel(), size_of::<O>() + size_of::<A>());
    plan.set_fence(nt.then_some(kernels::store_fence as fn()));
    plan.set_tiling(true); // pointwise: the kernel reads each input only at its run
    let bases = [host_base(o)?, host_base(a)?];
    // SAFETY: both views were checked against their storages; runs write disjoint outputs.
    unsafe {
        plan.run(bases, [size_of::<O>(), size_of::<A>()], self_overlapping(&o.sizes, &o.strides), |p, s, n| {
            run1::<SIMD, O, A, _>(n, Strided(p[0] as *mut O, s[0]), Strided(p[1] as *const A, s[1]), nt, &f, block);
        })
    };
    Ok(())
}

/// `o[i] = f(a[i], b[i])` for same-shaped views.
pub fn map2<O: Scalar, A: Scalar, B: Scalar>(
    o: &View<O>,
    a: &View<A>,
    b: &View<B>,
    k: Call,
    f: impl Fn(A, B) -> O + Sync,
) -> Result<()> {
    map2_with::<true, O, A, B>(o, a, b, k, f)
}

/// `map2`; `SIMD` as in `map1_with`.
fn map2_with<const SIMD: bool, O: Scalar, A: Scalar, B: Scalar>(
    o: &View<O>,
    a: &View<A>,
    b: &View<B>,
    k: Call,
    f: impl Fn(A, B) -> O + Sync,
) -> Result<()> {
    check_same(o, a)?;
    check_same(o, b)?;
    if o.numel() == 0 {
        return Ok(());
    }
    if let Backend::Cuda(d) = Backend::of(&[o.device(), a.device(), b.device()])? {
        return cuda::ops::run(d, &k, o, &[operand(a)?, operand(b)?]);
    }
    let mut plan = Plan::<3>::new(&o.sizes, [&o.strides, &a.strides, &b.strides]);
    let nt = streams(o.numel(), size_of::<O>() + size_of::<A>() + size_of::<B>());
    plan.set_fence(nt.then_some(kernels::store_fence as fn()));
    plan.set_tiling(true); // pointwise: the kernel reads each input only at its run
    let bases = [host_base(o)?, host_base(a)?, host_base(b)?];
    // SAFETY: as in map1.
    unsafe {
        plan.run(
            bases,
            [size_of::<O>(), size_of::<A>(), size_of::<B>()],
            self_overlapping(&o.sizes, &o.strides),
            |p, s, n| {
                let (a, b) = (Strided(p[1] as *const A, s[1]), Strided(p[2] as *const B, s[2]));
                run2::<SIMD, O, A, B, _>(n, Strided(p[0] as *mut O, s[0]), a, b, nt, &f);
            },
        )
    };
    Ok(())
}

/// `o[i] = f(a[i], b[i], c[i])` for same-shaped views.
pub fn map3<O: Scalar, A: Scalar, B: Scalar, C: Scalar>(
    o: &View<O>,
    a: &View<A>,
    b: &View<B>,
    c: &View<C>,
    k: Call,
    f: impl Fn(A, B, C) -> O + Sync,
) -> Result<()> {
    check_same(o, a)?;
    check_same(o, b)?;
    check_same(o, c)?;
    if o.numel() == 0 {
        return Ok(());
    }
    if let Backend::Cuda(d) = Backend::of(&[o.device(), a.device(), b.device(), c.device()])? {
        return cuda::ops::run(d, &k, o, &[operand(a)?, operand(b)?, operand(c)?]);
    }
    let mut plan = Plan::<4>::new(&o.sizes, [&o.strides, &a.strides, &b.strides, &c.strides]);
    let elem = [size_of::<O>(), size_of::<A>(), size_of::<B>(), size_of::<C>()];
    let nt = streams(o.numel(), elem.iter().sum());
    plan.set_fence(nt.then_some(kernels::store_fence as fn()));
    plan.set_tiling(true); // pointwise: the kernel reads each input only at its run
    let bases = [host_base(o)?, host_base(a)?, host_base(b)?, host_base(c)?];
    // SAFETY: as in map1.
    unsafe {
        plan.run(bases, elem, self_overlapping(&o.sizes, &o.strides), |p, s, n| {
            let (a, b, c) =
                (Strided(p[1] as *const A, s[1]), Strided(p[2] as *const B, s[2]), Strided(p[3] as *const C, s[3]));
            kernels::map3_run(n, Strided(p[0] as *mut O, s[0]), a, b, c, nt, &f);
        })
    };
    Ok(())
}

/// `kernels::map1_run`, or its plain copy alone without `SIMD`, or `block` on a contiguous run.
///
/// # Safety
/// As `kernels::map1_run`; `block` as `kernels::map1_block` requires.
#[inline(always)]
unsafe fn run1<const SIMD: bool, O: Copy, A: Copy, F: Fn(A) -> O>(
    n: usize,
    o: Strided<*mut O>,
    a: Strided<*const A>,
    nt: bool,
    f: &F,
    block: Option<Block<O, A>>,
) {
    // SAFETY: forwarded contract.
    unsafe {
        match block {
            Some(b) if o.1 == 1 && a.1 == 1 => kernels::map1_block(n, o.0, a.0, nt, b),
            _ if SIMD => kernels::map1_run(n, o, a, nt, f),
            _ => kernels::map1_base(n, o, a, nt, f),
        }
    }
}

/// `kernels::map2_run`, or its plain copy alone without `SIMD`.
///
/// # Safety
/// As `kernels::map2_run`.
#[inline(always)]
unsafe fn run2<const SIMD: bool, O: Copy, A: Copy, B: Copy, F: Fn(A, B) -> O>(
    n: usize,
    o: Strided<*mut O>,
    a: Strided<*const A>,
    b: Strided<*const B>,
    nt: bool,
    f: &F,
) {
    // SAFETY: forwarded contract.
    unsafe { if SIMD { kernels::map2_run(n, o, a, b, nt, f) } else { kernels::map2_base(n, o, a, b, nt, f) } }
}

/// A fresh contiguous view of `shape` in the memory `like` lives in (host or its device).
pub fn temp_like<T: Scalar, L: Scalar>(like: &View<L>, shape: &[i64]) -> Result<View<T>> {
    match like.device() {
        crate::core::allocator::Device::Cpu => View::contiguous(shape),
        crate::core::allocator::Device::Cuda(i) => cuda::copy::empty_like(cuda::runtime::device(i)?, shape),
    }
}

/// `v` viewed with `shape` when its element count matches (TH's pairing of elements in
/// row-major order): a reshaped view when contiguous, else a contiguous copy.
fn reshaped<T: Scalar>(v: &View<T>, shape: &[i64]) -> Result<View<T>> {
    if v.is_contiguous() {
        let mut r = v.clone();
        r.sizes = shape.to_vec();
        r.strides = fill_strides(shape, None)?;
        return Ok(r);
    }
    let c = temp_like(v, &v.sizes)?;
    crate::ops::copy::copy(&c, v)?;
    reshaped(&c, shape)
}

/// The common shape of the inputs and each input viewed at it: numpy broadcasting, or, when
/// the shapes don't broadcast but all element counts are equal, TH's old rule (elements paired
/// in row-major order, result shaped like the first input).
pub fn broadcast_all<T: Scalar>(views: &[&View<T>]) -> Result<(Vec<i64>, Vec<View<T>>)> {
    let mut shape: Vec<i64> = Vec::new();
    let mut err = None;
    for v in views {
        match broadcast_shapes(&shape, &v.sizes) {
            Ok(s) => shape = s,
            Err(e) => {
                err = Some(e);
                break;
            }
        }
    }
    if let Some(e) = err {
        let n = views[0].numel();
        if views.iter().all(|v| v.numel() == n) {
            let shape = views[0].sizes.clone();
            let vs = views.iter().map(|v| reshaped(v, &shape)).collect::<Result<Vec<_>>>()?;
            return Ok((shape, vs));
        }
        return Err(e);
    }
    let vs = views
        .iter()
        .map(|v| if v.sizes == shape { Ok((*v).clone()) } else { v.expand(&shape) })
        .collect::<Result<_>>()?;
    Ok((shape, vs))
}

/// Whether an elementwise op over `n` elements touching `bytes_per_elem` bytes each (all
/// operands) streams its contiguous output past the caches: when it is larger than the
/// last-level cache, the output would not be read back from there anyway.
fn streams(n: usize, bytes_per_elem: usize) -> bool {
    n.saturating_mul(bytes_per_elem) >= kernels::stream_threshold()
}

/// An input of the pointwise functions: a `View`, or a `Tensor` whose view is read in place
/// (the fast path for contiguous operands clones nothing).
pub trait Operand<T: Scalar> {
    fn with<R>(&self, f: impl FnOnce(&View<T>) -> R) -> R;
    /// A snapshot of the view.
    fn snapshot(&self) -> View<T> {
        self.with(|v| v.clone())
    }
}

impl<T: Scalar> Operand<T> for View<T> {
    fn with<R>(&self, f: impl FnOnce(&View<T>) -> R) -> R {
        f(self)
    }
}

impl<T: Scalar, X: Operand<T>> Operand<T> for &X {
    fn with<R>(&self, f: impl FnOnce(&View<T>) -> R) -> R {
        (**self).with(f)
    }
}

impl<T: Scalar> Operand<T> for Tensor<T> {
    fn with<R>(&self, f: impl FnOnce(&View<T>) -> R) -> R {
        self.with_view(f)
    }
}

/// Dims a `Flat` records (more go the general way).
const FLAT_DIMS: usize = 8;

/// A contiguous, non-empty host operand: its first element, element count and shape.
struct Flat {
    ptr: *mut u8,
    n: usize,
    bytes: usize,
    nd: usize,
    sizes: [i64; FLAT_DIMS],
}

/// The element count of `v` when it is contiguous.
fn contiguous_numel<T: Scalar>(v: &View<T>) -> Option<usize> {
    let mut expect = 1i64;
    for d in (0..v.sizes.len()).rev() {
        let s = v.sizes[d];
        if s != 1 {
            if v.strides[d] != expect {
                return None;
            }
            expect *= s; // cannot overflow: a view's element count fits i64 (View invariant 3)
        }
    }
    Some(expect as usize)
}

/// The address of `v`'s first element when its `n` contiguous elements are in host memory.
fn flat_base<T: Scalar>(v: &View<T>, n: usize) -> Option<*mut u8> {
    let (p, len) = v.storage.as_ref()?.host_parts()?;
    if p.is_null() || v.offset.checked_add(n)? > len {
        return None;
    }
    // SAFETY: offset + n <= len, so the offset stays inside the allocation.
    Some(unsafe { p.add(v.offset) } as *mut u8)
}

/// The output of the fast path: `r`'s view when contiguous, non-empty and in host memory.
fn flat_out<O: Scalar>(r: &Tensor<O>) -> Option<Flat> {
    r.with_view(|v| {
        let nd = v.sizes.len();
        if nd == 0 || nd > FLAT_DIMS {
            return None;
        }
        let n = contiguous_numel(v)?;
        let ptr = flat_base(v, n)?;
        let mut sizes = [0i64; FLAT_DIMS];
        for (d, s) in sizes.iter_mut().zip(&v.sizes) {
            *d = *s;
        }
        Some(Flat { ptr, n, bytes: n * size_of::<O>(), nd, sizes })
    })
}

/// An input of the fast path: contiguous, in host memory, shaped like `out`, and either the
/// same memory as `out` (same element size, so every element is read before it is
/// overwritten) or apart from it.
fn flat_in<T: Scalar>(x: &impl Operand<T>, out: &Flat) -> Option<*mut u8> {
    x.with(|v| {
        if v.sizes.len() != out.nd || v.sizes.iter().zip(&out.sizes).any(|(a, b)| a != b) {
            return None;
        }
        let n = contiguous_numel(v)?;
        let ptr = flat_base(v, n)?;
        let (a, b, bytes) = (ptr as usize, out.ptr as usize, n * size_of::<T>());
        let independent = (a == b && bytes == out.bytes) || a + bytes <= b || b + out.bytes <= a;
        independent.then_some(ptr)
    })
}

/// TH's `resizeAs` for an output: kept (whatever its strides) when it already has `shape`,
/// else resized to `shape`, contiguous.
pub fn resize_out<T: Scalar>(r: &Tensor<T>, shape: &[i64]) -> Result<View<T>> {
    let (v, same) =
        r.with_view(|v| if v.sizes == shape { Ok((v.clone(), true)) } else { Ok((v.resize(shape, None)?, false)) })?;
    if !same {
        r.set_view(v.clone());
    }
    Ok(v)
}

/// Runs `compute(out)` into `r` resized to `shape` (callers check first that all operands are
/// on one device, so a refused call leaves `r` as it was); when `r` partially overlaps one of
/// `inputs`, computes into a temporary and copies it to `r` afterwards.
fn into_output<O: Scalar>(
    r: &Tensor<O>,
    shape: &[i64],
    overlaps: impl Fn(&View<O>) -> bool,
    compute: impl FnOnce(&View<O>) -> Result<()>,
) -> Result<()> {
    let out = resize_out(r, shape)?;
    if overlaps(&out) {
        let tmp = temp_like(&out, shape)?;
        compute(&tmp)?;
        return crate::ops::copy::copy(&out, &tmp);
    }
    compute(&out)
}

/// `r = f(a)` elementwise, `r` resized like `a`.
pub fn pointwise1<O: Scalar, A: Scalar>(
    r: &Tensor<O>,
    a: &impl Operand<A>,
    k: Call,
    f: impl Fn(A) -> O + Sync,
) -> Result<()> {
    pointwise1_with::<true, O, A>(r, a, k, None, f)
}

/// `pointwise1` with a slice kernel (`kernels::vmath::block`) for the contiguous runs, `f`
/// for the others (and everything when `block` is `None`). The two may differ in the last bits
/// (each within its function's accuracy bound).
pub fn pointwise1_block<O: Scalar, A: Scalar>(
    r: &Tensor<O>,
    a: &impl Operand<A>,
    k: Call,
    block: Option<Block<O, A>>,
    f: impl Fn(A) -> O + Sync,
) -> Result<()> {
    pointwise1_with::<true, O, A>(r, a, k, block, f)
}

/// `pointwise1` for an `f` whose loop no instruction set speeds up (a libm call, integer
/// division): its kernel is compiled once, plain, not also for AVX2 and AVX-512.
pub fn pointwise1_plain<O: Scalar, A: Scalar>(
    r: &Tensor<O>,
    a: &impl Operand<A>,
    k: Call,
    f: impl Fn(A) -> O + Sync,
) -> Result<()> {
    pointwise1_with::<false, O, A>(r, a, k, None, f)
}

fn pointwise1_with<const SIMD: bool, O: Scalar, A: Scalar>(
    r: &Tensor<O>,
    a: &impl Operand<A>,
    k: Call,
    block: Option<Block<O, A>>,
    f: impl Fn(A) -> O + Sync,
) -> Result<()> {
    if let Some(o) = flat_out(r)
        && let Some(pa) = flat_in(a, &o)
    {
        let nt = streams(o.n, size_of::<O>() + size_of::<A>());
        let (po, pa) = (SharedPtr(o.ptr as *mut O), SharedPtr(pa as *mut A));
        parallel::for_range(o.n, o.n, |s, e| {
            // SAFETY: both operands are contiguous host memory of o.n elements (checked against
            // their storages by flat_out / flat_in), not partially overlapping; pieces are
            // disjoint.
            unsafe {
                let a = Strided(pa.offset(s as isize).cast_const(), 1);
                run1::<SIMD, O, A, _>(e - s, Strided(po.offset(s as isize), 1), a, nt, &f, block);
            }
            if nt {
                kernels::store_fence();
            }
        });
        return Ok(());
    }
    let a = a.snapshot();
    Backend::of(&[r.with_view(|v| v.device()), a.device()])?;
    let shape = a.sizes.clone();
    into_output(r, &shape, |o| partial_overlap(o, &a), |o| map1_with::<SIMD, O, A>(o, &a, k, block, f))
}

/// `r = f(a, b)` elementwise with broadcasting, `r` resized to the common shape.
pub fn pointwise2<O: Scalar, T: Scalar>(
    r: &Tensor<O>,
    a: &impl Operand<T>,
    b: &impl Operand<T>,
    k: Call,
    f: impl Fn(T, T) -> O + Sync,
) -> Result<()> {
    pointwise2_with::<true, O, T>(r, a, b, k, f)
}

/// `pointwise2` with a plain kernel alone (as `pointwise1_plain`).
pub fn pointwise2_plain<O: Scalar, T: Scalar>(
    r: &Tensor<O>,
    a: &impl Operand<T>,
    b: &impl Operand<T>,
    k: Call,
    f: impl Fn(T, T) -> O + Sync,
) -> Result<()> {
    pointwise2_with::<false, O, T>(r, a, b, k, f)
}

fn pointwise2_with<const SIMD: bool, O: Scalar, T: Scalar>(
    r: &Tensor<O>,
    a: &impl Operand<T>,
    b: &impl Operand<T>,
    k: Call,
    f: impl Fn(T, T) -> O + Sync,
) -> Result<()> {
    if let Some(o) = flat_out(r)
        && let Some(pa) = flat_in(a, &o)
        && let Some(pb) = flat_in(b, &o)
    {
        let nt = streams(o.n, size_of::<O>() + 2 * size_of::<T>());
        let (po, pa, pb) = (SharedPtr(o.ptr as *mut O), SharedPtr(pa as *mut T), SharedPtr(pb as *mut T));
        parallel::for_range(o.n, o.n, |s, e| {
            // SAFETY: as in pointwise1.
            unsafe {
                let (a, b) =
                    (Strided(pa.offset(s as isize).cast_const(), 1), Strided(pb.offset(s as isize).cast_const(), 1));
                run2::<SIMD, O, T, T, _>(e - s, Strided(po.offset(s as isize), 1), a, b, nt, &f);
            }
            if nt {
                kernels::store_fence();
            }
        });
        return Ok(());
    }
    let (a, b) = (a.snapshot(), b.snapshot());
    Backend::of(&[r.with_view(|v| v.device()), a.device(), b.device()])?;
    let (shape, vs) = broadcast_all(&[&a, &b])?;
    into_output(
        r,
        &shape,
        |o| vs.iter().any(|v| partial_overlap(o, v)),
        |o| map2_with::<SIMD, O, T, T>(o, &vs[0], &vs[1], k, f),
    )
}

/// `r = f(a, b, c)` elementwise with broadcasting.
pub fn pointwise3<O: Scalar, T: Scalar>(
    r: &Tensor<O>,
    a: &impl Operand<T>,
    b: &impl Operand<T>,
    c: &impl Operand<T>,
    k: Call,
    f: impl Fn(T, T, T) -> O + Sync,
) -> Result<()> {
    let (a, b, c) = (a.snapshot(), b.snapshot(), c.snapshot());
    Backend::of(&[r.with_view(|v| v.device()), a.device(), b.device(), c.device()])?;
    let (shape, vs) = broadcast_all(&[&a, &b, &c])?;
    into_output(r, &shape, |o| vs.iter().any(|v| partial_overlap(o, v)), |o| map3(o, &vs[0], &vs[1], &vs[2], k, f))
}
