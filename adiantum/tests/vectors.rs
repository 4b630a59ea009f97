//! Known answers: Google's Adiantum and HPolyC vectors (XChaCha8/12/20 with
//! AES-256, tweaks of 0, 17 and 32 bytes) and the Linux test-manager
//! `adiantum(xchacha12,aes)` / `adiantum(xchacha20,aes)` vectors, each run
//! with our `chacha-simd` and, as the composition test, with RustCrypto's
//! `chacha20` in the same generic types.
#![cfg(feature = "xchacha-aes")]

use adiantum_simd::{Adiantum, Error, HPolyC};
use aes::Aes256;

/// Encrypt and decrypt one case through `enc` and `dec`.
fn check<F, G>(case: &testkit::Case, enc: F, dec: G)
where
    F: Fn(&[u8; 32], &[u8], &mut [u8]) -> Result<(), Error>,
    G: Fn(&[u8; 32], &[u8], &mut [u8]) -> Result<(), Error>,
{
    let key = case.array::<32>("key");
    let tweak = case.hex("tweak");
    let pt = case.hex("plaintext");
    let ct = case.hex("ciphertext");
    let mut buf = pt.clone();
    enc(&key, &tweak, &mut buf).unwrap();
    assert_eq!(buf, ct, "{}: encrypt", case.id());
    dec(&key, &tweak, &mut buf).unwrap();
    assert_eq!(buf, pt, "{}: decrypt", case.id());
}

macro_rules! run {
    ($cons:ident, $s:ty, $case:expr) => {
        check(
            $case,
            |k, t, b| $cons::<$s, Aes256>::new(k).encrypt_in_place(t, b),
            |k, t, b| $cons::<$s, Aes256>::new(k).decrypt_in_place(t, b),
        )
    };
}

#[test]
fn adiantum_vectors() {
    let cases = testkit::load_cases(env!("CARGO_MANIFEST_DIR"), "tests/data/adiantum.json");
    // Miri decodes a sample of the file (see `testkit::load_cases`).
    assert!(cases.len() == 120 || cfg!(miri));
    let mut linux = 0;
    for case in &cases {
        match case.u64("rounds") {
            8 => {
                run!(Adiantum, chacha_simd::XChaCha8, case);
                run!(Adiantum, rc_chacha20::XChaCha8, case);
            }
            12 => {
                run!(Adiantum, chacha_simd::XChaCha12, case);
                run!(Adiantum, rc_chacha20::XChaCha12, case);
            }
            20 => {
                run!(Adiantum, chacha_simd::XChaCha20, case);
                run!(Adiantum, rc_chacha20::XChaCha20, case);
            }
            r => panic!("{}: rounds {r}", case.id()),
        }
        linux += usize::from(case.str("source") == "linux-testmgr");
    }
    assert!(linux == 12 || cfg!(miri));
    println!(
        "adiantum: {} vectors passed with chacha backend {} + nhpoly1305 backend {}",
        cases.len(),
        chacha_simd::backend(),
        adiantum_simd::backend()
    );
}

#[test]
fn aliases_match_vectors() {
    let cases = testkit::load_cases(env!("CARGO_MANIFEST_DIR"), "tests/data/adiantum.json");
    for case in cases.iter().filter(|c| c.str("source") == "linux-testmgr") {
        let key = case.array::<32>("key");
        let tweak = case.hex("tweak");
        let mut buf = case.hex("plaintext");
        match case.u64("rounds") {
            12 => adiantum_simd::AdiantumXChaCha12Aes::new(&key).encrypt_in_place(&tweak, &mut buf),
            20 => adiantum_simd::AdiantumXChaCha20Aes::new(&key).encrypt_in_place(&tweak, &mut buf),
            r => panic!("{}: rounds {r}", case.id()),
        }
        .unwrap();
        assert_eq!(buf, case.hex("ciphertext"), "{}", case.id());
    }
}

#[test]
fn hpolyc_vectors() {
    let cases = testkit::load_cases(env!("CARGO_MANIFEST_DIR"), "tests/data/hpolyc.json");
    assert!(cases.len() == 108 || cfg!(miri));
    for case in &cases {
        match case.u64("rounds") {
            8 => {
                run!(HPolyC, chacha_simd::XChaCha8, case);
                run!(HPolyC, rc_chacha20::XChaCha8, case);
            }
            12 => {
                run!(HPolyC, chacha_simd::XChaCha12, case);
                run!(HPolyC, rc_chacha20::XChaCha12, case);
            }
            20 => {
                run!(HPolyC, chacha_simd::XChaCha20, case);
                run!(HPolyC, rc_chacha20::XChaCha20, case);
            }
            r => panic!("{}: rounds {r}", case.id()),
        }
    }
}
