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
//! twice, the second time resuming the first session. `SSLKEYLOGFILE`
//! names a file for the secrets (for Wireshark or a check).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use rustls::crypto::CryptoProvider;
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
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    if a.connect.is_empty() || a.ca.is_empty() {
        return Err(
            "usage: client --connect ADDR --ca PEM [--server-name NAME] [--suites LIST] \
                    [--groups LIST] [--rfc8998-only] [--key-update] [--resume]"
                .into(),
        );
    }
    Ok(a)
}

/// The provider with only the named suites and groups, in that order.
fn select(
    mut p: CryptoProvider,
    suites: Option<&str>,
    groups: Option<&str>,
) -> Result<CryptoProvider, String> {
    if let Some(list) = suites {
        let all = std::mem::take(&mut p.cipher_suites);
        for name in list.split(',') {
            let s = all
                .iter()
                .find(|s| rustls_sm::suite_name(s.suite()).eq_ignore_ascii_case(name))
                .ok_or(format!("no suite {name}"))?;
            p.cipher_suites.push(*s);
        }
    }
    if let Some(list) = groups {
        let all = std::mem::take(&mut p.kx_groups);
        for name in list.split(',') {
            let g = all
                .iter()
                .find(|g| rustls_sm::group_name(g.name()).eq_ignore_ascii_case(name))
                .ok_or(format!("no group {name}"))?;
            p.kx_groups.push(*g);
        }
    }
    Ok(p)
}

fn run(a: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let base = if a.rfc8998_only {
        rustls_sm::rfc8998_only()
    } else {
        rustls_sm::provider()
    };
    let provider = select(base, a.suites.as_deref(), a.groups.as_deref())?;
    let mut roots = RootCertStore::empty();
    for cert in rustls_sm::load_certs(&std::fs::read(&a.ca)?)? {
        roots.add(cert)?;
    }
    let mut config = ClientConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_root_certificates(roots)
        .with_no_client_auth();
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

/// One connection: handshake, send `request`, read as many bytes back,
/// close_notify both ways.
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
    let mut tls = rustls::Stream::new(&mut conn, &mut sock);
    tls.write_all(request)?;
    tls.flush()?;
    let mut reply = vec![0u8; request.len()];
    tls.read_exact(&mut reply)?;
    tls.conn.send_close_notify();
    tls.flush()?;
    // The server's close_notify: a clean end of stream.
    let mut rest = Vec::new();
    tls.read_to_end(&mut rest)?;
    if !rest.is_empty() {
        return Err(format!("{} bytes more than sent", rest.len()).into());
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
