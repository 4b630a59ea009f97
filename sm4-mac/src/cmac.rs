//! CMAC (NIST SP 800-38B, RFC 4493).

use crate::chain::{BS, Block, Chain, xor_into};
use crate::macros::impl_mac_traits;
use cipher::{BlockCipherEncrypt, consts::U16};
use digest::common::{InnerInit, InnerUser};

/// CMAC (NIST SP 800-38B, RFC 4493) over a 128-bit block cipher `C`.
///
/// Keyed through [`KeyInit`](digest::KeyInit) with `C`'s key, or from a
/// keyed cipher with [`InnerInit`]. The subkeys K1 and K2 are derived once
/// at construction.
pub struct Cmac<C: BlockCipherEncrypt<BlockSize = U16>> {
    cipher: C,
    k1: [u8; BS],
    k2: [u8; BS],
    chain: Chain,
}

/// Doubling in GF(2^128) with the polynomial x^128 + x^7 + x^2 + x + 1,
/// big-endian as SP 800-38B specifies; constant time.
#[inline]
fn dbl(b: &[u8; BS]) -> [u8; BS] {
    let x = u128::from_be_bytes(*b);
    let reduce = 0u128.wrapping_sub(x >> 127) & 0x87;
    ((x << 1) ^ reduce).to_be_bytes()
}

impl<C: BlockCipherEncrypt<BlockSize = U16>> InnerUser for Cmac<C> {
    type Inner = C;
}

impl<C: BlockCipherEncrypt<BlockSize = U16>> InnerInit for Cmac<C> {
    #[inline]
    fn inner_init(cipher: C) -> Self {
        let mut l = Block::default();
        cipher.encrypt_block(&mut l);
        let k1 = dbl(&l.0);
        let k2 = dbl(&k1);
        #[cfg(feature = "zeroize")]
        zeroize::Zeroize::zeroize(&mut l.0);
        Self {
            cipher,
            k1,
            k2,
            chain: Chain::default(),
        }
    }
}

impl<C: BlockCipherEncrypt<BlockSize = U16>> Cmac<C> {
    /// Finalize: pad, XOR the subkey and encrypt the last block.
    #[inline]
    fn tag(&mut self) -> [u8; BS] {
        let (mut last, full) = self.chain.last_block_bit_padded();
        // `full` depends only on the message length.
        xor_into(&mut last, if full { &self.k1 } else { &self.k2 });
        xor_into(&mut last, &self.chain.state);
        let mut block = Block::from(last);
        self.cipher.encrypt_block(&mut block);
        block.0
    }
}

impl_mac_traits!(Cmac, "Cmac", [k1, k2]);

#[cfg(test)]
mod tests {
    use super::dbl;

    #[test]
    fn doubling() {
        // RFC 4493 section 4, subkey generation for the AES-128 example key.
        let l = 0x7df76b0c1ab899b33e42f047b91b546fu128.to_be_bytes();
        let k1 = dbl(&l);
        assert_eq!(k1, 0xfbeed618357133667c85e08f7236a8deu128.to_be_bytes());
        assert_eq!(
            dbl(&k1),
            0xf7ddac306ae266ccf90bc11ee46d513bu128.to_be_bytes()
        );
    }
}
