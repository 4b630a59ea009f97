//! `speed` rows for the `sm4` family: SM4 through the RustCrypto mode
//! crates, one row per backend of ours (pinned with the hidden
//! `with_backend` hook) and the RustCrypto `sm4` crate as the peer.

use aead::{AeadInOut, consts::U12};
use cipher::SetIvState;
use cipher::{
    BlockCipherDecrypt, BlockCipherEncrypt, BlockModeDecrypt, BlockModeEncrypt, BlockSizeUser,
    InnerIvInit, KeyInit, StreamCipher, array::Array, common::InnerInit, consts::U16,
};
use std::cell::RefCell;
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

/// The whole-buffer mode types of ours on one backend, each row named
/// `<mode>:<type>` so that the ratio column compares it with the peer's
/// composition row `<mode>`.
fn fused_rows(s: &mut crate::Speed, b: sm4_simd::Backend, key: &[u8; 16], key2: &[u8; 16]) {
    use sm4_simd::{Sm4CbcDec, Sm4CbcEnc, Sm4CfbDec, Sm4CfbEnc, Sm4Ctr, Sm4Xts, XtsStandard};
    let iv = [0x24u8; 16];
    let c = || sm4_simd::Sm4::with_backend(key, b).expect("available");
    let mut row = |mode: &str, f: &dyn Fn(&mut [u8])| {
        s.row("sm4", mode, b.name(), |size| {
            let mut buf = crate::buffer(size);
            Some(move || {
                f(black_box(&mut buf));
                black_box(&buf);
            })
        });
    };
    // One instance per row, a new IV per message (`SetIvState`): the key
    // schedule is set once, as the composed rows borrow theirs.
    let cipher = c();
    fn per_message<M: SetIvState<IvSize = U16>>(
        m: &RefCell<M>,
        iv: &[u8; 16],
        buf: &mut [u8],
        f: impl Fn(&mut M, &mut [u8]),
    ) {
        let mut m = m.borrow_mut();
        m.set_iv(&(*iv).into());
        f(&mut m, buf);
    }
    let ctr = RefCell::new(Sm4Ctr::inner_iv_init(c(), &iv.into()));
    row("ctr:Sm4Ctr", &|buf| {
        per_message(&ctr, &iv, buf, |m: &mut Sm4Ctr, b| m.apply_keystream(b))
    });
    let cbc_enc = RefCell::new(Sm4CbcEnc::inner_iv_init(c(), &iv.into()));
    row("cbc-enc:Sm4CbcEnc", &|buf| {
        per_message(&cbc_enc, &iv, buf, |m: &mut Sm4CbcEnc, b| {
            m.encrypt_blocks(blocks(b))
        })
    });
    let cbc_dec = RefCell::new(Sm4CbcDec::inner_iv_init(c(), &iv.into()));
    row("cbc-dec:Sm4CbcDec", &|buf| {
        per_message(&cbc_dec, &iv, buf, |m: &mut Sm4CbcDec, b| {
            m.decrypt_blocks(blocks(b))
        })
    });
    let cfb_enc = RefCell::new(Sm4CfbEnc::inner_iv_init(c(), &iv.into()));
    row("cfb-enc:Sm4CfbEnc", &|buf| {
        per_message(&cfb_enc, &iv, buf, |m: &mut Sm4CfbEnc, b| {
            m.encrypt_blocks(blocks(b))
        })
    });
    let cfb_dec = RefCell::new(Sm4CfbDec::inner_iv_init(c(), &iv.into()));
    row("cfb-dec:Sm4CfbDec", &|buf| {
        per_message(&cfb_dec, &iv, buf, |m: &mut Sm4CfbDec, b| {
            m.decrypt_blocks(blocks(b))
        })
    });
    // The CS3 calls consume their instance, as the padding helpers do.
    row("cs3-enc:Sm4CbcEnc", &|buf| {
        let _ = Sm4CbcEnc::inner_iv_init(cipher.clone(), &iv.into()).encrypt_cs3(buf);
    });
    row("cs3-dec:Sm4CbcDec", &|buf| {
        let _ = Sm4CbcDec::inner_iv_init(cipher.clone(), &iv.into()).decrypt_cs3(buf);
    });
    let mut xts_key = [0u8; 32];
    xts_key[..16].copy_from_slice(key);
    xts_key[16..].copy_from_slice(key2);
    for (name, standard) in [
        ("xts", XtsStandard::Ieee1619),
        ("xts-gb", XtsStandard::GbT17964),
    ] {
        let xts = Sm4Xts::with_backend(&xts_key, standard, b)
            .expect("available")
            .expect("distinct halves");
        row(&format!("{name}-enc:Sm4Xts"), &|buf| {
            let _ = xts.encrypt_sector(&iv, buf);
        });
        row(&format!("{name}-dec:Sm4Xts"), &|buf| {
            let _ = xts.decrypt_sector(&iv, buf);
        });
    }
    let nonce = [0x11u8; 12];
    let ccm = sm4_simd::Sm4Ccm::from(c());
    row("ccm-enc:Sm4Ccm", &|buf| {
        black_box(
            ccm.encrypt_inout_detached(&nonce.into(), &[], buf.into())
                .unwrap(),
        );
    });
    let gcm = sm4_simd::Sm4Gcm::from(c());
    row("gcm-enc:Sm4Gcm", &|buf| {
        black_box(
            gcm.encrypt_inout_detached(&nonce.into(), &[], buf.into())
                .unwrap(),
        );
    });
    // Decryption of a sealed message, out of place (so that every call
    // opens the same ciphertext and its tag checks).
    open_row(s, "ccm-dec:Sm4Ccm", b.name(), ccm.clone());
    open_row(s, "gcm-dec:Sm4Gcm", b.name(), gcm.clone());
    // Many sectors per call: 64 KiB of sectors of the column's size.
    let xts = Sm4Xts::with_backend(&xts_key, XtsStandard::Ieee1619, b)
        .expect("available")
        .expect("distinct halves");
    const AREA: usize = 64 * 1024;
    s.row_sized(
        "sm4",
        "xts-sectors-enc:Sm4Xts",
        b.name(),
        false,
        |_| AREA,
        |size| {
            let mut buf = crate::buffer(AREA);
            let xts = xts.clone();
            (size % 16 == 0 && size > 0).then_some(move || {
                let _ = xts.encrypt_sectors(1 << 40, size, black_box(&mut buf));
                black_box(&buf);
            })
        },
    );
}

