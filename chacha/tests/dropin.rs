//! Drop-in naming: code written against RustCrypto `chacha20` 0.10 builds
//! against this crate with only the crate name in its paths changed.
//!
//! Each macro below is one piece of user code written with `chacha20`'s
//! names (`Key`, `Nonce`, `XNonce`, `LegacyNonce`, the `KeyIvInit`
//! re-export, the cipher aliases, `hchacha`, `variants`, `R20`). It is
//! expanded twice, with `$c` = `rc_chacha20` (RustCrypto) and `$c` =
//! `chacha_simd` (this crate), and both expansions must give the same bytes.

use hex_literal::hex;

/// Encrypt, seek back, decrypt, and re-encrypt in odd-sized pieces, with
/// the traits imported through the `cipher` re-export (as `chacha20`'s own
/// example does) and the key and nonce built through `Key` and `Nonce`.
macro_rules! rfc8439_stream {
    ($c:ident) => {{
        use $c::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
        use $c::{ChaCha20, Key, Nonce};

        let key = Key::from([0x42; 32]);
        let nonce = Nonce::from([0x24; 12]);
        let mut cipher = ChaCha20::new(&key, &nonce);
        let mut data = *b"sixteen bytes!!!and some more bytes after them";
        let plain = data;
        cipher.apply_keystream(&mut data);
        let sealed = data;
        cipher.seek(0u32);
        cipher.apply_keystream(&mut data);
        assert_eq!(data, plain);
        cipher.seek(0u32);
        for piece in data.chunks_mut(5) {
            cipher.apply_keystream(piece);
        }
        assert_eq!(data, sealed);
        sealed.to_vec()
    }};
}

/// Arrays turned into keys and nonces by `.into()`, for every round count
/// and nonce layout, with `KeyIvInit` from the crate root.
macro_rules! every_alias {
    ($c:ident) => {{
        use $c::cipher::{StreamCipher, StreamCipherSeek};
        use $c::{ChaCha8, ChaCha12, ChaCha20, ChaCha20Legacy, KeyIvInit, LegacyNonce, XNonce};
        use $c::{XChaCha8, XChaCha12, XChaCha20};

        let key = [7u8; 32];
        let mut out = Vec::new();
        let mut run = |c: &mut dyn StreamCipher| {
            let mut buf = [0u8; 100];
            c.apply_keystream(&mut buf);
            out.extend_from_slice(&buf);
        };
        run(&mut ChaCha20::new(&key.into(), &[1; 12].into()));
        run(&mut ChaCha12::new(&key.into(), &[2; 12].into()));
        run(&mut ChaCha8::new(&key.into(), &[3; 12].into()));
        run(&mut ChaCha20Legacy::new(
            &key.into(),
            &LegacyNonce::from([4; 8]),
        ));
        let xnonce = XNonce::from([5; 24]);
        run(&mut XChaCha20::new(&key.into(), &xnonce));
        run(&mut XChaCha12::new(&key.into(), &xnonce));
        run(&mut XChaCha8::new(&key.into(), &xnonce));
        let mut seeked = XChaCha20::new(&key.into(), &xnonce);
        seeked.seek(1000u64);
        assert_eq!(seeked.current_pos::<u64>(), 1000);
        run(&mut seeked);
        out
    }};
}

/// HChaCha called with `.into()` conversions (chacha20 takes `Array`s,
/// this crate plain arrays: the same call compiles against both), and the
/// round and nonce-layout markers under their paths.
macro_rules! hchacha_and_markers {
    ($c:ident) => {{
        use $c::{R20, hchacha};
        let key = [9u8; 32];
        let input = [8u8; 16];
        let subkey = hchacha::<R20>(&key.into(), &input.into());
        let _ietf: Option<$c::variants::Ietf> = None;
        let _legacy: Option<$c::variants::Legacy> = None;
        subkey.as_slice().to_vec()
    }};
}

#[test]
fn same_code_same_bytes() {
    assert_eq!(rfc8439_stream!(chacha_simd), rfc8439_stream!(rc_chacha20));
    assert_eq!(every_alias!(chacha_simd), every_alias!(rc_chacha20));
    assert_eq!(
        hchacha_and_markers!(chacha_simd),
        hchacha_and_markers!(rc_chacha20)
    );
}

/// RustCrypto's README example shape, with this crate's `use` line: the
/// RFC 8439 2.4.2 keystream check written with `Key`/`Nonce`.
#[test]
fn rfc8439_through_aliases() {
    use chacha_simd::cipher::StreamCipher;
    use chacha_simd::{ChaCha20, Key, KeyIvInit, Nonce};
    let key = Key::from(hex!(
        "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
    ));
    let nonce = Nonce::from(hex!("000000000000004a00000000"));
    let mut cipher = ChaCha20::new(&key, &nonce);
    // The first block (counter 0) is the Poly1305 key block; skip it.
    cipher.apply_keystream(&mut [0u8; 64]);
    let mut buf = *b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip";
    cipher.apply_keystream(&mut buf);
    assert_eq!(buf[..16], hex!("6e2e359a2568f98041ba0728dd0d6981"));
}
