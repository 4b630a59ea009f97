//! aarch64 Advanced SIMD NH: four 16-byte strides at a time, transposed so
//! that each vector holds one word position of four strides; the key is
//! stored transposed the same way (see [`super::NhKey`]), so a pass over
//! four strides is four adds and four `umlal`/`umlal2` (32x32->64
//! multiply-accumulate), with no per-pass shuffle.

use super::shared::{NH_KEY_WORDS, NH_STRIDE, pipelined_units};
use crate::poly1305::PolyCore;
use core::arch::aarch64::*;

/// Key groups (strides) per transposed row.
const G: usize = NH_KEY_WORDS / 4;

#[inline]
#[target_feature(enable = "neon")]
fn strides(key: &[u32; NH_KEY_WORDS], stride: usize, msg: &[u8], sums: &mut [u64; 4]) {
    let n = msg.len() / NH_STRIDE;
    assert!(stride + n <= 64);
    let kp = key.as_ptr();
    let mp = msg.as_ptr();
    let zero = vdupq_n_u64(0);
    let mut acc02 = [zero; 4];
    let mut acc13 = [zero; 4];
    let mut i = 0;
    while i + 4 <= n {
        // SAFETY: `i + 4 <= n`: the 64 bytes at `16 * i` are inside `msg`;
        // byte loads have no alignment requirement.
        let (a, b, c, d) = unsafe {
            let p = mp.add(NH_STRIDE * i);
            (
                vreinterpretq_u32_u8(vld1q_u8(p)),
                vreinterpretq_u32_u8(vld1q_u8(p.add(16))),
                vreinterpretq_u32_u8(vld1q_u8(p.add(32))),
                vreinterpretq_u32_u8(vld1q_u8(p.add(48))),
            )
        };
        // 4x4 transpose: w[j] = word j of the four strides.
        let ab0 = vreinterpretq_u64_u32(vtrn1q_u32(a, b));
        let ab1 = vreinterpretq_u64_u32(vtrn2q_u32(a, b));
        let cd0 = vreinterpretq_u64_u32(vtrn1q_u32(c, d));
        let cd1 = vreinterpretq_u64_u32(vtrn2q_u32(c, d));
        let w0 = vreinterpretq_u32_u64(vtrn1q_u64(ab0, cd0));
        let w2 = vreinterpretq_u32_u64(vtrn2q_u64(ab0, cd0));
        let w1 = vreinterpretq_u32_u64(vtrn1q_u64(ab1, cd1));
        let w3 = vreinterpretq_u32_u64(vtrn2q_u64(ab1, cd1));
        for p in 0..4 {
            let g = stride + i + p;
            // SAFETY: `g + 3 <= 60 + 3 + 3 = 66 < G = 67`, so each four-word
            // load stays inside row `j` of the transposed key.
            let (k0, k1, k2, k3) = unsafe {
                (
                    vld1q_u32(kp.add(g)),
                    vld1q_u32(kp.add(G + g)),
                    vld1q_u32(kp.add(2 * G + g)),
                    vld1q_u32(kp.add(3 * G + g)),
                )
            };
            let t0 = vaddq_u32(w0, k0);
            let t1 = vaddq_u32(w1, k1);
            let t2 = vaddq_u32(w2, k2);
            let t3 = vaddq_u32(w3, k3);
            let x = vmlal_u32(acc02[p], vget_low_u32(t0), vget_low_u32(t2));
            acc02[p] = vmlal_high_u32(x, t0, t2);
            let y = vmlal_u32(acc13[p], vget_low_u32(t1), vget_low_u32(t3));
            acc13[p] = vmlal_high_u32(y, t1, t3);
        }
        i += 4;
    }
    let mut out = [0u64; 4];
    for (p, o) in out.iter_mut().enumerate() {
        *o = vaddvq_u64(vaddq_u64(acc02[p], acc13[p]));
    }
    // The last 0..=3 strides, in scalar code on the transposed key.
    for (q, blk) in msg[NH_STRIDE * i..].chunks_exact(NH_STRIDE).enumerate() {
        let m = |j: usize| {
            u32::from_le_bytes([blk[4 * j], blk[4 * j + 1], blk[4 * j + 2], blk[4 * j + 3]])
        };
        for (p, o) in out.iter_mut().enumerate() {
            let g = stride + i + q + p;
            let t = |j: usize| m(j).wrapping_add(key[G * j + g]) as u64;
            *o = o.wrapping_add(t(0) * t(2)).wrapping_add(t(1) * t(3));
        }
    }
    for (s, o) in sums.iter_mut().zip(out) {
        *s = s.wrapping_add(o);
    }
}

#[target_feature(enable = "neon")]
fn units_neon(key: &[u32; NH_KEY_WORDS], msg: &[u8], poly: &mut PolyCore) {
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
    // SAFETY: this backend is only selected when the build targets NEON
    // (`cfg!(target_feature = "neon")` in `Backend::is_available`).
    unsafe { strides(key, stride, msg, sums) }
}

/// NH every full unit of `msg` and feed the values to `poly`.
pub(crate) fn units(key: &[u32; NH_KEY_WORDS], msg: &[u8], poly: &mut PolyCore) {
    // SAFETY: as in `accumulate`: NEON is enabled for this target.
    unsafe { units_neon(key, msg, poly) }
}
