//! The measurement core of the `speed` tool: timing, the clock estimate and
//! the tcrypt-style table. Each algorithm family adds its rows in
//! `src/speed/<family>.rs` through [`Speed::row`] and [`Speed::peer_row`].

use std::hint::black_box;
use std::time::{Duration, Instant};

pub mod chart;
pub mod speed;
#[cfg(feature = "tls")]
pub mod tlcp;
#[cfg(feature = "tls")]
pub mod tls;

/// What the table adds to the backend of our rows: `+zeroize` when
/// `sm4-simd` is built with its `zeroize` feature (this crate's `zeroize`
/// feature, which `tls` turns on), so that the two sets of figures cannot
/// be mistaken for each other.
pub const WIPE_LABEL: &str = if cfg!(feature = "zeroize") {
    "+zeroize"
} else {
    ""
};

/// Message sizes of the table's columns by default, in bytes.
pub const SIZES: [usize; 6] = [16, 64, 256, 1024, 4096, 8192];

/// Command-line options of `speed`.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Also measure the RustCrypto (and other) peer crates, and print ratios.
    pub peers: bool,
    /// Only rows whose backend contains this string.
    pub backend: Option<String>,
    /// Only rows whose algorithm contains this string.
    pub alg: Option<String>,
    /// Only rows whose mode contains this string.
    pub mode: Option<String>,
    /// Shorter timing (for smoke tests); numbers are noisier.
    pub quick: bool,
    /// Print the tables as Markdown.
    pub markdown: bool,
    /// The columns' message sizes (default [`SIZES`]).
    pub sizes: Vec<usize>,
    /// Also draw the charts (one SVG per algorithm family) into this folder.
    pub svg: Option<std::path::PathBuf>,
}

impl Options {
    /// Parse `std::env::args()`; prints usage and exits on `--help`.
    pub fn from_args() -> Self {
        let mut o = Options {
            sizes: SIZES.to_vec(),
            ..Options::default()
        };
        let mut args = std::env::args().skip(1);
        while let Some(a) = args.next() {
            match a.as_str() {
                "--peers" => o.peers = true,
                "--quick" => o.quick = true,
                "--markdown" => o.markdown = true,
                "--backend" => o.backend = args.next(),
                "--alg" => o.alg = args.next(),
                "--mode" => o.mode = args.next(),
                "--svg" => o.svg = args.next().map(Into::into),
                "--sizes" => {
                    let list = args.next().unwrap_or_default();
                    o.sizes = list
                        .split(',')
                        .filter_map(|v| v.trim().parse().ok())
                        .collect();
                    if o.sizes.is_empty() {
                        eprintln!("--sizes takes a comma-separated list of byte counts");
                        std::process::exit(2);
                    }
                }
                _ => {
                    eprintln!(
                        "usage: speed [--peers] [--backend NAME] [--alg NAME] [--mode NAME] [--sizes 16,512,...] [--quick] [--markdown] [--svg DIR]"
                    );
                    std::process::exit(if a == "--help" || a == "-h" { 0 } else { 2 });
                }
            }
        }
        o
    }
}

/// One measured row: best time per call for each size of [`SIZES`].
#[derive(Clone, Debug)]
pub struct Row {
    /// Algorithm, e.g. `sm4`.
    pub alg: String,
    /// Mode or variant, e.g. `ctr`.
    pub mode: String,
    /// Backend name, or the peer crate's name for peer rows.
    pub backend: String,
    /// Whether this row measures a peer crate.
    pub peer: bool,
    /// The message size of each column (the table's header).
    pub sizes: Vec<usize>,
    /// Bytes processed per call, per size column.
    pub bytes: Vec<usize>,
    /// Best seconds per call, per size column (`None`: not measurable).
    pub secs: Vec<Option<f64>>,
    /// The core clock in Hz per size column: the mean of the estimates
    /// taken just before and just after that column was timed (the turbo
    /// clock of these shared machines moves by several percent within a
    /// run, and within a row).
    pub hz: Vec<f64>,
}

impl Row {
    fn mbps(&self, i: usize) -> Option<f64> {
        self.secs[i].map(|s| self.bytes[i] as f64 / s / 1e6)
    }
}

