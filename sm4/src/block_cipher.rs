//! The SM4 block cipher type: key schedule, the backend chosen per key,
//! and the `cipher` traits through the dispatcher. Above the dispatcher;
//! the modes are above it.

use crate::backends::{self, Backend};
use cipher::{
    AlgorithmName, BlockCipherDecClosure, BlockCipherDecrypt, BlockCipherEncClosure,
    BlockCipherEncrypt, BlockSizeUser, Key, KeyInit, KeySizeUser, consts::U16,
};
use core::fmt;

/// The SM4 block cipher (GB/T 32907): 128-bit key, 128-bit block.
///
/// Holds the encryption schedule, the decryption schedule (the encryption
/// schedule reversed) and the backend chosen when the key was set.
#[derive(Clone)]
pub struct Sm4 {
    pub(crate) enc: [u32; 32],
    pub(crate) dec: [u32; 32],
    pub(crate) backend: Backend,
}

impl Sm4 {
    fn with(key: &[u8; 16], backend: Backend) -> Self {
        let enc = backends::expand_key(key, backend);
        let mut dec = enc;
        dec.reverse();
        Sm4 { enc, dec, backend }
    }

    /// Test hook: this key with a given backend, or `None` if the CPU lacks it.
    #[doc(hidden)]
    pub fn with_backend(key: &[u8; 16], backend: Backend) -> Option<Self> {
        backend.is_available().then(|| Self::with(key, backend))
    }

    /// The backend this instance runs.
    #[doc(hidden)]
    pub fn backend_of(&self) -> Backend {
        self.backend
    }
}

/// The name of the backend that [`Sm4::new`](KeyInit::new) picks on this CPU
/// (`"gfni"`, `"gfni256"`, `"vaes"`, `"avx"`, `"sm4ce"`, `"neon"` or
/// `"soft"`).
pub fn backend() -> &'static str {
    backends::detect().name()
}

impl KeySizeUser for Sm4 {
    type KeySize = U16;
}

impl KeyInit for Sm4 {
    #[inline]
    fn new(key: &Key<Self>) -> Self {
        Self::with(&(*key).into(), backends::detect())
    }
}

impl BlockSizeUser for Sm4 {
    type BlockSize = U16;
}

impl BlockCipherEncrypt for Sm4 {
    #[inline]
    fn encrypt_with_backend(&self, f: impl BlockCipherEncClosure<BlockSize = U16>) {
        backends::encrypt(self.backend, &self.enc, f);
    }
}

impl BlockCipherDecrypt for Sm4 {
    #[inline]
    fn decrypt_with_backend(&self, f: impl BlockCipherDecClosure<BlockSize = U16>) {
        backends::decrypt(self.backend, &self.dec, f);
    }
}

impl AlgorithmName for Sm4 {
    fn write_alg_name(f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Sm4")
    }
}

impl fmt::Debug for Sm4 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sm4")
            .field("backend", &self.backend.name())
            .finish_non_exhaustive()
    }
}

impl Drop for Sm4 {
    fn drop(&mut self) {
        #[cfg(feature = "zeroize")]
        {
            use zeroize::Zeroize;
            self.enc.zeroize();
            self.dec.zeroize();
        }
    }
}

#[cfg(feature = "zeroize")]
impl zeroize::ZeroizeOnDrop for Sm4 {}
