//! What every NH kernel shares, below the dispatcher: the NH sizes, the
//! unrolling macro of the x86 kernels and the software-pipelined unit loop
//! that feeds Poly1305.

use crate::poly1305::PolyCore;

/// NH key length in 32-bit words (1072 bytes).
pub(crate) const NH_KEY_WORDS: usize = 268;
/// Bytes per NH message unit.
pub(crate) const NH_UNIT: usize = 1024;
/// Bytes per NH stride.
pub(crate) const NH_STRIDE: usize = 16;

/// `$step(i, &mut $acc)` for each listed stride index `i` with
/// `i + $width <= $n`, written out rather than looped: on Intel cores the
/// scalar integer ports include the vector ports, and a loop's counter
/// updates and branch took some of their slots (one compare with the
/// loop-invariant `$n` per step remains). Used by the x86 NH backends.
#[cfg(target_arch = "x86_64")]
macro_rules! unrolled_steps {
    ($step:ident, $acc:ident, $n:ident, $width:literal; $($i:literal)*) => {
        $(if $i + $width <= $n {
            $step($i, &mut $acc);
        })*
    };
}
#[cfg(target_arch = "x86_64")]
pub(crate) use unrolled_steps;

/// NH every unit of `msg` (a multiple of 16 bytes; the last unit may be
/// partial) with `nh` and feed the values to `poly`,
/// software-pipelined: unit `k`'s Poly1305 step is placed after unit
/// `k + 1`'s NH, so the scalar multiply chain overlaps the SIMD work
/// instead of stalling it (measured: ~25% faster NHPoly1305 at 8 KiB).
/// Inlined into each backend's `#[target_feature]` function.
#[inline(always)]
pub(crate) fn pipelined_units(
    msg: &[u8],
    poly: &mut PolyCore,
    mut nh: impl FnMut(&[u8]) -> [u64; 4],
) {
    let mut units = msg.chunks(NH_UNIT);
    let Some(first) = units.next() else {
        return;
    };
    let mut prev = nh(first);
    for unit in units {
        let sums = nh(unit);
        poly.nh_value(&prev);
        prev = sums;
    }
    poly.nh_value(&prev);
}
