//! The connection: the record layer and the handshake state machines of
//! both sides (GB/T 38636-2020 section 6.4; the wire details follow
//! Tongsuo's NTLS code, `ssl/statem_ntls/`, as WIRE.md records), sans I/O
//! in the manner of rustls: the caller moves bytes with `read_tls` and
//! `write_tls` and calls `process_new_packets`.

use std::io::{self, Read, Write};
use std::sync::Arc;

use rustls_pki_types::{CertificateDer, ServerName};
use sm2::{PublicKey, SecretKey};
use sm3_simd::{Digest, Sm3};
use zeroize::Zeroizing;

use crate::codec::{Reader, put_nested, put_vec};
use crate::config::{ClientAuth, ClientConfig, PeerCerts, ServerConfig, Session, verify_peer};
use crate::error::{Alert, Error};
use crate::prf::prf;
use crate::record::{CbcKeys, GcmKeys, MAX_CIPHERTEXT, MAX_PLAINTEXT, RecordKeys};
use crate::{CipherSuite, sm2kx};

/// TLCP's version, on every record and in both hellos.
const VERSION: [u8; 2] = [1, 1];

mod content {
    pub(super) const CHANGE_CIPHER_SPEC: u8 = 20;
    pub(super) const ALERT: u8 = 21;
    pub(super) const HANDSHAKE: u8 = 22;
    pub(super) const APPLICATION_DATA: u8 = 23;
}

mod hs {
    pub(super) const HELLO_REQUEST: u8 = 0;
    pub(super) const CLIENT_HELLO: u8 = 1;
    pub(super) const SERVER_HELLO: u8 = 2;
    pub(super) const CERTIFICATE: u8 = 11;
    pub(super) const SERVER_KEY_EXCHANGE: u8 = 12;
    pub(super) const CERTIFICATE_REQUEST: u8 = 13;
    pub(super) const SERVER_HELLO_DONE: u8 = 14;
    pub(super) const CERTIFICATE_VERIFY: u8 = 15;
    pub(super) const CLIENT_KEY_EXCHANGE: u8 = 16;
    pub(super) const FINISHED: u8 = 20;
}

/// ECParameters of the ECDHE suites: named_curve (3), curve 0x0029
/// (SM2, as Tongsuo numbers it).
const EC_PARAMS: [u8; 3] = [3, 0x00, 0x29];
/// ecdsa_sign, the certificate type a CertificateRequest names for SM2.
const CERT_TYPE_ECDSA_SIGN: u8 = 64;
/// renegotiation_info and its SCSV (RFC 5746).
const RENEGOTIATION_INFO: u16 = 0xff01;
const RENEGOTIATION_SCSV: u16 = 0x00ff;
/// The most a read_tls call buffers ahead of processing.
const MAX_BUFFERED: usize = 5 + MAX_CIPHERTEXT;

enum Role {
    Client {
        config: Arc<ClientConfig>,
        name: ServerName<'static>,
    },
    Server {
        config: Arc<ServerConfig>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    // Client.
    ExpectServerHello,
    ExpectCertificate,
    ExpectServerKeyExchange,
    ExpectCertificateRequestOrDone,
    ExpectServerHelloDone,
    // Server.
    ExpectClientHello,
    ExpectClientCertificate,
    ExpectClientKeyExchange,
    ExpectCertificateVerify,
    // Both.
    ExpectChangeCipherSpec,
    ExpectFinished,
    Connected,
    Closed,
}

/// What one handshake accumulates.
#[derive(Default)]
struct Handshake {
    client_random: [u8; 32],
    server_random: [u8; 32],
    session_id: Vec<u8>,
    suite: Option<CipherSuite>,
    resumed: bool,
    transcript: Sm3,
    peer: Option<PeerCerts>,
    /// Our ECDHE ephemeral key, and the peer's.
    ephemeral: Option<SecretKey>,
    peer_ephemeral: Option<PublicKey>,
    master: Option<Zeroizing<[u8; 48]>>,
    /// Client: the server asked for a certificate. Server: we asked.
    cert_requested: bool,
    /// The peer offered secure renegotiation (we answer with an empty
    /// renegotiation_info and never renegotiate).
    peer_renegotiation_info: bool,
    pending_tx: Option<RecordKeys>,
    pending_rx: Option<RecordKeys>,
}

/// The part of a connection both sides share: everything but the
/// constructor. `ClientConnection` and `ServerConnection` dereference to it.
pub struct ConnectionCommon {
    role: Role,
    state: State,
    hs: Box<Handshake>,
    rx: RecordKeys,
    tx: RecordKeys,
    rx_seq: u64,
    tx_seq: u64,
    incoming: Vec<u8>,
    outgoing: Vec<u8>,
    hs_buf: Vec<u8>,
    /// Application data received, from `plaintext_read` on.
    plaintext: Vec<u8>,
    plaintext_read: usize,
    /// Application data written before the handshake completed.
    early_writes: Vec<u8>,
    negotiated: Option<(CipherSuite, bool)>,
    peer_certificates: Option<Vec<CertificateDer<'static>>>,
    error: Option<Error>,
    peer_closed: bool,
    sent_close: bool,
}

impl core::fmt::Debug for ConnectionCommon {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ConnectionCommon")
            .field("state", &self.state)
            .field("suite", &self.negotiated)
            .finish_non_exhaustive()
    }
}

fn random<const N: usize>() -> Result<[u8; N], Error> {
    let mut b = [0u8; N];
    crate::sm2::random(&mut b).ok_or(Error::Random)?;
    Ok(b)
}

/// The 12-byte verify_data of a Finished.
fn finished(master: &[u8; 48], label: &[u8], transcript: &Sm3) -> [u8; 12] {
    let hash = transcript.clone().finalize();
    let mut out = [0u8; 12];
    prf(master, label, &[&hash], &mut out);
    out
}

