//! `cttime`: a statistical timing test of the main operations on every x86
//! backend of this CPU, for the backends valgrind cannot run (GFNI,
//! AVX-512) and as a second opinion on the others. Not a pass/fail test:
//! timing on a shared machine is noisy. The results are in
//! `docs/constant-time.md`.
//!
//! The method (fixed-vs-random, after Reparaz, Balasch and Verbauwhede's
//! "dudect"): each measurement draws its class at random, so the two
//! classes interleave; class 0 sets the secret inputs (key, nonce,
//! plaintext) to one fixed value, class 1 to random bytes. The fixed value
//! is itself random-looking (drawn once per row), not zeros: an all-zero
//! input draws less power, and under a power limit the clock then runs
//! faster (Hertzbleed), a difference in time that is not the code's. The
//! inputs of a batch of measurements are made before it is measured.
//! The timed region is the operation alone, between `lfence; rdtsc;
//! lfence` and `rdtscp; lfence` (TSC ticks). Welch's t-test compares the
//! classes' means on all measurements and on the measurements below each
//! of several percentiles (cropping the long tail that interrupts and
//! other processes add); the largest |t| is reported. |t| < 4.5 after the
//! stated number of measurements finds no leak; above it, the classes'
//! times differ (or the machine was too noisy: rerun).
//!
//! ```text
//! cargo run --release -p benches --bin cttime -- [--samples N] [--filter TEXT]
//! ```
//! `--samples` per operation and backend (default 1,000,000); `--filter`
//! keeps the rows whose name contains TEXT.

#[cfg(target_arch = "x86_64")]
fn main() {
    timing::main();
}

#[cfg(not(target_arch = "x86_64"))]
fn main() {
    println!("cttime: x86_64 only (it reads the time-stamp counter)");
}

#[cfg(target_arch = "x86_64")]
mod timing {
    use std::hint::black_box;

    use aead::AeadInOut;
    use cipher::{BlockCipherEncrypt, InnerIvInit, StreamCipher};
    use digest::{Digest, Mac};

    /// The threshold the results are judged by: |t| below it finds no leak.
    const T_THRESHOLD: f64 = 4.5;
    /// Bytes of message for the bulk operations.
    const MSG: usize = 256;
    /// Measurements discarded at the start of each row (caches, clocks).
    const WARMUP: usize = 10_000;

    /// Sets up an operation from the secret bytes (untimed) and returns the
    /// ticks of the operation itself.
    type Timed = Box<dyn FnMut(&[u8]) -> u64>;

    /// One row: an operation on a backend.
    struct Row {
        name: String,
        secret_len: usize,
        run: Timed,
    }

    fn row(
        family: &str,
        op: &str,
        backend: &str,
        secret_len: usize,
        run: impl FnMut(&[u8]) -> u64 + 'static,
    ) -> Row {
        Row {
            name: format!("{family} {op} [{backend}]"),
            secret_len,
            run: Box::new(run),
        }
    }

    /// Ticks of `f`, fenced so that neither the operation nor the reads of
    /// the counter move across each other.
    #[inline(always)]
    fn ticks<R>(f: impl FnOnce() -> R) -> u64 {
        use core::arch::x86_64::{__rdtscp, _mm_lfence, _rdtsc};
        let mut aux = 0u32;
        // SAFETY: LFENCE (SSE2) and RDTSC exist on every x86_64 CPU;
        // RDTSCP is checked in `main` before any row runs.
        let start = unsafe {
            _mm_lfence();
            let t = _rdtsc();
            _mm_lfence();
            t
        };
        black_box(f());
        // SAFETY: as above; `aux` is a valid place for the processor id.
        let end = unsafe {
            let t = __rdtscp(&mut aux);
            _mm_lfence();
            t
        };
        end.wrapping_sub(start)
    }

