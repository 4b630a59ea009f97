//! Drop-in naming: code written against RustCrypto `sm3` 0.5 builds
//! against the workspace's `sm3-simd` with only the crate name in its paths
//! changed. Each macro is one piece of user code, expanded with `$c` =
//! `rc_sm3` (RustCrypto) and `$c` = `sm3_simd` (ours); both must give the same
//! bytes.
#![cfg(feature = "sm3")]

macro_rules! hash_names {
    ($c:ident) => {{
        use $c::digest::{FixedOutputReset, Update};
        use $c::{Digest, Sm3};

        let mut out = Vec::new();
        // `Digest` calls, as in RustCrypto's example.
        let mut hasher = Sm3::new();
        Digest::update(&mut hasher, b"hello world");
        out.extend_from_slice(&hasher.finalize());
        out.extend_from_slice(&Sm3::digest(b"abc"));
        // The lower-level traits through the `digest` re-export.
        let mut h = <Sm3 as Default>::default();
        Update::update(&mut h, &[0x61; 1000]);
        out.extend_from_slice(&h.finalize_fixed_reset());
        // The block-level core under both of its paths.
        let _core: $c::Sm3Core = Default::default();
        let _core: $c::block_api::Sm3Core = Default::default();
        // HMAC and HKDF over the hasher.
        let mut mac = <hmac::Hmac<Sm3> as hmac::KeyInit>::new_from_slice(b"key").unwrap();
        hmac::Mac::update(&mut mac, b"message");
        out.extend_from_slice(&hmac::Mac::finalize(mac).into_bytes());
        let mut okm = [0u8; 50];
        hkdf::Hkdf::<Sm3>::new(Some(b"salt"), b"ikm")
            .expand(b"info", &mut okm)
            .unwrap();
        out.extend_from_slice(&okm);
        out
    }};
}

#[test]
fn same_code_same_bytes() {
    assert_eq!(hash_names!(sm3_simd), hash_names!(rc_sm3));
}
