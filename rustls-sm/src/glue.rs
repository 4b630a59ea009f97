//! Everything that touches rustls's API (0.23): the cipher suites, the
//! hash, HMAC and HKDF, record protection, curveSM2, `sm2sig_sm3` signing
//! and verification, and the provider constructors. Moving to another
//! rustls version is this file's work; `record` and `sm2` stay.

use std::sync::{Arc, LazyLock};

use rustls::crypto::cipher::{
    AeadKey, InboundOpaqueMessage, InboundPlainMessage, Iv, MessageDecrypter, MessageEncrypter,
    OutboundOpaqueMessage, OutboundPlainMessage, PrefixedPayload, Tls13AeadAlgorithm,
    UnsupportedOperationError, make_tls13_aad,
};
use rustls::crypto::hash::{self, HashAlgorithm};
use rustls::crypto::tls13::HkdfUsingHmac;
use rustls::crypto::{
    ActiveKeyExchange, CryptoProvider, KeyProvider, SecureRandom, SharedSecret, SupportedKxGroup,
    WebPkiSupportedAlgorithms, hmac, ring,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{
    AlgorithmIdentifier, CertificateDer, InvalidSignature, PrivateKeyDer,
    SignatureVerificationAlgorithm, SubjectPublicKeyInfoDer,
};
use rustls::sign::{Signer, SigningKey, public_key_to_spki};
use rustls::{
    CipherSuite, CipherSuiteCommon, ConnectionTrafficSecrets, ContentType, Error, NamedGroup,
    PeerMisbehaved, ProtocolVersion, SignatureAlgorithm, SignatureScheme, SupportedCipherSuite,
    Tls13CipherSuite,
};
use sm3_simd::{Digest, Sm3};
use sm4_simd::{Sm4Ccm, Sm4Gcm};

use crate::record::{KEY_LEN, RecordAead, RecordKey, TAG_LEN};
use crate::sm2::{EphemeralKey, Sm2Key};

/// TLS_SM4_GCM_SM3 (RFC 8998): 0x00C6.
pub const TLS_SM4_GCM_SM3: CipherSuite = CipherSuite::Unknown(0x00C6);
/// TLS_SM4_CCM_SM3 (RFC 8998): 0x00C7.
pub const TLS_SM4_CCM_SM3: CipherSuite = CipherSuite::Unknown(0x00C7);
/// curveSM2 (RFC 8998): 0x0029.
pub const CURVE_SM2: NamedGroup = NamedGroup::Unknown(0x0029);
/// sm2sig_sm3 (RFC 8998): 0x0708.
pub const SM2SIG_SM3: SignatureScheme = SignatureScheme::Unknown(0x0708);

/// The suites' hash, as rustls names it (TLS has no code point for SM3;
/// rustls uses this only to tell hashes apart, for resumption).
const SM3_HASH_ID: HashAlgorithm = HashAlgorithm::Unknown(0x07);

/// The confidentiality limit of SM4-GCM in full-size records: 2^24, as for
/// AES-128-GCM (128-bit block; RFC 8446 section 5.5 and the CFRG AEAD
/// limits, attack probability 2^-60 with 2^14-byte records).
const GCM_CONFIDENTIALITY_LIMIT: u64 = 1 << 24;
/// SM4-CCM's: 2^23 (CCM processes each block twice: 2^(128/2) * 2^-30 /
/// (2 * 2^10)).
const CCM_CONFIDENTIALITY_LIMIT: u64 = 1 << 23;

/// TLS_SM4_GCM_SM3 on `sm4_simd::Sm4Gcm` and `sm3_simd::Sm3`.
pub static TLS13_SM4_GCM_SM3: SupportedCipherSuite =
    SupportedCipherSuite::Tls13(&TLS13_SM4_GCM_SM3_INTERNAL);
/// TLS_SM4_CCM_SM3 on `sm4_simd::Sm4Ccm` and `sm3_simd::Sm3`.
pub static TLS13_SM4_CCM_SM3: SupportedCipherSuite =
    SupportedCipherSuite::Tls13(&TLS13_SM4_CCM_SM3_INTERNAL);

static TLS13_SM4_GCM_SM3_INTERNAL: Tls13CipherSuite = Tls13CipherSuite {
    common: CipherSuiteCommon {
        suite: TLS_SM4_GCM_SM3,
        hash_provider: &Sm3Hash,
        confidentiality_limit: GCM_CONFIDENTIALITY_LIMIT,
    },
    hkdf_provider: &HkdfUsingHmac(&Sm3Hmac),
    aead_alg: &Sm4Aead::<Sm4Gcm>(core::marker::PhantomData),
    quic: None,
};

static TLS13_SM4_CCM_SM3_INTERNAL: Tls13CipherSuite = Tls13CipherSuite {
    common: CipherSuiteCommon {
        suite: TLS_SM4_CCM_SM3,
        hash_provider: &Sm3Hash,
        confidentiality_limit: CCM_CONFIDENTIALITY_LIMIT,
    },
    hkdf_provider: &HkdfUsingHmac(&Sm3Hmac),
    aead_alg: &Sm4Aead::<Sm4Ccm>(core::marker::PhantomData),
    quic: None,
};

// ---- SM3, HMAC-SM3 (HKDF is rustls's RFC 5869 code over this HMAC) ----

struct Sm3Hash;

impl hash::Hash for Sm3Hash {
    fn start(&self) -> Box<dyn hash::Context> {
        Box::new(Sm3Context(Sm3::new()))
    }

    fn hash(&self, data: &[u8]) -> hash::Output {
        hash::Output::new(&Sm3::digest(data))
    }

    fn output_len(&self) -> usize {
        32
    }

    fn algorithm(&self) -> HashAlgorithm {
        SM3_HASH_ID
    }
}

struct Sm3Context(Sm3);

impl hash::Context for Sm3Context {
    fn fork_finish(&self) -> hash::Output {
        hash::Output::new(&self.0.clone().finalize())
    }

    fn fork(&self) -> Box<dyn hash::Context> {
        Box::new(Sm3Context(self.0.clone()))
    }

    fn finish(self: Box<Self>) -> hash::Output {
        hash::Output::new(&self.0.finalize())
    }

    fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }
}

