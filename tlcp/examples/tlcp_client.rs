//! A TLCP client: connects, sends its standard input, prints the reply on
//! standard output as it arrives (what a failed connection delivered
//! before it failed shows there), and says what it negotiated on standard
//! error (`suite=... resumed=...`). With `--connections N` it connects N
//! times with one configuration (the later ones resume the session).
//!
//! tlcp-client --connect ADDR --ca F --server-name H [--sign-cert F
//!     --sign-key F --enc-cert F --enc-key F] [--suites NAMES]
//!     [--connections N]
//!
//! With `SSLKEYLOGFILE` set, both examples append each master secret there
//! (NSS key log format).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;

use tlcp::{CipherSuite, ClientConfig, ClientConnection, Identity, Stream};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut map = std::collections::HashMap::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let v = args.next().ok_or(format!("{a} needs a value"))?;
        map.insert(a, v);
    }
    let need = |k: &str| {
        map.get(k).ok_or(format!("usage: tlcp-client --connect ADDR --ca F --server-name H [--sign-cert F --sign-key F --enc-cert F --enc-key F] [--suites NAMES] (missing {k})"))
    };
    let read = |k: &str| -> Result<Vec<u8>, String> {
        std::fs::read(need(k)?).map_err(|e| format!("{k}: {e}"))
    };
    let mut config = ClientConfig::new(&read("--ca")?)?;
    if let Some(list) = map.get("--suites") {
        let suites = list
            .split(',')
            .map(|n| CipherSuite::from_name(n).ok_or(format!("no suite {n}")))
            .collect::<Result<Vec<_>, _>>()?;
        config = config.with_suites(&suites);
    }
    if map.contains_key("--sign-cert") {
        config = config.with_identity(Identity::from_pem(
            &read("--sign-cert")?,
            &read("--sign-key")?,
            &read("--enc-cert")?,
            &read("--enc-key")?,
        )?);
    }
    if std::env::var_os("SSLKEYLOGFILE").is_some() {
        config = config.with_key_log(Arc::new(tlcp::KeyLogFile::new()));
    }
    let config = Arc::new(config);
    let name = tlcp::ServerName::try_from(need("--server-name")?.clone())?;
    let connections: usize = map.get("--connections").map_or(Ok(1), |n| n.parse())?;
    let mut input = Vec::new();
    std::io::stdin().read_to_end(&mut input)?;
    for _ in 0..connections {
        let mut sock = TcpStream::connect(need("--connect")?)?;
        let mut conn = ClientConnection::new(config.clone(), name.clone())?;
        conn.complete_io(&mut sock)?;
        {
            let mut stream = Stream::new(&mut conn, &mut sock);
            stream.write_all(&input)?;
            let mut buf = vec![0u8; 65536];
            let mut left = input.len();
            let mut out = std::io::stdout().lock();
            while left > 0 {
                let n = stream.read(&mut buf[..left.min(65536)])?;
                if n == 0 {
                    return Err("the connection ended before the whole reply".into());
                }
                out.write_all(&buf[..n])?;
                out.flush()?;
                left -= n;
            }
        }
        eprintln!(
            "version={} suite={} resumed={}",
            conn.protocol_version().unwrap_or("none"),
            conn.negotiated_cipher_suite().map_or("none", |s| s.name()),
            conn.is_resumed().unwrap_or(false)
        );
        conn.send_close_notify();
        while conn.wants_write() {
            conn.write_tls(&mut sock)?;
        }
    }
    Ok(())
}
