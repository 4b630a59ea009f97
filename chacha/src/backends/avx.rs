//! x86_64 AVX2 backend: 16 blocks per pass as two 8-block states (each
//! transposed across the eight 32-bit lanes of ymm registers; words 0-4 in
//! registers, the rest in memory, the double round in inline assembly, the
//! first column round's three counter-independent quarter rounds computed
//! once per message),
//! 8 blocks per pass with one state in all sixteen ymm registers,
//! 2-, 4- and 6-block row-layout ymm passes and a 1-block row-layout xmm path
//! for short inputs and tails.

use core::arch::x86_64::*;

use cipher::inout::InOutBuf;

use super::rounds::lane_counters;

// ---------------------------------------------------------------- ymm ops

#[inline]
#[target_feature(enable = "avx2")]
fn add8(a: __m256i, b: __m256i) -> __m256i {
    _mm256_add_epi32(a, b)
}
#[inline]
#[target_feature(enable = "avx2")]
fn xor8(a: __m256i, b: __m256i) -> __m256i {
    _mm256_xor_si256(a, b)
}
#[inline]
#[target_feature(enable = "avx2")]
fn r16_8(a: __m256i) -> __m256i {
    let m = _mm256_setr_epi8(
        2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9,
        14, 15, 12, 13,
    );
    _mm256_shuffle_epi8(a, opaque(m))
}
#[inline]
#[target_feature(enable = "avx2")]
fn r12_8(a: __m256i) -> __m256i {
    _mm256_or_si256(_mm256_slli_epi32::<12>(a), _mm256_srli_epi32::<20>(a))
}
#[inline]
#[target_feature(enable = "avx2")]
fn r8_8(a: __m256i) -> __m256i {
    let m = _mm256_setr_epi8(
        3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14, 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10,
        15, 12, 13, 14,
    );
    _mm256_shuffle_epi8(a, opaque(m))
}

/// The byte-rotation masks pass through here so that LLVM emits them as
/// `vpshufb`: seeing the constant, it lowers the rotation by 16 to
/// `vpshuflw` + `vpshufhw` (two instructions, two cycles on the path of a
/// one-block double round instead of one) and merges shuffles across the
/// XORs. The empty `asm!` costs no instruction; being `pure`, it is
/// hoisted out of the round loops.
#[inline]
#[target_feature(enable = "avx2")]
fn opaque(mut m: __m256i) -> __m256i {
    // SAFETY: an empty asm block that only claims to modify a register.
    unsafe { core::arch::asm!("/* {0} */", inout(ymm_reg) m, options(pure, nomem, nostack)) };
    m
}
#[inline]
#[target_feature(enable = "avx2")]
fn r7_8(a: __m256i) -> __m256i {
    _mm256_or_si256(_mm256_slli_epi32::<7>(a), _mm256_srli_epi32::<25>(a))
}

// ---------------------------------------------------------------- xmm ops

#[inline]
#[target_feature(enable = "avx2")]
fn add4(a: __m128i, b: __m128i) -> __m128i {
    _mm_add_epi32(a, b)
}
#[inline]
#[target_feature(enable = "avx2")]
fn xor4(a: __m128i, b: __m128i) -> __m128i {
    _mm_xor_si128(a, b)
}
#[inline]
#[target_feature(enable = "avx2")]
fn r16_4(a: __m128i) -> __m128i {
    let m = _mm_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
    _mm_shuffle_epi8(a, _mm256_castsi256_si128(opaque(_mm256_castsi128_si256(m))))
}
#[inline]
#[target_feature(enable = "avx2")]
fn r12_4(a: __m128i) -> __m128i {
    _mm_or_si128(_mm_slli_epi32::<12>(a), _mm_srli_epi32::<20>(a))
}
#[inline]
#[target_feature(enable = "avx2")]
fn r8_4(a: __m128i) -> __m128i {
    let m = _mm_setr_epi8(3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14);
    _mm_shuffle_epi8(a, _mm256_castsi256_si128(opaque(_mm256_castsi128_si256(m))))
}
#[inline]
#[target_feature(enable = "avx2")]
fn r7_4(a: __m128i) -> __m128i {
    _mm_or_si128(_mm_slli_epi32::<7>(a), _mm_srli_epi32::<25>(a))
}

// ---------------------------------------------------------------- helpers

/// 4x4 transpose of 32-bit words inside each 128-bit lane.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn transpose8(a: __m256i, b: __m256i, c: __m256i, d: __m256i) -> [__m256i; 4] {
    let t0 = _mm256_unpacklo_epi32(a, b);
    let t1 = _mm256_unpackhi_epi32(a, b);
    let t2 = _mm256_unpacklo_epi32(c, d);
    let t3 = _mm256_unpackhi_epi32(c, d);
    [
        _mm256_unpacklo_epi64(t0, t2),
        _mm256_unpackhi_epi64(t0, t2),
        _mm256_unpacklo_epi64(t1, t3),
        _mm256_unpackhi_epi64(t1, t3),
    ]
}

/// `out[off..off + 32] = inp[off..off + 32] ^ ks`.
///
/// # Safety
/// `inp` and `out` must be valid for 32 bytes at `off`; AVX2 available.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn xor_store256(inp: *const u8, out: *mut u8, off: usize, ks: __m256i) {
    // SAFETY: the caller guarantees 32 readable/writable bytes at `off`;
    // unaligned loads and stores.
    unsafe {
        let d = _mm256_loadu_si256(inp.add(off).cast());
        _mm256_storeu_si256(out.add(off).cast(), _mm256_xor_si256(d, ks));
    }
}

