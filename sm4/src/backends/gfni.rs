//! x86_64 GFNI + AVX-512 (zmm) kernel.
//!
//! SM4's S-box is `S(x) = A·inv(A·x + 0xD3) + 0xD3`; with the isomorphism
//! into the AES field folded in, it is `gf2p8affineqb` (matrix `M1`,
//! constant `c1`) then `gf2p8affineinvqb` (constants from
//! `tools/derive_sbox.py`). Both paths keep the state in the AES-field
//! basis, `X = M1·x` (a bytewise linear map, so it commutes with XOR and
//! with byte rotations): the S-box input `M1·t + c1` is then just
//! `X_b ^ X_c ^ X_d ^ (M1·k + c1)`, and three `gf2p8affineinvqb` of it give
//! `sA`, `sD`, `sE` with `M1·L(S(t)) = sA ^ rol8(sD) ^ rol16(sD) ^
//! rol24(sE)` (the bit rotation by 2 split into bytewise shifts folded
//! into the matrices). No first affine step and no bit rotation remain in
//! the round. The words stay byte-reversed, as x86 loads them: every map
//! is bytewise but the rotations by 8 and 24, which trade places, so no
//! block's bytes are swapped on the way in or out (the round keys are,
//! once per key, in `gfni256::expand_key`).
//!
//! Bulk: 16 blocks per group in four zmm registers, register `i` holding
//! word `i` of every block (a 4×4 word transposition inside each 128-bit
//! lane after loading); four independent groups (64 blocks) interleaved;
//! shorter tails run the same code on fewer groups, padded through a stack
//! buffer. A single block takes a latency-optimised xmm path (CBC/CFB
//! encryption, CMAC): two `gf2p8affineinvqb`, one rotation and two
//! XOR steps per round on the critical path, in assembly (see `round1!`).

use core::arch::x86_64::*;

use cipher::{Block, InOut, InOutBuf, consts::U64};

/// Blocks per batch: four interleaved 16-block groups.
pub(crate) type ParBlocks = U64;

/// `gf2p8affineqb` matrix and constant: SM4 input affine map, then the
/// isomorphism into the AES field (the constant is applied to the round
/// keys, by `gfni256::expand_key`, and by the unit test).
const PRE: i64 = 0x4c28_7db9_1a22_505d;
#[cfg(test)]
const PRE_C: i32 = 0x3e;
/// `gf2p8affineinvqb` matrix and constant: back from the AES field, then the
/// SM4 output affine map (the plain S-box; the kernels use the variants
/// below, this one is checked by the unit test).
#[cfg(test)]
const POST: i64 = 0xf3ab_34a9_74a6_b589_u64 as i64;
#[cfg(test)]
const POST_C: i32 = 0xd3;

#[cfg(test)]
#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw,avx512vl")]
fn sbox512(x: __m512i) -> __m512i {
    let y = _mm512_gf2p8affine_epi64_epi8::<PRE_C>(x, _mm512_set1_epi64(PRE));
    _mm512_gf2p8affineinv_epi64_epi8::<POST_C>(y, _mm512_set1_epi64(POST))
}

/// `vpshufb` indexes: rotate each 32-bit word left by 8, 16, 24.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn rotations() -> [__m512i; 3] {
    let r = |a: i8, b: i8, c: i8, d: i8| {
        _mm512_broadcast_i32x4(_mm_setr_epi8(
            a,
            b,
            c,
            d,
            a + 4,
            b + 4,
            c + 4,
            d + 4,
            a + 8,
            b + 8,
            c + 8,
            d + 8,
            a + 12,
            b + 12,
            c + 12,
            d + 12,
        ))
    };
    [r(3, 0, 1, 2), r(2, 3, 0, 1), r(1, 2, 3, 0)]
}

