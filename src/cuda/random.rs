//! The device random generators and the launches of `kernels/random.cuh`.
//!
//! Each device has one generator: a 64-bit seed and a 64-bit Philox offset (in 128-bit blocks),
//! behind a mutex. It is created at its first use with a seed from the OS
//! (`core::seed::os_seed`, as `THGenerator_new`; cutorch seeded from the clock), offset 0.
//! `manual_seed` sets the seed and rewinds the offset to 0.
//!
//! Stream contract (the kernels' side is documented at the top of `random.cuh`): a call with `n`
//! elements that uses `W` 32-bit words per element takes the blocks `offset .. offset +
//! ceil(n * W / 4)` (reserved under the lock, so concurrent calls never share counters) and
//! advances the offset past them; element `i` (its row-major position in the output's shape)
//! reads words `i*W .. i*W+W-1` of that range, so its value depends on (seed, offset at the
//! call's start, i) only: never on the grid, the block size, the layout of the output or timing.
//! Words per element: 1 for `random`/`clampedRandom`/`cappedRandom`, `geometric`, `bernoulli`,
//! and the float distributions of Float, Half and BFloat16 (uniform: one word; normal and
//! logNormal: a Box-Muller pair of uniforms per two elements; exponential, cauchy: one word);
//! 2 for Double's float distributions (53-bit uniforms) and for each alias draw (two uniforms);
//! `multinomial` uses one word per sample (rows * n_sample words).

use super::gpu::LaunchCfg;
use super::kernels::dtype_suffix;
use super::launch::{BLOCK, MAX_DIMS, MAX_GRID, MAX_OPERANDS, Operand, THCOperand, THCPointwise, collapse, fits_i32};
use super::runtime;
use crate::core::dtype::{DType, Scalar};
use crate::core::error::{Error, Result};
use crate::core::tensor::View;
use crate::exec::overlap::self_overlapping;
use std::sync::{Mutex, MutexGuard, OnceLock};

/// Bytes of a serialised generator state (`getRNGState`): magic, seed, offset (native-endian u64s).
pub(crate) const STATE_BYTES: usize = 24;
/// The first 8 bytes of a state: the format's tag and version.
const MAGIC: [u8; 8] = *b"THCphx10";

/// A device generator's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhiloxState {
    pub seed: u64,
    /// The next unused Philox block.
    pub offset: u64,
}

impl PhiloxState {
    pub fn with_seed(seed: u64) -> Self {
        PhiloxState { seed, offset: 0 }
    }

    /// The state's bytes: `MAGIC`, seed, offset.
    pub fn to_bytes(self) -> Vec<u8> {
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(&self.seed.to_ne_bytes());
        b.extend_from_slice(&self.offset.to_ne_bytes());
        b
    }

    /// Parses `to_bytes`' format (length and tag checked).
    pub fn from_bytes(b: &[u8]) -> Result<Self> {
        if b.len() != STATE_BYTES {
            return Err(Error::size(format!("CUDA RNG state must be {STATE_BYTES} bytes, got {}", b.len())));
        }
        if b[..8] != MAGIC {
            return Err(Error::invalid("invalid CUDA RNG state: not a state made by THCRandom_getRNGState"));
        }
        let at = |o: usize| u64::from_ne_bytes(b[o..o + 8].try_into().unwrap_or_default());
        Ok(PhiloxState { seed: at(8), offset: at(16) })
    }
}

type Slot = Mutex<Option<PhiloxState>>;

/// One slot per device (None: not created yet).
fn slots() -> Result<&'static [Slot]> {
    static SLOTS: OnceLock<Vec<Slot>> = OnceLock::new();
    let n = runtime::devices()?.len();
    Ok(SLOTS.get_or_init(|| (0..n).map(|_| Mutex::new(None)).collect()))
}

/// Device `dev`'s generator, locked, created on first use.
fn lock(dev: i32) -> Result<MutexGuard<'static, Option<PhiloxState>>> {
    runtime::device(dev)?;
    let slot = &slots()?[dev as usize];
    let mut g = slot.lock().unwrap_or_else(|e| e.into_inner());
    if g.is_none() {
        *g = Some(PhiloxState::with_seed(crate::core::seed::os_seed()));
    }
    Ok(g)
}

/// Runs `f` on device `dev`'s generator.
pub fn with<R>(dev: i32, f: impl FnOnce(&mut PhiloxState) -> R) -> Result<R> {
    let mut g = lock(dev)?;
    let s = g.get_or_insert_with(|| PhiloxState::with_seed(0));
    Ok(f(s))
}

pub fn state(dev: i32) -> Result<PhiloxState> {
    with(dev, |s| *s)
}

pub fn set_state(dev: i32, st: PhiloxState) -> Result<()> {
    with(dev, |s| *s = st)
}

/// Seed `seed`, offset 0.
pub fn manual_seed(dev: i32, seed: u64) -> Result<()> {
    set_state(dev, PhiloxState::with_seed(seed))
}

