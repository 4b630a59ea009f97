//! x86_64 vector primitives shared by the SM4 kernels and the GHASH
//! engines: blocks in `ymm` (two per register) and `zmm` (four) registers,
//! loads and stores of the first `k` blocks, the lane transposes of the
//! single-block paths, counter pairs. Knows nothing of SM4 or of the
//! modes; imports only the block type.

use crate::block::Blk;

/// `vpshufb` index reversing the bytes of each 64-bit half.
pub(crate) const BSWAP64: [i8; 16] = [7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8];
/// `vpshufb` index reversing all 16 bytes of each 128-bit lane.
pub(crate) const BSWAP128: [i8; 16] = [15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0];

/// Two blocks per AVX2 register.
pub(crate) mod ymm {
    use super::*;
    use core::arch::x86_64::*;

    pub(crate) type V = __m256i;
    pub(crate) const L: usize = 2;

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
    pub(crate) fn from_blocks(t: [u128; L]) -> V {
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
    pub(crate) unsafe fn store(p: *mut Blk, v: V, k: usize) {
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
    pub(crate) fn and(a: V, b: V) -> V {
        _mm256_and_si256(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(crate) fn shl(a: V, k: i32) -> V {
        _mm256_sll_epi64(a, _mm_cvtsi32_si128(k))
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(crate) fn shr(a: V, k: i32) -> V {
        _mm256_srl_epi64(a, _mm_cvtsi32_si128(k))
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(crate) fn swap_halves(a: V) -> V {
        _mm256_shuffle_epi32::<0x4e>(a)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(crate) fn bytes(a: V, index: V) -> V {
        _mm256_shuffle_epi8(a, index)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(crate) fn add64(a: V, b: V) -> V {
        _mm256_add_epi64(a, b)
    }
    /// All ones in the high (or low) 64-bit half of every block.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(crate) fn half_mask(high: bool) -> V {
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

    /// `G` groups of eight blocks as four registers of two blocks each
    /// (`z[g][i]` = blocks `8g + 2i`, `8g + 2i + 1`): the counter blocks
    /// `ctr`, `ctr + 1`, ... (`CTR`, the low 64 bits not carrying) or the
    /// blocks at `inp`.
    ///
    /// # Safety
    /// Without `CTR`, `inp` is readable for `8 * G` blocks.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn load_groups<const G: usize, const CTR: bool>(
        inp: *const u8,
        ctr: u128,
    ) -> [[V; 4]; G] {
        let pair = ctr_pair(ctr);
        let mut z = [[_mm256_setzero_si256(); 4]; G];
        for (g, zg) in z.iter_mut().enumerate() {
            for (i, zi) in zg.iter_mut().enumerate() {
                *zi = if CTR {
                    ctr_blocks(pair, 8 * g + 2 * i)
                } else {
                    // SAFETY: in bounds by the caller's contract.
                    unsafe { _mm256_loadu_si256(inp.add(128 * g + 32 * i).cast()) }
                };
            }
        }
        z
    }

    /// Stores groups in the form of [`load_groups`] to `out`; with `CTR`,
    /// XORed with the blocks at `inp` first (keystream onto the message).
    ///
    /// # Safety
    /// `out` (and with `CTR`, `inp`) valid for `8 * G` blocks; `inp` may
    /// be `out` (each block is read before it is written).
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn store_groups<const G: usize, const CTR: bool>(
        inp: *const u8,
        out: *mut u8,
        z: &[[V; 4]; G],
    ) {
        for (g, zg) in z.iter().enumerate() {
            for (i, zi) in zg.iter().enumerate() {
                let off = 128 * g + 32 * i;
                let mut v = *zi;
                if CTR {
                    // SAFETY: in bounds by the caller's contract; read
                    // before `out` over it is written.
                    v = xor(v, unsafe { _mm256_loadu_si256(inp.add(off).cast()) });
                }
                // SAFETY: in bounds by the caller's contract.
                unsafe { _mm256_storeu_si256(out.add(off).cast(), v) };
            }
        }
    }
}

/// Four blocks per AVX-512 register (with masked loads and stores for
/// the last one to three).
pub(crate) mod zmm {
    use super::*;
    use core::arch::x86_64::*;

    pub(crate) type V = __m512i;
    pub(crate) const L: usize = 4;

    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) fn splat(index: &[i8; 16]) -> V {
        // SAFETY: a 16-byte load from a 16-byte array.
        _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(index.as_ptr().cast()) })
    }

    /// 128-bit numbers as (low, high) 64-bit halves, one per block.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) fn from_blocks(t: [u128; L]) -> V {
        let h = |i: usize| (t[i] >> 64) as i64;
        let l = |i: usize| t[i] as i64;
        _mm512_set_epi64(h(3), l(3), h(2), l(2), h(1), l(1), h(0), l(0))
    }

    /// The qword mask of the first `k` blocks.
    #[inline]
    pub(crate) fn blocks_mask(k: usize) -> __mmask8 {
        ((1u32 << (2 * k)) - 1) as __mmask8
    }

    /// # Safety
    /// `p` is readable for `k` blocks (1 to 4).
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) unsafe fn load(p: *const Blk, k: usize) -> V {
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
    pub(crate) unsafe fn store(p: *mut Blk, v: V, k: usize) {
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
    pub(crate) fn and(a: V, b: V) -> V {
        _mm512_and_si512(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) fn shl(a: V, k: i32) -> V {
        _mm512_sll_epi64(a, _mm_cvtsi32_si128(k))
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) fn shr(a: V, k: i32) -> V {
        _mm512_srl_epi64(a, _mm_cvtsi32_si128(k))
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) fn swap_halves(a: V) -> V {
        _mm512_shuffle_epi32::<0x4e>(a)
    }
    #[inline]
    #[target_feature(enable = "avx512bw")]
    pub(crate) fn bytes(a: V, index: V) -> V {
        _mm512_shuffle_epi8(a, index)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) fn add64(a: V, b: V) -> V {
        _mm512_add_epi64(a, b)
    }
    /// All ones in the high (or low) 64-bit half of every block.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) fn half_mask(high: bool) -> V {
        let (h, l) = if high { (-1, 0) } else { (0, -1) };
        _mm512_set_epi64(h, l, h, l, h, l, h, l)
    }
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
