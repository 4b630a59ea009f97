#![doc = include_str!("../README.md")]
#![no_std]
#![warn(missing_docs)]

use core::fmt;
use core::marker::PhantomData;

pub use cipher;
/// The `cipher` trait that constructs every cipher of this crate from a key
/// and a nonce (re-exported, as RustCrypto `chacha20` does).
pub use cipher::KeyIvInit;
use cipher::{
    Iv, IvSizeUser, KeySizeUser, OverflowError, SeekNum, StreamCipher, StreamCipherError,
    StreamCipherSeek,
    array::{Array, ArraySize},
    consts::{U8, U12, U24, U32},
    inout::InOutBuf,
};

mod backends;

#[doc(hidden)]
pub use backends::Backend;
use backends::rounds::{SIGMA, le_words};

/// Number of keystream bytes per ChaCha block.
const BLOCK: usize = 64;

mod sealed {
    pub trait Sealed {}
}

/// A ChaCha round count: [`R8`], [`R12`] or [`R20`].
pub trait Rounds: sealed::Sealed + Copy + Clone + Default + fmt::Debug + 'static {
    /// Number of double rounds (column round plus diagonal round).
    const DOUBLE_ROUNDS: usize;
    /// Display name of the cipher family with this round count.
    #[doc(hidden)]
    const NAME: &'static str;
}

/// 8 rounds (4 double rounds).
#[derive(Copy, Clone, Default, Debug)]
pub struct R8;
/// 12 rounds (6 double rounds).
#[derive(Copy, Clone, Default, Debug)]
pub struct R12;
/// 20 rounds (10 double rounds).
#[derive(Copy, Clone, Default, Debug)]
pub struct R20;

impl sealed::Sealed for R8 {}
impl sealed::Sealed for R12 {}
impl sealed::Sealed for R20 {}
impl Rounds for R8 {
    const DOUBLE_ROUNDS: usize = 4;
    const NAME: &'static str = "ChaCha8";
}
impl Rounds for R12 {
    const DOUBLE_ROUNDS: usize = 6;
    const NAME: &'static str = "ChaCha12";
}
impl Rounds for R20 {
    const DOUBLE_ROUNDS: usize = 10;
    const NAME: &'static str = "ChaCha20";
}

/// The nonce and counter layout: [`Ietf`], [`Legacy`] or [`Extended`].
pub trait Variant: sealed::Sealed + Copy + Clone + Default + fmt::Debug + 'static {
    /// Nonce size in bytes.
    type NonceSize: ArraySize;
    /// Index of the last block of the keystream.
    const MAX_BLOCK: u64;
    /// 0: IETF, 1: legacy (64-bit counter), 2: extended nonce.
    #[doc(hidden)]
    const KIND: u8;
}

/// RFC 8439 layout: 96-bit nonce, 32-bit block counter (256 GiB of keystream).
#[derive(Copy, Clone, Default, Debug)]
pub struct Ietf;
/// The original ("djb") layout: 64-bit nonce, 64-bit block counter.
#[derive(Copy, Clone, Default, Debug)]
pub struct Legacy;
/// XChaCha: 192-bit nonce, HChaCha subkey, then the RFC 8439 layout with the
/// nonce `0u32 || nonce[16..24]` and a 32-bit block counter.
#[derive(Copy, Clone, Default, Debug)]
pub struct Extended;

impl sealed::Sealed for Ietf {}
impl sealed::Sealed for Legacy {}
impl sealed::Sealed for Extended {}
impl Variant for Ietf {
    type NonceSize = U12;
    const MAX_BLOCK: u64 = u32::MAX as u64;
    const KIND: u8 = 0;
}
impl Variant for Legacy {
    type NonceSize = U8;
    const MAX_BLOCK: u64 = u64::MAX;
    const KIND: u8 = 1;
}
impl Variant for Extended {
    type NonceSize = U24;
    const MAX_BLOCK: u64 = u32::MAX as u64;
    const KIND: u8 = 2;
}

/// ChaCha stream cipher, generic over the round count `R` and the nonce
/// layout `V`. Use the aliases ([`ChaCha20`], [`XChaCha12`], ...).
pub struct ChaCha<R: Rounds, V: Variant> {
    /// Words 4..16 of the state: key and nonce (the counter words are
    /// filled per call). The constants are added per call, which keeps the
    /// whole struct within 128 bytes: `new` then moves it with a few vector
    /// stores instead of a `memcpy` call.
    words: [u32; 12],
    /// Block holding the next keystream byte.
    block: u64,
    /// Bytes of `block` already used (0..=64; 64 only at the very end).
    offset: u8,
    /// Keystream of `block` while `0 < offset < 64`.
    ks: [u8; BLOCK],
    backend: Backend,
    _p: PhantomData<(R, V)>,
}

