//! aarch64 NEON backend: 5 blocks per pass, 4 with the state transposed
//! across the four 32-bit lanes of sixteen q registers and a fifth in
//! general-purpose registers at the same time; a 4-block pass for tails and
//! a 1-block row-layout path (also used by HChaCha).

use core::arch::aarch64::*;

use cipher::inout::InOutBuf;

use super::rounds::{SIGMA, double_round, lane_counters, quarter4};

#[inline]
#[target_feature(enable = "neon")]
fn add(a: uint32x4_t, b: uint32x4_t) -> uint32x4_t {
    vaddq_u32(a, b)
}
#[inline]
#[target_feature(enable = "neon")]
fn xor(a: uint32x4_t, b: uint32x4_t) -> uint32x4_t {
    veorq_u32(a, b)
}
#[inline]
#[target_feature(enable = "neon")]
fn r16(a: uint32x4_t) -> uint32x4_t {
    vreinterpretq_u32_u16(vrev32q_u16(vreinterpretq_u16_u32(a)))
}
#[inline]
#[target_feature(enable = "neon")]
fn r12(a: uint32x4_t) -> uint32x4_t {
    vsriq_n_u32::<20>(vshlq_n_u32::<12>(a), a)
}
#[inline]
#[target_feature(enable = "neon")]
fn r8(a: uint32x4_t) -> uint32x4_t {
    const IDX: [u8; 16] = [3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14];
    let idx = vcombine_u8(
        vcreate_u8(u64::from_le_bytes([
            IDX[0], IDX[1], IDX[2], IDX[3], IDX[4], IDX[5], IDX[6], IDX[7],
        ])),
        vcreate_u8(u64::from_le_bytes([
            IDX[8], IDX[9], IDX[10], IDX[11], IDX[12], IDX[13], IDX[14], IDX[15],
        ])),
    );
    vreinterpretq_u32_u8(vqtbl1q_u8(vreinterpretq_u8_u32(a), idx))
}
#[inline]
#[target_feature(enable = "neon")]
fn r7(a: uint32x4_t) -> uint32x4_t {
    vsriq_n_u32::<25>(vshlq_n_u32::<7>(a), a)
}

#[inline]
#[target_feature(enable = "neon")]
fn vec4(w: [u32; 4]) -> uint32x4_t {
    let lo = vcreate_u32(u64::from(w[0]) | (u64::from(w[1]) << 32));
    let hi = vcreate_u32(u64::from(w[2]) | (u64::from(w[3]) << 32));
    vcombine_u32(lo, hi)
}

#[inline]
#[target_feature(enable = "neon")]
fn transpose(a: uint32x4_t, b: uint32x4_t, c: uint32x4_t, d: uint32x4_t) -> [uint32x4_t; 4] {
    let t0 = vreinterpretq_u64_u32(vtrn1q_u32(a, b));
    let t1 = vreinterpretq_u64_u32(vtrn2q_u32(a, b));
    let t2 = vreinterpretq_u64_u32(vtrn1q_u32(c, d));
    let t3 = vreinterpretq_u64_u32(vtrn2q_u32(c, d));
    [
        vreinterpretq_u32_u64(vtrn1q_u64(t0, t2)),
        vreinterpretq_u32_u64(vtrn1q_u64(t1, t3)),
        vreinterpretq_u32_u64(vtrn2q_u64(t0, t2)),
        vreinterpretq_u32_u64(vtrn2q_u64(t1, t3)),
    ]
}

/// `out[off..off + 16] = inp[off..off + 16] ^ ks` (little-endian words).
///
/// # Safety
/// `inp` and `out` valid for 16 bytes at `off`.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn xor_store(inp: *const u8, out: *mut u8, off: usize, ks: uint32x4_t) {
    // SAFETY: the caller guarantees 16 readable/writable bytes at `off`;
    // byte loads and stores have no alignment requirement.
    unsafe {
        let d = vld1q_u8(inp.add(off));
        vst1q_u8(out.add(off), veorq_u8(d, vreinterpretq_u8_u32(ks)));
    }
}

