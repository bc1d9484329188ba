//! The device engine of the sorts, selections and scans along a dimension
//! (`kernels/sort.cuh`): every line of the input is sorted by a bitonic network in a device
//! workspace (`Sorted`), from which the callers copy what they need (sort, topk: the first k;
//! kthvalue, median: one element; mode: the longest run). `ops::index::sort` and
//! `ops::reduce` choose this engine for device tensors, after their own checks.

use super::copy::empty_like;
use super::gpu::LaunchCfg;
use super::kernels;
use super::launch::{Call, MAX_GRID, device_base};
use super::lines::{self, LineOperand};
use super::runtime;
use crate::core::dtype::{DType, Scalar};
use crate::core::error::{Error, Result};
use crate::core::tensor::{View, size_desc};
use crate::exec::overlap::self_overlapping;

/// Workspace elements one block of `th_sortLocal` holds in shared memory (`TH_SORT_TILE`).
const TILE: i64 = 2048;

/// Threads per block of `th_sortLocal`.
const LOCAL_THREADS: u32 = 128;

/// `sort.cuh`'s `THCSortLocal`.
#[repr(C)]
struct THCSortLocal {
    keys: u64,
    pos: u64,
    total: i64,
    row: i64,
    size0: i64,
    size1: i64,
    desc: i32,
    pad: i32,
}

/// Digits of a radix pass (`TH_RADIX_DIGITS`); its blocks are the tiled scan's
/// (`scan::TILE` elements, `scan::BLOCK` threads).
const RADIX_DIGITS: i64 = 16;

/// `sort.cuh`'s `THCRadix`.
#[repr(C)]
struct THCRadix {
    keys: [u64; 2],
    pos: [u64; 2],
    hist: u64,
    rows: i64,
    n: i64,
    row: i64,
    tiles: i64,
    shift: i32,
    desc: i32,
}

/// The shared-memory sort kernel and the radix sort's three of dtype `d` (every dtype has
/// them; `kernels::kernels_of`).
pub fn kernel_names(d: DType) -> Vec<String> {
    let sfx = kernels::dtype_suffix(d);
    ["sortLocal", "radixCount", "radixOffsets", "radixScatter"].iter().map(|k| format!("th_{k}_{sfx}")).collect()
}

pub(super) fn without(v: &[i64], d: usize) -> Vec<i64> {
    v.iter().enumerate().filter(|&(e, _)| e != d).map(|(_, &x)| x).collect()
}

/// One operand of a line launch: a view's address, its strides over the items, and its line.
#[derive(Clone, Debug)]
pub struct Line {
    base: u64,
    strides: Vec<i64>,
    len: i64,
    step: i64,
}

impl Line {
    /// The lines of `v` along `d` (its other dims are the items).
    pub fn along<X: Scalar>(v: &View<X>, d: usize) -> Result<Line> {
        Ok(Line { base: device_base(v)?, strides: without(&v.strides, d), len: v.sizes[d], step: v.strides[d] })
    }

    /// A reduced output (`ops::reduce::reduced_shape` of an input with `items` dims besides
    /// `d`): one element per item.
    pub fn reduced<X: Scalar>(v: &View<X>, d: usize, items: usize) -> Result<Line> {
        let strides = if v.ndim() == items { v.strides.clone() } else { without(&v.strides, d) };
        Ok(Line { base: device_base(v)?, strides, len: 1, step: 0 })
    }

    /// This operand with its line as one more item dim, one element per item (len 1): for
    /// kernels that treat each element alone, so a line's elements run in parallel.
    fn element(&self) -> Line {
        Line { strides: [&self.strides[..], &[self.step]].concat(), len: 1, ..self.clone() }
    }

    pub(super) fn op(&self) -> LineOperand<'_> {
        LineOperand { base: self.base, strides: &self.strides, len: self.len, step: self.step }
    }
}

