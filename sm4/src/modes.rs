//! The whole-buffer modes: CTR, CBC (with CS3 ciphertext stealing), CFB and
//! XTS, each driven inside one backend's `#[target_feature]` runner
//! ([`with_kernel`](crate::backends::with_kernel)) so that the mode's own work (counters,
//! tweaks, chaining XORs) is compiled with the backend's features and
//! inlined beside the kernel calls.
//!
//! The kernel contract is [`Kernel`](crate::kernel::Kernel): a driver
//! fills a [`Stage`](crate::kernel::Stage) of up to
//! 64 blocks (counter blocks, `P ^ T`, ciphertext), the kernel encrypts it
//! in place with its widest batches first (64-block pairs on `gfni`, 32
//! blocks on the AVX2 backends, 8 on aarch64, 16 bit-sliced on `soft`) and
//! narrower groups only for the rest, and the driver combines the result
//! with the data. Messages of any length reach the wide kernels; only the
//! chained directions (CBC and CFB encryption) run one block at a time.
//!
//! The top floor but the crate root: each mode file uses the cipher type,
//! the dispatcher, the contract and `common`; nothing below imports a
//! mode.

mod cbc;
mod ccm;
mod cfb;
mod common;
mod ctr;
mod gcm;
mod xts;

pub use cbc::{Sm4CbcDec, Sm4CbcEnc};
pub use ccm::{Ccm, CcmNonceSize, CcmTagSize, Sm4Ccm};
pub use cfb::{Sm4CfbDec, Sm4CfbEnc};
pub use ctr::Sm4Ctr;
pub use gcm::Sm4Gcm;
pub use xts::{Sm4Xts, XtsStandard};

#[cfg(all(test, feature = "zeroize"))]
mod tests {
    use crate::kernel::wipe_check;
    use crate::{Backend, Sm4, Sm4CbcDec, Sm4CfbDec, Sm4Ctr, Sm4Gcm, Sm4Xts, XtsStandard};
    use aead::AeadInOut;
    use cipher::{BlockModeDecrypt, InnerIvInit, StreamCipher};

    /// With `zeroize`, each stage is wiped as far as its call wrote it (the
    /// high-water mark, `kernel::reach`), and that is all of what the call
    /// left in it: in test builds every stage checks as it is dropped that
    /// the whole of it reads zero (`kernel::wipe_check`, which panics
    /// otherwise). Here each mode that stages its blocks runs calls of a
    /// few blocks (a short stage), of part of a full stage and of several
    /// stages on every backend, and must reach each kind of stage it has.
    #[test]
    fn stages_wiped_after_short_and_long_calls() {
        // Bytes: 5 blocks, 7 and a tail, 16, 17 (a full stage, 32 blocks
        // of it written on `gfni`), 33 and a tail, 50, and three stages
        // and a tail.
        const LENS: [usize; 7] = [80, 115, 256, 272, 537, 800, 3205];
        let key = [0x42u8; 16];
        let mut xts_key = [0x42u8; 32];
        xts_key[16..].fill(0x17);
        let iv = [0x24u8; 16];
        let nonce = [0x11u8; 12];
        let modes = [
            "ctr",
            "gcm-enc",
            "gcm-dec",
            "cbc-dec",
            "cfb-dec",
            "xts",
            "xts-sectors",
        ];
        let mut checked = [[0usize; 2]; 7];
        let mut count = |m: usize| {
            let [short, full] = wipe_check::take();
            checked[m][0] += short;
            checked[m][1] += full;
        };
        for b in Backend::available() {
            let sm4 = Sm4::with_backend(&key, b).expect("available");
            let xts = Sm4Xts::with_backend(&xts_key, XtsStandard::Ieee1619, b)
                .expect("available")
                .expect("distinct halves");
            for len in LENS {
                let mut data = [0u8; 3205];
                for (i, x) in data.iter_mut().enumerate() {
                    *x = (i as u8).wrapping_mul(31) ^ 0x5a;
                }
                let orig = data;
                let buf = &mut data[..len];
                wipe_check::take();

                let mut ctr = Sm4Ctr::inner_iv_init(sm4.clone(), &iv.into());
                ctr.apply_keystream(buf);
                count(0);
                let mut ctr = Sm4Ctr::inner_iv_init(sm4.clone(), &iv.into());
                ctr.apply_keystream(buf);
                assert_eq!(buf, &orig[..len]);
                wipe_check::take();

                let gcm = Sm4Gcm::from(sm4.clone());
                let tag = gcm
                    .encrypt_inout_detached(&nonce.into(), b"aad", (&mut *buf).into())
                    .unwrap();
                count(1);
                gcm.decrypt_inout_detached(&nonce.into(), b"aad", (&mut *buf).into(), &tag)
                    .unwrap();
                count(2);
                assert_eq!(buf, &orig[..len]);

                let whole = crate::block::Blk::slice_as_chunks_mut(&mut *buf).0;
                Sm4CbcDec::inner_iv_init(sm4.clone(), &iv.into()).decrypt_blocks(whole);
                count(3);
                Sm4CfbDec::inner_iv_init(sm4.clone(), &iv.into()).decrypt_blocks(whole);
                count(4);

                xts.encrypt_sector(&iv, buf).unwrap();
                count(5);
                let sectors = &mut buf[..len / 16 * 16];
                xts.encrypt_sectors(7, 16, sectors).unwrap();
                count(6);
            }
        }
        for (m, [short, full]) in modes.iter().zip(checked) {
            // (XTS has no short stages: its 64-block ones are wiped as far
            // as written.)
            let short_ok = short > 0 || m.starts_with("xts");
            assert!(
                short_ok && full > 0,
                "{m}: {short} short, {full} full stages checked"
            );
        }
    }
}
