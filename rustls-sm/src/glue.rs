//! Everything that touches rustls's API (0.23): the cipher suites, the
//! hash, HMAC and HKDF, record protection, curveSM2, `sm2sig_sm3` signing
//! and verification, and the provider constructors. Moving to another
//! rustls version is this file's work; `record` and `sm2` stay.

use std::sync::{Arc, LazyLock, Mutex};

use rustls::crypto::cipher::{
    AeadKey, InboundOpaqueMessage, InboundPlainMessage, Iv, MessageDecrypter, MessageEncrypter,
    OutboundOpaqueMessage, OutboundPlainMessage, PrefixedPayload, Tls13AeadAlgorithm,
    UnsupportedOperationError, make_tls13_aad,
};
use rustls::crypto::hash::{self, HashAlgorithm};
use rustls::crypto::tls13::HkdfUsingHmac;
use rustls::crypto::{
    ActiveKeyExchange, CryptoProvider, GetRandomFailed, KeyProvider, SecureRandom, SharedSecret,
    SupportedKxGroup, WebPkiSupportedAlgorithms, hmac,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{
    AlgorithmIdentifier, CertificateDer, InvalidSignature, PrivateKeyDer,
    SignatureVerificationAlgorithm, SubjectPublicKeyInfoDer,
};
use rustls::server::ProducesTickets;
use rustls::sign::{Signer, SigningKey, public_key_to_spki};
use rustls::ticketer::TicketRotator;
use rustls::{
    CipherSuite, CipherSuiteCommon, ConnectionTrafficSecrets, ContentType, Error, NamedGroup,
    PeerMisbehaved, ProtocolVersion, SignatureAlgorithm, SignatureScheme, SupportedCipherSuite,
    Tls13CipherSuite,
};
use sm3_simd::{Digest, Sm3};
use sm4_simd::aead::{AeadInOut, KeyInit};
use sm4_simd::{Sm4Ccm, Sm4Gcm};
use zeroize::Zeroizing;

use crate::record::{KEY_LEN, NONCE_LEN, RecordAead, RecordKey, TAG_LEN};
use crate::sm2::{EphemeralKey, Sm2Key};

// ---- Code points ----
//
// rustls 0.23 has no names for RFC 8998's code points, and compares its
// enums by variant: `Unknown(0x00C6)` is not equal to a named variant that
// a later rustls may read off the wire for the same number. So each value
// is made at run time from its number, by the rustls that is linked.

/// TLS_SM4_GCM_SM3 (RFC 8998): 0x00C6, as the linked rustls names it.
pub static TLS_SM4_GCM_SM3: LazyLock<CipherSuite> = LazyLock::new(|| CipherSuite::from(0x00C6));
/// TLS_SM4_CCM_SM3 (RFC 8998): 0x00C7, as the linked rustls names it.
pub static TLS_SM4_CCM_SM3: LazyLock<CipherSuite> = LazyLock::new(|| CipherSuite::from(0x00C7));
/// curveSM2 (RFC 8998): 0x0029, as the linked rustls names it.
pub static CURVE_SM2: LazyLock<NamedGroup> = LazyLock::new(|| NamedGroup::from(0x0029));
/// sm2sig_sm3 (RFC 8998): 0x0708, as the linked rustls names it.
pub static SM2SIG_SM3: LazyLock<SignatureScheme> = LazyLock::new(|| SignatureScheme::from(0x0708));

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

/// The largest TLSCiphertext body TLS 1.3 allows: 2^14 + 256 (RFC 8446
/// section 5.2); a longer one is a record_overflow.
const MAX_CIPHERTEXT_LEN: usize = (1 << 14) + 256;

/// TLS_SM4_GCM_SM3 on `sm4_simd::Sm4Gcm` and `sm3_simd::Sm3`.
pub static TLS13_SM4_GCM_SM3: LazyLock<SupportedCipherSuite> =
    LazyLock::new(|| SupportedCipherSuite::Tls13(&TLS13_SM4_GCM_SM3_INTERNAL));
/// TLS_SM4_CCM_SM3 on `sm4_simd::Sm4Ccm` and `sm3_simd::Sm3`.
pub static TLS13_SM4_CCM_SM3: LazyLock<SupportedCipherSuite> =
    LazyLock::new(|| SupportedCipherSuite::Tls13(&TLS13_SM4_CCM_SM3_INTERNAL));

static TLS13_SM4_GCM_SM3_INTERNAL: LazyLock<Tls13CipherSuite> =
    LazyLock::new(|| Tls13CipherSuite {
        common: CipherSuiteCommon {
            suite: *TLS_SM4_GCM_SM3,
            hash_provider: &Sm3Hash,
            confidentiality_limit: GCM_CONFIDENTIALITY_LIMIT,
        },
        hkdf_provider: &HkdfUsingHmac(&Sm3Hmac),
        aead_alg: &Sm4Aead::<Sm4Gcm>(core::marker::PhantomData),
        quic: None,
    });

static TLS13_SM4_CCM_SM3_INTERNAL: LazyLock<Tls13CipherSuite> =
    LazyLock::new(|| Tls13CipherSuite {
        common: CipherSuiteCommon {
            suite: *TLS_SM4_CCM_SM3,
            hash_provider: &Sm3Hash,
            confidentiality_limit: CCM_CONFIDENTIALITY_LIMIT,
        },
        hkdf_provider: &HkdfUsingHmac(&Sm3Hmac),
        aead_alg: &Sm4Aead::<Sm4Ccm>(core::marker::PhantomData),
        quic: None,
    });

/// Whether `suite` is one of RFC 8998's (by number).
fn is_sm_suite(suite: CipherSuite) -> bool {
    matches!(u16::from(suite), 0x00C6 | 0x00C7)
}

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
        // rustls 0.23's `ConnectionTrafficSecrets` (what kTLS is given)
        // has no SM4 variant, although Linux's kTLS has SM4-GCM and
        // SM4-CCM since 5.16.
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
        if payload.len() > MAX_CIPHERTEXT_LEN {
            return Err(Error::PeerSentOversizedRecord);
        }
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

// ---- Randomness ----

/// The operating system's random source (`getrandom`), for curveSM2, the
/// ticketer and `rfc8998_only()`, whatever the base provider.
#[derive(Debug)]
struct OsRandom;

impl SecureRandom for OsRandom {
    fn fill(&self, buf: &mut [u8]) -> Result<(), GetRandomFailed> {
        getrandom::fill(buf).map_err(|_| GetRandomFailed)
    }
}

static OS_RANDOM: OsRandom = OsRandom;

// ---- curveSM2 ----

/// ECDHE on the SM2 curve (RFC 8998 section 3.1), TLS 1.3 only.
#[derive(Debug)]
struct CurveSm2;

/// The curveSM2 key exchange group, for `CryptoProvider::kx_groups`.
pub static CURVE_SM2_KX: &dyn SupportedKxGroup = &CurveSm2;

impl SupportedKxGroup for CurveSm2 {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, Error> {
        let key = EphemeralKey::generate(|buf| OS_RANDOM.fill(buf).is_ok())
            .ok_or(Error::FailedToGetRandomBytes)?;
        Ok(Box::new(CurveSm2Exchange(key)))
    }

    fn name(&self) -> NamedGroup {
        *CURVE_SM2
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
        *CURVE_SM2
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

/// Loads SM2 private keys (PKCS#8, or SEC1 naming the SM2 curve), and
/// every other key through the base provider's key provider, if any.
#[derive(Debug)]
struct Keys {
    base: Option<&'static dyn KeyProvider>,
}

/// The SM2 key provider alone: PKCS#8 and SEC1 SM2 private keys, as
/// `rustls::sign::SigningKey`s for `sm2sig_sm3`; any other key is an
/// error. For providers assembled by hand ([`extend`] does this for you).
pub static SM2_KEY_PROVIDER: &dyn KeyProvider = &SM2_KEYS;
static SM2_KEYS: Keys = Keys { base: None };

impl KeyProvider for Keys {
    fn load_private_key(
        &self,
        key_der: PrivateKeyDer<'static>,
    ) -> Result<Arc<dyn SigningKey>, Error> {
        let sm2 = match &key_der {
            PrivateKeyDer::Pkcs8(der) => Sm2Key::from_pkcs8_der(der.secret_pkcs8_der()),
            PrivateKeyDer::Sec1(der) => Sm2Key::from_sec1_der(der.secret_sec1_der()),
            _ => None,
        };
        if let Some(key) = sm2 {
            return Ok(Arc::new(Sm2SigningKey(Arc::new(key))));
        }
        match self.base {
            Some(base) => base.load_private_key(key_der),
            None => Err(Error::General(
                "not an SM2 private key (PKCS#8, or SEC1 naming the curve sm2p256v1), \
                 and this provider loads no other kind"
                    .into(),
            )),
        }
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
        *SM2SIG_SM3
    }
}

// ---- sm2sig_sm3: verification (certificates and CertificateVerify) ----

/// SM2 with SM3 for webpki: an SM2 public key, the signer IDs tried in
/// turn, a DER signature.
#[derive(Debug)]
struct Sm2Sm3Verify {
    signature_alg_id: AlgorithmIdentifier,
    ids: &'static [&'static str],
}

/// The certificate signer IDs of [`accept_empty_cert_signer_id`].
const CERT_IDS_AND_EMPTY: &[&str] = &[crate::sm2::CERT_SIGNER_ID, ""];

/// SM2-with-SM3 in certificates, for webpki (signer ID
/// [`crate::CERT_SIGNER_ID`]).
pub static SM2_SM3: &dyn SignatureVerificationAlgorithm = &Sm2Sm3Verify {
    signature_alg_id: SM2_SM3_ALG_ID,
    ids: &[crate::sm2::CERT_SIGNER_ID],
};
static SM2_SM3_NULL: &dyn SignatureVerificationAlgorithm = &Sm2Sm3Verify {
    signature_alg_id: SM2_SM3_NULL_ALG_ID,
    ids: &[crate::sm2::CERT_SIGNER_ID],
};
/// SM2-with-SM3 in certificates under [`crate::CERT_SIGNER_ID`] or, failing
/// that, the empty signer ID that OpenSSL 3 writes by default (see
/// [`accept_empty_cert_signer_id`]).
pub static SM2_SM3_OR_EMPTY_ID: &dyn SignatureVerificationAlgorithm = &Sm2Sm3Verify {
    signature_alg_id: SM2_SM3_ALG_ID,
    ids: CERT_IDS_AND_EMPTY,
};
static SM2_SM3_NULL_OR_EMPTY_ID: &dyn SignatureVerificationAlgorithm = &Sm2Sm3Verify {
    signature_alg_id: SM2_SM3_NULL_ALG_ID,
    ids: CERT_IDS_AND_EMPTY,
};
/// `sm2sig_sm3` in TLS 1.3's CertificateVerify (signer ID
/// [`crate::TLS13_SIGNER_ID`]); rustls looks it up by the scheme, so only
/// the `mapping` names it, never `all` (the certificates' list).
pub static SM2SIG_SM3_TLS13: &dyn SignatureVerificationAlgorithm = &Sm2Sm3Verify {
    signature_alg_id: SM2_SM3_ALG_ID,
    ids: &[crate::sm2::TLS13_SIGNER_ID],
};

impl SignatureVerificationAlgorithm for Sm2Sm3Verify {
    fn verify_signature(
        &self,
        public_key: &[u8],
        message: &[u8],
        signature: &[u8],
    ) -> Result<(), InvalidSignature> {
        self.ids
            .iter()
            .any(|id| crate::sm2::verify(id, public_key, message, signature))
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

/// The SM2 verification algorithms alone: SM2-with-SM3 certificates (signer
/// ID [`crate::CERT_SIGNER_ID`], with or without NULL parameters) and
/// `sm2sig_sm3` CertificateVerify. For providers assembled by hand.
pub static SM2_ALGORITHMS: LazyLock<WebPkiSupportedAlgorithms> = LazyLock::new(|| {
    static CERTS: [&dyn SignatureVerificationAlgorithm; 2] = [SM2_SM3, SM2_SM3_NULL];
    static TLS13: [&dyn SignatureVerificationAlgorithm; 1] = [SM2SIG_SM3_TLS13];
    WebPkiSupportedAlgorithms {
        all: &CERTS,
        mapping: Box::leak(Box::new([(*SM2SIG_SM3, &TLS13[..])])),
    }
});

// ---- Providers ----
//
// A `CryptoProvider` holds `'static` references (its key provider and its
// verification algorithms); what `extend` builds from a base is made once
// per distinct base and kept for the life of the process.

/// What one base provider's parts become, made once.
struct Spliced {
    /// The base's verification lists and key provider, by address.
    base: [usize; 5],
    algorithms: WebPkiSupportedAlgorithms,
    keys: &'static Keys,
}

static SPLICED: Mutex<Vec<Spliced>> = Mutex::new(Vec::new());

/// The address of what a reference points to (the data of a trait object).
fn addr<T: ?Sized>(r: &T) -> usize {
    (r as *const T).cast::<()>() as usize
}

/// The base's verification algorithms with the SM2 ones first, and a key
/// provider that loads SM2 keys then asks the base's.
fn spliced(base: &CryptoProvider) -> (WebPkiSupportedAlgorithms, &'static Keys) {
    let algs = &base.signature_verification_algorithms;
    let key = [
        algs.all.as_ptr() as usize,
        algs.all.len(),
        algs.mapping.as_ptr() as usize,
        algs.mapping.len(),
        addr(base.key_provider),
    ];
    let mut cache = SPLICED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = cache.iter().find(|s| s.base == key) {
        return (s.algorithms, s.keys);
    }
    let sm2 = &*SM2_ALGORITHMS;
    let is_sm2 = |a: &&'static dyn SignatureVerificationAlgorithm| {
        a.signature_alg_id() == SM2_SM3_ALG_ID || a.signature_alg_id() == SM2_SM3_NULL_ALG_ID
    };
    let all: Vec<_> = (sm2.all.iter())
        .chain(algs.all.iter().filter(|a| !is_sm2(a)))
        .copied()
        .collect();
    let mapping: Vec<_> = (sm2.mapping.iter())
        .chain(algs.mapping.iter().filter(|(s, _)| u16::from(*s) != 0x0708))
        .copied()
        .collect();
    let algorithms = WebPkiSupportedAlgorithms {
        all: all.leak(),
        mapping: mapping.leak(),
    };
    let keys: &'static Keys = Box::leak(Box::new(Keys {
        base: Some(base.key_provider),
    }));
    cache.push(Spliced {
        base: key,
        algorithms,
        keys,
    });
    (algorithms, keys)
}

