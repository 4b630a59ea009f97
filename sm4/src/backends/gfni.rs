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
//! Full 64-block batches: two 32-block chains with each word split into
//! two registers by byte pairs (see [`pairs`]: the byte rotations of `L`
//! become renamings and swaps inside the pairs). Shorter tails: 16 blocks
//! per group in four zmm registers, register `i` holding word `i` of every
//! block (a 4×4 word transposition inside each 128-bit lane after
//! loading), up to three groups interleaved, padded through a stack
//! buffer.
//! A single block takes a latency-optimised xmm path (CBC/CFB
//! encryption, CMAC): two `gf2p8affineinvqb`, one rotation and two
//! XOR steps per round on the critical path, in assembly (see `round1!`).
//!
//! Uses the block type, the x86 primitives, the contract and what the
//! x86 kernels share (`backends::x86`); its `impl Kernel` is the
//! `kernel_token!` at the end.

use core::arch::x86_64::*;

use cipher::{InOut, InOutBuf, consts::U64};

/// Blocks per batch: two 32-block chains ([`pairs`]); tails run as up to
/// three 16-block groups ([`groups`]).
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
/// group and round on the two 512-bit ports ran four groups in 20 cycles
/// per round in a loop of rounds on Golden Cove, when full batches still
/// went through [`groups`] (they go through [`pairs`] now; tails use up to
/// three groups). From intrinsics, LLVM spilled and copied around them:
/// ECB 0.79-0.83 -> 0.74-0.77 c/B (alternating runs of `speed`).
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

/// `vpshufb` index that swaps the two bytes of every 16-bit element.
const SWAP_BYTES: [i8; 16] = [1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14];
/// `vpshufb` index that turns each word `(b0, b1, b2, b3)` of a block into
/// the byte pairs `(b0, b2)`, `(b1, b3)`; its own inverse.
const PAIR_BYTES: [i8; 16] = [0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15];

/// A 16-byte `vpshufb` index in every lane.
#[inline]
#[target_feature(enable = "avx512f")]
fn lanes(index: &[i8; 16]) -> __m512i {
    // SAFETY: a 16-byte load from a 16-byte array.
    _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(index.as_ptr().cast()) })
}

/// Transpose, inside each 128-bit lane, the 8×8 matrix of 16-bit elements
/// whose row `r` is that lane of `v[r]`: lane `l` of `t[k]` is element `k`
/// of lane `l` of `v[0]`, ..., `v[7]`. Three rounds of unpacks; its own
/// inverse.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn transpose_pairs(v: [__m512i; 8]) -> [__m512i; 8] {
    // `[lo(x, y), hi(x, y), ...]` for the listed register pairs.
    macro_rules! unpack {
        ($v:ident, $lo:ident, $hi:ident, $(($x:literal, $y:literal)),*) => {
            [$($lo($v[$x], $v[$y]), $hi($v[$x], $v[$y])),*]
        };
    }
    let a = unpack!(
        v,
        _mm512_unpacklo_epi16,
        _mm512_unpackhi_epi16,
        (0, 1),
        (2, 3),
        (4, 5),
        (6, 7)
    );
    // b[4h + c]: rows 4h..4h+4, columns 2c and 2c + 1.
    let b = unpack!(
        a,
        _mm512_unpacklo_epi32,
        _mm512_unpackhi_epi32,
        (0, 2),
        (1, 3),
        (4, 6),
        (5, 7)
    );
    unpack!(
        b,
        _mm512_unpacklo_epi64,
        _mm512_unpackhi_epi64,
        (0, 4),
        (1, 5),
        (2, 6),
        (3, 7)
    )
}

/// The mapped round keys as the pair rounds' broadcast operands: dword
/// `2r + h` is `(k_h, k_h+2, k_h, k_h+2)`, `k_j` byte `j` (big-endian
/// order) of round key `r`.
#[repr(align(64))]
struct PairKeys([u32; 64]);

