//! Constant-time check under Valgrind memcheck: the key and the plaintext
//! are marked undefined, so any branch or memory address that depends on
//! them is reported. Runs the `soft` and `avx` backends (Valgrind does not
//! emulate AVX-512).
//!
//! ```text
//! cargo build --release --example valgrind_ct -p chacha-simd
//! valgrind --error-exitcode=3 target/release/examples/valgrind_ct
//! ```
//! With `SANITY=1` it adds one deliberate key-dependent branch, to show that
//! the check does detect one. Natively the client requests are no-ops.

use std::hint::black_box;

use chacha_simd::{Backend, ChaCha, Extended, Ietf, Legacy, R8, R12, R20, Rounds, Variant};
use cipher::{StreamCipher, StreamCipherSeek};

/// A Valgrind client request (x86_64 only; a no-op elsewhere and natively).
fn client_request(req: u64, p: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let args: [u64; 6] = [req, p as u64, len as u64, 0, 0, 0];
        let mut res: u64 = 0;
        // SAFETY: Valgrind's documented "special instruction" preamble: the
        // rotates of rdi by 64 bits in total leave it unchanged (declared
        // clobbered anyway), `xchg rbx, rbx` is a no-op; outside Valgrind
        // nothing happens and rdx keeps its value. `args` outlives the asm.
        unsafe {
            core::arch::asm!(
                "rol rdi, 3", "rol rdi, 13", "rol rdi, 61", "rol rdi, 51", "xchg rbx, rbx",
                inout("rdx") res, in("rax") args.as_ptr(), out("rdi") _,
            );
        }
        black_box(res);
    }
    #[cfg(not(target_arch = "x86_64"))]
    black_box((req, p, len));
}

fn undefined(b: &[u8]) {
    client_request(0x4D43_0001, b.as_ptr(), b.len());
}

fn defined(b: &[u8]) {
    client_request(0x4D43_0002, b.as_ptr(), b.len());
}

fn run<R: Rounds, V: Variant>(b: Backend) {
    let nlen = <V::NonceSize as cipher::typenum::Unsigned>::USIZE;
    let key = [7u8; 32];
    let nonce = [9u8; 24];
    undefined(&key);
    if std::env::var("SANITY").is_ok() && black_box(&key)[0] == 7 {
        black_box(1);
    }
    let mut c = ChaCha::<R, V>::with_backend(&key, &nonce[..nlen], b).unwrap();
    for len in [
        1usize, 63, 64, 65, 128, 200, 256, 300, 511, 512, 600, 1100, 2100,
    ] {
        let mut buf = vec![0u8; len];
        undefined(&buf);
        c.apply_keystream(&mut buf);
        defined(&buf);
        black_box(&buf);
    }
    c.seek(1000u32);
    let mut buf = vec![0u8; 77];
    c.apply_keystream(&mut buf);
    defined(&buf);
    black_box(&buf);
    let out = chacha_simd::hchacha_with_backend::<R>(b, &key, &[3u8; 16]).unwrap();
    defined(&out);
    black_box(out);
}

fn main() {
    for b in Backend::available() {
        eprintln!("valgrind_ct: {}", b.name());
        run::<R20, Ietf>(b);
        run::<R12, Extended>(b);
        run::<R8, Legacy>(b);
    }
}
