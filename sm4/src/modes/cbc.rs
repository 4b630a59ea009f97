//! SM4-CBC, drop-in for `cbc::Encryptor<Sm4>` / `cbc::Decryptor<Sm4>`, and
//! CBC ciphertext stealing (CS3).

use super::common::{
    Blk, cbc_decrypt, cbc_decrypt_block, chained_mode, mode_backend, run_mode_closure, xor,
    xor_bytes,
};
use crate::backends::with_kernel;
use crate::kernel::{ChainIo, Kernel, KernelClosure, LazyStage};
use crate::{Error, Sm4};
use cipher::{
    BlockCipherDecrypt, BlockModeDecBackend, BlockModeDecClosure, BlockModeDecrypt,
    BlockModeEncBackend, BlockModeEncClosure, BlockModeEncrypt, BlockSizeUser, InOut, InOutBuf,
    InnerIvInit, Iv, IvSizeUser, IvState, ParBlocks, ParBlocksSizeUser, SetIvState,
    common::InnerUser,
    consts::{U16, U64},
};
use core::fmt;

/// SM4 in CBC mode, encryption: drop-in for `cbc::Encryptor<Sm4>`
/// (`KeyIvInit`, `BlockModeEncrypt` with its padding helpers, `IvState`),
/// plus CBC ciphertext stealing ([`encrypt_cs3`](Self::encrypt_cs3)).
///
/// The chain is serial: each block is encrypted on the backend's
/// latency-optimised single-block path, the chaining value kept in
/// registers from block to block where the backend can. The chaining value
/// carries across calls.
///
/// ```
/// use sm4_simd::Sm4CbcEnc;
/// use sm4_simd::cipher::{BlockModeEncrypt, KeyIvInit, block_padding::Pkcs7};
///
/// let (key, iv) = ([0x42; 16], [0x24; 16]);
/// let mut buf = [0u8; 48];
/// let msg = b"a message of 37 bytes, padded to 48.";
/// buf[..msg.len()].copy_from_slice(msg);
/// let ct = Sm4CbcEnc::new(&key.into(), &iv.into())
///     .encrypt_padded::<Pkcs7>(&mut buf, msg.len())
///     .unwrap();
/// assert_eq!(ct.len(), 48);
/// ```
pub struct Sm4CbcEnc {
    cipher: Sm4,
    iv: Blk,
}

/// SM4 in CBC mode, decryption: drop-in for `cbc::Decryptor<Sm4>`
/// (`KeyIvInit`, `BlockModeDecrypt` with its padding helpers, `IvState`),
/// plus CBC ciphertext stealing ([`decrypt_cs3`](Self::decrypt_cs3)).
///
/// Decryption is parallel: any number of blocks runs through the backend's
/// widest kernels. The chaining value carries across calls.
pub struct Sm4CbcDec {
    cipher: Sm4,
    iv: Blk,
}

chained_mode!(Sm4CbcEnc, "Sm4CbcEnc");
chained_mode!(Sm4CbcDec, "Sm4CbcDec");
mode_backend!(CbcEncBackend, U64);
mode_backend!(CbcDecBackend, U64);

impl<K: Kernel> BlockModeEncBackend for CbcEncBackend<'_, K> {
    #[inline(always)]
    fn encrypt_block(&mut self, mut block: InOut<'_, '_, Blk>) {
        let mut x = xor(block.get_in(), self.iv);
        self.k.crypt_block(self.rk, &mut x);
        *block.get_out() = x;
        *self.iv = x;
    }

    #[inline(always)]
    fn encrypt_par_blocks(&mut self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
        self.encrypt_tail_blocks(blocks.into_buf());
    }

    #[inline(always)]
    fn encrypt_tail_blocks(&mut self, blocks: InOutBuf<'_, '_, Blk>) {
        /// Each plaintext block in, its ciphertext (the chain's output) out.
        struct Io<'i, 'o>(InOutBuf<'i, 'o, Blk>);
        impl ChainIo for Io<'_, '_> {
            #[inline(always)]
            fn feed(&mut self, s: usize) -> [u128; 4] {
                [u128::from_ne_bytes(self.0.get_in()[s].0), 0, 0, 0]
            }
            #[inline(always)]
            fn emit(&mut self, s: usize, out: &[Blk; 4], _: &Blk) {
                self.0.get_out()[s] = out[0];
            }
        }
        let n = blocks.len();
        self.k.chain(self.rk, self.iv, n, 1, &mut Io(blocks));
    }
}

