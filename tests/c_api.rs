//! Compiles every `c_tests/*.c` and `ffi_examples/*.c` as C99 with `-Wall -Wextra -Werror`
//! against the committed header and the `libth.so` this `cargo test` built, runs each, and
//! requires exit status 0. The header is also compiled as C++. With `TH_VALGRIND=1` every
//! program runs under valgrind (no errors, no definite leaks).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// target/<profile>/deps, where `cargo test` (re)builds libth.so for this run (the copy in
/// target/<profile> is only refreshed by `cargo build`).
fn lib_dir() -> PathBuf {
    std::env::current_exe().unwrap().parent().unwrap().to_path_buf()
}

fn compiler(cxx: bool) -> String {
    let (var, default) = if cxx { ("CXX", "c++") } else { ("CC", "cc") };
    std::env::var(var).unwrap_or_else(|_| default.into())
}

fn build(src: &Path, out_dir: &Path) -> PathBuf {
    let exe = out_dir.join(src.file_stem().unwrap());
    let lib = lib_dir();
    let st = Command::new(compiler(false))
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-D_POSIX_C_SOURCE=200809L", "-g"])
        .arg("-I")
        .arg(root().join("include"))
        .arg("-I")
        .arg(root().join("c_tests"))
        .arg(src)
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", lib.display()))
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .args(["-lth", "-lpthread", "-lm"])
        .status()
        .expect("run the C compiler");
    assert!(st.success(), "compiling {} failed", src.display());
    exe
}

fn run(exe: &Path, envs: &[(&str, &str)]) -> (bool, String) {
    let valgrind = std::env::var_os("TH_VALGRIND").is_some();
    let mut cmd = if valgrind {
        let mut c = Command::new("valgrind");
        c.args([
            "--quiet",
            "--error-exitcode=99",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite",
            "--show-leak-kinds=definite",
        ])
        .arg(exe);
        c
    } else {
        Command::new(exe)
    };
    cmd.env("TH_TEST_TMPDIR", std::env::temp_dir());
    // cargo puts target/<profile> (with a possibly stale libth.so from the last `cargo build`)
    // on LD_LIBRARY_PATH, which outranks the RUNPATH: point it at this run's library (`envs`
    // may extend it, this run's library first).
    cmd.env("LD_LIBRARY_PATH", lib_dir());
    cmd.envs(envs.iter().copied());
    let out = cmd.output().expect("run the C test");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

fn c_files(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    v.sort();
    v
}

fn run_all(dir: &str) {
    run_matching(dir, "", &[]);
}

/// Builds and runs the C files of `dir` whose name starts with `prefix`, with `envs` set.
fn run_matching(dir: &str, prefix: &str, envs: &[(&str, &str)]) {
    let out_dir = lib_dir().join(format!("{dir}-bin"));
    std::fs::create_dir_all(&out_dir).unwrap();
    let mut failed = Vec::new();
    let files: Vec<PathBuf> =
        c_files(dir).into_iter().filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix)).collect();
    assert!(!files.is_empty(), "no {dir}/{prefix}*.c");
    for src in files {
        let exe = build(&src, &out_dir);
        let (ok, text) = run(&exe, envs);
        println!("{}: {}", src.display(), text.trim());
        if !ok {
            failed.push(format!("{}:\n{text}", src.display()));
        }
    }
    assert!(failed.is_empty(), "C programs failed:\n{}", failed.join("\n"));
}

#[test]
fn c_tests_pass() {
    run_all("c_tests");
}

/// The THC programs on the emulated device (a `cuda-emulator` build): `test_thc_e2e.c` must find
/// a device there, not skip.
#[cfg(feature = "cuda-emulator")]
#[test]
fn thc_c_tests_pass_on_the_emulator() {
    run_matching("c_tests", "test_thc_", &[("TH_CUDA_EMULATOR", "1"), ("TH_REQUIRE_DEVICE", "1")]);
}

/// THC against a real NVIDIA driver library on this GPU-less machine (`TH_LIBCUDA_DIR`, the
/// folder `scripts/libcuda_nodevice.sh` prints): the shared THC table with exact expectations
/// (`test_thc_nodevice.c`) and the generic one meet cuInit's real answer. Skipped without the
/// folder unless TH_REQUIRE_LIBCUDA=1.
#[cfg(feature = "cuda")]
#[test]
fn thc_meets_the_real_driver_without_a_device() {
    let Ok(driver) = std::env::var("TH_LIBCUDA_DIR") else {
        assert!(
            std::env::var("TH_REQUIRE_LIBCUDA").as_deref() != Ok("1"),
            "TH_REQUIRE_LIBCUDA=1 but TH_LIBCUDA_DIR is not set (scripts/libcuda_nodevice.sh)"
        );
        println!("skipped: no TH_LIBCUDA_DIR");
        return;
    };
    assert!(Path::new(&driver).join("libcuda.so.1").exists(), "no libcuda.so.1 in {driver}");
    let path = format!("{}:{driver}", lib_dir().display());
    let out_dir = lib_dir().join("thc-nodevice-bin");
    std::fs::create_dir_all(&out_dir).unwrap();
    for name in ["test_thc_nodevice", "test_thc_unavailable"] {
        let exe = build(&root().join("c_tests").join(format!("{name}.c")), &out_dir);
        let (ok, text) = run(&exe, &[("LD_LIBRARY_PATH", &path), ("TH_REQUIRE_LIBCUDA", "1")]);
        println!("{name}: {}", text.trim());
        assert!(ok, "{name} failed:\n{text}");
        if name == "test_thc_nodevice" {
            assert!(text.contains("CUDA_ERROR_NO_DEVICE (100)"), "{name} did not meet the driver:\n{text}");
        }
    }
}

