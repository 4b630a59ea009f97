//! Backend selection (`detect()`, the forced `sm4_backend` cfg, the test
//! hook's `Backend` tag) and the glue that turns each kernel module into a
//! `cipher` backend run inside one `#[target_feature]` function per call.
//!
//! The kernel contract: each SIMD module `M` provides
//! `pub(crate) type ParBlocks` (blocks per batch it wants from the modes) and
//! `#[target_feature(..)] pub(crate) unsafe fn crypt_blocks(rk: &[u32; 32],
//! blocks: InOutBuf<'_, '_, Block<Sm4>>)` that encrypts (encryption schedule)
//! or decrypts (reversed schedule) any number of blocks, in place or not.

use crate::ghash::{GcmClosure, SoftGhash};
use crate::modes::TweakOrder;
use cipher::{
    Block, BlockCipherDecBackend, BlockCipherDecClosure, BlockCipherEncBackend,
    BlockCipherEncClosure, BlockSizeUser, InOut, InOutBuf, ParBlocks, ParBlocksSizeUser,
    consts::U16,
};

/// The two entry points of an x86 kernel module, written once: `crypt_block`
/// (the single-block path the modes' `encrypt_block` calls) and
/// `crypt_blocks` (full batches of `4 * group` blocks, then the tail padded
/// into one stack batch), over the module's own `one` and `groups::<G>`
/// (G groups of `group` blocks).
#[cfg(target_arch = "x86_64")]
macro_rules! x86_entry_points {
    (features = $features:literal, cpu = $cpu:literal, group = $group:literal) => {
        x86_entry_points!(
            features = $features,
            cpu = $cpu,
            group = $group,
            batch = groups::<4>
        );
    };
    (features = $features:literal, cpu = $cpu:literal, group = $group:literal,
     batch = $batch:path $(, lanes = $lanes:ident)?) => {
        /// Encrypt or decrypt one block on the single-block path (what the
        /// modes' `encrypt_block` / `decrypt_block` call), without the batch
        /// dispatch of [`crypt_blocks`].
        ///
        /// # Safety
        #[doc = concat!("The CPU supports ", $cpu, ".")]
        #[inline]
        #[target_feature(enable = $features)]
        pub(crate) unsafe fn crypt_block(rk: &[u32; 32], block: InOut<'_, '_, Block<crate::Sm4>>) {
            let (inp, out) = block.into_raw();
            // SAFETY: an `InOut` holds one readable and one writable block.
            unsafe { one(rk, inp.cast(), out.cast()) };
        }

        /// Encrypt (rk = encryption schedule) or decrypt (rk = reversed
        /// schedule) any number of blocks, in place or out of place.
        ///
        /// # Safety
        #[doc = concat!("The CPU supports ", $cpu, ".")]
        #[inline]
        #[target_feature(enable = $features)]
        pub(crate) unsafe fn crypt_blocks(
            rk: &[u32; 32],
            blocks: InOutBuf<'_, '_, Block<crate::Sm4>>,
        ) {
            const BATCH: usize = 4 * $group;
            let n = blocks.len();
            let (inp, out) = blocks.into_raw();
            let (inp, out) = (inp.cast::<u8>(), out.cast::<u8>());
            if n == 1 {
                // SAFETY: one block in and out (InOutBuf of length 1).
                unsafe { one(rk, inp, out) };
                return;
            }
            let mut done = 0;
            while n - done >= BATCH {
                // SAFETY: BATCH blocks remain at offset `done` in both
                // buffers, which InOutBuf guarantees equal or disjoint.
                unsafe { $batch(rk, inp.add(16 * done), out.add(16 * done)) };
                done += BATCH;
            }
            let rest = n - done;
            // SAFETY: `rest` blocks remain at `done` in both buffers, equal
            // or disjoint (the lane paths load every block before storing).
            unsafe {
                let (inp, out) = (inp.add(16 * done), out.add(16 * done));
                match rest {
                    0 => return,
                    1 => return one(rk, inp, out),
                    $(2 => return $lanes::<2>(rk, inp, out),
                    3 => return $lanes::<3>(rk, inp, out),
                    4 => return $lanes::<4>(rk, inp, out),)?
                    _ => {}
                }
            }
            let mut buf = [0u8; 16 * BATCH];
            // SAFETY: `rest` blocks remain readable at `done`; `buf` is a
            // separate local buffer of BATCH blocks.
            unsafe {
                core::ptr::copy_nonoverlapping(inp.add(16 * done), buf.as_mut_ptr(), 16 * rest)
            };
            let p = buf.as_mut_ptr();
            // SAFETY: `buf` holds BATCH blocks, in place.
            unsafe {
                match rest.div_ceil($group) {
                    1 => groups::<1>(rk, p, p),
                    2 => groups::<2>(rk, p, p),
                    3 => groups::<3>(rk, p, p),
                    _ => $batch(rk, p, p),
                }
            }
            // SAFETY: `rest` blocks remain writable at `done`.
            unsafe { core::ptr::copy_nonoverlapping(buf.as_ptr(), out.add(16 * done), 16 * rest) };
        }

        /// Encrypt or decrypt the first `n` (1 to 4) of four blocks in
        /// place, at the single-block latency where the module has a lane
        /// path.
        ///
        /// # Safety
        #[doc = concat!("The CPU supports ", $cpu, ".")]
        #[inline]
        #[target_feature(enable = $features)]
        pub(crate) unsafe fn crypt_lanes(
            rk: &[u32; 32],
            blocks: &mut [Block<crate::Sm4>; 4],
            n: usize,
        ) {
            let p = blocks.as_mut_ptr().cast::<u8>();
            // SAFETY: `blocks` holds four blocks, in place.
            unsafe {
                match n {
                    1 => one(rk, p, p),
                    $(2 => $lanes::<2>(rk, p, p),
                    3 => $lanes::<3>(rk, p, p),
                    4 => $lanes::<4>(rk, p, p),)?
                    _ => crypt_blocks(rk, (&mut blocks[..n]).into()),
                }
            }
        }

        /// Encrypt or decrypt the first `n` blocks (`1..=STAGE`) of a stage
        /// in place: full batches, then the rest rounded up to whole groups
        /// (the blocks after `n` are scratch), one block on the latency path.
        ///
        /// # Safety
        #[doc = concat!("The CPU supports ", $cpu, ".")]
        #[inline]
        #[target_feature(enable = $features)]
        pub(crate) unsafe fn crypt_stage(rk: &[u32; 32], stage: &mut super::Stage, n: usize) {
            const BATCH: usize = 4 * $group;
            const _: () = assert!(super::STAGE % BATCH == 0);
            debug_assert!((1..=super::STAGE).contains(&n));
            let p = stage.0.as_mut_ptr().cast::<u8>();
            // SAFETY: (every call) the stage holds STAGE blocks; a batch or
            // group run starts at a multiple of BATCH and ends at most at
            // the next one, which STAGE is a multiple of.
            unsafe {
                match n {
                    1 => return one(rk, p, p),
                    $(2 => return $lanes::<2>(rk, p, p),
                    3 => return $lanes::<3>(rk, p, p),
                    4 => return $lanes::<4>(rk, p, p),)?
                    _ => {}
                }
                let mut done = 0;
                while n - done >= BATCH {
                    $batch(rk, p.add(16 * done), p.add(16 * done));
                    done += BATCH;
                }
                let p = p.add(16 * done);
                match (n - done).div_ceil($group) {
                    0 => {}
                    1 => groups::<1>(rk, p, p),
                    2 => groups::<2>(rk, p, p),
                    3 => groups::<3>(rk, p, p),
                    _ => $batch(rk, p, p),
                }
            }
        }
    };
}

