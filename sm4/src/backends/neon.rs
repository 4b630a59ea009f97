//! aarch64 Advanced SIMD (NEON) backend.
//!
//! Four blocks share one set of four `uint32x4_t` registers: register `k`
//! holds word `k` of each of the four blocks (a 4×4 word transpose after
//! loading). Two such groups (eight blocks) run interleaved so that the
//! table-lookup latency of one group overlaps the other. A tail of one to
//! seven blocks is padded to one pass of four or eight blocks; a single
//! block (the chained modes) broadcasts its words to the lanes instead.
//!
//! The S-box is the 256-byte table held in sixteen vector registers and
//! looked up with `tbl`/`tbx` over four 64-byte quarters (indices offset by
//! 0, 64, 128 and 192). Every lookup touches all sixteen registers whatever
//! the index, so there is no secret-dependent memory access or branch.
//! The linear map `L` uses byte shuffles and a shift-insert rotation.
//!
//! Uses the block type, the aarch64 primitives (`crate::simd::aarch64`)
//! and the contract; its `impl Kernel` is the `kernel_token!` at the end.

use crate::block::Blk;
use cipher::{InOutBuf, consts::U8};
use core::arch::aarch64::*;

/// Blocks per batch this kernel wants from the modes.
pub(crate) type ParBlocks = U8;

/// The SM4 S-box (GB/T 32907).
pub(crate) static SBOX: [u8; 256] = [
    0xd6, 0x90, 0xe9, 0xfe, 0xcc, 0xe1, 0x3d, 0xb7, 0x16, 0xb6, 0x14, 0xc2, 0x28, 0xfb, 0x2c, 0x05,
    0x2b, 0x67, 0x9a, 0x76, 0x2a, 0xbe, 0x04, 0xc3, 0xaa, 0x44, 0x13, 0x26, 0x49, 0x86, 0x06, 0x99,
    0x9c, 0x42, 0x50, 0xf4, 0x91, 0xef, 0x98, 0x7a, 0x33, 0x54, 0x0b, 0x43, 0xed, 0xcf, 0xac, 0x62,
    0xe4, 0xb3, 0x1c, 0xa9, 0xc9, 0x08, 0xe8, 0x95, 0x80, 0xdf, 0x94, 0xfa, 0x75, 0x8f, 0x3f, 0xa6,
    0x47, 0x07, 0xa7, 0xfc, 0xf3, 0x73, 0x17, 0xba, 0x83, 0x59, 0x3c, 0x19, 0xe6, 0x85, 0x4f, 0xa8,
    0x68, 0x6b, 0x81, 0xb2, 0x71, 0x64, 0xda, 0x8b, 0xf8, 0xeb, 0x0f, 0x4b, 0x70, 0x56, 0x9d, 0x35,
    0x1e, 0x24, 0x0e, 0x5e, 0x63, 0x58, 0xd1, 0xa2, 0x25, 0x22, 0x7c, 0x3b, 0x01, 0x21, 0x78, 0x87,
    0xd4, 0x00, 0x46, 0x57, 0x9f, 0xd3, 0x27, 0x52, 0x4c, 0x36, 0x02, 0xe7, 0xa0, 0xc4, 0xc8, 0x9e,
    0xea, 0xbf, 0x8a, 0xd2, 0x40, 0xc7, 0x38, 0xb5, 0xa3, 0xf7, 0xf2, 0xce, 0xf9, 0x61, 0x15, 0xa1,
    0xe0, 0xae, 0x5d, 0xa4, 0x9b, 0x34, 0x1a, 0x55, 0xad, 0x93, 0x32, 0x30, 0xf5, 0x8c, 0xb1, 0xe3,
    0x1d, 0xf6, 0xe2, 0x2e, 0x82, 0x66, 0xca, 0x60, 0xc0, 0x29, 0x23, 0xab, 0x0d, 0x53, 0x4e, 0x6f,
    0xd5, 0xdb, 0x37, 0x45, 0xde, 0xfd, 0x8e, 0x2f, 0x03, 0xff, 0x6a, 0x72, 0x6d, 0x6c, 0x5b, 0x51,
    0x8d, 0x1b, 0xaf, 0x92, 0xbb, 0xdd, 0xbc, 0x7f, 0x11, 0xd9, 0x5c, 0x41, 0x1f, 0x10, 0x5a, 0xd8,
    0x0a, 0xc1, 0x31, 0x88, 0xa5, 0xcd, 0x7b, 0xbd, 0x2d, 0x74, 0xd0, 0x12, 0xb8, 0xe5, 0xb4, 0xb0,
    0x89, 0x69, 0x97, 0x4a, 0x0c, 0x96, 0x77, 0x7e, 0x65, 0xb9, 0xf1, 0x09, 0xc5, 0x6e, 0xc6, 0x84,
    0x18, 0xf0, 0x7d, 0xec, 0x3a, 0xdc, 0x4d, 0x20, 0x79, 0xee, 0x5f, 0x3e, 0xd7, 0xcb, 0x39, 0x48,
];

