#![doc = include_str!("../README.md")]
#![no_std]
#![warn(missing_docs)]

mod backends;
mod poly1305;

use core::fmt;

pub use universal_hash;
use universal_hash::{
    KeyInit, UhfBackend, UhfClosure, UniversalHash,
    array::sizes::U1088,
    common::{BlockSizeUser, KeySizeUser, ParBlocksSizeUser},
    consts::{U16, U64},
};

#[doc(hidden)]
pub use backends::Backend;
use backends::{NH_STRIDE, NH_UNIT, NhKey};
use poly1305::PolyCore;

/// Length of an [`NhPoly1305`] key: the 16-byte Poly1305 key `r`, then the
/// 1072-byte NH key.
pub const KEY_SIZE: usize = 1088;
/// Length of an NH key.
pub const NH_KEY_SIZE: usize = 1072;
/// Length of a block of [`NhPoly1305`]'s `UniversalHash` interface, and of
/// its output.
pub const BLOCK_SIZE: usize = 16;

/// An [`NhPoly1305`] key as `KeyInit` takes it (1088 bytes), named as
/// RustCrypto `poly1305` names its own key type.
pub type Key = universal_hash::Key<NhPoly1305>;
/// A 16-byte block of [`NhPoly1305`]'s `UniversalHash` interface.
pub type Block = universal_hash::Block<NhPoly1305>;
/// The 16-byte output of [`NhPoly1305`] through `UniversalHash::finalize`.
pub type Tag = universal_hash::Block<NhPoly1305>;

/// Errors of this crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// [`nh`] takes a message of 16 to 1024 bytes, a multiple of 16.
    InvalidMessageLength,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidMessageLength => {
                f.write_str("NH message length must be a multiple of 16 in 16..=1024")
            }
        }
    }
}

impl core::error::Error for Error {}

/// The name of the NH backend this CPU runs ("soft", "sse2", "avx",
/// "avx512" or "neon").
pub fn backend() -> &'static str {
    backends::detect().name()
}

/// NH as Adiantum uses it (4 passes, 16-byte stride): the 32-byte hash of
/// one message unit, four little-endian 64-bit sums.
///
/// # Errors
/// [`Error::InvalidMessageLength`] unless `message.len()` is a multiple of
/// 16 in `16..=1024`.
pub fn nh(key: &[u8; NH_KEY_SIZE], message: &[u8]) -> Result<[u8; 32], Error> {
    nh_on(key, message, backends::detect())
}

/// Test hook: [`nh`] on backend `b`, or `None` if this CPU lacks it.
#[doc(hidden)]
pub fn nh_with_backend(
    key: &[u8; NH_KEY_SIZE],
    message: &[u8],
    b: Backend,
) -> Option<Result<[u8; 32], Error>> {
    b.is_available().then(|| nh_on(key, message, b))
}

fn nh_on(key: &[u8; NH_KEY_SIZE], message: &[u8], b: Backend) -> Result<[u8; 32], Error> {
    if message.is_empty() || message.len() > NH_UNIT || !message.len().is_multiple_of(NH_STRIDE) {
        return Err(Error::InvalidMessageLength);
    }
    let key = NhKey::new(key, b);
    let mut sums = [0u64; 4];
    key.accumulate(0, message, &mut sums);
    let mut out = [0u8; 32];
    for (o, s) in out.chunks_exact_mut(8).zip(sums) {
        o.copy_from_slice(&s.to_le_bytes());
    }
    Ok(out)
}

/// NH with a prepared key, for benchmarks (hidden): the key conversion is
/// done once.
#[doc(hidden)]
#[derive(Clone)]
pub struct Nh {
    key: NhKey,
}

impl Nh {
    /// The key on backend `b`, or `None` if this CPU lacks it.
    pub fn with_backend(key: &[u8; NH_KEY_SIZE], b: Backend) -> Option<Self> {
        b.is_available().then(|| Nh {
            key: NhKey::new(key, b),
        })
    }

    /// The NH value of each unit of `msg` (a multiple of 16 bytes, split
    /// into 1024-byte units), all added together.
    pub fn hash_units(&self, msg: &[u8]) -> [u64; 4] {
        let mut sums = [0u64; 4];
        for unit in msg.chunks(NH_UNIT) {
            let unit = &unit[..unit.len() - unit.len() % NH_STRIDE];
            self.key.accumulate(0, unit, &mut sums);
        }
        sums
    }
}

impl fmt::Debug for Nh {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Nh { .. }")
    }
}

#[cfg(feature = "zeroize")]
impl Drop for Nh {
    fn drop(&mut self) {
        self.key.wipe();
    }
}