// Within 128 bytes, moved without a `memcpy` call (see `words`).
const _: () = assert!(core::mem::size_of::<ChaCha<R20, Ietf>>() <= 128);

/// A 256-bit key, the key of every cipher here (`[u8; 32]` converts into
/// it with `.into()`).
pub type Key = Array<u8, U32>;
/// A 96-bit nonce: [`ChaCha20`], [`ChaCha12`], [`ChaCha8`] (RFC 8439).
pub type Nonce = Array<u8, U12>;
/// A 192-bit nonce: [`XChaCha20`], [`XChaCha12`], [`XChaCha8`].
pub type XNonce = Array<u8, U24>;
/// A 64-bit nonce: [`ChaCha20Legacy`] and the other [`ChaChaLegacy`] types.
pub type LegacyNonce = Array<u8, U8>;

/// The nonce layouts under the module path RustCrypto `chacha20` gives them
/// (`chacha20::variants::Ietf`); the same items as at the crate root.
pub mod variants {
    pub use crate::{Extended, Ietf, Legacy, Variant};
}

/// ChaCha20 (RFC 8439): 96-bit nonce, 32-bit counter.
pub type ChaCha20 = ChaCha<R20, Ietf>;
/// ChaCha12 with the RFC 8439 layout.
pub type ChaCha12 = ChaCha<R12, Ietf>;
/// ChaCha8 with the RFC 8439 layout.
pub type ChaCha8 = ChaCha<R8, Ietf>;
/// The original ChaCha layout (64-bit nonce, 64-bit counter) with `R` rounds.
pub type ChaChaLegacy<R> = ChaCha<R, Legacy>;
/// ChaCha20 with the original layout: 64-bit nonce, 64-bit counter.
pub type ChaCha20Legacy = ChaChaLegacy<R20>;
/// XChaCha with `R` rounds.
pub type XChaCha<R> = ChaCha<R, Extended>;
/// XChaCha20: 192-bit nonce.
pub type XChaCha20 = XChaCha<R20>;
/// XChaCha12: 192-bit nonce, 12 rounds (Adiantum's stream cipher).
pub type XChaCha12 = XChaCha<R12>;
/// XChaCha8: 192-bit nonce, 8 rounds.
pub type XChaCha8 = XChaCha<R8>;

/// The name of the backend this CPU runs ("soft", "avx", "avx512", "avx512zmm", "neon").
pub fn backend() -> &'static str {
    backends::detect().name()
}

/// HChaCha with `R` rounds: derives a 256-bit subkey from `key` and a
/// 128-bit `input` (the first 16 bytes of an XChaCha nonce).
pub fn hchacha<R: Rounds>(key: &[u8; 32], input: &[u8; 16]) -> [u8; 32] {
    hchacha_with::<R>(backends::detect(), key, input)
}

/// Test hook: HChaCha on a given backend, `None` if this CPU lacks it.
#[doc(hidden)]
pub fn hchacha_with_backend<R: Rounds>(
    backend: Backend,
    key: &[u8; 32],
    input: &[u8; 16],
) -> Option<[u8; 32]> {
    backend
        .is_available()
        .then(|| hchacha_with::<R>(backend, key, input))
}

fn hchacha_with<R: Rounds>(backend: Backend, key: &[u8; 32], input: &[u8; 16]) -> [u8; 32] {
    backends::hchacha(backend, key, input, R::DOUBLE_ROUNDS)
}

/// Key words, word 12 and words 13-15 as state words 4..16.
#[inline(always)]
fn join(key: &[u32; 8], w12: u32, rest: [u32; 3]) -> [u32; 12] {
    [
        key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7], w12, rest[0], rest[1],
        rest[2],
    ]
}