/// `tbl` indices rotating every 32-bit lane left by 8 bits.
static ROL8: [u8; 16] = [3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14];

/// Values kept in registers for a whole call.
struct Consts {
    /// The S-box as four 64-byte quarters.
    sbox: [uint8x16x4_t; 4],
    rol8: uint8x16_t,
    c64: uint8x16_t,
    c128: uint8x16_t,
}

impl Consts {
    /// Loads the tables.
    #[inline]
    #[target_feature(enable = "neon")]
    fn load() -> Self {
        let q = |i: usize| -> uint8x16x4_t {
            let t = &SBOX[64 * i..64 * i + 64];
            let v = |j: usize| -> uint8x16_t {
                let b: &[u8; 16] = t[16 * j..16 * j + 16].try_into().unwrap();
                // SAFETY: `b` is a valid 16-byte array; `vld1q_u8` has no
                // alignment requirement.
                unsafe { vld1q_u8(b.as_ptr()) }
            };
            uint8x16x4_t(v(0), v(1), v(2), v(3))
        };
        // SAFETY: 16-byte arrays read through `vld1q_u8`, which has no
        // alignment requirement.
        let rol8 = unsafe { vld1q_u8(ROL8.as_ptr()) };
        Self {
            sbox: [q(0), q(1), q(2), q(3)],
            rol8,
            c64: vdupq_n_u8(64),
            c128: vdupq_n_u8(128),
        }
    }
}

/// The non-linear map τ (S-box on every byte) followed by the linear map L,
/// on four 32-bit words at once.
#[inline]
#[target_feature(enable = "neon")]
fn tau_l(c: &Consts, x: uint32x4_t) -> uint32x4_t {
    let x = vreinterpretq_u8_u32(x);
    // Index offsets for the four quarters. A `tbl`/`tbx` index of 64 or more
    // is out of range (gives 0 / keeps the destination), so each byte is
    // taken from exactly one quarter; the subtraction wraps for the others.
    let x1 = vsubq_u8(x, c.c64);
    let x2 = vsubq_u8(x, c.c128);
    let x3 = vsubq_u8(x1, c.c128);
    let lo = vqtbx4q_u8(vqtbl4q_u8(c.sbox[0], x), c.sbox[1], x1);
    let hi = vqtbx4q_u8(vqtbl4q_u8(c.sbox[2], x2), c.sbox[3], x3);
    let b = vorrq_u8(lo, hi);
    // L(B) = B ^ (B <<< 2) ^ (B <<< 10) ^ (B <<< 18) ^ (B <<< 24)
    //      = B ^ (B <<< 24) ^ ((B ^ (B <<< 8) ^ (B <<< 16)) <<< 2),
    // with B <<< 24 = (B <<< 16) <<< 8 so that one shuffle constant serves.
    let r8 = vqtbl1q_u8(b, c.rol8);
    let r16 = vreinterpretq_u8_u16(vrev32q_u16(vreinterpretq_u16_u8(b)));
    let r24 = vqtbl1q_u8(r16, c.rol8);
    let t = vreinterpretq_u32_u8(veorq_u8(veorq_u8(b, r8), r16));
    let t = vsliq_n_u32::<2>(vshrq_n_u32::<30>(t), t);
    veorq_u32(vreinterpretq_u32_u8(veorq_u8(b, r24)), t)
}

/// Four rounds on `G` groups of four blocks, with round keys `k`.
#[inline]
#[target_feature(enable = "neon")]
fn rounds4<const G: usize>(c: &Consts, s: &mut [[uint32x4_t; 4]; G], k: &[u32; 4]) {
    for r in 0..4 {
        let rk = vdupq_n_u32(k[r]);
        for x in s.iter_mut() {
            // Round i: X[i+4] = X[i] ^ T(X[i+1] ^ X[i+2] ^ X[i+3] ^ rk[i]),
            // with the four words stored cyclically.
            let t = veorq_u32(
                veorq_u32(x[(r + 1) % 4], x[(r + 2) % 4]),
                veorq_u32(x[(r + 3) % 4], rk),
            );
            x[r] = veorq_u32(x[r], tau_l(c, t));
        }
    }
}

