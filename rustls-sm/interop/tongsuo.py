#!/usr/bin/env python3
"""rustls-sm against Tongsuo (BabaSSL 8.3.2, statically linked in PyPI's
tongsuopy 1.0.1 and driven here with ctypes), over 127.0.0.1: our
examples/client.rs against a Tongsuo TLS 1.3 server and a Tongsuo client
against our examples/server.rs, for both RFC 8998 suites, X25519 and
curveSM2, the ECDSA and the SM2 certificate chain, a short message and
1 MiB echoed byte-exactly, the suite and group checked on both sides and
the CertificateVerify's scheme on Tongsuo's; then Tongsuo's RFC 8998
strict mode (SSL_CTX_enable_sm_tls13_strict: SM2 certificate, curveSM2
and sm2sig_sm3 only) both ways, and a forged SM2 certificate rejected
both ways. An SM2 certificate case passes only if both sides sign and
verify TLS 1.3's CertificateVerify with the same SM2 signer ID: Tongsuo
8.3.2 uses "TLSv1.3+GM+Cipher+Suite" (HANDSHAKE_SM2_ID in its
ssl/statem/statem_lib.c), as RFC 8998 and this crate do. Prints one line
per case; exits 1 on any failure.

Tongsuo is driven over blocking sockets (with SO_RCVTIMEO/SO_SNDTIMEO as
the deadline): a socket with a Python timeout is non-blocking underneath,
and SSL_connect then returns -1 with SSL_ERROR_WANT_READ (errno EAGAIN)
and nothing in the error queue.

Usage: tongsuo.py EXAMPLES_DIR CERT_DIR
"""
import ctypes
import os
import re
import select
import socket
import struct
import subprocess
import sys
import threading
import time

import tongsuopy

SUITES = ["TLS_SM4_GCM_SM3", "TLS_SM4_CCM_SM3"]
# Our name -> Tongsuo's (SSL_CTX_set1_groups_list).
GROUPS = {"X25519": "X25519", "curveSM2": "SM2"}
CERTS = ["ecdsa", "sm2"]
SCHEME = {"ecdsa": "ecdsa_secp256r1_sha256", "sm2": "sm2sig_sm3"}
SIZES = [len(b"hello, Tongsuo"), 1 << 20]
TIMEOUT = 10  # seconds, per socket operation and per case

EXAMPLES, CERT_DIR = sys.argv[1], sys.argv[2]
CLIENT = os.path.join(EXAMPLES, "client")
SERVER = os.path.join(EXAMPLES, "server")
failures = []
ran = 0


def cert(name):
    return os.path.join(CERT_DIR, name)


