//! Backend selection and the NH key in the layout each backend wants.

use crate::poly1305::PolyCore;
pub(crate) use shared::{NH_KEY_WORDS, NH_STRIDE, NH_UNIT};

pub(crate) mod shared;
pub(crate) mod soft;

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx;
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512;
#[cfg(target_arch = "x86_64")]
pub(crate) mod sse2;

#[cfg(target_arch = "aarch64")]
pub(crate) mod neon;

#[cfg(target_arch = "x86_64")]
cpufeatures::new!(cpu_avx512, "avx512f");
#[cfg(target_arch = "x86_64")]
cpufeatures::new!(cpu_avx2, "avx2");
#[cfg(target_arch = "x86_64")]
cpufeatures::new!(cpu_sse2, "sse2");

/// An NH implementation. Hidden: for tests and benchmarks.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// Portable Rust, 32x32->64 multiplies.
    Soft,
    /// x86_64 SSE2, one 16-byte stride per register.
    Sse2,
    /// x86_64 AVX2, two strides per register.
    Avx,
    /// x86_64 AVX-512F, four strides per register.
    Avx512,
    /// aarch64 Advanced SIMD (`umlal`).
    Neon,
}

impl Backend {
    /// Every backend, best last.
    pub const ALL: [Backend; 5] = [
        Backend::Soft,
        Backend::Sse2,
        Backend::Avx,
        Backend::Avx512,
        Backend::Neon,
    ];

    /// The name `backend()` reports and `--cfg nhpoly1305_backend` takes.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Soft => "soft",
            Backend::Sse2 => "sse2",
            Backend::Avx => "avx",
            Backend::Avx512 => "avx512",
            Backend::Neon => "neon",
        }
    }

    /// Whether this CPU (and this build's target) can run the backend.
    pub fn is_available(self) -> bool {
        match self {
            Backend::Soft => true,
            #[cfg(target_arch = "x86_64")]
            Backend::Sse2 => cpu_sse2::get(),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx => cpu_avx2::get(),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => cpu_avx512::get(),
            #[cfg(target_arch = "aarch64")]
            Backend::Neon => cfg!(target_feature = "neon"),
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// The backends this CPU can run, `soft` first.
    pub fn available() -> impl Iterator<Item = Backend> {
        Self::ALL.into_iter().filter(|b| b.is_available())
    }
}

/// The backend a new key gets: forced cfg, Miri, runtime checks, soft.
pub(crate) fn detect() -> Backend {
    #[cfg(nhpoly1305_backend = "soft")]
    let forced = Some(Backend::Soft);
    #[cfg(nhpoly1305_backend = "sse2")]
    let forced = Some(Backend::Sse2);
    #[cfg(nhpoly1305_backend = "avx")]
    let forced = Some(Backend::Avx);
    #[cfg(nhpoly1305_backend = "avx512")]
    let forced = Some(Backend::Avx512);
    #[cfg(nhpoly1305_backend = "neon")]
    let forced = Some(Backend::Neon);
    #[cfg(not(any(
        nhpoly1305_backend = "soft",
        nhpoly1305_backend = "sse2",
        nhpoly1305_backend = "avx",
        nhpoly1305_backend = "avx512",
        nhpoly1305_backend = "neon"
    )))]
    let forced: Option<Backend> = None;

    if let Some(b) = forced {
        assert!(
            b.is_available(),
            "nhpoly1305: backend `{}` forced by --cfg nhpoly1305_backend is not supported by this CPU",
            b.name()
        );
        return b;
    }
    if cfg!(miri) {
        return Backend::Soft;
    }
    [Backend::Avx512, Backend::Avx, Backend::Sse2, Backend::Neon]
        .into_iter()
        .find(|b| b.is_available())
        .unwrap_or(Backend::Soft)
}

/// The NH key, stored in the word order of its backend.
///
/// - soft: natural order, `w[i]` = little-endian word `i`.
/// - x86 (sse2/avx/avx512): each 16-byte group `[k0 k1 k2 k3]` stored as
///   `[k0 k2 k1 k3]`, matching the message words shuffled the same way, so
///   that a 64-bit lane holds the two factors of one product.
/// - neon: transposed, `w[67 * j + t]` = word `4t + j`, so that four
///   consecutive strides of one word position load as one vector.
#[derive(Clone)]
#[repr(C, align(64))]
pub(crate) struct NhKey {
    pub(crate) w: [u32; NH_KEY_WORDS],
    pub(crate) backend: Backend,
}

impl NhKey {
    pub(crate) fn new(key: &[u8; 1072], backend: Backend) -> Self {
        let mut nat = [0u32; NH_KEY_WORDS];
        for (w, c) in nat.iter_mut().zip(key.chunks_exact(4)) {
            *w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        let mut w = [0u32; NH_KEY_WORDS];
        match backend {
            Backend::Sse2 | Backend::Avx | Backend::Avx512 => {
                for (d, s) in w.chunks_exact_mut(4).zip(nat.chunks_exact(4)) {
                    d.copy_from_slice(&[s[0], s[2], s[1], s[3]]);
                }
            }
            Backend::Neon => {
                const G: usize = NH_KEY_WORDS / 4;
                for t in 0..G {
                    for j in 0..4 {
                        w[G * j + t] = nat[4 * t + j];
                    }
                }
            }
            Backend::Soft => w = nat,
        }
        #[cfg(feature = "zeroize")]
        zeroize::Zeroize::zeroize(&mut nat);
        NhKey { w, backend }
    }

    /// Add the NH sums of `msg` (a multiple of 16 bytes), starting at stride
    /// `stride` of a unit, into `sums`. `stride + msg.len() / 16 <= 64`.
    #[inline]
    pub(crate) fn accumulate(&self, stride: usize, msg: &[u8], sums: &mut [u64; 4]) {
        debug_assert!(msg.len().is_multiple_of(NH_STRIDE));
        assert!(stride * NH_STRIDE + msg.len() <= NH_UNIT);
        match self.backend {
            #[cfg(target_arch = "x86_64")]
            Backend::Sse2 => sse2::accumulate(&self.w, stride, msg, sums),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx => avx::accumulate(&self.w, stride, msg, sums),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => avx512::accumulate(&self.w, stride, msg, sums),
            #[cfg(target_arch = "aarch64")]
            Backend::Neon => neon::accumulate(&self.w, stride, msg, sums),
            _ => soft::accumulate(&self.w, stride, msg, sums),
        }
    }

    /// NH each 1024-byte unit of `msg` (a multiple of 16 bytes; the last
    /// unit may be shorter) and feed every unit's 32-byte value to `poly`,
    /// all in one call.
    #[inline]
    pub(crate) fn units(&self, msg: &[u8], poly: &mut PolyCore) {
        debug_assert!(msg.len().is_multiple_of(NH_STRIDE));
        match self.backend {
            #[cfg(target_arch = "x86_64")]
            Backend::Sse2 => sse2::units(&self.w, msg, poly),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx => avx::units(&self.w, msg, poly),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => avx512::units(&self.w, msg, poly),
            #[cfg(target_arch = "aarch64")]
            Backend::Neon => neon::units(&self.w, msg, poly),
            _ => soft::units(&self.w, msg, poly),
        }
    }

    #[cfg(feature = "zeroize")]
    pub(crate) fn wipe(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.w);
    }
}
