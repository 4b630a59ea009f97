//! Portable, constant-time SM4.
//!
//! The S-box is computed arithmetically, never looked up: SM4's S-box is
//! `S(x) = A·inv(A·x + 0xD3) + 0xD3` (inversion in GF(2^8)), and the
//! inversion is done in the tower field GF((2^4)^2) on bit slices, with the
//! field isomorphism folded into the two affine maps (constants derived and
//! checked against the S-box table by `tools/derive_sbox.py`).
//!
//! Each round gathers the S-box input words of up to 16 blocks (64 bytes)
//! into eight `u64` bit slices with a 8×8 bit transposition, runs the
//! boolean circuit once for all 64 bytes, and transposes back. Every
//! operation is a fixed sequence of XOR/AND/NOT/shift; nothing depends on
//! secret data in its control flow or memory addresses.

use cipher::{Block, InOutBuf, consts::U16};

/// Blocks per batch: one batch fills the 64 byte lanes of the bit slices.
pub(crate) type ParBlocks = U16;

const FK: [u32; 4] = [0xa3b1_bac6, 0x56aa_3350, 0x677d_9197, 0xb270_22dc];

/// The tower-field inversion's input map `x -> IN·x + IN_C` (row `i` lists the
/// input bits XORed into output bit `i`).
const IN_ROWS: [u8; 8] = [0xd8, 0x65, 0xbe, 0xe3, 0x93, 0x40, 0xc4, 0x7f];
const IN_C: u8 = 0xac;
/// Output map back to the SM4 S-box value.
const OUT_ROWS: [u8; 8] = [0x93, 0x45, 0xe4, 0x95, 0x1a, 0xba, 0x57, 0x19];
const OUT_C: u8 = 0xd3;

/// `x -> M·x + c` on eight bit slices. `rows` and `c` are public constants;
/// after inlining every branch here is resolved at compile time.
#[inline(always)]
fn affine(rows: &[u8; 8], c: u8, x: &[u64; 8]) -> [u64; 8] {
    let mut out = [0u64; 8];
    for i in 0..8 {
        let mut acc = if (c >> i) & 1 == 1 { !0u64 } else { 0 };
        for (j, xj) in x.iter().enumerate() {
            if (rows[i] >> j) & 1 == 1 {
                acc ^= xj;
            }
        }
        out[i] = acc;
    }
    out
}

/// GF(2^4) = GF(2)[z]/(z^4 + z + 1) multiplication on bit slices.
#[inline(always)]
fn mul16(a: [u64; 4], b: [u64; 4]) -> [u64; 4] {
    let c0 = a[0] & b[0];
    let c1 = (a[0] & b[1]) ^ (a[1] & b[0]);
    let c2 = (a[0] & b[2]) ^ (a[1] & b[1]) ^ (a[2] & b[0]);
    let c3 = (a[0] & b[3]) ^ (a[1] & b[2]) ^ (a[2] & b[1]) ^ (a[3] & b[0]);
    let c4 = (a[1] & b[3]) ^ (a[2] & b[2]) ^ (a[3] & b[1]);
    let c5 = (a[2] & b[3]) ^ (a[3] & b[2]);
    let c6 = a[3] & b[3];
    // z^4 = z + 1, z^5 = z^2 + z, z^6 = z^3 + z^2
    [c0 ^ c4, c1 ^ c4 ^ c5, c2 ^ c5 ^ c6, c3 ^ c6]
}

/// Squaring in GF(2^4) (linear).
#[inline(always)]
fn sq16(a: [u64; 4]) -> [u64; 4] {
    [a[0] ^ a[2], a[2], a[1] ^ a[3], a[3]]
}

/// `LAMBDA·a^2` with `LAMBDA = z^3` (the constant of `y^2 + y + LAMBDA`).
#[inline(always)]
fn lambda_sq16(a: [u64; 4]) -> [u64; 4] {
    [a[2], a[1] ^ a[2] ^ a[3], a[1], a[0] ^ a[2] ^ a[3]]
}

#[inline(always)]
fn xor16(a: [u64; 4], b: [u64; 4]) -> [u64; 4] {
    [a[0] ^ b[0], a[1] ^ b[1], a[2] ^ b[2], a[3] ^ b[3]]
}