pub(crate) mod soft;

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[macro_use]
mod ghash_body;

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx;
#[cfg(target_arch = "x86_64")]
pub(crate) mod gfni;
#[cfg(target_arch = "x86_64")]
pub(crate) mod gfni256;
#[cfg(target_arch = "x86_64")]
pub(crate) mod ghash_clmul;
#[cfg(target_arch = "x86_64")]
pub(crate) mod ghash_vpclmul;
#[cfg(target_arch = "x86_64")]
pub(crate) mod ghash_vpclmul256;
#[cfg(target_arch = "x86_64")]
mod x86_modes;

#[cfg(target_arch = "aarch64")]
pub(crate) mod ghash_pmull;
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
// engine beside `avx` and `gfni256` adds the VPCLMULQDQ bit
// (`has_vpclmulqdq_bit`) to `cpu_avx2_clmul`.
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
    pub const ALL: [Backend; 6] = [
        Backend::Gfni,
        Backend::Gfni256,
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
    /// x86_64 PCLMULQDQ on `xmm` (beside `avx` and `gfni256`).
    Clmul,
    /// x86_64 VPCLMULQDQ on `zmm` (beside `gfni`).
    Vpclmul,
    /// x86_64 VPCLMULQDQ on `ymm`, AVX2 only (beside `avx` and `gfni256`
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
            Backend::Gfni256 | Backend::Avx => &[GhashEngine::Vpclmul256, GhashEngine::Clmul],
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
        // SAFETY: `b` is only `Avx` after `Backend::is_available` found AVX2
        // and AES-NI.
        Backend::Avx => unsafe { avx::expand_key(key) },
        _ => soft::expand_key(key),
    }
}

/// Blocks per stage of the fused mode drivers (`crate::modes`): the widest
/// batch of any kernel (`gfni`'s 64), and a whole number of every
/// kernel's batch.
pub(crate) const STAGE: usize = 64;
/// Calls of the side work per stage in [`Kernel::ctr_xor_beside`].
pub(crate) const SIDE_STEPS: usize = 4;

/// CTR on kernel module `$m` (`gfni256`, `avx`) over `$batches` batches of
/// 32 blocks from `$inp` to `$out`, the counters from `$c`, with `$side`
/// between the rounds (see `gfni256::groups_with`). Expanded inside an
/// `unsafe` block whose contract is: the CPU supports the module's
/// features; `$inp` is readable and `$out` writable for `32 * $batches`
/// blocks, equal or disjoint; the low 64 bits of `$c` do not carry within
/// them; `$side` does not write them.
#[cfg(target_arch = "x86_64")]
macro_rules! fused_ctr {
    ($m:ident, $rk:expr, $c:expr, $inp:expr, $out:expr, $batches:expr, $side:expr) => {{
        let (inp, out): (*const u8, *mut u8) = ($inp, $out);
        let side = $side;
        for b in 0..$batches {
            let off = 16 * 32 * b;
            // Batch `b` of the blocks (the expansion is inside the caller's
            // `unsafe` block, under its contract).
            $m::groups_with::<4, true>(
                $rk,
                inp.add(off),
                out.add(off),
                $c.wrapping_add(32 * b as u128),
                side,
            );
        }
    }};
}

/// `block = E(counter)` for each of up to four `extra` pairs of
/// [`Kernel::ctr_xor`], on the kernel's lanes (one block's latency).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
fn crypt_extras<K: Kernel>(k: K, rk: &[u32; 32], extra: &mut [(u128, Block<crate::Sm4>)]) {
    if extra.is_empty() {
        return;
    }
    let mut v = [Block::<crate::Sm4>::default(); 4];
    for (b, (ctr, _)) in v.iter_mut().zip(extra.iter()) {
        *b = ctr.to_be_bytes().into();
    }
    k.crypt_lanes(rk, &mut v, extra.len());
    for (b, (_, out)) in v.iter().zip(extra.iter_mut()) {
        *out = *b;
    }
}

/// The blocks a mode driver hands a kernel at once, encrypted in place.
#[repr(C, align(64))]
pub(crate) struct Stage(pub(crate) [Block<crate::Sm4>; STAGE]);

impl Stage {
    /// A zeroed stage (the kernels read the padding after the blocks in
    /// use, so it is initialised once per call).
    #[inline(always)]
    pub(crate) fn new() -> Self {
        Stage([Block::<crate::Sm4>::default(); STAGE])
    }

    /// Overwrite the stage (it held keystream, plaintext or tweaks).
    #[inline(always)]
    pub(crate) fn wipe(&mut self) {
        // Block by block: `hybrid-array`'s `Zeroize` is behind a feature
        // that `cipher/zeroize` does not turn on.
        #[cfg(feature = "zeroize")]
        for b in self.0.iter_mut() {
            zeroize::Zeroize::zeroize(&mut b.0);
        }
    }
}

