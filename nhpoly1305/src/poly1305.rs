//! Poly1305 arithmetic modulo 2^130 - 5 with three 64-bit limbs of
//! 44/44/42 bits and `u128` products. Straight-line code: no branch and no
//! memory index depends on the key, the accumulator or the message.

const MASK44: u64 = (1 << 44) - 1;
const MASK42: u64 = (1 << 42) - 1;
/// 2^128 expressed in the top limb (which starts at bit 88).
const HIBIT: u64 = 1 << 40;

/// The raw Poly1305 evaluation state: powers of the clamped key `r` and the
/// accumulator `h`.
#[derive(Clone)]
pub(crate) struct PolyCore {
    /// `r^(k+1)` for k = 0..4, each as limbs `[p0, p1, p2, p1 * 20, p2 * 20]`
    /// (the `* 20` factors serve the products that wrap past 2^130).
    pw: [[u64; 5]; 4],
    /// The clamped `r` as two 64-bit words, for the short radix-2^64 path
    /// ([`PolyCore::nh_oneshot`]).
    r64: [u64; 2],
    /// NHPoly1305's accumulator, radix 2^64 (`h0 + h1 2^64 + h2 2^128`,
    /// `h2 <= 4`): see [`PolyCore::nh_value`]. Poly1305 uses `h`.
    h64: [u64; 3],
    h: [u64; 3],
}

#[inline(always)]
fn m(a: u64, b: u64) -> u128 {
    (a as u128) * (b as u128)
}

/// Add `a * p` (p a power of r, see [`PolyCore::pw`]) into the column sums.
#[inline(always)]
fn mac(d: &mut [u128; 3], a: [u64; 3], p: &[u64; 5]) {
    d[0] += m(a[0], p[0]) + m(a[1], p[4]) + m(a[2], p[3]);
    d[1] += m(a[0], p[1]) + m(a[1], p[0]) + m(a[2], p[4]);
    d[2] += m(a[0], p[2]) + m(a[1], p[1]) + m(a[2], p[0]);
}

