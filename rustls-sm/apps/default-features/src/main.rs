//! rustls-sm in an application with rustls's default features and
//! tokio-rustls: `ClientConfig::builder()` and `ServerConfig::builder()`
//! work before anything is installed (one provider feature is on, so
//! rustls can choose its process default), and after
//! `rustls_sm::provider_preferring_sm().install_default()` the same
//! builders make configurations that connect with TLS_SM4_GCM_SM3 over
//! tokio-rustls, with an SM2 and an ECDSA certificate.

use std::process::Command;
use std::sync::Arc;

use rustls::{ClientConfig, RootCertStore, ServerConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::{TlsAcceptor, TlsConnector};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data");

fn read(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DATA}/{name}")).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// What an application does before it knows of rustls-sm: the default
/// builders, which panic if rustls cannot choose a process default.
fn builders_before_install() {
    let client = ClientConfig::builder()
        .with_root_certificates(RootCertStore::empty())
        .with_no_client_auth();
    let _server = ServerConfig::builder().with_no_client_auth();
    let default = rustls::crypto::CryptoProvider::get_default().expect("a process default");
    println!(
        "before install_default: ClientConfig::builder() and ServerConfig::builder() work; \
         the process default has {} suites, the client {} (TLS 1.3 and 1.2)",
        default.cipher_suites.len(),
        client.crypto_provider().cipher_suites.len()
    );
}

/// One connection over 127.0.0.1 with the installed default provider:
/// `len` bytes echoed; returns the suite both sides negotiated.
async fn echo_once(cert: &str, len: usize) -> String {
    let chain = rustls_sm::load_certs(&read(&format!("{cert}-chain.pem"))).unwrap();
    let key = rustls_sm::load_private_key(&read(&format!("{cert}.key"))).unwrap();
    let server = ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    let mut roots = RootCertStore::empty();
    for c in rustls_sm::load_certs(&read(&format!("{cert}-ca.pem"))).unwrap() {
        roots.add(c).unwrap();
    }
    let client = ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();

    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let acceptor = TlsAcceptor::from(Arc::new(server));
    let serve = tokio::spawn(async move {
        let (sock, _) = listener.accept().await.unwrap();
        let mut tls = acceptor.accept(sock).await.unwrap();
        let suite = tls.get_ref().1.negotiated_cipher_suite().unwrap().suite();
        let mut buf = vec![0u8; 65536];
        loop {
            let n = tls.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            tls.write_all(&buf[..n]).await.unwrap();
        }
        tls.shutdown().await.unwrap();
        rustls_sm::suite_name(suite)
    });

    let sock = TcpStream::connect(addr).await.unwrap();
    let connector = TlsConnector::from(Arc::new(client));
    let tls = connector
        .connect("localhost".try_into().unwrap(), sock)
        .await
        .unwrap();
    let suite = rustls_sm::suite_name(tls.get_ref().1.negotiated_cipher_suite().unwrap().suite());
    let data: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
    let (mut rd, mut wr) = tokio::io::split(tls);
    let sent = data.clone();
    let writer = tokio::spawn(async move {
        wr.write_all(&sent).await.unwrap();
        wr.shutdown().await.unwrap();
    });
    let mut back = Vec::new();
    rd.read_to_end(&mut back).await.unwrap();
    writer.await.unwrap();
    assert!(back == data, "{cert}: {len} bytes echoed byte-exact");
    let server_suite = serve.await.unwrap();
    assert_eq!(suite, server_suite);
    suite
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--builders-only") {
        builders_before_install();
        return;
    }
    // In a process of its own: it installs rustls's default provider.
    let exe = std::env::current_exe().unwrap();
    let status = Command::new(exe).arg("--builders-only").status().unwrap();
    assert!(status.success(), "the default builders panicked: {status}");

    rustls_sm::provider_preferring_sm()
        .install_default()
        .expect("no process default installed yet");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for cert in ["sm2", "ecdsa"] {
        let suite = rt.block_on(echo_once(cert, 1 << 20));
        assert_eq!(suite, "TLS_SM4_GCM_SM3", "{cert}");
        println!(
            "tokio-rustls with the installed rustls-sm provider, {cert} certificate: {suite}, 1 MiB echoed"
        );
    }
    println!("default-features app: 3 passed, 0 failed");
}
