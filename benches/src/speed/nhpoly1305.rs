//! `speed` rows for the `nhpoly1305` family.

/// Measure this family's rows.
pub fn rows(s: &mut crate::Speed) {
    let _ = s;
}
