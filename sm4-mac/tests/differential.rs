//! Randomized differential tests: our MACs, fed in random splits, against
//! RustCrypto `cmac` and straightforward one-shot reference code for
//! XCBC and CBC-MAC, over AES-128 and over SM4.

use cipher::{BlockCipherEncrypt, KeyInit, array::Array, consts::U16};
use digest::{FixedOutputReset, Mac, common::InnerInit};
use sm4_mac::{CbcMac, Cmac, Xcbc};
use testkit::Rng;

/// Feed `msg` to `mac` in random pieces (with some empty updates).
fn feed<M: Mac>(mac: &mut M, msg: &[u8], rng: &mut Rng) {
    let max = match rng.below(4) {
        0 => 1,
        1 => 17,
        2 => 64,
        _ => msg.len().max(1),
    };
    let mut at = 0;
    for n in rng.chunks(msg.len(), max) {
        if rng.below(8) == 0 {
            Mac::update(mac, &[]);
        }
        Mac::update(mac, &msg[at..at + n]);
        at += n;
    }
}

/// Plain one-shot CBC over the zero IV, returning the chaining value after
/// encrypting `blocks` (a multiple of 16 bytes).
fn cbc<R: BlockCipherEncrypt<BlockSize = U16>>(c: &R, init: [u8; 16], blocks: &[u8]) -> [u8; 16] {
    let mut st = Array::<u8, U16>::from(init);
    for b in blocks.chunks(16) {
        for (s, m) in st.iter_mut().zip(b) {
            *s ^= m;
        }
        c.encrypt_block(&mut st);
    }
    st.0
}

/// Reference XCBC-MAC (RFC 3566 section 4 steps, full tag).
fn ref_xcbc<R: BlockCipherEncrypt<BlockSize = U16> + KeyInit>(
    key: &[u8; 16],
    msg: &[u8],
) -> [u8; 16] {
    let c = R::new_from_slice(key).unwrap();
    let sub = |v: u8| {
        let mut b = Array::<u8, U16>::from([v; 16]);
        c.encrypt_block(&mut b);
        b.0
    };
    let (k1, k2, k3) = (sub(1), sub(2), sub(3));
    let c1 = R::new_from_slice(&k1).unwrap();
    let n = if msg.is_empty() {
        1
    } else {
        msg.len().div_ceil(16)
    };
    let head = (n - 1) * 16;
    let st = cbc(&c1, [0; 16], &msg[..head]);
    let rest = &msg[head..];
    let mut last = [0u8; 16];
    last[..rest.len()].copy_from_slice(rest);
    let k = if rest.len() == 16 {
        k2
    } else {
        last[rest.len()] = 0x80;
        k3
    };
    for i in 0..16 {
        last[i] ^= k[i];
    }
    cbc(&c1, st, &last)
}

/// Reference Linux `cbcmac`: zero-pad the message to whole blocks.
fn ref_cbcmac<R: BlockCipherEncrypt<BlockSize = U16> + KeyInit>(
    key: &[u8; 16],
    msg: &[u8],
) -> [u8; 16] {
    let c = R::new_from_slice(key).unwrap();
    let mut padded = msg.to_vec();
    padded.resize(msg.len().div_ceil(16) * 16, 0);
    cbc(&c, [0; 16], &padded)
}

/// Miri interprets the block ciphers at a few blocks a second (SM4's key
/// setup takes about as long as a block): there a few lengths around the
/// block boundaries, no random ones.
const MIRI: bool = cfg!(miri);

/// Number of random messages per cipher; qemu runs are much slower.
const RANDOM: usize = if MIRI {
    0
} else if cfg!(target_arch = "aarch64") {
    150
} else {
    400
};

