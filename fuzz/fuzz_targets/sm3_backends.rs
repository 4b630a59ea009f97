//! Every SM3 backend against `soft` over a random split of the input, and
//! `digest_many` on every lane engine against one-message hashing.
#![no_main]
use digest::Digest;
use libfuzzer_sys::fuzz_target;
use sm3_simd::{Backend, Lanes, Sm3};

fuzz_target!(|data: &[u8]| {
    let Some((&split, msg)) = data.split_first() else {
        return;
    };
    let cut = (split as usize * msg.len()) / 256;
    let want = Sm3::with_backend(Backend::Soft)
        .expect("soft")
        .chain_update(msg)
        .finalize();
    for b in Backend::available() {
        let mut h = Sm3::with_backend(b).expect("available");
        h.update(&msg[..cut]);
        h.update(&msg[cut..]);
        assert_eq!(h.finalize(), want, "{}", b.name());
    }
    // Messages of unequal lengths: every suffix of the input at a stride.
    let step = (split as usize % 7) + 1;
    let msgs: Vec<&[u8]> = (0..msg.len()).step_by(step).map(|i| &msg[i..]).collect();
    let want: Vec<[u8; 32]> = msgs.iter().map(|m| Sm3::digest(m).into()).collect();
    for lanes in Lanes::available() {
        let mut got = vec![[0u8; 32]; msgs.len()];
        sm3_simd::digest_many_with(lanes, &msgs, &mut got).expect("lengths match");
        assert_eq!(got, want, "{}", lanes.name());
    }
});
