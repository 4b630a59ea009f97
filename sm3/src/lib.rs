#![doc = include_str!("../README.md")]
#![no_std]
#![warn(missing_docs)]

pub use digest::{self, Digest};

mod backends;

/// The block-level core under the module path RustCrypto `sm3` gives it
/// (`sm3_simd::block_api::Sm3Core`); the same type as [`Sm3Core`].
pub mod block_api {
    pub use crate::Sm3Core;
}

#[doc(hidden)]
pub use backends::{Backend, Lanes};

use core::fmt;
use digest::{
    HashMarker, Output,
    array::Array,
    block_api::{
        AlgorithmName, Block, BlockSizeUser, Buffer, BufferKindUser, Eager, FixedOutputCore,
        OutputSizeUser, Reset, UpdateCore,
    },
    common::hazmat::{DeserializeStateError, SerializableState, SerializedState},
    typenum::{U32, U40, U64},
};

/// Block-level SM3 state: the chaining value, the number of blocks
/// compressed, and the backend chosen for this CPU when it was made.
#[derive(Clone)]
pub struct Sm3Core {
    h: [u32; 8],
    blocks: u64,
    backend: Backend,
}

impl Sm3Core {
    fn with(backend: Backend) -> Self {
        Sm3Core {
            h: backends::soft::IV,
            blocks: 0,
            backend,
        }
    }
}

impl HashMarker for Sm3Core {}

impl BlockSizeUser for Sm3Core {
    type BlockSize = U64;
}

impl BufferKindUser for Sm3Core {
    type BufferKind = Eager;
}

impl OutputSizeUser for Sm3Core {
    type OutputSize = U32;
}

impl UpdateCore for Sm3Core {
    #[inline]
    fn update_blocks(&mut self, blocks: &[Block<Self>]) {
        self.blocks = self.blocks.wrapping_add(blocks.len() as u64);
        self.backend
            .compress(&mut self.h, Array::cast_slice_to_core(blocks));
    }
}

impl FixedOutputCore for Sm3Core {
    #[inline]
    fn finalize_fixed_core(&mut self, buffer: &mut Buffer<Self>, out: &mut Output<Self>) {
        let bits = self
            .blocks
            .wrapping_mul(512)
            .wrapping_add(8 * buffer.get_pos() as u64);
        let mut h = self.h;
        let backend = self.backend;
        buffer.len64_padding_be(bits, |b| {
            backend.compress(&mut h, core::slice::from_ref(&b.0))
        });
        for (o, v) in out.chunks_exact_mut(4).zip(h) {
            o.copy_from_slice(&v.to_be_bytes());
        }
    }
}

impl Default for Sm3Core {
    #[inline]
    fn default() -> Self {
        Self::with(backends::detect())
    }
}

impl Reset for Sm3Core {
    #[inline]
    fn reset(&mut self) {
        *self = Self::with(self.backend);
    }
}

impl AlgorithmName for Sm3Core {
    fn write_alg_name(f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Sm3")
    }
}

impl fmt::Debug for Sm3Core {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sm3Core")
            .field("backend", &self.backend.name())
            .finish_non_exhaustive()
    }
}

impl Drop for Sm3Core {
    fn drop(&mut self) {
        #[cfg(feature = "zeroize")]
        {
            use zeroize::Zeroize;
            self.h.zeroize();
            self.blocks.zeroize();
        }
    }
}

#[cfg(feature = "zeroize")]
impl zeroize::ZeroizeOnDrop for Sm3Core {}

/// The serialized state: the eight chaining words (little-endian) and the
/// block count (little-endian `u64`), 40 bytes.
impl SerializableState for Sm3Core {
    type SerializedStateSize = U40;

    fn serialize(&self) -> SerializedState<Self> {
        let mut s = SerializedState::<Self>::default();
        for (o, v) in s.chunks_exact_mut(4).zip(self.h) {
            o.copy_from_slice(&v.to_le_bytes());
        }
        s[32..].copy_from_slice(&self.blocks.to_le_bytes());
        s
    }