/// Compare `Cmac`, `Xcbc` and `CbcMac` over `C` (built by `make`) with the
/// references over `R`, on every length 0..=80 (Miri: 0, 1, 16, 17 and 33)
/// and `RANDOM` random lengths
/// up to 2000 bytes, split at random points; also `finalize_reset` reuse.
fn differential<C, R>(seed: u64, make: impl Fn(&[u8; 16]) -> C)
where
    C: BlockCipherEncrypt<BlockSize = U16> + Clone,
    R: BlockCipherEncrypt<BlockSize = U16> + KeyInit + Clone,
    cmac::Cmac<R>: KeyInit + Mac,
{
    let mut rng = Rng::new(seed);
    let short: Vec<usize> = if MIRI {
        vec![0, 1, 16, 17, 33]
    } else {
        (0..=80).collect()
    };
    let lens: Vec<usize> = short
        .into_iter()
        .chain((0..RANDOM).map(|i| {
            if i % 8 == 0 {
                rng.range(0, 2000) / 16 * 16
            } else {
                rng.range(0, 2000)
            }
        }))
        .collect();
    for len in lens {
        let key: [u8; 16] = rng.array();
        let msg = rng.bytes(len);
        // Our MACs read the message from an odd offset (unaligned loads).
        let (store, range) = testkit::misaligned(&msg, rng.below(16));
        let unaligned = &store[range];

        let mut peer = <cmac::Cmac<R> as KeyInit>::new_from_slice(&key).unwrap();
        Mac::update(&mut peer, &msg);
        let want: [u8; 16] = peer.finalize().into_bytes()[..].try_into().unwrap();
        let mut ours = Cmac::inner_init(make(&key));
        feed(&mut ours, unaligned, &mut rng);
        let mut copy = ours.clone();
        assert_eq!(ours.finalize_reset().into_bytes().0, want, "cmac len {len}");
        feed(&mut ours, unaligned, &mut rng);
        assert_eq!(
            ours.finalize_fixed_reset().0,
            want,
            "cmac after reset, len {len}"
        );
        assert!(copy.clone().verify_slice(&want).is_ok());
        Mac::update(&mut copy, b"x");
        assert!(copy.verify_slice(&want).is_err());

        let want = ref_xcbc::<R>(&key, &msg);
        let mut ours = Xcbc::try_new_with(&key.into(), |k| Ok::<_, ()>(make(&k.0))).unwrap();
        feed(&mut ours, unaligned, &mut rng);
        assert_eq!(ours.finalize_reset().into_bytes().0, want, "xcbc len {len}");
        feed(&mut ours, unaligned, &mut rng);
        assert_eq!(
            ours.finalize().into_bytes().0,
            want,
            "xcbc after reset, len {len}"
        );

        let want = ref_cbcmac::<R>(&key, &msg);
        let mut ours = CbcMac::inner_init(make(&key));
        feed(&mut ours, unaligned, &mut rng);
        assert_eq!(
            ours.finalize_reset().into_bytes().0,
            want,
            "cbcmac len {len}"
        );
        feed(&mut ours, unaligned, &mut rng);
        assert_eq!(
            ours.finalize().into_bytes().0,
            want,
            "cbcmac after reset, len {len}"
        );
    }
}

#[test]
fn aes128_against_rustcrypto_cmac() {
    differential::<aes::Aes128, aes::Aes128>(1, |k| aes::Aes128::new(k.into()));
}

#[test]
fn rustcrypto_sm4_against_rustcrypto_cmac() {
    differential::<rc_sm4::Sm4, rc_sm4::Sm4>(2, |k| rc_sm4::Sm4::new(k.into()));
}

#[test]
fn empty_message_tags() {
    let key = [7u8; 16];
    let c = aes::Aes128::new(&key.into());
    // CBC-MAC of the empty message is all zero; CMAC/XCBC are not.
    assert_eq!(
        CbcMac::inner_init(c.clone()).finalize().into_bytes().0,
        [0; 16]
    );
    assert_ne!(Cmac::inner_init(c).finalize().into_bytes().0, [0; 16]);
}

/// `Cmac<Sm4>` (and XCBC, CBC-MAC) on every SM4 backend this CPU has,
/// against RustCrypto `cmac::Cmac<rc_sm4::Sm4>` and the references.
#[test]
fn every_sm4_backend_against_rustcrypto() {
    let mut names = Vec::new();
    for (i, b) in sm4_simd::Backend::available().enumerate() {
        differential::<sm4_simd::Sm4, rc_sm4::Sm4>(100 + i as u64, |k| {
            sm4_simd::Sm4::with_backend(k, b).unwrap()
        });
        // The hooks pin the same backend.
        let key = [9u8; 16];
        let want = sm4_mac::Sm4Cmac::new(&key.into())
            .chain_update([1u8; 50])
            .finalize();
        let got = sm4_mac::Sm4Cmac::with_backend(&key, b)
            .unwrap()
            .chain_update([1u8; 50])
            .finalize();
        assert_eq!(got, want, "{}", b.name());
        names.push(b.name());
    }
    assert!(names.contains(&"soft"));
    println!(
        "sm4-mac: sm4 backends tested: {} (default: {})",
        names.join(" "),
        sm4_mac::backend()
    );
}
