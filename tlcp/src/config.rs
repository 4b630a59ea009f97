//! Cipher suites, identities (the double certificates and their keys),
//! the client and server configurations, and certificate verification.

use std::collections::HashMap;
use std::sync::Mutex;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{
    AlgorithmIdentifier, CertificateDer, InvalidSignature, PrivateKeyDer, ServerName,
    SignatureVerificationAlgorithm, TrustAnchor, UnixTime,
};
use sm2::pkcs8::DecodePrivateKey;
use sm2::{PublicKey, SecretKey};
use zeroize::Zeroizing;

use crate::error::{CertificateError, Error};
use crate::x509::{self, usage};

/// The four cipher suites of GB/T 38636-2020.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CipherSuite {
    /// ECC_SM4_CBC_SM3 (0xE013): the pre-master secret encrypted to the
    /// server's encryption certificate; SM4-CBC with HMAC-SM3.
    EccSm4CbcSm3,
    /// ECC_SM4_GCM_SM3 (0xE053): the same with SM4-GCM.
    EccSm4GcmSm3,
    /// ECDHE_SM4_CBC_SM3 (0xE011): the SM2 key exchange (GB/T 32918.3) of
    /// both sides' encryption keys and ephemeral keys; needs client
    /// certificates.
    EcdheSm4CbcSm3,
    /// ECDHE_SM4_GCM_SM3 (0xE051).
    EcdheSm4GcmSm3,
}

impl CipherSuite {
    /// Every suite, in this crate's default order of preference.
    pub const ALL: [CipherSuite; 4] = [
        CipherSuite::EccSm4GcmSm3,
        CipherSuite::EccSm4CbcSm3,
        CipherSuite::EcdheSm4GcmSm3,
        CipherSuite::EcdheSm4CbcSm3,
    ];

    /// The code point.
    pub fn code(self) -> u16 {
        match self {
            CipherSuite::EccSm4CbcSm3 => 0xE013,
            CipherSuite::EccSm4GcmSm3 => 0xE053,
            CipherSuite::EcdheSm4CbcSm3 => 0xE011,
            CipherSuite::EcdheSm4GcmSm3 => 0xE051,
        }
    }

    /// The name in the standard ("ECC_SM4_GCM_SM3", ...).
    pub fn name(self) -> &'static str {
        match self {
            CipherSuite::EccSm4CbcSm3 => "ECC_SM4_CBC_SM3",
            CipherSuite::EccSm4GcmSm3 => "ECC_SM4_GCM_SM3",
            CipherSuite::EcdheSm4CbcSm3 => "ECDHE_SM4_CBC_SM3",
            CipherSuite::EcdheSm4GcmSm3 => "ECDHE_SM4_GCM_SM3",
        }
    }

    /// The suite of a code point.
    pub fn from_code(code: u16) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.code() == code)
    }

    /// The suite of a name (any case).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|s| s.name().eq_ignore_ascii_case(name))
    }

    pub(crate) fn is_ecdhe(self) -> bool {
        matches!(
            self,
            CipherSuite::EcdheSm4CbcSm3 | CipherSuite::EcdheSm4GcmSm3
        )
    }

    pub(crate) fn is_gcm(self) -> bool {
        matches!(
            self,
            CipherSuite::EccSm4GcmSm3 | CipherSuite::EcdheSm4GcmSm3
        )
    }
}

/// A signing certificate chain and an encryption certificate, each with
/// its SM2 private key (wiped when dropped).
pub struct Identity {
    pub(crate) sign_chain: Vec<CertificateDer<'static>>,
    pub(crate) sign_key: SecretKey,
    pub(crate) enc_cert: CertificateDer<'static>,
    pub(crate) enc_key: SecretKey,
}

impl core::fmt::Debug for Identity {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Identity").finish_non_exhaustive()
    }
}

/// The certificates of a PEM file, in order.
pub fn load_certs(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, Error> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::Config(format!("certificate PEM: {e}")))?;
    if certs.is_empty() {
        return Err(Error::Config("no certificate in the PEM".into()));
    }
    Ok(certs)
}

/// The SM2 private key of a PEM file (PKCS#8, as `openssl genpkey
/// -algorithm SM2` writes).
pub fn load_key(pem: &[u8]) -> Result<SecretKey, Error> {
    match PrivateKeyDer::from_pem_slice(pem) {
        Ok(PrivateKeyDer::Pkcs8(der)) => SecretKey::from_pkcs8_der(der.secret_pkcs8_der())
            .map_err(|_| Error::Config("not an SM2 PKCS#8 private key".into())),
        Ok(_) => Err(Error::Config("not a PKCS#8 private key".into())),
        Err(e) => Err(Error::Config(format!("private key PEM: {e}"))),
    }
}