/// What a counting session (the `armcount` tool) does with the rows,
/// instead of timing them.
#[derive(Clone, Debug)]
pub enum Count {
    /// Print every row's id (`alg/mode/backend`, peers as
    /// `alg/mode/peer:name`), one a line, and measure nothing.
    List,
    /// Run the row with this id: build it for `size`-byte messages, then
    /// call it `calls` times, untimed (an instruction counter outside the
    /// process does the measuring).
    Run {
        /// The row's id as [`Count::List`] prints it.
        id: String,
        /// Message size in bytes.
        size: usize,
        /// How many calls (each one message, or a row's multiplier of them).
        calls: u64,
    },
}

/// The `speed` session: options, clock estimate and the rows measured.
#[derive(Debug)]
pub struct Speed {
    /// Options from the command line.
    pub opts: Options,
    /// Estimated core clock in Hz: at the start, then the highest of the
    /// estimates taken around each cell.
    pub hz: f64,
    rows: Vec<Row>,
    count: Option<Count>,
    /// Bytes per call of the row that [`Count::Run`] ran, once it has.
    counted: Option<Option<usize>>,
}

impl Speed {
    /// A new session; estimates the clock.
    pub fn new(opts: Options) -> Self {
        let hz = estimate_hz();
        Speed {
            opts,
            hz,
            rows: Vec::new(),
            count: None,
            counted: None,
        }
    }

    /// A counting session: every row, peers included, is listed or run
    /// untimed as `count` says; no clock estimate, nothing printed but the
    /// list or, see [`Speed::counted`], the run's bytes per call.
    pub fn counting(count: Count) -> Self {
        let opts = Options {
            peers: true,
            sizes: SIZES.to_vec(),
            ..Options::default()
        };
        Speed {
            opts,
            hz: 0.0,
            rows: Vec::new(),
            count: Some(count),
            counted: None,
        }
    }

    /// After a [`Count::Run`] session: `None` if no row had its id,
    /// `Some(None)` if the row does not take that size, else the bytes that
    /// one call processed.
    pub fn counted(&self) -> Option<Option<usize>> {
        self.counted
    }

    /// Whether a row for this algorithm and backend is wanted.
    pub fn wants(&self, alg: &str, backend: &str) -> bool {
        self.opts.alg.as_deref().is_none_or(|a| alg.contains(a))
            && self
                .opts
                .backend
                .as_deref()
                .is_none_or(|b| backend.contains(b))
    }

    /// Measure one of our rows. `make` is called once per size with the
    /// message size and returns the closure to time (one call = one message
    /// of that size, or `multiplier` messages of it; see [`Speed::row_multi`]).
    pub fn row<F, G>(&mut self, alg: &str, mode: &str, backend: &str, make: F)
    where
        F: FnMut(usize) -> Option<G>,
        G: FnMut(),
    {
        self.row_multi(alg, mode, backend, false, 1, make)
    }

    /// Measure a peer crate's row (skipped without `--peers`). The ratio
    /// column compares our rows of the same `alg` and `mode` with it.
    pub fn peer_row<F, G>(&mut self, alg: &str, mode: &str, peer: &str, make: F)
    where
        F: FnMut(usize) -> Option<G>,
        G: FnMut(),
    {
        if self.opts.peers {
            self.row_multi(alg, mode, peer, true, 1, make)
        }
    }

    /// Like [`Speed::row`], but each call processes `multiplier` messages of
    /// the column's size (e.g. 16 independent messages in `digest_many`).
    pub fn row_multi<F, G>(
        &mut self,
        alg: &str,
        mode: &str,
        backend: &str,
        peer: bool,
        multiplier: usize,
        make: F,
    ) where
        F: FnMut(usize) -> Option<G>,
        G: FnMut(),
    {
        self.row_sized(alg, mode, backend, peer, |size| size * multiplier, make)
    }

