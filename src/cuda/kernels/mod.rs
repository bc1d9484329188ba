//! The CUDA C kernels: their sources, names and modules, NVRTC compilation (`nvrtc`), and the
//! entry point of the CPU emulator that runs the same sources.
//!
//! Sources (header-free CUDA C++, so NVRTC needs no CUDA headers):
//! - `common.cuh`: the launch parameters (`THCPointwise`, mirrored in `launch.rs`), dtypes and
//!   their conversions (16-bit floats bit-exact in both compilers), the host's cast rules, index
//!   math (grid-stride loops, 32- or 64-bit), the kernel-definition macros;
//! - `num.cuh`: element arithmetic with the CPU engine's semantics (`ops::num`), and
//!   `kernels::vmath`'s exp/log/tanh/sigmoid operation for operation (same bits as the host);
//! - `pointwise.cuh`: kernel bodies, fill, copy, comparisons; `arith.cuh`: arithmetic and float
//!   functions; `nn.cuh`: THCUNN's elementwise layers; `reduce.cuh`: the reductions (`THCReduce`, mirrored in `cuda::reduce`) and the
//!   combination of their chunk partials, in a fixed order (documented there); `lines.cuh`: the
//!   kernels whose work item walks a line of each operand (`THCLines`, `launch::lines`);
//! - one module per dtype, `<dtype>.cu`: every kernel whose name starts with that dtype. NVRTC
//!   compiles a module at its first use, so a program using Float tensors compiles `float` only
//!   (about 140 kernels, a few seconds), not the whole library.
//!
//! Kernel names: `th_<op>_<dtype>[_<dtype2>]_<i32|i64>` (`extern "C"`), the index type last:
//! `i32` when the element count and every operand's largest offset fit in an `int`. Every kernel
//! takes one `THCPointwise` by value. `copy` names the destination then the source
//! (`th_copy_float_half_i32`); the comparisons name the input then the output dtype
//! (`th_cmpValue_float_byte_i32`) and take the comparison in `THCPointwise::op`. Reductions:
//! `th_reduce_<op>_<dtype>_<i32|i64>` and `th_combine_<op>_<dtype>` (`REDUCTIONS`), taking one
//! `THCReduce`.
//!
//! The emulator (`--features cuda-emulator`, csrc/cuda_emu/) compiles the same `.cu` files with
//! the host C++ compiler; its entry point, called by the emulator backend's `Gpu::launch`:
//! ```c
//! extern "C" int th_emu_launch(const char *kernel, const unsigned grid[3], const unsigned block[3],
//!                              unsigned shared_bytes, void **params, char *err, size_t err_len);
//! ```
//! returns 0, or nonzero with a message in `err` (unknown kernel, bad launch shape). It runs the
//! grid synchronously: kernels without block cooperation thread after thread on the calling
//! thread, cooperative ones (shared memory, `__syncthreads`) block by block on helper threads.
//! `emu_launch` wraps it; `th_emu_kernel_names` lists the registered kernels.

pub mod cache;
pub mod nvrtc;
pub use nvrtc::{Compiled, compile, resource_report};

use crate::core::dtype::DType;
use std::collections::HashMap;
use std::sync::OnceLock;

#[cfg(all(test, feature = "cuda-emulator"))]
mod emu_data;
#[cfg(all(test, feature = "cuda-emulator"))]
mod emu_reduce_tests;
#[cfg(all(test, feature = "cuda-emulator"))]
mod emu_tests;
#[cfg(test)]
mod tests;

/// One NVRTC program: a dtype's kernels.
#[derive(Debug)]
pub struct Module {
    /// The dtype suffix (`float`), also the `.cu` file's name.
    pub name: &'static str,
    /// The whole program text: the shared headers, then the module's `.cu`.
    pub source: &'static str,
    /// Registers per thread every kernel of the module must stay within (the NVRTC test checks
    /// it); the pointwise kernels use at most 44 on sm_80/sm_90 and the reductions 73 (`dist`
    /// with 64-bit indexing), under the 128 that 512-thread blocks allow.
    pub register_budget: u32,
}

macro_rules! modules {
    ($($name:literal),*) => {
        &[$(Module {
            name: $name,
            source: concat!(
                include_str!("common.cuh"),
                include_str!("num.cuh"),
                include_str!("pointwise.cuh"),
                include_str!("arith.cuh"),
                include_str!("reduce.cuh"),
                include_str!("lines.cuh"),
                include_str!("index.cuh"),
                include_str!("sort.cuh"),
                include_str!("blas.cuh"),
                include_str!("random.cuh"),
                include_str!("conv.cuh"),
                include_str!("sleep.cuh"),
                include_str!("nn.cuh"),
                include_str!("nn_rnn.cuh"),
                include_str!("nn_conv.cuh"),
                include_str!("nn_pool.cuh"),
                include_str!("nn_sample.cuh"),
                include_str!(concat!($name, ".cu"))
            ),
            register_budget: 80,
        }),*]
    };
}