struct Sm3Hmac;

impl hmac::Hmac for Sm3Hmac {
    fn with_key(&self, key: &[u8]) -> Box<dyn hmac::Key> {
        use ::hmac::KeyInit;
        // HMAC takes keys of any length: `new_from_slice` cannot fail.
        let mac = ::hmac::Hmac::<Sm3>::new_from_slice(key).expect("HMAC takes any key length");
        Box::new(Sm3HmacKey(mac))
    }

    fn hash_output_len(&self) -> usize {
        32
    }
}

/// HMAC-SM3 keyed once; each tag starts from a copy of the keyed state.
struct Sm3HmacKey(::hmac::Hmac<Sm3>);

impl hmac::Key for Sm3HmacKey {
    fn sign_concat(&self, first: &[u8], middle: &[&[u8]], last: &[u8]) -> hmac::Tag {
        use ::hmac::Mac;
        let mut mac = self.0.clone();
        mac.update(first);
        for part in middle {
            mac.update(part);
        }
        mac.update(last);
        hmac::Tag::new(&mac.finalize().into_bytes())
    }

    fn tag_len(&self) -> usize {
        32
    }
}

// ---- Record protection ----

struct Sm4Aead<A>(core::marker::PhantomData<fn() -> A>);

impl<A: RecordAead> Tls13AeadAlgorithm for Sm4Aead<A> {
    fn encrypter(&self, key: AeadKey, iv: Iv) -> Box<dyn MessageEncrypter> {
        match RecordKey::<A>::new(key.as_ref(), iv.as_ref()) {
            Some(key) => Box::new(Sm4Encrypter(key)),
            None => Box::new(Refuse),
        }
    }