/// Poly1305 as Adiantum and HPolyC use it: key `r` (16 bytes, clamped
/// here), standard block padding (each full 16-byte block gets 2^128 added;
/// a final partial block gets a 0x01 byte appended, then zeros, and no
/// 2^128), output = the accumulator mod 2^128, little-endian, with no `s`
/// added.
///
/// ```
/// use nhpoly1305::Poly1305;
/// let mut p = Poly1305::new(&[7u8; 16]);
/// p.update(b"hello ");
/// p.update(b"world");
/// let h = p.finalize();
/// assert_eq!(h.len(), 16);
/// ```
#[derive(Clone)]
pub struct Poly1305 {
    core: PolyCore,
    buf: [u8; 16],
    buf_len: usize,
}

impl Poly1305 {
    /// A new hash with key `r`.
    pub fn new(r: &[u8; 16]) -> Self {
        Poly1305 {
            core: PolyCore::new(r),
            buf: [0; 16],
            buf_len: 0,
        }
    }

    /// Absorb `data`; any split of the message gives the same result.
    pub fn update(&mut self, mut data: &[u8]) {
        if self.buf_len > 0 {
            let take = (16 - self.buf_len).min(data.len());
            self.buf[self.buf_len..self.buf_len + take].copy_from_slice(&data[..take]);
            self.buf_len += take;
            data = &data[take..];
            if self.buf_len < 16 {
                return;
            }
            let b = self.buf;
            self.core.blocks(&b);
            self.buf_len = 0;
        }
        let full = data.len() & !15;
        self.core.blocks(&data[..full]);
        let rest = &data[full..];
        self.buf[..rest.len()].copy_from_slice(rest);
        self.buf_len = rest.len();
    }

    /// The accumulator mod 2^128 (no `s` added).
    pub fn finalize(mut self) -> [u8; 16] {
        if self.buf_len > 0 {
            let b = self.buf;
            self.core.last_partial(&b[..self.buf_len]);
        }
        self.core.emit()
    }

    /// The hash of `data` alone, as a fresh hash with this key would give
    /// after `update(data)` and `finalize()`; `self` (and anything it has
    /// absorbed) is neither read nor changed apart from the key. Faster for
    /// short messages (a tweak header): nothing is copied or buffered.
    ///
    /// ```
    /// use nhpoly1305::Poly1305;
    /// let p = Poly1305::new(&[7u8; 16]);
    /// let mut q = p.clone();
    /// q.update(b"hello world");
    /// assert_eq!(p.oneshot(b"hello world"), q.finalize());
    /// ```
    pub fn oneshot(&self, data: &[u8]) -> [u8; 16] {
        self.core.oneshot(data)
    }

    /// [`oneshot`](Self::oneshot) of `first ‖ data` (a 16-byte block, then
    /// anything), without building the concatenation: Adiantum's
    /// `bitlength ‖ tweak` header.
    ///
    /// ```
    /// use nhpoly1305::Poly1305;
    /// let p = Poly1305::new(&[7u8; 16]);
    /// let mut whole = [0u8; 16 + 5];
    /// whole[16..].copy_from_slice(b"tweak");
    /// assert_eq!(p.oneshot_prefixed(&[0; 16], b"tweak"), p.oneshot(&whole));
    /// ```
    pub fn oneshot_prefixed(&self, first: &[u8; 16], data: &[u8]) -> [u8; 16] {
        self.core.oneshot_prefixed(first, data)
    }

    /// Start over with an empty message, same key.
    pub fn reset(&mut self) {
        self.core.reset();
        self.buf = [0; 16];
        self.buf_len = 0;
    }
}

impl fmt::Debug for Poly1305 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Poly1305 { .. }")
    }
}

/// NHPoly1305, the hash of Adiantum, with a 1088-byte key (16-byte Poly1305
/// key `r`, then the 1072-byte NH key, as in Linux).
///
/// The message is cut into 1024-byte NH units; each unit's 32-byte NH value
/// is fed to Poly1305 as two full blocks; a final partial unit is NH'd over
/// its length, a final partial 16-byte block being zero-padded first. The
/// output is the Poly1305 accumulator mod 2^128 (the empty message gives
/// zero).
///
/// ```
/// use nhpoly1305::NhPoly1305;
/// let key = [0x42u8; 1088];
/// let mut h = NhPoly1305::new(&key);
/// h.update(&[1u8; 100]);
/// h.update(&[2u8; 3000]);
/// let tag: [u8; 16] = h.finalize();
/// # let _ = tag;
/// ```
#[derive(Clone)]
pub struct NhPoly1305 {
    key: NhKey,
    poly: PolyCore,
    /// NH sums of the current, unfinished unit.
    sums: [u64; 4],
    /// Bytes of the current unit already NH'd (a multiple of 16, < 1024).
    unit_pos: usize,
    buf: [u8; 16],
    buf_len: usize,
}