def data_of(size, seed=7):
    """size bytes of a pattern that is not periodic in 16 (nor in 256)."""
    if size == len(b"hello, Tongsuo"):
        return b"hello, Tongsuo"
    block = bytes(((i * 31 + seed) ^ (i >> 8)) & 0xFF for i in range(4093))
    return (block * (size // len(block) + 1))[:size]


def report(name, ok, detail=""):
    global ran
    ran += 1
    print(f"{'ok  ' if ok else 'FAIL'} {name}{(': ' + detail) if detail else ''}", flush=True)
    if not ok:
        failures.append(name)


# ---- Tongsuo through ctypes ----

SO = os.path.join(os.path.dirname(tongsuopy.__file__), "backends", "_tongsuo.abi3.so")
lib = ctypes.CDLL(SO, use_errno=True)
P, I, L, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_long, ctypes.c_char_p


def fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype, f.argtypes = restype, list(argtypes)
    return f


OpenSSL_version = fn("OpenSSL_version", S, I)
BabaSSL_version_num = fn("BabaSSL_version_num", ctypes.c_ulong)
TLS_server_method = fn("TLS_server_method", P)
TLS_client_method = fn("TLS_client_method", P)
SSL_CTX_new = fn("SSL_CTX_new", P, P)
SSL_CTX_free = fn("SSL_CTX_free", None, P)
SSL_CTX_ctrl = fn("SSL_CTX_ctrl", L, P, I, L, P)
SSL_CTX_set_ciphersuites = fn("SSL_CTX_set_ciphersuites", I, P, S)
SSL_CTX_use_certificate_chain_file = fn("SSL_CTX_use_certificate_chain_file", I, P, S)
SSL_CTX_use_PrivateKey_file = fn("SSL_CTX_use_PrivateKey_file", I, P, S, I)
SSL_CTX_check_private_key = fn("SSL_CTX_check_private_key", I, P)
SSL_CTX_load_verify_locations = fn("SSL_CTX_load_verify_locations", I, P, S, S)
SSL_CTX_set_verify = fn("SSL_CTX_set_verify", None, P, I, P)
SSL_CTX_enable_sm_tls13_strict = fn("SSL_CTX_enable_sm_tls13_strict", None, P)
SSL_new = fn("SSL_new", P, P)
SSL_free = fn("SSL_free", None, P)
SSL_set_fd = fn("SSL_set_fd", I, P, I)
SSL_ctrl = fn("SSL_ctrl", L, P, I, L, P)
SSL_set1_host = fn("SSL_set1_host", I, P, S)
SSL_connect = fn("SSL_connect", I, P)
SSL_accept = fn("SSL_accept", I, P)
SSL_read = fn("SSL_read", I, P, P, I)
SSL_write = fn("SSL_write", I, P, P, I)
SSL_shutdown = fn("SSL_shutdown", I, P)
SSL_get_error = fn("SSL_get_error", I, P, I)
SSL_get_version = fn("SSL_get_version", S, P)
SSL_get_current_cipher = fn("SSL_get_current_cipher", P, P)
SSL_CIPHER_get_name = fn("SSL_CIPHER_get_name", S, P)
SSL_get_verify_result = fn("SSL_get_verify_result", L, P)
SSL_get_peer_signature_type_nid = fn("SSL_get_peer_signature_type_nid", I, P, ctypes.POINTER(I))
SSL_get_signature_type_nid = fn("SSL_get_signature_type_nid", I, P, ctypes.POINTER(I))
EVP_PKEY_id = fn("EVP_PKEY_id", I, P)
EVP_PKEY_free = fn("EVP_PKEY_free", None, P)
EVP_PKEY_get0_EC_KEY = fn("EVP_PKEY_get0_EC_KEY", P, P)
EC_KEY_get0_group = fn("EC_KEY_get0_group", P, P)
EC_GROUP_get_curve_name = fn("EC_GROUP_get_curve_name", I, P)
OBJ_nid2sn = fn("OBJ_nid2sn", S, I)
ERR_get_error = fn("ERR_get_error", ctypes.c_ulong)
ERR_error_string_n = fn("ERR_error_string_n", None, ctypes.c_ulong, P, ctypes.c_size_t)
ERR_clear_error = fn("ERR_clear_error", None)

BABASSL_VERSION = 6  # OpenSSL_version(): "BabaSSL 8.3.2" (0 gives "OpenSSL 1.1.1h")
SSL_CTRL_SET_TLSEXT_HOSTNAME = 55
SSL_CTRL_SET_GROUPS_LIST = 92
SSL_CTRL_GET_PEER_SIGNATURE_NID = 108
SSL_CTRL_GET_PEER_TMP_KEY = 109
SSL_CTRL_SET_MIN_PROTO_VERSION = 123
SSL_CTRL_SET_MAX_PROTO_VERSION = 124
SSL_CTRL_GET_SIGNATURE_NID = 132
TLS1_3_VERSION = 0x0304
SSL_FILETYPE_PEM = 1
SSL_VERIFY_PEER = 1
SSL_ERROR_ZERO_RETURN = 6
NID_X25519, NID_sm2, NID_sm3 = 1034, 1172, 1143
NID_sha256, EVP_PKEY_EC = 672, 408


class TongsuoError(Exception):
    pass


def errors():
    """Tongsuo's error queue (of this thread), emptied."""
    out = []
    while True:
        e = ERR_get_error()
        if not e:
            return "; ".join(out)
        buf = ctypes.create_string_buffer(256)
        ERR_error_string_n(e, buf, 256)
        out.append(buf.value.decode())


def fail(what, ssl=None, ret=None):
    detail = f"{what}"
    if ssl is not None and ret is not None:
        detail += f" (SSL_get_error={SSL_get_error(ssl, ret)}, errno={ctypes.get_errno()})"
    raise TongsuoError(f"{detail}: {errors() or 'no error queued'}")


def context(server, suite, group, cert_name=None, ca=None, strict=False, chain=None):
    ctx = SSL_CTX_new(TLS_server_method() if server else TLS_client_method())
    if not ctx:
        fail("SSL_CTX_new")
    ok = (SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_3_VERSION, None) == 1
          and SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MAX_PROTO_VERSION, TLS1_3_VERSION, None) == 1
          and SSL_CTX_set_ciphersuites(ctx, suite.encode()) == 1
          and SSL_CTX_ctrl(ctx, SSL_CTRL_SET_GROUPS_LIST, 0, group.encode()) == 1)
    if not ok:
        fail(f"configuring {suite} {group}")
    if cert_name:
        chain = cert(chain or cert_name + "-chain.pem")
        if (SSL_CTX_use_certificate_chain_file(ctx, chain.encode()) != 1
                or SSL_CTX_use_PrivateKey_file(ctx, cert(cert_name + ".key").encode(),
                                               SSL_FILETYPE_PEM) != 1
                or SSL_CTX_check_private_key(ctx) != 1):
            fail(f"loading the {cert_name} certificate and key")
    if ca:
        if SSL_CTX_load_verify_locations(ctx, cert(ca + "-ca.pem").encode(), None) != 1:
            fail(f"loading {ca}-ca.pem")
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, None)
    if strict:
        SSL_CTX_enable_sm_tls13_strict(ctx)
    return ctx


