//! x86_64 AVX + BMI2: the message expansion runs four words at a time in
//! XMM registers, interleaved with the rounds, which run in scalar
//! registers (`rorx` keeps the rotations non-destructive). The approach of
//! the Linux `sm3-avx` and libgcrypt code, written with intrinsics.

use super::soft::T;
use core::arch::asm;
use core::arch::x86_64::*;

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

/// Byte offset of `W'_0` in the word buffer (`W` comes first, 68 words).
const WP: usize = 4 * 68;

/// One round in assembly, so that the instructions of the critical path
/// (through `E`) come first and the scheduler, which favours the oldest
/// ready instruction, does not delay them behind off-path work. Register
/// renaming as in `soft::round`: `d` becomes the new `A`, `h` the new `E`,
/// `b` and `f` are rotated in place. `W_j` and `W'_j` are read from `buf`.
macro_rules! round {
    (lo, $j:expr, $a:ident, $b:ident, $c:ident, $d:ident,
     $e:ident, $f:ident, $g:ident, $h:ident, $buf:expr) => {
        // SAFETY: register arithmetic plus two 4-byte loads inside `buf`
        // (`W_j` at 4j, `W'_j` at WP + 4j, j < 64); BMI1/BMI2 are enabled
        // on this function and were checked at construction.
        unsafe {
            asm!(
                "add {h:e}, dword ptr [{p} + {wo}]",
                "rorx {t0:e}, {a:e}, 20",
                "lea {t1:e}, [{t0:r} + {tc}]",
                "add {t1:e}, {e:e}",
                "rorx {t1:e}, {t1:e}, 25",
                "mov {t2:e}, {f:e}",
                "xor {t2:e}, {g:e}",
                "xor {t2:e}, {e:e}",
                "add {h:e}, {t2:e}",
                "add {h:e}, {t1:e}",
                "xor {t0:e}, {t1:e}",
                "rorx {t2:e}, {h:e}, 15",
                "rorx {t1:e}, {h:e}, 23",
                "xor {t1:e}, {t2:e}",
                "xor {h:e}, {t1:e}",
                "add {d:e}, dword ptr [{p} + {wpo}]",
                "mov {t1:e}, {b:e}",
                "xor {t1:e}, {c:e}",
                "xor {t1:e}, {a:e}",
                "add {d:e}, {t1:e}",
                "add {d:e}, {t0:e}",
                "rorx {b:e}, {b:e}, 23",
                "rorx {f:e}, {f:e}, 13",
                a = in(reg) $a, b = inout(reg) $b, c = in(reg) $c, d = inout(reg) $d,
                e = in(reg) $e, f = inout(reg) $f, g = in(reg) $g, h = inout(reg) $h,
                p = in(reg) $buf.as_ptr(),
                t0 = out(reg) _, t1 = out(reg) _, t2 = out(reg) _,
                tc = const T[$j] as i32,
                wo = const 4 * $j,
                wpo = const WP + 4 * $j,
                options(pure, readonly, nostack)
            )
        }
    };
    (hi, $j:expr, $a:ident, $b:ident, $c:ident, $d:ident,
     $e:ident, $f:ident, $g:ident, $h:ident, $buf:expr) => {
        // SAFETY: register arithmetic plus two 4-byte loads inside `buf`
        // (`W_j` at 4j, `W'_j` at WP + 4j, j < 64); BMI1/BMI2 are enabled
        // on this function and were checked at construction.
        unsafe {
            asm!(
                "add {h:e}, dword ptr [{p} + {wo}]",
                "rorx {t0:e}, {a:e}, 20",
                "lea {t1:e}, [{t0:r} + {tc}]",
                "add {t1:e}, {e:e}",
                "rorx {t1:e}, {t1:e}, 25",
                "andn {t2:e}, {e:e}, {g:e}",
                "add {h:e}, {t2:e}",
                "mov {t2:e}, {f:e}",
                "and {t2:e}, {e:e}",
                "add {h:e}, {t2:e}",
                "add {h:e}, {t1:e}",
                "xor {t0:e}, {t1:e}",
                "rorx {t2:e}, {h:e}, 15",
                "rorx {t1:e}, {h:e}, 23",
                "xor {t1:e}, {t2:e}",
                "xor {h:e}, {t1:e}",
                "add {d:e}, dword ptr [{p} + {wpo}]",
                "mov {t1:e}, {b:e}",
                "or {t1:e}, {c:e}",
                "and {t1:e}, {a:e}",
                "mov {t2:e}, {b:e}",
                "and {t2:e}, {c:e}",
                "or {t1:e}, {t2:e}",
                "add {d:e}, {t1:e}",
                "add {d:e}, {t0:e}",
                "rorx {b:e}, {b:e}, 23",
                "rorx {f:e}, {f:e}, 13",
                a = in(reg) $a, b = inout(reg) $b, c = in(reg) $c, d = inout(reg) $d,
                e = in(reg) $e, f = inout(reg) $f, g = in(reg) $g, h = inout(reg) $h,
                p = in(reg) $buf.as_ptr(),
                t0 = out(reg) _, t1 = out(reg) _, t2 = out(reg) _,
                tc = const T[$j] as i32,
                wo = const 4 * $j,
                wpo = const WP + 4 * $j,
                options(pure, readonly, nostack)
            )
        }
    };
}

