//! SM3: one message on each backend, `digest_many` on each engine, and
//! HMAC-SM3 through the `hmac` crate.

use digest::{Digest, KeyInit, Mac};
use sm3_simd::{Backend, Lanes, Sm3};

use super::{LENGTHS, Tally, public, secret_vec};

/// Not run: valgrind cannot execute AVX-512.
pub(super) const SKIPPED: [Backend; 1] = [Backend::Avx512Vl];
const SKIPPED_LANES: [Lanes; 1] = [Lanes::Avx512];

pub(super) fn check(tally: &mut Tally) {
    for b in Backend::available().filter(|b| !SKIPPED.contains(b)) {
        for len in LENGTHS.into_iter().chain([55, 56, 64]) {
            let mut h = Sm3::with_backend(b).expect("available");
            h.update(secret_vec(len, 30));
            public(&mut h.finalize());
        }
        tally.ran("sm3", b.name(), "Sm3");
    }
    // The stragglers of `digest_many` go to the one-message backend that
    // the CPU picks (under valgrind's CPUID: avx).
    for lanes in Lanes::available().filter(|l| !SKIPPED_LANES.contains(l)) {
        // More messages than lanes, of unequal lengths.
        let msgs: Vec<Vec<u8>> = (0..19)
            .map(|i| secret_vec(LENGTHS[i % LENGTHS.len()] + i, i as u8))
            .collect();
        let refs: Vec<&[u8]> = msgs.iter().map(Vec::as_slice).collect();
        let mut out = vec![[0u8; 32]; refs.len()];
        sm3_simd::digest_many_with(lanes, &refs, &mut out).expect("as many outputs");
        for o in &mut out {
            public(o);
        }
        tally.ran("sm3 digest_many", lanes.name(), "digest_many");
    }
    for key_len in [16, 64, 100] {
        for len in LENGTHS {
            let mut mac =
                hmac::Hmac::<Sm3>::new_from_slice(&secret_vec(key_len, 31)).expect("any key");
            mac.update(&secret_vec(len, 32));
            public(&mut mac.finalize().into_bytes());
        }
    }
    tally.ran("sm3", sm3_simd::backend(), "HMAC-SM3");
}
