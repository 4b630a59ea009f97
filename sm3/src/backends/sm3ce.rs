//! aarch64 with the ARMv8.2 SM3 instructions (`sm3ss1`, `sm3tt1a/b`,
//! `sm3tt2a/b`, `sm3partw1/2`). They are unstable as intrinsics, so each
//! is one small `asm!` (Rust's target feature `sm4` covers SM3 and SM4);
//! the compiler allocates and schedules the registers around them.
//!
//! Register layout: `abcd` holds `(D, C, B, A)` in lanes 0..3 and `efgh`
//! holds `(H, G, F, E)`, as the instructions expect.

use super::soft::T;
use core::arch::aarch64::*;
use core::arch::asm;

/// Compress `blocks` into `state`.
#[inline]
pub(crate) fn compress(state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    // SAFETY: a `Backend::Sm3ce` tag exists only after `cpu_sm3` found the
    // SM3/SM4 instructions on this CPU (`Backend::is_available`).
    unsafe { compress_ce(state, blocks) }
}

#[target_feature(enable = "neon,sm4")]
#[inline]
fn ss1(abcd: uint32x4_t, efgh: uint32x4_t, t: uint32x4_t) -> uint32x4_t {
    let r: uint32x4_t;
    // SAFETY: register-only instruction; the SM3 extension is enabled on
    // this function and checked at construction.
    unsafe {
        asm!(
            "sm3ss1 {r:v}.4s, {a:v}.4s, {e:v}.4s, {t:v}.4s",
            r = lateout(vreg) r, a = in(vreg) abcd, e = in(vreg) efgh, t = in(vreg) t,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    r
}

macro_rules! tt {
    ($name:ident, $insn:literal) => {
        #[target_feature(enable = "neon,sm4")]
        #[inline]
        fn $name<const I: u32>(x: uint32x4_t, ss1: uint32x4_t, w: uint32x4_t) -> uint32x4_t {
            let mut x = x;
            // SAFETY: register-only instruction; the SM3 extension is
            // enabled on this function and checked at construction.
            unsafe {
                asm!(
                    concat!($insn, " {x:v}.4s, {s:v}.4s, {w:v}.s[{i}]"),
                    x = inout(vreg) x, s = in(vreg) ss1, w = in(vreg) w, i = const I,
                    options(pure, nomem, nostack, preserves_flags)
                );
            }
            x
        }
    };
}
tt!(tt1a, "sm3tt1a");
tt!(tt1b, "sm3tt1b");
tt!(tt2a, "sm3tt2a");
tt!(tt2b, "sm3tt2b");

/// `W[j..j+4]` from `w0 = W[j-16..j-12]`, ..., `w3 = W[j-4..j]`.
#[target_feature(enable = "neon,sm4")]
#[inline]
fn expand4(w0: uint32x4_t, w1: uint32x4_t, w2: uint32x4_t, w3: uint32x4_t) -> uint32x4_t {
    let mut x = vextq_u32::<3>(w1, w2); // W[j-9..j-5]
    let w13 = vextq_u32::<3>(w0, w1); // W[j-13..j-9]
    let w6 = vextq_u32::<2>(w2, w3); // W[j-6..j-2]
    // SAFETY: register-only instructions; the SM3 extension is enabled on
    // this function and checked at construction.
    unsafe {
        asm!(
            "sm3partw1 {x:v}.4s, {w0:v}.4s, {w3:v}.4s",
            "sm3partw2 {x:v}.4s, {w6:v}.4s, {w13:v}.4s",
            x = inout(vreg) x, w0 = in(vreg) w0, w3 = in(vreg) w3,
            w6 = in(vreg) w6, w13 = in(vreg) w13,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    x
}

/// `(x3, x2, x1, x0)` from `(x0, x1, x2, x3)`.
#[target_feature(enable = "neon")]
#[inline]
fn reverse(x: uint32x4_t) -> uint32x4_t {
    let r = vrev64q_u32(x);
    vextq_u32::<2>(r, r)
}

#[target_feature(enable = "neon,sm4")]
fn compress_ce(state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    // SAFETY: `state` holds 32 readable bytes.
    let (mut abcd, mut efgh) = unsafe {
        (
            reverse(vld1q_u32(state.as_ptr())),
            reverse(vld1q_u32(state.as_ptr().add(4))),
        )
    };
    // The rotated round constants, each in lane 3.
    let t: [uint32x4_t; 64] = core::array::from_fn(|j| vsetq_lane_u32::<3>(T[j], vdupq_n_u32(0)));
    for block in blocks {
        // SAFETY: each load reads 16 bytes inside the 64-byte `block`.
        let mut w: [uint32x4_t; 4] = core::array::from_fn(|i| unsafe {
            vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(block.as_ptr().add(16 * i))))
        });
        let (abcd0, efgh0) = (abcd, efgh);
        macro_rules! r4 {
            ($tt1:ident, $tt2:ident, $k:expr) => {
                let k: usize = $k;
                // w = [W[4k..], W[4k+4..], W[4k+8..], W[4k+12..]].
                let wk = w[0];
                let wp = veorq_u32(w[0], w[1]);
                let s = ss1(abcd, efgh, t[4 * k]);
                abcd = $tt1::<0>(abcd, s, wp);
                efgh = $tt2::<0>(efgh, s, wk);
                let s = ss1(abcd, efgh, t[4 * k + 1]);
                abcd = $tt1::<1>(abcd, s, wp);
                efgh = $tt2::<1>(efgh, s, wk);
                let s = ss1(abcd, efgh, t[4 * k + 2]);
                abcd = $tt1::<2>(abcd, s, wp);
                efgh = $tt2::<2>(efgh, s, wk);
                let s = ss1(abcd, efgh, t[4 * k + 3]);
                abcd = $tt1::<3>(abcd, s, wp);
                efgh = $tt2::<3>(efgh, s, wk);
                if k < 13 {
                    let w4 = expand4(w[0], w[1], w[2], w[3]);
                    w = [w[1], w[2], w[3], w4];
                } else {
                    w = [w[1], w[2], w[3], w[3]];
                }
            };
        }
        r4!(tt1a, tt2a, 0);
        r4!(tt1a, tt2a, 1);
        r4!(tt1a, tt2a, 2);
        r4!(tt1a, tt2a, 3);
        for k in 4..16 {
            r4!(tt1b, tt2b, k);
        }
        abcd = veorq_u32(abcd, abcd0);
        efgh = veorq_u32(efgh, efgh0);
    }
    // SAFETY: `state` holds 32 writable bytes.
    unsafe {
        vst1q_u32(state.as_mut_ptr(), reverse(abcd));
        vst1q_u32(state.as_mut_ptr().add(4), reverse(efgh));
    }
}
