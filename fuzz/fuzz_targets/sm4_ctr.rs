//! `sm4_simd::Sm4Ctr` on every backend against `ctr::Ctr128BE<Sm4>`, the
//! message in two calls split at a fuzzed point.
#![no_main]
use cipher::{InnerIvInit, KeyIvInit, StreamCipher};
use libfuzzer_sys::fuzz_target;
use sm4_simd::{Backend, Sm4, Sm4Ctr};

fuzz_target!(|data: &[u8]| {
    let Some((key, rest)) = data.split_first_chunk::<16>() else {
        return;
    };
    let Some((iv, rest)) = rest.split_first_chunk::<16>() else {
        return;
    };
    let Some((&cut, msg)) = rest.split_first() else {
        return;
    };
    let mut want = msg.to_vec();
    ctr::Ctr128BE::<Sm4>::new(key.into(), iv.into()).apply_keystream(&mut want);
    let cut = usize::from(cut).min(msg.len());
    for b in Backend::available() {
        let mut c = Sm4Ctr::inner_iv_init(Sm4::with_backend(key, b).expect("available"), iv.into());
        let mut got = msg.to_vec();
        let (x, y) = got.split_at_mut(cut);
        c.apply_keystream(x);
        c.apply_keystream(y);
        assert_eq!(got, want, "{}", b.name());
    }
});
