//! Every kernel run on the CPU emulator against the CPU engine (`ops::arith`, `ops::copy`) on
//! the same values: edge cases of each dtype (zeros of both signs, extremes, infinities, NaN,
//! subnormals, wrapping integers) in a 5 x 9 shape, with contiguous, transposed, gapped and
//! broadcast operands, through both index widths. Results must have the host's bits (a NaN
//! only needs to be a NaN where arithmetic produced it: payloads depend on operand order).

use super::emu_data::{COLS, Layout, N, ROWS, Sample, bits, is_nan};
use super::{Form, OPS, Op, emu_launch};
use crate::core::dtype::{Bool, Scalar};
use crate::core::tensor::{Tensor, View};
use crate::cuda::launch::{self, Operand, THCPointwise, cmp_mask};
use crate::ops::arith::{self, ArithOp, Cmp, Unary};
use crate::ops::num::{Float, Num};
use half::{bf16, f16};

/// Output and input layouts of each run.
const LAYOUTS: [(Layout, Layout); 3] = [
    (Layout::Contiguous, Layout::Contiguous),
    (Layout::Transposed, Layout::Gapped),
    (Layout::Gapped, Layout::Broadcast),
];

/// Logical input `k` stored as `layout`: a broadcast one repeats its first row.
fn logical<T: Sample>(k: usize, layout: Layout) -> Vec<T> {
    let s = T::samples();
    (0..N)
        .map(|i| {
            let i = if matches!(layout, Layout::Broadcast) { i % COLS } else { i };
            s[(i * (2 * k + 1) + 5 * k) % s.len()]
        })
        .collect()
}

/// Runs `op` on the emulator over the stored inputs, both index widths, returning the logical
/// output of each (after checking the output's gaps were not written).
fn run<O: Scalar, T: Scalar>(
    op: &str,
    out: Layout,
    ins: &[(Layout, Vec<T>)],
    set: impl Fn(&mut THCPointwise),
) -> [Vec<O>; 2] {
    let pad = O::from_prim(crate::core::dtype::Prim::I(0x55));
    let stored: Vec<(Layout, Vec<T>)> = ins.iter().map(|(l, v)| (*l, l.store(v, v[0]))).collect();
    [false, true].map(|wide| {
        let mut obuf = vec![pad; 2 * N];
        let os = out.strides();
        let mut operands = vec![Operand { base: obuf.as_mut_ptr() as u64, strides: &os, dtype: O::DTYPE }];
        let strides: Vec<[i64; 2]> = stored.iter().map(|(l, _)| l.strides()).collect();
        for ((_, buf), st) in stored.iter().zip(&strides) {
            operands.push(Operand { base: buf.as_ptr() as u64, strides: st, dtype: T::DTYPE });
        }
        let mut l = launch::pointwise(op, &[ROWS as i64, COLS as i64], &operands).unwrap().unwrap();
        if wide {
            l.kernel = l.kernel.replace("_i32", "_i64");
        }
        set(&mut l.params);
        let (kernel, cfg) = (l.kernel.clone(), l.cfg);
        // SAFETY: the operands' buffers hold every offset of their layouts; params match.
        unsafe { emu_launch(&kernel, &cfg, &mut l.args()) }.unwrap();
        for (i, x) in obuf.iter().enumerate() {
            if (0..N).all(|j| out.at(j) != i) {
                assert_eq!(bits(*x), bits(pad), "{kernel}: wrote outside the output at {i}");
            }
        }
        out.load(&obuf)
    })
}

fn check<T: Scalar>(what: &str, got: &[T], want: &[T], exact_nan: bool) {
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let same = bits(g) == bits(w) || (!exact_nan && is_nan(g) && is_nan(w));
        assert!(same, "{what} [{i}]: device {g:?} ({:#x}), host {w:?} ({:#x})", bits(g), bits(w));
    }
}

/// The functions whose host results need not have the device's bits: on AVX-512 the host runs
/// f32 `log` and `tanh` and f64 `log` through slice kernels with other algorithms
/// (`kernels::vmath::block`), while the device kernels follow the generic `kernels::vmath` code.
/// Both are within the bound (f32 2 ulp, f64 3 ulp; the slice kernels within 1), so within 3
/// (f32) and 4 (f64) ulp of each other.
fn sliced(name: &str, dtype: crate::core::dtype::DType) -> Option<i64> {
    use crate::core::dtype::DType;
    match (name, dtype) {
        ("log" | "tanh", DType::Float) => Some(3),
        ("log", DType::Double) => Some(4),
        _ => None,
    }
}

