//! x86_64 AVX-512F/VL backend: 32 blocks per pass (two interleaved sets of
//! 16, the state transposed across the sixteen 32-bit lanes of zmm
//! registers) with `vprold` rotations; tails use a 16-block zmm pass, an
//! 8-block transposed ymm pass, 2- and 4-block row-layout ymm passes (one
//! block per 128-bit lane) and a 1-block row-layout xmm path, all with
//! `vprold`.

use core::arch::x86_64::*;

use cipher::inout::InOutBuf;

use super::avx::{transpose8, xor_store128, xor_store256};
use super::{double_round, lane_counters};

// ---------------------------------------------------------------- zmm ops

#[inline]
#[target_feature(enable = "avx512f")]
fn add16(a: __m512i, b: __m512i) -> __m512i {
    _mm512_add_epi32(a, b)
}
#[inline]
#[target_feature(enable = "avx512f")]
fn xor16(a: __m512i, b: __m512i) -> __m512i {
    _mm512_xor_si512(a, b)
}
#[inline]
#[target_feature(enable = "avx512f")]
fn r16_16(a: __m512i) -> __m512i {
    _mm512_rol_epi32::<16>(a)
}
#[inline]
#[target_feature(enable = "avx512f")]
fn r12_16(a: __m512i) -> __m512i {
    _mm512_rol_epi32::<12>(a)
}
#[inline]
#[target_feature(enable = "avx512f")]
fn r8_16(a: __m512i) -> __m512i {
    _mm512_rol_epi32::<8>(a)
}
#[inline]
#[target_feature(enable = "avx512f")]
fn r7_16(a: __m512i) -> __m512i {
    _mm512_rol_epi32::<7>(a)
}

// ---------------------------------------------------------------- ymm ops

#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn add8(a: __m256i, b: __m256i) -> __m256i {
    _mm256_add_epi32(a, b)
}
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn xor8(a: __m256i, b: __m256i) -> __m256i {
    _mm256_xor_si256(a, b)
}
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn r16_8(a: __m256i) -> __m256i {
    _mm256_rol_epi32::<16>(a)
}
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn r12_8(a: __m256i) -> __m256i {
    _mm256_rol_epi32::<12>(a)
}
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn r8_8(a: __m256i) -> __m256i {
    _mm256_rol_epi32::<8>(a)
}
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn r7_8(a: __m256i) -> __m256i {
    _mm256_rol_epi32::<7>(a)
}

// ---------------------------------------------------------------- xmm ops

#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn add4(a: __m128i, b: __m128i) -> __m128i {
    _mm_add_epi32(a, b)
}
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn xor4(a: __m128i, b: __m128i) -> __m128i {
    _mm_xor_si128(a, b)
}
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn r16_4(a: __m128i) -> __m128i {
    _mm_rol_epi32::<16>(a)
}
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn r12_4(a: __m128i) -> __m128i {
    _mm_rol_epi32::<12>(a)
}
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn r8_4(a: __m128i) -> __m128i {
    _mm_rol_epi32::<8>(a)
}
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn r7_4(a: __m128i) -> __m128i {
    _mm_rol_epi32::<7>(a)
}

// ---------------------------------------------------------------- helpers

#[inline]
#[target_feature(enable = "avx512f")]
fn transpose16(a: __m512i, b: __m512i, c: __m512i, d: __m512i) -> [__m512i; 4] {
    let t0 = _mm512_unpacklo_epi32(a, b);
    let t1 = _mm512_unpackhi_epi32(a, b);
    let t2 = _mm512_unpacklo_epi32(c, d);
    let t3 = _mm512_unpackhi_epi32(c, d);
    [
        _mm512_unpacklo_epi64(t0, t2),
        _mm512_unpackhi_epi64(t0, t2),
        _mm512_unpacklo_epi64(t1, t3),
        _mm512_unpackhi_epi64(t1, t3),
    ]
}

