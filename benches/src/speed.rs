//! The rows of the `speed` table, one module per algorithm family.

#[cfg(feature = "adiantum")]
pub mod adiantum;
#[cfg(feature = "chacha")]
pub mod chacha;
#[cfg(feature = "nhpoly1305")]
pub mod nhpoly1305;
#[cfg(feature = "sm3")]
pub mod sm3;
#[cfg(feature = "sm4")]
pub mod sm4;
#[cfg(feature = "sm4-mac")]
pub mod sm4_mac;
#[cfg(feature = "tls")]
pub mod tlcp;
#[cfg(feature = "tls")]
pub mod tls;

/// Measure every family compiled in.
pub fn all(s: &mut crate::Speed) {
    #[cfg(feature = "sm4")]
    sm4::rows(s);
    #[cfg(feature = "sm4-mac")]
    sm4_mac::rows(s);
    #[cfg(feature = "sm3")]
    sm3::rows(s);
    #[cfg(feature = "chacha")]
    chacha::rows(s);
    #[cfg(feature = "nhpoly1305")]
    nhpoly1305::rows(s);
    #[cfg(feature = "adiantum")]
    adiantum::rows(s);
    #[cfg(feature = "tls")]
    tls::rows(s);
    #[cfg(feature = "tls")]
    tlcp::rows(s);
    let _ = s;
}
