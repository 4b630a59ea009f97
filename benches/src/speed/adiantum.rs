//! `speed` rows for the `adiantum` family.

/// Measure this family's rows.
pub fn rows(s: &mut crate::Speed) {
    let _ = s;
}