/// Transposes four rows of four 32-bit words.
#[inline]
#[target_feature(enable = "neon")]
fn transpose(a: [uint32x4_t; 4]) -> [uint32x4_t; 4] {
    let t0 = vreinterpretq_u64_u32(vtrn1q_u32(a[0], a[1]));
    let t1 = vreinterpretq_u64_u32(vtrn2q_u32(a[0], a[1]));
    let t2 = vreinterpretq_u64_u32(vtrn1q_u32(a[2], a[3]));
    let t3 = vreinterpretq_u64_u32(vtrn2q_u32(a[2], a[3]));
    [
        vreinterpretq_u32_u64(vzip1q_u64(t0, t2)),
        vreinterpretq_u32_u64(vzip1q_u64(t1, t3)),
        vreinterpretq_u32_u64(vzip2q_u64(t0, t2)),
        vreinterpretq_u32_u64(vzip2q_u64(t1, t3)),
    ]
}

/// Encrypts `4 * G` consecutive blocks from `inp` to `out` (which may be
/// equal).
///
/// # Safety
/// `inp` must be readable and `out` writable for `64 * G` bytes.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn crypt_groups<const G: usize>(c: &Consts, rk: &[u32; 32], inp: *const u8, out: *mut u8) {
    let zero = vdupq_n_u32(0);
    let mut s = [[zero; 4]; G];
    for (g, x) in s.iter_mut().enumerate() {
        let mut rows = [zero; 4];
        for (j, row) in rows.iter_mut().enumerate() {
            // SAFETY: block 4g+j lies inside the `64 * G` readable bytes;
            // `vld1q_u8` has no alignment requirement.
            let v = unsafe { vld1q_u8(inp.add(64 * g + 16 * j)) };
            // SM4 words are big-endian.
            *row = vreinterpretq_u32_u8(vrev32q_u8(v));
        }
        *x = transpose(rows);
    }
    let (keys, _) = rk.as_chunks::<4>();
    for k in keys {
        rounds4(c, &mut s, k);
    }
    for (g, x) in s.iter().enumerate() {
        // The output is (X35, X34, X33, X32); after 32 rounds the cyclic
        // storage holds X32..X35 in x[0..4].
        let rows = transpose([x[3], x[2], x[1], x[0]]);
        for (j, row) in rows.iter().enumerate() {
            let v = vrev32q_u8(vreinterpretq_u8_u32(*row));
            // SAFETY: block 4g+j lies inside the `64 * G` writable bytes.
            unsafe { vst1q_u8(out.add(64 * g + 16 * j), v) };
        }
    }
}

/// Encrypts one block, for the chained modes (CBC and CFB encryption,
/// CMAC): the four words are broadcast to the four lanes (no transpose, no
/// padding) and the same round code runs on them.
///
/// # Safety
/// `inp` must be readable and `out` writable for 16 bytes.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn crypt_one(c: &Consts, rk: &[u32; 32], inp: *const u8, out: *mut u8) {
    // SAFETY: 16 readable bytes; no alignment requirement.
    let v = vreinterpretq_u32_u8(vrev32q_u8(unsafe { vld1q_u8(inp) }));
    let mut s = [[
        vdupq_laneq_u32::<0>(v),
        vdupq_laneq_u32::<1>(v),
        vdupq_laneq_u32::<2>(v),
        vdupq_laneq_u32::<3>(v),
    ]];
    let (keys, _) = rk.as_chunks::<4>();
    for k in keys {
        rounds4(c, &mut s, k);
    }
    let [x] = s;
    // (X35, X34, X33, X32) from lane 0 of x[3], x[2], x[1], x[0].
    let hi = vreinterpretq_u64_u32(vzip1q_u32(x[3], x[2]));
    let lo = vreinterpretq_u64_u32(vzip1q_u32(x[1], x[0]));
    let r = vreinterpretq_u8_u64(vzip1q_u64(hi, lo));
    // SAFETY: 16 writable bytes.
    unsafe { vst1q_u8(out, vrev32q_u8(r)) };
}

