//! Known-answer tests: RFC 8439, draft-irtf-cfrg-xchacha, Google's Adiantum
//! ChaCha/XChaCha vectors and the Linux test manager's, on every backend.

use chacha_simd::{
    Backend, ChaCha, ChaCha20, ChaCha20Legacy, Extended, Legacy, R8, R12, R20, Rounds, Variant,
    XChaCha20, hchacha,
};
use cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
use testkit::{Case, load_cases};

fn check<R: Rounds, V: Variant>(case: &Case, b: Backend) {
    let key = case.array::<32>("key");
    let nonce = case.hex("nonce");
    let pt = case.hex("plaintext");
    let ct = case.hex("ciphertext");
    let ctr = case.u64("counter");
    let mut c = ChaCha::<R, V>::with_backend(&key, &nonce, b).expect("backend");
    c.try_seek(ctr * 64).unwrap();
    let mut buf = pt.clone();
    c.try_apply_keystream(&mut buf).unwrap();
    assert_eq!(buf, ct, "{} on {}", case.id(), b.name());
    // Byte by byte through the partial-block buffer.
    let mut c = ChaCha::<R, V>::with_backend(&key, &nonce, b).unwrap();
    c.seek(ctr * 64);
    let mut buf = pt;
    for byte in buf.iter_mut() {
        c.apply_keystream(core::slice::from_mut(byte));
    }
    assert_eq!(buf, ct, "{} bytewise on {}", case.id(), b.name());
}

#[test]
fn chacha_vectors() {
    let cases = load_cases(env!("CARGO_MANIFEST_DIR"), "tests/data/chacha.json");
    let mut run = 0;
    for case in &cases {
        if case.hex("key").len() != 32 {
            // 128-bit-key ("expand 16-byte k") cases: not supported by this crate.
            continue;
        }
        for b in Backend::available() {
            match (case.str("variant"), case.u64("rounds")) {
                ("ietf", 20) => check::<R20, chacha_simd::Ietf>(case, b),
                ("djb", 20) => check::<R20, Legacy>(case, b),
                ("djb", 12) => check::<R12, Legacy>(case, b),
                ("djb", 8) => check::<R8, Legacy>(case, b),
                (v, r) => panic!("{}: unexpected variant {v} rounds {r}", case.id()),
            }
        }
        run += 1;
    }
    // Miri decodes a sample of the file (see `testkit::load_cases`).
    assert!(
        run >= if cfg!(miri) { 1 } else { 150 },
        "only {run} cases ran"
    );
}

#[test]
fn xchacha_vectors() {
    let cases = load_cases(env!("CARGO_MANIFEST_DIR"), "tests/data/xchacha.json");
    assert!(cases.len() >= if cfg!(miri) { 1 } else { 90 });
    for case in &cases {
        for b in Backend::available() {
            match case.u64("rounds") {
                20 => check::<R20, Extended>(case, b),
                12 => check::<R12, Extended>(case, b),
                8 => check::<R8, Extended>(case, b),
                r => panic!("{}: unexpected rounds {r}", case.id()),
            }
        }
    }
}

#[test]
fn hchacha_vectors() {
    let cases = load_cases(env!("CARGO_MANIFEST_DIR"), "tests/data/hchacha.json");
    assert!(!cases.is_empty());
    for case in &cases {
        assert_eq!(case.u64("rounds"), 20);
        let key = case.array::<32>("key");
        let input = case.array::<16>("input");
        let out = case.array::<32>("output");
        assert_eq!(hchacha::<R20>(&key, &input), out, "{}", case.id());
        for b in Backend::available() {
            let got = chacha_simd::hchacha_with_backend::<R20>(b, &key, &input).unwrap();
            assert_eq!(got, out, "{} on {}", case.id(), b.name());
        }
    }
}

/// HChaCha8/12 have no published vectors: every backend must agree with soft.
#[test]
fn hchacha_reduced_rounds_agree() {
    let mut rng = testkit::Rng::new(7);
    for _ in 0..20 {
        let key = rng.array::<32>();
        let input = rng.array::<16>();
        let s8 = chacha_simd::hchacha_with_backend::<R8>(Backend::Soft, &key, &input).unwrap();
        let s12 = chacha_simd::hchacha_with_backend::<R12>(Backend::Soft, &key, &input).unwrap();
        for b in Backend::available() {
            assert_eq!(
                chacha_simd::hchacha_with_backend::<R8>(b, &key, &input).unwrap(),
                s8
            );
            assert_eq!(
                chacha_simd::hchacha_with_backend::<R12>(b, &key, &input).unwrap(),
                s12
            );
        }
    }
}