#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn pair_keys(km: &[u32; 32]) -> PairKeys {
    let mut keys = PairKeys([0; 64]);
    // Each key dword twice, then (b0, b2, b0, b2) from the first copy and
    // (b1, b3, b1, b3) from the second.
    let spread = _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
    let pick = lanes(&[0, 2, 0, 2, 5, 7, 5, 7, 8, 10, 8, 10, 13, 15, 13, 15]);
    for (q, dst) in keys.0.chunks_exact_mut(16).enumerate() {
        // SAFETY: words 8q..8q+8 of the 32 in `km`.
        let k = unsafe { _mm256_loadu_si256(km[8 * q..].as_ptr().cast()) };
        let v = _mm512_shuffle_epi8(
            _mm512_permutexvar_epi32(spread, _mm512_castsi256_si512(k)),
            pick,
        );
        // SAFETY: `dst` holds 16 dwords.
        unsafe { _mm512_storeu_si512(dst.as_mut_ptr().cast(), v) };
    }
    keys
}

/// One round of [`pairs`] on one chain (assembly text). `first` of a pair
/// of rounds computes `P = X_c ^ X_d` (into `p`, which the next round
/// reuses) and its S-box input as `(X_b ^ X_c ^ K) ^ X_d` (into `y`), so
/// that only the last XOR waits for `X_d`, the word the previous round
/// wrote; `second` turns `p` into its own input `P ^ X_new ^ K'` in place.
/// `{k}` + `key` is the offset of the round's dword pair in [`PairKeys`].
///
/// With `A = M1·A(s)` and `B = M1·B(s)` in the notation of [`pairs`]
/// (registers `A0`, `B0` for the byte pairs `(0, 2)` and `A1`, `B1` for
/// `(1, 3)`, `s` the S-box output, `swap` the exchange of the two bytes of
/// every pair), byte `j` of `M1·L(s)` is `a_j ^ a_j+3 ^ b_j+1 ^ b_j+2 ^
/// b_j+3`, which for the pairs is `A0 ^ B1 ^ swap(A1) ^ swap(B0 ^ B1)`
/// and `A1 ^ A0 ^ B0 ^ swap(B0 ^ B1)`: four `gf2p8affineinvqb`, two
/// `vpshufb` and five XOR-type operations (17.3 cycles per round of both
/// chains in a loop of rounds, against 17.9 with `swap(B0) ^ swap(B1)`,
/// three shuffles, and 18.2 with `swap(A1 ^ B0 ^ B1)`, six XORs).
macro_rules! pair_round {
    (first, $a0:literal, $a1:literal, $b0:literal, $b1:literal, $c0:literal, $c1:literal,
     $d0:literal, $d1:literal, $p0:literal, $p1:literal, $y0:literal, $y1:literal, $key:literal) => {
        concat!(
            "vmovdqa64 ", $y0, ", ", $b0, "\n",
            "vmovdqa64 ", $y1, ", ", $b1, "\n",
            "vpternlogd ", $y0, ", ", $c0, ", dword ptr [{k} + ", $key, "]{{1to16}}, 0x96\n",
            "vpternlogd ", $y1, ", ", $c1, ", dword ptr [{k} + ", $key, " + 4]{{1to16}}, 0x96\n",
            "vpxord ", $p0, ", ", $c0, ", ", $d0, "\n",
            "vpxord ", $p1, ", ", $c1, ", ", $d1, "\n",
            "vpxord ", $y0, ", ", $y0, ", ", $d0, "\n",
            "vpxord ", $y1, ", ", $y1, ", ", $d1, "\n",
            pair_round!(@sbox $a0, $a1, $y0, $y1),
        )
    };
    (second, $a0:literal, $a1:literal, $n0:literal, $n1:literal, $p0:literal, $p1:literal,
     $key:literal) => {
        concat!(
            "vpternlogd ", $p0, ", ", $n0, ", dword ptr [{k} + ", $key, "]{{1to16}}, 0x96\n",
            "vpternlogd ", $p1, ", ", $n1, ", dword ptr [{k} + ", $key, " + 4]{{1to16}}, 0x96\n",
            pair_round!(@sbox $a0, $a1, $p0, $p1),
        )
    };
    (@sbox $a0:literal, $a1:literal, $y0:literal, $y1:literal) => {
        concat!(
            "vgf2p8affineinvqb zmm22, ", $y0, ", zmm26, 0x63\n",
            "vgf2p8affineinvqb zmm23, ", $y1, ", zmm26, 0x63\n",
            "vgf2p8affineinvqb ", $y1, ", ", $y1, ", zmm25, 0x72\n",
            "vgf2p8affineinvqb ", $y0, ", ", $y0, ", zmm25, 0x72\n",
            "vpxord zmm24, zmm22, zmm23\n",
            "vpternlogd ", $a0, ", ", $y0, ", zmm23, 0x96\n",
            "vpternlogd ", $a1, ", ", $y0, ", ", $y1, ", 0x96\n",
            "vpshufb zmm29, ", $y1, ", zmm27\n",
            "vpshufb zmm24, zmm24, zmm27\n",
            "vpternlogd ", $a0, ", zmm29, zmm24, 0x96\n",
            "vpternlogd ", $a1, ", zmm22, zmm24, 0x96\n",
        )
    };
}

