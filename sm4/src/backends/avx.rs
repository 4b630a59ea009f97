//! x86_64 AES-NI + AVX2 kernel, for CPUs without GFNI or VAES (Haswell to
//! Skylake, Zen 1-2); its rounds also serve the `vaes` kernel (Zen 3,
//! `vaes.rs`), whose 8-block groups take one `VAESENCLAST` per round
//! instead of two `AESENCLAST`s (the `VAES` const parameter).
//!
//! Same layout and state representation as `gfni256.rs`: four words of 8
//! blocks per group in four ymm registers, kept in the AES-field basis
//! `X = M1·x` (`M1` the linear part of the S-box's first affine map, mapped
//! in and out by nibble tables once per call), so that the AES S-box input
//! is `X_b ^ X_c ^ X_d ^ (M1·k + c1)` with no input map. The words are
//! also kept with an inverse-ShiftRows byte shuffle applied (each 32-bit
//! column holds a word of a different block), so that `AESENCLAST` with a
//! zero round key (= AES SubBytes = `A_aes·inv(y) + 0x63`, after
//! ShiftRows) on each 128-bit half gives the S-box outputs in plain order
//! without a shuffle on the round's chain; then two nibble-table
//! pairs (one shared nibble split) straight to `sD`, `sE` with
//! `M1·L(s) = sA ^ rol8(sD) ^ rol16(sD) ^ rol24(sE)` and `sA = sD ^ sE`,
//! the rotations by `vpshufb` (one XOR instead of a third table pair:
//! `vpshufb` and shifts share two pipes on Zen 4, and the single-block
//! path, latency-bound, also gains from the freed shuffle port on Golden
//! Cove); the shuffles that rotate also re-apply the inverse ShiftRows.
//! The maps are derived and checked by `tools/derive_sbox.py`.
//! Four groups (32 blocks) are interleaved (AVX2 has only 16 registers, so
//! some state lives on the stack; still faster than two groups, 3.3 vs 4.7
//! c/B on Zen 4 with the earlier plain-basis round; the AES-field basis
//! saves about 6 of 30 operations per round: ECB 3.25 -> 2.9 c/B).
//!
//! The single-block path (CBC/CFB encryption, CMAC) uses the same basis and
//! maps with every word broadcast to the four columns, where ShiftRows
//! changes nothing and needs no fix-up.
//!
//! Uses the block type, the key schedule, the x86 primitives
//! (`crate::simd::x86`), the contract and what the x86 kernels share
//! (`backends::x86`); its `impl Kernel` is the `kernel_token!` in the
//! `avx_kernel!` expansion near the end.

use crate::block::Blk;
use crate::kernel::{LazyStage, cbc_stages, cfb_stages};
use crate::simd::x86::ymm;
use core::arch::x86_64::*;

use cipher::{InOut, InOutBuf, consts::U32};

/// Blocks per batch: four interleaved 8-block groups.
pub(crate) type ParBlocks = U32;

