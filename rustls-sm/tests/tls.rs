#![cfg(any(feature = "ring", feature = "aws-lc-rs"))]
//! rustls to rustls, our provider on both sides, in memory: every suite,
//! group and certificate type, the record sizes around 2^14, HRR,
//! KeyUpdate, resumption, close_notify and the failures; the key schedule
//! and record protection against independent code (`hkdf`, `Sm4Gcm`) and
//! OpenSSL's HKDF over SM3.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};

use hex_literal::hex;
use rustls::client::danger::ServerCertVerifier;
use rustls::crypto::{CryptoProvider, SupportedKxGroup};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls::{
    AlertDescription, ClientConfig, ClientConnection, Connection, Error, HandshakeKind, KeyLog,
    RootCertStore, ServerConfig, ServerConnection, SupportedCipherSuite,
};
use rustls_sm::{
    CURVE_SM2, CURVE_SM2_KX, TLS_SM4_CCM_SM3, TLS_SM4_GCM_SM3, TLS13_SM4_CCM_SM3, TLS13_SM4_GCM_SM3,
};

/// The base provider of this build (`rustls_sm::provider()`'s).
fn base() -> CryptoProvider {
    #[cfg(feature = "aws-lc-rs")]
    return rustls::crypto::aws_lc_rs::default_provider();
    #[cfg(not(feature = "aws-lc-rs"))]
    rustls::crypto::ring::default_provider()
}

/// The base provider's X25519.
fn x25519() -> &'static dyn SupportedKxGroup {
    *base()
        .kx_groups
        .iter()
        .find(|g| g.name() == rustls::NamedGroup::X25519)
        .unwrap()
}

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

fn read(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DATA}/{name}")).unwrap()
}

#[derive(Clone, Copy, Debug)]
enum Cert {
    Ecdsa,
    Sm2,
}

impl Cert {
    fn name(self) -> &'static str {
        match self {
            Cert::Ecdsa => "ecdsa",
            Cert::Sm2 => "sm2",
        }
    }
}

fn roots(cert: Cert) -> RootCertStore {
    let mut roots = RootCertStore::empty();
    for c in rustls_sm::load_certs(&read(&format!("{}-ca.pem", cert.name()))).unwrap() {
        roots.add(c).unwrap();
    }
    roots
}

fn with(
    mut p: CryptoProvider,
    suites: &[SupportedCipherSuite],
    groups: &[&'static dyn SupportedKxGroup],
) -> CryptoProvider {
    if !suites.is_empty() {
        p.cipher_suites = suites.to_vec();
    }
    if !groups.is_empty() {
        p.kx_groups = groups.to_vec();
    }
    p
}

fn server_config(p: CryptoProvider, cert: Cert) -> ServerConfig {
    let chain = rustls_sm::load_certs(&read(&format!("{}-chain.pem", cert.name()))).unwrap();
    let key = rustls_sm::load_private_key(&read(&format!("{}.key", cert.name()))).unwrap();
    let mut c = ServerConfig::builder_with_provider(Arc::new(p))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    c.ticketer = rustls_sm::Ticketer::new().unwrap();
    c
}

fn client_config(p: CryptoProvider, cert: Cert) -> ClientConfig {
    ClientConfig::builder_with_provider(Arc::new(p))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_root_certificates(roots(cert))
        .with_no_client_auth()
}

/// A client and a server joined in memory; what each has read so far.
struct Pair {
    c: Connection,
    s: Connection,
    c_got: Vec<u8>,
    s_got: Vec<u8>,
    /// The bytes of the last flight from the client, as sent.
    c_wire: Vec<u8>,
}

impl Pair {
    fn new(client: &Arc<ClientConfig>, server: &Arc<ServerConfig>) -> Self {
        let name = "localhost".try_into().unwrap();
        Self {
            c: ClientConnection::new(client.clone(), name).unwrap().into(),
            s: ServerConnection::new(server.clone()).unwrap().into(),
            c_got: Vec::new(),
            s_got: Vec::new(),
            c_wire: Vec::new(),
        }
    }

    /// Moves what `from` has to send into `to` (after `tamper`), drains
    /// `to`'s plaintext. Returns whether any bytes moved.
    fn pump(
        from: &mut Connection,
        to: &mut Connection,
        got: &mut Vec<u8>,
        wire: Option<&mut Vec<u8>>,
        tamper: &mut dyn FnMut(&mut Vec<u8>),
    ) -> Result<bool, Error> {
        let mut buf = Vec::new();
        while from.wants_write() {
            from.write_tls(&mut buf).unwrap();
        }
        tamper(&mut buf);
        if let Some(wire) = wire {
            wire.clone_from(&buf);
        }
        let mut rest = &buf[..];
        while !rest.is_empty() {
            to.read_tls(&mut rest).unwrap();
            let state = to.process_new_packets();
            drain(to, got);
            state?;
        }
        Ok(!buf.is_empty())
    }

    fn client_to_server(&mut self, tamper: &mut dyn FnMut(&mut Vec<u8>)) -> Result<bool, Error> {
        Self::pump(
            &mut self.c,
            &mut self.s,
            &mut self.s_got,
            Some(&mut self.c_wire),
            tamper,
        )
    }

    fn server_to_client(&mut self) -> Result<bool, Error> {
        Self::pump(&mut self.s, &mut self.c, &mut self.c_got, None, &mut |_| {})
    }

    /// Runs both directions until nothing moves (at most 100 rounds).
    /// On an error, delivers the alert the failing side queued and
    /// returns which side failed and how.
    fn run(&mut self) -> Result<(), (&'static str, Error)> {
        for _ in 0..100 {
            let a = match self.client_to_server(&mut |_| {}) {
                Ok(a) => a,
                Err(e) => {
                    let _ = self.server_to_client();
                    return Err(("server", e));
                }
            };
            let b = match self.server_to_client() {
                Ok(b) => b,
                Err(e) => {
                    let _ = self.client_to_server(&mut |_| {});
                    return Err(("client", e));
                }
            };
            if !a && !b {
                return Ok(());
            }
        }
        panic!("no progress after 100 rounds");
    }

    fn handshake(client: &Arc<ClientConfig>, server: &Arc<ServerConfig>) -> Self {
        let mut pair = Self::new(client, server);
        pair.run().unwrap();
        assert!(!pair.c.is_handshaking() && !pair.s.is_handshaking());
        pair
    }

    /// Sends `data` from the client (or the server) and checks that the
    /// peer reads exactly it.
    fn send(&mut self, from_client: bool, data: &[u8]) {
        let mut sent = 0;
        let mut rounds = 0;
        while sent < data.len() || sent == 0 {
            let n = if from_client {
                self.c.writer().write(&data[sent..]).unwrap()
            } else {
                self.s.writer().write(&data[sent..]).unwrap()
            };
            sent += n;
            self.run().unwrap();
            rounds += 1;
            assert!(rounds < 10_000);
            if data.is_empty() {
                break;
            }
        }
        let got = if from_client {
            std::mem::take(&mut self.s_got)
        } else {
            std::mem::take(&mut self.c_got)
        };
        assert_eq!(got.len(), data.len());
        assert!(got == data, "data differ");
    }
}

fn drain(conn: &mut Connection, got: &mut Vec<u8>) {
    let mut buf = [0u8; 16384];
    loop {
        match conn.reader().read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(_) => break,
        }
    }
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 8) as u8)
        .collect()
}