/// `out[off..off + 16] = inp[off..off + 16] ^ ks`.
///
/// # Safety
/// `inp` and `out` must be valid for 16 bytes at `off`; AVX2 available.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn xor_store128(inp: *const u8, out: *mut u8, off: usize, ks: __m128i) {
    // SAFETY: the caller guarantees 16 readable/writable bytes at `off`;
    // unaligned loads and stores.
    unsafe {
        let d = _mm_loadu_si128(inp.add(off).cast());
        _mm_storeu_si128(out.add(off).cast(), _mm_xor_si128(d, ks));
    }
}

#[inline]
#[target_feature(enable = "avx2")]
fn splat8(s: &[u32; 16], lo: &[u32; 8], hi: &[u32; 8]) -> [__m256i; 16] {
    let mut v = [_mm256_setzero_si256(); 16];
    for i in 0..16 {
        v[i] = _mm256_set1_epi32(s[i] as i32);
    }
    v[12] = _mm256_setr_epi32(
        lo[0] as i32,
        lo[1] as i32,
        lo[2] as i32,
        lo[3] as i32,
        lo[4] as i32,
        lo[5] as i32,
        lo[6] as i32,
        lo[7] as i32,
    );
    v[13] = _mm256_setr_epi32(
        hi[0] as i32,
        hi[1] as i32,
        hi[2] as i32,
        hi[3] as i32,
        hi[4] as i32,
        hi[5] as i32,
        hi[6] as i32,
        hi[7] as i32,
    );
    v
}

// ---------------------------------------------------------------- passes

/// `vpshufb` masks rotating every 32-bit word left by 16 and by 8 bits.
static ROT16: [u8; 32] = [
    2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14,
    15, 12, 13,
];
static ROT8: [u8; 32] = [
    3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14, 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15,
    12, 13, 14,
];

/// Two quarter rounds of [`dround8`], step by step: words (`$a0`, `$b0`,
/// `$c0`, `$d0`) and (`$a1`, `$b1`, `$c1`, `$d1`) as ymm registers, `$t`
/// a free register (holding each byte-rotation mask, then the 12- and
/// 7-bit rotations' shifted copies).
#[rustfmt::skip]
macro_rules! pair8 {
    ($a0:literal, $b0:literal, $c0:literal, $d0:literal,
     $a1:literal, $b1:literal, $c1:literal, $d1:literal, $t:literal) => {
        concat!(
            pair8!(@half $a0, $b0, $c0, $d0, $a1, $b1, $c1, $d1, $t, "{m16}", 20, 12),
            pair8!(@half $a0, $b0, $c0, $d0, $a1, $b1, $c1, $d1, $t, "{m8}", 25, 7),
        )
    };
    // a += b; d ^= a; d rotated by the mask `$m`'s bytes; c += d; b ^= c;
    // b <<<= `$l` (`$r` = 32 - `$l`).
    (@half $a0:literal, $b0:literal, $c0:literal, $d0:literal,
     $a1:literal, $b1:literal, $c1:literal, $d1:literal, $t:literal,
     $m:literal, $r:literal, $l:literal) => {
        concat!(
            "vmovdqu ", $t, ", ymmword ptr [", $m, "]\n",
            "vpaddd ", $a0, ", ", $a0, ", ", $b0, "\n",
            "vpaddd ", $a1, ", ", $a1, ", ", $b1, "\n",
            "vpxor ", $d0, ", ", $d0, ", ", $a0, "\n",
            "vpxor ", $d1, ", ", $d1, ", ", $a1, "\n",
            "vpshufb ", $d0, ", ", $d0, ", ", $t, "\n",
            "vpshufb ", $d1, ", ", $d1, ", ", $t, "\n",
            "vpaddd ", $c0, ", ", $c0, ", ", $d0, "\n",
            "vpaddd ", $c1, ", ", $c1, ", ", $d1, "\n",
            "vpxor ", $b0, ", ", $b0, ", ", $c0, "\n",
            "vpxor ", $b1, ", ", $b1, ", ", $c1, "\n",
            "vpsrld ", $t, ", ", $b0, ", ", $r, "\n",
            "vpslld ", $b0, ", ", $b0, ", ", $l, "\n",
            "vpor ", $b0, ", ", $b0, ", ", $t, "\n",
            "vpsrld ", $t, ", ", $b1, ", ", $r, "\n",
            "vpslld ", $b1, ", ", $b1, ", ", $l, "\n",
            "vpor ", $b1, ", ", $b1, ", ", $t, "\n",
        )
    };
}

/// One double round on the transposed 8-block state, in inline assembly,
/// as four pairs of quarter rounds. The sixteen state vectors and a
/// scratch register need seventeen ymm registers, so one word that the
/// running pair does not touch waits in `spill`: word 15 during column
/// quarter rounds 0-1 (and on entry and exit: the caller parks it), word 8
/// during column 2-3 and diagonal 0-1, word 15 again during diagonal 2-3.
/// On the Zen 4 this ran 8-block messages ~4.5% faster (TSC cycles, ten
/// alternating runs) than all four quarter rounds step by step with word 0
/// parked around each c/b step (four stores and four loads per double round
/// against two and two). Written with intrinsics, the compiler spilled
/// state words inside the rounds (store-to-load latency on the chains).
#[inline]
#[target_feature(enable = "avx2")]
fn dround8(x: &mut [__m256i; 16], spill: &mut __m256i) {
    let sp: *mut __m256i = spill;
    // SAFETY: AVX2 instructions (this function's target feature) on
    // registers, the two 32-byte static masks, and the 32 bytes of `spill`.
    unsafe {
        core::arch::asm!(
            pair8!("{x0}", "{x4}", "{x8}", "{x12}", "{x1}", "{x5}", "{x9}", "{x13}", "{x15}"),
            "vmovdqu {x15}, ymmword ptr [{sp}]",
            "vmovdqu ymmword ptr [{sp}], {x8}",
            pair8!("{x2}", "{x6}", "{x10}", "{x14}", "{x3}", "{x7}", "{x11}", "{x15}", "{x8}"),
            pair8!("{x0}", "{x5}", "{x10}", "{x15}", "{x1}", "{x6}", "{x11}", "{x12}", "{x8}"),
            "vmovdqu {x8}, ymmword ptr [{sp}]",
            "vmovdqu ymmword ptr [{sp}], {x15}",
            pair8!("{x2}", "{x7}", "{x8}", "{x13}", "{x3}", "{x4}", "{x9}", "{x14}", "{x15}"),
            x0 = inout(ymm_reg) x[0],
            x1 = inout(ymm_reg) x[1],
            x2 = inout(ymm_reg) x[2],
            x3 = inout(ymm_reg) x[3],
            x4 = inout(ymm_reg) x[4],
            x5 = inout(ymm_reg) x[5],
            x6 = inout(ymm_reg) x[6],
            x7 = inout(ymm_reg) x[7],
            x8 = inout(ymm_reg) x[8],
            x9 = inout(ymm_reg) x[9],
            x10 = inout(ymm_reg) x[10],
            x11 = inout(ymm_reg) x[11],
            x12 = inout(ymm_reg) x[12],
            x13 = inout(ymm_reg) x[13],
            x14 = inout(ymm_reg) x[14],
            x15 = inout(ymm_reg) x[15],
            sp = in(reg) sp,
            m16 = in(reg) ROT16.as_ptr(),
            m8 = in(reg) ROT8.as_ptr(),
            options(nostack, preserves_flags),
        );
    }
}

