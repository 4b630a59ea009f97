//! The AEAD types (`Sm4Ccm`, `Sm4Gcm`) on every backend this CPU has: the
//! vectors, against the compositions over `soft` (`ccm::Ccm<Sm4, M, N>`,
//! `aes_gcm::AesGcm<Sm4, U12>`) on random keys, nonces, AAD and message
//! lengths, in place and out of place, unaligned; every single-bit change
//! of ciphertext, AAD or tag refused with no plaintext left; the length
//! limits.

mod common;

use aead::{AeadInOut, consts::*};
use cipher::common::InnerInit;
use common::{backends, on, soft};
use sm4_simd::{Backend, Ccm, CcmNonceSize, CcmTagSize, GhashEngine, Sm4, Sm4Gcm};
use testkit::Rng;

/// Seal with `a`: ciphertext || tag, through a misaligned in-place buffer
/// or out of place.
fn seal<A: AeadInOut>(a: &A, nonce: &[u8], aad: &[u8], msg: &[u8], rng: &mut Rng) -> Vec<u8> {
    let nonce = nonce.try_into().unwrap();
    let (mut out, tag) = if rng.below(2) == 0 {
        let (mut buf, r) = testkit::misaligned(msg, rng.below(16));
        let tag = a
            .encrypt_inout_detached(nonce, aad, buf[r.clone()].as_mut().into())
            .unwrap();
        (buf[r].to_vec(), tag)
    } else {
        let (inb, ri) = testkit::misaligned(msg, rng.below(16));
        let (mut outb, ro) = testkit::misaligned(&vec![0u8; msg.len()], rng.below(16));
        let tag = a
            .encrypt_inout_detached(
                nonce,
                aad,
                cipher::InOutBuf::new(&inb[ri], &mut outb[ro.clone()]).unwrap(),
            )
            .unwrap();
        (outb[ro].to_vec(), tag)
    };
    out.extend_from_slice(&tag);
    out
}

/// Open ciphertext || tag with `a`; on failure, also return what the
/// buffer held afterwards.
fn open<A: AeadInOut>(a: &A, nonce: &[u8], aad: &[u8], sealed: &[u8]) -> Result<Vec<u8>, Vec<u8>> {
    let (body, tag) = sealed.split_at(sealed.len() - A::TagSize::USIZE);
    let mut buf = body.to_vec();
    match a.decrypt_inout_detached(
        nonce.try_into().unwrap(),
        aad,
        buf.as_mut_slice().into(),
        tag.try_into().unwrap(),
    ) {
        Ok(()) => Ok(buf),
        Err(_) => Err(buf),
    }
}

use cipher::typenum::Unsigned;

/// Random messages through `ours` and `want` (the composition over soft).
fn differential<A: AeadInOut, W: AeadInOut>(
    name: &str,
    rng: &mut Rng,
    cap: usize,
    ours: &dyn Fn(&[u8; 16]) -> A,
    want: &dyn Fn(&[u8; 16]) -> W,
) {
    let nonce_len = A::NonceSize::USIZE;
    let lens: Vec<usize> = if cfg!(miri) {
        vec![0, 1, 17, 40]
    } else {
        let mut v: Vec<usize> = (0..=1100).collect();
        v.extend((0..4).map(|_| rng.range(4096, 70 * 1024)));
        v
    };
    for len in lens.into_iter().filter(|&l| l <= cap) {
        let key: [u8; 16] = rng.array();
        let nonce = rng.bytes(nonce_len);
        let aad_len = if cfg!(miri) {
            rng.below(20)
        } else if len % 7 == 0 {
            0
        } else if rng.below(8) == 0 {
            rng.range(301, 5000)
        } else {
            rng.below(301)
        };
        let aad = rng.bytes(aad_len);
        let msg = rng.bytes(len);
        let (a, w) = (ours(&key), want(&key));
        let sealed = seal(&a, &nonce, &aad, &msg, rng);
        let expected = seal(&w, &nonce, &aad, &msg, rng);
        assert_eq!(sealed, expected, "{name} seal {len} aad {aad_len}");
        assert_eq!(
            open(&a, &nonce, &aad, &sealed).unwrap(),
            msg,
            "{name} open {len}"
        );
    }
}

