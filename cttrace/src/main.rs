//! The constant-time trace check of the aarch64 backends (issue 36).
//!
//! Runs every public operation of every crate on every backend this CPU
//! has, twice, with two different secrets of the same lengths (keys,
//! nonces and IVs, tweaks, plaintexts, AAD, hash and MAC inputs: every
//! byte differs between the two), each run between a call of
//! [`cttrace_mark_begin`] and one of [`cttrace_mark_end`]. Under
//! `qemu-aarch64` with the TCG plugin of `scripts/ct-trace/cttrace.c`, the
//! plugin compares the two runs' sequences of executed instruction
//! addresses and of memory-access addresses and writes one line per pair to
//! the file named by `CTTRACE_REPORT`; this program reads it back at the
//! end, names each pair whose traces differ with the first divergence, and
//! fails if any real operation differs or if the self-test's planted leaks
//! (a table lookup indexed by a secret byte, a branch on a secret byte) are
//! not both reported.
//!
//! Each operation runs with two pairs of secrets: random bytes (every byte
//! differs between the two runs), and all bits clear against all bits set.
//!
//! Declassified on purpose (both runs of a pair get the same answer, so the
//! answer's branch is the same in both): an AEAD's or MAC's tag check
//! (a pair with the right tag, a pair with a wrong tag), XTS's refusal of
//! equal key halves (a pair with different halves, a pair with equal
//! ones), see [`declassify`]; and whether `Sm4Ctr`'s counter carries out of
//! its low 64 bits during a call (the `sm4ce` backend then leaves its
//! register kernel for the staged path: a pair where neither run carries,
//! a pair where both do).
//!
//! Run it through `scripts/ct-trace/run.sh` (which builds the plugin and
//! this binary and runs both `-cpu max` and `-cpu cortex-a72`). An optional
//! argument keeps only the operations whose name contains it.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use aead::AeadInOut;
use cipher::{
    Block, BlockCipherDecrypt, BlockCipherEncrypt, BlockModeDecrypt, BlockModeEncrypt, InnerIvInit,
    StreamCipher, StreamCipherSeek,
};
use digest::{Digest, KeyInit, Mac};

/// Counts the marks (so that the two functions differ and are kept).
static MARKS: AtomicU64 = AtomicU64::new(0);

/// The start of a traced run; the plugin finds it by this symbol name.
#[inline(never)]
fn cttrace_mark_begin() {
    MARKS.fetch_add(1, Ordering::SeqCst);
}

/// The end of a traced run; the plugin finds it by this symbol name.
#[inline(never)]
fn cttrace_mark_end() {
    MARKS.fetch_add(1 << 32, Ordering::SeqCst);
}

/// The largest message of any operation here.
const DATA: usize = 4096;

/// Every input of an operation, at the same addresses in both runs.
struct Work {
    /// Keys (the longest is NHPoly1305's, 1088 bytes).
    key: [u8; 1088],
    /// Nonces, IVs and tweaks.
    iv: [u8; 32],
    /// The message, processed in place.
    data: [u8; DATA],
    /// Associated data.
    aad: [u8; 64],
    /// A tag to check, made before the traced run.
    tag: [u8; 16],
}

impl Work {
    fn k16(&self) -> [u8; 16] {
        self.key[..16].try_into().expect("16 bytes")
    }
    fn k32(&self) -> [u8; 32] {
        self.key[..32].try_into().expect("32 bytes")
    }
    fn iv16(&self) -> [u8; 16] {
        self.iv[..16].try_into().expect("16 bytes")
    }
    fn iv12(&self) -> [u8; 12] {
        self.iv[..12].try_into().expect("12 bytes")
    }
}

/// Which run of a pair: the untraced warm-up (lazy initialisation such as
/// the CPU feature caches happens there), then the two traced ones.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Run {
    Warm,
    First,
    Second,
}

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn byte(&mut self) -> u8 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) as u8
    }
}

