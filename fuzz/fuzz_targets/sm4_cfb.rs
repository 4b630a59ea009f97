//! `sm4_simd::Sm4CfbEnc` / `Sm4CfbDec` on every backend against `cfb-mode`,
//! messages of any length.
#![no_main]
use cipher::{InnerIvInit, KeyIvInit};
use libfuzzer_sys::fuzz_target;
use sm4_simd::{Backend, Sm4, Sm4CfbDec, Sm4CfbEnc};

fuzz_target!(|data: &[u8]| {
    let Some((key, rest)) = data.split_first_chunk::<16>() else {
        return;
    };
    let Some((iv, msg)) = rest.split_first_chunk::<16>() else {
        return;
    };
    let mut want_enc = msg.to_vec();
    cfb_mode::Encryptor::<Sm4>::new(key.into(), iv.into()).encrypt(&mut want_enc);
    let mut want_dec = msg.to_vec();
    cfb_mode::Decryptor::<Sm4>::new(key.into(), iv.into()).decrypt(&mut want_dec);
    for b in Backend::available() {
        let c = || Sm4::with_backend(key, b).expect("available");
        let mut got = msg.to_vec();
        Sm4CfbEnc::inner_iv_init(c(), iv.into()).encrypt(&mut got);
        assert_eq!(got, want_enc, "{} enc", b.name());
        let mut got = msg.to_vec();
        Sm4CfbDec::inner_iv_init(c(), iv.into()).decrypt(&mut got);
        assert_eq!(got, want_dec, "{} dec", b.name());
    }
});
