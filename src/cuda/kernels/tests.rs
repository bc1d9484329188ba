//! The kernel lists (names, modules) and, with the emulator, the kernels against the CPU engine.

use super::*;

#[test]
fn names_and_modules() {
    let all = kernel_names();
    // fill 1, copy 10, comparisons 2 forms x 3 outputs (2 for Byte and Bool), arithmetic 30 (+6
    // bitwise for integers), float functions 23; all twice (i32, i64).
    let per = |d: DType| match d {
        DType::Byte => 1 + 10 + 4 + 36,
        DType::Bool => 1 + 10 + 4,
        d if Has::Int.contains(d) => 1 + 10 + 6 + 36,
        _ => 1 + 10 + 6 + 30 + 23,
    };
    // reductions: max, min, count, equal (+ sum, prod, dot; + moments, norm, dist) twice, and
    // their combines (max, min, count; + sum, prod; + moments, norm) once.
    let reductions = |d: DType| match d {
        DType::Bool => 2 * 4 + 3,
        d if Has::Float.contains(d) => 2 * 10 + 7,
        _ => 2 * 7 + 5,
    };
    // line kernels: every `Form::Lines` op the dtype has, twice; the integer GEMM (cuda::blas),
    // one per integer dtype; random (random.cuh): int, geometric, bernoulli from Float and
    // Double p twice (+ dist, normal_tensor, alias twice and multinomial once for floats); none
    // for Bool.
    let lines = |d: DType| OPS.iter().filter(|o| o.form == Form::Lines && o.has.contains(d)).count();
    let gemm = |d: DType| usize::from(Has::Int.contains(d));
    let random = |d: DType| match d {
        DType::Bool => 0,
        d if Has::Float.contains(d) => 2 * 7 + 1,
        _ => 2 * 4,
    };
    // convolutions (conv.cuh): unfold and map twice, for Float, Double and Half.
    let conv = |d: DType| if matches!(d, DType::Float | DType::Double | DType::Half) { 4 } else { 0 };
    // THCUNN's GEMM convolutions (nn_conv.cuh): im2col and col2im twice, for Float, Double, Half.
    let nn_conv = conv;
    // THCUNN's elementwise layers (nn.cuh): twice each, for Float, Double and Half (the criterions'
    // loss terms for Double only).
    let nn = |d: DType| {
        2 * OPS
            .iter()
            .filter(|o| matches!(o.has, Has::Nn | Has::NnDouble) && o.form == Form::Same && o.has.contains(d))
            .count()
    };
    // THCUNN's fused GRU and LSTM cells (nn_rnn.cuh): 4 ops twice, for Float, Double and Half.
    let rnn = |d: DType| if matches!(d, DType::Float | DType::Double | DType::Half) { 2 * 4 } else { 0 };
    // THCUNN's poolings (nn_pool.cuh): 5 ops twice, for Float, Double and Half.
    let pool = |d: DType| if matches!(d, DType::Float | DType::Double | DType::Half) { 2 * 5 } else { 0 };
    // THCUNN's padding and upsampling map (nn_sample.cuh): forward and adjoint twice, for Float,
    // Double, Half.
    let sample = |d: DType| if matches!(d, DType::Float | DType::Double | DType::Half) { 4 } else { 0 };
    // THC_sleep's kernel (sleep.cuh): one, in the Float module.
    let sleep = |d: DType| usize::from(d == DType::Float);
    // The shared-memory sort stages (sort.cuh's th_sortLocal): one per dtype.
    let sort_local = 4; // and the radix sort's count, offsets and scatter
    // The tiled scans (sort.cuh): totals and tiles twice, carries once, for cumsum and cumprod.
    let scans = |d: DType| if d == DType::Bool { 0 } else { 10 };
    let want: usize = DType::ALL
        .iter()
        .map(|&d| {
            2 * per(d)
                + 2 * lines(d)
                + reductions(d)
                + gemm(d)
                + random(d)
                + conv(d)
                + nn_conv(d)
                + nn(d)
                + rnn(d)
                + pool(d)
                + sample(d)
                + sleep(d)
                + sort_local
                + scans(d)
        })
        .sum();
    assert_eq!(all.len(), want);
    let unique: std::collections::HashSet<&String> = all.iter().collect();
    assert_eq!(unique.len(), all.len());
    for (k, m) in [
        ("th_cadd_float_i32", Some("float")),
        ("th_copy_half_bool_i64", Some("half")),
        ("th_cmpValue_bfloat16_bfloat16_i32", Some("bfloat16")),
        ("th_cmpTensor_byte_bool_i64", Some("byte")),
        ("th_bitxor_long_i32", Some("long")),
        ("th_fill_bool_i64", Some("bool")),
        ("th_cmpValue_byte_byte_i32", Some("byte")),
        ("th_reduce_max_bool_i64", Some("bool")),
        ("th_tri_bool_i32", Some("bool")),
        ("th_sleep", Some("float")),
        ("th_cross_half_i64", Some("half")),
        ("th_cross_bool_i32", None),
        ("th_reduce_dist_half_i32", Some("half")),
        ("th_combine_norm_double", Some("double")),
        ("th_combine_sum_long", Some("long")),
        ("th_reduce_sum_bool_i32", None),
        ("th_reduce_norm_int_i32", None),
        ("th_combine_dot_float", None),
        ("th_bitand_float_i32", None),
        ("th_exp_int_i32", None),
        ("th_add_bool_i32", None),
        ("th_cmpValue_float_int_i32", None),
        ("th_cadd_float", None),
        ("", None),
    ] {
        assert_eq!(module_of(k).map(|m| m.name), m, "{k}");
    }
    for m in modules() {
        assert!(m.source.contains("struct THCPointwise"));
        assert!(m.source.contains("struct THCReduce"));
        assert!(m.source.contains(&format!("Module `{}`", m.name)));
    }
    assert_eq!(modules().len(), 10);
}

#[test]
fn reads_ptxas_reports() {
    // NVRTC 13.0's report shape (the first kernel verbatim from a compile; the second given
    // spills, which the real kernels never have).
    let log = "\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'th_exp_float_i32' for 'sm_90'
ptxas info    : Function properties for th_exp_float_i32
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 28 registers, used 0 barriers
ptxas info    : Compile time = 9.406 ms
ptxas info    : Compiling entry function 'th_tan_double_i64' for 'sm_90'
ptxas info    : Function properties for th_tan_double_i64
ptxas         .     40 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 40 registers, used 0 barriers, 40 bytes cumulative stack size
";
    assert_eq!(
        resource_report(log),
        vec![("th_exp_float_i32".to_string(), 28, 0), ("th_tan_double_i64".to_string(), 40, 20)]
    );
    assert!(resource_report("").is_empty());
}

#[test]
fn compile_without_nvrtc_is_an_error_not_a_panic() {
    // With no libnvrtc reachable (the usual test machine) compile reports TH_ERR_NO_CUDA; where
    // one is, the NVRTC integration test (tests/cuda_nvrtc.rs) covers compiling.
    if !nvrtc::available() {
        let e = compile(&modules()[9], (9, 0)).unwrap_err();
        assert_eq!(e.code, crate::core::error::Code::TH_ERR_NO_CUDA);
    }
}
