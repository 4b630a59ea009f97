//! The dispatcher: names every backend and GHASH engine, detects them
//! (`detect()`, the forced `sm4_backend` cfg, the hidden `Backend` and
//! `GhashEngine` tags), pairs them for GCM ([`GcmBackend`], the
//! `gcm_runner!`s), and runs a job inside the chosen kernel's
//! `#[target_feature]` runner: [`with_kernel`], [`with_gcm`], [`encrypt`],
//! [`decrypt`]. Nothing else: each kernel file (`backends/*.rs`) holds its
//! kernel and its own `impl Kernel` (`crate::kernel::kernel_token!`), and
//! the contract is `crate::kernel`. Uses the contract, the kernels and the
//! GHASH engines; used by the cipher type, the hooks and the modes.

use crate::ghash::{Ghash, SoftGhash};
use crate::kernel::Kernel;
use crate::kernel::KernelClosure;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
use crate::kernel::align_frame_to_cache_line;
use cipher::{BlockCipherDecClosure, BlockCipherEncClosure, consts::U16};

pub(crate) mod soft;

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx;
#[cfg(target_arch = "x86_64")]
pub(crate) mod gfni;
#[cfg(target_arch = "x86_64")]
pub(crate) mod gfni256;
#[cfg(target_arch = "x86_64")]
pub(crate) mod vaes;
#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(target_arch = "aarch64")]
pub(crate) mod neon;
#[cfg(target_arch = "aarch64")]
pub(crate) mod sm4ce;

/// A backend (kernel) of this crate. Hidden: for tests and benchmarks.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// Portable, constant-time bit-sliced code.
    Soft,
    /// x86_64 AES-NI + AVX2.
    Avx,
    /// x86_64 AES-NI + AVX2 with VAES (`ymm` AES rounds), no GFNI: Zen 3.
    Vaes,
    /// x86_64 GFNI + AVX-512 (zmm).
    Gfni,
    /// x86_64 GFNI + AVX2 (ymm).
    Gfni256,
    /// aarch64 Advanced SIMD.
    Neon,
    /// aarch64 SM4 instructions.
    Sm4ce,
}

// The x86 backends also require the carry-less multiplier their GHASH
// engine uses (`pclmulqdq`, and `vpclmulqdq` for `gfni`), so that GCM never
// needs a second detection; every CPU with AES-NI + AVX2, GFNI + AVX2 or
// GFNI + AVX-512 has it, so no CPU changes backend (only a hypervisor that
// hides the multiplier alone would move the CPU down). The `vpclmul256`
// engine beside `avx`, `vaes` and `gfni256` adds the VPCLMULQDQ bit
// (`has_vpclmulqdq_bit`) to `cpu_avx2_clmul`; `vaes` adds the VAES bit
// (`has_vaes_bit`) to `cpu_avx`.
#[cfg(target_arch = "x86_64")]
cpufeatures::new!(cpu_avx, "avx2", "aes", "pclmulqdq");
#[cfg(target_arch = "x86_64")]
cpufeatures::new!(
    cpu_gfni,
    "gfni",
    "avx512f",
    "avx512bw",
    "avx512vl",
    "vpclmulqdq",
    "pclmulqdq"
);
#[cfg(target_arch = "x86_64")]
cpufeatures::new!(cpu_avx2_clmul, "avx2", "pclmulqdq");
#[cfg(target_arch = "aarch64")]
cpufeatures::new!(cpu_sm4, "sm4");
// PMULL on 64-bit lanes comes with the AES extension, which NEON-only
// cores (Raspberry Pi 4's Cortex-A72) lack: GCM there runs the `soft`
// GHASH engine beside the `neon` kernel, and `neon` itself is unaffected.
#[cfg(target_arch = "aarch64")]
cpufeatures::new!(cpu_pmull, "aes");

