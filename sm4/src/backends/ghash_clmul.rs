//! GHASH with PCLMULQDQ on `xmm` (the `clmul` engine, beside the `avx` and
//! `gfni256` SM4 kernels): eight blocks per reduction.
//!
//! Blocks are byte-reversed on load (`vpshufb`) into the POLYVAL-domain
//! integers of `crate::ghash`; a product is the schoolbook four
//! `pclmulqdq` (low·low, high·high and the two cross terms), summed
//! unreduced over the group, and [`reduce`] folds the 256-bit sum with two
//! more. Karatsuba (three multiplies) would trade one `pclmulqdq` for a
//! shuffle and XORs on the same port on Intel cores, for nothing.

use crate::ghash::{GhashKey, REDUCE};
use cipher::Block;
use core::arch::x86_64::*;

type Blk = Block<crate::Sm4>;
type V = __m128i;

/// `vpshufb` index reversing the 16 bytes.
const BSWAP: [i8; 16] = [15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0];

ghash_token!(ClmulGhash, "PCLMULQDQ and AVX");
ghash_narrow_body!(features = "pclmulqdq,avx", agg = 8);

/// The unreduced sum of a group's products.
#[derive(Clone, Copy)]
struct Acc {
    lo: V,
    mid: V,
    hi: V,
}

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
fn load_state(s: &[u8; 16]) -> V {
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
fn store_state(s: &mut [u8; 16], v: V) {
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

/// `acc += x·h`, or `acc = x·h` when `first`.
#[inline]
#[target_feature(enable = "pclmulqdq,avx")]
fn mul_add(acc: &mut Acc, x: V, h: V, first: bool) {
    let lo = _mm_clmulepi64_si128::<0x00>(x, h);
    let hi = _mm_clmulepi64_si128::<0x11>(x, h);
    let mid = _mm_xor_si128(
        _mm_clmulepi64_si128::<0x01>(x, h),
        _mm_clmulepi64_si128::<0x10>(x, h),
    );
    if first {
        *acc = Acc { lo, mid, hi };
    } else {
        acc.lo = _mm_xor_si128(acc.lo, lo);
        acc.mid = _mm_xor_si128(acc.mid, mid);
        acc.hi = _mm_xor_si128(acc.hi, hi);
    }
}

/// The sum times `x^-128`, reduced: fold the low 64 bits into the middle
/// (`lo.lo·REDUCE` plus the swapped halves of `lo`), then the middle's low
/// 64 bits into the high part the same way.
#[inline]
#[target_feature(enable = "pclmulqdq,avx")]
fn reduce(acc: Acc) -> V {
    let c = _mm_set_epi64x(0, REDUCE as i64);
    let t = _mm_clmulepi64_si128::<0x00>(acc.lo, c);
    let mid = _mm_xor_si128(_mm_xor_si128(acc.mid, t), _mm_shuffle_epi32::<0x4e>(acc.lo));
    let t = _mm_clmulepi64_si128::<0x00>(mid, c);
    _mm_xor_si128(_mm_xor_si128(acc.hi, t), _mm_shuffle_epi32::<0x4e>(mid))
}
