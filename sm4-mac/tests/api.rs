//! Trait surface, error handling and formatting.

use aes::Aes128;
use core::fmt::Debug;
use digest::{FixedOutputReset, InvalidLength, KeyInit, Mac, Reset};
use sm4_mac::{CbcMac, Cmac, Xcbc};

fn is_mac<M: Mac + KeyInit + FixedOutputReset + Reset + Clone + Debug>() {}

#[test]
fn trait_surface() {
    is_mac::<Cmac<Aes128>>();
    is_mac::<Xcbc<Aes128>>();
    is_mac::<CbcMac<Aes128>>();
    is_mac::<Cmac<rc_sm4::Sm4>>();
    is_mac::<Xcbc<rc_sm4::Sm4>>();
    is_mac::<CbcMac<rc_sm4::Sm4>>();
}

#[test]
fn bad_key_length_is_an_error() {
    for len in [0, 1, 15, 17, 24, 32] {
        assert_eq!(
            Cmac::<Aes128>::new_from_slice(&vec![0; len]).err(),
            Some(InvalidLength)
        );
        assert_eq!(
            Xcbc::<Aes128>::new_from_slice(&vec![0; len]).err(),
            Some(InvalidLength)
        );
        assert_eq!(
            CbcMac::<Aes128>::new_from_slice(&vec![0; len]).err(),
            Some(InvalidLength)
        );
        assert_eq!(
            Cmac::<rc_sm4::Sm4>::new_from_slice(&vec![0; len]).err(),
            Some(InvalidLength)
        );
        assert_eq!(
            Xcbc::<rc_sm4::Sm4>::new_from_slice(&vec![0; len]).err(),
            Some(InvalidLength)
        );
    }
    assert!(Cmac::<aes::Aes256>::new_from_slice(&[0; 32]).is_ok());
    assert!(Cmac::<aes::Aes256>::new_from_slice(&[0; 16]).is_err());
}

#[test]
fn debug_shows_no_secrets() {
    let key = [0xabu8; 16];
    let mut mac = Cmac::<Aes128>::new(&key.into());
    Mac::update(&mut mac, &[0xcd; 40]);
    assert_eq!(format!("{mac:?}"), "Cmac { .. }");
    assert_eq!(
        format!("{:?}", Xcbc::<Aes128>::new(&key.into())),
        "Xcbc { .. }"
    );
    assert_eq!(
        format!("{:?}", CbcMac::<Aes128>::new(&key.into())),
        "CbcMac { .. }"
    );
}

#[test]
fn clone_and_reset_midstream() {
    let mut mac = Cmac::<Aes128>::new(&[1u8; 16].into());
    Mac::update(&mut mac, &[2; 37]);
    let fork = mac.clone();
    Mac::update(&mut mac, &[3; 20]);
    let mut fork2 = fork.clone();
    Mac::update(&mut fork2, &[3; 20]);
    assert_eq!(mac.clone().finalize(), fork2.finalize());
    Mac::reset(&mut mac);
    let fresh = Cmac::<Aes128>::new(&[1u8; 16].into());
    assert_eq!(mac.finalize(), fresh.finalize());
}

/// With `zeroize`, the SM4 MACs are `ZeroizeOnDrop` (SM4 is).
#[cfg(feature = "zeroize")]
#[test]
fn zeroize_on_drop_when_the_cipher_does() {
    // `cipher` re-exports zeroize when its `zeroize` feature is on.
    fn zod<T: cipher::zeroize::ZeroizeOnDrop>() {}
    zod::<sm4_simd::Sm4>();
    zod::<sm4_mac::Sm4Cmac>();
    zod::<sm4_mac::Sm4Xcbc>();
    zod::<sm4_mac::Sm4CbcMac>();
    // Drop wipes without panicking, mid-message too.
    let mut mac = sm4_mac::Sm4Xcbc::new(&[5u8; 16].into());
    Mac::update(&mut mac, &[1; 33]);
    drop(mac);
}

#[test]
fn algorithm_names() {
    struct Name<T>(core::marker::PhantomData<T>);
    impl<T: cipher::AlgorithmName> core::fmt::Display for Name<T> {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            T::write_alg_name(f)
        }
    }
    fn name<T: cipher::AlgorithmName>() -> String {
        Name::<T>(core::marker::PhantomData).to_string()
    }
    let sm4 = name::<sm4_simd::Sm4>();
    assert_eq!(name::<sm4_mac::Sm4Cmac>(), format!("Cmac<{sm4}>"));
    assert_eq!(name::<sm4_mac::Sm4Xcbc>(), format!("Xcbc<{sm4}>"));
    assert_eq!(name::<sm4_mac::Sm4CbcMac>(), format!("CbcMac<{sm4}>"));
}
