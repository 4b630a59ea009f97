//! x86_64 GFNI with AVX2 (ymm) kernel, for CPUs that have GFNI but no
//! AVX-512 (or where it is off).
//!
//! Same design as the zmm kernel (`gfni.rs`): the state kept in the
//! AES-field basis `X = M1·x`, so that a round is
//! `y = X_b ^ X_c ^ X_d ^ (M1·k + c1)`, `gf2p8affineinvqb` (VEX encoded)
//! of `y` giving `sD` and `sE`, and
//! `X_a ^= sA ^ rol8(sD) ^ rol16(sD) ^ rol24(sE)` with `sA = sD ^ sE` (the
//! shifted terms cancel) and the byte rotations by `vpshufb`. Four words of
//! 8 blocks per group in four ymm registers; four groups (32 blocks)
//! interleaved; single blocks on an xmm path in assembly (`round1!`).
//!
//! Uses the block type, the key schedule, the x86 primitives
//! (`crate::simd::x86`), the contract and what the x86 kernels share
//! (`backends::x86`); its `impl Kernel` is the `kernel_token!` at the end.

use crate::simd::x86::ymm;
use core::arch::x86_64::*;

use cipher::{InOut, InOutBuf, consts::U32};

/// Blocks per batch: four interleaved 8-block groups.
pub(crate) type ParBlocks = U32;

/// The first affine step of the S-box (matrix `M1`, constant `c1`), `M1^-1`,
/// and the `gf2p8affineinvqb` maps to `sD = M1·((s << 2) ^ (s >> 6))` and
/// `sE = M1·(s ^ (s >> 6))` of the S-box output `s` (bytewise shifts; `sA =
/// M1·(s ^ (s << 2))` is `sD ^ sE`), all from `tools/derive_sbox.py`.
const PRE: i64 = 0x4c28_7db9_1a22_505d;
const PRE_C: i32 = 0x3e;
const PRE_INV: i64 = 0xb3a4_f586_3284_728b_u64 as i64;
const SD: i64 = 0x2c02_0425_1620_40ad_u64 as i64;
const SD_C: i32 = 0x63;
const SE: i64 = 0x280f_bcb4_ff84_c11a_u64 as i64;
const SE_C: i32 = 0x11;
/// The plain S-box's second step (the key schedule's S-box).
const POST: i64 = 0xf3ab_34a9_74a6_b589_u64 as i64;
const POST_C: i32 = 0xd3;

/// The S-box on the four bytes of `x`: two GFNI affine steps.
#[inline]
#[target_feature(enable = "gfni,avx2")]
fn sbox_word(x: u32) -> u32 {
    let v = _mm_cvtsi32_si128(x as i32);
    let y = _mm_gf2p8affine_epi64_epi8::<PRE_C>(v, _mm_set1_epi64x(PRE));
    let s = _mm_gf2p8affineinv_epi64_epi8::<POST_C>(y, _mm_set1_epi64x(POST));
    _mm_cvtsi128_si32(s) as u32
}

/// The key schedule in the form the rounds use ([`mapped_keys`]: in the
/// AES-field basis and byte-reversed), mapped once per key rather than per
/// call; used by `gfni` too.
///
/// # Safety
/// The CPU supports GFNI and AVX2.
#[target_feature(enable = "gfni,avx2")]
pub(crate) unsafe fn expand_key(key: &[u8; 16]) -> [u32; 32] {
    // SAFETY: GFNI and AVX2, per this function's contract.
    mapped_keys(&unsafe { schedule(key) })
}

/// The round keys as the portable code defines them, with the S-box on GFNI
/// (about 6x faster than the bit-sliced S-box of `soft` on one word).
///
/// # Safety
/// The CPU supports GFNI and AVX2.
#[target_feature(enable = "gfni,avx2")]
unsafe fn schedule(key: &[u8; 16]) -> [u32; 32] {
    // The closure inherits this function's target features.
    crate::schedule::expand_key_with(key, |x| sbox_word(x))
}

