//! The one place this crate branches on a value computed from secrets:
//! whether a CBC record's padding and MAC are good (one bit, computed
//! without branches; see `record`).

/// `bit` (0 or 1) as a `bool`.
#[inline]
pub(crate) fn is_true(bit: u8) -> bool {
    core::hint::black_box(bit) == 1
}
