//! Every ChaCha backend against `soft`: XChaCha12 and ChaCha20 keystreams
//! applied in two chunks after a seek.
#![no_main]
use chacha_simd::{Backend, ChaCha20, XChaCha12};
use cipher::{StreamCipher, StreamCipherSeek};
use libfuzzer_sys::fuzz_target;

fn check<C: StreamCipher + StreamCipherSeek>(
    make: impl Fn(Backend) -> Option<C>,
    seek: u64,
    cut: usize,
    msg: &[u8],
) {
    let mut want = msg.to_vec();
    let mut soft = make(Backend::Soft).expect("soft");
    soft.seek(seek);
    soft.apply_keystream(&mut want);
    for b in Backend::available() {
        let mut c = make(b).expect("available");
        c.seek(seek);
        let mut got = msg.to_vec();
        let (head, tail) = got.split_at_mut(cut);
        c.apply_keystream(head);
        c.apply_keystream(tail);
        assert_eq!(got, want, "{}", b.name());
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((key, rest)) = data.split_first_chunk::<32>() else {
        return;
    };
    let Some((nonce, rest)) = rest.split_first_chunk::<24>() else {
        return;
    };
    let Some((ctl, msg)) = rest.split_first_chunk::<4>() else {
        return;
    };
    let seek = u64::from(u16::from_le_bytes([ctl[0], ctl[1]]));
    let cut = (usize::from(ctl[2]) * msg.len()) / 256;
    check(|b| XChaCha12::with_backend(key, nonce, b), seek, cut, msg);
    check(
        |b| ChaCha20::with_backend(key, &nonce[..12], b),
        seek,
        cut,
        msg,
    );
});
