//! TLS 1.3 in memory for the benches: a rustls client and server joined
//! by byte buffers, for bulk transfer (the `tls13` rows of `speed`, the
//! `tls` criterion bench) and full handshakes. Certificates from
//! `rustls-sm/tests/data` (ECDSA P-256 and SM2 chains).

use std::io::{Read, Write};
use std::sync::Arc;

use rustls::crypto::{CryptoProvider, SupportedKxGroup};
use rustls::{ClientConfig, ClientConnection, RootCertStore, ServerConfig, ServerConnection};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../rustls-sm/tests/data");

/// One configuration: a suite (by name), a group and a certificate type.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    /// The `speed` mode and criterion name.
    pub name: &'static str,
    /// Our provider (`rustls_sm::provider()`) or *ring*'s.
    pub ours: bool,
    /// The cipher suite, as `rustls_sm::suite_name` prints it.
    pub suite: &'static str,
    /// The group, as `rustls_sm::group_name` prints it.
    pub group: &'static str,
    /// `"sm2"` or `"ecdsa"`.
    pub cert: &'static str,
}

/// The bulk-transfer cases: our two suites, then the base provider's.
pub const BULK: [Case; 4] = [
    Case {
        name: "sm4-gcm-sm3",
        ours: true,
        suite: "TLS_SM4_GCM_SM3",
        group: "curveSM2",
        cert: "sm2",
    },
    Case {
        name: "sm4-ccm-sm3",
        ours: true,
        suite: "TLS_SM4_CCM_SM3",
        group: "curveSM2",
        cert: "sm2",
    },
    Case {
        name: "aes-128-gcm-sha256",
        ours: false,
        suite: "TLS13_AES_128_GCM_SHA256",
        group: "X25519",
        cert: "ecdsa",
    },
    Case {
        name: "chacha20-poly1305-sha256",
        ours: false,
        suite: "TLS13_CHACHA20_POLY1305_SHA256",
        group: "X25519",
        cert: "ecdsa",
    },
];

/// The handshake cases: curveSM2 + sm2sig_sm3, X25519 + ECDSA P-256.
pub const HANDSHAKES: [Case; 2] = [
    Case {
        name: "sm4-gcm-sm3/curveSM2/sm2sig_sm3",
        ours: true,
        suite: "TLS_SM4_GCM_SM3",
        group: "curveSM2",
        cert: "sm2",
    },
    Case {
        name: "aes-128-gcm-sha256/X25519/ecdsa-p256",
        ours: false,
        suite: "TLS13_AES_128_GCM_SHA256",
        group: "X25519",
        cert: "ecdsa",
    },
];

fn read(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DATA}/{name}")).expect("rustls-sm/tests/data")
}

fn provider(case: &Case) -> CryptoProvider {
    let mut p = if case.ours {
        rustls_sm::provider()
    } else {
        rustls::crypto::ring::default_provider()
    };
    p.cipher_suites
        .retain(|s| rustls_sm::suite_name(s.suite()) == case.suite);
    let groups: Vec<&'static dyn SupportedKxGroup> = rustls_sm::provider()
        .kx_groups
        .into_iter()
        .filter(|g| rustls_sm::group_name(g.name()) == case.group)
        .collect();
    p.kx_groups = groups;
    assert_eq!(p.cipher_suites.len(), 1, "{case:?}");
    assert_eq!(p.kx_groups.len(), 1, "{case:?}");
    p
}

/// The client and server configurations of a case.
pub fn configs(case: &Case) -> (Arc<ClientConfig>, Arc<ServerConfig>) {
    let mut roots = RootCertStore::empty();
    for c in rustls_sm::load_certs(&read(&format!("{}-ca.pem", case.cert))).unwrap() {
        roots.add(c).unwrap();
    }
    let client = ClientConfig::builder_with_provider(Arc::new(provider(case)))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let chain = rustls_sm::load_certs(&read(&format!("{}-chain.pem", case.cert))).unwrap();
    let key = rustls_sm::load_private_key(&read(&format!("{}.key", case.cert))).unwrap();
    let mut server = ServerConfig::builder_with_provider(Arc::new(provider(case)))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    // Full handshakes only: no tickets to make or send.
    server.send_tls13_tickets = 0;
    (Arc::new(client), Arc::new(server))
}