    /// xorshift64*: the class coin and the random secrets (speed matters
    /// here, not quality beyond "unrelated to the operation").
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn fill(&mut self, buf: &mut [u8]) {
            for chunk in buf.chunks_mut(8) {
                let r = self.next().to_le_bytes();
                chunk.copy_from_slice(&r[..chunk.len()]);
            }
        }
    }

    /// Running mean and variance (Welford) of one class.
    #[derive(Clone, Copy, Default)]
    struct Moments {
        n: f64,
        mean: f64,
        m2: f64,
    }

    impl Moments {
        fn push(&mut self, x: f64) {
            self.n += 1.0;
            let d = x - self.mean;
            self.mean += d / self.n;
            self.m2 += d * (x - self.mean);
        }

        fn variance(&self) -> f64 {
            self.m2 / (self.n - 1.0)
        }
    }

    /// Welch's t statistic of two classes.
    fn welch_t(a: &Moments, b: &Moments) -> f64 {
        if a.n < 2.0 || b.n < 2.0 {
            return 0.0;
        }
        let se = (a.variance() / a.n + b.variance() / b.n).sqrt();
        if se == 0.0 {
            return 0.0;
        }
        (a.mean - b.mean) / se
    }

    /// The tests of one row: the classes on all measurements, and on those
    /// below each cropping percentile. Returns the largest |t|, where it
    /// was found ("all" or the percentile), the difference of the classes'
    /// means there (fixed minus random, ticks) and the classes' medians.
    fn analyse(samples: &[(u8, u64)]) -> (f64, String, f64, [u64; 2]) {
        let mut sorted: Vec<u64> = samples.iter().map(|s| s.1).collect();
        sorted.sort_unstable();
        let at = |p: f64| sorted[((sorted.len() - 1) as f64 * p) as usize];
        // Percentiles spread towards the median, finer near the top: 1 -
        // 0.5^(k/2), k = 1..=10 (29% to 97%), plus 99% and 99.9%.
        let mut crops: Vec<(String, u64)> = (1..=10)
            .map(|k| 1.0 - 0.5f64.powf(f64::from(k) / 2.0))
            .chain([0.99, 0.999])
            .map(|p| (format!("p{:.1}", 100.0 * p), at(p)))
            .collect();
        crops.push(("all".to_string(), u64::MAX));
        let mut worst = (0.0f64, String::new(), 0.0f64);
        for (label, limit) in &crops {
            let mut classes = [Moments::default(); 2];
            for &(class, t) in samples.iter().filter(|s| s.1 <= *limit) {
                classes[usize::from(class)].push(t as f64);
            }
            let t = welch_t(&classes[0], &classes[1]);
            if t.abs() > worst.0.abs() || worst.1.is_empty() {
                worst = (t, label.clone(), classes[0].mean - classes[1].mean);
            }
        }
        let median = |c: u8| {
            let mut v: Vec<u64> = samples.iter().filter(|s| s.0 == c).map(|s| s.1).collect();
            v.sort_unstable();
            v[v.len() / 2]
        };
        (worst.0, worst.1, worst.2, [median(0), median(1)])
    }

    /// Measure one row: `n` measurements after the warm-up. The inputs of
    /// a batch are made first (each measurement's class by a coin: the
    /// row's fixed secret, or random bytes), then measured in order, so
    /// that both classes run the same code between measurements.
    fn measure(row: &mut Row, n: usize, null: bool, rng: &mut Rng) -> Vec<(u8, u64)> {
        const BATCH: usize = 4096;
        let len = row.secret_len;
        let mut fixed = vec![0u8; len];
        rng.fill(&mut fixed);
        let mut inputs = vec![0u8; BATCH * len];
        let mut classes = [0u8; BATCH];
        let mut samples = Vec::with_capacity(n);
        let mut done = 0;
        while done < WARMUP + n {
            for (class, input) in classes.iter_mut().zip(inputs.chunks_exact_mut(len)) {
                *class = (rng.next() >> 63) as u8;
                if *class == 0 && !null {
                    input.copy_from_slice(&fixed);
                } else {
                    rng.fill(input);
                }
            }
            for (&class, input) in classes.iter().zip(inputs.chunks_exact(len)) {
                let t = (row.run)(input);
                if done >= WARMUP && samples.len() < n {
                    samples.push((class, t));
                }
                done += 1;
            }
        }
        samples
    }

    fn arr<const N: usize>(s: &[u8]) -> [u8; N] {
        s[..N].try_into().expect("long enough")
    }

    fn sm4_rows(rows: &mut Vec<Row>) {
        use sm4_simd::{Backend, Sm4, Sm4Ctr, Sm4Gcm, Sm4Xts, XtsStandard};
        for b in Backend::available() {
            let name = b.name();
            rows.push(row("sm4", "key schedule", name, 16, move |s| {
                let key = arr::<16>(s);
                ticks(|| Sm4::with_backend(&key, b))
            }));
            rows.push(row("sm4", "encrypt 1 block", name, 32, move |s| {
                let sm4 = Sm4::with_backend(&arr(s), b).expect("available");
                let mut block = arr::<16>(&s[16..]).into();
                ticks(|| sm4.encrypt_block(&mut block))
            }));
            let mut buf = vec![0u8; MSG];
            rows.push(row("sm4", "Sm4Ctr 256 B", name, 32 + MSG, move |s| {
                let sm4 = Sm4::with_backend(&arr(s), b).expect("available");
                let mut ctr = Sm4Ctr::inner_iv_init(sm4, &arr::<16>(&s[16..]).into());
                buf.copy_from_slice(&s[32..]);
                ticks(|| ctr.apply_keystream(&mut buf))
            }));
            // Each GHASH engine this backend pairs with on this CPU.
            for engine in b.ghash_engines() {
                let mut buf = vec![0u8; MSG];
                let pair = format!("{name}+{}", engine.name());
                rows.push(row("sm4", "Sm4Gcm seal 256 B", &pair, 28 + MSG, move |s| {
                    let gcm = Sm4Gcm::with_backend(&arr(s), b, engine).expect("a runner");
                    let nonce = arr::<12>(&s[16..]).into();
                    buf.copy_from_slice(&s[28..]);
                    ticks(|| gcm.encrypt_inout_detached(&nonce, &[], (&mut buf[..]).into()))
                }));
            }
            let mut buf = vec![0u8; 512];
            rows.push(row(
                "sm4",
                "Sm4Xts 512 B sector",
                name,
                48 + 512,
                move |s| {
                    // The halves differ for every secret (one bit flipped in one).
                    let mut key = arr::<32>(s);
                    key[16] ^= 1;
                    let xts = Sm4Xts::with_backend(&key, XtsStandard::Ieee1619, b)
                        .expect("available")
                        .expect("the halves differ");
                    let tweak = arr::<16>(&s[32..]);
                    buf.copy_from_slice(&s[48..]);
                    ticks(|| xts.encrypt_sector(&tweak, &mut buf))
                },
            ));
            let mut buf = vec![0u8; MSG];
            rows.push(row("sm4-mac", "Sm4Cmac 256 B", name, 16 + MSG, move |s| {
                let mut mac = sm4_mac::Sm4Cmac::with_backend(&arr(s), b).expect("available");
                buf.copy_from_slice(&s[16..]);
                ticks(|| {
                    mac.update(&buf);
                    mac.finalize()
                })
            }));
        }
    }

    fn sm3_rows(rows: &mut Vec<Row>) {
        use sm3_simd::{Backend, Lanes, Sm3};
        for b in Backend::available() {
            let mut buf = vec![0u8; MSG];
            rows.push(row("sm3", "Sm3 256 B", b.name(), MSG, move |s| {
                let mut h = Sm3::with_backend(b).expect("available");
                buf.copy_from_slice(s);
                ticks(|| {
                    h.update(&buf);
                    h.finalize()
                })
            }));
        }
        for lanes in Lanes::available() {
            let mut out = vec![[0u8; 32]; 16];
            rows.push(row(
                "sm3",
                "digest_many 16 x 64 B",
                lanes.name(),
                16 * 64,
                move |s| {
                    let msgs: Vec<&[u8]> = s.chunks(64).collect();
                    ticks(|| sm3_simd::digest_many_with(lanes, &msgs, &mut out))
                },
            ));
        }
    }

    fn chacha_rows(rows: &mut Vec<Row>) {
        use chacha_simd::{Backend, ChaCha20, R20, XChaCha12};
        for b in Backend::available() {
            let name = b.name();
            let mut buf = vec![0u8; MSG];
            rows.push(row("chacha", "ChaCha20 256 B", name, 44 + MSG, move |s| {
                let mut c = ChaCha20::with_backend(&arr(s), &s[32..44], b).expect("available");
                buf.copy_from_slice(&s[44..]);
                ticks(|| c.apply_keystream(&mut buf))
            }));
            let mut buf = vec![0u8; MSG];
            rows.push(row("chacha", "XChaCha12 256 B", name, 56 + MSG, move |s| {
                let mut c = XChaCha12::with_backend(&arr(s), &s[32..56], b).expect("available");
                buf.copy_from_slice(&s[56..]);
                ticks(|| c.apply_keystream(&mut buf))
            }));
            rows.push(row("chacha", "HChaCha20", name, 48, move |s| {
                let (key, input) = (arr::<32>(s), arr::<16>(&s[32..]));
                ticks(|| chacha_simd::hchacha_with_backend::<R20>(b, &key, &input))
            }));
        }
    }

    fn nhpoly1305_rows(rows: &mut Vec<Row>) {
        use nhpoly1305::{Backend, KEY_SIZE, NhPoly1305, Poly1305};
        for b in Backend::available() {
            rows.push(row(
                "nhpoly1305",
                "NHPoly1305 256 B",
                b.name(),
                KEY_SIZE + MSG,
                move |s| {
                    let h = NhPoly1305::with_backend(&arr(s), b).expect("available");
                    ticks(|| h.oneshot(&s[KEY_SIZE..]))
                },
            ));
        }
        rows.push(row(
            "nhpoly1305",
            "Poly1305 256 B",
            "one backend",
            16 + MSG,
            |s| {
                let p = Poly1305::new(&arr(s));
                ticks(|| p.oneshot(&s[16..]))
            },
        ));
    }

    fn adiantum_rows(rows: &mut Vec<Row>) {
        use adiantum_simd::AdiantumXChaCha12Aes;
        let backends = format!(
            "chacha {}, nh {}",
            chacha_simd::backend(),
            nhpoly1305::backend()
        );
        let mut buf = vec![0u8; 512];
        // Key setup is not timed (it derives the subkeys with XChaCha12).
        rows.push(row(
            "adiantum",
            "encrypt 512 B",
            &backends,
            32 + 32 + 512,
            move |s| {
                let cipher = AdiantumXChaCha12Aes::new(&arr(s));
                buf.copy_from_slice(&s[64..]);
                ticks(|| cipher.encrypt_in_place(&s[32..64], &mut buf))
            },
        ));
    }

    /// RDTSCP: CPUID.80000001h:EDX[27].
    fn has_rdtscp() -> bool {
        use core::arch::x86_64::__cpuid;
        #[allow(unused_unsafe)]
        // SAFETY: CPUID exists on every x86_64 CPU; leaf 0x80000000 says
        // whether leaf 0x80000001 exists before we read it.
        unsafe {
            __cpuid(0x8000_0000).eax >= 0x8000_0001 && (__cpuid(0x8000_0001).edx >> 27) & 1 == 1
        }
    }

    pub(super) fn main() {
        let mut samples = 1_000_000usize;
        let mut filter = String::new();
        let mut null = false;
        let mut args = std::env::args().skip(1);
        while let Some(a) = args.next() {
            if a == "--null" {
                null = true;
                continue;
            }
            match (a.as_str(), args.next()) {
                ("--samples", Some(n)) if n.parse::<usize>().is_ok_and(|n| n >= 1000) => {
                    samples = n.parse().expect("checked");
                }
                ("--filter", Some(f)) => filter = f,
                _ => {
                    eprintln!("usage: cttime [--samples N (>= 1000)] [--filter TEXT] [--null]");
                    std::process::exit(2);
                }
            }
        }
        if !has_rdtscp() {
            eprintln!("cttime: this CPU has no RDTSCP");
            std::process::exit(2);
        }
        let mut rows = Vec::new();
        sm4_rows(&mut rows);
        sm3_rows(&mut rows);
        chacha_rows(&mut rows);
        nhpoly1305_rows(&mut rows);
        adiantum_rows(&mut rows);
        rows.retain(|r| r.name.contains(&filter));
        println!(
            "cttime: {} rows, {samples} measurements each (fixed vs random \
             secrets, classes at random); |t| < {T_THRESHOLD} finds no leak",
            rows.len()
        );
        println!(
            "| operation [backend] | max abs t | where | mean fixed - random | median ticks fixed / random | verdict |"
        );
        println!("|---|---|---|---|---|---|");
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ u64::from(std::process::id()));
        for r in &mut rows {
            let (t, at, diff, medians) = analyse(&measure(r, samples, null, &mut rng));
            let verdict = if t.abs() < T_THRESHOLD {
                "no leak found"
            } else {
                "DIFFERENT"
            };
            println!(
                "| {} | {:.2} | {at} | {diff:+.2} | {} / {} | {verdict} |",
                r.name,
                t.abs(),
                medians[0],
                medians[1]
            );
        }
    }
}
