//! x86_64 AVX2 NH: two 16-byte strides per register, the SSE2 scheme
//! (see `sse2.rs`) twice as wide.

use super::shared::{NH_KEY_WORDS, NH_STRIDE, pipelined_units};
use crate::poly1305::PolyCore;
use core::arch::x86_64::*;

/// `[0 1 2 3]` -> `[0 2 1 3]` in each 128-bit lane.
const SHUF: i32 = 0b11_01_10_00;

#[inline]
#[target_feature(enable = "avx2")]
fn strides(key: &[u32; NH_KEY_WORDS], stride: usize, msg: &[u8], sums: &mut [u64; 4]) {
    let n = msg.len() / NH_STRIDE;
    assert!(stride + n <= 64);
    let kp = key.as_ptr();
    let mp = msg.as_ptr();
    let mut acc = [_mm256_setzero_si256(); 4];
    let two = |i: usize, acc: &mut [__m256i; 4]| {
        // SAFETY: called only with `i + 2 <= n` (below): the 32 bytes at
        // `16 * i` are inside `msg`.
        let m = unsafe { _mm256_loadu_si256(mp.add(NH_STRIDE * i).cast()) };
        let m = _mm256_shuffle_epi32(m, SHUF);
        for (p, a) in acc.iter_mut().enumerate() {
            // SAFETY: groups `stride + i + p` and the next one are at most
            // 62 + 3 + 1 = 66 < 67 key groups.
            let k = unsafe { _mm256_loadu_si256(kp.add(4 * (stride + i + p)).cast()) };
            let t = _mm256_add_epi32(m, k);
            *a = _mm256_add_epi64(*a, _mm256_mul_epu32(t, _mm256_srli_epi64(t, 32)));
        }
    };
    // NHPoly1305 at 16 KiB on Golden Cove: 14.2 -> 13.4 cycles per 64 bytes
    // written out instead of looped.
    super::shared::unrolled_steps!(two, acc, n, 2; 0 2 4 6 8 10 12 14 16 18 20 22 24 26 28 30 32 34 36 38 40 42 44 46 48 50 52 54 56 58 60 62);
    let i = n & !1;
    if i < n {
        // SAFETY: `i < n`: the 16 bytes at `16 * i` are inside `msg`.
        let m = unsafe { _mm_loadu_si128(mp.add(NH_STRIDE * i).cast()) };
        let m = _mm_shuffle_epi32(m, SHUF);
        for (p, a) in acc.iter_mut().enumerate() {
            // SAFETY: group `stride + i + p <= 66 < 67`.
            let k = unsafe { _mm_loadu_si128(kp.add(4 * (stride + i + p)).cast()) };
            let t = _mm_add_epi32(m, k);
            let prod = _mm_mul_epu32(t, _mm_srli_epi64(t, 32));
            *a = _mm256_add_epi64(*a, _mm256_zextsi128_si256(prod));
        }
    }
    // Transposing reduction: u = [s0 s1 | s0 s1], v = [s2 s3 | s2 s3]
    // partials, then add the lanes crosswise.
    let [a0, a1, a2, a3] = acc;
    let u = _mm256_add_epi64(_mm256_unpacklo_epi64(a0, a1), _mm256_unpackhi_epi64(a0, a1));
    let v = _mm256_add_epi64(_mm256_unpacklo_epi64(a2, a3), _mm256_unpackhi_epi64(a2, a3));
    let w = _mm256_add_epi64(
        _mm256_permute2x128_si256(u, v, 0x20),
        _mm256_permute2x128_si256(u, v, 0x31),
    );
    let mut out = [0u64; 4];
    // SAFETY: `out` is 32 bytes; one unaligned 32-byte store.
    unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), w) };
    for (s, o) in sums.iter_mut().zip(out) {
        *s = s.wrapping_add(o);
    }
}

#[target_feature(enable = "avx2")]
fn units_avx2(key: &[u32; NH_KEY_WORDS], msg: &[u8], poly: &mut PolyCore) {
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
    // SAFETY: this backend is only selected after `Backend::is_available`
    // confirmed AVX2 (cpufeatures), in `detect()` or `with_backend`.
    unsafe { strides(key, stride, msg, sums) }
}

/// NH every full unit of `msg` and feed the values to `poly`.
pub(crate) fn units(key: &[u32; NH_KEY_WORDS], msg: &[u8], poly: &mut PolyCore) {
    // SAFETY: as in `accumulate`: AVX2 was detected for this key.
    unsafe { units_avx2(key, msg, poly) }
}
