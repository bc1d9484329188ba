//! `generic/THTensorConv.h`: 2-D and 3-D convolutions and cross-correlations (TH_API.md §7).
//!
//! Every function computes `r = beta*r + alpha*conv(...)` (the pointer helpers: `r += alpha*conv`).
//! `vf` is `'V'` (valid: output `(x-k)/s + 1`) or `'F'` (full: output `(x-1)*s + k`, the
//! transposed/scatter form); `xc` is `'X'` (cross-correlation) or `'C'` (convolution: flipped
//! kernel). The "Rev" forms compute the kernel gradient of a strided valid cross-correlation:
//! output `x - (k-1)*s`, with the kernel taps `s` apart.
//!
//! Everything is reduced to three plane primitives over contiguous buffers in a compute type `K`
//! (the dtype itself; `f32` for Half/BFloat16), with the kernel pre-multiplied by `alpha` and
//! pre-flipped where the mode needs it (reversing a whole plane flips it in every dimension):
//! - `valid`: gather form, `out[y][x] += sum w[ky][kx] * in[y*sy + ky*dy][x*sx + kx*dx]`, computed
//!   in register blocks of R output rows x CH output columns that accumulate every (input plane,
//!   kernel tap) before touching memory (used for valid modes, and with dilation for Rev);
//! - `full`: scatter form, `out[y*sy + ky][x*sx + kx] += w[ky][kx] * in[y][x]` as contiguous
//!   axpy rows (as TH does it, so non-finite kernel values behave exactly as in TH);
//! - 3-D is a list of 2-D planes (one per kernel depth tap).
//!
//! Valid-mode `mv`/`mm` (every output plane sums every input plane; full mode as a valid job
//! on a zero-padded input) and the Rev forms with enough output planes, taps and positions
//! instead run as GEMM on the float types (`gemm_shape`): on a CPU with an implicit-GEMM
//! kernel, straight from the input (`implicit`); otherwise the input is
//! unfolded (im2col) into a (input planes x taps) x (output positions) matrix, a few MiB of
//! columns at a time, and multiplied by the prepared kernels through the library's GEMM.
//!
//! Output planes are independent and run in parallel on the library's pool above a work
//! threshold; within a plane the order is fixed, so results never depend on the thread count.
//! Integer dtypes wrap (all orderings agree modulo 2^bits); floating dtypes accumulate in their
//! own type (TH's `real sum`), Half/BFloat16 in f32 with one rounding at the end.
//!
//! `device` is the device half: THC's 2-D convolutions on device tensors, with these
//! semantics and `Geom`'s checks.

use crate::core::dtype::Scalar;
use crate::core::error::{Error, Result};
use crate::core::tensor::{Tensor, View};
use crate::kernels::multiversion;
use crate::linalg::gemm::{MatMut, MatRef};
use std::borrow::Cow;

mod buffers;
pub mod device;
mod implicit;
mod plane;
mod raw;

use buffers::*;
use plane::*;
pub use raw::*;
// For THNN's convolutions (nn::conv::implicit), which run their forward as a valid job.
pub(crate) use buffers::Operands;
pub(crate) use implicit::fits as implicit_fits;

/// The arithmetic of the compute type (integers wrap).
pub trait ConvK: Copy + Send + Sync + PartialEq + Default + std::fmt::Debug + 'static {
    fn zero() -> Self;
    fn one() -> Self;
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    /// Not infinite or NaN (integers: always).
    fn finite(self) -> bool {
        true
    }
    /// Whether `gemm_acc` is available (the float types): large `mv`/`mm` (valid, and full with
    /// unit strides) and Rev `ger`/`Revgerm` then run as GEMM (implicit, or im2col + GEMM).
    const GEMM: bool = false;
    /// `c += a @ b` through the library's GEMM (`c` m x n, `a` m x k, `b` k x n).
    ///
    /// # Safety
    /// As [`crate::linalg::gemm::gemm`].
    unsafe fn gemm_acc(
        _m: usize,
        _n: usize,
        _k: usize,
        _a: MatRef<Self>,
        _b: MatRef<Self>,
        _c: MatMut<Self>,
    ) -> Result<()> {
        Err(Error::internal("conv: no GEMM for this compute type"))
    }
    /// Runs a dense valid job (as `valid_gemm` takes it), or a Rev job (`rev`, as `rev_gemm`
    /// takes it), as an implicit GEMM where the CPU has a kernel for this type and the job
    /// suits one (`implicit::run`); `Ok(false)`: not run.
    fn implicit(_rev: bool, _out: &mut [Self], _ops: &Operands<Self>) -> Result<bool> {
        Ok(false)
    }
}