/// The two pairs of secrets each operation is run with.
#[derive(Clone, Copy, Debug)]
enum Secrets {
    /// Random bytes; the second run's are the first's with a random
    /// nonzero XOR, so that every byte differs between the two.
    Random,
    /// Every bit clear in the first run, every bit set in the second (the
    /// counters' and carries' extremes), except the key's second 16 bytes
    /// (0x0f, then 0xf0) so that XTS's key halves still differ.
    Extremes,
}

/// Fill every secret of `w` for `run` of a pair of `secrets` (the warm-up
/// gets random bytes of its own).
fn fill(w: &mut Work, run: Run, secrets: Secrets) {
    let mut a = Rng(if run == Run::Warm { 77 } else { 1 });
    let mut m = Rng(2);
    let second = run == Run::Second;
    let Work {
        key,
        iv,
        data,
        aad,
        tag,
    } = w;
    for b in key
        .iter_mut()
        .chain(iv.iter_mut())
        .chain(data.iter_mut())
        .chain(aad.iter_mut())
        .chain(tag.iter_mut())
    {
        let x = a.byte();
        let mask = m.byte() % 255 + 1;
        *b = match (run, secrets) {
            (Run::Warm, _) | (Run::First, Secrets::Random) => x,
            (Run::Second, Secrets::Random) => x ^ mask,
            (_, Secrets::Extremes) => 0u8.wrapping_sub(u8::from(second)),
        };
    }
    if run != Run::Warm && matches!(secrets, Secrets::Extremes) {
        key[16..32].fill(if second { 0xf0 } else { 0x0f });
    }
}

/// A one-bit answer that is public by design (a tag check, XTS's
/// equal-halves refusal): the pairs are built so that both runs get the
/// `expected` answer, and the program stops if they do not.
fn declassify(answer: bool, expected: bool) {
    assert_eq!(
        answer, expected,
        "a declassified answer was not the expected one"
    );
}

/// The traced run: the same call site and stack depth for both runs.
#[inline(never)]
fn traced(op: &dyn Fn(&mut Work), w: &mut Work) {
    cttrace_mark_begin();
    op(black_box(w));
    cttrace_mark_end();
}

/// One pair of runs: what it is, and whether it is a planted leak.
struct Check {
    name: String,
    planted: bool,
}

struct Checker {
    w: Box<Work>,
    checks: Vec<Check>,
    /// Per crate, the backends run.
    backends: BTreeMap<&'static str, Vec<String>>,
    filter: Option<String>,
}

type Prep<'a> = &'a dyn Fn(&mut Work, Run);

impl Checker {
    fn backend(&mut self, krate: &'static str, name: &str) {
        let list = self.backends.entry(krate).or_default();
        if !list.iter().any(|n| n == name) {
            list.push(name.to_string());
        }
    }

    /// Run `op` three times (warm-up, then the traced pair), each after
    /// `fill` and `prep` (untraced: e.g. a tag to check is made there).
    fn pair_with(&mut self, name: String, planted: bool, prep: Prep<'_>, op: &dyn Fn(&mut Work)) {
        if let Some(f) = &self.filter
            && !name.contains(f.as_str())
        {
            return;
        }
        fill(&mut self.w, Run::Warm, Secrets::Random);
        prep(&mut self.w, Run::Warm);
        op(&mut self.w);
        black_box(&*self.w);
        for secrets in [Secrets::Random, Secrets::Extremes] {
            for run in [Run::First, Run::Second] {
                fill(&mut self.w, run, secrets);
                prep(&mut self.w, run);
                traced(op, &mut self.w);
                black_box(&*self.w);
            }
            self.checks.push(Check {
                name: format!("{name} [{secrets:?} secrets]"),
                planted,
            });
        }
    }

    fn pair(&mut self, name: String, op: &dyn Fn(&mut Work)) {
        self.pair_with(name, false, &|_, _| {}, op);
    }
}

/// A whole number of blocks as SM4 blocks.
fn blocks(d: &mut [u8]) -> &mut [Block<sm4_simd::Sm4>] {
    let (b, rest) = Block::<sm4_simd::Sm4>::slice_as_chunks_mut(d);
    assert!(rest.is_empty());
    b
}