/// Four rounds of both chains of [`pairs`] (assembly text), interleaved
/// round by round in program order, which sets the ports the operations
/// are bound to (689-703 cycles per batch against 715-721 chain after
/// chain, measured with an earlier, three-shuffle round). Each chain is
/// `[X_0, .., X_3 (two registers each, as in [`pairs`]), P (two)]`; the
/// keys of the four rounds at `{k}`.
macro_rules! pair_rounds4 {
    ($a:tt, $b:tt) => {
        concat!(
            pair_rounds4!(@round 0, $a), pair_rounds4!(@round 0, $b),
            pair_rounds4!(@round 1, $a), pair_rounds4!(@round 1, $b),
            pair_rounds4!(@round 2, $a), pair_rounds4!(@round 2, $b),
            pair_rounds4!(@round 3, $a), pair_rounds4!(@round 3, $b),
        )
    };
    (@round 0, [$x0:literal, $x1:literal, $x2:literal, $x3:literal, $x4:literal, $x5:literal,
     $x6:literal, $x7:literal, $p0:literal, $p1:literal]) => {
        pair_round!(first, $x0, $x1, $x2, $x3, $x4, $x5, $x6, $x7, $p0, $p1, "zmm20", "zmm21", "0")
    };
    (@round 1, [$x0:literal, $x1:literal, $x2:literal, $x3:literal, $x4:literal, $x5:literal,
     $x6:literal, $x7:literal, $p0:literal, $p1:literal]) => {
        pair_round!(second, $x2, $x3, $x0, $x1, $p0, $p1, "8")
    };
    (@round 2, [$x0:literal, $x1:literal, $x2:literal, $x3:literal, $x4:literal, $x5:literal,
     $x6:literal, $x7:literal, $p0:literal, $p1:literal]) => {
        pair_round!(first, $x4, $x5, $x6, $x7, $x0, $x1, $x2, $x3, $p0, $p1, "zmm20", "zmm21", "16")
    };
    (@round 3, [$x0:literal, $x1:literal, $x2:literal, $x3:literal, $x4:literal, $x5:literal,
     $x6:literal, $x7:literal, $p0:literal, $p1:literal]) => {
        pair_round!(second, $x6, $x7, $x4, $x5, $p0, $p1, "24")
    };
}

