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

use crate::core::dtype::Scalar;
use crate::core::error::{Error, Result};
use crate::core::tensor::{Tensor, View};
use crate::kernels::multiversion;
use crate::linalg::gemm::{MatMut, MatRef};
use std::borrow::Cow;

mod implicit;

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
int_k!(u8, i8, i16, i32, i64);

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
float_k!(f32, f64);

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
native_elem!(u8, i8, i16, i32, i64, f32, f64);

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
half_elem!(half::f16, half::bf16);

/// `'V'`/`'F'` and `'X'`/`'C'`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mode {
    pub full: bool,
    pub flip: bool,
}

/// Parses the first characters of `vf` and `xc` (`None`: a NULL string); `arg` is the 1-based
/// position of `vf` in the C call (`xc` is the next one).
pub fn parse_mode(vf: Option<u8>, xc: Option<u8>, arg: u32) -> Result<Mode> {
    let full = match vf {
        Some(b'V') => false,
        Some(b'F') => true,
        Some(c) => {
            return Err(Error::invalid(format!(
                "type of convolution can be 'V' or 'F', got '{}'",
                (c as char).escape_default()
            ))
            .at_arg(arg));
        }
        None => return Err(Error::null(arg, "vf")),
    };
    let flip = match xc {
        Some(b'X') => false,
        Some(b'C') => true,
        Some(c) => {
            return Err(Error::invalid(format!(
                "type of convolution can be 'X' or 'C', got '{}'",
                (c as char).escape_default()
            ))
            .at_arg(arg + 1));
        }
        None => return Err(Error::null(arg + 1, "xc")),
    };
    Ok(Mode { full, flip })
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
// Plane kernels

/// Geometry of a 2-D gather pass: output `or x oc`, input rows of `ic` elements, kernel `kr x kc`,
/// output strides `sy, sx`, tap spacings `dy, dx`.
#[derive(Clone, Copy)]
struct G2 {
    or: usize,
    oc: usize,
    ic: usize,
    kr: usize,
    kc: usize,
    sy: usize,
    sx: usize,
    dy: usize,
    dx: usize,
}

/// One R x CH block of outputs at (y0, x0): sums every pair's taps in registers, then adds rows
/// `ry..R`, columns `rx..CH` of the block to `out` (earlier rows/columns belong to a previous,
/// overlapping block).
///
/// # Safety
/// Every pair's input plane must hold the rows and columns the block reads; the kernel `kr*kc`
/// taps; `out` the block's outputs.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn block<K: ConvK, const R: usize, const CH: usize, const UNIT: bool>(
    out: *mut K,
    g: &G2,
    y0: usize,
    x0: usize,
    ry: usize,
    rx: usize,
    pairs: &[(*const K, *const K)],
) {
    let mut acc = [[K::zero(); CH]; R];
    for &(inp, ker) in pairs {
        for ky in 0..g.kr {
            for kx in 0..g.kc {
                // SAFETY: caller contract (tap ky, kx of the kernel).
                let w = unsafe { *ker.add(ky * g.kc + kx) };
                for (r, a) in acc.iter_mut().enumerate() {
                    // SAFETY: caller contract: row (y0+r)*sy + ky*dy, columns from x0*sx + kx*dx.
                    let row = unsafe { inp.add(((y0 + r) * g.sy + ky * g.dy) * g.ic + x0 * g.sx + kx * g.dx) };
                    for (j, aj) in a.iter_mut().enumerate() {
                        // SAFETY: as above, column j of the block.
                        let v = unsafe { if UNIT { *row.add(j) } else { *row.add(j * g.sx) } };
                        *aj = aj.add(w.mul(v));
                    }
                }
            }
        }
    }
    for (r, a) in acc.iter().enumerate().skip(ry) {
        for (j, &aj) in a.iter().enumerate().skip(rx) {
            // SAFETY: caller contract: the block's outputs lie in `out`.
            unsafe {
                let o = out.add((y0 + r) * g.oc + x0 + j);
                *o = (*o).add(aj);
            }
        }
    }
}

