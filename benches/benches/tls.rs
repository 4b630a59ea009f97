//! Criterion benches for TLS 1.3 through rustls in memory: bulk transfer
//! in 16 KiB records (TLS_SM4_GCM_SM3 / TLS_SM4_CCM_SM3 on rustls-sm,
//! AES-128-GCM and ChaCha20-Poly1305 on *ring*) and full handshakes
//! (curveSM2 + sm2sig_sm3 against X25519 + ECDSA P-256), both sides' work;
//! bulk transfer on both rustls APIs (`-unbuffered`: `UnbufferedPair`):
//! `cargo bench -p benches --no-default-features --features tls --bench tls`.
use std::hint::black_box;
use std::time::Duration;

use benches::tls::{BULK, HANDSHAKES, Pair, UnbufferedPair, configs, handshake};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("tls13-bulk");
    g.measurement_time(Duration::from_secs(3));
    const RECORD: usize = 16384;
    g.throughput(Throughput::Bytes(RECORD as u64));
    let data = vec![0x5au8; RECORD];
    for case in BULK {
        let mut pair = Pair::new(&case);
        g.bench_function(case.name, |b| b.iter(|| pair.transfer(black_box(&data))));
        let mut pair = UnbufferedPair::new(&case, RECORD);
        let name = format!("{}-unbuffered", case.name);
        g.bench_function(name, |b| b.iter(|| pair.transfer(black_box(&data))));
    }
    g.finish();

    let mut g = c.benchmark_group("tls13-handshake");
    g.measurement_time(Duration::from_secs(3));
    g.throughput(Throughput::Elements(1));
    for case in HANDSHAKES {
        let (client, server) = configs(&case);
        g.bench_function(case.name, |b| {
            b.iter(|| black_box(handshake(&client, &server)))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