const SIZES: [usize; 6] = [0, 1, 16383, 16384, 16385, 1 << 20];

#[test]
fn every_suite_group_and_certificate() {
    let x25519 = x25519();
    for suite in [*TLS13_SM4_GCM_SM3, *TLS13_SM4_CCM_SM3] {
        for group in [CURVE_SM2_KX, x25519] {
            for cert in [Cert::Ecdsa, Cert::Sm2] {
                let client = Arc::new(client_config(
                    with(rustls_sm::provider(), &[suite], &[group]),
                    cert,
                ));
                let server = Arc::new(server_config(rustls_sm::provider(), cert));
                let mut pair = Pair::handshake(&client, &server);
                assert_eq!(pair.c.negotiated_cipher_suite(), Some(suite));
                assert_eq!(pair.s.negotiated_cipher_suite(), Some(suite));
                assert_eq!(
                    pair.s.negotiated_key_exchange_group().unwrap().name(),
                    group.name()
                );
                for &len in &SIZES {
                    pair.send(true, &pattern(len, 1));
                    pair.send(false, &pattern(len, 2));
                }
                println!(
                    "{:?} {:?} {cert:?}: handshake, data {SIZES:?} both ways",
                    suite.suite(),
                    group.name()
                );
            }
        }
    }
}

#[test]
fn sm2_client_certificates() {
    // Mutual authentication with SM2 on both sides (sm2sig_sm3 in the
    // client's CertificateVerify too).
    let p = Arc::new(rustls_sm::rfc8998_only());
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots(Cert::Sm2)),
        p.clone(),
    )
    .build()
    .unwrap();
    let chain = rustls_sm::load_certs(&read("sm2-chain.pem")).unwrap();
    let key = rustls_sm::load_private_key(&read("sm2.key")).unwrap();
    let server = ServerConfig::builder_with_provider(p.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain.clone(), key.clone_key())
        .unwrap();
    let client = ClientConfig::builder_with_provider(p)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_root_certificates(roots(Cert::Sm2))
        .with_client_auth_cert(chain, key)
        .unwrap();
    let mut pair = Pair::handshake(&Arc::new(client), &Arc::new(server));
    assert!(pair.s.peer_certificates().is_some_and(|c| c.len() == 2));
    pair.send(true, b"mutual");
}

#[test]
fn rfc8998_only_both_sides() {
    for suite in [*TLS13_SM4_GCM_SM3, *TLS13_SM4_CCM_SM3] {
        let client = Arc::new(client_config(
            with(rustls_sm::rfc8998_only(), &[suite], &[]),
            Cert::Sm2,
        ));
        let server = Arc::new(server_config(rustls_sm::rfc8998_only(), Cert::Sm2));
        let mut pair = Pair::handshake(&client, &server);
        assert_eq!(
            pair.c.negotiated_key_exchange_group().unwrap().name(),
            *CURVE_SM2
        );
        pair.send(true, b"ping");
        pair.send(false, b"pong");
    }
}

#[test]
fn hello_retry_request() {
    // The client's first key share is X25519; the server takes curveSM2 only.
    let client = Arc::new(client_config(
        with(
            rustls_sm::provider(),
            &[*TLS13_SM4_GCM_SM3],
            &[x25519(), CURVE_SM2_KX],
        ),
        Cert::Sm2,
    ));
    let server = Arc::new(server_config(rustls_sm::rfc8998_only(), Cert::Sm2));
    let mut pair = Pair::handshake(&client, &server);
    assert_eq!(
        pair.c.handshake_kind(),
        Some(HandshakeKind::FullWithHelloRetryRequest)
    );
    assert_eq!(
        pair.c.negotiated_key_exchange_group().unwrap().name(),
        *CURVE_SM2
    );
    pair.send(true, b"after HRR");
}

