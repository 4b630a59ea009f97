//! SM4-GCM (NIST SP 800-38D; RFC 8998's `TLS_SM4_GCM_SM3`): CTR and GHASH
//! in one pass, inside one `#[target_feature]` runner.

use super::common::{Blk, check_tag, wipe, xor};
use crate::Sm4;
use crate::backends::{GcmBackend, GcmClosure, with_gcm};
use crate::ghash::{Ghash, GhashKey};
use crate::kernel::{Kernel, LazyStage, SIDE_STEPS, STAGE};
use aead::{AeadCore, AeadInOut, Nonce, Tag, TagPosition};
use cipher::{
    BlockCipherEncrypt, InOutBuf,
    common::{InnerInit, InnerUser},
    consts::{U12, U16},
};
use core::fmt;

/// The longest plaintext GCM allows: 2^39 - 256 bits.
const P_MAX: u64 = (1 << 36) - 32;
/// The longest AAD: 2^64 - 1 bits.
const A_MAX: u64 = (1 << 61) - 1;

/// SM4-GCM with a 12-byte nonce and a 16-byte tag (RFC 8998): `KeyInit`
/// (16-byte key) and the `aead` 0.6 traits (`AeadInOut`, and `Aead` with
/// the `alloc` feature); byte for byte `aes_gcm::AesGcm<Sm4, U12>`.
///
/// One pass over the message: each stage of counter blocks goes through the
/// backend's widest kernel while GHASH (VPCLMULQDQ on `gfni`, and on `avx`
/// and `gfni256` where the CPU has it, else PCLMULQDQ; PMULL on aarch64, a
/// constant-time portable
/// multiplication elsewhere; one reduction per 4 to 16 blocks over the
/// key's powers of H) hashes the ciphertext of the stage before, both in
/// the same `#[target_feature]` function. `E(J0)` rides with the counter
/// blocks, so a short message costs about one block's latency. On a tag
/// mismatch, decryption returns `aead::Error` and zeroes the output (no
/// unauthenticated plaintext is left); the tag is compared in constant
/// time. Plaintexts up to 2^36 - 32 bytes.
///
/// ```
/// use sm4_simd::Sm4Gcm;
/// use sm4_simd::aead::{AeadInOut, KeyInit};
///
/// let gcm = Sm4Gcm::new(&[0x42; 16].into());
/// let nonce = [7u8; 12].into();
/// let mut buf = *b"record body";
/// let tag = gcm
///     .encrypt_inout_detached(&nonce, b"header", (&mut buf[..]).into())
///     .unwrap();
/// gcm.decrypt_inout_detached(&nonce, b"header", (&mut buf[..]).into(), &tag)
///     .unwrap();
/// assert_eq!(&buf, b"record body");
/// ```
#[derive(Clone)]
pub struct Sm4Gcm {
    cipher: Sm4,
    key: GhashKey,
    gcm: GcmBackend,
}

impl InnerUser for Sm4Gcm {
    type Inner = Sm4;
}

impl InnerInit for Sm4Gcm {
    fn inner_init(cipher: Sm4) -> Self {
        let mut h = Blk::default();
        cipher.encrypt_block(&mut h);
        let key = GhashKey::new(&h.0);
        wipe(core::slice::from_mut(&mut h));
        Sm4Gcm {
            gcm: GcmBackend::new(cipher.backend),
            cipher,
            key,
        }
    }
}

impl Sm4Gcm {
    /// Test hook: a key with a given backend and GHASH engine, or `None` if
    /// the CPU lacks either or the pair has no runner.
    #[doc(hidden)]
    pub fn with_backend(
        key: &[u8; 16],
        backend: crate::Backend,
        engine: crate::GhashEngine,
    ) -> Option<Self> {
        let gcm = GcmBackend::with_engine(backend, engine)?;
        let mut g = Self::inner_init(Sm4::with_backend(key, backend)?);
        g.gcm = gcm;
        Some(g)
    }
}

impl From<Sm4> for Sm4Gcm {
    fn from(cipher: Sm4) -> Self {
        Self::inner_init(cipher)
    }
}

impl AeadCore for Sm4Gcm {
    type NonceSize = U12;
    type TagSize = U16;
    const TAG_POSITION: TagPosition = TagPosition::Postfix;
}