/// `check` for the `sliced` functions (f32, f64): the same infinities and NaNs, finite values
/// within `ulps`.
fn check_near<T: Scalar>(what: &str, got: &[T], want: &[T], ulps: i64) {
    // the bits as a signed integer, monotonic in the value
    let key = |v: T| {
        let i = if size_of::<T>() == 4 { bits(v) as u32 as i32 as i64 } else { bits(v) as i64 };
        if i < 0 { i64::MIN - i } else { i }
    };
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let finite = |v: T| matches!(v.to_prim(), crate::core::dtype::Prim::F(x) if x.is_finite());
        let near = finite(g) && finite(w) && key(g).abs_diff(key(w)) <= ulps as u64;
        let same = bits(g) == bits(w) || is_nan(g) && is_nan(w) || near;
        assert!(same, "{what} [{i}]: device {g:?} ({:#x}), host {w:?} ({:#x})", bits(g), bits(w));
    }
}

fn host<T: Scalar>(v: &[T]) -> View<T> {
    View::from_slice(v, &[N as i64]).unwrap()
}

/// The host's result of a `Same`-form op on `Num` dtypes, `None` for the float functions.
fn host_num<T: Num>(name: &str, a: &[T], b: &[T], c: &[T], v: T, w: T) -> Option<Vec<T>> {
    use ArithOp::*;
    let r = Tensor::new(View::<T>::empty());
    let (a, b, c) = (host(a), host(b), host(c));
    let arith = |op| match name.strip_prefix('c') {
        Some(_) if !matches!(name, "cinv" | "cmaxValue" | "cminValue") => arith::binary_op(&r, &a, op, &b),
        _ => arith::scalar_op(&r, &a, op, v),
    };
    let res = match name {
        "add" => arith(Add),
        "sub" => arith(Sub),
        "mul" | "cmul" => arith(Mul),
        "div" | "cdiv" => arith(Div),
        "lshift" | "clshift" => arith(Lshift),
        "rshift" | "crshift" => arith(Rshift),
        "fmod" | "cfmod" => arith(Fmod),
        "remainder" | "cremainder" => arith(Remainder),
        "cmaxValue" => arith(CmaxValue),
        "cminValue" => arith(CminValue),
        "cmax" => arith(Max),
        "cmin" => arith(Min),
        "pow" | "cpow" => arith(Pow),
        "bitand" | "cbitand" => arith(BitAnd),
        "bitor" | "cbitor" => arith(BitOr),
        "bitxor" | "cbitxor" => arith(BitXor),
        "tpow" => arith::tpow(&r, v, &a),
        "clamp" => arith::clamp(&r, &a, v, w),
        "neg" => arith::neg(&r, &a),
        "abs" => arith::abs(&r, &a),
        "sign" => arith::sign(&r, &a),
        "cinv" => arith::cinv(&r, &a),
        "cadd" => arith::cadd(&r, &a, v, &b),
        "csub" => arith::csub(&r, &a, v, &b),
        "addcmul" => arith::addcmul(&r, &a, v, &b, &c),
        "addcdiv" => arith::addcdiv(&r, &a, v, &b, &c),
        _ => return None,
    };
    res.unwrap_or_else(|e| panic!("host {name}: {e}"));
    Some(r.view().to_vec().unwrap())
}

fn host_float<T: Float>(name: &str, a: &[T], b: &[T], w: T) -> Vec<T> {
    use Unary::*;
    let r = Tensor::new(View::<T>::empty());
    let (a, b) = (host(a), host(b));
    let u = match name {
        "atan2" => return done(&r, arith::atan2(&r, &a, &b)),
        "lerp" => return done(&r, arith::lerp(&r, &a, &b, w)),
        "sigmoid" => Sigmoid,
        "log" => Log,
        "lgamma" => Lgamma,
        "log1p" => Log1p,
        "exp" => Exp,
        "cos" => Cos,
        "acos" => Acos,
        "cosh" => Cosh,
        "sin" => Sin,
        "asin" => Asin,
        "sinh" => Sinh,
        "tan" => Tan,
        "atan" => Atan,
        "tanh" => Tanh,
        "sqrt" => Sqrt,
        "rsqrt" => Rsqrt,
        "ceil" => Ceil,
        "floor" => Floor,
        "round" => Round,
        "trunc" => Trunc,
        "frac" => Frac,
        _ => panic!("no host function for {name}"),
    };
    done(&r, arith::unary(&r, &a, u))
}

fn done<T: Scalar>(r: &Tensor<T>, res: crate::core::error::Result<()>) -> Vec<T> {
    res.unwrap();
    r.view().to_vec().unwrap()
}

/// Integer ops with a divisor: the host rejects a zero one, so tests use 1 there.
fn no_zero<T: Num>(v: &mut [T]) {
    for x in v.iter_mut().filter(|x| !T::IS_FLOAT && x.is_zero()) {
        *x = T::one();
    }
}

