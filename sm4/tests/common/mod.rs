//! Helpers shared by the integration tests: SM4 through every mode crate.
#![allow(dead_code)]

use aead::{AeadInOut, consts::U12};
use cipher::{
    BlockCipherDecrypt, BlockCipherEncrypt, BlockModeDecrypt, BlockModeEncrypt, InnerIvInit,
    StreamCipher, array::Array, common::InnerInit, consts::U16,
};
use sm4_simd::Sm4;

pub type Block = Array<u8, U16>;

/// Whole blocks of a byte buffer (any alignment).
pub fn blocks(buf: &mut [u8]) -> &mut [Block] {
    let (b, rest) = Block::slice_as_chunks_mut(buf);
    assert!(rest.is_empty());
    b
}

pub fn ecb_enc(c: &Sm4, buf: &mut [u8]) {
    ecb::Encryptor::<Sm4>::inner_init(c.clone()).encrypt_blocks(blocks(buf));
}
pub fn ecb_dec(c: &Sm4, buf: &mut [u8]) {
    ecb::Decryptor::<Sm4>::inner_init(c.clone()).decrypt_blocks(blocks(buf));
}
pub fn cbc_enc(c: &Sm4, iv: &[u8; 16], buf: &mut [u8]) {
    cbc::Encryptor::<Sm4>::inner_iv_init(c.clone(), iv.into()).encrypt_blocks(blocks(buf));
}
pub fn cbc_dec(c: &Sm4, iv: &[u8; 16], buf: &mut [u8]) {
    cbc::Decryptor::<Sm4>::inner_iv_init(c.clone(), iv.into()).decrypt_blocks(blocks(buf));
}
pub fn cfb_enc(c: &Sm4, iv: &[u8; 16], buf: &mut [u8]) {
    cfb_mode::BufEncryptor::<Sm4>::inner_iv_init(c.clone(), iv.into()).encrypt(buf);
}
pub fn cfb_dec(c: &Sm4, iv: &[u8; 16], buf: &mut [u8]) {
    cfb_mode::BufDecryptor::<Sm4>::inner_iv_init(c.clone(), iv.into()).decrypt(buf);
}
pub fn cfb_enc_blocks(c: &Sm4, iv: &[u8; 16], buf: &mut [u8]) {
    cfb_mode::Encryptor::<Sm4>::inner_iv_init(c.clone(), iv.into()).encrypt_blocks(blocks(buf));
}
pub fn cfb_dec_blocks(c: &Sm4, iv: &[u8; 16], buf: &mut [u8]) {
    cfb_mode::Decryptor::<Sm4>::inner_iv_init(c.clone(), iv.into()).decrypt_blocks(blocks(buf));
}
pub fn ofb(c: &Sm4, iv: &[u8; 16], buf: &mut [u8]) {
    ofb::Ofb::<Sm4>::from_core(ofb::OfbCore::inner_iv_init(c.clone(), iv.into()))
        .apply_keystream(buf);
}
pub fn ctr(c: &Sm4, iv: &[u8; 16], buf: &mut [u8]) {
    ctr::Ctr128BE::<Sm4>::from_core(ctr::CtrCore::inner_iv_init(c.clone(), iv.into()))
        .apply_keystream(buf);
}
/// IEEE 1619 XTS on one sector (buf.len() >= 16).
pub fn xts_enc(c1: &Sm4, c2: &Sm4, iv: &[u8; 16], buf: &mut [u8]) {
    xts_mode::Xts128::new(c1.clone(), c2.clone()).encrypt_sector(buf, (*iv).into());
}
pub fn xts_dec(c1: &Sm4, c2: &Sm4, iv: &[u8; 16], buf: &mut [u8]) {
    xts_mode::Xts128::new(c1.clone(), c2.clone()).decrypt_sector(buf, (*iv).into());
}

pub type Sm4Gcm = aes_gcm::AesGcm<Sm4, U12>;

/// SM4-GCM (12-byte nonce, 16-byte tag): ciphertext || tag.
pub fn gcm_seal(c: &Sm4, nonce: &[u8; 12], aad: &[u8], msg: &[u8]) -> Vec<u8> {
    let g = Sm4Gcm::from(c.clone());
    let mut buf = msg.to_vec();
    let tag = g
        .encrypt_inout_detached(nonce.into(), aad, buf.as_mut_slice().into())
        .unwrap();
    buf.extend_from_slice(&tag);
    buf
}
pub fn gcm_open(c: &Sm4, nonce: &[u8; 12], aad: &[u8], ct: &[u8]) -> Option<Vec<u8>> {
    let g = Sm4Gcm::from(c.clone());
    let (body, tag) = ct.split_at(ct.len() - 16);
    let mut buf = body.to_vec();
    g.decrypt_inout_detached(
        nonce.into(),
        aad,
        buf.as_mut_slice().into(),
        tag.try_into().unwrap(),
    )
    .ok()?;
    Some(buf)
}

/// SM4-CCM with 12-byte nonce and 16-byte tag: ciphertext || tag.
pub fn ccm_seal(c: &Sm4, nonce: &[u8; 12], aad: &[u8], msg: &[u8]) -> Vec<u8> {
    let g = ccm::Ccm::<Sm4, U16, U12>::from(c.clone());
    let mut buf = msg.to_vec();
    let tag = g
        .encrypt_inout_detached(nonce.into(), aad, buf.as_mut_slice().into())
        .unwrap();
    buf.extend_from_slice(&tag);
    buf
}

/// Encrypt and decrypt blocks through the block-cipher API directly.
pub fn enc_blocks(c: &Sm4, buf: &mut [u8]) {
    c.encrypt_blocks(blocks(buf));
}
pub fn dec_blocks(c: &Sm4, buf: &mut [u8]) {
    c.decrypt_blocks(blocks(buf));
}

/// The backends this CPU has, printed.
pub fn backends(what: &str) -> Vec<sm4_simd::Backend> {
    let b: Vec<sm4_simd::Backend> = sm4_simd::Backend::available().collect();
    let names: Vec<&str> = b.iter().map(|b| b.name()).collect();
    println!("sm4 {what}: backends tested: {}", names.join(" "));
    b
}

/// A key on the portable backend.
pub fn soft(key: &[u8; 16]) -> Sm4 {
    Sm4::with_backend(key, sm4_simd::Backend::Soft).unwrap()
}

/// A key on backend `b` (which the CPU has).
pub fn on(key: &[u8; 16], b: sm4_simd::Backend) -> Sm4 {
    Sm4::with_backend(key, b).unwrap()
}
