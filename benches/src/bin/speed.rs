//! `speed`: the tcrypt-style throughput table of the workspace.
//!
//! `cargo run --release -p benches --bin speed -- [--peers] [--alg NAME]
//! [--backend NAME] [--sizes 16,64,...] [--quick] [--markdown] [--svg DIR]`
//!
//! Built with the `zeroize` feature (`--features zeroize`), `sm4-simd` and
//! `sm4-mac` wipe their stages, counter blocks and key copies after use,
//! and our rows read `<backend>+zeroize`.
//!
//! `--svg DIR` also writes one chart per algorithm family into DIR
//! (`speed-sm4.svg`, `speed-sm3.svg`, `speed-chacha.svg`,
//! `speed-adiantum.svg`), titled with the CPU model and the commit.
//!
//! The "AVX2-class CPU" table of `docs/performance.md` (our `avx` backends
//! beside libgcrypt's, OpenSSL's and libsodium's AVX2 code, alternating
//! runs) comes from `scripts/avx2-table.sh`, which runs this binary.

fn main() {
    let opts = benches::Options::from_args();
    let mut s = benches::Speed::new(opts);
    eprintln!("estimated clock: {:.2} GHz", s.hz / 1e9);
    benches::speed::all(&mut s);
    s.print();
    if let Some(dir) = &s.opts.svg {
        match benches::chart::write_charts(s.rows(), dir) {
            Ok(files) => files.iter().for_each(|f| eprintln!("wrote {f}")),
            Err(e) => {
                eprintln!("speed --svg: {e}");
                std::process::exit(1);
            }
        }
    }
}