/// All blocks of R output rows (the last block overlapping the previous one).
#[inline(always)]
unsafe fn rows<K: ConvK, const R: usize, const UNIT: bool>(out: *mut K, g: &G2, pairs: &[(*const K, *const K)]) {
    let mut y0 = 0;
    let mut done = 0;
    while done < g.or {
        if y0 + R > g.or {
            y0 = g.or - R;
        }
        let ry = done - y0;
        // SAFETY: forwarded contract; rows y0..y0+R are outputs.
        unsafe {
            if g.oc >= 32 {
                cols::<K, R, 32, UNIT>(out, g, y0, ry, pairs)
            } else if g.oc >= 8 {
                cols::<K, R, 8, UNIT>(out, g, y0, ry, pairs)
            } else {
                cols::<K, R, 1, UNIT>(out, g, y0, ry, pairs)
            }
        }
        done = y0 + R;
        y0 += R;
    }
}

#[inline(always)]
unsafe fn cols<K: ConvK, const R: usize, const CH: usize, const UNIT: bool>(
    out: *mut K,
    g: &G2,
    y0: usize,
    ry: usize,
    pairs: &[(*const K, *const K)],
) {
    let mut x0 = 0;
    let mut done = 0;
    while done < g.oc {
        if x0 + CH > g.oc {
            x0 = g.oc - CH;
        }
        // SAFETY: forwarded contract; columns x0..x0+CH are outputs.
        unsafe { block::<K, R, CH, UNIT>(out, g, y0, x0, ry, done - x0, pairs) };
        done = x0 + CH;
        x0 += CH;
    }
}

/// Lanes of the dot-product path.
const DOT_LANES: usize = 16;

/// Narrow outputs with long kernel rows (weight gradients: a few output columns, a kernel as
/// wide as the image): each output is a sum of dot products along kernel rows, vectorized
/// across `DOT_LANES` independent partial sums.
///
/// # Safety
/// As for `block`; the tap spacing along columns is 1.
#[inline(always)]
unsafe fn dots<K: ConvK>(out: *mut K, g: &G2, pairs: &[(*const K, *const K)]) {
    let n = g.kc / DOT_LANES * DOT_LANES;
    for y in 0..g.or {
        for x in 0..g.oc {
            let mut acc = [K::zero(); DOT_LANES];
            let mut tail = K::zero();
            for &(inp, ker) in pairs {
                for ky in 0..g.kr {
                    // SAFETY: caller contract: input row y*sy + ky*dy from column x*sx holds kc
                    // elements; kernel row ky holds kc taps.
                    let (a, b) = unsafe {
                        (
                            std::slice::from_raw_parts(inp.add((y * g.sy + ky * g.dy) * g.ic + x * g.sx), g.kc),
                            std::slice::from_raw_parts(ker.add(ky * g.kc), g.kc),
                        )
                    };
                    for (ca, cb) in a[..n].chunks_exact(DOT_LANES).zip(b[..n].chunks_exact(DOT_LANES)) {
                        for ((x, &u), &v) in acc.iter_mut().zip(cb).zip(ca) {
                            *x = x.add(u.mul(v));
                        }
                    }
                    for (&u, &v) in b[n..].iter().zip(&a[n..]) {
                        tail = tail.add(u.mul(v));
                    }
                }
            }
            let mut w = DOT_LANES;
            while w > 1 {
                w /= 2;
                for j in 0..w {
                    acc[j] = acc[j].add(acc[j + w]);
                }
            }
            // SAFETY: caller contract: (y, x) is an output.
            unsafe {
                let o = out.add(y * g.oc + x);
                *o = (*o).add(acc[0].add(tail));
            }
        }
    }
}

