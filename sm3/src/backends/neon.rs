//! aarch64 NEON (for CPUs without the SM3 instructions): one message with
//! the message expansion four words at a time in vector registers and the
//! rounds in scalar registers; and 4 messages side by side, one per 32-bit
//! lane, for `digest_many`.

use super::lanes::Compress;
use super::lanes::engine::{self, Lane, MAX};
use super::soft::four_rounds;
use core::arch::aarch64::*;
use core::arch::asm;

/// An optimization barrier on one value: keeps the compiler from
/// re-associating `rol12(A) + T_j + E` (see `soft::round`).
#[inline(always)]
fn hide(mut x: u32) -> u32 {
    // SAFETY: an empty `asm!` that only claims to change `x` in a register.
    unsafe { asm!("/* {0:w} */", inout(reg) x, options(pure, nomem, nostack, preserves_flags)) };
    x
}

/// An optimization barrier on memory: the expanded words are stored by the
/// vector code and loaded by the scalar rounds (operands of `add`), instead
/// of the compiler forwarding each word with a vector-to-scalar extract.
#[inline(always)]
fn barrier(w: &mut [u32; 68], wp: &mut [u32; 64]) {
    // SAFETY: an empty `asm!`; it only makes the compiler assume the two
    // arrays may have been read or written.
    unsafe {
        asm!(
            "/* {0} {1} */",
            in(reg) w.as_mut_ptr(),
            in(reg) wp.as_mut_ptr(),
            options(nostack, preserves_flags)
        )
    };
}

/// Compress `blocks` into `state`.
#[inline]
pub(crate) fn compress(state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    // SAFETY: a `Backend::Neon` tag exists only when NEON is enabled at
    // compile time (`Backend::is_available`), so the CPU has it.
    unsafe { compress_neon(state, blocks) }
}

#[target_feature(enable = "neon")]
#[inline]
fn rol<const L: i32, const R: i32>(x: uint32x4_t) -> uint32x4_t {
    vsriq_n_u32::<R>(vshlq_n_u32::<L>(x), x)
}

macro_rules! vrol {
    ($x:expr, $n:literal) => {
        rol::<$n, { 32 - $n }>($x)
    };
}

#[target_feature(enable = "neon")]
#[inline]
fn vp1(x: uint32x4_t) -> uint32x4_t {
    veorq_u32(x, veorq_u32(vrol!(x, 15), vrol!(x, 23)))
}

/// `W[j..j+4]` from `x0 = W[j-16..j-12]`, ..., `x3 = W[j-4..j]`.
#[target_feature(enable = "neon")]
#[inline]
fn expand4(x0: uint32x4_t, x1: uint32x4_t, x2: uint32x4_t, x3: uint32x4_t) -> uint32x4_t {
    let zero = vdupq_n_u32(0);
    // W[j-9..j-5] and W[j-3..j] with a zero where W[j] would be.
    let w9 = vextq_u32::<3>(x1, x2);
    let w3 = vextq_u32::<1>(x3, zero);
    let x = veorq_u32(veorq_u32(x0, w9), vrol!(w3, 15));
    // W[j-13..j-9] and W[j-6..j-2].
    let w13 = vextq_u32::<3>(x0, x1);
    let w6 = vextq_u32::<2>(x2, x3);
    let y = veorq_u32(vrol!(w13, 7), w6);
    let r = veorq_u32(vp1(x), y);
    // Lane 3 needs rol15(W[j]) inside P1; P1 is linear, so add it now.
    let fix = vrol!(vextq_u32::<1>(zero, r), 15);
    veorq_u32(r, vp1(fix))
}

#[target_feature(enable = "neon")]
#[inline]
fn store4(dst: &mut [u32], v: uint32x4_t) {
    let dst: &mut [u32; 4] = (&mut dst[..4]).try_into().expect("4 words");
    // SAFETY: `dst` is 16 writable bytes; `vst1q` has no alignment need.
    unsafe { vst1q_u32(dst.as_mut_ptr(), v) }
}

#[target_feature(enable = "neon")]
fn compress_neon(state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    let mut w = [0u32; 68];
    let mut wp = [0u32; 64];
    for block in blocks {
        // SAFETY: each load reads 16 bytes inside the 64-byte `block`.
        let [mut x0, mut x1, mut x2, mut x3] = core::array::from_fn(|i| unsafe {
            vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(block.as_ptr().add(16 * i))))
        });
        store4(&mut w[0..], x0);
        store4(&mut w[4..], x1);
        store4(&mut w[8..], x2);
        store4(&mut w[12..], x3);
        store4(&mut wp[0..], veorq_u32(x0, x1));
        store4(&mut wp[4..], veorq_u32(x1, x2));
        store4(&mut wp[8..], veorq_u32(x2, x3));

        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
        macro_rules! r4 {
            ($hi:literal, $j:expr) => {
                let j = $j;
                if j + 16 < 68 {
                    let x4 = expand4(x0, x1, x2, x3);
                    store4(&mut w[j + 16..], x4);
                    store4(&mut wp[j + 12..], veorq_u32(x3, x4));
                    (x0, x1, x2, x3) = (x1, x2, x3, x4);
                }
                barrier(&mut w, &mut wp);
                four_rounds!($hi, j, [a, b, c, d, e, f, g, h], w, wp, hide);
            };
        }
        r4!(false, 0);
        r4!(false, 4);
        r4!(false, 8);
        r4!(false, 12);
        r4!(true, 16);
        r4!(true, 20);
        r4!(true, 24);
        r4!(true, 28);
        r4!(true, 32);
        r4!(true, 36);
        r4!(true, 40);
        r4!(true, 44);
        r4!(true, 48);
        r4!(true, 52);
        r4!(true, 56);
        r4!(true, 60);
        let _ = (x0, x1, x2, x3);
        for (s, v) in state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
            *s ^= v;
        }
    }
}