static MODULES: &[Module] =
    modules!("byte", "char", "short", "int", "long", "float", "double", "half", "bfloat16", "bool");

/// Every module, in dtype order.
pub fn modules() -> &'static [Module] {
    MODULES
}

/// The module that holds `kernel`, if it is one of the kernels (`kernel_names`).
pub fn module_of(kernel: &str) -> Option<&'static Module> {
    static INDEX: OnceLock<HashMap<String, usize>> = OnceLock::new();
    let index = INDEX.get_or_init(|| {
        let mut m = HashMap::new();
        for (i, md) in MODULES.iter().enumerate() {
            for k in kernels_of(md.name) {
                m.insert(k, i);
            }
        }
        m
    });
    index.get(kernel).map(|&i| &MODULES[i])
}

/// A kernel's name suffix for a dtype (`bfloat16`).
pub fn dtype_suffix(d: DType) -> &'static str {
    match d {
        DType::Byte => "byte",
        DType::Char => "char",
        DType::Short => "short",
        DType::Int => "int",
        DType::Long => "long",
        DType::Float => "float",
        DType::Double => "double",
        DType::Half => "half",
        DType::BFloat16 => "bfloat16",
        DType::Bool => "bool",
    }
}

/// Which dtypes have an op (as the CPU side: by kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Has {
    /// Every dtype.
    All,
    /// Every dtype but Bool.
    Num,
    /// Byte, Char, Short, Int, Long.
    Int,
    /// Float, Double, Half, BFloat16.
    Float,
    /// Long only (index helpers: `index.cuh`'s position scan).
    Long,
    /// Float, Double, Half: THCUNN's types (`nn.cuh`).
    Nn,
    /// Double only: the criterions' loss terms, summed in f64 (`nn.cuh`).
    NnDouble,
}

impl Has {
    pub fn contains(self, d: DType) -> bool {
        use crate::core::dtype::Format;
        match self {
            Has::All => true,
            Has::Num => d != DType::Bool,
            Has::Int => matches!(d.format(), Format::UInt | Format::Int),
            Has::Float => matches!(d.format(), Format::Float | Format::BFloat),
            Has::Long => d == DType::Long,
            Has::Nn => matches!(d, DType::Float | DType::Double | DType::Half),
            Has::NnDouble => d == DType::Double,
        }
    }
}

/// How an op's kernels are named and typed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// All operands have the output's dtype: `th_<op>_<dtype>`.
    Same,
    /// `th_copy_<dst>_<src>`, every pair.
    Copy,
    /// `th_<op>_<input>_<output>`, the output Byte, Bool or the input's dtype.
    Compare,
    /// A line kernel (`lines.cuh`, one `THCLines`): `th_<op>_<dtype>`, named by the op's main
    /// dtype (index operands are Long).
    Lines,
}

/// A pointwise op as the kernels implement it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    /// TH's name (`cadd`, `cmaxValue`), or `cmpValue`/`cmpTensor` for the comparisons.
    pub name: &'static str,
    /// Tensor operands besides the output (`THCPointwise::arg[1..=inputs]`).
    pub inputs: usize,
    /// Scalar operands (`THCPointwise::f`/`i`).
    pub values: usize,
    pub has: Has,
    pub form: Form,
}

macro_rules! ops {
    ($($has:ident $form:ident $inputs:literal $values:literal [$($name:ident)*];)*) => {
        &[$($(Op { name: stringify!($name), inputs: $inputs, values: $values, has: Has::$has, form: Form::$form },)*)*]
    };
}