macro_rules! int_k {
    ($($T:ty),*) => {$(
        impl ConvK for $T {
            #[inline(always)] fn zero() -> Self { 0 }
            #[inline(always)] fn one() -> Self { 1 }
            #[inline(always)] fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            #[inline(always)] fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
        }
    )*};
}
crate::th_dtypes!(int_k; int);

macro_rules! float_k {
    ($($T:ty),*) => {$(
        impl ConvK for $T {
            #[inline(always)] fn zero() -> Self { 0.0 }
            #[inline(always)] fn one() -> Self { 1.0 }
            #[inline(always)] fn add(self, o: Self) -> Self { self + o }
            #[inline(always)] fn mul(self, o: Self) -> Self { self * o }
            fn finite(self) -> bool { self.is_finite() }
            const GEMM: bool = true;
            unsafe fn gemm_acc(m: usize, n: usize, k: usize, a: MatRef<Self>, b: MatRef<Self>, c: MatMut<Self>) -> Result<()> {
                // SAFETY: forwarded contract.
                unsafe { crate::linalg::gemm::gemm::<$T>(m, n, k, 1.0, a, b, 1.0, c) }
            }
            fn implicit(rev: bool, out: &mut [Self], ops: &Operands<Self>) -> Result<bool> {
                implicit::run(rev, out, ops)
            }
        }
    )*};
}
crate::th_dtypes!(float_k; float);

/// A dtype with convolutions: how it maps to its compute type.
pub trait ConvElem: Scalar {
    type K: ConvK;
    fn to_k(self) -> Self::K;
    fn from_k(k: Self::K) -> Self;
    /// The same slice seen as compute values, when the dtype computes natively.
    fn as_k(s: &[Self]) -> Option<&[Self::K]>;
    /// Mutable form of `as_k`.
    fn as_k_mut(s: &mut [Self]) -> Option<&mut [Self::K]>;
}

macro_rules! native_elem {
    ($($T:ty),*) => {$(
        impl ConvElem for $T {
            type K = $T;
            #[inline(always)] fn to_k(self) -> $T { self }
            #[inline(always)] fn from_k(k: $T) -> $T { k }
            fn as_k(s: &[$T]) -> Option<&[$T]> { Some(s) }
            fn as_k_mut(s: &mut [$T]) -> Option<&mut [$T]> { Some(s) }
        }
    )*};
}
crate::th_dtypes!(native_elem; int float);

macro_rules! half_elem {
    ($($T:ty),*) => {$(
        impl ConvElem for $T {
            type K = f32;
            #[inline(always)] fn to_k(self) -> f32 { self.to_f32() }
            #[inline(always)] fn from_k(k: f32) -> $T { <$T>::from_f32(k) }
            fn as_k(_: &[$T]) -> Option<&[f32]> { None }
            fn as_k_mut(_: &mut [$T]) -> Option<&mut [f32]> { None }
        }
    )*};
}
crate::th_dtypes!(half_elem; half);

/// `'V'`/`'F'` and `'X'`/`'C'`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mode {
    pub full: bool,
    pub flip: bool,
}

