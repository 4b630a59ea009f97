//! `speed`: the tcrypt-style throughput table of the workspace.
//!
//! `cargo run --release -p benches --bin speed -- [--peers] [--alg NAME]
//! [--backend NAME] [--quick] [--markdown]`

fn main() {
    let opts = benches::Options::from_args();
    let mut s = benches::Speed::new(opts);
    eprintln!("estimated clock: {:.2} GHz", s.hz / 1e9);
    benches::speed::all(&mut s);
    s.print();
}
