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
        super::rounds::double_round!(x, add, xor, r16, r12, r8, r7);
    }
}

/// One keystream block for counter `ctr`.
#[inline(always)]
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
    // A round count known at compile time lets the compiler unroll and
    // schedule the rounds (ChaCha20, 12 and 8).
    match double_rounds {
        10 => xor_blocks_n::<10>(state, ctr, legacy, buf),
        6 => xor_blocks_n::<6>(state, ctr, legacy, buf),
        4 => xor_blocks_n::<4>(state, ctr, legacy, buf),
        _ => xor_blocks_any(state, ctr, legacy, double_rounds, buf),
    }
}

fn xor_blocks_n<const DR: usize>(
    state: &[u32; 16],
    ctr: u64,
    legacy: bool,
    buf: InOutBuf<'_, '_, u8>,
) {
    xor_blocks_any(state, ctr, legacy, DR, buf)
}

#[inline(always)]
fn xor_blocks_any(
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

/// The keystream of block `ctr` XORed from `inp` to `out` by this scalar
/// code: for the x86 backends, a pass's last block when it is
/// alone (`n % 8 == 1` blocks on `avx`, `n % 16 == 1` on `avx512`) and
/// [`super::cpu::lone_block_scalar`] holds; it would otherwise run as one
/// latency-bound vector chain after the pass.
///
/// # Safety
/// `inp` readable and `out` writable for 64 bytes, the same or not
/// overlapping.
#[cfg(all(target_arch = "x86_64", not(miri)))]
pub(crate) unsafe fn xor_block_raw(
    state: &[u32; 16],
    ctr: u64,
    legacy: bool,
    double_rounds: usize,
    inp: *const u8,
    out: *mut u8,
) {
    // SAFETY: per this function's contract.
    let buf = unsafe { InOutBuf::from_raw(inp, out, 64) };
    xor_blocks(state, ctr, legacy, double_rounds, buf);
}

pub(crate) fn hchacha(key: &[u8; 32], input: &[u8; 16], double_rounds: usize) -> [u8; 32] {
    let mut x = [0u32; 16];
    x[..4].copy_from_slice(&super::rounds::SIGMA);
    x[4..12].copy_from_slice(&super::rounds::le_words::<8>(key));
    x[12..].copy_from_slice(&super::rounds::le_words::<4>(input));
    rounds(&mut x, double_rounds);
    let mut out = [0u8; 32];
    for (chunk, w) in out.chunks_exact_mut(4).zip(x[..4].iter().chain(&x[12..])) {
        chunk.copy_from_slice(&w.to_le_bytes());
    }
    out
}