#[test]
fn ffi_examples_run() {
    run_all("ffi_examples");
}

#[test]
fn header_compiles_as_cpp() {
    let dir = lib_dir().join("cxx-check");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("header.cpp");
    std::fs::write(
        &src,
        "#include <TH/TH.h>\nint main() { THFloatTensor *t = THFloatTensor_new(); THFloatTensor_free(t); return 0; }\n",
    )
    .unwrap();
    let lib = lib_dir();
    let st = Command::new(compiler(true))
        .args(["-std=c++11", "-Wall", "-Wextra", "-Werror"])
        .arg("-I")
        .arg(root().join("include"))
        .arg(&src)
        .arg("-o")
        .arg(dir.join("header"))
        .arg(format!("-L{}", lib.display()))
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lth")
        .status()
        .expect("run the C++ compiler");
    assert!(st.success(), "the header does not compile as C++");
    assert!(Command::new(dir.join("header")).env("LD_LIBRARY_PATH", lib_dir()).status().unwrap().success());
}

/// `ffi_examples/*.cpp`: the C++ wrapper (`include/TH/th.hpp`) compiled as C++17 with
/// `-Wall -Wextra -Werror` (and `-pedantic`), run like the C programs (also under valgrind).
#[test]
fn cpp_examples_run() {
    let out_dir = lib_dir().join("cpp-bin");
    std::fs::create_dir_all(&out_dir).unwrap();
    let lib = lib_dir();
    let mut srcs: Vec<PathBuf> = std::fs::read_dir(root().join("ffi_examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cpp"))
        .collect();
    srcs.sort();
    assert!(!srcs.is_empty());
    for src in srcs {
        let exe = out_dir.join(src.file_stem().unwrap());
        let st = Command::new(compiler(true))
            .args(["-std=c++17", "-Wall", "-Wextra", "-Werror", "-pedantic", "-g"])
            .arg("-I")
            .arg(root().join("include"))
            .arg(&src)
            .arg("-o")
            .arg(&exe)
            .arg(format!("-L{}", lib.display()))
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-lth")
            .status()
            .expect("run the C++ compiler");
        assert!(st.success(), "compiling {} failed", src.display());
        let (ok, text) = run(&exe, &[]);
        println!("{}: {}", src.display(), text.trim());
        assert!(ok, "{} failed:\n{text}", src.display());
    }
}

/// `TH.h` and a real `dlpack.h` in one program, in both orders, as C99 and C++: set
/// `DLPACK_INCLUDE_DIR` to a directory holding `dlpack/dlpack.h` (the project does not vendor
/// it; without the variable this only checks that TH.h alone provides the DLPack names).
#[test]
fn header_coexists_with_dlpack_h() {
    let dir = lib_dir().join("dlpack-check");
    std::fs::create_dir_all(&dir).unwrap();
    let body = "int main(void) { struct DLManagedTensorVersioned *m = THFloatTensor_toDLPack(0); \
                DLDevice d = {kDLCPU, 0}; (void)d; return m == 0 && DLPACK_MAJOR_VERSION == 1 ? 0 : 1; }\n";
    let ext = std::env::var_os("DLPACK_INCLUDE_DIR");
    let orders: &[&str] = if ext.is_some() {
        &["#include <dlpack/dlpack.h>\n#include <TH/TH.h>\n", "#include <TH/TH.h>\n#include <dlpack/dlpack.h>\n"]
    } else {
        &["#include <TH/TH.h>\n"]
    };
    for (i, inc) in orders.iter().enumerate() {
        for cxx in [false, true] {
            let src = dir.join(format!("both{i}.{}", if cxx { "cpp" } else { "c" }));
            std::fs::write(&src, format!("{inc}{body}")).unwrap();
            let mut cmd = Command::new(compiler(cxx));
            cmd.args(if cxx {
                ["-std=c++11", "-Wall", "-Wextra", "-Werror"]
            } else {
                ["-std=c99", "-Wall", "-Wextra", "-Werror"]
            });
            cmd.arg("-I").arg(root().join("include"));
            if let Some(e) = &ext {
                cmd.arg("-I").arg(e);
            }
            let exe = dir.join(format!("both{i}{}", if cxx { "xx" } else { "" }));
            let st = cmd
                .arg(&src)
                .arg("-o")
                .arg(&exe)
                .arg(format!("-L{}", lib_dir().display()))
                .arg(format!("-Wl,-rpath,{}", lib_dir().display()))
                .arg("-lth")
                .status()
                .expect("run the compiler");
            assert!(st.success(), "{} does not compile", src.display());
            let ok = Command::new(&exe).env("LD_LIBRARY_PATH", lib_dir()).status().unwrap().success();
            assert!(ok, "{} failed", exe.display());
        }
    }
}