fn check_same_ops<T: Num + Sample>(float: impl Fn(&str, &[T], &[T], T) -> Vec<T>) {
    let s = T::samples();
    // (THCUNN's ops, `Has::Nn` and `NnDouble`, are checked against the host layers by tests/nn/test_cunn_*.py)
    for op in OPS.iter().filter(|o| {
        o.form == Form::Same
            && o.has.contains(T::DTYPE)
            && o.name != "fill"
            && !matches!(o.has, super::Has::Nn | super::Has::NnDouble)
    }) {
        for (out, input) in LAYOUTS {
            // The first input never broadcasts (the output's shape is its own).
            let layout =
                |k: usize| if k == 0 && matches!(input, Layout::Broadcast) { Layout::Transposed } else { input };
            let mut ins: Vec<Vec<T>> = (0..op.inputs).map(|k| logical(k, layout(k))).collect();
            let divides = matches!(op.name, "cdiv" | "cfmod" | "cremainder" | "cinv" | "addcdiv");
            if divides {
                no_zero(ins.last_mut().unwrap());
            }
            for (j, vi) in [1usize, 6, 13, 31].into_iter().enumerate() {
                let (mut v, w) = (s[vi % s.len()], s[(vi + 7) % s.len()]);
                if matches!(op.name, "div" | "fmod" | "remainder") {
                    no_zero(std::slice::from_mut(&mut v));
                }
                if j > 0 && op.values == 0 {
                    break;
                }
                // Unused inputs: the first one (the host functions take them all).
                let (a, b, c) = (&ins[0], ins.get(1).unwrap_or(&ins[0]), ins.get(2).unwrap_or(&ins[0]));
                let want = host_num(op.name, a, b, c, v, w).unwrap_or_else(|| float(op.name, a, b, v));
                let layouts: Vec<(Layout, Vec<T>)> =
                    ins.iter().enumerate().map(|(k, x)| (layout(k), x.clone())).collect();
                let got = run::<T, T>(op.name, out, &layouts, |p| {
                    p.set_value(0, v);
                    p.set_value(1, w);
                });
                for g in got {
                    let what = format!("{} {:?} {out:?}/{input:?} v={v:?} w={w:?}", op.name, T::DTYPE);
                    if let Some(ulps) = sliced(op.name, T::DTYPE) {
                        check_near(&what, &g, &want, ulps);
                    } else {
                        check(&what, &g, &want, false);
                    }
                }
            }
        }
    }
}

/// A value as the C API passes it (a Bool made 0 or 1).
fn from_c<T: Scalar>(v: T) -> T {
    if T::DTYPE == crate::core::dtype::DType::Bool { v.cast() } else { v }
}

fn check_fill_and_compare<T: Sample>() {
    for v in T::samples().into_iter().take(12).map(from_c) {
        let got = run::<T, T>("fill", Layout::Gapped, &[], |p| p.set_value(0, v));
        for g in got {
            check(&format!("fill {:?}", T::DTYPE), &g, &[v; N], true);
        }
    }
    let cmp = |o: &Op| {
        for (out, input) in LAYOUTS {
            let a: Vec<T> = logical(0, Layout::Contiguous);
            let b: Vec<T> = logical(1, input);
            let v = from_c(T::samples()[4]);
            for c in [Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge, Cmp::Eq, Cmp::Ne] {
                let mut ins = vec![(Layout::Contiguous, a.clone())];
                if o.inputs == 2 {
                    ins.push((input, b.clone()));
                }
                let set = |p: &mut THCPointwise| {
                    p.set_value(0, v);
                    p.op = cmp_mask(c);
                };
                macro_rules! into {
                    ($O:ty) => {{
                        let r = Tensor::new(View::<$O>::empty());
                        match o.inputs {
                            1 => arith::cmp_value(&r, &host(&a), c, v).unwrap(),
                            _ => arith::cmp_tensor(&r, &host(&a), c, &host(&b)).unwrap(),
                        }
                        let want = r.view().to_vec().unwrap();
                        for g in run::<$O, T>(o.name, out, &ins, set) {
                            check(
                                &format!("{} {c:?} {:?} -> {:?} {out:?}/{input:?}", o.name, T::DTYPE, <$O>::DTYPE),
                                &g,
                                &want,
                                true,
                            );
                        }
                    }};
                }
                into!(u8);
                into!(Bool);
                into!(T);
            }
        }
    };
    cmp(super::op("cmpValue").unwrap());
    cmp(super::op("cmpTensor").unwrap());
}

fn check_copy<D: Sample, S: Sample>() {
    let src: Vec<S> = logical(0, Layout::Contiguous);
    let dst = View::<D>::from_slice(&[D::default(); N], &[N as i64]).unwrap();
    crate::ops::copy::copy(&dst, &host(&src)).unwrap();
    let want = dst.to_vec().unwrap();
    for (out, input) in LAYOUTS {
        for g in run::<D, S>("copy", out, &[(input, logical(0, input))], |_| {}) {
            let want: Vec<D> = if matches!(input, Layout::Broadcast) {
                (0..N).map(|i| want[i % COLS]).collect()
            } else {
                want.clone()
            };
            check(&format!("copy {:?} <- {:?} {out:?}/{input:?}", D::DTYPE, S::DTYPE), &g, &want, true);
        }
    }
}