/// Nibble tables of the input map (constant folded into the low table).
const PRE_LO: [i8; 16] = nib([
    0x3e, 0xb2, 0x0e, 0x82, 0xbb, 0x37, 0x8b, 0x07, 0xa1, 0x2d, 0x91, 0x1d, 0x24, 0xa8, 0x14, 0x98,
]);
const PRE_HI: [i8; 16] = nib([
    0x00, 0xdc, 0x2e, 0xf2, 0xc5, 0x19, 0xeb, 0x37, 0x08, 0xd4, 0x26, 0xfa, 0xcd, 0x11, 0xe3, 0x3f,
]);
/// Nibble tables of the output map, applied to the SubBytes result (the
/// plain S-box: the key schedule's).
const POST_LO: [i8; 16] = nib([
    0x6c, 0xd4, 0xa6, 0x1e, 0x52, 0xea, 0x98, 0x20, 0x0b, 0xb3, 0xc1, 0x79, 0x35, 0x8d, 0xff, 0x47,
]);
const POST_HI: [i8; 16] = nib([
    0x00, 0xe0, 0x50, 0xb0, 0x9d, 0x7d, 0xcd, 0x2d, 0xc0, 0x20, 0x90, 0x70, 0x5d, 0xbd, 0x0d, 0xed,
]);
/// Single-block path (state kept as `X = M1·x`, `M1` the linear part of the
/// input map): nibble tables from `z = SubBytes(y)` straight to
/// `sA = M1·(s ^ (s << 2))`, `sD = M1·((s << 2) ^ (s >> 6))` and
/// `sE = M1·(s ^ (s >> 6))` (bytewise shifts of the S-box output `s`), so
/// that `M1·L(s) = sA ^ rol8(sD) ^ rol16(sD) ^ rol24(sE)`; and `M1`, `M1^-1`
/// themselves. From `tools/derive_sbox.py`, which checks the identity.
/// `sA = sD ^ sE` (the shifted terms cancel; the constants too,
/// `0x72 = 0x63 ^ 0x11`), which both paths use instead of the `SA` tables;
/// the unit test checks it.
#[cfg(test)]
const SA_LO: [i8; 16] = nib([
    0x0b, 0x8d, 0xd8, 0x5e, 0x73, 0xf5, 0xa0, 0x26, 0x17, 0x91, 0xc4, 0x42, 0x6f, 0xe9, 0xbc, 0x3a,
]);
#[cfg(test)]
const SA_HI: [i8; 16] = nib([
    0x00, 0xeb, 0xdc, 0x37, 0xf0, 0x1b, 0x2c, 0xc7, 0xcd, 0x26, 0x11, 0xfa, 0x3d, 0xd6, 0xe1, 0x0a,
]);
const SD_LO: [i8; 16] = nib([
    0x76, 0xa5, 0x7b, 0xa8, 0xd6, 0x05, 0xdb, 0x08, 0x34, 0xe7, 0x39, 0xea, 0x94, 0x47, 0x99, 0x4a,
]);
const SD_HI: [i8; 16] = nib([
    0x00, 0xb4, 0x49, 0xfd, 0x82, 0x36, 0xcb, 0x7f, 0xbc, 0x08, 0xf5, 0x41, 0x3e, 0x8a, 0x77, 0xc3,
]);
const SE_LO: [i8; 16] = nib([
    0x7d, 0x28, 0xa3, 0xf6, 0xa5, 0xf0, 0x7b, 0x2e, 0x23, 0x76, 0xfd, 0xa8, 0xfb, 0xae, 0x25, 0x70,
]);
const SE_HI: [i8; 16] = nib([
    0x00, 0x5f, 0x95, 0xca, 0x72, 0x2d, 0xe7, 0xb8, 0x71, 0x2e, 0xe4, 0xbb, 0x03, 0x5c, 0x96, 0xc9,
]);
const M1_LO: [i8; 16] = nib([
    0x00, 0x8c, 0x30, 0xbc, 0x85, 0x09, 0xb5, 0x39, 0x9f, 0x13, 0xaf, 0x23, 0x1a, 0x96, 0x2a, 0xa6,
]);
const M1_HI: [i8; 16] = nib([
    0x00, 0xdc, 0x2e, 0xf2, 0xc5, 0x19, 0xeb, 0x37, 0x08, 0xd4, 0x26, 0xfa, 0xcd, 0x11, 0xe3, 0x3f,
]);
const M1_INV_LO: [i8; 16] = nib([
    0x00, 0x85, 0xd9, 0x5c, 0x2e, 0xab, 0xf7, 0x72, 0x80, 0x05, 0x59, 0xdc, 0xae, 0x2b, 0x77, 0xf2,
]);
const M1_INV_HI: [i8; 16] = nib([
    0x00, 0x55, 0x57, 0x02, 0x44, 0x11, 0x13, 0x46, 0xaf, 0xfa, 0xf8, 0xad, 0xeb, 0xbe, 0xbc, 0xe9,
]);

/// `pshufb` index that undoes AESENCLAST's ShiftRows in advance.
const INV_SHIFT_ROWS: [i8; 16] = [0, 13, 10, 7, 4, 1, 14, 11, 8, 5, 2, 15, 12, 9, 6, 3];
/// Its inverse: AES ShiftRows itself as a `pshufb` index.
const SHIFT_ROWS: [i8; 16] = invert(INV_SHIFT_ROWS);

/// The `pshufb` index that undoes the shuffle by `p`.
const fn invert(p: [i8; 16]) -> [i8; 16] {
    let mut o = [0i8; 16];
    let mut i = 0;
    while i < 16 {
        o[p[i] as usize] = i as i8;
        i += 1;
    }
    o
}

/// `pshufb` index of `pshufb(pshufb(x, first), then)`.
const fn compose(first: [i8; 16], then: [i8; 16]) -> [i8; 16] {
    let mut o = [0i8; 16];
    let mut i = 0;
    while i < 16 {
        o[i] = first[then[i] as usize];
        i += 1;
    }
    o
}

const fn nib(t: [u8; 16]) -> [i8; 16] {
    let mut o = [0i8; 16];
    let mut i = 0;
    while i < 16 {
        o[i] = t[i] as i8;
        i += 1;
    }
    o
}

/// A 16-byte table in both lanes of a ymm register.
#[inline]
#[target_feature(enable = "avx2")]
fn table(t: &[i8; 16]) -> __m256i {
    _mm256_setr_epi8(
        t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10], t[11], t[12], t[13],
        t[14], t[15], t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10], t[11],
        t[12], t[13], t[14], t[15],
    )
}

/// `T_lo[x & 15] ^ T_hi[x >> 4]` on every byte.
#[inline]
#[target_feature(enable = "avx2")]
fn nibble_map(x: __m256i, lo: __m256i, hi: __m256i) -> __m256i {
    let m = _mm256_set1_epi8(0x0f);
    let l = _mm256_and_si256(x, m);
    let h = _mm256_and_si256(_mm256_srli_epi32::<4>(x), m);
    _mm256_xor_si256(_mm256_shuffle_epi8(lo, l), _mm256_shuffle_epi8(hi, h))
}

/// `pshufb` indexes that rotate each 32-bit word left by 8, 16 and 24 when
/// the words are kept byte-reversed, as x86 loads them (lane rotations by
/// 24, 16 and 8). Every other map of the round is bytewise, so no block's
/// bytes are swapped on the way in or out; the round keys are stored
/// byte-reversed ([`expand_key`]).
const ROT: [[i8; 16]; 3] = [
    [1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12],
    [2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13],
    [3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14],
];

