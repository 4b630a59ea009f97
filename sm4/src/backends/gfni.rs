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

/// `gf2p8affineinvqb` matrices and constants of the single-block path,
/// mapping the inverse straight to `sA = M1·(s ^ (s << 2))`,
/// `sD = M1·((s << 2) ^ (s >> 6))` and `sE = M1·(s ^ (s >> 6))` (bytewise
/// shifts), `M1` being the matrix of [`PRE`] and `s` the S-box output (see
/// `tools/derive_sbox.py`, which also checks the identity used in
/// [`round1`]).
const SA: i64 = 0x040d_b891_e9a4_81b7_u64 as i64;
const SA_C: i32 = 0x72;
const SD: i64 = 0x2c02_0425_1620_40ad_u64 as i64;
const SD_C: i32 = 0x63;
const SE: i64 = 0x280f_bcb4_ff84_c11a_u64 as i64;
const SE_C: i32 = 0x11;

/// `M1^-1`: back from the single-block path's state representation.
const PRE_INV: i64 = 0xb3a4_f586_3284_728b_u64 as i64;

/// The bytewise affine map `x -> m·x + C`.
#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw,avx512vl")]
fn aff<const C: i32>(x: __m128i, m: i64) -> __m128i {
    _mm_gf2p8affine_epi64_epi8::<C>(x, _mm_set1_epi64x(m))
}

/// The bytewise map `y -> m·inv(y) + C`.
#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw,avx512vl")]
fn aff_inv<const C: i32>(y: __m128i, m: i64) -> __m128i {
    _mm_gf2p8affineinv_epi64_epi8::<C>(y, _mm_set1_epi64x(m))
}

/// One single-block round on the state kept as `X = M1·x` (`M1` the matrix
/// of [`PRE`]; linear and bytewise, so it commutes with XOR and with byte
/// rotations). `y = M1·t + c1` is this round's S-box input after the first
/// affine step. With `s` the S-box output, `rol2(u)` being `u << 2` in each
/// byte XOR `u >> 6` of the byte below,
/// `M1·L(s) = sA ^ rol8(sD) ^ rol16(sD) ^ rol24(sE)`, the three terms each
/// one `gf2p8affineinvqb` of `y`. Returns `X_a ^ M1·L(s)` and the next `y`
/// (`= that ^ X_c ^ X_d ^ (M1·k' + c1)`). Critical path: one
/// `gf2p8affineinvqb`, one rotation, two `vpternlogd`.
#[inline]
#[target_feature(enable = "gfni,avx512f,avx512bw,avx512vl")]
fn round1(a: __m128i, y: __m128i, c: __m128i, d: __m128i, k: u32) -> (__m128i, __m128i) {
    let km = aff::<PRE_C>(_mm_set1_epi32(k as i32), PRE);
    let z = _mm_ternarylogic_epi32::<0x96>(a, c, _mm_xor_si128(d, km));
    let sa = aff_inv::<SA_C>(y, SA);
    let sd = aff_inv::<SD_C>(y, SD);
    let se = aff_inv::<SE_C>(y, SE);
    let w = _mm_ternarylogic_epi32::<0x96>(
        _mm_rol_epi32::<8>(sd),
        _mm_rol_epi32::<16>(sd),
        _mm_rol_epi32::<24>(se),
    );
    (
        _mm_ternarylogic_epi32::<0x96>(w, sa, a),
        _mm_ternarylogic_epi32::<0x96>(w, sa, z),
    )
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
    // X = M1·x for the whole block at once (bytewise map).
    let v = aff::<0>(v, PRE);
    let (mut x0, mut x1, mut x2, mut x3) = (
        _mm_shuffle_epi32::<0x00>(v),
        _mm_shuffle_epi32::<0x55>(v),
        _mm_shuffle_epi32::<0xaa>(v),
        _mm_shuffle_epi32::<0xff>(v),
    );
    let k0 = aff::<PRE_C>(_mm_set1_epi32(rk[0] as i32), PRE);
    let mut y = _mm_ternarylogic_epi32::<0x96>(x1, x2, _mm_xor_si128(x3, k0));
    for r in (0..32).step_by(4) {
        (x0, y) = round1(x0, y, x2, x3, rk[r + 1]);
        (x1, y) = round1(x1, y, x3, x0, rk[(r + 2) % 32]);
        (x2, y) = round1(x2, y, x0, x1, rk[(r + 3) % 32]);
        (x3, y) = round1(x3, y, x1, x2, rk[(r + 4) % 32]);
    }
    let lo = _mm_unpacklo_epi32(x3, x2);
    let hi = _mm_unpacklo_epi32(x1, x0);
    let v = aff::<0>(_mm_unpacklo_epi64(lo, hi), PRE_INV);
    let v = _mm_shuffle_epi8(v, bswap);
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
