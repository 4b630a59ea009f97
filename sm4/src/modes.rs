//! The whole-buffer modes: CTR, CBC (with CS3 ciphertext stealing), CFB and
//! XTS, each driven inside one backend's `#[target_feature]` runner
//! ([`with_kernel`](crate::backends::with_kernel)) so that the mode's own work (counters,
//! tweaks, chaining XORs) is compiled with the backend's features and
//! inlined beside the kernel calls.
//!
//! The kernel contract is [`Kernel`]: a driver fills a [`Stage`] of up to
//! 64 blocks (counter blocks, `P ^ T`, ciphertext), the kernel encrypts it
//! in place with its widest batches first (64-block pairs on `gfni`, 32
//! blocks on the AVX2 backends, 8 on aarch64, 16 bit-sliced on `soft`) and
//! narrower groups only for the rest, and the driver combines the result
//! with the data. Messages of any length reach the wide kernels; only the
//! chained directions (CBC and CFB encryption) run one block at a time.

use crate::kernel::{Kernel, LazyStage};
pub(crate) use crate::block::{Blk, xor, xor_bytes};
use cipher::{InOut, InOutBuf};

mod cbc;
mod ccm;
mod cfb;
mod ctr;
mod gcm;
mod xts;

pub use cbc::{Sm4CbcDec, Sm4CbcEnc};
pub use ccm::{Ccm, CcmNonceSize, CcmTagSize, Sm4Ccm};
pub use cfb::{Sm4CfbDec, Sm4CfbEnc};
pub use ctr::Sm4Ctr;
pub use gcm::Sm4Gcm;
pub use xts::{Sm4Xts, XtsStandard};


/// `out = in ^ ks` block by block, for the few-block paths: one 16-byte
/// access per block, as the lane paths wrote them (a wider load over
/// several smaller stores would wait for them to reach the cache).
#[inline(always)]
fn xor_few(mut data: InOutBuf<'_, '_, Blk>, ks: &[Blk]) {
    for (j, k) in ks.iter().enumerate().take(data.len()) {
        let mut b = data.get(j);
        let v = xor(b.get_in(), k);
        *b.get_out() = v;
    }
}

/// One CBC decryption step, on the latency path (no stage).
#[inline(always)]
fn cbc_decrypt_block<K: Kernel>(k: K, rk: &[u32; 32], iv: &mut Blk, mut b: InOut<'_, '_, Blk>) {
    let c = *b.get_in();
    let mut x = c;
    k.crypt_block(rk, &mut x);
    *b.get_out() = xor(&x, iv);
    *iv = c;
}

/// CBC decryption of `blocks` (any number) with chaining value `iv`, which
/// becomes the last ciphertext block. Whole stages through the kernel; the
/// XORs run from the last block to the first, so that in place every
/// ciphertext block is read before its position is overwritten.
#[inline(always)]
fn cbc_decrypt<K: Kernel>(
    k: K,
    rk: &[u32; 32],
    iv: &mut Blk,
    mut blocks: InOutBuf<'_, '_, Blk>,
    stage: &mut LazyStage,
) {
    let n = blocks.len();
    if n <= 1 {
        if let Some(b) = blocks.into_iter().next() {
            cbc_decrypt_block(k, rk, iv, b);
        }
        return;
    }
    if n <= 4 {
        // A few blocks: the lane path, at one block's latency, no stage.
        let mut v = [Blk::default(); 4];
        v[..n].copy_from_slice(blocks.get_in());
        k.crypt_lanes(rk, &mut v, n);
        let last = blocks.get_in()[n - 1];
        for j in (1..n).rev() {
            let prev = blocks.get_in()[j - 1];
            blocks.get_out()[j] = xor(&v[j], &prev);
        }
        blocks.get_out()[0] = xor(&v[0], iv);
        *iv = last;
        return;
    }
    k.cbc_decrypt(rk, iv, blocks, stage);
}