/// A stage made on first use and kept for a whole call (zeroing one costs
/// about as much as filling it, so drivers that work stage by stage keep
/// one), wiped when dropped.
pub(crate) struct LazyStage(Option<Stage>);

impl LazyStage {
    /// No stage yet.
    #[inline(always)]
    pub(crate) fn new() -> Self {
        LazyStage(None)
    }

    /// The stage, made now if it is not yet.
    #[inline(always)]
    pub(crate) fn get(&mut self) -> &mut Stage {
        self.0.get_or_insert_with(Stage::new)
    }
}

impl Drop for LazyStage {
    #[inline(always)]
    fn drop(&mut self) {
        if let Some(s) = self.0.as_mut() {
            s.wipe();
        }
    }
}

/// What the fused mode drivers need from a backend. Each backend has a
/// token type that implements it, and only that backend's
/// `#[target_feature]` runner ([`with_kernel`]) makes one, so holding a
/// token means the CPU has the features; the drivers, generic over the
/// token and inlined into the runner, are compiled with them.
pub(crate) trait Kernel: Copy {
    /// Whether [`crypt_lanes`](Self::crypt_lanes) takes up to four blocks
    /// in the time of one, so that a chain's side lanes are free.
    const FREE_LANES: bool;

    /// Whether [`xts_run`](Self::xts_run) has a path of its own (else the
    /// XTS driver stages the blocks).
    const XTS_RUNS: bool = false;

    /// XTS over a run of whole blocks in place, the tweaks `t·x^j` (`t` in
    /// `O`'s number form); returns the tweak after the run. Only called
    /// where [`XTS_RUNS`](Self::XTS_RUNS) is set; this default takes one
    /// block at a time.
    #[inline(always)]
    fn xts_run<O: TweakOrder>(
        self,
        rk: &[u32; 32],
        t: u128,
        blocks: &mut [Block<crate::Sm4>],
    ) -> u128 {
        let mut t = t;
        for b in blocks.iter_mut() {
            let w = O::store(t);
            let mut x = crate::modes::xor(b, &w);
            self.crypt_block(rk, &mut x);
            *b = crate::modes::xor(&x, &w);
            t = O::mul_x(t);
        }
        t
    }

    /// Encrypt (`rk` = encryption schedule) or decrypt (reversed schedule)
    /// the first `n` blocks of `stage` in place, `1 <= n <= STAGE`, with the
    /// widest batches first; the blocks after `n` may be overwritten.
    fn crypt_stage(self, rk: &[u32; 32], stage: &mut Stage, n: usize);

    /// One block in place, on the backend's latency-optimised path.
    fn crypt_block(self, rk: &[u32; 32], block: &mut Block<crate::Sm4>);

    /// The mode drivers' own work, portable here; backends with vector
    /// units override it.
    ///
    /// Counter blocks `c, c + 1, ...` (128-bit big-endian) into `stage`.
    #[inline(always)]
    fn ctr_fill(self, c: u128, stage: &mut [Block<crate::Sm4>]) {
        for (j, b) in stage.iter_mut().enumerate() {
            *b = c.wrapping_add(j as u128).to_be_bytes().into();
        }
    }

    /// XTS whitening of a run of blocks: `tweaks[j] = t·x^j`,
    /// `stage[j] = data[j] ^ tweaks[j]` (the three of equal length), or
    /// only the tweaks if `stage` is empty.
    #[inline(always)]
    fn xts_whiten<O: TweakOrder>(
        self,
        t: u128,
        data: &[Block<crate::Sm4>],
        stage: &mut [Block<crate::Sm4>],
        tweaks: &mut [Block<crate::Sm4>],
    ) {
        let whiten = !stage.is_empty();
        let mut t = t;
        for (j, w) in tweaks.iter_mut().enumerate() {
            *w = O::store(t);
            if whiten {
                stage[j] = crate::modes::xor(&data[j], w);
            }
            t = O::mul_x(t);
        }
    }

    /// Whether [`crypt_stage_xts`](Self::crypt_stage_xts) takes every full
    /// stage (so that the driver makes only the tweaks for it).
    const XTS_FOLDS: bool = false;

    /// Up to four blocks (`n` of them) in place, at the single-block
    /// latency where the backend has such a path.
    fn crypt_lanes(self, rk: &[u32; 32], blocks: &mut [Block<crate::Sm4>; 4], n: usize);

    /// Up to four blocks given as values (each the 16 bytes read as a
    /// native-endian number, as [`ChainIo::feed`] gives them), `n` of them
    /// in use, encrypted at the single-block latency where the backend can.
    #[inline(always)]
    fn crypt_values(self, rk: &[u32; 32], v: [u128; 4], n: usize) -> [Block<crate::Sm4>; 4] {
        let mut b = v.map(|x| Block::<crate::Sm4>::from(x.to_ne_bytes()));
        self.crypt_lanes(rk, &mut b, n);
        b
    }

    /// A serial chain of encryptions (CBC encryption, CBC-MAC, CFB
    /// encryption, CCM): at step `s`, `io.feed(s)` gives the block `B` and
    /// up to `lanes - 1` independent side blocks; the chained block
    /// `I = state ^ B` and the side blocks are encrypted together, `state`
    /// becomes `E(I)`, and `io.emit(s, outputs, I)` receives the outputs
    /// (`E(I)` first, then the side blocks').
    #[inline(always)]
    fn chain(
        self,
        rk: &[u32; 32],
        state: &mut Block<crate::Sm4>,
        steps: usize,
        lanes: usize,
        io: &mut impl ChainIo,
    ) {
        for s in 0..steps {
            let mut v = io
                .feed(s)
                .map(|b| Block::<crate::Sm4>::from(b.to_ne_bytes()));
            let input = crate::modes::xor(state, &v[0]);
            v[0] = input;
            self.crypt_lanes(rk, &mut v, io.blocks(s).min(lanes));
            *state = v[0];
            io.emit(s, &v, &input);
        }
    }

    /// CTR over whole blocks: the keystream `E(c), E(c + 1), ...` (128-bit
    /// big-endian counters) XORed into `blocks`; and each `extra` pair
    /// `(counter, block)` gets `block = E(counter)`, encrypted with them
    /// (a message's partial tail, GCM's `E(J0)`).
    #[inline(always)]
    fn ctr_xor(
        self,
        rk: &[u32; 32],
        c: u128,
        blocks: InOutBuf<'_, '_, Block<crate::Sm4>>,
        extra: &mut [(u128, Block<crate::Sm4>)],
        stage: &mut LazyStage,
    ) {
        crate::modes::ctr_stages(self, rk, c, blocks, extra, stage.get());
    }

