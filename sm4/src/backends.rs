//! Backend selection (`detect()`, the forced `sm4_backend` cfg, the test
//! hook's `Backend` tag) and the glue that turns each kernel module into a
//! `cipher` backend run inside one `#[target_feature]` function per call.
//!
//! The kernel contract: each SIMD module `M` provides
//! `pub(crate) type ParBlocks` (blocks per batch it wants from the modes) and
//! `#[target_feature(..)] pub(crate) unsafe fn crypt_blocks(rk: &[u32; 32],
//! blocks: InOutBuf<'_, '_, Block<Sm4>>)` that encrypts (encryption schedule)
//! or decrypts (reversed schedule) any number of blocks, in place or not.

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
     batch = $batch:path) => {
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
            if rest == 0 {
                return;
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
    };
}

pub(crate) mod soft;

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx;
#[cfg(target_arch = "x86_64")]
pub(crate) mod gfni;
#[cfg(target_arch = "x86_64")]
pub(crate) mod gfni256;

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

#[cfg(target_arch = "x86_64")]
cpufeatures::new!(cpu_avx, "avx2", "aes");
#[cfg(target_arch = "x86_64")]
cpufeatures::new!(cpu_gfni, "gfni", "avx512f", "avx512bw", "avx512vl");
#[cfg(target_arch = "x86_64")]
cpufeatures::new!(cpu_avx2, "avx2");
#[cfg(target_arch = "aarch64")]
cpufeatures::new!(cpu_sm4, "sm4");

/// GFNI present (CPUID.(EAX=7,ECX=0):ECX\[8\]); unlike cpufeatures' "gfni"
/// this does not require the OS to enable zmm state, so AVX2-only CPUs
/// with GFNI (Alder Lake E-cores, Tremont, Zen 3 has none) are found.
/// Checked once per process: CPUID traps to the hypervisor in a VM, and
/// `Sm4::new` asks on every key.
#[cfg(target_arch = "x86_64")]
fn has_gfni_bit() -> bool {
    use core::sync::atomic::{AtomicU8, Ordering};
    // 0: not checked yet, 1: no, 2: yes.
    static GFNI: AtomicU8 = AtomicU8::new(0);
    match GFNI.load(Ordering::Relaxed) {
        1 => return false,
        2 => return true,
        _ => {}
    }
    #[allow(unused_unsafe)]
    // SAFETY: the CPUID instruction exists on every x86_64 CPU; leaf 0 says
    // whether leaf 7 exists before we read it.
    let gfni = unsafe {
        use core::arch::x86_64::{__cpuid, __cpuid_count};
        __cpuid(0).eax >= 7 && (__cpuid_count(7, 0).ecx >> 8) & 1 == 1
    };
    GFNI.store(if gfni { 2 } else { 1 }, Ordering::Relaxed);
    gfni
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
            Backend::Gfni256 => cpu_avx2::get() && has_gfni_bit(),
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
    ($m:ident, $ty:ident, $enc:ident, $dec:ident, $feat:literal $(, $single:ident)?) => {
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
    };
}

#[cfg(target_arch = "x86_64")]
simd_backend!(avx, AvxBackend, avx_enc, avx_dec, "avx2,aes", crypt_block);
#[cfg(target_arch = "x86_64")]
simd_backend!(
    gfni,
    GfniBackend,
    gfni_enc,
    gfni_dec,
    "gfni,avx512f,avx512bw,avx512vl,avx2",
    crypt_block
);
#[cfg(target_arch = "x86_64")]
simd_backend!(
    gfni256,
    Gfni256Backend,
    gfni256_enc,
    gfni256_dec,
    "gfni,avx2",
    crypt_block
);
#[cfg(target_arch = "aarch64")]
simd_backend!(neon, NeonBackend, neon_enc, neon_dec, "neon");
#[cfg(target_arch = "aarch64")]
simd_backend!(sm4ce, Sm4ceBackend, sm4ce_enc, sm4ce_dec, "neon,sm4");

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