/// The SM4 S-box on 64 bytes held as eight bit slices (`x[j]` = bit `j`).
#[inline(always)]
fn sbox_sliced(x: &[u64; 8]) -> [u64; 8] {
    let u = affine(&IN_ROWS, IN_C, x);
    // u = a·y + b in GF(2^4)[y]/(y^2 + y + LAMBDA)
    let b = [u[0], u[1], u[2], u[3]];
    let a = [u[4], u[5], u[6], u[7]];
    // (a·y + b)^-1 = (a·y + a + b) / (LAMBDA·a^2 + a·b + b^2)
    let d = xor16(xor16(lambda_sq16(a), mul16(a, b)), sq16(b));
    // d^-1 = d^14 = d^2·d^4·d^8 (0 maps to 0)
    let d2 = sq16(d);
    let d4 = sq16(d2);
    let d8 = sq16(d4);
    let di = mul16(mul16(d2, d4), d8);
    let hi = mul16(a, di);
    let lo = mul16(xor16(a, b), di);
    affine(
        &OUT_ROWS,
        OUT_C,
        &[lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]],
    )
}

/// Swap the register index and the bit-in-byte index of eight `u64`s (an
/// 8×8 bit transposition in each of the eight byte columns; an involution).
#[inline(always)]
fn transpose(w: &mut [u64; 8]) {
    const M: [u64; 3] = [
        0x5555_5555_5555_5555,
        0x3333_3333_3333_3333,
        0x0f0f_0f0f_0f0f_0f0f,
    ];
    for (s, m) in M.iter().enumerate() {
        let d = 1usize << s;
        for r in 0..8 {
            if r & d == 0 {
                let t = ((w[r] >> d) ^ w[r + d]) & m;
                w[r + d] ^= t;
                w[r] ^= t << d;
            }
        }
    }
}

/// Apply the S-box to every byte of 16 words.
#[inline(always)]
fn tau16(t: &mut [u32; 16]) {
    let mut w = [0u64; 8];
    for (m, wm) in w.iter_mut().enumerate() {
        *wm = u64::from(t[2 * m]) | (u64::from(t[2 * m + 1]) << 32);
    }
    transpose(&mut w);
    let mut s = sbox_sliced(&w);
    transpose(&mut s);
    for (m, sm) in s.iter().enumerate() {
        t[2 * m] = *sm as u32;
        t[2 * m + 1] = (*sm >> 32) as u32;
    }
}

/// The S-box on the four bytes of one word.
#[inline(always)]
fn tau1(x: u32) -> u32 {
    let mut w = [0u64; 8];
    w[0] = u64::from(x);
    transpose(&mut w);
    let mut s = sbox_sliced(&w);
    transpose(&mut s);
    s[0] as u32
}

#[inline(always)]
fn l(b: u32) -> u32 {
    b ^ b.rotate_left(2) ^ b.rotate_left(10) ^ b.rotate_left(18) ^ b.rotate_left(24)
}

/// The SM4 key schedule: 32 round keys (the encryption order).
pub(crate) fn expand_key(key: &[u8; 16]) -> [u32; 32] {
    expand_key_with(key, tau1)
}

/// The key schedule with `tau` as the S-box on the four bytes of a word
/// (backends with an S-box instruction pass theirs; the schedule is a
/// chain of 32 S-box evaluations, so its speed is that of one word).
#[inline(always)]
pub(crate) fn expand_key_with(key: &[u8; 16], tau: impl Fn(u32) -> u32) -> [u32; 32] {
    const CK: [u32; 32] = {
        let mut ck = [0u32; 32];
        let mut i = 0;
        while i < 32 {
            let mut w = 0u32;
            let mut j = 0;
            while j < 4 {
                // ck_{i,j} = (4i + j)·7 mod 256
                w = (w << 8) | (((4 * i + j) * 7) % 256) as u32;
                j += 1;
            }
            ck[i] = w;
            i += 1;
        }
        ck
    };
    let mut k = [0u32; 4];
    for (i, ki) in k.iter_mut().enumerate() {
        let bytes = [key[4 * i], key[4 * i + 1], key[4 * i + 2], key[4 * i + 3]];
        *ki = u32::from_be_bytes(bytes) ^ FK[i];
    }
    let mut rk = [0u32; 32];
    for (i, rki) in rk.iter_mut().enumerate() {
        let b = tau(k[(i + 1) % 4] ^ k[(i + 2) % 4] ^ k[(i + 3) % 4] ^ CK[i]);
        let new = k[i % 4] ^ b ^ b.rotate_left(13) ^ b.rotate_left(23);
        k[i % 4] = new;
        *rki = new;
    }
    rk
}

