//! Every SM4 backend this CPU has against `soft`, and decrypt(encrypt(x)).
#![no_main]
use cipher::{BlockCipherDecrypt, BlockCipherEncrypt, array::Array};
use libfuzzer_sys::fuzz_target;
use sm4_simd::{Backend, Sm4};

fuzz_target!(|data: &[u8]| {
    let Some((key, rest)) = data.split_first_chunk::<16>() else {
        return;
    };
    let blocks: Vec<Array<u8, _>> = rest
        .chunks_exact(16)
        .map(|c| Array::try_from(c).expect("16 bytes"))
        .collect();
    let soft = Sm4::with_backend(key, Backend::Soft).expect("soft always exists");
    let mut want = blocks.clone();
    soft.encrypt_blocks(&mut want);
    for b in Backend::available() {
        let c = Sm4::with_backend(key, b).expect("available");
        let mut got = blocks.clone();
        c.encrypt_blocks(&mut got);
        assert_eq!(got, want, "{} encrypt", b.name());
        c.decrypt_blocks(&mut got);
        assert_eq!(got, blocks, "{} decrypt", b.name());
    }
});
