//! The GHASH engines of SM4-GCM (through the hidden `GhashHook`): every
//! (backend, engine) pair this CPU runs against RustCrypto's `ghash` and
//! against the portable engine, random keys, every block count 0..=300 and
//! some long ones, in one call and in random splits; GCM spec test cases.

use ghash::GHash;
use ghash::universal_hash::UniversalHash;
use sm4_simd::{Backend, GhashEngine, GhashHook};
use testkit::{Rng, hex};

/// Every pair this CPU runs, printed once.
fn pairs() -> Vec<(Backend, GhashEngine)> {
    let mut v = Vec::new();
    for b in Backend::available() {
        for e in b.ghash_engines() {
            v.push((b, e));
        }
    }
    let names: Vec<String> = v
        .iter()
        .map(|(b, e)| format!("{}+{}", b.name(), e.name()))
        .collect();
    eprintln!("ghash pairs on this CPU: {}", names.join(", "));
    v
}

/// `ghash` crate's GHASH of `data` (zero-padded to whole blocks).
fn reference(h: &[u8; 16], data: &[u8]) -> [u8; 16] {
    let mut g = GHash::new(&(*h).into());
    g.update_padded(data);
    g.finalize().into()
}

/// Ours, in one call.
fn ours(hook: &GhashHook, data: &[u8]) -> [u8; 16] {
    let mut s = [0; 16];
    hook.update_padded(&mut s, data);
    s
}

#[test]
fn every_engine_every_block_count() {
    let mut rng = Rng::new(0x6a5b_0001);
    let pairs = pairs();
    let mut lens: Vec<usize> = (0..=300).collect();
    lens.extend([511, 512, 513, 1023, 1024, 4095, 4096, 4097, 16 * 1024 + 7]);
    for &blocks in &lens {
        let h: [u8; 16] = rng.array();
        let data = rng.bytes(16 * blocks);
        let want = reference(&h, &data);
        let soft = GhashHook::new(&h, Backend::Soft, GhashEngine::Soft).unwrap();
        assert_eq!(ours(&soft, &data), want, "soft, {blocks} blocks");
        for &(b, e) in &pairs {
            let hook = GhashHook::new(&h, b, e).unwrap();
            assert_eq!(hook.engine(), e);
            assert_eq!(
                ours(&hook, &data),
                want,
                "{}+{}, {blocks} blocks",
                b.name(),
                e.name()
            );
        }
    }
}

#[test]
fn random_splits_carry_the_state() {
    let mut rng = Rng::new(0x6a5b_0002);
    let pairs = pairs();
    for round in 0..200 {
        let h: [u8; 16] = rng.array();
        let blocks = if round % 10 == 0 {
            rng.range(300, 2000)
        } else {
            rng.range(0, 300)
        };
        let data = rng.bytes(16 * blocks);
        let want = reference(&h, &data);
        let splits = rng.chunks(blocks, if round % 2 == 0 { 40 } else { 5 });
        for &(b, e) in &pairs {
            let hook = GhashHook::new(&h, b, e).unwrap();
            let mut s = [0; 16];
            let mut at = 0;
            for n in &splits {
                hook.update_padded(&mut s, &data[16 * at..16 * (at + n)]);
                at += n;
            }
            assert_eq!(
                s,
                want,
                "{}+{}, {blocks} blocks in {splits:?}",
                b.name(),
                e.name()
            );
        }
    }
}

#[test]
fn partial_last_block_is_zero_padded() {
    let mut rng = Rng::new(0x6a5b_0003);
    let pairs = pairs();
    for len in 0..=600 {
        let h: [u8; 16] = rng.array();
        let data = rng.bytes(len);
        let want = reference(&h, &data);
        for &(b, e) in &pairs {
            let hook = GhashHook::new(&h, b, e).unwrap();
            assert_eq!(
                ours(&hook, &data),
                want,
                "{}+{}, {len} bytes",
                b.name(),
                e.name()
            );
        }
    }
}

/// Edge keys and data: zero, one (`H = x^0`, the first bit), all ones, the
/// top bit alone.
#[test]
fn edge_keys() {
    let mut one = [0u8; 16];
    one[0] = 0x80;
    let mut last = [0u8; 16];
    last[15] = 1;
    let keys = [[0u8; 16], one, last, [0xff; 16]];
    let datas = [vec![0u8; 16 * 40], vec![0xff; 16 * 40], {
        let mut v = vec![0u8; 16 * 40];
        v[0] = 0x80;
        v
    }];
    let pairs = pairs();
    for h in &keys {
        for d in &datas {
            for n in [1, 4, 8, 16, 17, 40] {
                let data = &d[..16 * n];
                let want = reference(h, data);
                for &(b, e) in &pairs {
                    let hook = GhashHook::new(h, b, e).unwrap();
                    assert_eq!(ours(&hook, data), want, "{}+{}", b.name(), e.name());
                }
            }
        }
    }
}