#[inline(always)]
#[allow(clippy::extra_unused_type_parameters)] // `I`: the marker `multiversion!` passes
unsafe fn gather_body<I, K: ConvK>(out: *mut K, g: &G2, pairs: &[(*const K, *const K)]) {
    if g.dx == 1 && g.oc < 8 && g.kc >= 2 * DOT_LANES {
        // SAFETY: forwarded contract.
        return unsafe { dots(out, g, pairs) };
    }
    // SAFETY: forwarded contract.
    unsafe {
        match (g.or >= 4, g.sx == 1) {
            (true, true) => rows::<K, 4, true>(out, g, pairs),
            (true, false) => rows::<K, 4, false>(out, g, pairs),
            (false, true) => rows::<K, 1, true>(out, g, pairs),
            (false, false) => rows::<K, 1, false>(out, g, pairs),
        }
    }
}
multiversion!(fn gather<K: ConvK>(out: *mut K, g: &G2, pairs: &[(*const K, *const K)]) => gather_body);

/// Scatter form: `out[(y*sy + ky)*oc + x*sx + kx] += w[ky][kx] * inp[y][x]`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
#[allow(clippy::extra_unused_type_parameters)] // `I`: the marker `multiversion!` passes
unsafe fn scatter_body<I, K: ConvK>(
    out: &mut [K],
    oc: usize,
    inp: &[K],
    ir: usize,
    ic: usize,
    ker: &[K],
    kr: usize,
    kc: usize,
    sy: usize,
    sx: usize,
) {
    for y in 0..ir {
        let irow = &inp[y * ic..(y + 1) * ic];
        for ky in 0..kr {
            let obase = (y * sy + ky) * oc;
            for kx in 0..kc {
                let w = ker[ky * kc + kx];
                if sx == 1 {
                    let orow = &mut out[obase + kx..obase + kx + ic];
                    for (o, &v) in orow.iter_mut().zip(irow) {
                        *o = o.add(w.mul(v));
                    }
                } else {
                    let orow = &mut out[obase + kx..obase + kx + (ic - 1) * sx + 1];
                    for (o, &v) in orow.iter_mut().step_by(sx).zip(irow) {
                        *o = o.add(w.mul(v));
                    }
                }
            }
        }
    }
}
multiversion!(fn scatter<K: ConvK>(out: &mut [K], oc: usize, inp: &[K], ir: usize, ic: usize, ker: &[K], kr: usize, kc: usize, sy: usize, sx: usize) => scatter_body);

/// `out` (one output volume) += the contributions of `pairs` (input volume, prepared kernel
/// volume) under `kind`.
fn plane<K: ConvK>(out: &mut [K], kind: Kind, g: &Geom, o: [usize; 3], pairs: &[(&[K], &[K])]) {
    let [it, ir, ic] = g.i;
    let [kt, kr, kc] = g.k;
    let [st, sr, sc] = g.s;
    let [ot, or, oc] = o;
    let (ip, kp, op) = (ir * ic, kr * kc, or * oc);
    debug_assert_eq!(out.len(), ot * op);
    match kind {
        Kind::Valid | Kind::Rev => {
            let g2 = if kind == Kind::Valid {
                G2 { or, oc, ic, kr, kc, sy: sr, sx: sc, dy: 1, dx: 1 }
            } else {
                G2 { or, oc, ic, kr, kc, sy: 1, sx: 1, dy: sr, dx: sc }
            };
            let mut list: Vec<(*const K, *const K)> = Vec::with_capacity(pairs.len() * kt);
            for z in 0..ot {
                list.clear();
                for &(inp, ker) in pairs {
                    debug_assert!(inp.len() == it * ip && ker.len() == kt * kp);
                    for kz in 0..kt {
                        let iz = if kind == Kind::Valid { z * st + kz } else { z + kz * st };
                        list.push((inp[iz * ip..(iz + 1) * ip].as_ptr(), ker[kz * kp..(kz + 1) * kp].as_ptr()));
                    }
                }
                let dst = &mut out[z * op..(z + 1) * op];
                // SAFETY: every block reads input rows (y*sy + ky*dy) < ir and columns
                // (x*sx + kx*dx) < ic of a plane of ir*ic elements (that is how or/oc were
                // derived from the sizes), kernel taps < kr*kc, and writes outputs < or*oc.
                unsafe { gather::<K>(dst.as_mut_ptr(), &g2, &list) };
            }
        }
        Kind::Full => {
            for &(inp, ker) in pairs {
                for z in 0..it {
                    for kz in 0..kt {
                        let oz = z * st + kz;
                        let dst = &mut out[oz * op..(oz + 1) * op];
                        // SAFETY: the body only indexes slices (bounds-checked).
                        unsafe {
                            scatter::<K>(
                                dst,
                                oc,
                                &inp[z * ip..(z + 1) * ip],
                                ir,
                                ic,
                                &ker[kz * kp..(kz + 1) * kp],
                                kr,
                                kc,
                                sr,
                                sc,
                            )
                        };
                    }
                }
            }
        }
    }
}