    fn deserialize(s: &SerializedState<Self>) -> Result<Self, DeserializeStateError> {
        let mut core = Self::default();
        for (v, i) in core.h.iter_mut().zip(s.chunks_exact(4)) {
            *v = u32::from_le_bytes([i[0], i[1], i[2], i[3]]);
        }
        let mut n = [0u8; 8];
        n.copy_from_slice(&s[32..]);
        core.blocks = u64::from_le_bytes(n);
        Ok(core)
    }
}

digest::buffer_fixed!(
    /// The SM3 hash function (GB/T 32905-2016), 256-bit output.
    pub struct Sm3(Sm3Core);
    oid: "1.2.156.10197.1.401";
    impl: FixedHashTraits;
);

impl Sm3 {
    /// A hasher pinned to `backend`; `None` if this CPU lacks it (hidden
    /// test hook).
    #[doc(hidden)]
    pub fn with_backend(backend: Backend) -> Option<Self> {
        use digest::block_api::CoreProxy;
        backend
            .is_available()
            .then(|| Self::compose(Sm3Core::with(backend), Default::default()))
    }
}

/// The name of the SM3 backend this CPU runs for one message: `"soft"`,
/// `"avx"`, `"avx512vl"`, `"neon"` or `"sm3ce"`.
pub fn backend() -> &'static str {
    backends::detect().name()
}

/// The name of the engine [`digest_many`] uses on this CPU: `"avx512"` (16
/// messages at once), `"avx2"` (8), `"neon"` (4) or `"serial"` (one message
/// after another with the [`backend`]).
pub fn digest_many_backend() -> &'static str {
    backends::detect_lanes().name()
}

/// The error of [`digest_many`]: the number of outputs differs from the
/// number of messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LengthMismatch {
    /// Number of messages given.
    pub messages: usize,
    /// Number of output slots given.
    pub outputs: usize,
}

impl fmt::Display for LengthMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "sm3_simd::digest_many: {} messages but {} output slots",
            self.messages, self.outputs
        )
    }
}

impl core::error::Error for LengthMismatch {}

/// Hash many independent messages at once: `out[i] = SM3(messages[i])`.
///
/// The messages may have any, unequal, lengths. With AVX-512 (16 lanes),
/// AVX2 (8) or NEON (4) each message gets one 32-bit SIMD lane; a lane takes
/// the next message as soon as its own ends, and the last few messages
/// are finished by the one-message [`backend`]. Nothing is allocated.
///
/// # Errors
/// [`LengthMismatch`] if `out.len() != messages.len()` (nothing is written).
///
/// ```
/// let msgs: [&[u8]; 3] = [b"abc", b"", &[0x61; 1000]];
/// let mut out = [[0u8; 32]; 3];
/// sm3_simd::digest_many(&msgs, &mut out).unwrap();
/// use sm3_simd::Digest;
/// assert_eq!(out[0], sm3_simd::Sm3::digest(b"abc").as_slice());
/// ```
pub fn digest_many(messages: &[&[u8]], out: &mut [[u8; 32]]) -> Result<(), LengthMismatch> {
    digest_many_with(backends::detect_lanes(), messages, out)
}

/// [`digest_many`] with a chosen engine (hidden test hook).
///
/// # Panics
/// If this CPU lacks `lanes`.
#[doc(hidden)]
pub fn digest_many_with(
    lanes: Lanes,
    messages: &[&[u8]],
    out: &mut [[u8; 32]],
) -> Result<(), LengthMismatch> {
    if messages.len() != out.len() {
        return Err(LengthMismatch {
            messages: messages.len(),
            outputs: out.len(),
        });
    }
    assert!(
        lanes.is_available(),
        "sm3: digest_many engine {} is not available on this CPU",
        lanes.name()
    );
    lanes.run(backends::detect(), messages, out);
    Ok(())
}