/// The SM parts added to `base`, with the SM suites after (`sm_first`
/// false) or before the base's.
fn splice(base: CryptoProvider, sm_first: bool) -> CryptoProvider {
    let (signature_verification_algorithms, keys) = spliced(&base);
    let sm = [*TLS13_SM4_GCM_SM3, *TLS13_SM4_CCM_SM3];
    let rest = base
        .cipher_suites
        .into_iter()
        .filter(|s| !is_sm_suite(s.suite()));
    let cipher_suites = if sm_first {
        sm.into_iter().chain(rest).collect()
    } else {
        rest.chain(sm).collect()
    };
    let mut kx_groups: Vec<_> = (base.kx_groups.into_iter())
        .filter(|g| u16::from(g.name()) != 0x0029)
        .collect();
    // The base's first group keeps its place (its key share is the one a
    // client sends, one every server takes); curveSM2 comes right after.
    let at = usize::from(!kx_groups.is_empty());
    kx_groups.insert(at, CURVE_SM2_KX);
    CryptoProvider {
        cipher_suites,
        kx_groups,
        signature_verification_algorithms,
        secure_random: base.secure_random,
        key_provider: keys,
    }
}

/// `base` with RFC 8998 added: TLS_SM4_GCM_SM3 and TLS_SM4_CCM_SM3 after
/// the base's suites, curveSM2 after the base's first group, SM2
/// certificates and `sm2sig_sm3` beside the base's signature algorithms,
/// and SM2 private keys (PKCS#8 or SEC1) beside the base's key loader.
/// Everything else (randomness, the other suites and groups) is the base's.
///
/// Use it with whatever base the application runs on (`aws-lc-rs`,
/// *ring*, a FIPS build, your own):
///
/// ```
/// # #[cfg(feature = "ring")] {
/// let provider = rustls_sm::extend(rustls::crypto::ring::default_provider());
/// # let _ = provider; }
/// ```
///
/// The few parts made for a base are kept for the life of the process
/// (rustls needs them `'static`), once per distinct base.
pub fn extend(base: CryptoProvider) -> CryptoProvider {
    splice(base, false)
}

