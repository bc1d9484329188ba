//! cumsum / cumprod along a dim on a device (`sort.cuh`'s scans). Short lines (under
//! `TILED_MIN` elements) give one thread a whole line, accumulating in order as the host does
//! (the host's bits); longer ones run the tiled scan: a block per tile of `TILE` elements, in
//! three launches (tile totals, per-line carries, the tiles themselves), combined in an order
//! fixed by the line length. Integer scans equal the host's; float ones differ by reassociation
//! only (docs/cuda.md).

use super::gpu::LaunchCfg;
use super::kernels;
use super::launch::{Call, MAX_GRID};
use super::lines::{self, THCLines};
use super::runtime;
use super::sort::{Line, without};
use crate::core::dtype::{DType, Scalar};
use crate::core::error::{Error, Result};
use crate::core::tensor::View;

/// Elements a block scans (`TH_SCAN_TILE`) and its threads (`TH_SCAN_BLOCK`); the radix sort's
/// blocks (`cuda::sort`) have the same shape.
pub(super) const TILE: i64 = 2048;
pub(super) const BLOCK: u32 = 256;
/// Shortest line the tiled scan takes (by the shape alone, so the bits never depend on timing).
const TILED_MIN: i64 = 1024;

/// `sort.cuh`'s `THCScan`.
#[repr(C)]
struct THCScan {
    l: THCLines,
    tiles: i64,
    carry: u64,
}

/// The tiled scan kernels of dtype `d` (the numeric ones have them; `kernels::kernels_of`).
pub fn kernel_names(d: DType) -> Vec<String> {
    if d == DType::Bool {
        return vec![];
    }
    let sfx = kernels::dtype_suffix(d);
    let mut v = Vec::new();
    for op in ["cumsum", "cumprod"] {
        for part in ["Totals", "Tiles"] {
            v.extend(["i32", "i64"].map(|w| format!("th_{op}{part}_{sfx}_{w}")));
        }
        v.push(format!("th_{op}Carries_{sfx}"));
    }
    v
}

/// `out` = the cumulative sum (or product, `prod`) of `t` along `d` in accreal, on device
/// `ordinal` (`out` shaped like `t`; it may be `t` itself, not partially overlap it).
pub fn scan<T: Scalar>(ordinal: i32, out: &View<T>, t: &View<T>, d: usize, prod: bool) -> Result<()> {
    let op = if prod { "cumprod" } else { "cumsum" };
    let call = Call::new(op);
    let items = without(&t.sizes, d);
    let operands = [Line::along(out, d)?, Line::along(t, d)?];
    let operands = [operands[0].op(), operands[1].op()];
    if t.sizes[d] < TILED_MIN {
        // SAFETY: one thread per line reads element q of its line before writing element q, so
        // an output that is the input itself is read before it is written.
        return unsafe { lines::run(ordinal, &call, T::DTYPE, &items, &operands) };
    }
    let Some(l) = call.lines(T::DTYPE, &items, &operands)? else { return Ok(()) };
    let wide = l.kernel.ends_with("_i64");
    let (lines, tiles) = (l.params.it.n, (t.sizes[d] + TILE - 1) / TILE);
    let acc = super::reduce::DeviceFold::Sum.acc_bytes(T::DTYPE) as i64;
    let bytes = lines
        .checked_mul(tiles)
        .and_then(|n| n.checked_mul(acc))
        .and_then(|b| usize::try_from(b).ok())
        .ok_or_else(|| Error::size(format!("{op}: the tile carries' size overflows")))?;
    let dev = runtime::device(ordinal)?;
    let carry = super::storage::malloc(dev, bytes)?;
    let mut params = THCScan { l: l.params, tiles, carry };
    let stream = runtime::stream(ordinal);
    let grid = |n: i64| LaunchCfg {
        grid: [(n as u64).clamp(1, MAX_GRID as u64) as u32, 1, 1],
        block: [BLOCK, 1, 1],
        shared: 0,
    };
    let sfx = kernels::dtype_suffix(T::DTYPE);
    let w = if wide { "i64" } else { "i32" };
    let launches = [
        (format!("th_{op}Totals_{sfx}_{w}"), grid(lines * tiles)),
        (format!("th_{op}Carries_{sfx}"), grid(lines)),
        (format!("th_{op}Tiles_{sfx}_{w}"), grid(lines * tiles)),
    ];
    let mut run = || -> Result<()> {
        for (kernel, cfg) in &launches {
            let mut args = [&mut params as *mut THCScan as *mut std::ffi::c_void];
            // SAFETY: the lines are the views' own (Call::lines checked their reach), `carry`
            // holds lines * tiles accumulators; a tile is read whole into shared memory before
            // any of it is written, so an output that is the input itself is safe.
            unsafe { dev.gpu.launch(kernel, cfg, &mut args, stream)? };
        }
        Ok(())
    };
    let r = run();
    // Returned to the cache after the launches are queued: later work on this stream is ordered
    // after them.
    let _ = dev.cache.free(carry);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn layout_matches_sort_cuh() {
        assert_eq!(size_of::<THCScan>(), 800);
        assert_eq!((offset_of!(THCScan, tiles), offset_of!(THCScan, carry)), (784, 792));
        assert_eq!(kernel_names(DType::Float).len(), 10);
        assert!(kernel_names(DType::Bool).is_empty());
    }
}
