//! SM4-CTR with a 128-bit big-endian counter: the keystream of
//! `ctr::Ctr128BE<Sm4>`.

use super::common::{Blk, wipe, xor_few};
use crate::Sm4;
use crate::backends::with_kernel;
use crate::kernel::{Kernel, KernelClosure, LazyStage};
use cipher::{
    InOutBuf, InnerIvInit, IvSizeUser, OverflowError, SeekNum, StreamCipher, StreamCipherError,
    StreamCipherSeek, common::InnerUser, consts::U16,
};
use core::fmt;

/// SM4 in CTR mode with a 128-bit big-endian counter (NIST SP 800-38A,
/// GB/T 17964): exactly the keystream of `ctr::Ctr128BE<Sm4>`, block `i`
/// being `E(iv + i mod 2^128)`.
///
/// `KeyIvInit` (16-byte key, 16-byte initial counter block),
/// `StreamCipher` and `StreamCipherSeek`, as `Ctr128BE<Sm4>` has them. All
/// 2^128 counter blocks are usable, the last one included; a request past
/// the end is refused (`StreamCipherError`) with the buffer unchanged.
/// Messages of any length run through the backend's widest kernels, the
/// counters generated beside them.
///
/// ```
/// use sm4_simd::Sm4Ctr;
/// use sm4_simd::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
///
/// let (key, iv) = ([0x42; 16], [0x24; 16]);
/// let mut buf = *b"a message of any length, here forty-six bytes";
/// Sm4Ctr::new(&key.into(), &iv.into()).apply_keystream(&mut buf);
/// // Decryption is the same operation, from any position.
/// let mut ctr = Sm4Ctr::new(&key.into(), &iv.into());
/// ctr.seek(10u64);
/// ctr.apply_keystream(&mut buf[10..]);
/// ctr.seek(0u64);
/// ctr.apply_keystream(&mut buf[..10]);
/// assert_eq!(&buf, b"a message of any length, here forty-six bytes");
/// ```
#[derive(Clone)]
pub struct Sm4Ctr {
    cipher: Sm4,
    state: CtrState,
}

/// The counter position and the buffered keystream.
#[derive(Clone)]
pub(super) struct CtrState {
    /// The initial counter block, as a big-endian integer.
    iv: u128,
    /// Index of the next keystream block to generate.
    next: u128,
    /// All 2^128 blocks have been generated (`next` wrapped to 0).
    wrapped: bool,
    /// The keystream of block `next - 1`, of which `used` bytes are spent
    /// (16: none left).
    ks: Blk,
    used: u8,
}

impl CtrState {
    /// At the start of the keystream from initial counter block `iv` (a
    /// big-endian number).
    pub(super) fn new(iv: u128) -> Self {
        CtrState {
            iv,
            next: 0,
            wrapped: false,
            ks: Blk::default(),
            used: 16,
        }
    }

    /// Overwrite the buffered keystream.
    pub(super) fn wipe(&mut self) {
        wipe(core::slice::from_mut(&mut self.ks));
    }

    /// Account for `n` generated blocks.
    #[inline(always)]
    fn advance(&mut self, n: usize) {
        let (next, wrapped) = self.next.overflowing_add(n as u128);
        self.next = next;
        self.wrapped |= wrapped;
    }

    /// Whether `len` more bytes of keystream exist.
    fn check(&self, len: usize) -> Result<(), crate::Error> {
        let buffered = 16 - usize::from(self.used);
        if len <= buffered {
            return Ok(());
        }
        let blocks = (len - buffered).div_ceil(16) as u128;
        // 2^128 - next blocks are left (all of them when next is 0).
        let ok = !self.wrapped && (self.next == 0 || blocks <= u128::MAX - self.next + 1);
        if ok {
            Ok(())
        } else {
            Err(crate::Error::KeystreamExhausted)
        }
    }
}

/// XOR the keystream into `data` (the length checked by the caller).
struct Apply<'a, 'i, 'o> {
    rk: &'a [u32; 32],
    state: &'a mut CtrState,
    data: InOutBuf<'i, 'o, u8>,
}

impl KernelClosure for Apply<'_, '_, '_> {
    type Output = ();

    #[inline(always)]
    fn call<K: Kernel>(self, k: K) {
        apply(k, self.rk, self.state, self.data);
    }
}