/// A row that opens one sealed message of the column's size per call, out
/// of place.
fn open_row<A: AeadInOut<NonceSize = U12> + Clone + 'static>(
    s: &mut crate::Speed,
    mode: &str,
    backend: &str,
    aead: A,
) {
    let nonce = [0x11u8; 12];
    s.row("sm4", mode, backend, |size| {
        let mut ct = crate::buffer(size);
        let tag = aead
            .encrypt_inout_detached(&nonce.into(), &[], ct.as_mut_slice().into())
            .unwrap();
        let mut out = vec![0u8; size];
        let aead = aead.clone();
        Some(move || {
            aead.decrypt_inout_detached(
                &nonce.into(),
                &[],
                cipher::InOutBuf::new(black_box(&ct), &mut out).unwrap(),
                &tag,
            )
            .unwrap();
            black_box(&out);
        })
    });
}

/// Measure this family's rows.
pub fn rows(s: &mut crate::Speed) {
    let key = [0x42u8; 16];
    let key2 = [0x17u8; 16];
    for b in sm4_simd::Backend::available() {
        if !s.wants("sm4", b.name()) {
            continue;
        }
        let c = sm4_simd::Sm4::with_backend(&key, b).expect("available");
        let c2 = sm4_simd::Sm4::with_backend(&key2, b).expect("available");
        mode_rows(s, b.name(), false, c, c2);
        fused_rows(s, b, &key, &key2);
    }
    if s.opts.peers {
        let c = rc_sm4::Sm4::new(&key.into());
        let c2 = rc_sm4::Sm4::new(&key2.into());
        mode_rows(s, "rustcrypto-sm4", true, c, c2);
    }
}
