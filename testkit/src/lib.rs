//! Test helpers shared by the workspace's crates (dev-dependency only).
//!
//! - [`Rng`]: a small seeded generator, so every randomized test is
//!   reproducible from its seed.
//! - [`Case`] and [`load_cases`]: the JSON vector files (a list of flat
//!   objects with hex byte strings) copied into each crate's `tests/data/`;
//!   under Miri a small sample of them.
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
/// A plain byte loop: under Miri the vector files' hex is a large part of
/// a test's work.
pub fn hex(s: &str) -> Vec<u8> {
    fn nibble(c: u8) -> u8 {
        match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => panic!("bad hex digit {:?}", c as char),
        }
    }
    let mut out = Vec::with_capacity(s.len() / 2);
    let mut high = None;
    for c in s.bytes().filter(|c| !c.is_ascii_whitespace()) {
        match high.take() {
            None => high = Some(nibble(c)),
            Some(h) => out.push(h << 4 | nibble(c)),
        }
    }
    assert!(high.is_none(), "odd hex length");
    out
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
///
/// Under Miri (which interprets every byte of the JSON and of the hex, at
/// well under a kilobyte a second) only a sample is decoded: at most
/// [`MIRI_CASES`] of the short cases (a JSON object at most twice as long
/// as the file's shortest), evenly spread over the file (the files are
/// grouped by source and variant). Tests that count cases check the counts
/// natively only. Miri needs `-Zmiri-disable-isolation` to read the file.
pub fn load_cases(manifest_dir: &str, path: &str) -> Vec<Case> {
    let full = Path::new(manifest_dir).join(path);
    let text = std::fs::read_to_string(&full)
        .unwrap_or_else(|e| panic!("reading {}: {e}", full.display()));
    let parse = |json: &str| -> Vec<BTreeMap<String, serde_json::Value>> {
        serde_json::from_str(json).unwrap_or_else(|e| panic!("parsing {}: {e}", full.display()))
    };
    let objects = top_level_objects(&text);
    if cfg!(miri) {
        let shortest = objects.iter().map(|r| r.len()).min().unwrap_or(0);
        let short: Vec<_> = objects
            .into_iter()
            .filter(|r| r.len() <= 2 * shortest)
            .collect();
        let step = short.len().div_ceil(MIRI_CASES).max(1);
        let json = short
            .iter()
            .step_by(step)
            .map(|r| &text[r.clone()])
            .collect::<Vec<_>>()
            .join(",");
        return parse(&format!("[{json}]")).into_iter().map(Case).collect();
    }
    let list = parse(&text);
    // The Miri sample relies on the object scan: check it on every file.
    assert_eq!(objects.len(), list.len(), "{}: object scan", full.display());
    list.into_iter().map(Case).collect()
}

/// Under Miri, the most cases [`load_cases`] decodes from one file.
pub const MIRI_CASES: usize = 6;

/// The byte ranges of the objects inside a JSON array, without decoding
/// them: string contents (nearly all of a vector file) are skipped with
/// `str::find`, which core searches a word at a time.
fn top_level_objects(text: &str) -> Vec<std::ops::Range<usize>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let (mut depth, mut start, mut i) = (0usize, 0, 0);
    while i < b.len() {
        match b[i] {
            b'"' => {
                // To the closing quote: the first one not escaped.
                loop {
                    i += 1 + text[i + 1..].find('"').expect("unterminated JSON string");
                    let slashes = b[..i].iter().rev().take_while(|&&c| c == b'\\').count();
                    if slashes % 2 == 0 {
                        break;
                    }
                }
            }
            b'[' | b'{' => {
                if depth == 1 {
                    start = i;
                }
                depth += 1;
            }
            b']' | b'}' => {
                depth -= 1;
                if depth == 1 && b[i] == b'}' {
                    out.push(start..i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Copy `data` into a fresh allocation at byte offset `offset` and return
/// the allocation and the range holding the copy, to exercise unaligned
/// loads and stores.
pub fn misaligned(data: &[u8], offset: usize) -> (Vec<u8>, std::ops::Range<usize>) {
    let mut v = vec![0u8; data.len() + offset];
    v[offset..].copy_from_slice(data);
    (v, offset..offset + data.len())
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_decodes_and_skips_whitespace() {
        assert_eq!(super::hex("00 ff\n7A"), [0x00, 0xff, 0x7a]);
        assert!(super::hex("").is_empty());
    }

    #[test]
    fn object_scan_skips_strings_and_nesting() {
        let text = r#"[ {"a": "x}\"{", "b": [{"c": 1}]}, {"d": "\\"}, {} ]"#;
        let found: Vec<&str> = super::top_level_objects(text)
            .into_iter()
            .map(|r| &text[r])
            .collect();
        assert_eq!(
            found,
            [r#"{"a": "x}\"{", "b": [{"c": 1}]}"#, r#"{"d": "\\"}"#, "{}"]
        );
    }
}