/// Refuses an output whose elements overlap (an expanded view): device threads would race
/// to write it.
pub fn check_output<X: Scalar>(what: &str, v: &View<X>) -> Result<()> {
    if self_overlapping(&v.sizes, &v.strides) {
        return Err(Error::invalid(format!(
            "{what}: the output has overlapping elements (an expanded or stride-0 view), which device threads \
             cannot write deterministically; write into a contiguous tensor"
        )));
    }
    Ok(())
}

/// Every line of a device tensor along a dim, sorted: row j of `keys` / `pos` (`p` elements,
/// the line's `n` then padding) holds line j's elements (items in row-major order) and their
/// source positions.
pub struct Sorted<T: Scalar> {
    ordinal: i32,
    items: Vec<i64>,
    n: i64,
    p: i64,
    pub keys: View<T>,
    pub pos: View<i64>,
}

impl<T: Scalar> Sorted<T> {
    /// Sorts every line of `t` (on device `ordinal`) along `d`: stable, ascending or
    /// descending, NaN after every number (first when descending). `t` may be anything the
    /// caller writes afterwards: it is read whole here.
    pub fn new(ordinal: i32, t: &View<T>, d: usize, descending: bool) -> Result<Sorted<T>> {
        Self::with_bits(ordinal, t, d, descending, 8 * size_of::<T>() as u32)
    }

    /// `new` ascending for integer keys known to lie in `0..bound` (checked indices): the radix
    /// passes stop at the bound's bits (rounded up to whole bytes), since every higher digit is
    /// the same for all keys.
    pub fn below(ordinal: i32, t: &View<T>, d: usize, bound: i64) -> Result<Sorted<T>> {
        let bits = 64 - (bound.max(2) as u64 - 1).leading_zeros();
        Self::with_bits(ordinal, t, d, false, bits.next_multiple_of(8).min(8 * size_of::<T>() as u32))
    }

    /// `new` with the radix passes over the low `bits` bits of the keys' ordered patterns only.
    fn with_bits(ordinal: i32, t: &View<T>, d: usize, descending: bool, bits: u32) -> Result<Sorted<T>> {
        let dev = runtime::device(ordinal)?;
        let n = t.sizes[d].max(1);
        let items = without(&t.sizes, d);
        let p = (n as u64).next_power_of_two() as i64;
        let m = items.iter().try_fold(1i64, |a, &s| a.checked_mul(s));
        let m = m
            .filter(|m| m.checked_mul(p).is_some())
            .ok_or_else(|| Error::size(format!("sort: the workspace for size {} overflows", size_desc(&t.sizes))))?;
        let (keys, pos) = (empty_like::<T>(dev, &[m, p])?, empty_like::<i64>(dev, &[m, p])?);
        let s = Sorted { ordinal, items, n: t.sizes[d], p, keys, pos };
        let rows = s.rows();
        if t.numel() == 0 {
            return Ok(s);
        }
        let (k, q) = (s.row(&rows, &s.keys, p)?, s.row(&rows, &s.pos, p)?);
        // One thread per workspace element: the rows' element dim is an item dim.
        let mut shape = s.items.clone();
        shape.push(p);
        let (ke, qe, xe) = (k.element(), q.element(), Line::along(t, d)?.element());
        // SAFETY: the workspace rows are m x p elements of fresh device memory; the input is read
        // at its own elements (`t`'s geometry, checked by device_base) for q < n only.
        unsafe {
            lines::run(
                ordinal,
                &Call::new("sortInit").value(s.n).value(p),
                T::DTYPE,
                &shape,
                &[ke.op(), qe.op(), xe.op()],
            )?
        };
        if s.n > TILE {
            s.radix(descending, bits)?;
            return Ok(s);
        }
        shape.pop();
        shape.push(p / 2);
        let (mut k, mut q) = (k, q);
        k.strides.push(0);
        q.strides.push(0);
        // The bitonic network: merge sizes 2, 4, .., p, each from distance size / 2 down to 1.
        // Stages at distances below TILE / 2 keep their pairs inside one tile: those of each
        // size run in one shared-memory launch; the longer ones one launch per stage.
        let local = |size0: i64, size1: i64| s.local(size0, size1, descending);
        local(2, p.min(TILE))?;
        let mut size = 2 * TILE;
        while size <= p {
            let mut dist = size / 2;
            while dist >= TILE {
                let call = Call::new("sortStep").value(if descending { -size } else { size }).value(dist);
                // SAFETY: each (row, pair) item swaps two elements of its own row.
                unsafe { lines::run(ordinal, &call, T::DTYPE, &shape, &[k.op(), q.op()])? };
                dist /= 2;
            }
            local(size, size)?;
            size *= 2;
        }
        Ok(s)
    }