    /// Like [`Speed::row`], but a call of column `size` processes
    /// `bytes(size)` bytes (e.g. 64 KiB of sectors of the column's size).
    pub fn row_sized<F, G>(
        &mut self,
        alg: &str,
        mode: &str,
        backend: &str,
        peer: bool,
        bytes: impl Fn(usize) -> usize,
        mut make: F,
    ) where
        F: FnMut(usize) -> Option<G>,
        G: FnMut(),
    {
        if !peer && !self.wants(alg, backend) {
            return;
        }
        if self.opts.mode.as_deref().is_some_and(|m| !mode.contains(m)) {
            return;
        }
        if peer && self.opts.alg.as_deref().is_some_and(|a| !alg.contains(a)) {
            return;
        }
        if let Some(count) = &self.count {
            let id = if peer {
                format!("{alg}/{mode}/peer:{backend}")
            } else {
                format!("{alg}/{mode}/{backend}")
            };
            match count {
                Count::List => println!("{id}"),
                Count::Run {
                    id: want,
                    size,
                    calls,
                } if *want == id && self.counted.is_none() => {
                    let f = make(*size).map(|mut f| {
                        for _ in 0..*calls {
                            f();
                        }
                    });
                    self.counted = Some(f.map(|()| bytes(*size)));
                }
                Count::Run { .. } => {}
            }
            return;
        }
        let mut before = estimate_hz();
        let mut secs = Vec::new();
        let mut hz = Vec::new();
        for &size in &self.opts.sizes {
            secs.push(make(size).map(|mut f| time_best(&mut f, self.opts.quick)));
            let after = estimate_hz();
            hz.push((before + after) / 2.0);
            before = after;
        }
        self.hz = hz.iter().fold(self.hz, |a, &b| a.max(b));
        let row = Row {
            alg: alg.into(),
            mode: mode.into(),
            backend: backend.into(),
            peer,
            sizes: self.opts.sizes.clone(),
            bytes: self.opts.sizes.iter().map(|&s| bytes(s)).collect(),
            secs,
            hz,
        };
        eprintln!(
            "measured {} {} {}{}",
            row.alg,
            row.mode,
            row.backend,
            if peer { "" } else { WIPE_LABEL }
        );
        self.rows.push(row);
    }

    /// The rows measured so far.
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// Print the MB/s, cycles/byte and (with peers) ratio tables.
    pub fn print(&self) {
        self.print_table("MB/s (10^6 bytes per second)", |r, i| {
            r.mbps(i).map(|v| format!("{v:.1}"))
        });
        let ghz = |f: fn(f64, f64) -> f64| {
            self.rows
                .iter()
                .flat_map(|r| r.hz.iter().map(|h| h / 1e9))
                .reduce(f)
        };
        let range = match (ghz(f64::min), ghz(f64::max)) {
            (Some(lo), Some(hi)) => format!("{lo:.2}-{hi:.2} GHz"),
            _ => "-".into(),
        };
        self.print_table(
            &format!("cycles/byte (clock estimated before and after each cell: {range})"),
            |r, i| r.secs[i].map(|s| format!("{:.2}", s * r.hz[i] / r.bytes[i] as f64)),
        );
        if self.opts.peers {
            self.print_table(
                "ratio ours/peer (speed; >1 means ours is faster)",
                |r, i| {
                    if r.peer {
                        return None;
                    }
                    // A fused type's row ("ctr:Sm4Ctr") against the peer's
                    // composition ("ctr").
                    let mode = r.mode.split(':').next().unwrap_or(&r.mode);
                    let peer = self
                        .rows
                        .iter()
                        .find(|p| p.peer && p.alg == r.alg && p.mode == mode)?;
                    Some(format!("{:.2}", r.mbps(i)? / peer.mbps(i)?))
                },
            );
        }
    }