#[derive(Clone, Copy)]
struct V(uint32x4_t);

impl Lane for V {
    const N: usize = 4;
    const MIN_BUSY: usize = 2;

    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        // SAFETY: NEON per the trait contract.
        V(unsafe { vdupq_n_u32(x) })
    }
    #[inline(always)]
    unsafe fn load(src: &[u32; MAX]) -> Self {
        // SAFETY: `src` holds at least 16 readable bytes; NEON per the contract.
        V(unsafe { vld1q_u32(src.as_ptr()) })
    }
    #[inline(always)]
    unsafe fn store(self, dst: &mut [u32; MAX]) {
        // SAFETY: `dst` holds at least 16 writable bytes; NEON per the contract.
        unsafe { vst1q_u32(dst.as_mut_ptr(), self.0) }
    }
    #[inline(always)]
    unsafe fn add(self, o: Self) -> Self {
        // SAFETY: NEON per the trait contract.
        V(unsafe { vaddq_u32(self.0, o.0) })
    }
    #[inline(always)]
    unsafe fn xor(self, o: Self) -> Self {
        // SAFETY: NEON per the trait contract.
        V(unsafe { veorq_u32(self.0, o.0) })
    }
    #[inline(always)]
    unsafe fn xor3(self, b: Self, c: Self) -> Self {
        // SAFETY: NEON per the trait contract.
        V(unsafe { veorq_u32(veorq_u32(self.0, b.0), c.0) })
    }
    #[inline(always)]
    unsafe fn maj(self, b: Self, c: Self) -> Self {
        // Where a and b differ the majority is c, else a.
        // SAFETY: NEON per the trait contract.
        V(unsafe { vbslq_u32(veorq_u32(self.0, b.0), c.0, self.0) })
    }
    #[inline(always)]
    unsafe fn choose(self, f: Self, g: Self) -> Self {
        // SAFETY: NEON per the trait contract.
        V(unsafe { vbslq_u32(self.0, f.0, g.0) })
    }
    #[inline(always)]
    unsafe fn rol<const L: i32, const R: i32>(self) -> Self {
        // SAFETY: NEON per the trait contract.
        V(unsafe { vsriq_n_u32::<R>(vshlq_n_u32::<L>(self.0), self.0) })
    }

    /// Four 16-byte loads per block, byte swap, then four 4x4 transposes
    /// of 32-bit words.
    #[inline(always)]
    unsafe fn load_blocks(blocks: &[&[u8; 64]; MAX]) -> [Self; 16] {
        // SAFETY: each load reads 16 bytes inside one 64-byte block; NEON
        // per the trait contract.
        unsafe {
            let mut out = [V(vdupq_n_u32(0)); 16];
            for q in 0..4 {
                let [a, b, c, d]: [uint32x4_t; 4] = core::array::from_fn(|i| {
                    vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(blocks[i].as_ptr().add(16 * q))))
                });
                let (t0, t1) = (vtrn1q_u32(a, b), vtrn2q_u32(a, b));
                let (t2, t3) = (vtrn1q_u32(c, d), vtrn2q_u32(c, d));
                let w = |x: uint32x4_t| vreinterpretq_u64_u32(x);
                let n = |x: uint64x2_t| V(vreinterpretq_u32_u64(x));
                out[4 * q] = n(vtrn1q_u64(w(t0), w(t2)));
                out[4 * q + 1] = n(vtrn1q_u64(w(t1), w(t3)));
                out[4 * q + 2] = n(vtrn2q_u64(w(t0), w(t2)));
                out[4 * q + 3] = n(vtrn2q_u64(w(t1), w(t3)));
            }
            out
        }
    }
}

#[target_feature(enable = "neon")]
fn run(single: Compress, msgs: &[&[u8]], out: &mut [[u8; 32]]) {
    // SAFETY: this function has NEON enabled, and `digest_many` below only
    // calls it when the CPU has NEON.
    unsafe { engine::digest_many::<V>(single, msgs, out) }
}

/// Hash `msgs` 4 at a time.
pub(crate) fn digest_many(single: Compress, msgs: &[&[u8]], out: &mut [[u8; 32]]) {
    // SAFETY: `Lanes::Neon` is available only when NEON is enabled at
    // compile time (`Lanes::is_available`).
    unsafe { run(single, msgs, out) }
}
