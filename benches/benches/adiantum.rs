//! Criterion benches for Adiantum and HPolyC at the sizes the targets name
//! (512 and 4096 bytes; the `speed` table has no 512-byte column), for
//! regression tracking:
//! `cargo bench -p benches --no-default-features --features adiantum --bench adiantum`.
use std::hint::black_box;

use adiantum_simd::{AdiantumXChaCha12Aes, AdiantumXChaCha20Aes, HPolyC};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const TWEAK: [u8; 32] = [0xa5; 32];

fn bench(c: &mut Criterion) {
    let key = [0x5a; 32];
    let a12 = AdiantumXChaCha12Aes::new(&key);
    let a20 = AdiantumXChaCha20Aes::new(&key);
    let h12 = HPolyC::<chacha_simd::XChaCha12, aes::Aes256>::new(&key);
    let mut g = c.benchmark_group("adiantum");
    for size in [512usize, 4096] {
        g.throughput(Throughput::Bytes(size as u64));
        let mut buf = vec![0x11u8; size];
        g.bench_function(format!("xchacha12-aes/enc/{size}"), |b| {
            b.iter(|| a12.encrypt_in_place(&TWEAK, black_box(&mut buf)).unwrap())
        });
        g.bench_function(format!("xchacha12-aes/dec/{size}"), |b| {
            b.iter(|| a12.decrypt_in_place(&TWEAK, black_box(&mut buf)).unwrap())
        });
        g.bench_function(format!("xchacha20-aes/enc/{size}"), |b| {
            b.iter(|| a20.encrypt_in_place(&TWEAK, black_box(&mut buf)).unwrap())
        });
        g.bench_function(format!("hpolyc-xchacha12-aes/enc/{size}"), |b| {
            b.iter(|| h12.encrypt_in_place(&TWEAK, black_box(&mut buf)).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
