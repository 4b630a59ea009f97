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
//!
//! Uses the block type, the key schedule, the aarch64 primitives and the
//! contract; its `impl Kernel` is the `kernel_token!` at the end.

use crate::block::Blk;
use crate::schedule::{CK, FK};
use cipher::{InOutBuf, consts::U8};
use core::arch::aarch64::*;
use core::arch::asm;

/// Blocks per batch this kernel wants from the modes.
pub(crate) type ParBlocks = U8;

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
        // SAFETY: block `j` is inside the `16 * N` writable bytes.
        unsafe { vst1q_u8(out.add(16 * j), output_bytes(*x)) };
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
pub(crate) unsafe fn crypt_blocks(rk: &[u32; 32], blocks: InOutBuf<'_, '_, Blk>) {
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

/// The output bytes of a finished `sm4e` chain: `(X35, X34, X33, X32)`,
/// each big-endian, is one full 16-byte reversal.
#[inline]
#[target_feature(enable = "neon")]
fn output_bytes(x: uint32x4_t) -> uint8x16_t {
    let r = vrev64q_u8(vreinterpretq_u8_u32(x));
    vextq_u8::<8>(r, r)
}

/// `N` CTR blocks from the counter `ctr` (as its (high, low) 64-bit
/// halves; the low half must not carry): the counters made in registers,
/// `N` independent `sm4e` chains, the keystream XORed into the data.
///
/// # Safety
/// `inp` readable and `out` writable for `N` blocks (equal or disjoint);
/// the CPU supports the SM4 instructions.
#[inline]
#[target_feature(enable = "neon,sm4")]
unsafe fn ctr_n<const N: usize>(
    k: &[uint32x4_t; 8],
    ctr: uint64x2_t,
    inp: *const u8,
    out: *mut u8,
) {
    // SAFETY: two 8-byte values.
    let step = unsafe { vld1q_u64([0u64, 1].as_ptr()) };
    let mut c = ctr;
    let mut x: [uint32x4_t; N] = core::array::from_fn(|_| {
        // The block's words as `sm4e` takes them: (high >> 32, high, low
        // >> 32, low).
        let v = vrev64q_u32(vreinterpretq_u32_u64(c));
        c = vaddq_u64(c, step);
        v
    });
    for k in k {
        for x in x.iter_mut() {
            sm4e(x, *k);
        }
    }
    for (j, x) in x.iter().enumerate() {
        // SAFETY: block j < N of both buffers.
        unsafe {
            let d = vld1q_u8(inp.add(16 * j));
            vst1q_u8(out.add(16 * j), veorq_u8(output_bytes(*x), d));
        }
    }
}

/// CTR over `n` whole blocks, eight chains at a time, from counter `c`,
/// whose low 64 bits must not carry over the `n` blocks.
///
/// # Safety
/// `inp` readable and `out` writable for `n` blocks (equal or disjoint);
/// the CPU supports the SM4 instructions.
#[inline]
#[target_feature(enable = "neon,sm4")]
pub(crate) unsafe fn ctr_xor(rk: &[u32; 32], c: u128, inp: *const u8, out: *mut u8, n: usize) {
    let k = load_keys(rk);
    // SAFETY: two 8-byte values.
    let mut ctr = unsafe { vld1q_u64([(c >> 64) as u64, c as u64].as_ptr()) };
    // SAFETY: two 8-byte values.
    let eight = unsafe { vld1q_u64([0u64, 8].as_ptr()) };
    let mut i = 0;
    // SAFETY: (every call) blocks i.. are within the `n` blocks of both
    // buffers.
    unsafe {
        while n - i >= 8 {
            ctr_n::<8>(&k, ctr, inp.add(16 * i), out.add(16 * i));
            ctr = vaddq_u64(ctr, eight);
            i += 8;
        }
        let (inp, out) = (inp.add(16 * i), out.add(16 * i));
        match n - i {
            0 => {}
            1 => ctr_n::<1>(&k, ctr, inp, out),
            2 => ctr_n::<2>(&k, ctr, inp, out),
            3 => ctr_n::<3>(&k, ctr, inp, out),
            4 => ctr_n::<4>(&k, ctr, inp, out),
            5 => ctr_n::<5>(&k, ctr, inp, out),
            6 => ctr_n::<6>(&k, ctr, inp, out),
            _ => ctr_n::<7>(&k, ctr, inp, out),
        }
    }
}

/// CBC decryption of `N` blocks as `N` independent chains, each output
/// XORed with the ciphertext block before it (`iv` for the first, which
/// then becomes the last ciphertext block). All `N` are loaded before any
/// is stored, so `out` may equal `inp`.
///
/// # Safety
/// `inp` readable and `out` writable for `N` blocks (equal or disjoint);
/// the CPU supports the SM4 instructions.
#[inline]
#[target_feature(enable = "neon,sm4")]
unsafe fn cbc_decrypt_n<const N: usize>(
    k: &[uint32x4_t; 8],
    iv: &mut uint8x16_t,
    inp: *const u8,
    out: *mut u8,
) {
    // SAFETY: block j < N of `inp`.
    let c: [uint8x16_t; N] = core::array::from_fn(|j| unsafe { vld1q_u8(inp.add(16 * j)) });
    let mut x = c.map(|v| vreinterpretq_u32_u8(vrev32q_u8(v)));
    for k in k {
        for x in x.iter_mut() {
            sm4e(x, *k);
        }
    }
    for (j, x) in x.iter().enumerate() {
        let prev = if j == 0 { *iv } else { c[j - 1] };
        // SAFETY: block j < N of `out`.
        unsafe { vst1q_u8(out.add(16 * j), veorq_u8(output_bytes(*x), prev)) };
    }
    *iv = c[N - 1];
}

/// CBC decryption of `n` blocks (`rk` the decryption schedule), eight
/// chains at a time, chaining value `iv` updated.
///
/// # Safety
/// `inp` readable and `out` writable for `n` blocks (equal or disjoint);
/// the CPU supports the SM4 instructions.
#[inline]
#[target_feature(enable = "neon,sm4")]
pub(crate) unsafe fn cbc_decrypt(
    rk: &[u32; 32],
    iv: &mut [u8; 16],
    inp: *const u8,
    out: *mut u8,
    n: usize,
) {
    let k = load_keys(rk);
    // SAFETY: 16 readable bytes.
    let mut v = unsafe { vld1q_u8(iv.as_ptr()) };
    let mut i = 0;
    // SAFETY: (every call) blocks i..i + m are within the `n` blocks.
    unsafe {
        while n - i >= 8 {
            cbc_decrypt_n::<8>(&k, &mut v, inp.add(16 * i), out.add(16 * i));
            i += 8;
        }
        let (inp, out) = (inp.add(16 * i), out.add(16 * i));
        match n - i {
            0 => {}
            1 => cbc_decrypt_n::<1>(&k, &mut v, inp, out),
            2 => cbc_decrypt_n::<2>(&k, &mut v, inp, out),
            3 => cbc_decrypt_n::<3>(&k, &mut v, inp, out),
            4 => cbc_decrypt_n::<4>(&k, &mut v, inp, out),
            5 => cbc_decrypt_n::<5>(&k, &mut v, inp, out),
            6 => cbc_decrypt_n::<6>(&k, &mut v, inp, out),
            _ => cbc_decrypt_n::<7>(&k, &mut v, inp, out),
        }
        vst1q_u8(iv.as_mut_ptr(), v);
    }
}

/// CFB decryption of up to `N` blocks as `N` independent chains: the
/// inputs are `iv` and the ciphertext blocks before each; block `j < full`
/// becomes `C_j ^ E(prev)`, and a chain `j == full < N` is the tail's
/// keystream, into `ks`. `iv` becomes the last ciphertext block. All
/// ciphertext is loaded before any output is stored.
///
/// # Safety
/// `inp` readable and `out` writable for `full` blocks (equal or
/// disjoint), `full <= N <= full + 1`; the CPU supports the SM4
/// instructions.
#[inline]
#[target_feature(enable = "neon,sm4")]
unsafe fn cfb_decrypt_n<const N: usize>(
    k: &[uint32x4_t; 8],
    iv: &mut uint8x16_t,
    inp: *const u8,
    out: *mut u8,
    full: usize,
    ks: &mut [u8; 16],
) {
    let c: [uint8x16_t; N] = if full == N {
        // SAFETY: block j < N = full of `inp`.
        core::array::from_fn(|j| unsafe { vld1q_u8(inp.add(16 * j)) })
    } else {
        core::array::from_fn(|j| {
            if j < full {
                // SAFETY: block j < full of `inp`.
                unsafe { vld1q_u8(inp.add(16 * j)) }
            } else {
                vdupq_n_u8(0)
            }
        })
    };
    let mut x: [uint32x4_t; N] = core::array::from_fn(|j| {
        let v = if j == 0 { *iv } else { c[j - 1] };
        vreinterpretq_u32_u8(vrev32q_u8(v))
    });
    for k in k {
        for x in x.iter_mut() {
            sm4e(x, *k);
        }
    }
    for (j, x) in x.iter().enumerate() {
        let e = output_bytes(*x);
        if full == N || j < full {
            // SAFETY: block j < full of `out`.
            unsafe { vst1q_u8(out.add(16 * j), veorq_u8(e, c[j])) };
        } else {
            // SAFETY: 16 writable bytes.
            unsafe { vst1q_u8(ks.as_mut_ptr(), e) };
        }
    }
    if full > 0 {
        *iv = c[full - 1];
    }
}

/// CFB decryption of `n` blocks (and the tail's keystream block into `ks`
/// when `tail`), eight chains at a time, chaining value `iv` updated.
///
/// # Safety
/// `inp` readable and `out` writable for `n` blocks (equal or disjoint);
/// the CPU supports the SM4 instructions.
#[inline]
#[target_feature(enable = "neon,sm4")]
pub(crate) unsafe fn cfb_decrypt(
    rk: &[u32; 32],
    iv: &mut [u8; 16],
    inp: *const u8,
    out: *mut u8,
    n: usize,
    tail: bool,
    ks: &mut [u8; 16],
) {
    let k = load_keys(rk);
    // SAFETY: 16 readable bytes.
    let mut v = unsafe { vld1q_u8(iv.as_ptr()) };
    let total = n + usize::from(tail);
    let mut i = 0;
    // SAFETY: (every call) blocks i.. are within the `n` blocks of both
    // buffers; `full` counts only those.
    unsafe {
        while n - i >= 8 {
            cfb_decrypt_n::<8>(&k, &mut v, inp.add(16 * i), out.add(16 * i), 8, ks);
            i += 8;
        }
        let (inp, out, full) = (inp.add(16 * i), out.add(16 * i), n - i);
        match total - i {
            0 => {}
            8 => cfb_decrypt_n::<8>(&k, &mut v, inp, out, full, ks),
            1 => cfb_decrypt_n::<1>(&k, &mut v, inp, out, full, ks),
            2 => cfb_decrypt_n::<2>(&k, &mut v, inp, out, full, ks),
            3 => cfb_decrypt_n::<3>(&k, &mut v, inp, out, full, ks),
            4 => cfb_decrypt_n::<4>(&k, &mut v, inp, out, full, ks),
            5 => cfb_decrypt_n::<5>(&k, &mut v, inp, out, full, ks),
            6 => cfb_decrypt_n::<6>(&k, &mut v, inp, out, full, ks),
            _ => cfb_decrypt_n::<7>(&k, &mut v, inp, out, full, ks),
        }
        vst1q_u8(iv.as_mut_ptr(), v);
    }
}

/// The XTS tweak as its bytes, from its number form as (low, high) 64-bit
/// lanes: IEEE 1619's number is little-endian, GB/T 17964's big-endian.
#[inline]
#[target_feature(enable = "neon")]
fn tweak_bytes<const GB: bool>(t: uint64x2_t) -> uint8x16_t {
    let b = vreinterpretq_u8_u64(t);
    if GB {
        let r = vrev64q_u8(b);
        vextq_u8::<8>(r, r)
    } else {
        b
    }
}

/// The tweak times `x`, by shifts and masks (no branch on the secret
/// tweak): IEEE 1619 shifts the number left and folds the carry back as
/// `0x87`; GB/T 17964 shifts it right and folds the bit out as `0xe1` at
/// the top.
#[inline]
#[target_feature(enable = "neon")]
fn tweak_mul_x<const GB: bool>(t: uint64x2_t) -> uint64x2_t {
    let zero = vdupq_n_u64(0);
    if GB {
        // (lo >> 1 | hi << 63, hi >> 1 ^ (lo & 1) * 0xe1 << 56): the bits
        // shifted out, swapped between the lanes; the low lane's as a mask.
        let out = vshlq_n_u64::<63>(t);
        let out = vextq_u64::<1>(out, out);
        let mask = vreinterpretq_u64_s64(vshrq_n_s64::<63>(vreinterpretq_s64_u64(out)));
        // SAFETY: two 8-byte values each.
        let (carry, fold) = unsafe {
            (
                vld1q_u64([u64::MAX, 0].as_ptr()),
                vld1q_u64([0, 0xe1 << 56].as_ptr()),
            )
        };
        let r = veorq_u64(vandq_u64(out, carry), vandq_u64(mask, fold));
        veorq_u64(vshrq_n_u64::<1>(t), r)
    } else {
        // (lo << 1 ^ (hi >> 63) * 0x87, hi << 1 | lo >> 63)
        let carry = vextq_u64::<1>(vshrq_n_u64::<63>(t), vshrq_n_u64::<63>(t));
        // SAFETY: two 8-byte values.
        let fold = unsafe { vld1q_u64([0x87, 1].as_ptr()) };
        let r = vandq_u64(vsubq_u64(zero, carry), fold);
        veorq_u64(vshlq_n_u64::<1>(t), r)
    }
}

/// XTS over `N` blocks in place: `N` independent `sm4e` chains, each
/// block whitened with its tweak before and after; `tw` advances by `N`
/// tweaks.
///
/// # Safety
/// `p` is readable and writable for `N` blocks; the CPU supports the SM4
/// instructions.
#[inline]
#[target_feature(enable = "neon,sm4")]
unsafe fn xts_n<const N: usize, const GB: bool>(
    k: &[uint32x4_t; 8],
    tw: &mut uint64x2_t,
    p: *mut u8,
) {
    let mut tb = [vdupq_n_u8(0); N];
    let mut x = [vdupq_n_u32(0); N];
    for j in 0..N {
        tb[j] = tweak_bytes::<GB>(*tw);
        *tw = tweak_mul_x::<GB>(*tw);
        // SAFETY: block j < N.
        let d = unsafe { vld1q_u8(p.add(16 * j)) };
        x[j] = vreinterpretq_u32_u8(vrev32q_u8(veorq_u8(d, tb[j])));
    }
    for k in k {
        for x in x.iter_mut() {
            sm4e(x, *k);
        }
    }
    for j in 0..N {
        // SAFETY: block j < N.
        unsafe { vst1q_u8(p.add(16 * j), veorq_u8(output_bytes(x[j]), tb[j])) };
    }
}

/// `Kernel::xts_run`: XTS over `n` blocks in place, eight chains at a
/// time, the tweaks `t·x^j` made in registers; returns the tweak after
/// them.
///
/// # Safety
/// `p` is readable and writable for `n` blocks; the CPU supports the SM4
/// instructions.
#[inline]
#[target_feature(enable = "neon,sm4")]
pub(crate) unsafe fn xts_run<const GB: bool>(
    rk: &[u32; 32],
    t: u128,
    p: *mut u8,
    n: usize,
) -> u128 {
    let k = load_keys(rk);
    // SAFETY: two 8-byte values.
    let mut tw = unsafe { vld1q_u64([t as u64, (t >> 64) as u64].as_ptr()) };
    let mut i = 0;
    // SAFETY: (every call) blocks i.. are within the `n` blocks.
    unsafe {
        while n - i >= 8 {
            xts_n::<8, GB>(&k, &mut tw, p.add(16 * i));
            i += 8;
        }
        let p = p.add(16 * i);
        match n - i {
            0 => {}
            1 => xts_n::<1, GB>(&k, &mut tw, p),
            2 => xts_n::<2, GB>(&k, &mut tw, p),
            3 => xts_n::<3, GB>(&k, &mut tw, p),
            4 => xts_n::<4, GB>(&k, &mut tw, p),
            5 => xts_n::<5, GB>(&k, &mut tw, p),
            6 => xts_n::<6, GB>(&k, &mut tw, p),
            _ => xts_n::<7, GB>(&k, &mut tw, p),
        }
    }
    u128::from(vgetq_lane_u64::<0>(tw)) | u128::from(vgetq_lane_u64::<1>(tw)) << 64
}

/// One step of [`chain`] with `N` blocks in use: the chained block (its
/// input `st ^ B`) and `N - 1` side blocks, `N` `sm4e` chains; the outputs
/// into `out`, the chained block's also returned.
#[inline]
#[target_feature(enable = "neon,sm4")]
fn chain_step<const N: usize>(
    k: &[uint32x4_t; 8],
    st: uint8x16_t,
    blocks: &[u128; 4],
    out: &mut [Blk; 4],
    input: &mut Blk,
) -> uint8x16_t {
    let i = veorq_u8(st, crate::simd::aarch64::bytes_of(blocks[0]));
    // SAFETY: a 16-byte block.
    unsafe { vst1q_u8(input.as_mut_ptr(), i) };
    let mut x: [uint32x4_t; N] = core::array::from_fn(|j| {
        let v = if j == 0 {
            i
        } else {
            crate::simd::aarch64::bytes_of(blocks[j])
        };
        vreinterpretq_u32_u8(vrev32q_u8(v))
    });
    for k in k {
        for x in x.iter_mut() {
            sm4e(x, *k);
        }
    }
    let y = x.map(|x| output_bytes(x));
    for (o, y) in out.iter_mut().zip(y) {
        // SAFETY: a 16-byte block.
        unsafe { vst1q_u8(o.as_mut_ptr(), y) };
    }
    y[0]
}

/// `Kernel::chain`: the keys and the chained block in registers from step
/// to step, and only the side blocks in use encrypted (each costs eight
/// `sm4e`).
///
/// # Safety
/// The CPU supports the SM4 instructions.
#[inline]
#[target_feature(enable = "neon,sm4")]
pub(crate) unsafe fn chain(
    rk: &[u32; 32],
    state: &mut Blk,
    steps: usize,
    io: &mut impl crate::kernel::ChainIo,
) {
    let k = load_keys(rk);
    // SAFETY: 16 readable bytes.
    let mut st = unsafe { vld1q_u8(state.as_ptr()) };
    let mut out = [Blk::default(); 4];
    let mut input = Blk::default();
    for s in 0..steps {
        let blocks = io.feed(s);
        st = match io.blocks(s) {
            1 => chain_step::<1>(&k, st, &blocks, &mut out, &mut input),
            2 => chain_step::<2>(&k, st, &blocks, &mut out, &mut input),
            3 => chain_step::<3>(&k, st, &blocks, &mut out, &mut input),
            _ => chain_step::<4>(&k, st, &blocks, &mut out, &mut input),
        };
        io.emit(s, &out, &input);
    }
    // SAFETY: 16 writable bytes.
    unsafe { vst1q_u8(state.as_mut_ptr(), st) };
}

/// Encrypts or decrypts the first `n` (1 to 4) of four blocks in place.
///
/// # Safety
/// The CPU must support NEON and the SM4 instructions.
#[inline]
#[target_feature(enable = "neon,sm4")]
pub(crate) unsafe fn crypt_lanes(rk: &[u32; 32], blocks: &mut [Blk; 4], n: usize) {
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
pub(crate) unsafe fn crypt_stage(rk: &[u32; 32], stage: &mut [Blk], n: usize) {
    // SAFETY: the caller guarantees the features.
    unsafe { crypt_blocks(rk, (&mut stage[..n]).into()) }
}

crate::kernel::kernel_token! {
    features = "neon,sm4";
    // Not free: a lane is eight more `sm4e`, and the side lanes'
    // bookkeeping cost more instructions than a separate CTR pass (CCM: 6.5
    // instructions per byte with the counters in the lanes, 2.6 without).
    const FREE_LANES: bool = false;
    // Whole-block CTR, CBC and CFB decryption and XTS in registers (for
    // the instruction count; see `ctr_xor`).
    #[inline(always)]
    fn ctr_xor(
        self,
        rk: &[u32; 32],
        c: u128,
        blocks: cipher::InOutBuf<'_, '_, crate::block::Blk>,
        extra: &mut [(u128, crate::block::Blk)],
        stage: &mut crate::kernel::LazyStage,
    ) {
        let n = blocks.len();
        if crate::ct::counter_carries(c, n) || extra.len() > 4 {
            // The low half carries (once in 2^64 blocks; a public answer,
            // declassified in `ct`).
            return crate::kernel::ctr_stages(self, rk, c, blocks, extra, stage);
        }
        let (i, o) = blocks.into_raw();
        // SAFETY: the token exists only inside the `sm4ce` runner;
        // `InOutBuf` holds `n` blocks in and out, equal or disjoint.
        unsafe { self::ctr_xor(rk, c, i.cast(), o.cast(), n) };
        crate::kernel::crypt_extras(self, rk, extra);
    }
    #[inline(always)]
    fn cbc_decrypt(
        self,
        rk: &[u32; 32],
        iv: &mut crate::block::Blk,
        blocks: cipher::InOutBuf<'_, '_, crate::block::Blk>,
        _stage: &mut crate::kernel::LazyStage,
    ) {
        let n = blocks.len();
        let (i, o) = blocks.into_raw();
        // SAFETY: as in `ctr_xor`.
        unsafe { self::cbc_decrypt(rk, &mut iv.0, i.cast(), o.cast(), n) };
    }
    #[inline(always)]
    fn cfb_decrypt(
        self,
        rk: &[u32; 32],
        iv: &mut crate::block::Blk,
        blocks: cipher::InOutBuf<'_, '_, crate::block::Blk>,
        tail: Option<&mut crate::block::Blk>,
        _stage: &mut crate::kernel::LazyStage,
    ) {
        let n = blocks.len();
        let (i, o) = blocks.into_raw();
        let mut ks = [0u8; 16];
        // SAFETY: as in `ctr_xor`.
        unsafe {
            self::cfb_decrypt(rk, &mut iv.0, i.cast(), o.cast(), n, tail.is_some(), &mut ks)
        };
        if let Some(t) = tail {
            *t = ks.into();
        }
    }
    crate::kernel::chain_hook!();
    const XTS_RUNS: bool = true;
    #[inline(always)]
    fn xts_run<O: crate::kernel::TweakOrder>(
        self,
        rk: &[u32; 32],
        t: u128,
        blocks: &mut [crate::block::Blk],
    ) -> u128 {
        let (p, n) = (blocks.as_mut_ptr().cast::<u8>(), blocks.len());
        // SAFETY: the token exists only inside the `sm4ce` runner;
        // `blocks` is `n` blocks, in place.
        unsafe {
            if O::GB {
                self::xts_run::<true>(rk, t, p, n)
            } else {
                self::xts_run::<false>(rk, t, p, n)
            }
        }
    }
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
