//! Declassification: the only places where this crate branches on a value
//! computed from secrets. Each is one bit of public answer (are two
//! secret-derived byte strings equal?), computed without branches; built
//! with `--cfg ct_valgrind`, that one bit is declared public to valgrind
//! memcheck, so that the constant-time check (`ctcheck`) reports any other
//! secret-dependent branch or address.

/// Whether `a` and `b` (equal lengths) are equal, comparing every byte.
/// Only the answer is public: the callers refuse or accept on it.
#[inline]
pub(crate) fn equal_declassified(a: &[u8], b: &[u8]) -> bool {
    debug_assert_eq!(a.len(), b.len());
    let diff = a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y));
    // 1 if every byte matched, else 0, still without a branch: for a
    // nonzero `diff` (1..=255), `diff - 1` leaves bit 8 clear.
    // The black box keeps the compiler from turning the fold into an early
    // exit on the first differing byte.
    #[allow(unused_mut)]
    let mut equal = core::hint::black_box([((u32::from(diff).wrapping_sub(1) >> 8) & 1) as u8]);
    #[cfg(ct_valgrind)]
    crate::valgrind::mark_public(&mut equal);
    equal[0] == 1
}

/// Whether the low 64 bits of counter block `c` carry within the next `n`
/// blocks. The counter comes from the nonce or IV, which the mode's caller
/// sends in the clear, and it carries once in 2^64 blocks: the fast CTR
/// paths step the low half alone and take the slow path when this answer
/// (the only bit of the counter they branch on) is yes.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline]
pub(crate) fn counter_carries(c: u128, n: usize) -> bool {
    #[allow(unused_mut)]
    let mut carries = [u8::from((c as u64).overflowing_add(n as u64).1)];
    #[cfg(ct_valgrind)]
    crate::valgrind::mark_public(&mut carries);
    carries[0] == 1
}
