//! GHASH (NIST SP 800-38D): the per-key table of powers of H, the engine
//! contract ([`Ghash`]) and the portable, constant-time engine; the SIMD
//! engines are the child modules. Knows nothing of SM4 (the dispatcher
//! runs an engine beside an SM4 kernel); imports only the block type and
//! the vector primitives.
//!
//! # Representation: the POLYVAL domain
//! Every engine works on 128-bit integers `u128::from_be_bytes(block)`, and
//! multiplies them as POLYVAL (RFC 8452) does: `dot(a, b) = a·b·x^-128` mod
//! `x^128 + x^127 + x^126 + x^121 + 1`, bit `i` of the integer being the
//! coefficient of `x^i`. RFC 8452 Appendix A: GHASH with key `H` over
//! blocks `X_i` is the byte reversal of POLYVAL with key
//! `mulX_POLYVAL(ByteReverse(H))` over `ByteReverse(X_i)`, and a byte
//! reversal read little-endian is a big-endian read. So a GHASH state
//! `Y` is the integer `u128::from_be_bytes(Y)` throughout, the key is
//! `H·x` in that domain, and no bit reflection is needed: the carry-less
//! product of two such integers is exactly what PCLMULQDQ and PMULL
//! compute, and `x^-128` is a Montgomery reduction of two folds by the
//! constant `x^63 + x^62 + x^57` ([`REDUCE`]).
//!
//! # Aggregated reduction
//! `Y <- (Y ^ X_1)·H^n ^ X_2·H^(n-1) ^ ... ^ X_n·H`: the `n` products are
//! summed unreduced (256 bits: low, middle and high 128-bit parts) and
//! reduced once. The table holds H^1..H^16 because the widest engine
//! (`vpclmul`) aggregates 16 blocks, four `zmm` registers of four blocks,
//! which is what keeps its serial chain (one reduction per group) below the
//! throughput of its 16 multiplications; `vpclmul256` (two blocks a `ymm`
//! register) aggregates 16 too, `clmul` and `pmull` 8, `soft` 4, and each
//! takes the last powers of the one table.

use crate::block::Blk;
use cipher::array::Array;
use core::fmt;

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[macro_use]
mod body;
#[cfg(target_arch = "x86_64")]
pub(crate) mod clmul;
#[cfg(target_arch = "aarch64")]
pub(crate) mod pmull;
#[cfg(target_arch = "x86_64")]
pub(crate) mod vpclmul;
#[cfg(target_arch = "x86_64")]
pub(crate) mod vpclmul256;

/// Powers of H in the table: the widest aggregation (16 blocks, `vpclmul`).
pub(crate) const POWERS: usize = 16;

/// The POLYVAL Montgomery constant `x^63 + x^62 + x^57` (the low half of
/// the reduction polynomial `x^128 + x^127 + x^126 + x^121 + 1` divided by
/// `x^64`): `v·x^-64 = (v >> 64) ^ (v mod x^64)·(x^64 + REDUCE)`.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64", test))]
pub(crate) const REDUCE: u64 = 0xc200_0000_0000_0000;

/// The GHASH key: the powers H^16, H^15, ..., H^1 of `H = E_K(0^128)`, in
/// the POLYVAL domain of the module docs (`pow[i]` is H^(16 - i)), the
/// one format every engine loads. Descending, so that the last `r` entries
/// are the powers of an `r`-block group, in block order.
#[derive(Clone)]
pub(crate) struct GhashKey {
    /// `pow[i]` = H^(POWERS - i), POLYVAL domain.
    pub(crate) pow: [u128; POWERS],
}

impl GhashKey {
    /// The table for hash key `h` (the bytes of `E_K(0^128)`), computed with
    /// the portable constant-time multiplication (15 products, once per
    /// key).
    pub(crate) fn new(h: &[u8; 16]) -> Self {
        // mulX_POLYVAL(ByteReverse(H)): a shift and, without a branch, the
        // reduction of the bit shifted out.
        let v = u128::from_be_bytes(*h);
        let carry = 0u128.wrapping_sub(v >> 127);
        let h1 = (v << 1) ^ (carry & 0xc200_0000_0000_0000_0000_0000_0000_0001);
        let mut pow = [0u128; POWERS];
        pow[POWERS - 1] = h1;
        for i in (0..POWERS - 1).rev() {
            pow[i] = dot(pow[i + 1], h1);
        }
        GhashKey { pow }
    }
}

impl fmt::Debug for GhashKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GhashKey { .. }")
    }
}

impl Drop for GhashKey {
    fn drop(&mut self) {
        #[cfg(feature = "zeroize")]
        zeroize::Zeroize::zeroize(&mut self.pow);
    }
}

#[cfg(feature = "zeroize")]
impl zeroize::ZeroizeOnDrop for GhashKey {}

