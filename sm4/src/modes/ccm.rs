//! SM4-CCM (NIST SP 800-38C, RFC 3610; RFC 8998's `TLS_SM4_CCM_SM3`
//! shape by default): the CBC-MAC chain with the CTR blocks riding in its
//! spare lanes.

use super::common::{Blk, check_tag, wipe, xor};
use crate::Sm4;
use crate::backends::with_kernel;
use crate::kernel::{ChainIo, Kernel, KernelClosure};
use aead::{AeadCore, AeadInOut, Nonce, Tag, TagPosition};
use cipher::{
    InOutBuf,
    array::ArraySize,
    common::{InnerInit, InnerUser},
    consts::{U4, U6, U7, U8, U9, U10, U11, U12, U13, U14, U16},
};
use core::fmt;
use core::marker::PhantomData;

mod sealed {
    pub trait Sealed {}
}

/// A CCM tag length: 4, 6, 8, 10, 12, 14 or 16 bytes.
pub trait CcmTagSize: ArraySize + sealed::Sealed {}
/// A CCM nonce length: 7 to 13 bytes (the length field takes the other
/// `15 - N` bytes of a block).
pub trait CcmNonceSize: ArraySize + sealed::Sealed {}

macro_rules! sizes {
    ($tr:ident: $($n:ty),*) => {
        $(impl sealed::Sealed for $n {} impl $tr for $n {})*
    };
}
sizes!(CcmTagSize: U4, U6, U8, U10, U14, U16);
sizes!(CcmNonceSize: U7, U9, U11, U13);
// U12 is both a tag and a nonce length.
impl sealed::Sealed for U12 {}
impl CcmTagSize for U12 {}
impl CcmNonceSize for U12 {}
impl CcmNonceSize for U8 {}
impl CcmNonceSize for U10 {}

/// SM4-CCM with an `M`-byte tag and an `N`-byte nonce: `KeyInit` (16-byte
/// key) and the `aead` 0.6 traits (`AeadInOut`, and `Aead` with the
/// `alloc` feature); byte for byte `ccm::Ccm<Sm4, M, N>`. [`Sm4Ccm`] is
/// RFC 8998's shape.
///
/// The CBC-MAC over the nonce block, the AAD and the plaintext is one
/// serial chain of block encryptions; the counter blocks of the CTR half
/// are encrypted in the same calls, in lanes of the single-block path that
/// the chain leaves idle, so the CTR half costs almost nothing beside it.
/// On a tag mismatch, decryption returns `aead::Error` and the output is
/// zeroed (no unauthenticated plaintext is left); the tag is compared in
/// constant time.
///
/// ```
/// use sm4_simd::Sm4Ccm;
/// use sm4_simd::aead::{AeadInOut, KeyInit};
///
/// let ccm = Sm4Ccm::new(&[0x42; 16].into());
/// let nonce = [7u8; 12].into();
/// let mut buf = *b"record body";
/// let tag = ccm
///     .encrypt_inout_detached(&nonce, b"header", (&mut buf[..]).into())
///     .unwrap();
/// ccm.decrypt_inout_detached(&nonce, b"header", (&mut buf[..]).into(), &tag)
///     .unwrap();
/// assert_eq!(&buf, b"record body");
/// ```
pub struct Ccm<M: CcmTagSize, N: CcmNonceSize> {
    cipher: Sm4,
    sizes: PhantomData<(M, N)>,
}

impl<M: CcmTagSize, N: CcmNonceSize> Clone for Ccm<M, N> {
    fn clone(&self) -> Self {
        Ccm {
            cipher: self.cipher.clone(),
            sizes: PhantomData,
        }
    }
}

impl<M: CcmTagSize, N: CcmNonceSize> InnerUser for Ccm<M, N> {
    type Inner = Sm4;
}

impl<M: CcmTagSize, N: CcmNonceSize> InnerInit for Ccm<M, N> {
    fn inner_init(cipher: Sm4) -> Self {
        Ccm {
            cipher,
            sizes: PhantomData,
        }
    }
}

impl<M: CcmTagSize, N: CcmNonceSize> From<Sm4> for Ccm<M, N> {
    fn from(cipher: Sm4) -> Self {
        Self::inner_init(cipher)
    }
}

impl<M: CcmTagSize, N: CcmNonceSize> AeadCore for Ccm<M, N> {
    type NonceSize = N;
    type TagSize = M;
    const TAG_POSITION: TagPosition = TagPosition::Postfix;
}

