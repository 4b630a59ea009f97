//! `tlcpspeed`: TLCP bulk transfer (16 KiB records, client to server in
//! memory, both sides' work) and full handshakes per second, for each
//! suite, as one JSON object like `tlcp/interop/bench_tongsuo.py`'s:
//! `{"ECC_SM4_CBC_SM3": {"bulk_mb_s": x, "handshakes_per_s": y}, ...}`.
//! `scripts/tlcp-speed.sh` runs both and prints the table.
//!
//! `cargo run --release -p benches --features tls --bin tlcpspeed -- [SECONDS]`

use std::time::Instant;

fn main() {
    let seconds: f64 = std::env::args()
        .nth(1)
        .map_or(2.0, |s| s.parse().expect("seconds"));
    let mut out = Vec::new();
    for suite in tlcp::CipherSuite::ALL {
        let (client, server) = benches::tlcp::configs(suite);
        let mut pair = benches::tlcp::Pair::connect(&client, &server);
        let data = benches::buffer(64 * 16384);
        let mut best = 0f64;
        for _ in 0..3 {
            let (mut bytes, start) = (0usize, Instant::now());
            while start.elapsed().as_secs_f64() < seconds / 3.0 {
                pair.transfer(&data);
                bytes += data.len();
            }
            best = best.max(bytes as f64 / start.elapsed().as_secs_f64() / 1e6);
        }
        let (mut n, start) = (0usize, Instant::now());
        while start.elapsed().as_secs_f64() < seconds / 2.0 {
            std::hint::black_box(benches::tlcp::Pair::connect(&client, &server));
            n += 1;
        }
        let per_s = n as f64 / start.elapsed().as_secs_f64();
        out.push(format!(
            "\"{}\": {{\"bulk_mb_s\": {best:.1}, \"handshakes_per_s\": {per_s:.1}}}",
            suite.name()
        ));
    }
    println!("{{{}}}", out.join(", "));
}
