//! What every ChaCha kernel shares, below the dispatcher: the constant
//! words, little-endian word loads, block counters for N lanes, and the
//! round macros each kernel instantiates with its own vector operations.
//! Imports nothing from the crate.

/// The four ChaCha constant words, "expand 32-byte k".
pub(crate) const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// The first `N` little-endian words of `b`, as a value (LLVM moves the
/// array as whole vectors; see `ChaCha::init`).
#[inline(always)]
pub(crate) fn le_words<const N: usize>(b: &[u8]) -> [u32; N] {
    core::array::from_fn(|i| {
        u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
    })
}

/// Counter words of `N` consecutive blocks starting at `ctr`: word 12 is
/// the low half; word 13 is the high half for the legacy layout (carry
/// included) and the first nonce word otherwise.
#[allow(dead_code)]
#[inline(always)]
pub(crate) fn lane_counters<const N: usize>(
    ctr: u64,
    legacy: bool,
    word13: u32,
) -> ([u32; N], [u32; N]) {
    let mut lo = [0u32; N];
    let mut hi = [word13; N];
    for i in 0..N {
        let c = ctr.wrapping_add(i as u64);
        lo[i] = c as u32;
        if legacy {
            hi[i] = (c >> 32) as u32;
        }
    }
    (lo, hi)
}

/// The eight quarter rounds of one double round over sixteen vectors (or
/// words) `$x`, with the given add, xor and rotate-left-by-16/12/8/7 functions.
#[allow(unused_macros)]
macro_rules! double_round {
    ($x:ident, $add:path, $xor:path, $r16:path, $r12:path, $r8:path, $r7:path) => {
        $crate::backends::rounds::quarter4!(
            $x, $add, $xor, $r16, $r12, $r8, $r7, 0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11,
            15
        );
        $crate::backends::rounds::quarter4!(
            $x, $add, $xor, $r16, $r12, $r8, $r7, 0, 5, 10, 15, 1, 6, 11, 12, 2, 7, 8, 13, 3, 4, 9,
            14
        );
    };
}

/// One double round on a row-layout state `$x: &mut [V; 4]` (rows a, b, c,
/// d; one block per 128-bit lane), with the given add, xor and rotate
/// functions and `$shuf`, a `pshufd`-style lane shuffle taking its
/// immediate as a const generic.
#[allow(unused_macros)]
macro_rules! row_double_round {
    ($x:ident, $add:path, $xor:path, $r16:path, $r12:path, $r8:path, $r7:path, $shuf:ident) => {{
        let [mut a, mut b, mut c, mut d] = *$x;
        a = $add(a, b);
        d = $r16($xor(d, a));
        c = $add(c, d);
        b = $r12($xor(b, c));
        a = $add(a, b);
        d = $r8($xor(d, a));
        c = $add(c, d);
        b = $r7($xor(b, c));
        // a, c and d move (not b): the shuffles stay off the critical path.
        a = $shuf::<0x93>(a);
        c = $shuf::<0x39>(c);
        d = $shuf::<0x4e>(d);
        a = $add(a, b);
        d = $r16($xor(d, a));
        c = $add(c, d);
        b = $r12($xor(b, c));
        a = $add(a, b);
        d = $r8($xor(d, a));
        c = $add(c, d);
        b = $r7($xor(b, c));
        a = $shuf::<0x39>(a);
        c = $shuf::<0x93>(c);
        d = $shuf::<0x4e>(d);
        *$x = [a, b, c, d];
    }};
}

/// Four independent quarter rounds, interleaved step by step.
#[allow(unused_macros)]
macro_rules! quarter4 {
    ($x:ident, $add:path, $xor:path, $r16:path, $r12:path, $r8:path, $r7:path,
     $a0:literal, $b0:literal, $c0:literal, $d0:literal,
     $a1:literal, $b1:literal, $c1:literal, $d1:literal,
     $a2:literal, $b2:literal, $c2:literal, $d2:literal,
     $a3:literal, $b3:literal, $c3:literal, $d3:literal) => {
        $x[$a0] = $add($x[$a0], $x[$b0]);
        $x[$a1] = $add($x[$a1], $x[$b1]);
        $x[$a2] = $add($x[$a2], $x[$b2]);
        $x[$a3] = $add($x[$a3], $x[$b3]);
        $x[$d0] = $r16($xor($x[$d0], $x[$a0]));
        $x[$d1] = $r16($xor($x[$d1], $x[$a1]));
        $x[$d2] = $r16($xor($x[$d2], $x[$a2]));
        $x[$d3] = $r16($xor($x[$d3], $x[$a3]));
        $x[$c0] = $add($x[$c0], $x[$d0]);
        $x[$c1] = $add($x[$c1], $x[$d1]);
        $x[$c2] = $add($x[$c2], $x[$d2]);
        $x[$c3] = $add($x[$c3], $x[$d3]);
        $x[$b0] = $r12($xor($x[$b0], $x[$c0]));
        $x[$b1] = $r12($xor($x[$b1], $x[$c1]));
        $x[$b2] = $r12($xor($x[$b2], $x[$c2]));
        $x[$b3] = $r12($xor($x[$b3], $x[$c3]));
        $x[$a0] = $add($x[$a0], $x[$b0]);
        $x[$a1] = $add($x[$a1], $x[$b1]);
        $x[$a2] = $add($x[$a2], $x[$b2]);
        $x[$a3] = $add($x[$a3], $x[$b3]);
        $x[$d0] = $r8($xor($x[$d0], $x[$a0]));
        $x[$d1] = $r8($xor($x[$d1], $x[$a1]));
        $x[$d2] = $r8($xor($x[$d2], $x[$a2]));
        $x[$d3] = $r8($xor($x[$d3], $x[$a3]));
        $x[$c0] = $add($x[$c0], $x[$d0]);
        $x[$c1] = $add($x[$c1], $x[$d1]);
        $x[$c2] = $add($x[$c2], $x[$d2]);
        $x[$c3] = $add($x[$c3], $x[$d3]);
        $x[$b0] = $r7($xor($x[$b0], $x[$c0]));
        $x[$b1] = $r7($xor($x[$b1], $x[$c1]));
        $x[$b2] = $r7($xor($x[$b2], $x[$c2]));
        $x[$b3] = $r7($xor($x[$b3], $x[$c3]));
    };
}

#[allow(unused_imports)]
pub(crate) use {double_round, quarter4, row_double_round};

/// One quarter round on words `a`, `b`, `c` and `d` of a state.
#[allow(dead_code)]
#[inline(always)]
pub(crate) fn quarter_words(x: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(16);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(12);
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(8);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(7);
}
