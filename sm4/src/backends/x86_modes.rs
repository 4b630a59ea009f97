//! The mode drivers' own work on x86_64: counter blocks, XTS tweaks and
//! the XORs, two blocks per `ymm` register (AVX2: `avx`, `gfni256`) or four
//! per `zmm` register (AVX-512: `gfni`).
//!
//! Written with vector stores of the kernel's own width for a reason beyond
//! the instruction count: a kernel loads its batch with 32- or 64-byte
//! loads right after the driver filled it, and a load that spans several
//! smaller stores cannot take its data from the store buffer; it waits
//! until they reach the cache. Filled with two 8-byte stores per block, a
//! 64-block stage of XTS blocks started its kernel about a hundred cycles
//! late (`gfni`: 1.03 c/B at 4096 bytes, 0.92 with `ymm` stores).
//!
//! One body of code for both widths (`modes_body!`), over a few
//! primitives each width module defines.

use super::super::modes::TweakOrder;
use cipher::Block;

type Blk = Block<crate::Sm4>;

/// `vpshufb` index reversing the bytes of each 64-bit half.
const BSWAP64: [i8; 16] = [7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8];
/// `vpshufb` index reversing all 16 bytes of each 128-bit lane.
const BSWAP128: [i8; 16] = [15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0];

/// `ctr_fill`, `xts_whiten` and `xor_blocks` over the width module's
/// primitives: `V`, `L` (blocks per register), `splat`, `from_blocks`,
/// `load`, `store` (the first `k` blocks), `xor`, `and`, `shl`, `shr`
/// (each 64-bit half, by a run-time count), `swap_halves`, `bytes`
/// (`vpshufb`), `add64`, `half_mask`.
macro_rules! modes_body {
    ($features:literal) => {
        /// Counter blocks `c, c + 1, ...` (128-bit big-endian) into `stage`.
        #[inline]
        #[target_feature(enable = $features)]
        pub(crate) fn ctr_fill(c: u128, stage: &mut [Blk]) {
            let n = stage.len();
            if crate::ct::counter_carries(c, n) {
                // The low half carries inside this stage (once in 2^64
                // blocks; declassified in `ct`): one block at a time.
                for (j, b) in stage.iter_mut().enumerate() {
                    *b = c.wrapping_add(j as u128).to_be_bytes().into();
                }
                return;
            }
            // As (high, low) halves, each byte-reversed on the way out.
            let mut v = from_blocks(core::array::from_fn(|j| (c + j as u128).rotate_left(64)));
            let step = from_blocks([(L as u128) << 64; L]);
            let bswap = splat(&BSWAP64);
            let p = stage.as_mut_ptr();
            for j in (0..n).step_by(L) {
                // SAFETY: blocks j..j + min(L, n - j) are in `stage`.
                unsafe { store(p.add(j), bytes(v, bswap), (n - j).min(L)) };
                v = add64(v, step);
            }
        }

        /// `v` (tweaks as (low, high) halves of the 128-bit number) times
        /// `x^k`, `k < 57`: the number shifts by `k` bits and the bits
        /// shifted out come back multiplied by the reduction polynomial
        /// (carry-less, by shifts: no table, no branch on the secret
        /// tweak). GB/T 17964 (bit-reflected): `(t >> k) ^ (clmul(t mod
        /// 2^k, 0xe1) << (121 - k))`, that is `r ^ r >> 1 ^ r >> 2 ^ r >>
        /// 7` with `r = t << (128 - k)`; IEEE 1619: `(t << k) ^ clmul(t >>
        /// (128 - k), 0x87)`, `r ^ r << 1 ^ r << 2 ^ r << 7`.
        #[inline]
        #[target_feature(enable = $features)]
        fn mul_xk<O: TweakOrder>(v: V, k: i32) -> V {
            if O::GB {
                let r = swap_halves(shl(v, 64 - k));
                let red = xor(xor(shr(r, 1), shr(r, 2)), shr(r, 7));
                xor(xor(shr(v, k), r), and(red, half_mask(true)))
            } else {
                let r = swap_halves(shr(v, 64 - k));
                let red = xor(xor(shl(r, 1), shl(r, 2)), shl(r, 7));
                xor(xor(shl(v, k), r), and(red, half_mask(false)))
            }
        }

        /// XTS whitening of a run of blocks: `tweaks[j] = t·x^j` and
        /// `stage[j] = data[j] ^ tweaks[j]` (all three the same length; or
        /// only the tweaks if `stage` is empty), as four independent chains
        /// of `L` tweaks each that step by `x^(4L)`.
        #[inline]
        #[target_feature(enable = $features)]
        pub(crate) fn xts_whiten<O: TweakOrder>(
            t: u128,
            data: &[Blk],
            stage: &mut [Blk],
            tweaks: &mut [Blk],
        ) {
            let n = tweaks.len();
            let whiten = !stage.is_empty();
            assert!(!whiten || (stage.len() == n && data.len() == n));
            let mut first = [t; L];
            for i in 1..L {
                first[i] = O::mul_x(first[i - 1]);
            }
            let v0 = from_blocks(first);
            let l = L as i32;
            let mut v = [
                v0,
                mul_xk::<O>(v0, l),
                mul_xk::<O>(v0, 2 * l),
                mul_xk::<O>(v0, 3 * l),
            ];
            let out = splat(&BSWAP128);
            let (d, s, w) = (data.as_ptr(), stage.as_mut_ptr(), tweaks.as_mut_ptr());
            let mut j = 0;
            while j < n {
                for vi in v.iter_mut() {
                    if j >= n {
                        break;
                    }
                    let k = (n - j).min(L);
                    let tw = if O::GB { bytes(*vi, out) } else { *vi };
                    // SAFETY: blocks j..j + k exist in `tweaks`, and in
                    // `data` and `stage` when they are used.
                    unsafe {
                        store(w.add(j), tw, k);
                        if whiten {
                            store(s.add(j), xor(load(d.add(j), k), tw), k);
                        }
                    }
                    *vi = mul_xk::<O>(*vi, 4 * l);
                    j += L;
                }
            }
        }

        /// `out[j] = a[j] ^ b[j]` for `n` blocks; `out` may be `a` itself
        /// (every block is read before its own position is written).
        ///
        /// # Safety
        /// `a` and `b` are readable and `out` writable for `n` blocks;
        /// `out` and `b` do not overlap, `out` and `a` are equal or
        /// disjoint.
        #[inline]
        #[target_feature(enable = $features)]
        pub(crate) unsafe fn xor_blocks(a: *const Blk, b: *const Blk, out: *mut Blk, n: usize) {
            for j in (0..n).step_by(L) {
                let k = (n - j).min(L);
                // SAFETY: blocks j..j + k are in all three buffers.
                unsafe { store(out.add(j), xor(load(a.add(j), k), load(b.add(j), k)), k) };
            }
        }
    };
}

