//! The SM4 aliases and their test hooks.

use crate::{CbcMac, Cmac, Xcbc};
use digest::common::InnerInit;
use sm4_simd::Sm4;

/// CMAC over the workspace's constant-time [`sm4_simd::Sm4`] (Linux `cmac(sm4)`).
pub type Sm4Cmac = Cmac<Sm4>;

/// XCBC-MAC over [`sm4_simd::Sm4`], full 16-byte tag (Linux `xcbc(sm4)`).
pub type Sm4Xcbc = Xcbc<Sm4>;

/// CBC-MAC over [`sm4_simd::Sm4`] (Linux `cbcmac(sm4)`).
pub type Sm4CbcMac = CbcMac<Sm4>;

/// The name of the SM4 backend the `Sm4*` aliases run on this CPU
/// (`"gfni"`, `"gfni256"`, `"vaes"`, `"avx"`, `"sm4ce"`, `"neon"` or
/// `"soft"`), as chosen by the `sm4-simd` crate at key setup.
pub fn backend() -> &'static str {
    sm4_simd::backend()
}

impl Cmac<Sm4> {
    /// Test hook: this key on a given SM4 backend, `None` if the CPU lacks it.
    #[doc(hidden)]
    pub fn with_backend(key: &[u8; 16], backend: sm4_simd::Backend) -> Option<Self> {
        Sm4::with_backend(key, backend).map(Self::inner_init)
    }
}

impl CbcMac<Sm4> {
    /// Test hook: this key on a given SM4 backend, `None` if the CPU lacks it.
    #[doc(hidden)]
    pub fn with_backend(key: &[u8; 16], backend: sm4_simd::Backend) -> Option<Self> {
        Sm4::with_backend(key, backend).map(Self::inner_init)
    }
}

impl Xcbc<Sm4> {
    /// Test hook: this key on a given SM4 backend (for the subkey derivation
    /// and the chain), `None` if the CPU lacks it.
    #[doc(hidden)]
    pub fn with_backend(key: &[u8; 16], backend: sm4_simd::Backend) -> Option<Self> {
        Self::try_new_with(&(*key).into(), |k| {
            Sm4::with_backend(&k.0, backend).ok_or(())
        })
        .ok()
    }
}
