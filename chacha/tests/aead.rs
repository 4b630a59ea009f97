//! The AEAD compositions users build from this crate's ciphers:
//! ChaCha20-Poly1305 (RFC 8439) and XChaCha20-Poly1305
//! (draft-irtf-cfrg-xchacha) as `chacha20poly1305::ChaChaPoly1305<C, N>`
//! with `C` = [`chacha_simd::ChaCha20`] or [`chacha_simd::XChaCha20`].
//!
//! Known answers: `tests/data/aead-chacha20poly1305.json` (RFC 8439 2.8.2
//! and A.5, draft-irtf-cfrg-xchacha-03 A.3.1). Then random messages against
//! RustCrypto's own `ChaCha20Poly1305` / `XChaCha20Poly1305`.

use chacha20poly1305::aead::{Aead, AeadInOut, KeyInit, Payload};
use chacha20poly1305::consts::{U12, U24};
use chacha20poly1305::{ChaChaPoly1305, XChaCha20Poly1305};
use testkit::{Case, Rng, load_cases};

/// RFC 8439 ChaCha20-Poly1305 over this crate's ChaCha20.
type ChaCha20Poly1305 = ChaChaPoly1305<chacha_simd::ChaCha20, U12>;
/// XChaCha20-Poly1305 over this crate's XChaCha20.
type XChaCha20Poly1305Ours = ChaChaPoly1305<chacha_simd::XChaCha20, U24>;

fn check<A: KeyInit + AeadInOut>(case: &Case) {
    let aead = A::new_from_slice(&case.hex("key")).expect("32-byte key");
    let nonce = case.hex("nonce");
    let nonce = nonce.as_slice().try_into().expect("nonce length");
    let (aad, pt) = (case.hex("aad"), case.hex("plaintext"));
    let (ct, tag) = (case.hex("ciphertext"), case.hex("tag"));

    // In place, detached tag.
    let mut buf = pt.clone();
    let got = aead
        .encrypt_inout_detached(nonce, &aad, buf.as_mut_slice().into())
        .unwrap();
    assert_eq!(buf, ct, "{} ciphertext", case.id());
    assert_eq!(got[..], tag[..], "{} tag", case.id());
    aead.decrypt_inout_detached(nonce, &aad, buf.as_mut_slice().into(), &got)
        .unwrap();
    assert_eq!(buf, pt, "{} decryption", case.id());

    // A flipped bit anywhere is refused, and the buffer is not decrypted.
    let mut bad = ct.clone();
    bad[0] ^= 1;
    assert!(
        aead.decrypt_inout_detached(nonce, &aad, bad.as_mut_slice().into(), &got)
            .is_err()
    );
    let mut bad_aad = aad.clone();
    bad_aad.push(0);
    let mut buf = ct.clone();
    assert!(
        aead.decrypt_inout_detached(nonce, &bad_aad, buf.as_mut_slice().into(), &got)
            .is_err()
    );
    assert_eq!(buf, ct, "{}: a refused message stays encrypted", case.id());
}

#[test]
fn vectors() {
    let cases = load_cases(
        env!("CARGO_MANIFEST_DIR"),
        "tests/data/aead-chacha20poly1305.json",
    );
    let mut ran = [0; 2];
    for case in &cases {
        match case.str("aead") {
            "chacha20-poly1305" => {
                check::<ChaCha20Poly1305>(case);
                ran[0] += 1;
            }
            "xchacha20-poly1305" => {
                check::<XChaCha20Poly1305Ours>(case);
                ran[1] += 1;
            }
            other => panic!("{}: unexpected AEAD {other}", case.id()),
        }
    }
    assert_eq!(ran, [2, 1], "cases run (ChaCha20, XChaCha20)");
    println!(
        "chacha: AEAD vectors on the {} backend: {} ChaCha20-Poly1305, {} XChaCha20-Poly1305",
        chacha_simd::backend(),
        ran[0],
        ran[1]
    );
}

/// Seal `msg` with both AEADs under the same key and nonce, compare, and
/// open ours.
fn agree<A: KeyInit + Aead, B: KeyInit + Aead>(
    key: &[u8; 32],
    nonce: &[u8],
    aad: &[u8],
    msg: &[u8],
) {
    let ours = A::new_from_slice(key).unwrap();
    let peer = B::new_from_slice(key).unwrap();
    let (na, nb) = (nonce.try_into().unwrap(), nonce.try_into().unwrap());
    let ct = ours.encrypt(na, Payload { msg, aad }).unwrap();
    assert_eq!(
        ct,
        peer.encrypt(nb, Payload { msg, aad }).unwrap(),
        "{} bytes",
        msg.len()
    );
    let back = ours.decrypt(na, Payload { msg: &ct, aad }).unwrap();
    assert_eq!(back, msg, "{} bytes", msg.len());
}

/// The composition over our ciphers and RustCrypto's complete AEADs agree
/// on random keys, nonces, associated data and messages of every length
/// around the 64-byte block and the wide passes.
#[test]
fn against_rustcrypto() {
    let mut rng = Rng::new(0x0aea_d000);
    let mut lens: Vec<usize> = (0..=300).collect();
    lens.extend([511, 512, 513, 1023, 1024, 1025, 4095, 4096, 4097, 9000]);
    for len in lens {
        let key = rng.array::<32>();
        let aad_len = rng.below(40);
        let aad = rng.bytes(aad_len);
        let msg = rng.bytes(len);
        let nonce = rng.array::<24>();
        agree::<ChaCha20Poly1305, chacha20poly1305::ChaCha20Poly1305>(
            &key,
            &nonce[..12],
            &aad,
            &msg,
        );
        agree::<XChaCha20Poly1305Ours, XChaCha20Poly1305>(&key, &nonce, &aad, &msg);
    }
}
