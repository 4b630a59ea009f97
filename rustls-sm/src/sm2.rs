//! The SM2 parts of RFC 8998, independent of rustls: ECDHE on curveSM2
//! (the shared secret is the x-coordinate of the product) and SM2
//! signatures with SM3 (`sm2sig_sm3`, and certificates) under the two
//! signer identifiers in use.
//!
//! Signing is written here on the `sm2` crate's curve arithmetic (GB/T
//! 32918.2 section 6.1, with RFC 6979 nonces as `sm2::dsa` makes them, so
//! the signatures are the same bytes): `sm2::dsa::SigningKey` keeps a copy
//! of the private scalar that nothing wipes, while `SecretKey` wipes
//! itself when dropped.

use sm2::dsa::signature::Verifier;
use sm2::dsa::{Signature, VerifyingKey};
use sm2::elliptic_curve::ops::Reduce;
use sm2::elliptic_curve::point::AffineCoordinates;
use sm2::elliptic_curve::sec1::ToSec1Point;
use sm2::elliptic_curve::subtle::ConstantTimeEq;
use sm2::elliptic_curve::{Curve, Group, PrimeField};
use sm2::pkcs8::DecodePrivateKey;
use sm2::{FieldBytes, ProjectivePoint, PublicKey, Scalar, SecretKey, U256};
use sm3_simd::{Digest, Sm3};
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

/// The signer identifier (`ID_A` of GB/T 32918.2) of SM2 signatures in
/// certificates: "1234567812345678", the default of GB/T 35276 (and what
/// `openssl req -sigopt distid:1234567812345678` writes).
pub const CERT_SIGNER_ID: &str = "1234567812345678";

/// The signer identifier of `sm2sig_sm3` in TLS 1.3's CertificateVerify:
/// "TLSv1.3+GM+Cipher+Suite", fixed by RFC 8998 section 3.2.1 (and what
/// OpenSSL 4 uses there).
pub const TLS13_SIGNER_ID: &str = "TLSv1.3+GM+Cipher+Suite";

/// The length of a curveSM2 key share: an uncompressed SEC1 point.
pub(crate) const SHARE_LEN: usize = 65;

/// The curve's `a` and `b` (GB/T 32918.5), big-endian, as `Z_A` hashes them.
const CURVE_A: [u8; 32] = [
    0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfc,
];
const CURVE_B: [u8; 32] = [
    0x28, 0xe9, 0xfa, 0x9e, 0x9d, 0x9f, 0x5e, 0x34, 0x4d, 0x5a, 0x9e, 0x4b, 0xcf, 0x65, 0x09, 0xa7,
    0xf3, 0x97, 0x89, 0xf5, 0x15, 0xab, 0x8f, 0x92, 0xdd, 0xbc, 0xbd, 0x41, 0x4d, 0x94, 0x0e, 0x93,
];

/// The DER `[0] { OID sm2p256v1 }` that names the curve in a SEC1
/// `ECPrivateKey` (1.2.156.10197.1.301).
const SEC1_SM2_PARAMETERS: [u8; 12] = [
    0xa0, 0x0a, 0x06, 0x08, 0x2a, 0x81, 0x1c, 0xcf, 0x55, 0x01, 0x82, 0x2d,
];

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
                let share = sec1_uncompressed(&secret.public_key())?;
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
    /// uncompressed point on the curve (coordinates below p, on the curve).
    pub(crate) fn agree(&self, peer: &[u8]) -> Option<Zeroizing<[u8; 32]>> {
        if peer.len() != SHARE_LEN || peer[0] != 4 {
            return None;
        }
        let peer = PublicKey::from_sec1_bytes(peer).ok()?;
        let product = (peer.to_projective() * *self.secret.to_nonzero_scalar()).to_affine();
        Some(Zeroizing::new(product.x().into()))
    }
}

/// `04 || x || y` of a public key.
fn sec1_uncompressed(key: &PublicKey) -> Option<[u8; SHARE_LEN]> {
    key.to_sec1_point(false).as_bytes().try_into().ok()
}

/// `Z_A = SM3(ENTL_A || ID_A || a || b || x_G || y_G || x_A || y_A)` (GB/T
/// 32918.2 section 5.5); `None` if the identifier is 8192 bytes or longer.
fn signer_hash(id: &str, public_key: &[u8; SHARE_LEN]) -> Option<[u8; 32]> {
    let bits = u16::try_from(id.len().checked_mul(8)?).ok()?;
    let generator =
        sec1_uncompressed(&PublicKey::from_affine(ProjectivePoint::generator().to_affine()).ok()?)?;
    let mut h = Sm3::new();
    h.update(bits.to_be_bytes());
    h.update(id.as_bytes());
    h.update(CURVE_A);
    h.update(CURVE_B);
    h.update(&generator[1..]);
    h.update(&public_key[1..]);
    Some(h.finalize().into())
}

/// An SM2 private key (for `sm2sig_sm3`), with its public key. The private
/// scalar is wiped when the key is dropped; the key is not `Clone` (share
/// it behind an `Arc`).
pub struct Sm2Key {
    /// Wipes itself on drop (`elliptic-curve`'s `SecretKey`).
    secret: SecretKey,
    public: [u8; SHARE_LEN],
    /// `Z_A` under [`TLS13_SIGNER_ID`], made once (public).
    tls13_z: [u8; 32],
}

// The only secret field wipes itself when dropped.
impl ZeroizeOnDrop for Sm2Key {}

