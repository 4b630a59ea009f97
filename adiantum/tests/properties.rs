//! Round trips for every length 16..=4200, composition with RustCrypto's
//! `chacha20` at every length, the wide-block property, and bad input.
#![cfg(feature = "xchacha-aes")]

use adiantum_simd::{Adiantum, AdiantumXChaCha12Aes, AdiantumXChaCha20Aes, Error, HPolyC};
use aes::Aes256;
use testkit::Rng;

type RcAdiantum12 = Adiantum<rc_chacha20::XChaCha12, Aes256>;
type HPolyC12 = HPolyC<chacha_simd::XChaCha12, Aes256>;

/// Miri interprets every primitive at a few hundred bytes a second (a key
/// setup takes seconds): there the tests run a few lengths each.
const MIRI: bool = cfg!(miri);

/// Every length from 16 to `max` (fast enough under qemu too: about a
/// second for 4200); under Miri the shortest, a partial and a full
/// Poly1305 block after it, and one past the first 1024-byte NH unit.
fn lengths(max: usize) -> Box<dyn Iterator<Item = usize>> {
    if MIRI {
        Box::new([16, 17, 48, 1041].into_iter().filter(move |&n| n <= max))
    } else {
        Box::new(16..=max)
    }
}

#[test]
fn round_trip_every_length_and_composition() {
    let mut rng = Rng::new(0xad1a_0001);
    let key = rng.array::<32>();
    let ours = AdiantumXChaCha12Aes::new(&key);
    let rc = RcAdiantum12::new(&key);
    let mut count = 0;
    for len in lengths(4200) {
        let tlen = rng.range(0, 70);
        let tweak = rng.bytes(tlen);
        let pt = rng.bytes(len);
        let mut buf = pt.clone();
        ours.encrypt_in_place(&tweak, &mut buf).unwrap();
        assert_ne!(buf, pt, "len {len}");
        let mut other = pt.clone();
        rc.encrypt_in_place(&tweak, &mut other).unwrap();
        assert_eq!(buf, other, "composition with rc_chacha20, len {len}");
        ours.decrypt_in_place(&tweak, &mut buf).unwrap();
        assert_eq!(buf, pt, "round trip, len {len}");
        count += 1;
    }
    println!("adiantum: round trip + composition at {count} lengths");
}

#[test]
fn round_trip_xchacha20_and_hpolyc() {
    let mut rng = Rng::new(0xad1a_0002);
    let key = rng.array::<32>();
    let a20 = AdiantumXChaCha20Aes::new(&key);
    let hp = HPolyC12::new(&key);
    for len in lengths(4200).filter(|n| n % 5 == 0 || *n < 80 || MIRI) {
        let tlen = rng.range(0, 70);
        let tweak = rng.bytes(tlen);
        let pt = rng.bytes(len);
        for (enc, dec) in [
            (
                &(|t: &[u8], b: &mut [u8]| a20.encrypt_in_place(t, b))
                    as &dyn Fn(&[u8], &mut [u8]) -> Result<(), Error>,
                &(|t: &[u8], b: &mut [u8]| a20.decrypt_in_place(t, b))
                    as &dyn Fn(&[u8], &mut [u8]) -> Result<(), Error>,
            ),
            (
                &|t: &[u8], b: &mut [u8]| hp.encrypt_in_place(t, b),
                &|t: &[u8], b: &mut [u8]| hp.decrypt_in_place(t, b),
            ),
        ] {
            let mut buf = pt.clone();
            enc(&tweak, &mut buf).unwrap();
            assert_ne!(buf, pt);
            dec(&tweak, &mut buf).unwrap();
            assert_eq!(buf, pt, "len {len}");
        }
    }
}

/// Every 16-byte window of `a` (the left part in 16-byte steps, its last
/// window flush with its end, and the right block) differs from `b`'s.
fn all_windows_differ(a: &[u8], b: &[u8]) -> bool {
    let bulk = a.len() - 16;
    let mut starts: Vec<usize> = (0..bulk.saturating_sub(15)).step_by(16).collect();
    if bulk >= 16 {
        starts.push(bulk - 16);
    }
    let left_ok = if bulk == 0 {
        true
    } else if bulk < 16 {
        a[..bulk] != b[..bulk]
    } else {
        starts.iter().all(|&s| a[s..s + 16] != b[s..s + 16])
    };
    left_ok && a[bulk..] != b[bulk..]
}

