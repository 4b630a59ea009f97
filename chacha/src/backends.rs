//! Backend selection and dispatch.

use cipher::inout::InOutBuf;

pub(crate) mod rounds;
pub(crate) mod soft;

/// Aligns the loop that follows to 64 bytes. The rounds loops are short
/// and run a few times per call; where the default 16-byte alignment puts
/// one across an extra fetch window, short messages measured up to 15%
/// slower, changing with unrelated code placement in the final binary.
#[cfg(all(target_arch = "x86_64", not(miri)))]
macro_rules! align_loop {
    () => {
        // SAFETY: an assembler alignment directive: NOP padding executed
        // once before the loop; no registers, memory or flags change.
        unsafe { core::arch::asm!(".p2align 6", options(nomem, nostack, preserves_flags)) }
    };
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
pub(crate) mod avx;
#[cfg(all(target_arch = "x86_64", not(miri)))]
pub(crate) mod avx512;
#[cfg(all(target_arch = "x86_64", not(miri)))]
mod cpu;
#[cfg(all(
    target_arch = "aarch64",
    target_endian = "little",
    target_feature = "neon",
    not(miri)
))]
pub(crate) mod neon;

#[cfg(all(target_arch = "x86_64", not(miri)))]
cpufeatures::new!(avx2_cpuid, "avx2");
#[cfg(all(target_arch = "x86_64", not(miri)))]
cpufeatures::new!(avx512_cpuid, "avx512f", "avx512vl");

/// A ChaCha implementation (test hook; not a stable API).
#[doc(hidden)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Backend {
    /// Portable Rust, one block at a time.
    Soft,
    /// x86_64 AVX2: 8 blocks per pass.
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    Avx,
    /// x86_64 AVX-512F/VL: 16 blocks per pass as two 8-block ymm sets
    /// (cores that split 512-bit operations in two: Zen 4).
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    Avx512,
    /// x86_64 AVX-512F/VL: 16 blocks per pass in one zmm set (cores with
    /// full-width 512-bit units); tails and HChaCha as `Avx512`.
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    Avx512Zmm,
    /// aarch64 NEON: 4 blocks per pass.
    #[cfg(all(
        target_arch = "aarch64",
        target_endian = "little",
        target_feature = "neon",
        not(miri)
    ))]
    Neon,
}

impl Backend {
    /// Every backend compiled for this target, best last.
    pub const ALL: &'static [Backend] = &[
        Backend::Soft,
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        Backend::Avx,
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        Backend::Avx512,
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        Backend::Avx512Zmm,
        #[cfg(all(
            target_arch = "aarch64",
            target_endian = "little",
            target_feature = "neon",
            not(miri)
        ))]
        Backend::Neon,
    ];

    /// The backends this CPU can run.
    pub fn available() -> impl Iterator<Item = Backend> {
        Self::ALL.iter().copied().filter(|b| b.is_available())
    }

    /// Whether this CPU can run the backend.
    pub fn is_available(self) -> bool {
        match self {
            Backend::Soft => true,
            #[cfg(all(target_arch = "x86_64", not(miri)))]
            Backend::Avx => avx2_cpuid::get(),
            #[cfg(all(target_arch = "x86_64", not(miri)))]
            Backend::Avx512 | Backend::Avx512Zmm => avx512_cpuid::get(),
            #[cfg(all(
                target_arch = "aarch64",
                target_endian = "little",
                target_feature = "neon",
                not(miri)
            ))]
            Backend::Neon => true,
        }
    }

    /// Short name: "soft", "avx", "avx512", "avx512zmm", "neon".
    pub fn name(self) -> &'static str {
        match self {
            Backend::Soft => "soft",
            #[cfg(all(target_arch = "x86_64", not(miri)))]
            Backend::Avx => "avx",
            #[cfg(all(target_arch = "x86_64", not(miri)))]
            Backend::Avx512 => "avx512",
            #[cfg(all(target_arch = "x86_64", not(miri)))]
            Backend::Avx512Zmm => "avx512zmm",
            #[cfg(all(
                target_arch = "aarch64",
                target_endian = "little",
                target_feature = "neon",
                not(miri)
            ))]
            Backend::Neon => "neon",
        }
    }
}

