//! The checks, one module per crate, and what they share: marking bytes
//! secret or public, and the tally of what ran on which backend.

mod adiantum;
mod chacha;
mod mac;
mod nhpoly1305;
mod planted;
mod rustls_sm;
mod sm3;
mod sm4;
mod tlcp;

use std::collections::BTreeSet;
use std::hint::black_box;

use sm4_simd::valgrind;

/// Message lengths (public) for the ciphers and hashes: empty, partial
/// blocks, whole blocks, and past 1024 bytes, where the widest kernels of
/// every backend run (SM4's 64-block stages, ChaCha's 8- and 16-block
/// passes, NH's 1024-byte units) with a tail after them. Small enough that
/// the whole run takes a minute or two under valgrind.
const LENGTHS: [usize; 8] = [0, 1, 15, 16, 17, 100, 1024, 2065];

/// `len` bytes of a fixed pattern, marked secret.
fn secret_vec(len: usize, seed: u8) -> Vec<u8> {
    let mut v: Vec<u8> = (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect();
    valgrind::mark_secret(&mut v);
    v
}

/// `N` bytes of a fixed pattern, marked secret (the copy out keeps the mark).
fn secret_array<const N: usize>(seed: u8) -> [u8; N] {
    let mut a = [0u8; N];
    for (i, b) in a.iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(31).wrapping_add(seed);
    }
    valgrind::mark_secret(&mut a);
    a
}

/// Mark `bytes` secret again (an output fed back as the next input).
fn secret(bytes: &mut [u8]) {
    valgrind::mark_secret(bytes);
}

/// An output: public from here on (ciphertexts, tags, digests are what an
/// attacker sees), then read so that the compiler keeps it.
fn public(bytes: &mut [u8]) {
    valgrind::mark_public(bytes);
    black_box(bytes);
}

/// Backends valgrind 3.19 cannot execute, named here rather than left to
/// valgrind's CPUID (which hides AVX-512, GFNI, VAES and VPCLMULQDQ): they
/// are never run by this check. `cttime` (benches) times them instead.
pub(crate) const VALGRIND_CANNOT_RUN: &[&str] = &[
    "sm4 gfni (GFNI, AVX-512)",
    "sm4 gfni256 (GFNI, VPCLMULQDQ)",
    "sm4 vaes (VAES)",
    "ghash vpclmul (AVX-512)",
    "ghash vpclmul256 (VPCLMULQDQ)",
    "sm3 avx512vl",
    "sm3 digest_many avx512",
    "chacha avx512",
    "chacha avx512zmm",
    "nhpoly1305 avx512",
];

/// What ran: (crate, backend, operation) triples.
#[derive(Default)]
pub(crate) struct Tally {
    runs: BTreeSet<(&'static str, String, &'static str)>,
}

impl Tally {
    /// Operation `op` of `family` ran on `backend` (each run with several
    /// lengths, keys and nonces counts once).
    fn ran(&mut self, family: &'static str, backend: &str, op: &'static str) {
        self.runs.insert((family, backend.to_string(), op));
    }

    fn print(&self) {
        let ops: BTreeSet<_> = self.runs.iter().map(|(f, _, op)| (f, op)).collect();
        let backends: BTreeSet<_> = self.runs.iter().map(|(f, b, _)| (f, b)).collect();
        println!(
            "ctcheck: {} operations on {} crate x backend configurations: {} runs, no report expected",
            ops.len(),
            backends.len(),
            self.runs.len()
        );
        let families: BTreeSet<_> = self.runs.iter().map(|(f, _, _)| *f).collect();
        for family in families {
            let names: BTreeSet<_> = backends
                .iter()
                .filter(|(f, _)| **f == family)
                .map(|(_, b)| b.as_str())
                .collect();
            let n = self.runs.iter().filter(|(f, _, _)| *f == family).count();
            println!(
                "  {family:<16} {:<24} {n} {}",
                names.into_iter().collect::<Vec<_>>().join(" "),
                if n == 1 { "run" } else { "runs" }
            );
        }
        println!(
            "  not run (valgrind cannot): {}",
            VALGRIND_CANNOT_RUN.join(", ")
        );
    }
}

pub(crate) fn main() -> i32 {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let under_valgrind = valgrind::running_on_valgrind();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [] => {}
        ["--planted-leak", kind] => return planted::run(kind),
        _ => {
            eprintln!("usage: ctcheck [--planted-leak table|branch]");
            return 2;
        }
    }
    if under_valgrind && !valgrind::DECLASSIFIES {
        eprintln!(
            "ctcheck: built without --cfg ct_valgrind, so the intended branches on a tag \
             comparison's answer would be reported; rebuild with \
             RUSTFLAGS='--cfg ct_valgrind'"
        );
        return 2;
    }
    if !under_valgrind {
        println!("ctcheck: not under valgrind: the operations run, nothing is checked");
    }
    let mut tally = Tally::default();
    sm4::check(&mut tally);
    sm3::check(&mut tally);
    chacha::check(&mut tally);
    nhpoly1305::check(&mut tally);
    adiantum::check(&mut tally);
    mac::check(&mut tally);
    rustls_sm::check(&mut tally);
    tlcp::check(&mut tally);
    tally.print();
    0
}