    /// [`ctr_xor`](Self::ctr_xor) beside other work in [`SIDE_STEPS`]
    /// steps (GCM's GHASH of a stage): `side(s, input)` runs the next `s`
    /// steps and may read `input`, the input of the blocks of those steps,
    /// not yet overwritten. A kernel may spread the steps between the
    /// rounds of a full stage, where their dependency chains leave the
    /// vector units idle; by default all run first, in one call.
    #[inline(always)]
    fn ctr_xor_beside(
        self,
        rk: &[u32; 32],
        c: u128,
        blocks: InOutBuf<'_, '_, Block<crate::Sm4>>,
        extra: &mut [(u128, Block<crate::Sm4>)],
        stage: &mut LazyStage,
        side: &mut impl FnMut(usize, &[Block<crate::Sm4>]),
    ) {
        side(SIDE_STEPS, blocks.get_in());
        self.ctr_xor(rk, c, blocks, extra, stage);
    }

    /// CBC decryption of whole blocks (`rk` the decryption schedule), the
    /// chaining value `iv` updated.
    #[inline(always)]
    fn cbc_decrypt(
        self,
        rk: &[u32; 32],
        iv: &mut Block<crate::Sm4>,
        blocks: InOutBuf<'_, '_, Block<crate::Sm4>>,
        stage: &mut LazyStage,
    ) {
        crate::modes::cbc_stages(self, rk, iv, blocks, stage.get());
    }

    /// CFB decryption of whole blocks, the chaining value `iv` updated;
    /// `tail`, if given, receives the keystream block after them.
    #[inline(always)]
    fn cfb_decrypt(
        self,
        rk: &[u32; 32],
        iv: &mut Block<crate::Sm4>,
        blocks: InOutBuf<'_, '_, Block<crate::Sm4>>,
        tail: Option<&mut Block<crate::Sm4>>,
        stage: &mut LazyStage,
    ) {
        crate::modes::cfb_stages(self, rk, iv, blocks, tail, stage.get());
    }

    /// A full stage encrypted with its keystream XORed straight into
    /// `data` (`out = in ^ E(stage)`, 64 blocks), where the kernel can fold
    /// the XOR into its stores; `false` (nothing done) where it cannot.
    #[inline(always)]
    fn crypt_stage_xor(
        self,
        _rk: &[u32; 32],
        _stage: &Stage,
        _data: InOutBuf<'_, '_, Block<crate::Sm4>>,
    ) -> bool {
        false
    }

    /// A full stage of XTS in place, `data = E(data ^ T) ^ T` with the
    /// tweaks `T` in `tweaks` (64 blocks), where the kernel can fold both
    /// XORs into its loads and stores; `false` (nothing done) where it
    /// cannot.
    #[inline(always)]
    fn crypt_stage_xts(
        self,
        _rk: &[u32; 32],
        _tweaks: &Stage,
        _data: &mut [Block<crate::Sm4>],
    ) -> bool {
        false
    }

    /// `out = in ^ ks`, block by block (`ks` at least as long).
    #[inline(always)]
    fn xor_into(self, mut data: InOutBuf<'_, '_, Block<crate::Sm4>>, ks: &[Block<crate::Sm4>]) {
        for (j, k) in ks.iter().enumerate().take(data.len()) {
            let mut b = data.get(j);
            let v = crate::modes::xor(b.get_in(), k);
            *b.get_out() = v;
        }
    }
}

/// The two ends of [`Kernel::chain`]: what goes into each step and where
/// its outputs go.
pub(crate) trait ChainIo {
    /// Step `s`'s block to chain and its side blocks, each as the 16 bytes
    /// read as a native-endian number (`u128::from_ne_bytes`): values, so
    /// that a block built from parts (a counter) goes to the kernel in
    /// registers, not through partial stores that its loads could not take
    /// their data from.
    fn feed(&mut self, s: usize) -> [u128; 4];
    /// How many of step `s`'s four blocks are in use (after `feed(s)`); a
    /// kernel whose lanes cost work encrypts only those.
    fn blocks(&self, _s: usize) -> usize {
        1
    }
    /// Step `s`'s outputs (the chained block's first) and chained input.
    /// (`feed(s + 1)` may come before `emit(s)`: a kernel may prepare the
    /// next step's blocks while the chain runs.)
    fn emit(&mut self, s: usize, out: &[Block<crate::Sm4>; 4], input: &Block<crate::Sm4>);
}

/// A computation to run with a backend's kernel (a rank-2 closure: the
/// body is generic over the token type).
pub(crate) trait KernelClosure {
    /// What the computation returns.
    type Output;
    /// Run it with kernel `k`.
    fn call<K: Kernel>(self, k: K) -> Self::Output;
}

/// The portable kernel (needs no CPU feature).
#[derive(Clone, Copy)]
pub(crate) struct SoftKernel;

impl Kernel for SoftKernel {
    // One block runs the circuit on a word; more take the 16-block slices.
    const FREE_LANES: bool = false;