/// One message, sealed or opened; returns `GHASH ^ E(J0)`, the full tag.
struct Run<'a, 'i, 'o> {
    rk: &'a [u32; 32],
    key: &'a GhashKey,
    j0: u128,
    aad: &'a [u8],
    data: InOutBuf<'i, 'o, u8>,
    decrypt: bool,
}

impl GcmClosure for Run<'_, '_, '_> {
    type Output = Blk;

    #[inline(always)]
    fn call<K: Kernel, G: Ghash>(self, k: K, g: G) -> Blk {
        let Run {
            rk,
            key,
            j0,
            aad,
            data,
            decrypt,
        } = self;
        let len_block = {
            let mut b = Blk::default();
            b[..8].copy_from_slice(&(aad.len() as u64 * 8).to_be_bytes());
            b[8..].copy_from_slice(&(data.len() as u64 * 8).to_be_bytes());
            b
        };
        let mut y = [0u8; 16];
        let (mut blocks, mut tail) = data.into_chunks();
        let n = blocks.len();
        let tail_len = tail.len();
        let c1 = j0.wrapping_add(1);
        // E(J0) and the tail's keystream ride with the last stage.
        let mut extra = [
            (j0, Blk::default()),
            (c1.wrapping_add(n as u128), Blk::default()),
        ];
        let extras = 1 + usize::from(tail_len > 0);
        if n + extras <= 4 {
            // A short message: every block at one block's latency, and the
            // AAD (up to a block), the ciphertext, the padded tail and the
            // length block hashed in one call (one reduction).
            let ctr = |c: u128| u128::from_ne_bytes(c.to_be_bytes());
            // All four lanes, whatever `n`: the counters stay in registers
            // (an array filled in a loop would be stored and reloaded), and
            // the kernel computes four lanes anyway.
            let vals = [
                ctr(j0),
                ctr(c1),
                ctr(c1.wrapping_add(1)),
                ctr(c1.wrapping_add(2)),
            ];
            let mut hashed = [Blk::default(); 5];
            let mut h = 0;
            if aad.len() > 16 {
                g.update_padded(key, &mut y, aad);
            } else if !aad.is_empty() {
                hashed[0][..aad.len()].copy_from_slice(aad);
                h = 1;
            }
            let mut v = k.crypt_values(rk, vals, n + extras);
            // Block by block with a constant bound (no `memcpy` call).
            for i in 0..3 {
                if i < n {
                    let mut b = blocks.get(i);
                    let x = *b.get_in();
                    let c = xor(&x, &v[1 + i]);
                    *b.get_out() = c;
                    hashed[h + i] = if decrypt { x } else { c };
                }
            }
            h += n;
            if tail_len > 0 {
                let ks = v[1 + n];
                if decrypt {
                    hashed[h][..tail_len].copy_from_slice(tail.get_in());
                    tail.xor_in2out(&ks[..tail_len]);
                } else {
                    tail.xor_in2out(&ks[..tail_len]);
                    hashed[h][..tail_len].copy_from_slice(tail.get_out());
                }
                h += 1;
            }
            hashed[h] = len_block;
            g.update(key, &mut y, &hashed[..=h]);
            let tag = xor(&y.into(), &v[0]);
            #[cfg(feature = "zeroize")]
            zeroize::Zeroize::zeroize(&mut y);
            wipe(&mut v);
            return tag;
        } else {
            g.update_padded(key, &mut y, aad);
            let mut c = c1;
            let mut done = 0;
            // A full stage is hashed beside a kernel call
            // (`ctr_xor_beside`): encrypting, the ciphertext of the stage
            // before during this one's; decrypting, this stage's own
            // ciphertext, before the kernel overwrites it. Other stages are
            // hashed on their own.
            let mut pending: Option<InOutBuf<'_, '_, Blk>> = None;
            let mut stage = LazyStage::new();
            loop {
                let m = core::cmp::min(STAGE, n - done);
                let (mut chunk, rest) = blocks.split_at(m);
                let last = done + m == n;
                let ex: &mut [(u128, Blk)] = if last { &mut extra[..extras] } else { &mut [] };
                let beside = if decrypt {
                    m == STAGE
                } else {
                    pending.as_ref().is_some_and(|p| p.len() == STAGE)
                };
                if beside {
                    let prev: Option<&[Blk]> = pending.take().map(|p| &*p.into_out());
                    const STEP: usize = STAGE / SIDE_STEPS;
                    let mut i = 0;
                    let mut hash_steps = |steps: usize, own: &[Blk]| {
                        let src = match prev {
                            Some(p) => &p[STEP * i..STEP * (i + steps)],
                            None => own,
                        };
                        g.update(key, &mut y, src);
                        i += steps;
                    };
                    k.ctr_xor_beside(rk, c, chunk.reborrow(), ex, &mut stage, &mut hash_steps);
                    debug_assert_eq!(i, SIDE_STEPS);
                } else {
                    if decrypt {
                        // The ciphertext, before it is overwritten.
                        g.update(key, &mut y, chunk.get_in());
                    } else if let Some(p) = pending.take() {
                        g.update(key, &mut y, p.into_out());
                    }
                    k.ctr_xor(rk, c, chunk.reborrow(), ex, &mut stage);
                }
                if !decrypt {
                    pending = Some(chunk);
                }
                blocks = rest;
                c = c.wrapping_add(m as u128);
                done += m;
                if last {
                    break;
                }
            }
            if let Some(p) = pending.take() {
                g.update(key, &mut y, p.into_out());
            }
        }
        if tail_len > 0 {
            let ks = extra[1].1;
            if decrypt {
                g.update_padded(key, &mut y, tail.get_in());
                tail.xor_in2out(&ks[..tail_len]);
            } else {
                tail.xor_in2out(&ks[..tail_len]);
                g.update_padded(key, &mut y, tail.get_out());
            }
        }
        g.update(key, &mut y, core::slice::from_ref(&len_block));
        let tag = xor(&y.into(), &extra[0].1);
        #[cfg(feature = "zeroize")]
        {
            zeroize::Zeroize::zeroize(&mut y);
            for (_, b) in extra.iter_mut() {
                wipe(core::slice::from_mut(b));
            }
        }
        tag
    }
}

