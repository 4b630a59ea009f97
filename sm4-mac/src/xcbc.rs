//! XCBC-MAC (RFC 3566's construction, full 128-bit tag).

use crate::chain::{BS, Block, Chain, xor_into};
use crate::macros::impl_mac_traits;
use cipher::{BlockCipherEncrypt, Key, KeyInit, KeySizeUser, consts::U16};
use core::convert::Infallible;

/// XCBC-MAC (RFC 3566's construction) over a 128-bit block cipher `C` with
/// a 128-bit key: K1 = E_K(0x01^16) keys the chain, K2 = E_K(0x02^16) masks
/// a complete last block, K3 = E_K(0x03^16) a padded one. The tag is the
/// full 16 bytes (as Linux `xcbc(...)`); RFC 3566's AES-XCBC-MAC-96 is its
/// first 12 bytes.
pub struct Xcbc<C: BlockCipherEncrypt<BlockSize = U16>> {
    cipher: C,
    k2: [u8; BS],
    k3: [u8; BS],
    chain: Chain,
}

impl<C: BlockCipherEncrypt<BlockSize = U16>> KeySizeUser for Xcbc<C> {
    type KeySize = U16;
}

impl<C: BlockCipherEncrypt<BlockSize = U16> + KeyInit + KeySizeUser<KeySize = U16>> KeyInit
    for Xcbc<C>
{
    #[inline]
    fn new(key: &Key<Self>) -> Self {
        match Self::try_new_with(key, |k| Ok::<C, Infallible>(C::new(k))) {
            Ok(mac) => mac,
            Err(never) => match never {},
        }
    }
}

impl<C: BlockCipherEncrypt<BlockSize = U16>> Xcbc<C> {
    /// Derive the subkeys with `make` as the way to key `C` (called twice:
    /// with K, then with K1). For a cipher with several backends this lets
    /// a caller pin one.
    #[doc(hidden)]
    pub fn try_new_with<E>(
        key: &Block,
        mut make: impl FnMut(&Block) -> Result<C, E>,
    ) -> Result<Self, E> {
        let outer = make(key)?;
        let mut ks = [
            Block::from([0x01; BS]),
            Block::from([0x02; BS]),
            Block::from([0x03; BS]),
        ];
        outer.encrypt_blocks(&mut ks);
        let [mut k1, k2, k3] = ks;
        let cipher = make(&k1);
        #[cfg(feature = "zeroize")]
        zeroize::Zeroize::zeroize(&mut k1.0);
        let _ = &mut k1;
        Ok(Self {
            cipher: cipher?,
            k2: k2.0,
            k3: k3.0,
            chain: Chain::default(),
        })
    }

    /// Finalize: pad, XOR K2 or K3 and encrypt the last block.
    #[inline]
    fn tag(&mut self) -> [u8; BS] {
        let (mut last, full) = self.chain.last_block_bit_padded();
        // `full` depends only on the message length.
        xor_into(&mut last, if full { &self.k2 } else { &self.k3 });
        xor_into(&mut last, &self.chain.state);
        let mut block = Block::from(last);
        self.cipher.encrypt_block(&mut block);
        block.0
    }
}

impl_mac_traits!(Xcbc, "Xcbc", [k2, k3]);
