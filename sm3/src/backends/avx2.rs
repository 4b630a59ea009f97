//! x86_64 AVX2: 8 messages side by side for `digest_many`, one per 32-bit
//! lane of a YMM register.

use super::Backend;
use super::lanes::{self, Lane, MAX};
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
fn run(single: Backend, msgs: &[&[u8]], out: &mut [[u8; 32]]) {
    // SAFETY: this function has AVX2 enabled, and `digest_many` below only
    // calls it after the CPU check.
    unsafe { lanes::digest_many::<V>(single, msgs, out) }
}

/// Hash `msgs` 8 at a time.
pub(crate) fn digest_many(single: Backend, msgs: &[&[u8]], out: &mut [[u8; 32]]) {
    // SAFETY: `Lanes::Avx2` runs only after `cpu_avx2` found AVX2
    // (`detect_lanes`, or the hook's availability check).
    unsafe { run(single, msgs, out) }
}