/// A shuffle index in both lanes, hidden from LLVM, which would otherwise
/// turn the rotation by 16 into a `vpshuflw` + `vpshufhw` pair (two
/// shuffle-port operations instead of one) and merge other shuffles.
#[inline]
#[target_feature(enable = "avx2")]
fn shuffle_index(t: &[i8; 16]) -> __m256i {
    let mut x = table(t);
    // SAFETY: an empty asm block that only claims to modify a register.
    unsafe { core::arch::asm!("/* {0} */", inout(ymm_reg) x, options(pure, nomem, nostack)) };
    x
}

/// The word rotations [`ROT`] (single-block path).
#[inline]
#[target_feature(enable = "avx2")]
fn rotations() -> [__m256i; 3] {
    // Not `map`: its closure has no target features, so `shuffle_index`
    // would stay a call.
    [
        shuffle_index(&ROT[0]),
        shuffle_index(&ROT[1]),
        shuffle_index(&ROT[2]),
    ]
}

/// The word rotations [`ROT`] each followed by [`INV_SHIFT_ROWS`], and that
/// shuffle alone: the output side of a round whose state is kept with
/// `INV_SHIFT_ROWS` applied (see [`round`]).
#[inline]
#[target_feature(enable = "avx2")]
fn rotations_unshifted() -> [__m256i; 4] {
    const M: [[i8; 16]; 4] = [
        compose(ROT[0], INV_SHIFT_ROWS),
        compose(ROT[1], INV_SHIFT_ROWS),
        compose(ROT[2], INV_SHIFT_ROWS),
        INV_SHIFT_ROWS,
    ];
    [
        shuffle_index(&M[0]),
        shuffle_index(&M[1]),
        shuffle_index(&M[2]),
        shuffle_index(&M[3]),
    ]
}

#[cfg(test)]
#[inline]
#[target_feature(enable = "avx2,aes")]
fn sbox256(x: __m256i) -> __m256i {
    let y = nibble_map(x, table(&PRE_LO), table(&PRE_HI));
    let y = _mm256_shuffle_epi8(y, table(&INV_SHIFT_ROWS));
    let zero = _mm_setzero_si128();
    let lo = _mm_aesenclast_si128(_mm256_castsi256_si128(y), zero);
    let hi = _mm_aesenclast_si128(_mm256_extracti128_si256::<1>(y), zero);
    let z = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi);
    nibble_map(z, table(&POST_LO), table(&POST_HI))
}

/// `T_lo[x & 15] ^ T_hi[x >> 4]` on every byte of an xmm register.
#[inline]
#[target_feature(enable = "avx2")]
fn nibble_map128(x: __m128i, lo: &[i8; 16], hi: &[i8; 16]) -> __m128i {
    let t = |t: &[i8; 16]| _mm256_castsi256_si128(table(t));
    let m = _mm_set1_epi8(0x0f);
    let l = _mm_and_si128(x, m);
    let h = _mm_and_si128(_mm_srli_epi32::<4>(x), m);
    _mm_xor_si128(_mm_shuffle_epi8(t(lo), l), _mm_shuffle_epi8(t(hi), h))
}

/// The S-box on the four bytes of `x`: the word is broadcast to all four
/// columns, so that AESENCLAST's ShiftRows moves nothing.
#[inline]
#[target_feature(enable = "avx2,aes")]
fn sbox_word(x: u32) -> u32 {
    let y = nibble_map128(_mm_set1_epi32(x as i32), &PRE_LO, &PRE_HI);
    let z = _mm_aesenclast_si128(y, _mm_setzero_si128());
    _mm_cvtsi128_si32(nibble_map128(z, &POST_LO, &POST_HI)) as u32
}

/// The key schedule with the S-box through AESENCLAST.
///
/// # Safety
/// The CPU supports AVX2 and AES-NI.
#[target_feature(enable = "avx2,aes")]
pub(crate) unsafe fn expand_key(key: &[u8; 16]) -> [u32; 32] {
    // SAFETY: AVX2 and AES-NI, per this function's contract.
    map_keys(&unsafe { schedule(key) }).map(u32::swap_bytes)
}

/// The round keys as the portable code defines them, with the S-box
/// through AESENCLAST. [`expand_key`] stores them mapped to the AES-field
/// basis and byte-reversed, the form the rounds use (so a one-block call
/// does not map 32 keys first).
///
/// # Safety
/// The CPU supports AVX2 and AES-NI.
#[target_feature(enable = "avx2,aes")]
unsafe fn schedule(key: &[u8; 16]) -> [u32; 32] {
    // The closure inherits this function's target features.
    crate::schedule::expand_key_with(key, |x| sbox_word(x))
}

