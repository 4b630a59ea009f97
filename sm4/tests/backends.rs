//! Every backend this CPU has against `soft`: random keys, 0..=300 blocks,
//! in place and out of place, unaligned buffers, through `encrypt_blocks`,
//! `decrypt_blocks` and each mode crate.

mod common;

use cipher::{BlockCipherDecrypt, BlockCipherEncrypt, InOutBuf};
use common::*;
use sm4_simd::{Backend, Sm4};

/// Outputs of every mode for one key pair and message.
fn all_modes(c1: &Sm4, c2: &Sm4, iv: &[u8; 16], msg: &[u8]) -> Vec<Vec<u8>> {
    let whole = &msg[..msg.len() / 16 * 16];
    let mut out = Vec::new();
    let mut run = |f: &dyn Fn(&mut [u8]), m: &[u8]| {
        let mut b = m.to_vec();
        f(&mut b);
        out.push(b);
    };
    run(&|b| ecb_enc(c1, b), whole);
    run(&|b| ecb_dec(c1, b), whole);
    run(&|b| cbc_enc(c1, iv, b), whole);
    run(&|b| cbc_dec(c1, iv, b), whole);
    run(&|b| cfb_enc(c1, iv, b), msg);
    run(&|b| cfb_dec(c1, iv, b), msg);
    run(&|b| cfb_enc_blocks(c1, iv, b), whole);
    run(&|b| cfb_dec_blocks(c1, iv, b), whole);
    run(&|b| ofb(c1, iv, b), msg);
    run(&|b| ctr(c1, iv, b), msg);
    if msg.len() >= 16 {
        run(&|b| xts_enc(c1, c2, iv, b), msg);
        run(&|b| xts_dec(c1, c2, iv, b), msg);
    }
    let nonce: [u8; 12] = iv[..12].try_into().unwrap();
    out.push(gcm_seal(c1, &nonce, &iv[..], msg));
    out.push(ccm_seal(c1, &nonce, &iv[4..], msg));
    out
}

#[test]
fn backends_match_soft() {
    let names: Vec<&str> = Backend::available().map(Backend::name).collect();
    println!(
        "sm4: backends tested against soft: {} (default: {})",
        names.join(" "),
        sm4_simd::backend()
    );
    let mut rng = testkit::Rng::new(0x5eed_5a4d);
    // Miri (soft only, about 0.2 s a block) runs a few lengths: none, one
    // block (the single-block path), a short tail, and a full 16-block
    // batch plus a tail. The modes there would only repeat soft against
    // itself (the vector tests run them).
    let miri_lengths: &[usize] = if cfg!(miri) { &[0, 1, 3, 17] } else { &[] };
    let modes = !cfg!(miri);
    for nblocks in (0..=300).filter(|n| !cfg!(miri) || miri_lengths.contains(n)) {
        let key: [u8; 16] = rng.array();
        let key2: [u8; 16] = rng.array();
        let iv: [u8; 16] = rng.array();
        let data = rng.bytes(nblocks * 16);
        let soft = Sm4::with_backend(&key, Backend::Soft).unwrap();
        let soft2 = Sm4::with_backend(&key2, Backend::Soft).unwrap();
        let mut want_enc = data.clone();
        enc_blocks(&soft, &mut want_enc);
        let mut want_dec = data.clone();
        dec_blocks(&soft, &mut want_dec);
        // byte-granular message for the stream modes: cut at a random length
        let cut = nblocks * 16 - if nblocks > 0 { rng.below(16) } else { 0 };
        let want_modes = if modes {
            all_modes(&soft, &soft2, &iv, &data[..cut])
        } else {
            Vec::new()
        };
        for b in Backend::available() {
            let c = Sm4::with_backend(&key, b).unwrap();
            let c2 = Sm4::with_backend(&key2, b).unwrap();
            assert_eq!(c.backend_of(), b);
            // in place, misaligned
            let off = rng.below(16);
            let (mut buf, r) = testkit::misaligned(&data, off);
            enc_blocks(&c, &mut buf[r.clone()]);
            assert_eq!(&buf[r.clone()], &want_enc[..], "{} enc {nblocks}", b.name());
            dec_blocks(&c, &mut buf[r.clone()]);
            assert_eq!(
                &buf[r.clone()],
                &data[..],
                "{} roundtrip {nblocks}",
                b.name()
            );
            dec_blocks(&c, &mut buf[r.clone()]);
            assert_eq!(&buf[r.clone()], &want_dec[..], "{} dec {nblocks}", b.name());
            // out of place, misaligned input and output
            let (inb, ri) = testkit::misaligned(&data, rng.below(16));
            let (mut outb, ro) = testkit::misaligned(&vec![0u8; data.len()], rng.below(16));
            {
                let mut ib = inb[ri.clone()].to_vec();
                let ibl = blocks(&mut ib);
                let ob = blocks(&mut outb[ro.clone()]);
                c.encrypt_blocks_inout(InOutBuf::new(ibl, ob).unwrap());
            }
            assert_eq!(
                &outb[ro.clone()],
                &want_enc[..],
                "{} enc b2b {nblocks}",
                b.name()
            );
            {
                let mut ib = want_enc.clone();
                let ibl = blocks(&mut ib);
                let ob = blocks(&mut outb[ro.clone()]);
                c.decrypt_blocks_inout(InOutBuf::new(ibl, ob).unwrap());
            }
            assert_eq!(
                &outb[ro.clone()],
                &data[..],
                "{} dec b2b {nblocks}",
                b.name()
            );
            // single blocks
            if nblocks > 0 {
                let mut blk = cipher::Block::<Sm4>::try_from(&data[..16]).unwrap();
                c.encrypt_block(&mut blk);
                assert_eq!(blk.as_slice(), &want_enc[..16]);
                c.decrypt_block(&mut blk);
                assert_eq!(blk.as_slice(), &data[..16]);
            }
            // every mode crate
            if modes {
                let got = all_modes(&c, &c2, &iv, &data[..cut]);
                for (i, (g, w)) in got.iter().zip(&want_modes).enumerate() {
                    assert_eq!(g, w, "{} mode #{i} len {cut}", b.name());
                }
            }
        }
    }
}

#[test]
fn backend_names() {
    assert!(Backend::available().any(|b| b == Backend::Soft));
    if !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        assert_eq!(
            sm4_simd::backend(),
            "soft",
            "no SIMD backend on this target"
        );
    }
    for b in Backend::ALL {
        if !b.is_available() {
            assert!(Sm4::with_backend(&[0; 16], b).is_none());
        }
    }
}
