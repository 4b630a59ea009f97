//! x86_64 AVX + BMI2: the message expansion runs four words at a time in
//! XMM registers, interleaved with the rounds, which run in scalar
//! registers (`rorx` keeps the rotations non-destructive). The approach of
//! the Linux `sm3-avx` and libgcrypt code, written with intrinsics.

use super::soft::four_rounds;
use core::arch::asm;
use core::arch::x86_64::*;

/// An optimization barrier on one value: keeps the compiler from
/// re-associating `rol12(A) + T_j + E` (see `soft::round`).
#[inline(always)]
fn hide(mut x: u32) -> u32 {
    // SAFETY: an empty `asm!` that only claims to change `x` in a register.
    unsafe { asm!("/* {0:e} */", inout(reg) x, options(pure, nomem, nostack, preserves_flags)) };
    x
}

/// An optimization barrier on memory: the expanded words are stored by the
/// vector code and loaded by the scalar rounds (operands of `add`), instead
/// of the compiler forwarding each word with a vector-to-scalar extract.
#[inline(always)]
fn barrier(w: &mut [u32; 68], wp: &mut [u32; 64]) {
    // SAFETY: an empty `asm!`; it only makes the compiler assume the two
    // arrays may have been read or written.
    unsafe {
        asm!(
            "/* {0} {1} */",
            in(reg) w.as_mut_ptr(),
            in(reg) wp.as_mut_ptr(),
            options(nostack, preserves_flags)
        )
    };
}

/// Compress `blocks` into `state`.
#[inline]
pub(crate) fn compress(state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    // SAFETY: a `Backend::Avx` tag exists only after `cpu_avx_bmi2` found
    // AVX, BMI1 and BMI2 on this CPU (see `Backend::is_available`).
    unsafe { compress_avx(state, blocks) }
}

#[target_feature(enable = "avx,bmi1,bmi2")]
#[inline]
fn rol<const L: i32, const R: i32>(x: __m128i) -> __m128i {
    _mm_or_si128(_mm_slli_epi32::<L>(x), _mm_srli_epi32::<R>(x))
}

macro_rules! vrol {
    ($x:expr, $n:literal) => {
        rol::<$n, { 32 - $n }>($x)
    };
}

#[target_feature(enable = "avx,bmi1,bmi2")]
#[inline]
fn vp1(x: __m128i) -> __m128i {
    _mm_xor_si128(x, _mm_xor_si128(vrol!(x, 15), vrol!(x, 23)))
}

/// `W[j..j+4]` from `x0 = W[j-16..j-12]`, ..., `x3 = W[j-4..j]`.
#[target_feature(enable = "avx,bmi1,bmi2")]
#[inline]
fn expand4(x0: __m128i, x1: __m128i, x2: __m128i, x3: __m128i) -> __m128i {
    // W[j-9..j-5] and W[j-3..j] with a zero where W[j] would be.
    let w9 = _mm_alignr_epi8::<12>(x2, x1);
    let w3 = _mm_srli_si128::<4>(x3);
    let x = _mm_xor_si128(_mm_xor_si128(x0, w9), vrol!(w3, 15));
    // W[j-13..j-9] and W[j-6..j-2].
    let w13 = _mm_alignr_epi8::<12>(x1, x0);
    let w6 = _mm_alignr_epi8::<8>(x3, x2);
    let y = _mm_xor_si128(vrol!(w13, 7), w6);
    let r = _mm_xor_si128(vp1(x), y);
    // Lane 3 needs rol15(W[j]) inside P1; P1 is linear, so add it now.
    let fix = vrol!(_mm_slli_si128::<12>(r), 15);
    _mm_xor_si128(r, vp1(fix))
}

#[target_feature(enable = "avx,bmi1,bmi2")]
#[inline]
fn store4(dst: &mut [u32], v: __m128i) {
    let dst: &mut [u32; 4] = (&mut dst[..4]).try_into().expect("4 words");
    // SAFETY: `dst` is 16 writable bytes; `storeu` has no alignment need.
    unsafe { _mm_storeu_si128(dst.as_mut_ptr().cast(), v) }
}

#[target_feature(enable = "avx,bmi1,bmi2")]
fn compress_avx(state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    let bswap = _mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
    let mut w = [0u32; 68];
    let mut wp = [0u32; 64];
    for block in blocks {
        // SAFETY: each load reads 16 bytes inside the 64-byte `block`;
        // `loadu` has no alignment need.
        let [mut x0, mut x1, mut x2, mut x3] = core::array::from_fn(|i| unsafe {
            _mm_shuffle_epi8(_mm_loadu_si128(block.as_ptr().add(16 * i).cast()), bswap)
        });
        store4(&mut w[0..], x0);
        store4(&mut w[4..], x1);
        store4(&mut w[8..], x2);
        store4(&mut w[12..], x3);
        store4(&mut wp[0..], _mm_xor_si128(x0, x1));
        store4(&mut wp[4..], _mm_xor_si128(x1, x2));
        store4(&mut wp[8..], _mm_xor_si128(x2, x3));

        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
        macro_rules! r4 {
            ($hi:literal, $j:expr) => {
                let j = $j;
                if j + 16 < 68 {
                    let x4 = expand4(x0, x1, x2, x3);
                    store4(&mut w[j + 16..], x4);
                    store4(&mut wp[j + 12..], _mm_xor_si128(x3, x4));
                    (x0, x1, x2, x3) = (x1, x2, x3, x4);
                }
                barrier(&mut w, &mut wp);
                four_rounds!($hi, j, [a, b, c, d, e, f, g, h], w, wp, hide);
            };
        }
        r4!(false, 0);
        r4!(false, 4);
        r4!(false, 8);
        r4!(false, 12);
        r4!(true, 16);
        r4!(true, 20);
        r4!(true, 24);
        r4!(true, 28);
        r4!(true, 32);
        r4!(true, 36);
        r4!(true, 40);
        r4!(true, 44);
        r4!(true, 48);
        r4!(true, 52);
        r4!(true, 56);
        r4!(true, 60);
        let _ = (x0, x1, x2, x3);
        for (s, v) in state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
            *s ^= v;
        }
    }
}