/// Message lengths for the bulk operations: one block, a few blocks with a
/// partial one, the widest kernels with tails.
const LENS: [usize; 4] = [16, 100, 1000, 4096];

fn sm4_checks(c: &mut Checker) {
    use sm4_simd::{
        Backend, Sm4, Sm4CbcDec, Sm4CbcEnc, Sm4Ccm, Sm4CfbDec, Sm4CfbEnc, Sm4Ctr, Sm4Gcm, Sm4Xts,
        XtsStandard,
    };
    let sm4 = |w: &Work, b| Sm4::with_backend(&w.k16(), b).expect("available");
    for b in Backend::available() {
        let n = b.name();
        c.backend("sm4", n);
        c.pair(format!("sm4 {n}: key schedule"), &|w| {
            black_box(sm4(w, b));
        });
        for nb in [1, 3, 8, 17, 64] {
            c.pair(format!("sm4 {n}: encrypt {nb} blocks"), &|w| {
                sm4(w, b).encrypt_blocks(blocks(&mut w.data[..nb * 16]));
            });
            c.pair(format!("sm4 {n}: decrypt {nb} blocks"), &|w| {
                sm4(w, b).decrypt_blocks(blocks(&mut w.data[..nb * 16]));
            });
        }
        let ctr = |w: &mut Work, seek: u64, len: usize| {
            let mut ctr = Sm4Ctr::inner_iv_init(sm4(w, b), &w.iv16().into());
            ctr.seek(seek);
            ctr.apply_keystream(&mut w.data[..len]);
        };
        for len in LENS {
            // Declassified: whether the counter's low 64 bits carry during
            // the call (`sm4ce` then leaves its register kernel for the
            // staged path, sm4/src/backends.rs `ctr_xor`). The top bit of
            // the IV's low half is clear in both runs here, so neither
            // carries; the pairs below carry in both runs.
            let no_carry = |w: &mut Work, _| w.iv[8] &= 0x7f;
            c.pair_with(format!("sm4 {n}: Sm4Ctr {len} B"), false, &no_carry, &|w| {
                ctr(w, 0, len)
            });
            c.pair_with(
                format!("sm4 {n}: Sm4Ctr seek + {len} B"),
                false,
                &no_carry,
                &|w| ctr(w, 1000, len),
            );
            let carry = |w: &mut Work, _| w.iv[8..16].fill(0xff);
            c.pair_with(
                format!("sm4 {n}: Sm4Ctr across the 64-bit carry, {len} B"),
                false,
                &carry,
                &|w| ctr(w, 0, len),
            );
            c.pair(format!("sm4 {n}: Sm4CfbEnc {len} B"), &|w| {
                Sm4CfbEnc::inner_iv_init(sm4(w, b), &w.iv16().into()).encrypt(&mut w.data[..len]);
            });
            c.pair(format!("sm4 {n}: Sm4CfbDec {len} B"), &|w| {
                Sm4CfbDec::inner_iv_init(sm4(w, b), &w.iv16().into()).decrypt(&mut w.data[..len]);
            });
            let whole = len / 16 * 16;
            c.pair(format!("sm4 {n}: Sm4CbcEnc {whole} B"), &|w| {
                let mut e = Sm4CbcEnc::inner_iv_init(sm4(w, b), &w.iv16().into());
                e.encrypt_blocks(blocks(&mut w.data[..whole]));
            });
            c.pair(format!("sm4 {n}: Sm4CbcDec {whole} B"), &|w| {
                let mut d = Sm4CbcDec::inner_iv_init(sm4(w, b), &w.iv16().into());
                d.decrypt_blocks(blocks(&mut w.data[..whole]));
            });
            c.pair(format!("sm4 {n}: Sm4CbcEnc CS3 {len} B"), &|w| {
                let e = Sm4CbcEnc::inner_iv_init(sm4(w, b), &w.iv16().into());
                e.encrypt_cs3(&mut w.data[..len])
                    .expect("at least 16 bytes");
            });
            c.pair(format!("sm4 {n}: Sm4CbcDec CS3 {len} B"), &|w| {
                let d = Sm4CbcDec::inner_iv_init(sm4(w, b), &w.iv16().into());
                d.decrypt_cs3(&mut w.data[..len])
                    .expect("at least 16 bytes");
            });
        }
        for std in [XtsStandard::Ieee1619, XtsStandard::GbT17964] {
            let xts = |w: &Work| {
                let key: [u8; 32] = w.k32();
                Sm4Xts::with_backend(&key, std, b).expect("available")
            };
            c.pair(
                format!("sm4 {n}: Sm4Xts {std:?} key (halves differ)"),
                &|w| {
                    declassify(xts(w).is_ok(), true);
                },
            );
            c.pair_with(
                format!("sm4 {n}: Sm4Xts {std:?} key (halves equal)"),
                false,
                &|w, _| w.key.copy_within(..16, 16),
                &|w| declassify(xts(w).is_ok(), false),
            );
            for len in [16, 100, 512] {
                c.pair(
                    format!("sm4 {n}: Sm4Xts {std:?} encrypt_sector {len} B"),
                    &|w| {
                        let x = xts(w).expect("halves differ");
                        x.encrypt_sector(&w.iv16(), &mut w.data[..len])
                            .expect("16 bytes or more");
                    },
                );
                c.pair(
                    format!("sm4 {n}: Sm4Xts {std:?} decrypt_sector {len} B"),
                    &|w| {
                        let x = xts(w).expect("halves differ");
                        x.decrypt_sector(&w.iv16(), &mut w.data[..len])
                            .expect("16 bytes or more");
                    },
                );
            }
            for (size, count) in [(512, 8), (4096, 1), (32, 5)] {
                let what = format!("{count} sectors of {size} B");
                c.pair(
                    format!("sm4 {n}: Sm4Xts {std:?} encrypt_sectors {what}"),
                    &|w| {
                        let x = xts(w).expect("halves differ");
                        // The sector number is as secret as an IV here (a
                        // 64-bit value, away from the 128-bit overflow).
                        let first = u128::from(u64::from_le_bytes(w.iv[..8].try_into().unwrap()));
                        x.encrypt_sectors(first, size, &mut w.data[..size * count])
                            .expect("whole");
                    },
                );
                c.pair(
                    format!("sm4 {n}: Sm4Xts {std:?} decrypt_sectors {what}"),
                    &|w| {
                        let x = xts(w).expect("halves differ");
                        let first = u128::from(u64::from_le_bytes(w.iv[..8].try_into().unwrap()));
                        x.decrypt_sectors(first, size, &mut w.data[..size * count])
                            .expect("whole");
                    },
                );
            }
        }
        for e in b.ghash_engines() {
            let en = e.name();
            c.backend("sm4 gcm ghash", &format!("{n}+{en}"));
            let gcm = |w: &Work| Sm4Gcm::with_backend(&w.k16(), b, e).expect("available");
            aead_checks(c, &format!("sm4 {n}: Sm4Gcm (ghash {en})"), &gcm);
        }
        let ccm = |w: &Work| Sm4Ccm::from(sm4(w, b));
        aead_checks(c, &format!("sm4 {n}: Sm4Ccm"), &ccm);
    }
}

