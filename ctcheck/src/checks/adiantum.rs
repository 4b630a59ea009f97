//! Adiantum and HPolyC (XChaCha12 and XChaCha20, AES-256), encrypt and
//! decrypt, with the backends the crates pick on this CPU (under valgrind's
//! CPUID: chacha avx, nhpoly1305 avx, AES-NI); their parts run on every
//! backend in the other modules.

use adiantum_simd::{Adiantum, HPolyC};
use aes::Aes256;
use chacha_simd::{XChaCha12, XChaCha20};

use super::{LENGTHS, Tally, public, secret, secret_array, secret_vec};

pub(super) fn check(tally: &mut Tally) {
    let backends = format!(
        "chacha {}, nh {}",
        chacha_simd::backend(),
        nhpoly1305::backend()
    );
    macro_rules! wide {
        ($($ty:ty, $op:literal;)*) => {$(
            let key = secret_array::<32>(60);
            let cipher = <$ty>::new(&key);
            for len in LENGTHS.into_iter().filter(|&l| l >= 16).chain([4096]) {
                let tweak = secret_vec(32, 61);
                let mut buf = secret_vec(len, 62);
                cipher.encrypt_in_place(&tweak, &mut buf).expect("at least 16 bytes");
                public(&mut buf);
                secret(&mut buf);
                cipher.decrypt_in_place(&tweak, &mut buf).expect("at least 16 bytes");
                public(&mut buf);
            }
            tally.ran("adiantum", &backends, $op);
        )*};
    }
    wide! {
        Adiantum<XChaCha12, Aes256>, "Adiantum-XChaCha12-AES";
        Adiantum<XChaCha20, Aes256>, "Adiantum-XChaCha20-AES";
        HPolyC<XChaCha12, Aes256>, "HPolyC-XChaCha12-AES";
        HPolyC<XChaCha20, Aes256>, "HPolyC-XChaCha20-AES";
    }
}
