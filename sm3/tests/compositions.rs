//! The compositions users build on `Sm3`: HMAC-SM3 (`hmac::Hmac<Sm3>`,
//! also `SimpleHmac`) and HKDF-SM3 (`hkdf::Hkdf<Sm3>`).
//!
//! HMAC-SM3 known answers are in `tests/sm3.rs` (GM/T 0042-2015 D.3). No
//! standard publishes HKDF-SM3 vectors; `tests/data/hkdf-sm3.json` was
//! computed by `tools/hkdf_sm3_vectors.py` with two independent SM3
//! implementations that had to agree (OpenSSL's, through Python's `hashlib`
//! and `hmac`, and the pure-Python SM3 of the `gmssl` package with HMAC
//! written out), over RFC 5869's inputs and a maximum-length output.

use hkdf::Hkdf;
use hmac::{Hmac, KeyInit, Mac, SimpleHmac};
use sm3_simd::Sm3;
use testkit::{Rng, load_cases};

#[test]
fn hkdf_sm3_vectors() {
    let cases = load_cases(env!("CARGO_MANIFEST_DIR"), "tests/data/hkdf-sm3.json");
    assert_eq!(cases.len(), 4);
    for case in &cases {
        let (ikm, salt, info) = (case.hex("ikm"), case.hex("salt"), case.hex("info"));
        let (prk, okm) = (case.hex("prk"), case.hex("okm"));
        let salt = (!salt.is_empty()).then_some(salt.as_slice());

        let (got_prk, hk) = Hkdf::<Sm3>::extract(salt, &ikm);
        assert_eq!(got_prk[..], prk[..], "{} PRK", case.id());
        let mut got = vec![0u8; okm.len()];
        hk.expand(&info, &mut got).unwrap();
        assert_eq!(got, okm, "{} OKM", case.id());

        // From the PRK alone, and with the info given in pieces.
        let hk = Hkdf::<Sm3>::from_prk(&prk).unwrap();
        let mut got = vec![0u8; okm.len()];
        let (a, b) = info.split_at(info.len() / 2);
        hk.expand_multi_info(&[a, b], &mut got).unwrap();
        assert_eq!(got, okm, "{} OKM from PRK", case.id());

        // One byte past the longest output (255 blocks) is refused.
        let mut too_long = vec![0u8; 255 * 32 + 1];
        assert!(hk.expand(&info, &mut too_long).is_err());
    }
}

/// `Hmac` (the block-level HMAC over `Sm3Core`) and `SimpleHmac` (over any
/// `Digest`) agree for keys and messages of every length class.
#[test]
fn hmac_and_simple_hmac_agree() {
    let mut rng = Rng::new(0x484d_4143);
    for key_len in [0, 1, 32, 63, 64, 65, 200] {
        for msg_len in [0, 1, 55, 56, 63, 64, 65, 1000, 5000] {
            let key = rng.bytes(key_len);
            let msg = rng.bytes(msg_len);
            let mut a = <Hmac<Sm3> as KeyInit>::new_from_slice(&key).unwrap();
            let mut b = <SimpleHmac<Sm3> as KeyInit>::new_from_slice(&key).unwrap();
            for chunk in msg.chunks(97) {
                a.update(chunk);
                b.update(chunk);
            }
            let tag = a.finalize().into_bytes();
            assert_eq!(tag, b.finalize().into_bytes(), "{key_len} {msg_len}");
            let mut c = <Hmac<Sm3> as KeyInit>::new_from_slice(&key).unwrap();
            c.update(&msg);
            c.verify_slice(&tag).unwrap();
        }
    }
}