/// A GHASH engine. Each engine has a zero-sized token type that implements
/// this; only the dispatcher's `#[target_feature]` GCM runners
/// (`backends::with_gcm`) make the SIMD ones, so holding a token means the CPU has the engine's features, and the driver code that
/// calls it, inlined into the runner, is compiled with them.
///
/// The state is GCM's: `state` holds the bytes of `Y_i` (SP 800-38D, 6.4),
/// all zero at the start; after the AAD, the ciphertext (each zero-padded
/// to whole blocks) and the length block, it is `GHASH_H(A, C)`.
pub(crate) trait Ghash: Copy {
    /// Hash whole blocks (any number, 0 included) into `state`, with one
    /// reduction per group of the engine's aggregation width.
    fn update(self, key: &GhashKey, state: &mut [u8; 16], blocks: &[Blk]);

    /// Hash `data`, its last partial block (if any) padded with zeros.
    #[inline(always)]
    fn update_padded(self, key: &GhashKey, state: &mut [u8; 16], data: &[u8]) {
        let (blocks, tail) = Array::slice_as_chunks(data);
        if !blocks.is_empty() {
            self.update(key, state, blocks);
        }
        if !tail.is_empty() {
            let mut last = Blk::default();
            last[..tail.len()].copy_from_slice(tail);
            self.update(key, state, core::slice::from_ref(&last));
        }
    }
}

/// The portable engine (needs no CPU feature): four blocks per reduction.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SoftGhash;

impl Ghash for SoftGhash {
    #[inline]
    fn update(self, key: &GhashKey, state: &mut [u8; 16], blocks: &[Blk]) {
        const AGG: usize = 4;
        let mut y = u128::from_be_bytes(*state);
        for group in blocks.chunks(AGG) {
            let pow = &key.pow[POWERS - group.len()..];
            let mut acc = Acc::default();
            for (j, (b, h)) in group.iter().zip(pow).enumerate() {
                let mut x = u128::from_be_bytes(b.0);
                if j == 0 {
                    x ^= y;
                }
                acc.mul_add(x, *h);
            }
            y = acc.reduce();
        }
        *state = y.to_be_bytes();
    }
}

/// An unreduced sum of Karatsuba products: `lo` = Σ a0·b0, `hi` = Σ a1·b1,
/// `mid` = Σ (a0 ^ a1)·(b0 ^ b1) (64-bit halves; carry-less).
#[derive(Default)]
struct Acc {
    lo: u128,
    mid: u128,
    hi: u128,
}

impl Acc {
    /// Add `a·b` (128 × 128 bits, carry-less).
    #[inline(always)]
    fn mul_add(&mut self, a: u128, b: u128) {
        let (a0, a1, b0, b1) = (a as u64, (a >> 64) as u64, b as u64, (b >> 64) as u64);
        self.lo ^= clmul64(a0, b0);
        self.hi ^= clmul64(a1, b1);
        self.mid ^= clmul64(a0 ^ a1, b0 ^ b1);
    }

    /// The sum times `x^-128`, reduced (POLYVAL's `dot`): two Montgomery
    /// folds of 64 bits each, by shifts (the product by [`REDUCE`]).
    #[inline(always)]
    fn reduce(self) -> u128 {
        let mid = self.mid ^ self.lo ^ self.hi;
        // The 256-bit product as four 64-bit words, t0 the lowest.
        let t0 = self.lo as u64;
        let t1 = (self.lo >> 64) as u64 ^ mid as u64;
        let t2 = self.hi as u64 ^ (mid >> 64) as u64;
        let t3 = (self.hi >> 64) as u64;
        // Fold t0: t·x^-64 = (t >> 64) ^ t0·x^64 ^ t0·REDUCE.
        let w0 = t1 ^ (t0 << 63) ^ (t0 << 62) ^ (t0 << 57);
        let w1 = t2 ^ t0 ^ (t0 >> 1) ^ (t0 >> 2) ^ (t0 >> 7);
        // Fold w0 the same way.
        let u0 = w1 ^ (w0 << 63) ^ (w0 << 62) ^ (w0 << 57);
        let u1 = t3 ^ w0 ^ (w0 >> 1) ^ (w0 >> 2) ^ (w0 >> 7);
        (u128::from(u1) << 64) | u128::from(u0)
    }
}

/// POLYVAL's `dot(a, b) = a·b·x^-128`, portable and constant time.
#[inline]
pub(crate) fn dot(a: u128, b: u128) -> u128 {
    let mut acc = Acc::default();
    acc.mul_add(a, b);
    acc.reduce()
}

/// `n` ones spaced `stride` bits apart from bit `first`, within `bits`.
const fn spaced(first: u32, stride: u32, bits: u32) -> u128 {
    let mut m = 0u128;
    let mut i = first;
    while i < bits {
        m |= 1 << i;
        i += stride;
    }
    m
}

