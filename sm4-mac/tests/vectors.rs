//! Known-answer tests: RFC 4493 (CMAC-AES-128), RFC 3566 (XCBC over
//! AES-128, full tags) and the Linux `cmac(sm4)`, `xcbc(sm4)`,
//! `cbcmac(sm4)` test-manager vectors.

use digest::{FixedOutputReset, KeyInit, Mac};
use sm4_mac::{CbcMac, Cmac, Xcbc};

/// Whole message, finalize_reset, reuse after reset, every split size,
/// verify_slice accepting the tag and rejecting a flipped one.
fn check<M: Mac + KeyInit + FixedOutputReset + Clone>(case: &testkit::Case) {
    let (key, msg, tag) = (case.hex("key"), case.hex("message"), case.hex("tag"));
    let id = case.id();
    let mac0 = <M as KeyInit>::new_from_slice(&key).unwrap();

    let mut mac = mac0.clone();
    Mac::update(&mut mac, &msg);
    assert_eq!(
        mac.finalize_reset().into_bytes()[..],
        tag[..],
        "{id}: whole"
    );
    Mac::update(&mut mac, &msg);
    assert_eq!(
        mac.finalize().into_bytes()[..],
        tag[..],
        "{id}: after reset"
    );

    // Under Miri (a few blocks a second) a few split sizes.
    let miri_chunks = [1, 7, 16, 17];
    for chunk in (1..=msg.len().min(40)).filter(|c| !cfg!(miri) || miri_chunks.contains(c)) {
        let mut mac = mac0.clone();
        for part in msg.chunks(chunk) {
            Mac::update(&mut mac, part);
            Mac::update(&mut mac, &[]);
        }
        assert!(
            mac.clone().verify_slice(&tag).is_ok(),
            "{id}: chunks of {chunk}"
        );
        let mut bad = tag.clone();
        bad[chunk % 16] ^= 1;
        assert!(mac.verify_slice(&bad).is_err(), "{id}: bad tag accepted");
    }
}

fn run(cipher: &str, check_one: impl Fn(&str, &testkit::Case)) -> usize {
    let mut n = 0;
    for file in ["tests/data/sm4-mac.json", "tests/data/rfc4493.json"] {
        for case in testkit::load_cases(env!("CARGO_MANIFEST_DIR"), file) {
            if case.str("cipher") == cipher {
                check_one(case.str("mac"), &case);
                n += 1;
            }
        }
    }
    n
}

#[test]
fn aes128_vectors() {
    use aes::Aes128;
    let n = run("aes-128", |mac, case| match mac {
        "cmac" => check::<Cmac<Aes128>>(case),
        "xcbc" => check::<Xcbc<Aes128>>(case),
        "cbcmac-linux" => check::<CbcMac<Aes128>>(case),
        other => panic!("{}: unknown mac {other}", case.id()),
    });
    // Miri decodes a sample of each file (see `testkit::load_cases`).
    assert!(n == 4 + 7 || cfg!(miri));
}

/// The generic code over RustCrypto's SM4.
#[test]
fn sm4_vectors_over_rustcrypto_sm4() {
    use rc_sm4::Sm4;
    let n = run("sm4", |mac, case| match mac {
        "cmac" => check::<Cmac<Sm4>>(case),
        "xcbc" => check::<Xcbc<Sm4>>(case),
        "cbcmac-linux" => check::<CbcMac<Sm4>>(case),
        other => panic!("{}: unknown mac {other}", case.id()),
    });
    assert!(n == 12 || cfg!(miri));
}

/// Our SM4, every backend this CPU has (construction via the hidden hooks,
/// and once through the public `KeyInit` path).
#[test]
fn sm4_vectors_every_backend() {
    use sm4_mac::{Sm4CbcMac, Sm4Cmac, Sm4Xcbc};
    let n = run("sm4", |mac, case| match mac {
        "cmac" => check::<Sm4Cmac>(case),
        "xcbc" => check::<Sm4Xcbc>(case),
        "cbcmac-linux" => check::<Sm4CbcMac>(case),
        other => panic!("{}: unknown mac {other}", case.id()),
    });
    assert!(n == 12 || cfg!(miri));

    for b in sm4_simd::Backend::available() {
        for case in testkit::load_cases(env!("CARGO_MANIFEST_DIR"), "tests/data/sm4-mac.json") {
            if case.str("cipher") != "sm4" {
                continue;
            }
            let key = case.array::<16>("key");
            let (msg, tag) = (case.hex("message"), case.hex("tag"));
            let got = match case.str("mac") {
                "cmac" => {
                    Sm4Cmac::with_backend(&key, b)
                        .unwrap()
                        .chain_update(&msg)
                        .finalize()
                        .into_bytes()
                        .0
                }
                "xcbc" => {
                    Sm4Xcbc::with_backend(&key, b)
                        .unwrap()
                        .chain_update(&msg)
                        .finalize()
                        .into_bytes()
                        .0
                }
                "cbcmac-linux" => {
                    Sm4CbcMac::with_backend(&key, b)
                        .unwrap()
                        .chain_update(&msg)
                        .finalize()
                        .into_bytes()
                        .0
                }
                other => panic!("unknown mac {other}"),
            };
            assert_eq!(got[..], tag[..], "{} on {}", case.id(), b.name());
        }
    }
}
