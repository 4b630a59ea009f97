#![doc = include_str!("../README.md")]
#![no_std]
#![warn(missing_docs)]
// This crate only composes other primitives: it has no SIMD code of its own
// and needs no `unsafe` at all.
#![forbid(unsafe_code)]

use core::fmt;
use core::marker::PhantomData;

use cipher::consts::{U16, U24, U32};
use cipher::{
    Array, Block, BlockCipherDecrypt, BlockCipherEncrypt, BlockSizeUser, Iv, Key, KeyInit,
    KeyIvInit, KeySizeUser, StreamCipher,
};
use nhpoly1305::{NhPoly1305, Poly1305};

pub use cipher;

/// Adiantum with XChaCha12 and AES-256: the variant Linux (fscrypt,
/// dm-crypt) calls `adiantum(xchacha12,aes)`.
#[cfg(feature = "xchacha-aes")]
pub type AdiantumXChaCha12Aes = Adiantum<chacha_simd::XChaCha12, aes::Aes256>;

/// Adiantum with XChaCha20 and AES-256: Linux's `adiantum(xchacha20,aes)`.
#[cfg(feature = "xchacha-aes")]
pub type AdiantumXChaCha20Aes = Adiantum<chacha_simd::XChaCha20, aes::Aes256>;

/// [`Adiantum`] under the name the `adiantum` 0.2 crate gives its type
/// (`adiantum_simd::Cipher<S, B>`, same parameter order). The calls differ:
/// `encrypt_in_place(tweak, buf)` returns an error where 0.2's
/// `encrypt(buf, tweak)` panics.
pub type Cipher<S, B> = Adiantum<S, B>;

/// The size of the block of the block cipher: the smallest message.
pub const BLOCK_SIZE: usize = 16;

/// The block size of the XChaCha-shaped stream ciphers.
const STREAM_BLOCK: usize = 64;

/// The key size (the stream cipher's key).
pub const KEY_SIZE: usize = 32;

/// Bytes of Adiantum subkeys: K_E (32) ‖ tweak Poly1305 key (16) ‖
/// NHPoly1305 key (16 + 1072).
const ADIANTUM_SUBKEYS: usize = 32 + 16 + 1088;

/// Bytes of HPolyC subkeys: K_E (32) ‖ Poly1305 key (16).
const HPOLYC_SUBKEYS: usize = 32 + 16;

/// What can go wrong when encrypting or decrypting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The message is shorter than 16 bytes (one block of the block cipher).
    MessageTooShort,
    /// The message is longer than the stream cipher's keystream can cover.
    MessageTooLong,
    /// HPolyC only: the tweak is longer than its 32-bit bit-length field
    /// allows (2^29 - 1 bytes). Adiantum takes any tweak length.
    TweakTooLong,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Error::MessageTooShort => "message shorter than 16 bytes",
            Error::MessageTooLong => "message too long for the stream cipher",
            Error::TweakTooLong => "tweak too long (HPolyC: at most 2^29 - 1 bytes)",
        })
    }
}

impl core::error::Error for Error {}

/// The name of the NHPoly1305 backend this CPU runs (the only primitive
/// this crate calls directly; the stream and block ciphers choose their own
/// code, e.g. `chacha_simd::backend()`).
pub fn backend() -> &'static str {
    nhpoly1305::backend()
}

/// The key-dependent half of the tweakable hash: how a construction turns
/// (tweak, left part) into the 128-bit value added to the right block.
trait WideHash {
    /// The part that depends on the tweak and the left part's length only;
    /// the same for both hashes of one call.
    type Header;
    fn header(&self, tweak: &[u8], bulk_len: usize) -> Result<Self::Header, Error>;
    fn hash(&self, header: &Self::Header, bulk: &[u8]) -> u128;
}

