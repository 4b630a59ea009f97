//! TLCP record protection (GB/T 38636-2020 section 6.3; the wire details
//! as Tongsuo's NTLS code has them, see WIRE.md): SM4-CBC with HMAC-SM3,
//! MAC-then-encrypt with an explicit IV per record (as TLS 1.1), and
//! SM4-GCM with a 4-byte implicit and an 8-byte explicit nonce (as RFC
//! 5288).
//!
//! CBC opening runs the same work for every record of a given length,
//! whatever its padding and MAC (Lucky13): the padding is checked over the
//! last 256 bytes with masks, the MAC is computed with SM3's compression
//! function over every block that some padding length could need, and the
//! state after the right block is picked with masks; one bit (the record
//! is good) comes out.

use sm3_simd::block_api::Sm3Core;
use sm3_simd::digest::block_api::UpdateCore;
use sm3_simd::digest::common::hazmat::SerializableState;
use sm4_simd::aead::{AeadInOut, KeyInit};
use sm4_simd::cipher::{BlockModeDecrypt, BlockModeEncrypt, InnerIvInit};
use sm4_simd::{Sm4, Sm4CbcDec, Sm4CbcEnc, Sm4Gcm};
use zeroize::Zeroize;

use crate::ct;

/// The largest plaintext of a record (2^14).
pub(crate) const MAX_PLAINTEXT: usize = 1 << 14;
/// The largest protected record body accepted (2^14 + 2048, as TLS 1.2).
pub(crate) const MAX_CIPHERTEXT: usize = MAX_PLAINTEXT + 2048;
/// SM4's block.
const BLOCK: usize = 16;
/// HMAC-SM3's tag.
const MAC_LEN: usize = 32;
/// GCM's explicit nonce and tag.
const GCM_EXPLICIT: usize = 8;
const GCM_TAG: usize = 16;

/// One direction's record keys.
pub(crate) enum RecordKeys {
    /// Before ChangeCipherSpec: records in the clear.
    Null,
    Cbc(Box<CbcKeys>),
    Gcm(Box<GcmKeys>),
}

/// The MAC's input header: sequence number, type, version, length.
fn header(seq: u64, typ: u8, version: [u8; 2], len: usize) -> [u8; 13] {
    let mut h = [0u8; 13];
    h[..8].copy_from_slice(&seq.to_be_bytes());
    h[8] = typ;
    h[9..11].copy_from_slice(&version);
    h[11..].copy_from_slice(&(len as u16).to_be_bytes());
    h
}

// ---- SM3 at the block level (HMAC with a constant amount of work) ----

type Sm3Block = sm3_simd::digest::block_api::Block<Sm3Core>;

/// The chaining value of `core`, as SM3's output bytes.
fn chaining_value(core: &Sm3Core) -> [u32; 8] {
    let s = core.serialize();
    let mut h = [0u32; 8];
    for (w, b) in h.iter_mut().zip(s.chunks_exact(4)) {
        *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    }
    h
}

