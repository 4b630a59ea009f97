//! Known-answer tests: Google's Adiantum NH/NHPoly1305 vectors, the Linux
//! testmgr NHPoly1305 vectors and Poly1305 (RFC 8439 and others) vectors,
//! on every backend this CPU has.

use nhpoly1305::{Backend, Error, NhPoly1305, Poly1305, nh, nh_with_backend};
use universal_hash::{KeyInit, UniversalHash};

const DIR: &str = env!("CARGO_MANIFEST_DIR");
/// Miri interprets the soft backend at about a kilobyte a second: there
/// the loops run a few lengths (and `testkit` decodes a sample of vectors).
const MIRI: bool = cfg!(miri);

#[test]
fn nh_vectors() {
    let cases = testkit::load_cases(DIR, "tests/data/nh.json");
    assert!(!cases.is_empty());
    for c in &cases {
        let key: [u8; 1072] = c.array("key");
        let msg = c.hex("message");
        let want = c.hex("hash");
        assert_eq!(nh(&key, &msg).unwrap().as_slice(), want, "{}", c.id());
        for b in Backend::available() {
            let got = nh_with_backend(&key, &msg, b).unwrap().unwrap();
            assert_eq!(got.as_slice(), want, "{} on {}", c.id(), b.name());
        }
    }
}

#[test]
fn nh_bad_lengths() {
    let key = [3u8; 1072];
    for len in [0, 1, 15, 17, 1023, 1025, 1040, 2048] {
        assert_eq!(
            nh(&key, &vec![0; len]),
            Err(Error::InvalidMessageLength),
            "{len}"
        );
    }
    for len in (16..=1024).step_by(if MIRI { 496 } else { 16 }) {
        assert!(nh(&key, &vec![0; len]).is_ok());
    }
}

#[test]
fn nhpoly1305_vectors() {
    let cases = testkit::load_cases(DIR, "tests/data/nhpoly1305.json");
    assert!(!cases.is_empty());
    let mut rng = testkit::Rng::new(5);
    for c in &cases {
        let key: [u8; 1088] = c.array("key");
        let msg = c.hex("message");
        let want: [u8; 16] = c.array("hash");
        let mut h = NhPoly1305::new(&key);
        h.update(&msg);
        assert_eq!(h.finalize(), want, "{}", c.id());
        for b in Backend::available() {
            let mut h = NhPoly1305::with_backend(&key, b).unwrap();
            let mut off = 0;
            for n in rng.chunks(msg.len(), 100) {
                h.update(&msg[off..off + n]);
                off += n;
            }
            assert_eq!(h.oneshot(&msg), want, "oneshot {} on {}", c.id(), b.name());
            let h2 = h.clone();
            assert_eq!(h.finalize(), want, "{} on {}", c.id(), b.name());
            // The trait paths: zero-padded blocks, blocks through the
            // closure backend (`update_with_backend`) and through `update`.
            let mut u = NhPoly1305::with_backend(&key, b).unwrap();
            u.update_padded(&msg);
            assert_eq!(UniversalHash::finalize(u).as_slice(), want);
            let mut padded = msg.clone();
            padded.resize(msg.len().next_multiple_of(16), 0);
            let blocks: Vec<universal_hash::array::Array<u8, universal_hash::consts::U16>> =
                padded.chunks(16).map(|c| c.try_into().unwrap()).collect();
            let mut u = NhPoly1305::with_backend(&key, b).unwrap();
            UniversalHash::update(&mut u, &blocks);
            assert_eq!(UniversalHash::finalize(u).as_slice(), want);
            struct Ctx<'a>(&'a [universal_hash::array::Array<u8, universal_hash::consts::U16>]);
            impl universal_hash::common::BlockSizeUser for Ctx<'_> {
                type BlockSize = universal_hash::consts::U16;
            }
            impl universal_hash::UhfClosure for Ctx<'_> {
                fn call<B: universal_hash::UhfBackend<BlockSize = Self::BlockSize>>(
                    self,
                    backend: &mut B,
                ) {
                    // One block first, so the par-blocks path is misaligned
                    // until `blocks_needed_to_align` is honoured.
                    let (first, rest) = self.0.split_at(self.0.len().min(1));
                    for blk in first {
                        backend.proc_block(blk);
                    }
                    let mut rest = rest;
                    let align = backend.blocks_needed_to_align().min(rest.len());
                    for blk in &rest[..align] {
                        backend.proc_block(blk);
                    }
                    rest = &rest[align..];
                    let (par, tail) = universal_hash::array::Array::slice_as_chunks(rest);
                    for p in par {
                        backend.proc_par_blocks(p);
                    }
                    for blk in tail {
                        backend.proc_block(blk);
                    }
                }
            }
            let mut u = NhPoly1305::with_backend(&key, b).unwrap();
            u.update_with_backend(Ctx(&blocks));
            assert_eq!(UniversalHash::finalize(u).as_slice(), want);
            let mut h2 = h2;
            h2.reset();
            h2.update(&msg);
            assert_eq!(h2.finalize(), want, "reset {}", c.id());
        }
    }
}