/// Encrypt `buf` in place: `P_M = P_R + H(T, P_L)`, `C_M = E(P_M)`,
/// `C_L = P_L ^ S(C_M ‖ 1)`, `C_R = C_M - H(T, C_L)`.
fn encrypt_wide<S, B, H>(
    key: &Key<S>,
    block: &B,
    hash: &H,
    tweak: &[u8],
    buf: &mut [u8],
) -> Result<(), Error>
where
    S: KeyIvInit<KeySize = U32, IvSize = U24> + StreamCipher,
    B: BlockCipherEncrypt + BlockSizeUser<BlockSize = U16>,
    H: WideHash,
{
    let bulk = buf
        .len()
        .checked_sub(BLOCK_SIZE)
        .ok_or(Error::MessageTooShort)?;
    let header = hash.header(tweak, bulk)?;
    let (left, right) = buf.split_at(bulk);
    let pr = u128::from_le_bytes(right.try_into().map_err(|_| Error::MessageTooShort)?);
    let pm = pr.wrapping_add(hash.hash(&header, left));
    let mut cm = Block::<B>::from(pm.to_le_bytes());
    block.encrypt_block(&mut cm);
    stream_xor::<S>(key, cm.as_slice(), buf, bulk)?;
    let cm = u128::from_le_bytes(cm.into());
    let (left, right) = buf.split_at_mut(bulk);
    right.copy_from_slice(&cm.wrapping_sub(hash.hash(&header, left)).to_le_bytes());
    Ok(())
}

/// The inverse of [`encrypt_wide`].
fn decrypt_wide<S, B, H>(
    key: &Key<S>,
    block: &B,
    hash: &H,
    tweak: &[u8],
    buf: &mut [u8],
) -> Result<(), Error>
where
    S: KeyIvInit<KeySize = U32, IvSize = U24> + StreamCipher,
    B: BlockCipherDecrypt + BlockSizeUser<BlockSize = U16>,
    H: WideHash,
{
    let bulk = buf
        .len()
        .checked_sub(BLOCK_SIZE)
        .ok_or(Error::MessageTooShort)?;
    let header = hash.header(tweak, bulk)?;
    let (left, right) = buf.split_at(bulk);
    let cr = u128::from_le_bytes(right.try_into().map_err(|_| Error::MessageTooShort)?);
    let cm = cr.wrapping_add(hash.hash(&header, left));
    let cm = cm.to_le_bytes();
    // The block cipher first: it and the stream cipher's nonce setup
    // (HChaCha) both need only C_M, so their latency chains can overlap.
    let mut pm = Block::<B>::from(cm);
    block.decrypt_block(&mut pm);
    stream_xor::<S>(key, &cm, buf, bulk)?;
    let pm = u128::from_le_bytes(pm.into());
    let (left, right) = buf.split_at_mut(bulk);
    right.copy_from_slice(&pm.wrapping_sub(hash.hash(&header, left)).to_le_bytes());
    Ok(())
}

/// XOR the keystream for nonce `m ‖ 1 ‖ 0^7` into `buf[..bulk]`, in one
/// pass. Like Linux, the pass is rounded up to whole 64-byte stream blocks
/// where the message has the room: the bytes past `bulk` belong to the
/// right block, already read and rewritten afterwards, and whole blocks keep
/// the stream cipher on its wide path with no separate tail block. Checks
/// the length first, so `buf` is untouched on error.
fn stream_xor<S>(key: &Key<S>, m: &[u8], buf: &mut [u8], bulk: usize) -> Result<(), Error>
where
    S: KeyIvInit<KeySize = U32, IvSize = U24> + StreamCipher,
{
    if bulk == 0 {
        return Ok(());
    }
    let mut nonce = Iv::<S>::default();
    nonce[..BLOCK_SIZE].copy_from_slice(m);
    nonce[BLOCK_SIZE] = 1;
    let mut s = S::new(key, &nonce);
    let rounded = bulk.next_multiple_of(STREAM_BLOCK).min(buf.len());
    let len = if s.check_remaining(rounded).is_ok() {
        rounded
    } else {
        bulk
    };
    s.try_apply_keystream(&mut buf[..len])
        .map_err(|_| Error::MessageTooLong)
}

/// The subkeys: the keystream for nonce `1 ‖ 0^23`.
fn derive<S>(key: &Key<S>, out: &mut [u8])
where
    S: KeyIvInit<KeySize = U32, IvSize = U24> + StreamCipher,
{
    let mut nonce = Iv::<S>::default();
    nonce[0] = 1;
    out.fill(0);
    S::new(key, &nonce).apply_keystream(out);
}

fn wipe(buf: &mut [u8]) {
    #[cfg(feature = "zeroize")]
    zeroize::Zeroize::zeroize(buf);
    #[cfg(not(feature = "zeroize"))]
    let _ = buf;
}

