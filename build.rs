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
    }
}