impl NhPoly1305 {
    /// A new hash with `key` (Poly1305 `r`, then the NH key), on the best
    /// backend of this CPU.
    pub fn new(key: &[u8; KEY_SIZE]) -> Self {
        Self::with_backend_unchecked(key, backends::detect())
    }

    /// Test hook: the hash on backend `b`, or `None` if this CPU lacks it.
    #[doc(hidden)]
    pub fn with_backend(key: &[u8; KEY_SIZE], b: Backend) -> Option<Self> {
        b.is_available()
            .then(|| Self::with_backend_unchecked(key, b))
    }

    fn with_backend_unchecked(key: &[u8; KEY_SIZE], b: Backend) -> Self {
        let (r, nh) = key.split_at(16);
        let r: &[u8; 16] = r.try_into().unwrap_or(&[0; 16]);
        let nh: &[u8; NH_KEY_SIZE] = nh.try_into().unwrap_or(&[0; NH_KEY_SIZE]);
        NhPoly1305 {
            key: NhKey::new(nh, b),
            poly: PolyCore::new(r),
            sums: [0; 4],
            unit_pos: 0,
            buf: [0; 16],
            buf_len: 0,
        }
    }

    /// The backend this hasher runs (hidden: for tests and benchmarks).
    #[doc(hidden)]
    pub fn backend(&self) -> Backend {
        self.key.backend
    }

    /// Absorb `data` (any length); any split of the message gives the same
    /// result.
    pub fn update(&mut self, mut data: &[u8]) {
        if self.buf_len > 0 {
            let take = (16 - self.buf_len).min(data.len());
            self.buf[self.buf_len..self.buf_len + take].copy_from_slice(&data[..take]);
            self.buf_len += take;
            data = &data[take..];
            if self.buf_len < 16 {
                return;
            }
            let b = self.buf;
            self.strides(&b);
            self.buf_len = 0;
        }
        let full = data.len() & !15;
        self.strides(&data[..full]);
        let rest = &data[full..];
        self.buf[..rest.len()].copy_from_slice(rest);
        self.buf_len = rest.len();
    }

    /// Absorb whole 16-byte strides.
    fn strides(&mut self, mut data: &[u8]) {
        if data.is_empty() {
            return;
        }
        if self.unit_pos > 0 {
            let n = (NH_UNIT - self.unit_pos).min(data.len());
            self.key
                .accumulate(self.unit_pos / NH_STRIDE, &data[..n], &mut self.sums);
            self.unit_pos += n;
            data = &data[n..];
            if self.unit_pos < NH_UNIT {
                return;
            }
            self.poly.nh_value(&self.sums);
            self.sums = [0; 4];
            self.unit_pos = 0;
        }
        let full = data.len() - data.len() % NH_UNIT;
        if full > 0 {
            self.key.units(&data[..full], &mut self.poly);
        }
        let rest = &data[full..];
        if !rest.is_empty() {
            self.key.accumulate(0, rest, &mut self.sums);
            self.unit_pos = rest.len();
        }
    }

    /// The hash of `data` alone under this key, in one call: it neither
    /// reads nor changes what `update` absorbed, and copies no key (cheaper
    /// than `clone()` + `update` + `finalize` for a fixed-key hasher).
    pub fn oneshot(&self, data: &[u8]) -> [u8; 16] {
        if data.len() <= NH_UNIT && data.len().is_multiple_of(NH_STRIDE) {
            // At most one unit (Adiantum's short sectors): one NH call and
            // one Poly1305 step on a local accumulator, no state copied.
            if data.is_empty() {
                return [0; 16];
            }
            let mut sums = [0u64; 4];
            self.key.accumulate(0, data, &mut sums);
            return self.poly.nh_oneshot(&sums);
        }
        let mut poly = self.poly.clone();
        poly.reset();
        if data.len().is_multiple_of(NH_STRIDE) {
            // Every unit, the partial last one included, in one pipelined call.
            self.key.units(data, &mut poly);
            let out = poly.emit_nh();
            #[cfg(feature = "zeroize")]
            poly.wipe();
            return out;
        }
        let full_units = data.len() - data.len() % NH_UNIT;
        self.key.units(&data[..full_units], &mut poly);
        let rest = &data[full_units..];
        if !rest.is_empty() {
            let strides = rest.len() - rest.len() % NH_STRIDE;
            let mut sums = [0u64; 4];
            self.key.accumulate(0, &rest[..strides], &mut sums);
            let tail = &rest[strides..];
            if !tail.is_empty() {
                let mut b = [0u8; NH_STRIDE];
                b[..tail.len()].copy_from_slice(tail);
                self.key.accumulate(strides / NH_STRIDE, &b, &mut sums);
            }
            poly.nh_value(&sums);
        }
        let out = poly.emit_nh();
        #[cfg(feature = "zeroize")]
        poly.wipe();
        out
    }

