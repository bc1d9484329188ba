//! Launches of the line kernels (`kernels/lines.cuh`): ops whose work item walks one line of
//! each operand (triangles, cross products, index ops, scans, sorts). The item grid is a
//! `THCPointwise` over the iteration shape in the caller's dim order (size-1 dims dropped and
//! neighbours merged, never reordered), so the kernels see each item's row-major index; each
//! operand adds the length and stride of its line.

use super::gpu::LaunchCfg;
use super::kernels;
use super::launch::{BLOCK, Call, MAX_DIMS, MAX_GRID, MAX_OPERANDS, THCPointwise};
use super::runtime;
use crate::core::dtype::DType;
use crate::core::error::{Error, Result};
use crate::core::geometry::{Dim, push_merged};
use crate::core::tensor::size_desc;

/// `lines.cuh`'s `THCLines`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct THCLines {
    pub it: THCPointwise,
    pub len: [i64; MAX_OPERANDS],
    pub step: [i64; MAX_OPERANDS],
}

/// A line kernel's operand: its device address, its strides over the iteration shape, and its
/// line (`len` elements `step` apart; len 0 for an operand read at one place per item).
#[derive(Clone, Copy, Debug)]
pub struct LineOperand<'a> {
    pub base: u64,
    pub strides: &'a [i64],
    pub len: i64,
    pub step: i64,
}

/// A ready line launch.
#[derive(Clone, Debug)]
pub struct Lines {
    pub kernel: String,
    pub cfg: LaunchCfg,
    pub params: THCLines,
}