/// One quarter round of [`dround16`]: word a in register `$a`, words b, c
/// and d in memory at byte offsets `$ob`, `$oc` and `$od` from `{st}`
/// (stored back), `$b`..`$t` four scratch registers, and the byte-rotation
/// masks in `{m16}` and `{m8}`.
#[rustfmt::skip]
macro_rules! quarter_mem {
    // Word b in register `$b` for the whole pass (no load or store).
    (reg_b $a:literal, $b:literal, $c:literal, $d:literal, $t:literal,
     $oc:literal, $od:literal) => {
        concat!(
            "vpaddd ", $a, ", ", $a, ", ", $b, "\n",
            "vpxor ", $d, ", ", $a, ", ymmword ptr [{st} + ", $od, "]\n",
            "vpshufb ", $d, ", ", $d, ", {m16}\n",
            "vpaddd ", $c, ", ", $d, ", ymmword ptr [{st} + ", $oc, "]\n",
            "vpxor ", $b, ", ", $b, ", ", $c, "\n",
            "vpsrld ", $t, ", ", $b, ", 20\n",
            "vpslld ", $b, ", ", $b, ", 12\n",
            "vpor ", $b, ", ", $b, ", ", $t, "\n",
            "vpaddd ", $a, ", ", $a, ", ", $b, "\n",
            "vpxor ", $d, ", ", $d, ", ", $a, "\n",
            "vpshufb ", $d, ", ", $d, ", {m8}\n",
            "vpaddd ", $c, ", ", $c, ", ", $d, "\n",
            "vmovdqa ymmword ptr [{st} + ", $od, "], ", $d, "\n",
            "vpxor ", $b, ", ", $b, ", ", $c, "\n",
            "vmovdqa ymmword ptr [{st} + ", $oc, "], ", $c, "\n",
            "vpsrld ", $t, ", ", $b, ", 25\n",
            "vpslld ", $b, ", ", $b, ", 7\n",
            "vpor ", $b, ", ", $b, ", ", $t, "\n",
        )
    };
    // Word b loaded from and stored back to `$ob`.
    ($a:literal, $b:literal, $c:literal, $d:literal, $t:literal,
     $ob:literal, $oc:literal, $od:literal) => {
        concat!(
            "vmovdqa ", $b, ", ymmword ptr [{st} + ", $ob, "]\n",
            quarter_mem!(reg_b $a, $b, $c, $d, $t, $oc, $od),
            "vmovdqa ymmword ptr [{st} + ", $ob, "], ", $b, "\n",
        )
    };
}

/// The diagonal half round of [`dround16`] (and of [`dround16_diag`]).
macro_rules! diagonal16 {
    () => {
        concat!(
            quarter_mem!("{a0}", "{t0}", "{t1}", "{t2}", "{t3}", 160, 320, 480),
            quarter_mem!("{a1}", "{t0}", "{t1}", "{t2}", "{t3}", 192, 352, 384),
            quarter_mem!("{a2}", "{t0}", "{t1}", "{t2}", "{t3}", 224, 256, 416),
            quarter_mem!(reg_b "{a3}", "{b0}", "{t1}", "{t2}", "{t3}", 288, 448),
            quarter_mem!("{e0}", "{t0}", "{t1}", "{t2}", "{t3}", 672, 832, 992),
            quarter_mem!("{e1}", "{t0}", "{t1}", "{t2}", "{t3}", 704, 864, 896),
            quarter_mem!("{e2}", "{t0}", "{t1}", "{t2}", "{t3}", 736, 768, 928),
            quarter_mem!(reg_b "{e3}", "{b1}", "{t1}", "{t2}", "{t3}", 800, 960),
        )
    };
}

