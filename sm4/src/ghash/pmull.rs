//! GHASH with PMULL/PMULL2 (the `pmull` engine, beside the `neon` and
//! `sm4ce` SM4 kernels on cores with the `aes` extension): eight blocks per
//! reduction.
//!
//! As `clmul`: blocks byte-reversed on load (`rev64` and swapping
//! the halves) into the POLYVAL-domain integers of `crate::ghash`,
//! schoolbook products (`pmull` low·low, `pmull2` high·high, and the cross
//! terms from the block with its halves swapped), summed unreduced over
//! the group and reduced with two more `pmull`s. Eight independent
//! products cover the multiplier's latency on in-order and out-of-order
//! cores alike.

use crate::block::Blk;
use crate::ghash::{GhashKey, REDUCE};
use core::arch::aarch64::*;

type V = uint64x2_t;

ghash_token!(
    PmullGhash,
    "NEON and the AES extension (PMULL on 64-bit lanes)"
);
ghash_narrow_body!(features = "neon,aes", agg = 8);

#[inline]
#[target_feature(enable = "neon,aes")]
fn zero() -> V {
    vdupq_n_u64(0)
}

#[inline]
#[target_feature(enable = "neon,aes")]
fn xor(a: V, b: V) -> V {
    veorq_u64(a, b)
}

#[inline]
#[target_feature(enable = "neon,aes")]
fn load_state(s: &[u8; 16]) -> V {
    load_be(s)
}

#[inline]
#[target_feature(enable = "neon,aes")]
fn load_block(b: &Blk) -> V {
    load_be(&b.0)
}

#[inline]
#[target_feature(enable = "neon,aes")]
fn store_state(s: &mut [u8; 16], v: V) {
    store_be(s, v)
}

/// The unreduced sum of a group's products.
#[derive(Clone, Copy)]
struct Acc {
    lo: V,
    mid: V,
    hi: V,
}

/// A 128-bit carry-less product as two 64-bit lanes.
#[inline]
#[target_feature(enable = "neon,aes")]
fn p128(p: u128) -> V {
    vreinterpretq_u64_p128(p)
}

/// `acc += x·h`, or `acc = x·h` when `first`.
#[inline]
#[target_feature(enable = "neon,aes")]
fn mul_add(acc: &mut Acc, x: V, h: V, first: bool) {
    let xs = vextq_u64::<1>(x, x);
    let (xp, hp, xsp) = (
        vreinterpretq_p64_u64(x),
        vreinterpretq_p64_u64(h),
        vreinterpretq_p64_u64(xs),
    );
    let lo = p128(vmull_p64(vgetq_lane_u64::<0>(x), vgetq_lane_u64::<0>(h)));
    let hi = p128(vmull_high_p64(xp, hp));
    // x1·h0 and x0·h1.
    let m0 = p128(vmull_p64(vgetq_lane_u64::<0>(xs), vgetq_lane_u64::<0>(h)));
    let m1 = p128(vmull_high_p64(xsp, hp));
    if first {
        *acc = Acc {
            lo,
            mid: veorq_u64(m0, m1),
            hi,
        };
    } else {
        acc.lo = veorq_u64(acc.lo, lo);
        acc.mid = veorq_u64(acc.mid, veorq_u64(m0, m1));
        acc.hi = veorq_u64(acc.hi, hi);
    }
}

/// The sum times `x^-128`, reduced (as `ghash_clmul::reduce`).
#[inline]
#[target_feature(enable = "neon,aes")]
fn reduce(acc: Acc) -> V {
    let t = p128(vmull_p64(vgetq_lane_u64::<0>(acc.lo), REDUCE));
    let mid = veorq_u64(veorq_u64(acc.mid, t), vextq_u64::<1>(acc.lo, acc.lo));
    let t = p128(vmull_p64(vgetq_lane_u64::<0>(mid), REDUCE));
    veorq_u64(veorq_u64(acc.hi, t), vextq_u64::<1>(mid, mid))
}

/// 16 bytes reversed: the big-endian integer, low half in lane 0.
#[inline]
#[target_feature(enable = "neon,aes")]
fn load_be(p: &[u8; 16]) -> V {
    // SAFETY: `p` is 16 readable bytes; `vld1q_u8` has no alignment need.
    let v = vrev64q_u8(unsafe { vld1q_u8(p.as_ptr()) });
    let v = vreinterpretq_u64_u8(v);
    vextq_u64::<1>(v, v)
}

/// The inverse of [`load_be`].
#[inline]
#[target_feature(enable = "neon,aes")]
fn store_be(p: &mut [u8; 16], v: V) {
    let v = vreinterpretq_u8_u64(vextq_u64::<1>(v, v));
    // SAFETY: `p` is 16 writable bytes.
    unsafe { vst1q_u8(p.as_mut_ptr(), vrev64q_u8(v)) };
}

/// `pow[i]` of the key table.
#[inline]
#[target_feature(enable = "neon,aes")]
fn load_power(key: &GhashKey, i: usize) -> V {
    let p = key.pow[i];
    vcombine_u64(vcreate_u64(p as u64), vcreate_u64((p >> 64) as u64))
}