/// Encryption, decryption with the right tag, with a wrong tag (the tag
/// check's answer declassified), for lengths with and without AAD.
fn aead_checks<A>(c: &mut Checker, what: &str, make: &dyn Fn(&Work) -> A)
where
    A: AeadInOut<NonceSize = cipher::consts::U12, TagSize = cipher::consts::U16>,
{
    let seal = |w: &mut Work, len: usize, aad: usize| {
        let a = make(w);
        let nonce = w.iv12().into();
        let Work { data, aad: ad, .. } = w;
        let tag = a
            .encrypt_inout_detached(&nonce, &ad[..aad], (&mut data[..len]).into())
            .expect("lengths");
        w.tag.copy_from_slice(&tag);
    };
    let open = |w: &mut Work, len: usize, aad: usize| {
        let a = make(w);
        let nonce = w.iv12().into();
        let tag = w.tag.into();
        let Work { data, aad: ad, .. } = w;
        a.decrypt_inout_detached(&nonce, &ad[..aad], (&mut data[..len]).into(), &tag)
            .is_ok()
    };
    for (len, aad) in [(0, 20), (16, 0), (100, 13), (1000, 64), (4096, 0)] {
        let l = format!("{len} B, {aad} B AAD");
        c.pair(format!("{what} encrypt {l}"), &|w| seal(w, len, aad));
        // The right tag, made before the traced run.
        c.pair_with(
            format!("{what} decrypt {l}, right tag"),
            false,
            &|w, _| seal(w, len, aad),
            &|w| declassify(open(w, len, aad), true),
        );
        c.pair_with(
            format!("{what} decrypt {l}, wrong tag"),
            false,
            &|w, _| {
                seal(w, len, aad);
                w.tag[3] ^= 0x10;
            },
            &|w| declassify(open(w, len, aad), false),
        );
    }
}

