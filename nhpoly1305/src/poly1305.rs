//! Poly1305 arithmetic modulo 2^130 - 5 with three 64-bit limbs of
//! 44/44/42 bits and `u128` products. Straight-line code: no branch and no
//! memory index depends on the key, the accumulator or the message.

const MASK44: u64 = (1 << 44) - 1;
const MASK42: u64 = (1 << 42) - 1;
/// 2^128 expressed in the top limb (which starts at bit 88).
const HIBIT: u64 = 1 << 40;

/// The raw Poly1305 evaluation state: clamped key `r` and accumulator `h`.
#[derive(Clone)]
pub(crate) struct PolyCore {
    r: [u64; 3],
    /// `r1 * 20` and `r2 * 20`: the factors for products that wrap past 2^130.
    s: [u64; 2],
    /// `r^2 mod p` in limbs, and its `r1 * 20`, `r2 * 20`: two blocks at once.
    rr: [u64; 3],
    ss: [u64; 2],
    h: [u64; 3],
}

#[inline(always)]
fn m(a: u64, b: u64) -> u128 {
    (a as u128) * (b as u128)
}

/// Carry-propagate the three 128-bit column sums into 44/44/42-bit limbs
/// (the top limb folded back times 5); limbs may exceed their width by a
/// few bits, which the next multiplication absorbs.
#[inline(always)]
fn carry(d0: u128, mut d1: u128, mut d2: u128) -> [u64; 3] {
    let h0 = (d0 as u64) & MASK44;
    d1 += d0 >> 44;
    let h1 = (d1 as u64) & MASK44;
    d2 += d1 >> 44;
    let h2 = (d2 as u64) & MASK42;
    let c = (d2 >> 42) as u64;
    let h0 = h0 + c * 5;
    let h1 = h1 + (h0 >> 44);
    [h0 & MASK44, h1, h2]
}

/// `a * r mod p` (partly reduced), `s` = `[r1 * 20, r2 * 20]`.
#[inline(always)]
fn mul(a: [u64; 3], r: [u64; 3], s: [u64; 2]) -> [u64; 3] {
    let d0 = m(a[0], r[0]) + m(a[1], s[1]) + m(a[2], s[0]);
    let d1 = m(a[0], r[1]) + m(a[1], r[0]) + m(a[2], s[1]);
    let d2 = m(a[0], r[2]) + m(a[1], r[1]) + m(a[2], r[0]);
    carry(d0, d1, d2)
}

/// Split a 16-byte block (two little-endian halves) into limbs.
#[inline(always)]
fn limbs(t0: u64, t1: u64, hibit: u64) -> [u64; 3] {
    [
        t0 & MASK44,
        ((t0 >> 44) | (t1 << 20)) & MASK44,
        ((t1 >> 24) & MASK42) | hibit,
    ]
}

impl PolyCore {
    /// Set up with key `r` (clamped here) and a zero accumulator.
    #[inline]
    pub(crate) fn new(r: &[u8; 16]) -> Self {
        let (lo, hi) = r.split_at(8);
        let t0 = u64::from_le_bytes(lo.try_into().unwrap_or_default());
        let t1 = u64::from_le_bytes(hi.try_into().unwrap_or_default());
        // Clamping (r &= 0x0ffffffc0ffffffc0ffffffc0fffffff) folded into the
        // limb masks.
        let r0 = t0 & 0x0ffc_0fff_ffff;
        let r1 = ((t0 >> 44) | (t1 << 20)) & 0x0fff_ffc0_ffff;
        let r2 = (t1 >> 24) & 0x000f_ffff_fc0f;
        let r = [r0, r1, r2];
        let s = [r1 * 20, r2 * 20];
        // r^2, carried until every limb is within its width so that the
        // `* 20` factors stay small.
        let mut rr = mul(r, r, s);
        rr[2] += rr[1] >> 44;
        rr[1] &= MASK44;
        rr[0] += (rr[2] >> 42) * 5;
        rr[2] &= MASK42;
        rr[1] += rr[0] >> 44;
        rr[0] &= MASK44;
        PolyCore {
            r,
            s,
            ss: [rr[1] * 20, rr[2] * 20],
            rr,
            h: [0; 3],
        }
    }

    /// Restart with an empty message, keeping `r`.
    #[inline]
    pub(crate) fn reset(&mut self) {
        self.h = [0; 3];
    }

