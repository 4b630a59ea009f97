//! `sm4_simd::Sm4Ccm` on every backend against `ccm::Ccm<Sm4, U16, U12>`: seal,
//! open, and a changed tag refused with no plaintext left.
#![no_main]
use aead::{
    AeadInOut, KeyInit,
    consts::{U12, U16},
};
use cipher::common::InnerInit;
use libfuzzer_sys::fuzz_target;
use sm4_simd::{Backend, Sm4, Sm4Ccm};

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
    let theirs = ccm::Ccm::<Sm4, U16, U12>::new(key.into());
    let mut want = msg.to_vec();
    let want_tag = theirs
        .encrypt_inout_detached(nonce.into(), aad, want.as_mut_slice().into())
        .expect("short enough");
    for b in Backend::available() {
        let ours = Sm4Ccm::inner_init(Sm4::with_backend(key, b).expect("available"));
        let mut got = msg.to_vec();
        let tag = ours
            .encrypt_inout_detached(nonce.into(), aad, got.as_mut_slice().into())
            .expect("short enough");
        assert_eq!((&got, &tag), (&want, &want_tag), "{} seal", b.name());
        let mut bad = tag;
        bad[0] ^= 1;
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
        assert_eq!(got, msg, "{} open", b.name());
    }
});