/// CPUID.(EAX=7,ECX=0):ECX, read once per process: CPUID traps to the
/// hypervisor in a VM, and `Sm4::new` asks on every key.
#[cfg(target_arch = "x86_64")]
fn leaf7_ecx() -> u32 {
    use core::sync::atomic::{AtomicU64, Ordering};
    // Bit 32 set: read; the low 32 bits are the register.
    static ECX: AtomicU64 = AtomicU64::new(0);
    let v = ECX.load(Ordering::Relaxed);
    if v >> 32 != 0 {
        return v as u32;
    }
    #[allow(unused_unsafe)]
    // SAFETY: the CPUID instruction exists on every x86_64 CPU; leaf 0 says
    // whether leaf 7 exists before we read it.
    let ecx = unsafe {
        use core::arch::x86_64::{__cpuid, __cpuid_count};
        if __cpuid(0).eax >= 7 {
            __cpuid_count(7, 0).ecx
        } else {
            0
        }
    };
    ECX.store(u64::from(ecx) | 1 << 32, Ordering::Relaxed);
    ecx
}

/// GFNI present (CPUID.(EAX=7,ECX=0):ECX\[8\]); unlike cpufeatures' "gfni"
/// this does not require the OS to enable zmm state, so AVX2-only CPUs
/// with GFNI (Alder Lake E-cores, Tremont, Zen 3 has none) are found.
#[cfg(target_arch = "x86_64")]
fn has_gfni_bit() -> bool {
    (leaf7_ecx() >> 8) & 1 == 1
}

/// VAES present (CPUID.(EAX=7,ECX=0):ECX\[9\]); cpufeatures' "vaes" also
/// requires zmm state (as for VPCLMULQDQ below), which Zen 3 does not
/// have: the `ymm` form needs only the AVX2 checks' `ymm` state.
#[cfg(target_arch = "x86_64")]
fn has_vaes_bit() -> bool {
    (leaf7_ecx() >> 9) & 1 == 1
}

/// VPCLMULQDQ present (CPUID.(EAX=7,ECX=0):ECX\[10\]); cpufeatures'
/// "vpclmulqdq" also requires zmm state, which AVX2-only CPUs with the
/// instruction (Alder Lake, Zen 3) do not have: its `ymm` form needs only
/// the `ymm` state that the AVX2 checks include.
#[cfg(target_arch = "x86_64")]
fn has_vpclmulqdq_bit() -> bool {
    (leaf7_ecx() >> 10) & 1 == 1
}

/// The backend forced at build time by `--cfg sm4_backend="..."`, if any.
const FORCED: Option<Backend> = if cfg!(sm4_backend = "soft") {
    Some(Backend::Soft)
} else if cfg!(sm4_backend = "avx") {
    Some(Backend::Avx)
} else if cfg!(sm4_backend = "vaes") {
    Some(Backend::Vaes)
} else if cfg!(sm4_backend = "gfni") {
    Some(Backend::Gfni)
} else if cfg!(sm4_backend = "gfni256") {
    Some(Backend::Gfni256)
} else if cfg!(sm4_backend = "neon") {
    Some(Backend::Neon)
} else if cfg!(sm4_backend = "sm4ce") {
    Some(Backend::Sm4ce)
} else {
    None
};

impl Backend {
    /// Every backend, best first within each architecture.
    pub const ALL: [Backend; 7] = [
        Backend::Gfni,
        Backend::Gfni256,
        Backend::Vaes,
        Backend::Avx,
        Backend::Sm4ce,
        Backend::Neon,
        Backend::Soft,
    ];

    /// The backend's name, as [`crate::backend`] reports it.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Soft => "soft",
            Backend::Avx => "avx",
            Backend::Vaes => "vaes",
            Backend::Gfni => "gfni",
            Backend::Gfni256 => "gfni256",
            Backend::Neon => "neon",
            Backend::Sm4ce => "sm4ce",
        }
    }

    /// Whether this CPU can run the backend.
    pub fn is_available(self) -> bool {
        if cfg!(miri) {
            // Miri runs the portable code only (and cannot execute CPUID).
            return self == Backend::Soft;
        }
        match self {
            Backend::Soft => true,
            #[cfg(target_arch = "x86_64")]
            Backend::Avx => cpu_avx::get(),
            #[cfg(target_arch = "x86_64")]
            Backend::Vaes => cpu_avx::get() && has_vaes_bit(),
            #[cfg(target_arch = "x86_64")]
            Backend::Gfni => cpu_gfni::get(),
            #[cfg(target_arch = "x86_64")]
            Backend::Gfni256 => cpu_avx2_clmul::get() && has_gfni_bit(),
            #[cfg(target_arch = "aarch64")]
            Backend::Sm4ce => cpu_sm4::get(),
            #[cfg(target_arch = "aarch64")]
            Backend::Neon => cfg!(target_feature = "neon"),
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// The backends this CPU can run, best first, `Soft` last.
    pub fn available() -> impl Iterator<Item = Backend> {
        Self::ALL.into_iter().filter(|b| b.is_available())
    }
}

/// A GHASH engine of SM4-GCM, run beside an SM4 backend. Hidden: for
/// tests and benchmarks.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GhashEngine {
    /// Portable, constant-time (integer multiplication with holes).
    Soft,
    /// x86_64 PCLMULQDQ on `xmm` (beside `avx`, `vaes` and `gfni256`).
    Clmul,
    /// x86_64 VPCLMULQDQ on `zmm` (beside `gfni`).
    Vpclmul,
    /// x86_64 VPCLMULQDQ on `ymm`, AVX2 only (beside `avx`, `vaes` and `gfni256`
    /// where the CPU has VPCLMULQDQ: Ice Lake and later, Zen 3 and later).
    Vpclmul256,
    /// aarch64 PMULL (beside `neon` and `sm4ce` where the core has AES).
    Pmull,
}

