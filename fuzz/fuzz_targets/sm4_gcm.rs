//! `sm4_simd::Sm4Gcm` on every backend and GHASH engine against
//! `aes_gcm::AesGcm<Sm4, U12>`: seal, open, and a changed tag refused with
//! no plaintext left.
#![no_main]
use aead::{AeadInOut, KeyInit, consts::U12};
use libfuzzer_sys::fuzz_target;
use sm4_simd::{Backend, GhashEngine, Sm4, Sm4Gcm};

fuzz_target!(|data: &[u8]| {
    let Some((key, rest)) = data.split_first_chunk::<16>() else {
        return;
    };
    let Some((nonce, rest)) = rest.split_first_chunk::<12>() else {
        return;
    };
    let Some((&cut, rest)) = rest.split_first() else {
        return;
    };
    let (aad, msg) = rest.split_at(usize::from(cut).min(rest.len()));
    let theirs = aes_gcm::AesGcm::<Sm4, U12>::new(key.into());
    let mut want = msg.to_vec();
    let want_tag = theirs
        .encrypt_inout_detached(nonce.into(), aad, want.as_mut_slice().into())
        .expect("short enough");
    for b in Backend::available() {
        for e in [
            GhashEngine::Soft,
            GhashEngine::Clmul,
            GhashEngine::Vpclmul,
            GhashEngine::Vpclmul256,
            GhashEngine::Pmull,
        ] {
            let Some(ours) = Sm4Gcm::with_backend(key, b, e) else {
                continue;
            };
            let mut got = msg.to_vec();
            let tag = ours
                .encrypt_inout_detached(nonce.into(), aad, got.as_mut_slice().into())
                .expect("short enough");
            assert_eq!(
                (&got, &tag),
                (&want, &want_tag),
                "{} {} seal",
                b.name(),
                e.name()
            );
            let mut bad = tag;
            bad[15] ^= 0x80;
            let mut forged = got.clone();
            assert!(
                ours.decrypt_inout_detached(nonce.into(), aad, forged.as_mut_slice().into(), &bad)
                    .is_err()
            );
            assert!(
                forged.iter().all(|&x| x == 0),
                "{} left plaintext",
                b.name()
            );
            ours.decrypt_inout_detached(nonce.into(), aad, got.as_mut_slice().into(), &tag)
                .expect("authentic");
            assert_eq!(got, msg, "{} {} open", b.name(), e.name());
        }
    }
});