/// Parses the first characters of `vf` and `xc` (`None`: a NULL string); `arg` is the 1-based
/// position of `vf` in the C call (`xc` is the next one).
pub fn parse_mode(vf: Option<u8>, xc: Option<u8>, arg: u32) -> Result<Mode> {
    let full = mode_flag(vf, [b'V', b'F'], arg, "vf")?;
    let flip = mode_flag(xc, [b'X', b'C'], arg + 1, "xc")?;
    Ok(Mode { full, flip })
}

/// Whether the mode character `c` (argument `arg`, named `what`) is the second of `[off, on]`.
fn mode_flag(c: Option<u8>, [off, on]: [u8; 2], arg: u32, what: &str) -> Result<bool> {
    match c {
        Some(c) if c == off => Ok(false),
        Some(c) if c == on => Ok(true),
        Some(c) => Err(Error::invalid(format!(
            "type of convolution can be '{}' or '{}', got '{}'",
            off as char,
            on as char,
            (c as char).escape_default()
        ))
        .at_arg(arg)),
        None => Err(Error::null(arg, what)),
    }
}

/// Which plane primitive an operation uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Valid,
    Full,
    Rev,
}

impl Kind {
    fn of(m: Mode) -> Kind {
        if m.full { Kind::Full } else { Kind::Valid }
    }
}

/// Sizes of one input volume, one kernel volume and the strides (2-D: depth 1, stride 1).
#[derive(Clone, Copy, Debug)]
pub struct Geom {
    pub i: [usize; 3],
    pub k: [usize; 3],
    pub s: [usize; 3],
}

const AXES: [&str; 3] = ["depth", "rows", "columns"];

impl Geom {
    /// Checks sizes (>= 1), strides (>= 1) and, for valid/Rev, that the kernel fits; returns the
    /// geometry and the output size. `first_stride_arg` is the C position of the first stride of
    /// this call (depth for 3-D, rows for 2-D).
    pub fn new(
        i: [i64; 3],
        k: [i64; 3],
        s: [i64; 3],
        kind: Kind,
        name: &str,
        stride_args: [u32; 3],
    ) -> Result<(Geom, [usize; 3])> {
        for d in 0..3 {
            if s[d] < 1 {
                return Err(Error::invalid(format!(
                    "Stride should be a positive integer (got {} for {})",
                    s[d], AXES[d]
                ))
                .at_arg(stride_args[d]));
            }
            if i[d] < 1 || k[d] < 1 {
                return Err(Error::size(format!(
                    "{name}: sizes must be positive (input {} {}, kernel {})",
                    AXES[d], i[d], k[d]
                )));
            }
        }
        if kind != Kind::Full && (0..3).any(|d| i[d] < k[d]) {
            return Err(Error::size(format!(
                "{name}: Input image is smaller than kernel (input {}x{}x{}, kernel {}x{}x{})",
                i[0], i[1], i[2], k[0], k[1], k[2]
            ))
            .at_arg(5));
        }
        let mut o = [0usize; 3];
        for d in 0..3 {
            let v = match kind {
                Kind::Valid => Some((i[d] - k[d]) / s[d] + 1),
                Kind::Full => (i[d] - 1).checked_mul(s[d]).and_then(|x| x.checked_add(k[d])),
                Kind::Rev => (k[d] - 1).checked_mul(s[d]).map(|x| i[d] - x),
            };
            match v {
                Some(v) if v >= 1 => o[d] = v as usize,
                _ => {
                    return Err(Error::size(format!(
                        "{name}: output {} would be empty or overflow (input {}, kernel {}, stride {})",
                        AXES[d], i[d], k[d], s[d]
                    ))
                    .at_arg(5));
                }
            }
        }
        let g = Geom { i: i.map(|v| v as usize), k: k.map(|v| v as usize), s: s.map(|v| v as usize) };
        Ok((g, o))
    }

    fn in_len(&self) -> usize {
        self.i.iter().product()
    }
    fn k_len(&self) -> usize {
        self.k.iter().product()
    }
}