fn equal(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

impl ConnectionCommon {
    fn new(role: Role, state: State) -> Self {
        Self {
            role,
            state,
            hs: Box::default(),
            rx: RecordKeys::Null,
            tx: RecordKeys::Null,
            rx_seq: 0,
            tx_seq: 0,
            incoming: Vec::new(),
            outgoing: Vec::new(),
            hs_buf: Vec::new(),
            plaintext: Vec::new(),
            plaintext_read: 0,
            early_writes: Vec::new(),
            negotiated: None,
            peer_certificates: None,
            error: None,
            peer_closed: false,
            sent_close: false,
        }
    }

    // ---- The public surface ----

    /// Reads TLS bytes from `rd` (one read call, at most one record's worth).
    pub fn read_tls(&mut self, rd: &mut dyn Read) -> io::Result<usize> {
        if self.incoming.len() >= MAX_BUFFERED {
            return Err(io::Error::other("tlcp: process_new_packets first"));
        }
        let have = self.incoming.len();
        self.incoming.resize(MAX_BUFFERED, 0);
        let n = rd.read(&mut self.incoming[have..]);
        self.incoming.truncate(have + *n.as_ref().unwrap_or(&0));
        n
    }

    /// Writes what is queued for the peer to `wr` (one write call).
    pub fn write_tls(&mut self, wr: &mut dyn Write) -> io::Result<usize> {
        let n = wr.write(&self.outgoing)?;
        self.outgoing.drain(..n);
        Ok(n)
    }

    /// Whether there are bytes for `write_tls`.
    pub fn wants_write(&self) -> bool {
        !self.outgoing.is_empty()
    }

    /// Whether the connection needs more bytes from the peer.
    pub fn wants_read(&self) -> bool {
        self.error.is_none() && !self.peer_closed && self.outgoing.is_empty()
    }

    /// Whether the handshake is still running.
    pub fn is_handshaking(&self) -> bool {
        !matches!(self.state, State::Connected | State::Closed)
    }

    /// The suite, once negotiated.
    pub fn negotiated_cipher_suite(&self) -> Option<CipherSuite> {
        self.negotiated.map(|(s, _)| s)
    }

    /// Whether the handshake resumed a session.
    pub fn is_resumed(&self) -> Option<bool> {
        self.negotiated.map(|(_, r)| r)
    }

    /// The peer's Certificate message (signing certificate, encryption
    /// certificate, chain), once verified.
    pub fn peer_certificates(&self) -> Option<&[CertificateDer<'static>]> {
        self.peer_certificates.as_deref()
    }

    /// The protocol version's name once connected: "TLCPv1.1".
    pub fn protocol_version(&self) -> Option<&'static str> {
        self.negotiated.map(|_| "TLCPv1.1")
    }

    /// Processes the bytes read so far: handshake messages, alerts,
    /// application data. A fatal error queues its alert for `write_tls`.
    pub fn process_new_packets(&mut self) -> Result<(), Error> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        match self.process() {
            Ok(()) => Ok(()),
            Err(e) => {
                self.fail(&e);
                Err(e)
            }
        }
    }

    /// The application data received.
    pub fn reader(&mut self) -> Reader_<'_> {
        Reader_(self)
    }

    /// Where application data to send goes (sealed into records as it is
    /// written; held until the handshake completes).
    pub fn writer(&mut self) -> Writer<'_> {
        Writer(self)
    }

    /// Queues a close_notify alert.
    pub fn send_close_notify(&mut self) {
        if !self.sent_close && self.error.is_none() {
            self.sent_close = true;
            self.send_alert(false, Alert::CloseNotify);
        }
    }

    /// Reads and writes `io` until the handshake completes (or, after it,
    /// until what is queued is written); `(read, written)` byte counts.
    pub fn complete_io<T: Read + Write>(&mut self, io: &mut T) -> io::Result<(usize, usize)> {
        let (mut read, mut written) = (0, 0);
        loop {
            while self.wants_write() {
                written += self.write_tls(io)?;
            }
            io.flush()?;
            if !self.is_handshaking() && read > 0 || self.error.is_some() {
                break;
            }
            if !self.is_handshaking() {
                break;
            }
            let n = self.read_tls(io)?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            read += n;
            if let Err(e) = self.process_new_packets() {
                while self.wants_write() {
                    let _ = self.write_tls(io);
                }
                return Err(io::Error::new(io::ErrorKind::InvalidData, e));
            }
        }
        Ok((read, written))
    }

    // ---- Records ----

    fn fail(&mut self, e: &Error) {
        if !matches!(e, Error::AlertReceived(_) | Error::Closed) {
            self.send_alert(true, e.alert());
        }
        self.error = Some(e.clone());
        self.state = State::Closed;
    }

    fn send_alert(&mut self, fatal: bool, alert: Alert) {
        self.send_record(content::ALERT, &[if fatal { 2 } else { 1 }, alert.code()]);
    }

    fn send_record(&mut self, typ: u8, payload: &[u8]) {
        let header = |out: &mut Vec<u8>, len: usize| {
            out.push(typ);
            out.extend_from_slice(&VERSION);
            out.extend_from_slice(&(len as u16).to_be_bytes());
        };
        match &self.tx {
            RecordKeys::Null => {
                header(&mut self.outgoing, payload.len());
                self.outgoing.extend_from_slice(payload);
            }
            RecordKeys::Cbc(k) => {
                // No record with a predictable IV: without randomness the
                // connection fails instead (the record is not sent).
                let Ok(iv) = random::<16>() else {
                    self.error = Some(Error::Random);
                    self.state = State::Closed;
                    return;
                };
                let body = k.seal(self.tx_seq, typ, VERSION, payload, iv);
                header(&mut self.outgoing, body.len());
                self.outgoing.extend_from_slice(&body);
            }
            RecordKeys::Gcm(k) => {
                // Sealed in place in the output buffer: no copy of the record.
                header(&mut self.outgoing, GcmKeys::sealed_len(payload.len()));
                k.seal_into(self.tx_seq, typ, VERSION, payload, &mut self.outgoing);
            }
        }
        if !matches!(self.tx, RecordKeys::Null) {
            self.tx_seq += 1;
        }
    }

    /// A handshake message: into the transcript and out, in records.
    fn send_handshake(&mut self, typ: u8, body: &[u8]) {
        let mut msg = Vec::with_capacity(4 + body.len());
        msg.push(typ);
        put_vec(&mut msg, 3, body);
        self.hs.transcript.update(&msg);
        for chunk in msg.chunks(MAX_PLAINTEXT) {
            self.send_record(content::HANDSHAKE, chunk);
        }
    }

    fn send_change_cipher_spec(&mut self) -> Result<(), Error> {
        self.send_record(content::CHANGE_CIPHER_SPEC, &[1]);
        self.tx = self.hs.pending_tx.take().ok_or(Error::Closed)?;
        self.tx_seq = 0;
        Ok(())
    }

    fn process(&mut self) -> Result<(), Error> {
        while self.incoming.len() >= 5 {
            let typ = self.incoming[0];
            let version = [self.incoming[1], self.incoming[2]];
            let len = usize::from(u16::from_be_bytes([self.incoming[3], self.incoming[4]]));
            if len > MAX_CIPHERTEXT {
                return Err(Error::RecordOverflow);
            }
            if version != VERSION {
                return Err(Error::ProtocolVersion);
            }
            if self.incoming.len() < 5 + len {
                break;
            }
            // Opened in place in the input buffer; the record leaves it below.
            let body = &mut self.incoming[5..5 + len];
            let range = match &self.rx {
                RecordKeys::Null => 0..body.len(),
                RecordKeys::Cbc(k) => k
                    .open(self.rx_seq, typ, VERSION, body)
                    .ok_or(Error::BadRecordMac)?,
                RecordKeys::Gcm(k) => k
                    .open(self.rx_seq, typ, VERSION, body)
                    .ok_or(Error::BadRecordMac)?,
            };
            if !matches!(self.rx, RecordKeys::Null) {
                self.rx_seq += 1;
            }
            let range = 5 + range.start..5 + range.end;
            let result = self.record(typ, range);
            self.incoming.drain(..5 + len);
            result?;
        }
        Ok(())
    }

    /// One opened record, its payload at `range` in the input buffer.
    fn record(&mut self, typ: u8, range: core::ops::Range<usize>) -> Result<(), Error> {
        {
            let payload = &self.incoming[range.clone()];
            if payload.len() > MAX_PLAINTEXT {
                return Err(Error::RecordOverflow);
            }
            match typ {
                content::HANDSHAKE => {
                    if payload.is_empty() {
                        return Err(Error::Decode("empty handshake record"));
                    }
                    self.hs_buf.extend_from_slice(payload);
                    return self.handshake_messages();
                }
                content::CHANGE_CIPHER_SPEC => {
                    if payload != [1] || self.state != State::ExpectChangeCipherSpec {
                        return Err(Error::UnexpectedMessage("ChangeCipherSpec"));
                    }
                    if !self.hs_buf.is_empty() {
                        return Err(Error::UnexpectedMessage(
                            "ChangeCipherSpec inside a message",
                        ));
                    }
                    self.rx = self.hs.pending_rx.take().ok_or(Error::Closed)?;
                    self.rx_seq = 0;
                    self.state = State::ExpectFinished;
                }
                content::ALERT => {
                    let [level, code] = payload else {
                        return Err(Error::Decode("alert"));
                    };
                    let alert = Alert::from_code(*code);
                    if alert == Alert::CloseNotify {
                        self.peer_closed = true;
                        if self.is_handshaking() {
                            return Err(Error::AlertReceived(alert));
                        }
                    } else if *level == 2 || self.is_handshaking() {
                        return Err(Error::AlertReceived(alert));
                    }
                    // A warning after the handshake (no_renegotiation): ignored.
                }
                content::APPLICATION_DATA => {
                    if self.state != State::Connected || self.peer_closed {
                        return Err(Error::UnexpectedMessage("application data"));
                    }
                    self.plaintext.extend_from_slice(payload);
                }
                _ => return Err(Error::UnexpectedMessage("unknown record type")),
            }
        }
        Ok(())
    }

    fn handshake_messages(&mut self) -> Result<(), Error> {
        while self.hs_buf.len() >= 4 {
            let len = usize::from(self.hs_buf[1]) << 16
                | usize::from(self.hs_buf[2]) << 8
                | usize::from(self.hs_buf[3]);
            if len > 1 << 17 {
                return Err(Error::Decode("handshake message too long"));
            }
            if self.hs_buf.len() < 4 + len {
                break;
            }
            let msg: Vec<u8> = self.hs_buf.drain(..4 + len).collect();
            self.handshake(msg[0], &msg)?;
        }
        Ok(())
    }

    /// One whole handshake message (`raw` with its header).
    fn handshake(&mut self, typ: u8, raw: &[u8]) -> Result<(), Error> {
        let body = &raw[4..];
        let unexpected = Error::UnexpectedMessage("handshake message out of order");
        match (&self.role, self.state, typ) {
            (_, State::Connected, hs::HELLO_REQUEST | hs::CLIENT_HELLO) => {
                // Renegotiation: refused with a warning; the connection goes on.
                self.send_alert(false, Alert::NoRenegotiation);
                Ok(())
            }
            (_, _, hs::FINISHED) if self.state == State::ExpectFinished => self.peer_finished(raw),
            (_, _, hs::CERTIFICATE_VERIFY) if self.state == State::ExpectCertificateVerify => {
                self.certificate_verify(raw)
            }
            (Role::Client { .. }, state, _) => {
                self.hs.transcript.update(raw);
                match (state, typ) {
                    (State::ExpectServerHello, hs::SERVER_HELLO) => self.server_hello(body),
                    (State::ExpectCertificate, hs::CERTIFICATE) => self.server_certificate(body),
                    (State::ExpectServerKeyExchange, hs::SERVER_KEY_EXCHANGE) => {
                        self.server_key_exchange(body)
                    }
                    (State::ExpectCertificateRequestOrDone, hs::CERTIFICATE_REQUEST) => {
                        let mut r = Reader::new(body);
                        r.vec(1).ok_or(Error::Decode("CertificateRequest"))?;
                        r.vec(2).ok_or(Error::Decode("CertificateRequest"))?;
                        self.hs.cert_requested = true;
                        self.state = State::ExpectServerHelloDone;
                        Ok(())
                    }
                    (
                        State::ExpectCertificateRequestOrDone | State::ExpectServerHelloDone,
                        hs::SERVER_HELLO_DONE,
                    ) => {
                        if !body.is_empty() {
                            return Err(Error::Decode("ServerHelloDone"));
                        }
                        self.client_flight()
                    }
                    _ => Err(unexpected),
                }
            }
            (Role::Server { .. }, state, _) => {
                self.hs.transcript.update(raw);
                match (state, typ) {
                    (State::ExpectClientHello, hs::CLIENT_HELLO) => self.client_hello(body),
                    (State::ExpectClientCertificate, hs::CERTIFICATE) => {
                        self.client_certificate(body)
                    }
                    (State::ExpectClientKeyExchange, hs::CLIENT_KEY_EXCHANGE) => {
                        self.client_key_exchange(body)
                    }
                    _ => Err(unexpected),
                }
            }
        }
    }

    // ---- Both sides ----

    fn suite(&self) -> Result<CipherSuite, Error> {
        self.hs.suite.ok_or(Error::Closed)
    }

    fn is_client(&self) -> bool {
        matches!(self.role, Role::Client { .. })
    }

    fn signer_id(&self) -> &'static str {
        match &self.role {
            Role::Client { config, .. } => config.signer_id,
            Role::Server { config } => config.signer_id,
        }
    }

    /// The master secret from the pre-master secret, and both directions'
    /// pending keys from it.
    fn set_master(&mut self, master: Zeroizing<[u8; 48]>) -> Result<(), Error> {
        let suite = self.suite()?;
        let (mac_len, iv_len) = if suite.is_gcm() { (0, 4) } else { (32, 16) };
        let mut block = Zeroizing::new(vec![0u8; 2 * (mac_len + 16 + iv_len)]);
        prf(
            &master[..],
            b"key expansion",
            &[&self.hs.server_random, &self.hs.client_random],
            &mut block,
        );
        let (client_mac, rest) = block.split_at(mac_len);
        let (server_mac, rest) = rest.split_at(mac_len);
        let (client_key, rest) = rest.split_at(16);
        let (server_key, rest) = rest.split_at(16);
        let (client_iv, server_iv) = rest.split_at(iv_len);
        let keys = |mac: &[u8], key: &[u8], iv: &[u8]| -> RecordKeys {
            let key: &[u8; 16] = key.try_into().expect("16 bytes");
            if suite.is_gcm() {
                RecordKeys::Gcm(Box::new(GcmKeys::new(key, iv.try_into().expect("4 bytes"))))
            } else {
                RecordKeys::Cbc(Box::new(CbcKeys::new(
                    mac.try_into().expect("32 bytes"),
                    key,
                )))
            }
        };
        let client = keys(client_mac, client_key, client_iv);
        let server = keys(server_mac, server_key, server_iv);
        let (tx, rx) = if self.is_client() {
            (client, server)
        } else {
            (server, client)
        };
        self.hs.pending_tx = Some(tx);
        self.hs.pending_rx = Some(rx);
        let key_log = match &self.role {
            Role::Client { config, .. } => config.key_log.as_ref(),
            Role::Server { config } => config.key_log.as_ref(),
        };
        if let Some(log) = key_log {
            log.log(&self.hs.client_random, &master);
        }
        self.hs.master = Some(master);
        Ok(())
    }

    fn master_from_pre_master(&mut self, pre_master: &[u8]) -> Result<(), Error> {
        let mut master = Zeroizing::new([0u8; 48]);
        prf(
            pre_master,
            b"master secret",
            &[&self.hs.client_random, &self.hs.server_random],
            &mut master[..],
        );
        self.set_master(master)
    }

    fn send_finished(&mut self) -> Result<(), Error> {
        let label: &[u8] = if self.is_client() {
            b"client finished"
        } else {
            b"server finished"
        };
        let master = self.hs.master.clone().ok_or(Error::Closed)?;
        let data = finished(&master, label, &self.hs.transcript);
        self.send_change_cipher_spec()?;
        self.send_handshake(hs::FINISHED, &data);
        Ok(())
    }

    fn peer_finished(&mut self, raw: &[u8]) -> Result<(), Error> {
        let label: &[u8] = if self.is_client() {
            b"server finished"
        } else {
            b"client finished"
        };
        let master = self.hs.master.clone().ok_or(Error::Closed)?;
        let want = finished(&master, label, &self.hs.transcript);
        if raw[0] != hs::FINISHED || !equal(&raw[4..], &want) {
            return Err(Error::DecryptError);
        }
        self.hs.transcript.update(raw);
        // A full handshake ends with the server's Finished; a resumed one
        // (the server's Finished first) with the client's.
        let we_still_send = self.hs.resumed == self.is_client();
        if we_still_send {
            self.send_finished()?;
        }
        self.connected()
    }

    fn connected(&mut self) -> Result<(), Error> {
        let suite = self.suite()?;
        self.negotiated = Some((suite, self.hs.resumed));
        if let Some(peer) = self.hs.peer.take() {
            self.peer_certificates = Some(peer.chain);
        }
        let resumption = match &self.role {
            Role::Client { config, .. } => config.resumption,
            Role::Server { config } => config.resumption,
        };
        if resumption && !self.hs.resumed && !self.hs.session_id.is_empty() {
            let session = Session {
                id: self.hs.session_id.clone(),
                suite,
                master: self.hs.master.clone().ok_or(Error::Closed)?,
                peer: self.peer_certificates.clone(),
            };
            match &self.role {
                Role::Client { config, name } => {
                    let key = name.to_str().into_owned();
                    let mut s = config.sessions.lock().unwrap_or_else(|e| e.into_inner());
                    s.insert(key, session);
                }
                Role::Server { config } => {
                    let mut s = config.sessions.lock().unwrap_or_else(|e| e.into_inner());
                    if s.len() >= 1024 {
                        s.clear();
                    }
                    s.insert(session.id.clone(), session);
                }
            }
        }
        *self.hs = Handshake::default();
        self.state = State::Connected;
        let early = core::mem::take(&mut self.early_writes);
        self.send_application_data(&early);
        Ok(())
    }

    fn send_application_data(&mut self, data: &[u8]) {
        for chunk in data.chunks(MAX_PLAINTEXT) {
            self.send_record(content::APPLICATION_DATA, chunk);
        }
    }

    /// The Certificate message of an identity: signing certificate,
    /// encryption certificate, then the signing certificate's chain.
    fn certificate_body(identity: Option<&crate::Identity>) -> Vec<u8> {
        let mut body = Vec::new();
        put_nested(&mut body, 3, |b| {
            if let Some(id) = identity {
                put_vec(b, 3, &id.sign_chain[0]);
                put_vec(b, 3, &id.enc_cert);
                for c in &id.sign_chain[1..] {
                    put_vec(b, 3, c);
                }
            }
        });
        body
    }

    fn parse_certificates(body: &[u8]) -> Result<Vec<CertificateDer<'static>>, Error> {
        let mut r = Reader::new(body);
        let mut list = Reader::new(r.vec(3).ok_or(Error::Decode("Certificate"))?);
        if !r.is_empty() {
            return Err(Error::Decode("Certificate"));
        }
        let mut certs = Vec::new();
        while !list.is_empty() {
            let c = list.vec(3).ok_or(Error::Decode("Certificate"))?;
            certs.push(CertificateDer::from(c.to_vec()));
        }
        Ok(certs)
    }

    /// The ECDHE ECParameters and point of a key exchange message.
    fn parse_ec_point(r: &mut Reader<'_>) -> Result<PublicKey, Error> {
        let params = r.take(3).ok_or(Error::Decode("ECParameters"))?;
        if params != EC_PARAMS {
            return Err(Error::Decode("ECParameters: not the SM2 named curve"));
        }
        let point = r.vec(1).ok_or(Error::Decode("ECPoint"))?;
        if point.len() != 65 || point[0] != 4 {
            return Err(Error::Decode("ECPoint"));
        }
        PublicKey::from_sec1_bytes(point).map_err(|_| Error::Decode("ECPoint not on the curve"))
    }

    fn ec_point_bytes(key: &SecretKey) -> Vec<u8> {
        let mut out = EC_PARAMS.to_vec();
        put_vec(&mut out, 1, &crate::sm2::encode(&key.public_key()));
        out
    }

    fn new_ephemeral() -> Result<SecretKey, Error> {
        for _ in 0..8 {
            let bytes = Zeroizing::new(random::<32>()?);
            if let Ok(k) = SecretKey::from_slice(&bytes[..]) {
                return Ok(k);
            }
        }
        Err(Error::Random)
    }

    /// The ECDHE pre-master secret: the SM2 key exchange with the server as
    /// initiator and the client as responder, the encryption key pairs as
    /// the static keys, both IDs the signer ID, 48 bytes (Tongsuo's
    /// `ssl_derive_ntls`).
    fn ecdhe_pre_master(&self) -> Result<Zeroizing<Vec<u8>>, Error> {
        let id = self.signer_id();
        let (own_enc, own_enc_pub) = match &self.role {
            Role::Client { config, .. } => {
                let i = config.identity.as_ref().ok_or(Error::NoClientCertificate)?;
                (&i.enc_key, i.enc_key.public_key())
            }
            Role::Server { config } => (
                &config.identity.enc_key,
                config.identity.enc_key.public_key(),
            ),
        };
        let peer = self.hs.peer.as_ref().ok_or(Error::NoClientCertificate)?;
        let eph = self.hs.ephemeral.as_ref().ok_or(Error::Closed)?;
        let peer_eph = self.hs.peer_ephemeral.as_ref().ok_or(Error::Closed)?;
        let (z_server, z_client) = if self.is_client() {
            (
                crate::sm2::z(id, &peer.enc_key),
                crate::sm2::z(id, &own_enc_pub),
            )
        } else {
            (
                crate::sm2::z(id, &own_enc_pub),
                crate::sm2::z(id, &peer.enc_key),
            )
        };
        let us = sm2kx::Party {
            static_key: own_enc,
            ephemeral: eph,
        };
        sm2kx::agree(&us, &peer.enc_key, peer_eph, &z_server, &z_client, 48)
            .ok_or(Error::DecryptError)
    }

    // ---- Client ----

    fn client_hello(&mut self, body: &[u8]) -> Result<(), Error> {
        let Role::Server { config } = &self.role else {
            return Err(Error::Closed);
        };
        let config = config.clone();
        let bad = || Error::Decode("ClientHello");
        let mut r = Reader::new(body);
        let version = r.take(2).ok_or_else(bad)?;
        if version != VERSION {
            return Err(Error::ProtocolVersion);
        }
        self.hs.client_random = r.take(32).ok_or_else(bad)?.try_into().map_err(|_| bad())?;
        let session_id = r.vec(1).ok_or_else(bad)?.to_vec();
        if session_id.len() > 32 {
            return Err(bad());
        }
        let mut suites = Reader::new(r.vec(2).ok_or_else(bad)?);
        let compression = r.vec(1).ok_or_else(bad)?;
        if !compression.contains(&0) {
            return Err(Error::Decode("ClientHello without null compression"));
        }
        if !r.is_empty() {
            let mut exts = Reader::new(r.vec(2).ok_or_else(bad)?);
            while !exts.is_empty() {
                let typ = exts.u16().ok_or_else(bad)?;
                exts.vec(2).ok_or_else(bad)?;
                if typ == RENEGOTIATION_INFO {
                    self.hs.peer_renegotiation_info = true;
                }
            }
        }
        let mut offered = Vec::new();
        while !suites.is_empty() {
            let code = suites.u16().ok_or_else(bad)?;
            if code == RENEGOTIATION_SCSV {
                self.hs.peer_renegotiation_info = true;
            }
            if let Some(s) = CipherSuite::from_code(code) {
                offered.push(s);
            }
        }
        // Resumption: the session, if its suite is still offered.
        let cached = (config.resumption && !session_id.is_empty())
            .then(|| {
                let s = config.sessions.lock().unwrap_or_else(|e| e.into_inner());
                s.get(&session_id).cloned()
            })
            .flatten()
            .filter(|s| offered.contains(&s.suite) && config.suites.contains(&s.suite));
        let suite = match &cached {
            Some(s) => s.suite,
            None => *offered
                .iter()
                .find(|s| {
                    config.suites.contains(s)
                        && (!s.is_ecdhe() || config.client_auth != ClientAuth::None)
                })
                .ok_or(Error::NoCommonSuite)?,
        };
        self.hs.suite = Some(suite);
        self.hs.server_random = random()?;
        self.hs.session_id = match &cached {
            Some(s) => s.id.clone(),
            None => random::<32>()?.to_vec(),
        };
        let mut hello = VERSION.to_vec();
        hello.extend_from_slice(&self.hs.server_random);
        put_vec(&mut hello, 1, &self.hs.session_id);
        hello.extend_from_slice(&suite.code().to_be_bytes());
        hello.push(0);
        if self.hs.peer_renegotiation_info {
            put_nested(&mut hello, 2, |e| {
                e.extend_from_slice(&RENEGOTIATION_INFO.to_be_bytes());
                put_vec(e, 2, &[0]);
            });
        }
        self.send_handshake(hs::SERVER_HELLO, &hello);

        if let Some(session) = cached {
            self.hs.resumed = true;
            self.peer_certificates = session.peer;
            self.set_master(session.master)?;
            self.send_finished()?;
            self.state = State::ExpectChangeCipherSpec;
            return Ok(());
        }

        let id = &config.identity;
        self.send_handshake(hs::CERTIFICATE, &Self::certificate_body(Some(id)));
        let mut ske = Vec::new();
        let mut tbs = self.hs.client_random.to_vec();
        tbs.extend_from_slice(&self.hs.server_random);
        if suite.is_ecdhe() {
            let eph = Self::new_ephemeral()?;
            let params = Self::ec_point_bytes(&eph);
            tbs.extend_from_slice(&params);
            ske.extend_from_slice(&params);
            self.hs.ephemeral = Some(eph);
        } else {
            put_vec(&mut tbs, 3, &id.enc_cert);
        }
        let sig = crate::sm2::sign(&id.sign_key, config.signer_id, &tbs)
            .ok_or(Error::Config("SM2 signing failed".into()))?;
        put_vec(&mut ske, 2, &sig);
        self.send_handshake(hs::SERVER_KEY_EXCHANGE, &ske);
        if config.client_auth != ClientAuth::None {
            let mut req = Vec::new();
            put_vec(&mut req, 1, &[CERT_TYPE_ECDSA_SIGN]);
            put_vec(&mut req, 2, &[]);
            self.send_handshake(hs::CERTIFICATE_REQUEST, &req);
            self.hs.cert_requested = true;
        }
        self.send_handshake(hs::SERVER_HELLO_DONE, &[]);
        self.state = if self.hs.cert_requested {
            State::ExpectClientCertificate
        } else {
            State::ExpectClientKeyExchange
        };
        Ok(())
    }

    fn start_client(&mut self) -> Result<(), Error> {
        let Role::Client { config, name } = &self.role else {
            return Err(Error::Closed);
        };
        let cached = config
            .resumption
            .then(|| {
                let s = config.sessions.lock().unwrap_or_else(|e| e.into_inner());
                s.get(name.to_str().as_ref()).cloned()
            })
            .flatten();
        self.hs.client_random = random()?;
        let mut hello = VERSION.to_vec();
        hello.extend_from_slice(&self.hs.client_random);
        put_vec(&mut hello, 1, cached.as_ref().map_or(&[][..], |s| &s.id));
        put_nested(&mut hello, 2, |b| {
            for s in &config.suites {
                b.extend_from_slice(&s.code().to_be_bytes());
            }
        });
        put_vec(&mut hello, 1, &[0]);
        self.hs.session_id = cached.map(|s| s.id).unwrap_or_default();
        self.send_handshake(hs::CLIENT_HELLO, &hello);
        Ok(())
    }

    fn server_hello(&mut self, body: &[u8]) -> Result<(), Error> {
        let Role::Client { config, name } = &self.role else {
            return Err(Error::Closed);
        };
        let bad = || Error::Decode("ServerHello");
        let mut r = Reader::new(body);
        if r.take(2).ok_or_else(bad)? != VERSION {
            return Err(Error::ProtocolVersion);
        }
        self.hs.server_random = r.take(32).ok_or_else(bad)?.try_into().map_err(|_| bad())?;
        let session_id = r.vec(1).ok_or_else(bad)?.to_vec();
        let suite = CipherSuite::from_code(r.u16().ok_or_else(bad)?)
            .filter(|s| config.suites.contains(s))
            .ok_or(Error::NoCommonSuite)?;
        if r.u8().ok_or_else(bad)? != 0 {
            return Err(Error::Decode("ServerHello: compression"));
        }
        if !r.is_empty() {
            let mut exts = Reader::new(r.vec(2).ok_or_else(bad)?);
            while !exts.is_empty() {
                exts.u16().ok_or_else(bad)?;
                exts.vec(2).ok_or_else(bad)?;
            }
        }
        self.hs.suite = Some(suite);
        let cached = {
            let s = config.sessions.lock().unwrap_or_else(|e| e.into_inner());
            s.get(name.to_str().as_ref()).cloned()
        };
        match cached {
            Some(s) if !session_id.is_empty() && s.id == session_id => {
                if s.suite != suite {
                    return Err(Error::UnexpectedMessage("resumed with another suite"));
                }
                self.hs.resumed = true;
                self.hs.session_id = session_id;
                self.peer_certificates = s.peer;
                self.set_master(s.master)?;
                self.state = State::ExpectChangeCipherSpec;
            }
            _ => {
                self.hs.session_id = session_id;
                self.state = State::ExpectCertificate;
            }
        }
        Ok(())
    }

    fn server_certificate(&mut self, body: &[u8]) -> Result<(), Error> {
        let Role::Client { config, name } = &self.role else {
            return Err(Error::Closed);
        };
        let certs = Self::parse_certificates(body)?;
        let peer = verify_peer(
            &config.roots,
            certs,
            Some(name),
            self.suite()?.is_ecdhe(),
            config.signer_id,
        )?;
        self.hs.peer = Some(peer);
        self.state = State::ExpectServerKeyExchange;
        Ok(())
    }

    fn server_key_exchange(&mut self, body: &[u8]) -> Result<(), Error> {
        let suite = self.suite()?;
        let peer = self.hs.peer.as_ref().ok_or(Error::Closed)?;
        let mut r = Reader::new(body);
        let mut tbs = self.hs.client_random.to_vec();
        tbs.extend_from_slice(&self.hs.server_random);
        if suite.is_ecdhe() {
            let start = body.len();
            let point = Self::parse_ec_point(&mut r)?;
            let consumed = start - r.clone().rest().len();
            tbs.extend_from_slice(&body[..consumed]);
            self.hs.peer_ephemeral = Some(point);
        } else {
            put_vec(&mut tbs, 3, &peer.chain[1]);
        }
        let sig = r.vec(2).ok_or(Error::Decode("ServerKeyExchange"))?;
        if !r.is_empty() {
            return Err(Error::Decode("ServerKeyExchange"));
        }
        if !crate::sm2::verify(&peer.sign_key, self.signer_id(), &tbs, sig) {
            return Err(Error::DecryptError);
        }
        self.state = State::ExpectCertificateRequestOrDone;
        Ok(())
    }

    fn client_flight(&mut self) -> Result<(), Error> {
        let Role::Client { config, .. } = &self.role else {
            return Err(Error::Closed);
        };
        let config = config.clone();
        let suite = self.suite()?;
        let identity = config.identity.as_ref().filter(|_| self.hs.cert_requested);
        if suite.is_ecdhe() && identity.is_none() {
            return Err(Error::NoClientCertificate);
        }
        if self.hs.cert_requested {
            self.send_handshake(hs::CERTIFICATE, &Self::certificate_body(identity));
        }
        let peer = self.hs.peer.as_ref().ok_or(Error::Closed)?;
        let mut cke = Vec::new();
        let pre_master = if suite.is_ecdhe() {
            let eph = Self::new_ephemeral()?;
            cke.extend_from_slice(&Self::ec_point_bytes(&eph));
            self.hs.ephemeral = Some(eph);
            self.ecdhe_pre_master()?
        } else {
            let mut pms = Zeroizing::new(vec![0u8; 48]);
            pms[..2].copy_from_slice(&VERSION);
            crate::sm2::random(&mut pms[2..]).ok_or(Error::Random)?;
            let ct = crate::sm2::encrypt(&peer.enc_key, &pms).ok_or(Error::Random)?;
            put_vec(&mut cke, 2, &ct);
            pms
        };
        self.send_handshake(hs::CLIENT_KEY_EXCHANGE, &cke);
        self.master_from_pre_master(&pre_master)?;
        if let Some(id) = identity {
            let hash = self.hs.transcript.clone().finalize();
            let sig = crate::sm2::sign(&id.sign_key, config.signer_id, &hash)
                .ok_or(Error::Config("SM2 signing failed".into()))?;
            let mut cv = Vec::new();
            put_vec(&mut cv, 2, &sig);
            self.send_handshake(hs::CERTIFICATE_VERIFY, &cv);
        }
        self.send_finished()?;
        self.state = State::ExpectChangeCipherSpec;
        Ok(())
    }

    // ---- Server ----

    fn client_certificate(&mut self, body: &[u8]) -> Result<(), Error> {
        let Role::Server { config } = &self.role else {
            return Err(Error::Closed);
        };
        let certs = Self::parse_certificates(body)?;
        let suite = self.suite()?;
        if certs.is_empty() {
            if config.client_auth == ClientAuth::Required || suite.is_ecdhe() {
                return Err(Error::NoClientCertificate);
            }
        } else {
            let roots = config.client_roots.as_ref().ok_or(Error::Closed)?;
            let peer = verify_peer(roots, certs, None, suite.is_ecdhe(), config.signer_id)?;
            self.hs.peer = Some(peer);
        }
        self.state = State::ExpectClientKeyExchange;
        Ok(())
    }

    fn client_key_exchange(&mut self, body: &[u8]) -> Result<(), Error> {
        let Role::Server { config } = &self.role else {
            return Err(Error::Closed);
        };
        let config = config.clone();
        let mut r = Reader::new(body);
        let pre_master = if self.suite()?.is_ecdhe() {
            let point = Self::parse_ec_point(&mut r)?;
            self.hs.peer_ephemeral = Some(point);
            if !r.is_empty() {
                return Err(Error::Decode("ClientKeyExchange"));
            }
            self.ecdhe_pre_master()?
        } else {
            let ct = r.vec(2).ok_or(Error::Decode("ClientKeyExchange"))?;
            if !r.is_empty() {
                return Err(Error::Decode("ClientKeyExchange"));
            }
            // A pre-master secret that does not decrypt, or is not 48 bytes
            // starting with the version, is replaced by a random one: the
            // handshake then fails at Finished, as for any wrong key,
            // telling the peer nothing more.
            let random_pms = Zeroizing::new(random::<48>()?.to_vec());
            match crate::sm2::decrypt(&config.identity.enc_key, ct) {
                Some(pms) if pms.len() == 48 && pms[..2] == VERSION => pms,
                _ => random_pms,
            }
        };
        self.master_from_pre_master(&pre_master)?;
        self.state = if self.hs.peer.is_some() {
            State::ExpectCertificateVerify
        } else {
            State::ExpectChangeCipherSpec
        };
        Ok(())
    }

    fn certificate_verify(&mut self, raw: &[u8]) -> Result<(), Error> {
        let hash = self.hs.transcript.clone().finalize();
        let mut r = Reader::new(&raw[4..]);
        let sig = r.vec(2).ok_or(Error::Decode("CertificateVerify"))?;
        if !r.is_empty() {
            return Err(Error::Decode("CertificateVerify"));
        }
        let peer = self.hs.peer.as_ref().ok_or(Error::Closed)?;
        if !crate::sm2::verify(&peer.sign_key, self.signer_id(), &hash, sig) {
            return Err(Error::DecryptError);
        }
        self.hs.transcript.update(raw);
        self.state = State::ExpectChangeCipherSpec;
        Ok(())
    }
}

