//! Drop-in naming: code written against RustCrypto `cmac` 0.8 builds
//! against this crate with only the crate name in its paths changed. The
//! macro is one piece of user code, expanded with `$c` = `cmac`
//! (RustCrypto) and `$c` = `sm4_mac` (this crate); both must give the same
//! tags, over AES-128 and over SM4.

macro_rules! cmac_names {
    ($c:ident, $cipher:ty) => {{
        use $c::{Cmac, Mac, digest::KeyInit};

        let mut mac = Cmac::<$cipher>::new_from_slice(b"very secret key.").unwrap();
        mac.update(b"input message");
        let tag = mac.clone().finalize().into_bytes();
        mac.verify(&tag).unwrap();
        // The root re-exports and `Mac::new` from an `Array` key.
        let key = $c::digest::Key::<Cmac<$cipher>>::from(*b"another 16 bytes");
        let mut mac = <Cmac<$cipher> as $c::KeyInit>::new(&key);
        mac.update(&[0x5a; 100]);
        let mut out = tag.to_vec();
        out.extend_from_slice(&mac.finalize().into_bytes());
        out
    }};
}

#[test]
fn same_code_same_tags() {
    assert_eq!(
        cmac_names!(sm4_mac, aes::Aes128),
        cmac_names!(cmac, aes::Aes128)
    );
    assert_eq!(
        cmac_names!(sm4_mac, sm4_simd::Sm4),
        cmac_names!(cmac, rc_sm4::Sm4)
    );
}