/// XOR the keystream into `data` (the length checked by the caller).
#[inline(always)]
pub(super) fn apply<K: Kernel>(
    k: K,
    rk: &[u32; 32],
    state: &mut CtrState,
    data: InOutBuf<'_, '_, u8>,
) {
    {
        // What is left of the buffered block first.
        let used = usize::from(state.used);
        let take = core::cmp::min(16 - used, data.len());
        let (mut head, data) = data.split_at(take);
        head.xor_in2out(&state.ks[used..used + take]);
        state.used += take as u8;
        let (blocks, mut tail) = data.into_chunks();
        // The tail's keystream block rides in the last stage.
        let total = blocks.len() + usize::from(!tail.is_empty());
        if total == 0 {
            return;
        }
        if total <= 4 {
            // A few blocks: the lane path, at one block's latency, no stage.
            let base = state.iv.wrapping_add(state.next);
            let vals: [u128; 4] = core::array::from_fn(|j| {
                u128::from_ne_bytes(base.wrapping_add(j as u128).to_be_bytes())
            });
            let v = k.crypt_values(rk, vals, total);
            state.advance(total);
            let full = blocks.len();
            xor_few(blocks, &v[..full]);
            if !tail.is_empty() {
                tail.xor_in2out(&v[full][..tail.len()]);
                state.ks = v[full];
                state.used = tail.len() as u8;
            }
            return;
        }
        let c = state.iv.wrapping_add(state.next);
        let mut ks = [(c.wrapping_add(blocks.len() as u128), Blk::default())];
        let extra = if tail.is_empty() {
            &mut ks[..0]
        } else {
            &mut ks[..]
        };
        k.ctr_xor(rk, c, blocks, extra, &mut LazyStage::new());
        state.advance(total);
        if !tail.is_empty() {
            // The tail's block: keep what it does not use.
            let ks = ks[0].1;
            tail.xor_in2out(&ks[..tail.len()]);
            state.ks = ks;
            state.used = tail.len() as u8;
        }
    }
}

impl CtrState {
    /// The counter block of `next`.
    #[inline(always)]
    fn counters_one(&self, b: &mut Blk) {
        *b = self.iv.wrapping_add(self.next).to_be_bytes().into();
    }
}

/// Generate keystream block `next` into the buffer (for a seek into the
/// middle of a block).
struct Refill<'a> {
    rk: &'a [u32; 32],
    state: &'a mut CtrState,
}

impl KernelClosure for Refill<'_> {
    type Output = ();

    #[inline(always)]
    fn call<K: Kernel>(self, k: K) {
        let mut ks = Blk::default();
        self.state.counters_one(&mut ks);
        k.crypt_block(self.rk, &mut ks);
        self.state.advance(1);
        self.state.ks = ks;
    }
}

impl Sm4Ctr {
    /// The index of the next keystream block (relative to the initial
    /// counter block); a partly used block counts as used.
    pub fn block_pos(&self) -> u128 {
        self.state.next
    }

    /// Move to the start of keystream block `block` (relative to the
    /// initial counter block). Every `u128` is a valid block.
    pub fn set_block_pos(&mut self, block: u128) {
        self.state.next = block;
        self.state.wrapped = false;
        self.state.used = 16;
    }
}

impl InnerUser for Sm4Ctr {
    type Inner = Sm4;
}

impl IvSizeUser for Sm4Ctr {
    type IvSize = U16;
}

impl InnerIvInit for Sm4Ctr {
    #[inline]
    fn inner_iv_init(cipher: Sm4, iv: &cipher::Iv<Self>) -> Self {
        Sm4Ctr {
            cipher,
            state: CtrState::new(u128::from_be_bytes((*iv).into())),
        }
    }
}

impl cipher::IvState for Sm4Ctr {
    /// The initial counter block.
    fn iv_state(&self) -> cipher::Iv<Self> {
        self.state.iv.to_be_bytes().into()
    }
}

impl cipher::SetIvState for Sm4Ctr {
    /// Start a new keystream from initial counter block `iv`, keeping the
    /// key schedule.
    fn set_iv(&mut self, iv: &cipher::Iv<Self>) {
        self.state.iv = u128::from_be_bytes((*iv).into());
        self.set_block_pos(0);
    }
}

impl StreamCipher for Sm4Ctr {
    fn check_remaining(&self, data_len: usize) -> Result<(), StreamCipherError> {
        Ok(self.state.check(data_len)?)
    }

    fn unchecked_apply_keystream_inout(&mut self, buf: InOutBuf<'_, '_, u8>) {
        with_kernel(
            self.cipher.backend,
            Apply {
                rk: &self.cipher.enc,
                state: &mut self.state,
                data: buf,
            },
        );
    }

    fn unchecked_write_keystream(&mut self, buf: &mut [u8]) {
        buf.fill(0);
        self.unchecked_apply_keystream_inout(buf.into());
    }
}

impl StreamCipherSeek for Sm4Ctr {
    fn try_current_pos<T: SeekNum>(&self) -> Result<T, OverflowError> {
        let s = &self.state;
        if s.wrapped {
            // Past byte 2^132 - 16: no `SeekNum` holds it.
            return Err(OverflowError);
        }
        // `cipher`'s convention: the next block to generate and the bytes
        // used of the one before (16 when none is buffered).
        T::from_block_byte(s.next, s.used, 16)
    }

    fn try_seek<T: SeekNum>(&mut self, pos: T) -> Result<(), StreamCipherError> {
        let (block, byte) = pos.into_block_byte::<u128>(16)?;
        self.set_block_pos(block);
        if byte != 0 {
            with_kernel(
                self.cipher.backend,
                Refill {
                    rk: &self.cipher.enc,
                    state: &mut self.state,
                },
            );
            self.state.used = byte;
        }
        Ok(())
    }
}

impl fmt::Debug for Sm4Ctr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sm4Ctr")
            .field("backend", &self.cipher.backend.name())
            .finish_non_exhaustive()
    }
}

impl Drop for Sm4Ctr {
    fn drop(&mut self) {
        self.state.wipe();
    }
}

#[cfg(feature = "zeroize")]
impl zeroize::ZeroizeOnDrop for Sm4Ctr {}