#[test]
fn key_update_both_ways() {
    for suite in [*TLS13_SM4_GCM_SM3, *TLS13_SM4_CCM_SM3] {
        let client = Arc::new(client_config(
            with(rustls_sm::provider(), &[suite], &[]),
            Cert::Sm2,
        ));
        let server = Arc::new(server_config(rustls_sm::provider(), Cert::Sm2));
        let mut pair = Pair::handshake(&client, &server);
        for round in 0..3u8 {
            pair.c.refresh_traffic_keys().unwrap();
            pair.send(true, &pattern(20000, round));
            pair.send(false, &pattern(100, round));
            pair.s.refresh_traffic_keys().unwrap();
            pair.send(false, &pattern(20000, round));
            pair.send(true, &pattern(100, round));
        }
    }
}

#[test]
fn resumption_with_ticket() {
    // Tickets sealed by rustls_sm::Ticketer (SM4-GCM), under both providers.
    let providers: [fn() -> CryptoProvider; 2] = [rustls_sm::provider, rustls_sm::rfc8998_only];
    for (suite, make) in [*TLS13_SM4_GCM_SM3, *TLS13_SM4_CCM_SM3]
        .into_iter()
        .flat_map(|s| providers.map(|p| (s, p)))
    {
        let client = Arc::new(client_config(with(make(), &[suite], &[]), Cert::Sm2));
        let server = Arc::new(server_config(make(), Cert::Sm2));
        let mut first = Pair::handshake(&client, &server);
        first.send(false, b"a ticket came before this");
        assert_eq!(first.c.handshake_kind(), Some(HandshakeKind::Full));
        let mut second = Pair::handshake(&client, &server);
        assert_eq!(second.c.handshake_kind(), Some(HandshakeKind::Resumed));
        assert_eq!(second.s.handshake_kind(), Some(HandshakeKind::Resumed));
        assert_eq!(second.c.negotiated_cipher_suite(), Some(suite));
        second.send(true, b"resumed");
    }
}

#[test]
fn close_notify() {
    let client = Arc::new(client_config(
        rustls_sm::provider_preferring_sm(),
        Cert::Sm2,
    ));
    let server = Arc::new(server_config(rustls_sm::provider(), Cert::Sm2));
    let mut pair = Pair::handshake(&client, &server);
    pair.send(true, b"last words");
    pair.c.send_close_notify();
    pair.run().unwrap();
    // A clean end of stream: read gives 0, not an error.
    assert_eq!(pair.s.reader().read(&mut [0u8; 8]).unwrap(), 0);
    pair.s.send_close_notify();
    pair.run().unwrap();
    assert_eq!(pair.c.reader().read(&mut [0u8; 8]).unwrap(), 0);
}

#[test]
fn flipped_bit_is_bad_record_mac() {
    for suite in [*TLS13_SM4_GCM_SM3, *TLS13_SM4_CCM_SM3] {
        // Any bit of the record body: the first, one in the middle, the tag's last.
        for at in [5usize, 300, usize::MAX] {
            let client = Arc::new(client_config(
                with(rustls_sm::provider(), &[suite], &[]),
                Cert::Sm2,
            ));
            let server = Arc::new(server_config(rustls_sm::provider(), Cert::Sm2));
            let mut pair = Pair::handshake(&client, &server);
            pair.c.writer().write_all(&pattern(1000, 9)).unwrap();
            let err = pair
                .client_to_server(&mut |wire| {
                    let i = at.min(wire.len() - 1);
                    wire[i] ^= 0x10;
                })
                .unwrap_err();
            assert_eq!(err, Error::DecryptError);
            assert!(pair.s_got.is_empty(), "nothing of the record delivered");
            // The server's alert reaches the client.
            let err = pair.server_to_client().unwrap_err();
            assert_eq!(err, Error::AlertReceived(AlertDescription::BadRecordMac));
        }
    }
}

#[test]
fn sm_only_client_against_server_without_sm_suites() {
    let client = Arc::new(client_config(rustls_sm::rfc8998_only(), Cert::Sm2));
    let server = Arc::new(server_config(base(), Cert::Ecdsa));
    let mut pair = Pair::new(&client, &server);
    let (side, err) = pair.run().unwrap_err();
    assert_eq!(side, "server");
    assert!(matches!(err, Error::PeerIncompatible(_)), "{err:?}");
    // The client hears handshake_failure (no hang: run() returned).
    let mut got = Vec::new();
    let err = Pair::pump(&mut pair.s, &mut pair.c, &mut got, None, &mut |_| {});
    assert!(
        pair.c.is_handshaking()
            && matches!(
                err,
                Err(Error::AlertReceived(AlertDescription::HandshakeFailure)) | Ok(false)
            ),
        "{err:?}"
    );
}

#[test]
fn sm_only_alert_reaches_client() {
    let client = Arc::new(client_config(rustls_sm::rfc8998_only(), Cert::Sm2));
    let server = Arc::new(server_config(base(), Cert::Ecdsa));
    let mut pair = Pair::new(&client, &server);
    pair.client_to_server(&mut |_| {}).unwrap_err();
    let err = pair.server_to_client().unwrap_err();
    assert_eq!(
        err,
        Error::AlertReceived(AlertDescription::HandshakeFailure)
    );
}

/// Serves the SM2 chain with a key that is not the certificate's.
#[derive(Debug)]
struct WrongKey(Arc<CertifiedKey>);

