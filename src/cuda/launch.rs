//! Launch parameters of the pointwise kernels, from the shared geometry: the output shape and
//! each operand's address, element strides (broadcast: 0) and dtype become one `THCPointwise`
//! (mirrored from `kernels/common.cuh`), the kernel's name and its grid.
//!
//! Dims go as the host plan orders them (`exec::plan`): size-1 dims dropped, sorted by the
//! output's strides (the output written in memory order), neighbours merged where every
//! operand continues (`geometry::push_merged`). Indexing is 32-bit when the element count and
//! every operand's largest offset fit in an `int` (the kernels' fast path), 64-bit otherwise.

use super::gpu::LaunchCfg;
use super::kernels::{self, Form, Op};
use super::runtime::{self, Device as Dev};
use crate::core::allocator::Device;
use crate::core::compare::Cmp;
use crate::core::dtype::{DType, Format, Scalar};
use crate::core::error::{Error, Result};
use crate::core::geometry::{Dim, push_merged};
use crate::core::tensor::{View, required_len, size_desc};

/// Dims a launch can have after merging (`TH_CUDA_MAX_DIMS`).
pub(crate) const MAX_DIMS: usize = 16;
/// Tensor operands of a pointwise kernel, output included (`TH_CUDA_MAX_OPERANDS`).
pub(crate) const MAX_OPERANDS: usize = 4;
/// Threads per block (`TH_BLOCK`, the kernels' launch bounds).
pub(crate) const BLOCK: u32 = 512;
/// Most blocks a launch gets: 2^21 threads, several waves on any current GPU (an H100 holds
/// 132 x 2048 threads at once). Larger tensors are covered by the kernels' grid-stride loops.
pub(crate) const MAX_GRID: u32 = 4096;

/// Launches `th_<op>_<dtype>_<i32|i64>` with its one parameter struct `p`, a thread per item for
/// `n` items (the kernels' grid-stride loops cover what exceeds `MAX_GRID` blocks); the i32 form
/// when `narrow` (every offset the kernel forms fits an `int`) and `n` fits an `int`. Nothing
/// when `n` is 0.
///
/// # Safety
/// `p` is the parameter the kernel expects, and every address in it is device memory of `dev`
/// that the kernel may access as it does for `n` items.
pub(crate) unsafe fn items<P>(dev: &Dev, op: &str, dtype: DType, n: i64, narrow: bool, p: &mut P) -> Result<()> {
    if n <= 0 {
        return Ok(());
    }
    let width = if narrow && n <= i32::MAX as i64 { "i32" } else { "i64" };
    let kernel = format!("th_{op}_{}_{width}", kernels::dtype_suffix(dtype));
    let grid = (n as u64).div_ceil(BLOCK as u64).min(MAX_GRID as u64) as u32;
    let cfg = LaunchCfg { grid: [grid, 1, 1], block: [BLOCK, 1, 1], shared: 0 };
    let mut args = [p as *mut P as *mut std::ffi::c_void];
    // SAFETY: the caller's contract; `p` outlives the launch call.
    unsafe { dev.gpu.launch(&kernel, &cfg, &mut args, runtime::stream(dev.ordinal)) }
}

/// One operand: `common.cuh`'s `THCOperand`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct THCOperand {
    /// Address of the element at index 0.
    pub data: u64,
    /// Element strides over the launch's dims.
    pub strides: [i64; MAX_DIMS],
}

/// The one parameter of every pointwise kernel: `common.cuh`'s `THCPointwise`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct THCPointwise {
    pub n: i64,
    pub ndim: i32,
    /// The comparison of the `cmp*` kernels (`cmp_mask`).
    pub op: i32,
    /// Dims, outermost first.
    pub sizes: [i64; MAX_DIMS],
    /// `arg[0]` is the output.
    pub arg: [THCOperand; MAX_OPERANDS],
    /// Scalar operand k as a double (informational).
    pub f: [f64; 2],
    /// Scalar operand k's bits: integers and Bool as an i64 value, floats as their bit pattern.
    pub i: [i64; 2],
}