/// Application data received, as `Read`.
#[derive(Debug)]
pub struct Reader_<'a>(&'a mut ConnectionCommon);

impl Read for Reader_<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let c = &mut *self.0;
        let n = (c.plaintext.len() - c.plaintext_read).min(buf.len());
        buf[..n].copy_from_slice(&c.plaintext[c.plaintext_read..c.plaintext_read + n]);
        c.plaintext_read += n;
        if c.plaintext_read == c.plaintext.len() {
            c.plaintext.clear();
            c.plaintext_read = 0;
        }
        if n == 0 && !buf.is_empty() && !c.peer_closed {
            if let Some(e) = &c.error {
                return Err(io::Error::new(io::ErrorKind::InvalidData, e.clone()));
            }
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(n)
    }
}

/// Application data to send, as `Write`.
#[derive(Debug)]
pub struct Writer<'a>(&'a mut ConnectionCommon);

impl Write for Writer<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(e) = &self.0.error {
            return Err(io::Error::new(io::ErrorKind::InvalidData, e.clone()));
        }
        if self.0.sent_close {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        if self.0.is_handshaking() {
            self.0.early_writes.extend_from_slice(buf);
        } else {
            self.0.send_application_data(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A TLCP client connection.
#[derive(Debug)]
pub struct ClientConnection(ConnectionCommon);

impl ClientConnection {
    /// A connection to `server_name` (checked against the server's signing
    /// certificate); the ClientHello is queued at once.
    pub fn new(config: Arc<ClientConfig>, server_name: ServerName<'static>) -> Result<Self, Error> {
        let mut c = ConnectionCommon::new(
            Role::Client {
                config,
                name: server_name,
            },
            State::ExpectServerHello,
        );
        c.start_client()?;
        Ok(Self(c))
    }
}

/// A TLCP server connection.
#[derive(Debug)]
pub struct ServerConnection(ConnectionCommon);

impl ServerConnection {
    /// A connection that waits for a ClientHello.
    pub fn new(config: Arc<ServerConfig>) -> Self {
        Self(ConnectionCommon::new(
            Role::Server { config },
            State::ExpectClientHello,
        ))
    }
}

impl core::ops::Deref for ClientConnection {
    type Target = ConnectionCommon;
    fn deref(&self) -> &ConnectionCommon {
        &self.0
    }
}

impl core::ops::DerefMut for ClientConnection {
    fn deref_mut(&mut self) -> &mut ConnectionCommon {
        &mut self.0
    }
}

impl core::ops::Deref for ServerConnection {
    type Target = ConnectionCommon;
    fn deref(&self) -> &ConnectionCommon {
        &self.0
    }
}

impl core::ops::DerefMut for ServerConnection {
    fn deref_mut(&mut self) -> &mut ConnectionCommon {
        &mut self.0
    }
}

/// A connection and a blocking transport as one `Read + Write` stream: the
/// handshake runs on first use.
#[derive(Debug)]
pub struct Stream<'a, T: Read + Write> {
    conn: &'a mut ConnectionCommon,
    sock: &'a mut T,
}

impl<'a, T: Read + Write> Stream<'a, T> {
    pub fn new(conn: &'a mut ConnectionCommon, sock: &'a mut T) -> Self {
        Self { conn, sock }
    }
}

impl<T: Read + Write> Read for Stream<'_, T> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.conn.complete_io(self.sock)?;
        loop {
            // What was received and verified comes out first, even when an
            // error followed it (the next read returns the error).
            match self.conn.reader().read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                other => return other,
            }
            if self.conn.read_tls(self.sock)? == 0 {
                // The transport ended without the peer's close_notify: a
                // truncation, not the end of the data.
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            let result = self.conn.process_new_packets();
            while self.conn.wants_write() {
                if self.conn.write_tls(self.sock).is_err() {
                    break;
                }
            }
            if let Err(e) = result {
                match self.conn.reader().read(buf) {
                    Ok(n) if n > 0 => return Ok(n),
                    _ => return Err(io::Error::new(io::ErrorKind::InvalidData, e)),
                }
            }
        }
    }
}

