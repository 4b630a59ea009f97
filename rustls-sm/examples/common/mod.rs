//! What the two examples share: `--suites` / `--groups` selection, and
//! the certificate and key of `--cert` / `--key` (optionally signing
//! CertificateVerify under another SM2 signer ID, for the interop test).

use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::PrivateKeyDer;
use rustls::sign::{CertifiedKey, Signer, SigningKey, SingleCertAndKey};
use rustls::{SignatureAlgorithm, SignatureScheme};

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

/// The chain of the PEM file `cert` and the key of the PEM file `key`, as
/// rustls's single-certificate resolver (client or server). The key is
/// loaded by `provider`'s key provider; with `signer_id`, it must be an
/// SM2 key (PKCS#8 or SEC1), and its CertificateVerify is signed under that ID
/// instead of RFC 8998's `TLSv1.3+GM+Cipher+Suite` (a test of the peer).
pub fn certified_key(
    cert: &str,
    key: &str,
    signer_id: Option<&str>,
    provider: &CryptoProvider,
) -> Result<Arc<SingleCertAndKey>, Box<dyn std::error::Error>> {
    let chain = rustls_sm::load_certs(&std::fs::read(cert)?)?;
    let der = rustls_sm::load_private_key(&std::fs::read(key)?)?;
    let certified = match signer_id {
        None => CertifiedKey::from_der(chain, der, provider)?,
        Some(id) => {
            let sm2 = match &der {
                PrivateKeyDer::Pkcs8(k) => rustls_sm::Sm2Key::from_pkcs8_der(k.secret_pkcs8_der()),
                PrivateKeyDer::Sec1(k) => rustls_sm::Sm2Key::from_sec1_der(k.secret_sec1_der()),
                _ => None,
            }
            .ok_or(format!("--cv-signer-id: {key} is not an SM2 key"))?;
            let signer = Sm2WithId(Arc::new((sm2, id.to_owned())));
            CertifiedKey::new(chain, Arc::new(signer))
        }
    };
    Ok(Arc::new(SingleCertAndKey::from(certified)))
}

/// An SM2 key that signs `sm2sig_sm3` under the given signer ID.
#[derive(Clone, Debug)]
struct Sm2WithId(Arc<(rustls_sm::Sm2Key, String)>);

impl SigningKey for Sm2WithId {
    fn choose_scheme(&self, offered: &[SignatureScheme]) -> Option<Box<dyn Signer>> {
        let scheme = *rustls_sm::SM2SIG_SM3;
        offered
            .contains(&scheme)
            .then(|| Box::new(self.clone()) as Box<dyn Signer>)
    }

    fn algorithm(&self) -> SignatureAlgorithm {
        // As the provider's own SM2 key (TLS 1.2 has no SM2 code point).
        SignatureAlgorithm::Unknown(0x08)
    }
}

impl Signer for Sm2WithId {
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, rustls::Error> {
        let (key, id) = &*self.0;
        key.sign(id, message)
            .ok_or_else(|| rustls::Error::General("SM2 signing failed".into()))
    }

    fn scheme(&self) -> SignatureScheme {
        *rustls_sm::SM2SIG_SM3
    }
}
