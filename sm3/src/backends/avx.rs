//! x86_64 AVX + BMI2: the message expansion runs four words at a time in
//! XMM registers, interleaved with the rounds, which run in scalar
//! registers (`rorx` keeps the rotations non-destructive). The approach of
//! the Linux `sm3-avx` and libgcrypt code, written with intrinsics.
//!
//! The same expansion and block loop are generated twice by [`engine`]:
//! for AVX, and for AVX-512VL, where a lane rotation is one `vprold` and a
//! three-input XOR one `vpternlogd` (17 vector instructions per four words
//! instead of 35; on Intel cores they share ports with the scalar rounds).

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

/// Compress `blocks` into `state` with the AVX-512VL message expansion.
#[inline]
pub(crate) fn compress_avx512vl(state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    // SAFETY: a `Backend::Avx512Vl` tag exists only after `cpu_avx512vl`
    // found AVX-512F, AVX-512VL, AVX, BMI1 and BMI2 on this CPU (see
    // `Backend::is_available`).
    unsafe { compress_vl(state, blocks) }
}

/// `rol(x, L)` in each lane with two shifts and an OR (`R = 32 - L`).
#[target_feature(enable = "avx")]
#[inline]
fn rol_avx<const L: i32, const R: i32>(x: __m128i) -> __m128i {
    _mm_or_si128(_mm_slli_epi32::<L>(x), _mm_srli_epi32::<R>(x))
}

/// `a ^ b ^ c` with two XORs.
#[target_feature(enable = "avx")]
#[inline]
fn xor3_avx(a: __m128i, b: __m128i, c: __m128i) -> __m128i {
    _mm_xor_si128(_mm_xor_si128(a, b), c)
}

/// `rol(x, L)` in each lane in one AVX-512VL `vprold` (`R` is unused).
#[target_feature(enable = "avx512f,avx512vl")]
#[inline]
fn rol_vl<const L: i32, const R: i32>(x: __m128i) -> __m128i {
    _mm_rol_epi32::<L>(x)
}

/// `a ^ b ^ c` in one AVX-512VL `vpternlogd` (0x96 is the truth table of
/// a three-input XOR).
#[target_feature(enable = "avx512f,avx512vl")]
#[inline]
fn xor3_vl(a: __m128i, b: __m128i, c: __m128i) -> __m128i {
    _mm_ternarylogic_epi32::<0x96>(a, b, c)
}

/// Defines `$expand4` (the message expansion, four words at a time) and
/// `$compress` (the block loop) for one instruction set: `$rol` and `$xor3`
/// are the lane rotation and three-input XOR, and `$features` is what the
/// functions are compiled for. The AVX and AVX-512VL backends differ only
/// in those two helpers; the rounds are the same scalar assembly.
macro_rules! engine {
    ($features:literal, $expand4:ident, $compress:ident, $rol:ident, $xor3:ident) => {
        /// `W[j..j+4]` from `x0 = W[j-16..j-12]`, ..., `x3 = W[j-4..j]`.
        #[target_feature(enable = $features)]
        #[inline]
        fn $expand4(x0: __m128i, x1: __m128i, x2: __m128i, x3: __m128i) -> __m128i {
            // W[j-9..j-5] and W[j-3..j] with a zero where W[j] would be.
            let w9 = _mm_alignr_epi8::<12>(x2, x1);
            let w3 = _mm_srli_si128::<4>(x3);
            let x = $xor3(x0, w9, $rol::<15, 17>(w3));
            // W[j-13..j-9] and W[j-6..j-2].
            let w13 = _mm_alignr_epi8::<12>(x1, x0);
            let w6 = _mm_alignr_epi8::<8>(x3, x2);
            // P1(x) ^ rol7(W[j-13]) ^ W[j-6], P1(x) = x ^ rol15(x) ^ rol23(x).
            let p = $xor3(x, $rol::<15, 17>(x), $rol::<23, 9>(x));
            let r = $xor3(p, $rol::<7, 25>(w13), w6);
            // Lane 3 needs rol15(W[j]) inside P1; P1 is linear, so add
            // P1(fix) now.
            let fix = $rol::<15, 17>(_mm_slli_si128::<12>(r));
            $xor3(
                r,
                fix,
                _mm_xor_si128($rol::<15, 17>(fix), $rol::<23, 9>(fix)),
            )
        }

        #[target_feature(enable = $features)]
        fn $compress(state: &mut [u32; 8], blocks: &[[u8; 64]]) {
            compress_body!($expand4, state, blocks)
        }
    };
}

#[target_feature(enable = "avx")]
#[inline]
fn store4(dst: &mut [u32], v: __m128i) {
    let dst: &mut [u32; 4] = (&mut dst[..4]).try_into().expect("4 words");
    // SAFETY: `dst` is 16 writable bytes; `storeu` has no alignment need.
    unsafe { _mm_storeu_si128(dst.as_mut_ptr().cast(), v) }
}

