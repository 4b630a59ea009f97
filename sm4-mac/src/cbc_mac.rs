//! Raw CBC-MAC with the Linux `cbcmac(...)` semantics.

use crate::chain::{BS, Block, Chain, xor_into};
use crate::macros::impl_mac_traits;
use cipher::{BlockCipherEncrypt, consts::U16};
use digest::common::{InnerInit, InnerUser};

/// CBC-MAC over a 128-bit block cipher `C`, as the Linux kernel's
/// `cbcmac(...)` template computes it: a final partial block is zero-padded,
/// and the empty message gives the all-zero tag.
///
/// Raw CBC-MAC is only secure for messages of one fixed length (or as a
/// building block such as CCM's); prefer [`Cmac`](crate::Cmac) otherwise.
pub struct CbcMac<C: BlockCipherEncrypt<BlockSize = U16>> {
    cipher: C,
    chain: Chain,
}

impl<C: BlockCipherEncrypt<BlockSize = U16>> InnerUser for CbcMac<C> {
    type Inner = C;
}

impl<C: BlockCipherEncrypt<BlockSize = U16>> InnerInit for CbcMac<C> {
    #[inline]
    fn inner_init(cipher: C) -> Self {
        Self {
            cipher,
            chain: Chain::default(),
        }
    }
}

impl<C: BlockCipherEncrypt<BlockSize = U16>> CbcMac<C> {
    /// Finalize: zero-pad and encrypt the held-back last block, if any.
    #[inline]
    fn tag(&mut self) -> [u8; BS] {
        // `pos` is 0 only for the empty message (a public length).
        if self.chain.pos == 0 {
            return self.chain.state;
        }
        let mut last = self.chain.last_block_zero_padded();
        xor_into(&mut last, &self.chain.state);
        let mut block = Block::from(last);
        self.cipher.encrypt_block(&mut block);
        block.0
    }
}

impl_mac_traits!(CbcMac, "CbcMac", []);