/// Output size of one dimension (TH's `convsize`): valid `(x-k)/s + 1`, full `(x-1)*s + k`,
/// with C's truncating division (a negative result is returned as is, as TH does).
pub fn convsize(x: i64, k: i64, s: i64, full: bool) -> Result<i64> {
    if s < 1 {
        return Err(Error::invalid(format!("Stride should be a positive integer (got {s})")).at_arg(3));
    }
    let v = if full {
        (x.checked_sub(1)).and_then(|a| a.checked_mul(s)).and_then(|a| a.checked_add(k))
    } else {
        x.checked_sub(k).map(|a| a / s + 1)
    };
    v.ok_or_else(|| Error::size(format!("convsize({x}, {k}, {s}) overflows")))
}

// ---------------------------------------------------------------------------------------------
// Tensor-level functions. `m == None` selects the Rev form. Argument positions follow TH.

/// Strides in (depth, rows, cols) order and their C positions for a 2-D or 3-D call.
fn strides3(s: &[i64], first_arg: u32) -> ([i64; 3], [u32; 3]) {
    if s.len() == 2 {
        ([1, s[0], s[1]], [0, first_arg, first_arg + 1])
    } else {
        ([s[0], s[1], s[2]], [first_arg, first_arg + 1, first_arg + 2])
    }
}

fn sp(v: &[i64], nd: usize) -> [i64; 3] {
    if nd == 2 { [1, v[0], v[1]] } else { [v[0], v[1], v[2]] }
}

fn out_shape(lead: &[i64], o: [usize; 3], nd: usize) -> Vec<i64> {
    let mut s = lead.to_vec();
    s.extend(o[3 - nd..].iter().map(|&x| x as i64));
    s
}

/// How the input and kernel volumes of a tensor-level call combine into output volumes.
enum Form<'a, T: Scalar> {
    /// conv2Dger / conv3Dger / conv2DRevger / conv3DRevger: input `nIn x vol`, kernel
    /// `nK x vol`, output `nK x nIn x out`, output (k, i) = conv(input i, kernel k). `batch`
    /// (conv2DRevgerm): input `B x nIn x vol`, kernel `B x nK x vol`, output (k, i) summed over b.
    Ger { batch: bool },
    /// conv2Dmv / conv3Dmv: input `nIn x vol`, kernel `nOut x nIn x kvol`, output `nOut x out`,
    /// output k = sum over i of conv(input i, kernel[k][i]). `batch` (conv2Dmm): input
    /// `B x nIn x vol`, output `B x nOut x out`, output (b, k) = sum over i of conv(input[b][i],
    /// kernel[k][i]).
    Mv { batch: bool },
    /// conv2Dmul / conv3Dmul: one input volume, one kernel volume, one output volume.
    Mul,
    /// conv2Dcmul / conv3Dcmul: input and kernel `n x vol`, output `n x out`, output k =
    /// conv(input k, kernel k).
    Cmul,
    /// conv2Dmap / conv3Dmap: as `Cmul`, but row m of the map is a 1-based (from, to) pair (as in
    /// TH, whatever the index base): output `to` += conv(input `from`, kernel m), rows applied in
    /// order.
    Map(&'a View<T>),
}

impl<T: Scalar> Form<'_, T> {
    /// The number of leading (non-spatial) dimensions of the input and of the kernel.
    fn leads(&self) -> (usize, usize) {
        match *self {
            Form::Ger { batch } => (1 + batch as usize, 1 + batch as usize),
            Form::Mv { batch } => (1 + batch as usize, 2),
            Form::Mul => (0, 0),
            Form::Cmul | Form::Map(_) => (1, 1),
        }
    }
}

/// A size mismatch between the operands (reported on the kernel, argument 5) unless `ok`.
fn expect(ok: bool, name: &str, msg: impl FnOnce() -> String) -> Result<()> {
    if ok { Ok(()) } else { Err(Error::size(format!("{name}: {}", msg())).at_arg(5)) }
}