impl Identity {
    /// From PEM files: the signing certificate (its chain may follow it),
    /// its key, the encryption certificate and its key. Each key must
    /// match its certificate.
    pub fn from_pem(
        sign_cert: &[u8],
        sign_key: &[u8],
        enc_cert: &[u8],
        enc_key: &[u8],
    ) -> Result<Self, Error> {
        let sign_chain = load_certs(sign_cert)?;
        let enc_cert = load_certs(enc_cert)?.swap_remove(0);
        let id = Identity {
            sign_chain,
            sign_key: load_key(sign_key)?,
            enc_cert,
            enc_key: load_key(enc_key)?,
        };
        for (cert, key, what) in [
            (&id.sign_chain[0], &id.sign_key, "signing"),
            (&id.enc_cert, &id.enc_key, "encryption"),
        ] {
            let info = x509::parse(cert)
                .ok_or_else(|| Error::Config(format!("the {what} certificate has no SM2 key")))?;
            if info.public_key != crate::sm2::encode(&key.public_key()) {
                return Err(Error::Config(format!(
                    "the {what} key does not match its certificate"
                )));
            }
        }
        Ok(id)
    }
}

/// Where connections report their master secrets: the NSS key log format
/// (`CLIENT_RANDOM <client random> <master secret>`, hex), for debugging
/// with Wireshark and for checking against a peer's log. Anyone who reads
/// it can decrypt the connections: leave it off in production.
pub trait KeyLog: Send + Sync {
    /// One connection's secret.
    fn log(&self, client_random: &[u8; 32], master_secret: &[u8; 48]);
}

/// A [`KeyLog`] that appends to the file named by the environment variable
/// `SSLKEYLOGFILE` (nothing if it is unset or cannot be opened).
#[derive(Debug, Default)]
pub struct KeyLogFile(Mutex<Option<std::fs::File>>);

impl KeyLogFile {
    /// Opens `$SSLKEYLOGFILE` for appending, if set.
    pub fn new() -> Self {
        let file = std::env::var_os("SSLKEYLOGFILE").and_then(|path| {
            std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(path)
                .ok()
        });
        Self(Mutex::new(file))
    }
}

impl KeyLog for KeyLogFile {
    fn log(&self, client_random: &[u8; 32], master_secret: &[u8; 48]) {
        use std::io::Write;
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        let mut file = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = file.as_mut() {
            let _ = writeln!(
                f,
                "CLIENT_RANDOM {} {}",
                hex(client_random),
                hex(master_secret)
            );
        }
    }
}

/// A session that can be resumed by its ID.
#[derive(Clone)]
pub(crate) struct Session {
    pub(crate) id: Vec<u8>,
    pub(crate) suite: CipherSuite,
    pub(crate) master: Zeroizing<[u8; 48]>,
    /// The peer's certificates, as the full handshake verified them.
    pub(crate) peer: Option<Vec<CertificateDer<'static>>>,
}

/// Trusted roots, as webpki takes them.
#[derive(Debug, Clone)]
pub(crate) struct Roots(Vec<TrustAnchor<'static>>);

impl Roots {
    fn from_pem(pem: &[u8]) -> Result<Self, Error> {
        let mut anchors = Vec::new();
        for cert in load_certs(pem)? {
            let anchor = webpki::anchor_from_trusted_cert(&cert)
                .map_err(|e| Error::Config(format!("trust anchor: {e:?}")))?;
            anchors.push(anchor.to_owned());
        }
        Ok(Roots(anchors))
    }
}

/// A client's configuration.
pub struct ClientConfig {
    pub(crate) roots: Roots,
    pub(crate) suites: Vec<CipherSuite>,
    pub(crate) identity: Option<Identity>,
    pub(crate) signer_id: &'static str,
    pub(crate) key_log: Option<std::sync::Arc<dyn KeyLog>>,
    pub(crate) resumption: bool,
    /// Sessions by server name, for resumption.
    pub(crate) sessions: Mutex<HashMap<String, Session>>,
}

impl core::fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ClientConfig")
            .field("suites", &self.suites)
            .finish_non_exhaustive()
    }
}

impl ClientConfig {
    /// A client that trusts the CA certificates of `roots_pem`, offers
    /// every suite, and has no certificate of its own.
    pub fn new(roots_pem: &[u8]) -> Result<Self, Error> {
        Ok(Self {
            roots: Roots::from_pem(roots_pem)?,
            suites: CipherSuite::ALL.to_vec(),
            identity: None,
            signer_id: crate::sm2::DEFAULT_SIGNER_ID,
            key_log: None,
            resumption: true,
            sessions: Mutex::new(HashMap::new()),
        })
    }

    /// Offers these suites, in this order.
    pub fn with_suites(mut self, suites: &[CipherSuite]) -> Self {
        self.suites = suites.to_vec();
        self
    }