/// Transpose four registers of four blocks each into four registers of one
/// word each (per 128-bit lane); applied to the reversed outputs it is its
/// own inverse.
#[inline]
#[target_feature(enable = "avx512f")]
fn transpose(z: [__m512i; 4]) -> [__m512i; 4] {
    let t0 = _mm512_unpacklo_epi32(z[0], z[1]);
    let t1 = _mm512_unpackhi_epi32(z[0], z[1]);
    let t2 = _mm512_unpacklo_epi32(z[2], z[3]);
    let t3 = _mm512_unpackhi_epi32(z[2], z[3]);
    [
        _mm512_unpacklo_epi64(t0, t2),
        _mm512_unpackhi_epi64(t0, t2),
        _mm512_unpacklo_epi64(t1, t3),
        _mm512_unpackhi_epi64(t1, t3),
    ]
}

/// One round on one group of 16 blocks, the state kept as `X = M1·x` (see
/// the module docs): from the S-box input `y = X_b ^ X_c ^ X_d ^ (M1·k +
/// c1)`, three `gf2p8affineinvqb` give `sA`, `sD`, `sE`, and `X_a ^= sA ^
/// rol8(sD) ^ rol16(sD) ^ rol24(sE)`, the byte rotations by `vpshufb`
/// (which runs beside the GFNI unit). With `X_i` the words in round order,
/// rounds `i` and `i + 1` both take `X_{i+2} ^ X_{i+3}` into their inputs:
/// `first` (round `i`) computes it into `$p` and its own input from a
/// copy; `second` (round `i + 1`) turns `$p` into its input in place. `$k`
/// points to the round's mapped key; `$m` holds the matrices `SA`, `SD`,
/// `SE` and `$rot` the rotation indexes (by 8, 16, 24).
///
/// Assembly, with the temporaries shared by all groups (register renaming
/// keeps the groups independent) and the 16 state, 4 shared and 6
/// constant registers held throughout: these 9.5 vector operations per
/// group and round on the two 512-bit ports run four groups in 20 cycles
/// per round in a loop of rounds on Golden Cove. From intrinsics, LLVM
/// spilled and copied around them: ECB 0.79-0.83 -> 0.74-0.77 c/B
/// (alternating runs of `speed`).
macro_rules! bulk_round {
    (first, $a:expr, $b:expr, $c:expr, $d:expr, $p:expr, $k:expr, $m:ident, $rot:ident) => {
        let _y: __m512i;
        bulk_round!(@asm
            concat!(
                "vpxord {p:z}, {c:z}, {d:z}\n",
                "vmovdqa64 {y:z}, {p:z}\n",
                "vpternlogd {y:z}, {b:z}, dword ptr [{k}]{{1to16}}, 0x96\n",
            ),
            $a, $b, $k, $m, $rot,
            c = in(zmm_reg) $c, d = in(zmm_reg) $d, p = out(zmm_reg) $p, y = out(zmm_reg) _y,
        )
    };
    (second, $a:expr, $b:expr, $p:expr, $k:expr, $m:ident, $rot:ident) => {
        let _y: __m512i;
        bulk_round!(@asm
            "vpternlogd {y:z}, {b:z}, dword ptr [{k}]{{1to16}}, 0x96\n",
            $a, $b, $k, $m, $rot,
            y = inout(zmm_reg) $p => _y,
        )
    };
    (@asm $input:expr, $a:expr, $b:expr, $k:expr, $m:ident, $rot:ident, $($operands:tt)*) => {
        // SAFETY: register arithmetic plus one 4-byte load at `$k`, a word
        // of the caller's key array; GFNI and AVX-512F/BW are enabled on the
        // calling function, whose callers checked them.
        unsafe {
            // Typed scratch outputs (`_` outputs of the zmm class do not
            // get zmm registers).
            let (_t1, _t2): (__m512i, __m512i);
            core::arch::asm!(
                $input,
                "vgf2p8affineinvqb {t1:z}, {y:z}, {md:z}, 0x63",
                "vgf2p8affineinvqb {t2:z}, {y:z}, {me:z}, 0x11",
                "vgf2p8affineinvqb {y:z}, {y:z}, {ma:z}, 0x72",
                "vpshufb {t2:z}, {t2:z}, {r24:z}",
                "vpternlogd {a:z}, {y:z}, {t2:z}, 0x96",
                "vpshufb {y:z}, {t1:z}, {r8:z}",
                "vpshufb {t1:z}, {t1:z}, {r16:z}",
                "vpternlogd {a:z}, {y:z}, {t1:z}, 0x96",
                a = inout(zmm_reg) $a,
                b = in(zmm_reg) $b,
                k = in(reg) $k,
                ma = in(zmm_reg) $m[0],
                md = in(zmm_reg) $m[1],
                me = in(zmm_reg) $m[2],
                r8 = in(zmm_reg) $rot[0],
                r16 = in(zmm_reg) $rot[1],
                r24 = in(zmm_reg) $rot[2],
                t1 = out(zmm_reg) _t1,
                t2 = out(zmm_reg) _t2,
                $($operands)*
                options(pure, readonly, nostack, preserves_flags)
            )
        }
    };
}