    /// The 16-byte hash.
    pub fn finalize(mut self) -> [u8; 16] {
        self.finish()
    }

    /// The 16-byte hash; then start over with an empty message, same key
    /// (no copy of the key, unlike `UniversalHash::finalize_reset`).
    pub fn finalize_reset(&mut self) -> [u8; 16] {
        let out = self.finish();
        self.reset();
        out
    }

    fn finish(&mut self) -> [u8; 16] {
        if self.buf_len > 0 {
            self.buf[self.buf_len..].fill(0);
            let b = self.buf;
            self.strides(&b);
            self.buf_len = 0;
        }
        if self.unit_pos > 0 {
            self.poly.nh_value(&self.sums);
            self.sums = [0; 4];
            self.unit_pos = 0;
        }
        self.poly.emit_nh()
    }

    /// Start over with an empty message, same key.
    pub fn reset(&mut self) {
        self.poly.reset();
        self.sums = [0; 4];
        self.unit_pos = 0;
        self.buf = [0; 16];
        self.buf_len = 0;
    }
}

impl fmt::Debug for NhPoly1305 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NhPoly1305")
            .field("backend", &self.key.backend.name())
            .finish_non_exhaustive()
    }
}

impl KeySizeUser for NhPoly1305 {
    type KeySize = U1088;
}

impl KeyInit for NhPoly1305 {
    fn new(key: &universal_hash::Key<Self>) -> Self {
        let k: &[u8; KEY_SIZE] = key.as_ref();
        NhPoly1305::new(k)
    }
}

impl BlockSizeUser for NhPoly1305 {
    type BlockSize = U16;
}

impl universal_hash::Reset for NhPoly1305 {
    fn reset(&mut self) {
        NhPoly1305::reset(self);
    }
}

impl UniversalHash for NhPoly1305 {
    fn update_with_backend(&mut self, f: impl UhfClosure<BlockSize = Self::BlockSize>) {
        // Any pending partial block (from the inherent `update`) stays in
        // front: blocks go through the same path as bytes.
        f.call(&mut UhfState(self));
    }

    /// Overridden: the blocks go to the byte path in one call, so the whole
    /// multi-unit loop runs in one `#[target_feature]` function.
    fn update(&mut self, blocks: &[universal_hash::Block<Self>]) {
        NhPoly1305::update(
            self,
            universal_hash::array::Array::slice_as_flattened(blocks),
        );
    }

    /// Overridden: as `update`; a partial last block is zero-padded to 16
    /// bytes at once (the trait's semantics).
    fn update_padded(&mut self, data: &[u8]) {
        let full = data.len() - data.len() % NH_STRIDE;
        NhPoly1305::update(self, &data[..full]);
        let tail = &data[full..];
        if !tail.is_empty() {
            let mut b = [0u8; NH_STRIDE];
            b[..tail.len()].copy_from_slice(tail);
            NhPoly1305::update(self, &b);
        }
    }

    fn finalize(mut self) -> universal_hash::Block<Self> {
        self.finish().into()
    }
}

/// `UhfBackend` view of an [`NhPoly1305`]: 64 blocks (one NH unit) at a time.
struct UhfState<'a>(&'a mut NhPoly1305);

impl BlockSizeUser for UhfState<'_> {
    type BlockSize = U16;
}

impl ParBlocksSizeUser for UhfState<'_> {
    type ParBlocksSize = U64;
}

impl UhfBackend for UhfState<'_> {
    #[inline]
    fn proc_block(&mut self, block: &universal_hash::Block<Self>) {
        self.0.update(block);
    }

    #[inline]
    fn proc_par_blocks(&mut self, blocks: &universal_hash::ParBlocks<Self>) {
        self.0.update(blocks.as_flattened());
    }

    fn blocks_needed_to_align(&self) -> usize {
        if self.0.buf_len > 0 {
            0
        } else {
            ((NH_UNIT - self.0.unit_pos) % NH_UNIT) / NH_STRIDE
        }
    }
}

#[cfg(feature = "zeroize")]
impl Drop for Poly1305 {
    fn drop(&mut self) {
        self.core.wipe();
        zeroize::Zeroize::zeroize(&mut self.buf);
    }
}

#[cfg(feature = "zeroize")]
impl zeroize::ZeroizeOnDrop for Poly1305 {}

#[cfg(feature = "zeroize")]
impl Drop for NhPoly1305 {
    fn drop(&mut self) {
        use zeroize::Zeroize;
        self.key.wipe();
        self.poly.wipe();
        self.sums.zeroize();
        self.buf.zeroize();
    }
}

#[cfg(feature = "zeroize")]
impl zeroize::ZeroizeOnDrop for NhPoly1305 {}