impl<R: Rounds, V: Variant> ChaCha<R, V> {
    fn init(key: &[u8; 32], nonce: &[u8], backend: Backend) -> Self {
        // The words are built as values from fixed-size arrays, which LLVM
        // moves as whole vectors. Written a word at a time (as a helper
        // not inlined into the caller's crate did), the copies of the
        // struct that follow in the caller can read them back as 16-byte
        // loads, which store forwarding cannot serve: in a loop of `new`
        // and `apply_keystream` on the Zen 5, `new` took 25 TSC cycles, 8
        // without the stall.
        let words = match V::KIND {
            0 => join(&le_words(key), 0, le_words(&nonce[..12])),
            1 => {
                let [n0, n1] = le_words(&nonce[..8]);
                join(&le_words(key), 0, [0, n0, n1])
            }
            _ => {
                let input: &[u8; 16] = nonce[..16].try_into().expect("24-byte nonce");
                #[allow(unused_mut)]
                let mut subkey = hchacha_with::<R>(backend, key, input);
                let [n0, n1] = le_words(&nonce[16..24]);
                let words = join(&le_words(&subkey), 0, [0, n0, n1]);
                #[cfg(feature = "zeroize")]
                zeroize::Zeroize::zeroize(&mut subkey);
                words
            }
        };
        Self {
            words,
            block: 0,
            offset: 0,
            ks: [0; BLOCK],
            backend,
            _p: PhantomData,
        }
    }

    /// Test hook: a cipher pinned to `backend`, or `None` if this CPU lacks it.
    #[doc(hidden)]
    pub fn with_backend(key: &[u8; 32], nonce: &[u8], backend: Backend) -> Option<Self> {
        if nonce.len() != <V::NonceSize as cipher::typenum::Unsigned>::USIZE
            || !backend.is_available()
        {
            return None;
        }
        Some(Self::init(key, nonce, backend))
    }

    /// Name of the backend this instance runs.
    pub fn backend_name(&self) -> &'static str {
        self.backend.name()
    }

    /// The whole state the backends take: constants, key and nonce words.
    #[inline(always)]
    fn state(&self) -> [u32; 16] {
        let mut s = [0u32; 16];
        s[..4].copy_from_slice(&SIGMA);
        s[4..].copy_from_slice(&self.words);
        s
    }

    /// Keystream bytes left from the current position.
    fn remaining(&self) -> u128 {
        u128::from(V::MAX_BLOCK - self.block) * BLOCK as u128
            + (BLOCK as u128 - u128::from(self.offset))
    }

    /// Fill `ks` with the keystream of `block`.
    fn refill(&mut self) {
        self.ks = [0; BLOCK];
        backends::xor_blocks(
            self.backend,
            &self.state(),
            self.block,
            V::KIND == 1,
            R::DOUBLE_ROUNDS,
            InOutBuf::from(&mut self.ks[..]),
        );
    }

    fn apply(&mut self, mut buf: InOutBuf<'_, '_, u8>) {
        if buf.is_empty() {
            return;
        }
        // Rest of a partially used block.
        if self.offset != 0 {
            let off = usize::from(self.offset);
            let take = core::cmp::min(buf.len(), BLOCK - off);
            let (mut head, rest) = buf.split_at(take);
            head.xor_in2out(&self.ks[off..off + take]);
            buf = rest;
            self.offset += take as u8;
            if usize::from(self.offset) == BLOCK && self.block < V::MAX_BLOCK {
                self.block += 1;
                self.offset = 0;
            }
            if buf.is_empty() {
                return;
            }
        }
        // Whole blocks.
        let full = buf.len() / BLOCK;
        let tail_len = buf.len() % BLOCK;
        let (blocks, mut tail) = buf.split_at(full * BLOCK);
        let mut filled = false;
        if full != 0 {
            if tail_len != 0 {
                // The partial last block's keystream may come from a spare
                // lane of the last pass.
                filled = backends::xor_blocks_ks(
                    self.backend,
                    &self.state(),
                    self.block,
                    V::KIND == 1,
                    R::DOUBLE_ROUNDS,
                    blocks,
                    &mut self.ks,
                );
            } else {
                backends::xor_blocks(
                    self.backend,
                    &self.state(),
                    self.block,
                    V::KIND == 1,
                    R::DOUBLE_ROUNDS,
                    blocks,
                );
            }
            // `check_remaining` guarantees block + full - 1 <= MAX_BLOCK.
            let last = self.block + (full as u64 - 1);
            if last == V::MAX_BLOCK {
                self.block = last;
                self.offset = BLOCK as u8;
                return;
            }
            self.block = last + 1;
        }
        if tail_len != 0 {
            if !filled {
                self.refill();
            }
            tail.xor_in2out(&self.ks[..tail_len]);
            self.offset = tail_len as u8;
        }
    }
}

impl<R: Rounds, V: Variant> KeySizeUser for ChaCha<R, V> {
    type KeySize = U32;
}

