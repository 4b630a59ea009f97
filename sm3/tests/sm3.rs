//! Known answers, HMAC, and every backend and `digest_many` engine against
//! `soft`.

use hex_literal::hex;
use sm3_simd::digest::{Digest, common::hazmat::SerializableState};
use sm3_simd::{Backend, Lanes, Sm3};
use testkit::Rng;

/// Miri interprets the soft backend (its only one) at a few blocks a
/// second: there the tests run a few lengths around the block boundaries.
const MIRI: bool = cfg!(miri);

fn soft() -> Sm3 {
    Sm3::with_backend(Backend::Soft).expect("soft is always available")
}

fn one_shot(b: Backend, msg: &[u8]) -> [u8; 32] {
    let mut h = Sm3::with_backend(b).expect("available");
    h.update(msg);
    h.finalize().into()
}

#[test]
fn standard_examples() {
    // GB/T 32905-2016 appendix A, examples 1 and 2.
    let abc = hex!("66c7f0f4 62eeedd9 d1f2d46b dc10e4e2 4167c487 5cf2f7a2 297da02b 8f4ba8e0");
    let abcd = hex!("debe9ff9 2275b8a1 38604889 c18e5a4d 6fdb70e5 387e5765 293dcba3 9c0c5732");
    let msg2 = b"abcd".repeat(16);
    for b in Backend::available() {
        assert_eq!(one_shot(b, b"abc"), abc, "{}", b.name());
        assert_eq!(one_shot(b, &msg2), abcd, "{}", b.name());
    }
    assert_eq!(Sm3::digest(b"abc")[..], abc);
}

#[test]
fn vectors() {
    let cases = testkit::load_cases(env!("CARGO_MANIFEST_DIR"), "tests/data/sm3.json");
    assert!(!cases.is_empty());
    for c in &cases {
        let msg = c.hex("message");
        let want = c.hex("digest");
        for b in Backend::available() {
            assert_eq!(one_shot(b, &msg)[..], want[..], "{} {}", c.id(), b.name());
        }
        assert_eq!(Sm3::digest(&msg)[..], want[..], "{}", c.id());
        let mut out = [[0u8; 32]];
        sm3_simd::digest_many(&[&msg], &mut out).unwrap();
        assert_eq!(out[0][..], want[..], "{}", c.id());
    }
}

#[test]
#[cfg_attr(miri, ignore = "15,625 blocks: hours under Miri")]
fn million_a() {
    let want = hex!("c8aaf894 29554029 e231941a 2acc0ad6 1ff2a5ac d8fadd25 847a3a73 2b3b02c3");
    let msg = vec![b'a'; 1_000_000];
    for b in Backend::available() {
        assert_eq!(one_shot(b, &msg), want, "{}", b.name());
    }
    let mut h = Sm3::new();
    for chunk in msg.chunks(999) {
        h.update(chunk);
    }
    assert_eq!(h.finalize()[..], want);
}

/// HMAC-SM3 known answers: GM/T 0042-2015 appendix D.3, the same vectors
/// as the Linux kernel's `hmac_sm3_tv_template` (crypto/testmgr.h).
#[test]
fn hmac_sm3_vectors() {
    use hmac::{KeyInit, Mac};
    let abc = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".repeat(2);
    let key1: Vec<u8> = (1..=32).collect();
    let key2: Vec<u8> = (1..=37).collect();
    let cases: [(&[u8], &[u8], [u8; 32]); 4] = [
        (
            &key1,
            &abc,
            hex!("ca05e144ed05d1857840d1f318a4a8669e559fc8391f414485bfdf7bb408963a"),
        ),
        (
            &key2,
            &[0xcd; 50],
            hex!("220bf579ded555393f0159f66c99877822a3ecf610d1552154b41d44b94db3ae"),
        ),
        (
            &[0x0b; 32],
            b"Hi There",
            hex!("c0ba18c68b90c88bc07de794bfc7d2c8d19ec31ed8773bc2b390c9604e0be11e"),
        ),
        (
            b"Jefe",
            b"what do ya want for nothing?",
            hex!("2e87f1d16862e6d964b50a5200bf2b10b764faa9680a296a2405f24bec39f882"),
        ),
    ];
    for (i, (key, msg, tag)) in cases.iter().enumerate() {
        let mut mac = hmac::Hmac::<Sm3>::new_from_slice(key).unwrap();
        mac.update(msg);
        assert_eq!(mac.finalize().into_bytes()[..], tag[..], "vector {}", i + 1);
        assert_eq!(hmac_by_definition(key, msg), *tag, "vector {}", i + 1);
    }
}

