//! Every NHPoly1305 backend against `soft`, input fed in two chunks.
#![no_main]
use libfuzzer_sys::fuzz_target;
use nhpoly1305::{Backend, KEY_SIZE, NhPoly1305};

fuzz_target!(|data: &[u8]| {
    let Some((&split, msg)) = data.split_first() else {
        return;
    };
    // A key derived from the input's length, so short inputs still fuzz.
    let mut key = [0u8; KEY_SIZE];
    for (i, k) in key.iter_mut().enumerate() {
        *k = (i as u8).wrapping_mul(31) ^ (msg.len() as u8) ^ split;
    }
    let cut = (split as usize * msg.len()) / 256;
    let mut soft = NhPoly1305::with_backend(&key, Backend::Soft).expect("soft");
    soft.update(msg);
    let want = soft.finalize();
    for b in Backend::available() {
        let mut h = NhPoly1305::with_backend(&key, b).expect("available");
        h.update(&msg[..cut]);
        h.update(&msg[cut..]);
        assert_eq!(h.finalize(), want, "{}", b.name());
    }
});
