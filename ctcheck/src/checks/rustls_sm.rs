//! `rustls-sm`'s record protection (TLS_SM4_GCM_SM3, TLS_SM4_CCM_SM3):
//! the record key and IV secret, the plaintext secret; the sequence number
//! and the record header (the AAD) public, as on the wire. The SM4
//! backend is the one `sm4-simd` picks under valgrind (`avx`).

use super::{LENGTHS, Tally, public, secret, secret_array, secret_vec};
use rustls_sm::record_hooks::Record;

pub(super) fn check(tally: &mut Tally) {
    let backend = sm4_simd::backend();
    for ccm in [false, true] {
        let record = Record::new(ccm, &secret_array::<16>(0x31), &secret_array::<12>(0x32))
            .expect("16-byte key, 12-byte IV");
        for (seq, len) in LENGTHS.into_iter().enumerate() {
            let seq = seq as u64 * 0x0101_0101;
            let aad = [23, 3, 3, (len >> 8) as u8, len as u8];
            let mut buf = secret_vec(len + 16, 0x33);
            let mut tag = record.seal(seq, &aad, &mut buf[..len]).expect("seal");
            public(&mut tag);
            buf[len..].copy_from_slice(&tag);
            public(&mut buf);
            secret(&mut buf[..len]);
            // Declassified in sm4-simd: whether the tag matched.
            assert_eq!(
                record.open(seq, &aad, &mut buf),
                Some(len),
                "the right tag must open"
            );
            public(&mut buf);
            buf[len] ^= 1;
            secret(&mut buf[..len]);
            assert_eq!(
                record.open(seq, &aad, &mut buf),
                None,
                "a wrong tag must be refused"
            );
            public(&mut buf);
        }
        let op = if ccm {
            "TLS_SM4_CCM_SM3 record seal/open/wrong tag"
        } else {
            "TLS_SM4_GCM_SM3 record seal/open/wrong tag"
        };
        tally.ran("rustls-sm", backend, op);
    }
}