/// One single-block round on the state kept as `X = M1·x`. `y = M1·t + c1`
/// is this round's input to the AES S-box, `km = M1·k' + c1` the next round
/// key mapped the same way. Every register holds one word
/// broadcast to its four columns, so AESENCLAST's ShiftRows changes nothing
/// and needs no fix-up. Returns `X_a ^ M1·L(s)` and the next `y`
/// (`= that ^ X_c ^ X_d ^ (M1·k' + c1)`).
#[inline]
#[target_feature(enable = "avx2,aes")]
fn round1(
    a: __m128i,
    y: __m128i,
    c: __m128i,
    d: __m128i,
    km: u32,
    sh: &[__m256i; 3],
) -> (__m128i, __m128i) {
    let km = _mm_set1_epi32(km as i32);
    // `X_c ^ X_d ^ k'` serves both outputs: `y' = X_a ^ M1·L(s) ^ cdk` and
    // the new `X_a = y' ^ cdk` (one XOR after `y'`, off the critical path).
    let cdk = opaque(_mm_xor_si128(c, _mm_xor_si128(d, km)));
    let zz = _mm_xor_si128(a, cdk);
    let z = _mm_aesenclast_si128(y, _mm_setzero_si128());
    // sD and sE feed the rotations on the critical path. sA = sD ^ sE, one
    // XOR where a third table pair took two shuffles, an XOR and the
    // shuffle port the rotations wait for: 598-610 -> 556-561 cycles per
    // block on a Golden Cove Xeon, although the XOR adds a step to the
    // dependency path.
    let sd = nibble_map128(z, &SD_LO, &SD_HI);
    let se = nibble_map128(z, &SE_LO, &SE_HI);
    let sa = _mm_xor_si128(sd, se);
    let r = |x: __m128i, i: usize| _mm_shuffle_epi8(x, opaque(_mm256_castsi256_si128(sh[i])));
    // Balanced XOR trees, pinned so that LLVM does not reassociate them
    // into one long chain on the critical path.
    let p = opaque(_mm_xor_si128(r(sd, 0), r(sd, 1)));
    let e = r(se, 2);
    let q = opaque(_mm_xor_si128(e, opaque(_mm_xor_si128(sa, zz))));
    let y = _mm_xor_si128(p, q);
    (_mm_xor_si128(y, cdk), y)
}

/// Hide a value from LLVM's reassociation and shuffle combining.
#[inline]
#[target_feature(enable = "avx2")]
fn opaque(mut x: __m128i) -> __m128i {
    // SAFETY: an empty asm block that only claims to modify a register.
    unsafe { core::arch::asm!("/* {0} */", inout(xmm_reg) x, options(pure, nomem, nostack)) };
    x
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

/// One round on `G` groups in the AES-field basis `X = M1·x` (as on the
/// single-block path): `y = p ^ X_b ^ (M1·k + c1)` with `p = X_c ^ X_d`,
/// the inverse-ShiftRows shuffle (each 32-bit column is a word of a
/// different block), `AESENCLAST` with a zero key on each half, three
/// nibble-table pairs (sharing the nibble split) to `sA`, `sD`, `sE`, and
/// `X_a ^= sA ^ rol8(sD) ^ rol16(sD) ^ rol24(sE)`.
#[inline]
#[target_feature(enable = "avx2,aes")]
fn round<const VAES: bool, const G: usize>(
    a: &mut [__m256i; G],
    b: &[__m256i; G],
    p: &[__m256i; G],
    km: u32,
    sh: &[__m256i; 4],
) {
    let km = _mm256_set1_epi32(km as i32);
    let m = _mm256_set1_epi8(0x0f);
    let zero = _mm_setzero_si128();
    for g in 0..G {
        // The state is kept with `INV_SHIFT_ROWS` applied (a broadcast
        // round key is unchanged by it), so AESENCLAST's ShiftRows puts
        // the S-box output in plain order with no shuffle on the way in.
        let y = _mm256_xor_si256(_mm256_xor_si256(p[g], km), b[g]);
        let z = if VAES {
            aesenclast_zero_vaes(y)
        } else {
            let lo = _mm_aesenclast_si128(_mm256_castsi256_si128(y), zero);
            let hi = _mm_aesenclast_si128(_mm256_extracti128_si256::<1>(y), zero);
            _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi)
        };
        let l = _mm256_and_si256(z, m);
        let h = _mm256_and_si256(_mm256_srli_epi32::<4>(z), m);
        let look = |tl: &[i8; 16], th: &[i8; 16]| {
            _mm256_xor_si256(
                _mm256_shuffle_epi8(table(tl), l),
                _mm256_shuffle_epi8(table(th), h),
            )
        };
        let sd = look(&SD_LO, &SD_HI);
        let se = look(&SE_LO, &SE_HI);
        // The rotations, each with `INV_SHIFT_ROWS` folded in, and
        // sA = sD ^ sE (see `SA_LO`) through that shuffle alone.
        let u = _mm256_xor_si256(
            _mm256_shuffle_epi8(sd, sh[0]),
            _mm256_shuffle_epi8(sd, sh[1]),
        );
        let v = _mm256_xor_si256(
            _mm256_shuffle_epi8(se, sh[2]),
            _mm256_shuffle_epi8(_mm256_xor_si256(sd, se), sh[3]),
        );
        a[g] = _mm256_xor_si256(a[g], _mm256_xor_si256(u, v));
    }
}