/// Every single-bit change of ciphertext, AAD or tag is refused, and the
/// buffer then holds no plaintext.
fn bit_flips<A: AeadInOut>(name: &str, a: &A, rng: &mut Rng, len: usize, aad_len: usize) {
    let nonce = rng.bytes(A::NonceSize::USIZE);
    let aad = rng.bytes(aad_len);
    let msg = rng.bytes(len);
    let sealed = seal(a, &nonce, &aad, &msg, rng);
    let no_plaintext = |left: &[u8]| {
        // Nothing of the message stays: zeroed (or the ciphertext back).
        left.iter().all(|&b| b == 0) || left == &sealed[..len]
    };
    for bit in 0..8 * sealed.len() {
        let mut bad = sealed.clone();
        bad[bit / 8] ^= 1 << (bit % 8);
        let left = open(a, &nonce, &aad, &bad).expect_err("forgery accepted");
        assert!(
            len == 0 || no_plaintext(&left),
            "{name}: bit {bit} left plaintext"
        );
    }
    for bit in 0..8 * aad.len() {
        let mut bad = aad.clone();
        bad[bit / 8] ^= 1 << (bit % 8);
        let left = open(a, &nonce, &bad, &sealed).expect_err("forgery accepted");
        assert!(len == 0 || no_plaintext(&left), "{name}: aad bit {bit}");
    }
}

fn ccm_case<M: CcmTagSize + ccm::TagSize, N: CcmNonceSize + ccm::NonceSize>(
    rng: &mut Rng,
    b: Backend,
) {
    let name = format!("ccm<{}, {}> {}", M::USIZE, N::USIZE, b.name());
    // CCM's length field (15 - N bytes) caps the message.
    let cap = match 15 - N::USIZE {
        l @ 1..8 => usize::try_from((1u64 << (8 * l)) - 1).unwrap_or(usize::MAX),
        _ => usize::MAX,
    };
    differential::<Ccm<M, N>, ccm::Ccm<Sm4, M, N>>(
        &name,
        rng,
        cap,
        &|k| Ccm::inner_init(on(k, b)),
        &|k| ccm::Ccm::from(soft(k)),
    );
    let a = Ccm::<M, N>::inner_init(on(&rng.array(), b));
    bit_flips(&name, &a, rng, if cfg!(miri) { 5 } else { 37 }, 11);
}

#[test]
fn ccm_matches_composition() {
    let mut rng = Rng::new(0xcc30_0001);
    for b in backends("aead") {
        ccm_case::<U16, U12>(&mut rng, b);
        if !cfg!(miri) {
            ccm_case::<U8, U13>(&mut rng, b);
            ccm_case::<U4, U7>(&mut rng, b);
            ccm_case::<U10, U11>(&mut rng, b);
        }
    }
}

#[test]
fn gcm_matches_composition() {
    let mut rng = Rng::new(0x9c30_0002);
    for b in backends("aead") {
        for e in [
            GhashEngine::Soft,
            GhashEngine::Clmul,
            GhashEngine::Vpclmul,
            GhashEngine::Vpclmul256,
            GhashEngine::Pmull,
        ] {
            let Some(_) = Sm4Gcm::with_backend(&[0; 16], b, e) else {
                continue;
            };
            let name = format!("gcm {} {}", b.name(), e.name());
            println!("sm4 aead: {name}");
            differential::<Sm4Gcm, aes_gcm::AesGcm<Sm4, U12>>(
                &name,
                &mut rng,
                usize::MAX,
                &|k| Sm4Gcm::with_backend(k, b, e).unwrap(),
                &|k| aes_gcm::AesGcm::from(soft(k)),
            );
            // Short messages with short AAD, every pair: the one-call path
            // that hashes AAD, ciphertext and lengths together.
            let key: [u8; 16] = rng.array();
            let (a, w) = (
                Sm4Gcm::with_backend(&key, b, e).unwrap(),
                aes_gcm::AesGcm::<Sm4, U12>::from(soft(&key)),
            );
            let (lens, aads) = if cfg!(miri) {
                (0..=3, 15..=17)
            } else {
                (0..=64, 0..=40)
            };
            for len in lens {
                for aad_len in aads.clone() {
                    let (nonce, aad, msg) = (rng.bytes(12), rng.bytes(aad_len), rng.bytes(len));
                    let sealed = seal(&a, &nonce, &aad, &msg, &mut rng);
                    let expected = seal(&w, &nonce, &aad, &msg, &mut rng);
                    assert_eq!(sealed, expected, "{name} short {len} aad {aad_len}");
                    assert_eq!(
                        open(&a, &nonce, &aad, &sealed).unwrap(),
                        msg,
                        "{name} open {len}"
                    );
                }
            }
            let a = Sm4Gcm::with_backend(&rng.array(), b, e).unwrap();
            bit_flips(&name, &a, &mut rng, if cfg!(miri) { 5 } else { 37 }, 11);
            bit_flips(&name, &a, &mut rng, 0, 3);
        }
    }
}

