//! `speed` rows for the `nhpoly1305` family: NH alone (`nh`/`hash`, every
//! 1024-byte unit NH'd, the values added) and the whole NHPoly1305 per
//! backend, streaming (`nhpoly1305`/`hash`: `update` + `finalize_reset` on
//! a kept hasher) and one-shot (`nhpoly1305`/`oneshot`); our raw Poly1305
//! (`poly1305`/`hash`, backend `ours`) against RustCrypto `poly1305` as a
//! reference row (the peer computes the full MAC, `s` added; the extra cost
//! is one 128-bit addition per message).

use std::hint::black_box;

use nhpoly1305::{Backend, Nh, NhPoly1305, Poly1305};

const KEY: [u8; 1088] = [0x5a; 1088];

/// Measure this family's rows.
pub fn rows(s: &mut crate::Speed) {
    let nh_key: [u8; 1072] = KEY[16..].try_into().unwrap();
    for b in Backend::available() {
        let Some(nh) = Nh::with_backend(&nh_key, b) else {
            continue;
        };
        s.row("nh", "hash", b.name(), |size| {
            let msg = vec![0x11u8; size];
            let nh = nh.clone();
            Some(move || {
                black_box(nh.hash_units(black_box(&msg)));
            })
        });
    }
    for b in Backend::available() {
        let Some(h) = NhPoly1305::with_backend(&KEY, b) else {
            continue;
        };
        s.row("nhpoly1305", "hash", b.name(), |size| {
            let msg = vec![0x11u8; size];
            let mut h = h.clone();
            Some(move || {
                h.update(black_box(&msg));
                black_box(h.finalize_reset());
            })
        });
    }
    for b in Backend::available() {
        let Some(h) = NhPoly1305::with_backend(&KEY, b) else {
            continue;
        };
        s.row("nhpoly1305", "oneshot", b.name(), |size| {
            let msg = vec![0x11u8; size];
            let h = h.clone();
            Some(move || {
                black_box(h.oneshot(black_box(&msg)));
            })
        });
    }
    s.row("poly1305", "hash", "ours", |size| {
        let msg = vec![0x11u8; size];
        Some(move || {
            let mut p = Poly1305::new(black_box(&[0x5a; 16]));
            p.update(black_box(&msg));
            black_box(p.finalize());
        })
    });
    // Reference: RustCrypto's full Poly1305 MAC.
    s.peer_row("poly1305", "hash", "rustcrypto-poly1305", |size| {
        use poly1305::universal_hash::KeyInit;
        let msg = vec![0x11u8; size];
        Some(move || {
            let p = poly1305::Poly1305::new(black_box(&[0x5a; 32]).into());
            black_box(p.compute_unpadded(black_box(&msg)));
        })
    });
}
