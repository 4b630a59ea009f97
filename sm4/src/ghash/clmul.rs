//! GHASH with PCLMULQDQ on `xmm` (the `clmul` engine, beside the `avx` and
//! `gfni256` SM4 kernels on CPUs without VPCLMULQDQ, and the short inputs
//! of the wide engines): eight blocks per reduction.
//!
//! Blocks are byte-reversed on load (`vpshufb`) into the POLYVAL-domain
//! integers of `crate::ghash`; a product is the schoolbook four
//! `pclmulqdq` (low·low, high·high and the two cross terms), summed
//! unreduced over the group, and [`reduce`] folds the 256-bit sum with two
//! more. Karatsuba (three multiplies) would trade one `pclmulqdq` for a
//! shuffle and XORs on the same port on Intel cores, for nothing.

use crate::block::Blk;
use crate::ghash::{GhashKey, REDUCE};
use core::arch::x86_64::*;

type V = __m128i;

/// `vpshufb` index reversing the 16 bytes (of each lane, in the wide
/// engines).
pub(crate) const BSWAP: [i8; 16] = [15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0];

ghash_token!(ClmulGhash, "PCLMULQDQ and AVX");
ghash_narrow_body!(features = "pclmulqdq,avx", agg = 8);
ghash_schoolbook!(
    features = "pclmulqdq,avx",
    clmul = _mm_clmulepi64_si128,
    shuffle = _mm_shuffle_epi32,
    set1 = _mm_set1_epi64x
);

#[inline]
#[target_feature(enable = "pclmulqdq,avx")]
fn zero() -> V {
    _mm_setzero_si128()
}

#[inline]
#[target_feature(enable = "pclmulqdq,avx")]
fn xor(a: V, b: V) -> V {
    _mm_xor_si128(a, b)
}

/// 16 bytes, reversed: the big-endian integer, low half in the low lane.
#[inline]
#[target_feature(enable = "pclmulqdq,avx")]
fn load_be(p: &[u8; 16]) -> V {
    // SAFETY: 16-byte loads from 16-byte arrays; `loadu` has no alignment
    // need.
    let (v, bswap) = unsafe {
        (
            _mm_loadu_si128(p.as_ptr().cast()),
            _mm_loadu_si128(BSWAP.as_ptr().cast()),
        )
    };
    _mm_shuffle_epi8(v, bswap)
}

#[inline]
#[target_feature(enable = "pclmulqdq,avx")]
pub(crate) fn load_state(s: &[u8; 16]) -> V {
    load_be(s)
}

#[inline]
#[target_feature(enable = "pclmulqdq,avx")]
fn load_block(b: &Blk) -> V {
    load_be(&b.0)
}

/// The inverse of [`load_be`].
#[inline]
#[target_feature(enable = "pclmulqdq,avx")]
pub(crate) fn store_state(s: &mut [u8; 16], v: V) {
    // SAFETY: a 16-byte load from a 16-byte array, a 16-byte store to one.
    unsafe {
        let bswap = _mm_loadu_si128(BSWAP.as_ptr().cast());
        _mm_storeu_si128(s.as_mut_ptr().cast(), _mm_shuffle_epi8(v, bswap));
    }
}

/// `pow[i]` of the key table.
#[inline]
#[target_feature(enable = "pclmulqdq,avx")]
fn load_power(key: &GhashKey, i: usize) -> V {
    let p: &u128 = &key.pow[i];
    // SAFETY: `p` is 16 readable bytes (a little-endian `u128`, low half
    // in the low lane).
    unsafe { _mm_loadu_si128((p as *const u128).cast()) }
}
