//! The device engine of the reductions: `ops::reduce` runs a reduction here when its operands
//! are on a device, on the same merged `Geometry` as the host plan (`exec::reduce`). A
//! `Reducer` that names its device fold (`DeviceFold`) runs as `kernels/reduce.cuh`'s `th_reduce_*` kernel over
//! the same merged `Geometry` as the host, then `th_combine_*` passes until each output has one
//! accumulator; those are read back and rebuilt as the reducer's `Acc` (`DeviceAcc`), so the
//! callers in `ops::reduce` finish exactly as on the host.
//!
//! Launch geometry (the order of every fold is fixed by the shape; `reduce.cuh` documents it):
//! `lanes` = the smallest power of two >= ceil(k / PER), at most `BLOCK`; a chunk is
//! `lanes * PER` positions; the grid covers the (output, chunk) items, capped at `MAX_GRID`
//! blocks (the kernels stride over the rest, so the cap changes no result).

use super::gpu::LaunchCfg;
use super::kernels;
use super::launch::MAX_DIMS;
use super::runtime::{self, Device as Dev};
use crate::core::dtype::{DType, Scalar};
use crate::core::error::{Error, Result};
use crate::core::geometry::Dim;
use crate::core::tensor::View;
pub use crate::exec::reduce::DeviceFold;
use crate::exec::reduce::{Geometry, Reducer};

/// Threads per block of the reduction kernels (`TH_RBLOCK`).
pub(crate) const BLOCK: u32 = 256;
/// Positions each lane folds per chunk (`TH_RPER`).
pub(crate) const PER: u64 = 16;
/// Most blocks a launch gets (as `launch::MAX_GRID`).
pub(crate) const MAX_GRID: u32 = 4096;

/// The parameter of every reduction kernel: `reduce.cuh`'s `THCReduce`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct THCReduce {
    pub m: i64,
    pub k: i64,
    pub nchunks: i64,
    pub lanes: i32,
    pub kdim: i32,
    pub rdim: i32,
    pub op: i32,
    pub p: f64,
    pub out: u64,
    pub data: [u64; 2],
    pub ksizes: [i64; MAX_DIMS],
    pub rsizes: [i64; MAX_DIMS],
    pub kstrides: [[i64; MAX_DIMS]; 2],
    pub rstrides: [[i64; MAX_DIMS]; 2],
    pub fin: i32,
    pub column: i32,
    pub scale: f64,
    pub outs: [u64; 2],
}

/// How the kernels of `reduce.cuh` run a fold (the fold itself is named by the reducers, in
/// `exec::reduce`, beside the `Reducer` contract that returns it).
impl DeviceFold {
    /// The `REDUCTIONS` name and `THCReduce::op`.
    fn kernel(self) -> (&'static str, i32, f64) {
        let norm =
            |p: f64| [0.0, 1.0, 2.0, f64::INFINITY, f64::NEG_INFINITY].iter().position(|&q| q == p).unwrap_or(5) as i32;
        match self {
            DeviceFold::Sum => ("sum", 0, 0.0),
            DeviceFold::Prod => ("prod", 0, 0.0),
            DeviceFold::Count => ("count", 0, 0.0),
            DeviceFold::Max => ("max", 0, 0.0),
            DeviceFold::Min => ("min", 0, 0.0),
            DeviceFold::Moments => ("moments", 0, 0.0),
            DeviceFold::Norm(p) => ("norm", norm(p), p),
            DeviceFold::Dot => ("dot", 0, 0.0),
            DeviceFold::Equal => ("equal", 0, 0.0),
            DeviceFold::Dist(p) => ("dist", norm(p), p),
        }
    }

    /// Bytes of one device accumulator for elements of `d` (the kernel's `F::A`).
    pub fn acc_bytes(self, d: DType) -> usize {
        let acc = match d {
            DType::Half | DType::BFloat16 => 4,
            _ => 8,
        };
        match self {
            DeviceFold::Count | DeviceFold::Equal => 8,
            DeviceFold::Max | DeviceFold::Min => 16,
            DeviceFold::Moments => 3 * acc,
            _ => acc,
        }
    }
}

/// How the last pass finishes each output on the device (`reduce.cuh`'s `TH_FIN_*`), rounding
/// once to the element type as `ops::reduce` does on the host.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Finish {
    /// The accumulator itself (sum, prod).
    Cast,
    /// The accumulator divided by this (a mean; C division for integers).
    Mean(f64),
    /// Moments to the variance (`m2 / n` when `biased`, else `/ (n - 1)`), its square root when
    /// `root`.
    Var { biased: bool, root: bool },
    /// The p-norm's root (the `Norm` fold's p).
    Root,
    /// Max/min: the value, and its position to the second output (i64).
    Best,
}