/// Pick the backend: forced cfg, Miri, runtime checks, compile-time NEON, soft.
#[allow(unreachable_code)]
pub(crate) fn detect() -> Backend {
    #[cfg(chacha_backend = "soft")]
    {
        return Backend::Soft;
    }
    #[cfg(chacha_backend = "avx")]
    {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        {
            assert!(
                avx2_cpuid::get(),
                "chacha: chacha_backend=\"avx\" forced but this CPU lacks AVX2"
            );
            return Backend::Avx;
        }
        panic!("chacha: chacha_backend=\"avx\" forced on a target without it");
    }
    #[cfg(chacha_backend = "avx512")]
    {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        {
            assert!(
                avx512_cpuid::get(),
                "chacha: chacha_backend=\"avx512\" forced but this CPU lacks AVX-512F/VL"
            );
            return Backend::Avx512;
        }
        panic!("chacha: chacha_backend=\"avx512\" forced on a target without it");
    }
    #[cfg(chacha_backend = "avx512zmm")]
    {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        {
            assert!(
                avx512_cpuid::get(),
                "chacha: chacha_backend=\"avx512zmm\" forced but this CPU lacks AVX-512F/VL"
            );
            return Backend::Avx512Zmm;
        }
        panic!("chacha: chacha_backend=\"avx512zmm\" forced on a target without it");
    }
    #[cfg(chacha_backend = "neon")]
    {
        #[cfg(all(
            target_arch = "aarch64",
            target_endian = "little",
            target_feature = "neon",
            not(miri)
        ))]
        {
            return Backend::Neon;
        }
        panic!("chacha: chacha_backend=\"neon\" forced on a target without it");
    }
    if cfg!(miri) {
        return Backend::Soft;
    }
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        if avx512_cpuid::get() {
            return if cpu::splits_512_bit_ops() {
                Backend::Avx512
            } else {
                Backend::Avx512Zmm
            };
        }
        if avx2_cpuid::get() {
            return Backend::Avx;
        }
    }
    #[cfg(all(
        target_arch = "aarch64",
        target_endian = "little",
        target_feature = "neon",
        not(miri)
    ))]
    {
        return Backend::Neon;
    }
    Backend::Soft
}

/// XOR the keystream of blocks `ctr, ctr + 1, ...` into `buf`
/// (`buf.len()` a multiple of 64). `state` holds constants, key and nonce;
/// the counter words (12, and 13 when `legacy`) are taken from `ctr`.
#[inline]
pub(crate) fn xor_blocks(
    backend: Backend,
    state: &[u32; 16],
    ctr: u64,
    legacy: bool,
    double_rounds: usize,
    buf: InOutBuf<'_, '_, u8>,
) {
    debug_assert_eq!(buf.len() % 64, 0);
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if buf.len() == 64 && backend != Backend::Soft && cpu::lone_block_scalar() {
        return soft::xor_blocks(state, ctr, legacy, double_rounds, buf);
    }
    match backend {
        Backend::Soft => soft::xor_blocks(state, ctr, legacy, double_rounds, buf),
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        Backend::Avx => {
            let wide_tail = cpu::tail_in_pass16();
            avx::xor_blocks(state, ctr, legacy, double_rounds, buf, wide_tail)
        }
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        Backend::Avx512 => avx512::xor_blocks::<false>(state, ctr, legacy, double_rounds, buf),
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        Backend::Avx512Zmm => avx512::xor_blocks::<true>(state, ctr, legacy, double_rounds, buf),
        #[cfg(all(
            target_arch = "aarch64",
            target_endian = "little",
            target_feature = "neon",
            not(miri)
        ))]
        Backend::Neon => neon::xor_blocks(state, ctr, legacy, double_rounds, buf),
    }
}

/// Like [`xor_blocks`], and where the backend's last pass has a spare lane
/// also the keystream of the block after `buf` into `ks` (so that a
/// message's partial last block needs no pass of its own); returns whether
/// `ks` was filled.
#[inline]
pub(crate) fn xor_blocks_ks(
    backend: Backend,
    state: &[u32; 16],
    ctr: u64,
    legacy: bool,
    double_rounds: usize,
    buf: InOutBuf<'_, '_, u8>,
    ks: &mut [u8; 64],
) -> bool {
    debug_assert_eq!(buf.len() % 64, 0);
    match backend {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        Backend::Avx512 => {
            avx512::xor_blocks_ks::<false>(state, ctr, legacy, double_rounds, buf, ks)
        }
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        Backend::Avx512Zmm => {
            avx512::xor_blocks_ks::<true>(state, ctr, legacy, double_rounds, buf, ks)
        }
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        Backend::Avx => {
            let wide_tail = cpu::tail_in_pass16();
            avx::xor_blocks_ks(state, ctr, legacy, double_rounds, buf, ks, wide_tail)
        }
        _ => {
            let _ = ks;
            xor_blocks(backend, state, ctr, legacy, double_rounds, buf);
            false
        }
    }
}

/// HChaCha of `key` and `input`: words 0..4 and 12..16 of the state after
/// the rounds (no final addition), as 32 little-endian bytes. Backends take
/// the bytes rather than a built state so that the SIMD ones load whole
/// rows (a latency-bound path: XChaCha's setup).
#[inline]
pub(crate) fn hchacha(
    backend: Backend,
    key: &[u8; 32],
    input: &[u8; 16],
    double_rounds: usize,
) -> [u8; 32] {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if backend != Backend::Soft && cpu::lone_block_scalar() {
        return soft::hchacha(key, input, double_rounds);
    }
    match backend {
        Backend::Soft => soft::hchacha(key, input, double_rounds),
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        Backend::Avx => avx::hchacha(key, input, double_rounds),
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        Backend::Avx512 => avx512::hchacha::<false>(key, input, double_rounds),
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        Backend::Avx512Zmm => avx512::hchacha::<true>(key, input, double_rounds),
        #[cfg(all(
            target_arch = "aarch64",
            target_endian = "little",
            target_feature = "neon",
            not(miri)
        ))]
        Backend::Neon => neon::hchacha(key, input, double_rounds),
    }
}