/// Byte offset of `W'_0` in the word buffer (`W` comes first, 68 words).
const WP: usize = 4 * 68;

/// One round in assembly, so that the instructions of the critical path
/// (through `E` and `A`) come first and the scheduler, which favours the
/// oldest ready instruction, does not delay them behind off-path work.
/// Register renaming as in `soft::round`: `d` becomes the new `A`, `h` the
/// new `E`; `b` and `f` come back rotated (`rol9`, `rol19`). Their
/// unrotated values die in this round, so their registers serve as the
/// scratch of `FF` and `GG` and the rotations go to fresh registers, which
/// saves the `mov`s that copying them would need. `W_j` and `W'_j` are read
/// from `buf`.
macro_rules! round {
    ($ff:ident, $gg:ident, $j:expr, $a:ident, $b:ident, $c:ident, $d:ident,
     $e:ident, $f:ident, $g:ident, $h:ident, $buf:expr) => {
        // SAFETY: register arithmetic plus two 4-byte loads inside `buf`
        // (`W_j` at 4j, `W'_j` at WP + 4j, j < 64); BMI1/BMI2 are enabled
        // on the calling function and were checked at construction.
        unsafe {
            asm!(
                // SS1 = rol7(rol12(A) + E + T_j); TT2 = H + W_j + GG + SS1.
                "add {h:e}, dword ptr [{p} + {wo}]",
                "rorx {t0:e}, {a:e}, 20",
                ss1_sum!($gg),
                "rorx {t1:e}, {t1:e}, 25",
                $gg!(),
                "add {h:e}, {t1:e}",
                // SS2 = SS1 ^ rol12(A); E = P0(TT2).
                "xor {t0:e}, {t1:e}",
                "rorx {t2:e}, {h:e}, 15",
                "rorx {t1:e}, {h:e}, 23",
                "xor {t1:e}, {t2:e}",
                "xor {h:e}, {t1:e}",
                // A = D + W'_j + FF + SS2.
                "add {d:e}, dword ptr [{p} + {wpo}]",
                $ff!(),
                "add {d:e}, {t0:e}",
                a = in(reg) $a, b = inout(reg) $b => _, c = in(reg) $c,
                d = inout(reg) $d, e = in(reg) $e, f = inout(reg) $f => _,
                g = in(reg) $g, h = inout(reg) $h,
                rb = out(reg) $b, rf = out(reg) $f,
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

/// `rol12(A) + E + T_j` into `t1`. From `E` to `TT2`, rounds 16..64 wait
/// for the two halves of `GG` (one cycle after `E`) and their two additions,
/// so `SS1` has a cycle to spare there and one 3-component `lea` does the
/// sum (one instruction fewer; 1 cycle on Golden Cove, measured, but
/// 3-component `lea` has been slower on other cores, and there the slack
/// absorbs it). Rounds 0..16 have no slack: `T_j` is added first, off the
/// path of `E`. The 64-bit `lea` ignores that the registers' upper halves are
/// undefined: the low 32 bits of a sum depend only on the low 32 bits of
/// its terms.
macro_rules! ss1_sum {
    (gg_lo) => {
        concat!("lea {t1:e}, [{t0:r} + {tc}]\n", "add {t1:e}, {e:e}",)
    };
    (gg_hi) => {
        "lea {t1:e}, [{t0:r} + {e:r} + {tc}]"
    };
}

/// `GG_j` for rounds 0..16 (`E ^ F ^ G`), added into `h`; `f` is rotated
/// into `rf` first and then used as scratch.
macro_rules! gg_lo {
    () => {
        concat!(
            "rorx {rf:e}, {f:e}, 13\n",
            "xor {f:e}, {g:e}\n",
            "xor {f:e}, {e:e}\n",
            "add {h:e}, {f:e}",
        )
    };
}

/// `GG_j` for rounds 16..64 (`(E & F) | (!E & G)`, the two halves
/// disjoint, so each is added), added into `h`.
macro_rules! gg_hi {
    () => {
        concat!(
            "rorx {rf:e}, {f:e}, 13\n",
            "andn {t2:e}, {e:e}, {g:e}\n",
            "and {f:e}, {e:e}\n",
            "add {h:e}, {t2:e}\n",
            "add {h:e}, {f:e}",
        )
    };
}

/// `FF_j` for rounds 0..16 (`A ^ B ^ C`), added into `d`; `b` is rotated
/// into `rb` first and then used as scratch.
macro_rules! ff_lo {
    () => {
        concat!(
            "rorx {rb:e}, {b:e}, 23\n",
            "xor {b:e}, {c:e}\n",
            "xor {b:e}, {a:e}\n",
            "add {d:e}, {b:e}",
        )
    };
}

/// `FF_j` for rounds 16..64, the majority of `A`, `B`, `C`: where `A` and
/// `C` agree it is `C`, elsewhere `B`, so it is `C ^ ((A ^ C) & (B ^ C))`
/// (four logic instructions and one addition into `d`).
macro_rules! ff_hi {
    () => {
        concat!(
            "rorx {rb:e}, {b:e}, 23\n",
            "mov {t1:e}, {a:e}\n",
            "xor {t1:e}, {c:e}\n",
            "xor {b:e}, {c:e}\n",
            "and {t1:e}, {b:e}\n",
            "xor {t1:e}, {c:e}\n",
            "add {d:e}, {t1:e}",
        )
    };
}

/// Rounds `j..j + 4`, after computing `W[j + 16..j + 20]` (and the `W'`
/// words it completes) with the vector unit.
macro_rules! four {
    ($expand4:ident, $ff:ident, $gg:ident, $j:literal, $buf:ident, $x:ident, [$a:ident, $b:ident, $c:ident, $d:ident,
     $e:ident, $f:ident, $g:ident, $h:ident]) => {
        if $j + 16 < 68 {
            let x4 = $expand4($x[0], $x[1], $x[2], $x[3]);
            store4(&mut $buf[$j + 16..], x4);
            store4(&mut $buf[68 + $j + 12..], _mm_xor_si128($x[3], x4));
            $x = [$x[1], $x[2], $x[3], x4];
        }
        round!($ff, $gg, $j, $a, $b, $c, $d, $e, $f, $g, $h, $buf);
        round!($ff, $gg, $j + 1, $d, $a, $b, $c, $h, $e, $f, $g, $buf);
        round!($ff, $gg, $j + 2, $c, $d, $a, $b, $g, $h, $e, $f, $buf);
        round!($ff, $gg, $j + 3, $b, $c, $d, $a, $f, $g, $h, $e, $buf);
    };
}

/// The block loop of `$compress` in [`engine`], with `$expand4` as the
/// message expansion.
macro_rules! compress_body {
    ($expand4:ident, $state:ident, $blocks:ident) => {{
        let bswap = _mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
        // W_0..W_67, then W'_0..W'_63.
        let mut buf = [0u32; 68 + 64];
        for block in $blocks {
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
            let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *$state;
            let v = [a, b, c, d, e, f, g, h];
            four!($expand4, ff_lo, gg_lo, 0, buf, x, [a, b, c, d, e, f, g, h]);
            four!($expand4, ff_lo, gg_lo, 4, buf, x, [a, b, c, d, e, f, g, h]);
            four!($expand4, ff_lo, gg_lo, 8, buf, x, [a, b, c, d, e, f, g, h]);
            four!($expand4, ff_lo, gg_lo, 12, buf, x, [a, b, c, d, e, f, g, h]);
            four!($expand4, ff_hi, gg_hi, 16, buf, x, [a, b, c, d, e, f, g, h]);
            four!($expand4, ff_hi, gg_hi, 20, buf, x, [a, b, c, d, e, f, g, h]);
            four!($expand4, ff_hi, gg_hi, 24, buf, x, [a, b, c, d, e, f, g, h]);
            four!($expand4, ff_hi, gg_hi, 28, buf, x, [a, b, c, d, e, f, g, h]);
            four!($expand4, ff_hi, gg_hi, 32, buf, x, [a, b, c, d, e, f, g, h]);
            four!($expand4, ff_hi, gg_hi, 36, buf, x, [a, b, c, d, e, f, g, h]);
            four!($expand4, ff_hi, gg_hi, 40, buf, x, [a, b, c, d, e, f, g, h]);
            four!($expand4, ff_hi, gg_hi, 44, buf, x, [a, b, c, d, e, f, g, h]);
            four!($expand4, ff_hi, gg_hi, 48, buf, x, [a, b, c, d, e, f, g, h]);
            four!($expand4, ff_hi, gg_hi, 52, buf, x, [a, b, c, d, e, f, g, h]);
            four!($expand4, ff_hi, gg_hi, 56, buf, x, [a, b, c, d, e, f, g, h]);
            four!($expand4, ff_hi, gg_hi, 60, buf, x, [a, b, c, d, e, f, g, h]);
            let _ = x;
            for ((s, v0), v) in $state.iter_mut().zip(v).zip([a, b, c, d, e, f, g, h]) {
                *s = v0 ^ v;
            }
        }
    }};
}

engine!(
    "avx,bmi1,bmi2",
    expand4_avx,
    compress_avx,
    rol_avx,
    xor3_avx
);
engine!(
    "avx,bmi1,bmi2,avx512f,avx512vl",
    expand4_vl,
    compress_vl,
    rol_vl,
    xor3_vl
);
