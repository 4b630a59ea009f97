//! tlcp against arbitrary peer bytes: a server (client certificates
//! optional) and a client with its own double certificate, each fed
//! whatever the fuzzer makes in the chunks it chooses, for every suite.
//! No input may panic.
#![no_main]

use std::io::{Read, Write};
use std::sync::{Arc, LazyLock};

use libfuzzer_sys::fuzz_target;
use tlcp::{
    ClientAuth, ClientConfig, ClientConnection, ConnectionCommon, Identity, ServerConfig,
    ServerConnection,
};

macro_rules! data {
    ($f:literal) => {
        include_bytes!(concat!("../../tlcp/tests/data/", $f))
    };
}

fn identity(sign: &[u8], sign_key: &[u8], enc: &[u8], enc_key: &[u8]) -> Identity {
    Identity::from_pem(sign, sign_key, enc, enc_key).unwrap()
}

static SERVER: LazyLock<Arc<ServerConfig>> = LazyLock::new(|| {
    let id = identity(
        data!("server_sign.crt"),
        data!("server_sign.key"),
        data!("server_enc.crt"),
        data!("server_enc.key"),
    );
    Arc::new(
        ServerConfig::new(id)
            .with_client_auth(data!("ca.crt"), ClientAuth::Optional)
            .unwrap(),
    )
});

/// A client per suite, each offering that suite alone.
static CLIENTS: LazyLock<Vec<Arc<ClientConfig>>> = LazyLock::new(|| {
    tlcp::CipherSuite::ALL
        .iter()
        .map(|&suite| {
            let id = identity(
                data!("client_sign.crt"),
                data!("client_sign.key"),
                data!("client_enc.crt"),
                data!("client_enc.key"),
            );
            Arc::new(
                ClientConfig::new(data!("ca.crt"))
                    .unwrap()
                    .with_suites(&[suite])
                    .with_identity(id),
            )
        })
        .collect()
});

/// Feeds `input` in chunks sized from `sizes`, as a peer would.
fn feed(conn: &mut ConnectionCommon, input: &[u8], sizes: &[u8]) {
    let mut sink = Vec::new();
    let mut rest = input;
    let mut i = 0;
    while !rest.is_empty() {
        let size = sizes.get(i % sizes.len().max(1)).copied().unwrap_or(255);
        let n = (usize::from(size) * 37 + 1).min(rest.len());
        i += 1;
        let mut chunk = &rest[..n];
        rest = &rest[n..];
        while !chunk.is_empty() {
            if conn.read_tls(&mut chunk).is_err() {
                return;
            }
            let failed = conn.process_new_packets().is_err();
            while conn.wants_write() {
                sink.clear();
                let _ = conn.write_tls(&mut sink);
            }
            if failed {
                return;
            }
            let mut plain = [0u8; 4096];
            while let Ok(n @ 1..) = conn.reader().read(&mut plain) {
                let _ = conn.writer().write_all(&plain[..n]);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (sizes, input) = rest.split_at(rest.len().min(4));
    if mode % 2 == 0 {
        let mut conn = ServerConnection::new(SERVER.clone());
        feed(&mut conn, input, sizes);
    } else {
        let config = CLIENTS[usize::from(mode / 2) % 4].clone();
        let mut conn = ClientConnection::new(config, "localhost".try_into().unwrap()).unwrap();
        let mut hello = Vec::new();
        while conn.wants_write() {
            conn.write_tls(&mut hello).unwrap();
        }
        feed(&mut conn, input, sizes);
    }
});
