//! The SM2 operations of TLCP on RustCrypto's `sm2`: signatures with SM3
//! under a signer ID (GB/T 32918.2), public-key encryption in the GM/T 0009
//! DER form (GB/T 32918.4), and `Z`, the signer hash that the key exchange
//! needs too.

use sm2::dsa::signature::{Signer, Verifier};
use sm2::dsa::{Signature, SigningKey, VerifyingKey};
use sm2::elliptic_curve::Group;
use sm2::elliptic_curve::rand_core::{TryCryptoRng, TryRng};
use sm2::elliptic_curve::sec1::ToSec1Point;
use sm2::pke::{DecryptingKey, EncryptingKey};
use sm2::{ProjectivePoint, PublicKey, SecretKey};
use sm3_simd::{Digest, Sm3};
use zeroize::Zeroizing;

/// The signer ID of TLCP's handshake signatures and of SM2 certificates:
/// "1234567812345678" (GB/T 35276).
pub const DEFAULT_SIGNER_ID: &str = "1234567812345678";

/// The operating system's random source, for `sm2`'s encryption.
pub(crate) struct OsRng;

impl TryRng for OsRng {
    type Error = getrandom::Error;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        let mut b = [0u8; 4];
        getrandom::fill(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        let mut b = [0u8; 8];
        getrandom::fill(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        getrandom::fill(dst)
    }
}

impl TryCryptoRng for OsRng {}

/// Random bytes from the operating system.
pub(crate) fn random(buf: &mut [u8]) -> Option<()> {
    getrandom::fill(buf).ok()
}

/// `04 || x || y`.
pub(crate) fn encode(key: &PublicKey) -> [u8; 65] {
    let mut out = [0u8; 65];
    out.copy_from_slice(key.to_sec1_point(false).as_bytes());
    out
}

/// The curve's `a` and `b` (GB/T 32918.5), as `Z` hashes them.
const CURVE_A: [u8; 32] = [
    0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfc,
];
const CURVE_B: [u8; 32] = [
    0x28, 0xe9, 0xfa, 0x9e, 0x9d, 0x9f, 0x5e, 0x34, 0x4d, 0x5a, 0x9e, 0x4b, 0xcf, 0x65, 0x09, 0xa7,
    0xf3, 0x97, 0x89, 0xf5, 0x15, 0xab, 0x8f, 0x92, 0xdd, 0xbc, 0xbd, 0x41, 0x4d, 0x94, 0x0e, 0x93,
];

/// `Z = SM3(ENTL || ID || a || b || x_G || y_G || x || y)`.
pub(crate) fn z(id: &str, public_key: &PublicKey) -> [u8; 32] {
    let bits = (id.len() * 8) as u16;
    let generator = PublicKey::from_affine(ProjectivePoint::generator().to_affine())
        .expect("the generator is a valid point");
    Sm3::new()
        .chain_update(bits.to_be_bytes())
        .chain_update(id.as_bytes())
        .chain_update(CURVE_A)
        .chain_update(CURVE_B)
        .chain_update(&encode(&generator)[1..])
        .chain_update(&encode(public_key)[1..])
        .finalize()
        .into()
}

/// The DER SM2 signature of `message` under `id` (deterministic nonces).
pub(crate) fn sign(key: &SecretKey, id: &str, message: &[u8]) -> Option<Vec<u8>> {
    let signer = SigningKey::new(id, key).ok()?;
    let sig: Signature = signer.try_sign(message).ok()?;
    Some(sig.to_der().as_bytes().to_vec())
}

/// Whether `signature` (DER) is `public_key`'s over `message` under `id`.
pub(crate) fn verify(public_key: &PublicKey, id: &str, message: &[u8], signature: &[u8]) -> bool {
    let Ok(key) = VerifyingKey::new(id, *public_key) else {
        return false;
    };
    let Ok(sig) = Signature::from_der(signature) else {
        return false;
    };
    key.verify(message, &sig).is_ok()
}

/// SM2 encryption of `message` to `public_key`, GM/T 0009 DER
/// (`SEQUENCE { x, y, SM3 hash, ciphertext }`).
pub(crate) fn encrypt(public_key: &PublicKey, message: &[u8]) -> Option<Vec<u8>> {
    EncryptingKey::new(*public_key)
        .encrypt_der(&mut OsRng, message)
        .ok()
}

/// The plaintext of a GM/T 0009 DER ciphertext, `None` if it does not
/// decrypt (bad point, bad hash, bad encoding).
pub(crate) fn decrypt(key: &SecretKey, ciphertext: &[u8]) -> Option<Zeroizing<Vec<u8>>> {
    DecryptingKey::new(key.clone())
        .decrypt_der(ciphertext)
        .ok()
        .map(Zeroizing::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_verify_encrypt_decrypt() {
        let key = SecretKey::from_slice(&[7; 32]).unwrap();
        let public = key.public_key();
        let sig = sign(&key, DEFAULT_SIGNER_ID, b"message").unwrap();
        assert!(verify(&public, DEFAULT_SIGNER_ID, b"message", &sig));
        assert!(!verify(&public, "", b"message", &sig));
        assert!(!verify(&public, DEFAULT_SIGNER_ID, b"massage", &sig));
        let ct = encrypt(&public, &[0x42; 48]).unwrap();
        assert_eq!(ct[0], 0x30);
        assert_eq!(decrypt(&key, &ct).unwrap()[..], [0x42; 48]);
        let mut bad = ct.clone();
        let at = bad.len() - 1;
        bad[at] ^= 1;
        assert!(decrypt(&key, &bad).is_none());
        for cut in 0..ct.len() {
            assert!(decrypt(&key, &ct[..cut]).is_none());
        }
    }

    #[test]
    fn z_matches_sm2_dsa() {
        // sm2's verifying key hashes Z itself: a signature made over
        // SM3(Z || M) as a prehash must verify as a signature over M.
        use sm2::dsa::signature::hazmat::PrehashSigner;
        let key = SecretKey::from_slice(&[9; 32]).unwrap();
        let e: [u8; 32] = Sm3::new()
            .chain_update(z(DEFAULT_SIGNER_ID, &key.public_key()))
            .chain_update(b"abc")
            .finalize()
            .into();
        let signer = SigningKey::new(DEFAULT_SIGNER_ID, &key).unwrap();
        let sig: Signature = signer.sign_prehash(&e).unwrap();
        assert!(verify(
            &key.public_key(),
            DEFAULT_SIGNER_ID,
            b"abc",
            sig.to_der().as_bytes()
        ));
    }
}