    /// The client's own double certificate, sent when the server asks
    /// (and needed for the ECDHE suites).
    pub fn with_identity(mut self, identity: Identity) -> Self {
        self.identity = Some(identity);
        self
    }

    /// The SM2 signer ID of certificate and handshake signatures (default
    /// `1234567812345678`).
    pub fn with_signer_id(mut self, id: &str) -> Self {
        self.signer_id = intern(id);
        self
    }

    /// Reports each connection's master secret to `log`.
    pub fn with_key_log(mut self, log: std::sync::Arc<dyn KeyLog>) -> Self {
        self.key_log = Some(log);
        self
    }

    /// Whether sessions are kept and resumed by session ID (default yes).
    pub fn with_resumption(mut self, on: bool) -> Self {
        self.resumption = on;
        self
    }
}

/// Whether a server asks for client certificates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuth {
    /// Never asked for (the ECDHE suites are then not offered).
    None,
    /// Asked for; a client without one may still connect (ECC suites).
    Optional,
    /// Asked for and required.
    Required,
}

/// A server's configuration.
pub struct ServerConfig {
    pub(crate) identity: Identity,
    pub(crate) suites: Vec<CipherSuite>,
    pub(crate) client_auth: ClientAuth,
    pub(crate) client_roots: Option<Roots>,
    pub(crate) signer_id: &'static str,
    pub(crate) key_log: Option<std::sync::Arc<dyn KeyLog>>,
    pub(crate) resumption: bool,
    pub(crate) sessions: Mutex<HashMap<Vec<u8>, Session>>,
}

impl core::fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ServerConfig")
            .field("suites", &self.suites)
            .field("client_auth", &self.client_auth)
            .finish_non_exhaustive()
    }
}

impl ServerConfig {
    /// A server with this identity, every suite (in the client's order of
    /// preference), no client authentication.
    pub fn new(identity: Identity) -> Self {
        Self {
            identity,
            suites: CipherSuite::ALL.to_vec(),
            client_auth: ClientAuth::None,
            client_roots: None,
            signer_id: crate::sm2::DEFAULT_SIGNER_ID,
            key_log: None,
            resumption: true,
            sessions: Mutex::new(HashMap::new()),
        }
    }

    /// Accepts these suites only.
    pub fn with_suites(mut self, suites: &[CipherSuite]) -> Self {
        self.suites = suites.to_vec();
        self
    }

    /// Asks clients for their double certificate, verified against the CA
    /// certificates of `roots_pem`.
    pub fn with_client_auth(mut self, roots_pem: &[u8], auth: ClientAuth) -> Result<Self, Error> {
        self.client_roots = Some(Roots::from_pem(roots_pem)?);
        self.client_auth = auth;
        Ok(self)
    }

    /// The SM2 signer ID (default `1234567812345678`).
    pub fn with_signer_id(mut self, id: &str) -> Self {
        self.signer_id = intern(id);
        self
    }

    /// Reports each connection's master secret to `log`.
    pub fn with_key_log(mut self, log: std::sync::Arc<dyn KeyLog>) -> Self {
        self.key_log = Some(log);
        self
    }

    /// Whether sessions are kept and resumed by session ID (default yes).
    pub fn with_resumption(mut self, on: bool) -> Self {
        self.resumption = on;
        self
    }
}

/// A `'static` copy of a signer ID (few distinct IDs exist in a process;
/// webpki's algorithms are `'static`).
fn intern(id: &str) -> &'static str {
    static IDS: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut ids = IDS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = ids.iter().find(|s| **s == id) {
        return s;
    }
    let s: &'static str = Box::leak(id.to_owned().into_boxed_str());
    ids.push(s);
    s
}

// ---- Certificate verification ----

/// id-ecPublicKey with sm2p256v1, and SM2-with-SM3 (without and with NULL
/// parameters), as webpki compares them (the DER bodies).
const SM2_KEY_ALG: AlgorithmIdentifier = AlgorithmIdentifier::from_slice(&[
    0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x81, 0x1c, 0xcf, 0x55,
    0x01, 0x82, 0x2d,
]);
const SM2_SM3: AlgorithmIdentifier =
    AlgorithmIdentifier::from_slice(&[0x06, 0x08, 0x2a, 0x81, 0x1c, 0xcf, 0x55, 0x01, 0x83, 0x75]);
const SM2_SM3_NULL: AlgorithmIdentifier = AlgorithmIdentifier::from_slice(&[
    0x06, 0x08, 0x2a, 0x81, 0x1c, 0xcf, 0x55, 0x01, 0x83, 0x75, 0x05, 0x00,
]);

/// SM2-with-SM3 certificate signatures under one signer ID, for webpki.
#[derive(Debug)]
struct Sm2Sm3 {
    alg: AlgorithmIdentifier,
    id: &'static str,
}