/// `AESENCLAST` with a zero round key on both 128-bit halves of `y` in one
/// `VAESENCLAST` (the `vaes` kernel), where `avx` extracts the high half,
/// runs two `xmm` instructions and inserts the result: -15% to -17% cycles
/// for 8 and 16 blocks on Zen 4 (`NOTES.md`). Written in `asm!` because the
/// rounds are shared with `avx` and so compiled without the `vaes` feature.
#[inline]
#[target_feature(enable = "avx2")]
fn aesenclast_zero_vaes(y: __m256i) -> __m256i {
    let mut z = y;
    // SAFETY: register operands only. Reached only through `VAES = true`,
    // which only the `vaes` kernel passes, whose runners are entered after
    // `Backend::is_available` found the VAES bit (and AVX2, AES-NI).
    unsafe {
        core::arch::asm!(
            "vaesenclast {z}, {z}, {k}",
            z = inout(ymm_reg) z,
            k = in(ymm_reg) _mm256_setzero_si256(),
            options(pure, nomem, nostack, preserves_flags),
        )
    };
    z
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

/// All 32 round keys in the AES-field basis, `M1·k + c1` (bytewise).
#[inline]
#[target_feature(enable = "avx2")]
fn map_keys(rk: &[u32; 32]) -> [u32; 32] {
    let mut km = [0u32; 32];
    let (lo, hi) = (table(&PRE_LO), table(&PRE_HI));
    for h in 0..4 {
        // SAFETY: `rk` and `km` hold 32 words; words 8h..8h+8 are in bounds.
        unsafe {
            let v = _mm256_loadu_si256(rk.as_ptr().add(8 * h).cast());
            let v = nibble_map(v, lo, hi);
            _mm256_storeu_si256(km.as_mut_ptr().add(8 * h).cast(), v);
        }
    }
    km
}

/// Encrypt `G` groups of 8 blocks from `inp` to `out`, with `km` a
/// schedule from [`expand_key`] (in the AES-field basis), or with `CTR`
/// counter blocks made in registers, as `gfni256::groups_with` (`side` is
/// called there too, but no driver gives this kernel work of its own: its
/// rounds leave no gaps). `VAES`: the `vaes` kernel's S-box step.
///
/// # Safety
/// As `gfni256::groups_with`; with `VAES`, the CPU has VAES.
#[inline]
#[target_feature(enable = "avx2,aes")]
pub(super) unsafe fn run_groups<const VAES: bool, const G: usize, const CTR: bool>(
    km: &[u32; 32],
    inp: *const u8,
    out: *mut u8,
    ctr: u128,
    side: &mut impl FnMut(usize),
) {
    // SAFETY: in bounds by the caller's contract.
    let z = unsafe { ymm::load_groups::<G, CTR>(inp, ctr) };
    let z = crypt_groups::<VAES, G>(km, z, side);
    // SAFETY: in bounds by the caller's contract.
    unsafe { ymm::store_groups::<G, CTR>(inp, out, &z) }
}

/// The 32 rounds on `G` groups of eight blocks given as four registers of
/// two blocks each (`z[g][i]` = blocks `8g + 2i`, `8g + 2i + 1`), returned
/// in the same form: transposed to words, mapped to the AES-field basis,
/// the rounds (with `side` after rounds 16 and 32), mapped back and
/// transposed back.
#[inline]
#[target_feature(enable = "avx2,aes")]
fn crypt_groups<const VAES: bool, const G: usize>(
    km: &[u32; 32],
    z: [[__m256i; 4]; G],
    side: &mut impl FnMut(usize),
) -> [[__m256i; 4]; G] {
    let sh = rotations_unshifted();
    let mut x = z.map(|zg| transpose(zg));
    let [mut x0, mut x1, mut x2, mut x3] = [[_mm256_setzero_si256(); G]; 4];
    let (m1_lo, m1_hi) = (table(&M1_LO), table(&M1_HI));
    let unshift = table(&INV_SHIFT_ROWS);
    for g in 0..G {
        // X = M1·x: the state in the AES-field basis, with `INV_SHIFT_ROWS`
        // applied (see `round`).
        [x0[g], x1[g], x2[g], x3[g]] =
            x[g].map(|w| _mm256_shuffle_epi8(nibble_map(w, m1_lo, m1_hi), unshift));
    }
    // Rounds r and r + 1 share `X_{r+2} ^ X_{r+3}` in their S-box inputs.
    for r in (0..32).step_by(4) {
        let p = xor2(&x2, &x3);
        round::<VAES, G>(&mut x0, &x1, &p, km[r], &sh);
        round::<VAES, G>(&mut x1, &x0, &p, km[r + 1], &sh);
        let p = xor2(&x0, &x1);
        round::<VAES, G>(&mut x2, &x3, &p, km[r + 2], &sh);
        round::<VAES, G>(&mut x3, &x2, &p, km[r + 3], &sh);
        if r % 16 == 12 {
            side(1);
        }
    }
    let (inv_lo, inv_hi) = (table(&M1_INV_LO), table(&M1_INV_HI));
    let shift = table(&SHIFT_ROWS);
    for g in 0..G {
        x[g] = [x0[g], x1[g], x2[g], x3[g]]
            .map(|w| nibble_map(_mm256_shuffle_epi8(w, shift), inv_lo, inv_hi));
    }
    x.map(|xg| transpose([xg[3], xg[2], xg[1], xg[0]]))
}

/// CBC decryption (`CFB = false`, `km` the decryption schedule:
/// `out_j = D(in_j) ^ in_(j-1)`) or CFB decryption (`CFB = true`, the
/// encryption schedule: `out_j = in_j ^ E(in_(j-1))`) of `8 * G` blocks,
/// `in_(-1) = prev`, with the chaining XORs in the kernel's loads and
/// stores: no stage, copy or separate XOR pass. Every block the rounds
/// read is loaded before the first store; CBC's stores run from the last
/// pair of blocks to the first, so that the ciphertext block each XOR
/// reads is not yet overwritten when `inp == out`. `VAES`: as in
/// [`run_groups`].
///
/// # Safety
/// `inp` is readable and `out` writable for `8 * G` blocks; they are equal
/// or disjoint; with `VAES`, the CPU has VAES.
#[inline]
#[target_feature(enable = "avx2,aes")]
pub(crate) unsafe fn groups_chained<const VAES: bool, const G: usize, const CFB: bool>(
    km: &[u32; 32],
    inp: *const u8,
    out: *mut u8,
    prev: &Blk,
) {
    // SAFETY: 16 readable bytes each (`prev`, block 0).
    let (p, b0) = unsafe {
        (
            _mm_loadu_si128(prev.as_ptr().cast()),
            _mm_loadu_si128(inp.cast()),
        )
    };
    // Blocks `2i - 1` and `2i`: the ciphertext pair that pair `i`'s output
    // XORs (CBC) or encrypts (CFB).
    let shifted = |off: usize| {
        if off == 0 {
            _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(p), b0)
        } else {
            // SAFETY: blocks 2i - 1 and 2i are within the `8 * G`.
            unsafe { _mm256_loadu_si256(inp.add(off - 16).cast()) }
        }
    };
    let mut z = [[_mm256_setzero_si256(); 4]; G];
    for (g, zg) in z.iter_mut().enumerate() {
        for (i, zi) in zg.iter_mut().enumerate() {
            let off = 128 * g + 32 * i;
            *zi = if CFB {
                shifted(off)
            } else {
                // SAFETY: in bounds by the caller's contract.
                unsafe { _mm256_loadu_si256(inp.add(off).cast()) }
            };
        }
    }
    let z = crypt_groups::<VAES, G>(km, z, &mut |_| {});
    for g in (0..G).rev() {
        for i in (0..4).rev() {
            let off = 128 * g + 32 * i;
            let x = if CFB {
                // SAFETY: in bounds; this pair is not yet stored.
                unsafe { _mm256_loadu_si256(inp.add(off).cast()) }
            } else {
                // Not yet overwritten: the stores run downwards.
                shifted(off)
            };
            // SAFETY: in bounds by the caller's contract.
            unsafe { _mm256_storeu_si256(out.add(off).cast(), _mm256_xor_si256(z[g][i], x)) };
        }
    }
}

