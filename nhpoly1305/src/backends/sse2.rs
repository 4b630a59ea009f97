//! x86_64 SSE2 NH: one 16-byte stride per register.
//!
//! The message words are shuffled to `[m0 m2 m1 m3]` and the key is stored
//! the same way ([`super::NhKey`]), so after one 32-bit add each 64-bit lane
//! holds the two factors of one product: `pmuludq(t, t >> 32)` gives
//! `(m0+k0)(m2+k2)` and `(m1+k1)(m3+k3)` at once.

use super::shared::{NH_KEY_WORDS, NH_STRIDE, pipelined_units};
use crate::poly1305::PolyCore;
use core::arch::x86_64::*;

/// `[0 1 2 3]` -> `[0 2 1 3]`.
const SHUF: i32 = 0b11_01_10_00;

#[inline]
#[target_feature(enable = "sse2")]
fn strides(key: &[u32; NH_KEY_WORDS], stride: usize, msg: &[u8], sums: &mut [u64; 4]) {
    let n = msg.len() / NH_STRIDE;
    assert!(stride + n <= 64);
    let mut acc = [_mm_setzero_si128(); 4];
    for i in 0..n {
        // SAFETY: `i < n`, so the 16 bytes at `16 * i` are inside `msg`.
        let m = unsafe { _mm_loadu_si128(msg.as_ptr().add(NH_STRIDE * i).cast()) };
        let m = _mm_shuffle_epi32(m, SHUF);
        for (p, a) in acc.iter_mut().enumerate() {
            // SAFETY: group `stride + i + p <= 63 + 3 = 66`, and the key has
            // 67 groups of four words, so the 16 bytes are inside `key`.
            let k = unsafe { _mm_loadu_si128(key.as_ptr().add(4 * (stride + i + p)).cast()) };
            let t = _mm_add_epi32(m, k);
            *a = _mm_add_epi64(*a, _mm_mul_epu32(t, _mm_srli_epi64(t, 32)));
        }
    }
    let s01 = _mm_add_epi64(
        _mm_unpacklo_epi64(acc[0], acc[1]),
        _mm_unpackhi_epi64(acc[0], acc[1]),
    );
    let s23 = _mm_add_epi64(
        _mm_unpacklo_epi64(acc[2], acc[3]),
        _mm_unpackhi_epi64(acc[2], acc[3]),
    );
    let mut out = [0u64; 4];
    // SAFETY: `out` is 32 bytes; two unaligned 16-byte stores.
    unsafe {
        _mm_storeu_si128(out.as_mut_ptr().cast(), s01);
        _mm_storeu_si128(out.as_mut_ptr().add(2).cast(), s23);
    }
    for (s, o) in sums.iter_mut().zip(out) {
        *s = s.wrapping_add(o);
    }
}

#[target_feature(enable = "sse2")]
fn units_sse2(key: &[u32; NH_KEY_WORDS], msg: &[u8], poly: &mut PolyCore) {
    pipelined_units(msg, poly, |unit| {
        let mut sums = [0u64; 4];
        strides(key, 0, unit, &mut sums);
        sums
    });
}

/// Add the NH sums of `msg` starting at stride `stride` into `sums`.
pub(crate) fn accumulate(
    key: &[u32; NH_KEY_WORDS],
    stride: usize,
    msg: &[u8],
    sums: &mut [u64; 4],
) {
    // SAFETY: SSE2 is part of the x86_64 baseline.
    unsafe { strides(key, stride, msg, sums) }
}

/// NH every full unit of `msg` and feed the values to `poly`.
pub(crate) fn units(key: &[u32; NH_KEY_WORDS], msg: &[u8], poly: &mut PolyCore) {
    // SAFETY: SSE2 is part of the x86_64 baseline.
    unsafe { units_sse2(key, msg, poly) }
}
