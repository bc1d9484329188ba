//! Every kernel module compiled by NVRTC to CUBINs for sm_80 and sm_90: no compile error, no
//! register spill (from ptxas's report: the runtime compile allows them), every kernel within
//! its module's register budget, and exactly the kernels `kernels_of` names (the Rust op table mirrors the C lists). Writes the
//! per-kernel register table to target/cuda-kernels.txt.
//!
//! `TH_CUBIN_DIR=DIR` also writes the sm_90 CUBINs into DIR under their disk-cache names
//! (scripts/pack_gpu.sh ships them so a GPU machine compiles nothing).
//!
//! Needs libnvrtc.so.13: `TH_NVRTC_DIR=$(scripts/nvrtc.sh) cargo test --test cuda_nvrtc`.
//! Without one the test passes with "skipped: no libnvrtc", unless TH_REQUIRE_NVRTC=1.
#![cfg(feature = "cuda")]

use std::collections::BTreeMap;
use std::time::Instant;
use th::cuda::kernels::{self, Module};

const ARCHS: [(i32, i32); 2] = [(8, 0), (9, 0)];

/// (kernel -> registers) of one module for one architecture, after checking its report.
fn compile_checked(m: &Module, arch: (i32, i32)) -> BTreeMap<String, u32> {
    let t = Instant::now();
    let c = kernels::compile(m, arch).unwrap_or_else(|e| panic!("module {} sm_{}{}: {e}", m.name, arch.0, arch.1));
    assert!(c.cubin.len() > 1000, "module {}: {} byte CUBIN", m.name, c.cubin.len());
    let report = kernels::resource_report(&c.log);
    let mut regs = BTreeMap::new();
    for (k, r, spill) in report {
        assert_eq!(spill, 0, "{k} spills on sm_{}{}", arch.0, arch.1);
        assert!(
            r > 0 && r <= m.register_budget,
            "{k}: {r} registers, budget {} (sm_{}{})",
            m.register_budget,
            arch.0,
            arch.1
        );
        assert!(regs.insert(k.clone(), r).is_none(), "{k} reported twice");
    }
    let mut want = kernels::kernels_of(m.name);
    want.sort();
    let got: Vec<String> = regs.keys().cloned().collect();
    assert_eq!(got, want, "module {}: compiled kernels differ from kernels_of", m.name);
    if let Some(dir) = std::env::var_os("TH_CUBIN_DIR").filter(|_| arch == (9, 0)) {
        kernels::cache::store_in(std::path::Path::new(&dir), m, arch, &c.cubin).unwrap();
    }
    eprintln!("  {:9} sm_{}{}: {:4} kernels in {:.1}s", m.name, arch.0, arch.1, regs.len(), t.elapsed().as_secs_f64());
    regs
}

#[test]
fn every_module_compiles_within_budget() {
    if !kernels::nvrtc::available() {
        assert!(
            std::env::var("TH_REQUIRE_NVRTC").as_deref() != Ok("1"),
            "TH_REQUIRE_NVRTC=1 but libnvrtc cannot be loaded"
        );
        println!("skipped: no libnvrtc");
        return;
    }
    let t = Instant::now();
    // (module, arch) jobs over two threads: NVRTC is thread-safe across programs.
    // TH_NVRTC_ONLY=long,float compiles those modules only (quick checks while editing kernels).
    let only = std::env::var("TH_NVRTC_ONLY").ok();
    let wanted = |m: &Module| only.as_deref().is_none_or(|o| o.split(',').any(|n| n == m.name));
    let jobs: Vec<(&'static Module, (i32, i32))> =
        kernels::modules().iter().filter(|m| wanted(m)).flat_map(|m| ARCHS.iter().map(move |&a| (m, a))).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(BTreeMap::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(&(m, arch)) = jobs.get(i) else { break };
                    let regs = compile_checked(m, arch);
                    results.lock().unwrap().insert((m.name, arch), regs);
                }
            });
        }
    });
    let results = results.into_inner().unwrap();
    assert_eq!(results.len(), jobs.len());
    if only.is_some() {
        return; // a partial run writes no table
    }

    let mut table = format!("{:40} {:>10} {:>10}\n", "kernel", "sm_80 regs", "sm_90 regs");
    let mut count = 0;
    let mut max = [0u32; 2];
    for m in kernels::modules() {
        let (a, b) = (&results[&(m.name, ARCHS[0])], &results[&(m.name, ARCHS[1])]);
        for (k, r80) in a {
            let r90 = b[k];
            table.push_str(&format!("{k:40} {r80:>10} {r90:>10}\n"));
            max = [max[0].max(*r80), max[1].max(r90)];
            count += 1;
        }
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("cuda-kernels.txt"), table).unwrap();
    println!(
        "{count} kernels in {} modules, compiled for sm_80 and sm_90 in {:.1}s; most registers: {} (sm_80), {} (sm_90); \
         table in target/cuda-kernels.txt",
        kernels::modules().len(),
        t.elapsed().as_secs_f64(),
        max[0],
        max[1]
    );
    assert_eq!(count, kernels::kernel_names().len());
}

/// The disk cache: the first request compiles and writes `<module>-sm80-<key>.cubin`, the
/// second reads the same bytes back without compiling.
#[test]
fn cubins_are_cached_on_disk() {
    if !kernels::nvrtc::available() {
        assert!(std::env::var("TH_REQUIRE_NVRTC").as_deref() != Ok("1"), "TH_REQUIRE_NVRTC=1 but no libnvrtc");
        println!("skipped: no libnvrtc");
        return;
    }
    let dir = std::env::temp_dir().join(format!("th-cubin-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let m = kernels::modules().iter().find(|m| m.name == "bool").unwrap();
    let t = Instant::now();
    let first = kernels::cache::cubin_in(Some(&dir), m, (8, 0)).unwrap();
    let compiled = t.elapsed();
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].to_string_lossy().into_owned();
    assert!(name.starts_with("bool-sm80-") && name.ends_with(".cubin"), "{name}");
    let t = Instant::now();
    let second = kernels::cache::cubin_in(Some(&dir), m, (8, 0)).unwrap();
    let cached = t.elapsed();
    assert_eq!(first, second);
    assert!(cached * 10 < compiled, "cached read took {cached:?}, the compile {compiled:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