    #[inline(always)]
    fn crypt_stage(self, rk: &[u32; 32], stage: &mut Stage, n: usize) {
        soft::crypt_blocks(rk, (&mut stage.0[..n]).into());
    }
    #[inline(always)]
    fn crypt_block(self, rk: &[u32; 32], block: &mut Block<crate::Sm4>) {
        soft::crypt_blocks(rk, core::slice::from_mut(block).into());
    }
    #[inline(always)]
    fn crypt_lanes(self, rk: &[u32; 32], blocks: &mut [Block<crate::Sm4>; 4], n: usize) {
        soft::crypt_blocks(rk, (&mut blocks[..n]).into());
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
        Backend::Gfni => unsafe { gfni_kernel(f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: see above.
        Backend::Gfni256 => unsafe { gfni256_kernel(f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: see above.
        Backend::Avx => unsafe { avx_kernel(f) },
        #[cfg(target_arch = "aarch64")]
        // SAFETY: see above.
        Backend::Sm4ce => unsafe { sm4ce_kernel(f) },
        #[cfg(target_arch = "aarch64")]
        // SAFETY: see above.
        Backend::Neon => unsafe { neon_kernel(f) },
        _ => f.call(SoftKernel),
    }
}

/// One block as a buffer of one.
#[inline(always)]
fn one<'i, 'o>(block: InOut<'i, 'o, Block<crate::Sm4>>) -> InOutBuf<'i, 'o, Block<crate::Sm4>> {
    let (i, o) = block.into_raw();
    // SAFETY: `i` and `o` come from one valid `InOut` (equal or disjoint,
    // each valid for one block for the borrow's lifetime).
    unsafe { InOutBuf::from_raw(i, o, 1) }
}

/// The soft backend as a `cipher` backend.
pub(crate) struct SoftBackend<'a>(&'a [u32; 32]);

impl BlockSizeUser for SoftBackend<'_> {
    type BlockSize = U16;
}
impl ParBlocksSizeUser for SoftBackend<'_> {
    type ParBlocksSize = soft::ParBlocks;
}
impl BlockCipherEncBackend for SoftBackend<'_> {
    #[inline(always)]
    fn encrypt_block(&self, block: InOut<'_, '_, Block<Self>>) {
        soft::crypt_blocks(self.0, one(block));
    }
    #[inline(always)]
    fn encrypt_par_blocks(&self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
        soft::crypt_blocks(self.0, blocks.into_buf());
    }
    #[inline(always)]
    fn encrypt_tail_blocks(&self, blocks: InOutBuf<'_, '_, Block<Self>>) {
        soft::crypt_blocks(self.0, blocks);
    }
}
impl BlockCipherDecBackend for SoftBackend<'_> {
    #[inline(always)]
    fn decrypt_block(&self, block: InOut<'_, '_, Block<Self>>) {
        soft::crypt_blocks(self.0, one(block));
    }
    #[inline(always)]
    fn decrypt_par_blocks(&self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
        soft::crypt_blocks(self.0, blocks.into_buf());
    }
    #[inline(always)]
    fn decrypt_tail_blocks(&self, blocks: InOutBuf<'_, '_, Block<Self>>) {
        soft::crypt_blocks(self.0, blocks);
    }
}

/// Realign the calling frame to 64 bytes. The mode crates (`ctr`, `cbc`,
/// `cfb-mode` through `cipher`) keep their batch buffers on the stack, in
/// the closure that the runners below call, so where those buffers fall
/// against cache lines followed the caller's stack offset: with ASLR off
/// and the stack moved through the environment, `gfni` CTR at 4096 bytes
/// read 1.01 c/B at one 16-byte offset in four and 1.12-1.18 at the
/// others (the kernel alone does not care: 0.720-0.723 c/B at every
/// offset of its buffer). From a 64-byte-aligned frame it reads 1.01-1.02
/// at every offset, and CBC decryption 0.81-0.84 instead of 0.84-0.90.
/// (Measured on x86_64 only; a no-op on aarch64, the other SIMD target.)
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
fn align_frame_to_cache_line() {
    #[cfg(target_arch = "x86_64")]
    {
        #[repr(align(64))]
        #[allow(dead_code)] // only its alignment matters
        struct CacheLine(u8);
        let line = CacheLine(0);
        // Keeps the aligned slot, and with it the realignment, in the frame.
        core::hint::black_box(&line);
    }
}