/// The assembly of a 16-block round function: `$code` on the registers
/// and the state memory of [`dround16`] (operands named as in
/// `quarter_mem!`). Expanded inside a function with AVX2 enabled.
macro_rules! dround16_asm {
    ($a:ident, $e:ident, $b:ident, $st:ident, $rot:ident; $code:expr) => {{
        let p: *mut [__m256i; 16] = $st.as_mut_ptr();
        let (t0, t1, t2, t3): (__m256i, __m256i, __m256i, __m256i);
        // SAFETY: AVX2 instructions (the expanding function's target
        // feature) on registers and the 1024 bytes of `st` (two contiguous
        // arrays of `__m256i`, 32-byte aligned).
        unsafe {
            core::arch::asm!(
                $code,
                a0 = inout(ymm_reg) $a[0],
                a1 = inout(ymm_reg) $a[1],
                a2 = inout(ymm_reg) $a[2],
                a3 = inout(ymm_reg) $a[3],
                e0 = inout(ymm_reg) $e[0],
                e1 = inout(ymm_reg) $e[1],
                e2 = inout(ymm_reg) $e[2],
                e3 = inout(ymm_reg) $e[3],
                b0 = inout(ymm_reg) $b[0],
                b1 = inout(ymm_reg) $b[1],
                t0 = out(ymm_reg) t0,
                t1 = out(ymm_reg) t1,
                t2 = out(ymm_reg) t2,
                t3 = out(ymm_reg) t3,
                st = in(reg) p,
                m16 = in(ymm_reg) $rot[0],
                m8 = in(ymm_reg) $rot[1],
                options(nostack, preserves_flags),
            );
        }
        let _ = (t0, t1, t2, t3);
    }};
}

/// One double round on two transposed 8-block states (16 blocks), in
/// inline assembly. Words 0-3 of both sets (`a`, `e`) and word 4 (`b`,
/// in the two registers the rest leaves free; it is word b of one column
/// and one diagonal quarter round) stay in registers; words 5-15 live in
/// `st` (set 0 at byte 0, set 1 at byte 512; the copies of word 4 there
/// are stale until the pass ends) and each quarter round loads and stores
/// them through four scratch registers (renaming keeps the quarter rounds
/// independent); the byte-rotation masks `rot` ([`ROT16`], [`ROT8`]) are
/// in registers. The loads and stores run on ports of their own, and
/// eight independent quarter-round chains per half round (against four in
/// [`dround8`]) keep the vector ALU ports busier: on Golden Cove 100-105
/// cycles per double round in a harness (word 4 in memory), against 2 x
/// 59.5 for [`dround8`]; on Zen 4 90-92 against 2 x 50.
#[inline]
#[target_feature(enable = "avx2")]
fn dround16(
    a: &mut [__m256i; 4],
    e: &mut [__m256i; 4],
    b: &mut [__m256i; 2],
    st: &mut [[__m256i; 16]; 2],
    rot: [__m256i; 2],
) {
    dround16_asm!(a, e, b, st, rot; concat!(
        quarter_mem!(reg_b "{a0}", "{b0}", "{t1}", "{t2}", "{t3}", 256, 384),
        quarter_mem!("{a1}", "{t0}", "{t1}", "{t2}", "{t3}", 160, 288, 416),
        quarter_mem!("{a2}", "{t0}", "{t1}", "{t2}", "{t3}", 192, 320, 448),
        quarter_mem!("{a3}", "{t0}", "{t1}", "{t2}", "{t3}", 224, 352, 480),
        quarter_mem!(reg_b "{e0}", "{b1}", "{t1}", "{t2}", "{t3}", 768, 896),
        quarter_mem!("{e1}", "{t0}", "{t1}", "{t2}", "{t3}", 672, 800, 928),
        quarter_mem!("{e2}", "{t0}", "{t1}", "{t2}", "{t3}", 704, 832, 960),
        quarter_mem!("{e3}", "{t0}", "{t1}", "{t2}", "{t3}", 736, 864, 992),
        diagonal16!(),
    ));
}

/// The diagonal round of [`dround16`] alone.
#[inline]
#[target_feature(enable = "avx2")]
fn dround16_diag(
    a: &mut [__m256i; 4],
    e: &mut [__m256i; 4],
    b: &mut [__m256i; 2],
    st: &mut [[__m256i; 16]; 2],
    rot: [__m256i; 2],
) {
    dround16_asm!(a, e, b, st, rot; diagonal16!());
}

/// `n` blocks (9..=16) with counters `ctr..ctr + n`: two 8-block states
/// through [`dround16`]; with `KS` and `ks` not null (and `n < 16`), block
/// `n`'s keystream goes to `ks`. `w` is [`first_column`] of `s`.
///
/// # Safety
/// `inp` and `out` valid for `64 * n` bytes; `ks` null or valid for 64
/// bytes; AVX2 available.
#[inline]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
unsafe fn pass16<const KS: bool>(
    s: &[u32; 16],
    w: &[u32; 16],
    ctr: u64,
    legacy: bool,
    dr: usize,
    inp: *const u8,
    out: *mut u8,
    n: usize,
    ks: *mut u8,
) {
    let (lo, hi) = lane_counters::<8>(ctr, legacy, s[13]);
    let v0 = splat8(s, &lo, &hi);
    let (lo, hi) = lane_counters::<8>(ctr.wrapping_add(8), legacy, s[13]);
    let v1 = splat8(s, &lo, &hi);
    // SAFETY: 32-byte unaligned loads of the two 32-byte static masks.
    let rot = unsafe {
        [
            _mm256_loadu_si256(ROT16.as_ptr().cast()),
            _mm256_loadu_si256(ROT8.as_ptr().cast()),
        ]
    };
    let mut st;
    let mut rounds = dr;
    if legacy {
        st = [v0, v1];
    } else {
        // Quarter rounds 1-3 of the first column round came with `w`;
        // quarter round 0 (the counter's) here, then the diagonal round.
        let pre = splat8(w, &lo, &hi);
        st = [pre, pre];
        for (set, v) in st.iter_mut().zip([&v0, &v1]) {
            set[13] = _mm256_set1_epi32(w[13] as i32);
            let (mut a, mut b, mut c, mut d) = (set[0], set[4], set[8], v[12]);
            a = add8(a, b);
            d = r16_8(xor8(d, a));
            c = add8(c, d);
            b = r12_8(xor8(b, c));
            a = add8(a, b);
            d = r8_8(xor8(d, a));
            c = add8(c, d);
            b = r7_8(xor8(b, c));
            (set[0], set[4], set[8], set[12]) = (a, b, c, d);
        }
        rounds -= 1;
    }
    let mut a = [st[0][0], st[0][1], st[0][2], st[0][3]];
    let mut e = [st[1][0], st[1][1], st[1][2], st[1][3]];
    let mut b = [st[0][4], st[1][4]];
    if rounds < dr {
        dround16_diag(&mut a, &mut e, &mut b, &mut st, rot);
    }
    align_loop!();
    for _ in 0..rounds {
        dround16(&mut a, &mut e, &mut b, &mut st, rot);
    }
    st[0][..4].copy_from_slice(&a);
    st[1][..4].copy_from_slice(&e);
    (st[0][4], st[1][4]) = (b[0], b[1]);
    // SAFETY: blocks 0..8 and 8..n lie inside the caller's 64 * n bytes
    // (n > 8); `ks` per the contract.
    unsafe {
        finish8::<false>(&st[0], &v0, inp, out, 8, core::ptr::null_mut());
        finish8::<KS>(&st[1], &v1, inp.add(512), out.add(512), n - 8, ks);
    }
}