/// Up to 4 blocks (`n` in 1..=4).
///
/// # Safety
/// `inp` and `out` valid for `64 * n` bytes.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn pass4(
    s: &[u32; 16],
    ctr: u64,
    legacy: bool,
    dr: usize,
    inp: *const u8,
    out: *mut u8,
    n: usize,
) {
    let (lo, hi) = lane_counters::<4>(ctr, legacy, s[13]);
    let mut v = [vdupq_n_u32(0); 16];
    for i in 0..16 {
        v[i] = vdupq_n_u32(s[i]);
    }
    v[12] = vec4(lo);
    v[13] = vec4(hi);
    let mut x = v;
    for _ in 0..dr {
        double_round!(x, add, xor, r16, r12, r8, r7);
    }
    for i in 0..16 {
        x[i] = add(x[i], v[i]);
    }
    let g0 = transpose(x[0], x[1], x[2], x[3]);
    let g1 = transpose(x[4], x[5], x[6], x[7]);
    let g2 = transpose(x[8], x[9], x[10], x[11]);
    let g3 = transpose(x[12], x[13], x[14], x[15]);
    for k in 0..n {
        // SAFETY: block k < n lies inside the caller's 64 * n bytes.
        unsafe {
            xor_store(inp, out, 64 * k, g0[k]);
            xor_store(inp, out, 64 * k + 16, g1[k]);
            xor_store(inp, out, 64 * k + 32, g2[k]);
            xor_store(inp, out, 64 * k + 48, g3[k]);
        }
    }
}

#[inline(always)]
fn sadd(a: u32, b: u32) -> u32 {
    a.wrapping_add(b)
}
#[inline(always)]
fn sxor(a: u32, b: u32) -> u32 {
    a ^ b
}
#[inline(always)]
fn sr16(a: u32) -> u32 {
    a.rotate_left(16)
}
#[inline(always)]
fn sr12(a: u32) -> u32 {
    a.rotate_left(12)
}
#[inline(always)]
fn sr8(a: u32) -> u32 {
    a.rotate_left(8)
}
#[inline(always)]
fn sr7(a: u32) -> u32 {
    a.rotate_left(7)
}

/// Five blocks: four in NEON (transposed) and a fifth in general-purpose
/// registers, interleaved so that the integer pipes work beside the vector
/// ones (the Linux arm64 "4+1" scheme).
///
/// # Safety
/// `inp` and `out` valid for `64 * 5` bytes.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn pass5(s: &[u32; 16], ctr: u64, legacy: bool, dr: usize, inp: *const u8, out: *mut u8) {
    let (lo, hi) = lane_counters::<4>(ctr, legacy, s[13]);
    let mut v = [vdupq_n_u32(0); 16];
    for i in 0..16 {
        v[i] = vdupq_n_u32(s[i]);
    }
    v[12] = vec4(lo);
    v[13] = vec4(hi);
    let mut st = *s;
    let c4 = ctr.wrapping_add(4);
    st[12] = c4 as u32;
    if legacy {
        st[13] = (c4 >> 32) as u32;
    }
    let mut x = v;
    let mut y = st;
    for _ in 0..dr {
        quarter4!(
            x, add, xor, r16, r12, r8, r7, 0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15
        );
        quarter4!(
            y, sadd, sxor, sr16, sr12, sr8, sr7, 0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11,
            15
        );
        quarter4!(
            x, add, xor, r16, r12, r8, r7, 0, 5, 10, 15, 1, 6, 11, 12, 2, 7, 8, 13, 3, 4, 9, 14
        );
        quarter4!(
            y, sadd, sxor, sr16, sr12, sr8, sr7, 0, 5, 10, 15, 1, 6, 11, 12, 2, 7, 8, 13, 3, 4, 9,
            14
        );
    }
    for i in 0..16 {
        x[i] = add(x[i], v[i]);
        y[i] = y[i].wrapping_add(st[i]);
    }
    let g0 = transpose(x[0], x[1], x[2], x[3]);
    let g1 = transpose(x[4], x[5], x[6], x[7]);
    let g2 = transpose(x[8], x[9], x[10], x[11]);
    let g3 = transpose(x[12], x[13], x[14], x[15]);
    for k in 0..4 {
        // SAFETY: block k < 5 lies inside the caller's 320 bytes.
        unsafe {
            xor_store(inp, out, 64 * k, g0[k]);
            xor_store(inp, out, 64 * k + 16, g1[k]);
            xor_store(inp, out, 64 * k + 32, g2[k]);
            xor_store(inp, out, 64 * k + 48, g3[k]);
        }
    }
    for r in 0..4 {
        let w = vec4([y[4 * r], y[4 * r + 1], y[4 * r + 2], y[4 * r + 3]]);
        // SAFETY: block 4 lies inside the caller's 320 bytes.
        unsafe { xor_store(inp, out, 256 + 16 * r, w) };
    }
}

