//! Portable backend: one block at a time, only 32-bit additions, XORs and
//! rotations (constant time), the reference for every other backend.

use cipher::{consts::U64, inout::InOutBuf};

#[inline(always)]
fn add(a: u32, b: u32) -> u32 {
    a.wrapping_add(b)
}
#[inline(always)]
fn xor(a: u32, b: u32) -> u32 {
    a ^ b
}
#[inline(always)]
fn r16(a: u32) -> u32 {
    a.rotate_left(16)
}
#[inline(always)]
fn r12(a: u32) -> u32 {
    a.rotate_left(12)
}
#[inline(always)]
fn r8(a: u32) -> u32 {
    a.rotate_left(8)
}
#[inline(always)]
fn r7(a: u32) -> u32 {
    a.rotate_left(7)
}

#[inline(always)]
fn rounds(x: &mut [u32; 16], double_rounds: usize) {
    for _ in 0..double_rounds {
        super::double_round!(x, add, xor, r16, r12, r8, r7);
    }
}

/// One keystream block for counter `ctr`.
#[inline]
fn block(state: &[u32; 16], ctr: u64, legacy: bool, double_rounds: usize) -> [u8; 64] {
    let mut s = *state;
    s[12] = ctr as u32;
    if legacy {
        s[13] = (ctr >> 32) as u32;
    }
    let mut x = s;
    rounds(&mut x, double_rounds);
    let mut out = [0u8; 64];
    for ((o, a), b) in out.chunks_exact_mut(4).zip(x.iter()).zip(s.iter()) {
        o.copy_from_slice(&a.wrapping_add(*b).to_le_bytes());
    }
    out
}

pub(crate) fn xor_blocks(
    state: &[u32; 16],
    ctr: u64,
    legacy: bool,
    double_rounds: usize,
    buf: InOutBuf<'_, '_, u8>,
) {
    let (blocks, _) = buf.into_chunks::<U64>();
    for (i, mut b) in blocks.into_iter().enumerate() {
        let ks = block(state, ctr.wrapping_add(i as u64), legacy, double_rounds);
        b.xor_in2out(&ks.into());
    }
}

pub(crate) fn hchacha(state: &[u32; 16], double_rounds: usize) -> [u32; 8] {
    let mut x = *state;
    rounds(&mut x, double_rounds);
    [x[0], x[1], x[2], x[3], x[12], x[13], x[14], x[15]]
}
