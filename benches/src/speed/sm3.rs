//! `speed` rows for the `sm3` family: one message per backend of ours
//! (pinned with the hidden `with_backend` hook), `digest_many` per lane
//! engine (one call hashes `width` messages of the column's size), and the
//! RustCrypto `sm3` crate as the peer of both.

use digest::Digest;
use std::hint::black_box;

/// Measure this family's rows.
pub fn rows(s: &mut crate::Speed) {
    for b in sm3_simd::Backend::available() {
        s.row("sm3", "digest", b.name(), |size| {
            let buf = crate::buffer(size);
            Some(move || {
                let mut h = sm3_simd::Sm3::with_backend(b).expect("available");
                h.update(black_box(&buf));
                black_box(h.finalize());
            })
        });
    }
    s.peer_row("sm3", "digest", "rustcrypto-sm3", |size| {
        let buf = crate::buffer(size);
        Some(move || {
            black_box(rc_sm3::Sm3::digest(black_box(&buf)));
        })
    });

    let mut widest = 1;
    for lanes in sm3_simd::Lanes::available() {
        let n = lanes.width().max(8);
        widest = widest.max(n);
        s.row_multi("sm3", "digest_many", lanes.name(), false, n, |size| {
            let bufs: Vec<Vec<u8>> = (0..n).map(|_| crate::buffer(size)).collect();
            let mut out = vec![[0u8; 32]; n];
            Some(move || {
                let msgs: Vec<&[u8]> = bufs.iter().map(|b| black_box(&b[..])).collect();
                sm3_simd::digest_many_with(lanes, &msgs, &mut out).expect("lengths match");
                black_box(&out);
            })
        });
    }
    if s.opts.peers {
        s.row_multi(
            "sm3",
            "digest_many",
            "rustcrypto-sm3",
            true,
            widest,
            |size| {
                let bufs: Vec<Vec<u8>> = (0..widest).map(|_| crate::buffer(size)).collect();
                Some(move || {
                    for b in &bufs {
                        black_box(rc_sm3::Sm3::digest(black_box(&b[..])));
                    }
                })
            },
        );
    }
}