/// Make a `cipher` backend struct for kernel module `$m` and the two
/// `#[target_feature]` runner functions that call the mode's closure with it.
/// (Only the SIMD targets have kernel modules.)
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
macro_rules! simd_backend {
    // Single blocks through the batch entry point.
    (@one $m:ident, $rk:expr, $block:expr) => {
        $m::crypt_blocks($rk, one($block))
    };
    // Single blocks straight to the module's own single-block entry point
    // (no batch dispatch, no stack frame for the tail buffer).
    (@one $m:ident, $rk:expr, $block:expr, $single:ident) => {
        $m::$single($rk, $block)
    };
    // The x86 kernels take the drivers' own work from `x86_modes`, at the
    // width of their batches.
    (@modes $modes:ident) => {
        #[inline(always)]
        fn ctr_fill(self, c: u128, stage: &mut [Block<crate::Sm4>]) {
            // SAFETY: the token exists only inside its backend's runner,
            // whose features include those of the width module (AVX2 for
            // `ymm`, AVX-512F/BW for `zmm`).
            unsafe { x86_modes::$modes::ctr_fill(c, stage) }
        }
        #[inline(always)]
        fn xts_whiten<O: TweakOrder>(
            self,
            t: u128,
            data: &[Block<crate::Sm4>],
            stage: &mut [Block<crate::Sm4>],
            tweaks: &mut [Block<crate::Sm4>],
        ) {
            // SAFETY: as in `ctr_fill`.
            unsafe { x86_modes::$modes::xts_whiten::<O>(t, data, stage, tweaks) }
        }
        #[inline(always)]
        fn xor_into(self, data: InOutBuf<'_, '_, Block<crate::Sm4>>, ks: &[Block<crate::Sm4>]) {
            let n = data.len();
            assert!(ks.len() >= n);
            let (i, o) = data.into_raw();
            // SAFETY: as in `ctr_fill`; `InOutBuf` holds `n` blocks in and
            // out, equal or disjoint, and `ks` (a separate borrow) `n`.
            unsafe { x86_modes::$modes::xor_blocks(i, ks.as_ptr(), o, n) }
        }
    };
    // Whether a kernel's lanes are free: the lane paths of `gfni` and
    // `gfni256`, NEON's four-block group; not `avx`'s eight-block group
    // (its single block broadcasts), and not `sm4ce`, where a lane is
    // eight more `sm4e` and the side lanes' bookkeeping cost more
    // instructions than a separate CTR pass (CCM: 6.5 instructions per
    // byte with the counters in the lanes, 2.6 without).
    (@free avx) => { false };
    (@free sm4ce) => { false };
    (@free $m:ident) => { true };
    // The kernels with lane paths (`x86_modes::lane_paths!`).
    (@lanes $m:ident) => {
        #[inline(always)]
        fn crypt_values(self, rk: &[u32; 32], v: [u128; 4], _n: usize) -> [Block<crate::Sm4>; 4] {
            // SAFETY: the token exists only inside its backend's runner.
            unsafe { $m::crypt_values(rk, v) }
        }
        #[inline(always)]
        fn chain(
            self,
            rk: &[u32; 32],
            state: &mut Block<crate::Sm4>,
            steps: usize,
            _lanes: usize,
            io: &mut impl ChainIo,
        ) {
            // SAFETY: the token exists only inside its backend's runner.
            unsafe { $m::chain(rk, state, steps, io) }
        }
    };
    // The `sm4ce` kernel's whole-block CTR and CBC decryption, in
    // registers (for the instruction count; see `sm4ce::ctr_xor`).
    (@extra sm4ce) => {
        #[inline(always)]
        fn ctr_xor(
            self,
            rk: &[u32; 32],
            c: u128,
            blocks: InOutBuf<'_, '_, Block<crate::Sm4>>,
            extra: &mut [(u128, Block<crate::Sm4>)],
            stage: &mut LazyStage,
        ) {
            let n = blocks.len();
            if crate::ct::counter_carries(c, n) || extra.len() > 4 {
                // The low half carries (once in 2^64 blocks; a public answer,
                // declassified in `ct`).
                return crate::modes::ctr_stages(self, rk, c, blocks, extra, stage.get());
            }
            let (i, o) = blocks.into_raw();
            // SAFETY: the token exists only inside the `sm4ce` runner;
            // `InOutBuf` holds `n` blocks in and out, equal or disjoint.
            unsafe { sm4ce::ctr_xor(rk, c, i.cast(), o.cast(), n) };
            crypt_extras(self, rk, extra);
        }
        #[inline(always)]
        fn cbc_decrypt(
            self,
            rk: &[u32; 32],
            iv: &mut Block<crate::Sm4>,
            blocks: InOutBuf<'_, '_, Block<crate::Sm4>>,
            _stage: &mut LazyStage,
        ) {
            let n = blocks.len();
            let (i, o) = blocks.into_raw();
            // SAFETY: as in `ctr_xor`.
            unsafe { sm4ce::cbc_decrypt(rk, &mut iv.0, i.cast(), o.cast(), n) };
        }
        #[inline(always)]
        fn cfb_decrypt(
            self,
            rk: &[u32; 32],
            iv: &mut Block<crate::Sm4>,
            blocks: InOutBuf<'_, '_, Block<crate::Sm4>>,
            tail: Option<&mut Block<crate::Sm4>>,
            _stage: &mut LazyStage,
        ) {
            let n = blocks.len();
            let (i, o) = blocks.into_raw();
            let mut ks = [0u8; 16];
            // SAFETY: as in `ctr_xor`.
            unsafe {
                sm4ce::cfb_decrypt(rk, &mut iv.0, i.cast(), o.cast(), n, tail.is_some(), &mut ks)
            };
            if let Some(t) = tail {
                *t = ks.into();
            }
        }
        simd_backend!(@chain sm4ce);
        const XTS_RUNS: bool = true;
        #[inline(always)]
        fn xts_run<O: TweakOrder>(
            self,
            rk: &[u32; 32],
            t: u128,
            blocks: &mut [Block<crate::Sm4>],
        ) -> u128 {
            let (p, n) = (blocks.as_mut_ptr().cast::<u8>(), blocks.len());
            // SAFETY: the token exists only inside the `sm4ce` runner;
            // `blocks` is `n` blocks, in place.
            unsafe {
                if O::GB {
                    sm4ce::xts_run::<true>(rk, t, p, n)
                } else {
                    sm4ce::xts_run::<false>(rk, t, p, n)
                }
            }
        }
    };
    // The `gfni` pair kernel folds a mode's XORs into its loads and stores.
    (@extra gfni) => {
        #[inline(always)]
        fn crypt_stage_xor(
            self,
            rk: &[u32; 32],
            stage: &Stage,
            data: InOutBuf<'_, '_, Block<crate::Sm4>>,
        ) -> bool {
            if data.len() != STAGE {
                return false;
            }
            let (i, o) = data.into_raw();
            let s = stage.0.as_ptr().cast::<u8>();
            // SAFETY: the token exists only inside the `gfni` runner; the
            // stage and `data` hold 64 blocks each, `data`'s in and out
            // equal or disjoint, the stage apart from both.
            unsafe { gfni::pairs_masked::<false, true>(rk, s, s, o.cast(), i.cast()) };
            true
        }
        #[inline(always)]
        fn crypt_stage_xts(
            self,
            rk: &[u32; 32],
            tweaks: &Stage,
            data: &mut [Block<crate::Sm4>],
        ) -> bool {
            if data.len() != STAGE {
                return false;
            }
            let p = data.as_mut_ptr().cast::<u8>();
            let t = tweaks.0.as_ptr().cast::<u8>();
            // SAFETY: the token exists only inside the `gfni` runner; `data`
            // and the tweaks hold 64 blocks each, `data` in place, the
            // tweaks apart.
            unsafe { gfni::pairs_masked::<true, true>(rk, p, t, p, t) };
            true
        }
        const XTS_FOLDS: bool = true;
    };
    // The AVX2 kernels make CTR's counters in registers; `gfni256` also
    // runs GCM's GHASH between its rounds.
    (@ctr $m:ident) => {
        #[inline(always)]
        fn ctr_xor(
            self,
            rk: &[u32; 32],
            c: u128,
            blocks: InOutBuf<'_, '_, Block<crate::Sm4>>,
            extra: &mut [(u128, Block<crate::Sm4>)],
            stage: &mut LazyStage,
        ) {
            const BATCH: usize = 32;
            let n = blocks.len();
            let full = n / BATCH * BATCH;
            if full == 0 || extra.len() > 4 || crate::ct::counter_carries(c, full) {
                // (The low half carries once in 2^64 blocks; declassified.)
                return crate::modes::ctr_stages(self, rk, c, blocks, extra, stage.get());
            }
            let (head, rest) = blocks.split_at(full);
            let (i, o) = head.into_raw();
            // SAFETY: the token exists only inside its backend's runner;
            // `head` holds `full` blocks in and out, equal or disjoint; the
            // low half of the counter does not carry (checked above).
            unsafe { fused_ctr!($m, rk, c, i.cast(), o.cast(), full / BATCH, &mut |_| {}) };
            let c = c.wrapping_add(full as u128);
            if rest.is_empty() {
                crypt_extras(self, rk, extra);
            } else {
                crate::modes::ctr_stages(self, rk, c, rest, extra, stage.get());
            }
        }
    };
    (@extra avx) => {
        simd_backend!(@ctr avx);
    };
    (@extra gfni256) => {
        simd_backend!(@ctr gfni256);
        #[inline(always)]
        fn ctr_xor_beside(
            self,
            rk: &[u32; 32],
            c: u128,
            blocks: InOutBuf<'_, '_, Block<crate::Sm4>>,
            extra: &mut [(u128, Block<crate::Sm4>)],
            stage: &mut LazyStage,
            side: &mut impl FnMut(usize, &[Block<crate::Sm4>]),
        ) {
            const BATCH: usize = 32;
            const STEP: usize = STAGE / SIDE_STEPS;
            const _: () = assert!(STAGE / BATCH * gfni256::SIDE_CALLS == SIDE_STEPS);
            let n = blocks.len();
            if n != STAGE || extra.len() > 4 || crate::ct::counter_carries(c, n) {
                // (The low half carries once in 2^64 blocks; declassified.)
                side(SIDE_STEPS, blocks.get_in());
                return self.ctr_xor(rk, c, blocks, extra, stage);
            }
            let (i, o) = blocks.into_raw();
            let (i, o) = (i.cast::<u8>(), o.cast::<u8>());
            let mut step = 0;
            // Each step's own input blocks, read before the batch that holds
            // them is written (its stores follow its last step).
            let mut own = |s: usize| {
                // SAFETY: blocks `STEP * step..` of the input, in this or a
                // later batch, not yet overwritten; the slice lives only for
                // this call.
                let input = unsafe {
                    core::slice::from_raw_parts(
                        i.cast::<Block<crate::Sm4>>().add(STEP * step),
                        STEP * s,
                    )
                };
                side(s, input);
                step += s;
            };
            // SAFETY: the token exists only inside the `gfni256` runner;
            // `blocks` holds STAGE blocks in and out (equal or disjoint); the
            // low half of the counter does not carry (checked above); `side`
            // reads the blocks of its steps or the caller's other data.
            unsafe { fused_ctr!(gfni256, rk, c, i, o, STAGE / BATCH, &mut own) };
            crypt_extras(self, rk, extra);
        }
    };
    (@extra neon) => {
        simd_backend!(@chain neon);
    };
    (@extra $m:ident) => {};
    // A chain kept in registers, with the kernel's constants loaded once.
    (@chain $m:ident) => {
        #[inline(always)]
        fn chain(
            self,
            rk: &[u32; 32],
            state: &mut Block<crate::Sm4>,
            steps: usize,
            _lanes: usize,
            io: &mut impl ChainIo,
        ) {
            // SAFETY: the token exists only inside its backend's runner.
            unsafe { $m::chain(rk, state, steps, io) }
        }
    };
    ($m:ident, $ty:ident, $enc:ident, $dec:ident, $token:ident, $run:ident, $feat:literal
     $(, $single:ident, $modes:ident $(, $lanes:ident)?)?) => {
        /// The cipher backend of one SIMD kernel module. Only the runner
        /// functions below construct it, after feature detection.
        pub(crate) struct $ty<'a>(&'a [u32; 32]);

        impl BlockSizeUser for $ty<'_> {
            type BlockSize = U16;
        }
        impl ParBlocksSizeUser for $ty<'_> {
            type ParBlocksSize = $m::ParBlocks;
        }
        impl BlockCipherEncBackend for $ty<'_> {
            #[inline(always)]
            fn encrypt_block(&self, block: InOut<'_, '_, Block<Self>>) {
                // SAFETY: this type only exists inside the runner, which is
                // entered only after the CPU was found to have the features.
                unsafe { simd_backend!(@one $m, self.0, block $(, $single)?) }
            }
            #[inline(always)]
            fn encrypt_par_blocks(&self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
                // SAFETY: as in `encrypt_block`.
                unsafe { $m::crypt_blocks(self.0, blocks.into_buf()) }
            }
            #[inline(always)]
            fn encrypt_tail_blocks(&self, blocks: InOutBuf<'_, '_, Block<Self>>) {
                // SAFETY: as in `encrypt_block`.
                unsafe { $m::crypt_blocks(self.0, blocks) }
            }
        }
        impl BlockCipherDecBackend for $ty<'_> {
            #[inline(always)]
            fn decrypt_block(&self, block: InOut<'_, '_, Block<Self>>) {
                // SAFETY: as in `encrypt_block`.
                unsafe { simd_backend!(@one $m, self.0, block $(, $single)?) }
            }
            #[inline(always)]
            fn decrypt_par_blocks(&self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
                // SAFETY: as in `encrypt_block`.
                unsafe { $m::crypt_blocks(self.0, blocks.into_buf()) }
            }
            #[inline(always)]
            fn decrypt_tail_blocks(&self, blocks: InOutBuf<'_, '_, Block<Self>>) {
                // SAFETY: as in `encrypt_block`.
                unsafe { $m::crypt_blocks(self.0, blocks) }
            }
        }

        /// Run an encryption closure with the features on.
        /// # Safety
        /// The CPU supports the features.
        #[target_feature(enable = $feat)]
        unsafe fn $enc(rk: &[u32; 32], f: impl BlockCipherEncClosure<BlockSize = U16>) {
            align_frame_to_cache_line();
            f.call(&$ty(rk));
        }

        /// Run a decryption closure with the features on.
        /// # Safety
        /// The CPU supports the features.
        #[target_feature(enable = $feat)]
        unsafe fn $dec(rk: &[u32; 32], f: impl BlockCipherDecClosure<BlockSize = U16>) {
            align_frame_to_cache_line();
            f.call(&$ty(rk));
        }

        /// The module's [`Kernel`] token; only its runner makes one.
        #[derive(Clone, Copy)]
        pub(crate) struct $token(());

        impl Kernel for $token {
            const FREE_LANES: bool = simd_backend!(@free $m);
            #[inline(always)]
            fn crypt_stage(self, rk: &[u32; 32], stage: &mut Stage, n: usize) {
                // SAFETY: the token exists only inside the runner, which is
                // entered only after the CPU was found to have the features.
                unsafe { $m::crypt_stage(rk, stage, n) }
            }
            #[inline(always)]
            fn crypt_block(self, rk: &[u32; 32], block: &mut Block<crate::Sm4>) {
                // SAFETY: as in `crypt_stage`.
                unsafe { simd_backend!(@one $m, rk, block.into() $(, $single)?) }
            }
            #[inline(always)]
            fn crypt_lanes(self, rk: &[u32; 32], blocks: &mut [Block<crate::Sm4>; 4], n: usize) {
                if n == 1 {
                    // The single-block entry point, inlined where the lane
                    // dispatch is not.
                    return self.crypt_block(rk, &mut blocks[0]);
                }
                // SAFETY: as in `crypt_stage`.
                unsafe { $m::crypt_lanes(rk, blocks, n) }
            }

            $(simd_backend!(@modes $modes); $(simd_backend!(@$lanes $m);)?)?
            simd_backend!(@extra $m);
        }

        /// Run a mode driver with the features on.
        /// # Safety
        /// The CPU supports the features.
        #[target_feature(enable = $feat)]
        unsafe fn $run<F: KernelClosure>(f: F) -> F::Output {
            f.call($token(()))
        }
    };
}

