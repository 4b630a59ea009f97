//! x86_64 AVX-512F NH: four 16-byte strides per register. With the key
//! stored pre-shuffled (see [`super::NhKey`]) each pass over four strides is
//! one add, one shift, one multiply and one accumulate; the message shuffle
//! is shared by the four passes. A final 1..3 strides use masked loads and a
//! masked accumulate. The steps over a unit are written out, not looped.

use super::shared::{NH_KEY_WORDS, NH_STRIDE, pipelined_units};
use crate::poly1305::PolyCore;
use core::arch::x86_64::*;

/// `[0 1 2 3]` -> `[0 2 1 3]` in each 128-bit lane.
const SHUF: _MM_PERM_ENUM = 0b11_01_10_00;

#[inline]
#[target_feature(enable = "avx512f")]
fn strides(key: &[u32; NH_KEY_WORDS], stride: usize, msg: &[u8], sums: &mut [u64; 4]) {
    let n = msg.len() / NH_STRIDE;
    assert!(stride + n <= 64);
    let kp = key.as_ptr();
    let mp = msg.as_ptr();
    let mut acc = [_mm512_setzero_si512(); 4];
    let four = |i: usize, acc: &mut [__m512i; 4]| {
        // SAFETY: called only with `i + 4 <= n` (below): the 64 bytes at
        // `16 * i` are inside `msg`.
        let m = unsafe { _mm512_loadu_si512(mp.add(NH_STRIDE * i).cast()) };
        let m = _mm512_shuffle_epi32(m, SHUF);
        for (p, a) in acc.iter_mut().enumerate() {
            // SAFETY: groups `stride + i + p ..= stride + i + p + 3` are at
            // most 60 + 3 + 3 = 66 < 67 key groups.
            let k = unsafe { _mm512_loadu_si512(kp.add(4 * (stride + i + p)).cast()) };
            let t = _mm512_add_epi32(m, k);
            *a = _mm512_add_epi64(*a, _mm512_mul_epu32(t, _mm512_srli_epi64(t, 32)));
        }
    };
    // NHPoly1305 at 16 KiB on Golden Cove: 10.7 -> 10.35 cycles per 64 bytes
    // written out instead of looped.
    super::shared::unrolled_steps!(four, acc, n, 4; 0 4 8 12 16 20 24 28 32 36 40 44 48 52 56 60);
    let i = n & !3;
    let r = n - i;
    if r > 0 {
        let wmask: __mmask16 = (1u16 << (4 * r)) - 1;
        let qmask: __mmask8 = (1u8 << (2 * r)) - 1;
        // SAFETY: only the first `r` strides (inside `msg`) are read; masked
        // lanes are not accessed (AVX-512 masked loads suppress faults).
        let m = unsafe { _mm512_maskz_loadu_epi32(wmask, mp.add(NH_STRIDE * i).cast()) };
        let m = _mm512_shuffle_epi32(m, SHUF);
        for (p, a) in acc.iter_mut().enumerate() {
            // SAFETY: only groups `stride + i + p .. + r` are read, at most
            // 63 + 3 = 66 < 67; the rest are masked off.
            let k = unsafe { _mm512_maskz_loadu_epi32(wmask, kp.add(4 * (stride + i + p)).cast()) };
            let t = _mm512_add_epi32(m, k);
            let prod = _mm512_mul_epu32(t, _mm512_srli_epi64(t, 32));
            *a = _mm512_mask_add_epi64(*a, qmask, *a, prod);
        }
    }
    // Transposing reduction: u = [s0 s1] partials and v = [s2 s3] partials
    // per 128-bit lane, then fold the four lanes.
    let [a0, a1, a2, a3] = acc;
    let u = _mm512_add_epi64(_mm512_unpacklo_epi64(a0, a1), _mm512_unpackhi_epi64(a0, a1));
    let v = _mm512_add_epi64(_mm512_unpacklo_epi64(a2, a3), _mm512_unpackhi_epi64(a2, a3));
    let w = _mm512_add_epi64(
        _mm512_shuffle_i64x2(u, v, 0b01_00_01_00),
        _mm512_shuffle_i64x2(u, v, 0b11_10_11_10),
    );
    let x = _mm512_add_epi64(w, _mm512_shuffle_i64x2(w, w, 0b10_11_00_01));
    let mut out = [0u64; 4];
    // SAFETY: `out` is 32 bytes; two unaligned 16-byte stores.
    unsafe {
        _mm_storeu_si128(out.as_mut_ptr().cast(), _mm512_castsi512_si128(x));
        _mm_storeu_si128(
            out.as_mut_ptr().add(2).cast(),
            _mm512_extracti32x4_epi32(x, 2),
        );
    }
    for (s, o) in sums.iter_mut().zip(out) {
        *s = s.wrapping_add(o);
    }
}

#[target_feature(enable = "avx512f")]
fn units_avx512(key: &[u32; NH_KEY_WORDS], msg: &[u8], poly: &mut PolyCore) {
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
    // confirmed AVX-512F (cpufeatures), in `detect()` or `with_backend`.
    unsafe { strides(key, stride, msg, sums) }
}

/// NH every full unit of `msg` and feed the values to `poly`.
pub(crate) fn units(key: &[u32; NH_KEY_WORDS], msg: &[u8], poly: &mut PolyCore) {
    // SAFETY: as in `accumulate`: AVX-512F was detected for this key.
    unsafe { units_avx512(key, msg, poly) }
}
