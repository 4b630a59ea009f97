//! Every backend this CPU has against `soft`: every length 0..=2048 in
//! steps of 16 (plus unaligned starts and odd lengths), and random lengths
//! up to 16 KiB fed in random chunk sizes.

use nhpoly1305::{Backend, NhPoly1305, nh_with_backend};

/// Miri interprets the soft backend (its only one) at about a kilobyte a
/// second: there the tests run a few lengths around the unit boundaries.
const MIRI: bool = cfg!(miri);

fn hash_chunked(h: &mut NhPoly1305, msg: &[u8], chunks: &[usize]) -> [u8; 16] {
    let mut off = 0;
    for &n in chunks {
        h.update(&msg[off..off + n]);
        off += n;
    }
    assert_eq!(off, msg.len());
    h.clone().finalize()
}

#[test]
fn backends_against_soft() {
    let others: Vec<Backend> = Backend::available()
        .filter(|&b| b != Backend::Soft)
        .collect();
    let mut names = vec!["soft"];
    names.extend(others.iter().map(|b| b.name()));
    println!(
        "nhpoly1305: backends tested against soft: {}",
        names.join(" ")
    );
    println!("nhpoly1305: backend() = {}", nhpoly1305::backend());
    if !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        assert_eq!(nhpoly1305::backend(), "soft", "no SIMD backend here");
    }

    let mut rng = testkit::Rng::new(0x4e48);
    let key: [u8; 1088] = rng.array();
    let nh_key: [u8; 1072] = key[16..].try_into().unwrap();
    let data = rng.bytes(16 * 1024 + 64);
    let soft = NhPoly1305::with_backend(&key, Backend::Soft).unwrap();

    // NH alone, every valid length, at an unaligned start.
    for len in (16..=1024).step_by(16).filter(|_| !others.is_empty()) {
        let msg = &data[3..3 + len];
        let want = nh_with_backend(&nh_key, msg, Backend::Soft)
            .unwrap()
            .unwrap();
        for &b in &others {
            let got = nh_with_backend(&nh_key, msg, b).unwrap().unwrap();
            assert_eq!(got, want, "nh len {len} on {}", b.name());
        }
    }

    // Every length 0..=2048 in steps of 16, one call, plus +1/+15 bytes
    // (under Miri, soft's `oneshot` against its `update` path at a few).
    let bases: Vec<usize> = if MIRI {
        vec![0, 16, 1024]
    } else {
        (0..=2048).step_by(16).collect()
    };
    let offs: &[usize] = if MIRI { &[5] } else { &[0, 5] };
    for base in bases {
        for len in [base, base + 1, base + 15] {
            for &off in offs {
                let msg = &data[off..off + len];
                let mut s = soft.clone();
                s.update(msg);
                let want = s.finalize();
                assert_eq!(soft.oneshot(msg), want, "soft oneshot len {len}");
                for &b in &others {
                    let mut h = NhPoly1305::with_backend(&key, b).unwrap();
                    assert_eq!(h.oneshot(msg), want, "oneshot len {len} on {}", b.name());
                    h.update(msg);
                    assert_eq!(h.finalize(), want, "len {len} off {off} on {}", b.name());
                }
            }
        }
    }

    // Random lengths up to 16 KiB, random chunk sizes.
    let (iters, max_len) = if MIRI {
        (2, 2100)
    } else if cfg!(target_arch = "aarch64") {
        (40, 16 * 1024)
    } else {
        (200, 16 * 1024)
    };
    for _ in 0..iters {
        let len = rng.below(max_len + 1);
        let off = rng.below(64);
        let msg = &data[off..off + len];
        let mut s = soft.clone();
        s.update(msg);
        let want = s.finalize();
        let max_chunk = [1, 17, 100, 1100, 5000][rng.below(5)];
        let chunks = rng.chunks(len, max_chunk);
        let mut s2 = soft.clone();
        assert_eq!(
            hash_chunked(&mut s2, msg, &chunks),
            want,
            "soft chunked, len {len}"
        );
        for &b in &others {
            let mut h = NhPoly1305::with_backend(&key, b).unwrap();
            let chunks = rng.chunks(len, max_chunk);
            assert_eq!(
                hash_chunked(&mut h, msg, &chunks),
                want,
                "len {len} on {}",
                b.name()
            );
        }
    }
}

#[test]
fn chunk_boundaries_match_one_shot() {
    // Splits at every offset around unit boundaries, on the default backend.
    let mut rng = testkit::Rng::new(11);
    let key: [u8; 1088] = rng.array();
    let len = if MIRI { 1100 } else { 2100 };
    let msg = rng.bytes(len);
    let mut one = NhPoly1305::new(&key);
    one.update(&msg);
    let want = one.finalize();
    let splits: Vec<usize> = if MIRI {
        vec![0, 1, 16, 17, 1023, 1024, 1025, 1100]
    } else {
        (0..=len)
            .filter(|s| s % 16 < 2 || s % 1024 < 20 || s % 1024 > 1004)
            .collect()
    };
    for split in splits {
        let mut h = NhPoly1305::new(&key);
        h.update(&msg[..split]);
        h.update(&msg[split..]);
        assert_eq!(h.finalize(), want, "split {split}");
    }
}
