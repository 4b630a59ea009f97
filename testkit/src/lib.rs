//! Test helpers shared by the workspace's crates (dev-dependency only).
//!
//! - [`Rng`]: a small seeded generator, so every randomized test is
//!   reproducible from its seed.
//! - [`Case`] and [`load_cases`]: the JSON vector files (a list of flat
//!   objects with hex byte strings) copied into each crate's `tests/data/`.
//! - [`hex`]: hex decoding for literal inputs.

use std::collections::BTreeMap;
use std::path::Path;

/// SplitMix64: tiny, seedable and good enough to drive differential tests.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator with a fixed seed.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform value in `0..bound` (`bound > 0`; the tiny modulo bias is
    /// irrelevant for tests).
    pub fn below(&mut self, bound: usize) -> usize {
        (self.next_u64() % bound as u64) as usize
    }

    /// A uniform value in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// Fill `buf` with random bytes.
    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let bytes = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }

    /// `len` random bytes.
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        let mut v = vec![0; len];
        self.fill(&mut v);
        v
    }

    /// A random fixed-size array.
    pub fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut a = [0; N];
        self.fill(&mut a);
        a
    }

    /// Split `len` into random chunk lengths (each in `1..=max_chunk`).
    pub fn chunks(&mut self, len: usize, max_chunk: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut left = len;
        while left > 0 {
            let n = self.range(1, max_chunk.min(left));
            out.push(n);
            left -= n;
        }
        out
    }
}

/// Decode a hex string (whitespace ignored). Panics on bad input: tests only.
pub fn hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    assert!(digits.len().is_multiple_of(2), "odd hex length");
    digits
        .chunks(2)
        .map(|p| {
            let s = std::str::from_utf8(p).expect("ascii");
            u8::from_str_radix(s, 16).expect("hex digit")
        })
        .collect()
}

/// One test vector: a flat JSON object.
#[derive(Clone, Debug)]
pub struct Case(BTreeMap<String, serde_json::Value>);

impl Case {
    /// The case's `id` (or `?`).
    pub fn id(&self) -> &str {
        self.opt_str("id").unwrap_or("?")
    }

    /// Whether the field exists.
    pub fn has(&self, field: &str) -> bool {
        self.0.contains_key(field)
    }

    /// A hex field decoded to bytes; panics if missing.
    pub fn hex(&self, field: &str) -> Vec<u8> {
        hex(self.str(field))
    }

    /// A hex field decoded to a fixed-size array; panics on a length mismatch.
    pub fn array<const N: usize>(&self, field: &str) -> [u8; N] {
        let v = self.hex(field);
        v.as_slice().try_into().unwrap_or_else(|_| {
            panic!(
                "{}: field {field} has {} bytes, not {N}",
                self.id(),
                v.len()
            )
        })
    }

    /// A string field; panics if missing.
    pub fn str(&self, field: &str) -> &str {
        self.opt_str(field)
            .unwrap_or_else(|| panic!("{}: no string field {field}", self.id()))
    }

    /// A string field, if present.
    pub fn opt_str(&self, field: &str) -> Option<&str> {
        self.0.get(field).and_then(|v| v.as_str())
    }

    /// An integer field; panics if missing.
    pub fn u64(&self, field: &str) -> u64 {
        self.0
            .get(field)
            .and_then(|v| v.as_u64())
            .unwrap_or_else(|| panic!("{}: no integer field {field}", self.id()))
    }

    /// The raw JSON value of a field.
    pub fn raw(&self, field: &str) -> Option<&serde_json::Value> {
        self.0.get(field)
    }
}

/// Load a vector file: `path` relative to the calling crate's manifest
/// directory, e.g. `load_cases(env!("CARGO_MANIFEST_DIR"), "tests/data/sm4.json")`.
pub fn load_cases(manifest_dir: &str, path: &str) -> Vec<Case> {
    let full = Path::new(manifest_dir).join(path);
    let text = std::fs::read_to_string(&full)
        .unwrap_or_else(|e| panic!("reading {}: {e}", full.display()));
    let list: Vec<BTreeMap<String, serde_json::Value>> =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", full.display()));
    list.into_iter().map(Case).collect()
}

/// Copy `data` into a fresh allocation at byte offset `offset` and return
/// the allocation and the range holding the copy, to exercise unaligned
/// loads and stores.
pub fn misaligned(data: &[u8], offset: usize) -> (Vec<u8>, std::ops::Range<usize>) {
    let mut v = vec![0u8; data.len() + offset];
    v[offset..].copy_from_slice(data);
    (v, offset..offset + data.len())
}