impl GhashEngine {
    /// The engine's name.
    pub fn name(self) -> &'static str {
        match self {
            GhashEngine::Soft => "soft",
            GhashEngine::Clmul => "clmul",
            GhashEngine::Vpclmul => "vpclmul",
            GhashEngine::Vpclmul256 => "vpclmul256",
            GhashEngine::Pmull => "pmull",
        }
    }
}

impl Backend {
    /// The GHASH engine that GCM runs beside this backend on this CPU (the
    /// fastest one it has a runner for).
    pub fn ghash_engine(self) -> GhashEngine {
        self.ghash_engines().next().unwrap_or(GhashEngine::Soft)
    }

    /// The GHASH engines this CPU can run beside this backend, fastest
    /// first (`None` of them if the backend itself is unavailable).
    pub fn ghash_engines(self) -> impl Iterator<Item = GhashEngine> {
        let pairs: &[GhashEngine] = match self {
            Backend::Gfni => &[GhashEngine::Vpclmul],
            Backend::Gfni256 | Backend::Vaes | Backend::Avx => {
                &[GhashEngine::Vpclmul256, GhashEngine::Clmul]
            }
            Backend::Neon | Backend::Sm4ce => &[GhashEngine::Pmull, GhashEngine::Soft],
            Backend::Soft => &[GhashEngine::Soft],
        };
        let ok = self.is_available();
        pairs
            .iter()
            .copied()
            .filter(move |&e| ok && e.is_available())
    }
}

impl GhashEngine {
    /// Whether this CPU has the engine's features (the x86 engines' are
    /// part of their backends' checks; see `cpu_avx`).
    fn is_available(self) -> bool {
        match self {
            GhashEngine::Soft => true,
            #[cfg(target_arch = "x86_64")]
            GhashEngine::Clmul => !cfg!(miri) && (cpu_avx::get() || cpu_avx2_clmul::get()),
            #[cfg(target_arch = "x86_64")]
            GhashEngine::Vpclmul => !cfg!(miri) && cpu_gfni::get(),
            #[cfg(target_arch = "x86_64")]
            GhashEngine::Vpclmul256 => !cfg!(miri) && cpu_avx2_clmul::get() && has_vpclmulqdq_bit(),
            // The loads reverse bytes as a little-endian core sees them.
            #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
            GhashEngine::Pmull => !cfg!(miri) && cpu_pmull::get(),
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }
}

/// An SM4 backend and the GHASH engine that GCM runs beside it, both
/// checked against the CPU: the private fields mean that only the two
/// constructors make one, so [`with_gcm`] may trust it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct GcmBackend {
    sm4: Backend,
    ghash: GhashEngine,
}

impl GcmBackend {
    /// Backend `b` (as stored in an `Sm4`, so available) with its best
    /// GHASH engine. Detection of the engine's features happens here, once
    /// per key.
    pub(crate) fn new(b: Backend) -> Self {
        if b.is_available() {
            GcmBackend {
                sm4: b,
                ghash: b.ghash_engine(),
            }
        } else {
            // Unreachable for a backend stored in an `Sm4`; soft is safe
            // (every backend's key schedule is the standard one).
            debug_assert!(false, "GcmBackend::new: {} is not available", b.name());
            GcmBackend {
                sm4: Backend::Soft,
                ghash: GhashEngine::Soft,
            }
        }
    }