    fn decrypter(&self, key: AeadKey, iv: Iv) -> Box<dyn MessageDecrypter> {
        match RecordKey::<A>::new(key.as_ref(), iv.as_ref()) {
            Some(key) => Box::new(Sm4Decrypter(key)),
            None => Box::new(Refuse),
        }
    }

    fn key_len(&self) -> usize {
        KEY_LEN
    }

    fn extract_keys(
        &self,
        _key: AeadKey,
        _iv: Iv,
    ) -> Result<ConnectionTrafficSecrets, UnsupportedOperationError> {
        // rustls 0.23's `ConnectionTrafficSecrets` has no SM4 variant
        // (it exists for kTLS, which has no SM4 either).
        Err(UnsupportedOperationError)
    }
}

struct Sm4Encrypter<A>(RecordKey<A>);

impl<A: RecordAead> MessageEncrypter for Sm4Encrypter<A> {
    fn encrypt(
        &mut self,
        msg: OutboundPlainMessage<'_>,
        seq: u64,
    ) -> Result<OutboundOpaqueMessage, Error> {
        let total_len = self.encrypted_payload_len(msg.payload.len());
        // rustls's record buffer: header room, then the TLSInnerPlaintext
        // (content, type), sealed in place, then the tag.
        let mut payload = PrefixedPayload::with_capacity(total_len);
        payload.extend_from_chunks(&msg.payload);
        payload.extend_from_slice(&msg.typ.to_array());
        let aad = make_tls13_aad(total_len);
        let tag = self
            .0
            .seal(seq, &aad, payload.as_mut())
            .ok_or(Error::EncryptError)?;
        payload.extend_from_slice(&tag);
        Ok(OutboundOpaqueMessage::new(
            ContentType::ApplicationData,
            ProtocolVersion::TLSv1_2,
            payload,
        ))
    }

    fn encrypted_payload_len(&self, payload_len: usize) -> usize {
        payload_len + 1 + TAG_LEN
    }
}

struct Sm4Decrypter<A>(RecordKey<A>);

impl<A: RecordAead> MessageDecrypter for Sm4Decrypter<A> {
    fn decrypt<'a>(
        &mut self,
        mut msg: InboundOpaqueMessage<'a>,
        seq: u64,
    ) -> Result<InboundPlainMessage<'a>, Error> {
        let payload = &mut msg.payload;
        let aad = make_tls13_aad(payload.len());
        let plain_len = self.0.open(seq, &aad, payload).ok_or(Error::DecryptError)?;
        payload.truncate(plain_len);
        msg.into_tls13_unpadded_message()
    }
}

/// Stands in for a record key rustls gave with the wrong length (never,
/// with the lengths this module declares): every record fails.
struct Refuse;

impl MessageEncrypter for Refuse {
    fn encrypt(
        &mut self,
        _: OutboundPlainMessage<'_>,
        _: u64,
    ) -> Result<OutboundOpaqueMessage, Error> {
        Err(Error::EncryptError)
    }

    fn encrypted_payload_len(&self, payload_len: usize) -> usize {
        payload_len + 1 + TAG_LEN
    }
}

impl MessageDecrypter for Refuse {
    fn decrypt<'a>(
        &mut self,
        _: InboundOpaqueMessage<'a>,
        _: u64,
    ) -> Result<InboundPlainMessage<'a>, Error> {
        Err(Error::DecryptError)
    }
}

// ---- curveSM2 ----

/// ECDHE on the SM2 curve (RFC 8998 section 3.1), TLS 1.3 only.
#[derive(Debug)]
struct CurveSm2;

/// The base provider's random source (the operating system's), looked up once.
static RANDOM: LazyLock<&'static dyn SecureRandom> =
    LazyLock::new(|| ring::default_provider().secure_random);