/// Lists the (input volume, kernel volume) pairs of one output volume (see `Job::contrib`).
type ContribFn<'a> = Box<dyn Fn(usize, &mut Vec<(usize, usize)>) + Sync + 'a>;

/// Every tensor-level function: checks the operands of `form` (input, kernel, map, strides,
/// sizes, then plane counts, in this order), then runs its job. `m == None` selects the Rev form.
#[allow(clippy::too_many_arguments)]
fn conv<T: ConvElem>(
    form: Form<'_, T>,
    r: &Tensor<T>,
    (beta, alpha): (T, T),
    t: &View<T>,
    k: &View<T>,
    s: &[i64],
    m: Option<Mode>,
    name: &str,
) -> Result<()> {
    let nd = s.len();
    let (tl, kl) = form.leads();
    let ts = dims(t, nd + tl, "input", 4)?;
    let ks = dims(k, nd + kl, "kernel", 5)?;
    let ms = match form {
        Form::Map(map) => dims(map, 2, "map", 6)?,
        _ => Vec::new(),
    };
    let (kind, flip) = mode_kind(m);
    let (st, sa) = strides3(s, if matches!(form, Form::Map(_)) { 7 } else { 6 });
    let (g, o) = Geom::new(sp(&ts[tl..], nd), sp(&ks[kl..], nd), st, kind, name, sa)?;
    let (lead, contrib, dense): (Vec<i64>, ContribFn, _) = match form {
        Form::Ger { batch } => {
            expect(!batch || ts[0] == ks[0], name, || {
                format!("Input batch and kernel batch is not same size ({} and {})", ts[0], ks[0])
            })?;
            let b = if batch { ts[0] as usize } else { 1 };
            let (nin, nk) = (ts[tl - 1] as usize, ks[kl - 1] as usize);
            let contrib = move |p: usize, l: &mut Vec<(usize, usize)>| {
                let (kk, i) = (p / nin, p % nin);
                l.extend((0..b).map(|q| (q * nin + i, q * nk + kk)));
            };
            (vec![ks[kl - 1], ts[tl - 1]], Box::new(contrib), (kind == Kind::Rev).then_some((b, nin, nk)))
        }
        Form::Mv { batch } => {
            let planes = ts[tl - 1];
            expect(ks[1] == planes, name, || {
                format!("invalid number of input planes (kernel has {}, input {})", ks[1], planes)
            })?;
            let b = if batch { ts[0] as usize } else { 1 };
            let (nin, nout) = (planes as usize, ks[0] as usize);
            let contrib = move |p: usize, l: &mut Vec<(usize, usize)>| {
                let (q, kk) = (p / nout, p % nout);
                l.extend((0..nin).map(|i| (q * nin + i, kk * nin + i)));
            };
            ([&ts[..tl - 1], &ks[..1]].concat(), Box::new(contrib), Some((b, nin, nout)))
        }
        Form::Mul => (Vec::new(), Box::new(|_p: usize, l: &mut Vec<(usize, usize)>| l.push((0, 0))), None),
        Form::Cmul | Form::Map(_) => {
            expect(ks[0] == ts[0], name, || {
                format!("invalid number of input/kernel planes ({} and {})", ts[0], ks[0])
            })?;
            let contrib: ContribFn = match form {
                Form::Map(map) => {
                    let per_out = map_rows(map, &ms, ks[0], ts[0], name)?;
                    Box::new(move |p: usize, l: &mut Vec<(usize, usize)>| l.extend_from_slice(&per_out[p]))
                }
                _ => Box::new(|p: usize, l: &mut Vec<(usize, usize)>| l.push((p, p))),
            };
            (vec![ts[0]], contrib, None)
        }
    };
    let shape = out_shape(&lead, o, nd);
    let n_out = lead.iter().product::<i64>() as usize;
    run(r, &shape, beta, alpha, t, k, flip, Job { kind, g, o, n_out, contrib: &*contrib, dense })
}

