//! Constant-time helpers on `usize` masks: all ones for true, zero for
//! false, computed without branches.

/// All ones if `a < b`, else zero (both below 2^(usize::BITS - 1)).
#[inline]
pub(crate) fn lt(a: usize, b: usize) -> usize {
    // The top bit of a - b is set exactly when a < b (no overflow in range).
    let top = (a.wrapping_sub(b)) >> (usize::BITS - 1);
    core::hint::black_box(top).wrapping_neg()
}

/// All ones if `a <= b`.
#[inline]
pub(crate) fn le(a: usize, b: usize) -> usize {
    !lt(b, a)
}

/// All ones if `a == b`.
#[inline]
pub(crate) fn eq(a: usize, b: usize) -> usize {
    le(a, b) & le(b, a)
}

/// All ones if `x == 0`.
#[inline]
pub(crate) fn is_zero(x: usize) -> usize {
    eq(x, 0)
}

/// The low byte of a mask.
#[inline]
pub(crate) fn byte(mask: usize) -> u8 {
    mask as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks() {
        for a in [0usize, 1, 2, 255, 256, 16384, 1 << 40] {
            for b in [0usize, 1, 2, 255, 256, 16384, 1 << 40] {
                assert_eq!(lt(a, b) == usize::MAX, a < b, "{a} < {b}");
                assert_eq!(le(a, b) == usize::MAX, a <= b);
                assert_eq!(eq(a, b) == usize::MAX, a == b);
                assert!(lt(a, b) == 0 || lt(a, b) == usize::MAX);
            }
        }
        assert_eq!(is_zero(0), usize::MAX);
        assert_eq!(is_zero(9), 0);
    }
}
