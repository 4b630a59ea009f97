//! `speed` rows for TLCP bulk transfer in memory (`tlcp` crate): one call
//! sends the column's size from client to server in records of up to 16
//! KiB (sealed, moved, opened), for each suite; and, for the ratio, the
//! record protection without the protocol: `Sm4Gcm` sealing and opening
//! each record (`sm4-gcm-seal+open`, 13-byte header as additional data),
//! and SM4-CBC with HMAC-SM3 (`sm4-cbc+hmac-sm3-seal+open`: `Sm4CbcEnc` and
//! an HMAC-SM3 tag, then `Sm4CbcDec` and the tag again). Tongsuo's figures
//! come from `tlcp/interop/bench_tongsuo.py` (`scripts/tlcp-speed.sh` runs
//! both).

use std::hint::black_box;

use hmac::Mac;
use sm4_simd::aead::{AeadInOut, KeyInit};
use sm4_simd::cipher::{BlockModeDecrypt, BlockModeEncrypt, KeyIvInit};

/// Measure this family's rows.
pub fn rows(s: &mut crate::Speed) {
    s.row("tlcp", "sm4-gcm-seal+open", sm4_simd::backend(), |size| {
        let gcm = sm4_simd::Sm4Gcm::new(&[0x42; 16].into());
        let nonce = [7u8; 12].into();
        let header = [0u8; 13];
        let mut record = crate::buffer(size.min(16384));
        Some(move || {
            per_record(size, &mut record, |buf| {
                let tag = gcm
                    .encrypt_inout_detached(&nonce, &header, buf.into())
                    .unwrap();
                gcm.decrypt_inout_detached(&nonce, &header, buf.into(), &tag)
                    .unwrap();
            })
        })
    });
    s.row(
        "tlcp",
        "sm4-cbc+hmac-sm3-seal+open",
        sm4_simd::backend(),
        |size| {
            let mac = hmac::Hmac::<sm3_simd::Sm3>::new_from_slice(&[0x24; 32]).unwrap();
            let (key, iv) = ([0x42u8; 16], [0x11u8; 16]);
            let header = [0u8; 13];
            // Record plaintext, 32-byte MAC and padding, in whole blocks.
            let n = size.min(16384);
            let mut record = crate::buffer((n + 33).div_ceil(16) * 16);
            Some(move || {
                per_record(size, &mut record, |buf| {
                    let len = buf.len() - 33 - (buf.len() - 33) % 16;
                    let tag = mac
                        .clone()
                        .chain_update(header)
                        .chain_update(&buf[..len])
                        .finalize();
                    buf[len..len + 32].copy_from_slice(&tag.into_bytes());
                    let (blocks, _) =
                        sm4_simd::cipher::Block::<sm4_simd::Sm4>::slice_as_chunks_mut(buf);
                    sm4_simd::Sm4CbcEnc::new(&key.into(), &iv.into()).encrypt_blocks(blocks);
                    sm4_simd::Sm4CbcDec::new(&key.into(), &iv.into()).decrypt_blocks(blocks);
                    let tag = mac
                        .clone()
                        .chain_update(header)
                        .chain_update(&buf[..len])
                        .finalize();
                    black_box(tag);
                })
            })
        },
    );
    for suite in tlcp::CipherSuite::ALL {
        let backend = format!("tlcp/{}", sm4_simd::backend());
        let (client, server) = crate::tlcp::configs(suite);
        s.row("tlcp", &suite.name().to_lowercase(), &backend, |size| {
            let mut pair = crate::tlcp::Pair::connect(&client, &server);
            let data = crate::buffer(size);
            Some(move || pair.transfer(&data))
        });
    }
}

/// `size` bytes as records of up to 16 KiB (one empty record for `size ==
/// 0`): `seal_open` gets each record's buffer.
fn per_record(size: usize, record: &mut [u8], mut seal_open: impl FnMut(&mut [u8])) {
    let mut left = size;
    let extra = record.len() - size.min(16384);
    loop {
        let n = left.min(16384);
        seal_open(&mut record[..n + extra]);
        black_box(&*record);
        left -= n;
        if left == 0 {
            break;
        }
    }
}