/// Encrypt `G` groups of 16 blocks from `inp` to `out`.
///
/// # Safety
/// `inp` is readable and `out` writable for `16 * G` blocks; they are equal
/// or disjoint.
#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw,avx512vl")]
unsafe fn groups<const G: usize>(km: &[u32; 32], inp: *const u8, out: *mut u8) {
    let mut x = [[_mm512_setzero_si512(); 4]; G];
    for (g, xg) in x.iter_mut().enumerate() {
        let mut z = [_mm512_setzero_si512(); 4];
        for (i, zi) in z.iter_mut().enumerate() {
            // SAFETY: in bounds by the caller's contract (block 16g + 4i..+4).
            *zi = unsafe { _mm512_loadu_si512(inp.add(256 * g + 64 * i).cast()) };
        }
        *xg = transpose(z);
    }
    // The words stay byte-reversed (as loaded): the S-box and the affine
    // maps work bytewise, and a rotation of a word by 8 or 24 is one by 24
    // or 8 of its byte-reversed form, so the round swaps those two masks
    // and takes byte-reversed keys instead of swapping every block's bytes
    // on the way in and out.
    let [r8, r16, r24] = rotations();
    let rot = [r24, r16, r8];
    let m1 = _mm512_set1_epi64(PRE);
    let m1_inv = _mm512_set1_epi64(PRE_INV);
    let [mut x0, mut x1, mut x2, mut x3] = [[_mm512_setzero_si512(); G]; 4];
    for g in 0..G {
        // X = M1·x: the state in the AES-field basis.
        [x0[g], x1[g], x2[g], x3[g]] = x[g].map(|w| _mm512_gf2p8affine_epi64_epi8::<0>(w, m1));
    }
    let m = [SA, SD, SE].map(|v| _mm512_set1_epi64(v));
    let k = |i: usize| km[i..].as_ptr();
    let mut p = [_mm512_setzero_si512(); G];
    for r in (0..32).step_by(4) {
        for g in 0..G {
            bulk_round!(first, x0[g], x1[g], x2[g], x3[g], p[g], k(r), m, rot);
        }
        for g in 0..G {
            bulk_round!(second, x1[g], x0[g], p[g], k(r + 1), m, rot);
        }
        for g in 0..G {
            bulk_round!(first, x2[g], x3[g], x0[g], x1[g], p[g], k(r + 2), m, rot);
        }
        for g in 0..G {
            bulk_round!(second, x3[g], x2[g], p[g], k(r + 3), m, rot);
        }
    }
    for g in 0..G {
        x[g] = [x0[g], x1[g], x2[g], x3[g]].map(|w| _mm512_gf2p8affine_epi64_epi8::<0>(w, m1_inv));
    }
    for (g, xg) in x.iter().enumerate() {
        let z = transpose([xg[3], xg[2], xg[1], xg[0]]);
        for (i, zi) in z.iter().enumerate() {
            // SAFETY: in bounds by the caller's contract.
            unsafe { _mm512_storeu_si512(out.add(256 * g + 64 * i).cast(), *zi) };
        }
    }
}

