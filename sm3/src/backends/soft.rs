//! Portable SM3 compression: plain 32-bit arithmetic, no tables indexed by
//! data, so it runs in constant time. It is the reference for every other
//! backend, and its round helpers are shared by the scalar-round backends
//! (`avx`, `neon`), which inline them under their own target features.

/// The initial hash value (GB/T 32905 section 4.1).
pub(crate) const IV: [u32; 8] = [
    0x7380_166f,
    0x4914_b2b9,
    0x1724_42d7,
    0xda8a_0600,
    0xa96f_30bc,
    0x1631_38aa,
    0xe38d_ee4d,
    0xb0fb_0e4e,
];

const T_LO: u32 = 0x79cc_4519;
const T_HI: u32 = 0x7a87_9d8a;

/// Round constants already rotated: `T[j] = rol(T_j, j mod 32)`.
pub(crate) const T: [u32; 64] = {
    let mut t = [0u32; 64];
    let mut j = 0;
    while j < 64 {
        let base = if j < 16 { T_LO } else { T_HI };
        t[j] = base.rotate_left((j % 32) as u32);
        j += 1;
    }
    t
};

#[inline(always)]
pub(crate) fn p0(x: u32) -> u32 {
    x ^ x.rotate_left(9) ^ x.rotate_left(17)
}

#[inline(always)]
pub(crate) fn p1(x: u32) -> u32 {
    x ^ x.rotate_left(15) ^ x.rotate_left(23)
}

/// One SM3 round, with the register renaming done by the caller: after the
/// round, the variables `(d, a, b, c, h, e, f, g)` hold the new
/// `(A, B, C, D, E, F, G, H)`. `w` is `W_j`, `wp` is `W'_j = W_j ^ W_{j+4}`,
/// `t` the rotated round constant. `HI` selects the functions of rounds
/// 16..63. The expressions are ordered for short dependency chains: `T_j`
/// is added to `rol12(A)` before `E` (which arrives later) and the
/// majority takes `A` last. `hide` may be an optimization barrier that
/// keeps the compiler from re-associating `rol12(A) + T_j + E` into
/// `(rol12(A) + E) + T_j` (constants last), which puts one more addition
/// on the critical path; `soft` passes the identity.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn round<const HI: bool>(
    a: u32,
    b: &mut u32,
    c: u32,
    d: &mut u32,
    e: u32,
    f: &mut u32,
    g: u32,
    h: &mut u32,
    w: u32,
    wp: u32,
    t: u32,
    hide: impl Fn(u32) -> u32,
) {
    let a12 = a.rotate_left(12);
    let ss1 = hide(a12.wrapping_add(t)).wrapping_add(e).rotate_left(7);
    let ss2 = ss1 ^ a12;
    let (ff, gg) = if HI {
        ((a & (*b | c)) | (*b & c), ((*f ^ g) & e) ^ g)
    } else {
        (a ^ *b ^ c, e ^ *f ^ g)
    };
    let tt1 = ff.wrapping_add(d.wrapping_add(wp)).wrapping_add(ss2);
    let tt2 = gg.wrapping_add(h.wrapping_add(w)).wrapping_add(ss1);
    *b = b.rotate_left(9);
    *f = f.rotate_left(19);
    *d = tt1;
    *h = p0(tt2);
}

/// Rounds `j..j + 4` (one full turn of the register renaming) on the
/// variables `a..h`, with `W` from `$w[j..]`, `W'` from `$wp[j..]` (the
/// NEON backend's; `soft` keeps its message in a window instead).
#[cfg_attr(not(target_arch = "aarch64"), allow(unused_macros))]
macro_rules! four_rounds {
    ($hi:literal, $j:expr, $v:tt, $w:expr, $wp:expr, $hide:expr) => {
        four_rounds!(@ $hi, $j, $v, $w, $wp, $hide)
    };
    (@ $hi:literal, $j:expr, [$a:ident, $b:ident, $c:ident, $d:ident,
        $e:ident, $f:ident, $g:ident, $h:ident], $w:expr, $wp:expr, $hide:expr) => {{
        use $crate::backends::soft::{T, round};
        let j: usize = $j;
        let (w, wp) = (&$w, &$wp);
        round::<$hi>(
            $a, &mut $b, $c, &mut $d, $e, &mut $f, $g, &mut $h,
            w[j], wp[j], T[j], $hide,
        );
        round::<$hi>(
            $d, &mut $a, $b, &mut $c, $h, &mut $e, $f, &mut $g,
            w[j + 1], wp[j + 1], T[j + 1], $hide,
        );
        round::<$hi>(
            $c, &mut $d, $a, &mut $b, $g, &mut $h, $e, &mut $f,
            w[j + 2], wp[j + 2], T[j + 2], $hide,
        );
        round::<$hi>(
            $b, &mut $c, $d, &mut $a, $f, &mut $g, $h, &mut $e,
            w[j + 3], wp[j + 3], T[j + 3], $hide,
        );
    }};
}
#[allow(unused_imports)] // used by the NEON backend only
pub(crate) use four_rounds;