/// Every op, mirroring the lists in `pointwise.cuh`, `arith.cuh`, `lines.cuh` and `sort.cuh` (the NVRTC test checks the
/// compiled kernel names against `kernels_of`).
pub static OPS: &[Op] = ops! {
    All Same 0 1 [fill];
    All Copy 1 0 [copy];
    All Compare 1 1 [cmpValue];
    All Compare 2 0 [cmpTensor];
    Num Same 1 1 [add sub mul div lshift rshift fmod remainder cmaxValue cminValue pow tpow];
    Num Same 1 2 [clamp];
    Num Same 1 0 [neg abs sign cinv];
    Int Same 1 1 [bitand bitor bitxor];
    Num Same 2 1 [cadd csub];
    Num Same 2 0 [cmul cdiv cpow clshift crshift cfmod cremainder cmax cmin];
    Int Same 2 0 [cbitand cbitor cbitxor];
    Num Same 3 1 [addcmul addcdiv];
    Float Same 1 0 [sigmoid log lgamma log1p exp cos acos cosh sin asin sinh tan atan tanh sqrt rsqrt ceil floor
        round trunc frac];
    Float Same 2 0 [atan2];
    Float Same 2 1 [lerp];
    Nn Same 1 1 [nnElu nnHardShrink nnLeakyRelu nnRrelu nnSoftShrink];
    Nn Same 1 2 [nnHardTanh nnSoftPlus nnThreshold];
    Nn Same 1 0 [nnLogSigmoid nnSquare];
    Nn Same 2 0 [nnAbsBack nnLogSigmoidBack nnRreluNoise nnSigmoidBack nnSqrtBack nnSquareBack nnTanhBack];
    Nn Same 2 1 [nnEluBack nnLeakyReluBack nnRreluBack nnShrinkBack nnThresholdBack];
    Nn Same 2 2 [nnHardTanhBack];
    Nn Same 3 2 [nnSoftPlusBack];
    Nn Same 2 1 [nnAbsCritBack nnMseCritBack nnSmoothL1CritBack nnSoftMarginCritBack nnKlDivCritBack nnBceCritBack];
    Nn Same 2 2 [nnMarginCritBack];
    Nn Same 1 0 [nnL1CostBack];
    Nn Same 3 1 [nnBceCritBackW];
    NnDouble Same 2 0 [nnAbsCrit nnMseCrit nnSmoothL1Crit nnSoftMarginCrit nnKlDivCrit nnBceCrit];
    NnDouble Same 2 1 [nnMarginCrit];
    Nn Same 2 0 [nnGlu nnPrelu];
    Nn Same 3 0 [nnGluBackA nnGluBackB nnPreluBack];
    NnDouble Same 2 0 [nnPreluTerm];
    Nn Lines 1 1 [nnSoftMax];
    Nn Lines 2 1 [nnSoftMaxBack];
    Nn Lines 1 1 [nnSoftMaxRows];
    Nn Lines 2 1 [nnSoftMaxRowsBack];
    Nn Lines 3 2 [nnMultiMargin nnMultiMarginBack];
    Nn Lines 3 0 [nnMultiLabel];
    Nn Lines 3 1 [nnMultiLabelBack];
    All Lines 0 2 [tri];
    Num Lines 2 0 [cross];
    All Lines 2 0 [indexSelect gather indexCopy scatter];
    Num Lines 2 0 [indexAdd scatterAdd];
    All Lines 3 1 [scatterSorted];
    Num Lines 3 1 [scatterAddSorted];
    All Lines 1 1 [indexFill scatterFill maskedFill maskedFillBool];
    All Lines 1 0 [flagNonzero];
    All Lines 2 0 [maskedCopy maskedSelect];
    Long Lines 2 1 [nonzero];
    All Lines 2 2 [sortInit];
    All Lines 2 0 [sortPermute];
    All Lines 1 2 [sortStep];
    All Lines 3 0 [sortCopy];
    Num Lines 3 0 [sortMode];
    Num Lines 1 0 [cumsum cumprod];
};

/// The op named `name`.
pub fn op(name: &str) -> Option<&'static Op> {
    OPS.iter().find(|o| o.name == name)
}

/// The name of `op`'s kernel for `dtypes` (one, or two for `Copy` and `Compare`) and index
/// width, whether or not it exists.
pub fn kernel_name(op: &str, dtypes: &[DType], wide: bool) -> String {
    let mut s = format!("th_{op}");
    for &d in dtypes {
        s.push('_');
        s.push_str(dtype_suffix(d));
    }
    s.push_str(if wide { "_i64" } else { "_i32" });
    s
}

/// The dtype lists (`kernel_name`'s) of `op`'s kernels whose first dtype is `first`.
pub fn kernel_dtypes(op: &Op, first: DType) -> Vec<Vec<DType>> {
    if !op.has.contains(first) {
        return vec![];
    }
    match op.form {
        Form::Same | Form::Lines => vec![vec![first]],
        Form::Copy => DType::ALL.iter().map(|&s| vec![first, s]).collect(),
        Form::Compare => {
            let mut outs = vec![DType::Byte, DType::Bool];
            if !outs.contains(&first) {
                outs.push(first);
            }
            outs.into_iter().map(|o| vec![first, o]).collect()
        }
    }
}

/// A reduction as the kernels implement it (`reduce.cuh`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reduction {
    /// `th_reduce_<name>_<dtype>_<i32|i64>`.
    pub name: &'static str,
    /// Tensor operands (1, or 2 for dot, equal, dist).
    pub operands: usize,
    pub has: Has,
    /// The combine kernel of its partials: `th_combine_<combine>_<dtype>`.
    pub combine: &'static str,
}

macro_rules! reductions {
    ($($has:ident $operands:literal [$($name:ident $combine:ident)*];)*) => {
        &[$($(Reduction { name: stringify!($name), operands: $operands, has: Has::$has, combine: stringify!($combine) },)*)*]
    };
}