/// `gf2p8affineinvqb` matrices and constants mapping the inverse straight
/// to `sA = M1·(s ^ (s << 2))`, `sD = M1·((s << 2) ^ (s >> 6))` and
/// `sE = M1·(s ^ (s >> 6))` (bytewise shifts), `M1` being the matrix of
/// [`PRE`] and `s` the S-box output (see `tools/derive_sbox.py`, which also
/// checks the identity `M1·L(s) = sA ^ rol8(sD) ^ rol16(sD) ^ rol24(sE)`).
/// The bulk rounds use all three, the single-block round `sA = sD ^ sE`.
const SA: i64 = 0x040d_b891_e9a4_81b7_u64 as i64;
const SA_C: i32 = 0x72;
const SD: i64 = 0x2c02_0425_1620_40ad_u64 as i64;
const SD_C: i32 = 0x63;
const SE: i64 = 0x280f_bcb4_ff84_c11a_u64 as i64;
const SE_C: i32 = 0x11;
// `gf2p8affineinvqb` is linear in its matrix and constant, so this makes
// `sA = sD ^ sE` for every input.
const _: () = assert!(SA == SD ^ SE && SA_C == SD_C ^ SE_C);

/// `M1^-1`: back from the single-block path's state representation.
const PRE_INV: i64 = 0xb3a4_f586_3284_728b_u64 as i64;

/// The bytewise affine map `x -> m·x + C`.
#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw,avx512vl")]
fn aff<const C: i32>(x: __m128i, m: i64) -> __m128i {
    _mm_gf2p8affine_epi64_epi8::<C>(x, _mm_set1_epi64x(m))
}

/// One single-block round on the state kept as `X = M1·x` (`M1` the matrix
/// of [`PRE`]; linear and bytewise, so it commutes with XOR and with byte
/// rotations), every word broadcast to all four lanes of its register and
/// byte-reversed (as loaded; see [`groups`]), so that the rotations by 8
/// and 24 below are lane rotations by 24 and 8.
/// `$y = M1·t + c1` comes in as this round's S-box input after the first
/// affine step and leaves as the next round's; `$a` becomes `X_a ^ M1·L(s)`
/// (`s` the S-box output). With `sA = sD ^ sE` (the constants agree too:
/// `0x72 = 0x63 ^ 0x11`), `M1·L(s) = sD ^ sE ^ rol8(sD) ^ rol16(sD) ^
/// rol24(sE)`: two `gf2p8affineinvqb` of `y`. `$km` points to the next
/// round's mapped key `M1·k' + c1` (byte-reversed); with `k = X_c ^ X_d ^
/// (M1·k' + c1)`, the next input is `y' = (sD ^ sE ^ X_a ^ k) ^ (rol8(sD) ^
/// rol16(sD) ^ rol24(sE))` and the new `X_a = y' ^ k`. `$md`, `$me`: the
/// matrices `SD`, `SE` (broadcast); `$rol8`: the `vpshufb` index of the
/// rotation by 8, that is, of the lane rotation by 24.
///
/// Written in assembly for the shape of its data flow: on Golden Cove a
/// GFNI result reaches an integer vector instruction about two cycles late,
/// and later than that for an instruction that issues after the first
/// consumers (it then no longer comes from the bypass). So each
/// `gf2p8affineinvqb` result is read only by instructions that can issue
/// together (three rotations and one `vpternlogd`), and `X_a`, which waits
/// for the S-box, is computed from `y'` rather than beside it. Measured in
/// a loop of rounds: 9.4-9.5 cycles per round, against 12.5 for three
/// `gf2p8affineinvqb` whose results the final `vpternlogd`s read late.
macro_rules! round1 {
    ($a:ident, $y:ident, $c:ident, $d:ident, $km:expr, $md:ident, $me:ident, $rol8:ident) => {
        // SAFETY: register arithmetic plus one 4-byte load at `$km`, a word
        // of the caller's key array; GFNI, AVX-512F/VL and AVX-512BW are
        // enabled on the calling function, whose callers checked them.
        unsafe {
            core::arch::asm!(
                "vgf2p8affineinvqb {sd}, {y}, {md}, 0x63",
                "vgf2p8affineinvqb {se}, {y}, {me}, 0x11",
                "vpxord {k}, {d}, dword ptr [{km}]{{1to4}}",
                "vpxord {k}, {k}, {c}",
                "vpxord {y}, {k}, {a}",
                "vpshufb {r8}, {sd}, {rol8}",
                "vprold {r16}, {sd}, 16",
                "vprold {r24}, {se}, 8",
                "vpternlogd {y}, {sd}, {se}, 0x96",
                "vpternlogd {r8}, {r16}, {r24}, 0x96",
                "vpxord {y}, {y}, {r8}",
                "vpxord {a}, {y}, {k}",
                a = inout(xmm_reg) $a,
                y = inout(xmm_reg) $y,
                c = in(xmm_reg) $c,
                d = in(xmm_reg) $d,
                km = in(reg) $km,
                md = in(xmm_reg) $md,
                me = in(xmm_reg) $me,
                rol8 = in(xmm_reg) $rol8,
                sd = out(xmm_reg) _,
                se = out(xmm_reg) _,
                k = out(xmm_reg) _,
                r8 = out(xmm_reg) _,
                r16 = out(xmm_reg) _,
                r24 = out(xmm_reg) _,
                options(pure, readonly, nostack, preserves_flags)
            )
        }
    };
}