fn mac_checks(c: &mut Checker) {
    use sm4_mac::{Sm4CbcMac, Sm4Cmac, Sm4Xcbc};
    use sm4_simd::Backend;
    for b in Backend::available() {
        let n = b.name();
        c.backend("sm4-mac", n);
        for len in [0, 16, 100, 1000] {
            c.pair(format!("sm4-mac {n}: Sm4Cmac {len} B"), &|w| {
                let mut m = Sm4Cmac::with_backend(&w.k16(), b).expect("available");
                m.update(&w.data[..len]);
                black_box(m.finalize().into_bytes());
            });
            c.pair(format!("sm4-mac {n}: Sm4Xcbc {len} B"), &|w| {
                let mut m = Sm4Xcbc::with_backend(&w.k16(), b).expect("available");
                m.update(&w.data[..len]);
                black_box(m.finalize().into_bytes());
            });
            c.pair(format!("sm4-mac {n}: Sm4CbcMac {len} B"), &|w| {
                let mut m = Sm4CbcMac::with_backend(&w.k16(), b).expect("available");
                m.update(&w.data[..len]);
                black_box(m.finalize().into_bytes());
            });
        }
        let cmac = |w: &Work| {
            let mut m = Sm4Cmac::with_backend(&w.k16(), b).expect("available");
            m.update(&w.data[..100]);
            m
        };
        c.pair_with(
            format!("sm4-mac {n}: Sm4Cmac verify, right tag"),
            false,
            &|w, _| {
                let t = cmac(w).finalize().into_bytes();
                w.tag.copy_from_slice(&t);
            },
            &|w| declassify(cmac(w).verify_slice(&w.tag).is_ok(), true),
        );
        c.pair_with(
            format!("sm4-mac {n}: Sm4Cmac verify, wrong tag"),
            false,
            &|w, _| {
                let t = cmac(w).finalize().into_bytes();
                w.tag.copy_from_slice(&t);
                w.tag[0] ^= 1;
            },
            &|w| declassify(cmac(w).verify_slice(&w.tag).is_ok(), false),
        );
    }
}