#[test]
fn key_init() {
    assert!(<NhPoly1305 as KeyInit>::new_from_slice(&[0u8; 1087]).is_err());
    assert!(<NhPoly1305 as KeyInit>::new_from_slice(&[0u8; 1089]).is_err());
    assert!(<NhPoly1305 as KeyInit>::new_from_slice(&[]).is_err());
    let key = [9u8; 1088];
    let a = <NhPoly1305 as KeyInit>::new_from_slice(&key).unwrap();
    let mut b = NhPoly1305::new(&key);
    b.update(&[1; 48]);
    let mut a = a;
    UniversalHash::update(&mut a, &[[1u8; 16].into(); 3]);
    assert_eq!(UniversalHash::finalize(a).as_slice(), b.finalize());
}

#[test]
fn poly1305_vectors() {
    let cases = testkit::load_cases(DIR, "tests/data/poly1305.json");
    assert!(!cases.is_empty());
    let mut rng = testkit::Rng::new(7);
    for c in &cases {
        let key = c.hex("key");
        let r: [u8; 16] = key[..16].try_into().unwrap();
        let s = u128::from_le_bytes(key[16..32].try_into().unwrap());
        let msg = c.hex("message");
        let want: [u8; 16] = c.array("tag");
        let mut p = Poly1305::new(&r);
        let mut off = 0;
        for n in rng.chunks(msg.len(), 40) {
            p.update(&msg[off..off + n]);
            off += n;
        }
        let mut q = p.clone();
        let acc = u128::from_le_bytes(p.finalize());
        assert_eq!(acc.wrapping_add(s).to_le_bytes(), want, "{}", c.id());
        let acc = u128::from_le_bytes(q.oneshot(&msg));
        assert_eq!(
            acc.wrapping_add(s).to_le_bytes(),
            want,
            "oneshot {}",
            c.id()
        );
        q.reset();
        q.update(&msg);
        let acc = u128::from_le_bytes(q.finalize());
        assert_eq!(acc.wrapping_add(s).to_le_bytes(), want, "reset {}", c.id());
    }
}

/// Our raw Poly1305 plus `s` against RustCrypto's full MAC: random and
/// extreme keys and messages (all-0xff blocks push the limbs to their
/// bounds), lengths 0..=700 and a few long ones, in random chunks.
#[test]
fn poly1305_against_rustcrypto() {
    use poly1305::universal_hash::KeyInit as _;
    let mut rng = testkit::Rng::new(1305);
    let mut lens: Vec<usize> = if MIRI {
        vec![0, 1, 15, 16, 17, 32, 33, 100]
    } else {
        (0..=700).collect()
    };
    if !MIRI {
        lens.extend([1023, 1024, 1025, 4095, 4096, 4097, 8200]);
    }
    for (i, &len) in lens.iter().enumerate() {
        let mut key: [u8; 32] = rng.array();
        let mut msg = rng.bytes(len);
        match i % 4 {
            0 => msg.fill(0xff),
            1 => key[..16].fill(0xff),
            2 => {
                msg.fill(0xff);
                key[..16].fill(0xff);
            }
            _ => {}
        }
        let r: [u8; 16] = key[..16].try_into().unwrap();
        let s = u128::from_le_bytes(key[16..].try_into().unwrap());
        let want = poly1305::Poly1305::new(&key.into()).compute_unpadded(&msg);
        let mut p = Poly1305::new(&r);
        let mut off = 0;
        for n in rng.chunks(len, 200) {
            p.update(&msg[off..off + n]);
            off += n;
        }
        let one = u128::from_le_bytes(p.oneshot(&msg)).wrapping_add(s);
        assert_eq!(
            one.to_le_bytes().as_slice(),
            want.as_slice(),
            "oneshot len {len} case {i}"
        );
        if let Some((first, rest)) = msg.split_first_chunk::<16>() {
            let pre = u128::from_le_bytes(p.oneshot_prefixed(first, rest)).wrapping_add(s);
            assert_eq!(
                pre.to_le_bytes().as_slice(),
                want.as_slice(),
                "oneshot_prefixed len {len} case {i}"
            );
        }
        let got = u128::from_le_bytes(p.finalize()).wrapping_add(s);
        assert_eq!(
            got.to_le_bytes().as_slice(),
            want.as_slice(),
            "len {len} case {i}"
        );
    }
}