impl ResolvesServerCert for WrongKey {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.0.clone())
    }
}

#[test]
fn sm2_signature_by_the_wrong_key_is_rejected() {
    let p = Arc::new(rustls_sm::provider());
    let chain = rustls_sm::load_certs(&read("sm2-chain.pem")).unwrap();
    let key = p
        .key_provider
        .load_private_key(rustls_sm::load_private_key(&read("wrong-sm2.key")).unwrap())
        .unwrap();
    let server = ServerConfig::builder_with_provider(p)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(WrongKey(Arc::new(CertifiedKey::new(chain, key)))));
    let client = Arc::new(client_config(
        rustls_sm::provider_preferring_sm(),
        Cert::Sm2,
    ));
    let mut pair = Pair::new(&client, &Arc::new(server));
    let (side, err) = pair.run().unwrap_err();
    assert_eq!(side, "client");
    assert!(
        matches!(
            err,
            Error::InvalidCertificate(rustls::CertificateError::BadSignature)
        ),
        "{err:?}"
    );
}

#[test]
fn forged_sm2_certificate_is_rejected() {
    // The SM2 leaf signed by another key posing as the SM2 CA (tests/data/gen.sh).
    let p = Arc::new(rustls_sm::provider());
    let chain = rustls_sm::load_certs(&read("sm2-forged-chain.pem")).unwrap();
    let key = rustls_sm::load_private_key(&read("sm2.key")).unwrap();
    let server = ServerConfig::builder_with_provider(p)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    let client = Arc::new(client_config(
        rustls_sm::provider_preferring_sm(),
        Cert::Sm2,
    ));
    let mut pair = Pair::new(&client, &Arc::new(server));
    let (side, err) = pair.run().unwrap_err();
    assert_eq!(side, "client");
    assert!(
        matches!(
            err,
            Error::InvalidCertificate(rustls::CertificateError::BadSignature)
        ),
        "{err:?}"
    );
}

#[test]
fn sm2_signatures_verify_only_with_their_key() {
    let p = rustls_sm::provider();
    let der = |name: &str| match rustls_sm::load_private_key(&read(name)).unwrap() {
        rustls::pki_types::PrivateKeyDer::Pkcs8(k) => k.secret_pkcs8_der().to_vec(),
        _ => unreachable!(),
    };
    let right = rustls_sm::Sm2Key::from_pkcs8_der(&der("sm2.key")).unwrap();
    let wrong = rustls_sm::Sm2Key::from_pkcs8_der(&der("wrong-sm2.key")).unwrap();
    let msg = b"TLS 1.3, server CertificateVerify";
    let tls = rustls_sm::TLS13_SIGNER_ID;
    let verify = |key: &rustls_sm::Sm2Key, id, msg: &[u8], sig: &[u8]| {
        rustls_sm::sm2_verify(id, &key.public_key(), msg, sig)
    };
    let sig = right.sign(tls, msg).unwrap();
    assert!(verify(&right, tls, msg, &sig));
    assert!(!verify(&wrong, tls, msg, &sig));
    assert!(!verify(&right, tls, b"another message", &sig));
    // The signer ID is part of what is signed.
    assert!(!verify(&right, rustls_sm::CERT_SIGNER_ID, msg, &sig));
    let mut bad = sig.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    assert!(!verify(&right, tls, msg, &bad));
    // Garbage never panics.
    assert!(!rustls_sm::sm2_verify(tls, &[], msg, &sig));
    assert!(!verify(&right, tls, msg, &[0x30, 0x80]));
    // ECDSA keys still load through the base provider; not in rfc8998_only.
    let ecdsa = rustls_sm::load_private_key(&read("ecdsa.key")).unwrap();
    assert!(p.key_provider.load_private_key(ecdsa.clone_key()).is_ok());
    assert!(
        rustls_sm::rfc8998_only()
            .key_provider
            .load_private_key(ecdsa)
            .is_err()
    );
}

#[test]
fn server_verifier_offers_sm2sig_sm3() {
    let v = rustls::client::WebPkiServerVerifier::builder_with_provider(
        Arc::new(roots(Cert::Sm2)),
        Arc::new(rustls_sm::provider()),
    )
    .build()
    .unwrap();
    assert_eq!(v.supported_verify_schemes()[0], *rustls_sm::SM2SIG_SM3);
}

// ---- HKDF over SM3 and the key schedule ----

fn hkdf() -> &'static dyn rustls::crypto::tls13::Hkdf {
    match *TLS13_SM4_GCM_SM3 {
        SupportedCipherSuite::Tls13(s) => s.hkdf_provider,
        #[allow(unreachable_patterns)]
        _ => unreachable!(),
    }
}

/// HKDF-Expand-Label (RFC 8446 section 7.1) on rustls's expander.
fn expand_label(secret: &[u8], label: &[u8], context: &[u8], len: usize) -> Vec<u8> {
    let expander = hkdf().expander_for_okm(&rustls::crypto::tls13::OkmBlock::new(secret));
    expand_label_with(&*expander, label, context, len)
}

fn expand_label_with(
    expander: &dyn rustls::crypto::tls13::HkdfExpander,
    label: &[u8],
    context: &[u8],
    len: usize,
) -> Vec<u8> {
    let full = [b"tls13 ".as_slice(), label].concat();
    let info = [
        &(len as u16).to_be_bytes()[..],
        &[full.len() as u8],
        &full,
        &[context.len() as u8],
        context,
    ];
    let mut out = vec![0; len];
    expander.expand_slice(&info, &mut out).unwrap();
    out
}

