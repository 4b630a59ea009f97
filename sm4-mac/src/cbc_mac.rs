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

#[cfg(test)]
mod tests {
    //! The chain's buffering, through the simplest MAC on it. Small enough
    //! for Miri: a toy permutation as the "cipher", every split of short
    //! messages into two or three `update` calls.
    use super::*;
    use cipher::{
        BlockCipherEncBackend, BlockCipherEncClosure, BlockSizeUser, InOut, ParBlocksSizeUser,
        consts::U1,
    };
    use digest::Mac;

    #[derive(Clone)]
    struct Toy;
    struct ToyBackend;

    impl BlockSizeUser for Toy {
        type BlockSize = U16;
    }
    impl BlockCipherEncrypt for Toy {
        fn encrypt_with_backend(&self, f: impl BlockCipherEncClosure<BlockSize = U16>) {
            f.call(&ToyBackend);
        }
    }
    impl BlockSizeUser for ToyBackend {
        type BlockSize = U16;
    }
    impl ParBlocksSizeUser for ToyBackend {
        type ParBlocksSize = U1;
    }
    impl BlockCipherEncBackend for ToyBackend {
        fn encrypt_block(&self, mut block: InOut<'_, '_, Block>) {
            let x = u128::from_le_bytes(block.get_in().0);
            let y = (x ^ 0x5a)
                .rotate_left(13)
                .wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835);
            *block.get_out() = Block::from(y.to_le_bytes());
        }
    }

    /// One-shot CBC-MAC with zero padding, straight from the definition.
    fn reference(msg: &[u8]) -> [u8; BS] {
        let mut st = Block::default();
        for chunk in msg.chunks(BS) {
            for (s, m) in st.iter_mut().zip(chunk) {
                *s ^= m;
            }
            Toy.encrypt_block(&mut st);
        }
        st.0
    }

    #[test]
    fn every_split() {
        let msg: [u8; 50] = core::array::from_fn(|i| (i * 37 + 11) as u8);
        // Under Miri, the lengths around the first block boundary.
        let lens: &[usize] = if cfg!(miri) {
            &[0, 1, 15, 16, 17]
        } else {
            &[0, 1, 15, 16, 17, 31, 32, 33, 48, 50]
        };
        for &len in lens {
            let msg = &msg[..len];
            let want = reference(msg);
            for i in 0..=len {
                for j in i..=len {
                    let mut mac = CbcMac::inner_init(Toy);
                    mac.update(&msg[..i]);
                    mac.update(&msg[i..j]);
                    mac.update(&msg[j..]);
                    assert_eq!(
                        mac.finalize().into_bytes().0,
                        want,
                        "len {len} split {i} {j}"
                    );
                }
            }
        }
    }
}
