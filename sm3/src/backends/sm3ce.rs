//! aarch64 with the ARMv8.2 SM3 instructions (`sm3ss1`, `sm3tt1a/b`,
//! `sm3tt2a/b`, `sm3partw1/2`). They are unstable as intrinsics, so each
//! group of four rounds is one `asm!` (Rust's target feature `sm4` covers
//! SM3 and SM4), with the instructions in a fixed order: the round chain
//! `sm3ss1` -> `sm3tt1`/`sm3tt2` -> `sm3ss1` runs on one vector pipe on the
//! cores that have these instructions, and the message expansion of a later
//! group is placed in the cycles that chain leaves free (see
//! docs/performance-aarch64.md, section sm3).
//!
//! Register layout: `abcd` holds `(D, C, B, A)` in lanes 0..3 and `efgh`
//! holds `(H, G, F, E)`, as the instructions expect.

use core::arch::aarch64::*;
use core::arch::asm;

/// The rotated round constants (`soft::T`) as one static table: each group
/// loads its four with one `ld4r`, each replicated across one of v20..v23
/// (`sm3ss1` reads lane 3; a whole-register load does not wait for the
/// registers' old values as a one-lane `ld4` would).
static T: [u32; 64] = super::soft::T;

/// Compress `blocks` into `state`.
#[inline]
pub(crate) fn compress(state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    // SAFETY: a `Backend::Sm3ce` tag exists only after `cpu_sm3` found the
    // SM3/SM4 instructions on this CPU (`Backend::is_available`).
    unsafe { compress_ce(state, blocks) }
}

/// `asm!` lines of a round: `sm3ss1` with the constant in `v2$k`.
macro_rules! ss1 {
    ($k:literal) => {
        concat!("sm3ss1 {s:v}.4s, {abcd:v}.4s, {efgh:v}.4s, v2", $k, ".4s")
    };
}

/// `asm!` lines of a round: `sm3tt1$tt`/`sm3tt2$tt` with word `$i` of `W'`
/// and `W`.
macro_rules! tt {
    ($tt:literal, $i:literal) => {
        concat!(
            "sm3tt1",
            $tt,
            " {abcd:v}.4s, {s:v}.4s, {wp:v}.s[",
            $i,
            "]\n",
            "sm3tt2",
            $tt,
            " {efgh:v}.4s, {s:v}.4s, {w0:v}.s[",
            $i,
            "]",
        )
    };
}

/// The four rounds of one group: constants from `$t` (moved past them),
/// `W` from `$w0` and `W' = $w0 ^ $w1`, `$tt` `"a"` (rounds 0..15) or
/// `"b"`. With `=> $x`, the group also computes `$x = W[j + 16..j + 20]`
/// from `$w0..$w3 = W[j..j + 16]`: each of its instructions right after an
/// `sm3ss1`, in the cycle the chain leaves that pipe free.
macro_rules! group {
    ($tt:literal, $t:ident, $abcd:ident, $efgh:ident, $w0:expr, $w1:expr) => {
        // SAFETY: register-only SM3 instructions (the extension is checked
        // at construction) and one 16-byte load inside `T` (`$t` moves 16
        // groups of 4 words per block from `T.as_ptr()`).
        unsafe {
            asm!(
                "ld4r {{v20.4s, v21.4s, v22.4s, v23.4s}}, [{t}], #16",
                "eor {wp:v}.16b, {w0:v}.16b, {w1:v}.16b",
                ss1!(0), tt!($tt, 0),
                ss1!(1), tt!($tt, 1),
                ss1!(2), tt!($tt, 2),
                ss1!(3), tt!($tt, 3),
                t = inout(reg) $t,
                abcd = inout(vreg) $abcd,
                efgh = inout(vreg) $efgh,
                w0 = in(vreg) $w0,
                w1 = in(vreg) $w1,
                s = out(vreg) _,
                wp = out(vreg) _,
                out("v20") _, out("v21") _, out("v22") _, out("v23") _,
                options(readonly, nostack, preserves_flags)
            );
        }
    };
    ($tt:literal, $t:ident, $abcd:ident, $efgh:ident, $w0:expr, $w1:expr, $w2:expr, $w3:expr
        => $x:ident) => {
        let $x: uint32x4_t;
        // SAFETY: as in the arm above.
        unsafe {
            asm!(
                "ld4r {{v20.4s, v21.4s, v22.4s, v23.4s}}, [{t}], #16",
                "eor {wp:v}.16b, {w0:v}.16b, {w1:v}.16b",
                ss1!(0),
                // x = W[j-9..j-5] (j = the first word x makes).
                "ext {x:v}.16b, {w1:v}.16b, {w2:v}.16b, #12",
                tt!($tt, 0),
                ss1!(1),
                // W[j-13..j-9], W[j-6..j-2].
                "ext {w13:v}.16b, {w0:v}.16b, {w1:v}.16b, #12",
                "ext {w6:v}.16b, {w2:v}.16b, {w3:v}.16b, #8",
                tt!($tt, 1),
                ss1!(2),
                "sm3partw1 {x:v}.4s, {w0:v}.4s, {w3:v}.4s",
                tt!($tt, 2),
                ss1!(3),
                "sm3partw2 {x:v}.4s, {w6:v}.4s, {w13:v}.4s",
                tt!($tt, 3),
                t = inout(reg) $t,
                abcd = inout(vreg) $abcd,
                efgh = inout(vreg) $efgh,
                w0 = in(vreg) $w0,
                w1 = in(vreg) $w1,
                w2 = in(vreg) $w2,
                w3 = in(vreg) $w3,
                x = out(vreg) $x,
                s = out(vreg) _,
                wp = out(vreg) _,
                w13 = out(vreg) _,
                w6 = out(vreg) _,
                out("v20") _, out("v21") _, out("v22") _, out("v23") _,
                options(readonly, nostack, preserves_flags)
            );
        }
    };
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
        // Group g uses W[4g..4g + 8] and expands W[4g + 16..4g + 20]
        // (g < 13), the message words as named values.
        group!("a", t, abcd, efgh, w0, w1, w2, w3 => w4);
        group!("a", t, abcd, efgh, w1, w2, w3, w4 => w5);
        group!("a", t, abcd, efgh, w2, w3, w4, w5 => w6);
        group!("a", t, abcd, efgh, w3, w4, w5, w6 => w7);
        group!("b", t, abcd, efgh, w4, w5, w6, w7 => w8);
        group!("b", t, abcd, efgh, w5, w6, w7, w8 => w9);
        group!("b", t, abcd, efgh, w6, w7, w8, w9 => w10);
        group!("b", t, abcd, efgh, w7, w8, w9, w10 => w11);
        group!("b", t, abcd, efgh, w8, w9, w10, w11 => w12);
        group!("b", t, abcd, efgh, w9, w10, w11, w12 => w13);
        group!("b", t, abcd, efgh, w10, w11, w12, w13 => w14);
        group!("b", t, abcd, efgh, w11, w12, w13, w14 => w15);
        group!("b", t, abcd, efgh, w12, w13, w14, w15 => w16);
        group!("b", t, abcd, efgh, w13, w14);
        group!("b", t, abcd, efgh, w14, w15);
        group!("b", t, abcd, efgh, w15, w16);
        abcd = veorq_u32(abcd, abcd0);
        efgh = veorq_u32(efgh, efgh0);
    }
    // SAFETY: `state` holds 32 writable bytes.
    unsafe {
        vst1q_u32(state.as_mut_ptr(), reverse(abcd));
        vst1q_u32(state.as_mut_ptr().add(4), reverse(efgh));
    }
}
