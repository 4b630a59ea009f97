//! x86_64 AVX + BMI2: the message expansion runs four words at a time in
//! XMM registers, interleaved with the rounds, which run in scalar
//! registers (`rorx` keeps the rotations non-destructive). The approach of
//! the Linux `sm3-avx` and libgcrypt code, written with intrinsics.
//!
//! The block loop is generated twice by `engine!`: with the AVX
//! expansion, and with the AVX-512VL one, where a lane rotation is one
//! `vprold` and a three-input XOR one `vpternlogd` (17 vector instructions
//! per four words instead of 26; on Intel cores they share ports with the
//! scalar rounds).

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

/// The expansion's other inputs for `W[j..j+4]`, from `x0 = W[j-16..j-12]`,
/// ..., `x3 = W[j-4..j]`: `W[j-9..j-5]`, `W[j-3..j]` with a zero where
/// `W[j]` would be, `W[j-13..j-9]` and `W[j-6..j-2]`.
#[target_feature(enable = "avx")]
#[inline]
fn taps(x0: __m128i, x1: __m128i, x2: __m128i, x3: __m128i) -> [__m128i; 4] {
    [
        _mm_alignr_epi8::<12>(x2, x1),
        _mm_srli_si128::<4>(x3),
        _mm_alignr_epi8::<12>(x1, x0),
        _mm_alignr_epi8::<8>(x3, x2),
    ]
}

/// `W[j..j+4]` from `x0 = W[j-16..j-12]`, ..., `x3 = W[j-4..j]`, with AVX:
/// 26 instructions, two of them 32-bit rotations (three instructions
/// each). `W[j] = P1(y) ^ rol7(W[j-13]) ^ W[j-6]` with `y = W[j-16] ^
/// W[j-9] ^ rol15(W[j-3])`, and `P1(y) = y ^ rol15(y) ^ rol23(y)`; since
/// `rol23 = rol15 ∘ rol8` and `rol7 = rol15 ∘ rol24`, `W[j] = y ^ W[j-6] ^
/// rol15(y ^ rol8(y) ^ rol24(W[j-13]))`, the rotations by 8 and 24 byte
/// shuffles. Lane 3's `y` lacks `rol15(W[j])` (lane 0's result); `P1` is
/// linear, so lane 3 then gets `P1(rol15(w)) = rol15(w) ^ rol30(w) ^
/// rol6(w)` of `w = W[j]`, the three rotations as 64-bit shifts of `w`
/// copied into both halves of the upper 64-bit lane. (With five rotations
/// of three instructions, as `P1` is defined, it took 35 instructions, and
/// `avx` ran 8.1 c/B on a Golden Cove Xeon; now 7.5-7.7: the vector work
/// shares execution ports with the scalar rounds.)
#[target_feature(enable = "avx")]
#[inline]
fn expand4_avx(x0: __m128i, x1: __m128i, x2: __m128i, x3: __m128i) -> __m128i {
    let rol8 = _mm_setr_epi8(3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14);
    let rol24 = _mm_setr_epi8(1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12);
    let [w9, w3, w13, w6] = taps(x0, x1, x2, x3);
    let y = _mm_xor_si128(_mm_xor_si128(x0, w9), rol_avx::<15, 17>(w3));
    let inner = _mm_xor_si128(
        _mm_xor_si128(y, _mm_shuffle_epi8(y, rol8)),
        _mm_shuffle_epi8(w13, rol24),
    );
    let r = _mm_xor_si128(_mm_xor_si128(y, w6), rol_avx::<15, 17>(inner));
    // Lane 3: w = r[0] in both halves of the upper 64-bit lane; a left
    // shift by k puts rol_k(w) in its upper half, lane 3.
    let w = _mm_shuffle_epi32::<0b00_00_00_00>(r);
    let fix = _mm_xor_si128(
        _mm_xor_si128(_mm_slli_epi64::<15>(w), _mm_slli_epi64::<30>(w)),
        _mm_slli_epi64::<6>(w),
    );
    _mm_xor_si128(r, _mm_and_si128(fix, _mm_setr_epi32(0, 0, 0, -1)))
}

