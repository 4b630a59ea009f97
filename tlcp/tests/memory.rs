//! Our client against our server in memory: every suite, with and without
//! client certificates, resumption, close_notify, tampered records, bad
//! certificates, and arbitrary bytes.

use std::sync::Arc;

use tlcp::{
    CipherSuite, ClientAuth, ClientConfig, ClientConnection, ConnectionCommon, Error, Identity,
    ServerConfig, ServerConnection,
};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

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

fn server(auth: ClientAuth) -> Arc<ServerConfig> {
    let mut c = ServerConfig::new(identity("server"));
    if auth != ClientAuth::None {
        c = c.with_client_auth(&read("ca.crt"), auth).unwrap();
    }
    Arc::new(c)
}

fn client(suite: CipherSuite, with_cert: bool) -> Arc<ClientConfig> {
    let mut c = ClientConfig::new(&read("ca.crt"))
        .unwrap()
        .with_suites(&[suite]);
    if with_cert {
        c = c.with_identity(identity("client"));
    }
    Arc::new(c)
}

/// Moves bytes both ways until neither side has anything to send.
fn pump(c: &mut ConnectionCommon, s: &mut ConnectionCommon) -> Result<(), (bool, Error)> {
    for _ in 0..100 {
        let mut moved = false;
        let mut buf = Vec::new();
        while c.wants_write() {
            c.write_tls(&mut buf).unwrap();
        }
        if !buf.is_empty() {
            moved = true;
            let mut rest = &buf[..];
            while !rest.is_empty() {
                s.read_tls(&mut rest).unwrap();
                s.process_new_packets().map_err(|e| (false, e))?;
            }
        }
        buf.clear();
        while s.wants_write() {
            s.write_tls(&mut buf).unwrap();
        }
        if !buf.is_empty() {
            moved = true;
            let mut rest = &buf[..];
            while !rest.is_empty() {
                c.read_tls(&mut rest).unwrap();
                c.process_new_packets().map_err(|e| (true, e))?;
            }
        }
        if !moved {
            return Ok(());
        }
    }
    panic!("no end to the exchange");
}

fn connect(
    client: &Arc<ClientConfig>,
    server: &Arc<ServerConfig>,
) -> (ClientConnection, ServerConnection) {
    let mut c = ClientConnection::new(client.clone(), "localhost".try_into().unwrap()).unwrap();
    let mut s = ServerConnection::new(server.clone());
    pump(&mut c, &mut s).unwrap();
    assert!(!c.is_handshaking() && !s.is_handshaking());
    (c, s)
}

fn echo(c: &mut ConnectionCommon, s: &mut ConnectionCommon, len: usize) {
    use std::io::{Read, Write};
    let data: Vec<u8> = (0..len).map(|i| (i * 13 + 7) as u8).collect();
    c.writer().write_all(&data).unwrap();
    pump(c, s).unwrap();
    let mut got = vec![0u8; len];
    if len > 0 {
        s.reader().read_exact(&mut got).unwrap();
    }
    assert_eq!(got, data);
    s.writer().write_all(&got).unwrap();
    pump(c, s).unwrap();
    let mut back = vec![0u8; len];
    if len > 0 {
        c.reader().read_exact(&mut back).unwrap();
    }
    assert_eq!(back, data);
}

#[test]
fn every_suite_with_and_without_client_certificates() {
    for suite in CipherSuite::ALL {
        for auth in [ClientAuth::None, ClientAuth::Optional, ClientAuth::Required] {
            for with_cert in [false, true] {
                let ecdhe = matches!(
                    suite,
                    CipherSuite::EcdheSm4CbcSm3 | CipherSuite::EcdheSm4GcmSm3
                );
                let should_work = match auth {
                    ClientAuth::None => !ecdhe,
                    ClientAuth::Optional => !ecdhe || with_cert,
                    ClientAuth::Required => with_cert,
                };
                let cfg = client(suite, with_cert);
                let srv = server(auth);
                let mut c = ClientConnection::new(cfg, "localhost".try_into().unwrap()).unwrap();
                let mut s = ServerConnection::new(srv);
                let r = pump(&mut c, &mut s);
                assert_eq!(
                    r.is_ok(),
                    should_work,
                    "{suite:?} {auth:?} cert={with_cert}: {r:?}"
                );
                if should_work {
                    assert_eq!(c.negotiated_cipher_suite(), Some(suite));
                    assert_eq!(s.negotiated_cipher_suite(), Some(suite));
                    assert_eq!(
                        s.peer_certificates().is_some(),
                        with_cert && auth != ClientAuth::None
                    );
                    assert_eq!(c.peer_certificates().unwrap().len(), 2);
                    for len in [0usize, 1, 16384, 16385, 100_000] {
                        echo(&mut c, &mut s, len);
                    }
                }
            }
        }
    }
}

#[test]
fn resumption_by_session_id() {
    for suite in CipherSuite::ALL {
        let cfg = client(suite, true);
        let srv = server(ClientAuth::Required);
        let (mut c, mut s) = connect(&cfg, &srv);
        assert_eq!(c.is_resumed(), Some(false));
        echo(&mut c, &mut s, 10);
        let (mut c, mut s) = connect(&cfg, &srv);
        assert_eq!(c.is_resumed(), Some(true), "{suite:?}");
        assert_eq!(s.is_resumed(), Some(true));
        echo(&mut c, &mut s, 1000);
    }
}

