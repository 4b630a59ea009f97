#!/usr/bin/env python3
"""tlcp against Tongsuo 8.3.2 (BabaSSL, NTLS) over 127.0.0.1 (issue 49):
our examples/tlcp_client.rs against a Tongsuo server and a Tongsuo client
against our examples/tlcp_server.rs, both driven by tongsuo_ntls.py:

  * every suite (ECC_SM4_CBC_SM3, ECC_SM4_GCM_SM3, ECDHE_SM4_CBC_SM3,
    ECDHE_SM4_GCM_SM3), with and without client authentication where the
    suite allows it (ECDHE: with only), 0 B, 1 B, 16 KiB and 1 MiB echoed
    byte-exactly, the suite and the client certificate seen on both sides;
  * session-ID resumption per suite, each way, resumed on both sides;
  * a bit flipped (by a relay) in an application-data record, each way,
    CBC and GCM: the receiver fails with bad_record_mac, the sender gets
    that alert, and the receiver delivers nothing of that record (nor of
    anything else but the record before it);
  * a certificate from a CA nobody trusts, each way: refused, unknown_ca;
  * a signing certificate offered as the encryption certificate (the
    signing certificate itself, and another signing-only one), each way:
    refused, bad_certificate. Tongsuo will not load a certificate without
    keyEncipherment/dataEncipherment with SSL_CTX_use_enc_certificate, so
    its SSL-level SSL_use_enc_certificate_file (which does not look at key
    usage) installs it from a certificate callback; a relay checks that the
    Certificate message then carries it;
  * our master secret (SSLKEYLOGFILE) equal to Tongsuo's keylog and
    session, per suite, each way.

Prints one line per case and a final `N passed, M failed`; exits 1 on any
failure.

Usage: interop.py EXAMPLES_DIR CERT_DIR
CERT_DIR: other_client_{sign,enc} (issued by tests/data's other_ca),
server_sign2 and client_sign2 (signing-only, issued by the test CA), each
.crt and .key (run.sh makes them).
"""
import ctypes
import os
import queue
import re
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tongsuo_ntls as tn  # noqa: E402

EXAMPLES, CERT_DIR = sys.argv[1], sys.argv[2]
CLIENT = os.path.join(EXAMPLES, "tlcp-client")
SERVER = os.path.join(EXAMPLES, "tlcp-server")
DATA = tn.DATA
SUITES = list(tn.SUITES)  # our names, in the driver's order
TONGSUO = {gb: v[1] for gb, v in tn.SUITES.items()}  # our name -> Tongsuo's
BY_ID = {"0x%04x" % v[0]: gb for gb, v in tn.SUITES.items()}  # code -> our name
SIZES = [0, 1, 16384, 1 << 20]
TIMEOUT = 30
CHUNK = 1 << 16  # the Tongsuo client writes this much, then reads it back
CLIENT_SUBJECT = "/C=CN/O=tlcp test/CN=tlcp client (sign)"
failures = []
passed = 0