/// One block, latency first: each word in its own xmm register; `km` as
/// in [`groups`].
///
/// # Safety
/// `inp` is readable and `out` writable for one block.
#[inline]
#[target_feature(enable = "avx2,aes")]
pub(super) unsafe fn one(km: &[u32; 32], inp: *const u8, out: *mut u8) {
    let sh = rotations();
    // SAFETY: one readable block.
    let v = unsafe { _mm_loadu_si128(inp.cast()) };
    let v = nibble_map128(v, &M1_LO, &M1_HI);
    let (mut x0, mut x1, mut x2, mut x3) = (
        _mm_shuffle_epi32::<0x00>(v),
        _mm_shuffle_epi32::<0x55>(v),
        _mm_shuffle_epi32::<0xaa>(v),
        _mm_shuffle_epi32::<0xff>(v),
    );
    // The round keys come mapped to the AES-field basis and byte-reversed
    // (`expand_key`).
    let k0 = _mm_set1_epi32(km[0] as i32);
    let mut y = _mm_xor_si128(_mm_xor_si128(x1, x2), _mm_xor_si128(x3, k0));
    for r in (0..32).step_by(4) {
        (x0, y) = round1(x0, y, x2, x3, km[r + 1], &sh);
        (x1, y) = round1(x1, y, x3, x0, km[(r + 2) % 32], &sh);
        (x2, y) = round1(x2, y, x0, x1, km[(r + 3) % 32], &sh);
        (x3, y) = round1(x3, y, x1, x2, km[(r + 4) % 32], &sh);
    }
    let lo = _mm_unpacklo_epi32(x3, x2);
    let hi = _mm_unpacklo_epi32(x1, x0);
    let v = nibble_map128(_mm_unpacklo_epi64(lo, hi), &M1_INV_LO, &M1_INV_HI);
    // SAFETY: one writable block.
    unsafe { _mm_storeu_si128(out.cast(), v) };
}