#[test]
fn hkdf_sm3_matches_openssl() {
    // RFC 5869 test case 1's inputs with SM3; the outputs from
    // `openssl kdf -kdfopt digest:SM3 ... HKDF` (OpenSSL 3.0).
    let ikm = [0x0b; 22];
    let salt = hex!("000102030405060708090a0b0c");
    let info = hex!("f0f1f2f3f4f5f6f7f8f9");
    let prk = hex!("e0d6f7b0bd056327b7659f1f39ad850561fbcf4fb10fb58e88eafa55cf7cd01e");
    let okm = hex!(
        "c69fe91b7aaee2dd5718d72dcaee0cce93f1b8e41f792da51261b6a517e68b36ed2c595572b01dfa359b"
    );
    let okm_salt = rustls::crypto::tls13::OkmBlock::new(&salt);
    assert_eq!(hkdf().hmac_sign(&okm_salt, &ikm).as_ref(), prk);
    let mut out = [0u8; 42];
    hkdf()
        .extract_from_secret(Some(&salt), &ikm)
        .expand_slice(&[&info], &mut out)
        .unwrap();
    assert_eq!(out, okm);
    // The same with the `hkdf` crate over our Sm3.
    let (p, h) = hkdf::Hkdf::<sm3_simd::Sm3>::extract(Some(&salt), &ikm);
    assert_eq!(p[..], prk);
    let mut out2 = [0u8; 42];
    h.expand(&info, &mut out2).unwrap();
    assert_eq!(out2, okm);
    // HKDF-Expand-Label(0x11 * 32, "key" / "iv", "", 16 / 12), OpenSSL too.
    let secret = [0x11; 32];
    assert_eq!(
        expand_label(&secret, b"key", b"", 16),
        hex!("a8e815dbe39de596821379eb0c31b6df")
    );
    assert_eq!(
        expand_label(&secret, b"iv", b"", 12),
        hex!("ab8886b7844e2ab447b118b5")
    );
}

#[test]
fn key_schedule_rfc8446_over_sm3() {
    // RFC 8446 section 7.1 from the zero PSK and a fixed ECDHE secret,
    // twice: rustls's HKDF over our HMAC-SM3, and the `hkdf` crate.
    use hkdf::Hkdf;
    use sm3_simd::{Digest, Sm3};
    let ecdhe = [0x42u8; 32];
    let transcript = Sm3::digest(b"ClientHello...ServerHello");
    let empty = Sm3::digest(b"");
    let ours = {
        let early = hkdf().extract_from_zero_ikm(None);
        let derived = expand_label_with(&*early, b"derived", &empty, 32);
        let hs = hkdf().extract_from_secret(Some(&derived), &ecdhe);
        expand_label_with(&*hs, b"c hs traffic", &transcript, 32)
    };
    let label = |secret: &[u8], label: &[u8], ctx: &[u8]| {
        let full = [b"tls13 ".as_slice(), label].concat();
        let info = [
            &[0u8, 32][..],
            &[full.len() as u8],
            &full,
            &[ctx.len() as u8],
            ctx,
        ]
        .concat();
        let mut out = [0u8; 32];
        Hkdf::<Sm3>::from_prk(secret)
            .unwrap()
            .expand(&info, &mut out)
            .unwrap();
        out
    };
    let (early, _) = Hkdf::<Sm3>::extract(None, &[0; 32]);
    let derived = label(&early, b"derived", &empty);
    let (hs, _) = Hkdf::<Sm3>::extract(Some(&derived), &ecdhe);
    assert_eq!(ours, label(&hs, b"c hs traffic", &transcript));
}

/// Captures the secrets rustls logs (SSLKEYLOGFILE's lines).
#[derive(Debug, Default)]
struct Capture(Mutex<Vec<(String, Vec<u8>)>>);

impl KeyLog for Capture {
    fn log(&self, label: &str, _client_random: &[u8], secret: &[u8]) {
        self.0
            .lock()
            .unwrap()
            .push((label.to_string(), secret.to_vec()));
    }
}

#[test]
fn first_application_record_from_the_logged_secret() {
    // The client's first application record, rebuilt from the logged
    // CLIENT_TRAFFIC_SECRET_0 with the `hkdf` crate and Sm4Gcm / Sm4Ccm:
    // key and IV derivation, nonce, AAD and inner content type.
    use sm4_simd::aead::{AeadInOut, KeyInit};
    for suite in [*TLS13_SM4_GCM_SM3, *TLS13_SM4_CCM_SM3] {
        let log = Arc::new(Capture::default());
        let mut c = client_config(with(rustls_sm::provider(), &[suite], &[]), Cert::Sm2);
        c.key_log = log.clone();
        let server = Arc::new(server_config(rustls_sm::provider(), Cert::Sm2));
        let mut pair = Pair::handshake(&Arc::new(c), &server);
        pair.c.writer().write_all(b"hello, SM4").unwrap();
        pair.client_to_server(&mut |_| {}).unwrap();
        assert_eq!(pair.s_got, b"hello, SM4");
        let secret = log
            .0
            .lock()
            .unwrap()
            .iter()
            .find(|(l, _)| l == "CLIENT_TRAFFIC_SECRET_0")
            .unwrap()
            .1
            .clone();
        let key = expand_label_hkdf(&secret, b"key", 16);
        let iv = expand_label_hkdf(&secret, b"iv", 12);
        let mut body = b"hello, SM4\x17".to_vec();
        let header = [0x17, 0x03, 0x03, 0, body.len() as u8 + 16];
        let nonce: [u8; 12] = iv.try_into().unwrap(); // sequence number 0
        let tag: Vec<u8> = if suite.suite() == *TLS_SM4_GCM_SM3 {
            let a = sm4_simd::Sm4Gcm::new_from_slice(&key).unwrap();
            a.encrypt_inout_detached(&nonce.into(), &header, (&mut body[..]).into())
                .unwrap()
                .to_vec()
        } else {
            assert_eq!(suite.suite(), *TLS_SM4_CCM_SM3);
            let a = sm4_simd::Sm4Ccm::new_from_slice(&key).unwrap();
            a.encrypt_inout_detached(&nonce.into(), &header, (&mut body[..]).into())
                .unwrap()
                .to_vec()
        };
        let expected = [&header[..], &body, &tag].concat();
        assert_eq!(pair.c_wire, expected);
    }
}