impl Sm4Gcm {
    fn run(
        &self,
        nonce: &Nonce<Self>,
        aad: &[u8],
        data: InOutBuf<'_, '_, u8>,
        decrypt: bool,
    ) -> aead::Result<Blk> {
        if !lengths_ok(data.len() as u64, aad.len() as u64) {
            return Err(aead::Error);
        }
        let mut j0 = [0u8; 16];
        j0[..12].copy_from_slice(nonce);
        j0[15] = 1;
        Ok(with_gcm(
            self.gcm,
            Run {
                rk: &self.cipher.enc,
                key: &self.key,
                j0: u128::from_be_bytes(j0),
                aad,
                data,
                decrypt,
            },
        ))
    }
}

/// Whether GCM takes a message of `p` bytes with `a` bytes of AAD.
fn lengths_ok(p: u64, a: u64) -> bool {
    p <= P_MAX && a <= A_MAX
}

impl AeadInOut for Sm4Gcm {
    fn encrypt_inout_detached(
        &self,
        nonce: &Nonce<Self>,
        associated_data: &[u8],
        buffer: InOutBuf<'_, '_, u8>,
    ) -> aead::Result<Tag<Self>> {
        self.run(nonce, associated_data, buffer, false)
    }

    fn decrypt_inout_detached(
        &self,
        nonce: &Nonce<Self>,
        associated_data: &[u8],
        mut buffer: InOutBuf<'_, '_, u8>,
        tag: &Tag<Self>,
    ) -> aead::Result<()> {
        // Decrypted in the same pass as the hash.
        let full = self.run(nonce, associated_data, buffer.reborrow(), true)?;
        check_tag(&full, tag, buffer.get_out())
    }
}

impl fmt::Debug for Sm4Gcm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sm4Gcm")
            .field("backend", &self.cipher.backend.name())
            .field("ghash", &self.gcm.engine().name())
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "zeroize")]
impl zeroize::ZeroizeOnDrop for Sm4Gcm {}

#[cfg(test)]
mod tests {
    /// The limits (buffers that long cannot be made in a test).
    #[test]
    fn length_limits() {
        use super::{A_MAX, P_MAX, lengths_ok};
        assert!(lengths_ok(P_MAX, A_MAX));
        assert!(!lengths_ok(P_MAX + 1, 0));
        assert!(!lengths_ok(0, A_MAX + 1));
        assert_eq!(P_MAX, (1 << 36) - 32);
    }
}