/// The state after quarter rounds 1-3 of the first column round, which
/// do not read the block counter (word 12; in the RFC 8439 layout word 13
/// is a nonce word), for every pass of a message (`s` itself for the
/// legacy layout).
#[inline]
fn first_column(s: &[u32; 16], legacy: bool) -> [u32; 16] {
    let mut w = *s;
    if !legacy {
        super::rounds::quarter_words(&mut w, 1, 5, 9, 13);
        super::rounds::quarter_words(&mut w, 2, 6, 10, 14);
        super::rounds::quarter_words(&mut w, 3, 7, 11, 15);
    }
    w
}

/// Up to 8 blocks (`n` in 1..=8) with counters `ctr..ctr + n`; with `KS`
/// and `ks` not null (and `n < 8`), block `n`'s keystream goes to `ks`.
///
/// # Safety
/// `inp` and `out` valid for `64 * n` bytes; `ks` null or valid for 64
/// bytes; AVX2 available.
#[inline]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
unsafe fn pass8<const KS: bool>(
    s: &[u32; 16],
    ctr: u64,
    legacy: bool,
    dr: usize,
    inp: *const u8,
    out: *mut u8,
    n: usize,
    ks: *mut u8,
) {
    let (lo, hi) = lane_counters::<8>(ctr, legacy, s[13]);
    let v = splat8(s, &lo, &hi);
    let mut x = v;
    // Word 15 waits in `spill` between the double rounds (see `dround8`).
    let mut spill = x[15];
    align_loop!();
    for _ in 0..dr {
        dround8(&mut x, &mut spill);
    }
    x[15] = spill;
    // SAFETY: per this function's contract.
    unsafe { finish8::<KS>(&x, &v, inp, out, n, ks) };
}

/// `finish8` (the end of an 8-block pass) and its `put`, written once for
/// the AVX2 and the AVX-512VL modules and compiled for each module's
/// features (the body calls the invoking module's `add8`): the AVX-512
/// copy keeps its temporaries in the sixteen registers AVX2 lacks.
macro_rules! finish8_fns {
    ($features:literal) => {
        /// The end of an 8-block pass: the input state `v` added to `x`, the
        /// words transposed into blocks, and blocks `0..n` XORed into place;
        /// with `KS` and `ks` not null (and `n < 8`), block `n`'s keystream
        /// goes to `ks`.
        ///
        /// # Safety
        /// `inp` and `out` valid for `64 * n` bytes; `ks` null or valid for
        /// 64 bytes; the CPU has the features the macro names.
        #[inline]
        #[target_feature(enable = $features)]
        unsafe fn finish8<const KS: bool>(
            x: &[__m256i; 16],
            v: &[__m256i; 16],
            inp: *const u8,
            out: *mut u8,
            n: usize,
            ks: *mut u8,
        ) {
            let mut x = *x;
            for i in 0..16 {
                x[i] = add8(x[i], v[i]);
            }
            let g0 = transpose8(x[0], x[1], x[2], x[3]);
            let g1 = transpose8(x[4], x[5], x[6], x[7]);
            let g2 = transpose8(x[8], x[9], x[10], x[11]);
            let g3 = transpose8(x[12], x[13], x[14], x[15]);
            for k in 0..4 {
                if k < n || (KS && k == n && !ks.is_null()) {
                    let a = _mm256_permute2x128_si256::<0x20>(g0[k], g1[k]);
                    let b = _mm256_permute2x128_si256::<0x20>(g2[k], g3[k]);
                    // SAFETY: block k < n lies inside the caller's 64 * n
                    // bytes; `ks` is valid for 64 bytes when not null.
                    unsafe { put(inp, out, k, n, ks, a, b) };
                }
                if k + 4 < n || (KS && k + 4 == n && !ks.is_null()) {
                    let a = _mm256_permute2x128_si256::<0x31>(g0[k], g1[k]);
                    let b = _mm256_permute2x128_si256::<0x31>(g2[k], g3[k]);
                    // SAFETY: as above, for block k + 4.
                    unsafe { put(inp, out, k + 4, n, ks, a, b) };
                }
            }
        }

        /// Block `idx` of a pass: XORed into place when `idx < n`, else
        /// (`idx == n`) its keystream stored to `ks`.
        ///
        /// # Safety
        /// `idx < n`: `inp` and `out` valid for `64 * n` bytes; `idx ==
        /// n`: `ks` valid for 64 bytes; the CPU has the features the macro
        /// names.
        #[inline]
        #[target_feature(enable = $features)]
        unsafe fn put(
            inp: *const u8,
            out: *mut u8,
            idx: usize,
            n: usize,
            ks: *mut u8,
            a: __m256i,
            b: __m256i,
        ) {
            // SAFETY: per the contract above; unaligned stores.
            unsafe {
                if idx < n {
                    xor_store256(inp, out, 64 * idx, a);
                    xor_store256(inp, out, 64 * idx + 32, b);
                } else {
                    _mm256_storeu_si256(ks.cast(), a);
                    _mm256_storeu_si256(ks.add(32).cast(), b);
                }
            }
        }
    };
}
pub(super) use finish8_fns;