/// `out[off..off + 64] = inp[off..off + 64] ^ ks`.
///
/// # Safety
/// `inp` and `out` valid for 64 bytes at `off`; AVX-512F available.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn xor_store512(inp: *const u8, out: *mut u8, off: usize, ks: __m512i) {
    // SAFETY: the caller guarantees 64 readable/writable bytes at `off`;
    // unaligned loads and stores.
    unsafe {
        let d = _mm512_loadu_si512(inp.add(off).cast());
        _mm512_storeu_si512(out.add(off).cast(), _mm512_xor_si512(d, ks));
    }
}

#[inline]
#[target_feature(enable = "avx512f")]
fn load16(w: &[u32; 16]) -> __m512i {
    _mm512_setr_epi32(
        w[0] as i32,
        w[1] as i32,
        w[2] as i32,
        w[3] as i32,
        w[4] as i32,
        w[5] as i32,
        w[6] as i32,
        w[7] as i32,
        w[8] as i32,
        w[9] as i32,
        w[10] as i32,
        w[11] as i32,
        w[12] as i32,
        w[13] as i32,
        w[14] as i32,
        w[15] as i32,
    )
}

// ---------------------------------------------------------------- passes

/// The transposed state of 16 blocks with counters `ctr..ctr + 16` (a
/// macro rather than a function so that it is always inlined).
macro_rules! init16 {
    ($s:expr, $ctr:expr, $legacy:expr) => {{
        let s: &[u32; 16] = $s;
        let ctr: u64 = $ctr;
        let mut v = [_mm512_setzero_si512(); 16];
        for i in 0..16 {
            v[i] = _mm512_set1_epi32(s[i] as i32);
        }
        let iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        let lo = _mm512_add_epi32(_mm512_set1_epi32(ctr as u32 as i32), iota);
        v[12] = lo;
        if $legacy {
            // Carry into the high word where the low word wrapped (lo < iota).
            let carry = _mm512_cmplt_epu32_mask(lo, iota);
            let hi = _mm512_set1_epi32((ctr >> 32) as u32 as i32);
            v[13] = _mm512_mask_add_epi32(hi, carry, hi, _mm512_set1_epi32(1));
        }
        v
    }};
}

/// Add the input state, transpose and XOR the first `n` blocks into place.
///
/// # Safety
/// `inp` and `out` valid for `64 * n` bytes; AVX-512F available.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn finish16(x: &[__m512i; 16], v: &[__m512i; 16], inp: *const u8, out: *mut u8, n: usize) {
    let mut x = *x;
    for i in 0..16 {
        x[i] = add16(x[i], v[i]);
    }
    let g0 = transpose16(x[0], x[1], x[2], x[3]);
    let g1 = transpose16(x[4], x[5], x[6], x[7]);
    let g2 = transpose16(x[8], x[9], x[10], x[11]);
    let g3 = transpose16(x[12], x[13], x[14], x[15]);
    for k in 0..4 {
        // 128-bit chunk j of g*[k] belongs to block 4 * j + k.
        let t0 = _mm512_shuffle_i32x4::<0x44>(g0[k], g1[k]);
        let t1 = _mm512_shuffle_i32x4::<0x44>(g2[k], g3[k]);
        let t2 = _mm512_shuffle_i32x4::<0xee>(g0[k], g1[k]);
        let t3 = _mm512_shuffle_i32x4::<0xee>(g2[k], g3[k]);
        let blocks = [
            _mm512_shuffle_i32x4::<0x88>(t0, t1),
            _mm512_shuffle_i32x4::<0xdd>(t0, t1),
            _mm512_shuffle_i32x4::<0x88>(t2, t3),
            _mm512_shuffle_i32x4::<0xdd>(t2, t3),
        ];
        for (j, b) in blocks.into_iter().enumerate() {
            let blk = 4 * j + k;
            if blk < n {
                // SAFETY: block `blk` < n lies inside the caller's 64 * n bytes.
                unsafe { xor_store512(inp, out, 64 * blk, b) };
            }
        }
    }
}