impl Finish {
    fn code(self) -> (i32, f64) {
        match self {
            Finish::Cast => (1, 0.0),
            Finish::Mean(n) => (2, n),
            Finish::Var { biased, root } => (3 + !biased as i32 + 2 * root as i32, 0.0),
            Finish::Root => (7, 0.0),
            Finish::Best => (8, 0.0),
        }
    }
}

/// An accumulator rebuilt from the bytes of its device form (`reduce.cuh`'s structs: a value,
/// `th_best` {value at 0, position at 8}, `th_mom` {n, mean, m2}).
pub trait DeviceAcc: Sized {
    fn read(raw: &[u8]) -> Option<Self>;
}

fn read_at<T: Scalar>(raw: &[u8], at: usize) -> Option<T> {
    let b = raw.get(at..at + size_of::<T>())?;
    // SAFETY: `b` holds size_of::<T>() bytes, and every Scalar is plain data for which any bit
    // pattern is a value (integers, IEEE floats, Bool's byte).
    Some(unsafe { std::ptr::read_unaligned(b.as_ptr() as *const T) })
}

impl<T: Scalar> DeviceAcc for T {
    fn read(raw: &[u8]) -> Option<T> {
        read_at(raw, 0)
    }
}

impl<T: Scalar> DeviceAcc for (T, i64) {
    fn read(raw: &[u8]) -> Option<Self> {
        Some((read_at(raw, 0)?, read_at(raw, 8)?))
    }
}

impl<A: Scalar> DeviceAcc for (A, A, A) {
    fn read(raw: &[u8]) -> Option<Self> {
        let w = size_of::<A>();
        Some((read_at(raw, 0)?, read_at(raw, w)?, read_at(raw, 2 * w)?))
    }
}

/// A planned reduction: the fold kernel's parameter and launch, and the combine passes' sizes.
#[derive(Clone, Debug)]
pub struct Plan {
    pub kernel: String,
    pub combine: String,
    pub params: THCReduce,
    /// Bytes of one accumulator.
    pub acc: usize,
}

/// Lanes per item for `k` positions (a power of two, at most `BLOCK`) and chunks per output.
pub fn lanes_and_chunks(k: u64) -> (u32, u64) {
    let lanes = k.div_ceil(PER).next_power_of_two().min(BLOCK as u64);
    (lanes as u32, k.div_ceil(lanes * PER))
}

/// Threads the column layout aims for (a large GPU holds ~2^18 resident threads).
const COLUMN_ITEMS: u64 = 1 << 17;
/// Fewest reduced positions a column chunk folds (so the combine pass stays small).
const COLUMN_MIN: u64 = 32;

/// Chunks per output in the column layout, from the shape alone: enough (chunk, output) items
/// to fill a GPU when the outputs are few, each chunk at least `COLUMN_MIN` positions long.
pub fn column_chunks(m: u64, k: u64) -> u64 {
    COLUMN_ITEMS.div_ceil(m.max(1)).min(k.div_ceil(COLUMN_MIN)).max(1)
}

/// Whether the fold runs threads across outputs: when operand 0's innermost kept dim has a
/// smaller stride than its innermost reduced one (`sum(dim 0)` of a row-major matrix), so that
/// neighbouring threads read neighbouring elements.
fn column_layout<const N: usize>(g: &Geometry<N>) -> bool {
    match (g.kept.last(), g.red.last()) {
        (Some(kd), Some(rd)) => g.k() > 1 && kd.st[0].unsigned_abs() < rd.st[0].unsigned_abs(),
        _ => false,
    }
}

/// The launch shape for `items` work items of `lanes` threads each.
pub fn grid(items: u64, lanes: u32, max_grid: u32) -> LaunchCfg {
    let per_block = (BLOCK / lanes) as u64;
    let blocks = items.div_ceil(per_block).clamp(1, max_grid.max(1) as u64) as u32;
    LaunchCfg { grid: [blocks, 1, 1], block: [BLOCK, 1, 1], shared: 0 }
}