/// Every reduction, mirroring the lists at the end of `reduce.cuh`.
pub static REDUCTIONS: &[Reduction] = reductions! {
    All 1 [max max min min count count];
    All 2 [equal count];
    Num 1 [sum sum prod prod];
    Num 2 [dot sum];
    Float 1 [moments moments norm norm];
    Float 2 [dist norm];
};

/// The reduction named `name`.
pub fn reduction(name: &str) -> Option<&'static Reduction> {
    REDUCTIONS.iter().find(|r| r.name == name)
}

/// `th_reduce_<op>_<dtype>_<i32|i64>`.
pub fn reduce_kernel_name(op: &str, d: DType, wide: bool) -> String {
    format!("th_reduce_{op}_{}_{}", dtype_suffix(d), if wide { "i64" } else { "i32" })
}

/// `th_combine_<op>_<dtype>` (`op` a `Reduction::combine`).
pub fn combine_kernel_name(op: &str, d: DType) -> String {
    format!("th_combine_{op}_{}", dtype_suffix(d))
}

/// Every kernel of the module `module` (a dtype suffix), both index widths.
pub fn kernels_of(module: &str) -> Vec<String> {
    let Some(&first) = DType::ALL.iter().find(|&&d| dtype_suffix(d) == module) else { return vec![] };
    let mut v = Vec::new();
    for op in OPS {
        for dts in kernel_dtypes(op, first) {
            for wide in [false, true] {
                v.push(kernel_name(op.name, &dts, wide));
            }
        }
    }
    let mut combines = Vec::new();
    for r in REDUCTIONS.iter().filter(|r| r.has.contains(first)) {
        for wide in [false, true] {
            v.push(reduce_kernel_name(r.name, first, wide));
        }
        if !combines.contains(&r.combine) {
            combines.push(r.combine);
        }
    }
    v.extend(combines.into_iter().map(|c| combine_kernel_name(c, first)));
    v.extend(crate::cuda::blas::kernels_of(first));
    v.extend(crate::cuda::random::kernel_names(first));
    v.extend(crate::cuda::conv::kernel_names(first));
    v.extend(crate::cuda::nn::rnn::kernel_names(first));
    v.extend(crate::cuda::nn::conv::kernel_names(first));
    v.extend(crate::cuda::nn::pool::kernel_names(first));
    v.extend(crate::cuda::nn::sample::kernel_names(first));
    v.extend(crate::cuda::sleep::kernel_names(first));
    v.extend(crate::cuda::sort::kernel_names(first));
    v.extend(crate::cuda::scan::kernel_names(first));
    v
}

/// Every kernel of every module.
pub fn kernel_names() -> Vec<String> {
    MODULES.iter().flat_map(|m| kernels_of(m.name)).collect()
}

#[cfg(feature = "cuda-emulator")]
pub use emu::emu_launch;

#[cfg(feature = "cuda-emulator")]
mod emu {
    use crate::core::error::{Code, Error, Result};
    use crate::cuda::gpu::LaunchCfg;
    use std::ffi::{CString, c_char, c_void};

    unsafe extern "C" {
        fn th_emu_launch(
            kernel: *const c_char,
            grid: *const u32,
            block: *const u32,
            shared_bytes: u32,
            params: *mut *mut c_void,
            err: *mut c_char,
            err_len: usize,
        ) -> i32;
    }

    /// Runs `kernel` on the CPU emulator (synchronously, on this thread and, for cooperative
    /// kernels, helper threads). Unknown kernels and bad shapes are `TH_ERR_CUDA` errors.
    ///
    /// # Safety
    /// `params` matches the kernel's parameters (a pointer to a `THCPointwise` for the pointwise
    /// kernels) and every address in them is valid host memory for what the kernel touches.
    pub unsafe fn emu_launch(kernel: &str, cfg: &LaunchCfg, params: &mut [*mut c_void]) -> Result<()> {
        let name = CString::new(kernel).map_err(|_| Error::new(Code::TH_ERR_CUDA, "kernel name contains NUL"))?;
        let mut err = [0 as c_char; 512];
        // SAFETY: the arrays outlive the call; the caller vouches for the parameters.
        let rc = unsafe {
            th_emu_launch(
                name.as_ptr(),
                cfg.grid.as_ptr(),
                cfg.block.as_ptr(),
                cfg.shared,
                params.as_mut_ptr(),
                err.as_mut_ptr(),
                err.len(),
            )
        };
        if rc == 0 {
            return Ok(());
        }
        // SAFETY: th_emu_launch wrote a NUL-terminated message into `err` (snprintf).
        let msg = unsafe { std::ffi::CStr::from_ptr(err.as_ptr()) }.to_string_lossy().into_owned();
        Err(Error::new(Code::TH_ERR_CUDA, msg))
    }
}
