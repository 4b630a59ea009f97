//! Every backend against `soft`: all lengths 0..=2100, chunked calls, seeks,
//! misaligned and out-of-place buffers, and the end of the counter space.

use chacha_simd::{Backend, ChaCha, Extended, Ietf, Legacy, R8, R12, R20, Rounds, Variant};
use cipher::{StreamCipher, StreamCipherSeek};
use testkit::Rng;

const AARCH64: bool = cfg!(target_arch = "aarch64");
/// Miri interprets the soft backend (its only one) at about a block per
/// 20 ms: there every test runs a few short lengths.
const MIRI: bool = cfg!(miri);

fn nonce_len<V: Variant>() -> usize {
    <V::NonceSize as cipher::typenum::Unsigned>::USIZE
}

fn mk<R: Rounds, V: Variant>(key: &[u8; 32], nonce: &[u8], b: Backend) -> ChaCha<R, V> {
    ChaCha::<R, V>::with_backend(key, nonce, b).expect("backend available")
}

/// Reference keystream from soft, starting at byte `pos`.
fn soft_ks<R: Rounds, V: Variant>(key: &[u8; 32], nonce: &[u8], pos: u128, len: usize) -> Vec<u8> {
    let mut c = mk::<R, V>(key, nonce, Backend::Soft);
    c.try_seek(pos).unwrap();
    let mut v = vec![0u8; len];
    c.try_apply_keystream(&mut v).unwrap();
    v
}

fn others() -> Vec<Backend> {
    Backend::available()
        .filter(|b| *b != Backend::Soft)
        .collect()
}

fn lengths<R: Rounds, V: Variant>(rng: &mut Rng, b: Backend, step: usize) {
    let key = rng.array::<32>();
    let nonce = rng.bytes(nonce_len::<V>());
    let (max, dense) = if MIRI { (140, 0) } else { (2100, 300) };
    let all = soft_ks::<R, V>(&key, &nonce, 0, max);
    let mut len = 0;
    while len <= max {
        // Lengths 0..=2100 from the start (step 1 covers every remainder mod 64).
        let data = rng.bytes(len);
        let mut buf = data.clone();
        mk::<R, V>(&key, &nonce, b).apply_keystream(&mut buf);
        let want: Vec<u8> = data.iter().zip(&all).map(|(d, k)| d ^ k).collect();
        assert_eq!(buf, want, "len {len} on {}", b.name());
        // Out of place, misaligned input and output.
        let off = rng.below(64);
        let (src, range) = testkit::misaligned(&data, off);
        let (mut dst, drange) = testkit::misaligned(&vec![0u8; len], (off + 7) % 64);
        mk::<R, V>(&key, &nonce, b).apply_keystream_b2b(&src[range], &mut dst[drange.clone()]);
        assert_eq!(&dst[drange], &want[..], "b2b len {len} on {}", b.name());
        len += if len < dense { 1 } else { step };
    }
}

#[test]
fn lengths_against_soft() {
    let mut rng = Rng::new(1);
    // Under Miri, soft against itself: a fresh cipher per length and
    // misaligned out-of-place calls against one long keystream.
    let (backends, step) = if MIRI {
        (vec![Backend::Soft], 23)
    } else {
        (others(), 1)
    };
    let mut names = vec!["soft"];
    for b in backends {
        names.push(b.name());
        lengths::<R20, Ietf>(&mut rng, b, step);
        lengths::<R12, Extended>(&mut rng, b, step * 7);
        lengths::<R8, Legacy>(&mut rng, b, step * 13);
    }
    println!("chacha: backends tested against soft: {}", names.join(" "));
}

fn chunked<R: Rounds, V: Variant>(rng: &mut Rng, b: Backend) {
    const SIZES: [usize; 14] = [
        1, 3, 63, 64, 65, 127, 128, 129, 255, 511, 512, 513, 1000, 1100,
    ];
    let key = rng.array::<32>();
    let nonce = rng.bytes(nonce_len::<V>());
    let start = rng.below(5000) as u128;
    let total = if MIRI { 700 } else { 9000 };
    let want = soft_ks::<R, V>(&key, &nonce, start, total);
    let mut c = mk::<R, V>(&key, &nonce, b);
    c.seek(start);
    let mut got = vec![0u8; total];
    let mut pos = 0;
    while pos < total {
        let n = SIZES[rng.below(SIZES.len())].min(total - pos);
        c.apply_keystream(&mut got[pos..pos + n]);
        pos += n;
        assert_eq!(c.current_pos::<u64>(), start as u64 + pos as u64);
    }
    assert_eq!(got, want, "chunked on {}", b.name());
}