/// A connected pair, and the buffers of the transfer.
#[derive(Debug)]
pub struct Pair {
    client: ClientConnection,
    server: ServerConnection,
    wire: Vec<u8>,
    sink: Vec<u8>,
}

fn pump(from: &mut dyn WriteTls, to: &mut dyn ReadTls, wire: &mut Vec<u8>) -> bool {
    wire.clear();
    while from.wants() {
        from.write(wire);
    }
    let mut rest = &wire[..];
    while !rest.is_empty() {
        to.read(&mut rest);
    }
    !wire.is_empty()
}

trait WriteTls {
    fn wants(&self) -> bool;
    fn write(&mut self, wire: &mut Vec<u8>);
}
trait ReadTls {
    fn read(&mut self, rest: &mut &[u8]);
}

macro_rules! tls_io {
    ($t:ty) => {
        impl WriteTls for $t {
            fn wants(&self) -> bool {
                self.wants_write()
            }
            fn write(&mut self, wire: &mut Vec<u8>) {
                self.write_tls(wire).unwrap();
            }
        }
        impl ReadTls for $t {
            fn read(&mut self, rest: &mut &[u8]) {
                self.read_tls(rest).unwrap();
                self.process_new_packets().unwrap();
            }
        }
    };
}
tls_io!(ClientConnection);
tls_io!(ServerConnection);

/// One full handshake in memory (both sides' work).
pub fn handshake(client: &Arc<ClientConfig>, server: &Arc<ServerConfig>) -> Pair {
    let name = "localhost".try_into().unwrap();
    let mut pair = Pair {
        client: ClientConnection::new(client.clone(), name).unwrap(),
        server: ServerConnection::new(server.clone()).unwrap(),
        wire: Vec::with_capacity(1 << 16),
        sink: vec![0; 1 << 16],
    };
    for _ in 0..10 {
        let a = pump(&mut pair.client, &mut pair.server, &mut pair.wire);
        let b = pump(&mut pair.server, &mut pair.client, &mut pair.wire);
        if !a && !b {
            break;
        }
    }
    assert!(!pair.client.is_handshaking() && !pair.server.is_handshaking());
    pair
}

impl Pair {
    /// A connected pair for `case`.
    pub fn new(case: &Case) -> Self {
        let (c, s) = configs(case);
        handshake(&c, &s)
    }

    /// The client sends `data`, the server reads it all: each record
    /// sealed, framed, deframed and opened. In rounds of what rustls's
    /// buffers take (64 KiB of records out, 16 KiB of plaintext in).
    pub fn transfer(&mut self, data: &[u8]) {
        let (mut sent, mut got) = (0, 0);
        while got < data.len() {
            sent += self.client.writer().write(&data[sent..]).unwrap();
            self.wire.clear();
            while self.client.wants_write() {
                self.client.write_tls(&mut self.wire).unwrap();
            }
            let mut rest = &self.wire[..];
            while !rest.is_empty() {
                self.server.read(&mut rest);
                loop {
                    match self.server.reader().read(&mut self.sink) {
                        Ok(n) if n > 0 => got += n,
                        Err(e) if e.kind() != std::io::ErrorKind::WouldBlock => panic!("{e}"),
                        _ => break,
                    }
                }
            }
        }
        assert_eq!(got, data.len());
    }
}

/// Bytes received and not yet processed.
struct Incoming {
    bytes: Vec<u8>,
    len: usize,
}

impl Incoming {
    /// The free space at the end, where the peer writes.
    fn free(&mut self) -> &mut [u8] {
        &mut self.bytes[self.len..]
    }
}

/// One side of a connection on rustls's unbuffered API: the application
/// owns the buffers. A side seals records straight into its peer's
/// incoming buffer (in memory there is no socket between them), where the
/// peer opens them.
struct Side<C> {
    conn: C,
    incoming: Incoming,
}

/// `process_tls_records` of both connection types.
trait Unbuffered {
    type Data;
    fn process<'c, 'i>(
        &'c mut self,
        incoming: &'i mut [u8],
    ) -> rustls::unbuffered::UnbufferedStatus<'c, 'i, Self::Data>;
}

