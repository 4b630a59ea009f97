//! `speed` rows for the `sm4` family: SM4 through the RustCrypto mode
//! crates, one row per backend of ours (pinned with the hidden
//! `with_backend` hook) and the RustCrypto `sm4` crate as the peer.

use aead::{AeadInOut, consts::U12};
use cipher::{
    BlockCipherDecrypt, BlockCipherEncrypt, BlockModeDecrypt, BlockModeEncrypt, BlockSizeUser,
    InnerIvInit, KeyInit, StreamCipher, array::Array, common::InnerInit, consts::U16,
};
use std::hint::black_box;

type Blk = Array<u8, U16>;

fn blocks(buf: &mut [u8]) -> &mut [Blk] {
    Blk::slice_as_chunks_mut(buf).0
}

/// All mode rows for one cipher implementation.
fn mode_rows<C>(s: &mut crate::Speed, backend: &str, peer: bool, c: C, c2: C)
where
    C: BlockCipherEncrypt + BlockCipherDecrypt + BlockSizeUser<BlockSize = U16> + Clone + 'static,
{
    let iv = [0x24u8; 16];
    let nonce = [0x11u8; 12];
    let mut row = |mode: &str, f: &dyn Fn(&mut [u8])| {
        let make = |size: usize| {
            let mut buf = crate::buffer(size);
            Some(move || {
                f(black_box(&mut buf));
                black_box(&buf);
            })
        };
        if peer {
            s.peer_row("sm4", mode, backend, make);
        } else {
            s.row("sm4", mode, backend, make);
        }
    };
    row("ecb-enc", &|b| {
        ecb::Encryptor::<&C>::inner_init(&c).encrypt_blocks(blocks(b))
    });
    row("ecb-dec", &|b| {
        ecb::Decryptor::<&C>::inner_init(&c).decrypt_blocks(blocks(b))
    });
    row("cbc-enc", &|b| {
        cbc::Encryptor::<&C>::inner_iv_init(&c, &iv.into()).encrypt_blocks(blocks(b))
    });
    row("cbc-dec", &|b| {
        cbc::Decryptor::<&C>::inner_iv_init(&c, &iv.into()).decrypt_blocks(blocks(b))
    });
    row("cfb-enc", &|b| {
        cfb_mode::Encryptor::<&C>::inner_iv_init(&c, &iv.into()).encrypt_blocks(blocks(b))
    });
    row("cfb-dec", &|b| {
        cfb_mode::Decryptor::<&C>::inner_iv_init(&c, &iv.into()).decrypt_blocks(blocks(b))
    });
    row("ofb", &|b| {
        ofb::Ofb::<&C>::from_core(ofb::OfbCore::inner_iv_init(&c, &iv.into())).apply_keystream(b)
    });
    row("ctr", &|b| {
        ctr::Ctr128BE::<&C>::from_core(ctr::CtrCore::inner_iv_init(&c, &iv.into()))
            .apply_keystream(b)
    });
    let xts = xts_mode::Xts128::new(c.clone(), c2.clone());
    row("xts-enc", &|b| xts.encrypt_sector(b, iv.into()));
    row("xts-dec", &|b| xts.decrypt_sector(b, iv.into()));
    let gcm = aes_gcm::AesGcm::<C, U12>::from(c.clone());
    row("gcm-enc", &|b| {
        black_box(
            gcm.encrypt_inout_detached(&nonce.into(), &[], b.into())
                .unwrap(),
        );
    });
    let ccm = ccm::Ccm::<C, U16, U12>::from(c.clone());
    row("ccm-enc", &|b| {
        black_box(
            ccm.encrypt_inout_detached(&nonce.into(), &[], b.into())
                .unwrap(),
        );
    });
}

/// Measure this family's rows.
pub fn rows(s: &mut crate::Speed) {
    let key = [0x42u8; 16];
    let key2 = [0x17u8; 16];
    for b in sm4::Backend::available() {
        if !s.wants("sm4", b.name()) {
            continue;
        }
        let c = sm4::Sm4::with_backend(&key, b).expect("available");
        let c2 = sm4::Sm4::with_backend(&key2, b).expect("available");
        mode_rows(s, b.name(), false, c, c2);
    }
    if s.opts.peers {
        let c = rc_sm4::Sm4::new(&key.into());
        let c2 = rc_sm4::Sm4::new(&key2.into());
        mode_rows(s, "rustcrypto-sm4", true, c, c2);
    }
}
