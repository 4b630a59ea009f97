//! GHASH with VPCLMULQDQ on `ymm` (the `vpclmul256` engine, beside the
//! `gfni256` and `avx` SM4 kernels): two blocks per register, sixteen per
//! reduction, AVX2 only (no AVX-512 instruction), for the cores that have
//! VPCLMULQDQ without AVX-512 (Alder Lake and later client cores, Zen 3).
//!
//! `vpclmul` at half the width: blocks byte-reversed per lane,
//! schoolbook products (four `vpclmulqdq` per register) summed unreduced
//! over the eight registers of a group, one reduction per lane and an XOR
//! of the two lanes into the state. A partial register is a 16-byte load
//! into the low lane (nothing past the slice is read); fewer than four
//! blocks go to `clmul` (two or three in `ymm` were slower).

use super::clmul::BSWAP;
use crate::block::Blk;
use crate::ghash::{GhashKey, REDUCE};
use crate::simd::x86::ymm::{self, xor};
use core::arch::x86_64::*;

type V = __m256i;

ghash_token!(Vpclmul256Ghash, "VPCLMULQDQ, PCLMULQDQ and AVX2");
ghash_wide_body!(
    features = "vpclmulqdq,pclmulqdq,avx2",
    lanes = 2,
    agg = 16,
    narrow = 4
);
ghash_schoolbook!(
    features = "vpclmulqdq,avx2",
    clmul = _mm256_clmulepi64_epi128,
    shuffle = _mm256_shuffle_epi32,
    set1 = _mm256_set1_epi64x
);

#[inline]
#[target_feature(enable = "avx2")]
fn zero() -> V {
    _mm256_setzero_si256()
}

/// `y` in lane 0, lane 1 zero.
#[inline]
#[target_feature(enable = "avx2")]
fn widen(y: __m128i) -> V {
    _mm256_zextsi128_si256(y)
}

/// The byte reversal index of both lanes.
#[inline]
#[target_feature(enable = "avx2")]
fn bswap() -> V {
    ymm::splat(&BSWAP)
}

/// The sum of the two lanes.
#[inline]
#[target_feature(enable = "avx2")]
fn fold(v: V) -> __m128i {
    _mm_xor_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v))
}

/// Blocks `i..i + k` of `blocks` (`k` in 1..=2), byte-reversed per lane,
/// zero in lane 1 when `k` is 1.
#[inline]
#[target_feature(enable = "avx2")]
fn load_blocks(blocks: &[Blk], i: usize, k: usize, bswap: V) -> V {
    let b = &blocks[i..i + k];
    // SAFETY: `b` is `k` readable blocks.
    _mm256_shuffle_epi8(unsafe { ymm::load(b.as_ptr(), k) }, bswap)
}

/// `pow[i..i + k]` of the key table (`k` in 1..=2), lane 1 zero when `k`
/// is 1.
#[inline]
#[target_feature(enable = "avx2")]
fn load_powers(key: &GhashKey, i: usize, k: usize) -> V {
    let p = &key.pow[i..i + k];
    // SAFETY: `p` is `16 k` readable bytes, read as `k` blocks with
    // unaligned loads (little-endian `u128`s: the low half in the low
    // qword of each lane).
    unsafe { ymm::load(p.as_ptr().cast(), k) }
}