    fn print_table(&self, title: &str, cell: impl Fn(&Row, usize) -> Option<String>) {
        let head: Vec<String> = ["algorithm", "mode", "backend"]
            .iter()
            .map(|s| s.to_string())
            .chain(self.opts.sizes.iter().map(|s| s.to_string()))
            .collect();
        let mut lines = vec![head];
        for r in &self.rows {
            let cells: Vec<Option<String>> =
                (0..self.opts.sizes.len()).map(|i| cell(r, i)).collect();
            if cells.iter().all(Option::is_none) {
                continue;
            }
            let mut line = vec![
                r.alg.clone(),
                r.mode.clone(),
                if r.peer {
                    format!("peer:{}", r.backend)
                } else {
                    format!("{}{WIPE_LABEL}", r.backend)
                },
            ];
            line.extend(cells.into_iter().map(|c| c.unwrap_or_else(|| "-".into())));
            lines.push(line);
        }
        println!("\n{title}");
        let widths: Vec<usize> = (0..lines[0].len())
            .map(|c| lines.iter().map(|l| l[c].len()).max().unwrap_or(0))
            .collect();
        for (n, l) in lines.iter().enumerate() {
            let cells: Vec<String> = l
                .iter()
                .enumerate()
                .map(|(c, s)| {
                    if c < 3 {
                        format!("{s:<w$}", w = widths[c])
                    } else {
                        format!("{s:>w$}", w = widths[c])
                    }
                })
                .collect();
            if self.opts.markdown {
                println!("| {} |", cells.join(" | "));
                if n == 0 {
                    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
                    println!("| {} |", rule.join(" | "));
                }
            } else {
                println!("{}", cells.join("  "));
            }
        }
    }
}

/// Best seconds per call of `f`: warm up, then the best of several timed
/// runs of at least 50 ms each (5 ms with `quick`).
pub fn time_best(f: &mut impl FnMut(), quick: bool) -> f64 {
    let (min_run, runs) = if quick {
        (Duration::from_millis(5), 2)
    } else {
        (Duration::from_millis(50), 5)
    };
    // Warm-up, and a first guess of how many calls fill one run.
    let start = Instant::now();
    let mut calls = 0u64;
    while start.elapsed() < min_run / 2 {
        f();
        calls += 1;
    }
    let per_call = start.elapsed().as_secs_f64() / calls as f64;
    let batch = ((min_run.as_secs_f64() / per_call).ceil() as u64).max(1);
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        let t = Instant::now();
        for _ in 0..batch {
            f();
        }
        best = best.min(t.elapsed().as_secs_f64() / batch as f64);
    }
    black_box(());
    best
}

/// Estimate the core clock from a chain of dependent adds (one cycle each):
/// these VMs expose no cycle counter. Best of several runs.
pub fn estimate_hz() -> f64 {
    const ADDS: u64 = 50_000_000;
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let t = Instant::now();
        dependent_adds(ADDS / 10);
        best = best.min(t.elapsed().as_secs_f64());
    }
    ADDS as f64 / best
}

/// `iterations` rounds of 10 dependent adds, so that the loop counter runs
/// beside the chain and the chain sets the pace. The addend is a register:
/// Intel cores from Golden Cove on fold chains of `add reg, imm` at rename,
/// several per cycle (an immediate chain read 14.7 GHz on a 3.x GHz Xeon).
#[cfg(target_arch = "x86_64")]
fn dependent_adds(iterations: u64) {
    let mut x = 0u64;
    // SAFETY: register-only arithmetic; no memory is touched.
    unsafe {
        core::arch::asm!(
            "2:",
            "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
            "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
            "add {x}, {one}", "add {x}, {one}",
            "dec {n}",
            "jnz 2b",
            x = inout(reg) x,
            one = in(reg) 1u64,
            n = inout(reg) iterations => _,
            options(nomem, nostack),
        );
    }
    black_box(x);
}

#[cfg(target_arch = "aarch64")]
fn dependent_adds(iterations: u64) {
    let mut x = 0u64;
    // SAFETY: register-only arithmetic; no memory is touched.
    unsafe {
        core::arch::asm!(
            "2:",
            "add {x}, {x}, 1", "add {x}, {x}, 1", "add {x}, {x}, 1", "add {x}, {x}, 1",
            "add {x}, {x}, 1", "add {x}, {x}, 1", "add {x}, {x}, 1", "add {x}, {x}, 1",
            "add {x}, {x}, 1", "add {x}, {x}, 1",
            "subs {n}, {n}, 1",
            "b.ne 2b",
            x = inout(reg) x,
            n = inout(reg) iterations => _,
            options(nomem, nostack),
        );
    }
    black_box(x);
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn dependent_adds(iterations: u64) {
    let mut x = 0u64;
    for _ in 0..iterations * 10 {
        x = black_box(x + 1);
    }
}

/// A message buffer of `len` bytes.
pub fn buffer(len: usize) -> Vec<u8> {
    vec![0x5a; len]
}