/// The blocks of one CCM message: `B_0`, the formatted AAD (its length
/// header, the AAD, zero padding) and the payload, and the counter blocks.
struct Layout<'a> {
    b0: Blk,
    /// The counter block `A_0` (the counter field zero).
    a0: Blk,
    header: [u8; 10],
    header_len: usize,
    aad: &'a [u8],
    /// Blocks of formatted AAD and of payload.
    aad_blocks: usize,
    payload_blocks: usize,
}

impl<'a> Layout<'a> {
    /// `None` when the payload does not fit the length field.
    fn new(nonce: &[u8], tag_len: usize, aad: &'a [u8], len: usize) -> Option<Self> {
        let l = 15 - nonce.len();
        if l < 8 && (len as u64) >> (8 * l) != 0 {
            return None;
        }
        let mut b0 = Blk::default();
        b0[0] = 64 * u8::from(!aad.is_empty()) + 8 * ((tag_len as u8 - 2) / 2) + (l as u8 - 1);
        b0[1..1 + nonce.len()].copy_from_slice(nonce);
        b0[16 - l..].copy_from_slice(&(len as u64).to_be_bytes()[8 - l..]);
        let mut a0 = Blk::default();
        a0[0] = l as u8 - 1;
        a0[1..1 + nonce.len()].copy_from_slice(nonce);
        let mut header = [0u8; 10];
        let header_len = match aad.len() as u64 {
            0 => 0,
            n if n < 0xff00 => {
                header[..2].copy_from_slice(&(n as u16).to_be_bytes());
                2
            }
            n if n <= u32::MAX as u64 => {
                header[..2].copy_from_slice(&[0xff, 0xfe]);
                header[2..6].copy_from_slice(&(n as u32).to_be_bytes());
                6
            }
            n => {
                header[..2].copy_from_slice(&[0xff, 0xff]);
                header[2..10].copy_from_slice(&n.to_be_bytes());
                10
            }
        };
        Some(Layout {
            b0,
            a0,
            header,
            header_len,
            aad,
            aad_blocks: (header_len + aad.len()).div_ceil(16),
            payload_blocks: len.div_ceil(16),
        })
    }

    /// Block `i` of the formatted AAD.
    #[inline(always)]
    fn aad_block(&self, i: usize) -> Blk {
        let mut b = Blk::default();
        let start = 16 * i;
        for (k, byte) in b.iter_mut().enumerate() {
            let p = start + k;
            *byte = if p < self.header_len {
                self.header[p]
            } else if p - self.header_len < self.aad.len() {
                self.aad[p - self.header_len]
            } else {
                0
            };
        }
        b
    }

    /// The counter block `A_j` as a native-endian number (see
    /// [`ChainIo::feed`]): `j` in the last `l` bytes, big-endian.
    #[inline(always)]
    fn counter(&self, j: usize) -> u128 {
        let a0 = u128::from_ne_bytes(self.a0.0);
        if cfg!(target_endian = "little") {
            a0 | (j as u128).swap_bytes()
        } else {
            a0 | j as u128
        }
    }
}

/// The chain's two ends for one message. Step 0 chains `B_0`, steps
/// `1..=a` the AAD blocks, step `a + j` payload block `j` (1-based); the
/// counter blocks ride in the side lanes. Encrypting, `E(A_j)` is made at
/// step `a + j`, beside the plaintext it encrypts, and the ciphertext is
/// written when the step ends. Decrypting, the chain's input is the
/// plaintext, which needs `E(A_j)` first: it is made at step `a + j - 2`
/// (a kernel may feed step `s + 1` before step `s` ends), and with no AAD
/// the first three before the chain starts ([`Io::prelude`]).
struct Io<'l, 'i, 'o> {
    lay: &'l Layout<'l>,
    data: InOutBuf<'i, 'o, u8>,
    decrypt: bool,
    /// Counter blocks in the side lanes (else the CTR half runs as its own
    /// pass: before the chain when decrypting, which then reads the
    /// output, after it when encrypting).
    lanes: bool,
    /// The counters (0: `A_0`) of the side lanes of steps of each parity,
    /// for `emit`.
    sides: [[usize; 3]; 2],
    nsides: [usize; 2],
    /// `E(A_j)` at `j % 4` (decrypting), and `E(A_0)`.
    ks: [Blk; 4],
    s0: Blk,
}