/// `pshufb` indexes, per 32-bit word: byte swap, rotations left by 8/16/24.
#[inline]
#[target_feature(enable = "avx2")]
fn shuffles() -> [__m256i; 4] {
    let mut v = [
        _mm256_setr_epi8(
            3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12, 3, 2, 1, 0, 7, 6, 5, 4, 11, 10,
            9, 8, 15, 14, 13, 12,
        ),
        _mm256_setr_epi8(
            3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14, 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9,
            10, 15, 12, 13, 14,
        ),
        _mm256_setr_epi8(
            2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11,
            8, 9, 14, 15, 12, 13,
        ),
        _mm256_setr_epi8(
            1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12, 1, 2, 3, 0, 5, 6, 7, 4, 9, 10,
            11, 8, 13, 14, 15, 12,
        ),
    ];
    // Hide the rotation by 16 from LLVM, which would otherwise turn it into
    // a `vpshuflw` + `vpshufhw` pair (two shuffle-port operations).
    // SAFETY: an empty asm block that only claims to modify a register.
    unsafe { core::arch::asm!("/* {0} */", inout(ymm_reg) v[2], options(pure, nomem, nostack)) };
    v
}

#[cfg(test)]
#[inline]
#[target_feature(enable = "gfni,avx2")]
fn sbox256(x: __m256i) -> __m256i {
    let y = _mm256_gf2p8affine_epi64_epi8::<PRE_C>(x, _mm256_set1_epi64x(PRE));
    _mm256_gf2p8affineinv_epi64_epi8::<POST_C>(y, _mm256_set1_epi64x(POST))
}

/// One single-block round in the AES-field basis (see the module docs),
/// every word broadcast to all four lanes of its register: `$y`, this
/// round's S-box input after the first affine step, becomes the next
/// round's, `$a` becomes `X_a ^ M1·L(s)` (`s` the S-box output).
/// `M1·L(s) = sA ^ rol8(sD) ^ rol16(sD) ^ rol24(sE)` with `sA = sD ^ sE`,
/// and `rol24(sE)` as the `gf2p8affineinvqb` of `rol24(y)` (a bytewise map
/// commutes with byte rotations). `$km` points to the next round's mapped
/// key `M1·k' + c1`; with `k = X_c ^ X_d ^ (M1·k' + c1)`, `y' = X_a ^ k ^
/// rol24(sE) ^ sA ^ (rol8(sD) ^ rol16(sD))` and the new `X_a = y' ^ k`.
/// `$md`, `$me`: the matrices `SD`, `SE` (broadcast); `$rot` points to
/// the `vpshufb` indexes of the rotations by 8, 16 and 24 (of words kept
/// byte-reversed, as in [`groups`]: lane rotations by 24, 16 and 8).
///
/// In assembly for the shape of its data flow, as in `gfni.rs`: a GFNI
/// result reaches the integer vector unit late (about two cycles on Golden
/// Cove), later still for a consumer that issues after the first, so each
/// `gf2p8affineinvqb` result here is read by instructions that can issue
/// together, and `rol24(sE)` comes from a rotated input instead of a third
/// rotation of the same result. Measured in a loop of rounds: 10.6-10.9
/// cycles per round, against 13.0 for three `gf2p8affineinvqb` of `y`
/// whose results the XOR tree reads one after the other.
macro_rules! round1 {
    ($a:ident, $y:ident, $c:ident, $d:ident, $km:expr, $md:ident, $me:ident, $rot:expr) => {
        // SAFETY: register arithmetic plus a 4-byte load at `$km` (a word of
        // the caller's key array) and three 16-byte loads at `$rot` (the
        // caller's three indexes); GFNI and AVX2 are enabled on the calling
        // function, whose callers checked them.
        unsafe {
            core::arch::asm!(
                "vpshufb {e24}, {y}, xmmword ptr [{rot} + 32]",
                "vgf2p8affineinvqb {sd}, {y}, {md}, 0x63",
                "vgf2p8affineinvqb {se}, {y}, {me}, 0x11",
                "vgf2p8affineinvqb {e24}, {e24}, {me}, 0x11",
                "vpbroadcastd {k}, dword ptr [{km}]",
                "vpxor {k}, {k}, {d}",
                "vpxor {k}, {k}, {c}",
                "vpxor {y}, {k}, {a}",
                "vpxor {se}, {se}, {sd}",
                "vpshufb {r8}, {sd}, xmmword ptr [{rot}]",
                "vpshufb {sd}, {sd}, xmmword ptr [{rot} + 16]",
                "vpxor {y}, {y}, {e24}",
                "vpxor {r8}, {r8}, {sd}",
                "vpxor {y}, {y}, {se}",
                "vpxor {y}, {y}, {r8}",
                "vpxor {a}, {y}, {k}",
                a = inout(xmm_reg) $a,
                y = inout(xmm_reg) $y,
                c = in(xmm_reg) $c,
                d = in(xmm_reg) $d,
                km = in(reg) $km,
                rot = in(reg) $rot,
                md = in(xmm_reg) $md,
                me = in(xmm_reg) $me,
                sd = out(xmm_reg) _,
                se = out(xmm_reg) _,
                e24 = out(xmm_reg) _,
                k = out(xmm_reg) _,
                r8 = out(xmm_reg) _,
                options(pure, readonly, nostack, preserves_flags)
            )
        }
    };
}