/// Forgets every generator: each is recreated (seeded from the OS) at its next use
/// (`THCRandom_shutdown`). Nothing happens before device discovery.
pub fn reset_all() {
    if !runtime::initialized() {
        return;
    }
    if let Ok(all) = slots() {
        for s in all {
            *s.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
    }
}

/// Takes the blocks of `words` 32-bit words: returns the state at the call's start and
/// advances the offset past them (wrapping at 2^64 blocks).
pub fn reserve(dev: i32, words: u64) -> Result<PhiloxState> {
    with(dev, |s| {
        let start = *s;
        s.offset = s.offset.wrapping_add(words.div_ceil(4));
        start
    })
}

/// The parameter of every random kernel: `random.cuh`'s `THCRandom`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct THCRandom {
    pub g: THCPointwise,
    pub seed: u64,
    pub offset: u64,
    pub a: f64,
    pub b: f64,
    pub c: f64,
    pub lo: i64,
    pub range: u64,
    pub dist: i32,
    pub words: i32,
}

/// `THCRandom::dist` of the `dist` kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum Dist {
    Uniform = 0,
    Normal = 1,
    LogNormal = 2,
    Exponential = 3,
    Cauchy = 4,
}

/// A call's distribution parameters (`THCRandom`'s a, b, c, lo, range, dist) and its words per
/// element.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Draw {
    pub a: f64,
    pub b: f64,
    pub c: f64,
    pub lo: i64,
    pub range: u64,
    pub dist: i32,
    pub words: u32,
}

/// Kernels of `random.cuh` whose first dtype is `first` (for `kernels::kernels_of`).
pub fn kernel_names(first: DType) -> Vec<String> {
    if first == DType::Bool {
        return vec![];
    }
    let s = dtype_suffix(first);
    let mut ops = vec![format!("int_{s}"), format!("geometric_{s}"), format!("bernoulli_{s}_float")];
    ops.push(format!("bernoulli_{s}_double"));
    let float = matches!(first, DType::Float | DType::Double | DType::Half | DType::BFloat16);
    if float {
        ops.extend([format!("dist_{s}"), format!("normal_tensor_{s}"), format!("alias_{s}")]);
    }
    let mut v: Vec<String> =
        ops.iter().flat_map(|o| [format!("th_rand_{o}_i32"), format!("th_rand_{o}_i64")]).collect();
    if float {
        v.push(format!("th_rand_multinomial_{s}"));
    }
    v
}

/// Row-major (contiguous) strides of `shape`: the element index operand.
fn row_major(shape: &[i64]) -> Vec<i64> {
    let mut st = vec![0i64; shape.len()];
    let mut acc = 1i64;
    for d in (0..shape.len()).rev() {
        st[d] = acc;
        acc = acc.saturating_mul(shape[d].max(1));
    }
    st
}

fn empty_params() -> THCPointwise {
    THCPointwise {
        n: 0,
        ndim: 0,
        op: 0,
        sizes: [0; MAX_DIMS],
        arg: [THCOperand { data: 0, strides: [0; MAX_DIMS] }; MAX_OPERANDS],
        f: [0.0; 2],
        i: [0; 2],
    }
}

fn launch_on(dev: i32, kernel: &str, cfg: &LaunchCfg, mut p: THCRandom) -> Result<()> {
    if super::kernels::module_of(kernel).is_none() {
        return Err(Error::internal(format!("no kernel {kernel}")));
    }
    let d = runtime::device(dev)?;
    let mut args = [&mut p as *mut THCRandom as *mut std::ffi::c_void];
    // SAFETY: `p` was built for this kernel from views checked against their storages
    // (device_base), so every address the kernel touches is device memory of `dev`; `p` outlives
    // the launch (the parameter is copied at launch time).
    unsafe { d.gpu.launch(kernel, cfg, &mut args, runtime::stream(dev)) }
}