/// Plans `fold` over a geometry with elements of `dtype` (`Geometry::m() * k()` > 0).
pub fn plan<const N: usize>(fold: DeviceFold, dtype: DType, g: &Geometry<N>) -> Result<Plan> {
    let (name, op, p) = fold.kernel();
    let r = kernels::reduction(name).ok_or_else(|| Error::internal(format!("no reduction kernel '{name}'")))?;
    if r.operands != N {
        return Err(Error::internal(format!("reduction {name} takes {} operands, not {N}", r.operands)));
    }
    if !r.has.contains(dtype) {
        return Err(Error::dtype(format!("the {name} reduction is not defined for {dtype} on CUDA devices")));
    }
    if g.kept.len() > MAX_DIMS || g.red.len() > MAX_DIMS {
        return Err(Error::size(format!(
            "a CUDA reduction takes at most {MAX_DIMS} kept and {MAX_DIMS} reduced dimensions after merging \
             contiguous ones; these leave {} and {} (make the tensor contiguous first)",
            g.kept.len(),
            g.red.len()
        )));
    }
    let (m, k) = (g.m() as u64, g.k() as u64);
    let column = column_layout(g);
    let (lanes, nchunks) = if column { (1, column_chunks(m, k)) } else { lanes_and_chunks(k) };
    let mut params = THCReduce {
        m: m as i64,
        k: k as i64,
        nchunks: nchunks as i64,
        lanes: lanes as i32,
        kdim: g.kept.len() as i32,
        rdim: g.red.len() as i32,
        op,
        p,
        out: 0,
        data: [0; 2],
        ksizes: [0; MAX_DIMS],
        rsizes: [0; MAX_DIMS],
        kstrides: [[0; MAX_DIMS]; 2],
        rstrides: [[0; MAX_DIMS]; 2],
        fin: 0,
        column: column as i32,
        scale: 0.0,
        outs: [0; 2],
    };
    let fill = |sizes: &mut [i64; MAX_DIMS], strides: &mut [[i64; MAX_DIMS]; 2], dims: &[Dim<N>]| {
        for (d, dim) in dims.iter().enumerate() {
            sizes[d] = dim.size as i64;
            for (st, &s) in strides.iter_mut().zip(&dim.st) {
                st[d] = s as i64;
            }
        }
    };
    fill(&mut params.ksizes, &mut params.kstrides, &g.kept);
    fill(&mut params.rsizes, &mut params.rstrides, &g.red);
    let wide = !fits_i32(m, k, g)?;
    let kernel = kernels::reduce_kernel_name(name, dtype, wide);
    let combine = kernels::combine_kernel_name(r.combine, dtype);
    Ok(Plan { kernel, combine, params, acc: fold.acc_bytes(dtype) })
}

/// Whether 32-bit indexing reaches everything: m * k and each operand's largest |offset|.
fn fits_i32<const N: usize>(m: u64, k: u64, g: &Geometry<N>) -> Result<bool> {
    let mut fits = m.checked_mul(k).is_some_and(|n| n <= i32::MAX as u64);
    for q in 0..N {
        let mut reach: u64 = 0;
        for d in g.kept.iter().chain(&g.red) {
            let step = (d.size as u64 - 1).checked_mul(d.st[q].unsigned_abs() as u64);
            reach = step.and_then(|s| reach.checked_add(s)).ok_or_else(|| Error::size("operand offsets overflow"))?;
        }
        fits &= reach <= i32::MAX as u64;
    }
    Ok(fits)
}

/// What running a plan needs of a device.
pub trait Exec {
    /// `bytes` of scratch device memory, valid until the executor is dropped.
    fn alloc(&mut self, bytes: usize) -> Result<u64>;
    /// Launches `kernel` with `params` as its one argument.
    ///
    /// # Safety
    /// Every address in `params` is valid device memory for what the kernel touches.
    unsafe fn launch(&mut self, kernel: &str, cfg: &LaunchCfg, params: &mut THCReduce) -> Result<()>;
    /// Copies `dst.len()` bytes at device address `src` to the host (complete on return).
    ///
    /// # Safety
    /// `src` is device memory of at least `dst.len()` bytes.
    unsafe fn read(&mut self, dst: &mut [u8], src: u64) -> Result<()>;
}

impl Plan {
    /// The last pass finishes each output by `how` into contiguous outputs at device addresses
    /// `outs` (values; positions as i64 for `Finish::Best`) instead of returning accumulators.
    pub fn finish_into(mut self, how: Finish, outs: [u64; 2]) -> Plan {
        (self.params.fin, self.params.scale) = how.code();
        self.params.outs = outs;
        self
    }
}