/// One block, latency first: each word in its own xmm register.
///
/// # Safety
/// `inp` is readable and `out` writable for one block.
#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw,avx512vl")]
unsafe fn one(km: &[u32; 32], inp: *const u8, out: *mut u8) {
    // SAFETY: one readable block; its words stay byte-reversed (see
    // [`round1`]).
    let v = unsafe { _mm_loadu_si128(inp.cast()) };
    // X = M1·x for the whole block at once (bytewise map).
    let v = aff::<0>(v, PRE);
    let (mut x0, mut x1, mut x2, mut x3) = (
        _mm_shuffle_epi32::<0x00>(v),
        _mm_shuffle_epi32::<0x55>(v),
        _mm_shuffle_epi32::<0xaa>(v),
        _mm_shuffle_epi32::<0xff>(v),
    );
    let (sd, se) = (_mm_set1_epi64x(SD), _mm_set1_epi64x(SE));
    let rol8 = _mm512_castsi512_si128(rotations()[2]);
    let mut y =
        _mm_ternarylogic_epi32::<0x96>(x1, x2, _mm_xor_si128(x3, _mm_set1_epi32(km[0] as i32)));
    // Round i reads the key of round i + 1 (the last round a spare).
    let k = |i: usize| km[i % 32..].as_ptr();
    for r in (0..32).step_by(4) {
        round1!(x0, y, x2, x3, k(r + 1), sd, se, rol8);
        round1!(x1, y, x3, x0, k(r + 2), sd, se, rol8);
        round1!(x2, y, x0, x1, k(r + 3), sd, se, rol8);
        round1!(x3, y, x1, x2, k(r + 4), sd, se, rol8);
    }
    let lo = _mm_unpacklo_epi32(x3, x2);
    let hi = _mm_unpacklo_epi32(x1, x0);
    let v = aff::<0>(_mm_unpacklo_epi64(lo, hi), PRE_INV);
    // SAFETY: one writable block.
    unsafe { _mm_storeu_si128(out.cast(), v) };
}

x86_entry_points!(
    features = "gfni,avx512f,avx512bw,avx512vl",
    cpu = "GFNI, AVX-512F, AVX-512BW and AVX-512VL",
    group = 16
);

#[cfg(test)]
mod tests {
    use super::*;

    /// The two GFNI steps equal the SM4 S-box table on all 256 inputs.
    #[test]
    fn affine_sbox_matches_table() {
        if !crate::Backend::Gfni.is_available() {
            return;
        }
        let mut input = [0u8; 256];
        for (i, b) in input.iter_mut().enumerate() {
            *b = i as u8;
        }
        let mut out = [0u8; 256];
        for (i, o) in input.chunks_exact(64).zip(out.chunks_exact_mut(64)) {
            // SAFETY: GFNI + AVX-512 checked above; 64-byte buffers.
            unsafe {
                let v = sbox512(_mm512_loadu_si512(i.as_ptr().cast()));
                _mm512_storeu_si512(o.as_mut_ptr().cast(), v);
            }
        }
        assert_eq!(out, crate::backends::soft::tests::SBOX);
    }
}