/// Encrypt 64 blocks from `inp` to `out` as two independent 32-block
/// chains with each word split by bytes into two registers: after
/// [`PAIR_BYTES`] and [`transpose_pairs`], register `2w + h` of a chain
/// holds, for its 32 blocks, bytes `h` and `h + 2` of word `w` as one
/// 16-bit element.
///
/// `L`'s rotation by 2 crosses byte borders; written bytewise (big-endian
/// byte order, indexes mod 4), `L(s)` has byte `j` = `A(s_j) ^ B(s_j+1) ^
/// B(s_j+2) ^ C(s_j+3)` with `A = 1 ^ (<<2)`, `B = (<<2) ^ (>>6)` and `C =
/// 1 ^ (>>6) = A ^ B` inside a byte, so two `gf2p8affineinvqb` per byte
/// ([`SA`], [`SD`]) give every term, and of the byte moves the rotation by
/// 16 is a renaming and those by 8 and 24 a swap inside the pairs. A round
/// is then four `gf2p8affineinvqb`, two `vpshufb` and about nine other
/// operations per chain (see [`pair_round`]), against 38 for the
/// word-sliced [`groups`] on 64 blocks, for 64 more shuffles per batch on
/// the way in and out.
///
/// Measured on Golden Cove (Emerald Rapids): one chain's round has about
/// 14 cycles of latency, the two chains together take about 17.3 cycles
/// per round (their 30 operations on the two 512-bit ports would allow 15:
/// the four `gf2p8affineinvqb` of each chain issue on port 0 only), and a
/// batch 684-699 cycles against 720-737 for [`groups`] in alternating
/// runs (`speed`: ECB 0.73 -> 0.70 c/B).
///
/// # Safety
/// `inp` is readable and `out` writable for 64 blocks; they are equal or
/// disjoint.
#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw,avx512vl")]
unsafe fn pairs(km: &[u32; 32], inp: *const u8, out: *mut u8) {
    // SAFETY: by this function's contract (no masks).
    unsafe { pairs_masked::<false, false>(km, inp, inp, out, inp) }
}

