//! `speed` rows for the `adiantum` family: Adiantum-XChaCha12-AES,
//! Adiantum-XChaCha20-AES and HPolyC-XChaCha12-AES, encrypt and decrypt,
//! one message per call with a 32-byte tweak (as Linux passes), and the
//! `adiantum` 0.2 crate as the peer.
//!
//! The crate has no backends of its own; the backend column names the
//! stream cipher's and the hash's (`chacha-simd` + `nhpoly1305`), chosen by their
//! default detection.

use std::hint::black_box;

use adiantum_simd::{Adiantum, HPolyC};
use cipher::consts::{U24, U32};
use cipher::{KeyInit, KeyIvInit, StreamCipher};

const KEY: [u8; 32] = [0x5a; 32];
const TWEAK: [u8; 32] = [0xa5; 32];

/// The two directions of one construction, as closures over a buffer.
trait Wide {
    fn enc(&self, buf: &mut [u8]);
    fn dec(&self, buf: &mut [u8]);
}

impl<S, B> Wide for Adiantum<S, B>
where
    S: KeyIvInit<KeySize = U32, IvSize = U24> + StreamCipher,
    B: cipher::BlockCipherEncrypt
        + cipher::BlockCipherDecrypt
        + KeyInit<KeySize = U32>
        + cipher::BlockSizeUser<BlockSize = cipher::consts::U16>,
{
    fn enc(&self, buf: &mut [u8]) {
        self.encrypt_in_place(&TWEAK, buf).unwrap();
    }
    fn dec(&self, buf: &mut [u8]) {
        self.decrypt_in_place(&TWEAK, buf).unwrap();
    }
}

impl<S, B> Wide for HPolyC<S, B>
where
    S: KeyIvInit<KeySize = U32, IvSize = U24> + StreamCipher,
    B: cipher::BlockCipherEncrypt
        + cipher::BlockCipherDecrypt
        + KeyInit<KeySize = U32>
        + cipher::BlockSizeUser<BlockSize = cipher::consts::U16>,
{
    fn enc(&self, buf: &mut [u8]) {
        self.encrypt_in_place(&TWEAK, buf).unwrap();
    }
    fn dec(&self, buf: &mut [u8]) {
        self.decrypt_in_place(&TWEAK, buf).unwrap();
    }
}

fn our_rows<C: Wide>(s: &mut crate::Speed, alg: &str, backend: &str, c: &C) {
    for (mode, dec) in [("enc", false), ("dec", true)] {
        s.row(alg, mode, backend, |size| {
            let mut buf = vec![0x11u8; size];
            Some(move || {
                if dec {
                    c.dec(black_box(&mut buf));
                } else {
                    c.enc(black_box(&mut buf));
                }
                black_box(&buf);
            })
        });
    }
}

/// The `adiantum` 0.2 crate (16..=4096-byte messages, multiples of 16),
/// composed as its users compose it: RustCrypto `chacha20`'s `XChaCha12`
/// and `aes::Aes256`.
fn peer_rows(s: &mut crate::Speed, alg: &str) {
    type Peer = rc_adiantum::Cipher<rc_chacha20::XChaCha12, aes::Aes256>;
    let peer = Peer::new(&KEY.into());
    let peer = &peer;
    for (mode, dec) in [("enc", false), ("dec", true)] {
        s.peer_row(alg, mode, "adiantum-0.2", |size| {
            if !(16..=4096).contains(&size) || size % 16 != 0 {
                return None;
            }
            let mut buf = vec![0x11u8; size];
            Some(move || {
                if dec {
                    peer.decrypt(black_box(&mut buf), &TWEAK);
                } else {
                    peer.encrypt(black_box(&mut buf), &TWEAK);
                }
                black_box(&buf);
            })
        });
    }
}

/// Measure this family's rows.
pub fn rows(s: &mut crate::Speed) {
    let backend = format!("{}+{}", chacha_simd::backend(), adiantum_simd::backend());

    let a12 = adiantum_simd::AdiantumXChaCha12Aes::new(&KEY);
    our_rows(s, "adiantum-xchacha12-aes", &backend, &a12);
    peer_rows(s, "adiantum-xchacha12-aes");

    let a20 = adiantum_simd::AdiantumXChaCha20Aes::new(&KEY);
    our_rows(s, "adiantum-xchacha20-aes", &backend, &a20);

    let h12 = HPolyC::<chacha_simd::XChaCha12, aes::Aes256>::new(&KEY);
    our_rows(s, "hpolyc-xchacha12-aes", &backend, &h12);
}
