//! SM4-CFB (CFB-128), drop-in for `cfb_mode::Encryptor<Sm4>` /
//! `cfb_mode::Decryptor<Sm4>`.

use super::common::{Blk, chained_mode, mode_backend, run_mode_closure, xor, xor_few};
use crate::Sm4;
use crate::backends::with_kernel;
use crate::kernel::{ChainIo, Kernel, KernelClosure, LazyStage};
use cipher::inout::NotEqualError;
use cipher::{
    BlockModeDecBackend, BlockModeDecClosure, BlockModeDecrypt, BlockModeEncBackend,
    BlockModeEncClosure, BlockModeEncrypt, BlockSizeUser, InOut, InOutBuf, InnerIvInit, Iv,
    IvSizeUser, IvState, ParBlocks, ParBlocksSizeUser, SetIvState,
    common::InnerUser,
    consts::{U16, U64},
};
use core::fmt;

/// SM4 in CFB-128 mode, encryption: drop-in for
/// `cfb_mode::Encryptor<Sm4>` (`KeyIvInit`, `BlockModeEncrypt`, `IvState`,
/// and [`encrypt`](Self::encrypt) for messages of any length).
///
/// The chain is serial, one block at a time on the backend's
/// latency-optimised path. The chaining value carries across block calls.
///
/// ```
/// use sm4_simd::{Sm4CfbDec, Sm4CfbEnc};
/// use sm4_simd::cipher::KeyIvInit;
///
/// let (key, iv) = ([0x42; 16], [0x24; 16]);
/// let mut buf = *b"CFB takes any length";
/// Sm4CfbEnc::new(&key.into(), &iv.into()).encrypt(&mut buf);
/// Sm4CfbDec::new(&key.into(), &iv.into()).decrypt(&mut buf);
/// assert_eq!(&buf, b"CFB takes any length");
/// ```
pub struct Sm4CfbEnc {
    cipher: Sm4,
    iv: Blk,
}

/// SM4 in CFB-128 mode, decryption: drop-in for
/// `cfb_mode::Decryptor<Sm4>` (`KeyIvInit`, `BlockModeDecrypt`, `IvState`,
/// and [`decrypt`](Self::decrypt) for messages of any length).
///
/// Decryption is parallel: any number of blocks (and a final partial one)
/// runs through the backend's widest kernels.
pub struct Sm4CfbDec {
    cipher: Sm4,
    iv: Blk,
}

chained_mode!(Sm4CfbEnc, "Sm4CfbEnc");
chained_mode!(Sm4CfbDec, "Sm4CfbDec");
mode_backend!(CfbEncBackend, U64);
mode_backend!(CfbDecBackend, U64);

/// CFB encryption of whole blocks, then of a final partial block (its
/// keystream is the encryption of the last ciphertext block), as one chain:
/// with the state starting at zero, step 0 encrypts the IV and step `j`
/// chains plaintext block `j - 1` into the state `E(C_{j-2})`, so that its
/// input is `C_{j-1}` and its output the next keystream block.
#[inline(always)]
fn cfb_encrypt<K: Kernel>(
    k: K,
    rk: &[u32; 32],
    iv: &mut Blk,
    blocks: InOutBuf<'_, '_, Blk>,
    mut tail: InOutBuf<'_, '_, u8>,
) {
    /// Step 0 takes the IV, step `j` plaintext block `j - 1`, whose
    /// ciphertext is that step's input.
    struct Io<'a, 'i, 'o> {
        iv: &'a Blk,
        blocks: InOutBuf<'i, 'o, Blk>,
    }
    impl ChainIo for Io<'_, '_, '_> {
        #[inline(always)]
        fn feed(&mut self, s: usize) -> [u128; 4] {
            let b = if s == 0 {
                *self.iv
            } else {
                self.blocks.get_in()[s - 1]
            };
            [u128::from_ne_bytes(b.0), 0, 0, 0]
        }
        #[inline(always)]
        fn emit(&mut self, s: usize, _: &[Blk; 4], input: &Blk) {
            if s > 0 {
                self.blocks.get_out()[s - 1] = *input;
            }
        }
    }
    let n = blocks.len();
    if n == 0 && tail.is_empty() {
        return;
    }
    // The chain runs through the last whole block only when the tail needs
    // the keystream after it; else that block is finished by one XOR.
    let steps = if tail.is_empty() { n } else { n + 1 };
    let mut state = Blk::default();
    let mut io = Io { iv, blocks };
    k.chain(rk, &mut state, steps, 1, &mut io);
    let blocks = &mut io.blocks;
    if tail.is_empty() {
        let c = xor(&state, &blocks.get_in()[n - 1]);
        blocks.get_out()[n - 1] = c;
        *iv = c;
    } else {
        tail.xor_in2out(&state[..tail.len()]);
        if n > 0 {
            *iv = blocks.get_out()[n - 1];
        }
    }
}

/// One CFB encryption step.
#[inline(always)]
fn cfb_encrypt_block<K: Kernel>(k: K, rk: &[u32; 32], iv: &mut Blk, mut b: InOut<'_, '_, Blk>) {
    let mut ks = *iv;
    k.crypt_block(rk, &mut ks);
    let c = xor(b.get_in(), &ks);
    *b.get_out() = c;
    *iv = c;
}

/// One CFB decryption step.
#[inline(always)]
fn cfb_decrypt_block<K: Kernel>(k: K, rk: &[u32; 32], iv: &mut Blk, mut b: InOut<'_, '_, Blk>) {
    let mut ks = *iv;
    k.crypt_block(rk, &mut ks);
    let c = *b.get_in();
    *b.get_out() = xor(&c, &ks);
    *iv = c;
}