impl SignatureVerificationAlgorithm for Sm2Sm3 {
    fn verify_signature(
        &self,
        public_key: &[u8],
        message: &[u8],
        signature: &[u8],
    ) -> Result<(), InvalidSignature> {
        let key = PublicKey::from_sec1_bytes(public_key).map_err(|_| InvalidSignature)?;
        crate::sm2::verify(&key, self.id, message, signature)
            .then_some(())
            .ok_or(InvalidSignature)
    }

    fn public_key_alg_id(&self) -> AlgorithmIdentifier {
        SM2_KEY_ALG
    }

    fn signature_alg_id(&self) -> AlgorithmIdentifier {
        self.alg
    }
}

/// The two algorithms for signer ID `id`, made once per ID.
fn algorithms(id: &'static str) -> [&'static dyn SignatureVerificationAlgorithm; 2] {
    type Algs = [&'static dyn SignatureVerificationAlgorithm; 2];
    static MADE: Mutex<Vec<(&'static str, Algs)>> = Mutex::new(Vec::new());
    let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, a)) = made.iter().find(|(i, _)| *i == id) {
        return *a;
    }
    let a: Algs = [
        Box::leak(Box::new(Sm2Sm3 { alg: SM2_SM3, id })),
        Box::leak(Box::new(Sm2Sm3 {
            alg: SM2_SM3_NULL,
            id,
        })),
    ];
    made.push((id, a));
    a
}

/// What the peer's Certificate message proved.
pub(crate) struct PeerCerts {
    pub(crate) chain: Vec<CertificateDer<'static>>,
    pub(crate) sign_key: PublicKey,
    pub(crate) enc_key: PublicKey,
}

/// Verifies a peer's Certificate message: the signing certificate, the
/// encryption certificate, then the chain. Both must chain to `roots`,
/// be valid now, carry the key usage of their role (a signing-only
/// certificate is not an encryption certificate), and, on the client, the
/// signing certificate must be valid for `server_name`.
pub(crate) fn verify_peer(
    roots: &Roots,
    certs: Vec<CertificateDer<'static>>,
    server_name: Option<&ServerName<'_>>,
    ecdhe: bool,
    signer_id: &'static str,
) -> Result<PeerCerts, Error> {
    let bad = |e: CertificateError| Error::InvalidCertificate(e);
    if certs.len() < 2 {
        return Err(bad(CertificateError::Missing));
    }
    let sign = x509::parse(&certs[0]).ok_or(bad(CertificateError::Unreadable))?;
    let enc = x509::parse(&certs[1]).ok_or(bad(CertificateError::Unreadable))?;
    if certs[0] == certs[1] {
        return Err(bad(CertificateError::WrongKeyUsage));
    }
    if sign
        .key_usage
        .is_some_and(|ku| ku & usage::DIGITAL_SIGNATURE == 0)
    {
        return Err(bad(CertificateError::WrongKeyUsage));
    }
    let enc_bits = if ecdhe {
        usage::KEY_AGREEMENT
    } else {
        usage::KEY_ENCIPHERMENT | usage::DATA_ENCIPHERMENT
    };
    if enc.key_usage.is_some_and(|ku| ku & enc_bits == 0) {
        return Err(bad(CertificateError::WrongKeyUsage));
    }
    let algs = algorithms(signer_id);
    let now = UnixTime::now();
    let intermediates = &certs[2..];
    let usage = if server_name.is_some() {
        webpki::KeyUsage::server_auth()
    } else {
        webpki::KeyUsage::client_auth()
    };
    let path_error = |e: webpki::Error| {
        bad(match e {
            webpki::Error::UnknownIssuer => CertificateError::UnknownIssuer,
            webpki::Error::CertExpired { .. } | webpki::Error::CertNotValidYet { .. } => {
                CertificateError::Expired
            }
            webpki::Error::InvalidSignatureForPublicKey => CertificateError::BadSignature,
            webpki::Error::RequiredEkuNotFoundContext(_) => CertificateError::WrongExtendedKeyUsage,
            other => CertificateError::Path(format!("{other:?}")),
        })
    };
    for cert in &certs[..2] {
        let ee = webpki::EndEntityCert::try_from(cert).map_err(path_error)?;
        ee.verify_for_usage(&algs, &roots.0, intermediates, now, usage, None, None)
            .map_err(path_error)?;
        if cert == &certs[0]
            && let Some(name) = server_name
        {
            ee.verify_is_valid_for_subject_name(name)
                .map_err(|_| bad(CertificateError::NotValidForName))?;
        }
    }
    let key = |info: &x509::CertInfo| {
        PublicKey::from_sec1_bytes(&info.public_key).map_err(|_| bad(CertificateError::Unreadable))
    };
    Ok(PeerCerts {
        sign_key: key(&sign)?,
        enc_key: key(&enc)?,
        chain: certs,
    })
}