/// RFC 8439 section 2.4.2 through the public `KeyIvInit` path.
#[test]
fn rfc8439_sunscreen() {
    let key: [u8; 32] = core::array::from_fn(|i| i as u8);
    let nonce = hex_literal::hex!("000000000000004a00000000");
    let pt = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";
    let ct = hex_literal::hex!(
        "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
        "f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
        "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
        "5af90bbf74a35be6b40b8eedf2785e42874d"
    );
    let mut c = ChaCha20::new(&key.into(), &nonce.into());
    c.seek(64u32);
    let mut buf = *pt;
    c.apply_keystream(&mut buf);
    assert_eq!(buf, ct);
}

#[test]
fn debug_and_names() {
    let c = XChaCha20::new(&[7u8; 32].into(), &[1u8; 24].into());
    let s = format!("{c:?}");
    assert!(s.starts_with("XChaCha20"), "{s}");
    assert!(!s.contains("07"), "{s}");
    let l = ChaCha20Legacy::new(&[7u8; 32].into(), &[1u8; 8].into());
    assert!(format!("{l:?}").starts_with("ChaCha20Legacy"));
    assert!(["soft", "avx", "avx512", "avx512zmm", "neon"].contains(&chacha_simd::backend()));
    if !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        assert_eq!(
            chacha_simd::backend(),
            "soft",
            "no SIMD backend on this target"
        );
    }
    assert!(ChaCha20::new_from_slices(&[0u8; 31], &[0u8; 12]).is_err());
    assert!(ChaCha20::new_from_slices(&[0u8; 32], &[0u8; 8]).is_err());
}

#[test]
fn forced_backend_is_used() {
    #[cfg(chacha_backend = "soft")]
    assert_eq!(chacha_simd::backend(), "soft");
    #[cfg(chacha_backend = "avx")]
    assert_eq!(chacha_simd::backend(), "avx");
    #[cfg(chacha_backend = "avx512")]
    assert_eq!(chacha_simd::backend(), "avx512");
    #[cfg(chacha_backend = "avx512zmm")]
    assert_eq!(chacha_simd::backend(), "avx512zmm");
    #[cfg(chacha_backend = "neon")]
    assert_eq!(chacha_simd::backend(), "neon");
    let c = XChaCha20::new(&[0u8; 32].into(), &[0u8; 24].into());
    assert_eq!(c.backend_name(), chacha_simd::backend());
}

#[cfg(feature = "zeroize")]
#[test]
fn zeroize_on_drop() {
    fn is_zod<T: zeroize::ZeroizeOnDrop>() {}
    is_zod::<ChaCha20>();
    is_zod::<chacha_simd::XChaCha12>();
}

// About 250 KiB of keystream each: not under Miri, where
// `backends::seeks_against_soft` and `chunked_against_soft` seek instead.
#[cfg(not(miri))]
cipher::stream_cipher_seek_test!(chacha20_seek, ChaCha20);
#[cfg(not(miri))]
cipher::stream_cipher_seek_test!(xchacha12_seek, chacha_simd::XChaCha12);
#[cfg(not(miri))]
cipher::stream_cipher_seek_test!(chacha20_legacy_seek, ChaCha20Legacy);

/// A clone continues from the same position; `write_keystream` equals
/// applying the keystream to zeros.
#[test]
fn clone_and_write_keystream() {
    let mut a = chacha_simd::XChaCha12::new(&[3u8; 32].into(), &[4u8; 24].into());
    let mut head = [0u8; 100];
    a.apply_keystream(&mut head);
    let mut b = a.clone();
    let mut x = [0u8; 300];
    let mut y = [0u8; 300];
    a.apply_keystream(&mut x);
    b.write_keystream(&mut y);
    assert_eq!(x, y);
    assert_eq!(a.current_pos::<u32>(), 400);
}
