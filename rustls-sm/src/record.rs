//! TLS 1.3 record protection on our SM4 AEADs, independent of rustls:
//! the per-record nonce (RFC 8446 section 5.3) and in-place sealing and
//! opening with a detached 16-byte tag.

use sm4_simd::aead::array::Array;
use sm4_simd::aead::consts::{U12, U16};
use sm4_simd::aead::{AeadCore, AeadInOut, KeyInit};

/// The length of the AEAD tag, for both suites.
pub(crate) const TAG_LEN: usize = 16;
/// The length of the key, for both suites.
pub(crate) const KEY_LEN: usize = 16;
/// The length of the IV and nonce, for both suites.
pub(crate) const NONCE_LEN: usize = 12;

/// An SM4 AEAD with RFC 8998's sizes: 16-byte key, 12-byte nonce,
/// 16-byte tag (`Sm4Gcm`, `Sm4Ccm`).
pub(crate) trait RecordAead:
    AeadInOut + AeadCore<NonceSize = U12, TagSize = U16> + KeyInit + Send + Sync + 'static
{
}
impl<A> RecordAead for A where
    A: AeadInOut + AeadCore<NonceSize = U12, TagSize = U16> + KeyInit + Send + Sync + 'static
{
}

/// One direction's record key: the AEAD and the static IV.
pub(crate) struct RecordKey<A> {
    aead: A,
    iv: [u8; NONCE_LEN],
}

impl<A> Drop for RecordKey<A> {
    fn drop(&mut self) {
        // The AEAD wipes its own key schedule (sm4-simd's `zeroize`).
        zeroize::Zeroize::zeroize(&mut self.iv);
    }
}

impl<A: RecordAead> RecordKey<A> {
    /// `None` unless `key` is 16 bytes and `iv` 12.
    pub(crate) fn new(key: &[u8], iv: &[u8]) -> Option<Self> {
        let aead = A::new_from_slice(key).ok()?;
        let iv = iv.try_into().ok()?;
        Some(Self { aead, iv })
    }

    /// The nonce of record `seq`: the IV XOR the 64-bit sequence number,
    /// big-endian, left-padded to 12 bytes.
    fn nonce(&self, seq: u64) -> Array<u8, U12> {
        let mut nonce = self.iv;
        for (n, s) in nonce[NONCE_LEN - 8..].iter_mut().zip(seq.to_be_bytes()) {
            *n ^= s;
        }
        nonce.into()
    }

    /// Encrypts `buf` in place; returns the tag.
    pub(crate) fn seal(&self, seq: u64, aad: &[u8], buf: &mut [u8]) -> Option<[u8; TAG_LEN]> {
        let tag = self
            .aead
            .encrypt_inout_detached(&self.nonce(seq), aad, buf.into())
            .ok()?;
        Some(tag.into())
    }

    /// Decrypts `buf` (ciphertext then tag) in place; returns the length
    /// of the plaintext, or `None` when the tag does not verify or `buf`
    /// is shorter than a tag.
    pub(crate) fn open(&self, seq: u64, aad: &[u8], buf: &mut [u8]) -> Option<usize> {
        let plain_len = buf.len().checked_sub(TAG_LEN)?;
        let (ciphertext, tag) = buf.split_at_mut(plain_len);
        let tag = Array::<u8, U16>::try_from(&*tag).ok()?;
        self.aead
            .decrypt_inout_detached(&self.nonce(seq), aad, ciphertext.into(), &tag)
            .ok()?;
        Some(plain_len)
    }
}

/// Hooks for the workspace's constant-time check (`ctcheck`), behind the
/// non-default feature `hooks`: the record protection of both suites
/// without a rustls connection around it (rustls makes its 16-byte keys
/// only inside a handshake). They seal with a caller's key, IV and
/// sequence number, so nothing but a test should turn them on; not a
/// stable API.
#[cfg(feature = "hooks")]
pub mod hooks {
    use super::{RecordKey, TAG_LEN};
    use sm4_simd::{Sm4Ccm, Sm4Gcm};

    /// One direction's record key of TLS_SM4_GCM_SM3 or TLS_SM4_CCM_SM3.
    #[allow(missing_debug_implementations)] // holds a key
    pub struct Record(Suite);

    enum Suite {
        Gcm(Box<RecordKey<Sm4Gcm>>),
        Ccm(Box<RecordKey<Sm4Ccm>>),
    }

    impl Record {
        /// The record key (`key` 16 bytes, `iv` 12), GCM or CCM.
        pub fn new(ccm: bool, key: &[u8], iv: &[u8]) -> Option<Self> {
            Some(Record(if ccm {
                Suite::Ccm(Box::new(RecordKey::new(key, iv)?))
            } else {
                Suite::Gcm(Box::new(RecordKey::new(key, iv)?))
            }))
        }

        /// Seal record `seq` in place; the tag.
        pub fn seal(&self, seq: u64, aad: &[u8], buf: &mut [u8]) -> Option<[u8; TAG_LEN]> {
            match &self.0 {
                Suite::Gcm(k) => k.seal(seq, aad, buf),
                Suite::Ccm(k) => k.seal(seq, aad, buf),
            }
        }

        /// Open record `seq` (ciphertext then tag) in place; the plaintext
        /// length, `None` if the tag does not verify.
        pub fn open(&self, seq: u64, aad: &[u8], buf: &mut [u8]) -> Option<usize> {
            match &self.0 {
                Suite::Gcm(k) => k.open(seq, aad, buf),
                Suite::Ccm(k) => k.open(seq, aad, buf),
            }
        }
    }
}