/// Adiantum's hash keys.
#[derive(Clone)]
struct AdiantumHash {
    /// Poly1305 (r only) over `bitlen(L)` (128-bit LE) ‖ T.
    header: Poly1305,
    /// NHPoly1305 over L.
    bulk: NhPoly1305,
}

impl WideHash for AdiantumHash {
    type Header = u128;

    fn header(&self, tweak: &[u8], bulk_len: usize) -> Result<u128, Error> {
        let bits = (bulk_len as u128).wrapping_mul(8).to_le_bytes();
        // One call, no copy of the key's powers or of the tweak.
        Ok(u128::from_le_bytes(
            self.header.oneshot_prefixed(&bits, tweak),
        ))
    }

    fn hash(&self, header: &u128, bulk: &[u8]) -> u128 {
        if bulk.is_empty() {
            // NHPoly1305 of the empty message is zero (16-byte messages).
            return *header;
        }
        // One call over the whole left part, no copy of the NH key.
        header.wrapping_add(u128::from_le_bytes(self.bulk.oneshot(bulk)))
    }
}

/// HPolyC's hash key.
#[derive(Clone)]
struct HPolyCHash {
    /// Poly1305 (r only) over `bitlen(T)` (32-bit LE) ‖ T ‖ zero padding to
    /// 16 bytes ‖ L.
    poly: Poly1305,
}

impl WideHash for HPolyCHash {
    type Header = Poly1305;

    fn header(&self, tweak: &[u8], _bulk_len: usize) -> Result<Poly1305, Error> {
        let bits = u32::try_from(tweak.len())
            .ok()
            .and_then(|n| n.checked_mul(8))
            .ok_or(Error::TweakTooLong)?;
        let mut p = self.poly.clone();
        p.update(&bits.to_le_bytes());
        p.update(tweak);
        let pad = (BLOCK_SIZE - (4 + tweak.len()) % BLOCK_SIZE) % BLOCK_SIZE;
        p.update(&[0u8; BLOCK_SIZE][..pad]);
        Ok(p)
    }

    fn hash(&self, header: &Poly1305, bulk: &[u8]) -> u128 {
        let mut p = header.clone();
        p.update(bulk);
        u128::from_le_bytes(p.finalize())
    }
}

