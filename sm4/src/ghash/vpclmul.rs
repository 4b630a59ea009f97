//! GHASH with VPCLMULQDQ on `zmm` (the `vpclmul` engine, beside the `gfni`
//! SM4 kernel): four blocks per register, sixteen per reduction.
//!
//! As `clmul`, four lanes at a time: blocks byte-reversed per lane,
//! schoolbook products (four `vpclmulqdq` per register) summed unreduced
//! over the four registers of a group with `vpternlogq`, one reduction per
//! lane and an XOR of the four lanes into the state. The group's serial
//! chain (state -> product -> reduction -> lane sum -> state) is why the
//! table has sixteen powers: at eight blocks per reduction it, not the
//! multiplier, set the pace. A shorter rest is one group with masked
//! loads (zero lanes multiply to zero).

use super::clmul::BSWAP;
use crate::block::Blk;
use crate::ghash::{GhashKey, REDUCE};
use crate::simd::x86::zmm::xor;
use core::arch::x86_64::*;

ghash_token!(
    VpclmulGhash,
    "VPCLMULQDQ, PCLMULQDQ, AVX-512F and AVX-512BW (with the OS saving `zmm` state)"
);

ghash_wide_body!(
    features = "vpclmulqdq,avx512f,avx512bw,pclmulqdq,avx2",
    lanes = 4,
    agg = 16,
    narrow = 4
);

type V = __m512i;

/// The unreduced sum of a group's products, per lane.
#[derive(Clone, Copy)]
struct Acc {
    lo: __m512i,
    mid: __m512i,
    hi: __m512i,
}

#[inline]
#[target_feature(enable = "avx512f")]
fn zero() -> V {
    _mm512_setzero_si512()
}

/// `y` in lane 0, the other lanes zero.
#[inline]
#[target_feature(enable = "avx512f")]
fn widen(y: __m128i) -> V {
    _mm512_zextsi128_si512(y)
}

/// The byte reversal index of every lane.
#[inline]
#[target_feature(enable = "avx512f")]
fn bswap() -> V {
    // SAFETY: a 16-byte load from a 16-byte array.
    _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(BSWAP.as_ptr().cast()) })
}

/// `a ^ b ^ c`.
#[inline]
#[target_feature(enable = "avx512f")]
fn xor3(a: __m512i, b: __m512i, c: __m512i) -> __m512i {
    _mm512_ternarylogic_epi64::<0x96>(a, b, c)
}

/// `acc += x·h` lane by lane, or `acc = x·h` when `first`.
#[inline]
#[target_feature(enable = "vpclmulqdq,avx512f")]
fn mul_add(acc: &mut Acc, x: __m512i, h: __m512i, first: bool) {
    let lo = _mm512_clmulepi64_epi128::<0x00>(x, h);
    let hi = _mm512_clmulepi64_epi128::<0x11>(x, h);
    let m0 = _mm512_clmulepi64_epi128::<0x01>(x, h);
    let m1 = _mm512_clmulepi64_epi128::<0x10>(x, h);
    if first {
        *acc = Acc {
            lo,
            mid: _mm512_xor_si512(m0, m1),
            hi,
        };
    } else {
        acc.lo = _mm512_xor_si512(acc.lo, lo);
        acc.mid = xor3(acc.mid, m0, m1);
        acc.hi = _mm512_xor_si512(acc.hi, hi);
    }
}

/// Each lane's sum times `x^-128`, reduced (as `ghash_clmul::reduce`).
#[inline]
#[target_feature(enable = "vpclmulqdq,avx512f")]
fn reduce(acc: Acc) -> __m512i {
    let c = _mm512_set1_epi64(REDUCE as i64);
    let t = _mm512_clmulepi64_epi128::<0x00>(acc.lo, c);
    let mid = xor3(acc.mid, t, _mm512_shuffle_epi32::<0x4e>(acc.lo));
    let t = _mm512_clmulepi64_epi128::<0x00>(mid, c);
    xor3(acc.hi, t, _mm512_shuffle_epi32::<0x4e>(mid))
}

/// The sum of the four lanes.
#[inline]
#[target_feature(enable = "avx512f")]
fn fold(v: __m512i) -> __m128i {
    let v = _mm256_xor_si256(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64::<1>(v));
    _mm_xor_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v))
}

/// The qword mask of the first `k` lanes (`k` in 0..=4).
#[inline]
fn lanes(k: usize) -> __mmask8 {
    ((1u32 << (2 * k)) - 1) as __mmask8
}

/// Blocks `i..i + k` of `blocks` (`k` in 1..=4), byte-reversed per lane,
/// zero in the lanes past `k`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn load_blocks(blocks: &[Blk], i: usize, k: usize, bswap: __m512i) -> __m512i {
    let b = &blocks[i..i + k];
    let v = if k == L {
        // SAFETY: `b` is 64 readable bytes.
        unsafe { _mm512_loadu_si512(b.as_ptr().cast()) }
    } else {
        // Block by block, not one masked load: the blocks of a short
        // message were often just stored (a GCM ciphertext), and a load
        // over several stores cannot take its data from them; it waits
        // for them to reach the cache.
        let mut v = _mm512_setzero_si512();
        for (j, blk) in b.iter().enumerate() {
            // SAFETY: a 16-byte load from a 16-byte block.
            let x = unsafe { _mm_loadu_si128(blk.as_ptr().cast()) };
            v = match j {
                0 => _mm512_inserti32x4::<0>(v, x),
                1 => _mm512_inserti32x4::<1>(v, x),
                _ => _mm512_inserti32x4::<2>(v, x),
            };
        }
        v
    };
    _mm512_shuffle_epi8(v, bswap)
}

/// `pow[i..i + 4]` of the key table, the lanes from `k` on zero.
#[inline]
#[target_feature(enable = "avx512f")]
fn load_powers(key: &GhashKey, i: usize, k: usize) -> __m512i {
    let p = &key.pow[i..i + k];
    // SAFETY: `p` is `16 k` readable bytes (little-endian `u128`s: the low
    // half in the low qword of each lane); masked-off lanes are not read.
    unsafe { _mm512_maskz_loadu_epi64(lanes(k), p.as_ptr().cast()) }
}