/// `W[j..j+4]` as [`expand4_avx`], with AVX-512VL: a rotation is one
/// `vprold` and a three-input XOR one `vpternlogd`, 17 instructions.
#[target_feature(enable = "avx512f,avx512vl")]
#[inline]
fn expand4_vl(x0: __m128i, x1: __m128i, x2: __m128i, x3: __m128i) -> __m128i {
    // P1 with two `vprold` and a `vpternlogd` (0x96: three-input XOR).
    let p1 = |x: __m128i| {
        _mm_ternarylogic_epi32::<0x96>(x, _mm_rol_epi32::<15>(x), _mm_rol_epi32::<23>(x))
    };
    let [w9, w3, w13, w6] = taps(x0, x1, x2, x3);
    let y = _mm_ternarylogic_epi32::<0x96>(x0, w9, _mm_rol_epi32::<15>(w3));
    let r = _mm_ternarylogic_epi32::<0x96>(p1(y), _mm_rol_epi32::<7>(w13), w6);
    // Lane 3 needs rol15(W[j]) inside P1; P1 is linear, so add P1(fix).
    let fix = _mm_rol_epi32::<15>(_mm_slli_si128::<12>(r));
    _mm_xor_si128(r, p1(fix))
}

/// Defines `$compress`, the block loop, compiled for `$features` with
/// `$expand4` as the message expansion. The AVX and AVX-512VL backends
/// differ only there; the rounds are the same scalar assembly.
macro_rules! engine {
    ($features:literal, $expand4:ident, $compress:ident) => {
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

/// One round in assembly. Register renaming as in `soft::round`: `d`
/// becomes the new `A`, `h` the new `E`; `b` and `f` come back rotated
/// (`rol9`, `rol19`). Their unrotated values die in this round, so their
/// registers serve as scratch and the rotations go to fresh registers,
/// which saves the `mov`s that copying them would need. `W_j` and `W'_j`
/// are read from `buf`.
///
/// Every round but the first of a block finds `H + W_j + GG_j` in `h`,
/// made by the round before it, which adds `W_{j+1}` and `GG_{j+1}` into
/// `g` (the next round's `H`) from `TT2` before `P0` (see `lo_next!` and
/// `gg_next!`). The kinds: `lo_first` (round 0: computes its own `GG`),
/// `lo` (rounds 1..15), `lo_hi` (round 15: `FF` of the first rounds, `GG`
/// of the later ones for round 16), `hi` (16..63) and `hi_last` (63: no
/// next round).
///
/// The order of the instructions matters on Intel cores, which bind each
/// instruction to an execution port when it is renamed: measured in
/// isolation on Golden Cove, the rounds 16..64 in this order (`SS1`, the
/// rotations of `P0`, then all of `A`, then the rest of `E`) take 7.1-7.3
/// cycles, against 7.9 with `A` last, although the path from `E` to `E`
/// is 6 cycles in both; rounds 1..15 take 6.6, against 7.0 when each
/// computed its own `GG` (two 2-component additions for `SS1`'s sum).
macro_rules! round {
    (lo_first, $j:expr, $a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident, $buf:expr) => {
        round_asm!(pre_first!(), ff_lo!(), lo_next!(), $j, $a, $b, $c, $d, $e, $f, $h, $buf,
            g = inout(reg) $g, wo = const 4 * $j, wn = const 4 * ($j + 1),)
    };
    (lo, $j:expr, $a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident, $buf:expr) => {
        round_asm!(pre!(), ff_lo!(), concat!("rorx {rf:e}, {f:e}, 13\n", lo_next!()),
            $j, $a, $b, $c, $d, $e, $f, $h, $buf,
            g = inout(reg) $g, wn = const 4 * ($j + 1),)
    };
    (lo_hi, $j:expr, $a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident, $buf:expr) => {
        round_asm!(pre!(), ff_lo!(), concat!("rorx {rf:e}, {f:e}, 13\n", gg_next!()),
            $j, $a, $b, $c, $d, $e, $f, $h, $buf,
            g = inout(reg) $g, wn = const 4 * ($j + 1),)
    };
    (hi, $j:expr, $a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident, $buf:expr) => {
        round_asm!(pre!(), ff_hi!(), concat!("rorx {rf:e}, {f:e}, 13\n", gg_next!()),
            $j, $a, $b, $c, $d, $e, $f, $h, $buf,
            g = inout(reg) $g, wn = const 4 * ($j + 1),)
    };
    (hi_last, $j:expr, $a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident, $buf:expr) => {
        round_asm!(pre!(), ff_hi!(), "xor {h:e}, {t1:e}\nrorx {rf:e}, {f:e}, 13",
            $j, $a, $b, $c, $d, $e, $f, $h, $buf,)
    };
}

/// The `asm!` of one round: `$pre` up to `TT2` (in `h`) and `SS2` (in
/// `t0`), the two rotations of `P0(TT2)` XORed into `t1`, then `A = D +
/// W'_j + FF + SS2`, then `$post`, which ends `E = TT2 ^ t1`. `$extra`
/// are the operands that differ between the kinds (`g`, and the offsets of
/// `W_j` and `W_{j+1}`).
macro_rules! round_asm {
    ($pre:expr, $ff:expr, $post:expr, $j:expr, $a:ident, $b:ident, $c:ident, $d:ident,
     $e:ident, $f:ident, $h:ident, $buf:expr, $($extra:tt)*) => {
        // SAFETY: register arithmetic plus 4-byte loads inside `buf` (`W_j`
        // at 4j, `W_{j+1}` at 4j + 4 with j < 63, `W'_j` at WP + 4j, j <
        // 64); BMI1/BMI2 are enabled on the calling function and were
        // checked at construction.
        unsafe {
            asm!(
                $pre,
                "rorx {t2:e}, {h:e}, 15",
                "rorx {t1:e}, {h:e}, 23",
                "xor {t1:e}, {t2:e}",
                "add {d:e}, dword ptr [{p} + {wpo}]",
                $ff,
                "add {d:e}, {t0:e}",
                $post,
                a = in(reg) $a, b = inout(reg) $b => _, c = in(reg) $c,
                d = inout(reg) $d, e = in(reg) $e, f = inout(reg) $f => _,
                h = inout(reg) $h,
                rb = out(reg) $b, rf = out(reg) $f,
                p = in(reg) $buf.as_ptr(),
                t0 = out(reg) _, t1 = out(reg) _, t2 = out(reg) _,
                tc = const T[$j] as i32,
                wpo = const WP + 4 * $j,
                $($extra)*
                options(pure, readonly, nostack)
            )
        }
    };
}

/// Round 0 up to `TT2` in `h` and `SS2` in `t0`:
/// `SS1 = rol7(rol12(A) + E + T_j)`, `GG = E ^ F ^ G`,
/// `TT2 = H + W_j + GG + SS1`, `SS2 = SS1 ^ rol12(A)`; `f` is rotated into
/// `rf` first and then used as scratch.
/// One 3-component `lea` sums `rol12(A) + E + T_j` (1 cycle on Golden
/// Cove, measured). The 64-bit `lea` ignores that the registers' upper
/// halves are undefined: the low 32 bits of a sum depend only on the low
/// 32 bits of its terms.
macro_rules! pre_first {
    () => {
        concat!(
            "add {h:e}, dword ptr [{p} + {wo}]\n",
            "rorx {t0:e}, {a:e}, 20\n",
            "lea {t1:e}, [{t0:r} + {e:r} + {tc}]\n",
            "rorx {t1:e}, {t1:e}, 25\n",
            "rorx {rf:e}, {f:e}, 13\n",
            "xor {f:e}, {g:e}\n",
            "xor {f:e}, {e:e}\n",
            "add {h:e}, {f:e}\n",
            "add {h:e}, {t1:e}\n",
            "xor {t0:e}, {t1:e}",
        )
    };
}

/// Rounds 1..64 up to `TT2` in `h` and `SS2` in `t0`, where `h` arrives
/// as `H + W_j + GG_j` (made by the round before); the sum as in
/// [`pre_first`].
macro_rules! pre {
    () => {
        concat!(
            "rorx {t0:e}, {a:e}, 20\n",
            "lea {t1:e}, [{t0:r} + {e:r} + {tc}]\n",
            "rorx {t1:e}, {t1:e}, 25\n",
            "add {h:e}, {t1:e}\n",
            "xor {t0:e}, {t1:e}",
        )
    };
}

/// Ends `E' = P0(t) = t ^ u` in `h` (`t = TT2` in `h`, `u = rol9(t) ^
/// rol17(t)` in `t1`) and adds the next round's `W_{j+1}` and `GG` into
/// `g` for rounds 1..16, with `G' = rol19(F)` already in `rf`: `GG' = E' ^
/// F' ^ G'` (`F' = E`) is `(t ^ F' ^ G') ^ u`, whose first part does not
/// wait for `u`, which leaves the path through `GG'` a cycle to spare.
macro_rules! lo_next {
    () => {
        concat!(
            "add {g:e}, dword ptr [{p} + {wn}]\n",
            "mov {f:e}, {e:e}\n",
            "xor {f:e}, {rf:e}\n",
            "xor {f:e}, {h:e}\n",
            "xor {h:e}, {t1:e}\n",
            "xor {f:e}, {t1:e}\n",
            "add {g:e}, {f:e}",
        )
    };
}

/// Ends `E' = P0(t) = t ^ u` in `h` (`t = TT2` in `h`, `u = rol9(t) ^
/// rol17(t)` in `t1`) and adds the next round's `W_{j+1}` and `GG` into
/// `g` for rounds 16..64, with `G' = rol19(F)` already in `rf`. `GG' =
/// (E' & F') | (!E' & G')` is `G' ^ (E' & M)` with `M = F' ^ G'` (`F' = E`, both known
/// early), and that is `(F' ^ (!t & M)) ^ (u & M)` (as `F' ^ M = G'` and
/// `!t & M = M ^ (t & M)`): the first half needs only `t`, so `GG'` is
/// ready one cycle after `E'`, where computing it from `E'` takes two.
/// That shortens the path from `E` to `E'` in rounds 16..64 from 7 cycles
/// to 6. The half with `u` is on that path with no slack, and it is an
/// `and` rather than an `andn`, which fewer execution ports take: the
/// form `(G' ^ (!t & M)) ^ (!u & M)`, with its second `andn`, measured
/// 1.5% slower at 8 KiB on Golden Cove (medians of alternating runs).
macro_rules! gg_next {
    () => {
        concat!(
            "add {g:e}, dword ptr [{p} + {wn}]\n",
            "mov {f:e}, {e:e}\n",
            "xor {f:e}, {rf:e}\n",
            "andn {t2:e}, {h:e}, {f:e}\n",
            "xor {t2:e}, {e:e}\n",
            "xor {h:e}, {t1:e}\n",
            "and {t1:e}, {f:e}\n",
            "xor {t2:e}, {t1:e}\n",
            "add {g:e}, {t2:e}",
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

/// `FF_j` for rounds 16..64, the majority of `A`, `B`, `C`, added into
/// `d`: where `B` and `C` agree it is their value `B & C`, elsewhere `A`,
/// so it is `((B ^ C) & A) | (B & C)`. The two parts have no bit in
/// common, so each is added on its own: `B & C = !(B ^ C) & C` (one
/// `andn`) before `A` is known, and only the `and` with `A` and one `add`
/// wait for it. Joining them with a XOR first put one more instruction on
/// the round's critical part: 1% slower at 8 KiB on Golden Cove (medians
/// of alternating runs), though the count is the same.
macro_rules! ff_hi {
    () => {
        concat!(
            "rorx {rb:e}, {b:e}, 23\n",
            "xor {b:e}, {c:e}\n",
            "andn {t2:e}, {b:e}, {c:e}\n",
            "add {d:e}, {t2:e}\n",
            "and {b:e}, {a:e}\n",
            "add {d:e}, {b:e}",
        )
    };
}

/// Rounds `j..j + 4`, then `W[j + 16..j + 20]` (and the `W'` words it
/// completes) with the vector unit; the first round to read them is
/// `j + 12`. Placed after the rounds rather than before, the expansion
/// takes its execution ports after the rounds' first instructions have
/// taken theirs: 0.5-0.8% faster at 8 KiB on Golden Cove (medians of
/// alternating runs; after the second or third round: 0.5%, after the
/// first: 0.3%).
macro_rules! four {
    ($k0:ident $k1:ident $k2:ident $k3:ident, $j:literal, $expand4:ident, $buf:ident, $x:ident,
     [$a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident]) => {
        round!($k0, $j, $a, $b, $c, $d, $e, $f, $g, $h, $buf);
        round!($k1, $j + 1, $d, $a, $b, $c, $h, $e, $f, $g, $buf);
        round!($k2, $j + 2, $c, $d, $a, $b, $g, $h, $e, $f, $buf);
        round!($k3, $j + 3, $b, $c, $d, $a, $f, $g, $h, $e, $buf);
        if $j + 16 < 68 {
            let x4 = $expand4($x[0], $x[1], $x[2], $x[3]);
            store4(&mut $buf[$j + 16..], x4);
            store4(&mut $buf[68 + $j + 12..], _mm_xor_si128($x[3], x4));
            $x = [$x[1], $x[2], $x[3], x4];
        }
    };
}

/// XORs the block's input state `$v` (on the stack) into four state
/// words, in scalar registers. Written out so that the compiler does not
/// vectorize the eight XORs: moving the state into vector registers and
/// back costs 15-20 cycles of latency per block, on the path from one
/// block's last round to the next one's first.
macro_rules! feed_forward {
    ($v:expr, [$w:ident, $x:ident, $y:ident, $z:ident]) => {
        // SAFETY: four 4-byte loads inside `$v` (at least four words).
        unsafe {
            asm!(
                "xor {w:e}, dword ptr [{v}]",
                "xor {x:e}, dword ptr [{v} + 4]",
                "xor {y:e}, dword ptr [{v} + 8]",
                "xor {z:e}, dword ptr [{v} + 12]",
                w = inout(reg) $w, x = inout(reg) $x, y = inout(reg) $y, z = inout(reg) $z,
                v = in(reg) $v[..4].as_ptr(),
                options(pure, readonly, nostack)
            )
        }
    };
}

/// The block loop of `$compress` in `engine!`, with `$expand4` as the
/// message expansion.
macro_rules! compress_body {
    ($expand4:ident, $state:ident, $blocks:ident) => {{
        let bswap = _mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
        // W_0..W_67, then W'_0..W'_63.
        let mut buf = [0u32; 68 + 64];
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *$state;
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
            let v = [a, b, c, d, e, f, g, h];
            four!(lo_first lo lo lo, 0, $expand4, buf, x, [a, b, c, d, e, f, g, h]);
            four!(lo lo lo lo, 4, $expand4, buf, x, [a, b, c, d, e, f, g, h]);
            four!(lo lo lo lo, 8, $expand4, buf, x, [a, b, c, d, e, f, g, h]);
            four!(lo lo lo lo_hi, 12, $expand4, buf, x, [a, b, c, d, e, f, g, h]);
            four!(hi hi hi hi, 16, $expand4, buf, x, [a, b, c, d, e, f, g, h]);
            four!(hi hi hi hi, 20, $expand4, buf, x, [a, b, c, d, e, f, g, h]);
            four!(hi hi hi hi, 24, $expand4, buf, x, [a, b, c, d, e, f, g, h]);
            four!(hi hi hi hi, 28, $expand4, buf, x, [a, b, c, d, e, f, g, h]);
            four!(hi hi hi hi, 32, $expand4, buf, x, [a, b, c, d, e, f, g, h]);
            four!(hi hi hi hi, 36, $expand4, buf, x, [a, b, c, d, e, f, g, h]);
            four!(hi hi hi hi, 40, $expand4, buf, x, [a, b, c, d, e, f, g, h]);
            four!(hi hi hi hi, 44, $expand4, buf, x, [a, b, c, d, e, f, g, h]);
            four!(hi hi hi hi, 48, $expand4, buf, x, [a, b, c, d, e, f, g, h]);
            four!(hi hi hi hi, 52, $expand4, buf, x, [a, b, c, d, e, f, g, h]);
            four!(hi hi hi hi, 56, $expand4, buf, x, [a, b, c, d, e, f, g, h]);
            four!(hi hi hi hi_last, 60, $expand4, buf, x, [a, b, c, d, e, f, g, h]);
            let _ = x;
            feed_forward!(v, [a, b, c, d]);
            feed_forward!(v[4..], [e, f, g, h]);
        }
        *$state = [a, b, c, d, e, f, g, h];
    }};
}

engine!("avx,bmi1,bmi2", expand4_avx, compress_avx);
engine!("avx,bmi1,bmi2,avx512f,avx512vl", expand4_vl, compress_vl);