/// Add the input state and run the first half of the output transpose:
/// `g[4 * r + k]` holds, in its 128-bit chunk `j`, row `r` of block `4 * j + k`.
#[inline]
#[target_feature(enable = "avx512f")]
fn prep16(x: &[__m512i; 16], v: &[__m512i; 16]) -> [__m512i; 16] {
    let mut y = [_mm512_setzero_si512(); 16];
    for i in 0..16 {
        y[i] = add16(x[i], v[i]);
    }
    let mut g = [_mm512_setzero_si512(); 16];
    for r in 0..4 {
        let t = transpose16(y[4 * r], y[4 * r + 1], y[4 * r + 2], y[4 * r + 3]);
        g[4 * r..4 * r + 4].copy_from_slice(&t);
    }
    g
}

/// The second half of the output transpose for blocks `k`, `k + 4`,
/// `k + 8` and `k + 12` (those below `n`), XORed into place; `g` points to
/// the sixteen vectors of [`prep16`].
///
/// # Safety
/// `g` valid for 16 vectors; `inp` and `out` valid for `64 * n` bytes;
/// AVX-512F available.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn emit16(g: *const __m512i, k: usize, inp: *const u8, out: *mut u8, n: usize) {
    // SAFETY: `g` holds 16 vectors (caller); unaligned loads.
    let [a, b, c, d] = unsafe {
        [
            _mm512_loadu_si512(g.add(k).cast()),
            _mm512_loadu_si512(g.add(4 + k).cast()),
            _mm512_loadu_si512(g.add(8 + k).cast()),
            _mm512_loadu_si512(g.add(12 + k).cast()),
        ]
    };
    let t0 = _mm512_shuffle_i32x4::<0x44>(a, b);
    let t1 = _mm512_shuffle_i32x4::<0x44>(c, d);
    let t2 = _mm512_shuffle_i32x4::<0xee>(a, b);
    let t3 = _mm512_shuffle_i32x4::<0xee>(c, d);
    let blocks = [
        _mm512_shuffle_i32x4::<0x88>(t0, t1),
        _mm512_shuffle_i32x4::<0xdd>(t0, t1),
        _mm512_shuffle_i32x4::<0x88>(t2, t3),
        _mm512_shuffle_i32x4::<0xdd>(t2, t3),
    ];
    for (j, blk) in blocks.into_iter().enumerate() {
        let idx = 4 * j + k;
        if idx < n {
            // SAFETY: block `idx` < n lies inside the caller's 64 * n bytes.
            unsafe { xor_store512(inp, out, 64 * idx, blk) };
        }
    }
}

