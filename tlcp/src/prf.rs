//! The TLS 1.2 PRF (RFC 5246 section 5) over HMAC-SM3, as TLCP uses it
//! (GB/T 38636-2020 section 6.5): `P_SM3(secret, label || seed)`.

use hmac::{KeyInit, Mac};
use sm3_simd::Sm3;

type HmacSm3 = hmac::Hmac<Sm3>;

/// Fills `out` with `PRF(secret, label, seed[0] || seed[1] || ...)`.
pub(crate) fn prf(secret: &[u8], label: &[u8], seed: &[&[u8]], out: &mut [u8]) {
    let keyed = HmacSm3::new_from_slice(secret).expect("HMAC takes any key length");
    // A(1) = HMAC(secret, label || seed).
    let mut a = {
        let mut m = keyed.clone();
        m.update(label);
        for s in seed {
            m.update(s);
        }
        m.finalize().into_bytes()
    };
    for chunk in out.chunks_mut(32) {
        let mut m = keyed.clone();
        m.update(&a);
        m.update(label);
        for s in seed {
            m.update(s);
        }
        let block = m.finalize().into_bytes();
        chunk.copy_from_slice(&block[..chunk.len()]);
        // A(i + 1) = HMAC(secret, A(i)).
        let mut m = keyed.clone();
        m.update(&a);
        a = m.finalize().into_bytes();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The PRF's structure against a direct transcription of RFC 5246's
    /// definition, on lengths around the 32-byte blocks.
    #[test]
    fn matches_the_definition() {
        let hmac = |k: &[u8], parts: &[&[u8]]| {
            let mut m = HmacSm3::new_from_slice(k).unwrap();
            for p in parts {
                m.update(p);
            }
            m.finalize().into_bytes().to_vec()
        };
        let (secret, label, s1, s2) = (b"secret".as_slice(), b"label", b"seed one", b"two");
        for len in [0, 1, 12, 31, 32, 33, 48, 64, 104, 200] {
            let mut want = Vec::new();
            let seed = [&label[..], s1, s2].concat();
            let mut a = hmac(secret, &[&seed]);
            while want.len() < len {
                want.extend(hmac(secret, &[&a, &seed]));
                a = hmac(secret, &[&a]);
            }
            want.truncate(len);
            let mut got = vec![0; len];
            prf(secret, label, &[s1, s2], &mut got);
            assert_eq!(got, want, "{len}");
        }
    }
}