#[cfg(target_arch = "x86_64")]
simd_backend!(
    avx,
    AvxBackend,
    avx_enc,
    avx_dec,
    AvxKernel,
    avx_kernel,
    "avx2,aes",
    crypt_block,
    ymm
);
#[cfg(target_arch = "x86_64")]
simd_backend!(
    gfni,
    GfniBackend,
    gfni_enc,
    gfni_dec,
    GfniKernel,
    gfni_kernel,
    "gfni,avx512f,avx512bw,avx512vl,avx2",
    crypt_block,
    zmm,
    lanes
);
#[cfg(target_arch = "x86_64")]
simd_backend!(
    gfni256,
    Gfni256Backend,
    gfni256_enc,
    gfni256_dec,
    Gfni256Kernel,
    gfni256_kernel,
    "gfni,avx2",
    crypt_block,
    ymm,
    lanes
);
#[cfg(target_arch = "aarch64")]
simd_backend!(
    neon,
    NeonBackend,
    neon_enc,
    neon_dec,
    NeonKernel,
    neon_kernel,
    "neon"
);
#[cfg(target_arch = "aarch64")]
simd_backend!(
    sm4ce,
    Sm4ceBackend,
    sm4ce_enc,
    sm4ce_dec,
    Sm4ceKernel,
    sm4ce_kernel,
    "neon,sm4"
);

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
    AvxKernel(()),
    ghash_clmul::ClmulGhash,
    "avx2,aes,pclmulqdq"
);
#[cfg(target_arch = "x86_64")]
gcm_runner!(
    gfni256_clmul,
    Gfni256Kernel(()),
    ghash_clmul::ClmulGhash,
    "gfni,avx2,pclmulqdq"
);
#[cfg(target_arch = "x86_64")]
gcm_runner!(
    avx_vpclmul256,
    AvxKernel(()),
    ghash_vpclmul256::Vpclmul256Ghash,
    "avx2,aes,pclmulqdq,vpclmulqdq"
);
#[cfg(target_arch = "x86_64")]
gcm_runner!(
    gfni256_vpclmul256,
    Gfni256Kernel(()),
    ghash_vpclmul256::Vpclmul256Ghash,
    "gfni,avx2,pclmulqdq,vpclmulqdq"
);
#[cfg(target_arch = "x86_64")]
gcm_runner!(
    gfni_vpclmul,
    GfniKernel(()),
    ghash_vpclmul::VpclmulGhash,
    "gfni,avx512f,avx512bw,avx512vl,avx2,vpclmulqdq,pclmulqdq"
);
#[cfg(target_arch = "aarch64")]
gcm_runner!(
    neon_pmull,
    NeonKernel(()),
    ghash_pmull::PmullGhash,
    "neon,aes"
);
#[cfg(target_arch = "aarch64")]
gcm_runner!(
    sm4ce_pmull,
    Sm4ceKernel(()),
    ghash_pmull::PmullGhash,
    "neon,sm4,aes"
);
#[cfg(target_arch = "aarch64")]
gcm_runner!(neon_soft, NeonKernel(()), soft, "neon");
#[cfg(target_arch = "aarch64")]
gcm_runner!(sm4ce_soft, Sm4ceKernel(()), soft, "neon,sm4");

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
        _ => f.call(SoftKernel, SoftGhash),
    }
}