impl<K: Kernel> BlockModeDecBackend for CbcDecBackend<'_, K> {
    #[inline(always)]
    fn decrypt_block(&mut self, block: InOut<'_, '_, Blk>) {
        cbc_decrypt_block(self.k, self.rk, self.iv, block);
    }

    #[inline(always)]
    fn decrypt_par_blocks(&mut self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
        cbc_decrypt(self.k, self.rk, self.iv, blocks.into_buf(), &mut self.stage);
    }

    #[inline(always)]
    fn decrypt_tail_blocks(&mut self, blocks: InOutBuf<'_, '_, Blk>) {
        cbc_decrypt(self.k, self.rk, self.iv, blocks, &mut self.stage);
    }
}

impl BlockModeEncrypt for Sm4CbcEnc {
    fn encrypt_with_backend(&mut self, f: impl BlockModeEncClosure<BlockSize = U16>) {
        run_mode_closure!(self, f, BlockModeEncClosure, enc, CbcEncBackend)
    }
}

impl BlockModeDecrypt for Sm4CbcDec {
    fn decrypt_with_backend(&mut self, f: impl BlockModeDecClosure<BlockSize = U16>) {
        run_mode_closure!(self, f, BlockModeDecClosure, dec, CbcDecBackend)
    }
}

/// `buf` as its whole blocks and the rest.
fn split_blocks(buf: &mut [u8]) -> (&mut [Blk], &mut [u8]) {
    Blk::slice_as_chunks_mut(buf)
}

impl Sm4CbcEnc {
    /// CBC with ciphertext stealing, variant CS3 (NIST SP 800-38A
    /// addendum; RFC 3962; Linux `cts(cbc(sm4))`), of a whole message of at
    /// least 16 bytes, in place. The last two blocks are swapped and the
    /// final one truncated to the message length, even when the length is a
    /// multiple of 16; exactly 16 bytes is plain CBC.
    ///
    /// # Errors
    /// [`Error::TooShort`] below 16 bytes (the buffer is left unchanged).
    pub fn encrypt_cs3(mut self, buf: &mut [u8]) -> Result<(), Error> {
        if buf.len() < 16 {
            return Err(Error::TooShort);
        }
        let n = buf.len().div_ceil(16);
        let (body, last) = buf.split_at_mut(16 * (n - 1));
        if n == 1 {
            self.encrypt_blocks(split_blocks(last).0);
            return Ok(());
        }
        let (blocks, _) = split_blocks(body);
        self.encrypt_blocks(blocks);
        // C_{n-2}, whose head becomes the final (short) block.
        let stolen = blocks[n - 2];
        let mut x = Blk::default();
        x[..last.len()].copy_from_slice(last);
        self.encrypt_block(&mut x);
        blocks[n - 2] = x;
        let r = last.len();
        last.copy_from_slice(&stolen[..r]);
        Ok(())
    }
}

impl Sm4CbcDec {
    /// The inverse of [`Sm4CbcEnc::encrypt_cs3`], in place, with the
    /// parallel CBC decryption for the whole message (one extra serial block
    /// when the length is not a multiple of 16).
    ///
    /// # Errors
    /// [`Error::TooShort`] below 16 bytes (the buffer is left unchanged).
    pub fn decrypt_cs3(mut self, buf: &mut [u8]) -> Result<(), Error> {
        if buf.len() < 16 {
            return Err(Error::TooShort);
        }
        let n = buf.len().div_ceil(16);
        if buf.len().is_multiple_of(16) {
            let (blocks, _) = split_blocks(buf);
            if n > 1 {
                blocks.swap(n - 2, n - 1);
            }
            self.decrypt_blocks(blocks);
            return Ok(());
        }
        let (body, last) = buf.split_at_mut(16 * (n - 1));
        let (blocks, _) = split_blocks(body);
        let r = last.len();
        // The block in position n - 2 is E(P_{n-1} padded ^ C_{n-2}); the
        // short final block is the head of C_{n-2}, whose tail comes back
        // from that decryption.
        let mut z = blocks[n - 2];
        self.cipher.decrypt_block(&mut z);
        let mut c = z;
        c[..r].copy_from_slice(last);
        xor_bytes(last, &z[..r]);
        blocks[n - 2] = c;
        self.decrypt_blocks(blocks);
        Ok(())
    }
}