/// The vector paths for a lone block and HChaCha, which the dispatch above
/// skips on Zen 5, tested against `soft` on every CPU that can run them;
/// and [`soft::xor_block_raw`], which replaces them there, on every x86_64 CPU.
#[cfg(all(test, target_arch = "x86_64", not(miri)))]
mod tests {
    use super::*;

    #[test]
    fn lone_block_and_hchacha_paths_match_soft() {
        let mut rng = testkit::Rng::new(35);
        for dr in [4, 6, 10] {
            for _ in 0..64 {
                let key: [u8; 32] = rng.array();
                let input: [u8; 16] = rng.array();
                let data: [u8; 64] = rng.array();
                let state: [u32; 16] = core::array::from_fn(|_| rng.next_u64() as u32);
                let ctr = rng.next_u64();
                let legacy = ctr & 1 == 1;

                let hchacha_want = soft::hchacha(&key, &input, dr);
                let mut block_want = data;
                soft::xor_blocks(&state, ctr, legacy, dr, InOutBuf::from(&mut block_want[..]));
                let block_of = |f: &dyn Fn(InOutBuf<'_, '_, u8>)| {
                    let mut got = data;
                    f(InOutBuf::from(&mut got[..]));
                    got
                };
                let mut got = data;
                let p = got.as_mut_ptr();
                // SAFETY: in place, 64 bytes.
                unsafe { soft::xor_block_raw(&state, ctr, legacy, dr, p, p) };
                assert_eq!(got, block_want);
                let mut got = [0u8; 64];
                // SAFETY: two distinct 64-byte arrays.
                unsafe {
                    soft::xor_block_raw(&state, ctr, legacy, dr, data.as_ptr(), got.as_mut_ptr())
                };
                assert_eq!(got, block_want);
                if avx2_cpuid::get() {
                    assert_eq!(avx::hchacha(&key, &input, dr), hchacha_want);
                    let got = block_of(&|b| avx::xor_blocks(&state, ctr, legacy, dr, b, false));
                    assert_eq!(got, block_want);
                }
                if avx512_cpuid::get() {
                    assert_eq!(avx512::hchacha::<false>(&key, &input, dr), hchacha_want);
                    assert_eq!(avx512::hchacha::<true>(&key, &input, dr), hchacha_want);
                    let got =
                        block_of(&|b| avx512::xor_blocks::<false>(&state, ctr, legacy, dr, b));
                    assert_eq!(got, block_want);
                    let got = block_of(&|b| avx512::xor_blocks::<true>(&state, ctr, legacy, dr, b));
                    assert_eq!(got, block_want);
                }
            }
        }
    }

    /// `avx`'s two ways with 9-15 blocks after its 16-block passes (the
    /// CPU picks one, `cpu::tail_in_pass16`), both tested on every AVX2 CPU,
    /// with and without a spare lane's keystream.
    #[test]
    fn avx_tails_both_ways_match_soft() {
        if !avx2_cpuid::get() {
            return;
        }
        let mut rng = testkit::Rng::new(36);
        for dr in [4, 10] {
            for n in 1..=42 {
                let state: [u32; 16] = core::array::from_fn(|_| rng.next_u64() as u32);
                let ctr = rng.next_u64();
                let legacy = ctr & 1 == 1;
                let data = rng.bytes(64 * n);
                let mut want = data.clone();
                soft::xor_blocks(&state, ctr, legacy, dr, InOutBuf::from(&mut want[..]));
                let mut next = [0u8; 64];
                let after = ctr.wrapping_add(n as u64);
                soft::xor_blocks(&state, after, legacy, dr, InOutBuf::from(&mut next[..]));
                for wide in [false, true] {
                    let mut got = data.clone();
                    avx::xor_blocks(&state, ctr, legacy, dr, InOutBuf::from(&mut got[..]), wide);
                    assert_eq!(got, want, "{n} blocks, wide {wide}");
                    let mut got = data.clone();
                    let mut ks = [0u8; 64];
                    let buf = InOutBuf::from(&mut got[..]);
                    let filled = avx::xor_blocks_ks(&state, ctr, legacy, dr, buf, &mut ks, wide);
                    assert_eq!(got, want, "{n} blocks with a spare lane, wide {wide}");
                    assert_eq!(filled, n % 8 != 0, "{n} blocks, wide {wide}");
                    if filled {
                        assert_eq!(ks, next, "{n} blocks' spare lane, wide {wide}");
                    }
                }
            }
        }
    }
}