/// As [`extend`], with the SM suites before the base's: a server that
/// honours its own order, or a client whose server honours the client's,
/// then negotiates SM4 with every peer that has it.
pub fn extend_preferring_sm(base: CryptoProvider) -> CryptoProvider {
    splice(base, true)
}

/// The base provider of [`provider`]: rustls's `aws-lc-rs` provider with
/// the feature `aws-lc-rs` (the default), else its *ring* provider.
#[cfg(feature = "aws-lc-rs")]
fn default_base() -> CryptoProvider {
    rustls::crypto::aws_lc_rs::default_provider()
}
#[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
fn default_base() -> CryptoProvider {
    rustls::crypto::ring::default_provider()
}

/// [`extend`] over rustls's default provider of this build: `aws-lc-rs`
/// (feature `aws-lc-rs`, the default) or *ring* (feature `ring` alone).
/// The base's suites come first, so a general client does not slow its
/// connections to servers without a preference; see
/// [`provider_preferring_sm`].
#[cfg(any(feature = "ring", feature = "aws-lc-rs"))]
pub fn provider() -> CryptoProvider {
    extend(default_base())
}

/// [`extend_preferring_sm`] over rustls's default provider of this build.
#[cfg(any(feature = "ring", feature = "aws-lc-rs"))]
pub fn provider_preferring_sm() -> CryptoProvider {
    extend_preferring_sm(default_base())
}