fn sm3_checks(c: &mut Checker) {
    use sm3_simd::{Backend, Lanes, Sm3};
    for b in Backend::available() {
        let n = b.name();
        c.backend("sm3", n);
        for len in [3, 55, 64, 200, 1000, 4096] {
            c.pair(format!("sm3 {n}: Sm3 {len} B"), &|w| {
                let mut h = Sm3::with_backend(b).expect("available");
                Digest::update(&mut h, &w.data[..len]);
                black_box(h.finalize());
            });
        }
    }
    for l in Lanes::available() {
        let n = l.name();
        c.backend("sm3 digest_many", n);
        let sets: [&[usize]; 3] = [
            &[64, 64, 64, 64],
            &[100, 100, 100, 100, 100, 100, 100, 100],
            &[1000, 5, 300, 64, 129, 0, 55, 700, 33],
        ];
        for lens in sets {
            c.pair(format!("sm3 digest_many {n}: lengths {lens:?}"), &|w| {
                let mut msgs: [&[u8]; 9] = [&[]; 9];
                let mut at = 0;
                for (m, &len) in msgs.iter_mut().zip(lens) {
                    *m = &w.data[at..at + len];
                    at += len;
                }
                let mut out = [[0u8; 32]; 9];
                let k = lens.len();
                sm3_simd::digest_many_with(l, &msgs[..k], &mut out[..k]).expect("lengths");
                black_box(out);
            });
        }
    }
    c.backend("hmac-sm3 (default backend)", sm3_simd::backend());
    for (klen, len) in [(16, 100), (100, 1000), (32, 0)] {
        c.pair(format!("hmac-sm3: Hmac<Sm3> key {klen} B, {len} B"), &|w| {
            let mut m = <hmac::Hmac<Sm3> as KeyInit>::new_from_slice(&w.key[..klen]).unwrap();
            m.update(&w.data[..len]);
            black_box(m.finalize().into_bytes());
        });
        c.pair(
            format!("hmac-sm3: SimpleHmac<Sm3> key {klen} B, {len} B"),
            &|w| {
                let mut m =
                    <hmac::SimpleHmac<Sm3> as KeyInit>::new_from_slice(&w.key[..klen]).unwrap();
                m.update(&w.data[..len]);
                black_box(m.finalize().into_bytes());
            },
        );
    }
}

fn chacha_variant<R: chacha_simd::Rounds, V: chacha_simd::Variant>(
    c: &mut Checker,
    b: chacha_simd::Backend,
    what: &str,
) {
    let nlen = <V::NonceSize as cipher::typenum::Unsigned>::USIZE;
    let n = b.name();
    for len in [1, 64, 100, 256, 1000, 4096] {
        c.pair(format!("chacha {n}: {what} {len} B"), &|w| {
            let mut s =
                chacha_simd::ChaCha::<R, V>::with_backend(&w.k32(), &w.iv[..nlen], b).unwrap();
            s.apply_keystream(&mut w.data[..len]);
        });
    }
    c.pair(format!("chacha {n}: {what} seek + 300 B"), &|w| {
        let mut s = chacha_simd::ChaCha::<R, V>::with_backend(&w.k32(), &w.iv[..nlen], b).unwrap();
        s.seek(1000u64);
        s.apply_keystream(&mut w.data[..300]);
    });
}

fn chacha_checks(c: &mut Checker) {
    use chacha_simd::{Backend, Extended, Ietf, Legacy, R8, R12, R20};
    for b in Backend::available() {
        let n = b.name();
        c.backend("chacha", n);
        chacha_variant::<R20, Ietf>(c, b, "ChaCha20");
        chacha_variant::<R12, Ietf>(c, b, "ChaCha12");
        chacha_variant::<R8, Ietf>(c, b, "ChaCha8");
        chacha_variant::<R20, Legacy>(c, b, "ChaCha20Legacy");
        chacha_variant::<R20, Extended>(c, b, "XChaCha20");
        chacha_variant::<R12, Extended>(c, b, "XChaCha12");
        chacha_variant::<R8, Extended>(c, b, "XChaCha8");
        c.pair(format!("chacha {n}: hchacha<R20>"), &|w| {
            black_box(chacha_simd::hchacha_with_backend::<R20>(
                b,
                &w.k32(),
                &w.iv16(),
            ));
        });
        c.pair(format!("chacha {n}: hchacha<R12>"), &|w| {
            black_box(chacha_simd::hchacha_with_backend::<R12>(
                b,
                &w.k32(),
                &w.iv16(),
            ));
        });
    }
}

