//! THC against a real NVIDIA driver library on this GPU-less machine: compiles
//! `c_tests/test_thc_nodevice.c` (strict C99, like `tests/c_api.rs`) against the `libth.so` of
//! this run and runs it with the driver's folder on `LD_LIBRARY_PATH`, requiring it to find the
//! driver (`TH_REQUIRE_LIBCUDA=1`), so every THC entry point meets cuInit's real answer.
//!
//! Needs the folder holding libcuda.so.1:
//! `TH_LIBCUDA_DIR=$(scripts/libcuda_nodevice.sh) cargo test --test thc_nodevice`.
//! Without one the test passes with "skipped: no TH_LIBCUDA_DIR", unless TH_REQUIRE_LIBCUDA=1.
//! With `TH_VALGRIND=1` the program runs under valgrind (no errors, no definite leaks).
#![cfg(feature = "cuda")]

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// target/<profile>/deps, where this `cargo test` built libth.so.
fn lib_dir() -> PathBuf {
    std::env::current_exe().unwrap().parent().unwrap().to_path_buf()
}

fn build(src: &Path, exe: &Path) {
    let lib = lib_dir();
    let st = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-D_POSIX_C_SOURCE=200809L", "-g"])
        .arg("-I")
        .arg(root().join("include"))
        .arg("-I")
        .arg(root().join("c_tests"))
        .arg(src)
        .arg("-o")
        .arg(exe)
        .arg(format!("-L{}", lib.display()))
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .args(["-lth", "-lpthread", "-lm"])
        .status()
        .expect("run the C compiler");
    assert!(st.success(), "compiling {} failed", src.display());
}

#[test]
fn thc_entry_points_meet_the_real_driver_without_a_device() {
    let Some(driver) = std::env::var_os("TH_LIBCUDA_DIR") else {
        assert!(
            std::env::var("TH_REQUIRE_LIBCUDA").as_deref() != Ok("1"),
            "TH_REQUIRE_LIBCUDA=1 but TH_LIBCUDA_DIR is not set (scripts/libcuda_nodevice.sh)"
        );
        println!("skipped: no TH_LIBCUDA_DIR");
        return;
    };
    let driver = PathBuf::from(driver);
    assert!(driver.join("libcuda.so.1").exists(), "no libcuda.so.1 in {}", driver.display());
    let out = lib_dir().join("thc-nodevice-bin");
    std::fs::create_dir_all(&out).unwrap();
    // Both programs: the shared table with exact expectations, and the generic one.
    for name in ["test_thc_nodevice", "test_thc_unavailable"] {
        let exe = out.join(name);
        build(&root().join("c_tests").join(format!("{name}.c")), &exe);
        let mut cmd = if std::env::var_os("TH_VALGRIND").is_some() {
            let mut c = Command::new("valgrind");
            c.args([
                "--quiet",
                "--error-exitcode=99",
                "--leak-check=full",
                "--errors-for-leak-kinds=definite",
                "--show-leak-kinds=definite",
            ])
            .arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        // This run's libth.so first (cargo's LD_LIBRARY_PATH may name a stale one), then the driver.
        let path = std::env::join_paths([lib_dir(), driver.clone()]).unwrap();
        let res = cmd.env("LD_LIBRARY_PATH", path).env("TH_REQUIRE_LIBCUDA", "1").output().expect("run the C test");
        let text = format!("{}{}", String::from_utf8_lossy(&res.stdout), String::from_utf8_lossy(&res.stderr));
        println!("{name}: {}", text.trim());
        assert!(res.status.success(), "{name} failed:\n{text}");
        if name == "test_thc_nodevice" {
            assert!(text.contains("CUDA_ERROR_NO_DEVICE (100)"), "{name} did not meet the driver:\n{text}");
        }
    }
}