finish8_fns!("avx2");

/// Rows of one block: the column round, then the diagonal round with the
/// rows rotated into place and back.
#[inline]
#[target_feature(enable = "avx2")]
fn rows_rounds(
    mut a: __m128i,
    mut b: __m128i,
    mut c: __m128i,
    mut d: __m128i,
    dr: usize,
) -> [__m128i; 4] {
    align_loop!();
    for _ in 0..dr {
        a = add4(a, b);
        d = r16_4(xor4(d, a));
        c = add4(c, d);
        b = r12_4(xor4(b, c));
        a = add4(a, b);
        d = r8_4(xor4(d, a));
        c = add4(c, d);
        b = r7_4(xor4(b, c));
        // Rotate a, c and d (not b, the last one computed) so that the
        // shuffles stay off the critical path.
        a = _mm_shuffle_epi32::<0x93>(a);
        c = _mm_shuffle_epi32::<0x39>(c);
        d = _mm_shuffle_epi32::<0x4e>(d);
        a = add4(a, b);
        d = r16_4(xor4(d, a));
        c = add4(c, d);
        b = r12_4(xor4(b, c));
        a = add4(a, b);
        d = r8_4(xor4(d, a));
        c = add4(c, d);
        b = r7_4(xor4(b, c));
        a = _mm_shuffle_epi32::<0x39>(a);
        c = _mm_shuffle_epi32::<0x93>(c);
        d = _mm_shuffle_epi32::<0x4e>(d);
    }
    [a, b, c, d]
}

#[inline]
#[target_feature(enable = "avx2")]
fn row(s: &[u32], i: usize) -> __m128i {
    _mm_setr_epi32(
        s[i] as i32,
        s[i + 1] as i32,
        s[i + 2] as i32,
        s[i + 3] as i32,
    )
}

/// One block in row layout.
///
/// # Safety
/// `inp` and `out` valid for 64 bytes; AVX2 available.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn block1(
    s: &[u32; 16],
    ctr: u64,
    legacy: bool,
    dr: usize,
    inp: *const u8,
    out: *mut u8,
) {
    let mut st = *s;
    st[12] = ctr as u32;
    if legacy {
        st[13] = (ctr >> 32) as u32;
    }
    let v = [row(&st, 0), row(&st, 4), row(&st, 8), row(&st, 12)];
    let x = rows_rounds(v[0], v[1], v[2], v[3], dr);
    for i in 0..4 {
        // SAFETY: 64 bytes valid per the caller.
        unsafe { xor_store128(inp, out, 16 * i, add4(x[i], v[i])) };
    }
}

/// One double round on a row-layout state of two blocks (one per 128-bit lane).
#[inline]
#[target_feature(enable = "avx2")]
fn dround_rows2(x: &mut [__m256i; 4]) {
    super::rounds::row_double_round!(
        x,
        add8,
        xor8,
        r16_8,
        r12_8,
        r8_8,
        r7_8,
        _mm256_shuffle_epi32
    );
}

/// The 16 bytes at `p` as two 8-byte loads rather than one 16-byte load:
/// a caller that wrote them as two 8-byte stores (a `u128`, as Adiantum's
/// decryption writes HChaCha's input, or two `u64`s) then gets them by
/// store-to-load forwarding, which a 16-byte load spanning two stores
/// cannot use: it waits until the stores reach the cache. That wait sat
/// on Adiantum's critical path: on Golden Cove, Adiantum-XChaCha12
/// decryption ran 2.6% faster at 4 KiB and 9% at 512 bytes with the split
/// loads; encryption, whose HChaCha input comes from one 16-byte store,
/// within 1%. Assembly, because LLVM merges two adjacent 8-byte loads into
/// one.
#[inline]
#[target_feature(enable = "avx")]
pub(super) fn load_halves(p: &[u8; 16]) -> __m128i {
    let (lo, hi): (__m128i, __m128i);
    // SAFETY: two 8-byte loads inside `p` (16 bytes); AVX (`vmovq`) is
    // enabled on this function and every caller checked for it (AVX2 or
    // AVX-512VL backends).
    unsafe {
        core::arch::asm!(
            "vmovq {lo}, qword ptr [{p}]",
            "vmovq {hi}, qword ptr [{p} + 8]",
            p = in(reg) p.as_ptr(),
            lo = out(xmm_reg) lo,
            hi = out(xmm_reg) hi,
            options(pure, readonly, nostack, preserves_flags),
        );
    }
    _mm_unpacklo_epi64(lo, hi)
}