/// Carry-propagate the three 128-bit column sums into 44/44/42-bit limbs
/// (the top limb folded back times 5); limbs may exceed their width by a
/// few bits, which the next multiplication absorbs.
#[inline(always)]
fn carry(d: [u128; 3]) -> [u64; 3] {
    let [d0, mut d1, mut d2] = d;
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

/// `a * p mod p` fully carried (every limb within its width), as a power
/// entry.
fn power(a: [u64; 3], p: &[u64; 5]) -> [u64; 5] {
    let mut d = [0u128; 3];
    mac(&mut d, a, p);
    let mut x = carry(d);
    x[2] += x[1] >> 44;
    x[1] &= MASK44;
    x[0] += (x[2] >> 42) * 5;
    x[2] &= MASK42;
    x[1] += x[0] >> 44;
    x[0] &= MASK44;
    [x[0], x[1], x[2], x[1] * 20, x[2] * 20]
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

/// A full 16-byte block as limbs (2^128 added).
#[inline(always)]
fn block(b: &[u8]) -> [u64; 3] {
    let (lo, hi) = b.split_at(8);
    let t0 = u64::from_le_bytes(lo.try_into().unwrap_or_default());
    let t1 = u64::from_le_bytes(hi.try_into().unwrap_or_default());
    limbs(t0, t1, HIBIT)
}

/// A final partial block (1..=15 bytes) as limbs: 0x01 appended, then
/// zeros, 2^128 not added.
#[inline(always)]
fn partial(data: &[u8]) -> [u64; 3] {
    let mut b = [0u8; 16];
    b[..data.len()].copy_from_slice(data);
    b[data.len()] = 1;
    let (lo, hi) = b.split_at(8);
    let t0 = u64::from_le_bytes(lo.try_into().unwrap_or_default());
    let t1 = u64::from_le_bytes(hi.try_into().unwrap_or_default());
    limbs(t0, t1, 0)
}

#[inline(always)]
fn add(a: [u64; 3], b: [u64; 3]) -> [u64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
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
        let p1 = [r0, r1, r2, r1 * 20, r2 * 20];
        let r = [r0, r1, r2];
        let p2 = power(r, &p1);
        let p3 = power(r, &p2);
        let p4 = power(r, &p3);
        PolyCore {
            pw: [p1, p2, p3, p4],
            r64: [t0 & 0x0fff_fffc_0fff_ffff, t1 & 0x0fff_fffc_0fff_fffc],
            h: [0; 3],
            h64: [0; 3],
        }
    }

    /// Restart with an empty message, keeping `r`.
    #[inline]
    pub(crate) fn reset(&mut self) {
        self.h = [0; 3];
        self.h64 = [0; 3];
    }

    /// Absorb full 16-byte blocks (`data.len()` a multiple of 16): four at
    /// a time as `(h + m1) r^4 + m2 r^3 + m3 r^2 + m4 r` (independent
    /// products, one carry), then one at a time.
    #[inline]
    pub(crate) fn blocks(&mut self, data: &[u8]) {
        let mut quads = data.chunks_exact(64);
        for q in &mut quads {
            let mut d = [0u128; 3];
            mac(&mut d, add(self.h, block(&q[..16])), &self.pw[3]);
            mac(&mut d, block(&q[16..32]), &self.pw[2]);
            mac(&mut d, block(&q[32..48]), &self.pw[1]);
            mac(&mut d, block(&q[48..]), &self.pw[0]);
            self.h = carry(d);
        }
        for b in quads.remainder().chunks_exact(16) {
            self.absorb(block(b));
        }
    }

    /// `h` after absorbing `data` (any length: a final partial block is
    /// padded with 0x01 and zeros, without 2^128), `self.h` untouched (for
    /// [`PolyCore::oneshot`]). Four blocks at a time as in
    /// [`PolyCore::blocks`], the last 1..3 (and a partial one) one at a
    /// time: with scalar products a combined step with the powers costs
    /// more (register pressure) than the short chain it saves (measured).
    #[inline]
    fn eval(&self, mut h: [u64; 3], data: &[u8]) -> [u64; 3] {
        let mut quads = data.chunks_exact(64);
        for q in &mut quads {
            let mut d = [0u128; 3];
            mac(&mut d, add(h, block(&q[..16])), &self.pw[3]);
            mac(&mut d, block(&q[16..32]), &self.pw[2]);
            mac(&mut d, block(&q[32..48]), &self.pw[1]);
            mac(&mut d, block(&q[48..]), &self.pw[0]);
            h = carry(d);
        }
        for b in quads.remainder().chunks(16) {
            let t = if b.len() == 16 { block(b) } else { partial(b) };
            let mut d = [0u128; 3];
            mac(&mut d, add(h, t), &self.pw[0]);
            h = carry(d);
        }
        h
    }

    /// Poly1305 (no `s`) of the whole of `data` from a zero accumulator,
    /// without touching `self`: see [`PolyCore::eval`].
    #[inline]
    pub(crate) fn oneshot(&self, data: &[u8]) -> [u8; 16] {
        if data.len() > 64 {
            return emit(self.eval([0; 3], data));
        }
        emit64(self.short64([0; 3], data))
    }

    /// Poly1305 (no `s`) of `first ‖ data` from a zero accumulator, without
    /// building the concatenation (Adiantum's `bitlen ‖ tweak` header).
    #[inline]
    pub(crate) fn oneshot_prefixed(&self, first: &[u8; 16], data: &[u8]) -> [u8; 16] {
        if data.len() > 48 {
            let h = self.eval([0; 3], first);
            return emit(self.eval(h, data));
        }
        emit64(self.short64([0; 3], &[first.as_slice(), data]))
    }

    /// A short message (at most 64 bytes in all; the pieces after the first
    /// must start on a block boundary, i.e. every piece but the last is a
    /// multiple of 16 bytes) block by block in radix 2^64: fewer
    /// instructions per block than the 44-bit limbs. Full blocks are read
    /// in place; only a final partial block is copied.
    #[inline]
    fn short64<'a>(&self, mut h: [u64; 3], pieces: impl Pieces<'a>) -> [u64; 3] {
        let [r0, r1] = self.r64;
        pieces.for_each(|data| {
            let mut blocks = data.chunks_exact(16);
            for b in &mut blocks {
                let (lo, hi) = b.split_at(8);
                let lo = u64::from_le_bytes(lo.try_into().unwrap_or_default());
                let hi = u64::from_le_bytes(hi.try_into().unwrap_or_default());
                h = mul_r64(add64(h, lo, hi, 1), r0, r1);
            }
            let tail = blocks.remainder();
            if !tail.is_empty() {
                let mut buf = [0u8; 16];
                buf[..tail.len()].copy_from_slice(tail);
                buf[tail.len()] = 1;
                let (lo, hi) = buf.split_at(8);
                let lo = u64::from_le_bytes(lo.try_into().unwrap_or_default());
                let hi = u64::from_le_bytes(hi.try_into().unwrap_or_default());
                h = mul_r64(add64(h, lo, hi, 0), r0, r1);
            }
        });
        h
    }

    /// `h = (h + b) r`.
    #[inline(always)]
    fn absorb(&mut self, b: [u64; 3]) {
        let mut d = [0u128; 3];
        mac(&mut d, add(self.h, b), &self.pw[0]);
        self.h = carry(d);
    }

    /// Absorb a final partial block (1..=15 bytes): a 0x01 byte is appended,
    /// then zeros, and 2^128 is not added.
    #[inline]
    pub(crate) fn last_partial(&mut self, data: &[u8]) {
        self.absorb(partial(data));
    }

    /// Absorb one NH output (four 64-bit sums = 32 bytes = two full blocks)
    /// into the radix-2^64 accumulator `h64` (NHPoly1305's; emitted by
    /// [`PolyCore::emit_nh`]): `((h + b1) r + b2) r`, two products by the
    /// clamped `r` of 6 multiplications each, fewer instructions than one
    /// step with `r^2` in the 44-bit limbs.
    #[inline(always)]
    pub(crate) fn nh_value(&mut self, sums: &[u64; 4]) {
        let [r0, r1] = self.r64;
        let h = add64(self.h64, sums[0], sums[1], 1);
        let h = add64(mul_r64(h, r0, r1), sums[2], sums[3], 1);
        self.h64 = mul_r64(h, r0, r1);
    }

    /// NHPoly1305's result: the radix-2^64 accumulator fully reduced, mod
    /// 2^128, little-endian.
    #[inline]
    pub(crate) fn emit_nh(&self) -> [u8; 16] {
        emit64(self.h64)
    }

    /// The hash of a message of one NH value, `(b1 r + b2) r`, from a zero
    /// accumulator, emitted; `self` untouched. In radix 2^64 (two
    /// multiplications by the clamped `r`, 6 products each): fewer
    /// instructions and a shorter chain than one step with `r^2` in the
    /// 44-bit limbs, and it is on Adiantum's critical path twice.
    #[inline]
    pub(crate) fn nh_oneshot(&self, sums: &[u64; 4]) -> [u8; 16] {
        let [r0, r1] = self.r64;
        let h = mul_r64([sums[0], sums[1], 1], r0, r1);
        emit64(mul_r64(add64(h, sums[2], sums[3], 1), r0, r1))
    }

    /// The accumulator fully reduced modulo 2^130 - 5, then taken mod 2^128,
    /// little-endian. No `s` is added.
    #[inline]
    pub(crate) fn emit(&self) -> [u8; 16] {
        emit(self.h)
    }

    #[cfg(feature = "zeroize")]
    pub(crate) fn wipe(&mut self) {
        use zeroize::Zeroize;
        for p in &mut self.pw {
            p.zeroize();
        }
        self.h.zeroize();
        self.r64.zeroize();
        self.h64.zeroize();
    }
}

