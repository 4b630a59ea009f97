//! `speed` rows for the `chacha` family.

/// Measure this family's rows.
pub fn rows(s: &mut crate::Speed) {
    let _ = s;
}