/// Any number of blocks: 8-block passes, then one padded pass for the rest.
///
/// # Safety
/// `inp` readable and `out` writable for `16 * n` bytes, disjoint or equal.
#[inline(never)]
#[target_feature(enable = "neon")]
unsafe fn crypt_many(rk: &[u32; 32], inp: *const u8, out: *mut u8, n: usize) {
    let c = Consts::load();
    let mut i = 0;
    while n - i >= 8 {
        // SAFETY: blocks i..i+8 are inside the buffers of `n` blocks; in and
        // out are either disjoint or equal, and every block is loaded before
        // it is stored.
        unsafe { crypt_groups::<2>(&c, rk, inp.add(16 * i), out.add(16 * i)) };
        i += 8;
    }
    let rem = n - i;
    if rem == 0 {
        return;
    }
    // Tail: pad into a stack buffer (lengths are public, so these branches
    // reveal nothing secret).
    let mut buf = [0u8; 128];
    // SAFETY: `rem` (< 8) blocks remain from block `i`; the buffer holds 8.
    unsafe { core::ptr::copy_nonoverlapping(inp.add(16 * i), buf.as_mut_ptr(), 16 * rem) };
    let p = buf.as_mut_ptr();
    if rem > 4 {
        // SAFETY: `buf` holds 8 blocks.
        unsafe { crypt_groups::<2>(&c, rk, p, p) };
    } else {
        // SAFETY: `buf` holds at least 4 blocks.
        unsafe { crypt_groups::<1>(&c, rk, p, p) };
    }
    // SAFETY: `rem` blocks are writable from block `i` of `out`.
    unsafe { core::ptr::copy_nonoverlapping(buf.as_ptr(), out.add(16 * i), 16 * rem) };
}

/// Encrypts (`rk` = encryption round keys) or decrypts (`rk` = the reversed
/// schedule) any number of blocks, in place or out of place.
///
/// # Safety
/// The CPU must support NEON (always true on aarch64 targets with the
/// default feature set; the caller's detection guarantees it).
#[inline]
#[target_feature(enable = "neon")]
pub(crate) unsafe fn crypt_blocks(rk: &[u32; 32], blocks: InOutBuf<'_, '_, Blk>) {
    let n = blocks.len();
    let (inp, out) = blocks.into_raw();
    let (inp, out) = (inp.cast::<u8>(), out.cast::<u8>());
    if n == 1 {
        // Small enough to inline into a chained mode's loop, where the table
        // loads (from an immutable static) can be hoisted.
        let c = Consts::load();
        // SAFETY: one block in each buffer (from `InOutBuf`).
        unsafe { crypt_one(&c, rk, inp, out) };
    } else {
        // SAFETY: `n` blocks in each buffer (from `InOutBuf`), disjoint or
        // equal.
        unsafe { crypt_many(rk, inp, out, n) };
    }
}

/// `Kernel::chain`: the S-box table and the chained block's words in
/// registers from step to step; the chained block in lane 0 of a four-block
/// group, the side blocks in lanes 1-3 (free: a group costs what one block
/// does).
///
/// # Safety
/// The CPU supports NEON.
#[inline]
#[target_feature(enable = "neon")]
pub(crate) unsafe fn chain(
    rk: &[u32; 32],
    state: &mut Blk,
    steps: usize,
    io: &mut impl crate::kernel::ChainIo,
) {
    let c = Consts::load();
    let words = |b: uint8x16_t| vreinterpretq_u32_u8(vrev32q_u8(b));
    // SAFETY: four 4-byte values.
    let lane0 = unsafe { vld1q_u32([u32::MAX, 0, 0, 0].as_ptr()) };
    let zero = vdupq_n_u32(0);
    // SAFETY: 16 readable bytes.
    let first = words(unsafe { vld1q_u8(state.as_ptr()) });
    // Output word i of the last step in lane 0 of `prev[i]`.
    let mut prev = transpose([first, zero, zero, zero]);
    let mut cur = *state;
    let (keys, _) = rk.as_chunks::<4>();
    for s in 0..steps {
        let blocks = io.feed(s);
        let input = crate::block::xor(&cur, &blocks[0].to_ne_bytes().into());
        let w = transpose(blocks.map(|b| words(crate::simd::aarch64::bytes_of(b))));
        let mut x = [core::array::from_fn(|i| {
            veorq_u32(vandq_u32(prev[i], lane0), w[i])
        })];
        for k in keys {
            rounds4(&c, &mut x, k);
        }
        let [x] = x;
        prev = [x[3], x[2], x[1], x[0]];
        let mut out = [Blk::default(); 4];
        for (o, row) in out.iter_mut().zip(transpose(prev)) {
            // SAFETY: a 16-byte block.
            unsafe { vst1q_u8(o.as_mut_ptr(), vrev32q_u8(vreinterpretq_u8_u32(row))) };
        }
        cur = out[0];
        io.emit(s, &out, &input);
    }
    *state = cur;
}