#[test]
fn chunked_against_soft() {
    let mut rng = Rng::new(2);
    let reps = if MIRI {
        1
    } else if AARCH64 {
        2
    } else {
        8
    };
    for b in Backend::available() {
        for _ in 0..reps {
            chunked::<R20, Ietf>(&mut rng, b);
            chunked::<R12, Extended>(&mut rng, b);
            chunked::<R20, Legacy>(&mut rng, b);
        }
    }
}

fn seeks<R: Rounds, V: Variant>(rng: &mut Rng, b: Backend) {
    let key = rng.array::<32>();
    let nonce = rng.bytes(nonce_len::<V>());
    let mut c = mk::<R, V>(&key, &nonce, b);
    for _ in 0..if MIRI { 3 } else { 40 } {
        let pos = match rng.below(3) {
            0 => rng.below(4096) as u128,
            1 => (rng.next_u64() % (1 << 37)) as u128,
            _ => (rng.next_u64() >> 33) as u128 * 64 + rng.below(64) as u128,
        };
        let len = rng.below(if MIRI { 150 } else { 1200 });
        c.try_seek(pos).unwrap();
        assert_eq!(c.current_pos::<u128>(), pos);
        let mut got = vec![0u8; len];
        c.apply_keystream(&mut got);
        assert_eq!(
            got,
            soft_ks::<R, V>(&key, &nonce, pos, len),
            "seek {pos} len {len} on {}",
            b.name()
        );
    }
}

#[test]
fn seeks_against_soft() {
    let mut rng = Rng::new(3);
    for b in Backend::available() {
        seeks::<R20, Ietf>(&mut rng, b);
        seeks::<R12, Extended>(&mut rng, b);
        seeks::<R8, Legacy>(&mut rng, b);
    }
}

/// The whole 32-bit counter space is usable, the last block included; the
/// byte after it is refused.
fn ietf_end<R: Rounds, V: Variant>(rng: &mut Rng, b: Backend) {
    let key = rng.array::<32>();
    let nonce = rng.bytes(nonce_len::<V>());
    let total: u128 = 64 << 32;
    let backs: &[usize] = if MIRI {
        &[1, 65, 64 * 3 + 5]
    } else {
        &[1, 5, 64, 65, 64 * 3 + 5, 64 * 9 + 1, 64 * 17 + 30, 64 * 40]
    };
    for &back in backs {
        let start = total - back as u128;
        let want = soft_ks::<R, V>(&key, &nonce, start, back);
        let mut c = mk::<R, V>(&key, &nonce, b);
        c.try_seek(start).unwrap();
        let mut got = vec![0u8; back];
        // Too long by one byte: refused, buffer untouched.
        let mut long = vec![0u8; back + 1];
        assert!(c.try_apply_keystream(&mut long).is_err());
        assert!(long.iter().all(|&x| x == 0));
        assert_eq!(c.current_pos::<u128>(), start);
        // Split in two irregular calls.
        let mid = back / 3;
        c.try_apply_keystream(&mut got[..mid]).unwrap();
        c.try_apply_keystream(&mut got[mid..]).unwrap();
        assert_eq!(got, want, "end-{back} on {}", b.name());
        assert_eq!(c.current_pos::<u64>(), total as u64);
        assert!(c.try_apply_keystream(&mut [0u8]).is_err());
        c.try_apply_keystream(&mut []).unwrap();
        // Seeking back from the end works.
        c.try_seek(start).unwrap();
        let mut again = vec![0u8; back];
        c.try_apply_keystream(&mut again).unwrap();
        assert_eq!(again, want);
    }
    let mut c = mk::<R, V>(&key, &nonce, b);
    assert!(c.try_seek(total + 1).is_err());
    c.try_seek(total).unwrap();
    assert!(c.try_apply_keystream(&mut [0u8]).is_err());
    assert!(c.try_seek(-1i32).is_err());
    assert!(c.try_seek(u128::MAX).is_err());
    // A position that does not fit the requested type is an error.
    c.try_seek(1u64 << 33).unwrap();
    assert!(c.try_current_pos::<u32>().is_err());
    assert!(c.try_current_pos::<i32>().is_err());
    assert_eq!(c.try_current_pos::<u64>().unwrap(), 1 << 33);
}

#[test]
fn counter_end() {
    let mut rng = Rng::new(4);
    for b in Backend::available() {
        ietf_end::<R20, Ietf>(&mut rng, b);
        ietf_end::<R12, Extended>(&mut rng, b);
        legacy_end(&mut rng, b);
    }
}

