//! aarch64 vector primitives shared by the SM4 kernels (`neon`, `sm4ce`).
//! Knows nothing of SM4 or of the modes.

use core::arch::aarch64::*;

/// A block given as its 16 bytes read as a native-endian number.
#[inline]
#[target_feature(enable = "neon")]
pub(crate) fn bytes_of(b: u128) -> uint8x16_t {
    vreinterpretq_u8_u64(vcombine_u64(
        vcreate_u64(b as u64),
        vcreate_u64((b >> 64) as u64),
    ))
}