/// Round keys in the AES-field basis, `M1·k + c1` (bytewise), for all 32
/// rounds at once, each byte-reversed: the rounds keep the words as x86
/// loads them (see [`groups`]).
#[inline]
#[target_feature(enable = "gfni,avx2")]
fn mapped_keys(rk: &[u32; 32]) -> [u32; 32] {
    let m1 = _mm256_set1_epi64x(PRE);
    let bswap = shuffles()[0];
    let mut km = [0u32; 32];
    for h in 0..4 {
        // SAFETY: `rk` and `km` hold 32 words; words 8h..8h+8 are in bounds.
        unsafe {
            let v = _mm256_loadu_si256(rk.as_ptr().add(8 * h).cast());
            let v = _mm256_gf2p8affine_epi64_epi8::<PRE_C>(v, m1);
            let v = _mm256_shuffle_epi8(v, bswap);
            _mm256_storeu_si256(km.as_mut_ptr().add(8 * h).cast(), v);
        }
    }
    km
}

/// Four registers of two blocks each to four registers of one word each
/// (per 128-bit lane); applied to the reversed outputs it inverts itself.
#[inline]
#[target_feature(enable = "avx2")]
fn transpose(z: [__m256i; 4]) -> [__m256i; 4] {
    let t0 = _mm256_unpacklo_epi32(z[0], z[1]);
    let t1 = _mm256_unpackhi_epi32(z[0], z[1]);
    let t2 = _mm256_unpacklo_epi32(z[2], z[3]);
    let t3 = _mm256_unpackhi_epi32(z[2], z[3]);
    [
        _mm256_unpacklo_epi64(t0, t2),
        _mm256_unpackhi_epi64(t0, t2),
        _mm256_unpacklo_epi64(t1, t3),
        _mm256_unpackhi_epi64(t1, t3),
    ]
}

/// One round on `G` groups in the AES-field basis (see the module docs),
/// given `p = X_c ^ X_d` and the mapped round key `km = M1·k + c1`.
#[inline]
#[target_feature(enable = "gfni,avx2")]
fn round<const G: usize>(
    a: &mut [__m256i; G],
    b: &[__m256i; G],
    p: &[__m256i; G],
    km: u32,
    sh: &[__m256i; 4],
) {
    let km = _mm256_set1_epi32(km as i32);
    for g in 0..G {
        let y = _mm256_xor_si256(_mm256_xor_si256(p[g], b[g]), km);
        let sd = _mm256_gf2p8affineinv_epi64_epi8::<SD_C>(y, _mm256_set1_epi64x(SD));
        let se = _mm256_gf2p8affineinv_epi64_epi8::<SE_C>(y, _mm256_set1_epi64x(SE));
        let u = _mm256_xor_si256(
            _mm256_shuffle_epi8(sd, sh[1]),
            _mm256_shuffle_epi8(sd, sh[2]),
        );
        // sA = sD ^ sE: one XOR instead of a third `gf2p8affineinvqb`.
        let v = _mm256_xor_si256(_mm256_shuffle_epi8(se, sh[3]), _mm256_xor_si256(sd, se));
        a[g] = _mm256_xor_si256(a[g], _mm256_xor_si256(u, v));
    }
}

