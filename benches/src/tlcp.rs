//! TLCP in memory for the benches: a `tlcp` client and server joined by
//! byte buffers, for bulk transfer (the `tlcp` rows of `speed`, and
//! `tlcpspeed`) and full handshakes. Certificates from `tlcp/tests/data`.

use std::io::{Read, Write};
use std::sync::Arc;

use tlcp::{
    CipherSuite, ClientAuth, ClientConfig, ClientConnection, ConnectionCommon, Identity,
    ServerConfig, ServerConnection,
};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tlcp/tests/data");

fn read(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DATA}/{name}")).unwrap()
}

fn identity(who: &str) -> Identity {
    Identity::from_pem(
        &read(&format!("{who}_sign.crt")),
        &read(&format!("{who}_sign.key")),
        &read(&format!("{who}_enc.crt")),
        &read(&format!("{who}_enc.key")),
    )
    .unwrap()
}

/// A client and a server configuration for `suite` (client certificates
/// for the ECDHE suites, which need them).
pub fn configs(suite: CipherSuite) -> (Arc<ClientConfig>, Arc<ServerConfig>) {
    let ecdhe = matches!(
        suite,
        CipherSuite::EcdheSm4CbcSm3 | CipherSuite::EcdheSm4GcmSm3
    );
    // Full handshakes every time (no session resumption).
    let mut client = ClientConfig::new(&read("ca.crt"))
        .unwrap()
        .with_suites(&[suite])
        .with_resumption(false);
    let mut server = ServerConfig::new(identity("server")).with_suites(&[suite]);
    if ecdhe {
        client = client.with_identity(identity("client"));
        server = server
            .with_client_auth(&read("ca.crt"), ClientAuth::Required)
            .unwrap();
    }
    (Arc::new(client), Arc::new(server))
}

/// Moves what `from` has to send into `to` and processes it.
fn pump(from: &mut ConnectionCommon, to: &mut ConnectionCommon, wire: &mut Vec<u8>) {
    wire.clear();
    while from.wants_write() {
        from.write_tls(wire).unwrap();
    }
    let mut rest = &wire[..];
    while !rest.is_empty() {
        to.read_tls(&mut rest).unwrap();
        to.process_new_packets().unwrap();
    }
}

/// A connected pair.
#[allow(missing_debug_implementations)] // connections and buffers
pub struct Pair {
    client: ClientConnection,
    server: ServerConnection,
    wire: Vec<u8>,
    sink: Vec<u8>,
}

impl Pair {
    /// A full handshake (it also serves as the handshake bench).
    pub fn connect(client: &Arc<ClientConfig>, server: &Arc<ServerConfig>) -> Self {
        let mut c = ClientConnection::new(client.clone(), "localhost".try_into().unwrap()).unwrap();
        let mut s = ServerConnection::new(server.clone());
        let mut wire = Vec::with_capacity(1 << 16);
        while c.is_handshaking() || s.is_handshaking() {
            pump(&mut c, &mut s, &mut wire);
            pump(&mut s, &mut c, &mut wire);
        }
        Self {
            client: c,
            server: s,
            wire,
            sink: vec![0u8; 1 << 16],
        }
    }

    /// Sends `data` from client to server (records of up to 16 KiB,
    /// sealed, moved and opened), reading it all out on the server.
    pub fn transfer(&mut self, data: &[u8]) {
        self.client.writer().write_all(data).unwrap();
        pump(&mut self.client, &mut self.server, &mut self.wire);
        let mut left = data.len();
        while left > 0 {
            let n = self.server.reader().read(&mut self.sink).unwrap();
            left -= n;
        }
    }
}