    /// Backend `b` with engine `e`, or `None` if the CPU lacks either or
    /// the pair has no runner (test hook).
    pub(crate) fn with_engine(b: Backend, e: GhashEngine) -> Option<Self> {
        b.ghash_engines()
            .any(|x| x == e)
            .then_some(GcmBackend { sm4: b, ghash: e })
    }

    /// The SM4 backend.
    #[allow(dead_code)] // for the GCM driver
    pub(crate) fn backend(self) -> Backend {
        self.sm4
    }

    /// The GHASH engine.
    pub(crate) fn engine(self) -> GhashEngine {
        self.ghash
    }
}

/// The backend for a new key: forced cfg, Miri, runtime checks (best first),
/// compile-time NEON, soft.
pub(crate) fn detect() -> Backend {
    if let Some(b) = FORCED {
        assert!(
            b.is_available(),
            "sm4: the backend forced by --cfg sm4_backend=\"{}\" is not supported by this CPU",
            b.name()
        );
        return b;
    }
    if cfg!(miri) {
        return Backend::Soft;
    }
    for b in Backend::ALL {
        if b.is_available() {
            return b;
        }
    }
    Backend::Soft
}

/// The key schedule, through the backend's own instruction where it has one.
pub(crate) fn expand_key(key: &[u8; 16], b: Backend) -> [u32; 32] {
    match b {
        #[cfg(target_arch = "aarch64")]
        // SAFETY: `b` is only `Sm4ce` after `cpu_sm4` said the CPU has the
        // SM4 instructions (checked by `detect` / `with_backend`).
        Backend::Sm4ce => unsafe { sm4ce::expand_key(key) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `b` is only `Gfni` or `Gfni256` after `Backend::is_available`
        // found GFNI and AVX2 (`Gfni` requires AVX-512F, which implies AVX2).
        Backend::Gfni | Backend::Gfni256 => unsafe { gfni256::expand_key(key) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `b` is only `Avx` or `Vaes` after `Backend::is_available`
        // found AVX2 and AES-NI.
        Backend::Avx | Backend::Vaes => unsafe { avx::expand_key(key) },
        _ => soft::expand_key(key),
    }
}

/// Run `f` with backend `b`'s kernel, inside its `#[target_feature]`
/// runner.
#[inline]
pub(crate) fn with_kernel<F: KernelClosure>(b: Backend, f: F) -> F::Output {
    match b {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a `Backend` other than `Soft` is stored in an `Sm4` only
        // after `Backend::is_available` returned true for it.
        Backend::Gfni => unsafe { gfni::with_token(f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: see above.
        Backend::Gfni256 => unsafe { gfni256::with_token(f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: see above.
        Backend::Avx => unsafe { avx::with_token(f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: see above.
        Backend::Vaes => unsafe { vaes::with_token(f) },
        #[cfg(target_arch = "aarch64")]
        // SAFETY: see above.
        Backend::Sm4ce => unsafe { sm4ce::with_token(f) },
        #[cfg(target_arch = "aarch64")]
        // SAFETY: see above.
        Backend::Neon => unsafe { neon::with_token(f) },
        _ => f.call(soft::Token),
    }
}

/// A computation to run with an SM4 kernel and a GHASH engine inside one
/// `#[target_feature]` function (a rank-2 closure, like
/// [`KernelClosure`]).
pub(crate) trait GcmClosure {
    /// What the computation returns.
    type Output;
    /// Run it with SM4 kernel `k` and GHASH engine `g`.
    fn call<K: Kernel, G: Ghash>(self, k: K, g: G) -> Self::Output;
}

/// Make a GCM runner: one `#[target_feature]` function, with the union of
/// an SM4 backend's and a GHASH engine's features, that calls a
/// [`GcmClosure`] with both tokens (so the driver's hashing is inlined
/// beside the SM4 rounds).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
macro_rules! gcm_runner {
    // Beside the portable engine (no feature of its own).
    ($run:ident, $kernel:expr, soft, $feat:literal) => {
        gcm_runner!(@fn $run, $feat, f => f.call($kernel, SoftGhash));
    };
    ($run:ident, $kernel:expr, $ghash:path, $feat:literal) => {
        gcm_runner!(@fn $run, $feat, f => {
            // SAFETY: the runner's contract: the CPU has the features, the
            // engine's among them.
            f.call($kernel, unsafe { <$ghash>::new() })
        });
    };
    (@fn $run:ident, $feat:literal, $f:ident => $body:expr) => {
        /// Run a GCM driver with the features on.
        /// # Safety
        #[doc = concat!("The CPU supports ", $feat, ".")]
        #[target_feature(enable = $feat)]
        unsafe fn $run<F: GcmClosure>($f: F) -> F::Output {
            align_frame_to_cache_line();
            $body
        }
    };
}

#[cfg(target_arch = "x86_64")]
gcm_runner!(
    avx_clmul,
    avx::Token(()),
    crate::ghash::clmul::ClmulGhash,
    "avx2,aes,pclmulqdq"
);
#[cfg(target_arch = "x86_64")]
gcm_runner!(
    gfni256_clmul,
    gfni256::Token(()),
    crate::ghash::clmul::ClmulGhash,
    "gfni,avx2,pclmulqdq"
);
#[cfg(target_arch = "x86_64")]
gcm_runner!(
    avx_vpclmul256,
    avx::Token(()),
    crate::ghash::vpclmul256::Vpclmul256Ghash,
    "avx2,aes,pclmulqdq,vpclmulqdq"
);
#[cfg(target_arch = "x86_64")]
gcm_runner!(
    vaes_clmul,
    vaes::Token(()),
    crate::ghash::clmul::ClmulGhash,
    "avx2,aes,vaes,pclmulqdq"
);
#[cfg(target_arch = "x86_64")]
gcm_runner!(
    vaes_vpclmul256,
    vaes::Token(()),
    crate::ghash::vpclmul256::Vpclmul256Ghash,
    "avx2,aes,vaes,pclmulqdq,vpclmulqdq"
);
#[cfg(target_arch = "x86_64")]
gcm_runner!(
    gfni256_vpclmul256,
    gfni256::Token(()),
    crate::ghash::vpclmul256::Vpclmul256Ghash,
    "gfni,avx2,pclmulqdq,vpclmulqdq"
);
#[cfg(target_arch = "x86_64")]
gcm_runner!(
    gfni_vpclmul,
    gfni::Token(()),
    crate::ghash::vpclmul::VpclmulGhash,
    "gfni,avx512f,avx512bw,avx512vl,avx2,vpclmulqdq,pclmulqdq"
);
#[cfg(target_arch = "aarch64")]
gcm_runner!(
    neon_pmull,
    neon::Token(()),
    crate::ghash::pmull::PmullGhash,
    "neon,aes"
);
#[cfg(target_arch = "aarch64")]
gcm_runner!(
    sm4ce_pmull,
    sm4ce::Token(()),
    crate::ghash::pmull::PmullGhash,
    "neon,sm4,aes"
);
#[cfg(target_arch = "aarch64")]
gcm_runner!(neon_soft, neon::Token(()), soft, "neon");
#[cfg(target_arch = "aarch64")]
gcm_runner!(sm4ce_soft, sm4ce::Token(()), soft, "neon,sm4");

/// Run GCM driver `f` with `g`'s SM4 kernel and GHASH engine, inside their
/// shared `#[target_feature]` runner.
#[inline]
pub(crate) fn with_gcm<F: GcmClosure>(g: GcmBackend, f: F) -> F::Output {
    match (g.sm4, g.ghash) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a `GcmBackend` is made only by `GcmBackend::new` (from an
        // available backend, with the engine `ghash_engines` found) or
        // `with_engine` (which checks both): for `Gfni` that is
        // `cpu_gfni`, which includes VPCLMULQDQ and PCLMULQDQ.
        (Backend::Gfni, GhashEngine::Vpclmul) => unsafe { gfni_vpclmul(f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above; `Gfni256` passed `cpu_avx2_clmul` (AVX2 and
        // PCLMULQDQ) and the GFNI bit.
        (Backend::Gfni256, GhashEngine::Clmul) => unsafe { gfni256_clmul(f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above; `Avx` passed `cpu_avx` (AVX2, AES-NI and
        // PCLMULQDQ).
        (Backend::Avx, GhashEngine::Clmul) => unsafe { avx_clmul(f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above; `Gfni256` passed `cpu_avx2_clmul` and the GFNI
        // bit, the engine `cpu_avx2_clmul` and the VPCLMULQDQ bit
        // (`has_vpclmulqdq_bit`).
        (Backend::Gfni256, GhashEngine::Vpclmul256) => unsafe { gfni256_vpclmul256(f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above; `Avx` passed `cpu_avx` (AVX2, AES-NI and
        // PCLMULQDQ), the engine the VPCLMULQDQ bit.
        (Backend::Avx, GhashEngine::Vpclmul256) => unsafe { avx_vpclmul256(f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above; `Vaes` passed `cpu_avx` and the VAES bit.
        (Backend::Vaes, GhashEngine::Clmul) => unsafe { vaes_clmul(f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above; `Vaes` passed `cpu_avx` and the VAES bit, the
        // engine the VPCLMULQDQ bit.
        (Backend::Vaes, GhashEngine::Vpclmul256) => unsafe { vaes_vpclmul256(f) },
        #[cfg(target_arch = "aarch64")]
        // SAFETY: as above; `Sm4ce` passed `cpu_sm4` and the engine
        // `cpu_pmull` (AES).
        (Backend::Sm4ce, GhashEngine::Pmull) => unsafe { sm4ce_pmull(f) },
        #[cfg(target_arch = "aarch64")]
        // SAFETY: as above; `Neon` is compiled in (`target_feature =
        // "neon"`) and the engine passed `cpu_pmull` (AES).
        (Backend::Neon, GhashEngine::Pmull) => unsafe { neon_pmull(f) },
        #[cfg(target_arch = "aarch64")]
        // SAFETY: as above (`cpu_sm4`).
        (Backend::Sm4ce, GhashEngine::Soft) => unsafe { sm4ce_soft(f) },
        #[cfg(target_arch = "aarch64")]
        // SAFETY: as above (NEON compiled in).
        (Backend::Neon, GhashEngine::Soft) => unsafe { neon_soft(f) },
        _ => f.call(soft::Token, SoftGhash),
    }
}

/// Run `f` with backend `b` on the encryption schedule.
#[inline]
pub(crate) fn encrypt(b: Backend, rk: &[u32; 32], f: impl BlockCipherEncClosure<BlockSize = U16>) {
    match b {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a `Backend` other than `Soft` is stored in an `Sm4` only
        // after `Backend::is_available` returned true for it.
        Backend::Gfni => unsafe { gfni::encrypt_with(rk, f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: see above.
        Backend::Gfni256 => unsafe { gfni256::encrypt_with(rk, f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: see above.
        Backend::Avx => unsafe { avx::encrypt_with(rk, f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: see above.
        Backend::Vaes => unsafe { vaes::encrypt_with(rk, f) },
        #[cfg(target_arch = "aarch64")]
        // SAFETY: see above.
        Backend::Sm4ce => unsafe { sm4ce::encrypt_with(rk, f) },
        #[cfg(target_arch = "aarch64")]
        // SAFETY: see above.
        Backend::Neon => unsafe { neon::encrypt_with(rk, f) },
        _ => f.call(&soft::CipherBackend(rk)),
    }
}

/// Run `f` with backend `b` on the decryption (reversed) schedule.
#[inline]
pub(crate) fn decrypt(b: Backend, rk: &[u32; 32], f: impl BlockCipherDecClosure<BlockSize = U16>) {
    match b {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a `Backend` other than `Soft` is stored in an `Sm4` only
        // after `Backend::is_available` returned true for it.
        Backend::Gfni => unsafe { gfni::decrypt_with(rk, f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: see above.
        Backend::Gfni256 => unsafe { gfni256::decrypt_with(rk, f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: see above.
        Backend::Avx => unsafe { avx::decrypt_with(rk, f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: see above.
        Backend::Vaes => unsafe { vaes::decrypt_with(rk, f) },
        #[cfg(target_arch = "aarch64")]
        // SAFETY: see above.
        Backend::Sm4ce => unsafe { sm4ce::decrypt_with(rk, f) },
        #[cfg(target_arch = "aarch64")]
        // SAFETY: see above.
        Backend::Neon => unsafe { neon::decrypt_with(rk, f) },
        _ => f.call(&soft::CipherBackend(rk)),
    }
}
