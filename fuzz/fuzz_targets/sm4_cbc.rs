//! `sm4_simd::Sm4CbcEnc` / `Sm4CbcDec` on every backend against the `cbc`
//! crate, and CBC-CS3 against its definition (CBC over the zero-padded
//! message, the last two blocks swapped, truncated).
#![no_main]
use cipher::{BlockModeDecrypt, BlockModeEncrypt, InnerIvInit, KeyIvInit, array::Array};
use libfuzzer_sys::fuzz_target;
use sm4_simd::{Backend, Sm4, Sm4CbcDec, Sm4CbcEnc};

fn blocks(buf: &mut [u8]) -> &mut [Array<u8, cipher::consts::U16>] {
    Array::slice_as_chunks_mut(buf).0
}

fuzz_target!(|data: &[u8]| {
    let Some((key, rest)) = data.split_first_chunk::<16>() else {
        return;
    };
    let Some((iv, msg)) = rest.split_first_chunk::<16>() else {
        return;
    };
    let whole = &msg[..msg.len() / 16 * 16];
    let mut want_enc = whole.to_vec();
    cbc::Encryptor::<Sm4>::new(key.into(), iv.into()).encrypt_blocks(blocks(&mut want_enc));
    let mut want_dec = whole.to_vec();
    cbc::Decryptor::<Sm4>::new(key.into(), iv.into()).decrypt_blocks(blocks(&mut want_dec));
    // CS3 by definition.
    let mut want_cs3 = msg.to_vec();
    want_cs3.resize(msg.len().div_ceil(16) * 16, 0);
    cbc::Encryptor::<Sm4>::new(key.into(), iv.into()).encrypt_blocks(blocks(&mut want_cs3));
    let n = want_cs3.len() / 16;
    if n > 1 {
        let (a, b) = want_cs3.split_at_mut(16 * (n - 1));
        a[16 * (n - 2)..].swap_with_slice(b);
    }
    want_cs3.truncate(msg.len());
    for b in Backend::available() {
        let c = || Sm4::with_backend(key, b).expect("available");
        let mut got = whole.to_vec();
        Sm4CbcEnc::inner_iv_init(c(), iv.into()).encrypt_blocks(blocks(&mut got));
        assert_eq!(got, want_enc, "{} enc", b.name());
        let mut got = whole.to_vec();
        Sm4CbcDec::inner_iv_init(c(), iv.into()).decrypt_blocks(blocks(&mut got));
        assert_eq!(got, want_dec, "{} dec", b.name());
        let mut got = msg.to_vec();
        let r = Sm4CbcEnc::inner_iv_init(c(), iv.into()).encrypt_cs3(&mut got);
        if msg.len() < 16 {
            assert!(r.is_err() && got == msg);
            continue;
        }
        assert_eq!(got, want_cs3, "{} cs3", b.name());
        Sm4CbcDec::inner_iv_init(c(), iv.into())
            .decrypt_cs3(&mut got)
            .expect("16 bytes or more");
        assert_eq!(got, msg, "{} cs3 round trip", b.name());
    }
});
