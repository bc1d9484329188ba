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
