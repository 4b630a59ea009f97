//! x86_64 GFNI + AVX-512 (zmm) kernel.
//!
//! State: 16 blocks per group in four zmm registers, register `i` holding
//! word `i` of every block (a 4×4 word transposition inside each 128-bit
//! lane after loading). Round: `t = x1 ^ x2 ^ x3 ^ rk` (one `vpternlogd`
//! and one XOR), the S-box as two GF(2^8) affine steps
//! (`gf2p8affineqb` into the AES field, `gf2p8affineinvqb` inverting there
//! and mapping back; constants from `tools/derive_sbox.py`), then
//! `L` with four `vprold` and two `vpternlogd`. Four independent groups
//! (64 blocks) are interleaved so that the ~10-cycle round latency is
//! hidden; shorter tails run the same code on fewer groups, padded
//! through a stack buffer. A single block takes a latency-optimised xmm
//! path (CBC/CFB encryption, CMAC).

use core::arch::x86_64::*;

use cipher::{Block, InOutBuf, consts::U64};

/// Blocks per batch: four interleaved 16-block groups.
pub(crate) type ParBlocks = U64;

/// `gf2p8affineqb` matrix and constant: SM4 input affine map, then the
/// isomorphism into the AES field.
const PRE: i64 = 0x4c28_7db9_1a22_505d;
const PRE_C: i32 = 0x3e;
/// `gf2p8affineinvqb` matrix and constant: back from the AES field, then the
/// SM4 output affine map.
const POST: i64 = 0xf3ab_34a9_74a6_b589_u64 as i64;
const POST_C: i32 = 0xd3;

/// `pshufb` index: byte swap inside each 32-bit word (SM4 words are big
/// endian).
#[inline]
#[target_feature(enable = "sse2")]
fn bswap32() -> __m128i {
    _mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12)
}

#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw,avx512vl")]
fn sbox512(x: __m512i) -> __m512i {
    let y = _mm512_gf2p8affine_epi64_epi8::<PRE_C>(x, _mm512_set1_epi64(PRE));
    _mm512_gf2p8affineinv_epi64_epi8::<POST_C>(y, _mm512_set1_epi64(POST))
}