def blocking(sock):
    """A blocking socket whose reads and writes give up after TIMEOUT."""
    sock.setblocking(True)
    tv = struct.pack("ll", TIMEOUT, 0)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, tv)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, tv)
    return sock


def key_name(pkey):
    nid = EVP_PKEY_id(pkey)
    if nid == NID_X25519:
        return "X25519"
    ec = EVP_PKEY_get0_EC_KEY(pkey)
    if ec:
        curve = EC_GROUP_get_curve_name(EC_KEY_get0_group(ec))
        return "curveSM2" if curve == NID_sm2 else (OBJ_nid2sn(curve) or b"?").decode()
    return (OBJ_nid2sn(nid) or b"?").decode()


def scheme_name(key_nid, hash_nid):
    return {(NID_sm2, NID_sm3): "sm2sig_sm3",
            (EVP_PKEY_EC, NID_sha256): "ecdsa_secp256r1_sha256"}.get(
        (key_nid, hash_nid), f"{OBJ_nid2sn(key_nid)}+{OBJ_nid2sn(hash_nid)}")


def params(ssl, server):
    """What Tongsuo negotiated: version, suite, the group of the key share
    (the peer's), and the CertificateVerify's scheme (the server's)."""
    pkey = P()
    group = "none"
    if SSL_ctrl(ssl, SSL_CTRL_GET_PEER_TMP_KEY, 0, ctypes.byref(pkey)) == 1 and pkey:
        group = key_name(pkey)
        EVP_PKEY_free(pkey)
    key_nid, hash_nid = I(0), I(0)
    if server:
        SSL_get_signature_type_nid(ssl, ctypes.byref(key_nid))
        SSL_ctrl(ssl, SSL_CTRL_GET_SIGNATURE_NID, 0, ctypes.byref(hash_nid))
    else:
        SSL_get_peer_signature_type_nid(ssl, ctypes.byref(key_nid))
        SSL_ctrl(ssl, SSL_CTRL_GET_PEER_SIGNATURE_NID, 0, ctypes.byref(hash_nid))
    return (f"version={SSL_get_version(ssl).decode()} "
            f"suite={SSL_CIPHER_get_name(SSL_get_current_cipher(ssl)).decode()} "
            f"group={group} scheme={scheme_name(key_nid.value, hash_nid.value)}")