impl core::fmt::Debug for Sm2Key {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Sm2Key").finish_non_exhaustive()
    }
}

impl Sm2Key {
    fn from_secret(secret: SecretKey) -> Option<Self> {
        let public = sec1_uncompressed(&secret.public_key())?;
        let tls13_z = signer_hash(TLS13_SIGNER_ID, &public)?;
        Some(Self {
            secret,
            public,
            tls13_z,
        })
    }

    /// Parses a PKCS#8 `PrivateKeyInfo` (DER) holding an SM2 key
    /// (`id-ecPublicKey` with the SM2 curve, as `openssl genpkey
    /// -algorithm SM2` writes). `None` for any other key.
    pub fn from_pkcs8_der(der: &[u8]) -> Option<Self> {
        Self::from_secret(SecretKey::from_pkcs8_der(der).ok()?)
    }

    /// Parses a SEC1 `ECPrivateKey` (DER) that names the SM2 curve in its
    /// parameters (as `openssl ec` writes an SM2 key). `None` for any other
    /// key, and for a SEC1 key without parameters (its curve is unknown).
    pub fn from_sec1_der(der: &[u8]) -> Option<Self> {
        // `from_sec1_der` refuses another named curve; require the name.
        if !der
            .windows(SEC1_SM2_PARAMETERS.len())
            .any(|w| w == SEC1_SM2_PARAMETERS)
        {
            return None;
        }
        Self::from_secret(SecretKey::from_sec1_der(der).ok()?)
    }

    /// The public key as an uncompressed SEC1 point.
    pub fn public_key(&self) -> Box<[u8]> {
        self.public.into()
    }

    /// The DER-encoded SM2 signature of `message` (SM3 over Z_A || M)
    /// under the signer identifier `id` ([`TLS13_SIGNER_ID`] for TLS 1.3,
    /// [`CERT_SIGNER_ID`] for certificates). Deterministic (RFC 6979 nonces
    /// over SM3, as `sm2::dsa::SigningKey` signs: the same bytes).
    pub fn sign(&self, id: &str, message: &[u8]) -> Option<Vec<u8>> {
        let z = if id == TLS13_SIGNER_ID {
            self.tls13_z
        } else {
            signer_hash(id, &self.public)?
        };
        let digest: [u8; 32] = Sm3::new()
            .chain_update(z)
            .chain_update(message)
            .finalize()
            .into();
        let e = <Scalar as Reduce<U256>>::reduce(&U256::from_be_slice(&digest));
        let d = Zeroizing::new(*self.secret.to_nonzero_scalar().as_ref());
        let mut d_bytes = d.to_repr();
        let mut nonces =
            rfc6979::KGenerator::<Sm3, U256>::new(&d_bytes, &e.to_bytes(), &[], &sm2::Sm2::ORDER);
        d_bytes.zeroize();
        // (1 + d)^-1: d is below n - 1 for every valid key, so it exists.
        let d_plus_1_inv = Zeroizing::new(Option::<Scalar>::from((*d + Scalar::ONE).invert())?);
        // A retry needs r = 0, r + k = n or s = 0: probability ~2^-255 each.
        for _ in 0..4 {
            let mut k_bytes = Zeroizing::new(FieldBytes::default());
            nonces.fill_next_k(&mut k_bytes);
            let k = Zeroizing::new(Option::<Scalar>::from(Scalar::from_repr(*k_bytes))?);
            let x1 = ProjectivePoint::mul_by_generator(&*k).to_affine().x();
            let r = e + <Scalar as Reduce<FieldBytes>>::reduce(&x1);
            if bool::from(r.is_zero() | (r + *k).ct_eq(&Scalar::ZERO)) {
                continue;
            }
            let s = *d_plus_1_inv * (*k - r * *d);
            if bool::from(s.is_zero()) {
                continue;
            }
            let sig = Signature::from_scalars(r, s).ok()?;
            return Some(sig.to_der().as_bytes().to_vec());
        }
        None
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

#[cfg(test)]
mod tests {
    use super::*;
    use sm2::dsa::SigningKey;
    use sm2::dsa::signature::Signer;

    /// Our signatures are `sm2::dsa::SigningKey`'s, byte for byte, under
    /// both identifiers, and verify.
    #[test]
    fn signatures_equal_sm2_dsa() {
        let mut seed = [7u8; 32];
        for round in 0..8u8 {
            seed[0] = round;
            let secret = SecretKey::from_slice(&seed).unwrap();
            let ours = Sm2Key::from_secret(secret.clone()).unwrap();
            for id in [TLS13_SIGNER_ID, CERT_SIGNER_ID, ""] {
                let theirs = SigningKey::new(id, &secret).unwrap();
                for len in [0usize, 1, 63, 64, 1000] {
                    let msg = vec![round ^ 0x5a; len];
                    let sig = ours.sign(id, &msg).unwrap();
                    let want: Signature = theirs.try_sign(&msg).unwrap();
                    assert_eq!(sig, want.to_der().as_bytes(), "id {id:?}, {len} bytes");
                    assert!(verify(id, &ours.public_key(), &msg, &sig));
                    assert!(!verify(id, &ours.public_key(), b"other", &sig));
                }
            }
        }
    }

    #[test]
    fn key_wipes_itself_on_drop() {
        fn wipes<T: ZeroizeOnDrop>() {}
        wipes::<Sm2Key>();
        wipes::<SecretKey>();
    }
}