#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw,avx512vl")]
fn sbox128(x: __m128i) -> __m128i {
    let y = _mm_gf2p8affine_epi64_epi8::<PRE_C>(x, _mm_set1_epi64x(PRE));
    _mm_gf2p8affineinv_epi64_epi8::<POST_C>(y, _mm_set1_epi64x(POST))
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

/// One round on `G` groups: `a ^= L(S(b ^ c ^ d ^ k))`.
#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw,avx512vl")]
fn round<const G: usize>(
    a: &mut [__m512i; G],
    b: &[__m512i; G],
    c: &[__m512i; G],
    d: &[__m512i; G],
    k: u32,
) {
    let k = _mm512_set1_epi32(k as i32);
    for g in 0..G {
        let t = _mm512_xor_si512(_mm512_ternarylogic_epi32::<0x96>(b[g], c[g], d[g]), k);
        let s = sbox512(t);
        let u = _mm512_ternarylogic_epi32::<0x96>(a[g], s, _mm512_rol_epi32::<2>(s));
        let v = _mm512_ternarylogic_epi32::<0x96>(
            _mm512_rol_epi32::<10>(s),
            _mm512_rol_epi32::<18>(s),
            _mm512_rol_epi32::<24>(s),
        );
        a[g] = _mm512_xor_si512(u, v);
    }
}

/// Encrypt `G` groups of 16 blocks from `inp` to `out`.
///
/// # Safety
/// `inp` is readable and `out` writable for `16 * G` blocks; they are equal
/// or disjoint.
#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw,avx512vl")]
unsafe fn groups<const G: usize>(rk: &[u32; 32], inp: *const u8, out: *mut u8) {
    let bswap = _mm512_broadcast_i32x4(bswap32());
    let mut x = [[_mm512_setzero_si512(); 4]; G];
    for (g, xg) in x.iter_mut().enumerate() {
        let mut z = [_mm512_setzero_si512(); 4];
        for (i, zi) in z.iter_mut().enumerate() {
            // SAFETY: in bounds by the caller's contract (block 16g + 4i..+4).
            let v = unsafe { _mm512_loadu_si512(inp.add(256 * g + 64 * i).cast()) };
            *zi = _mm512_shuffle_epi8(v, bswap);
        }
        *xg = transpose(z);
    }
    let [mut x0, mut x1, mut x2, mut x3] = [[_mm512_setzero_si512(); G]; 4];
    for g in 0..G {
        [x0[g], x1[g], x2[g], x3[g]] = x[g];
    }
    for r in (0..32).step_by(4) {
        round(&mut x0, &x1, &x2, &x3, rk[r]);
        round(&mut x1, &x2, &x3, &x0, rk[r + 1]);
        round(&mut x2, &x3, &x0, &x1, rk[r + 2]);
        round(&mut x3, &x0, &x1, &x2, rk[r + 3]);
    }
    for g in 0..G {
        x[g] = [x0[g], x1[g], x2[g], x3[g]];
    }
    for (g, xg) in x.iter().enumerate() {
        let z = transpose([xg[3], xg[2], xg[1], xg[0]]);
        for (i, zi) in z.iter().enumerate() {
            let v = _mm512_shuffle_epi8(*zi, bswap);
            // SAFETY: in bounds by the caller's contract.
            unsafe { _mm512_storeu_si512(out.add(256 * g + 64 * i).cast(), v) };
        }
    }
}

/// One single-block round: returns `a ^ L(S(t))` and the next round's
/// S-box input `a ^ L(S(t)) ^ c ^ d ^ k`.
#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw,avx512vl")]
fn round1(a: __m128i, t: __m128i, c: __m128i, d: __m128i, k: __m128i) -> (__m128i, __m128i) {
    let p = _mm_ternarylogic_epi32::<0x96>(c, d, k);
    let s = sbox128(t);
    let u = _mm_ternarylogic_epi32::<0x96>(a, s, _mm_rol_epi32::<2>(s));
    let v = _mm_ternarylogic_epi32::<0x96>(
        _mm_rol_epi32::<10>(s),
        _mm_rol_epi32::<18>(s),
        _mm_rol_epi32::<24>(s),
    );
    (_mm_xor_si128(u, v), _mm_ternarylogic_epi32::<0x96>(u, v, p))
}

/// One block, latency first: each word in its own xmm register.
///
/// # Safety
/// `inp` is readable and `out` writable for one block.
#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw,avx512vl")]
unsafe fn one(rk: &[u32; 32], inp: *const u8, out: *mut u8) {
    let bswap = bswap32();
    // SAFETY: one readable block.
    let v = _mm_shuffle_epi8(unsafe { _mm_loadu_si128(inp.cast()) }, bswap);
    let (mut x0, mut x1, mut x2, mut x3) = (
        _mm_shuffle_epi32::<0x00>(v),
        _mm_shuffle_epi32::<0x55>(v),
        _mm_shuffle_epi32::<0xaa>(v),
        _mm_shuffle_epi32::<0xff>(v),
    );
    let k = |r: usize| _mm_set1_epi32(rk[r] as i32);
    // The S-box input of the next round, `x_new ^ (c ^ d ^ k')`, is formed
    // by one ternary op from the two halves of `L`, with `c ^ d ^ k'`
    // computed off the critical path.
    let mut t = _mm_ternarylogic_epi32::<0x96>(x1, x2, _mm_xor_si128(x3, k(0)));
    for r in (0..32).step_by(4) {
        (x0, t) = round1(x0, t, x2, x3, k(r + 1));
        (x1, t) = round1(x1, t, x3, x0, k((r + 2) % 32));
        (x2, t) = round1(x2, t, x0, x1, k((r + 3) % 32));
        (x3, t) = round1(x3, t, x1, x2, k((r + 4) % 32));
    }
    let x = [x0, x1, x2, x3];
    let lo = _mm_unpacklo_epi32(x[3], x[2]);
    let hi = _mm_unpacklo_epi32(x[1], x[0]);
    let v = _mm_shuffle_epi8(_mm_unpacklo_epi64(lo, hi), bswap);
    // SAFETY: one writable block.
    unsafe { _mm_storeu_si128(out.cast(), v) };
}

/// Encrypt (rk = encryption schedule) or decrypt (rk = reversed schedule)
/// any number of blocks, in place or out of place.
///
/// # Safety
/// The CPU supports GFNI, AVX-512F, AVX-512BW and AVX-512VL.
#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw,avx512vl")]
pub(crate) unsafe fn crypt_blocks(rk: &[u32; 32], blocks: InOutBuf<'_, '_, Block<crate::Sm4>>) {
    let n = blocks.len();
    let (inp, out) = blocks.into_raw();
    let (inp, out) = (inp.cast::<u8>(), out.cast::<u8>());
    if n == 1 {
        // SAFETY: one block in and out (InOutBuf of length 1).
        unsafe { one(rk, inp, out) };
        return;
    }
    let mut done = 0;
    while n - done >= 64 {
        // SAFETY: 64 blocks remain at offset `done` in both buffers, which
        // InOutBuf guarantees equal or disjoint.
        unsafe { groups::<4>(rk, inp.add(16 * done), out.add(16 * done)) };
        done += 64;
    }
    let rest = n - done;
    if rest == 0 {
        return;
    }
    let mut buf = [0u8; 16 * 64];
    // SAFETY: `rest` blocks remain readable at `done`; `buf` is a separate
    // local buffer of 64 blocks.
    unsafe { core::ptr::copy_nonoverlapping(inp.add(16 * done), buf.as_mut_ptr(), 16 * rest) };
    let p = buf.as_mut_ptr();
    // SAFETY: `buf` holds 64 blocks, in place.
    unsafe {
        match rest.div_ceil(16) {
            1 => groups::<1>(rk, p, p),
            2 => groups::<2>(rk, p, p),
            3 => groups::<3>(rk, p, p),
            _ => groups::<4>(rk, p, p),
        }
    }
    // SAFETY: `rest` blocks remain writable at `done`.
    unsafe { core::ptr::copy_nonoverlapping(buf.as_ptr(), out.add(16 * done), 16 * rest) };
}
