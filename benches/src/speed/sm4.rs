//! `speed` rows for the `sm4` family.

/// Measure this family's rows.
pub fn rows(s: &mut crate::Speed) {
    let _ = s;
}
