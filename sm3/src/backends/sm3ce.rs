//! aarch64 with the ARMv8.2 SM3 instructions (`sm3ss1`, `sm3tt1a/b`,
//! `sm3tt2a/b`, `sm3partw1/2`). They are unstable as intrinsics, so each
//! is one small `asm!` (Rust's target feature `sm4` covers SM3 and SM4);
//! the compiler allocates and schedules the registers around them.
//!
//! Register layout: `abcd` holds `(D, C, B, A)` in lanes 0..3 and `efgh`
//! holds `(H, G, F, E)`, as the instructions expect.

use core::arch::aarch64::*;
use core::arch::asm;

/// The rotated round constants (`soft::T`) as one static table, for `ld4`.
static T: [u32; 64] = super::soft::T;

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

/// The next four round constants, one in lane 3 of each register (the only
/// lane `sm3ss1` reads; the other lanes hold whatever the registers held),
/// and `p` past them: one `ld4` with post-increment. As an intrinsic
/// (`vld4q_lane_u32`) the compiler addressed each group's constants with an
/// `add` of its own.
///
/// # Safety
/// `*p` must point to 4 readable `u32`.
#[target_feature(enable = "neon")]
#[inline]
unsafe fn ld4_lane3(p: &mut *const u32) -> [uint32x4_t; 4] {
    let (k0, k1, k2, k3);
    // SAFETY: the caller guarantees 16 readable bytes at `*p`; the
    // instruction is plain NEON (checked with the SM3 instructions at
    // construction).
    unsafe {
        asm!(
            "ld4 {{v20.s, v21.s, v22.s, v23.s}}[3], [{p}], #16",
            p = inout(reg) *p,
            out("v20") k0, out("v21") k1, out("v22") k2, out("v23") k3,
            // Not `pure`: the compiler would hoist the 64 constants out of
            // the block loop and keep them on the stack.
            options(readonly, nostack, preserves_flags)
        );
    }
    [k0, k1, k2, k3]
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
    for block in blocks {
        // SAFETY: each load reads 16 bytes inside the 64-byte `block`.
        let [w0, w1, w2, w3]: [uint32x4_t; 4] = core::array::from_fn(|i| unsafe {
            vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(block.as_ptr().add(16 * i))))
        });
        let (abcd0, efgh0) = (abcd, efgh);
        let mut t = T.as_ptr();
        // Four rounds (group g) from `W[4g..4g + 4]` (`wa`) and
        // `W[4g + 4..4g + 8]` (`wb`), so `W'` is `wa ^ wb`. Written out 16
        // times below with the message words as named values: no array to
        // rotate, no loop counter, one `ld4` of constants per group.
        macro_rules! g4 {
            ($tt1:ident, $tt2:ident, $wa:expr, $wb:expr) => {
                // SAFETY: `T` has 64 words and `t` moves 4 of them per
                // group, 16 groups per block from `T.as_ptr()`.
                let k = unsafe { ld4_lane3(&mut t) };
                let wp = veorq_u32($wa, $wb);
                let s = ss1(abcd, efgh, k[0]);
                abcd = $tt1::<0>(abcd, s, wp);
                efgh = $tt2::<0>(efgh, s, $wa);
                let s = ss1(abcd, efgh, k[1]);
                abcd = $tt1::<1>(abcd, s, wp);
                efgh = $tt2::<1>(efgh, s, $wa);
                let s = ss1(abcd, efgh, k[2]);
                abcd = $tt1::<2>(abcd, s, wp);
                efgh = $tt2::<2>(efgh, s, $wa);
                let s = ss1(abcd, efgh, k[3]);
                abcd = $tt1::<3>(abcd, s, wp);
                efgh = $tt2::<3>(efgh, s, $wa);
            };
        }
        let w4 = expand4(w0, w1, w2, w3);
        g4!(tt1a, tt2a, w0, w1);
        let w5 = expand4(w1, w2, w3, w4);
        g4!(tt1a, tt2a, w1, w2);
        let w6 = expand4(w2, w3, w4, w5);
        g4!(tt1a, tt2a, w2, w3);
        let w7 = expand4(w3, w4, w5, w6);
        g4!(tt1a, tt2a, w3, w4);
        let w8 = expand4(w4, w5, w6, w7);
        g4!(tt1b, tt2b, w4, w5);
        let w9 = expand4(w5, w6, w7, w8);
        g4!(tt1b, tt2b, w5, w6);
        let w10 = expand4(w6, w7, w8, w9);
        g4!(tt1b, tt2b, w6, w7);
        let w11 = expand4(w7, w8, w9, w10);
        g4!(tt1b, tt2b, w7, w8);
        let w12 = expand4(w8, w9, w10, w11);
        g4!(tt1b, tt2b, w8, w9);
        let w13 = expand4(w9, w10, w11, w12);
        g4!(tt1b, tt2b, w9, w10);
        let w14 = expand4(w10, w11, w12, w13);
        g4!(tt1b, tt2b, w10, w11);
        let w15 = expand4(w11, w12, w13, w14);
        g4!(tt1b, tt2b, w11, w12);
        let w16 = expand4(w12, w13, w14, w15);
        g4!(tt1b, tt2b, w12, w13);
        g4!(tt1b, tt2b, w13, w14);
        g4!(tt1b, tt2b, w14, w15);
        g4!(tt1b, tt2b, w15, w16);
        abcd = veorq_u32(abcd, abcd0);
        efgh = veorq_u32(efgh, efgh0);
    }
    // SAFETY: `state` holds 32 writable bytes.
    unsafe {
        vst1q_u32(state.as_mut_ptr(), reverse(abcd));
        vst1q_u32(state.as_mut_ptr().add(4), reverse(efgh));
    }
}
