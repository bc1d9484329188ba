//! The typed inner loops, and the one instruction-set dispatch that selects their copies.
//!
//! A kernel is written once, generically, as an `#[inline(always)]` body; `multiversion!`
//! compiles it for each instruction set (plain x86-64 / the target's default, AVX2+FMA,
//! AVX-512) and `isa()` picks the best the CPU has, once (`TH_CPU_CAPABILITY=scalar|avx2|avx512`
//! forces one, for tests and benchmarks). The body's first generic parameter is the instruction
//! set's marker type (`Base`, `Avx2`, `Avx512`): what differs per instruction set beyond the
//! compiler's code generation (the streaming stores of `pointwise::Streamer`) hangs off it.

pub mod pointwise;
pub mod reduce;
pub(crate) mod simd;
pub(crate) mod transpose;
pub mod vmath;

use std::sync::OnceLock;

/// The instruction sets the kernels are compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Isa {
    Scalar,
    Avx2,
    Avx512,
}

/// The instruction set in use (chosen once).
pub fn isa() -> Isa {
    static ISA: OnceLock<Isa> = OnceLock::new();
    *ISA.get_or_init(|| {
        let best = detect();
        match std::env::var("TH_CPU_CAPABILITY").as_deref() {
            Ok("scalar") | Ok("default") => Isa::Scalar,
            Ok("avx2") if best != Isa::Scalar => Isa::Avx2,
            _ => best,
        }
    })
}

/// Whether this CPU can run `isa`'s kernels (whatever `isa()` picked).
pub(crate) fn cpu_has(isa: Isa) -> bool {
    isa <= detect()
}

#[cfg(target_arch = "x86_64")]
fn detect() -> Isa {
    if is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx512dq")
        && is_x86_feature_detected!("avx512vl")
        && is_x86_feature_detected!("fma")
    {
        Isa::Avx512
    } else if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
        Isa::Avx2
    } else {
        Isa::Scalar
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> Isa {
    Isa::Scalar
}

/// The marker of the plain copy of a kernel (the target's baseline: SSE2 on x86-64).
pub struct Base;
/// The marker of the AVX2 + FMA copy.
pub struct Avx2;
/// The marker of the AVX-512 (F, BW, DQ, VL) copy.
pub struct Avx512;

/// The one instruction-set dispatch.
///
/// `multiversion! { /// docs
///     pub fn name<G: Bound, ...>(args) -> R => body }` defines `pub unsafe fn name`, which runs
/// `body::<Marker, G, ...>(args)` compiled for the instruction set `isa()` chose (`Marker`:
/// `Base`, `Avx2` or `Avx512`). Its contract is `body`'s.
///
/// `multiversion!(@copy Avx2, fn name(args) -> R => expr)` defines the single copy
/// `unsafe fn name` of `expr` compiled for one instruction set (`Avx2` or `Avx512`), for
/// kernels that keep function pointers per instruction set; the caller checks `cpu_has` first.
macro_rules! multiversion {
    (@copy Avx512, $($f:tt)*) => {
        $crate::kernels::multiversion!(@with "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma", $($f)*);
    };
    (@copy Avx2, $($f:tt)*) => {
        $crate::kernels::multiversion!(@with "avx2,fma", $($f)*);
    };
    (@with $feat:literal, $(#[$m:meta])* fn $name:ident $(<$($g:ident $(: $b:path)?),*>)? ($($a:ident : $t:ty),* $(,)?) $(-> $r:ty)? => $e:expr) => {
        $(#[$m])*
        #[target_feature(enable = $feat)]
        #[allow(clippy::too_many_arguments)]
        unsafe fn $name $(<$($g $(: $b)?),*>)? ($($a: $t),*) $(-> $r)? {
            // SAFETY: forwarded contract; the CPU has these features (checked by the caller).
            unsafe { $e }
        }
    };
    // `@base`: the plain copy alone, for kernels whose loop no instruction set speeds up.
    (@base $(#[$m:meta])* $vis:vis fn $name:ident<$($g:ident $(: $b:path)?),*>($($a:ident : $t:ty),* $(,)?) $(-> $r:ty)? => $body:ident) => {
        $(#[$m])*
        ///
        /// # Safety
        #[doc = concat!("As `", stringify!($body), "`.")]
        #[inline]
        #[allow(clippy::too_many_arguments)]
        $vis unsafe fn $name<$($g $(: $b)?),*>($($a: $t),*) $(-> $r)? {
            // SAFETY: forwarded contract.
            unsafe { $body::<$crate::kernels::Base, $($g),*>($($a),*) }
        }
    };
    ($(#[$m:meta])* $vis:vis fn $name:ident<$($g:ident $(: $b:path)?),*>($($a:ident : $t:ty),* $(,)?) $(-> $r:ty)? => $body:ident) => {
        $(#[$m])*
        ///
        /// # Safety
        #[doc = concat!("As `", stringify!($body), "`.")]
        #[inline]
        #[allow(clippy::too_many_arguments)]
        $vis unsafe fn $name<$($g $(: $b)?),*>($($a: $t),*) $(-> $r)? {
            #[cfg(target_arch = "x86_64")]
            {
                $crate::kernels::multiversion!(@copy Avx512, fn v512<$($g $(: $b)?),*>($($a: $t),*) $(-> $r)?
                    => $body::<$crate::kernels::Avx512, $($g),*>($($a),*));
                $crate::kernels::multiversion!(@copy Avx2, fn v256<$($g $(: $b)?),*>($($a: $t),*) $(-> $r)?
                    => $body::<$crate::kernels::Avx2, $($g),*>($($a),*));
                match $crate::kernels::isa() {
                    // SAFETY: forwarded contract; isa() only reports features the CPU has.
                    $crate::kernels::Isa::Avx512 => return unsafe { v512::<$($g),*>($($a),*) },
                    // SAFETY: as above.
                    $crate::kernels::Isa::Avx2 => return unsafe { v256::<$($g),*>($($a),*) },
                    $crate::kernels::Isa::Scalar => {}
                }
            }
            // SAFETY: forwarded contract.
            unsafe { $body::<$crate::kernels::Base, $($g),*>($($a),*) }
        }
    };
}
pub(crate) use multiversion;
