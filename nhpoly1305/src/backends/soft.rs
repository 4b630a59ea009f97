//! Portable NH: four passes of 32-bit additions and 32x32->64
//! multiplications, no data-dependent branches or indices.

use super::shared::{NH_KEY_WORDS, NH_STRIDE, pipelined_units};
use crate::poly1305::PolyCore;

/// Add the NH sums of `msg` starting at stride `stride` into `sums`.
/// `key` is in natural word order.
#[inline]
pub(crate) fn accumulate(
    key: &[u32; NH_KEY_WORDS],
    stride: usize,
    msg: &[u8],
    sums: &mut [u64; 4],
) {
    let mut s = *sums;
    for (i, blk) in msg.chunks_exact(NH_STRIDE).enumerate() {
        let m = |j: usize| {
            u32::from_le_bytes([blk[4 * j], blk[4 * j + 1], blk[4 * j + 2], blk[4 * j + 3]])
        };
        let (m0, m1, m2, m3) = (m(0), m(1), m(2), m(3));
        let k = &key[4 * (stride + i)..4 * (stride + i) + 16];
        for (p, sp) in s.iter_mut().enumerate() {
            let a0 = m0.wrapping_add(k[4 * p]) as u64;
            let a1 = m1.wrapping_add(k[4 * p + 1]) as u64;
            let a2 = m2.wrapping_add(k[4 * p + 2]) as u64;
            let a3 = m3.wrapping_add(k[4 * p + 3]) as u64;
            *sp = sp.wrapping_add(a0 * a2).wrapping_add(a1 * a3);
        }
    }
    *sums = s;
}

/// NH every full unit of `msg` and feed the values to `poly`.
#[inline]
pub(crate) fn units(key: &[u32; NH_KEY_WORDS], msg: &[u8], poly: &mut PolyCore) {
    pipelined_units(msg, poly, |unit| {
        let mut sums = [0u64; 4];
        accumulate(key, 0, unit, &mut sums);
        sums
    });
}