fn nh_checks(c: &mut Checker) {
    use nhpoly1305::{Backend, KEY_SIZE, NH_KEY_SIZE, NhPoly1305, Poly1305};
    for b in Backend::available() {
        let n = b.name();
        c.backend("nhpoly1305", n);
        for len in [16, 48, 1024] {
            c.pair(format!("nhpoly1305 {n}: nh {len} B"), &|w| {
                let key: &[u8; NH_KEY_SIZE] = w.key[..NH_KEY_SIZE].try_into().unwrap();
                black_box(nhpoly1305::nh_with_backend(key, &w.data[..len], b));
            });
        }
        for len in [16, 100, 1024, 4096] {
            c.pair(format!("nhpoly1305 {n}: NhPoly1305 {len} B"), &|w| {
                let key: &[u8; KEY_SIZE] = &w.key;
                let mut h = NhPoly1305::with_backend(key, b).expect("available");
                h.update(&w.data[..len]);
                black_box(h.finalize());
            });
        }
    }
    for len in [16, 100, 1000] {
        c.pair(format!("nhpoly1305: Poly1305 {len} B"), &|w| {
            let mut p = Poly1305::new(&w.k16());
            p.update(&w.data[..len]);
            black_box(p.finalize());
        });
    }
}

fn adiantum_checks(c: &mut Checker) {
    use adiantum_simd::{AdiantumXChaCha12Aes, AdiantumXChaCha20Aes, HPolyC};
    type HPolyC12 = HPolyC<chacha_simd::XChaCha12, aes::Aes256>;
    let backends = format!(
        "chacha {} + nh {}",
        chacha_simd::backend(),
        nhpoly1305::backend()
    );
    c.backend("adiantum (default backends)", &backends);
    for len in [16, 100, 512, 4096] {
        c.pair(
            format!("adiantum: AdiantumXChaCha12Aes key + encrypt {len} B"),
            &|w| {
                let a = AdiantumXChaCha12Aes::new(&w.k32());
                a.encrypt_in_place(&w.iv, &mut w.data[..len])
                    .expect("length");
            },
        );
        c.pair(
            format!("adiantum: AdiantumXChaCha12Aes key + decrypt {len} B"),
            &|w| {
                let a = AdiantumXChaCha12Aes::new(&w.k32());
                a.decrypt_in_place(&w.iv, &mut w.data[..len])
                    .expect("length");
            },
        );
        c.pair(
            format!("adiantum: AdiantumXChaCha20Aes key + encrypt {len} B"),
            &|w| {
                let a = AdiantumXChaCha20Aes::new(&w.k32());
                a.encrypt_in_place(&w.iv, &mut w.data[..len])
                    .expect("length");
            },
        );
        c.pair(format!("adiantum: HPolyC key + encrypt {len} B"), &|w| {
            let a = HPolyC12::new(&w.k32());
            a.encrypt_in_place(&w.iv, &mut w.data[..len])
                .expect("length");
        });
        c.pair(format!("adiantum: HPolyC key + decrypt {len} B"), &|w| {
            let a = HPolyC12::new(&w.k32());
            a.decrypt_in_place(&w.iv, &mut w.data[..len])
                .expect("length");
        });
    }
}

/// The planted leaks the check must report: the byte that decides is set
/// to different values in the two runs.
fn selftest(c: &mut Checker) {
    static TABLE: [u8; 256] = {
        let mut t = [0u8; 256];
        let mut i = 0;
        while i < 256 {
            t[i] = (i as u8).wrapping_mul(7);
            i += 1;
        }
        t
    };
    let secret_byte = |w: &mut Work, run: Run| w.key[0] = if run == Run::Second { 0xc8 } else { 3 };
    c.pair_with(
        "self-test: table lookup indexed by a secret byte".into(),
        true,
        &secret_byte,
        &|w| {
            black_box(black_box(&TABLE)[usize::from(w.key[0])]);
        },
    );
    c.pair_with(
        "self-test: branch on a secret byte".into(),
        true,
        &secret_byte,
        &|w| {
            if black_box(w.key[0]) >= 0x80 {
                for i in 0..4u32 {
                    black_box(i);
                }
            }
        },
    );
}