/// The curveSM2 key exchange group, for `CryptoProvider::kx_groups`.
pub static CURVE_SM2_KX: &dyn SupportedKxGroup = &CurveSm2;

impl SupportedKxGroup for CurveSm2 {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, Error> {
        let key = EphemeralKey::generate(|buf| RANDOM.fill(buf).is_ok())
            .ok_or(Error::FailedToGetRandomBytes)?;
        Ok(Box::new(CurveSm2Exchange(key)))
    }

    fn name(&self) -> NamedGroup {
        CURVE_SM2
    }

    fn usable_for_version(&self, version: ProtocolVersion) -> bool {
        version == ProtocolVersion::TLSv1_3
    }
}

struct CurveSm2Exchange(EphemeralKey);

impl ActiveKeyExchange for CurveSm2Exchange {
    fn complete(self: Box<Self>, peer_pub_key: &[u8]) -> Result<SharedSecret, Error> {
        let secret = self
            .0
            .agree(peer_pub_key)
            .ok_or(PeerMisbehaved::InvalidKeyShare)?;
        Ok(SharedSecret::from(&secret[..]))
    }

    fn pub_key(&self) -> &[u8] {
        self.0.share()
    }

    fn group(&self) -> NamedGroup {
        CURVE_SM2
    }
}

// ---- sm2sig_sm3: signing ----

/// The DER body (no outer SEQUENCE) of the `AlgorithmIdentifier` of an SM2
/// public key: id-ecPublicKey (1.2.840.10045.2.1) with the named curve
/// sm2p256v1 (1.2.156.10197.1.301), as OpenSSL writes it.
const SM2_PUBLIC_KEY_ALG_ID: AlgorithmIdentifier = AlgorithmIdentifier::from_slice(&[
    0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, // id-ecPublicKey
    0x06, 0x08, 0x2a, 0x81, 0x1c, 0xcf, 0x55, 0x01, 0x82, 0x2d, // sm2p256v1
]);
/// SM2-with-SM3 (1.2.156.10197.1.501), no parameters (OpenSSL's form).
const SM2_SM3_ALG_ID: AlgorithmIdentifier =
    AlgorithmIdentifier::from_slice(&[0x06, 0x08, 0x2a, 0x81, 0x1c, 0xcf, 0x55, 0x01, 0x83, 0x75]);
/// SM2-with-SM3 with NULL parameters (some CAs write them).
const SM2_SM3_NULL_ALG_ID: AlgorithmIdentifier = AlgorithmIdentifier::from_slice(&[
    0x06, 0x08, 0x2a, 0x81, 0x1c, 0xcf, 0x55, 0x01, 0x83, 0x75, 0x05, 0x00,
]);

/// Loads SM2 PKCS#8 keys, and (unless `sm2_only`) every other key through
/// the base provider.
#[derive(Debug)]
struct Keys {
    sm2_only: bool,
}

static KEYS: Keys = Keys { sm2_only: false };
static SM2_KEYS: Keys = Keys { sm2_only: true };

impl KeyProvider for Keys {
    fn load_private_key(
        &self,
        key_der: PrivateKeyDer<'static>,
    ) -> Result<Arc<dyn SigningKey>, Error> {
        if let PrivateKeyDer::Pkcs8(der) = &key_der
            && let Some(key) = Sm2Key::from_pkcs8_der(der.secret_pkcs8_der())
        {
            return Ok(Arc::new(Sm2SigningKey(Arc::new(key))));
        }
        if self.sm2_only {
            return Err(Error::General(
                "rfc8998_only: not an SM2 PKCS#8 private key".into(),
            ));
        }
        ring::default_provider()
            .key_provider
            .load_private_key(key_der)
    }
}

/// An SM2 private key as rustls's `SigningKey` (scheme `sm2sig_sm3`).
#[derive(Debug)]
struct Sm2SigningKey(Arc<Sm2Key>);