def data_of(size, seed=7):
    """size bytes of a pattern that is not periodic in 16 (nor in 256)."""
    block = bytes(((i * 31 + seed) ^ (i >> 8)) & 0xFF for i in range(4093))
    return (block * (size // len(block) + 1))[:size]


def report(name, ok, detail=""):
    global passed
    print(f"{'ok  ' if ok else 'FAIL'} {name}{(': ' + detail) if detail and not ok else ''}",
          flush=True)
    if ok:
        passed += 1
    else:
        failures.append(name)


def short(s, n=400):
    """s on one line, cut to n characters."""
    s = " | ".join(line.strip() for line in str(s).strip().splitlines())
    return s if len(s) <= n else s[:n] + "..."


def data_file(name):
    return os.path.join(DATA, name)


def cert_file(name):
    return os.path.join(CERT_DIR, name)


def der(path):
    with open(path) as f:
        return ssl.PEM_cert_to_DER_cert(f.read())


def is_ecdhe(suite):
    return suite.startswith("ECDHE")


def pair(prefix):
    """--sign-cert ... --enc-key arguments for a sign/enc pair of tests/data."""
    return ["--sign-cert", data_file(prefix + "_sign.crt"),
            "--sign-key", data_file(prefix + "_sign.key"),
            "--enc-cert", data_file(prefix + "_enc.crt"),
            "--enc-key", data_file(prefix + "_enc.key")]


CLIENT_PAIR = pair("client")
SERVER_PAIR = pair("server")


# ---- Our side: the examples as processes.

def our_client(port, data, *args, env=None):
    """tlcp-client against 127.0.0.1:port with `data` on its standard input:
    (exit status, standard output, standard error)."""
    cmd = [CLIENT, "--connect", f"127.0.0.1:{port}", "--ca", data_file("ca.crt"),
           "--server-name", "localhost", *args]
    try:
        p = subprocess.run(cmd, input=data, capture_output=True, timeout=TIMEOUT, env=env)
    except subprocess.TimeoutExpired as e:
        return -1, e.stdout or b"", f"timed out; {(e.stderr or b'').decode(errors='replace')}"
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


class OurServer:
    """tlcp-server on an ephemeral port; line() is its next connection's
    line (`suite=... resumed=... client_cert=... echoed=N` or `error=...`)."""

    def __init__(self, *args, env=None):
        self.p = subprocess.Popen([SERVER, "--listen", "127.0.0.1:0", *args],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=env)
        first = self.p.stderr.readline()
        m = re.match(r"listening on 127\.0\.0\.1:(\d+)", first)
        if not m:
            self.close()
            raise RuntimeError(f"tlcp-server did not start: {first!r}")
        self.port = int(m.group(1))
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            self.lines.put(line.strip())

    def line(self):
        try:
            return self.lines.get(timeout=TIMEOUT)
        except queue.Empty:
            return "(no line from tlcp-server)"

    def close(self):
        self.p.kill()
        self.p.wait()
        self.p.stdout.close()
        self.p.stderr.close()

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()


def our_server(auth, *args, env=None):
    """tlcp-server with tests/data's server pair, requiring client
    certificates from the test CA with `auth`."""
    return OurServer(*SERVER_PAIR, *(["--ca", data_file("ca.crt")] if auth else []),
                     *args, env=env)


# ---- Tongsuo's side.

def tongsuo_server(suite, auth, **kw):
    """A Tongsuo echo server for one suite, requiring client certificates
    with `auth` (an ECDHE server requires them anyway)."""
    return tn.TongsuoServer(suites=[TONGSUO[suite]], verify="require" if auth else "none", **kw)


def brief(res):
    """A Tongsuo server's connection record without the bulky fields."""
    return short({k: v for k, v in res.items() if k not in ("received", "keylog")})


def tongsuo_exchange(cli, port, data, session=None):
    """A Tongsuo client connection: handshake, then `data` sent CHUNK bytes
    at a time, each chunk read back before the next (so that no socket
    buffer can fill), then close_notify. Returns the driver's connection
    info plus "got" (the bytes read back, also on failure), "error" and
    "session" (an SSL_SESSION* to free with cli.free_session)."""
    L = tn.lib()
    L.ERR_clear_error()
    res = {"ok": False, "got": b"", "error": None, "session": None}
    kl0 = cli.ctx.keylog_len()
    s = socket.create_connection(("127.0.0.1", port))
    s.setblocking(True)
    tn._set_deadline(s, TIMEOUT)
    conn = L.SSL_new(cli.ctx.ctx)
    got = bytearray()
    try:
        L.SSL_set_fd(conn, s.fileno())
        if session:
            tn._check(L.SSL_set_session(conn, session), "SSL_set_session")
        r = L.SSL_connect(conn)
        if r != 1:
            raise tn.TongsuoError(tn._ssl_io_error(conn, r, "SSL_connect"))
        res.update(tn._conn_info(conn))
        buf = ctypes.create_string_buffer(16384)
        for pos in range(0, len(data), CHUNK):
            chunk = data[pos:pos + CHUNK]
            tn._write_all(conn, chunk, "SSL_write")
            want = len(got) + len(chunk)
            while len(got) < want:
                n = L.SSL_read(conn, buf, min(len(buf), want - len(got)))
                if n <= 0:
                    raise tn.TongsuoError(tn._ssl_io_error(conn, n, "SSL_read"))
                got += buf.raw[:n]
        res["session"] = L.SSL_get1_session(conn)
        L.SSL_shutdown(conn)
        L.SSL_read(conn, buf, 1)  # the peer's close_notify
        tn.ssl_errors()
        res["ok"] = True
    except tn.TongsuoError as e:
        res["error"] = str(e)
    finally:
        res["got"] = bytes(got)
        res["keylog"] = cli.ctx.keylog_since(kl0)
        L.SSL_free(conn)
        s.close()
    return res


CERT_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
_cert_api = []


def enc_cert_from_callback(ctx, cert, key):
    """Make a Tongsuo context (a TongsuoServer's or TongsuoClient's .ctx)
    offer `cert`/`key` as its encryption certificate whatever its key usage:
    a certificate callback (called when the server has read the
    ClientHello, and when the client has read a CertificateRequest) sets
    them with the SSL-level SSL_use_enc_certificate_file, which, unlike
    SSL_CTX_use_enc_certificate, does not require keyEncipherment or
    dataEncipherment."""
    L = tn.lib()
    if not _cert_api:
        L.SSL_CTX_set_cert_cb.argtypes = [ctypes.c_void_p, CERT_CB, ctypes.c_void_p]
        L.SSL_CTX_set_cert_cb.restype = None
        for f in (L.SSL_use_enc_certificate_file, L.SSL_use_enc_PrivateKey_file):
            f.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
            f.restype = ctypes.c_int
        _cert_api.append(True)

    def cb(conn, _arg):
        ok = L.SSL_use_enc_certificate_file(conn, cert.encode(), tn.SSL_FILETYPE_PEM) == 1 and \
            L.SSL_use_enc_PrivateKey_file(conn, key.encode(), tn.SSL_FILETYPE_PEM) == 1
        return 1 if ok else 0

    ctx.cert_cb = CERT_CB(cb)  # kept alive with the context
    L.SSL_CTX_set_cert_cb(ctx.ctx, ctx.cert_cb, None)


def certificate_messages(session, direction):
    """The certificate lists (DER) of the Certificate messages a relay saw
    going one way (each Tongsuo handshake message is a record of its own)."""
    out = []
    for d, rec in tn.ordered_records(session):
        if d != direction or rec[0] != 22 or len(rec) < 12 or rec[5] != 11:
            continue
        body = rec[9:]
        total = int.from_bytes(body[:3], "big")
        pos, certs = 3, []
        while pos < 3 + total:
            n = int.from_bytes(body[pos:pos + 3], "big")
            certs.append(bytes(body[pos + 3:pos + 3 + n]))
            pos += 3 + n
        out.append(certs)
    return out


def flip_data_record(nth):
    """A relay hook flipping one bit in the middle of the nth (from 1)
    application-data record that carries data (Tongsuo's empty records, 24
    or 64 bytes, do not count); records what it did in .flipped."""
    state = {"seen": 0}

    def hook(_i, rec):
        if rec[0] == 23 and len(rec) - 5 > 1000:
            state["seen"] += 1
            if state["seen"] == nth:
                rec = bytearray(rec)
                rec[5 + (len(rec) - 5) // 2] ^= 0x04
                hook.flipped = len(rec) - 5
                return bytes(rec)
        return rec

    hook.flipped = None
    return hook


def app_data_lengths(session, direction):
    """Fragment lengths of the application-data records a relay forwarded."""
    return [len(rec) - 5 for d, rec in tn.ordered_records(session)
            if d == direction and rec[0] == 23]


def plaintext_upper_bound(suite, fragments):
    """At most how many data bytes application-data records of these
    fragment lengths carry: GCM exactly length - 24, CBC at most
    length - 16 - 32 - 1 (explicit IV, HMAC-SM3, one byte of padding)."""
    if "GCM" in suite:
        return sum(n - 24 for n in fragments)
    return sum(n - 49 for n in fragments)


# ---- The cases.

def configs():
    """(suite, client authentication) pairs: ECDHE needs client certificates."""
    for suite in SUITES:
        for auth in ([True] if is_ecdhe(suite) else [False, True]):
            yield suite, auth


def auth_name(auth):
    return "client auth" if auth else "no client auth"


def client_matrix():
    """Our client, a Tongsuo server; every suite and size."""
    for suite, auth in configs():
        with tongsuo_server(suite, auth) as srv:
            for i, size in enumerate(SIZES):
                data = data_of(size, i)
                rc, out, err = our_client(srv.port, data, *(CLIENT_PAIR if auth else []))
                res = (srv.wait_results(i + 1, timeout=TIMEOUT)[i:] or [{}])[0]
                ok = rc == 0 and out == data and f"suite={suite} resumed=false" in err and \
                    res.get("ok") and BY_ID.get(res.get("cipher_id")) == suite and \
                    not res.get("reused") and res.get("received") == data.hex() and \
                    res.get("peer_subject") == (CLIENT_SUBJECT if auth else None)
                report(f"our client -> Tongsuo server {suite} {auth_name(auth)}: {size} B echoed, "
                       f"{suite} on both sides", ok,
                       f"rc={rc} out={len(out)} B err={short(err)} tongsuo={brief(res)}")


def server_matrix():
    """A Tongsuo client, our server; every suite and size."""
    for suite, auth in configs():
        cli = tn.TongsuoClient(suites=[TONGSUO[suite]], client_cert=auth)
        try:
            with our_server(auth) as srv:
                for i, size in enumerate(SIZES):
                    data = data_of(size, 100 + i)
                    r = tongsuo_exchange(cli, srv.port, data)
                    line = srv.line()
                    cli.free_session(r["session"])
                    ok = r["ok"] and r["got"] == data and BY_ID.get(r.get("cipher_id")) == suite \
                        and not r.get("reused") and \
                        line == f"suite={suite} resumed=false client_cert={str(auth).lower()} " \
                                f"echoed={size}"
                    report(f"Tongsuo client -> our server {suite} {auth_name(auth)}: {size} B "
                           f"echoed, {suite} on both sides", ok,
                           f"tongsuo ok={r['ok']} got={len(r['got'])} B cipher={r.get('cipher')} "
                           f"error={r['error']} [ours: {line}]")
        finally:
            cli.close()


def resumption():
    """Session-ID resumption per suite, each way (client certificates for
    ECDHE only); both sides must say the second connection resumed."""
    for suite in SUITES:
        auth = is_ecdhe(suite)
        data = data_of(1000, 3)
        with tongsuo_server(suite, auth) as srv:
            rc, out, err = our_client(srv.port, data, "--connections", "2", "--suites", suite,
                                      *(CLIENT_PAIR if auth else []))
            res = srv.wait_results(2, timeout=TIMEOUT)
            lines = re.findall(r"suite=(\S+) resumed=(\S+)", err)
            ok = rc == 0 and out == data * 2 and lines == [(suite, "false"), (suite, "true")] and \
                len(res) == 2 and all(x.get("ok") for x in res) and \
                [x.get("reused") for x in res] == [False, True] and \
                res[0].get("session_id") == res[1].get("session_id") and \
                res[0].get("master_secret") == res[1].get("master_secret") and \
                all(BY_ID.get(x.get("cipher_id")) == suite for x in res)
            report(f"resumption: our client -> Tongsuo server {suite}: second connection "
                   f"resumed on both sides", ok,
                   f"rc={rc} err={short(err)} tongsuo={[brief(x) for x in res]}")
        cli = tn.TongsuoClient(suites=[TONGSUO[suite]], client_cert=auth)
        try:
            with our_server(auth, "--suites", suite) as srv:
                r1 = tongsuo_exchange(cli, srv.port, data)
                l1 = srv.line()
                r2 = tongsuo_exchange(cli, srv.port, data, session=r1["session"]) \
                    if r1["ok"] else {"ok": False, "error": "first connection failed", "got": b"",
                                      "session": None}
                l2 = srv.line() if r1["ok"] else ""
                cli.free_session(r1["session"])
                cli.free_session(r2["session"])
            ok = r1["ok"] and r2["ok"] and r1["got"] == data and r2["got"] == data and \
                not r1["reused"] and r2["reused"] and \
                r1["session_id"] == r2["session_id"] and \
                r1["master_secret"] == r2["master_secret"] and \
                l1.startswith(f"suite={suite} resumed=false ") and \
                l2.startswith(f"suite={suite} resumed=true ") and \
                l1.endswith(" echoed=1000") and l2.endswith(" echoed=1000")
            report(f"resumption: Tongsuo client -> our server {suite}: second connection "
                   f"resumed on both sides", ok,
                   f"tongsuo reused={r1.get('reused')},{r2.get('reused')} "
                   f"error={r1['error'] or r2['error']} [ours: {l1} | {l2}]")
        finally:
            cli.close()


FLIP_SUITES = ["ECC_SM4_CBC_SM3", "ECDHE_SM4_GCM_SM3"]
# Two records, 16384 and 7232 bytes, whoever sends them (both sides cut
# what they write into records of at most 16384 bytes); the relay flips a
# bit in the second, the last: a receiver that closes its socket with data
# unread sends a TCP reset, which can overtake its alert at the relay.
FLIP_SIZE = 16384 + 7232


def echo_records(sessions, direction):
    """Fragment lengths of the data records (empty ones left out) a relay
    forwarded one way."""
    return [n for n in app_data_lengths(sessions[0], direction) if n > 1000] if sessions else []


def flipped_bits():
    """A relay flips a bit in the second (last) data record after the
    handshake: the receiver fails with bad_record_mac, says so to the
    sender, and delivers nothing of that record. What a receiver delivered
    shows in the echo (both echo servers write back what they read) or, for
    our client, on its standard output. Tongsuo delivers the first record's
    16384 bytes; our side delivers them or, when the flipped record came in
    the same read as the first one, nothing (Stream::read returns the error
    before the plaintext it has buffered)."""
    data = data_of(FLIP_SIZE, 21)
    first = data[:16384]
    for suite in FLIP_SUITES:
        auth = is_ecdhe(suite)
        args = CLIENT_PAIR if auth else []
        what = "delivers nothing of that record"
        # Our client receives the flipped record (Tongsuo's echo).
        with tongsuo_server(suite, auth) as srv:
            hook = flip_data_record(2)
            relay = tn.Relay(srv.port, mutate_s2c=hook)
            rc, out, err = our_client(relay.port, data, *args)
            res = srv.wait_results(1, timeout=TIMEOUT)
            relay.close()
            ok = hook.flipped is not None and rc != 0 and first.startswith(out) and \
                "BadRecordMac" in err and "AlertReceived" not in err and res and \
                re.search(r"(?i)alert bad record mac", res[0].get("error") or "") is not None
            report(f"flipped bit: Tongsuo server -> our client {suite}: our client fails with "
                   f"bad_record_mac, {what} (delivered {len(out)} B before it)", ok,
                   f"flipped={hook.flipped} rc={rc} out={len(out)} B (a prefix: "
                   f"{data.startswith(out)}) err={short(err)} "
                   f"tongsuo={short(res[0].get('error') if res else None)}")
        # Tongsuo's server receives it: its echo is the first record only.
        with tongsuo_server(suite, auth) as srv:
            hook = flip_data_record(2)
            relay = tn.Relay(srv.port, mutate_c2s=hook)
            rc, out, err = our_client(relay.port, data, *args)
            res = srv.wait_results(1, timeout=TIMEOUT)
            sessions = relay.wait(1, timeout=TIMEOUT)
            relay.close()
            back = echo_records(sessions, "s2c")
            ok = hook.flipped is not None and rc != 0 and first.startswith(out) and \
                "AlertReceived(BadRecordMac)" in err and res and \
                re.search(r"(?i)bad record mac", res[0].get("error") or "") is not None and \
                len(back) == 1 and 16384 <= plaintext_upper_bound(suite, back) < 16384 + 256
            report(f"flipped bit: our client -> Tongsuo server {suite}: Tongsuo fails with "
                   f"bad_record_mac, {what} (echoed the 16384 B before it)", ok,
                   f"flipped={hook.flipped} echo records={back} rc={rc} out={len(out)} B "
                   f"err={short(err)} tongsuo={short(res[0].get('error') if res else None)}")
        # Our server receives it: the Tongsuo client sends the data in one
        # write (two records after an empty one).
        cli = tn.TongsuoClient(suites=[TONGSUO[suite]], client_cert=auth)
        try:
            with our_server(auth) as srv:
                hook = flip_data_record(2)
                relay = tn.Relay(srv.port, mutate_c2s=hook)
                r = tongsuo_exchange(cli, relay.port, data)
                line = srv.line()
                sessions = relay.wait(1, timeout=TIMEOUT)
                relay.close()
                cli.free_session(r["session"])
            back = echo_records(sessions, "s2c")
            ok = hook.flipped is not None and not r["ok"] and first.startswith(r["got"]) and \
                re.search(r"(?i)alert bad record mac", r["error"] or "") is not None and \
                line.startswith("error=") and "BadRecordMac" in line and \
                len(back) <= 1 and plaintext_upper_bound(suite, back) < 16384 + 256
            report(f"flipped bit: Tongsuo client -> our server {suite}: our server fails with "
                   f"bad_record_mac, {what} (echoed {len(r['got'])} B before it)", ok,
                   f"flipped={hook.flipped} got={len(r['got'])} B error={short(r['error'])} "
                   f"echo records={back} [ours: {line}]")
        finally:
            cli.close()
        # Tongsuo's client receives it, from our server's echo.
        cli = tn.TongsuoClient(suites=[TONGSUO[suite]], client_cert=auth)
        try:
            with our_server(auth) as srv:
                hook = flip_data_record(2)
                relay = tn.Relay(srv.port, mutate_s2c=hook)
                r = tongsuo_exchange(cli, relay.port, data)  # one chunk: both records
                line = srv.line()
                relay.close()
                cli.free_session(r["session"])
            ok = hook.flipped is not None and not r["ok"] and r["got"] == first and \
                re.search(r"(?i)decryption failed or bad record mac", r["error"] or "") and \
                "AlertReceived(BadRecordMac)" in line
            report(f"flipped bit: our server -> Tongsuo client {suite}: Tongsuo fails with "
                   f"bad_record_mac, {what} (delivered the 16384 B before it)", ok,
                   f"flipped={hook.flipped} got={len(r['got'])} B error={short(r['error'])} "
                   f"[ours: {line}]")
        finally:
            cli.close()


NEGATIVE_SUITES = ["ECC_SM4_CBC_SM3", "ECDHE_SM4_GCM_SM3"]


def unknown_ca():
    """Certificates from other_ca, which neither side trusts."""
    for suite in NEGATIVE_SUITES:
        auth = is_ecdhe(suite)
        with tongsuo_server(suite, auth, other_pki=True) as srv:
            rc, out, err = our_client(srv.port, b"secret", *(CLIENT_PAIR if auth else []))
            res = srv.wait_results(1, timeout=TIMEOUT)
            ok = rc != 0 and out == b"" and "UnknownIssuer" in err and res and \
                not res[0].get("ok") and \
                re.search(r"(?i)alert unknown ca", res[0].get("error") or "") is not None
            report(f"unknown CA: our client refuses a Tongsuo server's other_ca certificates "
                   f"{suite} (unknown_ca)", ok,
                   f"rc={rc} err={short(err)} "
                   f"tongsuo={short(res[0].get('error') if res else None)}")
        cli = tn.TongsuoClient(suites=[TONGSUO[suite]],
                               sign_cert=cert_file("other_client_sign.crt"),
                               sign_key=cert_file("other_client_sign.key"),
                               enc_cert=cert_file("other_client_enc.crt"),
                               enc_key=cert_file("other_client_enc.key"))
        try:
            with our_server(True) as srv:
                r = tongsuo_exchange(cli, srv.port, b"secret")
                line = srv.line()
                cli.free_session(r["session"])
            ok = not r["ok"] and r["got"] == b"" and \
                re.search(r"(?i)alert unknown ca", r["error"] or "") is not None and \
                line.startswith("error=") and "UnknownIssuer" in line
            report(f"unknown CA: our server refuses a Tongsuo client's other_ca certificates "
                   f"{suite} (unknown_ca)", ok, f"error={short(r['error'])} [ours: {line}]")
        finally:
            cli.close()


def sign_as_enc():
    """A signing-only certificate in the encryption certificate's place:
    the signing certificate itself, and another signing-only certificate."""
    for suite in NEGATIVE_SUITES:
        auth = is_ecdhe(suite)
        for what, prefix, where in (("the signing certificate", "server_sign", data_file),
                                    ("another signing-only certificate", "server_sign2",
                                     cert_file)):
            enc = where(prefix + ".crt")
            with tongsuo_server(suite, auth) as srv:
                enc_cert_from_callback(srv.ctx, enc, where(prefix + ".key"))
                relay = tn.Relay(srv.port)
                rc, out, err = our_client(relay.port, b"secret", *(CLIENT_PAIR if auth else []))
                res = srv.wait_results(1, timeout=TIMEOUT)
                sessions = relay.wait(1, timeout=TIMEOUT)
                relay.close()
            sent = certificate_messages(sessions[0], "s2c") if sessions else []
            ok = len(sent) == 1 and sent[0][:2] == [der(data_file("server_sign.crt")), der(enc)] \
                and rc != 0 and out == b"" and "WrongKeyUsage" in err and res and \
                re.search(r"(?i)alert bad certificate", res[0].get("error") or "") is not None
            report(f"sign as enc: our client refuses a Tongsuo server offering {what} as its "
                   f"encryption certificate {suite} (bad_certificate)", ok,
                   f"certificate message ok={bool(sent) and sent[0][1:2] == [der(enc)]} rc={rc} "
                   f"err={short(err)} tongsuo={short(res[0].get('error') if res else None)}")
        for what, prefix, where in (("the signing certificate", "client_sign", data_file),
                                    ("another signing-only certificate", "client_sign2",
                                     cert_file)):
            enc = where(prefix + ".crt")
            cli = tn.TongsuoClient(suites=[TONGSUO[suite]], client_cert=True)
            try:
                enc_cert_from_callback(cli.ctx, enc, where(prefix + ".key"))
                with our_server(True) as srv:
                    relay = tn.Relay(srv.port)
                    r = tongsuo_exchange(cli, relay.port, b"secret")
                    line = srv.line()
                    sessions = relay.wait(1, timeout=TIMEOUT)
                    relay.close()
                    cli.free_session(r["session"])
            finally:
                cli.close()
            sent = certificate_messages(sessions[0], "c2s") if sessions else []
            ok = len(sent) == 1 and sent[0][:2] == [der(data_file("client_sign.crt")), der(enc)] \
                and not r["ok"] and r["got"] == b"" and \
                re.search(r"(?i)alert bad certificate", r["error"] or "") is not None and \
                line.startswith("error=") and "WrongKeyUsage" in line
            report(f"sign as enc: our server refuses a Tongsuo client offering {what} as its "
                   f"encryption certificate {suite} (bad_certificate)", ok,
                   f"certificate message ok={bool(sent) and sent[0][1:2] == [der(enc)]} "
                   f"error={short(r['error'])} [ours: {line}]")


def keylog_lines(path):
    with open(path) as f:
        return [tuple(line.split()) for line in f if line.startswith("CLIENT_RANDOM ")]


def master_secrets():
    """Our SSLKEYLOGFILE line == Tongsuo's keylog line and session master
    secret, per suite, each way."""
    for suite in SUITES:
        auth = is_ecdhe(suite)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "client.keylog")
            env = dict(os.environ, SSLKEYLOGFILE=path)
            with tongsuo_server(suite, auth) as srv:
                rc, out, err = our_client(srv.port, b"keys", *(CLIENT_PAIR if auth else []),
                                          env=env)
                res = srv.wait_results(1, timeout=TIMEOUT)
            ours = keylog_lines(path) if os.path.exists(path) else []
            theirs = [tuple(line.split()) for line in (res[0].get("keylog") or [])] if res else []
            ok = rc == 0 and len(ours) == 1 and ours == theirs and \
                ours[0][1] == res[0].get("client_random") and \
                ours[0][2] == res[0].get("master_secret")
            report(f"master secret: our client's keylog == Tongsuo server's (keylog and "
                   f"session) {suite}", ok, f"rc={rc} err={short(err)} ours={ours} "
                   f"theirs={theirs}")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "server.keylog")
            env = dict(os.environ, SSLKEYLOGFILE=path)
            cli = tn.TongsuoClient(suites=[TONGSUO[suite]], client_cert=auth)
            try:
                with our_server(auth, env=env) as srv:
                    r = tongsuo_exchange(cli, srv.port, b"keys")
                    line = srv.line()
                    cli.free_session(r["session"])
            finally:
                cli.close()
            ours = keylog_lines(path) if os.path.exists(path) else []
            theirs = [tuple(line.split()) for line in r["keylog"]]
            ok = r["ok"] and "echoed=4" in line and len(ours) == 1 and ours == theirs and \
                ours[0][1] == r.get("client_random") and ours[0][2] == r.get("master_secret")
            report(f"master secret: our server's keylog == Tongsuo client's (keylog and "
                   f"session) {suite}", ok, f"error={r['error']} [ours: {line}] ours={ours} "
                   f"theirs={theirs}")


def main():
    t = time.monotonic()
    print(f"peer: Tongsuo {tn.tongsuo_version()} ({tn._find_so()})", flush=True)
    for case in [client_matrix, server_matrix, resumption, flipped_bits, unknown_ca,
                 sign_as_enc, master_secrets]:
        try:
            case()
        except Exception as e:  # noqa: BLE001 (a crash of the harness fails the run)
            report(f"{case.__name__}: the harness raised", False, repr(e))
    print(f"tlcp interop against Tongsuo: {time.monotonic() - t:.1f} s")
    print(f"{passed} passed, {len(failures)} failed")
    sys.exit(1 if failures or passed == 0 else 0)


if __name__ == "__main__":
    main()