/// Runs `plan` over operands at device addresses `bases`: the fold, then combine passes until
/// one accumulator per output is left; returns their bytes (`plan.acc` each, output order), or
/// nothing when the plan finishes into its outputs (`Plan::finish_into`).
///
/// # Safety
/// Every element the plan's geometry reaches from each base is valid device memory, and so are
/// a finishing plan's outputs (m elements each).
pub unsafe fn execute(plan: &Plan, bases: &[u64], ex: &mut impl Exec, max_grid: u32) -> Result<Vec<u8>> {
    let mut p = plan.params;
    for (d, &b) in p.data.iter_mut().zip(bases) {
        *d = b;
    }
    let (m, mut n) = (p.m as u64, p.nchunks as u64);
    let bytes = |count: u64| {
        count
            .checked_mul(plan.acc as u64)
            .and_then(|b| usize::try_from(b).ok())
            .ok_or_else(|| Error::size("reduction scratch size overflows"))
    };
    // A fold that finishes its outputs itself needs no partials.
    p.out = if p.fin != 0 && n == 1 { 0 } else { ex.alloc(bytes(m * n)?)? };
    let cfg = grid(m * n, p.lanes as u32, max_grid);
    // SAFETY: the caller vouches for the operands; `out` holds m * nchunks accumulators.
    unsafe { ex.launch(&plan.kernel, &cfg, &mut p)? };
    while n > 1 {
        let (lanes, next) = lanes_and_chunks(n);
        let mut c =
            THCReduce { k: n as i64, nchunks: next as i64, lanes: lanes as i32, column: 0, data: [p.out, 0], ..p };
        c.out = ex.alloc(bytes(m * next)?)?;
        // SAFETY: `data[0]` holds m * n partials written by the previous pass, `out` m * next.
        unsafe { ex.launch(&plan.combine, &grid(m * next, lanes, max_grid), &mut c)? };
        p.out = c.out;
        n = next;
    }
    if p.fin != 0 {
        return Ok(Vec::new());
    }
    let mut host = vec![0u8; bytes(m)?];
    // SAFETY: `out` holds m accumulators of plan.acc bytes.
    unsafe { ex.read(&mut host, p.out)? };
    Ok(host)
}

/// Runs on a device of the runtime: scratch from its caching allocator (returned on drop; later
/// work on the same stream is ordered after the reads), launches on the current stream.
struct OnDevice {
    dev: &'static Dev,
    stream: u64,
    scratch: Vec<u64>,
}

impl Exec for OnDevice {
    fn alloc(&mut self, bytes: usize) -> Result<u64> {
        let p = super::storage::malloc(self.dev, bytes)?;
        self.scratch.push(p);
        Ok(p)
    }
    unsafe fn launch(&mut self, kernel: &str, cfg: &LaunchCfg, params: &mut THCReduce) -> Result<()> {
        let mut args = [params as *mut THCReduce as *mut std::ffi::c_void];
        // SAFETY: forwarded contract; the one argument is the THCReduce the kernel takes.
        unsafe { self.dev.gpu.launch(kernel, cfg, &mut args, self.stream) }
    }
    unsafe fn read(&mut self, dst: &mut [u8], src: u64) -> Result<()> {
        // SAFETY: forwarded contract; synchronized before returning.
        unsafe { self.dev.gpu.dtoh(dst.as_mut_ptr(), src, dst.len(), self.stream)? };
        self.dev.gpu.stream_sync(self.stream)
    }
}

impl Drop for OnDevice {
    fn drop(&mut self) {
        for &p in &self.scratch {
            let _ = self.dev.cache.free(p);
        }
    }
}

/// `r` over device views on device `ordinal` (the device arm of `ops::reduce`'s dispatch; the
/// views have elements): one accumulator per output, row-major over the kept dims.
pub fn reduce<T: Scalar, R: Reducer<T, N>, const N: usize>(
    ordinal: i32,
    g: &Geometry<N>,
    views: [&View<T>; N],
    r: &R,
) -> Result<Vec<R::Acc>> {
    let fold = r.device().ok_or_else(|| {
        Error::invalid(format!("this reduction has no CUDA kernel yet: an operand is on cuda:{ordinal}"))
    })?;
    let plan = plan(fold, T::DTYPE, g)?;
    let mut bases = [0u64; N];
    for (b, v) in bases.iter_mut().zip(views) {
        *b = super::launch::device_base(v)?;
    }
    let dev = runtime::device(ordinal)?;
    let mut ex = OnDevice { dev, stream: runtime::stream(ordinal), scratch: Vec::new() };
    // SAFETY: device_base checked that each view lies inside its device storage, and the
    // geometry reaches exactly the views' elements.
    let raw = unsafe { execute(&plan, &bases, &mut ex, MAX_GRID)? };
    raw.chunks_exact(plan.acc)
        .map(|b| r.device_acc(b).ok_or_else(|| Error::internal("reduction: unreadable device accumulator")))
        .collect()
}