impl<T: Read + Write> Write for Stream<'_, T> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.conn.complete_io(self.sock)?;
        let n = self.conn.writer().write(buf)?;
        while self.conn.wants_write() {
            self.conn.write_tls(self.sock)?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        while self.conn.wants_write() {
            self.conn.write_tls(self.sock)?;
        }
        self.sock.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn read(name: &str) -> Vec<u8> {
        std::fs::read(format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    fn pump(a: &mut ConnectionCommon, b: &mut ConnectionCommon) {
        let mut wire = Vec::new();
        while a.wants_write() {
            a.write_tls(&mut wire).unwrap();
        }
        let mut rest = &wire[..];
        while !rest.is_empty() {
            b.read_tls(&mut rest).unwrap();
            b.process_new_packets().unwrap();
        }
    }

    /// A ClientHello or HelloRequest after the handshake is answered with a
    /// no_renegotiation warning; the connection goes on.
    #[test]
    fn renegotiation_is_refused_and_the_connection_goes_on() {
        let id = crate::Identity::from_pem(
            &read("server_sign.crt"),
            &read("server_sign.key"),
            &read("server_enc.crt"),
            &read("server_enc.key"),
        )
        .unwrap();
        let server = Arc::new(ServerConfig::new(id));
        let client = Arc::new(ClientConfig::new(&read("ca.crt")).unwrap());
        let mut c = ClientConnection::new(client, "localhost".try_into().unwrap()).unwrap();
        let mut s = ServerConnection::new(server);
        for _ in 0..4 {
            pump(&mut c, &mut s);
            pump(&mut s, &mut c);
        }
        assert!(!c.is_handshaking() && !s.is_handshaking());
        for (from_client, typ) in [(true, hs::CLIENT_HELLO), (false, hs::HELLO_REQUEST)] {
            let (a, b): (&mut ConnectionCommon, &mut ConnectionCommon) = if from_client {
                (&mut c, &mut s)
            } else {
                (&mut s, &mut c)
            };
            a.send_handshake(typ, b"");
            pump(a, b);
            // The refusal: one warning alert record back.
            assert!(b.wants_write());
            pump(b, a);
            a.writer().write_all(b"still here").unwrap();
            pump(a, b);
            let mut got = [0u8; 10];
            b.reader().read_exact(&mut got).unwrap();
            assert_eq!(&got, b"still here");
        }
    }
}
