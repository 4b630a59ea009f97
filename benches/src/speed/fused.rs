//! Row helpers for whole-buffer mode types (a cipher crate's own fused
//! modes, such as `sm4`'s), one call per row: each takes a closure that
//! makes the keyed mode object per message, so a row is one line inside a
//! family's backend loop, e.g. in `sm4.rs`'s `rows`:
//!
//! ```ignore
//! fused::stream(s, "sm4", "ctr-fused", b.name(), || sm4::Sm4Ctr::new(&key.into(), &iv.into()));
//! fused::encrypt(s, "sm4", "cbc-enc-fused", b.name(), || sm4::Sm4CbcEnc::new(&key.into(), &iv.into()));
//! fused::decrypt(s, "sm4", "cbc-dec-fused", b.name(), || sm4::Sm4CbcDec::new(&key.into(), &iv.into()));
//! fused::buffer(s, "sm4", "xts-enc-fused", b.name(), |m| xts.encrypt_sector(&iv, m).unwrap());
//! ```
//!
//! Every row made here (like every other `speed` row) is also a row of
//! `armcount`, so `scripts/arm-perf.sh` counts it with no change.

use cipher::{
    BlockModeDecrypt, BlockModeEncrypt, BlockSizeUser, StreamCipher, array::Array, consts::U16,
};
use std::hint::black_box;

/// The whole 16-byte blocks of `m`.
fn blocks(m: &mut [u8]) -> &mut [Array<u8, U16>] {
    Array::slice_as_chunks_mut(m).0
}

/// A stream mode: `new()` per message, then the keystream over it.
pub fn stream<C: StreamCipher>(
    s: &mut crate::Speed,
    alg: &str,
    mode: &str,
    backend: &str,
    new: impl Fn() -> C,
) {
    buffer(s, alg, mode, backend, |m| new().apply_keystream(m));
}

/// A block mode encryptor: `new()` per message, then its whole blocks.
pub fn encrypt<C: BlockModeEncrypt + BlockSizeUser<BlockSize = U16>>(
    s: &mut crate::Speed,
    alg: &str,
    mode: &str,
    backend: &str,
    new: impl Fn() -> C,
) {
    buffer(s, alg, mode, backend, |m| new().encrypt_blocks(blocks(m)));
}

/// A block mode decryptor: `new()` per message, then its whole blocks.
pub fn decrypt<C: BlockModeDecrypt + BlockSizeUser<BlockSize = U16>>(
    s: &mut crate::Speed,
    alg: &str,
    mode: &str,
    backend: &str,
    new: impl Fn() -> C,
) {
    buffer(s, alg, mode, backend, |m| new().decrypt_blocks(blocks(m)));
}

/// Any in-place operation on one message (an XTS sector, an AEAD's
/// encryption with its tag).
pub fn buffer(s: &mut crate::Speed, alg: &str, mode: &str, backend: &str, f: impl Fn(&mut [u8])) {
    s.row(alg, mode, backend, |size| {
        let mut buf = crate::buffer(size);
        let f = &f;
        Some(move || {
            f(black_box(&mut buf));
            black_box(&buf);
        })
    });
}