/// 64-bit counter: carries from word 12 into word 13 inside a pass, and
/// the last of its 2^64 blocks.
fn legacy_end(rng: &mut Rng, b: Backend) {
    let key = rng.array::<32>();
    let nonce = rng.bytes(8);
    // Carry across 2^32 blocks, inside every pass width.
    let (carries, len): (&[u128], usize) = if MIRI {
        (&[1, 2], 64 * 3)
    } else {
        (&[1, 2, 3, 5, 6, 7, 15, 31], 64 * 40)
    };
    for &back in carries {
        let start = ((1u128 << 32) - back) * 64 + 11;
        let want = soft_ks::<R20, Legacy>(&key, &nonce, start, len);
        let mut c = mk::<R20, Legacy>(&key, &nonce, b);
        c.try_seek(start).unwrap();
        let mut got = vec![0u8; len];
        c.apply_keystream(&mut got);
        assert_eq!(got, want, "carry {back} on {}", b.name());
    }
    // The soft reference itself: block 2^32 uses word 13 = 1.
    let a = soft_ks::<R20, Legacy>(&key, &nonce, (1u128 << 32) * 64, 64);
    let z = soft_ks::<R20, Legacy>(&key, &nonce, 0, 64);
    assert_ne!(a, z);
    let total: u128 = 64 << 64;
    let backs: &[usize] = if MIRI {
        &[1, 64 * 2 + 3]
    } else {
        &[1, 64, 64 * 5 + 3, 64 * 20]
    };
    for &back in backs {
        let start = total - back as u128;
        let want = soft_ks::<R20, Legacy>(&key, &nonce, start, back);
        let mut c = mk::<R20, Legacy>(&key, &nonce, b);
        c.try_seek(start).unwrap();
        let mut got = vec![0u8; back];
        assert!(c.try_apply_keystream(&mut vec![0u8; back + 1]).is_err());
        c.try_apply_keystream(&mut got).unwrap();
        assert_eq!(got, want, "legacy end-{back} on {}", b.name());
        assert_eq!(c.current_pos::<u128>(), total);
        assert!(c.try_current_pos::<u64>().is_err());
        assert!(c.try_apply_keystream(&mut [0u8]).is_err());
    }
    let mut c = mk::<R20, Legacy>(&key, &nonce, b);
    assert!(c.try_seek(total + 1).is_err());
    c.try_seek(u64::MAX).unwrap();
    assert_eq!(c.current_pos::<u64>(), u64::MAX);
}

/// Long messages: every block count 32..=100 (several wide passes and every
/// short last pass), each with a partial last block, for ChaCha20, XChaCha12
/// and the legacy layout with its counter carrying inside a later pass.
#[test]
fn multi_pass_lengths_against_soft() {
    if others().is_empty() {
        // Only the SIMD passes have more than one block per pass.
        println!("chacha: multi-pass lengths: no backend but soft");
        return;
    }
    let mut rng = Rng::new(7);
    let key = rng.array::<32>();
    let n12 = rng.bytes(12);
    let n24 = rng.bytes(24);
    let n8 = rng.bytes(8);
    let max = 64 * 101;
    let a = soft_ks::<R20, Ietf>(&key, &n12, 0, max);
    let x = soft_ks::<R12, Extended>(&key, &n24, 0, max);
    let start = ((1u128 << 32) - 40) * 64;
    let l = soft_ks::<R8, Legacy>(&key, &n8, start, max);
    // Legacy passes whose counter high word is not zero and stays put
    // (the AVX-512 path precomputes the first round with it).
    let high = [(5u128 << 32) + 100, (0xffff_ffffu128 << 32) + 7].map(|block| {
        let start = block * 64;
        (start, soft_ks::<R20, Legacy>(&key, &n8, start, max))
    });
    let step = if AARCH64 { 7 } else { 1 };
    for b in others() {
        for blocks in (32..=100).step_by(step) {
            let len = 64 * blocks + blocks % 64;
            let mut buf = vec![0u8; len];
            mk::<R20, Ietf>(&key, &n12, b).apply_keystream(&mut buf);
            assert_eq!(buf, a[..len], "chacha20 {len} on {}", b.name());
            let mut buf = vec![0u8; len];
            mk::<R12, Extended>(&key, &n24, b).apply_keystream(&mut buf);
            assert_eq!(buf, x[..len], "xchacha12 {len} on {}", b.name());
            let mut buf = vec![0u8; len];
            let mut c = mk::<R8, Legacy>(&key, &n8, b);
            c.try_seek(start).unwrap();
            c.apply_keystream(&mut buf);
            assert_eq!(buf, l[..len], "legacy {len} on {}", b.name());
            for (start, want) in &high {
                let mut buf = vec![0u8; len];
                let mut c = mk::<R20, Legacy>(&key, &n8, b);
                c.try_seek(*start).unwrap();
                c.apply_keystream(&mut buf);
                assert_eq!(buf, want[..len], "legacy at {start} {len} on {}", b.name());
            }
        }
    }
}
