//! `speed` rows for the `sm4_mac` family: CMAC, XCBC-MAC and CBC-MAC over
//! each SM4 backend this CPU has, `cmac::Cmac` over our `Sm4` (to show that
//! the composition costs nothing), and RustCrypto `cmac` over RustCrypto
//! `sm4` as the peer.

use digest::Mac;
use std::hint::black_box;

/// One call = one whole MAC of a `size`-byte message: copy the keyed
/// instance (subkeys already derived, as a user keeping one per key would),
/// absorb, finalize.
fn mac_row<M: Mac + Clone>(s: &mut crate::Speed, alg: &str, backend: &str, peer: bool, keyed: M) {
    let make = |size: usize| {
        let msg = crate::buffer(size);
        let keyed = keyed.clone();
        Some(move || {
            let mut mac = keyed.clone();
            mac.update(black_box(&msg));
            black_box(mac.finalize().into_bytes());
        })
    };
    if peer {
        s.peer_row(alg, "sm4", backend, make);
    } else {
        s.row(alg, "sm4", backend, make);
    }
}

/// Measure this family's rows.
pub fn rows(s: &mut crate::Speed) {
    use cipher::KeyInit;
    use digest::common::InnerInit;
    use sm4_mac::{Sm4CbcMac, Sm4Cmac, Sm4Xcbc};

    let key = [0x42u8; 16];
    for b in sm4_simd::Backend::available() {
        let name = b.name();
        if s.wants("cmac", name) {
            mac_row(
                s,
                "cmac",
                name,
                false,
                Sm4Cmac::with_backend(&key, b).unwrap(),
            );
        }
        if s.wants("xcbc", name) {
            mac_row(
                s,
                "xcbc",
                name,
                false,
                Sm4Xcbc::with_backend(&key, b).unwrap(),
            );
        }
        if s.wants("cbcmac", name) {
            mac_row(
                s,
                "cbcmac",
                name,
                false,
                Sm4CbcMac::with_backend(&key, b).unwrap(),
            );
        }
    }
    if s.wants("cmac", "generic-cmac-over-ours") {
        let c = sm4_simd::Sm4::new(&key.into());
        mac_row(
            s,
            "cmac",
            "generic-cmac-over-ours",
            false,
            cmac::Cmac::inner_init(c),
        );
    }
    mac_row(
        s,
        "cmac",
        "rustcrypto-cmac-sm4",
        true,
        cmac::Cmac::<rc_sm4::Sm4>::new(&key.into()),
    );
}
