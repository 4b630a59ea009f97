//! What the two examples share: `--suites` / `--groups` selection.

use rustls::crypto::CryptoProvider;

/// The provider with only the named suites and groups, in that order.
pub fn select(
    mut p: CryptoProvider,
    suites: Option<&str>,
    groups: Option<&str>,
) -> Result<CryptoProvider, String> {
    if let Some(list) = suites {
        let all = std::mem::take(&mut p.cipher_suites);
        for name in list.split(',') {
            let s = all
                .iter()
                .find(|s| rustls_sm::suite_name(s.suite()).eq_ignore_ascii_case(name))
                .ok_or(format!("no suite {name}"))?;
            p.cipher_suites.push(*s);
        }
    }
    if let Some(list) = groups {
        let all = std::mem::take(&mut p.kx_groups);
        for name in list.split(',') {
            let g = all
                .iter()
                .find(|g| rustls_sm::group_name(g.name()).eq_ignore_ascii_case(name))
                .ok_or(format!("no group {name}"))?;
            p.kx_groups.push(*g);
        }
    }
    Ok(p)
}