/// The 32 rounds on up to four blocks in the lanes of four xmm registers
/// (word `i` of each lane's block in register `i`, state `X = M1·x`): the
/// round of [`groups`] on one 128-bit lane, one `AESENCLAST` per round and
/// no lane crossing. Two to four blocks take one group of eight half the
/// work (on CPUs whose 256-bit operations are two 128-bit halves, like
/// Zen 2, all of it).
#[inline]
#[target_feature(enable = "avx2,aes")]
pub(super) fn rounds_xmm(km: &[u32; 32], x: [__m128i; 4]) -> [__m128i; 4] {
    let sh = rotations_unshifted().map(|v| _mm256_castsi256_si128(v));
    let t = |t: &[i8; 16]| _mm256_castsi256_si128(table(t));
    let (sd_lo, sd_hi, se_lo, se_hi) = (t(&SD_LO), t(&SD_HI), t(&SE_LO), t(&SE_HI));
    let (unshift, shift) = (t(&INV_SHIFT_ROWS), t(&SHIFT_ROWS));
    // The state with `INV_SHIFT_ROWS` applied, as in [`round`].
    let [mut x0, mut x1, mut x2, mut x3] = x.map(|w| _mm_shuffle_epi8(w, unshift));
    let m = _mm_set1_epi8(0x0f);
    // `a ^ T(b ^ pk)`, `pk` the other two words and the round key, ready
    // before `b` (the previous round's output) is.
    let round = |a: __m128i, b: __m128i, pk: __m128i| {
        let z = _mm_aesenclast_si128(_mm_xor_si128(b, pk), _mm_setzero_si128());
        let l = _mm_and_si128(z, m);
        let h = _mm_and_si128(_mm_srli_epi32::<4>(z), m);
        let sd = _mm_xor_si128(_mm_shuffle_epi8(sd_lo, l), _mm_shuffle_epi8(sd_hi, h));
        let se = _mm_xor_si128(_mm_shuffle_epi8(se_lo, l), _mm_shuffle_epi8(se_hi, h));
        let u = _mm_xor_si128(_mm_shuffle_epi8(sd, sh[0]), _mm_shuffle_epi8(sd, sh[1]));
        // sA = sD ^ sE (see `SA_LO`) through `INV_SHIFT_ROWS` alone.
        let v = _mm_xor_si128(_mm_shuffle_epi8(se, sh[2]), a);
        let w = _mm_shuffle_epi8(_mm_xor_si128(sd, se), sh[3]);
        _mm_xor_si128(_mm_xor_si128(u, v), w)
    };
    let k = |r: usize| _mm_set1_epi32(km[r] as i32);
    for r in (0..32).step_by(4) {
        let p = _mm_xor_si128(x2, x3);
        x0 = round(x0, x1, _mm_xor_si128(p, k(r)));
        x1 = round(x1, x0, _mm_xor_si128(p, k(r + 1)));
        let p = _mm_xor_si128(x0, x1);
        x2 = round(x2, x3, _mm_xor_si128(p, k(r + 2)));
        x3 = round(x3, x2, _mm_xor_si128(p, k(r + 3)));
    }
    [x0, x1, x2, x3].map(|w| _mm_shuffle_epi8(w, shift))
}

/// The bytewise map `x -> T_lo[x & 15] ^ T_hi[x >> 4]`, for the lane paths.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn map_xmm(x: __m128i, (lo, hi): (&[i8; 16], &[i8; 16])) -> __m128i {
    nibble_map128(x, lo, hi)
}

/// `M1` and its inverse as nibble-table pairs (see [`map_xmm`]).
pub(super) const PRE: (&[i8; 16], &[i8; 16]) = (&M1_LO, &M1_HI);
pub(super) const PRE_INV: (&[i8; 16], &[i8; 16]) = (&M1_INV_LO, &M1_INV_HI);

/// The entry points, lane path and `impl Kernel` of a kernel over this
/// module's rounds: `avx` (`vaes = false`) and `vaes` (`vaes = true`, the
/// groups' S-box step in one `VAESENCLAST`). Expanded in the kernel's own
/// module, which imports what the expansion names (see `vaes.rs`).
macro_rules! avx_kernel {
    (vaes = $vaes:literal, features = $features:literal, cpu = $cpu:literal) => {
        /// Encrypt `G` groups of 8 blocks in place or from `inp` to `out`
        /// (the entry points' batches).
        ///
        /// # Safety
        #[doc = concat!("The CPU supports ", $cpu, ";")]
        /// `inp` is readable and `out` writable for `8 * G` blocks, equal
        /// or disjoint.
        #[inline]
        #[target_feature(enable = $features)]
        unsafe fn groups<const G: usize>(km: &[u32; 32], inp: *const u8, out: *mut u8) {
            // SAFETY: by this function's contract.
            unsafe { run_groups::<$vaes, G, false>(km, inp, out, 0, &mut |_| {}) }
        }

        /// [`run_groups`] of this kernel (the name `fused_ctr!` calls).
        ///
        /// # Safety
        /// As [`run_groups`].
        #[inline]
        #[target_feature(enable = $features)]
        unsafe fn groups_with<const G: usize, const CTR: bool>(
            km: &[u32; 32],
            inp: *const u8,
            out: *mut u8,
            ctr: u128,
            side: &mut impl FnMut(usize),
        ) {
            // SAFETY: by this function's contract.
            unsafe { run_groups::<$vaes, G, CTR>(km, inp, out, ctr, side) }
        }

        super::x86::few_lanes!($features);

        super::x86::x86_entry_points!(
            features = $features,
            cpu = $cpu,
            group = 8,
            batch = groups::<4>,
            lanes = few
        );

        crate::kernel::kernel_token! {
            features = $features, single = crypt_block;
            // Not free: the eight-block group (its single block broadcasts).
            const FREE_LANES: bool = false;
            super::x86::mode_hooks!(ymm);
            // The counters made in registers, the XOR in the kernel's stores.
            super::x86::fused_ctr_hook!();
            // The chaining XORs in the kernel's loads and stores.
            #[inline(always)]
            fn cbc_decrypt(
                self,
                rk: &[u32; 32],
                iv: &mut Blk,
                blocks: InOutBuf<'_, '_, Blk>,
                stage: &mut LazyStage,
            ) {
                // SAFETY: the token exists only inside its runner, entered
                // after the CPU was found to have the features.
                let rest = unsafe { chained_groups::<$vaes, false>(rk, iv, blocks) };
                if !rest.is_empty() {
                    cbc_stages(self, rk, iv, rest, stage);
                }
            }
            #[inline(always)]
            fn cfb_decrypt(
                self,
                rk: &[u32; 32],
                iv: &mut Blk,
                blocks: InOutBuf<'_, '_, Blk>,
                tail: Option<&mut Blk>,
                stage: &mut LazyStage,
            ) {
                // SAFETY: as in `cbc_decrypt`.
                let rest = unsafe { chained_groups::<$vaes, true>(rk, iv, blocks) };
                if !rest.is_empty() || tail.is_some() {
                    cfb_stages(self, rk, iv, rest, tail, stage);
                }
            }
        }
    };
}
pub(super) use avx_kernel;