#[test]
fn wide_block_property() {
    let mut rng = Rng::new(0xad1a_0003);
    let key = rng.array::<32>();
    let a = AdiantumXChaCha12Aes::new(&key);
    let hp = HPolyC12::new(&key);
    let lens: &[usize] = if MIRI {
        &[16, 33, 100]
    } else {
        &[
            16, 17, 31, 32, 33, 48, 100, 512, 1000, 1024, 1040, 4096, 4111,
        ]
    };
    for &len in lens {
        let tweak = rng.bytes(32);
        let pt = rng.bytes(len);
        let mut ct = pt.clone();
        a.encrypt_in_place(&tweak, &mut ct).unwrap();
        let mut ct_h = pt.clone();
        hp.encrypt_in_place(&tweak, &mut ct_h).unwrap();
        for _ in 0..if MIRI { 1 } else { 6 } {
            // One flipped ciphertext bit: a different plaintext everywhere.
            let bit = rng.below(len * 8);
            for (c, cipher) in [(&ct, 0), (&ct_h, 1)] {
                let mut buf = c.clone();
                buf[bit / 8] ^= 1 << (bit % 8);
                match cipher {
                    0 => a.decrypt_in_place(&tweak, &mut buf).unwrap(),
                    _ => hp.decrypt_in_place(&tweak, &mut buf).unwrap(),
                }
                assert!(all_windows_differ(&buf, &pt), "ct bit {bit}, len {len}");
            }
            // One flipped tweak bit: likewise.
            let tbit = rng.below(tweak.len() * 8);
            let mut t2 = tweak.clone();
            t2[tbit / 8] ^= 1 << (tbit % 8);
            let mut buf = ct.clone();
            a.decrypt_in_place(&t2, &mut buf).unwrap();
            assert!(all_windows_differ(&buf, &pt), "tweak bit {tbit}, len {len}");
            // And one flipped plaintext bit changes the whole ciphertext.
            let mut p2 = pt.clone();
            p2[bit / 8] ^= 1 << (bit % 8);
            a.encrypt_in_place(&tweak, &mut p2).unwrap();
            assert!(all_windows_differ(&p2, &ct), "pt bit {bit}, len {len}");
        }
    }
}

#[test]
fn tweak_lengths_are_distinct() {
    // The tweak's length is bound in: T and T ‖ 0 differ (HPolyC hashes
    // bitlen(T); for Adiantum the Poly1305 padding tells them apart).
    let key = [7u8; 32];
    let a = AdiantumXChaCha12Aes::new(&key);
    let hp = HPolyC12::new(&key);
    let pt = [1u8; 64];
    // Under Miri, around the first Poly1305 block boundary of the tweak.
    for t in (0..40).filter(|t| !MIRI || [0, 15, 16].contains(t)) {
        let (t1, t2) = (vec![0u8; t], vec![0u8; t + 1]);
        let (mut x, mut y) = (pt, pt);
        a.encrypt_in_place(&t1, &mut x).unwrap();
        a.encrypt_in_place(&t2, &mut y).unwrap();
        assert_ne!(x, y, "adiantum tweak length {t}");
        let (mut x, mut y) = (pt, pt);
        hp.encrypt_in_place(&t1, &mut x).unwrap();
        hp.encrypt_in_place(&t2, &mut y).unwrap();
        assert_ne!(x, y, "hpolyc tweak length {t}");
    }
}