/// The row-layout short path (`rows`: up to `2 * SETS` blocks, two per ymm
/// set) and HChaCha (`hchacha_inner`), written once for the AVX2 and the
/// AVX-512VL modules: the body calls the invoking module's own `row`,
/// `rows_rounds`, `dround_rows2` and `add8`, which differ in how they rotate.
macro_rules! row_layout_fns {
    ($features:literal) => {
        row_layout_fns!($features, [], rows_rounds);
    };
    // `hchacha_inner` with the generic parameters `$generics` and
    // `$rounds` as its rounds function.
    ($features:literal, [$($generics:tt)*], $rounds:expr) => {
        /// Up to `2 * SETS` blocks (`n` in 1..=2 * SETS) in row layout, two blocks
        /// per ymm set; the sets are independent, so their rounds overlap.
        /// With `KS` and `ks` not null (and `n < 2 * SETS`), block `n`'s
        /// keystream goes to `ks`.
        ///
        /// # Safety
        /// `inp` and `out` valid for `64 * n` bytes; `ks` null or valid for
        /// 64 bytes; the CPU has the features the macro names.
        #[inline]
        #[target_feature(enable = $features)]
        #[allow(clippy::too_many_arguments)]
        unsafe fn rows<const SETS: usize, const KS: bool>(
            s: &[u32; 16],
            ctr: u64,
            legacy: bool,
            dr: usize,
            inp: *const u8,
            out: *mut u8,
            n: usize,
            ks: *mut u8,
        ) {
            // Word 12 (and 13 for the legacy layout) as one 64-bit lane per block:
            // a 64-bit add gives every block its counter. In the RFC 8439 layout a
            // carry into word 13 (the nonce) only happens for blocks past the end
            // of the keystream, which are never stored.
            let mut st = *s;
            st[12] = ctr as u32;
            if legacy {
                st[13] = (ctr >> 32) as u32;
            }
            let a = _mm256_broadcastsi128_si256(row(s, 0));
            let b = _mm256_broadcastsi128_si256(row(s, 4));
            let c = _mm256_broadcastsi128_si256(row(s, 8));
            let d = _mm256_broadcastsi128_si256(row(&st, 12));
            let mut v = [[a, b, c, d]; SETS];
            for (k, set) in v.iter_mut().enumerate() {
                let k = 2 * k as i64;
                set[3] = _mm256_add_epi64(d, _mm256_setr_epi64x(k, 0, k + 1, 0));
            }
            let mut x = v;
            align_loop!();
            for _ in 0..dr {
                for set in x.iter_mut() {
                    dround_rows2(set);
                }
            }
            for k in 0..SETS {
                let [a, b, c, d] = [
                    add8(x[k][0], v[k][0]),
                    add8(x[k][1], v[k][1]),
                    add8(x[k][2], v[k][2]),
                    add8(x[k][3], v[k][3]),
                ];
                for (idx, sel) in [(2 * k, false), (2 * k + 1, true)] {
                    if idx < n || (KS && idx == n && !ks.is_null()) {
                        let (lo, hi) = if sel {
                            (
                                _mm256_permute2x128_si256::<0x31>(a, b),
                                _mm256_permute2x128_si256::<0x31>(c, d),
                            )
                        } else {
                            (
                                _mm256_permute2x128_si256::<0x20>(a, b),
                                _mm256_permute2x128_si256::<0x20>(c, d),
                            )
                        };
                        // SAFETY: block idx < n lies inside the caller's
                        // 64 * n bytes; `ks` is valid for 64 bytes when
                        // not null.
                        unsafe { put(inp, out, idx, n, ks, lo, hi) };
                    }
                }
            }
        }

        /// HChaCha with the rows loaded straight from the key and input
        /// bytes (x86 is little-endian) and rows 0 and 3 stored as the
        /// output: no scalar round trips on this latency-bound path.
        #[target_feature(enable = $features)]
        fn hchacha_inner<$($generics)*>(key: &[u8; 32], input: &[u8; 16], dr: usize) -> [u8; 32] {
            let s = &super::rounds::SIGMA;
            let a = _mm_setr_epi32(s[0] as i32, s[1] as i32, s[2] as i32, s[3] as i32);
            // SAFETY: 16-byte unaligned loads inside `key` (32 bytes) and
            // `input` (16 bytes).
            let (b, c, d) = unsafe {
                (
                    _mm_loadu_si128(key.as_ptr().cast()),
                    _mm_loadu_si128(key.as_ptr().add(16).cast()),
                    super::avx::load_halves(input),
                )
            };
            let x = $rounds(a, b, c, d, dr);
            let mut out = [0u8; 32];
            // SAFETY: two 16-byte unaligned stores inside `out` (32 bytes).
            unsafe {
                _mm_storeu_si128(out.as_mut_ptr().cast(), x[0]);
                _mm_storeu_si128(out.as_mut_ptr().add(16).cast(), x[3]);
            }
            out
        }
    };
}
pub(super) use row_layout_fns;

row_layout_fns!("avx2");

/// With `wide_tail`, 10-15 blocks left after the 16-block passes take one
/// more (partial) 16-block pass, not an 8-block pass and a shorter one in
/// series (see [`super::cpu::tail_in_pass16`]).
#[target_feature(enable = "avx2")]
fn xor_blocks_inner(
    s: &[u32; 16],
    ctr: u64,
    legacy: bool,
    dr: usize,
    buf: InOutBuf<'_, '_, u8>,
    wide_tail: bool,
) {
    let n = buf.len() / 64;
    let (inp, out) = buf.into_raw();
    let mut i = 0;
    // (Three quarter rounds on words: computed only for messages that
    // use them.)
    let w = if n >= 16 || (wide_tail && n % 16 > 9) {
        first_column(s, legacy)
    } else {
        *s
    };
    // (Nine blocks: an 8-block pass and one block, which on Zen 5 runs as
    // scalar code, came out faster than a 16-block pass.)
    while n - i >= 16 || (wide_tail && n - i > 9) {
        let m = (n - i).min(16);
        // SAFETY: blocks i..i + m lie inside the buffer of n blocks.
        unsafe {
            pass16::<false>(
                s,
                &w,
                ctr.wrapping_add(i as u64),
                legacy,
                dr,
                inp.add(64 * i),
                out.add(64 * i),
                m,
                core::ptr::null_mut(),
            )
        };
        i += m;
    }
    if n - i > 8 {
        // SAFETY: blocks i..i + 8 lie inside the buffer of n blocks.
        unsafe {
            pass8::<false>(
                s,
                ctr.wrapping_add(i as u64),
                legacy,
                dr,
                inp.add(64 * i),
                out.add(64 * i),
                8,
                core::ptr::null_mut(),
            )
        };
        i += 8;
    }
    // SAFETY: blocks i..n (at most 8) lie inside the buffer.
    unsafe {
        up_to_8::<false>(
            s,
            ctr.wrapping_add(i as u64),
            legacy,
            dr,
            inp.wrapping_add(64 * i),
            out.wrapping_add(64 * i),
            n - i,
            core::ptr::null_mut(),
        )
    };
}

