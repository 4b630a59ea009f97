//! `speed` rows for TLS 1.3 bulk transfer through rustls in memory: one
//! call sends the column's size from client to server (records of up to
//! 16 KiB, sealed and opened), TLS_SM4_GCM_SM3 and TLS_SM4_CCM_SM3 on
//! rustls-sm beside TLS13_AES_128_GCM_SHA256 and
//! TLS13_CHACHA20_POLY1305_SHA256 on rustls's *ring* provider, each on
//! the buffered connections (`ClientConnection`, `ServerConnection`) and
//! on the unbuffered ones (`-unbuffered`: the client seals into the
//! server's incoming buffer, no socket between them); and, for
//! the ratio, the same AEAD work without rustls: `Sm4Gcm` sealing and
//! opening each 16 KiB record in place (content type byte and 5-byte
//! header as additional data included), `sm4-gcm-seal+open`, and *ring*'s
//! AES-128-GCM doing the same, `aes128-gcm-seal+open` (what rustls's own
//! work costs beside a faster AEAD).

use std::hint::black_box;

use sm4_simd::aead::{AeadInOut, KeyInit};

/// Measure this family's rows.
pub fn rows(s: &mut crate::Speed) {
    s.row("tls13", "sm4-gcm-seal+open", sm4_simd::backend(), |size| {
        let gcm = sm4_simd::Sm4Gcm::new(&[0x42; 16].into());
        let nonce = [7u8; 12].into();
        let header = [0x17, 0x03, 0x03, 0x40, 0x11];
        let mut record = crate::buffer(size.min(16384) + 1);
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
    s.row("tls13", "aes128-gcm-seal+open", "ring", |size| {
        use ring::aead::{AES_128_GCM, Aad, LessSafeKey, Nonce, UnboundKey};
        let key = LessSafeKey::new(UnboundKey::new(&AES_128_GCM, &[0x42; 16]).unwrap());
        let header = [0x17, 0x03, 0x03, 0x40, 0x11];
        let mut record = crate::buffer(size.min(16384) + 1);
        Some(move || {
            per_record(size, &mut record, |buf| {
                let nonce = || Nonce::assume_unique_for_key([7; 12]);
                let tag = key
                    .seal_in_place_separate_tag(nonce(), Aad::from(header), buf)
                    .unwrap();
                key.open_in_place_separate_tag(nonce(), Aad::from(header), tag, buf, 0..)
                    .unwrap();
            })
        })
    });
    for case in crate::tls::BULK {
        let backend = if case.ours {
            format!("rustls-sm/{}", sm4_simd::backend())
        } else {
            "rustls-ring".to_string()
        };
        s.row("tls13", case.name, &backend, |size| {
            let mut pair = crate::tls::Pair::new(&case);
            let data = crate::buffer(size);
            Some(move || pair.transfer(&data))
        });
        let unbuffered = format!("{}-unbuffered", case.name);
        s.row("tls13", &unbuffered, &backend, |size| {
            let mut pair = crate::tls::UnbufferedPair::new(&case, size);
            let data = crate::buffer(size);
            Some(move || pair.transfer(&data))
        });
    }
}

/// `size` bytes as TLS 1.3 records of up to 16 KiB (one empty record for
/// `size == 0`): `seal_open` gets each record's plaintext and content type
/// byte, in `record`, in place.
fn per_record(size: usize, record: &mut [u8], mut seal_open: impl FnMut(&mut [u8])) {
    let mut left = size;
    loop {
        let n = left.min(16384);
        seal_open(&mut record[..n + 1]);
        black_box(&*record);
        left -= n;
        if left == 0 {
            break;
        }
    }
}