/// Two blocks per AVX2 register.
pub(crate) mod ymm {
    use super::*;
    use core::arch::x86_64::*;

    type V = __m256i;
    const L: usize = 2;

    /// The 16 bytes `index` in both lanes.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(crate) fn splat(index: &[i8; 16]) -> V {
        // SAFETY: a 16-byte load from a 16-byte array.
        _mm256_broadcastsi128_si256(unsafe { _mm_loadu_si128(index.as_ptr().cast()) })
    }

    /// 128-bit numbers as (low, high) 64-bit halves, one per block.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn from_blocks(t: [u128; L]) -> V {
        _mm256_set_epi64x(
            (t[1] >> 64) as i64,
            t[1] as i64,
            (t[0] >> 64) as i64,
            t[0] as i64,
        )
    }

    /// `k` blocks (1 or 2) from `p`, lane 1 zero when `k` is 1 (nothing
    /// past them is read).
    ///
    /// # Safety
    /// `p` is readable for `k` blocks.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn load(p: *const Blk, k: usize) -> V {
        // SAFETY: by the caller's contract.
        unsafe {
            if k == L {
                _mm256_loadu_si256(p.cast())
            } else {
                _mm256_zextsi128_si256(_mm_loadu_si128(p.cast()))
            }
        }
    }

    /// # Safety
    /// `p` is writable for `k` blocks (1 or 2).
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn store(p: *mut Blk, v: V, k: usize) {
        // SAFETY: by the caller's contract.
        unsafe {
            if k == L {
                _mm256_storeu_si256(p.cast(), v);
            } else {
                _mm_storeu_si128(p.cast(), _mm256_castsi256_si128(v));
            }
        }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    pub(crate) fn xor(a: V, b: V) -> V {
        _mm256_xor_si256(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn and(a: V, b: V) -> V {
        _mm256_and_si256(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn shl(a: V, k: i32) -> V {
        _mm256_sll_epi64(a, _mm_cvtsi32_si128(k))
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn shr(a: V, k: i32) -> V {
        _mm256_srl_epi64(a, _mm_cvtsi32_si128(k))
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn swap_halves(a: V) -> V {
        _mm256_shuffle_epi32::<0x4e>(a)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn bytes(a: V, index: V) -> V {
        _mm256_shuffle_epi8(a, index)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn add64(a: V, b: V) -> V {
        _mm256_add_epi64(a, b)
    }
    /// All ones in the high (or low) 64-bit half of every block.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn half_mask(high: bool) -> V {
        let (h, l) = if high { (-1, 0) } else { (0, -1) };
        _mm256_set_epi64x(h, l, h, l)
    }

    /// Counter blocks `c` and `c + 1` as (high, low) 64-bit halves per
    /// lane, the low half in the upper qword: [`ctr_blocks`] turns them
    /// into the big-endian blocks `c + j`, `c + j + 1`.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(crate) fn ctr_pair(c: u128) -> V {
        _mm256_set_epi64x(
            c.wrapping_add(1) as i64,
            (c >> 64) as i64,
            c as i64,
            (c >> 64) as i64,
        )
    }

    /// The blocks `c + j`, `c + j + 1` of [`ctr_pair`]`(c)` (the low 64 bits
    /// of `c` do not carry up to them).
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(crate) fn ctr_blocks(pair: V, j: usize) -> V {
        let j = j as i64;
        bytes(add64(pair, _mm256_set_epi64x(j, 0, j, 0)), splat(&BSWAP64))
    }

    modes_body!("avx2");
}

/// Four blocks per AVX-512 register (with masked loads and stores for
/// the last one to three).
pub(crate) mod zmm {
    use super::*;
    use core::arch::x86_64::*;

    type V = __m512i;
    const L: usize = 4;

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn splat(index: &[i8; 16]) -> V {
        // SAFETY: a 16-byte load from a 16-byte array.
        _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(index.as_ptr().cast()) })
    }

    /// 128-bit numbers as (low, high) 64-bit halves, one per block.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn from_blocks(t: [u128; L]) -> V {
        let h = |i: usize| (t[i] >> 64) as i64;
        let l = |i: usize| t[i] as i64;
        _mm512_set_epi64(h(3), l(3), h(2), l(2), h(1), l(1), h(0), l(0))
    }

    /// The qword mask of the first `k` blocks.
    #[inline]
    fn blocks_mask(k: usize) -> __mmask8 {
        ((1u32 << (2 * k)) - 1) as __mmask8
    }

    /// # Safety
    /// `p` is readable for `k` blocks (1 to 4).
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn load(p: *const Blk, k: usize) -> V {
        // SAFETY: by the caller's contract; masked-off lanes are not read.
        unsafe {
            if k == L {
                _mm512_loadu_si512(p.cast())
            } else {
                _mm512_maskz_loadu_epi64(blocks_mask(k), p.cast())
            }
        }
    }

    /// # Safety
    /// `p` is writable for `k` blocks (1 to 4).
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn store(p: *mut Blk, v: V, k: usize) {
        // SAFETY: by the caller's contract; masked-off lanes are not
        // written.
        unsafe {
            if k == L {
                _mm512_storeu_si512(p.cast(), v);
            } else {
                _mm512_mask_storeu_epi64(p.cast(), blocks_mask(k), v);
            }
        }
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) fn xor(a: V, b: V) -> V {
        _mm512_xor_si512(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn and(a: V, b: V) -> V {
        _mm512_and_si512(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn shl(a: V, k: i32) -> V {
        _mm512_sll_epi64(a, _mm_cvtsi32_si128(k))
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn shr(a: V, k: i32) -> V {
        _mm512_srl_epi64(a, _mm_cvtsi32_si128(k))
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn swap_halves(a: V) -> V {
        _mm512_shuffle_epi32::<0x4e>(a)
    }
    #[inline]
    #[target_feature(enable = "avx512bw")]
    fn bytes(a: V, index: V) -> V {
        _mm512_shuffle_epi8(a, index)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn add64(a: V, b: V) -> V {
        _mm512_add_epi64(a, b)
    }
    /// All ones in the high (or low) 64-bit half of every block.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn half_mask(high: bool) -> V {
        let (h, l) = if high { (-1, 0) } else { (0, -1) };
        _mm512_set_epi64(h, l, h, l, h, l, h, l)
    }

    modes_body!("avx512f,avx512bw");
}

/// Four registers of one block each to four registers of one word each
/// (register `i` holds word `i` of the four blocks); applied to the words
/// in reverse order it gives the blocks back.
#[inline]
#[target_feature(enable = "sse2")]
pub(crate) fn transpose_xmm(
    z: [core::arch::x86_64::__m128i; 4],
) -> [core::arch::x86_64::__m128i; 4] {
    use core::arch::x86_64::*;
    let t0 = _mm_unpacklo_epi32(z[0], z[1]);
    let t1 = _mm_unpackhi_epi32(z[0], z[1]);
    let t2 = _mm_unpacklo_epi32(z[2], z[3]);
    let t3 = _mm_unpackhi_epi32(z[2], z[3]);
    [
        _mm_unpacklo_epi64(t0, t2),
        _mm_unpackhi_epi64(t0, t2),
        _mm_unpacklo_epi64(t1, t3),
        _mm_unpackhi_epi64(t1, t3),
    ]
}

/// `N` blocks (`N <= 4`) into the first `N` registers, the rest zero.
///
/// # Safety
/// `p` is readable for `N` blocks.
#[inline]
#[target_feature(enable = "sse2")]
pub(crate) unsafe fn load_lanes<const N: usize>(p: *const u8) -> [core::arch::x86_64::__m128i; 4] {
    use core::arch::x86_64::*;
    core::array::from_fn(|i| {
        if i < N {
            // SAFETY: block `i < N` is readable.
            unsafe { _mm_loadu_si128(p.add(16 * i).cast()) }
        } else {
            _mm_setzero_si128()
        }
    })
}

/// The first `N` registers as `N` blocks (`N <= 4`).
///
/// # Safety
/// `p` is writable for `N` blocks.
#[inline]
#[target_feature(enable = "sse2")]
pub(crate) unsafe fn store_lanes<const N: usize>(p: *mut u8, z: [core::arch::x86_64::__m128i; 4]) {
    for (i, v) in z.iter().enumerate().take(N) {
        // SAFETY: block `i < N` is writable.
        unsafe { core::arch::x86_64::_mm_storeu_si128(p.add(16 * i).cast(), *v) };
    }
}

/// The multi-block forms of a module's single-block path: `few::<N>` (two
/// to four blocks at one block's latency) and `chain` (a serial chain of
/// single-block encryptions kept in registers from one block to the next),
/// over the module's `rounds_xmm(km, words) -> words` (the 32 rounds on the
/// state `X = M1·x`, word `i` of each lane's block in register `i`),
/// `map_xmm(x, matrix)` (a bytewise GF(2)-linear map) and `PRE` / `PRE_INV`
/// (`M1` and its inverse).
macro_rules! lane_paths {
    ($features:literal) => {
        /// Two to four blocks at the single-block latency: block `b` in
        /// lane `b` of the four word registers of `rounds_xmm`.
        ///
        /// # Safety
        /// `inp` is readable and `out` writable for `N` blocks (`N <= 4`).
        #[inline]
        #[target_feature(enable = $features)]
        unsafe fn few<const N: usize>(km: &[u32; 32], inp: *const u8, out: *mut u8) {
            use super::x86_modes::{load_lanes, store_lanes, transpose_xmm};
            // SAFETY: `N` readable blocks.
            let z = unsafe { load_lanes::<N>(inp) };
            let x = transpose_xmm(z).map(|w| map_xmm(w, PRE));
            let [x0, x1, x2, x3] = rounds_xmm(km, x);
            let z = transpose_xmm([x3, x2, x1, x0]).map(|w| map_xmm(w, PRE_INV));
            // SAFETY: `N` writable blocks.
            unsafe { store_lanes::<N>(out, z) };
        }

        /// `Kernel::crypt_values`: four blocks given as values go to the
        /// lanes in registers, not through stores that the lane path's
        /// loads could not take their data from.
        #[inline]
        #[target_feature(enable = $features)]
        pub(crate) fn crypt_values(km: &[u32; 32], v: [u128; 4]) -> [cipher::Block<crate::Sm4>; 4] {
            use super::x86_modes::transpose_xmm;
            let z = v.map(|b| _mm_set_epi64x((b >> 64) as i64, b as i64));
            let x = transpose_xmm(z).map(|w| map_xmm(w, PRE));
            let [x0, x1, x2, x3] = rounds_xmm(km, x);
            let z = transpose_xmm([x3, x2, x1, x0]).map(|w| map_xmm(w, PRE_INV));
            let mut out = [cipher::Block::<crate::Sm4>::default(); 4];
            for (o, v) in out.iter_mut().zip(z) {
                // SAFETY: a 16-byte store into a 16-byte block.
                unsafe { _mm_storeu_si128(o.as_mut_ptr().cast(), v) };
            }
            out
        }

        /// `Kernel::chain`: the chained block in lane 0, the side blocks in
        /// lanes 1-3.
        /// The state stays in the word registers, in the `M1` basis, from
        /// step to step, so the chain's critical path is the 32 rounds and
        /// an AND and an XOR per block: no transposition, basis change,
        /// store or load.
        #[inline]
        #[target_feature(enable = $features)]
        pub(crate) fn chain(
            km: &[u32; 32],
            state: &mut cipher::Block<crate::Sm4>,
            steps: usize,
            io: &mut impl super::ChainIo,
        ) {
            use super::x86_modes::{load_lanes, transpose_xmm};
            let lane0 = _mm_setr_epi32(-1, 0, 0, 0);
            let mut cur = *state;
            // SAFETY: one readable block.
            let z = unsafe { load_lanes::<1>(cur.as_ptr()) };
            // Output word i of the last step in lane 0 of `prev[i]`.
            let mut prev = transpose_xmm(z).map(|w| map_xmm(w, PRE));
            // Step s + 1's blocks are fed and prepared before step s's
            // rounds, so that the chain finds them ready.
            let prepare = |blocks: [u128; 4]| {
                let z = blocks.map(|b| _mm_set_epi64x((b >> 64) as i64, b as i64));
                (blocks[0], transpose_xmm(z).map(|w| map_xmm(w, PRE)))
            };
            let mut next = if steps > 0 {
                prepare(io.feed(0))
            } else {
                (0, prev)
            };
            for s in 0..steps {
                let (b, w) = next;
                let input = super::super::modes::xor(&cur, &b.to_ne_bytes().into());
                // Lane 0: the chain's words XOR B's; lanes 1-3: the side
                // blocks.
                let x: [__m128i; 4] =
                    core::array::from_fn(|i| _mm_xor_si128(_mm_and_si128(prev[i], lane0), w[i]));
                if s + 1 < steps {
                    next = prepare(io.feed(s + 1));
                }
                let [x0, x1, x2, x3] = rounds_xmm(km, x);
                prev = [x3, x2, x1, x0];
                let z = transpose_xmm(prev).map(|w| map_xmm(w, PRE_INV));
                let mut out = [cipher::Block::<crate::Sm4>::default(); 4];
                for (o, v) in out.iter_mut().zip(z) {
                    // SAFETY: a 16-byte store into a 16-byte block.
                    unsafe { _mm_storeu_si128(o.as_mut_ptr().cast(), v) };
                }
                cur = out[0];
                io.emit(s, &out, &input);
            }
            *state = cur;
        }
    };
}
pub(crate) use lane_paths;
