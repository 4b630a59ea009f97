//! NH, NHPoly1305 (incremental and one-shot, and through `UniversalHash`)
//! on each backend, and Poly1305.

use nhpoly1305::{Backend, Nh, NhPoly1305, Poly1305};

use super::{LENGTHS, Tally, public, secret_array, secret_vec};

/// Not run: valgrind cannot execute AVX-512.
const SKIPPED: [Backend; 1] = [Backend::Avx512];

pub(super) fn check(tally: &mut Tally) {
    for b in Backend::available().filter(|b| !SKIPPED.contains(b)) {
        let name = b.name();
        nh(b);
        tally.ran("nhpoly1305", name, "NH");
        nhpoly1305(b);
        tally.ran("nhpoly1305", name, "NHPoly1305");
    }
    poly1305();
    tally.ran("poly1305", "one backend", "Poly1305");
}

fn nh(b: Backend) {
    let key = secret_array::<{ nhpoly1305::NH_KEY_SIZE }>(50);
    for len in [16, 32, 48, 64, 1008, 1024] {
        let msg = secret_vec(len, 51);
        let mut out = nhpoly1305::nh_with_backend(&key, &msg, b)
            .expect("available")
            .expect("a multiple of 16 bytes");
        public(&mut out);
    }
    let nh = Nh::with_backend(&key, b).expect("available");
    let sums = nh.hash_units(&secret_vec(2048 + 48, 52));
    for s in sums {
        public(&mut s.to_le_bytes());
    }
}

fn nhpoly1305(b: Backend) {
    use universal_hash::UniversalHash;
    let key = secret_array::<{ nhpoly1305::KEY_SIZE }>(53);
    let mut h = NhPoly1305::with_backend(&key, b).expect("available");
    for len in LENGTHS.into_iter().chain([1040, 3000]) {
        let msg = secret_vec(len, 54);
        public(&mut h.oneshot(&msg));
        h.update(&msg);
        public(&mut h.finalize_reset());
    }
    // The `UniversalHash` trait: whole 16-byte blocks.
    let mut h = NhPoly1305::with_backend(&key, b).expect("available");
    let blocks: Vec<nhpoly1305::Block> = secret_vec(16 * 70, 55)
        .chunks_exact(16)
        .map(|c| nhpoly1305::Block::try_from(c).expect("16 bytes"))
        .collect();
    UniversalHash::update(&mut h, &blocks);
    public(&mut UniversalHash::finalize(h));
}

fn poly1305() {
    let r = secret_array::<16>(56);
    for len in LENGTHS.into_iter().chain([48, 64]) {
        let msg = secret_vec(len, 57);
        let mut p = Poly1305::new(&r);
        p.update(&msg);
        public(&mut p.finalize());
        // The short paths (up to 64 bytes) and the long one.
        let p = Poly1305::new(&r);
        public(&mut p.oneshot(&msg));
        if let Some((first, rest)) = msg.split_first_chunk::<16>() {
            public(&mut p.oneshot_prefixed(first, rest));
        }
    }
}
