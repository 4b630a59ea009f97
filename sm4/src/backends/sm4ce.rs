//! aarch64 SM4 instructions (ARMv8.2 `FEAT_SM4`: `sm4e`, `sm4ekey`),
//! through `asm!` while the `vsm4e*` intrinsics are unstable.
//!
//! `sm4e vd.4s, vn.4s` runs four rounds on the block held in `vd` (word `i`
//! of the block in lane `i`, as native-endian values, hence the `rev32` on
//! load and store) with four round keys from `vn`. The 32 round keys stay in
//! eight registers for the whole call. Eight blocks run as eight independent
//! `sm4e` chains to hide the instruction latency; tails use a chain per
//! block as well. A single block (the chained modes: CBC and CFB encryption,
//! CMAC) takes a short path. The instructions run in constant time.

use crate::Sm4;
use cipher::{Block, InOutBuf, consts::U8};
use core::arch::aarch64::*;
use core::arch::asm;

/// Blocks per batch this kernel wants from the modes.
pub(crate) type ParBlocks = U8;

/// The system parameter FK (GB/T 32907).
const FK: [u32; 4] = [0xa3b1bac6, 0x56aa3350, 0x677d9197, 0xb27022dc];

/// The constants CK: byte `j` of `CK[i]` is `(4i + j) * 7 mod 256`.
const CK: [u32; 32] = {
    let mut ck = [0u32; 32];
    let mut i = 0;
    while i < 32 {
        let b = (4 * i * 7) as u32;
        ck[i] = ((b % 256) << 24)
            | (((b + 7) % 256) << 16)
            | (((b + 14) % 256) << 8)
            | ((b + 21) % 256);
        i += 1;
    }
    ck
};