/// Carry-less 64 × 64 -> 128-bit product: [`clmul64_wide`] where 64 × 64
/// -> 128-bit integer multiplication is native, [`clmul64_narrow`] on
/// 32-bit targets.
#[inline(always)]
fn clmul64(x: u64, y: u64) -> u128 {
    if cfg!(target_pointer_width = "64") {
        clmul64_wide(x, y)
    } else {
        clmul64_narrow(x, y)
    }
}

/// Carry-less 64 × 64 -> 128-bit product by integer multiplication "with
/// holes": each operand is split into five parts holding every fifth bit,
/// so a part has at most 13 bits set, each coefficient of a part product
/// is a sum of at most 13 terms (< 2^5), and its carries stay in the four
/// unused bits above it; bit `k` of the XOR of the products of the parts
/// whose classes add up to `k` mod 5 is then the carry-less coefficient.
/// 25 full 64 × 64 multiplies (`mul` / `umulh`), a fixed sequence of
/// AND/XOR, no branch and no table: constant time where the multiplier is.
#[inline(always)]
fn clmul64_wide(x: u64, y: u64) -> u128 {
    const M: [u64; 5] = [
        spaced(0, 5, 64) as u64,
        spaced(1, 5, 64) as u64,
        spaced(2, 5, 64) as u64,
        spaced(3, 5, 64) as u64,
        spaced(4, 5, 64) as u64,
    ];
    const W: [u128; 5] = [
        spaced(0, 5, 128),
        spaced(1, 5, 128),
        spaced(2, 5, 128),
        spaced(3, 5, 128),
        spaced(4, 5, 128),
    ];
    let xs = M.map(|m| u128::from(x & m));
    let ys = M.map(|m| u128::from(y & m));
    let mut z = [0u128; 5];
    for (i, xi) in xs.iter().enumerate() {
        for (j, yj) in ys.iter().enumerate() {
            z[(i + j) % 5] ^= xi * yj;
        }
    }
    (z[0] & W[0]) | (z[1] & W[1]) | (z[2] & W[2]) | (z[3] & W[3]) | (z[4] & W[4])
}

/// Carry-less 64 × 64 -> 128-bit product for 32-bit targets: Karatsuba
/// over three 32 × 32 products ([`clmul32`]), 48 `umull`s instead of the
/// 100 that 25 emulated 64 × 64 -> 128 multiplies take.
#[inline(always)]
fn clmul64_narrow(x: u64, y: u64) -> u128 {
    let (x0, x1, y0, y1) = (x as u32, (x >> 32) as u32, y as u32, (y >> 32) as u32);
    let lo = clmul32(x0, y0);
    let hi = clmul32(x1, y1);
    let mid = clmul32(x0 ^ x1, y0 ^ y1) ^ lo ^ hi;
    u128::from(lo) ^ (u128::from(mid) << 32) ^ (u128::from(hi) << 64)
}

/// Carry-less 32 × 32 -> 64-bit product with holes of four bits: a part
/// holds at most 8 bits, so coefficients stay below 2^4; 16 `umull`s.
#[inline(always)]
fn clmul32(x: u32, y: u32) -> u64 {
    const M: [u32; 4] = [
        spaced(0, 4, 32) as u32,
        spaced(1, 4, 32) as u32,
        spaced(2, 4, 32) as u32,
        spaced(3, 4, 32) as u32,
    ];
    const W: [u64; 4] = [
        spaced(0, 4, 64) as u64,
        spaced(1, 4, 64) as u64,
        spaced(2, 4, 64) as u64,
        spaced(3, 4, 64) as u64,
    ];
    let xs = M.map(|m| u64::from(x & m));
    let ys = M.map(|m| u64::from(y & m));
    let mut z = [0u64; 4];
    for (i, xi) in xs.iter().enumerate() {
        for (j, yj) in ys.iter().enumerate() {
            z[(i + j) % 4] ^= xi * yj;
        }
    }
    (z[0] & W[0]) | (z[1] & W[1]) | (z[2] & W[2]) | (z[3] & W[3])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit-by-bit carry-less product, the definition.
    fn clmul_ref(x: u64, y: u64) -> u128 {
        (0..64)
            .filter(|i| (y >> i) & 1 == 1)
            .fold(0, |acc, i| acc ^ (u128::from(x) << i))
    }

    #[test]
    fn clmul64_matches_definition() {
        let mut s = 0x0123_4567_89ab_cdefu64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let edge = [0, 1, u64::MAX, 1 << 63, 0x8000_0000_0000_0001, REDUCE];
        // Both variants on every target (one of them is the target's).
        let check = |a: u64, b: u64| {
            let want = clmul_ref(a, b);
            assert_eq!(clmul64_wide(a, b), want, "wide {a:x} {b:x}");
            assert_eq!(clmul64_narrow(a, b), want, "narrow {a:x} {b:x}");
        };
        for &a in &edge {
            for &b in &edge {
                check(a, b);
            }
        }
        for _ in 0..10_000 {
            check(next(), next());
        }
    }
}
