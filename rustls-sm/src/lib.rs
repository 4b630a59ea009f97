#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod glue;
mod record;
mod sm2;

pub use glue::{
    CURVE_SM2, CURVE_SM2_KX, SM2_SM3, SM2SIG_SM3, SM2SIG_SM3_TLS13, TLS_SM4_CCM_SM3,
    TLS_SM4_GCM_SM3, TLS13_SM4_CCM_SM3, TLS13_SM4_GCM_SM3, describe, group_name, provider,
    rfc8998_only, suite_name,
};
pub use rustls;
pub use sm2::{CERT_SIGNER_ID, Sm2Key, TLS13_SIGNER_ID, verify as sm2_verify};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// The certificates of a PEM file (a chain: the end entity first).
pub fn load_certs(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, rustls::Error> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| rustls::Error::General(format!("certificate PEM: {e}")))?;
    if certs.is_empty() {
        return Err(rustls::Error::General("no certificate in the PEM".into()));
    }
    Ok(certs)
}

/// The first private key of a PEM file (PKCS#8 for SM2 keys, as
/// `openssl genpkey -algorithm SM2` writes them).
pub fn load_private_key(pem: &[u8]) -> Result<PrivateKeyDer<'static>, rustls::Error> {
    PrivateKeyDer::from_pem_slice(pem)
        .map_err(|e| rustls::Error::General(format!("private key PEM: {e}")))
}