/// RFC 8998's profile alone: TLS_SM4_GCM_SM3 and TLS_SM4_CCM_SM3, curveSM2,
/// `sm2sig_sm3` (SM2 keys and certificates only). Needs no base provider:
/// randomness is the operating system's (`getrandom`); pair it with
/// [`Ticketer`] for session tickets sealed with SM4-GCM.
pub fn rfc8998_only() -> CryptoProvider {
    CryptoProvider {
        cipher_suites: vec![*TLS13_SM4_GCM_SM3, *TLS13_SM4_CCM_SM3],
        kx_groups: vec![CURVE_SM2_KX],
        signature_verification_algorithms: *SM2_ALGORITHMS,
        secure_random: &OS_RANDOM,
        key_provider: SM2_KEY_PROVIDER,
    }
}

/// `provider` with certificates signed under the empty SM2 signer ID
/// accepted too, after `1234567812345678`: OpenSSL 3's `openssl req` /
/// `openssl x509 -sm3` without `-sigopt distid:1234567812345678` signs
/// under the empty ID, and such certificates otherwise fail with
/// `BadSignature`. The empty ID departs from GB/T 35276, so this is an
/// opt-in; it affects only certificate signatures, never CertificateVerify.
///
/// A certificate like that is made by, for example:
///
/// ```text
/// openssl req -new -key leaf.key -sm3 -subj /CN=localhost -out leaf.csr
/// openssl x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -sm3 -out leaf.pem
/// ```
pub fn accept_empty_cert_signer_id(mut provider: CryptoProvider) -> CryptoProvider {
    static LENIENT: Mutex<Vec<([usize; 2], WebPkiSupportedAlgorithms)>> = Mutex::new(Vec::new());
    let algs = provider.signature_verification_algorithms;
    let key = [algs.all.as_ptr() as usize, algs.all.len()];
    let mut cache = LENIENT.lock().unwrap_or_else(|e| e.into_inner());
    let found = cache.iter().find(|(k, _)| *k == key).map(|(_, a)| *a);
    provider.signature_verification_algorithms = found.unwrap_or_else(|| {
        let all: Vec<_> = (algs.all.iter())
            .map(|a| {
                if addr(*a) == addr(SM2_SM3) {
                    SM2_SM3_OR_EMPTY_ID
                } else if addr(*a) == addr(SM2_SM3_NULL) {
                    SM2_SM3_NULL_OR_EMPTY_ID
                } else {
                    *a
                }
            })
            .collect();
        let lenient = WebPkiSupportedAlgorithms {
            all: all.leak(),
            mapping: algs.mapping,
        };
        cache.push((key, lenient));
        lenient
    });
    provider
}

