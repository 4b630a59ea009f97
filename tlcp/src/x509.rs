//! The few fields of an X.509 certificate that TLCP needs beside webpki's
//! path validation: the SM2 public key and the key usage bits. A minimal
//! DER reader (definite lengths, up to 4 length bytes); any certificate it
//! cannot read is refused.

/// One DER element: its tag and contents; advances `input`.
pub(crate) fn read_tlv<'a>(input: &mut &'a [u8]) -> Option<(u8, &'a [u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, mut rest) = rest.split_first()?;
    let len = if first < 0x80 {
        usize::from(first)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let mut len = 0usize;
        for &b in &rest[..n] {
            len = (len << 8) | usize::from(b);
        }
        rest = &rest[n..];
        len
    };
    if rest.len() < len {
        return None;
    }
    let (value, after) = rest.split_at(len);
    *input = after;
    Some((tag, value))
}

/// Reads one element that must have `tag`.
fn expect<'a>(input: &mut &'a [u8], tag: u8) -> Option<&'a [u8]> {
    let (t, v) = read_tlv(input)?;
    (t == tag).then_some(v)
}

const SEQUENCE: u8 = 0x30;
const BIT_STRING: u8 = 0x03;
const OCTET_STRING: u8 = 0x04;
const OID: u8 = 0x06;
const BOOLEAN: u8 = 0x01;
/// id-ecPublicKey (1.2.840.10045.2.1) and sm2p256v1 (1.2.156.10197.1.301).
const EC_PUBLIC_KEY: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const SM2_CURVE: &[u8] = &[0x2a, 0x81, 0x1c, 0xcf, 0x55, 0x01, 0x82, 0x2d];
/// id-ce-keyUsage (2.5.29.15).
const KEY_USAGE: &[u8] = &[0x55, 0x1d, 0x0f];

/// Key usage bits (RFC 5280 section 4.2.1.3), bit 0 first.
pub(crate) mod usage {
    pub(crate) const DIGITAL_SIGNATURE: u16 = 1 << 0;
    pub(crate) const KEY_ENCIPHERMENT: u16 = 1 << 2;
    pub(crate) const DATA_ENCIPHERMENT: u16 = 1 << 3;
    pub(crate) const KEY_AGREEMENT: u16 = 1 << 4;
}

/// What TLCP reads of a certificate.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct CertInfo {
    /// The SM2 public key, `04 || x || y`.
    pub(crate) public_key: [u8; 65],
    /// The key usage bits (bit n of RFC 5280 as `1 << n`); `None` without
    /// the extension.
    pub(crate) key_usage: Option<u16>,
}

/// The SM2 key and key usage of a DER certificate; `None` if it is not a
/// certificate with an SM2 key or cannot be read.
pub(crate) fn parse(cert: &[u8]) -> Option<CertInfo> {
    let mut input = cert;
    let mut certificate = expect(&mut input, SEQUENCE)?;
    let mut tbs = expect(&mut certificate, SEQUENCE)?;
    // [0] version (optional), serial, signature, issuer, validity, subject.
    if tbs.first() == Some(&0xa0) {
        read_tlv(&mut tbs)?;
    }
    for _ in 0..5 {
        read_tlv(&mut tbs)?;
    }
    let mut spki = expect(&mut tbs, SEQUENCE)?;
    let mut alg = expect(&mut spki, SEQUENCE)?;
    if expect(&mut alg, OID)? != EC_PUBLIC_KEY || expect(&mut alg, OID)? != SM2_CURVE {
        return None;
    }
    let bits = expect(&mut spki, BIT_STRING)?;
    let public_key: [u8; 65] = bits.strip_prefix(&[0])?.try_into().ok()?;
    if public_key[0] != 4 {
        return None;
    }
    let mut key_usage = None;
    while let Some((tag, value)) = read_tlv(&mut tbs) {
        if tag != 0xa3 {
            continue; // issuer / subject unique IDs
        }
        let mut value = value;
        let mut extensions = expect(&mut value, SEQUENCE)?;
        while !extensions.is_empty() {
            let mut ext = expect(&mut extensions, SEQUENCE)?;
            let oid = expect(&mut ext, OID)?;
            if ext.first() == Some(&BOOLEAN) {
                read_tlv(&mut ext)?;
            }
            let mut inner = expect(&mut ext, OCTET_STRING)?;
            if oid == KEY_USAGE {
                let bits = expect(&mut inner, BIT_STRING)?;
                let (&unused, bytes) = bits.split_first()?;
                if unused > 7 || bytes.is_empty() && unused != 0 {
                    return None;
                }
                let mut value = 0u16;
                for (i, &b) in bytes.iter().take(2).enumerate() {
                    for bit in 0..8 {
                        if b & (0x80 >> bit) != 0 {
                            value |= 1 << (i * 8 + bit);
                        }
                    }
                }
                key_usage = Some(value);
            }
        }
    }
    Some(CertInfo {
        public_key,
        key_usage,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn der(name: &str) -> Vec<u8> {
        std::fs::read(format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    #[test]
    fn sign_and_enc_certificates() {
        let sign = parse(&der("server_sign.crt.der")).unwrap();
        assert_eq!(sign.key_usage, Some(usage::DIGITAL_SIGNATURE));
        let enc = parse(&der("server_enc.crt.der")).unwrap();
        let ku = enc.key_usage.unwrap();
        assert!(ku & usage::KEY_ENCIPHERMENT != 0 && ku & usage::KEY_AGREEMENT != 0);
        assert_eq!(ku & usage::DIGITAL_SIGNATURE, 0);
        assert_ne!(sign.public_key, enc.public_key);
        // Truncations never panic and are refused.
        let cert = der("server_sign.crt.der");
        for cut in 0..cert.len() {
            let _ = parse(&cert[..cut]);
        }
    }
}
