//! Compiles the C-variadic error entry points (`_THError`, `_THArgCheck`, `_THAssertionFailed`)
//! that stable Rust cannot define, and exports them from the shared library. No cbindgen here:
//! the header is committed and checked by `tests/abi_header.rs`.

fn main() {
    println!("cargo:rerun-if-changed=csrc/th_variadic.c");
    cc::Build::new().file("csrc/th_variadic.c").warnings(true).compile("th_variadic");
    // rustc's version script keeps only Rust's exported symbols; a second script adds ours.
    let out = std::env::var("OUT_DIR").expect("OUT_DIR");
    let script = format!("{out}/th_variadic.ver");
    std::fs::write(&script, "{ global: _THError; _THArgCheck; _THAssertionFailed; };\n").expect("write version script");
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_os == "linux" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={script}");
        // Nothing in Rust calls them, so ask the linker to pull them out of the archive.
        for sym in ["_THError", "_THArgCheck", "_THAssertionFailed"] {
            println!("cargo:rustc-cdylib-link-arg=-Wl,--undefined={sym}");
        }
        soname(&out);
    }
    cuda_emulator();
}

/// With the `cuda-emulator` feature: the CUDA C kernel sources (src/cuda/kernels/*.cu) and the
/// emulator runtime (csrc/cuda_emu/*.cpp) compiled as host C++ against the shim header, linked
/// whole: each kernel registers itself from a static initializer, and nothing references the
/// kernels' objects by symbol. They stay internal to the library (hidden visibility, and the
/// version scripts export only the listed names); Rust calls `th_emu_launch`.
fn cuda_emulator() {
    if std::env::var_os("CARGO_FEATURE_CUDA_EMULATOR").is_none() {
        return;
    }
    let files = |dir: &str, exts: &[&str]| -> Vec<std::path::PathBuf> {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("read {dir}: {e}"))
            .map(|e| e.expect("directory entry").path())
            .filter(|p| p.extension().is_some_and(|x| exts.iter().any(|e| x == *e)))
            .collect();
        v.sort();
        v
    };
    let (kernels, emu) = ("src/cuda/kernels", "csrc/cuda_emu");
    println!("cargo:rerun-if-changed={kernels}");
    println!("cargo:rerun-if-changed={emu}");
    for f in files(kernels, &["cu", "cuh"]).iter().chain(&files(emu, &["cpp", "h"])) {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    let shim = std::path::Path::new(emu).join("shim.h").canonicalize().expect("csrc/cuda_emu/shim.h");
    let mut b = cc::Build::new();
    b.cpp(true)
        .files(files(kernels, &["cu"]))
        .files(files(emu, &["cpp"]))
        .include(kernels)
        .include(emu)
        // Kernels are checked against the CPU engine's bits: optimize (debug builds would run
        // them at -O0) but never fuse multiply-adds.
        .opt_level(2)
        .debug(false)
        .warnings(true)
        .define("TH_EMULATOR", None)
        .link_lib_modifier("+whole-archive");
    for flag in ["-x", "c++", "-std=c++20", "-pthread", "-ffp-contract=off", "-fvisibility=hidden", "-include"] {
        b.flag(flag);
    }
    b.flag(shim.to_str().expect("UTF-8 path"));
    b.compile("th_cuda_emu");
}

/// The shared library's soname is `libth.so.<major>` (`libth.so.0` while the version is 0.x), so
/// installed copies can be versioned (scripts/install.sh). A program linked against
/// target/<profile>/libth.so then asks for `libth.so.0` at run time: make it a symlink next to
/// the library (in target/<profile> and its deps/, where `cargo test` links).
fn soname(out_dir: &str) {
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
    let name = format!("libth.so.{major}");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{name}");
    // OUT_DIR is target/<profile>/build/th-<hash>/out
    if let Some(profile_dir) = std::path::Path::new(out_dir).ancestors().nth(3) {
        for dir in [profile_dir.to_path_buf(), profile_dir.join("deps")] {
            let link = dir.join(&name);
            if std::fs::symlink_metadata(&link).is_err() {
                let _ = std::fs::create_dir_all(&dir);
                let _ = std::os::unix::fs::symlink("libth.so", &link);
            }
        }
    }
}
