//! The CBC chaining state shared by CMAC, XCBC-MAC and CBC-MAC.
//!
//! All three MACs run the same loop: XOR a message block into the state and
//! encrypt the state. They differ only in how the last block is treated, so
//! the last block (1 to 16 bytes of a non-empty message) is always held back
//! in `buf` until finalization, whichever way the message is split into
//! `update` calls.

use cipher::{
    BlockCipherEncBackend, BlockCipherEncClosure, BlockCipherEncrypt, BlockSizeUser, array::Array,
    consts::U16,
};

/// One 128-bit block.
pub(crate) type Block = Array<u8, U16>;

/// Block length in bytes.
pub(crate) const BS: usize = 16;

/// XOR `src` into `dst`.
#[inline(always)]
pub(crate) fn xor_into(dst: &mut [u8; BS], src: &[u8; BS]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d ^= *s;
    }
}

/// Chaining value plus the held-back last block.
#[derive(Clone, Default)]
pub(crate) struct Chain {
    /// CBC chaining value (all zero at the start).
    pub(crate) state: [u8; BS],
    /// Buffered message bytes, `buf[..pos]` are valid.
    pub(crate) buf: [u8; BS],
    /// Number of buffered bytes, `0..=16`. Only 0 for an empty message.
    pub(crate) pos: usize,
}

impl Chain {
    /// Absorb `data`. Whole blocks are encrypted inside a single
    /// `encrypt_with_backend` call; the last 1..=16 bytes stay buffered.
    #[inline]
    pub(crate) fn update<C: BlockCipherEncrypt<BlockSize = U16>>(
        &mut self,
        cipher: &C,
        data: &[u8],
    ) {
        let space = BS - self.pos;
        if data.len() <= space {
            // Nothing to encrypt yet: the buffer may become full, but a full
            // buffer is only encrypted once more data follows it.
            self.buf[self.pos..self.pos + data.len()].copy_from_slice(data);
            self.pos += data.len();
            return;
        }
        cipher.encrypt_with_backend(UpdateClosure { chain: self, data });
    }

    /// The buffered last block with `buf[pos..]` cleared.
    #[inline]
    pub(crate) fn last_block_zero_padded(&self) -> [u8; BS] {
        let mut last = self.buf;
        last[self.pos..].fill(0);
        last
    }

    /// The buffered last block padded with `0x80 00..` (ISO/IEC 9797-1
    /// method 2) when it is partial. Returns the block and whether it was
    /// complete.
    #[inline]
    pub(crate) fn last_block_bit_padded(&self) -> ([u8; BS], bool) {
        let mut last = self.buf;
        if self.pos == BS {
            (last, true)
        } else {
            last[self.pos] = 0x80;
            last[self.pos + 1..].fill(0);
            (last, false)
        }
    }

    /// Back to the initial (empty message) state.
    #[inline]
    pub(crate) fn reset(&mut self) {
        self.state = [0; BS];
        self.buf = [0; BS];
        self.pos = 0;
    }

    #[cfg(feature = "zeroize")]
    pub(crate) fn wipe(&mut self) {
        use zeroize::Zeroize;
        self.state.zeroize();
        self.buf.zeroize();
        self.pos.zeroize();
    }
}

/// Runs the whole chain of one `update` inside the cipher backend, so its
/// round keys stay in registers and the per-block call is the backend's
/// single-block (latency) path.
struct UpdateClosure<'a> {
    chain: &'a mut Chain,
    /// More bytes than fit in the free space of `chain.buf`.
    data: &'a [u8],
}

impl BlockSizeUser for UpdateClosure<'_> {
    type BlockSize = U16;
}

impl BlockCipherEncClosure for UpdateClosure<'_> {
    #[inline(always)]
    fn call<B: BlockCipherEncBackend<BlockSize = U16>>(self, backend: &B) {
        let Chain { state, buf, pos } = self.chain;
        let mut data = self.data;
        let mut st = Block::from(*state);

        if *pos != 0 {
            // Complete the buffered block; more data follows, so it is not
            // the last block and can be encrypted now.
            let (head, rest) = data.split_at(BS - *pos);
            buf[*pos..].copy_from_slice(head);
            data = rest;
            xor_into(&mut st.0, buf);
            backend.encrypt_block((&mut st).into());
        }

        // `data` is non-empty here. Hold back its last 1..=16 bytes.
        let full = (data.len() - 1) / BS;
        let (body, tail) = data.split_at(full * BS);
        let (blocks, _) = body.as_chunks::<BS>();
        for block in blocks {
            xor_into(&mut st.0, block);
            backend.encrypt_block((&mut st).into());
        }
        buf[..tail.len()].copy_from_slice(tail);
        *pos = tail.len();
        *state = st.0;
    }
}