    /// The stages of merge sizes `size0..=size1` at distances below `TILE / 2`, in shared
    /// memory (`th_sortLocal`); nothing when `size1 < 2`.
    fn local(&self, size0: i64, size1: i64, descending: bool) -> Result<()> {
        let total = self.keys.numel() as i64;
        if size1 < 2 || total == 0 {
            return Ok(());
        }
        let dev = runtime::device(self.ordinal)?;
        let mut params = THCSortLocal {
            keys: device_base(&self.keys)?,
            pos: device_base(&self.pos)?,
            total,
            row: self.p,
            size0,
            size1,
            desc: descending as i32,
            pad: 0,
        };
        // One block per tile up to the grid cap, LOCAL_THREADS threads (8 pairs each per stage:
        // several blocks fit an SM's shared memory); a small workspace gets one per pair.
        let tiles = (total as u64).div_ceil(TILE as u64);
        let threads = (total.min(TILE) as u32 / 2).clamp(1, LOCAL_THREADS);
        let shared = TILE as u32 * (8 + size_of::<T>() as u32);
        let cfg = LaunchCfg { grid: [tiles.min(MAX_GRID as u64) as u32, 1, 1], block: [threads, 1, 1], shared };
        let kernel = format!("th_sortLocal_{}", kernels::dtype_suffix(T::DTYPE));
        let mut args = [&mut params as *mut THCSortLocal as *mut std::ffi::c_void];
        // SAFETY: the kernel touches the `total` contiguous elements of the two workspace
        // tensors, which this Sorted owns; `params` outlives the launch call.
        unsafe { dev.gpu.launch(&kernel, &cfg, &mut args, runtime::stream(self.ordinal)) }
    }

    /// Sorts the first `n` elements of every workspace row by radix (rows longer than a tile):
    /// a pass per 4 of the low `bits` bits (a multiple of 8: `sizeof(T) * 2` passes for whole
    /// keys), each a count, an offsets and a scatter launch, between the workspace and a second
    /// one (an even number of passes ends in the workspace).
    fn radix(&self, descending: bool, bits: u32) -> Result<()> {
        let dev = runtime::device(self.ordinal)?;
        let rows = self.items.iter().product::<i64>();
        let tiles = (self.n + super::scan::TILE - 1) / super::scan::TILE;
        let (k2, q2) = (empty_like::<T>(dev, &[rows, self.p])?, empty_like::<i64>(dev, &[rows, self.p])?);
        let bytes = rows
            .checked_mul(RADIX_DIGITS * tiles * 8)
            .and_then(|b| usize::try_from(b).ok())
            .ok_or_else(|| Error::size("sort: the radix counts' size overflows"))?;
        let hist = super::storage::malloc(dev, bytes)?;
        let mut params = THCRadix {
            keys: [device_base(&self.keys)?, device_base(&k2)?],
            pos: [device_base(&self.pos)?, device_base(&q2)?],
            hist,
            rows,
            n: self.n,
            row: self.p,
            tiles,
            shift: 0,
            desc: descending as i32,
        };
        let sfx = kernels::dtype_suffix(T::DTYPE);
        let cfg = |blocks: i64| LaunchCfg {
            grid: [(blocks as u64).clamp(1, MAX_GRID as u64) as u32, 1, 1],
            block: [super::scan::BLOCK, 1, 1],
            shared: 0,
        };
        let launches = [
            (format!("th_radixCount_{sfx}"), cfg(rows * tiles)),
            (format!("th_radixOffsets_{sfx}"), cfg(rows)),
            (format!("th_radixScatter_{sfx}"), cfg(rows * tiles)),
        ];
        let stream = runtime::stream(self.ordinal);
        let mut run = || -> Result<()> {
            for shift in (0..bits as i32).step_by(4) {
                params.shift = shift;
                for (kernel, cfg) in &launches {
                    let mut args = [&mut params as *mut THCRadix as *mut std::ffi::c_void];
                    // SAFETY: the kernels touch the first n elements of each of the `rows` rows
                    // (p apart) of the two workspaces this function owns, and `hist`'s
                    // rows * 16 * tiles counts.
                    unsafe { dev.gpu.launch(kernel, cfg, &mut args, stream)? };
                }
                params.keys.swap(0, 1);
                params.pos.swap(0, 1);
            }
            Ok(())
        };
        let r = run();
        // Returned after the launches are queued: later work on this stream is ordered after
        // them (and k2, q2 likewise when dropped).
        let _ = dev.cache.free(hist);
        r
    }