/// `b ^ c` on `G` groups.
#[inline]
#[target_feature(enable = "avx2")]
fn xor2<const G: usize>(b: &[__m256i; G], c: &[__m256i; G]) -> [__m256i; G] {
    let mut p = *b;
    for g in 0..G {
        p[g] = _mm256_xor_si256(b[g], c[g]);
    }
    p
}

/// Encrypt `G` groups of 8 blocks from `inp` to `out`.
///
/// # Safety
/// `inp` is readable and `out` writable for `8 * G` blocks; they are equal
/// or disjoint.
#[inline]
#[target_feature(enable = "gfni,avx2")]
unsafe fn groups<const G: usize>(km: &[u32; 32], inp: *const u8, out: *mut u8) {
    // SAFETY: by this function's contract.
    unsafe { groups_with::<G, false>(km, inp, out, 0, &mut |_| {}) }
}

/// Calls of `side` per [`groups_with`]: GCM then hashes 16 blocks (one
/// reduction of `vpclmul256`) every 16 rounds. Measured on Zen 5, GCM at
/// 4096 bytes (medians): 1.68 c/B with the hash after the kernel, 1.58
/// with two calls, 1.58 with four, 1.79 with eight.
pub(crate) const SIDE_CALLS: usize = 2;

/// [`groups`] with `side(1)` called [`SIDE_CALLS`] times between its
/// rounds, evenly spaced, for work independent of these blocks (GCM's
/// GHASH of other blocks) to run in the gaps of the rounds' dependency
/// chains instead of after them. With `CTR` the blocks encrypted are the
/// counter blocks `ctr, ctr + 1, ...` (128-bit big-endian), made in
/// registers, and `out` gets their keystream XORed with `inp` (no stage of
/// counters stored and loaded back, no pass of its own for the XOR).
///
/// # Safety
/// As [`groups`]; with `CTR`, the low 64 bits of `ctr` do not carry within
/// the `8 * G` blocks, and `inp` is read before `out` over it is written.
/// `side` does not touch `inp` or `out`.
#[inline]
#[target_feature(enable = "gfni,avx2")]
pub(crate) unsafe fn groups_with<const G: usize, const CTR: bool>(
    km: &[u32; 32],
    inp: *const u8,
    out: *mut u8,
    ctr: u128,
    side: &mut impl FnMut(usize),
) {
    // The words stay byte-reversed, as in `gfni::groups`: rotations by 8
    // and 24 trade places, the keys are byte-swapped, and no block's bytes
    // are swapped on the way in or out.
    let [bswap, r8, r16, r24] = shuffles();
    let sh = [bswap, r24, r16, r8];
    // SAFETY: in bounds by the caller's contract.
    let mut x = unsafe { ymm::load_groups::<G, CTR>(inp, ctr) }.map(|z| transpose(z));
    let [mut x0, mut x1, mut x2, mut x3] = [[_mm256_setzero_si256(); G]; 4];
    let m1 = _mm256_set1_epi64x(PRE);
    let m1_inv = _mm256_set1_epi64x(PRE_INV);
    for g in 0..G {
        // X = M1·x: the state in the AES-field basis.
        [x0[g], x1[g], x2[g], x3[g]] = x[g].map(|w| _mm256_gf2p8affine_epi64_epi8::<0>(w, m1));
    }
    // Rounds r and r + 1 share `X_{r+2} ^ X_{r+3}` in their S-box inputs.
    for r in (0..32).step_by(4) {
        let p = xor2(&x2, &x3);
        round(&mut x0, &x1, &p, km[r], &sh);
        round(&mut x1, &x0, &p, km[r + 1], &sh);
        let p = xor2(&x0, &x1);
        round(&mut x2, &x3, &p, km[r + 2], &sh);
        round(&mut x3, &x2, &p, km[r + 3], &sh);
        if r % (32 / SIDE_CALLS) == 32 / SIDE_CALLS - 4 {
            side(1);
        }
    }
    for g in 0..G {
        x[g] = [x0[g], x1[g], x2[g], x3[g]].map(|w| _mm256_gf2p8affine_epi64_epi8::<0>(w, m1_inv));
    }
    let z = x.map(|xg| transpose([xg[3], xg[2], xg[1], xg[0]]));
    // SAFETY: in bounds by the caller's contract.
    unsafe { ymm::store_groups::<G, CTR>(inp, out, &z) }
}

