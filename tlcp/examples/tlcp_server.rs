//! A TLCP echo server: sends back what each connection sends, one
//! connection after another, until killed. With `--ca` it requires and
//! verifies client certificates. One line per connection on standard
//! output: `suite=... resumed=... client_cert=... echoed=N` or `error=...`.
//!
//! tlcp-server --listen ADDR --sign-cert F --sign-key F --enc-cert F
//!     --enc-key F [--ca F] [--suites NAMES] [--optional-client-auth]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

use tlcp::{CipherSuite, ClientAuth, Identity, ServerConfig, ServerConnection, Stream};

fn arg_map() -> Result<std::collections::HashMap<String, String>, String> {
    let mut map = std::collections::HashMap::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--optional-client-auth" => {
                map.insert(a, String::new());
            }
            "--listen" | "--sign-cert" | "--sign-key" | "--enc-cert" | "--enc-key" | "--ca"
            | "--suites" => {
                map.insert(a, args.next().ok_or("missing value")?);
            }
            _ => return Err(format!("unknown argument {a}")),
        }
    }
    Ok(map)
}

fn suites(list: &str) -> Result<Vec<CipherSuite>, String> {
    list.split(',')
        .map(|n| CipherSuite::from_name(n).ok_or(format!("no suite {n}")))
        .collect()
}

fn serve(config: &Arc<ServerConfig>, sock: &mut TcpStream) -> Result<String, String> {
    let mut conn = ServerConnection::new(config.clone());
    let mut echoed = 0usize;
    let mut buf = vec![0u8; 65536];
    let mut stream = Stream::new(&mut conn, sock);
    loop {
        let n = match stream.read(&mut buf) {
            Ok(n) => n,
            Err(e) => {
                return Err(format!("{e}"));
            }
        };
        if n == 0 {
            break;
        }
        stream.write_all(&buf[..n]).map_err(|e| e.to_string())?;
        echoed += n;
    }
    conn.send_close_notify();
    while conn.wants_write() {
        if conn.write_tls(sock).is_err() {
            break;
        }
    }
    Ok(format!(
        "suite={} resumed={} client_cert={} echoed={echoed}",
        conn.negotiated_cipher_suite().map_or("none", |s| s.name()),
        conn.is_resumed().unwrap_or(false),
        conn.peer_certificates().is_some(),
    ))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a = arg_map()?;
    let need = |k: &str| {
        a.get(k).ok_or(format!("usage: tlcp-server --listen ADDR --sign-cert F --sign-key F --enc-cert F --enc-key F [--ca F] [--suites NAMES] (missing {k})"))
    };
    let read = |k: &str| -> Result<Vec<u8>, String> {
        std::fs::read(need(k)?).map_err(|e| format!("{k}: {e}"))
    };
    let identity = Identity::from_pem(
        &read("--sign-cert")?,
        &read("--sign-key")?,
        &read("--enc-cert")?,
        &read("--enc-key")?,
    )?;
    let mut config = ServerConfig::new(identity);
    if let Some(list) = a.get("--suites") {
        config = config.with_suites(&suites(list)?);
    }
    if a.contains_key("--ca") {
        let auth = if a.contains_key("--optional-client-auth") {
            ClientAuth::Optional
        } else {
            ClientAuth::Required
        };
        config = config.with_client_auth(&read("--ca")?, auth)?;
    }
    if std::env::var_os("SSLKEYLOGFILE").is_some() {
        config = config.with_key_log(Arc::new(tlcp::KeyLogFile::new()));
    }
    let config = Arc::new(config);
    let listener = TcpListener::bind(need("--listen")?)?;
    eprintln!("listening on {}", listener.local_addr()?);
    for sock in listener.incoming() {
        let mut sock = sock?;
        let line = serve(&config, &mut sock).unwrap_or_else(|e| format!("error={e}"));
        println!("{line}");
        std::io::stdout().flush()?;
    }
    Ok(())
}