avx_kernel!(vaes = false, features = "avx2,aes", cpu = "AVX2 and AES-NI");

/// CBC (`CFB = false`) or CFB (`CFB = true`) decryption through
/// [`groups_chained`], four groups of eight at a time, `iv` updated, of the
/// front blocks that [`direct_blocks`](super::x86::direct_blocks) gives
/// (the caller's stage runs the rest); returns the blocks after them.
///
/// # Safety
/// The CPU supports AVX2 and AES-NI, and VAES if `VAES`.
#[inline(always)]
pub(super) unsafe fn chained_groups<'i, 'o, const VAES: bool, const CFB: bool>(
    rk: &[u32; 32],
    iv: &mut Blk,
    blocks: InOutBuf<'i, 'o, Blk>,
) -> InOutBuf<'i, 'o, Blk> {
    let full = super::x86::direct_blocks(blocks.len(), 8, 32);
    if full == 0 {
        return blocks;
    }
    let (head, rest) = blocks.split_at(full);
    let (i, o) = head.into_raw();
    let (i, o) = (i.cast::<u8>(), o.cast::<u8>());
    let mut done = 0;
    while done < full {
        let g = ((full - done) / 8).min(4);
        // SAFETY: `head` holds `full` blocks in and out, equal or disjoint;
        // the call's `8 * g` blocks at `done` are within them; the last
        // ciphertext block of the call is read before the call can
        // overwrite it (it chains into the next call); the CPU features
        // are this function's contract.
        unsafe {
            let (i, o) = (i.add(16 * done), o.add(16 * done));
            let next = core::ptr::read_unaligned(i.add(16 * (8 * g - 1)).cast::<Blk>());
            match g {
                4 => groups_chained::<VAES, 4, CFB>(rk, i, o, iv),
                3 => groups_chained::<VAES, 3, CFB>(rk, i, o, iv),
                2 => groups_chained::<VAES, 2, CFB>(rk, i, o, iv),
                _ => groups_chained::<VAES, 1, CFB>(rk, i, o, iv),
            }
            *iv = next;
        }
        done += 8 * g;
    }
    rest
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `SHIFT_ROWS` undoes `INV_SHIFT_ROWS`, and `compose` chains shuffles
    /// in the order its documentation says.
    #[test]
    fn shift_rows_indexes() {
        let id: [i8; 16] = core::array::from_fn(|i| i as i8);
        assert_eq!(compose(INV_SHIFT_ROWS, SHIFT_ROWS), id);
        assert_eq!(compose(SHIFT_ROWS, INV_SHIFT_ROWS), id);
        let x: [i8; 16] = core::array::from_fn(|i| 100 + i as i8);
        let shuffle = |v: [i8; 16], m: [i8; 16]| -> [i8; 16] { m.map(|i| v[i as usize]) };
        for rot in ROT {
            assert_eq!(
                shuffle(shuffle(x, rot), INV_SHIFT_ROWS),
                shuffle(x, compose(rot, INV_SHIFT_ROWS))
            );
        }
    }

    /// The vector S-box equals the SM4 S-box table on all 256 inputs.
    #[test]
    fn vector_sbox_matches_table() {
        if !crate::Backend::Avx.is_available() {
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

    /// `SA = SD ^ SE` on every input (the bulk rounds rely on it).
    #[test]
    fn sa_is_sd_xor_se() {
        for x in 0..256usize {
            let f = |lo: &[i8; 16], hi: &[i8; 16]| lo[x & 15] ^ hi[x >> 4];
            assert_eq!(f(&SA_LO, &SA_HI), f(&SD_LO, &SD_HI) ^ f(&SE_LO, &SE_HI));
        }
    }

    /// The AES-NI key schedule equals the portable one.
    #[test]
    fn key_schedule_matches_soft() {
        if !crate::Backend::Avx.is_available() {
            return;
        }
        // SAFETY: AVX2 and AES-NI checked above.
        crate::backends::soft::tests::check_key_schedule(|k| unsafe { schedule(k) });
    }
}
