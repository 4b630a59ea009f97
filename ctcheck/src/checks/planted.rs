//! The self-test: operations that leak on purpose, which memcheck must
//! report (the test script requires valgrind to fail on each), so that a
//! passing check means something.

use std::hint::black_box;

use super::secret_array;

/// A lookup table in memory, as a table-driven S-box would use.
static TABLE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = (i as u8).wrapping_mul(7) ^ 0x63;
        i += 1;
    }
    t
};

/// Run the leak `kind`: "table" (a load at an address computed from a
/// secret byte) or "branch" (a jump on a secret byte). Returns the exit
/// status; valgrind's `--error-exitcode` replaces it when it reports.
pub(super) fn run(kind: &str) -> i32 {
    let key = secret_array::<16>(0x80);
    match kind {
        "table" => {
            let mut x = 0u8;
            for &k in &key {
                x ^= TABLE[usize::from(black_box(k))];
            }
            black_box(x);
        }
        "branch" => {
            let mut taken = 0;
            for &k in &key {
                if black_box(k) & 1 == 1 {
                    taken = black_box(taken + 1);
                } else {
                    black_box(());
                }
            }
            black_box(taken);
        }
        _ => {
            eprintln!("ctcheck: --planted-leak takes `table` or `branch`");
            return 2;
        }
    }
    println!("ctcheck: planted leak `{kind}` ran (under valgrind, memcheck must report it)");
    0
}