def echo(ssl):
    """Echoes until the peer's close_notify, then sends ours; returns the count."""
    buf = ctypes.create_string_buffer(1 << 16)
    n = 0
    while True:
        r = SSL_read(ssl, buf, len(buf))
        if r <= 0:
            if SSL_get_error(ssl, r) == SSL_ERROR_ZERO_RETURN:
                break
            fail("SSL_read", ssl, r)
        if SSL_write(ssl, buf, r) != r:
            fail("SSL_write", ssl, r)
        n += r
    if SSL_shutdown(ssl) < 0:
        fail("SSL_shutdown")
    return n


def exchange(ssl, data):
    """Sends data while reading as much back, at most 64 KiB ahead (so that
    neither side blocks on a full socket while the other writes too)."""
    buf = ctypes.create_string_buffer(1 << 16)
    got, sent = bytearray(), 0
    while len(got) < len(data):
        if sent < len(data) and sent - len(got) < (1 << 16):
            chunk = data[sent:sent + 16384]
            r = SSL_write(ssl, chunk, len(chunk))
            if r != len(chunk):
                fail("SSL_write", ssl, r)
            sent += r
            continue
        r = SSL_read(ssl, buf, len(buf))
        if r <= 0:
            fail(f"SSL_read after {len(got)} bytes", ssl, r)
        got += buf.raw[:r]
    return bytes(got)


def close(ssl):
    """Our close_notify, then the peer's."""
    r = SSL_shutdown(ssl)
    if r == 0:
        buf = ctypes.create_string_buffer(256)
        r = SSL_read(ssl, buf, len(buf))
        if r > 0 or SSL_get_error(ssl, r) != SSL_ERROR_ZERO_RETURN:
            fail("waiting for the peer's close_notify", ssl, r)
    elif r < 0:
        fail("SSL_shutdown", ssl, r)