/// GHASH(H, A, C) of McGrew and Viega's GCM specification test cases
/// (AES test cases; GHASH does not depend on the cipher once H is given).
#[test]
fn gcm_spec_test_cases() {
    // (H, A, C, GHASH(H, A, C)).
    let cases = [
        // Test case 2.
        (
            "66e94bd4ef8a2c3b884cfa59ca342b2e",
            "",
            "0388dace60b6a392f328c2b971b2fe78",
            "f38cbb1ad69223dcc3457ae5b6b0f885",
        ),
        // Test case 4.
        (
            "b83b533708bf535d0aa6e52980d53b78",
            "feedfacedeadbeeffeedfacedeadbeefabaddad2",
            "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e\
             21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091",
            "698e57f70e6ecc7fd9463b7260a9ae5f",
        ),
        // Test case 18.
        (
            "acbef20579b4b8ebce889bac8732dad7",
            "feedfacedeadbeeffeedfacedeadbeefabaddad2",
            "5a8def2f0c9e53f1f75d7853659e2a20eeb2b22aafde6419a058ab4f6f746bf4\
             0fc0c3b780f244452da3ebf1c5d82cdea2418997200ef82e44ae7e3f",
            "d5ffcf6fc5ac4d69722187421a7f170b",
        ),
    ];
    let pairs = pairs();
    for (h, a, c, want) in cases {
        let h: [u8; 16] = hex(h).try_into().unwrap();
        let (a, c) = (hex(a), hex(c));
        let mut lens = [0u8; 16];
        lens[..8].copy_from_slice(&(8 * a.len() as u64).to_be_bytes());
        lens[8..].copy_from_slice(&(8 * c.len() as u64).to_be_bytes());
        for &(b, e) in &pairs {
            let hook = GhashHook::new(&h, b, e).unwrap();
            let mut s = [0; 16];
            hook.update_padded(&mut s, &a);
            hook.update_padded(&mut s, &c);
            hook.update_padded(&mut s, &lens);
            assert_eq!(s.to_vec(), hex(want), "{}+{}", b.name(), e.name());
        }
    }
    // The first product of test case 2: C·H.
    let h: [u8; 16] = hex("66e94bd4ef8a2c3b884cfa59ca342b2e").try_into().unwrap();
    for &(b, e) in &pairs {
        let hook = GhashHook::new(&h, b, e).unwrap();
        assert_eq!(
            ours(&hook, &hex("0388dace60b6a392f328c2b971b2fe78")).to_vec(),
            hex("5e2ec746917062882c85b0685353deb7")
        );
    }
}

/// The pairs a backend offers are exactly the runners that exist.
#[test]
fn pairs_and_refusals() {
    let h = [7u8; 16];
    assert!(GhashHook::new(&h, Backend::Soft, GhashEngine::Soft).is_some());
    assert!(GhashHook::new(&h, Backend::Soft, GhashEngine::Clmul).is_none());
    assert!(GhashHook::new(&h, Backend::Soft, GhashEngine::Pmull).is_none());
    for b in Backend::ALL {
        let engines: Vec<_> = b.ghash_engines().collect();
        if b.is_available() {
            assert_eq!(engines.first(), Some(&b.ghash_engine()), "{}", b.name());
        } else {
            assert!(engines.is_empty(), "{}", b.name());
        }
        for e in [
            GhashEngine::Soft,
            GhashEngine::Clmul,
            GhashEngine::Vpclmul,
            GhashEngine::Vpclmul256,
            GhashEngine::Pmull,
        ] {
            let ok = engines.contains(&e);
            assert_eq!(
                GhashHook::new(&h, b, e).is_some(),
                ok,
                "{}+{}",
                b.name(),
                e.name()
            );
        }
    }
    #[cfg(target_arch = "x86_64")]
    for b in Backend::available() {
        let want = match b {
            Backend::Gfni => GhashEngine::Vpclmul,
            Backend::Gfni256 | Backend::Vaes | Backend::Avx
                if std::is_x86_feature_detected!("vpclmulqdq") =>
            {
                GhashEngine::Vpclmul256
            }
            Backend::Gfni256 | Backend::Vaes | Backend::Avx => GhashEngine::Clmul,
            _ => GhashEngine::Soft,
        };
        assert_eq!(b.ghash_engine(), want, "{}", b.name());
    }
    // Debug shows no key material.
    let hook = GhashHook::new(&[0xab; 16], Backend::Soft, GhashEngine::Soft).unwrap();
    let dbg = format!("{hook:?}");
    assert!(
        !dbg.contains("171") && !dbg.to_lowercase().contains("ab, "),
        "{dbg}"
    );
}