/// CFB decryption of whole blocks and a final partial one: the keystream
/// blocks are the encryptions of the IV and the ciphertext blocks before
/// each, all independent, in stages through the kernel.
#[inline(always)]
fn cfb_decrypt<K: Kernel>(
    k: K,
    rk: &[u32; 32],
    iv: &mut Blk,
    blocks: InOutBuf<'_, '_, Blk>,
    mut tail: InOutBuf<'_, '_, u8>,
    stage: &mut LazyStage,
) {
    let total = blocks.len() + usize::from(!tail.is_empty());
    if total == 0 {
        return;
    }
    if total <= 4 {
        // A few blocks: the lane path, at one block's latency, no stage.
        let full = blocks.len();
        let mut v = [*iv; 4];
        v[1..total].copy_from_slice(&blocks.get_in()[..total - 1]);
        k.crypt_lanes(rk, &mut v, total);
        if full > 0 {
            *iv = blocks.get_in()[full - 1];
        }
        xor_few(blocks, &v[..full]);
        if !tail.is_empty() {
            tail.xor_in2out(&v[full][..tail.len()]);
        }
        return;
    }
    let mut ks = (!tail.is_empty()).then(Blk::default);
    k.cfb_decrypt(rk, iv, blocks, ks.as_mut(), stage);
    if let Some(ks) = ks {
        tail.xor_in2out(&ks[..tail.len()]);
    }
}

impl<K: Kernel> BlockModeEncBackend for CfbEncBackend<'_, K> {
    #[inline(always)]
    fn encrypt_block(&mut self, block: InOut<'_, '_, Blk>) {
        cfb_encrypt_block(self.k, self.rk, self.iv, block);
    }

    #[inline(always)]
    fn encrypt_par_blocks(&mut self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
        self.encrypt_tail_blocks(blocks.into_buf());
    }

    #[inline(always)]
    fn encrypt_tail_blocks(&mut self, blocks: InOutBuf<'_, '_, Blk>) {
        cfb_encrypt(self.k, self.rk, self.iv, blocks, (&mut [][..]).into());
    }
}

impl<K: Kernel> BlockModeDecBackend for CfbDecBackend<'_, K> {
    #[inline(always)]
    fn decrypt_block(&mut self, block: InOut<'_, '_, Blk>) {
        cfb_decrypt_block(self.k, self.rk, self.iv, block);
    }

    #[inline(always)]
    fn decrypt_par_blocks(&mut self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
        self.decrypt_tail_blocks(blocks.into_buf());
    }

    #[inline(always)]
    fn decrypt_tail_blocks(&mut self, blocks: InOutBuf<'_, '_, Blk>) {
        cfb_decrypt(
            self.k,
            self.rk,
            self.iv,
            blocks,
            InOutBuf::from(&mut [][..]),
            &mut self.stage,
        );
    }
}

impl BlockModeEncrypt for Sm4CfbEnc {
    fn encrypt_with_backend(&mut self, f: impl BlockModeEncClosure<BlockSize = U16>) {
        run_mode_closure!(self, f, BlockModeEncClosure, enc, CfbEncBackend)
    }
}

impl BlockModeDecrypt for Sm4CfbDec {
    fn decrypt_with_backend(&mut self, f: impl BlockModeDecClosure<BlockSize = U16>) {
        run_mode_closure!(self, f, BlockModeDecClosure, enc, CfbDecBackend)
    }
}

/// A whole message (whole blocks and a partial tail) through one of the
/// two drivers.
struct Message<'a, 'i, 'o> {
    rk: &'a [u32; 32],
    iv: &'a mut Blk,
    data: InOutBuf<'i, 'o, u8>,
    decrypt: bool,
}

impl KernelClosure for Message<'_, '_, '_> {
    type Output = ();

    #[inline(always)]
    fn call<K: Kernel>(self, k: K) {
        let (blocks, tail) = self.data.into_chunks();
        if self.decrypt {
            cfb_decrypt(k, self.rk, self.iv, blocks, tail, &mut LazyStage::new());
        } else {
            cfb_encrypt(k, self.rk, self.iv, blocks, tail);
        }
    }
}

/// The `cfb-mode` inherent methods for whole messages.
macro_rules! message_methods {
    ($ty:ident, $decrypt:literal, $inout:ident, $inplace:ident, $b2b:ident, $verb:literal) => {
        impl $ty {
            #[doc = concat!($verb, " a whole message of any length (the last block may be partial).")]
            pub fn $inout(mut self, data: InOutBuf<'_, '_, u8>) {
                with_kernel(
                    self.cipher.backend,
                    Message {
                        rk: &self.cipher.enc,
                        iv: &mut self.iv,
                        data,
                        decrypt: $decrypt,
                    },
                );
            }

            #[doc = concat!($verb, " a whole message of any length in place.")]
            pub fn $inplace(self, buf: &mut [u8]) {
                self.$inout(buf.into());
            }

            #[doc = concat!($verb, " a whole message of any length from `in_buf` to `out_buf`.")]
            ///
            /// # Errors
            /// [`NotEqualError`] if the two buffers differ in length.
            pub fn $b2b(self, in_buf: &[u8], out_buf: &mut [u8]) -> Result<(), NotEqualError> {
                InOutBuf::new(in_buf, out_buf).map(|b| self.$inout(b))
            }
        }
    };
}

message_methods!(
    Sm4CfbEnc,
    false,
    encrypt_inout,
    encrypt,
    encrypt_b2b,
    "Encrypt"
);
message_methods!(
    Sm4CfbDec,
    true,
    decrypt_inout,
    decrypt,
    decrypt_b2b,
    "Decrypt"
);