/// Multiply-adds per output volume (for the parallel threshold).
fn macs(kind: Kind, g: &Geom, o: [usize; 3]) -> usize {
    match kind {
        Kind::Full => g.in_len().saturating_mul(g.k_len()),
        _ => o.iter().product::<usize>().saturating_mul(g.k_len()),
    }
}

// ---------------------------------------------------------------------------------------------
// Buffers

/// A zero-filled vector, with allocation failure as an error.
fn zeros<K: Copy + Default>(n: usize) -> Result<Vec<K>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| Error::alloc(format!("cannot allocate {n} elements for a convolution")))?;
    v.resize(n, K::default());
    Ok(v)
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
fn prep_kernel<K: ConvK>(k: &[K], len: usize, alpha: K, flip: bool) -> Result<Vec<K>> {
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
fn par_planes<K: ConvK>(out: &mut [K], plane: usize, work: usize, f: impl Fn(usize, &mut [K]) + Sync) {
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

struct Job<'a> {
    kind: Kind,
    g: Geom,
    o: [usize; 3],
    n_out: usize,
    contrib: Contrib<'a>,
    /// `Some((batches, nin, nout))` when the job can run as GEMMs (what `contrib` lists):
    /// - valid or full `mv`/`mm`: output volume `b * nout + q` sums input volumes `b * nin + i`
    ///   with kernel volumes `q * nin + i`, for every `i < nin` (one GEMM per batch);
    /// - Rev (`ger`, `Revgerm`): output volume `q * nin + i` sums input volumes `b * nin + i`
    ///   with kernel volumes `b * nout + q`, for every `b < batches` (one GEMM per input
    ///   volume and batch).
    dense: Option<(usize, usize, usize)>,
}

/// The operands of a dense job as the GEMM paths take them (see `Job::dense`): the input
/// volumes, the prepared kernels, the geometry, the output size and `(batches, nin, nout)`.
pub struct Operands<'a, K> {
    pub inp: &'a [K],
    pub ker: &'a [K],
    pub g: Geom,
    pub o: [usize; 3],
    pub dense: (usize, usize, usize),
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
        let padded = Operands { inp: &pad, ker, g: Geom { i: p, k: g.k, s: [1; 3] }, o, dense: (1, nin, nout) };
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
fn run<T: ConvElem>(
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
    let ker = prep_kernel(&kraw, klen, alpha.to_k(), flip)?;
    drop(kraw);
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
    if zero {
        out.fill(T::K::zero());
    } else if bk != T::K::one() {
        for x in out.iter_mut() {
            *x = x.mul(bk);
        }
    }

    if let Some(dense) = gemm {
        let ops = Operands { inp: &inp, ker: &ker, g: job.g, o: job.o, dense };
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

fn dims<T: Scalar>(v: &View<T>, n: usize, what: &str, arg: u32) -> Result<Vec<i64>> {
    if v.ndim() != n {
        return Err(Error::size(format!("{what}: {n}D Tensor expected, got {}D", v.ndim())).at_arg(arg));
    }
    Ok(v.sizes.clone())
}

fn mode_kind(m: Option<Mode>) -> (Kind, bool) {
    match m {
        None => (Kind::Rev, false),
        Some(m) => (Kind::of(m), m.flip != m.full),
    }
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

/// `ger` forms (conv2Dger, conv3Dger, conv2DRevger, conv3DRevger): input `nIn x vol`, kernel
/// `nK x vol`, output `nK x nIn x out`, output (k, i) = conv(input i, kernel k).
#[allow(clippy::too_many_arguments)]
pub fn ger<T: ConvElem>(
    r: &Tensor<T>,
    beta: T,
    alpha: T,
    t: &View<T>,
    k: &View<T>,
    s: &[i64],
    m: Option<Mode>,
    name: &str,
) -> Result<()> {
    let nd = s.len();
    let ts = dims(t, nd + 1, "input", 4)?;
    let ks = dims(k, nd + 1, "kernel", 5)?;
    let (kind, flip) = mode_kind(m);
    let (st, sa) = strides3(s, 6);
    let (g, o) = Geom::new(sp(&ts[1..], nd), sp(&ks[1..], nd), st, kind, name, sa)?;
    let (nin, nk) = (ts[0] as usize, ks[0] as usize);
    let shape = out_shape(&[ks[0], ts[0]], o, nd);
    let contrib = move |p: usize, l: &mut Vec<(usize, usize)>| l.push((p % nin, p / nin));
    let dense = (kind == Kind::Rev).then_some((1, nin, nk));
    run(r, &shape, beta, alpha, t, k, flip, Job { kind, g, o, n_out: nk * nin, contrib: &contrib, dense })
}

/// conv2DRevgerm: input `B x nIn x rows x cols`, kernel `B x nK x kr x kc`, output
/// `nK x nIn x out`, output (k, i) = sum over b of Rev(input[b][i], kernel[b][k]).
pub fn revgerm<T: ConvElem>(r: &Tensor<T>, beta: T, alpha: T, t: &View<T>, k: &View<T>, s: &[i64]) -> Result<()> {
    let name = "conv2DRevgerm";
    let ts = dims(t, 4, "input", 4)?;
    let ks = dims(k, 4, "kernel", 5)?;
    let (st, sa) = strides3(s, 6);
    let (g, o) = Geom::new(sp(&ts[2..], 2), sp(&ks[2..], 2), st, Kind::Rev, name, sa)?;
    if ts[0] != ks[0] {
        return Err(Error::size(format!(
            "{name}: Input batch and kernel batch is not same size ({} and {})",
            ts[0], ks[0]
        ))
        .at_arg(5));
    }
    let (b, nin, nk) = (ts[0] as usize, ts[1] as usize, ks[1] as usize);
    let shape = out_shape(&[ks[1], ts[1]], o, 2);
    let contrib = move |p: usize, l: &mut Vec<(usize, usize)>| {
        let (kk, i) = (p / nin, p % nin);
        for q in 0..b {
            l.push((q * nin + i, q * nk + kk));
        }
    };
    run(
        r,
        &shape,
        beta,
        alpha,
        t,
        k,
        false,
        Job { kind: Kind::Rev, g, o, n_out: nk * nin, contrib: &contrib, dense: Some((b, nin, nk)) },
    )
}

/// conv2Dmv / conv3Dmv: input `nIn x vol`, kernel `nOut x nIn x kvol`, output `nOut x out`,
/// output k = sum over i of conv(input i, kernel[k][i]).
#[allow(clippy::too_many_arguments)]
pub fn mv<T: ConvElem>(
    r: &Tensor<T>,
    beta: T,
    alpha: T,
    t: &View<T>,
    k: &View<T>,
    s: &[i64],
    m: Mode,
    name: &str,
) -> Result<()> {
    let nd = s.len();
    let ts = dims(t, nd + 1, "input", 4)?;
    let ks = dims(k, nd + 2, "kernel", 5)?;
    let (kind, flip) = mode_kind(Some(m));
    let (st, sa) = strides3(s, 6);
    let (g, o) = Geom::new(sp(&ts[1..], nd), sp(&ks[2..], nd), st, kind, name, sa)?;
    if ks[1] != ts[0] {
        return Err(Error::size(format!(
            "{name}: invalid number of input planes (kernel has {}, input {})",
            ks[1], ts[0]
        ))
        .at_arg(5));
    }
    let (nin, nout) = (ts[0] as usize, ks[0] as usize);
    let shape = out_shape(&[ks[0]], o, nd);
    let contrib = move |p: usize, l: &mut Vec<(usize, usize)>| l.extend((0..nin).map(|i| (i, p * nin + i)));
    run(
        r,
        &shape,
        beta,
        alpha,
        t,
        k,
        flip,
        Job { kind, g, o, n_out: nout, contrib: &contrib, dense: Some((1, nin, nout)) },
    )
}

/// conv2Dmm: input `B x nIn x rows x cols`, kernel `nOut x nIn x kr x kc`, output
/// `B x nOut x out`, output (b, k) = sum over i of conv(input[b][i], kernel[k][i]).
pub fn mm<T: ConvElem>(r: &Tensor<T>, beta: T, alpha: T, t: &View<T>, k: &View<T>, s: &[i64], m: Mode) -> Result<()> {
    let name = "conv2Dmm";
    let ts = dims(t, 4, "input", 4)?;
    let ks = dims(k, 4, "kernel", 5)?;
    let (kind, flip) = mode_kind(Some(m));
    let (st, sa) = strides3(s, 6);
    let (g, o) = Geom::new(sp(&ts[2..], 2), sp(&ks[2..], 2), st, kind, name, sa)?;
    if ks[1] != ts[1] {
        return Err(Error::size(format!(
            "{name}: invalid number of input planes (kernel has {}, input {})",
            ks[1], ts[1]
        ))
        .at_arg(5));
    }
    let (b, nin, nout) = (ts[0] as usize, ts[1] as usize, ks[0] as usize);
    let shape = out_shape(&[ts[0], ks[0]], o, 2);
    let contrib = move |p: usize, l: &mut Vec<(usize, usize)>| {
        let (q, kk) = (p / nout, p % nout);
        l.extend((0..nin).map(|i| (q * nin + i, kk * nin + i)));
    };
    run(
        r,
        &shape,
        beta,
        alpha,
        t,
        k,
        flip,
        Job { kind, g, o, n_out: b * nout, contrib: &contrib, dense: Some((b, nin, nout)) },
    )
}

/// conv2Dmul / conv3Dmul: one input volume, one kernel volume, one output volume.
#[allow(clippy::too_many_arguments)]
pub fn mul<T: ConvElem>(
    r: &Tensor<T>,
    beta: T,
    alpha: T,
    t: &View<T>,
    k: &View<T>,
    s: &[i64],
    m: Mode,
    name: &str,
) -> Result<()> {
    let nd = s.len();
    let ts = dims(t, nd, "input", 4)?;
    let ks = dims(k, nd, "kernel", 5)?;
    let (kind, flip) = mode_kind(Some(m));
    let (st, sa) = strides3(s, 6);
    let (g, o) = Geom::new(sp(&ts, nd), sp(&ks, nd), st, kind, name, sa)?;
    let shape = out_shape(&[], o, nd);
    let contrib = |_p: usize, l: &mut Vec<(usize, usize)>| l.push((0, 0));
    run(r, &shape, beta, alpha, t, k, flip, Job { kind, g, o, n_out: 1, contrib: &contrib, dense: None })
}

/// conv2Dcmul / conv3Dcmul: input and kernel `n x vol`, output `n x out`, output k =
/// conv(input k, kernel k).
#[allow(clippy::too_many_arguments)]
pub fn cmul<T: ConvElem>(
    r: &Tensor<T>,
    beta: T,
    alpha: T,
    t: &View<T>,
    k: &View<T>,
    s: &[i64],
    m: Mode,
    name: &str,
) -> Result<()> {
    let nd = s.len();
    let ts = dims(t, nd + 1, "input", 4)?;
    let ks = dims(k, nd + 1, "kernel", 5)?;
    let (kind, flip) = mode_kind(Some(m));
    let (st, sa) = strides3(s, 6);
    let (g, o) = Geom::new(sp(&ts[1..], nd), sp(&ks[1..], nd), st, kind, name, sa)?;
    if ks[0] != ts[0] {
        return Err(
            Error::size(format!("{name}: invalid number of input/kernel planes ({} and {})", ts[0], ks[0])).at_arg(5)
        );
    }
    let shape = out_shape(&[ks[0]], o, nd);
    let contrib = |p: usize, l: &mut Vec<(usize, usize)>| l.push((p, p));
    run(r, &shape, beta, alpha, t, k, flip, Job { kind, g, o, n_out: ks[0] as usize, contrib: &contrib, dense: None })
}

/// conv2Dmap / conv3Dmap: input and kernel `n x vol`, output `n x out`; row m of `map` is a
/// 1-based (from, to) pair (as in TH, whatever the index base): output `to` += conv(input
/// `from`, kernel m), rows applied in order.
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
    let nd = s.len();
    let ts = dims(t, nd + 1, "input", 4)?;
    let ks = dims(k, nd + 1, "kernel", 5)?;
    let ms = dims(map, 2, "map", 6)?;
    let (kind, flip) = mode_kind(Some(m));
    let (st, sa) = strides3(s, 7);
    let (g, o) = Geom::new(sp(&ts[1..], nd), sp(&ks[1..], nd), st, kind, name, sa)?;
    if ks[0] != ts[0] {
        return Err(
            Error::size(format!("{name}: invalid number of input/kernel planes ({} and {})", ts[0], ks[0])).at_arg(5)
        );
    }
    let n = ts[0];
    if ms[1] < 2 {
        return Err(Error::size(format!("{name}: map must have 2 columns (from, to), got {}", ms[1])).at_arg(6));
    }
    if ms[0] > ks[0] {
        return Err(
            Error::size(format!("{name}: map has {} rows but the kernel only {} planes", ms[0], ks[0])).at_arg(6)
        );
    }
    let idx = |v: T| -> i64 {
        match v.to_prim() {
            crate::core::dtype::Prim::I(x) => x,
            crate::core::dtype::Prim::F(x) => x as i64,
        }
    };
    // by output plane: the (from, kernel) pairs in map order
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
    let shape = out_shape(&[n], o, nd);
    let contrib = move |p: usize, l: &mut Vec<(usize, usize)>| l.extend_from_slice(&per_out[p]);
    run(r, &shape, beta, alpha, t, k, flip, Job { kind, g, o, n_out: n as usize, contrib: &contrib, dense: None })
}

// ---------------------------------------------------------------------------------------------
// Raw-pointer helpers (validXCorr2Dptr, ..., conv2d, conv3d)

/// `r += alpha * conv(t, k)` on raw contiguous buffers: `t` holds `i` (depth, rows, cols),
/// `k` holds `kk`, `r` the output of `kind` (`flip`: the kernel is reversed first).
///
/// # Safety
/// `r`, `t`, `k` must be valid for the output, input and kernel element counts.
#[allow(clippy::too_many_arguments)]
pub unsafe fn ptr_op<T: ConvElem>(
    r: *mut T,
    alpha: T,
    t: *const T,
    i: [i64; 3],
    k: *const T,
    kk: [i64; 3],
    s: [i64; 3],
    stride_args: [u32; 3],
    kind: Kind,
    flip: bool,
    name: &str,
) -> Result<()> {
    if r.is_null() {
        return Err(Error::null(1, "r_"));
    }
    if t.is_null() {
        return Err(Error::null(3, "t_"));
    }
    if k.is_null() {
        return Err(Error::null(if stride_args[0] == 0 { 6 } else { 7 }, "k_"));
    }
    let (g, o) = Geom::new(i, kk, s, kind, name, stride_args)?;
    let n_out: usize = o.iter().product();
    // SAFETY: caller contract: t and k hold the input and kernel volumes. They are copied so
    // that an output overlapping them cannot alias a shared borrow.
    let (ts, ks) = unsafe { (std::slice::from_raw_parts(t, g.in_len()), std::slice::from_raw_parts(k, g.k_len())) };
    let mut inp = zeros::<T::K>(ts.len())?;
    for (a, &b) in inp.iter_mut().zip(ts) {
        *a = b.to_k();
    }
    let mut kraw = zeros::<T::K>(ks.len())?;
    for (a, &b) in kraw.iter_mut().zip(ks) {
        *a = b.to_k();
    }
    let ker = prep_kernel(&kraw, g.k_len(), alpha.to_k(), flip)?;
    // SAFETY: caller contract: r holds the n_out outputs.
    let rs = unsafe { std::slice::from_raw_parts_mut(r, n_out) };
    if let Some(out) = T::as_k_mut(rs) {
        plane(out, kind, &g, o, &[(&inp, &ker)]);
    } else {
        let mut out = zeros::<T::K>(n_out)?;
        for (a, &b) in out.iter_mut().zip(rs.iter()) {
            *a = b.to_k();
        }
        plane(&mut out, kind, &g, o, &[(&inp, &ker)]);
        for (a, b) in rs.iter_mut().zip(out) {
            *a = T::from_k(b);
        }
    }
    Ok(())
}

/// (kind, flip) of a pointer helper's mode.
pub fn ptr_mode(m: Mode) -> (Kind, bool) {
    mode_kind(Some(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Direct definitions, one output element at a time.
    #[allow(clippy::too_many_arguments)]
    fn naive_valid(
        inp: &[f64],
        ir: usize,
        ic: usize,
        k: &[f64],
        kr: usize,
        kc: usize,
        sr: usize,
        sc: usize,
    ) -> Vec<f64> {
        let (or, oc) = ((ir - kr) / sr + 1, (ic - kc) / sc + 1);
        let mut o = vec![0.0; or * oc];
        for y in 0..or {
            for x in 0..oc {
                for ky in 0..kr {
                    for kx in 0..kc {
                        o[y * oc + x] += k[ky * kc + kx] * inp[(y * sr + ky) * ic + x * sc + kx];
                    }
                }
            }
        }
        o
    }

    #[test]
    fn gather_blocks_match_naive() {
        // sizes around the block edges (R = 4, CH = 32 / 8 / 1)
        for &(ir, ic, kr, kc, sr, sc) in &[
            (5, 5, 2, 2, 1, 1),
            (9, 40, 3, 3, 1, 1),
            (12, 70, 5, 4, 2, 3),
            (3, 9, 3, 1, 1, 1),
            (40, 13, 1, 1, 3, 1),
            (6, 70, 2, 66, 1, 1),
            (7, 99, 3, 40, 2, 1),
        ] {
            let inp: Vec<f64> = (0..ir * ic).map(|v| ((v * 7) % 13) as f64 - 6.0).collect();
            let k: Vec<f64> = (0..kr * kc).map(|v| ((v * 5) % 7) as f64 - 3.0).collect();
            let want = naive_valid(&inp, ir, ic, &k, kr, kc, sr, sc);
            let g = Geom { i: [1, ir, ic], k: [1, kr, kc], s: [1, sr, sc] };
            let o = [1, (ir - kr) / sr + 1, (ic - kc) / sc + 1];
            let mut out = vec![0.0; want.len()];
            plane(&mut out, Kind::Valid, &g, o, &[(&inp, &k)]);
            assert_eq!(out, want, "{ir}x{ic} k {kr}x{kc} s {sr},{sc}");
        }
    }

    #[test]
    fn modes_and_sizes() {
        assert_eq!(parse_mode(Some(b'F'), Some(b'C'), 7).unwrap(), Mode { full: true, flip: true });
        assert!(parse_mode(Some(b'v'), Some(b'X'), 7).is_err());
        assert!(parse_mode(Some(b'V'), None, 7).is_err());
        assert_eq!(convsize(10, 3, 2, false).unwrap(), 4);
        assert_eq!(convsize(10, 3, 2, true).unwrap(), 21);
        assert!(convsize(10, 3, 0, true).is_err());
        assert!(Geom::new([1, 3, 3], [1, 4, 1], [1, 1, 1], Kind::Valid, "t", [0, 5, 6]).is_err());
        assert!(Geom::new([1, 5, 5], [1, 4, 1], [1, 2, 1], Kind::Rev, "t", [0, 5, 6]).is_err());
        assert!(Geom::new([1, 3, 3], [1, 4, 1], [1, 1, 1], Kind::Full, "t", [0, 5, 6]).is_ok());
    }
}
