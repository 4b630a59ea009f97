//! Adiantum and HPolyC: decrypt(encrypt(m)) == m for any tweak and any
//! message length; messages under 16 bytes are refused, never a panic.
#![no_main]
use adiantum_simd::AdiantumXChaCha12Aes;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((key, rest)) = data.split_first_chunk::<32>() else {
        return;
    };
    let Some((&tweak_len, rest)) = rest.split_first() else {
        return;
    };
    let (tweak, msg) = rest.split_at(usize::from(tweak_len).min(rest.len()));
    let cipher = AdiantumXChaCha12Aes::new(key);
    let mut buf = msg.to_vec();
    match cipher.encrypt_in_place(tweak, &mut buf) {
        Ok(()) => {
            cipher
                .decrypt_in_place(tweak, &mut buf)
                .expect("same length");
            assert_eq!(buf, msg);
        }
        Err(_) => assert!(msg.len() < 16 && buf == msg),
    }
});
