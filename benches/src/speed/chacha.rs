//! `speed` rows for the `chacha` family: ChaCha20/12/8 and XChaCha20/12
//! (mode `stream`: one call = set up the cipher from key and nonce, XChaCha's
//! HChaCha included, then apply the keystream to one message), one row per
//! backend this CPU has, and HChaCha20 (mode `call`: `size / 32` calls per
//! timed closure, i.e. 32 bytes of output per call).
//!
//! Peer: RustCrypto `chacha20` 0.10 as `rustcrypto-chacha20`, built here
//! without `--cfg chacha20_avx512`, i.e. its AVX2 backend.

use std::hint::black_box;

use chacha_simd::{Backend, ChaCha, Extended, Ietf, R8, R12, R20, Rounds, Variant};
use cipher::{KeyIvInit, StreamCipher};

const KEY: [u8; 32] = [0x42; 32];
const NONCE: [u8; 24] = [0x24; 24];
const PEER: &str = "rustcrypto-chacha20";

fn ours<R: Rounds, V: Variant>(s: &mut crate::Speed, alg: &str) {
    let nlen = <V::NonceSize as cipher::typenum::Unsigned>::USIZE;
    for b in Backend::available() {
        s.row(alg, "stream", b.name(), |size| {
            let mut buf = crate::buffer(size);
            Some(move || {
                let mut c =
                    ChaCha::<R, V>::with_backend(black_box(&KEY), black_box(&NONCE[..nlen]), b)
                        .unwrap();
                c.apply_keystream(black_box(&mut buf));
                black_box(&buf);
            })
        });
    }
}

fn peer<C: KeyIvInit + StreamCipher>(s: &mut crate::Speed, alg: &str) {
    let nlen = <C::IvSize as cipher::typenum::Unsigned>::USIZE;
    s.peer_row(alg, "stream", PEER, |size| {
        let mut buf = crate::buffer(size);
        Some(move || {
            let mut c = C::new_from_slices(black_box(&KEY), black_box(&NONCE[..nlen])).unwrap();
            c.apply_keystream(black_box(&mut buf));
            black_box(&buf);
        })
    });
}

/// Measure this family's rows.
pub fn rows(s: &mut crate::Speed) {
    ours::<R20, Ietf>(s, "chacha20");
    peer::<rc_chacha20::ChaCha20>(s, "chacha20");
    ours::<R12, Ietf>(s, "chacha12");
    peer::<rc_chacha20::ChaCha12>(s, "chacha12");
    ours::<R8, Ietf>(s, "chacha8");
    peer::<rc_chacha20::ChaCha8>(s, "chacha8");
    ours::<R20, Extended>(s, "xchacha20");
    peer::<rc_chacha20::XChaCha20>(s, "xchacha20");
    ours::<R12, Extended>(s, "xchacha12");
    peer::<rc_chacha20::XChaCha12>(s, "xchacha12");

    let input = [0x11u8; 16];
    for b in Backend::available() {
        s.row("hchacha20", "call", b.name(), |size| {
            (size >= 32).then_some({
                move || {
                    for _ in 0..size / 32 {
                        black_box(
                            chacha_simd::hchacha_with_backend::<R20>(b, black_box(&KEY), &input)
                                .unwrap(),
                        );
                    }
                }
            })
        });
    }
    s.peer_row("hchacha20", "call", PEER, |size| {
        (size >= 32).then_some({
            move || {
                for _ in 0..size / 32 {
                    black_box(rc_chacha20::hchacha::<rc_chacha20::R20>(
                        black_box(&KEY.into()),
                        &input.into(),
                    ));
                }
            }
        })
    });
}