impl Io<'_, '_, '_> {
    /// Decrypting with no AAD: the payload counters made before the chain
    /// (with `A_0`).
    #[inline(always)]
    fn prelude(&self) -> Option<usize> {
        (self.decrypt && self.lay.aad_blocks == 0).then(|| self.lay.payload_blocks.min(3))
    }

    /// The counters whose keystream step `s` makes.
    #[inline(always)]
    fn plan(&mut self, s: usize) {
        let (a, m) = (self.lay.aad_blocks, self.lay.payload_blocks);
        let pre = self.prelude().unwrap_or(0);
        let p = s & 1;
        let mut n = 0;
        let mut add = |j: usize| {
            self.sides[p][n] = j;
            n += 1;
        };
        if !self.lanes {
        } else if !self.decrypt {
            if s == 0 {
                add(0);
            } else if s > a {
                add(s - a);
            }
        } else if s == 0 {
            if a > 0 {
                add(0);
            }
            for j in 1..=m.min(2usize.saturating_sub(a)) {
                add(j);
            }
        } else if s + 2 > a && s + 2 - a <= m && s + 2 - a > pre {
            add(s + 2 - a);
        }
        self.nsides[p] = n;
    }

    /// Payload block `j` (1-based; the last may be partial, then zero
    /// padded): with `ks`, `out = in ^ ks` and the result; else the input,
    /// or with `read_out` what the output holds. Whole blocks as whole
    /// blocks, not byte by byte.
    #[inline(always)]
    fn payload(&mut self, j: usize, ks: Option<&Blk>, read_out: bool) -> Blk {
        let start = 16 * (j - 1);
        let len = self.data.len();
        if start + 16 <= len {
            let whole = start..start + 16;
            let inp: [u8; 16] = self.data.get_in()[whole.clone()]
                .try_into()
                .expect("16 bytes");
            if let Some(ks) = ks {
                let out = xor(&inp.into(), ks);
                self.data.get_out()[whole].copy_from_slice(&out);
                return out;
            }
            if read_out {
                let out: [u8; 16] = self.data.get_out()[whole].try_into().expect("16 bytes");
                return out.into();
            }
            return inp.into();
        }
        let (_, mut part) = self.data.reborrow().split_at(start);
        let n = part.len();
        let mut b = Blk::default();
        if let Some(ks) = ks {
            part.xor_in2out(&ks[..n]);
        }
        if ks.is_some() || read_out {
            b[..n].copy_from_slice(part.get_out());
        } else {
            b[..n].copy_from_slice(part.get_in());
        }
        b
    }
}

impl ChainIo for Io<'_, '_, '_> {
    #[inline(always)]
    fn feed(&mut self, s: usize) -> [u128; 4] {
        let a = self.lay.aad_blocks;
        let b = if s == 0 {
            self.lay.b0
        } else if s <= a {
            self.lay.aad_block(s - 1)
        } else {
            // Payload block j: the plaintext is chained (decrypting, made
            // here with the lanes, by the CTR pass before the chain without).
            let j = s - a;
            let ks = self.ks[j % 4];
            match (self.decrypt, self.lanes) {
                (true, true) => self.payload(j, Some(&ks), false),
                (true, false) => self.payload(j, None, true),
                (false, _) => self.payload(j, None, false),
            }
        };
        self.plan(s);
        let p = s & 1;
        let mut v = [u128::from_ne_bytes(b.0), 0, 0, 0];
        for (slot, &j) in v[1..].iter_mut().zip(&self.sides[p][..self.nsides[p]]) {
            *slot = self.lay.counter(j);
        }
        v
    }

    #[inline(always)]
    fn blocks(&self, s: usize) -> usize {
        1 + self.nsides[s & 1]
    }

    #[inline(always)]
    fn emit(&mut self, s: usize, out: &[Blk; 4], _: &Blk) {
        let p = s & 1;
        for i in 0..self.nsides[p] {
            let (j, o) = (self.sides[p][i], out[1 + i]);
            if j == 0 {
                self.s0 = o;
            } else if self.decrypt {
                self.ks[j % 4] = o;
            } else {
                self.payload(j, Some(&o), false);
            }
        }
    }
}