impl THCPointwise {
    /// Sets scalar operand `k` (0 or 1) to `v`, in the form the kernels read (`th_param`).
    pub fn set_value<T: Scalar>(&mut self, k: usize, v: T) {
        (self.i[k], self.f[k]) = value_bits(v);
    }
}

/// A scalar operand as `THCPointwise` holds it: its bits (integers and Bool as an i64 value,
/// floats as their bit pattern) and its value as a double.
fn value_bits<T: Scalar>(v: T) -> (i64, f64) {
    let mut bits = 0u64;
    // SAFETY: copies the size_of::<T>() <= 8 bytes of `v` into the low bytes of `bits`
    // (little-endian, as every CUDA host and device).
    unsafe {
        std::ptr::copy_nonoverlapping(&v as *const T as *const u8, &mut bits as *mut u64 as *mut u8, size_of::<T>())
    };
    let width = 8 * size_of::<T>() as u32;
    let i = match T::DTYPE.format() {
        Format::Int if width < 64 => ((bits << (64 - width)) as i64) >> (64 - width),
        _ => bits as i64,
    };
    let f = match v.to_prim() {
        crate::core::dtype::Prim::I(x) => x as f64,
        crate::core::dtype::Prim::F(x) => x,
    };
    (i, f)
}

/// What a device runs in place of a host elementwise closure: a kernel op of `kernels::OPS`,
/// its scalar operands and, for the comparisons, which one. `ops` builds one beside each
/// closure, so the host and device engines take the same calls.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Call {
    /// The op, or the function's name when it has no device kernel (`host_only`).
    pub op: &'static str,
    pub device: bool,
    values: usize,
    i: [i64; 2],
    f: [f64; 2],
    cmp: i32,
}

impl Call {
    pub const fn new(op: &'static str) -> Call {
        Call { op, device: true, values: 0, i: [0; 2], f: [0.0; 2], cmp: 0 }
    }
    /// A call the host engine runs and a device refuses, naming `function`.
    pub const fn host_only(function: &'static str) -> Call {
        Call { op: function, device: false, values: 0, i: [0; 2], f: [0.0; 2], cmp: 0 }
    }
    /// The next scalar operand.
    pub fn value<T: Scalar>(mut self, v: T) -> Call {
        assert!(self.values < 2, "a pointwise kernel takes at most two scalar operands");
        (self.i[self.values], self.f[self.values]) = value_bits(v);
        self.values += 1;
        self
    }
    pub fn comparing(mut self, c: Cmp) -> Call {
        self.cmp = cmp_mask(c);
        self
    }
    /// How many scalar operands were given.
    pub fn value_count(&self) -> usize {
        self.values
    }
    /// An empty `THCPointwise` holding this call's scalar operands and comparison.
    pub fn params(&self) -> THCPointwise {
        THCPointwise {
            n: 0,
            ndim: 0,
            op: self.cmp,
            sizes: [0; MAX_DIMS],
            arg: [THCOperand { data: 0, strides: [0; MAX_DIMS] }; MAX_OPERANDS],
            f: self.f,
            i: self.i,
        }
    }
    /// The launch of this call over `shape` (`pointwise`), its scalar operands set.
    pub fn launch(&self, shape: &[i64], operands: &[Operand<'_>]) -> Result<Option<Pointwise>> {
        if !self.device {
            return Err(Error::invalid(format!("{}: device tensors are not supported by this function yet", self.op)));
        }
        let o = kernels::op(self.op).ok_or_else(|| Error::internal(format!("no pointwise kernel op '{}'", self.op)))?;
        if o.values != self.values {
            return Err(Error::internal(format!(
                "{} takes {} scalar operands, not {}",
                self.op, o.values, self.values
            )));
        }
        let mut p = pointwise(self.op, shape, operands)?;
        if let Some(p) = &mut p {
            (p.params.i, p.params.f, p.params.op) = (self.i, self.f, self.cmp);
        }
        Ok(p)
    }
}

/// `THCPointwise::op` for a comparison: the outcomes (less, equal, greater, unordered) that
/// give 1 (`TH_CMP_*` in `pointwise.cuh`).
pub fn cmp_mask(c: Cmp) -> i32 {
    const LT: i32 = 1;
    const EQ: i32 = 2;
    const GT: i32 = 4;
    const UNORDERED: i32 = 8;
    match c {
        Cmp::Lt => LT,
        Cmp::Le => LT | EQ,
        Cmp::Gt => GT,
        Cmp::Ge => GT | EQ,
        Cmp::Eq => EQ,
        Cmp::Ne => LT | GT | UNORDERED,
    }
}

/// A tensor operand of a launch.
#[derive(Clone, Copy, Debug)]
pub struct Operand<'a> {
    /// Device address of the view's first element (`device_base`).
    pub base: u64,
    /// Element strides for the output's shape (0 where broadcast).
    pub strides: &'a [i64],
    pub dtype: DType,
}

