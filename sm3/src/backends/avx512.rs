//! x86_64 AVX-512: 16 messages side by side for `digest_many`, one per
//! 32-bit lane of a ZMM register (`vprold` rotations, `vpternlogd` for the
//! three-input functions).

use super::Backend;
use super::lanes::{self, Lane, MAX};
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
}

#[target_feature(enable = "avx512f,avx512bw")]
fn run(single: Backend, msgs: &[&[u8]], out: &mut [[u8; 32]]) {
    // SAFETY: this function has AVX-512F/BW enabled, and `digest_many`
    // below only calls it after the CPU check.
    unsafe { lanes::digest_many::<V>(single, msgs, out) }
}

/// Hash `msgs` 16 at a time.
pub(crate) fn digest_many(single: Backend, msgs: &[&[u8]], out: &mut [[u8; 32]]) {
    // SAFETY: `Lanes::Avx512` runs only after `cpu_avx512` found AVX-512F
    // and AVX-512BW (`detect_lanes`, or the hook's availability check).
    unsafe { run(single, msgs, out) }
}