/// Encrypts or decrypts the first `n` (1 to 4) of four blocks in place.
///
/// # Safety
/// The CPU must support NEON.
#[inline]
#[target_feature(enable = "neon")]
pub(crate) unsafe fn crypt_lanes(rk: &[u32; 32], blocks: &mut [Blk; 4], n: usize) {
    // SAFETY: the caller guarantees the features.
    unsafe { crypt_blocks(rk, (&mut blocks[..n]).into()) }
}

/// Encrypts or decrypts the first `n` blocks (`1..=STAGE`) of a mode
/// driver's stage in place.
///
/// # Safety
/// The CPU must support NEON.
#[inline]
#[target_feature(enable = "neon")]
pub(crate) unsafe fn crypt_stage(rk: &[u32; 32], stage: &mut [Blk], n: usize) {
    // SAFETY: the caller guarantees the features.
    unsafe { crypt_blocks(rk, (&mut stage[..n]).into()) }
}

#[cfg(test)]
pub(crate) mod tests {
    //! Direct kernel tests against a tiny scalar reference SM4. The harness
    //! is shared with the `sm4ce` kernel's tests.
    extern crate std;
    use super::SBOX;
    use crate::block::Blk;
    use cipher::{InOutBuf, array::Array};
    use std::vec::Vec;

    const FK: [u32; 4] = [0xa3b1bac6, 0x56aa3350, 0x677d9197, 0xb27022dc];

    /// A kernel under test: round keys and blocks.
    pub(crate) type Kernel<'a> = &'a dyn Fn(&[u32; 32], InOutBuf<'_, '_, Blk>);

    fn ck(i: usize) -> u32 {
        u32::from_be_bytes(core::array::from_fn(|j| ((4 * i + j) * 7 % 256) as u8))
    }

    fn tau(x: u32) -> u32 {
        u32::from_be_bytes(x.to_be_bytes().map(|b| SBOX[usize::from(b)]))
    }

    /// Reference key expansion (GB/T 32907 section 7.3).
    pub(crate) fn ref_expand(key: &[u8; 16]) -> [u32; 32] {
        let mut k: [u32; 36] = [0; 36];
        for i in 0..4 {
            k[i] = u32::from_be_bytes(key[4 * i..4 * i + 4].try_into().unwrap()) ^ FK[i];
        }
        for i in 0..32 {
            let b = tau(k[i + 1] ^ k[i + 2] ^ k[i + 3] ^ ck(i));
            k[i + 4] = k[i] ^ b ^ b.rotate_left(13) ^ b.rotate_left(23);
        }
        k[4..].try_into().unwrap()
    }

    /// Reference single-block encryption (or decryption with reversed keys).
    pub(crate) fn ref_crypt(rk: &[u32; 32], block: &[u8; 16]) -> [u8; 16] {
        let mut x: [u32; 36] = [0; 36];
        for i in 0..4 {
            x[i] = u32::from_be_bytes(block[4 * i..4 * i + 4].try_into().unwrap());
        }
        for i in 0..32 {
            let b = tau(x[i + 1] ^ x[i + 2] ^ x[i + 3] ^ rk[i]);
            x[i + 4] = x[i]
                ^ b
                ^ b.rotate_left(2)
                ^ b.rotate_left(10)
                ^ b.rotate_left(18)
                ^ b.rotate_left(24);
        }
        let mut out = [0u8; 16];
        for i in 0..4 {
            out[4 * i..4 * i + 4].copy_from_slice(&x[35 - i].to_be_bytes());
        }
        out
    }

    pub(crate) fn reversed(rk: &[u32; 32]) -> [u32; 32] {
        let mut d = *rk;
        d.reverse();
        d
    }