#[test]
fn close_notify_ends_the_stream() {
    use std::io::Read;
    let (mut c, mut s) = connect(
        &client(CipherSuite::EccSm4GcmSm3, false),
        &server(ClientAuth::None),
    );
    c.send_close_notify();
    pump(&mut c, &mut s).unwrap();
    assert_eq!(s.reader().read(&mut [0u8; 8]).unwrap(), 0);
}

#[test]
fn flipped_bit_is_bad_record_mac_and_nothing_is_delivered() {
    use std::io::{Read, Write};
    for suite in [CipherSuite::EccSm4CbcSm3, CipherSuite::EccSm4GcmSm3] {
        let (mut c, mut s) = connect(&client(suite, false), &server(ClientAuth::None));
        c.writer()
            .write_all(b"attack at dawn, attack at dawn, attack at dawn")
            .unwrap();
        let mut wire = Vec::new();
        while c.wants_write() {
            c.write_tls(&mut wire).unwrap();
        }
        let at = wire.len() - 20;
        wire[at] ^= 1;
        s.read_tls(&mut &wire[..]).unwrap();
        assert_eq!(s.process_new_packets(), Err(Error::BadRecordMac));
        assert!(s.reader().read(&mut [0u8; 64]).is_err());
        // The alert goes out.
        assert!(s.wants_write());
    }
}

#[test]
fn unknown_ca_and_sign_certificate_as_enc_are_refused() {
    // A server whose certificates come from a CA the client does not know.
    let other = Identity::from_pem(
        &read("other_server_sign.crt"),
        &read("other_server_sign.key"),
        &read("other_server_enc.crt"),
        &read("other_server_enc.key"),
    )
    .unwrap();
    let srv = Arc::new(ServerConfig::new(other));
    let mut c = ClientConnection::new(
        client(CipherSuite::EccSm4GcmSm3, false),
        "localhost".try_into().unwrap(),
    )
    .unwrap();
    let mut s = ServerConnection::new(srv);
    let (at_client, err) = pump(&mut c, &mut s).unwrap_err();
    assert!(at_client);
    assert_eq!(
        err,
        Error::InvalidCertificate(tlcp::CertificateError::UnknownIssuer)
    );

    // The signing certificate offered as the encryption certificate.
    let wrong = Identity::from_pem(
        &read("server_sign.crt"),
        &read("server_sign.key"),
        &read("server_sign.crt"),
        &read("server_sign.key"),
    )
    .unwrap();
    let srv = Arc::new(ServerConfig::new(wrong));
    let mut c = ClientConnection::new(
        client(CipherSuite::EccSm4CbcSm3, false),
        "localhost".try_into().unwrap(),
    )
    .unwrap();
    let mut s = ServerConnection::new(srv);
    let (_, err) = pump(&mut c, &mut s).unwrap_err();
    assert_eq!(
        err,
        Error::InvalidCertificate(tlcp::CertificateError::WrongKeyUsage)
    );

    // Another server name.
    let mut c = ClientConnection::new(
        client(CipherSuite::EccSm4CbcSm3, false),
        "example.com".try_into().unwrap(),
    )
    .unwrap();
    let mut s = ServerConnection::new(server(ClientAuth::None));
    let (_, err) = pump(&mut c, &mut s).unwrap_err();
    assert_eq!(
        err,
        Error::InvalidCertificate(tlcp::CertificateError::NotValidForName)
    );
}

#[test]
fn mutated_flights_are_errors_not_panics() {
    let mut rng = testkit::Rng::new(0x1234_5678_9abc_def1);
    let mut errors = 0;
    for round in 0..400 {
        let suite = CipherSuite::ALL[round % 4];
        let mut c =
            ClientConnection::new(client(suite, true), "localhost".try_into().unwrap()).unwrap();
        let mut s = ServerConnection::new(server(ClientAuth::Required));
        let mut hello = Vec::new();
        while c.wants_write() {
            c.write_tls(&mut hello).unwrap();
        }
        let to_client = round % 2 == 1;
        let mut flight = hello.clone();
        if to_client {
            s.read_tls(&mut &hello[..]).unwrap();
            s.process_new_packets().unwrap();
            flight.clear();
            while s.wants_write() {
                s.write_tls(&mut flight).unwrap();
            }
        }
        for _ in 0..1 + rng.next_u64() % 3 {
            let at = (rng.next_u64() % flight.len() as u64) as usize;
            match rng.next_u64() % 3 {
                0 => flight[at] ^= 1 << (rng.next_u64() % 8),
                1 => flight[at] = rng.next_u64() as u8,
                _ => flight.truncate(at.max(1)),
            }
        }
        let conn: &mut ConnectionCommon = if to_client { &mut c } else { &mut s };
        let mut rest = &flight[..];
        let mut failed = false;
        while !rest.is_empty() && !failed {
            match conn.read_tls(&mut rest) {
                Ok(_) => failed = conn.process_new_packets().is_err(),
                Err(_) => failed = true,
            }
        }
        errors += usize::from(failed);
    }
    // No panic is the point; most changes are caught (the rest are cuts
    // that leave the peer waiting, or bytes it ignores, e.g. the randoms).
    assert!(errors > 100, "{errors}");
}
