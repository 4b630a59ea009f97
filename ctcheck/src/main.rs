//! Constant-time check of every public operation of every crate, on every
//! backend valgrind can execute: keys, nonces, IVs, tweaks, plaintexts,
//! AADs and hash inputs are marked secret (memcheck's "undefined"), outputs
//! are marked public before anything reads them, and memcheck reports every
//! branch and memory address that depends on a secret. Lengths are public.
//!
//! ```text
//! RUSTFLAGS='--cfg ct_valgrind' CARGO_TARGET_DIR=target/ctcheck \
//!     cargo build --release -p ctcheck
//! valgrind --error-exitcode=3 target/ctcheck/release/ctcheck
//! valgrind --error-exitcode=3 target/ctcheck/release/ctcheck --planted-leak branch  # must fail
//! ```
//! `--cfg ct_valgrind` makes the crates declare their declassification
//! points (a tag comparison's answer, XTS's equal-key-halves answer) to
//! valgrind; without it they are reported too. `--planted-leak table` or
//! `--planted-leak branch` runs only a deliberately leaking operation, the
//! self-test that shows the check can fail. Natively the requests are
//! no-ops and the run only shows that everything executes.

#[cfg(target_arch = "x86_64")]
mod checks;

#[cfg(target_arch = "x86_64")]
fn main() {
    std::process::exit(checks::main());
}

#[cfg(not(target_arch = "x86_64"))]
fn main() {
    println!("ctcheck: x86_64 only (valgrind's client requests are written for it)");
}