/// [`pairs`] with a mask XORed into the input as it is loaded (`MASK_IN`:
/// `inp ^ pre`) and one into the output as it is stored (`MASK_OUT`:
/// `E(..) ^ post`), so that a mode's whitening and its final XOR cost no
/// pass of their own (CTR: counters in, `^ data` out; XTS: `data ^ T` in,
/// `^ T` out).
///
/// # Safety
/// `inp` (and `pre` with `MASK_IN`, `post` with `MASK_OUT`) readable and `out`
/// writable for 64 blocks; `out` equal to or disjoint from each of them
/// (each input vector is loaded before the output over it is stored).
#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw,avx512vl")]
pub(crate) unsafe fn pairs_masked<const MASK_IN: bool, const MASK_OUT: bool>(
    km: &[u32; 32],
    inp: *const u8,
    pre: *const u8,
    out: *mut u8,
    post: *const u8,
) {
    #[allow(unused_mut)] // mutated only to wipe it, under `zeroize`
    let mut keys = pair_keys(km);
    let m1 = _mm512_set1_epi64(PRE);
    let pair_bytes = lanes(&PAIR_BYTES);
    let mut w = [_mm512_setzero_si512(); 16];
    for c in 0..2 {
        let mut rows = [_mm512_setzero_si512(); 8];
        for (i, row) in rows.iter_mut().enumerate() {
            let off = 512 * c + 64 * i;
            // SAFETY: 64 readable blocks by the caller's contract.
            let mut v = unsafe { _mm512_loadu_si512(inp.add(off).cast()) };
            if MASK_IN {
                // SAFETY: as above, for `pre`.
                v = _mm512_xor_si512(v, unsafe { _mm512_loadu_si512(pre.add(off).cast()) });
            }
            *row = _mm512_shuffle_epi8(v, pair_bytes);
        }
        for (k, t) in transpose_pairs(rows).into_iter().enumerate() {
            // X = M1·x, bytewise (see `groups`).
            w[8 * c + k] = _mm512_gf2p8affine_epi64_epi8::<0>(t, m1);
        }
    }
    let [
        mut w0,
        mut w1,
        mut w2,
        mut w3,
        mut w4,
        mut w5,
        mut w6,
        mut w7,
        mut w8,
        mut w9,
        mut w10,
        mut w11,
        mut w12,
        mut w13,
        mut w14,
        mut w15,
    ] = w;
    // SAFETY: register arithmetic and 4-byte loads from `keys` (64 dwords:
    // `{k}` advances 32 bytes per four rounds, eight times, and the offsets
    // stay under 32); GFNI and AVX-512F/BW are enabled on this function,
    // whose callers checked them.
    unsafe {
        core::arch::asm!(
            "2:",
            pair_rounds4!(
                ["zmm0", "zmm1", "zmm2", "zmm3", "zmm4", "zmm5", "zmm6", "zmm7", "zmm16", "zmm17"],
                ["zmm8", "zmm9", "zmm10", "zmm11", "zmm12", "zmm13", "zmm14", "zmm15", "zmm18",
                 "zmm19"]
            ),
            "add {k}, 32",
            "dec {n:e}",
            "jnz 2b",
            k = inout(reg) keys.0.as_ptr() => _,
            n = inout(reg) 8u32 => _,
            in("zmm25") _mm512_set1_epi64(SA),
            in("zmm26") _mm512_set1_epi64(SD),
            in("zmm27") lanes(&SWAP_BYTES),
            inout("zmm0") w0, inout("zmm1") w1, inout("zmm2") w2, inout("zmm3") w3,
            inout("zmm4") w4, inout("zmm5") w5, inout("zmm6") w6, inout("zmm7") w7,
            inout("zmm8") w8, inout("zmm9") w9, inout("zmm10") w10, inout("zmm11") w11,
            inout("zmm12") w12, inout("zmm13") w13, inout("zmm14") w14, inout("zmm15") w15,
            out("zmm16") _, out("zmm17") _, out("zmm18") _, out("zmm19") _,
            out("zmm20") _, out("zmm21") _, out("zmm22") _, out("zmm23") _,
            out("zmm24") _, out("zmm29") _,
            options(readonly, nostack),
        );
    }
    // After 32 rounds word w holds X_32+w; the output is X_35, X_34, X_33,
    // X_32.
    let m1_inv = _mm512_set1_epi64(PRE_INV);
    let state = [
        [w6, w7, w4, w5, w2, w3, w0, w1],
        [w14, w15, w12, w13, w10, w11, w8, w9],
    ];
    for (c, words) in state.into_iter().enumerate() {
        let words = words.map(|v| _mm512_gf2p8affine_epi64_epi8::<0>(v, m1_inv));
        for (i, row) in transpose_pairs(words).into_iter().enumerate() {
            let off = 512 * c + 64 * i;
            let mut v = _mm512_shuffle_epi8(row, pair_bytes);
            if MASK_OUT {
                // SAFETY: 64 readable blocks of `post` by the caller's
                // contract, read before `out` over them is written.
                v = _mm512_xor_si512(v, unsafe { _mm512_loadu_si512(post.add(off).cast()) });
            }
            // SAFETY: 64 writable blocks by the caller's contract.
            unsafe { _mm512_storeu_si512(out.add(off).cast(), v) };
        }
    }
    // The pair schedule is a 256-byte copy of the key on the stack.
    #[cfg(feature = "zeroize")]
    {
        for line in keys.0.chunks_exact_mut(16) {
            // SAFETY: 64 bytes of `keys`, 64-byte aligned (`PairKeys` is
            // `align(64)` and the lines are 64 bytes long).
            unsafe {
                core::ptr::write_volatile(
                    line.as_mut_ptr().cast::<__m512i>(),
                    _mm512_setzero_si512(),
                )
            };
        }
        core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
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
/// On Zen 5 (3-cycle GFNI, 2-cycle logic and shuffles) the chain is 9
/// cycles; the round took 11.8 with the key XORed in by two `vpxord`s
/// placed before the rotations, and takes 10.0 with one `vpternlogd`
/// (broadcast key operand) placed after them: fewer operations compete
/// with the chain for the vector pipes.
macro_rules! round1 {
    ($a:ident, $y:ident, $c:ident, $d:ident, $km:expr, $md:ident, $me:ident, $rol8:ident) => {
        // SAFETY: register arithmetic plus one 4-byte load at `$km`, a word
        // of the caller's key array; GFNI, AVX-512F/VL and AVX-512BW are
        // enabled on the calling function, whose callers checked them.
        unsafe {
            core::arch::asm!(
                "vgf2p8affineinvqb {sd}, {y}, {md}, 0x63",
                "vgf2p8affineinvqb {se}, {y}, {me}, 0x11",
                "vpshufb {r8}, {sd}, {rol8}",
                "vprold {r16}, {sd}, 16",
                "vprold {r24}, {se}, 8",
                "vmovdqa {k}, {d}",
                "vpternlogd {k}, {c}, dword ptr [{km}]{{1to4}}, 0x96",
                "vpxord {y}, {k}, {a}",
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

/// The 32 single-block rounds on the state `X = M1·x` in four xmm
/// registers (word `i` of each lane's block in register `i`; see
/// [`round1`]).
#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw,avx512vl")]
fn rounds_xmm(km: &[u32; 32], x: [__m128i; 4]) -> [__m128i; 4] {
    let [mut x0, mut x1, mut x2, mut x3] = x;
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
    [x0, x1, x2, x3]
}

/// One block, latency first: each word in its own xmm register, broadcast
/// to the four lanes.
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
    let x = [
        _mm_shuffle_epi32::<0x00>(v),
        _mm_shuffle_epi32::<0x55>(v),
        _mm_shuffle_epi32::<0xaa>(v),
        _mm_shuffle_epi32::<0xff>(v),
    ];
    let [x0, x1, x2, x3] = rounds_xmm(km, x);
    let lo = _mm_unpacklo_epi32(x3, x2);
    let hi = _mm_unpacklo_epi32(x1, x0);
    let v = aff::<0>(_mm_unpacklo_epi64(lo, hi), PRE_INV);
    // SAFETY: one writable block.
    unsafe { _mm_storeu_si128(out.cast(), v) };
}

/// The bytewise map `x -> m·x`, for the lane paths.
#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw,avx512vl")]
fn map_xmm(x: __m128i, m: i64) -> __m128i {
    _mm_gf2p8affine_epi64_epi8::<0>(x, _mm_set1_epi64x(m))
}

super::x86::lane_paths!("gfni,avx512f,avx512bw,avx512vl");

super::x86::x86_entry_points!(
    features = "gfni,avx512f,avx512bw,avx512vl",
    cpu = "GFNI, AVX-512F, AVX-512BW and AVX-512VL",
    group = 16,
    batch = pairs,
    lanes = few
);

crate::kernel::kernel_token! {
    features = "gfni,avx512f,avx512bw,avx512vl,avx2", single = crypt_block;
    // Free: the lane paths take up to four blocks at one block's latency.
    const FREE_LANES: bool = true;
    super::x86::mode_hooks!(zmm);
    super::x86::lane_hooks!();
    // The pair kernel folds a mode's XORs into its loads and stores.
    #[inline(always)]
    fn crypt_stage_xor(
        self,
        rk: &[u32; 32],
        stage: &[crate::block::Blk],
        data: cipher::InOutBuf<'_, '_, crate::block::Blk>,
    ) -> bool {
        if data.len() != crate::kernel::STAGE || stage.len() != crate::kernel::STAGE {
            return false;
        }
        let (i, o) = data.into_raw();
        let s = stage.as_ptr().cast::<u8>();
        // SAFETY: the token exists only inside the `gfni` runner; the
        // stage and `data` hold 64 blocks each, `data`'s in and out
        // equal or disjoint, the stage apart from both.
        unsafe { pairs_masked::<false, true>(rk, s, s, o.cast(), i.cast()) };
        true
    }
    #[inline(always)]
    fn crypt_stage_xts(
        self,
        rk: &[u32; 32],
        tweaks: &crate::kernel::Stage,
        data: &mut [crate::block::Blk],
    ) -> bool {
        if data.len() != crate::kernel::STAGE {
            return false;
        }
        let p = data.as_mut_ptr().cast::<u8>();
        let t = tweaks.0.as_ptr().cast::<u8>();
        // SAFETY: the token exists only inside the `gfni` runner; `data`
        // and the tweaks hold 64 blocks each, `data` in place, the
        // tweaks apart.
        unsafe { pairs_masked::<true, true>(rk, p, t, p, t) };
        true
    }
    const XTS_FOLDS: bool = true;
}

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