/// Run `f` with backend `b` on the encryption schedule.
#[inline]
pub(crate) fn encrypt(b: Backend, rk: &[u32; 32], f: impl BlockCipherEncClosure<BlockSize = U16>) {
    match b {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a `Backend` other than `Soft` is stored in an `Sm4` only
        // after `Backend::is_available` returned true for it.
        Backend::Gfni => unsafe { gfni_enc(rk, f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: see above.
        Backend::Gfni256 => unsafe { gfni256_enc(rk, f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: see above.
        Backend::Avx => unsafe { avx_enc(rk, f) },
        #[cfg(target_arch = "aarch64")]
        // SAFETY: see above.
        Backend::Sm4ce => unsafe { sm4ce_enc(rk, f) },
        #[cfg(target_arch = "aarch64")]
        // SAFETY: see above.
        Backend::Neon => unsafe { neon_enc(rk, f) },
        _ => f.call(&SoftBackend(rk)),
    }
}

/// Run `f` with backend `b` on the decryption (reversed) schedule.
#[inline]
pub(crate) fn decrypt(b: Backend, rk: &[u32; 32], f: impl BlockCipherDecClosure<BlockSize = U16>) {
    match b {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a `Backend` other than `Soft` is stored in an `Sm4` only
        // after `Backend::is_available` returned true for it.
        Backend::Gfni => unsafe { gfni_dec(rk, f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: see above.
        Backend::Gfni256 => unsafe { gfni256_dec(rk, f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: see above.
        Backend::Avx => unsafe { avx_dec(rk, f) },
        #[cfg(target_arch = "aarch64")]
        // SAFETY: see above.
        Backend::Sm4ce => unsafe { sm4ce_dec(rk, f) },
        #[cfg(target_arch = "aarch64")]
        // SAFETY: see above.
        Backend::Neon => unsafe { neon_dec(rk, f) },
        _ => f.call(&SoftBackend(rk)),
    }
}