/// Four rounds: `x = sm4e(x, k)`.
#[inline]
#[target_feature(enable = "neon,sm4")]
fn sm4e(x: &mut uint32x4_t, k: uint32x4_t) {
    // SAFETY: the `sm4` feature is enabled on this function (so the caller
    // has established that the CPU supports it); the instruction only reads
    // and writes the named registers.
    unsafe {
        asm!(
            "sm4e {x:v}.4s, {k:v}.4s",
            x = inout(vreg) *x,
            k = in(vreg) k,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
}

/// Expands a key with `sm4ekey` into the 32 encryption round keys (the
/// standard schedule `rk[0..32]`).
///
/// # Safety
/// The CPU must support NEON and the SM4 instructions.
#[target_feature(enable = "neon,sm4")]
pub(crate) unsafe fn expand_key(key: &[u8; 16]) -> [u32; 32] {
    let mut rk = [0u32; 32];
    // SAFETY: `key` is 16 readable bytes and FK 4 words; `vld1q_*` has no
    // alignment requirement.
    let (mk, fk) = unsafe { (vld1q_u8(key.as_ptr()), vld1q_u32(FK.as_ptr())) };
    let mut k = veorq_u32(vreinterpretq_u32_u8(vrev32q_u8(mk)), fk);
    let (ck, _) = CK.as_chunks::<4>();
    let (out, _) = rk.as_chunks_mut::<4>();
    for (ck, out) in ck.iter().zip(out) {
        // SAFETY: `ck` is 4 readable words.
        let c = unsafe { vld1q_u32(ck.as_ptr()) };
        // SAFETY: the `sm4` feature is enabled on this function, which the
        // caller guarantees the CPU has; register-only instruction.
        unsafe {
            asm!(
                "sm4ekey {k:v}.4s, {k:v}.4s, {c:v}.4s",
                k = inout(vreg) k,
                c = in(vreg) c,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        // SAFETY: `out` is 4 writable words.
        unsafe { vst1q_u32(out.as_mut_ptr(), k) };
    }
    rk
}

/// Loads the round keys into eight registers.
#[inline]
#[target_feature(enable = "neon")]
fn load_keys(rk: &[u32; 32]) -> [uint32x4_t; 8] {
    let (ks, _) = rk.as_chunks::<4>();
    core::array::from_fn(|i| {
        // SAFETY: 4 readable words; no alignment requirement.
        unsafe { vld1q_u32(ks[i].as_ptr()) }
    })
}

/// Encrypts `N` consecutive blocks as `N` independent chains.
///
/// # Safety
/// `inp` readable and `out` writable for `16 * N` bytes (they may be equal);
/// the CPU supports the SM4 instructions.
#[inline]
#[target_feature(enable = "neon,sm4")]
unsafe fn crypt_n<const N: usize>(k: &[uint32x4_t; 8], inp: *const u8, out: *mut u8) {
    let mut x: [uint32x4_t; N] = core::array::from_fn(|j| {
        // SAFETY: block `j` is inside the `16 * N` readable bytes.
        let v = unsafe { vld1q_u8(inp.add(16 * j)) };
        // SM4 words are big-endian.
        vreinterpretq_u32_u8(vrev32q_u8(v))
    });
    for k in k {
        for x in x.iter_mut() {
            sm4e(x, *k);
        }
    }
    for (j, x) in x.iter().enumerate() {
        // Output (X35, X34, X33, X32), each big-endian: reversing the word
        // order and the bytes of each word is one full 16-byte reversal.
        let r = vrev64q_u8(vreinterpretq_u8_u32(*x));
        let v = vextq_u8::<8>(r, r);
        // SAFETY: block `j` is inside the `16 * N` writable bytes.
        unsafe { vst1q_u8(out.add(16 * j), v) };
    }
}

/// Any number of blocks: 8-block passes, then one pass for the rest.
///
/// # Safety
/// `inp` readable and `out` writable for `16 * n` bytes (disjoint or equal);
/// the CPU supports the SM4 instructions.
#[inline(never)]
#[target_feature(enable = "neon,sm4")]
unsafe fn crypt_many(rk: &[u32; 32], inp: *const u8, out: *mut u8, n: usize) {
    let k = load_keys(rk);
    let mut i = 0;
    // SAFETY: in all calls below, blocks i..i+m are inside the `n` blocks of
    // both buffers, and the caller guarantees the SM4 instructions.
    unsafe {
        while n - i >= 8 {
            crypt_n::<8>(&k, inp.add(16 * i), out.add(16 * i));
            i += 8;
        }
        let (inp, out) = (inp.add(16 * i), out.add(16 * i));
        // The number of blocks is public.
        match n - i {
            0 => {}
            1 => crypt_n::<1>(&k, inp, out),
            2 => crypt_n::<2>(&k, inp, out),
            3 => crypt_n::<3>(&k, inp, out),
            4 => crypt_n::<4>(&k, inp, out),
            5 => crypt_n::<5>(&k, inp, out),
            6 => crypt_n::<6>(&k, inp, out),
            _ => crypt_n::<7>(&k, inp, out),
        }
    }
}

/// Encrypts (`rk` = encryption round keys) or decrypts (`rk` = the reversed
/// schedule) any number of blocks, in place or out of place.
///
/// # Safety
/// The CPU must support NEON and the SM4 instructions.
#[inline]
#[target_feature(enable = "neon,sm4")]
pub(crate) unsafe fn crypt_blocks(rk: &[u32; 32], blocks: InOutBuf<'_, '_, Block<Sm4>>) {
    let n = blocks.len();
    let (inp, out) = blocks.into_raw();
    let (inp, out) = (inp.cast::<u8>(), out.cast::<u8>());
    if n == 1 {
        // The chained modes' path: small enough to inline into the mode's
        // loop, where the key loads can be hoisted.
        let k = load_keys(rk);
        // SAFETY: one block in each buffer; the caller guarantees SM4.
        unsafe { crypt_n::<1>(&k, inp, out) };
    } else {
        // SAFETY: `n` blocks in each buffer (from `InOutBuf`), disjoint or
        // equal; the caller guarantees SM4.
        unsafe { crypt_many(rk, inp, out, n) };
    }
}

/// Encrypts or decrypts the first `n` (1 to 4) of four blocks in place.
///
/// # Safety
/// The CPU must support NEON and the SM4 instructions.
#[inline]
#[target_feature(enable = "neon,sm4")]
pub(crate) unsafe fn crypt_lanes(rk: &[u32; 32], blocks: &mut [cipher::Block<Sm4>; 4], n: usize) {
    // SAFETY: the caller guarantees the features.
    unsafe { crypt_blocks(rk, (&mut blocks[..n]).into()) }
}

/// Encrypts or decrypts the first `n` blocks (`1..=STAGE`) of a mode
/// driver's stage in place.
///
/// # Safety
/// The CPU must support NEON and the SM4 instructions.
#[inline]
#[target_feature(enable = "neon,sm4")]
pub(crate) unsafe fn crypt_stage(rk: &[u32; 32], stage: &mut super::Stage, n: usize) {
    // SAFETY: the caller guarantees the features.
    unsafe { crypt_blocks(rk, (&mut stage.0[..n]).into()) }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::neon::tests::{check_kernel, ref_expand};

    fn has_sm4() -> bool {
        std::arch::is_aarch64_feature_detected!("sm4")
    }

    #[test]
    fn sm4ce_expand_key() {
        if !has_sm4() {
            std::println!("sm4ce: CPU lacks the SM4 instructions, expand_key test skipped");
            return;
        }
        let mut rng = testkit::Rng::new(0x5e4_e1e7);
        for i in 0..200 {
            let key: [u8; 16] = if i == 0 {
                super::super::neon::tests::GBT_KEY
            } else {
                rng.array()
            };
            // SAFETY: SM4 support was checked above (NEON is baseline).
            let rk = unsafe { super::expand_key(&key) };
            assert_eq!(rk, ref_expand(&key), "key {key:02x?}");
        }
    }

    #[test]
    fn sm4ce_kernel() {
        if !has_sm4() {
            std::println!("sm4ce: CPU lacks the SM4 instructions, kernel test skipped");
            return;
        }
        check_kernel(&|rk, blocks| {
            // SAFETY: SM4 support was checked above (NEON is baseline).
            unsafe { super::crypt_blocks(rk, blocks) }
        });
        std::println!("sm4 sm4ce kernel: tested against the reference");
    }
}
