//! `sm4_simd::Sm4Xts` on every backend: IEEE 1619 against `xts-mode`, both
//! standards decrypt(encrypt(x)), and the multi-sector call against a loop
//! of single sectors.
#![no_main]
use cipher::KeyInit;
use libfuzzer_sys::fuzz_target;
use sm4_simd::{Backend, Sm4, Sm4Xts, XtsStandard};

fuzz_target!(|data: &[u8]| {
    let Some((key, rest)) = data.split_first_chunk::<32>() else {
        return;
    };
    let Some((tweak, msg)) = rest.split_first_chunk::<16>() else {
        return;
    };
    let mut want = msg.to_vec();
    if msg.len() >= 16 {
        let k1 = Sm4::new_from_slice(&key[..16]).expect("16 bytes");
        let k2 = Sm4::new_from_slice(&key[16..]).expect("16 bytes");
        xts_mode::Xts128::new(k1, k2).encrypt_sector(&mut want, (*tweak).into());
    }
    for b in Backend::available() {
        for standard in [XtsStandard::Ieee1619, XtsStandard::GbT17964] {
            let Ok(xts) = Sm4Xts::with_backend(key, standard, b).expect("available") else {
                assert_eq!(key[..16], key[16..]);
                return;
            };
            let mut got = msg.to_vec();
            if xts.encrypt_sector(tweak, &mut got).is_err() {
                assert!(msg.len() < 16 && got == msg);
                continue;
            }
            if standard == XtsStandard::Ieee1619 {
                assert_eq!(got, want, "{} ieee", b.name());
            }
            xts.decrypt_sector(tweak, &mut got).expect("long enough");
            assert_eq!(got, msg, "{} {standard:?} round trip", b.name());
            // Sectors of 16 * (1 + tweak[0] % 8) bytes, numbered from the tweak.
            let size = 16 * (1 + usize::from(tweak[0] % 8));
            let area = &msg[..msg.len() / size * size];
            let first = u128::from_le_bytes(*tweak) >> 1;
            let mut one = area.to_vec();
            for (s, sector) in one.chunks_mut(size).enumerate() {
                let t = (first + s as u128).to_le_bytes();
                xts.encrypt_sector(&t, sector).expect("whole sector");
            }
            let mut many = area.to_vec();
            xts.encrypt_sectors(first, size, &mut many)
                .expect("whole sectors");
            assert_eq!(many, one, "{} {standard:?} sectors", b.name());
        }
    }
});
