//! rustls-sm against arbitrary peer bytes: a server and a client on
//! `rfc8998_only()` (SM2 certificate, client authentication offered) fed
//! whatever the fuzzer makes, in the chunks it chooses; and SM2 signature
//! verification (certificates' and CertificateVerify's) on arbitrary keys,
//! messages and signatures. No input may panic.
#![no_main]

use std::sync::{Arc, LazyLock};

use libfuzzer_sys::fuzz_target;
use rustls::{
    ClientConfig, ClientConnection, Connection, RootCertStore, ServerConfig, ServerConnection,
};
use rustls_sm::rustls;

const CHAIN: &[u8] = include_bytes!("../../rustls-sm/tests/data/sm2-chain.pem");
const KEY: &[u8] = include_bytes!("../../rustls-sm/tests/data/sm2.key");
const CA: &[u8] = include_bytes!("../../rustls-sm/tests/data/sm2-ca.pem");

fn roots() -> RootCertStore {
    let mut roots = RootCertStore::empty();
    for c in rustls_sm::load_certs(CA).unwrap() {
        roots.add(c).unwrap();
    }
    roots
}

static SERVER: LazyLock<Arc<ServerConfig>> = LazyLock::new(|| {
    let p = Arc::new(rustls_sm::rfc8998_only());
    let verifier =
        rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots()), p.clone())
            .allow_unauthenticated()
            .build()
            .unwrap();
    let mut c = ServerConfig::builder_with_provider(p)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(
            rustls_sm::load_certs(CHAIN).unwrap(),
            rustls_sm::load_private_key(KEY).unwrap(),
        )
        .unwrap();
    c.ticketer = rustls_sm::Ticketer::new().unwrap();
    Arc::new(c)
});

static CLIENT: LazyLock<Arc<ClientConfig>> = LazyLock::new(|| {
    Arc::new(
        ClientConfig::builder_with_provider(Arc::new(rustls_sm::rfc8998_only()))
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
            .with_root_certificates(roots())
            .with_client_auth_cert(
                rustls_sm::load_certs(CHAIN).unwrap(),
                rustls_sm::load_private_key(KEY).unwrap(),
            )
            .unwrap(),
    )
});

/// Feeds `input` to `conn` in chunks whose lengths come from `sizes`,
/// answering and reading plaintext as a peer would, until it fails.
fn feed(conn: &mut Connection, input: &[u8], sizes: &[u8]) {
    let mut out = Vec::new();
    let mut rest = input;
    let mut i = 0;
    while !rest.is_empty() {
        let n = (usize::from(*sizes.get(i % sizes.len().max(1)).unwrap_or(&255)) * 37 + 1)
            .min(rest.len());
        i += 1;
        let mut chunk = &rest[..n];
        rest = &rest[n..];
        while !chunk.is_empty() {
            if conn.read_tls(&mut chunk).is_err() {
                return;
            }
            if conn.process_new_packets().is_err() {
                // The alert goes out, then the connection is done.
                let _ = conn.write_tls(&mut out);
                return;
            }
            let mut plain = [0u8; 4096];
            while let Ok(n @ 1..) = std::io::Read::read(&mut conn.reader(), &mut plain) {
                let _ = std::io::Write::write_all(&mut conn.writer(), &plain[..n]);
            }
            while conn.wants_write() {
                out.clear();
                if conn.write_tls(&mut out).is_err() {
                    return;
                }
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (sizes, input) = rest.split_at(rest.len().min(4));
    match mode % 4 {
        0 => {
            let mut conn: Connection = ServerConnection::new(SERVER.clone()).unwrap().into();
            feed(&mut conn, input, sizes);
        }
        1 => {
            let name = "localhost".try_into().unwrap();
            let mut conn: Connection = ClientConnection::new(CLIENT.clone(), name).unwrap().into();
            let mut hello = Vec::new();
            while conn.wants_write() {
                conn.write_tls(&mut hello).unwrap();
            }
            feed(&mut conn, input, sizes);
        }
        2 => {
            // key (65) || signature (DER, arbitrary) split by the first byte.
            let (key, rest) = input.split_at(input.len().min(65));
            let cut = usize::from(*rest.first().unwrap_or(&0)).min(rest.len());
            let (sig, msg) = rest.split_at(cut);
            for id in [rustls_sm::TLS13_SIGNER_ID, rustls_sm::CERT_SIGNER_ID, ""] {
                let _ = rustls_sm::sm2_verify(id, key, msg, sig);
            }
            for alg in [
                rustls_sm::SM2_SM3,
                rustls_sm::SM2_SM3_OR_EMPTY_ID,
                rustls_sm::SM2SIG_SM3_TLS13,
            ] {
                let _ = alg.verify_signature(key, msg, sig);
            }
        }
        _ => {
            // Certificate and key parsing on arbitrary PEM and DER.
            let _ = rustls_sm::load_certs(input);
            if let Ok(key) = rustls_sm::load_private_key(input) {
                let _ = rustls_sm::rfc8998_only().key_provider.load_private_key(key);
            }
            let _ = rustls_sm::Sm2Key::from_pkcs8_der(input);
            let _ = rustls_sm::Sm2Key::from_sec1_der(input);
        }
    }
});