/// HMAC from its definition (RFC 2104), on the soft backend.
fn hmac_by_definition(key: &[u8], msg: &[u8]) -> [u8; 32] {
    let mut k = [0u8; 64];
    if key.len() > 64 {
        k[..32].copy_from_slice(&one_shot(Backend::Soft, key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let mut inner = soft();
    inner.update(k.map(|x| x ^ 0x36));
    inner.update(msg);
    let mut outer = soft();
    outer.update(k.map(|x| x ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

#[test]
fn hmac_sm3() {
    use hmac::{KeyInit, Mac};
    let mut rng = Rng::new(0x004d_4143);
    let (key_lens, msg_lens): (&[usize], &[usize]) = if MIRI {
        (&[0, 64, 65], &[0, 56])
    } else {
        (
            &[0, 1, 16, 32, 63, 64, 65, 100, 200],
            &[0, 1, 55, 56, 64, 100, 1000],
        )
    };
    for &key_len in key_lens {
        for &msg_len in msg_lens {
            let key = rng.bytes(key_len);
            let msg = rng.bytes(msg_len);
            let mut mac = hmac::Hmac::<Sm3>::new_from_slice(&key).unwrap();
            mac.update(&msg);
            let tag = mac.finalize().into_bytes();
            assert_eq!(
                tag[..],
                hmac_by_definition(&key, &msg),
                "{key_len} {msg_len}"
            );
        }
    }
}

#[test]
fn backends_against_soft() {
    let mut rng = Rng::new(0x0053_4d33);
    let big = if MIRI {
        200
    } else if cfg!(target_arch = "aarch64") {
        20_000
    } else {
        100_000
    };
    let data = rng.bytes(big + 64);
    let mut tested = Vec::new();
    for b in Backend::available() {
        tested.push(b.name());
        // Every length 0..=1000 and a few large ones (Miri: around the
        // padding boundaries only).
        let lens: Vec<usize> = if MIRI {
            vec![0, 55, 56, 64, 119, 120]
        } else {
            (0..=1000)
                .chain([4096, 4096 + 55, 8192 + 63, big - 1, big])
                .collect()
        };
        for len in lens {
            for off in [0, 1] {
                let msg = &data[off..off + len];
                assert_eq!(
                    one_shot(b, msg),
                    one_shot(Backend::Soft, msg),
                    "{} len {len} off {off}",
                    b.name()
                );
            }
        }
        // Two updates, split at every position (every boundary mod 64).
        let msg = &data[..if MIRI { 130 } else { 300 }];
        let want = one_shot(Backend::Soft, msg);
        for split in (0..=msg.len()).step_by(if MIRI { 9 } else { 1 }) {
            let mut h = Sm3::with_backend(b).unwrap();
            h.update(&msg[..split]);
            h.update(&msg[split..]);
            assert_eq!(h.finalize()[..], want, "{} split {split}", b.name());
        }
        // Random chunking.
        for _ in 0..if MIRI { 2 } else { 50 } {
            let len = rng.below(if MIRI { 200 } else { 3000 });
            let msg = &data[..len];
            let mut h = Sm3::with_backend(b).unwrap();
            let mut pos = 0;
            for c in rng.chunks(len, 200) {
                h.update(&msg[pos..pos + c]);
                pos += c;
            }
            assert_eq!(
                h.finalize()[..],
                one_shot(Backend::Soft, msg),
                "{}",
                b.name()
            );
        }
    }
    println!("sm3: backends tested against soft: {}", tested.join(" "));
}

#[test]
fn digest_many_against_digest() {
    let mut rng = Rng::new(0x6d61_6e79);
    let data = rng.bytes(9000);
    let mut tested = Vec::new();
    // Under Miri (serial engine only), three short batches.
    let (batches, long) = if MIRI {
        (3, (60, 130))
    } else {
        (40, (2000, 9000))
    };
    for lanes in Lanes::available() {
        tested.push(format!("{}({})", lanes.name(), lanes.width()));
        for n in 1..=batches {
            let msgs: Vec<&[u8]> = (0..n)
                .map(|_| {
                    let len = match rng.below(8) {
                        0 => 0,
                        1 => rng.below(64),
                        2 => 55 + rng.below(10),
                        3 => rng.range(long.0, long.1),
                        _ => rng.below(700),
                    };
                    let off = rng.below(data.len() - len + 1);
                    &data[off..off + len]
                })
                .collect();
            let mut out = vec![[0u8; 32]; n];
            sm3_simd::digest_many_with(lanes, &msgs, &mut out).unwrap();
            for (i, (m, o)) in msgs.iter().zip(&out).enumerate() {
                assert_eq!(
                    o[..],
                    one_shot(Backend::Soft, m),
                    "{} n {n} msg {i} len {}",
                    lanes.name(),
                    m.len()
                );
            }
        }
        // Equal lengths (all lanes finish together), lengths 0..=200.
        for len in (0..=200).step_by(if MIRI { 61 } else { 7 }) {
            let msgs: Vec<&[u8]> = (0..lanes.width() * 2 + 1)
                .map(|i| &data[i..i + len])
                .collect();
            let mut out = vec![[0u8; 32]; msgs.len()];
            sm3_simd::digest_many_with(lanes, &msgs, &mut out).unwrap();
            for (m, o) in msgs.iter().zip(&out) {
                assert_eq!(
                    o[..],
                    one_shot(Backend::Soft, m),
                    "{} len {len}",
                    lanes.name()
                );
            }
        }
    }
    println!("sm3: digest_many lanes tested: {}", tested.join(" "));
}

#[test]
fn digest_many_edge_cases() {
    let mut out: [[u8; 32]; 0] = [];
    assert!(sm3_simd::digest_many(&[], &mut out).is_ok());
    let mut out = [[0u8; 32]; 1];
    let err = sm3_simd::digest_many(&[b"a", b"b"], &mut out).unwrap_err();
    assert_eq!((err.messages, err.outputs), (2, 1));
    assert_eq!(out, [[0u8; 32]; 1], "nothing written on error");
}

#[test]
fn serialize_reset_clone() {
    let mut rng = Rng::new(7);
    let msg = rng.bytes(500);
    let mut h = Sm3::new();
    h.update(&msg[..130]);
    let saved = h.serialize();
    let copy = h.clone();
    let mut restored = Sm3::deserialize(&saved).unwrap();
    h.update(&msg[130..]);
    restored.update(&msg[130..]);
    let want = Sm3::digest(&msg);
    assert_eq!(h.finalize_reset(), want);
    assert_eq!(restored.finalize(), want);
    let mut copy = copy;
    copy.update(&msg[130..]);
    assert_eq!(copy.finalize(), want);
    // After finalize_reset, `h` hashes afresh.
    h.update(b"abc");
    assert_eq!(h.finalize(), Sm3::digest(b"abc"));
}

#[test]
fn backend_names() {
    let name = sm3_simd::backend();
    assert!(Backend::available().any(|b| b.name() == name), "{name}");
    let many = sm3_simd::digest_many_backend();
    assert!(Lanes::available().any(|l| l.name() == many), "{many}");
    if !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        assert_eq!((name, many), ("soft", "serial"), "no SIMD backend here");
    }
    if cfg!(sm3_backend = "soft") {
        assert_eq!((name, many), ("soft", "serial"));
    }
    if cfg!(sm3_backend = "avx") {
        assert_eq!((name, many), ("avx", "avx2"));
    }
    if cfg!(sm3_backend = "avx512") {
        assert_eq!((name, many), ("avx512vl", "avx512"));
    }
    if cfg!(sm3_backend = "neon") {
        assert_eq!((name, many), ("neon", "neon"));
    }
    if cfg!(sm3_backend = "sm3ce") {
        assert_eq!((name, many), ("sm3ce", "serial"));
    }
}

#[cfg(feature = "oid")]
#[test]
fn oid() {
    use sm3_simd::digest::const_oid::AssociatedOid;
    assert_eq!(Sm3::OID.to_string(), "1.2.156.10197.1.401");
}

#[test]
fn debug_and_name() {
    let s = format!("{:?}", Sm3::new());
    assert!(s.contains("Sm3"), "{s}");
}