// ---- Session tickets ----

/// Session tickets sealed with SM4-GCM (`sm4_simd::Sm4Gcm`), for servers
/// that must use only the ShangMi algorithms (`rfc8998_only()`): set
/// `ServerConfig::ticketer` to `Ticketer::new()?`. Keys come from the
/// operating system and rotate every 6 hours (tickets are accepted for
/// 12), as rustls's own ticketers do.
#[derive(Debug)]
pub struct Ticketer;

impl Ticketer {
    /// A rotating SM4-GCM ticketer.
    #[allow(clippy::new_ret_no_self)] // rustls's ticketers have this shape
    pub fn new() -> Result<Arc<dyn ProducesTickets>, Error> {
        Ok(Arc::new(TicketRotator::new(
            TICKET_KEY_LIFETIME,
            Sm4GcmTickets::generate,
        )?))
    }
}

/// How long one ticket key seals new tickets, in seconds.
const TICKET_KEY_LIFETIME: u32 = 6 * 60 * 60;
/// The length of a ticket key's name (its first bytes on the wire).
const TICKET_NAME_LEN: usize = 16;

/// One ticket key: `name || nonce || SM4-GCM(state) || tag`, the name as
/// the associated data.
struct Sm4GcmTickets {
    name: [u8; TICKET_NAME_LEN],
    aead: Sm4Gcm,
}