/// `n` blocks (`n >= 16`), 16 per zmm pass, software-pipelined: the
/// output transpose and stores of one pass run during the first double
/// rounds of the next, so that the shuffles share the ports with the
/// rounds' additions instead of running alone. The last pass may be short.
///
/// # Safety
/// `inp` and `out` valid for `64 * n` bytes; AVX-512F available.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn bulk16(
    s: &[u32; 16],
    ctr: u64,
    legacy: bool,
    dr: usize,
    inp: *const u8,
    out: *mut u8,
    n: usize,
) {
    // The previous pass's half-transposed output lives in this buffer (in
    // memory, not registers: the rounds need 16 zmm registers and the
    // output stage loads from here as it goes).
    let mut buf = [_mm512_setzero_si512(); 16];
    let mut done = 0usize;
    let mut prev_n = 0usize;
    while done < n {
        let c = ctr.wrapping_add(done as u64);
        // Opaque pointers: the broadcasts are reloaded per pass rather than
        // kept live across the loop (register pressure).
        let sp = core::hint::black_box(s);
        let g = core::hint::black_box(buf.as_mut_ptr());
        let mut x = init16!(sp, c, legacy);
        let (pin, pout) = (
            inp.wrapping_add(64 * (done - prev_n)),
            out.wrapping_add(64 * (done - prev_n)),
        );
        for k in 0..4 {
            if k < dr {
                double_round!(x, add16, xor16, r16_16, r12_16, r8_16, r7_16);
            }
            if prev_n != 0 {
                // SAFETY: the previous pass's `prev_n` blocks end at
                // `done` <= n, inside the caller's buffer; `g` is `buf`.
                unsafe { emit16(g, k, pin, pout, prev_n) };
            }
        }
        for _ in 4..dr {
            double_round!(x, add16, xor16, r16_16, r12_16, r8_16, r7_16);
        }
        let sp = core::hint::black_box(sp);
        let v = init16!(sp, c, legacy);
        let y = prep16(&x, &v);
        for (i, yi) in y.iter().enumerate() {
            // SAFETY: `g` points to `buf`, 16 vectors.
            unsafe { _mm512_storeu_si512(g.add(i).cast(), *yi) };
        }
        prev_n = core::cmp::min(16, n - done);
        done += prev_n;
    }
    let g = core::hint::black_box(buf.as_mut_ptr());
    for k in 0..4 {
        // SAFETY: the last pass's blocks end at n; `g` is `buf`.
        unsafe {
            emit16(
                g,
                k,
                inp.add(64 * (n - prev_n)),
                out.add(64 * (n - prev_n)),
                prev_n,
            )
        };
    }
}

/// Up to 16 blocks (`n` in 1..=16).
///
/// # Safety
/// `inp` and `out` valid for `64 * n` bytes; AVX-512F available.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn pass16(
    s: &[u32; 16],
    ctr: u64,
    legacy: bool,
    dr: usize,
    inp: *const u8,
    out: *mut u8,
    n: usize,
) {
    let mut x = init16!(s, ctr, legacy);
    for _ in 0..dr {
        double_round!(x, add16, xor16, r16_16, r12_16, r8_16, r7_16);
    }
    // Rebuilt, not kept live through the rounds (register pressure).
    let v = init16!(core::hint::black_box(s), ctr, legacy);
    // SAFETY: forwarded from the caller.
    unsafe { finish16(&x, &v, inp, out, n) };
}

/// Up to 8 blocks (`n` in 1..=8) in ymm registers.
///
/// # Safety
/// `inp` and `out` valid for `64 * n` bytes; AVX-512F/VL available.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn pass8(
    s: &[u32; 16],
    ctr: u64,
    legacy: bool,
    dr: usize,
    inp: *const u8,
    out: *mut u8,
    n: usize,
) {
    let (lo, hi) = lane_counters::<8>(ctr, legacy, s[13]);
    let mut v = [_mm256_setzero_si256(); 16];
    for i in 0..16 {
        v[i] = _mm256_set1_epi32(s[i] as i32);
    }
    v[12] = _mm512_castsi512_si256(load16(&[
        lo[0], lo[1], lo[2], lo[3], lo[4], lo[5], lo[6], lo[7], 0, 0, 0, 0, 0, 0, 0, 0,
    ]));
    v[13] = _mm512_castsi512_si256(load16(&[
        hi[0], hi[1], hi[2], hi[3], hi[4], hi[5], hi[6], hi[7], 0, 0, 0, 0, 0, 0, 0, 0,
    ]));
    let mut x = v;
    for _ in 0..dr {
        double_round!(x, add8, xor8, r16_8, r12_8, r8_8, r7_8);
    }
    for i in 0..16 {
        x[i] = add8(x[i], v[i]);
    }
    let g0 = transpose8(x[0], x[1], x[2], x[3]);
    let g1 = transpose8(x[4], x[5], x[6], x[7]);
    let g2 = transpose8(x[8], x[9], x[10], x[11]);
    let g3 = transpose8(x[12], x[13], x[14], x[15]);
    for k in 0..4 {
        if k < n {
            let a = _mm256_permute2x128_si256::<0x20>(g0[k], g1[k]);
            let b = _mm256_permute2x128_si256::<0x20>(g2[k], g3[k]);
            // SAFETY: block k < n lies inside the caller's 64 * n bytes.
            unsafe {
                xor_store256(inp, out, 64 * k, a);
                xor_store256(inp, out, 64 * k + 32, b);
            }
        }
        if k + 4 < n {
            let a = _mm256_permute2x128_si256::<0x31>(g0[k], g1[k]);
            let b = _mm256_permute2x128_si256::<0x31>(g2[k], g3[k]);
            // SAFETY: block k + 4 < n lies inside the caller's 64 * n bytes.
            unsafe {
                xor_store256(inp, out, 64 * (k + 4), a);
                xor_store256(inp, out, 64 * (k + 4) + 32, b);
            }
        }
    }
}