/// Rounds `j..j + 4`, after computing `W[j + 16..j + 20]` (and the `W'`
/// words it completes) with the vector unit.
macro_rules! four {
    ($hi:ident, $j:literal, $buf:ident, $x:ident, [$a:ident, $b:ident, $c:ident, $d:ident,
     $e:ident, $f:ident, $g:ident, $h:ident]) => {
        if $j + 16 < 68 {
            let x4 = expand4($x[0], $x[1], $x[2], $x[3]);
            store4(&mut $buf[$j + 16..], x4);
            store4(&mut $buf[68 + $j + 12..], _mm_xor_si128($x[3], x4));
            $x = [$x[1], $x[2], $x[3], x4];
        }
        round!($hi, $j, $a, $b, $c, $d, $e, $f, $g, $h, $buf);
        round!($hi, $j + 1, $d, $a, $b, $c, $h, $e, $f, $g, $buf);
        round!($hi, $j + 2, $c, $d, $a, $b, $g, $h, $e, $f, $buf);
        round!($hi, $j + 3, $b, $c, $d, $a, $f, $g, $h, $e, $buf);
    };
}

#[target_feature(enable = "avx,bmi1,bmi2")]
fn compress_avx(state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    let bswap = _mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
    // W_0..W_67, then W'_0..W'_63.
    let mut buf = [0u32; 68 + 64];
    for block in blocks {
        // SAFETY: each load reads 16 bytes inside the 64-byte `block`;
        // `loadu` has no alignment need.
        let mut x: [__m128i; 4] = core::array::from_fn(|i| unsafe {
            _mm_shuffle_epi8(_mm_loadu_si128(block.as_ptr().add(16 * i).cast()), bswap)
        });
        for i in 0..4 {
            store4(&mut buf[4 * i..], x[i]);
        }
        for i in 0..3 {
            store4(&mut buf[68 + 4 * i..], _mm_xor_si128(x[i], x[i + 1]));
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
        let v = [a, b, c, d, e, f, g, h];
        four!(lo, 0, buf, x, [a, b, c, d, e, f, g, h]);
        four!(lo, 4, buf, x, [a, b, c, d, e, f, g, h]);
        four!(lo, 8, buf, x, [a, b, c, d, e, f, g, h]);
        four!(lo, 12, buf, x, [a, b, c, d, e, f, g, h]);
        four!(hi, 16, buf, x, [a, b, c, d, e, f, g, h]);
        four!(hi, 20, buf, x, [a, b, c, d, e, f, g, h]);
        four!(hi, 24, buf, x, [a, b, c, d, e, f, g, h]);
        four!(hi, 28, buf, x, [a, b, c, d, e, f, g, h]);
        four!(hi, 32, buf, x, [a, b, c, d, e, f, g, h]);
        four!(hi, 36, buf, x, [a, b, c, d, e, f, g, h]);
        four!(hi, 40, buf, x, [a, b, c, d, e, f, g, h]);
        four!(hi, 44, buf, x, [a, b, c, d, e, f, g, h]);
        four!(hi, 48, buf, x, [a, b, c, d, e, f, g, h]);
        four!(hi, 52, buf, x, [a, b, c, d, e, f, g, h]);
        four!(hi, 56, buf, x, [a, b, c, d, e, f, g, h]);
        four!(hi, 60, buf, x, [a, b, c, d, e, f, g, h]);
        let _ = x;
        for ((s, v0), v) in state.iter_mut().zip(v).zip([a, b, c, d, e, f, g, h]) {
            *s = v0 ^ v;
        }
    }
}