fn expand_label_hkdf(secret: &[u8], label: &[u8], len: usize) -> Vec<u8> {
    let full = [b"tls13 ".as_slice(), label].concat();
    let info = [
        &(len as u16).to_be_bytes()[..],
        &[full.len() as u8],
        &full,
        &[0],
    ]
    .concat();
    let mut out = vec![0; len];
    hkdf::Hkdf::<sm3_simd::Sm3>::from_prk(secret)
        .unwrap()
        .expand(&info, &mut out)
        .unwrap();
    out
}

// ---- Bad input: errors and alerts, never panics ----

#[test]
fn bad_curve_sm2_shares_are_errors() {
    let good = CURVE_SM2_KX.start().unwrap().pub_key().to_vec();
    let mut compressed = vec![2 | (good[64] & 1)];
    compressed.extend_from_slice(&good[1..33]);
    let mut off_curve = good.clone();
    off_curve[64] ^= 1;
    // Uncompressed, coordinates of all ones: above p, so only the range
    // check of the point decoder can refuse it.
    let mut above_p = [0xff; 65];
    above_p[0] = 4;
    let bad: [&[u8]; 9] = [
        &[],
        &[4],
        &[4; 65],
        &[0xff; 65],
        &above_p,
        &good[..64],
        &[&good[..], &[0]].concat(),
        &compressed,
        &off_curve,
    ];
    for share in bad {
        let kx = CURVE_SM2_KX.start().unwrap();
        assert!(kx.complete(share).is_err(), "{share:02x?}");
    }
    // And the good share agrees from both ends.
    let a = CURVE_SM2_KX.start().unwrap();
    let b = CURVE_SM2_KX.start().unwrap();
    let (pa, pb) = (a.pub_key().to_vec(), b.pub_key().to_vec());
    assert_eq!(
        a.complete(&pb).unwrap().secret_bytes(),
        b.complete(&pa).unwrap().secret_bytes()
    );
}

#[test]
fn malformed_records_are_errors() {
    let client = Arc::new(client_config(
        rustls_sm::provider_preferring_sm(),
        Cert::Sm2,
    ));
    let server = Arc::new(server_config(rustls_sm::provider(), Cert::Sm2));
    let record = |typ: u8, len: usize, body_len: usize| {
        let mut r = vec![typ, 3, 3, (len >> 8) as u8, len as u8];
        r.resize(5 + body_len, 0x33);
        r
    };
    let cases = [
        ("shorter than a tag", record(0x17, 5, 5)),
        ("empty", record(0x17, 0, 0)),
        ("one byte", record(0x17, 1, 1)),
        ("forged full record", record(0x17, 16384 + 17, 16384 + 17)),
        ("over 2^14 + 256", record(0x17, 16384 + 257, 16384 + 257)),
        ("length 0xffff", record(0x17, 0xffff, 0xffff)),
        ("unknown content type", record(0x99, 20, 20)),
        (
            "plaintext handshake after the handshake",
            record(0x16, 4, 4),
        ),
    ];
    for (what, bytes) in cases {
        for to_server in [true, false] {
            let mut pair = Pair::handshake(&client, &server);
            let conn = if to_server { &mut pair.s } else { &mut pair.c };
            let mut rest = &bytes[..];
            let mut failed = None;
            while !rest.is_empty() && failed.is_none() {
                match conn.read_tls(&mut rest) {
                    Ok(_) => failed = conn.process_new_packets().err(),
                    Err(e) => failed = Some(Error::General(e.to_string())),
                }
            }
            let mut got = Vec::new();
            drain(conn, &mut got);
            assert!(got.is_empty(), "{what}: nothing delivered");
            let failed = failed.unwrap_or_else(|| panic!("{what}: must fail"));
            // RFC 8446 section 5.2: a ciphertext over 2^14 + 256 bytes is a
            // record_overflow, whether or not it would decrypt.
            if what == "over 2^14 + 256" {
                assert_eq!(failed, Error::PeerSentOversizedRecord, "{what}");
            }
        }
    }
}

