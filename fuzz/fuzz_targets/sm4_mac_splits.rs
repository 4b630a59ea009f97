//! CMAC-SM4 on every SM4 backend: any split of the input into two
//! `update` calls gives the one-shot tag.
#![no_main]
use digest::Mac;
use libfuzzer_sys::fuzz_target;
use sm4_mac::Sm4Cmac;
use sm4_simd::Backend;

fuzz_target!(|data: &[u8]| {
    let Some((key, rest)) = data.split_first_chunk::<16>() else {
        return;
    };
    let Some((&split, msg)) = rest.split_first() else {
        return;
    };
    let cut = (split as usize * msg.len()) / 256;
    let want = Sm4Cmac::with_backend(key, Backend::Soft)
        .expect("soft")
        .chain_update(msg)
        .finalize()
        .into_bytes();
    for b in Backend::available() {
        let mut m = Sm4Cmac::with_backend(key, b).expect("available");
        m.update(&msg[..cut]);
        m.update(&msg[cut..]);
        assert_eq!(m.finalize().into_bytes(), want, "{}", b.name());
    }
});
