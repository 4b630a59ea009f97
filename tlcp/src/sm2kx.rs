//! The SM2 key exchange protocol (GB/T 32918.3-2016 section 6), which
//! TLCP's ECDHE suites use for the pre-master secret: each side has a
//! static key pair (in TLCP, its encryption key pair) and an ephemeral
//! one; both derive the same key from
//! `KDF(x || y || Z_initiator || Z_responder, klen)`. The optional
//! confirmation hashes (S1, S2, SA, SB) are not computed.

use sm2::elliptic_curve::Group;
use sm2::elliptic_curve::ops::Reduce;
use sm2::elliptic_curve::point::AffineCoordinates;
use sm2::elliptic_curve::sec1::ToSec1Point;
use sm2::{PublicKey, Scalar, SecretKey, U256};
use sm3_simd::{Digest, Sm3};
use zeroize::Zeroizing;

/// The key derivation function of GB/T 32918 (part 3 section 5.4.3):
/// SM3(z || counter) for counters 1, 2, ... (32-bit big-endian), truncated.
pub(crate) fn kdf(z: &[&[u8]], out: &mut [u8]) {
    for (i, chunk) in out.chunks_mut(32).enumerate() {
        let mut h = Sm3::new();
        for part in z {
            h.update(part);
        }
        h.update((i as u32 + 1).to_be_bytes());
        chunk.copy_from_slice(&h.finalize()[..chunk.len()]);
    }
}

/// `x̄ = 2^127 + (x mod 2^127)` of a point's x-coordinate (w = 127 for a
/// 256-bit order).
fn x_bar(point: &PublicKey) -> Scalar {
    let x = point.as_affine().x();
    let mut bytes = [0u8; 32];
    bytes[16..].copy_from_slice(&x[16..]);
    bytes[16] |= 0x80;
    <Scalar as Reduce<U256>>::reduce(&U256::from_be_slice(&bytes))
}

/// One side's contribution: its static and ephemeral private keys.
pub(crate) struct Party<'a> {
    pub(crate) static_key: &'a SecretKey,
    pub(crate) ephemeral: &'a SecretKey,
}

/// The shared key of `klen` bytes, for `us` with the peer's static and
/// ephemeral public keys; `z_initiator` and `z_responder` are the two
/// sides' `Z` (GB/T 32918.2 section 5.5), in protocol order. `None` if the
/// shared point is the identity (a peer's bad keys).
pub(crate) fn agree(
    us: &Party<'_>,
    peer_static: &PublicKey,
    peer_ephemeral: &PublicKey,
    z_initiator: &[u8; 32],
    z_responder: &[u8; 32],
    klen: usize,
) -> Option<Zeroizing<Vec<u8>>> {
    let d = *us.static_key.to_nonzero_scalar().as_ref();
    let r = *us.ephemeral.to_nonzero_scalar().as_ref();
    // t = d + x̄(R_own) * r mod n.
    let t = Zeroizing::new(d + x_bar(&us.ephemeral.public_key()) * r);
    // U = [t](P_peer + [x̄(R_peer)] R_peer), the cofactor being 1.
    let sum = peer_static.to_projective() + peer_ephemeral.to_projective() * x_bar(peer_ephemeral);
    let u = sum * *t;
    if bool::from(u.is_identity()) {
        return None;
    }
    let u = u.to_affine();
    let point = u.to_sec1_point(false);
    let mut key = Zeroizing::new(vec![0u8; klen]);
    kdf(
        &[&point.as_bytes()[1..], z_initiator, z_responder],
        &mut key,
    );
    Some(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(seed: u8) -> SecretKey {
        SecretKey::from_slice(&[seed; 32]).unwrap()
    }

    #[test]
    fn both_sides_agree_and_depend_on_every_input() {
        let (da, ra, db, rb) = (key(1), key(2), key(3), key(4));
        let (za, zb) = ([0xaa; 32], [0xbb; 32]);
        let a = Party {
            static_key: &da,
            ephemeral: &ra,
        };
        let b = Party {
            static_key: &db,
            ephemeral: &rb,
        };
        let ka = agree(&a, &db.public_key(), &rb.public_key(), &za, &zb, 48).unwrap();
        let kb = agree(&b, &da.public_key(), &ra.public_key(), &za, &zb, 48).unwrap();
        assert_eq!(*ka, *kb);
        assert_eq!(ka.len(), 48);
        // Another ephemeral key, static key or Z order: another key.
        let other = key(5);
        let kc = agree(&a, &db.public_key(), &other.public_key(), &za, &zb, 48).unwrap();
        assert_ne!(*ka, *kc);
        let kd = agree(&a, &other.public_key(), &rb.public_key(), &za, &zb, 48).unwrap();
        assert_ne!(*ka, *kd);
        let ke = agree(&a, &db.public_key(), &rb.public_key(), &zb, &za, 48).unwrap();
        assert_ne!(*ka, *ke);
    }

    /// Tongsuo's `SM2_compute_key` (tests/data/sm2-kx.json, made by
    /// interop/sm2kx.py through ctypes): both roles give its key, and Z.
    #[test]
    fn tongsuo_vectors() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/sm2-kx.json"
        ))
        .unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        let vectors = json["vectors"].as_array().unwrap();
        assert_eq!(vectors.len(), 3);
        for v in vectors {
            let h = |k: &str| testkit::hex(v[k].as_str().unwrap());
            let sk = |k: &str| SecretKey::from_slice(&h(k)).unwrap();
            let (da, ra, db, rb) = (
                sk("d_a_static"),
                sk("r_a_ephemeral"),
                sk("d_b_static"),
                sk("r_b_ephemeral"),
            );
            assert_eq!(
                crate::sm2::encode(&ra.public_key())[..],
                h("R_a_ephemeral")[..]
            );
            let (id_a, id_b) = (v["id_a"].as_str().unwrap(), v["id_b"].as_str().unwrap());
            let za = crate::sm2::z(id_a, &da.public_key());
            let zb = crate::sm2::z(id_b, &db.public_key());
            assert_eq!(za[..], h("z_a")[..]);
            assert_eq!(zb[..], h("z_b")[..]);
            let klen = v["klen_bytes"].as_u64().unwrap() as usize;
            let a = Party {
                static_key: &da,
                ephemeral: &ra,
            };
            let b = Party {
                static_key: &db,
                ephemeral: &rb,
            };
            let ka = agree(&a, &db.public_key(), &rb.public_key(), &za, &zb, klen).unwrap();
            let kb = agree(&b, &da.public_key(), &ra.public_key(), &za, &zb, klen).unwrap();
            assert_eq!(ka[..], h("shared_key")[..], "{}", v["name"]);
            assert_eq!(kb[..], h("shared_key")[..]);
        }
    }

    #[test]
    fn kdf_counts_from_one() {
        let mut out = [0u8; 40];
        kdf(&[b"abc"], &mut out);
        let first: [u8; 32] = Sm3::new()
            .chain_update(b"abc")
            .chain_update(1u32.to_be_bytes())
            .finalize()
            .into();
        let second: [u8; 32] = Sm3::new()
            .chain_update(b"abc")
            .chain_update(2u32.to_be_bytes())
            .finalize()
            .into();
        assert_eq!(out[..32], first);
        assert_eq!(out[32..], second[..8]);
    }
}