/// One byte string, or several in order, for [`PolyCore::short64`].
trait Pieces<'a> {
    fn for_each(self, f: impl FnMut(&'a [u8]));
}

impl<'a> Pieces<'a> for &'a [u8] {
    #[inline(always)]
    fn for_each(self, mut f: impl FnMut(&'a [u8])) {
        f(self);
    }
}

impl<'a, const N: usize> Pieces<'a> for &[&'a [u8]; N] {
    #[inline(always)]
    fn for_each(self, mut f: impl FnMut(&'a [u8])) {
        for p in self {
            f(p);
        }
    }
}

/// `a + b + carry` and the carry out (`u64::carrying_add` needs Rust 1.91;
/// the MSRV is 1.89).
#[inline(always)]
fn adc(a: u64, b: u64, carry: bool) -> (u64, bool) {
    let (x, k1) = a.overflowing_add(b);
    let (y, k2) = x.overflowing_add(u64::from(carry));
    (y, k1 | k2)
}

/// `h + (lo + hi 2^64 + hibit 2^128)` (`hibit` 1 for a full block, 0 for
/// a padded partial one) for a radix-2^64 accumulator with `h2 <= 4`; the
/// result has `h2 <= 6`.
#[inline(always)]
fn add64(h: [u64; 3], lo: u64, hi: u64, hibit: u64) -> [u64; 3] {
    let (h0, k) = h[0].overflowing_add(lo);
    let (h1, k) = adc(h[1], hi, k);
    [h0, h1, h[2] + hibit + u64::from(k)]
}

/// `h r mod 2^130 - 5`, partially reduced, in radix 2^64: `h = h0 + h1 2^64
/// + h2 2^128` with `h2 < 8`, `r = r0 + r1 2^64` clamped (`r0, r1 < 2^60`,
/// `r1` a multiple of 4, so `r1 2^128 = (r1 / 4) 2^130 = 5 r1 / 4` mod p).
/// The result has `h2 <= 4`.
#[inline(always)]
fn mul_r64(h: [u64; 3], r0: u64, r1: u64) -> [u64; 3] {
    let s1 = r1 + (r1 >> 2);
    // Each column sum stays below 2^127 (products below 2^124 and 2^125).
    let d0 = m(h[0], r0) + m(h[1], s1);
    // `h2 s1 < 8 * 2^61` fits a 64-bit product (one `imul`, not a full
    // 128-bit multiply).
    let d1 = m(h[0], r1) + m(h[1], r0) + (h[2] * s1) as u128 + (d0 >> 64);
    let d2 = h[2] * r0 + (d1 >> 64) as u64;
    // Fold the bits at 2^130 and up back in, times 5.
    let c = (d2 & !3) + (d2 >> 2);
    let (h0, k) = (d0 as u64).overflowing_add(c);
    let (h1, k) = adc(d1 as u64, 0, k);
    [h0, h1, (d2 & 3) + u64::from(k)]
}

/// [`emit`] for a radix-2^64 accumulator with `h2 <= 7` (below `2p`): one
/// conditional subtraction of `p`, by mask.
#[inline(always)]
fn emit64(h: [u64; 3]) -> [u8; 16] {
    let (g0, k) = h[0].overflowing_add(5);
    let (g1, k) = adc(h[1], 0, k);
    let g2 = h[2] + u64::from(k);
    let take_g = 0u64.wrapping_sub(g2 >> 2); // all ones when h + 5 >= 2^130
    let lo = (h[0] & !take_g) | (g0 & take_g);
    let hi = (h[1] & !take_g) | (g1 & take_g);
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&lo.to_le_bytes());
    out[8..].copy_from_slice(&hi.to_le_bytes());
    out
}

/// The accumulator fully reduced modulo 2^130 - 5, then taken mod 2^128,
/// little-endian. No `s` is added.
#[inline]
fn emit(h: [u64; 3]) -> [u8; 16] {
    let [mut h0, mut h1, mut h2] = h;
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

#[cfg(test)]
mod tests {
    use super::PolyCore;

    /// The radix-2^64 NH paths against the 44-bit limbs, with extreme
    /// keys and NH values (all-ones sums push both representations to
    /// their bounds) and a simple generator for the rest.
    #[test]
    fn nh_oneshot_matches_limbs() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        // Under Miri, every kind of case a few times.
        for i in 0..if cfg!(miri) { 100 } else { 2000 } {
            let mut r = [0u8; 16];
            for c in r.chunks_exact_mut(8) {
                c.copy_from_slice(&next().to_le_bytes());
            }
            let mut sums = [next(), next(), next(), next()];
            match i % 5 {
                0 => r = [0xff; 16],
                1 => sums = [u64::MAX; 4],
                2 => {
                    r = [0xff; 16];
                    sums = [u64::MAX; 4];
                }
                3 => sums = [0; 4],
                _ => {}
            }
            let p = PolyCore::new(&r);
            let mut bytes = [0u8; 32];
            for (b, s) in bytes.chunks_exact_mut(8).zip(sums) {
                b.copy_from_slice(&s.to_le_bytes());
            }
            let mut q = p.clone();
            q.blocks(&bytes);
            let want = q.emit();
            assert_eq!(p.nh_oneshot(&sums), want, "case {i}");
            let mut n = p.clone();
            n.nh_value(&sums);
            assert_eq!(n.emit_nh(), want, "case {i}");
            // Two values in a row (the accumulator carried over).
            let mut q2 = q.clone();
            q2.blocks(&bytes);
            n.nh_value(&sums);
            assert_eq!(n.emit_nh(), q2.emit(), "case {i} twice");
        }
    }
}