/// Runs `th_rand_<op>_i32|i64` over `out`'s elements on its device, `inputs` at arg[2] and
/// arg[3] (each with strides for `out`'s shape; None: unused), reserving `n * draw.words` words
/// (`pairs`: n rounded up to even, for Box-Muller). `extra` sets raw addresses (alias tables).
pub fn run<T: Scalar>(
    op: &str,
    out: &View<T>,
    inputs: [Option<Operand<'_>>; 2],
    draw: Draw,
    pairs: bool,
    extra: [u64; 2],
) -> Result<()> {
    let crate::core::allocator::Device::Cuda(dev) = out.device() else {
        return Err(Error::invalid("a CUDA random fill got a tensor in host memory"));
    };
    if self_overlapping(&out.sizes, &out.strides) {
        return Err(Error::invalid(format!(
            "{op}: the output has overlapping elements (an expanded or stride-0 view), which device threads \
             cannot write deterministically; write into a contiguous tensor"
        )));
    }
    let n = out.numel() as u64;
    if n == 0 {
        return Ok(());
    }
    let idx = row_major(&out.sizes);
    let zeros = vec![0i64; out.sizes.len()];
    let dummy = Operand { base: 0, strides: &zeros, dtype: T::DTYPE };
    let ops = [
        super::ops::operand(out)?,
        Operand { base: 0, strides: &idx, dtype: DType::Long },
        inputs[0].unwrap_or(dummy),
        inputs[1].unwrap_or(dummy),
    ];
    let dims = collapse(&out.sizes, &ops)?;
    let mut g = empty_params();
    (g.n, g.ndim) = (n as i64, dims.len() as i32);
    for (d, dim) in dims.iter().enumerate() {
        g.sizes[d] = dim.size as i64;
        for k in 0..MAX_OPERANDS {
            g.arg[k].strides[d] = dim.st[k] as i64;
        }
    }
    for (a, x) in g.arg.iter_mut().zip(&ops) {
        a.data = x.base;
    }
    for (k, &x) in extra.iter().enumerate() {
        if x != 0 {
            g.arg[2 + k].data = x;
        }
    }
    let wide = !fits_i32(n as i64, &dims)?;
    let kernel = format!("th_rand_{op}_{}", if wide { "i64" } else { "i32" });
    let words = if pairs { n.next_multiple_of(2) } else { n } * draw.words as u64;
    let st = reserve(dev, words)?;
    let cfg = LaunchCfg {
        grid: [n.div_ceil(BLOCK as u64).min(MAX_GRID as u64) as u32, 1, 1],
        block: [BLOCK, 1, 1],
        shared: 0,
    };
    launch_on(dev, &kernel, &cfg, params(g, st, draw))
}

fn params(g: THCPointwise, st: PhiloxState, d: Draw) -> THCRandom {
    THCRandom {
        g,
        seed: st.seed,
        offset: st.offset,
        a: d.a,
        b: d.b,
        c: d.c,
        lo: d.lo,
        range: d.range,
        dist: d.dist,
        words: d.words as i32,
    }
}

/// `th_rand_multinomial_<T>`: `out` (Long, `[rows, ns]` strides `ostr`) gets `ns` categories per
/// row of `prob` (`[rows, nc]` strides `pstr`); `scratch` holds rows * nc doubles (without
/// replacement; 0 with).
#[allow(clippy::too_many_arguments)]
pub fn run_multinomial<T: Scalar>(
    dev: i32,
    out: u64,
    ostr: [i64; 2],
    prob: u64,
    pstr: [i64; 2],
    shape: [i64; 3],
    scratch: u64,
    with_replacement: bool,
) -> Result<()> {
    let [rows, ns, _] = shape;
    let mut g = empty_params();
    g.sizes[..3].copy_from_slice(&shape);
    g.arg[0].data = out;
    g.arg[0].strides[..2].copy_from_slice(&ostr);
    g.arg[2].data = prob;
    g.arg[2].strides[..2].copy_from_slice(&pstr);
    g.arg[3].data = scratch;
    let items = if with_replacement { rows * ns } else { rows } as u64;
    let st = reserve(dev, (rows * ns) as u64)?;
    let draw = Draw { dist: with_replacement as i32, words: 1, ..Draw::default() };
    let cfg = LaunchCfg {
        grid: [items.div_ceil(BLOCK as u64).clamp(1, MAX_GRID as u64) as u32, 1, 1],
        block: [BLOCK, 1, 1],
        shared: 0,
    };
    launch_on(dev, &format!("th_rand_multinomial_{}", dtype_suffix(T::DTYPE)), &cfg, params(g, st, draw))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn layout_matches_random_cuh() {
        assert_eq!(size_of::<THCRandom>(), 784);
        let offsets = [offset_of!(THCRandom, seed), offset_of!(THCRandom, a), offset_of!(THCRandom, lo)];
        assert_eq!(offsets, [720, 736, 760]);
        assert_eq!(offset_of!(THCRandom, dist), 776);
    }

    #[test]
    fn state_bytes_round_trip_and_checks() {
        let s = PhiloxState { seed: 0x0123_4567_89ab_cdef, offset: 77 };
        let b = s.to_bytes();
        assert_eq!(b.len(), STATE_BYTES);
        assert_eq!(PhiloxState::from_bytes(&b).unwrap(), s);
        assert!(PhiloxState::from_bytes(&b[..23]).is_err());
        let mut bad = b.clone();
        bad[0] ^= 1;
        assert!(PhiloxState::from_bytes(&bad).unwrap_err().to_string().contains("not a state"));
    }

    #[test]
    fn kernel_lists() {
        assert!(kernel_names(DType::Bool).is_empty());
        assert_eq!(kernel_names(DType::Int).len(), 8);
        let f = kernel_names(DType::Half);
        assert_eq!(f.len(), 15);
        assert!(f.contains(&"th_rand_multinomial_half".to_string()));
        assert!(f.contains(&"th_rand_bernoulli_half_double_i64".to_string()));
        assert_eq!(row_major(&[2, 3, 4]), [12, 4, 1]);
    }
}