macro_rules! unbuffered {
    ($conn:ty, $data:ty) => {
        impl Unbuffered for $conn {
            type Data = $data;
            fn process<'c, 'i>(
                &'c mut self,
                incoming: &'i mut [u8],
            ) -> rustls::unbuffered::UnbufferedStatus<'c, 'i, Self::Data> {
                self.process_tls_records(incoming)
            }
        }
    };
}
unbuffered!(
    rustls::client::UnbufferedClientConnection,
    rustls::client::ClientConnectionData
);
unbuffered!(
    rustls::server::UnbufferedServerConnection,
    rustls::server::ServerConnectionData
);

impl<C: Unbuffered> Side<C> {
    fn new(conn: C, capacity: usize) -> Self {
        let bytes = vec![0; capacity];
        Side {
            conn,
            incoming: Incoming { bytes, len: 0 },
        }
    }

    /// Runs the state machine until it needs the peer: opens what arrived
    /// (adds the plaintext length read to `received`), writes handshake
    /// records to `peer` and, once the handshake is done, seals `send`
    /// there. `true` once the connection carries application data.
    fn step(&mut self, peer: &mut Incoming, mut send: Option<&[u8]>, received: &mut usize) -> bool {
        use rustls::unbuffered::{ConnectionState, UnbufferedStatus};
        loop {
            let incoming = &mut self.incoming;
            let UnbufferedStatus { mut discard, state } =
                self.conn.process(&mut incoming.bytes[..incoming.len]);
            let mut waiting = false;
            let mut traffic = false;
            match state.unwrap() {
                ConnectionState::ReadTraffic(mut records) => {
                    while let Some(record) = records.next_record() {
                        let record = record.unwrap();
                        discard += record.discard;
                        *received += std::hint::black_box(record.payload).len();
                    }
                }
                ConnectionState::EncodeTlsData(mut encode) => {
                    peer.len += encode.encode(peer.free()).unwrap();
                }
                ConnectionState::TransmitTlsData(transmit) => transmit.done(),
                ConnectionState::WriteTraffic(mut write) => {
                    if let Some(data) = send.take() {
                        peer.len += write.encrypt(data, peer.free()).unwrap();
                    }
                    waiting = true;
                    traffic = true;
                }
                ConnectionState::BlockedHandshake => waiting = true,
                state => panic!("unexpected {state:?}"),
            }
            if discard > 0 {
                incoming.bytes.copy_within(discard..incoming.len, 0);
                incoming.len -= discard;
            }
            if waiting {
                return traffic;
            }
        }
    }
}

/// A connected pair on rustls's unbuffered API (`UnbufferedClientConnection`,
/// `UnbufferedServerConnection`).
pub struct UnbufferedPair {
    client: Side<rustls::client::UnbufferedClientConnection>,
    server: Side<rustls::server::UnbufferedServerConnection>,
}

impl std::fmt::Debug for UnbufferedPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UnbufferedPair")
    }
}

impl UnbufferedPair {
    /// A connected pair for `case`, with buffers for transfers of up to
    /// `max_transfer` bytes of application data.
    pub fn new(case: &Case, max_transfer: usize) -> Self {
        let (c, s) = configs(case);
        // Each record adds a 5-byte header, the content type and the tag.
        let capacity = (max_transfer + (max_transfer / 16384 + 1) * 64).max(1 << 16);
        let name = "localhost".try_into().unwrap();
        let client = rustls::client::UnbufferedClientConnection::new(c, name).unwrap();
        let server = rustls::server::UnbufferedServerConnection::new(s).unwrap();
        let mut pair = UnbufferedPair {
            client: Side::new(client, capacity),
            server: Side::new(server, capacity),
        };
        let mut received = 0;
        for _ in 0..10 {
            let client_ready = pair
                .client
                .step(&mut pair.server.incoming, None, &mut received);
            let server_ready = pair
                .server
                .step(&mut pair.client.incoming, None, &mut received);
            if client_ready && server_ready {
                assert_eq!(received, 0);
                return pair;
            }
        }
        panic!("no handshake");
    }

    /// The client seals `data` as records of up to 16 KiB into the
    /// server's incoming buffer, and the server opens them there.
    pub fn transfer(&mut self, data: &[u8]) {
        let mut received = 0;
        let server = &mut self.server;
        assert!(
            self.client
                .step(&mut server.incoming, Some(data), &mut received)
        );
        server.step(&mut self.client.incoming, None, &mut received);
        assert_eq!(received, data.len());
    }
}