impl SigningKey for Sm2SigningKey {
    fn choose_scheme(&self, offered: &[SignatureScheme]) -> Option<Box<dyn Signer>> {
        offered
            .contains(&SM2SIG_SM3)
            .then(|| Box::new(Sm2Signer(self.0.clone())) as Box<dyn Signer>)
    }

    fn public_key(&self) -> Option<SubjectPublicKeyInfoDer<'_>> {
        Some(public_key_to_spki(
            &SM2_PUBLIC_KEY_ALG_ID,
            self.0.public_key(),
        ))
    }

    fn algorithm(&self) -> SignatureAlgorithm {
        // TLS 1.2's registry has no SM2; rustls asks only for TLS 1.2.
        SignatureAlgorithm::Unknown(0x08)
    }
}

#[derive(Debug)]
struct Sm2Signer(Arc<Sm2Key>);

impl Signer for Sm2Signer {
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, Error> {
        self.0
            .sign(crate::sm2::TLS13_SIGNER_ID, message)
            .ok_or_else(|| Error::General("SM2 signing failed".into()))
    }

    fn scheme(&self) -> SignatureScheme {
        SM2SIG_SM3
    }
}

// ---- sm2sig_sm3: verification (certificates and CertificateVerify) ----

/// SM2 with SM3 for webpki: an SM2 public key, a signer ID, a DER
/// signature.
#[derive(Debug)]
struct Sm2Sm3Verify {
    signature_alg_id: AlgorithmIdentifier,
    id: &'static str,
}

/// SM2-with-SM3 in certificates, for webpki (signer ID
/// [`crate::CERT_SIGNER_ID`]).
pub static SM2_SM3: &dyn SignatureVerificationAlgorithm = &Sm2Sm3Verify {
    signature_alg_id: SM2_SM3_ALG_ID,
    id: crate::sm2::CERT_SIGNER_ID,
};
static SM2_SM3_NULL: &dyn SignatureVerificationAlgorithm = &Sm2Sm3Verify {
    signature_alg_id: SM2_SM3_NULL_ALG_ID,
    id: crate::sm2::CERT_SIGNER_ID,
};
/// `sm2sig_sm3` in TLS 1.3's CertificateVerify (signer ID
/// [`crate::TLS13_SIGNER_ID`]); rustls looks it up by the scheme, so only
/// the `mapping` names it, never `all` (the certificates' list).
pub static SM2SIG_SM3_TLS13: &dyn SignatureVerificationAlgorithm = &Sm2Sm3Verify {
    signature_alg_id: SM2_SM3_ALG_ID,
    id: crate::sm2::TLS13_SIGNER_ID,
};

impl SignatureVerificationAlgorithm for Sm2Sm3Verify {
    fn verify_signature(
        &self,
        public_key: &[u8],
        message: &[u8],
        signature: &[u8],
    ) -> Result<(), InvalidSignature> {
        crate::sm2::verify(self.id, public_key, message, signature)
            .then_some(())
            .ok_or(InvalidSignature)
    }

    fn public_key_alg_id(&self) -> AlgorithmIdentifier {
        SM2_PUBLIC_KEY_ALG_ID
    }

    fn signature_alg_id(&self) -> AlgorithmIdentifier {
        self.signature_alg_id
    }
}

static SM2_ONLY_ALGS: WebPkiSupportedAlgorithms = WebPkiSupportedAlgorithms {
    all: &[SM2_SM3, SM2_SM3_NULL],
    mapping: &[(SM2SIG_SM3, &[SM2SIG_SM3_TLS13])],
};

/// SM2 first, then the base provider's ECDSA, Ed25519 and RSA (made once).
static ALL_ALGS: LazyLock<WebPkiSupportedAlgorithms> = LazyLock::new(|| {
    let base = ring::default_provider().signature_verification_algorithms;
    let all: Vec<_> = SM2_ONLY_ALGS.all.iter().chain(base.all).copied().collect();
    let mapping: Vec<_> = SM2_ONLY_ALGS
        .mapping
        .iter()
        .chain(base.mapping)
        .copied()
        .collect();
    WebPkiSupportedAlgorithms {
        all: all.leak(),
        mapping: mapping.leak(),
    }
});