    /// The workspace rows of `w`, `len` elements of each.
    fn row<X: Scalar>(&self, rows: &[i64], w: &View<X>, len: i64) -> Result<Line> {
        Ok(Line { base: device_base(w)?, strides: rows.to_vec(), len, step: 1 })
    }

    /// The strides of the workspace rows over the items (row-major, `p` apart).
    fn rows(&self) -> Vec<i64> {
        let mut st = vec![self.p; self.items.len()];
        for i in (0..self.items.len().saturating_sub(1)).rev() {
            st[i] = st[i + 1] * self.items[i + 1];
        }
        st
    }

    /// Writes sorted elements `first..first + values.len` of every line to `values` and their
    /// positions to `indices` (lines of the same length).
    pub fn copy(&self, first: i64, values: &Line, indices: &Line) -> Result<()> {
        let rows = self.rows();
        let mut k = self.row(&rows, &self.keys, values.len)?;
        let mut q = self.row(&rows, &self.pos, values.len)?;
        k.base += (first as u64) * size_of::<T>() as u64;
        q.base += (first as u64) * 8;
        let (v, i, k, q) = (values.element(), indices.element(), k.element(), q.element());
        let mut shape = self.items.clone();
        shape.push(values.len);
        // SAFETY: first + len <= n elements of each row; the outputs' geometry was checked by
        // device_base, and they do not overlap themselves (check_output).
        unsafe { lines::run(self.ordinal, &Call::new("sortCopy"), T::DTYPE, &shape, &[v.op(), i.op(), k.op(), q.op()]) }
    }

    /// The most frequent value of every (ascending) sorted line, ties to the smallest, and
    /// the position of its last occurrence (the host's `mode`).
    pub fn mode(&self, values: &Line, indices: &Line) -> Result<()> {
        let rows = self.rows();
        let (k, q) = (self.row(&rows, &self.keys, self.n)?, self.row(&rows, &self.pos, self.n)?);
        // SAFETY: as `copy`, reading n elements of each row.
        unsafe {
            lines::run(
                self.ordinal,
                &Call::new("sortMode"),
                T::DTYPE,
                &self.items,
                &[values.op(), indices.op(), k.op(), q.op()],
            )
        }
    }

    /// `out[q] = src[pos[q]]` along every line (`src` a copy of `out`'s previous contents, or
    /// another tensor with the same lines).
    pub fn permute<X: Scalar>(&self, out: &Line, src: &Line) -> Result<()> {
        let q = self.row(&self.rows(), &self.pos, self.n)?.element();
        // Item (line, q): out's element q, src's whole line (stride 0 over q), pos's element q.
        let src = Line { strides: [&src.strides[..], &[0]].concat(), ..src.clone() };
        let mut shape = self.items.clone();
        shape.push(self.n);
        // SAFETY: the positions are < n, the length of `src`'s lines.
        unsafe {
            lines::run(
                self.ordinal,
                &Call::new("sortPermute"),
                X::DTYPE,
                &shape,
                &[out.element().op(), src.op(), q.op()],
            )
        }
    }
}