fn digest_bytes(h: &[u32; 8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (o, w) in out.chunks_exact_mut(4).zip(h) {
        o.copy_from_slice(&w.to_be_bytes());
    }
    out
}

/// SM3 of `already` bytes (whole blocks, absorbed in `core`) then `tail`
/// (public length), finished with SM3's padding.
fn finish(mut core: Sm3Core, already: usize, tail: &[u8]) -> [u8; 32] {
    let total = already + tail.len();
    let whole = tail.len() / 64 * 64;
    let (blocks, _) = Sm3Block::slice_as_chunks(&tail[..whole]);
    core.update_blocks(blocks);
    let mut last = [0u8; 128];
    let rest = tail.len() - whole;
    last[..rest].copy_from_slice(&tail[whole..]);
    last[rest] = 0x80;
    let end = if rest + 9 <= 64 { 64 } else { 128 };
    last[end - 8..end].copy_from_slice(&(total as u64 * 8).to_be_bytes());
    let (blocks, _) = Sm3Block::slice_as_chunks(&last[..end]);
    core.update_blocks(blocks);
    let out = digest_bytes(&chaining_value(&core));
    last.zeroize();
    out
}

/// HMAC-SM3 keyed once: SM3's state after the inner and the outer key block.
#[derive(Clone)]
struct HmacSm3 {
    inner: Sm3Core,
    outer: Sm3Core,
}

impl HmacSm3 {
    fn new(key: &[u8; MAC_LEN]) -> Self {
        Self::with_core(Sm3Core::default(), key)
    }

    /// Keyed on `base`, a fresh SM3 state (of a chosen backend, in tests).
    fn with_core(base: Sm3Core, key: &[u8; MAC_LEN]) -> Self {
        let mut ipad = [0x36u8; 64];
        let mut opad = [0x5cu8; 64];
        for (i, k) in key.iter().enumerate() {
            ipad[i] ^= k;
            opad[i] ^= k;
        }
        let mut inner = base.clone();
        inner.update_blocks(&[ipad.into()]);
        let mut outer = base;
        outer.update_blocks(&[opad.into()]);
        ipad.zeroize();
        opad.zeroize();
        Self { inner, outer }
    }

    /// The tag over `inner_digest` (the outer hash).
    fn outer(&self, inner_digest: &[u8; 32]) -> [u8; 32] {
        finish(self.outer.clone(), 64, inner_digest)
    }

    /// The tag of `parts` (public lengths).
    fn tag(&self, header: &[u8; 13], data: &[u8]) -> [u8; 32] {
        // header || data is not block-aligned: absorb the whole blocks of
        // the concatenation without copying all of `data`.
        let mut core = self.inner.clone();
        let mut first = [0u8; 64];
        let head = (64 - 13).min(data.len());
        first[..13].copy_from_slice(header);
        first[13..13 + head].copy_from_slice(&data[..head]);
        let len = 13 + head;
        if len < 64 {
            return self.outer(&finish(core, 64, &first[..len]));
        }
        core.update_blocks(&[first.into()]);
        self.outer(&finish(core, 128, &data[head..]))
    }
}

// ---- SM4-CBC with HMAC-SM3 ----

pub(crate) struct CbcKeys {
    cipher: Sm4,
    mac: HmacSm3,
}

impl CbcKeys {
    pub(crate) fn new(mac_key: &[u8; MAC_LEN], enc_key: &[u8; 16]) -> Self {
        Self {
            cipher: Sm4::new(enc_key.into()),
            mac: HmacSm3::new(mac_key),
        }
    }

    /// The record body of `plain`: IV || SM4-CBC(data || MAC || padding).
    pub(crate) fn seal(
        &self,
        seq: u64,
        typ: u8,
        version: [u8; 2],
        plain: &[u8],
        iv: [u8; BLOCK],
    ) -> Vec<u8> {
        let tag = self.mac.tag(&header(seq, typ, version, plain.len()), plain);
        let unpadded = plain.len() + MAC_LEN + 1;
        let pad = (BLOCK - unpadded % BLOCK) % BLOCK;
        let mut body = Vec::with_capacity(BLOCK + unpadded + pad);
        body.extend_from_slice(&iv);
        body.extend_from_slice(plain);
        body.extend_from_slice(&tag);
        body.resize(body.len() + pad + 1, pad as u8);
        let (blocks, _) = sm4_simd::cipher::Block::<Sm4>::slice_as_chunks_mut(&mut body[BLOCK..]);
        Sm4CbcEnc::inner_iv_init(self.cipher.clone(), &iv.into()).encrypt_blocks(blocks);
        body
    }

    /// Decrypts and checks `body` (IV || ciphertext) in place; the range of
    /// the plaintext in `body`, or `None` (bad_record_mac) whatever was
    /// wrong: length, padding or MAC.
    pub(crate) fn open(
        &self,
        seq: u64,
        typ: u8,
        version: [u8; 2],
        body: &mut [u8],
    ) -> Option<core::ops::Range<usize>> {
        let (good, len) = self.open_ct(seq, typ, version, body)?;
        crate::declassify::is_true(good).then_some(BLOCK..BLOCK + len)
    }

    /// [`open`](Self::open) without its one branch: `None` for a length no
    /// record can have (public), else whether the record is good (1 or 0)
    /// and, if it is, the plaintext length. The same work for every body of
    /// a given length.
    pub(crate) fn open_ct(
        &self,
        seq: u64,
        typ: u8,
        version: [u8; 2],
        body: &mut [u8],
    ) -> Option<(u8, usize)> {
        // IV, then at least MAC and one padding byte in whole blocks.
        let n = body.len().checked_sub(BLOCK)?;
        if n < MAC_LEN + BLOCK || n % BLOCK != 0 || n > MAX_CIPHERTEXT {
            return None;
        }
        let (iv, data) = body.split_at_mut(BLOCK);
        let iv: [u8; BLOCK] = iv.try_into().ok()?;
        let (blocks, _) = sm4_simd::cipher::Block::<Sm4>::slice_as_chunks_mut(data);
        Sm4CbcDec::inner_iv_init(self.cipher.clone(), &iv.into()).decrypt_blocks(blocks);

        let p = &body[BLOCK..];
        let max_data = n - MAC_LEN - 1;
        // The padding length, and whether the record can hold it.
        let claimed = usize::from(p[n - 1]);
        let fits = ct::le(claimed, max_data);
        let pad = claimed & fits;
        // Every byte of the padding equals its length (the last 256 bytes
        // at most, all of them looked at).
        let window = 255.min(max_data);
        let mut diff = 0u8;
        for i in 1..=window {
            let in_pad = ct::byte(ct::le(i, pad));
            diff |= in_pad & (p[n - 1 - i] ^ pad as u8);
        }
        let data_len = max_data - pad;

        // HMAC-SM3 over header || data, data_len secret in
        // [max_data - window, max_data]: the header goes in the 13 bytes
        // before the plaintext (the IV, no longer needed).
        let hdr = header(seq, typ, version, data_len);
        body[BLOCK - 13..BLOCK].copy_from_slice(&hdr);
        let msg = &body[BLOCK - 13..BLOCK + max_data];
        let m = 13 + data_len;
        let m_max = msg.len();
        let m_min = m_max - window;
        let mut core = self.mac.inner.clone();
        let first_masked = m_min / 64;
        let (blocks, _) = Sm3Block::slice_as_chunks(&msg[..first_masked * 64]);
        core.update_blocks(blocks);
        let final_block = (m + 8) / 64;
        let bit_len = ((64 + m) as u64 * 8).to_be_bytes();
        let mut chaining = [0u32; 8];
        for k in first_masked..=(m_max + 8) / 64 {
            let mut block = [0u8; 64];
            for (j, b) in block.iter_mut().enumerate() {
                let pos = k * 64 + j;
                let byte = if pos < m_max { msg[pos] } else { 0 };
                *b = (byte & ct::byte(ct::lt(pos, m))) | (0x80 & ct::byte(ct::eq(pos, m)));
            }
            let is_final = ct::eq(k, final_block);
            for (b, l) in block[56..].iter_mut().zip(bit_len) {
                *b |= l & ct::byte(is_final);
            }
            core.update_blocks(&[block.into()]);
            let h = chaining_value(&core);
            for (c, w) in chaining.iter_mut().zip(h) {
                *c |= w & is_final as u32;
            }
            block.zeroize();
        }
        let tag = self.mac.outer(&digest_bytes(&chaining));

        // The MAC on the wire, at secret offset data_len.
        let p = &body[BLOCK..];
        let mut received = [0u8; MAC_LEN];
        for o in max_data - window..=max_data {
            let here = ct::byte(ct::eq(o, data_len));
            for (r, b) in received.iter_mut().zip(&p[o..o + MAC_LEN]) {
                *r |= b & here;
            }
        }
        for (r, t) in received.iter().zip(tag) {
            diff |= r ^ t;
        }
        let good = ct::byte(fits & ct::is_zero(usize::from(diff))) & 1;
        Some((good, data_len & (good as usize).wrapping_neg()))
    }
}

// ---- SM4-GCM ----

pub(crate) struct GcmKeys {
    aead: Sm4Gcm,
    /// The implicit part of the nonce, from the key block.
    fixed: [u8; 4],
}

impl GcmKeys {
    pub(crate) fn new(key: &[u8; 16], fixed: &[u8; 4]) -> Self {
        Self {
            aead: Sm4Gcm::new(key.into()),
            fixed: *fixed,
        }
    }

    fn nonce(&self, explicit: &[u8]) -> [u8; 12] {
        let mut n = [0u8; 12];
        n[..4].copy_from_slice(&self.fixed);
        n[4..].copy_from_slice(explicit);
        n
    }

    /// explicit nonce (the sequence number) || ciphertext || tag.
    #[cfg(any(test, feature = "hooks"))]
    pub(crate) fn seal(&self, seq: u64, typ: u8, version: [u8; 2], plain: &[u8]) -> Vec<u8> {
        let mut body = Vec::with_capacity(GCM_EXPLICIT + plain.len() + GCM_TAG);
        self.seal_into(seq, typ, version, plain, &mut body);
        body
    }

    /// The sealed record body (explicit nonce, ciphertext, tag), appended
    /// to `out` and sealed there in place.
    pub(crate) fn seal_into(
        &self,
        seq: u64,
        typ: u8,
        version: [u8; 2],
        plain: &[u8],
        out: &mut Vec<u8>,
    ) {
        let explicit = seq.to_be_bytes();
        let aad = header(seq, typ, version, plain.len());
        out.extend_from_slice(&explicit);
        let start = out.len();
        out.extend_from_slice(plain);
        let tag = self
            .aead
            .encrypt_inout_detached(
                &self.nonce(&explicit).into(),
                &aad,
                (&mut out[start..]).into(),
            )
            .expect("a record is far below SM4-GCM's message limit");
        out.extend_from_slice(&tag);
    }

    /// The length of the body that seals `plain_len` bytes.
    pub(crate) fn sealed_len(plain_len: usize) -> usize {
        GCM_EXPLICIT + plain_len + GCM_TAG
    }

    /// Decrypts `body` in place; the range of the plaintext, or `None`.
    pub(crate) fn open(
        &self,
        seq: u64,
        typ: u8,
        version: [u8; 2],
        body: &mut [u8],
    ) -> Option<core::ops::Range<usize>> {
        let len = body.len().checked_sub(GCM_EXPLICIT + GCM_TAG)?;
        if body.len() > MAX_CIPHERTEXT {
            return None;
        }
        let aad = header(seq, typ, version, len);
        let (explicit, rest) = body.split_at_mut(GCM_EXPLICIT);
        let nonce = self.nonce(explicit);
        let (ciphertext, tag) = rest.split_at_mut(len);
        let tag: [u8; GCM_TAG] = (*tag).try_into().ok()?;
        self.aead
            .decrypt_inout_detached(&nonce.into(), &aad, ciphertext.into(), &tag.into())
            .ok()?;
        Some(GCM_EXPLICIT..GCM_EXPLICIT + len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hmac::Mac;

    fn reference_tag(key: &[u8; 32], hdr: &[u8], data: &[u8]) -> [u8; 32] {
        let mut m = hmac::Hmac::<sm3_simd::Sm3>::new_from_slice(key).unwrap();
        m.update(hdr);
        m.update(data);
        m.finalize().into_bytes().into()
    }

    #[test]
    fn block_level_hmac_matches_hmac_crate() {
        let key = [0x4b; 32];
        let mac = HmacSm3::new(&key);
        for len in [
            0usize, 1, 42, 50, 51, 52, 64, 100, 115, 116, 117, 1000, 16384,
        ] {
            let data: Vec<u8> = (0..len).map(|i| (i * 31) as u8).collect();
            let hdr = header(7, 23, [1, 1], len);
            assert_eq!(
                mac.tag(&hdr, &data),
                reference_tag(&key, &hdr, &data),
                "{len}"
            );
        }
    }

    fn cbc_pair() -> (CbcKeys, CbcKeys) {
        let (mk, ek) = ([9u8; 32], [3u8; 16]);
        (CbcKeys::new(&mk, &ek), CbcKeys::new(&mk, &ek))
    }

    #[test]
    fn cbc_round_trips_and_refuses_every_single_bit_flip() {
        let (tx, rx) = cbc_pair();
        for len in [0usize, 1, 15, 16, 31, 47, 48, 100, 255, 256, 1000, 16384] {
            let plain: Vec<u8> = (0..len).map(|i| (i * 7 + 1) as u8).collect();
            let body = tx.seal(5, 23, [1, 1], &plain, [0xa5; 16]);
            assert_eq!((body.len() - 16) % 16, 0);
            let mut b = body.clone();
            let r = rx.open(5, 23, [1, 1], &mut b).expect("good record");
            assert_eq!(&b[r], &plain[..]);
            // Another sequence number, type or version: refused.
            assert!(rx.open(6, 23, [1, 1], &mut body.clone()).is_none());
            assert!(rx.open(5, 22, [1, 1], &mut body.clone()).is_none());
            assert!(rx.open(5, 23, [3, 3], &mut body.clone()).is_none());
            if len <= 48 {
                for bit in 0..body.len() * 8 {
                    let mut b = body.clone();
                    b[bit / 8] ^= 1 << (bit % 8);
                    assert!(
                        rx.open(5, 23, [1, 1], &mut b).is_none(),
                        "{len} bytes, bit {bit}"
                    );
                }
            }
        }
    }

    /// Records with every padding length a peer may choose (TLS allows
    /// up to 255 bytes of padding), and forged paddings.
    #[test]
    fn cbc_every_padding_length() {
        let (tx, rx) = cbc_pair();
        let plain = [0x61u8; 40];
        for extra in 0..=255usize {
            // Build the record by hand with `pad` bytes of padding.
            let tag = tx.mac.tag(&header(1, 23, [1, 1], plain.len()), &plain);
            let unpadded = plain.len() + 32 + 1;
            let pad = (16 - unpadded % 16) % 16 + extra / 16 * 16;
            if pad > 255 {
                break;
            }
            let mut body = vec![0x11u8; 16];
            body.extend_from_slice(&plain);
            body.extend_from_slice(&tag);
            body.resize(body.len() + pad + 1, pad as u8);
            let iv = [0x11u8; 16];
            let (blocks, _) = sm4_simd::cipher::Block::<Sm4>::slice_as_chunks_mut(&mut body[16..]);
            Sm4CbcEnc::inner_iv_init(tx.cipher.clone(), &iv.into()).encrypt_blocks(blocks);
            let mut b = body.clone();
            let r = rx
                .open(1, 23, [1, 1], &mut b)
                .unwrap_or_else(|| panic!("pad {pad}"));
            assert_eq!(&b[r], &plain[..]);
        }
        // A padding byte that disagrees with the length byte.
        let tag = tx.mac.tag(&header(1, 23, [1, 1], 10), &plain[..10]);
        let mut body = vec![0u8; 16];
        body.extend_from_slice(&plain[..10]);
        body.extend_from_slice(&tag);
        body.extend_from_slice(&[5, 5, 5, 4, 5, 5]); // 10 + 32 + 6 = 48
        let (blocks, _) = sm4_simd::cipher::Block::<Sm4>::slice_as_chunks_mut(&mut body[16..]);
        Sm4CbcEnc::inner_iv_init(tx.cipher.clone(), &[0u8; 16].into()).encrypt_blocks(blocks);
        assert!(rx.open(1, 23, [1, 1], &mut body).is_none());
    }

    #[test]
    fn cbc_bad_lengths_are_refused() {
        let (_, rx) = cbc_pair();
        for len in [0usize, 15, 16, 17, 32, 48, 63, 16 + 47] {
            assert!(rx.open(0, 23, [1, 1], &mut vec![0; len]).is_none(), "{len}");
        }
        // Well-formed length, random content: refused.
        assert!(rx.open(0, 23, [1, 1], &mut [0x5a; 16 + 64]).is_none());
    }

    #[test]
    fn gcm_round_trips_and_refuses_flips() {
        let tx = GcmKeys::new(&[1; 16], &[2; 4]);
        let rx = GcmKeys::new(&[1; 16], &[2; 4]);
        for len in [0usize, 1, 16, 100, 16384] {
            let plain = vec![0x33u8; len];
            let body = tx.seal(9, 23, [1, 1], &plain);
            assert_eq!(body.len(), 8 + len + 16);
            assert_eq!(body[..8], 9u64.to_be_bytes());
            let mut b = body.clone();
            let r = rx.open(9, 23, [1, 1], &mut b).unwrap();
            assert_eq!(&b[r], &plain[..]);
            for at in [0, 8, body.len() - 1] {
                let mut b = body.clone();
                b[at] ^= 0x80;
                assert!(rx.open(9, 23, [1, 1], &mut b).is_none());
            }
            assert!(rx.open(10, 23, [1, 1], &mut body.clone()).is_none());
        }
        assert!(rx.open(0, 23, [1, 1], &mut [0u8; 23]).is_none());
    }
}

/// Hooks for the workspace's constant-time check (`ctcheck`), behind the
/// non-default feature `hooks`: record protection with a caller's keys,
/// outside a connection. Not a stable API; nothing but a test should turn
/// it on.
#[cfg(feature = "hooks")]
pub mod hooks {
    use super::{CbcKeys, GcmKeys};

    /// SM4-CBC + HMAC-SM3 record keys.
    #[allow(missing_debug_implementations)] // holds keys
    pub struct CbcRecord(CbcKeys);

    impl CbcRecord {
        /// With SM4 and SM3 pinned to these backends; `None` if the CPU
        /// lacks one.
        pub fn with_backends(
            mac_key: &[u8; 32],
            enc_key: &[u8; 16],
            sm4: sm4_simd::Backend,
            sm3: sm3_simd::Backend,
        ) -> Option<Self> {
            use sm3_simd::digest::block_api::CoreProxy;
            let core = sm3_simd::Sm3::with_backend(sm3)?.decompose().0;
            Some(Self(CbcKeys {
                cipher: sm4_simd::Sm4::with_backend(enc_key, sm4)?,
                mac: super::HmacSm3::with_core(core, mac_key),
            }))
        }

        /// IV || SM4-CBC(plain || MAC || padding).
        pub fn seal(&self, seq: u64, typ: u8, plain: &[u8], iv: [u8; 16]) -> Vec<u8> {
            self.0.seal(seq, typ, [1, 1], plain, iv)
        }

        /// The constant-time open: `None` for an impossible length, else
        /// (1 if good / 0, the plaintext length if good), without a branch
        /// on either.
        pub fn open_ct(&self, seq: u64, typ: u8, body: &mut [u8]) -> Option<(u8, usize)> {
            self.0.open_ct(seq, typ, [1, 1], body)
        }
    }

    /// SM4-GCM record keys.
    #[allow(missing_debug_implementations)] // holds keys
    pub struct GcmRecord(GcmKeys);

    impl GcmRecord {
        /// With SM4 and GHASH pinned; `None` if the CPU lacks them.
        pub fn with_backends(
            key: &[u8; 16],
            implicit_iv: &[u8; 4],
            sm4: sm4_simd::Backend,
            ghash: sm4_simd::GhashEngine,
        ) -> Option<Self> {
            Some(Self(GcmKeys {
                aead: sm4_simd::Sm4Gcm::with_backend(key, sm4, ghash)?,
                fixed: *implicit_iv,
            }))
        }

        pub fn seal(&self, seq: u64, typ: u8, plain: &[u8]) -> Vec<u8> {
            self.0.seal(seq, typ, [1, 1], plain)
        }

        /// The plaintext's range in `body`, `None` if the tag is wrong.
        pub fn open(&self, seq: u64, typ: u8, body: &mut [u8]) -> Option<core::ops::Range<usize>> {
            self.0.open(seq, typ, [1, 1], body)
        }
    }
}