    /// Absorb one 16-byte block given as two little-endian halves; `hibit`
    /// is `true` for a full block (adds 2^128).
    #[inline(always)]
    fn block_words(&mut self, t0: u64, t1: u64, hibit: u64) {
        let b = limbs(t0, t1, hibit);
        let h = [self.h[0] + b[0], self.h[1] + b[1], self.h[2] + b[2]];
        self.h = mul(h, self.r, self.s);
    }

    /// Absorb full 16-byte blocks (`data.len()` a multiple of 16).
    #[inline]
    pub(crate) fn blocks(&mut self, data: &[u8]) {
        for b in data.chunks_exact(16) {
            let (lo, hi) = b.split_at(8);
            let t0 = u64::from_le_bytes(lo.try_into().unwrap_or_default());
            let t1 = u64::from_le_bytes(hi.try_into().unwrap_or_default());
            self.block_words(t0, t1, HIBIT);
        }
    }

    /// Absorb a final partial block (1..=15 bytes): a 0x01 byte is appended,
    /// then zeros, and 2^128 is not added.
    #[inline]
    pub(crate) fn last_partial(&mut self, data: &[u8]) {
        let mut b = [0u8; 16];
        b[..data.len()].copy_from_slice(data);
        b[data.len()] = 1;
        let (lo, hi) = b.split_at(8);
        let t0 = u64::from_le_bytes(lo.try_into().unwrap_or_default());
        let t1 = u64::from_le_bytes(hi.try_into().unwrap_or_default());
        self.block_words(t0, t1, 0);
    }

    /// Absorb one NH output (four 64-bit sums = 32 bytes = two full blocks).
    #[inline(always)]
    pub(crate) fn nh_value(&mut self, sums: &[u64; 4]) {
        // ((h + b1) r + b2) r = (h + b1) r^2 + b2 r: the two products are
        // independent, which halves the dependency chain through `h`.
        let b1 = limbs(sums[0], sums[1], HIBIT);
        let b2 = limbs(sums[2], sums[3], HIBIT);
        let a = [self.h[0] + b1[0], self.h[1] + b1[1], self.h[2] + b1[2]];
        let (r, s, rr, ss) = (self.r, self.s, self.rr, self.ss);
        let d0 = m(a[0], rr[0]) + m(a[1], ss[1]) + m(a[2], ss[0]);
        let d1 = m(a[0], rr[1]) + m(a[1], rr[0]) + m(a[2], ss[1]);
        let d2 = m(a[0], rr[2]) + m(a[1], rr[1]) + m(a[2], rr[0]);
        let e0 = m(b2[0], r[0]) + m(b2[1], s[1]) + m(b2[2], s[0]);
        let e1 = m(b2[0], r[1]) + m(b2[1], r[0]) + m(b2[2], s[1]);
        let e2 = m(b2[0], r[2]) + m(b2[1], r[1]) + m(b2[2], r[0]);
        self.h = carry(d0 + e0, d1 + e1, d2 + e2);
    }

    /// The accumulator fully reduced modulo 2^130 - 5, then taken mod 2^128,
    /// little-endian. No `s` is added.
    #[inline]
    pub(crate) fn emit(&self) -> [u8; 16] {
        let [mut h0, mut h1, mut h2] = self.h;
        // Full carry propagation (twice, so every limb is in range).
        for _ in 0..2 {
            h2 += h1 >> 44;
            h1 &= MASK44;
            h0 += (h2 >> 42) * 5;
            h2 &= MASK42;
            h1 += h0 >> 44;
            h0 &= MASK44;
        }
        // g = h + 5 - 2^130; take g when it does not borrow (h >= p).
        let g0 = h0 + 5;
        let g1 = h1 + (g0 >> 44);
        let g2 = (h2 + (g1 >> 44)).wrapping_sub(1 << 42);
        let g0 = g0 & MASK44;
        let g1 = g1 & MASK44;
        let take_g = (g2 >> 63).wrapping_sub(1); // all ones when no borrow
        h0 = (h0 & !take_g) | (g0 & take_g);
        h1 = (h1 & !take_g) | (g1 & take_g);
        h2 = (h2 & !take_g) | (g2 & take_g);
        let lo = h0 | (h1 << 44);
        let hi = (h1 >> 20) | (h2 << 24);
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&lo.to_le_bytes());
        out[8..].copy_from_slice(&hi.to_le_bytes());
        out
    }

    #[cfg(feature = "zeroize")]
    pub(crate) fn wipe(&mut self) {
        use zeroize::Zeroize;
        self.r.zeroize();
        self.s.zeroize();
        self.rr.zeroize();
        self.ss.zeroize();
        self.h.zeroize();
    }
}