/// `W_k` for `k >= 16` from the 16 words before it, held in `w` at their
/// index mod 16; it is stored over `W_{k-16}`, its last use.
#[inline(always)]
fn expand_one(w: &mut [u32; 16], k: usize) -> u32 {
    let x = p1(w[k % 16] ^ w[(k - 9) % 16] ^ w[(k - 3) % 16].rotate_left(15))
        ^ w[(k - 13) % 16].rotate_left(7)
        ^ w[(k - 6) % 16];
    w[k % 16] = x;
    x
}

/// Round `j` on the variables `a..h` (named in this round's roles), with
/// the message words in the 16-word window `w`: `W_{j+4}` (for `W'_j`) is
/// expanded first, over `W_{j-12}`, which no later word needs.
macro_rules! window_round {
    ($hi:literal, $j:expr, $w:ident, [$a:ident, $b:ident, $c:ident, $d:ident,
        $e:ident, $f:ident, $g:ident, $h:ident]) => {{
        let j: usize = $j;
        let ahead = if j + 4 < 16 { $w[j + 4] } else { expand_one(&mut $w, j + 4) };
        let now = $w[j % 16];
        round::<$hi>($a, &mut $b, $c, &mut $d, $e, &mut $f, $g, &mut $h,
            now, now ^ ahead, T[j], |x| x);
    }};
}

/// Rounds `j..j + 4`: one full turn of the register renaming.
macro_rules! window_rounds {
    ($hi:literal, $j:expr, $w:ident, [$a:ident, $b:ident, $c:ident, $d:ident,
        $e:ident, $f:ident, $g:ident, $h:ident]) => {{
        window_round!($hi, $j, $w, [$a, $b, $c, $d, $e, $f, $g, $h]);
        window_round!($hi, $j + 1, $w, [$d, $a, $b, $c, $h, $e, $f, $g]);
        window_round!($hi, $j + 2, $w, [$c, $d, $a, $b, $g, $h, $e, $f]);
        window_round!($hi, $j + 3, $w, [$b, $c, $d, $a, $f, $g, $h, $e]);
    }};
}

/// Compress `blocks` into `state`. The message is expanded one word a
/// round, four words ahead, in a 16-word window (the whole 68 + 64 words
/// up front, stored and reloaded, ran about 25% slower).
pub(crate) fn compress(state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    for block in blocks {
        let mut w: [u32; 16] = core::array::from_fn(|i| {
            u32::from_be_bytes([
                block[4 * i],
                block[4 * i + 1],
                block[4 * i + 2],
                block[4 * i + 3],
            ])
        });
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
        // Written out so that every index is a constant.
        window_rounds!(false, 0, w, [a, b, c, d, e, f, g, h]);
        window_rounds!(false, 4, w, [a, b, c, d, e, f, g, h]);
        window_rounds!(false, 8, w, [a, b, c, d, e, f, g, h]);
        window_rounds!(false, 12, w, [a, b, c, d, e, f, g, h]);
        window_rounds!(true, 16, w, [a, b, c, d, e, f, g, h]);
        window_rounds!(true, 20, w, [a, b, c, d, e, f, g, h]);
        window_rounds!(true, 24, w, [a, b, c, d, e, f, g, h]);
        window_rounds!(true, 28, w, [a, b, c, d, e, f, g, h]);
        window_rounds!(true, 32, w, [a, b, c, d, e, f, g, h]);
        window_rounds!(true, 36, w, [a, b, c, d, e, f, g, h]);
        window_rounds!(true, 40, w, [a, b, c, d, e, f, g, h]);
        window_rounds!(true, 44, w, [a, b, c, d, e, f, g, h]);
        window_rounds!(true, 48, w, [a, b, c, d, e, f, g, h]);
        window_rounds!(true, 52, w, [a, b, c, d, e, f, g, h]);
        window_rounds!(true, 56, w, [a, b, c, d, e, f, g, h]);
        window_rounds!(true, 60, w, [a, b, c, d, e, f, g, h]);
        for (s, v) in state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
            *s ^= v;
        }
    }
}