#[test]
fn aead_vectors() {
    let mut n = 0;
    for c in testkit::load_cases(env!("CARGO_MANIFEST_DIR"), "tests/data/sm4-aead.json") {
        let (nonce, aad, pt, ct, tag) = (
            c.hex("nonce"),
            c.hex("aad"),
            c.hex("plaintext"),
            c.hex("ciphertext"),
            c.hex("tag"),
        );
        let key: [u8; 16] = c.array("key");
        let mut want = ct.clone();
        want.extend_from_slice(&tag);
        for b in Backend::available() {
            let check = |sealed: Vec<u8>, opened: Vec<u8>| {
                assert_eq!(sealed, want, "{} {}", c.id(), b.name());
                assert_eq!(opened, pt, "{} {}", c.id(), b.name());
            };
            let mut rng = Rng::new(1);
            macro_rules! ccm {
                ($m:ty, $n:ty) => {{
                    let a = Ccm::<$m, $n>::inner_init(on(&key, b));
                    let s = seal(&a, &nonce, &aad, &pt, &mut rng);
                    let o = open(&a, &nonce, &aad, &s).unwrap();
                    check(s, o);
                }};
            }
            match (c.str("mode"), nonce.len(), tag.len()) {
                ("ccm", 12, 16) => ccm!(U16, U12),
                ("ccm", 13, 8) => ccm!(U8, U13),
                ("ccm", 11, 16) => ccm!(U16, U11),
                ("ccm", 11, 8) => ccm!(U8, U11),
                ("gcm", 12, 16) => {
                    let a = Sm4Gcm::inner_init(on(&key, b));
                    let s = seal(&a, &nonce, &aad, &pt, &mut rng);
                    let o = open(&a, &nonce, &aad, &s).unwrap();
                    check(s, o);
                }
                other => panic!("{}: unhandled {other:?}", c.id()),
            }
            n += 1;
        }
    }
    assert!(n >= 6, "{n}");
}

#[test]
fn length_limits() {
    // CCM with a 12-byte nonce: 3 length bytes, at most 2^24 - 1.
    let a = Ccm::<U16, U12>::inner_init(Sm4::with_backend(&[1; 16], Backend::Soft).unwrap());
    let len = if cfg!(miri) { 0 } else { 1 << 24 };
    if len > 0 {
        let mut buf = vec![0x33u8; len];
        assert!(
            a.encrypt_inout_detached(&[0; 12].into(), &[], buf.as_mut_slice().into())
                .is_err()
        );
        assert!(buf.iter().all(|&b| b == 0x33), "refused without writing");
        let tag = Default::default();
        assert!(
            a.decrypt_inout_detached(&[0; 12].into(), &[], buf.as_mut_slice().into(), &tag)
                .is_err()
        );
    }
    if cfg!(miri) {
        return;
    }
    // 13-byte nonce: 2 length bytes.
    let a = Ccm::<U8, U13>::inner_init(Sm4::with_backend(&[1; 16], Backend::Soft).unwrap());
    let mut buf = vec![0u8; 1 << 16];
    assert!(
        a.encrypt_inout_detached(&[0; 13].into(), &[], buf.as_mut_slice().into())
            .is_err()
    );
    assert!(
        a.encrypt_inout_detached(&[0; 13].into(), &[], buf[1..].as_mut().into())
            .is_ok()
    );
}

#[test]
fn debug_has_no_key() {
    let a = Ccm::<U16, U12>::inner_init(Sm4::new_from_slice(&[0x42; 16]).unwrap());
    let d = format!("{a:?}");
    assert!(
        d.contains(sm4_simd::backend()) && !d.contains("42") && !d.contains("66"),
        "{d}"
    );
}

use cipher::KeyInit;