/// One round on 16 blocks: `a ^= L(S(b ^ c ^ d ^ k))`.
#[inline(always)]
fn round16(a: &mut [u32; 16], b: &[u32; 16], c: &[u32; 16], d: &[u32; 16], k: u32) {
    let mut t = [0u32; 16];
    for i in 0..16 {
        t[i] = b[i] ^ c[i] ^ d[i] ^ k;
    }
    tau16(&mut t);
    for (ai, ti) in a.iter_mut().zip(t) {
        *ai ^= l(ti);
    }
}

/// Encrypt (or, with the reversed schedule, decrypt) up to 16 blocks held
/// as big-endian words, `x[j][i]` = word `j` of block `i`.
#[inline(always)]
fn rounds16(rk: &[u32; 32], x: &mut [[u32; 16]; 4]) {
    let [x0, x1, x2, x3] = x;
    for k in rk.chunks_exact(4) {
        round16(x0, x1, x2, x3, k[0]);
        round16(x1, x2, x3, x0, k[1]);
        round16(x2, x3, x0, x1, k[2]);
        round16(x3, x0, x1, x2, k[3]);
    }
}

/// One block, with the S-box circuit on the four bytes of one word (the
/// other 60 byte lanes are known zeros, which the compiler folds away).
#[inline(always)]
fn crypt1(rk: &[u32; 32], b: &[u8; 16]) -> [u8; 16] {
    let w = |j: usize| u32::from_be_bytes([b[4 * j], b[4 * j + 1], b[4 * j + 2], b[4 * j + 3]]);
    let mut x = [w(0), w(1), w(2), w(3)];
    for k in rk.chunks_exact(4) {
        for (i, ki) in k.iter().enumerate() {
            let t = tau1(x[(i + 1) % 4] ^ x[(i + 2) % 4] ^ x[(i + 3) % 4] ^ ki);
            x[i] ^= l(t);
        }
    }
    let mut out = [0u8; 16];
    for (o, xj) in out.chunks_exact_mut(4).zip(x.iter().rev()) {
        o.copy_from_slice(&xj.to_be_bytes());
    }
    out
}

/// Encrypt (rk = encryption schedule) or decrypt (rk = reversed schedule)
/// any number of blocks, in place or out of place.
#[inline]
pub(crate) fn crypt_blocks(rk: &[u32; 32], mut blocks: InOutBuf<'_, '_, Block<crate::Sm4>>) {
    let n = blocks.len();
    if n == 1 {
        let mut b = blocks.get(0);
        let out = crypt1(rk, &b.get_in().0);
        *b.get_out() = out.into();
        return;
    }
    let mut done = 0;
    while done < n {
        let m = core::cmp::min(16, n - done);
        let mut x = [[0u32; 16]; 4];
        for i in 0..m {
            let b = blocks.get(done + i);
            let b = b.get_in();
            for (j, xj) in x.iter_mut().enumerate() {
                xj[i] = u32::from_be_bytes([b[4 * j], b[4 * j + 1], b[4 * j + 2], b[4 * j + 3]]);
            }
        }
        rounds16(rk, &mut x);
        for i in 0..m {
            let mut b = blocks.get(done + i);
            let out = b.get_out();
            for (o, xj) in out.chunks_exact_mut(4).zip(x.iter().rev()) {
                o.copy_from_slice(&xj[i].to_be_bytes());
            }
        }
        done += m;
    }
}

#[cfg(test)]
pub(crate) mod tests {
    /// Check a backend's key schedule against the portable one on 64
    /// pseudo-random keys (the x86 backends'; `sm4ce` has its own test).
    #[cfg(target_arch = "x86_64")]
    pub(crate) fn check_key_schedule(expand: impl Fn(&[u8; 16]) -> [u32; 32]) {
        let mut key = [0u8; 16];
        for i in 0..64u8 {
            key = key.map(|b| b.wrapping_mul(31).wrapping_add(i ^ 0x5b));
            assert_eq!(expand(&key), super::expand_key(&key));
        }
    }