/// `n` blocks through the pass that suits the lanes they need: `n`
/// (0..=8), or with `KS` `n + 1` (`n` in 1..8, block `n`'s keystream to
/// `ks`).
///
/// # Safety
/// `inp` and `out` valid for `64 * n` bytes; with `KS`, `ks` valid for 64
/// bytes; AVX2 available.
#[inline]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
unsafe fn up_to_8<const KS: bool>(
    s: &[u32; 16],
    ctr: u64,
    legacy: bool,
    dr: usize,
    inp: *const u8,
    out: *mut u8,
    n: usize,
    ks: *mut u8,
) {
    // SAFETY: every arm stays inside the caller's `64 * n` bytes (`rows`
    // and `pass8` store only blocks below `n`, and block `n` to `ks` with
    // `KS`).
    unsafe {
        match n + usize::from(KS) {
            0 => {}
            1 if super::cpu::lone_block_scalar() => {
                super::soft::xor_block_raw(s, ctr, legacy, dr, inp, out)
            }
            1 => block1(s, ctr, legacy, dr, inp, out),
            2 => rows::<1, KS>(s, ctr, legacy, dr, inp, out, n, ks),
            3..=4 => rows::<2, KS>(s, ctr, legacy, dr, inp, out, n, ks),
            // Three independent two-block chains finish before the 8-block
            // pass for 5 and 6 lanes (not for 7 or 8: four chains outrun
            // the vector ports).
            5..=6 => rows::<3, KS>(s, ctr, legacy, dr, inp, out, n, ks),
            _ => pass8::<KS>(s, ctr, legacy, dr, inp, out, n, ks),
        }
    }
}

/// `wide_tail`: see [`xor_blocks_inner`] (the dispatcher passes
/// `cpu::tail_in_pass16()`).
pub(crate) fn xor_blocks(
    s: &[u32; 16],
    ctr: u64,
    legacy: bool,
    dr: usize,
    buf: InOutBuf<'_, '_, u8>,
    wide_tail: bool,
) {
    if buf.len() == 64 {
        // One block (a short message or a partial-block refill): a small
        // function, without the big passes' stack frame.
        // SAFETY: `Backend::Avx` is only selected after `avx2_cpuid` confirmed AVX2.
        unsafe { one_block(s, ctr, legacy, dr, buf) }
    } else {
        // SAFETY: `Backend::Avx` is only selected after `avx2_cpuid` confirmed AVX2.
        unsafe { xor_blocks_inner(s, ctr, legacy, dr, buf, wide_tail) }
    }
}

/// Like [`xor_blocks`], and when the last pass has a spare lane (the
/// block count is not a multiple of 8), the keystream of the block after
/// `buf` goes to `ks`; returns whether it did.
pub(crate) fn xor_blocks_ks(
    s: &[u32; 16],
    ctr: u64,
    legacy: bool,
    dr: usize,
    buf: InOutBuf<'_, '_, u8>,
    ks: &mut [u8; 64],
    wide_tail: bool,
) -> bool {
    let n = buf.len() / 64;
    let r = if wide_tail && n % 16 > 8 {
        n % 16
    } else {
        n % 8
    };
    if r % 8 == 0 {
        xor_blocks(s, ctr, legacy, dr, buf, wide_tail);
        return false;
    }
    let (head, tail) = buf.split_at(64 * (n - r));
    if !head.is_empty() {
        // SAFETY: `Backend::Avx` is only selected after `avx2_cpuid` confirmed AVX2.
        unsafe { xor_blocks_inner(s, ctr, legacy, dr, head, wide_tail) };
    }
    // SAFETY: as above.
    unsafe { tail_ks(s, ctr.wrapping_add((n - r) as u64), legacy, dr, tail, ks) };
    true
}

/// The last pass of [`xor_blocks_ks`]: `buf` holds `r` blocks (1..8, or
/// 9..16 with the 16-block tail), a count whose pass has a spare lane, which
/// yields the keystream of block `r`.
#[target_feature(enable = "avx2")]
fn tail_ks(
    s: &[u32; 16],
    ctr: u64,
    legacy: bool,
    dr: usize,
    buf: InOutBuf<'_, '_, u8>,
    ks: &mut [u8; 64],
) {
    let r = buf.len() / 64;
    let (inp, out) = buf.into_raw();
    if r > 8 {
        let w = first_column(s, legacy);
        // SAFETY: `r` (9..16) blocks lie inside the buffer; `ks` holds 64 bytes.
        unsafe { pass16::<true>(s, &w, ctr, legacy, dr, inp, out, r, ks.as_mut_ptr()) };
        return;
    }
    // SAFETY: `r` (1..8) blocks lie inside the buffer; `ks` holds 64 bytes.
    unsafe { up_to_8::<true>(s, ctr, legacy, dr, inp, out, r, ks.as_mut_ptr()) };
}

#[inline(never)]
#[target_feature(enable = "avx2")]
fn one_block(s: &[u32; 16], ctr: u64, legacy: bool, dr: usize, buf: InOutBuf<'_, '_, u8>) {
    let (inp, out) = buf.into_raw();
    // SAFETY: the buffer holds exactly one block.
    unsafe { block1(s, ctr, legacy, dr, inp, out) }
}

pub(crate) fn hchacha(key: &[u8; 32], input: &[u8; 16], dr: usize) -> [u8; 32] {
    // SAFETY: `Backend::Avx` is only selected after `avx2_cpuid` confirmed AVX2.
    unsafe { hchacha_inner(key, input, dr) }
}