#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn rows_rounds(
    mut a: __m128i,
    mut b: __m128i,
    mut c: __m128i,
    mut d: __m128i,
    dr: usize,
) -> [__m128i; 4] {
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
#[target_feature(enable = "avx512f,avx512vl")]
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
/// `inp` and `out` valid for 64 bytes; AVX-512F/VL available.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
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
        unsafe { xor_store128(inp, out, 16 * i, add4(x[i], v[i])) };
    }
}

/// One double round on a row-layout state of two blocks (one per 128-bit lane).
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn dround_rows2(x: &mut [__m256i; 4]) {
    let [mut a, mut b, mut c, mut d] = *x;
    a = add8(a, b);
    d = r16_8(xor8(d, a));
    c = add8(c, d);
    b = r12_8(xor8(b, c));
    a = add8(a, b);
    d = r8_8(xor8(d, a));
    c = add8(c, d);
    b = r7_8(xor8(b, c));
    // a, c and d move (not b): the shuffles stay off the critical path.
    a = _mm256_shuffle_epi32::<0x93>(a);
    c = _mm256_shuffle_epi32::<0x39>(c);
    d = _mm256_shuffle_epi32::<0x4e>(d);
    a = add8(a, b);
    d = r16_8(xor8(d, a));
    c = add8(c, d);
    b = r12_8(xor8(b, c));
    a = add8(a, b);
    d = r8_8(xor8(d, a));
    c = add8(c, d);
    b = r7_8(xor8(b, c));
    a = _mm256_shuffle_epi32::<0x39>(a);
    c = _mm256_shuffle_epi32::<0x93>(c);
    d = _mm256_shuffle_epi32::<0x4e>(d);
    *x = [a, b, c, d];
}

/// Up to `2 * SETS` blocks (`n` in 1..=2 * SETS) in row layout, two blocks
/// per ymm set; the sets are independent, so their rounds overlap.
///
/// # Safety
/// `inp` and `out` valid for `64 * n` bytes; AVX-512F/VL available.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn rows<const SETS: usize>(
    s: &[u32; 16],
    ctr: u64,
    legacy: bool,
    dr: usize,
    inp: *const u8,
    out: *mut u8,
    n: usize,
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
        if 2 * k < n {
            // SAFETY: block 2k < n lies inside the caller's 64 * n bytes.
            unsafe {
                xor_store256(inp, out, 128 * k, _mm256_permute2x128_si256::<0x20>(a, b));
                xor_store256(
                    inp,
                    out,
                    128 * k + 32,
                    _mm256_permute2x128_si256::<0x20>(c, d),
                );
            }
        }
        if 2 * k + 1 < n {
            // SAFETY: block 2k + 1 < n lies inside the caller's 64 * n bytes.
            unsafe {
                xor_store256(
                    inp,
                    out,
                    128 * k + 64,
                    _mm256_permute2x128_si256::<0x31>(a, b),
                );
                xor_store256(
                    inp,
                    out,
                    128 * k + 96,
                    _mm256_permute2x128_si256::<0x31>(c, d),
                );
            }
        }
    }
}