/// A whole message; returns the full 16-byte `T ^ E(A_0)`.
struct Run<'a, 'i, 'o> {
    rk: &'a [u32; 32],
    lay: &'a Layout<'a>,
    data: InOutBuf<'i, 'o, u8>,
    decrypt: bool,
}

impl KernelClosure for Run<'_, '_, '_> {
    type Output = Blk;

    #[inline(always)]
    fn call<K: Kernel>(self, k: K) -> Blk {
        let Run {
            rk,
            lay,
            mut data,
            decrypt,
        } = self;
        let steps = 1 + lay.aad_blocks + lay.payload_blocks;
        let lanes = K::FREE_LANES;
        // Without free lanes: E(A_0) alone, the payload's CTR as a pass of
        // its own, from A_1.
        let mut s0 = lay.a0;
        let mut ctr = super::ctr::CtrState::new(u128::from_be_bytes(lay.a0.0) + 1);
        if !lanes {
            k.crypt_block(rk, &mut s0);
            if decrypt {
                super::ctr::apply(k, rk, &mut ctr, data.reborrow());
            }
        }
        let mut io = Io {
            lay,
            data,
            decrypt,
            lanes,
            sides: [[0; 3]; 2],
            nsides: [0; 2],
            ks: [Blk::default(); 4],
            s0,
        };
        if let Some(pre) = io.prelude().filter(|_| lanes) {
            let mut v = [Blk::default(); 4];
            v[0] = lay.a0;
            for (j, b) in v.iter_mut().enumerate().skip(1).take(pre) {
                *b = lay.counter(j).to_ne_bytes().into();
            }
            k.crypt_lanes(rk, &mut v, pre + 1);
            io.s0 = v[0];
            io.ks[1..=pre].copy_from_slice(&v[1..=pre]);
        }
        let mut mac = Blk::default();
        k.chain(rk, &mut mac, steps, if lanes { 4 } else { 1 }, &mut io);
        if !lanes && !decrypt {
            super::ctr::apply(k, rk, &mut ctr, io.data.reborrow());
        }
        let tag = xor(&mac, &io.s0);
        wipe(&mut io.ks);
        ctr.wipe();
        tag
    }
}

impl<M: CcmTagSize, N: CcmNonceSize> Ccm<M, N> {
    fn run(
        &self,
        nonce: &Nonce<Self>,
        aad: &[u8],
        data: InOutBuf<'_, '_, u8>,
        decrypt: bool,
    ) -> aead::Result<Blk> {
        let lay = Layout::new(nonce, M::USIZE, aad, data.len()).ok_or(aead::Error)?;
        Ok(with_kernel(
            self.cipher.backend,
            Run {
                rk: &self.cipher.enc,
                lay: &lay,
                data,
                decrypt,
            },
        ))
    }
}

impl<M: CcmTagSize, N: CcmNonceSize> AeadInOut for Ccm<M, N> {
    fn encrypt_inout_detached(
        &self,
        nonce: &Nonce<Self>,
        associated_data: &[u8],
        buffer: InOutBuf<'_, '_, u8>,
    ) -> aead::Result<Tag<Self>> {
        let full = self.run(nonce, associated_data, buffer, false)?;
        Ok(Tag::<Self>::try_from(&full[..M::USIZE]).expect("tag length"))
    }

    fn decrypt_inout_detached(
        &self,
        nonce: &Nonce<Self>,
        associated_data: &[u8],
        mut buffer: InOutBuf<'_, '_, u8>,
        tag: &Tag<Self>,
    ) -> aead::Result<()> {
        // The MAC covers the plaintext, so it was written first.
        let full = self.run(nonce, associated_data, buffer.reborrow(), true)?;
        check_tag(&full[..M::USIZE], tag, buffer.get_out())
    }
}

impl<M: CcmTagSize, N: CcmNonceSize> fmt::Debug for Ccm<M, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ccm")
            .field("tag_len", &M::USIZE)
            .field("nonce_len", &N::USIZE)
            .field("backend", &self.cipher.backend.name())
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "zeroize")]
impl<M: CcmTagSize, N: CcmNonceSize> zeroize::ZeroizeOnDrop for Ccm<M, N> {}

/// SM4-CCM as RFC 8998 (`TLS_SM4_CCM_SM3`) uses it: 16-byte tag, 12-byte
/// nonce, messages up to 2^24 - 1 bytes. See [`Ccm`].
pub type Sm4Ccm = Ccm<U16, U12>;