impl core::fmt::Debug for Sm4GcmTickets {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Sm4GcmTickets").finish_non_exhaustive()
    }
}

impl Sm4GcmTickets {
    fn generate() -> Result<Box<dyn ProducesTickets>, GetRandomFailed> {
        let mut key = Zeroizing::new([0u8; KEY_LEN]);
        let mut name = [0u8; TICKET_NAME_LEN];
        OS_RANDOM.fill(&mut key[..])?;
        OS_RANDOM.fill(&mut name)?;
        let aead = Sm4Gcm::new(&(*key).into());
        Ok(Box::new(Self { name, aead }))
    }
}

impl ProducesTickets for Sm4GcmTickets {
    fn enabled(&self) -> bool {
        true
    }

    fn lifetime(&self) -> u32 {
        TICKET_KEY_LIFETIME
    }

    fn encrypt(&self, plain: &[u8]) -> Option<Vec<u8>> {
        let mut nonce = [0u8; NONCE_LEN];
        OS_RANDOM.fill(&mut nonce).ok()?;
        let mut out = Vec::with_capacity(TICKET_NAME_LEN + NONCE_LEN + plain.len() + TAG_LEN);
        out.extend_from_slice(&self.name);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(plain);
        let tag = self
            .aead
            .encrypt_inout_detached(
                &nonce.into(),
                &self.name,
                (&mut out[TICKET_NAME_LEN + NONCE_LEN..]).into(),
            )
            .ok()?;
        out.extend_from_slice(&tag);
        Some(out)
    }

    fn decrypt(&self, ticket: &[u8]) -> Option<Vec<u8>> {
        let (name, rest) = ticket.split_at_checked(TICKET_NAME_LEN)?;
        // The name is public (it picks the key); the tag check is what counts.
        if name != self.name {
            return None;
        }
        let (nonce, rest) = rest.split_at_checked(NONCE_LEN)?;
        let (sealed, tag) = rest.split_at_checked(rest.len().checked_sub(TAG_LEN)?)?;
        let nonce: [u8; NONCE_LEN] = nonce.try_into().ok()?;
        let tag: [u8; TAG_LEN] = tag.try_into().ok()?;
        let mut plain = sealed.to_vec();
        self.aead
            .decrypt_inout_detached(&nonce.into(), name, (&mut plain[..]).into(), &tag.into())
            .ok()?;
        Some(plain)
    }
}

// ---- Names ----

/// The IANA name of a cipher suite ("TLS_SM4_GCM_SM3", "TLS13_AES_128_GCM_SHA256", ...).
pub fn suite_name(suite: CipherSuite) -> String {
    match u16::from(suite) {
        0x00C6 => "TLS_SM4_GCM_SM3".into(),
        0x00C7 => "TLS_SM4_CCM_SM3".into(),
        _ => format!("{suite:?}"),
    }
}

/// The name of a group ("curveSM2", "X25519", "secp256r1", ...).
pub fn group_name(group: NamedGroup) -> String {
    match u16::from(group) {
        0x0029 => "curveSM2".into(),
        _ => format!("{group:?}"),
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

/// The first private key of a PEM file: PKCS#8 (`PRIVATE KEY`, as
/// `openssl genpkey -algorithm SM2` writes SM2 keys), SEC1 (`EC PRIVATE
/// KEY`, and `SM2 PRIVATE KEY` as `openssl ec` labels an SM2 key), or any
/// other kind the base provider loads.
pub fn load_private_key(pem: &[u8]) -> Result<PrivateKeyDer<'static>, rustls::Error> {
    const SM2_LABEL: &[u8] = b"-----BEGIN SM2 PRIVATE KEY-----";
    let relabelled;
    let pem = if pem.windows(SM2_LABEL.len()).any(|w| w == SM2_LABEL) {
        // OpenSSL's own label for a SEC1 SM2 key: the body is SEC1.
        relabelled = Zeroizing::new(
            String::from_utf8_lossy(pem)
                .replace("BEGIN SM2 PRIVATE KEY", "BEGIN EC PRIVATE KEY")
                .replace("END SM2 PRIVATE KEY", "END EC PRIVATE KEY"),
        );
        relabelled.as_bytes()
    } else {
        pem
    };
    PrivateKeyDer::from_pem_slice(pem)
        .map_err(|e| rustls::Error::General(format!("private key PEM: {e}")))
}