    /// The S-box table of GB/T 32907, only to check the circuit.
    pub(crate) const SBOX: [u8; 256] = [
        0xd6, 0x90, 0xe9, 0xfe, 0xcc, 0xe1, 0x3d, 0xb7, 0x16, 0xb6, 0x14, 0xc2, 0x28, 0xfb, 0x2c,
        0x05, 0x2b, 0x67, 0x9a, 0x76, 0x2a, 0xbe, 0x04, 0xc3, 0xaa, 0x44, 0x13, 0x26, 0x49, 0x86,
        0x06, 0x99, 0x9c, 0x42, 0x50, 0xf4, 0x91, 0xef, 0x98, 0x7a, 0x33, 0x54, 0x0b, 0x43, 0xed,
        0xcf, 0xac, 0x62, 0xe4, 0xb3, 0x1c, 0xa9, 0xc9, 0x08, 0xe8, 0x95, 0x80, 0xdf, 0x94, 0xfa,
        0x75, 0x8f, 0x3f, 0xa6, 0x47, 0x07, 0xa7, 0xfc, 0xf3, 0x73, 0x17, 0xba, 0x83, 0x59, 0x3c,
        0x19, 0xe6, 0x85, 0x4f, 0xa8, 0x68, 0x6b, 0x81, 0xb2, 0x71, 0x64, 0xda, 0x8b, 0xf8, 0xeb,
        0x0f, 0x4b, 0x70, 0x56, 0x9d, 0x35, 0x1e, 0x24, 0x0e, 0x5e, 0x63, 0x58, 0xd1, 0xa2, 0x25,
        0x22, 0x7c, 0x3b, 0x01, 0x21, 0x78, 0x87, 0xd4, 0x00, 0x46, 0x57, 0x9f, 0xd3, 0x27, 0x52,
        0x4c, 0x36, 0x02, 0xe7, 0xa0, 0xc4, 0xc8, 0x9e, 0xea, 0xbf, 0x8a, 0xd2, 0x40, 0xc7, 0x38,
        0xb5, 0xa3, 0xf7, 0xf2, 0xce, 0xf9, 0x61, 0x15, 0xa1, 0xe0, 0xae, 0x5d, 0xa4, 0x9b, 0x34,
        0x1a, 0x55, 0xad, 0x93, 0x32, 0x30, 0xf5, 0x8c, 0xb1, 0xe3, 0x1d, 0xf6, 0xe2, 0x2e, 0x82,
        0x66, 0xca, 0x60, 0xc0, 0x29, 0x23, 0xab, 0x0d, 0x53, 0x4e, 0x6f, 0xd5, 0xdb, 0x37, 0x45,
        0xde, 0xfd, 0x8e, 0x2f, 0x03, 0xff, 0x6a, 0x72, 0x6d, 0x6c, 0x5b, 0x51, 0x8d, 0x1b, 0xaf,
        0x92, 0xbb, 0xdd, 0xbc, 0x7f, 0x11, 0xd9, 0x5c, 0x41, 0x1f, 0x10, 0x5a, 0xd8, 0x0a, 0xc1,
        0x31, 0x88, 0xa5, 0xcd, 0x7b, 0xbd, 0x2d, 0x74, 0xd0, 0x12, 0xb8, 0xe5, 0xb4, 0xb0, 0x89,
        0x69, 0x97, 0x4a, 0x0c, 0x96, 0x77, 0x7e, 0x65, 0xb9, 0xf1, 0x09, 0xc5, 0x6e, 0xc6, 0x84,
        0x18, 0xf0, 0x7d, 0xec, 0x3a, 0xdc, 0x4d, 0x20, 0x79, 0xee, 0x5f, 0x3e, 0xd7, 0xcb, 0x39,
        0x48,
    ];

    #[test]
    fn sliced_sbox_matches_table() {
        let mut t = [0u32; 16];
        for chunk in 0..4 {
            for (i, w) in t.iter_mut().enumerate() {
                let base = (chunk * 64 + i * 4) as u32;
                *w = u32::from_be_bytes([
                    base as u8,
                    (base + 1) as u8,
                    (base + 2) as u8,
                    (base + 3) as u8,
                ]);
            }
            super::tau16(&mut t);
            for (i, w) in t.iter().enumerate() {
                let base = chunk * 64 + i * 4;
                let want = [SBOX[base], SBOX[base + 1], SBOX[base + 2], SBOX[base + 3]];
                assert_eq!(w.to_be_bytes(), want);
            }
        }
        for x in 0..=255u8 {
            let w = u32::from_be_bytes([x, x ^ 0x5a, 255 - x, x.wrapping_mul(7)]);
            let want = [
                SBOX[x as usize],
                SBOX[(x ^ 0x5a) as usize],
                SBOX[(255 - x) as usize],
                SBOX[x.wrapping_mul(7) as usize],
            ];
            assert_eq!(super::tau1(w).to_be_bytes(), want);
        }
    }
}