class TongsuoServer:
    """A Tongsuo echo server in a thread; one record per connection in `results`."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.results = []
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop:
            if not select.select([self.sock], [], [], 0.05)[0]:
                continue
            s, _ = self.sock.accept()
            blocking(s)
            ssl = SSL_new(self.ctx)
            try:
                ERR_clear_error()
                SSL_set_fd(ssl, s.fileno())
                r = SSL_accept(ssl)
                if r != 1:
                    fail("SSL_accept", ssl, r)
                p = params(ssl, True)
                self.results.append(("ok", p, echo(ssl)))
            except TongsuoError as e:
                self.results.append(("error", str(e), 0))
            finally:
                SSL_free(ssl)
                s.close()

    def result(self, n):
        """The record of connection `n` (from 1), once written."""
        deadline = time.monotonic() + TIMEOUT
        while len(self.results) < n and time.monotonic() < deadline:
            time.sleep(0.005)
        return self.results[n - 1] if len(self.results) >= n else ("none", "", 0)

    def close(self):
        self.stop = True
        self.thread.join(TIMEOUT)
        self.sock.close()
        SSL_CTX_free(self.ctx)


def tongsuo_client(port, ctx, data):
    """Returns (received, params, error)."""
    s = blocking(socket.create_connection(("127.0.0.1", port)))
    ssl = SSL_new(ctx)
    try:
        ERR_clear_error()
        SSL_set_fd(ssl, s.fileno())
        SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, 0, b"localhost")
        SSL_set1_host(ssl, b"localhost")
        r = SSL_connect(ssl)
        if r != 1:
            fail(f"SSL_connect (verify result {SSL_get_verify_result(ssl)})", ssl, r)
        p = params(ssl, False)
        got = exchange(ssl, data)
        close(ssl)
        return got, p, None
    except TongsuoError as e:
        return b"", "", str(e)
    finally:
        SSL_free(ssl)
        s.close()


# ---- Our side ----

def our_client(port, ca, data, *extra):
    try:
        p = subprocess.run(
            [CLIENT, "--connect", f"127.0.0.1:{port}", "--ca", cert(ca + "-ca.pem"),
             "--server-name", "localhost", *extra],
            input=data, capture_output=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return -1, b"", f"our client timed out after {TIMEOUT} s"
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


class OurServer:
    def __init__(self, cert_name, *extra, chain=None):
        self.p = subprocess.Popen(
            [SERVER, "--listen", "127.0.0.1:0", "--cert", cert(chain or cert_name + "-chain.pem"),
             "--key", cert(cert_name + ".key"), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        first = self.p.stdout.readline()
        m = re.match(r"listening on 127\.0\.0\.1:(\d+)", first)
        if not m:
            self.p.kill()
            raise RuntimeError(f"our server did not start: {first!r}")
        self.port = int(m.group(1))

    def line(self):
        """The server's line for the last connection."""
        r, _, _ = select.select([self.p.stdout], [], [], TIMEOUT)
        return self.p.stdout.readline().strip() if r else "(no line)"

    def close(self):
        self.p.kill()
        self.p.wait()


# ---- The cases ----

def size_name(size):
    return "1 MiB" if size == 1 << 20 else f"{size} B"


def client_matrix():
    """Our client against a Tongsuo server."""
    for suite in SUITES:
        for group, ts_group in GROUPS.items():
            for c in CERTS:
                srv = TongsuoServer(context(True, suite, ts_group, cert_name=c))
                try:
                    for size in SIZES:
                        data = data_of(size)
                        before = len(srv.results)
                        rc, out, err = our_client(srv.port, c, data, "--suites", suite,
                                                  "--groups", group)
                        res = srv.result(before + 1)
                        ok = (rc == 0 and out == data and res[0] == "ok" and res[2] == size
                              and f"suite={suite} group={group}" in err
                              and f"version=TLSv1.3 suite={suite} group={group} "
                                  f"scheme={SCHEME[c]}" in res[1])
                        report(f"rustls client -> Tongsuo server {suite} {group} {c} cert, "
                               f"{size_name(size)} echoed", ok,
                               "" if ok else f"rc={rc} got={len(out)} [{err.strip()}] {res}")
                finally:
                    srv.close()


def server_matrix():
    """A Tongsuo client against our server."""
    for c in CERTS:
        srv = OurServer(c)
        try:
            for suite in SUITES:
                for group, ts_group in GROUPS.items():
                    ctx = context(False, suite, ts_group, ca=c)
                    try:
                        for size in SIZES:
                            data = data_of(size, 3)
                            got, p, error = tongsuo_client(srv.port, ctx, data)
                            line = srv.line()
                            ok = (error is None and got == data
                                  and f"suite={suite} group={group}" in line
                                  and f"echoed={size}" in line
                                  and f"version=TLSv1.3 suite={suite} group={group} "
                                      f"scheme={SCHEME[c]}" in p)
                            report(f"Tongsuo client -> rustls server {suite} {group} {c} cert, "
                                   f"{size_name(size)} echoed", ok,
                                   "" if ok else f"{error} got={len(got)} [{line}] {p}")
                    finally:
                        SSL_CTX_free(ctx)
        finally:
            srv.close()