/// A small deterministic generator for the mutation tests.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn mutated_handshakes_are_errors_not_panics() {
    let client = Arc::new(client_config(
        with(rustls_sm::rfc8998_only(), &[], &[]),
        Cert::Sm2,
    ));
    let server = Arc::new(server_config(rustls_sm::rfc8998_only(), Cert::Sm2));
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut outcomes = [0usize; 2];
    for round in 0..300 {
        let mut pair = Pair::new(&client, &server);
        let mut hello = Vec::new();
        while pair.c.wants_write() {
            pair.c.write_tls(&mut hello).unwrap();
        }
        let to_client = round % 2 == 1;
        let mut flight = hello.clone();
        if to_client {
            // The server's first flight: ServerHello, then its encrypted
            // EncryptedExtensions .. Finished (curveSM2, SM2 signature).
            let mut rest = &hello[..];
            while !rest.is_empty() {
                pair.s.read_tls(&mut rest).unwrap();
                pair.s.process_new_packets().unwrap();
            }
            flight.clear();
            while pair.s.wants_write() {
                pair.s.write_tls(&mut flight).unwrap();
            }
        }
        // One to three changes: a flipped bit, a changed byte, a cut.
        for _ in 0..1 + next(&mut rng) % 3 {
            let at = (next(&mut rng) % flight.len() as u64) as usize;
            match next(&mut rng) % 3 {
                0 => flight[at] ^= 1 << (next(&mut rng) % 8),
                1 => flight[at] = next(&mut rng) as u8,
                _ => flight.truncate(at.max(1)),
            }
        }
        let conn = if to_client { &mut pair.c } else { &mut pair.s };
        let mut rest = &flight[..];
        let mut result = Ok(());
        while !rest.is_empty() && result.is_ok() {
            result = match conn.read_tls(&mut rest) {
                Ok(_) => conn.process_new_packets().map(|_| ()),
                Err(_) => Err(Error::General("read_tls".into())),
            };
        }
        outcomes[usize::from(result.is_err())] += 1;
    }
    println!(
        "mutated flights: {} still waiting/accepted, {} errors",
        outcomes[0], outcomes[1]
    );
    // No panic is the point; most changes are caught (the rest are cuts that
    // leave the peer waiting, or bytes it ignores, e.g. the random).
    assert!(outcomes[1] >= 100);
}

// ---- Providers, code points, keys and certificates ----

#[test]
fn code_points_are_the_linked_rustls_values() {
    use rustls::{CipherSuite, NamedGroup, SignatureScheme};
    assert_eq!(*TLS_SM4_GCM_SM3, CipherSuite::from(0x00C6));
    assert_eq!(*TLS_SM4_CCM_SM3, CipherSuite::from(0x00C7));
    assert_eq!(*CURVE_SM2, NamedGroup::from(0x0029));
    assert_eq!(*rustls_sm::SM2SIG_SM3, SignatureScheme::from(0x0708));
    assert_eq!(TLS13_SM4_GCM_SM3.suite(), CipherSuite::from(0x00C6));
    assert_eq!(TLS13_SM4_CCM_SM3.suite(), CipherSuite::from(0x00C7));
    assert_eq!(CURVE_SM2_KX.name(), NamedGroup::from(0x0029));
    // What rustls reads off the wire is `From<u16>`: the same values.
    for (n, suite, name) in [
        (0x00C6u16, *TLS_SM4_GCM_SM3, "TLS_SM4_GCM_SM3"),
        (0x00C7, *TLS_SM4_CCM_SM3, "TLS_SM4_CCM_SM3"),
    ] {
        assert_eq!(u16::from(suite), n);
        assert_eq!(rustls_sm::suite_name(CipherSuite::from(n)), name);
    }
    assert_eq!(rustls_sm::group_name(NamedGroup::from(0x0029)), "curveSM2");
}

#[test]
fn provider_orders_base_first_and_sm_first() {
    let general = rustls_sm::provider();
    let n = general.cipher_suites.len();
    assert!(n > 2);
    assert_eq!(
        general.cipher_suites[n - 2..],
        [*TLS13_SM4_GCM_SM3, *TLS13_SM4_CCM_SM3]
    );
    assert_eq!(general.cipher_suites[0], base().cipher_suites[0]);
    let sm = rustls_sm::provider_preferring_sm();
    assert_eq!(
        sm.cipher_suites[..2],
        [*TLS13_SM4_GCM_SM3, *TLS13_SM4_CCM_SM3]
    );
    assert_eq!(sm.cipher_suites.len(), n);
    // rustls servers follow the client's order: a general client gets the
    // base's first suite, an SM-preferring one SM4-GCM.
    let server = Arc::new(server_config(rustls_sm::provider(), Cert::Sm2));
    let pair = Pair::handshake(&Arc::new(client_config(general, Cert::Sm2)), &server);
    assert_eq!(
        pair.c.negotiated_cipher_suite(),
        Some(base().cipher_suites[0])
    );
    let pair = Pair::handshake(&Arc::new(client_config(sm, Cert::Sm2)), &server);
    assert_eq!(pair.c.negotiated_cipher_suite(), Some(*TLS13_SM4_GCM_SM3));
}

