//! ChaCha, XChaCha and the legacy variant at 8, 12 and 20 rounds, and
//! HChaCha, on each backend.

use chacha_simd::{Backend, ChaCha, Extended, Ietf, Legacy, R8, R12, R20, Rounds, Variant};
use cipher::{StreamCipher, StreamCipherSeek, typenum::Unsigned};

use super::{LENGTHS, Tally, public, secret, secret_array, secret_vec};

/// Not run: valgrind cannot execute AVX-512.
const SKIPPED: [Backend; 2] = [Backend::Avx512, Backend::Avx512Zmm];

pub(super) fn check(tally: &mut Tally) {
    for b in Backend::available().filter(|b| !SKIPPED.contains(b)) {
        for (op, run) in [
            ("ChaCha20", stream::<R20, Ietf> as fn(Backend)),
            ("ChaCha12", stream::<R12, Ietf>),
            ("ChaCha8", stream::<R8, Ietf>),
            ("XChaCha20", stream::<R20, Extended>),
            ("XChaCha12", stream::<R12, Extended>),
            ("XChaCha8", stream::<R8, Extended>),
            ("ChaCha20Legacy", stream::<R20, Legacy>),
            ("ChaCha12Legacy", stream::<R12, Legacy>),
            ("ChaCha8Legacy", stream::<R8, Legacy>),
            ("HChaCha20/12/8", hchacha),
        ] {
            run(b);
            tally.ran("chacha", b.name(), op);
        }
    }
}

fn stream<R: Rounds, V: Variant>(b: Backend) {
    let nonce_len = V::NonceSize::USIZE;
    // Past 1024 bytes too: 16-block (1024-byte) passes with a tail.
    for len in LENGTHS.into_iter().chain([63, 64, 65, 512, 1100]) {
        let key = secret_array::<32>(40);
        let nonce = secret_vec(nonce_len, 41);
        let mut c = ChaCha::<R, V>::with_backend(&key, &nonce, b).expect("available");
        let mut buf = secret_vec(len, 42);
        c.apply_keystream(&mut buf);
        public(&mut buf);
        // Again from inside a block, after a seek (positions are public).
        c.seek(len as u64 + 5);
        secret(&mut buf);
        c.apply_keystream(&mut buf);
        public(&mut buf);
    }
}

fn hchacha(b: Backend) {
    let key = secret_array::<32>(43);
    let input = secret_array::<16>(44);
    for out in [
        chacha_simd::hchacha_with_backend::<R20>(b, &key, &input),
        chacha_simd::hchacha_with_backend::<R12>(b, &key, &input),
        chacha_simd::hchacha_with_backend::<R8>(b, &key, &input),
    ] {
        public(&mut out.expect("available"));
    }
}