def strict_mode():
    """Tongsuo's RFC 8998 strict mode: with an SM suite, only an SM2
    certificate, curveSM2 and sm2sig_sm3. Our client offers X25519 first
    (its default), so the strict server has to ask for curveSM2 (HRR)."""
    data = data_of(1 << 16, 5)
    for suite in SUITES:
        srv = TongsuoServer(context(True, suite, "X25519:SM2", cert_name="sm2", strict=True))
        try:
            rc, out, err = our_client(srv.port, "sm2", data, "--suites", suite)
            res = srv.result(1)
            ok = (rc == 0 and out == data and res[0] == "ok"
                  and f"suite={suite} group=curveSM2" in err
                  and "handshake=FullWithHelloRetryRequest" in err
                  and f"suite={suite} group=curveSM2 scheme=sm2sig_sm3" in res[1])
            report(f"strict mode: rustls client (X25519 first) -> strict Tongsuo server "
                   f"{suite}: HRR to curveSM2, sm2sig_sm3, 64 KiB echoed", ok,
                   "" if ok else f"rc={rc} [{err.strip()}] {res}")
        finally:
            srv.close()
        srv = OurServer("sm2")
        ctx = context(False, suite, "SM2:X25519", ca="sm2", strict=True)
        try:
            got, p, error = tongsuo_client(srv.port, ctx, data)
            line = srv.line()
            ok = (error is None and got == data and f"suite={suite} group=curveSM2" in line
                  and f"suite={suite} group=curveSM2 scheme=sm2sig_sm3" in p)
            report(f"strict mode: strict Tongsuo client -> rustls server {suite}: curveSM2, "
                   f"sm2sig_sm3, 64 KiB echoed", ok,
                   "" if ok else f"{error} [{line}] {p}")
        finally:
            SSL_CTX_free(ctx)
            srv.close()


def forged_signature():
    """The SM2 leaf signed by another SM2 key posing as the SM2 CA (the
    certificates' SM2 signer ID is 1234567812345678 on both sides)."""
    srv = TongsuoServer(context(True, "TLS_SM4_GCM_SM3", "SM2", cert_name="sm2",
                                chain="sm2-forged-chain.pem"))
    try:
        rc, out, err = our_client(srv.port, "sm2", b"x")
        res = srv.result(1)
        ok = rc != 0 and "BadSignature" in err and res[0] == "error" \
            and "alert decrypt error" in res[1]
        report("SM2 certificate signed by the wrong key: rustls client rejects Tongsuo's "
               "(decrypt_error)", ok, "" if ok else f"[{err.strip()}] {res}")
    finally:
        srv.close()
    srv = OurServer("sm2", chain="sm2-forged-chain.pem")
    ctx = context(False, "TLS_SM4_GCM_SM3", "SM2", ca="sm2")
    try:
        got, _, error = tongsuo_client(srv.port, ctx, b"x")
        line = srv.line()
        # 7 = X509_V_ERR_CERT_SIGNATURE_FAILURE
        ok = error is not None and "verify result 7)" in error \
            and "certificate verify failed" in error and "AlertReceived(DecryptError)" in line
        report("SM2 certificate signed by the wrong key: Tongsuo client rejects our server's "
               "(X509_V_ERR_CERT_SIGNATURE_FAILURE)", ok, "" if ok else f"{error} [{line}]")
    finally:
        SSL_CTX_free(ctx)
        srv.close()


def main():
    t = time.monotonic()
    print(f"peer: {OpenSSL_version(BABASSL_VERSION).decode()} "
          f"(0x{BabaSSL_version_num():08x}, {OpenSSL_version(0).decode()} API) from tongsuopy "
          f"{tongsuopy.__version__}", flush=True)
    for case in [client_matrix, server_matrix, strict_mode, forged_signature]:
        case()
    print(f"tongsuo: {ran} cases, {ran - len(failures)} passed, {len(failures)} failed, "
          f"{time.monotonic() - t:.1f} s")
    sys.exit(1 if failures or ran == 0 else 0)


if __name__ == "__main__":
    main()
