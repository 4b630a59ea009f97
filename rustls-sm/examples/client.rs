//! A TLS 1.3 client on the rustls-sm provider: connects, sends its
//! standard input, prints the reply on standard output and what was
//! negotiated on standard error.
//!
//! ```text
//! client --connect 127.0.0.1:4433 --ca sm2-ca.pem --server-name localhost < request
//! ```
//! Options: `--suites A,B` and `--groups A,B` keep those of the provider
//! (names as printed, e.g. TLS_SM4_GCM_SM3, curveSM2, X25519), in the
//! given order; `--rfc8998-only` starts from `rfc8998_only()`;
//! `--key-update` sends a KeyUpdate before the data; `--resume` connects
//! twice, the second time resuming the first session; `--cert PEM --key
//! PEM` are a client certificate chain and its key, for servers that ask
//! for one. For the interop test only: `--cv-signer-id ID` signs the
//! client's SM2 CertificateVerify under the signer ID `ID` instead of
//! RFC 8998's `TLSv1.3+GM+Cipher+Suite` (so that a server's rejection of
//! another ID can be checked). `SSLKEYLOGFILE` names a file for the
//! secrets (for Wireshark or a check).

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod common;
use common::{certified_key, select};
use rustls::{ClientConfig, ClientConnection, KeyLogFile, RootCertStore};

struct Args {
    connect: String,
    ca: String,
    server_name: String,
    suites: Option<String>,
    groups: Option<String>,
    rfc8998_only: bool,
    key_update: bool,
    resume: bool,
    cert: Option<String>,
    key: Option<String>,
    cv_signer_id: Option<String>,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        connect: String::new(),
        ca: String::new(),
        server_name: "localhost".into(),
        suites: None,
        groups: None,
        rfc8998_only: false,
        key_update: false,
        resume: false,
        cert: None,
        key: None,
        cv_signer_id: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--connect" => a.connect = value()?,
            "--ca" => a.ca = value()?,
            "--server-name" => a.server_name = value()?,
            "--suites" => a.suites = Some(value()?),
            "--groups" => a.groups = Some(value()?),
            "--rfc8998-only" => a.rfc8998_only = true,
            "--key-update" => a.key_update = true,
            "--resume" => a.resume = true,
            "--cert" => a.cert = Some(value()?),
            "--key" => a.key = Some(value()?),
            "--cv-signer-id" => a.cv_signer_id = Some(value()?),
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    if a.connect.is_empty()
        || a.ca.is_empty()
        || a.cert.is_some() != a.key.is_some()
        || (a.cv_signer_id.is_some() && a.cert.is_none())
    {
        return Err(
            "usage: client --connect ADDR --ca PEM [--server-name NAME] [--suites LIST] \
                    [--groups LIST] [--rfc8998-only] [--key-update] [--resume] \
                    [--cert PEM --key PEM [--cv-signer-id ID (interop test: the SM2 \
                    CertificateVerify under signer ID ID)]]"
                .into(),
        );
    }
    Ok(a)
}

fn run(a: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let base = if a.rfc8998_only {
        rustls_sm::rfc8998_only()
    } else {
        rustls_sm::provider()
    };
    let provider = Arc::new(select(base, a.suites.as_deref(), a.groups.as_deref())?);
    let mut roots = RootCertStore::empty();
    for cert in rustls_sm::load_certs(&std::fs::read(&a.ca)?)? {
        roots.add(cert)?;
    }
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_root_certificates(roots);
    let mut config = match (&a.cert, &a.key) {
        (Some(cert), Some(key)) => builder.with_client_cert_resolver(certified_key(
            cert,
            key,
            a.cv_signer_id.as_deref(),
            &provider,
        )?),
        _ => builder.with_no_client_auth(),
    };
    config.key_log = Arc::new(KeyLogFile::new());
    let config = Arc::new(config);

    let mut request = Vec::new();
    std::io::stdin().read_to_end(&mut request)?;

    let mut reply = Vec::new();
    for _ in 0..if a.resume { 2 } else { 1 } {
        reply = exchange(a, &config, &request)?;
    }
    std::io::stdout().write_all(&reply)?;
    Ok(())
}

/// One connection: handshake, send `request` while reading as many bytes
/// back (an echo server answers while we still send: neither side may
/// wait for the other's reads), close_notify both ways.
fn exchange(
    a: &Args,
    config: &Arc<ClientConfig>,
    request: &[u8],
) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    let name = a.server_name.clone().try_into()?;
    let mut conn = ClientConnection::new(config.clone(), name)?;
    let mut sock = TcpStream::connect(&a.connect)?;
    sock.set_read_timeout(Some(Duration::from_secs(20)))?;
    while conn.is_handshaking() {
        conn.complete_io(&mut sock)?;
    }
    eprintln!("{}", rustls_sm::describe(&conn));
    if a.key_update {
        conn.refresh_traffic_keys()?;
    }

    sock.set_nonblocking(true)?;
    let deadline = Instant::now() + Duration::from_secs(60);
    let (mut sent, mut reply, mut closing, mut eof) = (0, Vec::new(), false, false);
    let mut buf = vec![0u8; 65536];
    while !eof {
        let mut progress = false;
        if sent < request.len() {
            let n = conn.writer().write(&request[sent..])?;
            sent += n;
            progress |= n > 0;
        } else if reply.len() >= request.len() && !closing {
            conn.send_close_notify();
            closing = true;
        }
        while conn.wants_write() {
            match conn.write_tls(&mut sock) {
                Ok(n) => progress |= n > 0,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => return Err(e.into()),
            }
        }
        match conn.read_tls(&mut sock) {
            Ok(0) => return Err("connection closed without close_notify".into()),
            Ok(_) => {
                progress = true;
                let state = conn.process_new_packets();
                // What the peer sent before an error (an alert) is still its.
                loop {
                    match conn.reader().read(&mut buf) {
                        Ok(0) => {
                            eof = true;
                            break;
                        }
                        Ok(n) => reply.extend_from_slice(&buf[..n]),
                        Err(_) => break,
                    }
                }
                if let Err(e) = state {
                    // Send our alert before giving up.
                    let _ = conn.write_tls(&mut sock);
                    return Err(e.into());
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => return Err(e.into()),
        }
        if Instant::now() > deadline {
            return Err("timed out".into());
        }
        if !progress {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    if reply.len() != request.len() {
        return Err(format!("sent {} bytes, got {} back", request.len(), reply.len()).into());
    }
    Ok(reply)
}

fn main() {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(&a) {
        eprintln!("error: {e:?}");
        std::process::exit(1);
    }
}