fn check_copy_into<D: Sample>() {
    check_copy::<D, u8>();
    check_copy::<D, i8>();
    check_copy::<D, i16>();
    check_copy::<D, i32>();
    check_copy::<D, i64>();
    check_copy::<D, f32>();
    check_copy::<D, f64>();
    check_copy::<D, f16>();
    check_copy::<D, bf16>();
    check_copy::<D, Bool>();
}

macro_rules! dtype_tests {
    ($($name:ident: $T:ty $(, $same:expr)?;)*) => {$(
        #[test]
        fn $name() {
            check_fill_and_compare::<$T>();
            check_copy_into::<$T>();
            $($same;)?
        }
    )*};
}

fn no_float<T>(name: &str, _: &[T], _: &[T], _: T) -> Vec<T> {
    panic!("{name} is not an integer op")
}

dtype_tests! {
    emulated_byte: u8, check_same_ops::<u8>(no_float);
    emulated_char: i8, check_same_ops::<i8>(no_float);
    emulated_short: i16, check_same_ops::<i16>(no_float);
    emulated_int: i32, check_same_ops::<i32>(no_float);
    emulated_long: i64, check_same_ops::<i64>(no_float);
    emulated_float: f32, check_same_ops::<f32>(host_float);
    emulated_double: f64, check_same_ops::<f64>(host_float);
    emulated_half: f16, check_same_ops::<f16>(host_float);
    emulated_bfloat16: bf16, check_same_ops::<bf16>(host_float);
    emulated_bool: Bool;
}

#[test]
fn every_kernel_is_registered_and_bad_launches_fail() {
    use crate::cuda::gpu::LaunchCfg;
    let mut p = THCPointwise { n: 0, ndim: 1, op: 0, sizes: [1; 16], ..unsafe_zeroed() };
    let cfg = LaunchCfg { grid: [1, 1, 1], block: [1, 1, 1], shared: 0 };
    // (the reductions take a THCReduce: emu_reduce_tests launches them; the integer GEMMs a
    // THCGemm: cuda::blas's tests; the random kernels a THCRandom: ops::random::device_tests;
    // the shared-memory sort stages a THCSortLocal: the sort suites and test_lines.cpp; the
    // tiled scans a THCScan: ops::reduce's device tests; the radix sort a THCRadix: the sort
    // suites).
    // The rest get a THCLines, whose first member is the THCPointwise the pointwise kernels read.
    let pointwise = |k: &String| {
        !["th_reduce_", "th_combine_", "th_gemm_", "th_rand_", "th_sortLocal_", "th_radix"]
            .iter()
            .any(|p| k.starts_with(p))
            && !["Totals_", "Carries_", "Tiles_"].iter().any(|p| k.contains(p))
    };
    let mut lines = crate::cuda::lines::THCLines { it: p, len: [0; 4], step: [0; 4] };
    for k in super::kernel_names().into_iter().filter(pointwise) {
        let mut arg = [&mut lines as *mut crate::cuda::lines::THCLines as *mut std::ffi::c_void];
        // SAFETY: n = 0: the kernel touches no memory.
        unsafe { emu_launch(&k, &cfg, &mut arg) }.unwrap_or_else(|e| panic!("{k}: {e}"));
    }
    let mut arg = [&mut p as *mut THCPointwise as *mut std::ffi::c_void];
    let bad = |k: &str, grid: [u32; 3], block: [u32; 3], arg: &mut [*mut std::ffi::c_void]| {
        // SAFETY: every launch is rejected before any kernel runs.
        unsafe { emu_launch(k, &LaunchCfg { grid, block, shared: 0 }, arg) }.unwrap_err().msg
    };
    assert!(bad("th_nonesuch_i32", [1; 3], [1; 3], &mut arg).contains("no kernel named"));
    assert!(bad("th_fill_float_i32", [1; 3], [1025, 1, 1], &mut arg).contains("1024 threads"));
    assert!(bad("th_fill_float_i32", [1; 3], [32, 32, 2], &mut arg).contains("1024 threads"));
    assert!(bad("th_fill_float_i32", [0, 1, 1], [1; 3], &mut arg).contains(">= 1"));
    assert!(bad("th_fill_float_i32", [1; 3], [1, 0, 1], &mut arg).contains(">= 1"));
}

fn unsafe_zeroed() -> THCPointwise {
    // SAFETY: THCPointwise is plain integers and floats: all-zero bytes are a valid value.
    unsafe { std::mem::zeroed() }
}