/// One line of the plugin's report: `pair <k> same <events> <hash>` or
/// `pair <k> differs <events A> <events B> <index> | <after> | <A> | <B>`;
/// the pair's index and, when the traces differ, a description.
fn parse(line: &str) -> Option<(usize, Option<String>)> {
    let mut words = line.splitn(4, ' ');
    if words.next()? != "pair" {
        return None;
    }
    let k = words.next()?.parse().ok()?;
    match words.next()? {
        "same" => Some((k, None)),
        "differs" => {
            let mut parts = words.next()?.split(" | ");
            let mut counts = parts.next()?.split(' ');
            let (a, b, at) = (counts.next()?, counts.next()?, counts.next()?);
            let after = parts.next()?;
            let first = parts.next()?;
            let second = parts.next()?;
            Some((
                k,
                Some(format!(
                    "{a} and {b} events; the first difference is event {at}, {after}:\n      \
                     {first}\n      {second}"
                )),
            ))
        }
        _ => None,
    }
}

fn main() {
    let filter = std::env::args().nth(1);
    let mut c = Checker {
        w: Box::new(Work {
            key: [0; 1088],
            iv: [0; 32],
            data: [0; DATA],
            aad: [0; 64],
            tag: [0; 16],
        }),
        checks: Vec::new(),
        backends: BTreeMap::new(),
        filter,
    };
    selftest(&mut c);
    sm4_checks(&mut c);
    mac_checks(&mut c);
    sm3_checks(&mut c);
    chacha_checks(&mut c);
    nh_checks(&mut c);
    adiantum_checks(&mut c);

    let Ok(path) = std::env::var("CTTRACE_REPORT") else {
        println!(
            "cttrace: {} pairs run, nothing checked: run under qemu-aarch64 with the \
             cttrace plugin and CTTRACE_REPORT set (scripts/ct-trace/run.sh)",
            c.checks.len()
        );
        std::process::exit(2);
    };
    let report = std::fs::read_to_string(&path).unwrap_or_default();
    let mut results: Vec<Option<Option<String>>> = vec![None; c.checks.len()];
    for (k, diff) in report.lines().filter_map(parse) {
        if let Some(r) = results.get_mut(k) {
            *r = Some(diff);
        }
    }
    let mut failures = 0;
    let (mut real, mut caught) = (0, 0);
    let planted = c.checks.iter().filter(|c| c.planted).count();
    for (check, result) in c.checks.iter().zip(&results) {
        match (result, check.planted) {
            (None, _) => {
                failures += 1;
                println!(
                    "NO RESULT  {} (the plugin reported no pair for it)",
                    check.name
                );
            }
            (Some(None), false) => real += 1,
            (Some(Some(d)), false) => {
                failures += 1;
                println!("LEAK  {}\n      {d}", check.name);
            }
            (Some(Some(d)), true) => {
                caught += 1;
                println!(
                    "planted leak reported (as it must be): {}\n      {d}",
                    check.name
                );
            }
            (Some(None), true) => {
                failures += 1;
                println!(
                    "SELF-TEST FAILED: planted leak not reported: {}",
                    check.name
                );
            }
        }
    }
    let nb: usize = c.backends.values().map(Vec::len).sum();
    match &c.filter {
        Some(f) => println!("cttrace: only the operations whose name contains {f:?}; backends:"),
        None => println!("cttrace: backends run:"),
    }
    for (krate, list) in &c.backends {
        println!("  {krate}: {}", list.join(", "));
    }
    println!(
        "cttrace: {} operations x backends, {} pairs of runs (random secrets; all bits \
         clear vs all set): {real} with equal traces ({nb} backends); self-test: {caught} of \
         {planted} planted-leak pairs reported",
        (c.checks.len() - planted) / 2,
        c.checks.len() - planted,
    );
    if failures > 0 {
        println!("cttrace: FAILED ({failures})");
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn report_lines() {
        assert_eq!(parse("pair 7 same 400 2cccf44f895efa77"), Some((7, None)));
        let (k, d) =
            parse("pair 3 differs 28 40 25 | after 0x10 in f: tbnz | first A | second B").unwrap();
        assert_eq!(k, 3);
        let d = d.unwrap();
        assert!(d.starts_with("28 and 40 events; the first difference is event 25, after 0x10"));
        assert!(d.ends_with("first A\n      second B"));
        assert_eq!(parse("begin-mark 0x5500001000"), None);
        assert_eq!(parse("segments 12"), None);
    }
}