impl<R: Rounds, V: Variant> IvSizeUser for ChaCha<R, V> {
    type IvSize = V::NonceSize;
}

impl<R: Rounds, V: Variant> KeyIvInit for ChaCha<R, V> {
    #[inline]
    fn new(key: &cipher::Key<Self>, iv: &Iv<Self>) -> Self {
        Self::init(&key.0, iv.as_slice(), backends::detect())
    }
}

impl<R: Rounds, V: Variant> StreamCipher for ChaCha<R, V> {
    #[inline]
    fn check_remaining(&self, data_len: usize) -> Result<(), StreamCipherError> {
        if data_len as u128 <= self.remaining() {
            Ok(())
        } else {
            Err(StreamCipherError)
        }
    }

    #[inline]
    fn unchecked_apply_keystream_inout(&mut self, buf: InOutBuf<'_, '_, u8>) {
        // Even the "unchecked" entry points never wrap the counter: running
        // past the end of the keystream is refused loudly. The `try_*`
        // methods check first and return `StreamCipherError` instead.
        assert!(
            self.check_remaining(buf.len()).is_ok(),
            "end of keystream reached"
        );
        self.apply(buf);
    }

    #[inline]
    fn try_apply_keystream_inout(
        &mut self,
        buf: InOutBuf<'_, '_, u8>,
    ) -> Result<(), StreamCipherError> {
        self.check_remaining(buf.len())?;
        self.apply(buf);
        Ok(())
    }

    #[inline]
    fn unchecked_write_keystream(&mut self, buf: &mut [u8]) {
        buf.fill(0);
        self.unchecked_apply_keystream_inout(InOutBuf::from(buf));
    }
}

impl<R: Rounds, V: Variant> StreamCipherSeek for ChaCha<R, V> {
    fn try_current_pos<T: SeekNum>(&self) -> Result<T, OverflowError> {
        let pos = u128::from(self.block) * BLOCK as u128 + u128::from(self.offset);
        // With block size 1 and byte 1, `from_block_byte` returns `block` itself.
        T::from_block_byte::<u128>(pos, 1, 1)
    }

    fn try_seek<T: SeekNum>(&mut self, pos: T) -> Result<(), StreamCipherError> {
        // With block size 1 the "block" is the byte position; negative or
        // too large values are an `OverflowError`, never a panic.
        let (pos, _) = pos.into_block_byte::<u128>(1)?;
        let total = (u128::from(V::MAX_BLOCK) + 1) * BLOCK as u128;
        if pos > total {
            return Err(StreamCipherError);
        }
        if pos == total {
            self.block = V::MAX_BLOCK;
            self.offset = BLOCK as u8;
            return Ok(());
        }
        self.block = (pos / BLOCK as u128) as u64;
        self.offset = (pos % BLOCK as u128) as u8;
        if self.offset != 0 {
            self.refill();
        }
        Ok(())
    }
}

impl<R: Rounds, V: Variant> Clone for ChaCha<R, V> {
    fn clone(&self) -> Self {
        Self {
            words: self.words,
            block: self.block,
            offset: self.offset,
            ks: self.ks,
            backend: self.backend,
            _p: PhantomData,
        }
    }
}

impl<R: Rounds, V: Variant> fmt::Debug for ChaCha<R, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = if V::KIND == 2 { "X" } else { "" };
        let suffix = if V::KIND == 1 { "Legacy" } else { "" };
        write!(
            f,
            "{prefix}{}{suffix} {{ backend: {:?}, .. }}",
            R::NAME,
            self.backend.name()
        )
    }
}

impl<R: Rounds, V: Variant> cipher::AlgorithmName for ChaCha<R, V> {
    fn write_alg_name(f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = if V::KIND == 2 { "X" } else { "" };
        let suffix = if V::KIND == 1 { "Legacy" } else { "" };
        write!(f, "{prefix}{}{suffix}", R::NAME)
    }
}

#[cfg(feature = "zeroize")]
impl<R: Rounds, V: Variant> Drop for ChaCha<R, V> {
    fn drop(&mut self) {
        use zeroize::Zeroize;
        // As slices: one fill and a barrier (the arrays' own wipe is a
        // volatile store per element, 80 of them per message).
        self.words[..].zeroize();
        self.ks[..].zeroize();
        self.block.zeroize();
        self.offset.zeroize();
    }
}

#[cfg(feature = "zeroize")]
impl<R: Rounds, V: Variant> zeroize::ZeroizeOnDrop for ChaCha<R, V> {}