#[inline]
#[target_feature(enable = "neon")]
fn rows_rounds(
    mut a: uint32x4_t,
    mut b: uint32x4_t,
    mut c: uint32x4_t,
    mut d: uint32x4_t,
    dr: usize,
) -> [uint32x4_t; 4] {
    for _ in 0..dr {
        a = add(a, b);
        d = r16(xor(d, a));
        c = add(c, d);
        b = r12(xor(b, c));
        a = add(a, b);
        d = r8(xor(d, a));
        c = add(c, d);
        b = r7(xor(b, c));
        // Rotate a, c and d (not b, the last one computed) so that the
        // lane moves stay off the critical path.
        a = vextq_u32::<3>(a, a);
        c = vextq_u32::<1>(c, c);
        d = vextq_u32::<2>(d, d);
        a = add(a, b);
        d = r16(xor(d, a));
        c = add(c, d);
        b = r12(xor(b, c));
        a = add(a, b);
        d = r8(xor(d, a));
        c = add(c, d);
        b = r7(xor(b, c));
        a = vextq_u32::<1>(a, a);
        c = vextq_u32::<3>(c, c);
        d = vextq_u32::<2>(d, d);
    }
    [a, b, c, d]
}

#[inline]
#[target_feature(enable = "neon")]
fn row(s: &[u32; 16], i: usize) -> uint32x4_t {
    vec4([s[i], s[i + 1], s[i + 2], s[i + 3]])
}

/// One block in row layout.
///
/// # Safety
/// `inp` and `out` valid for 64 bytes.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn block1(s: &[u32; 16], ctr: u64, legacy: bool, dr: usize, inp: *const u8, out: *mut u8) {
    let mut st = *s;
    st[12] = ctr as u32;
    if legacy {
        st[13] = (ctr >> 32) as u32;
    }
    let v = [row(&st, 0), row(&st, 4), row(&st, 8), row(&st, 12)];
    let x = rows_rounds(v[0], v[1], v[2], v[3], dr);
    for i in 0..4 {
        // SAFETY: 64 bytes valid per the caller.
        unsafe { xor_store(inp, out, 16 * i, add(x[i], v[i])) };
    }
}

/// HChaCha with the rows loaded straight from the key and input bytes
/// (this module is little-endian only) and rows 0 and 3 stored as the output.
#[target_feature(enable = "neon")]
fn hchacha_inner(key: &[u8; 32], input: &[u8; 16], dr: usize) -> [u8; 32] {
    // SAFETY: 16-byte loads inside `key` (32 bytes) and `input` (16 bytes).
    let (b, c, d) = unsafe {
        (
            vreinterpretq_u32_u8(vld1q_u8(key.as_ptr())),
            vreinterpretq_u32_u8(vld1q_u8(key.as_ptr().add(16))),
            vreinterpretq_u32_u8(vld1q_u8(input.as_ptr())),
        )
    };
    let x = rows_rounds(vec4(SIGMA), b, c, d, dr);
    let mut out = [0u8; 32];
    // SAFETY: two 16-byte stores inside `out` (32 bytes).
    unsafe {
        vst1q_u8(out.as_mut_ptr(), vreinterpretq_u8_u32(x[0]));
        vst1q_u8(out.as_mut_ptr().add(16), vreinterpretq_u8_u32(x[3]));
    }
    out
}

#[target_feature(enable = "neon")]
fn xor_blocks_inner(s: &[u32; 16], ctr: u64, legacy: bool, dr: usize, buf: InOutBuf<'_, '_, u8>) {
    let n = buf.len() / 64;
    let (inp, out) = buf.into_raw();
    let mut i = 0;
    while n - i >= 5 {
        // SAFETY: blocks i..i + 5 lie inside the buffer of n blocks.
        unsafe {
            pass5(
                s,
                ctr.wrapping_add(i as u64),
                legacy,
                dr,
                inp.add(64 * i),
                out.add(64 * i),
            )
        };
        i += 5;
    }
    let r = n - i;
    let c = ctr.wrapping_add(i as u64);
    if r > 1 {
        // SAFETY: blocks i..n lie inside the buffer.
        unsafe { pass4(s, c, legacy, dr, inp.add(64 * i), out.add(64 * i), r) };
    } else if r == 1 {
        // SAFETY: block i lies inside the buffer.
        unsafe { block1(s, c, legacy, dr, inp.add(64 * i), out.add(64 * i)) };
    }
}

pub(crate) fn xor_blocks(
    s: &[u32; 16],
    ctr: u64,
    legacy: bool,
    dr: usize,
    buf: InOutBuf<'_, '_, u8>,
) {
    // SAFETY: NEON is part of the aarch64 baseline this module is compiled for.
    unsafe { xor_blocks_inner(s, ctr, legacy, dr, buf) }
}

pub(crate) fn hchacha(key: &[u8; 32], input: &[u8; 16], dr: usize) -> [u8; 32] {
    // SAFETY: NEON is part of the aarch64 baseline this module is compiled for.
    unsafe { hchacha_inner(key, input, dr) }
}