/// The 32 single-block rounds on the state `X = M1·x` in four xmm
/// registers (word `i` of each lane's block in register `i`).
#[inline]
#[target_feature(enable = "gfni,avx2")]
fn rounds_xmm(km: &[u32; 32], x: [__m128i; 4]) -> [__m128i; 4] {
    let [mut x0, mut x1, mut x2, mut x3] = x;
    let sh = shuffles();
    let (md, me) = (_mm_set1_epi64x(SD), _mm_set1_epi64x(SE));
    let rot = [3, 2, 1].map(|i| _mm256_castsi256_si128(sh[i]));
    let rot = rot.as_ptr();
    let mut y = _mm_xor_si128(
        _mm_xor_si128(x1, x2),
        _mm_xor_si128(x3, _mm_set1_epi32(km[0] as i32)),
    );
    // Round i reads the key of round i + 1 (the last round a spare).
    let k = |i: usize| km[i % 32..].as_ptr();
    for r in (0..32).step_by(4) {
        round1!(x0, y, x2, x3, k(r + 1), md, me, rot);
        round1!(x1, y, x3, x0, k(r + 2), md, me, rot);
        round1!(x2, y, x0, x1, k(r + 3), md, me, rot);
        round1!(x3, y, x1, x2, k(r + 4), md, me, rot);
    }
    [x0, x1, x2, x3]
}

/// One block, latency first: each word in its own xmm register, broadcast
/// to the four lanes.
///
/// # Safety
/// `inp` is readable and `out` writable for one block.
#[inline]
#[target_feature(enable = "gfni,avx2")]
unsafe fn one(km: &[u32; 32], inp: *const u8, out: *mut u8) {
    // SAFETY: one readable block; its words stay byte-reversed (see
    // [`groups`]).
    let v = unsafe { _mm_loadu_si128(inp.cast()) };
    let v = _mm_gf2p8affine_epi64_epi8::<0>(v, _mm_set1_epi64x(PRE));
    let x = [
        _mm_shuffle_epi32::<0x00>(v),
        _mm_shuffle_epi32::<0x55>(v),
        _mm_shuffle_epi32::<0xaa>(v),
        _mm_shuffle_epi32::<0xff>(v),
    ];
    let [x0, x1, x2, x3] = rounds_xmm(km, x);
    let lo = _mm_unpacklo_epi32(x3, x2);
    let hi = _mm_unpacklo_epi32(x1, x0);
    let v = _mm_gf2p8affine_epi64_epi8::<0>(_mm_unpacklo_epi64(lo, hi), _mm_set1_epi64x(PRE_INV));
    // SAFETY: one writable block.
    unsafe { _mm_storeu_si128(out.cast(), v) };
}

/// The bytewise map `x -> m·x`, for the lane paths.
#[inline]
#[target_feature(enable = "gfni,avx2")]
fn map_xmm(x: __m128i, m: i64) -> __m128i {
    _mm_gf2p8affine_epi64_epi8::<0>(x, _mm_set1_epi64x(m))
}