/// The rows of a `map` (sizes `ms`) grouped by output plane: the (from, kernel) pairs in map
/// order, checked against the `nk` kernel and `n` input planes.
fn map_rows<T: ConvElem>(map: &View<T>, ms: &[i64], nk: i64, n: i64, name: &str) -> Result<Vec<Vec<(usize, usize)>>> {
    if ms[1] < 2 {
        return Err(Error::size(format!("{name}: map must have 2 columns (from, to), got {}", ms[1])).at_arg(6));
    }
    if ms[0] > nk {
        return Err(Error::size(format!("{name}: map has {} rows but the kernel only {nk} planes", ms[0])).at_arg(6));
    }
    let idx = |v: T| -> i64 {
        match v.to_prim() {
            crate::core::dtype::Prim::I(x) => x,
            crate::core::dtype::Prim::F(x) => x as i64,
        }
    };
    let mut per_out: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n as usize];
    for row in 0..ms[0] {
        let from = idx(map.get(&[row, 0])?);
        let to = idx(map.get(&[row, 1])?);
        for (what, v) in [("from", from), ("to", to)] {
            if v < 1 || v > n {
                return Err(Error::index(format!(
                    "{name}: map[{row}] {what} plane {v} out of range 1..{n} (map indices are 1-based)"
                ))
                .at_arg(6));
            }
        }
        per_out[(to - 1) as usize].push(((from - 1) as usize, row as usize));
    }
    Ok(per_out)
}

/// The entry points that take `(r, beta, alpha, t, k, s, m, name)`, each one `Form`.
macro_rules! entry {
    ($($(#[$doc:meta])* $f:ident($M:ty) => $form:expr;)*) => {$(
        $(#[$doc])*
        #[allow(clippy::too_many_arguments)]
        pub fn $f<T: ConvElem>(r: &Tensor<T>, beta: T, alpha: T, t: &View<T>, k: &View<T>, s: &[i64], m: $M, name: &str) -> Result<()> {
            conv($form, r, (beta, alpha), t, k, s, m.into(), name)
        }
    )*};
}

entry! {
    /// `ger` forms (conv2Dger, conv3Dger; `m == None`: conv2DRevger, conv3DRevger), see `Form::Ger`.
    ger(Option<Mode>) => Form::Ger { batch: false };
    /// conv2Dmv / conv3Dmv, see `Form::Mv`.
    mv(Mode) => Form::Mv { batch: false };
    /// conv2Dmul / conv3Dmul, see `Form::Mul`.
    mul(Mode) => Form::Mul;
    /// conv2Dcmul / conv3Dcmul, see `Form::Cmul`.
    cmul(Mode) => Form::Cmul;
}

/// conv2DRevgerm, see `Form::Ger`.
pub fn revgerm<T: ConvElem>(r: &Tensor<T>, beta: T, alpha: T, t: &View<T>, k: &View<T>, s: &[i64]) -> Result<()> {
    conv(Form::Ger { batch: true }, r, (beta, alpha), t, k, s, None, "conv2DRevgerm")
}

/// conv2Dmm, see `Form::Mv`.
pub fn mm<T: ConvElem>(r: &Tensor<T>, beta: T, alpha: T, t: &View<T>, k: &View<T>, s: &[i64], m: Mode) -> Result<()> {
    conv(Form::Mv { batch: true }, r, (beta, alpha), t, k, s, Some(m), "conv2Dmm")
}

/// conv2Dmap / conv3Dmap, see `Form::Map`.
#[allow(clippy::too_many_arguments)]
pub fn map<T: ConvElem>(
    r: &Tensor<T>,
    beta: T,
    alpha: T,
    t: &View<T>,
    k: &View<T>,
    map: &View<T>,
    s: &[i64],
    m: Mode,
    name: &str,
) -> Result<()> {
    conv(Form::Map(map), r, (beta, alpha), t, k, s, Some(m), name)
}

#[cfg(test)]
mod tests;