#[target_feature(enable = "avx512f,avx512vl")]
fn hchacha_inner(s: &[u32; 16], dr: usize) -> [u32; 8] {
    let x = rows_rounds(row(s, 0), row(s, 4), row(s, 8), row(s, 12), dr);
    let w = |v: __m128i| {
        [
            _mm_cvtsi128_si32(v) as u32,
            _mm_extract_epi32::<1>(v) as u32,
            _mm_extract_epi32::<2>(v) as u32,
            _mm_extract_epi32::<3>(v) as u32,
        ]
    };
    let (a, d) = (w(x[0]), w(x[3]));
    [a[0], a[1], a[2], a[3], d[0], d[1], d[2], d[3]]
}

#[target_feature(enable = "avx512f,avx512vl")]
fn xor_blocks_inner(s: &[u32; 16], ctr: u64, legacy: bool, dr: usize, buf: InOutBuf<'_, '_, u8>) {
    let n = buf.len() / 64;
    let (inp, out) = buf.into_raw();
    let mut i = 0;
    if n >= 16 {
        // Whole passes of 16, plus a short last pass of 9..15 blocks.
        i = if n % 16 > 8 { n } else { n - n % 16 };
        // SAFETY: blocks 0..i lie inside the buffer of n blocks.
        unsafe { bulk16(s, ctr, legacy, dr, inp, out, i) };
    }
    let r = n - i;
    let c = ctr.wrapping_add(i as u64);
    if r > 8 {
        // SAFETY: blocks i..n lie inside the buffer.
        unsafe { pass16(s, c, legacy, dr, inp.add(64 * i), out.add(64 * i), r) };
    } else if r > 4 {
        // SAFETY: blocks i..n lie inside the buffer.
        unsafe { pass8(s, c, legacy, dr, inp.add(64 * i), out.add(64 * i), r) };
    } else if r > 2 {
        // SAFETY: blocks i..n lie inside the buffer.
        unsafe { rows::<2>(s, c, legacy, dr, inp.add(64 * i), out.add(64 * i), r) };
    } else if r > 1 {
        // SAFETY: blocks i..n lie inside the buffer.
        unsafe { rows::<1>(s, c, legacy, dr, inp.add(64 * i), out.add(64 * i), r) };
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
    // SAFETY: `Backend::Avx512` is only selected after `avx512_cpuid`
    // confirmed AVX-512F and AVX-512VL.
    if buf.len() == 64 {
        // One block (a short message or a partial-block refill): a small
        // function, without the big passes' stack frame.
        // SAFETY: `Backend::Avx512` is only selected after `avx512_cpuid` confirmed AVX-512F and AVX-512VL.
        unsafe { one_block(s, ctr, legacy, dr, buf) }
    } else {
        // SAFETY: `Backend::Avx512` is only selected after `avx512_cpuid` confirmed AVX-512F and AVX-512VL.
        unsafe { xor_blocks_inner(s, ctr, legacy, dr, buf) }
    }
}

#[inline(never)]
#[target_feature(enable = "avx512f,avx512vl")]
fn one_block(s: &[u32; 16], ctr: u64, legacy: bool, dr: usize, buf: InOutBuf<'_, '_, u8>) {
    let (inp, out) = buf.into_raw();
    // SAFETY: the buffer holds exactly one block.
    unsafe { block1(s, ctr, legacy, dr, inp, out) }
}

pub(crate) fn hchacha(s: &[u32; 16], dr: usize) -> [u32; 8] {
    // SAFETY: `Backend::Avx512` is only selected after `avx512_cpuid`
    // confirmed AVX-512F and AVX-512VL.
    unsafe { hchacha_inner(s, dr) }
}