#[test]
fn short_messages_are_errors() {
    let a = AdiantumXChaCha12Aes::new(&[1; 32]);
    let hp = HPolyC12::new(&[1; 32]);
    for len in 0..16 {
        let mut buf = vec![0x5a; len];
        assert_eq!(
            a.encrypt_in_place(b"t", &mut buf),
            Err(Error::MessageTooShort)
        );
        assert_eq!(
            a.decrypt_in_place(b"t", &mut buf),
            Err(Error::MessageTooShort)
        );
        assert_eq!(
            hp.encrypt_in_place(b"t", &mut buf),
            Err(Error::MessageTooShort)
        );
        assert_eq!(
            hp.decrypt_in_place(b"", &mut buf),
            Err(Error::MessageTooShort)
        );
        assert_eq!(buf, vec![0x5a; len], "buffer untouched");
    }
    assert_eq!(
        Error::MessageTooShort.to_string(),
        "message shorter than 16 bytes"
    );
}

#[test]
fn key_init_clone_and_debug() {
    use cipher::KeyInit;
    let key = [3u8; 32];
    let a = <AdiantumXChaCha12Aes as KeyInit>::new(&key.into());
    let b = AdiantumXChaCha12Aes::new(&key).clone();
    let (mut x, mut y) = ([9u8; 40], [9u8; 40]);
    a.encrypt_in_place(b"tweak", &mut x).unwrap();
    b.encrypt_in_place(b"tweak", &mut y).unwrap();
    assert_eq!(x, y);
    assert_eq!(format!("{a:?}"), "Adiantum { .. }");
    assert!(AdiantumXChaCha12Aes::new_from_slice(&[0; 31]).is_err());
}

/// A direct transcription of the specification, with none of the crate's
/// shortcuts (no rounding of the stream pass, no shared header hash), over
/// RustCrypto's XChaCha12 and the `nhpoly1305` primitives.
fn reference_encrypt(key: &[u8; 32], tweak: &[u8], msg: &[u8]) -> Vec<u8> {
    use cipher::{BlockCipherEncrypt, KeyInit, KeyIvInit, StreamCipher};
    use nhpoly1305::{NhPoly1305, Poly1305};
    let mut sub = [0u8; 32 + 16 + 1088];
    let mut nonce = [0u8; 24];
    nonce[0] = 1;
    rc_chacha20::XChaCha12::new(key.into(), &nonce.into()).apply_keystream(&mut sub);
    let aes = Aes256::new(&<[u8; 32]>::try_from(&sub[..32]).unwrap().into());
    let kt: [u8; 16] = sub[32..48].try_into().unwrap();
    let kn: [u8; 1088] = sub[48..].try_into().unwrap();
    let h = |l: &[u8]| {
        let mut p = Poly1305::new(&kt);
        let mut head = (l.len() as u128 * 8).to_le_bytes().to_vec();
        head.extend_from_slice(tweak);
        p.update(&head);
        let mut n = NhPoly1305::new(&kn);
        n.update(l);
        u128::from_le_bytes(p.finalize()).wrapping_add(u128::from_le_bytes(n.finalize()))
    };
    let (pl, pr) = msg.split_at(msg.len() - 16);
    let pm = u128::from_le_bytes(pr.try_into().unwrap()).wrapping_add(h(pl));
    let mut cm = pm.to_le_bytes().into();
    aes.encrypt_block(&mut cm);
    let cm: [u8; 16] = cm.into();
    let mut nonce = [0u8; 24];
    nonce[..16].copy_from_slice(&cm);
    nonce[16] = 1;
    let mut cl = pl.to_vec();
    rc_chacha20::XChaCha12::new(key.into(), &nonce.into()).apply_keystream(&mut cl);
    let cr = u128::from_le_bytes(cm).wrapping_sub(h(&cl));
    cl.extend_from_slice(&cr.to_le_bytes());
    cl
}

#[test]
fn matches_reference_at_every_length() {
    let mut rng = Rng::new(0xad1a_0004);
    let key = rng.array::<32>();
    let ours = AdiantumXChaCha12Aes::new(&key);
    for len in lengths(2200) {
        let tlen = rng.range(0, 40);
        let tweak = rng.bytes(tlen);
        let pt = rng.bytes(len);
        let mut buf = pt.clone();
        ours.encrypt_in_place(&tweak, &mut buf).unwrap();
        assert_eq!(buf, reference_encrypt(&key, &tweak, &pt), "len {len}");
    }
}