#[test]
fn extend_adds_rfc8998_to_any_base() {
    type Base = (&'static str, fn() -> CryptoProvider);
    let mut bases: Vec<Base> = Vec::new();
    #[cfg(feature = "ring")]
    bases.push(("ring", rustls::crypto::ring::default_provider));
    #[cfg(feature = "aws-lc-rs")]
    bases.push(("aws-lc-rs", rustls::crypto::aws_lc_rs::default_provider));
    for (name, base) in bases {
        let p = rustls_sm::extend(base());
        // The base's parts are kept, the SM ones added once.
        assert_eq!(
            p.cipher_suites.len(),
            base().cipher_suites.len() + 2,
            "{name}"
        );
        assert_eq!(p.kx_groups.len(), base().kx_groups.len() + 1, "{name}");
        assert_eq!(p.kx_groups[1].name(), *CURVE_SM2, "{name}");
        // Extending twice adds nothing more, and reuses what it made.
        let again = rustls_sm::extend(rustls_sm::extend(base()));
        assert_eq!(again.cipher_suites.len(), p.cipher_suites.len(), "{name}");
        assert_eq!(again.kx_groups.len(), p.kx_groups.len(), "{name}");
        assert_eq!(
            p.signature_verification_algorithms.all.as_ptr(),
            rustls_sm::extend(base())
                .signature_verification_algorithms
                .all
                .as_ptr(),
            "{name}"
        );
        // SM2 and ECDSA chains, SM and base suites, against our server.
        for cert in [Cert::Sm2, Cert::Ecdsa] {
            let server = Arc::new(server_config(rustls_sm::extend(base()), cert));
            for suite in [*TLS13_SM4_GCM_SM3, base().cipher_suites[0]] {
                let client = client_config(with(rustls_sm::extend(base()), &[suite], &[]), cert);
                let mut pair = Pair::handshake(&Arc::new(client), &server);
                assert_eq!(pair.s.negotiated_cipher_suite(), Some(suite), "{name}");
                pair.send(true, b"extended");
            }
        }
    }
}

/// A server with `chain` and `key` (PEM file names) on `p`.
fn server_with(p: CryptoProvider, chain: &str, key: &[u8]) -> Arc<ServerConfig> {
    let chain = rustls_sm::load_certs(&read(chain)).unwrap();
    let key = rustls_sm::load_private_key(key).unwrap();
    Arc::new(
        ServerConfig::builder_with_provider(Arc::new(p))
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .unwrap(),
    )
}

#[test]
fn empty_signer_id_certificates_only_when_asked() {
    // sm2-noid-chain.pem: the SM2 leaf signed by the SM2 CA under the empty
    // signer ID (`openssl x509 -req -sm3` without -sigopt distid, OpenSSL 3).
    let server = server_with(
        rustls_sm::rfc8998_only(),
        "sm2-noid-chain.pem",
        &read("sm2.key"),
    );
    for make in [rustls_sm::provider, rustls_sm::rfc8998_only] {
        let strict = Arc::new(client_config(make(), Cert::Sm2));
        let mut pair = Pair::new(&strict, &server);
        let err = pair.run().unwrap_err().1;
        assert_eq!(
            err,
            Error::InvalidCertificate(rustls::CertificateError::BadSignature)
        );
        let lenient = client_config(rustls_sm::accept_empty_cert_signer_id(make()), Cert::Sm2);
        let mut pair = Pair::handshake(&Arc::new(lenient), &server);
        pair.send(true, b"empty signer ID accepted on request");
        // The usual certificates still verify with the lenient provider.
        let lenient = client_config(rustls_sm::accept_empty_cert_signer_id(make()), Cert::Sm2);
        let usual = Arc::new(server_config(rustls_sm::rfc8998_only(), Cert::Sm2));
        Pair::handshake(&Arc::new(lenient), &usual).send(true, b"1234567812345678");
    }
}

#[test]
fn sec1_sm2_keys_load() {
    // OpenSSL's `openssl ec` output (label "SM2 PRIVATE KEY") and the same
    // body under the usual SEC1 label.
    let sm2_label = read("sm2-sec1.key");
    let ec_label = String::from_utf8(sm2_label.clone())
        .unwrap()
        .replace("SM2 PRIVATE KEY", "EC PRIVATE KEY");
    for pem in [sm2_label, ec_label.into_bytes()] {
        let key = rustls_sm::load_private_key(&pem).unwrap();
        assert!(matches!(key, rustls::pki_types::PrivateKeyDer::Sec1(_)));
        for make in [rustls_sm::provider, rustls_sm::rfc8998_only] {
            let server = server_with(make(), "sm2-chain.pem", &pem);
            let client = Arc::new(client_config(rustls_sm::rfc8998_only(), Cert::Sm2));
            Pair::handshake(&client, &server).send(false, b"SEC1");
        }
    }
    // rfc8998_only loads nothing but SM2 keys, and says so.
    let ecdsa = rustls_sm::load_private_key(&read("ecdsa.key")).unwrap();
    let err = rustls_sm::rfc8998_only()
        .key_provider
        .load_private_key(ecdsa)
        .unwrap_err();
    assert!(err.to_string().contains("not an SM2 private key"), "{err}");
}

#[test]
fn ticketer_seals_with_sm4_gcm_and_refuses_forgeries() {
    let t = rustls_sm::Ticketer::new().unwrap();
    assert!(t.enabled());
    let other = rustls_sm::Ticketer::new().unwrap();
    for len in [0usize, 1, 100, 2000] {
        let plain = pattern(len, 9);
        let ticket = t.encrypt(&plain).unwrap();
        assert_eq!(ticket.len(), 16 + 12 + len + 16);
        if len > 0 {
            assert_ne!(ticket[28..28 + len], plain[..]);
        }
        assert_eq!(t.decrypt(&ticket).unwrap(), plain);
        assert_ne!(t.encrypt(&plain).unwrap(), ticket, "fresh nonce per ticket");
        assert!(other.decrypt(&ticket).is_none(), "another key");
        for at in [0, 16, 28, ticket.len() - 1] {
            let mut bad = ticket.clone();
            bad[at] ^= 1;
            assert!(t.decrypt(&bad).is_none(), "flipped byte {at}");
        }
        for cut in [0, 15, 28, 43, ticket.len() - 1] {
            assert!(t.decrypt(&ticket[..cut]).is_none(), "cut at {cut}");
        }
    }
}
