//! Cycles per byte of each SM4-GCM GHASH engine this CPU runs (one runner
//! call per message, the key table set up once), beside RustCrypto's
//! `ghash` 0.6.
//!
//! `chrt -f 10 cargo run --release -p benches --example ghash_cycles
//! [-- LEN...]` (default 4096 bytes; SCHED_FIFO, since the cores are
//! shared).

use benches::{buffer, estimate_hz, time_best};
use ghash::GHash;
use ghash::universal_hash::UniversalHash;
use sm4_simd::{Backend, GhashHook};
use std::hint::black_box;

fn main() {
    let lens: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a message length in bytes"))
        .collect();
    let lens = if lens.is_empty() { vec![4096] } else { lens };
    let hz = estimate_hz();
    println!("estimated clock: {:.2} GHz", hz / 1e9);
    let h = [0x5au8; 16];
    for &len in &lens {
        let msg = buffer(len);
        let cpb = |secs: f64| secs * hz / len as f64;
        for b in Backend::available() {
            for e in b.ghash_engines() {
                let hook = GhashHook::new(&h, b, e).expect("an available pair");
                let mut s = [0u8; 16];
                let t = time_best(
                    &mut || hook.update_padded(black_box(&mut s), black_box(&msg)),
                    false,
                );
                black_box(s);
                println!(
                    "{len:>6} B  {:>8}+{:<8} {:6.3} c/B",
                    b.name(),
                    e.name(),
                    cpb(t)
                );
            }
        }
        let g = GHash::new(&h.into());
        let t = time_best(
            &mut || {
                let mut g = g.clone();
                g.update_padded(black_box(&msg));
                black_box(g.finalize());
            },
            false,
        );
        println!("{len:>6} B  {:>17} {:6.3} c/B", "ghash 0.6 (peer)", cpb(t));
    }
}
