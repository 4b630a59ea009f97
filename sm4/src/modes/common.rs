//! What the mode types share: the few-block XOR, CBC decryption's short
//! paths, the chained modes' common parts (`chained_mode!`,
//! `run_mode_closure!`, `mode_backend!`, for CBC and CFB) and the AEADs'
//! tag check. Below every mode file.

pub(crate) use crate::block::{Blk, wipe, xor, xor_bytes};
use crate::kernel::{Kernel, LazyStage};
use cipher::{InOut, InOutBuf};

/// `out = in ^ ks` block by block, for the few-block paths: one 16-byte
/// access per block, as the lane paths wrote them (a wider load over
/// several smaller stores would wait for them to reach the cache).
#[inline(always)]
pub(crate) fn xor_few(mut data: InOutBuf<'_, '_, Blk>, ks: &[Blk]) {
    for (j, k) in ks.iter().enumerate().take(data.len()) {
        let mut b = data.get(j);
        let v = xor(b.get_in(), k);
        *b.get_out() = v;
    }
}

/// One CBC decryption step, on the latency path (no stage).
#[inline(always)]
pub(crate) fn cbc_decrypt_block<K: Kernel>(
    k: K,
    rk: &[u32; 32],
    iv: &mut Blk,
    mut b: InOut<'_, '_, Blk>,
) {
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
pub(crate) fn cbc_decrypt<K: Kernel>(
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

/// The end of an AEAD's decryption, which wrote the plaintext in the same
/// pass as it authenticated: `Ok` if `computed` equals `tag` (compared in
/// constant time), else `out` is zeroed (no unauthenticated plaintext may
/// stay) and the error returned.
pub(crate) fn check_tag(computed: &[u8], tag: &[u8], out: &mut [u8]) -> aead::Result<()> {
    // Declassified: whether the tag matched (the caller learns it anyway).
    if crate::ct::equal_declassified(computed, tag) {
        Ok(())
    } else {
        out.fill(0);
        Err(aead::Error)
    }
}

/// The mode types' common parts: the cipher and the chaining value.
macro_rules! chained_mode {
    ($ty:ident, $name:literal) => {
        impl BlockSizeUser for $ty {
            type BlockSize = U16;
        }

        impl InnerUser for $ty {
            type Inner = Sm4;
        }

        impl IvSizeUser for $ty {
            type IvSize = U16;
        }

        impl InnerIvInit for $ty {
            #[inline]
            fn inner_iv_init(cipher: Sm4, iv: &Iv<Self>) -> Self {
                $ty { cipher, iv: *iv }
            }
        }

        impl IvState for $ty {
            /// The chaining value for the next block (the last ciphertext
            /// block, or the IV before the first).
            #[inline]
            fn iv_state(&self) -> Iv<Self> {
                self.iv
            }
        }

        impl SetIvState for $ty {
            /// Start a new message with `iv`, keeping the key schedule.
            #[inline]
            fn set_iv(&mut self, iv: &Iv<Self>) {
                self.iv = *iv;
            }
        }

        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct($name)
                    .field("backend", &self.cipher.backend.name())
                    .finish_non_exhaustive()
            }
        }

        impl Drop for $ty {
            fn drop(&mut self) {
                $crate::block::wipe(core::slice::from_mut(&mut self.iv));
            }
        }

        #[cfg(feature = "zeroize")]
        impl zeroize::ZeroizeOnDrop for $ty {}
    };
}

/// Run a `BlockModeEncClosure` / `BlockModeDecClosure` with a mode backend
/// built from the kernel, inside the backend's runner.
macro_rules! run_mode_closure {
    ($self:ident, $f:ident, $closure:ident, $schedule:ident, $backend:ident) => {{
        struct Run<'a, F> {
            rk: &'a [u32; 32],
            iv: &'a mut Blk,
            f: F,
        }
        impl<F: $closure<BlockSize = U16>> KernelClosure for Run<'_, F> {
            type Output = ();
            #[inline(always)]
            fn call<K: Kernel>(self, k: K) {
                self.f.call(&mut $backend {
                    k,
                    rk: self.rk,
                    iv: self.iv,
                    stage: LazyStage::new(),
                });
            }
        }
        with_kernel(
            $self.cipher.backend,
            Run {
                rk: &$self.cipher.$schedule,
                iv: &mut $self.iv,
                f: $f,
            },
        )
    }};
}

/// The mode backend of a chained mode: a kernel, a schedule, the chaining
/// value.
macro_rules! mode_backend {
    ($backend:ident, $par:ty) => {
        struct $backend<'a, K> {
            k: K,
            rk: &'a [u32; 32],
            iv: &'a mut Blk,
            /// Made on first use, kept for the whole call (the
            /// decryption backends').
            #[allow(dead_code)]
            stage: LazyStage,
        }
        impl<K> BlockSizeUser for $backend<'_, K> {
            type BlockSize = U16;
        }
        impl<K> ParBlocksSizeUser for $backend<'_, K> {
            type ParBlocksSize = $par;
        }
    };
}

pub(crate) use {chained_mode, mode_backend, run_mode_closure};