impl Call {
    /// The launch of this line op for `dtype` over the items of `shape`, or None when there are
    /// no items.
    pub fn lines(&self, dtype: DType, shape: &[i64], operands: &[LineOperand<'_>]) -> Result<Option<Lines>> {
        let o = kernels::op(self.op).ok_or_else(|| Error::internal(format!("no kernel op '{}'", self.op)))?;
        if o.form != kernels::Form::Lines || operands.len() != 1 + o.inputs || o.values != self.value_count() {
            return Err(Error::internal(format!("{}: not a line op with these operands", self.op)));
        }
        if !o.has.contains(dtype) {
            return Err(Error::dtype(format!("{} is not defined for {dtype}", self.op)));
        }
        let mut n: i64 = 1;
        for &s in shape {
            n = n.checked_mul(s.max(0)).ok_or_else(|| Error::size(format!("size {} overflows", size_desc(shape))))?;
        }
        if n == 0 || operands.iter().any(|x| x.len < 0) {
            return Ok(None);
        }
        let dims = items(shape, operands)?;
        let mut it = self.params();
        (it.n, it.ndim) = (n, dims.len() as i32);
        for (d, dim) in dims.iter().enumerate() {
            it.sizes[d] = dim.size as i64;
            for k in 0..MAX_OPERANDS {
                it.arg[k].strides[d] = dim.st[k] as i64;
            }
        }
        let (mut len, mut step) = ([0i64; MAX_OPERANDS], [0i64; MAX_OPERANDS]);
        let mut fits = n <= i32::MAX as i64;
        for (k, x) in operands.iter().enumerate() {
            it.arg[k].data = x.base;
            (len[k], step[k]) = (x.len, x.step);
            let mut reach = (x.len - 1).max(0).checked_mul(x.step.abs());
            for d in &dims {
                reach =
                    reach.and_then(|r| r.checked_add((d.size as i64 - 1).checked_mul(d.st[k].unsigned_abs() as i64)?));
            }
            fits &= reach.ok_or_else(|| Error::size("operand offsets overflow int64_t"))? <= i32::MAX as i64;
        }
        let kernel = kernels::kernel_name(self.op, &[dtype], !fits);
        let grid = (n as u64).div_ceil(BLOCK as u64).min(MAX_GRID as u64) as u32;
        let cfg = LaunchCfg { grid: [grid, 1, 1], block: [BLOCK, 1, 1], shared: 0 };
        Ok(Some(Lines { kernel, cfg, params: THCLines { it, len, step } }))
    }
}

/// The item dims: size-1 dims dropped, neighbours merged where every operand continues, in
/// `shape`'s order; one unit dim for a single item.
fn items(shape: &[i64], operands: &[LineOperand<'_>]) -> Result<Vec<Dim<MAX_OPERANDS>>> {
    if operands.iter().any(|x| x.strides.len() != shape.len()) {
        return Err(Error::internal("line operand strides do not match the item shape"));
    }
    let mut dims = Vec::with_capacity(shape.len());
    for (d, &size) in shape.iter().enumerate().filter(|&(_, &s)| s != 1) {
        let st = std::array::from_fn(|k| operands.get(k).map_or(0, |x| x.strides[d]) as isize);
        push_merged(&mut dims, Dim { size: size as usize, st });
    }
    if dims.is_empty() {
        dims.push(Dim { size: 1, st: [1; MAX_OPERANDS] });
    }
    if dims.len() > MAX_DIMS {
        return Err(Error::size(format!(
            "a CUDA line kernel takes at most {MAX_DIMS} item dimensions after merging, not {} (size {})",
            dims.len(),
            size_desc(shape)
        )));
    }
    Ok(dims)
}

/// Runs line op `call` for `dtype` on device `ordinal`'s current stream.
///
/// # Safety
/// Every operand's address, strides and line must stay inside memory of that device the kernel
/// may access (read, or write for the operands the op writes); index values the kernel follows
/// must have been checked against the sizes they address.
pub unsafe fn run(ordinal: i32, call: &Call, dtype: DType, shape: &[i64], operands: &[LineOperand<'_>]) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { launch(ordinal, call, dtype, shape, operands, None) }
}

/// Runs a line op whose block shares each line (`TH_LINES_COOPERATIVE`) with `threads` threads
/// per block (a power of two up to `BLOCK`), a block per item.
///
/// # Safety
/// As for `run`.
pub unsafe fn run_per_block(
    ordinal: i32,
    call: &Call,
    dtype: DType,
    shape: &[i64],
    operands: &[LineOperand<'_>],
    threads: u32,
) -> Result<()> {
    if !threads.is_power_of_two() || threads > BLOCK {
        return Err(Error::internal(format!("{threads} threads per block: not a power of two up to {BLOCK}")));
    }
    // SAFETY: the caller's contract.
    unsafe { launch(ordinal, call, dtype, shape, operands, Some(threads)) }
}

/// `run` (`per_block`: None) or `run_per_block`.
unsafe fn launch(
    ordinal: i32,
    call: &Call,
    dtype: DType,
    shape: &[i64],
    operands: &[LineOperand<'_>],
    per_block: Option<u32>,
) -> Result<()> {
    let dev = runtime::device(ordinal)?;
    let Some(mut l) = call.lines(dtype, shape, operands)? else { return Ok(()) };
    if let Some(threads) = per_block {
        let items = l.params.it.n as u64;
        l.cfg = LaunchCfg { grid: [items.min(MAX_GRID as u64) as u32, 1, 1], block: [threads, 1, 1], shared: 0 };
    }
    let mut args = [&mut l.params as *mut THCLines as *mut std::ffi::c_void];
    // SAFETY: the caller vouches for the operands; `l` outlives the launch call.
    unsafe { dev.gpu.launch(&l.kernel, &l.cfg, &mut args, runtime::stream(ordinal)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn layout_matches_lines_cuh() {
        assert_eq!(size_of::<THCLines>(), 784);
        assert_eq!((offset_of!(THCLines, len), offset_of!(THCLines, step)), (720, 752));
    }

    fn op<'a>(strides: &'a [i64], len: i64, step: i64) -> LineOperand<'a> {
        LineOperand { base: 0, strides, len, step }
    }

    #[test]
    fn items_keep_row_major_order_and_merge() {
        // rows of a transposed 3x4 matrix: one item dim, the line along the other
        let l = Call::new("tri").value(0i64).value(1i64).lines(DType::Float, &[4], &[op(&[1], 3, 4)]).unwrap().unwrap();
        assert_eq!((l.params.it.n, l.params.it.ndim, l.params.it.sizes[0]), (4, 1, 4));
        assert_eq!((l.params.len[0], l.params.step[0]), (3, 4));
        assert_eq!(l.kernel, "th_tri_float_i32");
        // two contiguous item dims merge; a transposed pair does not get reordered
        let st = [6i64, 3];
        let l = Call::new("cross").lines(DType::Int, &[2, 2], &[op(&st, 3, 1), op(&st, 3, 1), op(&st, 3, 1)]);
        let p = l.unwrap().unwrap().params;
        assert_eq!((p.it.ndim, p.it.sizes[0], p.it.arg[2].strides[0]), (1, 4, 3));
        let l = Call::new("cross").lines(DType::Int, &[2, 2], &[op(&[3, 6], 3, 1), op(&st, 3, 1), op(&st, 3, 1)]);
        let p = l.unwrap().unwrap().params;
        assert_eq!((p.it.ndim, p.it.arg[0].strides[0], p.it.arg[0].strides[1]), (2, 3, 6));
        // the line's reach decides the index width
        let big = i32::MAX as i64;
        let name = |len, step| {
            Call::new("tri")
                .value(0i64)
                .value(0i64)
                .lines(DType::Byte, &[1], &[op(&[0], len, step)])
                .unwrap()
                .unwrap()
                .kernel
        };
        assert_eq!(name(2, big), "th_tri_byte_i32");
        assert_eq!(name(2, big + 1), "th_tri_byte_i64");
        // empty, wrong ops and dtypes
        assert!(Call::new("cross").lines(DType::Int, &[0, 2], &[op(&st, 3, 1); 3]).unwrap().is_none());
        assert!(Call::new("cross").lines(DType::Bool, &[2], &[op(&[1], 3, 1); 3]).is_err());
        assert!(Call::new("cadd").value(1.0f32).lines(DType::Float, &[2], &[op(&[1], 1, 1); 3]).is_err());
        assert!(Call::new("cross").lines(DType::Int, &[2], &[op(&[1], 3, 1); 2]).is_err());
    }
}
