//! `tlcp`'s record protection: SM4-CBC + HMAC-SM3 opened in constant time
//! (good records, a bad MAC, a bad padding length, a bad padding byte)
//! and SM4-GCM (good and bad tags). Keys and plaintexts secret; the
//! sequence number, type and the record on the wire public. Every SM4 and
//! SM3 backend (and GHASH engine) valgrind runs, in every pairing.

use super::{LENGTHS, Tally, public, secret_array, secret_vec};
use tlcp::record_hooks::{CbcRecord, GcmRecord};

/// Opens `body` and returns (good, length) as public values.
fn open_cbc(record: &CbcRecord, seq: u64, body: &mut [u8]) -> (u8, usize) {
    let (good, len) = record.open_ct(seq, 23, body).expect("a possible length");
    let mut out = [good, 0, 0, 0, 0, 0, 0, 0, 0];
    out[1..].copy_from_slice(&(len as u64).to_le_bytes());
    // Declassified here, by the caller of the constant-time open: the
    // record's verdict (and, for a good record, its length).
    public(&mut out);
    (
        out[0],
        u64::from_le_bytes(out[1..].try_into().unwrap()) as usize,
    )
}

pub(super) fn check(tally: &mut Tally) {
    for sm4 in sm4_simd::Backend::available().filter(|b| !super::sm4::SKIPPED.contains(b)) {
        for sm3 in sm3_simd::Backend::available().filter(|b| !super::sm3::SKIPPED.contains(b)) {
            let cbc = CbcRecord::with_backends(
                &secret_array::<32>(0x41),
                &secret_array::<16>(0x42),
                sm4,
                sm3,
            )
            .expect("an available pair");
            check_cbc(&cbc);
            let name = format!("{}+{}", sm4.name(), sm3.name());
            tally.ran(
                "tlcp",
                &name,
                "ECC/ECDHE_SM4_CBC_SM3 record seal/open (good, bad MAC, bad padding)",
            );
        }
        for engine in sm4
            .ghash_engines()
            .filter(|e| !super::sm4::SKIPPED_GHASH.contains(e))
        {
            let gcm = GcmRecord::with_backends(
                &secret_array::<16>(0x51),
                &secret_array::<4>(0x52),
                sm4,
                engine,
            )
            .expect("an available pair");
            check_gcm(&gcm);
            let name = format!("{}+{}", sm4.name(), engine.name());
            tally.ran(
                "tlcp",
                &name,
                "ECC/ECDHE_SM4_GCM_SM3 record seal/open (good, bad tag)",
            );
        }
    }
}

fn check_cbc(cbc: &CbcRecord) {
    for (seq, len) in LENGTHS.into_iter().chain([16384]).enumerate() {
        let seq = seq as u64 * 0x0102_0304;
        let plain = secret_vec(len, 0x43);
        let mut body = cbc.seal(seq, 23, &plain, [0x44; 16]);
        public(&mut body);
        let n = body.len();
        assert_eq!(
            open_cbc(cbc, seq, &mut body.clone()),
            (1, len),
            "a good record opens"
        );
        // A changed first block: the MAC fails.
        let mut bad = body.clone();
        bad[16] ^= 1;
        assert_eq!(open_cbc(cbc, seq, &mut bad).0, 0, "bad MAC");
        // A changed padding-length byte (through the previous block).
        let mut bad = body.clone();
        bad[n - 17] ^= 0x40;
        assert_eq!(open_cbc(cbc, seq, &mut bad).0, 0, "bad padding length");
        // A changed byte just before it (padding or MAC).
        let mut bad = body.clone();
        bad[n - 18] ^= 1;
        assert_eq!(open_cbc(cbc, seq, &mut bad).0, 0, "bad padding byte");
    }
}

fn check_gcm(gcm: &GcmRecord) {
    for (seq, len) in LENGTHS.into_iter().enumerate() {
        let seq = seq as u64 * 0x0102_0304;
        let plain = secret_vec(len, 0x53);
        let mut body = gcm.seal(seq, 23, &plain);
        public(&mut body);
        // Declassified in sm4-simd: whether the tag matched.
        assert!(
            gcm.open(seq, 23, &mut body.clone()).is_some(),
            "a good record opens"
        );
        let mut bad = body.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert!(
            gcm.open(seq, 23, &mut bad).is_none(),
            "a wrong tag is refused"
        );
    }
}