super::x86::lane_paths!("gfni,avx2");

super::x86::x86_entry_points!(
    features = "gfni,avx2",
    cpu = "GFNI and AVX2",
    group = 8,
    batch = groups::<4>,
    lanes = few
);

crate::kernel::kernel_token! {
    features = "gfni,avx2", single = crypt_block;
    // Free: the lane paths take up to four blocks at one block's latency.
    const FREE_LANES: bool = true;
    super::x86::mode_hooks!(ymm);
    super::x86::lane_hooks!();
    // The counters made in registers, the XOR in the kernel's stores, and
    // GCM's GHASH between the rounds.
    super::x86::fused_ctr_hook!();
    #[inline(always)]
    fn ctr_xor_beside(
        self,
        rk: &[u32; 32],
        c: u128,
        blocks: cipher::InOutBuf<'_, '_, crate::block::Blk>,
        extra: &mut [(u128, crate::block::Blk)],
        stage: &mut crate::kernel::LazyStage,
        side: &mut impl FnMut(usize, &[crate::block::Blk]),
    ) {
        const BATCH: usize = 32;
        const STEP: usize = crate::kernel::STAGE / crate::kernel::SIDE_STEPS;
        const _: () = assert!(crate::kernel::STAGE / BATCH * SIDE_CALLS == crate::kernel::SIDE_STEPS);
        let n = blocks.len();
        if n != crate::kernel::STAGE || extra.len() > 4 || crate::ct::counter_carries(c, n) {
            // (The low half carries once in 2^64 blocks; declassified.)
            side(crate::kernel::SIDE_STEPS, blocks.get_in());
            return self.ctr_xor(rk, c, blocks, extra, stage);
        }
        let (i, o) = blocks.into_raw();
        let (i, o) = (i.cast::<u8>(), o.cast::<u8>());
        let mut step = 0;
        // Each step's own input blocks, read before the batch that holds
        // them is written (its stores follow its last step).
        let mut own = |s: usize| {
            // SAFETY: blocks `STEP * step..` of the input, in this or a
            // later batch, not yet overwritten; the slice lives only for
            // this call.
            let input = unsafe {
                core::slice::from_raw_parts(
                    i.cast::<crate::block::Blk>().add(STEP * step),
                    STEP * s,
                )
            };
            side(s, input);
            step += s;
        };
        // SAFETY: the token exists only inside the `gfni256` runner;
        // `blocks` holds STAGE blocks in and out (equal or disjoint); the
        // low half of the counter does not carry (checked above); `side`
        // reads the blocks of its steps or the caller's other data.
        unsafe { super::x86::fused_ctr!(rk, c, i, o, crate::kernel::STAGE / BATCH, &mut own) };
        crate::kernel::crypt_extras(self, rk, extra);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vector S-box equals the SM4 S-box table on all 256 inputs.
    #[test]
    fn vector_sbox_matches_table() {
        if !crate::Backend::Gfni256.is_available() {
            return;
        }
        let mut input = [0u8; 256];
        for (i, b) in input.iter_mut().enumerate() {
            *b = i as u8;
        }
        let mut out = [0u8; 256];
        for (i, o) in input.chunks_exact(32).zip(out.chunks_exact_mut(32)) {
            // SAFETY: the CPU features are checked above; 32-byte buffers.
            unsafe {
                let v = sbox256(_mm256_loadu_si256(i.as_ptr().cast()));
                _mm256_storeu_si256(o.as_mut_ptr().cast(), v);
            }
        }
        assert_eq!(out, crate::backends::soft::tests::SBOX);
    }

    /// The GFNI key schedule equals the portable one.
    #[test]
    fn key_schedule_matches_soft() {
        if !crate::Backend::Gfni256.is_available() {
            return;
        }
        // SAFETY: GFNI and AVX2 checked above.
        crate::backends::soft::tests::check_key_schedule(|k| unsafe { schedule(k) });
    }
}
