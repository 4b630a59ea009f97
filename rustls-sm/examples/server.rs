//! A TLS 1.3 echo server on the rustls-sm provider: sends back what each
//! client sends until the client's close_notify, one connection at a
//! time, and prints one line per connection naming the negotiated
//! version, suite and group (or the error).
//!
//! ```text
//! server --listen 127.0.0.1:4433 --cert sm2-chain.pem --key sm2.key
//! ```
//! Options: `--suites A,B`, `--groups A,B` (names as printed, in order of
//! preference), `--rfc8998-only` (start from `rfc8998_only()`),
//! `--key-update` (send a KeyUpdate after each handshake),
//! `--connections N` (exit after N connections), `--client-ca PEM`
//! (require a client certificate and verify it against that CA; each line
//! then names the client's certificate by its SM3 fingerprint). For the
//! interop test only: `--cv-signer-id ID` signs the SM2 CertificateVerify
//! under the signer ID `ID` instead of RFC 8998's `TLSv1.3+GM+Cipher+Suite`
//! (so that a peer's rejection of another ID can be checked). The first
//! line of output is `listening on ADDR` (with the port when `:0` was
//! asked).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

mod common;
use common::{certified_key, select};
use rustls::pki_types::CertificateDer;
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig, ServerConnection};
use sm3_simd::{Digest, Sm3};

struct Args {
    listen: String,
    cert: String,
    key: String,
    suites: Option<String>,
    groups: Option<String>,
    rfc8998_only: bool,
    key_update: bool,
    connections: Option<u64>,
    client_ca: Option<String>,
    cv_signer_id: Option<String>,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        listen: String::new(),
        cert: String::new(),
        key: String::new(),
        suites: None,
        groups: None,
        rfc8998_only: false,
        key_update: false,
        connections: None,
        client_ca: None,
        cv_signer_id: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--listen" => a.listen = value()?,
            "--cert" => a.cert = value()?,
            "--key" => a.key = value()?,
            "--suites" => a.suites = Some(value()?),
            "--groups" => a.groups = Some(value()?),
            "--rfc8998-only" => a.rfc8998_only = true,
            "--key-update" => a.key_update = true,
            "--connections" => a.connections = Some(value()?.parse().map_err(|e| format!("{e}"))?),
            "--client-ca" => a.client_ca = Some(value()?),
            "--cv-signer-id" => a.cv_signer_id = Some(value()?),
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    if a.listen.is_empty() || a.cert.is_empty() || a.key.is_empty() {
        return Err(
            "usage: server --listen ADDR --cert PEM --key PEM [--suites LIST] \
                    [--groups LIST] [--rfc8998-only] [--key-update] [--connections N] \
                    [--client-ca PEM] [--cv-signer-id ID (interop test: the SM2 \
                    CertificateVerify under signer ID ID)]"
                .into(),
        );
    }
    Ok(a)
}

fn config(a: &Args) -> Result<Arc<ServerConfig>, Box<dyn std::error::Error>> {
    let base = if a.rfc8998_only {
        rustls_sm::rfc8998_only()
    } else {
        rustls_sm::provider()
    };
    let provider = Arc::new(select(base, a.suites.as_deref(), a.groups.as_deref())?);
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])?;
    let builder = match &a.client_ca {
        Some(ca) => {
            let mut roots = RootCertStore::empty();
            for cert in rustls_sm::load_certs(&std::fs::read(ca)?)? {
                roots.add(cert)?;
            }
            // Client certificates and their CertificateVerify checked with
            // the same provider (SM2 among its algorithms).
            let verifier =
                WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                    .build()?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let key = certified_key(&a.cert, &a.key, a.cv_signer_id.as_deref(), &provider)?;
    let mut config = builder.with_cert_resolver(key);
    // Session tickets for resumption, sealed with SM4-GCM (whatever the suite).
    config.ticketer = rustls_sm::Ticketer::new()?;
    Ok(Arc::new(config))
}

/// Echoes one client; returns the connection's description and the
/// number of bytes echoed.
fn serve(
    config: &Arc<ServerConfig>,
    sock: &mut TcpStream,
    key_update: bool,
) -> Result<String, (String, rustls::Error)> {
    let io = |e: std::io::Error, conn: &ServerConnection| {
        let err = e
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
            .cloned()
            .unwrap_or(rustls::Error::General(e.to_string()));
        (rustls_sm::describe(conn), err)
    };
    let mut conn = ServerConnection::new(config.clone()).map_err(|e| ("none".to_string(), e))?;
    while conn.is_handshaking() {
        if let Err(e) = conn.complete_io(sock) {
            return Err(io(e, &conn));
        }
    }
    if key_update {
        conn.refresh_traffic_keys()
            .map_err(|e| (rustls_sm::describe(&conn), e))?;
    }
    let mut echoed = 0usize;
    let mut buf = vec![0u8; 65536];
    loop {
        let n = match rustls::Stream::new(&mut conn, sock).read(&mut buf) {
            Ok(n) => n,
            Err(e) => return Err(io(e, &conn)),
        };
        if n == 0 {
            break;
        }
        let mut tls = rustls::Stream::new(&mut conn, sock);
        if let Err(e) = tls.write_all(&buf[..n]).and_then(|()| tls.flush()) {
            return Err(io(e, &conn));
        }
        echoed += n;
    }
    conn.send_close_notify();
    let _ = conn.complete_io(sock);
    let client_cert = match conn.peer_certificates() {
        Some([leaf, ..]) => format!(" client_cert={}", fingerprint(leaf)),
        _ => String::new(),
    };
    Ok(format!(
        "{} echoed={echoed}{client_cert}",
        rustls_sm::describe(&conn)
    ))
}

/// `sm3:` and the SM3 digest of a certificate's DER in hex (as `openssl
/// x509 -fingerprint -sm3` prints it, without the colons).
fn fingerprint(cert: &CertificateDer<'_>) -> String {
    let hex: String = (Sm3::digest(cert.as_ref()).iter())
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sm3:{hex}")
}

fn main() {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let (config, listener) = match config(&a).and_then(|c| Ok((c, TcpListener::bind(&a.listen)?))) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    println!("listening on {}", listener.local_addr().unwrap());
    let mut served = 0u64;
    for sock in listener.incoming() {
        let Ok(mut sock) = sock else { continue };
        let _ = sock.set_read_timeout(Some(Duration::from_secs(20)));
        match serve(&config, &mut sock, a.key_update) {
            Ok(line) => println!("{line}"),
            Err((line, e)) => println!("{line} error: {e:?}"),
        }
        let _ = std::io::stdout().flush();
        served += 1;
        if a.connections.is_some_and(|n| served >= n) {
            break;
        }
    }
}