/// `fold` of `t` (with elements) over the dims in `mask` on device `ordinal`, finished on the
/// device by `how`: the plan is made first (so a reduction the device cannot run fails before
/// any output changes), then `outs` prepares the outputs and gives their device addresses
/// (contiguous, m elements each), or None when they cannot take finished values directly;
/// returns whether it ran. Nothing is copied to the host.
pub fn reduce_into<T: Scalar>(
    ordinal: i32,
    t: &View<T>,
    mask: &[bool],
    fold: DeviceFold,
    how: Finish,
    outs: impl FnOnce() -> Result<Option<[u64; 2]>>,
) -> Result<bool> {
    let g = Geometry::<1>::new(&t.sizes, [&t.strides], mask);
    let plan = plan(fold, T::DTYPE, &g)?;
    let base = super::launch::device_base(t)?;
    let Some(outs) = outs()? else { return Ok(false) };
    let plan = plan.finish_into(how, outs);
    let dev = runtime::device(ordinal)?;
    let mut ex = OnDevice { dev, stream: runtime::stream(ordinal), scratch: Vec::new() };
    // SAFETY: device_base checked that the view lies inside its device storage, the geometry
    // reaches exactly its elements, and `outs` vouches for the outputs.
    unsafe { execute(&plan, &[base], &mut ex, MAX_GRID)? };
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn layout_matches_reduce_cuh() {
        assert_eq!(size_of::<THCReduce>(), 872);
        assert_eq!((offset_of!(THCReduce, fin), offset_of!(THCReduce, outs)), (840, 856));
        let o = [
            offset_of!(THCReduce, lanes),
            offset_of!(THCReduce, p),
            offset_of!(THCReduce, out),
            offset_of!(THCReduce, ksizes),
        ];
        assert_eq!(o, [24, 40, 48, 72]);
        assert_eq!(offset_of!(THCReduce, kstrides), 328);
    }

    #[test]
    fn lanes_depend_on_k_only() {
        assert_eq!(lanes_and_chunks(1), (1, 1));
        assert_eq!(lanes_and_chunks(16), (1, 1));
        assert_eq!(lanes_and_chunks(17), (2, 1));
        assert_eq!(lanes_and_chunks(100), (8, 1));
        assert_eq!(lanes_and_chunks(4096), (256, 1));
        assert_eq!(lanes_and_chunks(4097), (256, 2));
        assert_eq!(lanes_and_chunks(1 << 30), (256, 1 << 18));
        assert_eq!(grid(1000, 256, 4096).grid, [1000, 1, 1]);
        assert_eq!(grid(1000, 1, 4096).grid, [4, 1, 1]);
        assert_eq!(grid(1 << 20, 256, 7).grid, [7, 1, 1]);
    }

    #[test]
    fn plans_name_kernels_and_widths() {
        let g = Geometry::<1>::new(&[3, 5], [&[5, 1]], &[false, true]);
        let p = plan(DeviceFold::Sum, DType::Float, &g).unwrap();
        assert_eq!(
            (p.kernel.as_str(), p.combine.as_str(), p.acc),
            ("th_reduce_sum_float_i32", "th_combine_sum_float", 8)
        );
        assert_eq!((p.params.m, p.params.k, p.params.kdim, p.params.rdim), (3, 5, 1, 1));
        assert_eq!((p.params.kstrides[0][0], p.params.rstrides[0][0]), (5, 1));
        let p = plan(DeviceFold::Norm(3.5), DType::Half, &g).unwrap();
        assert_eq!((p.params.op, p.params.p, p.acc), (5, 3.5, 4));
        assert_eq!(plan(DeviceFold::Moments, DType::Half, &g).unwrap().acc, 12);
        let g2 = Geometry::<2>::new(&[3, 5], [&[5, 1], &[1, 3]], &[true, true]);
        assert_eq!(plan(DeviceFold::Dist(2.0), DType::Double, &g2).unwrap().params.op, 2);
        assert!(plan(DeviceFold::Sum, DType::Bool, &g).is_err());
        assert!(plan(DeviceFold::Dot, DType::Float, &g).is_err());
        let big = Geometry::<1>::new(&[2, 1 << 30], [&[1 << 30, 1]], &[false, true]);
        assert_eq!(plan(DeviceFold::Max, DType::Byte, &big).unwrap().kernel, "th_reduce_max_byte_i64");
    }
}