macro_rules! construction {
    (
        $(#[$doc:meta])*
        $name:ident, $hash:ident, $subkeys:expr, |$sk:ident| $make_hash:expr
    ) => {
        $(#[$doc])*
        pub struct $name<S, B>
        where
            S: KeySizeUser<KeySize = U32>,
        {
            key: Key<S>,
            block: B,
            hash: $hash,
            _stream: PhantomData<fn() -> S>,
        }

        impl<S, B> $name<S, B>
        where
            S: KeyIvInit<KeySize = U32, IvSize = U24> + StreamCipher,
            B: BlockCipherEncrypt
                + BlockCipherDecrypt
                + KeyInit<KeySize = U32>
                + BlockSizeUser<BlockSize = U16>,
        {
            /// Derive the subkeys from a 32-byte key (done once here; the
            /// calls below allocate nothing and derive nothing).
            pub fn new(key: &[u8; KEY_SIZE]) -> Self {
                let key = Key::<S>::from(*key);
                let mut subkeys = [0u8; $subkeys];
                derive::<S>(&key, &mut subkeys);
                let (ke, $sk) = subkeys.split_at(32);
                let block = B::new(&Array::from(
                    <[u8; 32]>::try_from(ke).expect("32-byte block cipher key"),
                ));
                let hash = $make_hash;
                wipe(&mut subkeys);
                Self {
                    key,
                    block,
                    hash,
                    _stream: PhantomData,
                }
            }

            /// Encrypt `buf` (at least 16 bytes, any length above) in place
            /// under `tweak` (any length; Linux uses 32 bytes).
            ///
            /// # Errors
            /// [`Error::MessageTooShort`] below 16 bytes; `buf` is then
            /// unchanged, as on every other error.
            pub fn encrypt_in_place(&self, tweak: &[u8], buf: &mut [u8]) -> Result<(), Error> {
                encrypt_wide::<S, B, $hash>(&self.key, &self.block, &self.hash, tweak, buf)
            }

            /// Decrypt `buf` in place; the inverse of
            /// [`encrypt_in_place`](Self::encrypt_in_place).
            ///
            /// # Errors
            /// As for `encrypt_in_place`.
            pub fn decrypt_in_place(&self, tweak: &[u8], buf: &mut [u8]) -> Result<(), Error> {
                decrypt_wide::<S, B, $hash>(&self.key, &self.block, &self.hash, tweak, buf)
            }
        }

        impl<S, B> KeySizeUser for $name<S, B>
        where
            S: KeySizeUser<KeySize = U32>,
        {
            type KeySize = U32;
        }

        impl<S, B> KeyInit for $name<S, B>
        where
            S: KeyIvInit<KeySize = U32, IvSize = U24> + StreamCipher,
            B: BlockCipherEncrypt
                + BlockCipherDecrypt
                + KeyInit<KeySize = U32>
                + BlockSizeUser<BlockSize = U16>,
        {
            fn new(key: &Key<Self>) -> Self {
                Self::new(&(*key).into())
            }
        }

        impl<S, B: Clone> Clone for $name<S, B>
        where
            S: KeySizeUser<KeySize = U32>,
        {
            fn clone(&self) -> Self {
                Self {
                    key: self.key.clone(),
                    block: self.block.clone(),
                    hash: self.hash.clone(),
                    _stream: PhantomData,
                }
            }
        }

        impl<S, B> fmt::Debug for $name<S, B>
        where
            S: KeySizeUser<KeySize = U32>,
        {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(concat!(stringify!($name), " { .. }"))
            }
        }

        #[cfg(feature = "zeroize")]
        impl<S, B> Drop for $name<S, B>
        where
            S: KeySizeUser<KeySize = U32>,
        {
            fn drop(&mut self) {
                zeroize::Zeroize::zeroize(self.key.as_mut_slice());
            }
        }

        /// The stream key is wiped here, the hash keys by `nhpoly1305`'s
        /// own `zeroize` feature; the block cipher's key schedule only when
        /// `B` wipes itself, hence the bound.
        #[cfg(feature = "zeroize")]
        impl<S, B: zeroize::ZeroizeOnDrop> zeroize::ZeroizeOnDrop for $name<S, B> where
            S: KeySizeUser<KeySize = U32>
        {
        }
    };
}

construction! {
    /// Adiantum (Crowley & Biggers, IACR ToSC 2018(4)), as Linux fscrypt and
    /// dm-crypt use it: a length-preserving, tweakable, wide-block cipher.
    ///
    /// `S` is an XChaCha-shaped stream cipher (32-byte key, 24-byte nonce),
    /// `B` a block cipher with 16-byte blocks and a 32-byte key (AES-256).
    /// The key `K` keys `S`; the subkeys are `S_K(1 ‖ 0^23)`: `K_E` (32
    /// bytes, for `B`), `K_T` (16, Poly1305 for the tweak), `K_N` (1088,
    /// NHPoly1305). With `P = P_L ‖ P_R` (`P_R` the last 16 bytes) and
    /// `H(T, L) = Poly1305_{K_T}(bitlen(L) ‖ T) + NHPoly1305_{K_N}(L) mod 2^128`:
    /// `P_M = P_R + H(T, P_L)`, `C_M = E_{K_E}(P_M)`,
    /// `C_L = P_L ⊕ S_K(C_M ‖ 1 ‖ 0^7)`, `C_R = C_M - H(T, C_L)`.
    Adiantum, AdiantumHash, ADIANTUM_SUBKEYS, |rest| {
        let (kt, kn) = rest.split_at(16);
        AdiantumHash {
            header: Poly1305::new(kt.try_into().expect("16-byte Poly1305 key")),
            bulk: NhPoly1305::new(kn.try_into().expect("1088-byte NHPoly1305 key")),
        }
    }
}

construction! {
    /// HPolyC (Crowley & Biggers, the predecessor of Adiantum): the same
    /// construction with `H(T, L) = Poly1305_{K_H}(bitlen(T) ‖ T ‖ pad ‖ L)`
    /// (bit length of the tweak as 32-bit little endian, zero padding to a
    /// multiple of 16 bytes) and subkeys `K_E ‖ K_H = S_K(1 ‖ 0^23)[..48]`.
    /// Slower than Adiantum on long messages (Poly1305 instead of NH).
    HPolyC, HPolyCHash, HPOLYC_SUBKEYS, |kh| {
        HPolyCHash {
            poly: Poly1305::new(kh.try_into().expect("16-byte Poly1305 key")),
        }
    }
}
