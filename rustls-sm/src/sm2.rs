//! The SM2 parts of RFC 8998, independent of rustls: ECDHE on curveSM2
//! (the shared secret is the x-coordinate of the product) and SM2
//! signatures with SM3 (`sm2sig_sm3`, and certificates) under the two
//! signer identifiers in use.

use sm2::dsa::signature::{Signer, Verifier};
use sm2::dsa::{Signature, SigningKey, VerifyingKey};
use sm2::elliptic_curve::point::AffineCoordinates;
use sm2::elliptic_curve::sec1::ToSec1Point;
use sm2::pkcs8::DecodePrivateKey;
use sm2::{PublicKey, SecretKey};
use zeroize::Zeroizing;

/// The signer identifier (`ID_A` of GB/T 32918.2) of SM2 signatures in
/// certificates: "1234567812345678", the default of GB/T 35276 (and of
/// OpenSSL, `openssl req -sigopt distid:1234567812345678`).
pub const CERT_SIGNER_ID: &str = "1234567812345678";

/// The signer identifier of `sm2sig_sm3` in TLS 1.3's CertificateVerify:
/// "TLSv1.3+GM+Cipher+Suite", fixed by RFC 8998 section 3.2.1 (and what
/// OpenSSL 4 uses there).
pub const TLS13_SIGNER_ID: &str = "TLSv1.3+GM+Cipher+Suite";

/// The length of a curveSM2 key share: an uncompressed SEC1 point.
pub(crate) const SHARE_LEN: usize = 65;

/// An ephemeral curveSM2 key pair for one handshake.
pub(crate) struct EphemeralKey {
    secret: SecretKey,
    share: [u8; SHARE_LEN],
}

impl EphemeralKey {
    /// A new key pair from the random bytes `fill` gives (rejection
    /// sampling below the group order; `None` if `fill` fails or, with
    /// probability below 2^-256, eight draws in a row are out of range).
    pub(crate) fn generate(mut fill: impl FnMut(&mut [u8]) -> bool) -> Option<Self> {
        for _ in 0..8 {
            let mut bytes = Zeroizing::new([0u8; 32]);
            if !fill(&mut bytes[..]) {
                return None;
            }
            if let Ok(secret) = SecretKey::from_slice(&bytes[..]) {
                let point = secret.public_key().to_sec1_point(false);
                let share = point.as_bytes().try_into().ok()?;
                return Some(Self { secret, share });
            }
        }
        None
    }

    /// Our key share: `04 || x || y`.
    pub(crate) fn share(&self) -> &[u8] {
        &self.share
    }

    /// The shared secret with the peer's share: the x-coordinate of
    /// d * Q (RFC 8998 section 3.1). `None` if the share is not an
    /// uncompressed point on the curve.
    pub(crate) fn agree(&self, peer: &[u8]) -> Option<Zeroizing<[u8; 32]>> {
        if peer.len() != SHARE_LEN || peer[0] != 4 {
            return None;
        }
        let peer = PublicKey::from_sec1_bytes(peer).ok()?;
        let product = (peer.to_projective() * *self.secret.to_nonzero_scalar()).to_affine();
        Some(Zeroizing::new(product.x().into()))
    }
}

/// An SM2 private key (for `sm2sig_sm3`), with its public key.
#[derive(Clone)]
pub struct Sm2Key {
    secret: SecretKey,
    /// The key under [`TLS13_SIGNER_ID`], made once (it holds the public
    /// key, a scalar multiplication).
    tls13: SigningKey,
}

impl core::fmt::Debug for Sm2Key {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Sm2Key").finish_non_exhaustive()
    }
}

impl Sm2Key {
    /// Parses a PKCS#8 `PrivateKeyInfo` (DER) holding an SM2 key
    /// (`id-ecPublicKey` with the SM2 curve, as `openssl genpkey
    /// -algorithm SM2` writes). `None` for any other key.
    pub fn from_pkcs8_der(der: &[u8]) -> Option<Self> {
        let secret = SecretKey::from_pkcs8_der(der).ok()?;
        let tls13 = SigningKey::new(TLS13_SIGNER_ID, &secret).ok()?;
        Some(Self { secret, tls13 })
    }

    /// The public key as an uncompressed SEC1 point.
    pub fn public_key(&self) -> Box<[u8]> {
        self.secret
            .public_key()
            .to_sec1_point(false)
            .as_bytes()
            .into()
    }

    /// The DER-encoded SM2 signature of `message` (SM3 over Z_A || M)
    /// under the signer identifier `id` ([`TLS13_SIGNER_ID`] for TLS 1.3,
    /// [`CERT_SIGNER_ID`] for certificates). Deterministic (RFC 6979 nonces).
    pub fn sign(&self, id: &str, message: &[u8]) -> Option<Vec<u8>> {
        let sig: Signature = if id == TLS13_SIGNER_ID {
            self.tls13.try_sign(message).ok()?
        } else {
            SigningKey::new(id, &self.secret)
                .ok()?
                .try_sign(message)
                .ok()?
        };
        Some(sig.to_der().as_bytes().to_vec())
    }
}

/// Verifies a DER-encoded SM2 signature over `message` by the SEC1
/// public key `public_key`, under the signer identifier `id`.
pub fn verify(id: &str, public_key: &[u8], message: &[u8], signature: &[u8]) -> bool {
    let Ok(key) = VerifyingKey::from_sec1_bytes(id, public_key) else {
        return false;
    };
    let Ok(sig) = Signature::from_der(signature) else {
        return false;
    };
    key.verify(message, &sig).is_ok()
}