// ---- Providers ----

/// The SM suites first, then the base (*ring*) provider's suites; groups
/// X25519, curveSM2, secp256r1, secp384r1; `sm2sig_sm3` beside ECDSA,
/// Ed25519 and RSA.
pub fn provider() -> CryptoProvider {
    let base = ring::default_provider();
    let mut cipher_suites = vec![TLS13_SM4_GCM_SM3, TLS13_SM4_CCM_SM3];
    cipher_suites.extend(base.cipher_suites);
    let mut kx_groups = base.kx_groups;
    // X25519 keeps its first place (one key share that every peer takes),
    // curveSM2 right after it.
    let at = usize::from(!kx_groups.is_empty());
    kx_groups.insert(at, CURVE_SM2_KX);
    CryptoProvider {
        cipher_suites,
        kx_groups,
        signature_verification_algorithms: *ALL_ALGS,
        secure_random: base.secure_random,
        key_provider: &KEYS,
    }
}

/// RFC 8998's profile alone: TLS_SM4_GCM_SM3 and TLS_SM4_CCM_SM3, curveSM2,
/// `sm2sig_sm3` (SM2 keys and certificates only).
pub fn rfc8998_only() -> CryptoProvider {
    CryptoProvider {
        cipher_suites: vec![TLS13_SM4_GCM_SM3, TLS13_SM4_CCM_SM3],
        kx_groups: vec![CURVE_SM2_KX],
        signature_verification_algorithms: SM2_ONLY_ALGS,
        secure_random: *RANDOM,
        key_provider: &SM2_KEYS,
    }
}

// ---- Names ----

/// The IANA name of a cipher suite ("TLS_SM4_GCM_SM3", "TLS13_AES_128_GCM_SHA256", ...).
pub fn suite_name(suite: CipherSuite) -> String {
    match suite {
        TLS_SM4_GCM_SM3 => "TLS_SM4_GCM_SM3".into(),
        TLS_SM4_CCM_SM3 => "TLS_SM4_CCM_SM3".into(),
        other => format!("{other:?}"),
    }
}

/// The name of a group ("curveSM2", "X25519", "secp256r1", ...).
pub fn group_name(group: NamedGroup) -> String {
    match group {
        CURVE_SM2 => "curveSM2".into(),
        other => format!("{other:?}"),
    }
}

/// One line naming what a connection negotiated: version, suite, group
/// and handshake kind (full, with HelloRetryRequest, resumed).
pub fn describe(conn: &rustls::CommonState) -> String {
    format!(
        "version={} suite={} group={} handshake={}",
        conn.protocol_version()
            .map_or("none".into(), |v| format!("{v:?}")),
        conn.negotiated_cipher_suite()
            .map_or("none".into(), |s| suite_name(s.suite())),
        conn.negotiated_key_exchange_group()
            .map_or("none".into(), |g| group_name(g.name())),
        conn.handshake_kind()
            .map_or("none".into(), |k| format!("{k:?}")),
    )
}

// ---- PEM ----

/// The certificates of a PEM file (a chain: the end entity first).
pub fn load_certs(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, rustls::Error> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| rustls::Error::General(format!("certificate PEM: {e}")))?;
    if certs.is_empty() {
        return Err(rustls::Error::General("no certificate in the PEM".into()));
    }
    Ok(certs)
}

/// The first private key of a PEM file (PKCS#8 for SM2 keys, as
/// `openssl genpkey -algorithm SM2` writes them).
pub fn load_private_key(pem: &[u8]) -> Result<PrivateKeyDer<'static>, rustls::Error> {
    PrivateKeyDer::from_pem_slice(pem)
        .map_err(|e| rustls::Error::General(format!("private key PEM: {e}")))
}
