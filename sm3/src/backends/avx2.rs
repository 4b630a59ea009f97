//! x86_64 AVX2: 8 messages side by side for `digest_many`, one per 32-bit
//! lane of a YMM register.

use super::lanes::Compress;
use super::lanes::engine::{self, Lane, MAX};
use core::arch::x86_64::*;

#[derive(Clone, Copy)]
struct V(__m256i);

impl Lane for V {
    const N: usize = 8;
    const MIN_BUSY: usize = 3;

    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        // SAFETY: the caller runs with AVX2 enabled (trait contract).
        V(unsafe { _mm256_set1_epi32(x as i32) })
    }
    #[inline(always)]
    unsafe fn load(src: &[u32; MAX]) -> Self {
        // SAFETY: `src` holds at least 32 readable bytes; AVX per the contract.
        V(unsafe { _mm256_loadu_si256(src.as_ptr().cast()) })
    }
    #[inline(always)]
    unsafe fn store(self, dst: &mut [u32; MAX]) {
        // SAFETY: `dst` holds at least 32 writable bytes; AVX per the contract.
        unsafe { _mm256_storeu_si256(dst.as_mut_ptr().cast(), self.0) }
    }
    #[inline(always)]
    unsafe fn add(self, o: Self) -> Self {
        // SAFETY: AVX2 per the trait contract.
        V(unsafe { _mm256_add_epi32(self.0, o.0) })
    }
    #[inline(always)]
    unsafe fn xor(self, o: Self) -> Self {
        // SAFETY: AVX2 per the trait contract.
        V(unsafe { _mm256_xor_si256(self.0, o.0) })
    }
    #[inline(always)]
    unsafe fn xor3(self, b: Self, c: Self) -> Self {
        // SAFETY: AVX2 per the trait contract.
        V(unsafe { _mm256_xor_si256(_mm256_xor_si256(self.0, b.0), c.0) })
    }
    #[inline(always)]
    unsafe fn maj(self, b: Self, c: Self) -> Self {
        // SAFETY: AVX2 per the trait contract.
        V(unsafe {
            _mm256_or_si256(
                _mm256_and_si256(self.0, _mm256_or_si256(b.0, c.0)),
                _mm256_and_si256(b.0, c.0),
            )
        })
    }
    #[inline(always)]
    unsafe fn choose(self, f: Self, g: Self) -> Self {
        // SAFETY: AVX2 per the trait contract.
        V(unsafe { _mm256_xor_si256(_mm256_and_si256(_mm256_xor_si256(f.0, g.0), self.0), g.0) })
    }
    #[inline(always)]
    unsafe fn rol<const L: i32, const R: i32>(self) -> Self {
        // SAFETY: AVX2 per the trait contract.
        V(unsafe {
            _mm256_or_si256(
                _mm256_slli_epi32::<L>(self.0),
                _mm256_srli_epi32::<R>(self.0),
            )
        })
    }

    #[inline(always)]
    unsafe fn p0(self) -> Self {
        // rol17 = rol8(rol9): one byte shuffle instead of two shifts and an or.
        // SAFETY: AVX2 per the trait contract.
        unsafe {
            let r9 = self.rol::<9, 23>();
            let r17 = _mm256_shuffle_epi8(r9.0, rol8_mask());
            V(_mm256_xor_si256(_mm256_xor_si256(self.0, r9.0), r17))
        }
    }

    #[inline(always)]
    unsafe fn expand_word(w16: Self, w9: Self, w3: Self, w13: Self, w6: Self) -> Self {
        // With y = w16 ^ w9 ^ rol15(w3), rol23 = rol15(rol8) and rol7 =
        // rol15(rol24): P1(y) ^ rol7(w13) ^ w6 = y ^ w6 ^ rol15(y ^ rol8(y)
        // ^ rol24(w13)), one rotation (three instructions) and two byte
        // shuffles where P1 and rol7 take two rotations and one shuffle.
        // SAFETY: AVX2 per the trait contract.
        unsafe {
            let y = w16.xor3(w9, w3.rol::<15, 17>());
            let rol24 = _mm256_setr_epi8(
                1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12, 1, 2, 3, 0, 5, 6, 7, 4, 9,
                10, 11, 8, 13, 14, 15, 12,
            );
            let inner = y.xor3(
                V(_mm256_shuffle_epi8(y.0, rol8_mask())),
                V(_mm256_shuffle_epi8(w13.0, rol24)),
            );
            y.xor3(w6, inner.rol::<15, 17>())
        }
    }

    /// Two 32-byte loads per block, byte swap, then two 8x8 transposes of
    /// 32-bit words.
    #[inline(always)]
    unsafe fn load_blocks(blocks: &[&[u8; 64]; MAX]) -> [Self; 16] {
        // SAFETY: each load reads 32 bytes inside one 64-byte block; AVX2
        // per the trait contract.
        unsafe {
            let bswap = _mm256_setr_epi8(
                3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12, 3, 2, 1, 0, 7, 6, 5, 4, 11,
                10, 9, 8, 15, 14, 13, 12,
            );
            let mut out = [V(_mm256_setzero_si256()); 16];
            for half in 0..2 {
                let r: [__m256i; 8] = core::array::from_fn(|i| {
                    _mm256_shuffle_epi8(
                        _mm256_loadu_si256(blocks[i].as_ptr().add(32 * half).cast()),
                        bswap,
                    )
                });
                let t: [__m256i; 8] = core::array::from_fn(|i| {
                    let (a, b) = (r[i & !1], r[i | 1]);
                    if i & 1 == 0 {
                        _mm256_unpacklo_epi32(a, b)
                    } else {
                        _mm256_unpackhi_epi32(a, b)
                    }
                });
                // u[4g + k], lane L: word 4L + k of rows 4g..4g+4.
                let u: [__m256i; 8] = core::array::from_fn(|i| {
                    let (g, k) = (i / 4, i % 4);
                    let (a, b) = (t[4 * g + (k >> 1)], t[4 * g + 2 + (k >> 1)]);
                    if k & 1 == 0 {
                        _mm256_unpacklo_epi64(a, b)
                    } else {
                        _mm256_unpackhi_epi64(a, b)
                    }
                });
                for k in 0..4 {
                    out[8 * half + k] = V(_mm256_permute2x128_si256::<0x20>(u[k], u[4 + k]));
                    out[8 * half + 4 + k] = V(_mm256_permute2x128_si256::<0x31>(u[k], u[4 + k]));
                }
            }
            out
        }
    }
}

/// `vpshufb` mask rotating every 32-bit word left by 8 bits.
#[inline(always)]
unsafe fn rol8_mask() -> __m256i {
    // SAFETY: AVX per the caller's contract.
    unsafe {
        _mm256_setr_epi8(
            3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14, 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9,
            10, 15, 12, 13, 14,
        )
    }
}

#[target_feature(enable = "avx2")]
fn run(single: Compress, msgs: &[&[u8]], out: &mut [[u8; 32]]) {
    // SAFETY: this function has AVX2 enabled, and `digest_many` below only
    // calls it after the CPU check.
    unsafe { engine::digest_many::<V>(single, msgs, out) }
}

/// Hash `msgs` 8 at a time.
pub(crate) fn digest_many(single: Compress, msgs: &[&[u8]], out: &mut [[u8; 32]]) {
    // SAFETY: `Lanes::Avx2` runs only after `cpu_avx2` found AVX2
    // (`detect_lanes`, or the hook's availability check).
    unsafe { run(single, msgs, out) }
}
