//! `armcount`: run one row of the `speed` table untimed, for instruction
//! counting under an emulator (scripts/arm-perf.sh runs it under
//! qemu-aarch64 with an instruction-counting plugin).
//!
//! `armcount --list` prints every row's id (`alg/mode/backend`, the
//! RustCrypto peers as `alg/mode/peer:name`), one a line;
//! `armcount ID SIZE CALLS` builds that row for SIZE-byte messages, calls
//! it CALLS times and prints `bytes B`, the bytes one call processes (a
//! row that hashes several messages per call says so here). Two runs with
//! different CALLS, subtracted, give the instructions of the calls alone:
//! (count(c1) - count(c0)) / ((c1 - c0) * B) instructions per byte.
//!
//! The rows are the `speed` tool's (src/speed/*.rs): a row added there is
//! a row here.

use benches::{Count, Speed};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let count = match args.as_slice() {
        [l] if l == "--list" => Count::List,
        [id, size, calls] => match (size.parse(), calls.parse()) {
            (Ok(size), Ok(calls)) => Count::Run {
                id: id.clone(),
                size,
                calls,
            },
            _ => usage(),
        },
        _ => usage(),
    };
    let mut s = Speed::counting(count.clone());
    benches::speed::all(&mut s);
    if let Count::Run { id, size, .. } = count {
        match s.counted() {
            Some(Some(bytes)) => println!("bytes {bytes}"),
            Some(None) => {
                eprintln!("armcount: row {id} does not take {size}-byte messages");
                std::process::exit(3);
            }
            None => {
                eprintln!("armcount: no row {id} (see --list)");
                std::process::exit(2);
            }
        }
    }
}

fn usage() -> ! {
    eprintln!("usage: armcount --list | armcount ID SIZE CALLS");
    std::process::exit(2);
}