    pub(crate) const GBT_KEY: [u8; 16] = [
        0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32,
        0x10,
    ];
    pub(crate) const GBT_CT: [u8; 16] = [
        0x68, 0x1e, 0xdf, 0x34, 0xd2, 0x06, 0x96, 0x5e, 0x86, 0xb3, 0xe9, 0x4f, 0x53, 0x6e, 0x42,
        0x46,
    ];

    /// Runs a kernel over `data` (a whole number of blocks), in place.
    fn run_in_place(crypt: Kernel<'_>, rk: &[u32; 32], data: &mut [u8]) {
        let (blocks, rest) = Array::slice_as_chunks_mut(data);
        assert!(rest.is_empty());
        crypt(rk, InOutBuf::from(blocks));
    }

    /// Runs a kernel from `inp` to `out` (equal lengths, whole blocks).
    fn run_out_of_place(crypt: Kernel<'_>, rk: &[u32; 32], inp: &[u8], out: &mut [u8]) {
        let (ib, _) = Array::slice_as_chunks(inp);
        let (ob, _) = Array::slice_as_chunks_mut(out);
        crypt(rk, InOutBuf::new(ib, ob).unwrap());
    }

    /// The shared kernel check: the GB/T 32907 example, then random keys and
    /// 1..=40 blocks at misaligned addresses, in place and out of place,
    /// against the reference, and decrypt(encrypt(x)) == x.
    pub(crate) fn check_kernel(crypt: Kernel<'_>) {
        let rk = ref_expand(&GBT_KEY);
        let mut b = GBT_KEY;
        run_in_place(crypt, &rk, &mut b);
        assert_eq!(b, GBT_CT, "GB/T 32907 example");
        run_in_place(crypt, &reversed(&rk), &mut b);
        assert_eq!(b, GBT_KEY, "GB/T 32907 example, decrypt");

        let mut rng = testkit::Rng::new(0x5134_a4c4);
        for n in 1..=40usize {
            let key: [u8; 16] = rng.array();
            let ek = ref_expand(&key);
            let dk = reversed(&ek);
            let pt = rng.bytes(16 * n);
            let expect: Vec<u8> = pt
                .chunks_exact(16)
                .flat_map(|c| ref_crypt(&ek, c.try_into().unwrap()))
                .collect();
            let off_in = rng.below(16);
            let off_out = rng.below(16);

            // Out of place, misaligned on both sides.
            let mut src = std::vec![0u8; 16 * n + 16];
            src[off_in..off_in + 16 * n].copy_from_slice(&pt);
            let mut dst = std::vec![0u8; 16 * n + 16];
            run_out_of_place(
                crypt,
                &ek,
                &src[off_in..off_in + 16 * n],
                &mut dst[off_out..off_out + 16 * n],
            );
            assert_eq!(
                &dst[off_out..off_out + 16 * n],
                &expect[..],
                "encrypt, out of place, {n} blocks"
            );
            assert_eq!(&src[off_in..off_in + 16 * n], &pt[..], "input unchanged");

            // In place: decrypt back, then encrypt again.
            let ct = &mut dst[off_out..off_out + 16 * n];
            run_in_place(crypt, &dk, ct);
            assert_eq!(ct, &pt[..], "decrypt, in place, {n} blocks");
            run_in_place(crypt, &ek, ct);
            assert_eq!(ct, &expect[..], "encrypt, in place, {n} blocks");

            // Out of place decryption.
            let mut back = std::vec![0u8; 16 * n];
            run_out_of_place(crypt, &dk, &expect, &mut back);
            assert_eq!(back, pt, "decrypt, out of place, {n} blocks");
        }
    }

    #[test]
    fn reference_matches_gbt_example() {
        let rk = ref_expand(&GBT_KEY);
        assert_eq!(rk[0], 0xf12186f9);
        assert_eq!(rk[31], 0x9124a012);
        assert_eq!(ref_crypt(&rk, &GBT_KEY), GBT_CT);
    }

    #[test]
    fn neon_kernel() {
        // NEON is part of the aarch64 baseline, but check it like a backend.
        assert!(std::arch::is_aarch64_feature_detected!("neon"));
        check_kernel(&|rk, blocks| {
            // SAFETY: NEON support was checked above.
            unsafe { super::crypt_blocks(rk, blocks) }
        });
        std::println!("sm4 neon kernel: tested against the reference");
    }
}

crate::kernel::kernel_token! {
    features = "neon";
    // Free: NEON's four-block group.
    const FREE_LANES: bool = true;
    crate::kernel::chain_hook!();
}
