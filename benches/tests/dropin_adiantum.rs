//! Naming shared with the `adiantum` 0.2 crate: the workspace's
//! `adiantum_simd::Cipher<S, B>` (stream cipher first, then block cipher), keyed
//! with `.into()` from a 32-byte array as 0.2's `KeyInit::new` is. The
//! calls differ (see `adiantum/README.md`): 0.2's `encrypt(page, tweak)`
//! panics on bad lengths, ours `encrypt_in_place(tweak, buf)` returns an
//! error. Both must give the same
//! ciphertexts on the sectors 0.2 accepts (16..=4096 bytes, a multiple of
//! 16, tweaks of up to 32 bytes).
#![cfg(feature = "adiantum")]

use adiantum_simd::cipher::KeyInit;
use aes::Aes256;
use testkit::Rng;

#[test]
fn same_ciphertexts_as_adiantum_0_2() {
    let mut rng = Rng::new(0x0002_d1a7);
    for len in (16..=4096)
        .step_by(16)
        .filter(|l| l % 256 == 16 || *l == 4096)
    {
        let key = rng.array::<32>();
        let tweak_len = rng.range(0, 32);
        let tweak = rng.bytes(tweak_len);
        let page = rng.bytes(len);

        // The call 0.2 needs (`.into()` to its `Array` key) also compiles
        // here, where it converts to the `[u8; 32]` that `new` takes.
        #[allow(clippy::useless_conversion)]
        let ours = adiantum_simd::Cipher::<chacha_simd::XChaCha12, Aes256>::new(&key.into());
        let peer = rc_adiantum::Cipher::<rc_chacha20::XChaCha12, Aes256>::new(&key.into());

        let mut a = page.clone();
        ours.encrypt_in_place(&tweak, &mut a).unwrap();
        let mut b = page.clone();
        peer.encrypt(&mut b, &tweak);
        assert_eq!(a, b, "{len} bytes, {tweak_len}-byte tweak");

        ours.decrypt_in_place(&tweak, &mut a).unwrap();
        peer.decrypt(&mut b, &tweak);
        assert_eq!(a, page);
        assert_eq!(b, page);
    }
}

/// `Cipher` is the same type as `Adiantum`, with `KeyInit` from `cipher`.
#[test]
fn cipher_is_adiantum() {
    fn key_init<K: KeyInit>() {}
    key_init::<adiantum_simd::Cipher<chacha_simd::XChaCha20, Aes256>>();
    let a: adiantum_simd::AdiantumXChaCha20Aes = adiantum_simd::Cipher::new(&[1; 32]);
    let mut buf = [0u8; 16];
    a.encrypt_in_place(b"", &mut buf).unwrap();
}
