//! x86_64 AVX-512: 16 messages side by side for `digest_many`, one per
//! 32-bit lane of a ZMM register (`vprold` rotations, `vpternlogd` for the
//! three-input functions).

use super::lanes::Compress;
use super::lanes::engine::{self, Lane, MAX};
use core::arch::x86_64::*;

#[derive(Clone, Copy)]
struct V(__m512i);

impl Lane for V {
    const N: usize = 16;
    const MIN_BUSY: usize = 4;

    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        // SAFETY: the caller runs with AVX-512F enabled (trait contract).
        V(unsafe { _mm512_set1_epi32(x as i32) })
    }
    #[inline(always)]
    unsafe fn load(src: &[u32; MAX]) -> Self {
        // SAFETY: `src` holds 64 readable bytes; AVX-512F per the contract.
        V(unsafe { _mm512_loadu_si512(src.as_ptr().cast()) })
    }
    #[inline(always)]
    unsafe fn store(self, dst: &mut [u32; MAX]) {
        // SAFETY: `dst` holds 64 writable bytes; AVX-512F per the contract.
        unsafe { _mm512_storeu_si512(dst.as_mut_ptr().cast(), self.0) }
    }
    #[inline(always)]
    unsafe fn add(self, o: Self) -> Self {
        // SAFETY: AVX-512F per the trait contract.
        V(unsafe { _mm512_add_epi32(self.0, o.0) })
    }
    #[inline(always)]
    unsafe fn xor(self, o: Self) -> Self {
        // SAFETY: AVX-512F per the trait contract.
        V(unsafe { _mm512_xor_si512(self.0, o.0) })
    }
    #[inline(always)]
    unsafe fn xor3(self, b: Self, c: Self) -> Self {
        // SAFETY: AVX-512F per the trait contract.
        V(unsafe { _mm512_ternarylogic_epi32::<0x96>(self.0, b.0, c.0) })
    }
    #[inline(always)]
    unsafe fn maj(self, b: Self, c: Self) -> Self {
        // SAFETY: AVX-512F per the trait contract.
        V(unsafe { _mm512_ternarylogic_epi32::<0xe8>(self.0, b.0, c.0) })
    }
    #[inline(always)]
    unsafe fn choose(self, f: Self, g: Self) -> Self {
        // SAFETY: AVX-512F per the trait contract.
        V(unsafe { _mm512_ternarylogic_epi32::<0xca>(self.0, f.0, g.0) })
    }
    #[inline(always)]
    unsafe fn rol<const L: i32, const R: i32>(self) -> Self {
        // SAFETY: AVX-512F per the trait contract.
        V(unsafe { _mm512_rol_epi32::<L>(self.0) })
    }

    /// One 64-byte load per block, byte swap, then a 16x16 transpose of
    /// 32-bit words (two rounds of unpacks within 128-bit lanes, then two of
    /// 128-bit lane shuffles).
    #[inline(always)]
    unsafe fn load_blocks(blocks: &[&[u8; 64]; MAX]) -> [Self; 16] {
        // SAFETY: each load reads one whole 64-byte block; AVX-512F/BW per
        // the trait contract.
        unsafe {
            let bswap = _mm512_set4_epi32(0x0c0d_0e0f, 0x0809_0a0b, 0x0405_0607, 0x0001_0203);
            let r: [__m512i; 16] = core::array::from_fn(|i| {
                _mm512_shuffle_epi8(_mm512_loadu_si512(blocks[i].as_ptr().cast()), bswap)
            });
            // t[2i], t[2i+1]: rows 2i and 2i+1 interleaved by words.
            let t: [__m512i; 16] = core::array::from_fn(|i| {
                let (a, b) = (r[i & !1], r[i | 1]);
                if i & 1 == 0 {
                    _mm512_unpacklo_epi32(a, b)
                } else {
                    _mm512_unpackhi_epi32(a, b)
                }
            });
            // u[4g + k], lane L: word 4L + k of rows 4g..4g+4.
            let u: [__m512i; 16] = core::array::from_fn(|i| {
                let (g, k) = (i / 4, i % 4);
                let (a, b) = (t[4 * g + (k >> 1)], t[4 * g + 2 + (k >> 1)]);
                if k & 1 == 0 {
                    _mm512_unpacklo_epi64(a, b)
                } else {
                    _mm512_unpackhi_epi64(a, b)
                }
            });
            let mut out = [V(_mm512_setzero_si512()); 16];
            for k in 0..4 {
                let (g0, g1, g2, g3) = (u[k], u[4 + k], u[8 + k], u[12 + k]);
                let s0 = _mm512_shuffle_i32x4::<0x44>(g0, g1);
                let s1 = _mm512_shuffle_i32x4::<0xee>(g0, g1);
                let s2 = _mm512_shuffle_i32x4::<0x44>(g2, g3);
                let s3 = _mm512_shuffle_i32x4::<0xee>(g2, g3);
                out[k] = V(_mm512_shuffle_i32x4::<0x88>(s0, s2));
                out[4 + k] = V(_mm512_shuffle_i32x4::<0xdd>(s0, s2));
                out[8 + k] = V(_mm512_shuffle_i32x4::<0x88>(s1, s3));
                out[12 + k] = V(_mm512_shuffle_i32x4::<0xdd>(s1, s3));
            }
            out
        }
    }
}

#[target_feature(enable = "avx512f,avx512bw")]
fn run(single: Compress, msgs: &[&[u8]], out: &mut [[u8; 32]]) {
    // SAFETY: this function has AVX-512F/BW enabled, and `digest_many`
    // below only calls it after the CPU check.
    unsafe { engine::digest_many::<V>(single, msgs, out) }
}

/// Hash `msgs` 16 at a time.
pub(crate) fn digest_many(single: Compress, msgs: &[&[u8]], out: &mut [[u8; 32]]) {
    // SAFETY: `Lanes::Avx512` runs only after `cpu_avx512` found AVX-512F
    // and AVX-512BW (`detect_lanes`, or the hook's availability check).
    unsafe { run(single, msgs, out) }
}