/// A ready launch: the kernel, its shape, its parameter (scalar operands still to be set with
/// `THCPointwise::set_value`, comparisons' `op` with `cmp_mask`).
#[derive(Clone, Debug)]
pub struct Pointwise {
    pub kernel: String,
    pub cfg: LaunchCfg,
    pub params: THCPointwise,
}

impl Pointwise {
    /// The kernel's parameter array for `Gpu::launch`: `[&mut self.params]`, valid while `self`
    /// is neither moved nor dropped.
    pub fn args(&mut self) -> [*mut std::ffi::c_void; 1] {
        [&mut self.params as *mut THCPointwise as *mut std::ffi::c_void]
    }
}

/// The launch of `op` (an `kernels::OPS` name) over the output shape `shape`, operands[0] the
/// output and then `op.inputs` inputs. `None` when there are no elements.
pub fn pointwise(op: &str, shape: &[i64], operands: &[Operand<'_>]) -> Result<Option<Pointwise>> {
    let o = kernels::op(op).ok_or_else(|| Error::internal(format!("no pointwise kernel op '{op}'")))?;
    if operands.len() != 1 + o.inputs {
        return Err(Error::internal(format!("{op} takes {} operands, not {}", 1 + o.inputs, operands.len())));
    }
    let dtypes = kernel_dtypes(o, operands)?;
    let mut n: i64 = 1;
    for (d, &s) in shape.iter().enumerate() {
        if s < 0 {
            return Err(Error::size(format!("invalid size {s} for dimension {d}")));
        }
        n = n.checked_mul(s).ok_or_else(|| Error::size(format!("size {} overflows int64_t", size_desc(shape))))?;
    }
    if n == 0 {
        return Ok(None);
    }
    let dims = collapse(shape, operands)?;
    let mut p = THCPointwise {
        n,
        ndim: dims.len() as i32,
        op: 0,
        sizes: [0; MAX_DIMS],
        arg: [THCOperand { data: 0, strides: [0; MAX_DIMS] }; MAX_OPERANDS],
        f: [0.0; 2],
        i: [0; 2],
    };
    for (d, dim) in dims.iter().enumerate() {
        p.sizes[d] = dim.size as i64;
        for k in 0..MAX_OPERANDS {
            p.arg[k].strides[d] = dim.st[k] as i64;
        }
    }
    for (a, x) in p.arg.iter_mut().zip(operands) {
        a.data = x.base;
    }
    let wide = !fits_i32(n, &dims)?;
    let kernel = kernels::kernel_name(op, &dtypes, wide);
    if kernels::module_of(&kernel).is_none() {
        return Err(Error::internal(format!("no kernel {kernel}")));
    }
    let grid = (n as u64).div_ceil(BLOCK as u64).min(MAX_GRID as u64) as u32;
    Ok(Some(Pointwise { kernel, cfg: LaunchCfg { grid: [grid, 1, 1], block: [BLOCK, 1, 1], shared: 0 }, params: p }))
}

/// The dtypes in `op`'s kernel name, after checking the operands' dtypes fit its form.
fn kernel_dtypes(o: &Op, operands: &[Operand<'_>]) -> Result<Vec<DType>> {
    let out = operands[0].dtype;
    let first_in = operands.get(1).map_or(out, |x| x.dtype);
    let mismatch = || {
        let list: Vec<&str> = operands.iter().map(|x| x.dtype.name()).collect();
        Error::dtype(format!("{}: operand dtypes {} do not fit its kernels", o.name, list.join(", ")))
    };
    let (dts, inputs_same) = match o.form {
        Form::Same => (vec![out], operands.iter().all(|x| x.dtype == out)),
        Form::Copy => (vec![out, first_in], true),
        Form::Compare => {
            let ok = [DType::Byte, DType::Bool, first_in].contains(&out);
            (vec![first_in, out], ok && operands[1..].iter().all(|x| x.dtype == first_in))
        }
        Form::Lines => return Err(Error::internal(format!("{} is a line op (cuda::lines)", o.name))),
    };
    if !inputs_same {
        return Err(mismatch());
    }
    if !o.has.contains(dts[0]) {
        return Err(Error::dtype(format!("{} is not defined for {}", o.name, dts[0])));
    }
    Ok(dts)
}

/// The launch's dims over operands padded to `MAX_OPERANDS` (unused ones stride 0): size-1 dims
/// dropped, output memory order, merged; one unit dim (unit strides) for a single element.
pub(crate) fn collapse(shape: &[i64], operands: &[Operand<'_>]) -> Result<Vec<Dim<MAX_OPERANDS>>> {
    for x in operands {
        if x.strides.len() != shape.len() {
            return Err(Error::internal(format!("operand with {} strides for {} dims", x.strides.len(), shape.len())));
        }
    }
    let mut dims: Vec<Dim<MAX_OPERANDS>> = (0..shape.len())
        .filter(|&d| shape[d] != 1)
        .map(|d| Dim {
            size: shape[d] as usize,
            st: std::array::from_fn(|k| operands.get(k).map_or(0, |x| x.strides[d]) as isize),
        })
        .collect();
    dims.sort_by(|a, b| b.st[0].unsigned_abs().cmp(&a.st[0].unsigned_abs()));
    let mut merged = Vec::with_capacity(dims.len());
    for d in dims {
        push_merged(&mut merged, d);
    }
    if merged.is_empty() {
        merged.push(Dim { size: 1, st: [1; MAX_OPERANDS] });
    }
    if merged.len() > MAX_DIMS {
        return Err(Error::size(format!(
            "a CUDA pointwise kernel takes at most {MAX_DIMS} dimensions after merging contiguous ones; \
             these operands of size {} leave {} (make an operand contiguous first)",
            size_desc(shape),
            merged.len()
        )));
    }
    Ok(merged)
}

/// Whether 32-bit indexing reaches everything: the count and each operand's largest |offset|.
pub(crate) fn fits_i32(n: i64, dims: &[Dim<MAX_OPERANDS>]) -> Result<bool> {
    let mut fits = n <= i32::MAX as i64;
    for k in 0..MAX_OPERANDS {
        let mut reach: i64 = 0;
        for d in dims {
            let step = (d.size as i64 - 1).checked_mul(d.st[k].unsigned_abs() as i64);
            reach = step
                .and_then(|s| reach.checked_add(s))
                .ok_or_else(|| Error::size("operand offsets overflow int64_t"))?;
        }
        fits &= reach <= i32::MAX as i64;
    }
    Ok(fits)
}

/// The device address of `v`'s element 0, after checking that the view lies inside its storage
/// and that the storage is CUDA device memory. 0 for a view without storage or elements.
pub fn device_base<T: Scalar>(v: &View<T>) -> Result<u64> {
    let Some(s) = &v.storage else { return Ok(0) };
    if !matches!(s.device(), Device::Cuda(_)) {
        return Err(Error::invalid("tensor is not in CUDA device memory"));
    }
    let (p, len) = s.raw_parts();
    if v.sizes.is_empty() {
        return Ok(0);
    }
    let need = required_len(v.offset, &v.sizes, &v.strides)?;
    if need > len {
        return Err(Error::size(format!(
            "tensor of size {} at offset {} needs {need} elements but its storage has {len}",
            size_desc(&v.sizes),
            v.offset
        )));
    }
    Ok(p as u64 + (v.offset * size_of::<T>()) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    fn op<'a>(base: u64, strides: &'a [i64], dtype: DType) -> Operand<'a> {
        Operand { base, strides, dtype }
    }

    /// (sizes, strides of each operand in use) of a launch.
    fn dims(p: &Pointwise, operands: usize) -> (Vec<i64>, Vec<Vec<i64>>) {
        let nd = p.params.ndim as usize;
        let st = (0..operands).map(|k| p.params.arg[k].strides[..nd].to_vec()).collect();
        (p.params.sizes[..nd].to_vec(), st)
    }

    #[test]
    fn layout_matches_common_cuh() {
        // The same numbers as common.cuh's static_asserts.
        assert_eq!(size_of::<THCOperand>(), 136);
        assert_eq!(offset_of!(THCOperand, strides), 8);
        assert_eq!(size_of::<THCPointwise>(), 720);
        let offsets = [
            offset_of!(THCPointwise, ndim),
            offset_of!(THCPointwise, op),
            offset_of!(THCPointwise, sizes),
            offset_of!(THCPointwise, arg),
            offset_of!(THCPointwise, f),
            offset_of!(THCPointwise, i),
        ];
        assert_eq!(offsets, [8, 12, 16, 144, 688, 704]);
    }

    #[test]
    fn collapses_like_the_host_plan() {
        let f = DType::Float;
        // contiguous: one dim
        let st = [12, 4, 1];
        let p = pointwise("cadd", &[2, 3, 4], &[op(0, &st, f), op(0, &st, f), op(0, &st, f)]).unwrap().unwrap();
        assert_eq!(dims(&p, 3), (vec![24], vec![vec![1]; 3]));
        assert_eq!(p.params.n, 24);
        // a transposed input keeps two dims
        let p = pointwise("neg", &[3, 4], &[op(0, &[4, 1], f), op(0, &[1, 3], f)]).unwrap().unwrap();
        assert_eq!(dims(&p, 2), (vec![3, 4], vec![vec![4, 1], vec![1, 3]]));
        // a transposed output: dims in its memory order
        let p = pointwise("neg", &[3, 4], &[op(0, &[1, 3], f), op(0, &[4, 1], f)]).unwrap().unwrap();
        assert_eq!(dims(&p, 2), (vec![4, 3], vec![vec![3, 1], vec![1, 4]]));
        // broadcast (stride 0) and size-1 dims
        let p = pointwise("cmul", &[2, 1, 3], &[op(0, &[3, 3, 1], f), op(0, &[3, 3, 1], f), op(0, &[0, 7, 1], f)])
            .unwrap()
            .unwrap();
        assert_eq!(dims(&p, 3), (vec![2, 3], vec![vec![3, 1], vec![3, 1], vec![0, 1]]));
        // one element: one unit dim with unit strides (the contiguous path)
        let p = pointwise("fill", &[1, 1], &[op(0, &[5, 9], f)]).unwrap().unwrap();
        assert_eq!(dims(&p, 1), (vec![1], vec![vec![1]]));
        let p = pointwise("fill", &[], &[op(0, &[], f)]).unwrap().unwrap();
        assert_eq!((p.params.n, p.params.ndim), (1, 1));
        // nothing to do
        assert!(pointwise("fill", &[3, 0], &[op(0, &[0, 1], f)]).unwrap().is_none());
        // too many dims left after merging
        let shape = [2i64; 17];
        let st: Vec<i64> = (0..17).map(|d| 1i64 << (2 * (16 - d) + 1)).collect();
        let e = pointwise("fill", &shape, &[op(0, &st, f)]).unwrap_err();
        assert!(e.to_string().contains("at most 16 dimensions"), "{e}");
        let st16: Vec<i64> = (0..16).map(|d| 1i64 << (2 * (15 - d) + 1)).collect();
        assert_eq!(pointwise("fill", &shape[..16], &[op(0, &st16, f)]).unwrap().unwrap().params.ndim, 16);
    }

    #[test]
    fn index_width_at_the_i32_boundary() {
        let d = DType::Byte;
        let max = i32::MAX as i64;
        let name =
            |shape: &[i64], st: &[i64]| pointwise("neg", shape, &[op(0, st, d), op(0, st, d)]).unwrap().unwrap().kernel;
        assert_eq!(name(&[max], &[1]), "th_neg_byte_i32");
        assert_eq!(name(&[max + 1], &[1]), "th_neg_byte_i64");
        // few elements, but an offset past i32::MAX
        assert_eq!(name(&[2], &[max]), "th_neg_byte_i32");
        assert_eq!(name(&[2], &[max + 1]), "th_neg_byte_i64");
        assert_eq!(name(&[3, 2], &[max / 2, 1]), "th_neg_byte_i32"); // 2 * (max/2) + 1 == max
        assert_eq!(name(&[3, 2], &[max / 2 + 1, 1]), "th_neg_byte_i64");
        // one operand is enough to need 64 bits
        let p = pointwise("cadd", &[4], &[op(0, &[1], d), op(0, &[1], d), op(0, &[max], d)]).unwrap().unwrap();
        assert_eq!(p.kernel, "th_cadd_byte_i64");
        assert!(pointwise("neg", &[3], &[op(0, &[i64::MAX], d), op(0, &[1], d)]).is_err());
    }

    #[test]
    fn kernel_names_grid_and_values() {
        use DType::*;
        let s = [1i64];
        let p = pointwise("copy", &[1000], &[op(0, &s, Float), op(0, &s, Half)]).unwrap().unwrap();
        assert_eq!(p.kernel, "th_copy_float_half_i32");
        assert_eq!(p.cfg, LaunchCfg { grid: [2, 1, 1], block: [512, 1, 1], shared: 0 });
        let p = pointwise("cmpValue", &[1 << 40], &[op(0, &s, Bool), op(0, &s, Half)]).unwrap().unwrap();
        assert_eq!((p.kernel.as_str(), p.cfg.grid), ("th_cmpValue_half_bool_i64", [MAX_GRID, 1, 1]));
        let p = pointwise("cmpTensor", &[3], &[op(0, &s, Int), op(0, &s, Int), op(0, &s, Int)]).unwrap().unwrap();
        assert_eq!(p.kernel, "th_cmpTensor_int_int_i32");
        // dtypes that do not fit the op
        assert!(pointwise("cmpValue", &[3], &[op(0, &s, Long), op(0, &s, Int)]).is_err());
        assert!(pointwise("cadd", &[3], &[op(0, &s, Float), op(0, &s, Float), op(0, &s, Double)]).is_err());
        assert!(pointwise("bitand", &[3], &[op(0, &s, Float), op(0, &s, Float)]).is_err());
        assert!(pointwise("exp", &[3], &[op(0, &s, Int), op(0, &s, Int)]).is_err());
        assert!(pointwise("add", &[3], &[op(0, &s, Bool), op(0, &s, Bool)]).is_err());
        assert!(pointwise("add", &[3], &[op(0, &s, Int)]).is_err());
        assert!(pointwise("nonesuch", &[3], &[op(0, &s, Int)]).is_err());
        assert_eq!(
            pointwise("exp", &[3], &[op(8, &s, Half), op(16, &s, Half)]).unwrap().unwrap().params.arg[1].data,
            16
        );

        let mut p = pointwise("clamp", &[3], &[op(0, &s, Char), op(0, &s, Char)]).unwrap().unwrap().params;
        p.set_value(0, -3i8);
        p.set_value(1, 200u8 as i8);
        assert_eq!((p.i, p.f), ([-3, -56], [-3.0, -56.0]));
        p.set_value(0, 255u8);
        p.set_value(1, -1.5f32);
        assert_eq!((p.i, p.f), ([255, 0xbfc0_0000], [255.0, -1.5]));
        p.set_value(0, half::f16::from_bits(0xfe01));
        p.set_value(1, f64::MIN_POSITIVE);
        assert_eq!(p.i, [0xfe01, 0x0010_0000_0000_0000]);
        assert!(p.f[0].is_nan());
        p.set_value(0, crate::core::dtype::Bool(1));
        assert_eq!(p.i[0], 1);

        let masks: Vec<i32> = [Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge, Cmp::Eq, Cmp::Ne].map(cmp_mask).to_vec();
        assert_eq!(masks, [1, 3, 4, 6, 2, 13]);
    }

    #[test]
    fn device_base_checks_the_view() {
        let host: View<f32> = View::from_slice(&[1.0, 2.0, 3.0], &[3]).unwrap();
        assert!(device_base(&host).unwrap_err().to_string().contains("not in CUDA device memory"));
        assert_eq!(device_base(&View::<f32>::empty()).unwrap(), 0);
    }
}
