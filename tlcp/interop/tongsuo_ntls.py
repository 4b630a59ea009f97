#!/usr/bin/env python3
"""Tongsuo (BabaSSL 8.3.2) NTLS/TLCP driver over ctypes.

Uses the statically linked Tongsuo inside the `tongsuopy==1.0.1` wheel
(tongsuopy/backends/_tongsuo.abi3.so; OpenSSL_version(6) == "BabaSSL 8.3.2").
Set TONGSUO_SO to use another copy of that library.

Setup (once):
    python3 -m venv /work/main/target/tlcp-venv
    /work/main/target/tlcp-venv/bin/pip install --only-binary :all: tongsuopy==1.0.1

Library use:
    from tongsuo_ntls import TongsuoServer, TongsuoClient, Relay, DATA
    with TongsuoServer(suites=["ECC-SM2-SM4-CBC-SM3"]) as srv:
        cli = TongsuoClient(suites=["ECC-SM2-SM4-CBC-SM3"])
        r = cli.connect(srv.port, b"hello")
        print(r["version"], r["cipher"], r["echo"])

    relay = Relay(srv.port)            # records both directions; optional
                                       # mutate_c2s/mutate_s2c(i, record) hooks
    r = cli.connect(relay.port); relay.wait(1)[0]["c2s"] ...

Command line (prints JSON):
    python tongsuo_ntls.py selftest            # Tongsuo <-> Tongsuo matrix
    python tongsuo_ntls.py server [--port N] [--suites ...] [--verify none|request|require]
                                   # one JSON line per event; first {"event":"listening","port":N}
    python tongsuo_ntls.py client --port N [--suites ...] [--client-cert] [--reconnect]
    python tongsuo_ntls.py transcripts         # writes ../tests/data/transcript-*.json
    python tongsuo_ntls.py sm2kx               # writes ../tests/data/sm2-kx.json
    python tlcp_check.py                       # re-derives every transcript (checks WIRE.md)
    python tlcp_probe.py                       # from-scratch Python TLCP client vs Tongsuo server

Notes (facts found while writing this driver):
  * Tongsuo's NTLS code needs BLOCKING sockets; a Python socket timeout makes
    the fd non-blocking and the handshake then fails with an empty error
    queue.  Deadlines are set with SO_RCVTIMEO/SO_SNDTIMEO instead.
  * SSL_CTX_set_keylog_callback IS honoured by the NTLS state machine: the
    NSS line "CLIENT_RANDOM <client_random> <master_secret>" is emitted from
    tls_construct_finished_ntls (ssl/statem_ntls/statem_lib.c) on both sides.
  * The ECDHE suites need client certificates (sign + enc) and a server that
    requests them (ssl/statem_ntls/statem_srvr.c refuses an empty client
    Certificate for ECDHE; ntls_sm2_derive_ntls needs the peer enc cert).
"""

import ctypes
import ctypes.util
import glob
import json
import os
import socket
import struct
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.normpath(os.path.join(HERE, "..", "tests", "data"))

# ---------------------------------------------------------------------------
# library loading
# ---------------------------------------------------------------------------

SSL_FILETYPE_PEM = 1
SSL_VERIFY_NONE = 0
SSL_VERIFY_PEER = 1
SSL_VERIFY_FAIL_IF_NO_PEER_CERT = 2
SSL_OP_NO_TICKET = 0x00004000
SSL_CTRL_MODE = 33
SSL_CTRL_SET_SESS_CACHE_MODE = 44
SSL_CTRL_SET_TLSEXT_HOSTNAME = 55
SSL_MODE_AUTO_RETRY = 0x4
SSL_SESS_CACHE_CLIENT = 1
SSL_SESS_CACHE_SERVER = 2
SSL_ERROR_NAMES = {0: "NONE", 1: "SSL", 2: "WANT_READ", 3: "WANT_WRITE",
                   4: "WANT_X509_LOOKUP", 5: "SYSCALL", 6: "ZERO_RETURN",
                   7: "WANT_CONNECT", 8: "WANT_ACCEPT"}

# TLCP suite ids (GB/T 38636-2020) -> Tongsuo cipher names (include/openssl/ntls.h)
SUITES = {
    "ECC_SM4_CBC_SM3": (0xE013, "ECC-SM2-SM4-CBC-SM3"),
    "ECC_SM4_GCM_SM3": (0xE053, "ECC-SM2-SM4-GCM-SM3"),
    "ECDHE_SM4_CBC_SM3": (0xE011, "ECDHE-SM2-SM4-CBC-SM3"),
    "ECDHE_SM4_GCM_SM3": (0xE051, "ECDHE-SM2-SM4-GCM-SM3"),
}
ALL_TONGSUO_SUITES = [v[1] for v in SUITES.values()]


def _find_so():
    env = os.environ.get("TONGSUO_SO")
    if env:
        return env
    try:
        import tongsuopy.backends as b  # noqa: F401
        cands = glob.glob(os.path.join(os.path.dirname(b.__file__), "_tongsuo*.so"))
        if cands:
            return cands[0]
    except Exception:
        pass
    pats = [os.path.join(HERE, "..", "..", "target", "tlcp-venv", "lib", "python3*",
                         "site-packages", "tongsuopy", "backends", "_tongsuo*.so")]
    for p in pats:
        cands = glob.glob(p)
        if cands:
            return cands[0]
    raise RuntimeError("cannot find tongsuopy's _tongsuo.abi3.so; set TONGSUO_SO")


_L = None
VP = ctypes.c_void_p
KEYLOG_CB = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)


def lib():
    global _L
    if _L is not None:
        return _L
    L = ctypes.CDLL(_find_so())
    sig = {
        "OpenSSL_version": (ctypes.c_char_p, [ctypes.c_int]),
        "ERR_get_error": (ctypes.c_ulong, []),
        "ERR_error_string_n": (None, [ctypes.c_ulong, ctypes.c_char_p, ctypes.c_size_t]),
        "ERR_clear_error": (None, []),
        "NTLS_client_method": (VP, []),
        "NTLS_server_method": (VP, []),
        "SSL_CTX_new": (VP, [VP]),
        "SSL_CTX_free": (None, [VP]),
        "SSL_CTX_enable_ntls": (None, [VP]),
        "SSL_CTX_set_cipher_list": (ctypes.c_int, [VP, ctypes.c_char_p]),
        "SSL_CTX_use_sign_certificate_file": (ctypes.c_int, [VP, ctypes.c_char_p, ctypes.c_int]),
        "SSL_CTX_use_sign_PrivateKey_file": (ctypes.c_int, [VP, ctypes.c_char_p, ctypes.c_int]),
        "SSL_CTX_use_enc_certificate_file": (ctypes.c_int, [VP, ctypes.c_char_p, ctypes.c_int]),
        "SSL_CTX_use_enc_PrivateKey_file": (ctypes.c_int, [VP, ctypes.c_char_p, ctypes.c_int]),
        "SSL_CTX_load_verify_locations": (ctypes.c_int, [VP, ctypes.c_char_p, ctypes.c_char_p]),
        "SSL_CTX_set_verify": (None, [VP, ctypes.c_int, VP]),
        "SSL_CTX_set_options": (ctypes.c_ulong, [VP, ctypes.c_ulong]),
        "SSL_CTX_ctrl": (ctypes.c_long, [VP, ctypes.c_int, ctypes.c_long, VP]),
        "SSL_CTX_set_session_id_context": (ctypes.c_int, [VP, ctypes.c_char_p, ctypes.c_uint]),
        "SSL_CTX_set_keylog_callback": (None, [VP, KEYLOG_CB]),
        "SSL_CTX_set_client_CA_list": (None, [VP, VP]),
        "SSL_load_client_CA_file": (VP, [ctypes.c_char_p]),
        "SSL_new": (VP, [VP]),
        "SSL_free": (None, [VP]),
        "SSL_set_fd": (ctypes.c_int, [VP, ctypes.c_int]),
        "SSL_ctrl": (ctypes.c_long, [VP, ctypes.c_int, ctypes.c_long, VP]),
        "SSL_connect": (ctypes.c_int, [VP]),
        "SSL_accept": (ctypes.c_int, [VP]),
        "SSL_read": (ctypes.c_int, [VP, ctypes.c_void_p, ctypes.c_int]),
        "SSL_write": (ctypes.c_int, [VP, ctypes.c_void_p, ctypes.c_int]),
        "SSL_shutdown": (ctypes.c_int, [VP]),
        "SSL_get_error": (ctypes.c_int, [VP, ctypes.c_int]),
        "SSL_get_version": (ctypes.c_char_p, [VP]),
        "SSL_get_current_cipher": (VP, [VP]),
        "SSL_CIPHER_get_name": (ctypes.c_char_p, [VP]),
        "SSL_CIPHER_get_protocol_id": (ctypes.c_uint16, [VP]),
        "SSL_session_reused": (ctypes.c_int, [VP]),
        "SSL_get1_session": (VP, [VP]),
        "SSL_set_session": (ctypes.c_int, [VP, VP]),
        "SSL_SESSION_free": (None, [VP]),
        "SSL_SESSION_get_master_key": (ctypes.c_size_t, [VP, ctypes.c_char_p, ctypes.c_size_t]),
        "SSL_SESSION_get_id": (ctypes.c_void_p, [VP, ctypes.POINTER(ctypes.c_uint)]),
        "SSL_get_client_random": (ctypes.c_size_t, [VP, ctypes.c_char_p, ctypes.c_size_t]),
        "SSL_get_server_random": (ctypes.c_size_t, [VP, ctypes.c_char_p, ctypes.c_size_t]),
        "SSL_get_verify_result": (ctypes.c_long, [VP]),
        "SSL_get_peer_certificate": (VP, [VP]),
        "X509_free": (None, [VP]),
        "X509_get_subject_name": (VP, [VP]),
        "X509_NAME_oneline": (ctypes.c_char_p, [VP, ctypes.c_char_p, ctypes.c_int]),
    }
    for name, (res, args) in sig.items():
        f = getattr(L, name)
        f.restype = res
        f.argtypes = args
    _L = L
    return L


def tongsuo_version():
    return lib().OpenSSL_version(6).decode()


def ssl_errors():
    """Drain this thread's OpenSSL error queue into a list of strings."""
    L = lib()
    out = []
    buf = ctypes.create_string_buffer(256)
    while True:
        e = L.ERR_get_error()
        if not e:
            break
        L.ERR_error_string_n(e, buf, len(buf))
        out.append(buf.value.decode(errors="replace"))
    return out


class TongsuoError(Exception):
    pass


def _check(ok, what):
    if ok != 1:
        raise TongsuoError("%s failed: %s" % (what, "; ".join(ssl_errors()) or "no error queued"))


def _b(s):
    return s.encode() if isinstance(s, str) else s


def _set_deadline(sock, seconds):
    """SO_RCVTIMEO/SO_SNDTIMEO on a blocking socket (never settimeout())."""
    sec = int(seconds)
    usec = int((seconds - sec) * 1e6)
    tv = struct.pack("ll", sec, usec)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, tv)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, tv)


def _cert_subject(ssl):
    L = lib()
    x = L.SSL_get_peer_certificate(ssl)
    if not x:
        return None
    try:
        return L.X509_NAME_oneline(L.X509_get_subject_name(x), None, 0).decode()
    finally:
        L.X509_free(x)


def _conn_info(ssl):
    L = lib()
    cr = ctypes.create_string_buffer(32)
    sr = ctypes.create_string_buffer(32)
    L.SSL_get_client_random(ssl, cr, 32)
    L.SSL_get_server_random(ssl, sr, 32)
    c = L.SSL_get_current_cipher(ssl)
    info = {
        "version": L.SSL_get_version(ssl).decode(),
        "cipher": L.SSL_CIPHER_get_name(c).decode() if c else None,
        "cipher_id": ("0x%04x" % L.SSL_CIPHER_get_protocol_id(c)) if c else None,
        "reused": bool(L.SSL_session_reused(ssl)),
        "client_random": cr.raw.hex(),
        "server_random": sr.raw.hex(),
        "verify_result": L.SSL_get_verify_result(ssl),
        "peer_subject": _cert_subject(ssl),
    }
    sess = L.SSL_get1_session(ssl)
    if sess:
        mk = ctypes.create_string_buffer(48)
        n = L.SSL_SESSION_get_master_key(sess, mk, 48)
        info["master_secret"] = mk.raw[:n].hex()
        ln = ctypes.c_uint(0)
        p = L.SSL_SESSION_get_id(sess, ctypes.byref(ln))
        info["session_id"] = ctypes.string_at(p, ln.value).hex() if p else ""
        L.SSL_SESSION_free(sess)
    return info


def _ssl_io_error(ssl, ret, what):
    L = lib()
    e = L.SSL_get_error(ssl, ret)
    errs = ssl_errors()
    return "%s: ret=%d SSL_ERROR_%s %s" % (what, ret, SSL_ERROR_NAMES.get(e, e),
                                           "; ".join(errs) or "(empty error queue)")


def _read_all(ssl, n, what):
    """Read exactly n bytes (or until EOF)."""
    L = lib()
    buf = ctypes.create_string_buffer(16384)
    out = b""
    while len(out) < n:
        r = L.SSL_read(ssl, buf, min(len(buf), n - len(out)))
        if r <= 0:
            raise TongsuoError(_ssl_io_error(ssl, r, what))
        out += buf.raw[:r]
    return out


def _write_all(ssl, data, what):
    L = lib()
    r = L.SSL_write(ssl, data, len(data))
    if r != len(data):
        raise TongsuoError(_ssl_io_error(ssl, r, what))


# ---------------------------------------------------------------------------
# context construction
# ---------------------------------------------------------------------------

class _Ctx:
    def __init__(self, server, suites, sign_cert=None, sign_key=None, enc_cert=None,
                 enc_key=None, ca_file=None, verify=SSL_VERIFY_NONE, tickets=False,
                 keylog=True, client_ca_names=False):
        L = lib()
        self.L = L
        meth = L.NTLS_server_method() if server else L.NTLS_client_method()
        self.ctx = L.SSL_CTX_new(meth)
        if not self.ctx:
            raise TongsuoError("SSL_CTX_new: %s" % ssl_errors())
        L.SSL_CTX_enable_ntls(self.ctx)
        if suites:
            _check(L.SSL_CTX_set_cipher_list(self.ctx, _b(":".join(suites))),
                   "SSL_CTX_set_cipher_list")
        if not tickets:
            L.SSL_CTX_set_options(self.ctx, SSL_OP_NO_TICKET)
        L.SSL_CTX_ctrl(self.ctx, SSL_CTRL_MODE, SSL_MODE_AUTO_RETRY, None)
        L.SSL_CTX_ctrl(self.ctx, SSL_CTRL_SET_SESS_CACHE_MODE,
                       SSL_SESS_CACHE_SERVER if server else SSL_SESS_CACHE_CLIENT, None)
        if server:
            sid = b"tlcp-interop"
            _check(L.SSL_CTX_set_session_id_context(self.ctx, sid, len(sid)),
                   "SSL_CTX_set_session_id_context")
        # sign pair first, then enc pair (s->cert->key ends up at the enc slot,
        # which tls_choose_sigalg_ntls only uses to ask "has a cert at all?")
        if sign_cert:
            _check(L.SSL_CTX_use_sign_certificate_file(self.ctx, _b(sign_cert), SSL_FILETYPE_PEM),
                   "use_sign_certificate_file(%s)" % sign_cert)
            _check(L.SSL_CTX_use_sign_PrivateKey_file(self.ctx, _b(sign_key), SSL_FILETYPE_PEM),
                   "use_sign_PrivateKey_file(%s)" % sign_key)
        if enc_cert:
            _check(L.SSL_CTX_use_enc_certificate_file(self.ctx, _b(enc_cert), SSL_FILETYPE_PEM),
                   "use_enc_certificate_file(%s)" % enc_cert)
            _check(L.SSL_CTX_use_enc_PrivateKey_file(self.ctx, _b(enc_key), SSL_FILETYPE_PEM),
                   "use_enc_PrivateKey_file(%s)" % enc_key)
        if ca_file:
            _check(L.SSL_CTX_load_verify_locations(self.ctx, _b(ca_file), None),
                   "load_verify_locations(%s)" % ca_file)
            if server and client_ca_names:
                names = L.SSL_load_client_CA_file(_b(ca_file))
                if names:
                    L.SSL_CTX_set_client_CA_list(self.ctx, names)
        L.SSL_CTX_set_verify(self.ctx, verify, None)
        self.keylog = []
        self._lock = threading.Lock()
        if keylog:
            def cb(_ssl, line):
                with self._lock:
                    self.keylog.append(line.decode())
            self._cb = KEYLOG_CB(cb)
            L.SSL_CTX_set_keylog_callback(self.ctx, self._cb)

    def keylog_since(self, n):
        with self._lock:
            return list(self.keylog[n:])

    def keylog_len(self):
        with self._lock:
            return len(self.keylog)

    def free(self):
        if self.ctx:
            self.L.SSL_CTX_free(self.ctx)
            self.ctx = None


def _verify_mode(v):
    return {"none": SSL_VERIFY_NONE, "request": SSL_VERIFY_PEER,
            "require": SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT}[v]


def default_server_files(other=False):
    p = "other_server" if other else "server"
    return dict(sign_cert=os.path.join(DATA, p + "_sign.crt"),
                sign_key=os.path.join(DATA, p + "_sign.key"),
                enc_cert=os.path.join(DATA, p + "_enc.crt"),
                enc_key=os.path.join(DATA, p + "_enc.key"))


def default_client_files():
    return dict(sign_cert=os.path.join(DATA, "client_sign.crt"),
                sign_key=os.path.join(DATA, "client_sign.key"),
                enc_cert=os.path.join(DATA, "client_enc.crt"),
                enc_key=os.path.join(DATA, "client_enc.key"))


# ---------------------------------------------------------------------------
# server
# ---------------------------------------------------------------------------

class TongsuoServer:
    """Echo server in background threads (one thread per connection).

    verify: "none" | "request" | "require" (client certificates).
    Every finished connection appends a dict to .results (handshake info,
    received bytes, keylog lines, error string if any); on_result(dict) is
    called too if given.
    """

    def __init__(self, host="127.0.0.1", port=0, suites=None, sign_cert=None,
                 sign_key=None, enc_cert=None, enc_key=None,
                 ca_file=os.path.join(DATA, "ca.crt"), verify="none",
                 tickets=False, keylog=True, client_ca_names=False,
                 timeout=10.0, on_result=None, other_pki=False):
        files = default_server_files(other_pki)
        self.ctx = _Ctx(True, suites or ALL_TONGSUO_SUITES,
                        sign_cert or files["sign_cert"], sign_key or files["sign_key"],
                        enc_cert or files["enc_cert"], enc_key or files["enc_key"],
                        ca_file=ca_file, verify=_verify_mode(verify), tickets=tickets,
                        keylog=keylog, client_ca_names=client_ca_names)
        self.timeout = timeout
        self.on_result = on_result
        self.results = []
        self._rlock = threading.Lock()
        self._done = threading.Condition(self._rlock)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self._stop = False
        self._threads = []
        self._acceptor = threading.Thread(target=self._accept_loop, daemon=True)

    def start(self):
        self._acceptor.start()
        return self

    def __enter__(self):
        return self.start()

    def __exit__(self, *a):
        self.stop()

    def stop(self):
        self._stop = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self._acceptor.join(5)
        for t in self._threads:
            t.join(self.timeout + 5)
        self.ctx.free()

    def wait_results(self, n, timeout=15.0):
        """Block until at least n connections have finished."""
        end = time.monotonic() + timeout
        with self._done:
            while len(self.results) < n:
                left = end - time.monotonic()
                if left <= 0:
                    break
                self._done.wait(left)
            return list(self.results)

    def _accept_loop(self):
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._threads.append(t)
            t.start()

    def _serve(self, conn):
        L = lib()
        L.ERR_clear_error()
        conn.setblocking(True)
        _set_deadline(conn, self.timeout)
        res = {"ok": False, "received": ""}
        kl0 = self.ctx.keylog_len()
        ssl = L.SSL_new(self.ctx.ctx)
        try:
            L.SSL_set_fd(ssl, conn.fileno())
            r = L.SSL_accept(ssl)
            if r != 1:
                raise TongsuoError(_ssl_io_error(ssl, r, "SSL_accept"))
            res.update(_conn_info(ssl))
            buf = ctypes.create_string_buffer(16384)
            got = b""
            while True:
                n = L.SSL_read(ssl, buf, len(buf))
                if n <= 0:
                    e = L.SSL_get_error(ssl, n)
                    if e == 6:  # ZERO_RETURN: close_notify received
                        L.SSL_shutdown(ssl)
                        break
                    raise TongsuoError(_ssl_io_error(ssl, n, "SSL_read"))
                got += buf.raw[:n]
                _write_all(ssl, buf.raw[:n], "SSL_write(echo)")
            res["received"] = got.hex()
            res["ok"] = True
        except Exception as ex:  # noqa: BLE001
            res["error"] = str(ex)
        finally:
            res["keylog"] = self.ctx.keylog_since(kl0)
            L.SSL_free(ssl)
            conn.close()
            with self._done:
                self.results.append(res)
                self._done.notify_all()
            if self.on_result:
                self.on_result(res)


# ---------------------------------------------------------------------------
# client
# ---------------------------------------------------------------------------

class TongsuoClient:
    """NTLS client; one SSL_CTX, many connections.

    client_cert=True loads tests/data/client_{sign,enc}.{crt,key}
    (or pass the four file names).  verify=True checks the server chain
    against ca_file.  connect(..., session=prev["session"]) resumes.
    """

    def __init__(self, suites=None, client_cert=False, sign_cert=None, sign_key=None,
                 enc_cert=None, enc_key=None, ca_file=os.path.join(DATA, "ca.crt"),
                 verify=True, tickets=False, keylog=True, timeout=10.0):
        files = default_client_files() if client_cert else {}
        self.ctx = _Ctx(False, suites or ALL_TONGSUO_SUITES,
                        sign_cert or files.get("sign_cert"), sign_key or files.get("sign_key"),
                        enc_cert or files.get("enc_cert"), enc_key or files.get("enc_key"),
                        ca_file=ca_file if verify else None,
                        verify=SSL_VERIFY_PEER if verify else SSL_VERIFY_NONE,
                        tickets=tickets, keylog=keylog)
        self.timeout = timeout

    def connect(self, port, data=b"hello", host="127.0.0.1", session=None,
                servername=None, keep_session=True, shutdown=True):
        """Handshake, send data, read the same number of bytes back.

        Returns a dict; "session" holds an SSL_SESSION* (int) to pass back
        for resumption (free it with free_session()).
        """
        L = lib()
        L.ERR_clear_error()
        res = {"ok": False}
        kl0 = self.ctx.keylog_len()
        s = socket.create_connection((host, port))
        s.setblocking(True)
        _set_deadline(s, self.timeout)
        ssl = L.SSL_new(self.ctx.ctx)
        try:
            L.SSL_set_fd(ssl, s.fileno())
            if servername:
                L.SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, 0, ctypes.c_char_p(_b(servername)))
            if session:
                _check(L.SSL_set_session(ssl, session), "SSL_set_session")
            r = L.SSL_connect(ssl)
            if r != 1:
                raise TongsuoError(_ssl_io_error(ssl, r, "SSL_connect"))
            res.update(_conn_info(ssl))
            if data:
                _write_all(ssl, data, "SSL_write")
                res["echo"] = _read_all(ssl, len(data), "SSL_read").decode(errors="replace")
            if keep_session:
                res["session"] = L.SSL_get1_session(ssl)
            if shutdown:
                L.SSL_shutdown(ssl)  # sends close_notify
                # wait for the peer's close_notify (best effort)
                buf = ctypes.create_string_buffer(64)
                L.SSL_read(ssl, buf, 64)
                ssl_errors()
            res["ok"] = True
        except Exception as ex:  # noqa: BLE001
            res["error"] = str(ex)
        finally:
            res["keylog"] = self.ctx.keylog_since(kl0)
            L.SSL_free(ssl)
            s.close()
        return res

    @staticmethod
    def free_session(sess):
        if sess:
            lib().SSL_SESSION_free(sess)

    def close(self):
        self.ctx.free()


# ---------------------------------------------------------------------------
# TCP relay that records both directions
# ---------------------------------------------------------------------------

class Relay:
    """127.0.0.1:<port> -> 127.0.0.1:<target>; records what each side sent.

    After a connection ends, .sessions[i] is
      {"c2s": [(t, bytes), ...], "s2c": [(t, bytes), ...]}
    (chunks as read from the sockets with a monotonic timestamp).
    """

    def __init__(self, target_port, host="127.0.0.1", mutate_c2s=None, mutate_s2c=None):
        """mutate_c2s / mutate_s2c: optional f(index, record_bytes) -> bytes,
        applied to each whole TLCP record of that direction before forwarding
        (for negative tests); .sessions then records what was forwarded."""
        self.target = (host, target_port)
        self.mutate = {"c2s": mutate_c2s, "s2c": mutate_s2c}
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.sessions = []
        self._lock = threading.Lock()
        self._cv = threading.Condition(self._lock)
        self._stop = False
        self._t = threading.Thread(target=self._loop, daemon=True)
        self._t.start()

    def _loop(self):
        while not self._stop:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(c,), daemon=True).start()

    def _one(self, c):
        u = socket.create_connection(self.target)
        rec = {"c2s": [], "s2c": []}
        done = []

        def pump(src, dst, key):
            mut = self.mutate[key]
            pending = b""
            n = 0
            try:
                while True:
                    b = src.recv(65536)
                    if not b:
                        break
                    if mut:
                        pending += b
                        out = b""
                        while len(pending) >= 5:
                            ln = 5 + int.from_bytes(pending[3:5], "big")
                            if len(pending) < ln:
                                break
                            out += mut(n, pending[:ln])
                            pending = pending[ln:]
                            n += 1
                        b = out
                        if not b:
                            continue
                    with self._lock:
                        rec[key].append((time.monotonic(), b))
                    dst.sendall(b)
            except OSError:
                pass
            finally:
                try:
                    dst.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                done.append(key)

        t1 = threading.Thread(target=pump, args=(c, u, "c2s"), daemon=True)
        t2 = threading.Thread(target=pump, args=(u, c, "s2c"), daemon=True)
        t1.start()
        t2.start()
        t1.join(30)
        t2.join(30)
        c.close()
        u.close()
        with self._cv:
            self.sessions.append(rec)
            self._cv.notify_all()

    def wait(self, n, timeout=15.0):
        end = time.monotonic() + timeout
        with self._cv:
            while len(self.sessions) < n:
                left = end - time.monotonic()
                if left <= 0:
                    break
                self._cv.wait(left)
            return list(self.sessions)

    def close(self):
        self._stop = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


def split_records(stream):
    """TLCP record layer: type(1) version(2) length(2) fragment."""
    out = []
    i = 0
    while i + 5 <= len(stream):
        ln = int.from_bytes(stream[i + 3:i + 5], "big")
        out.append(stream[i:i + 5 + ln])
        i += 5 + ln
    if i != len(stream):
        raise ValueError("trailing %d bytes are not a whole record" % (len(stream) - i))
    return out


def ordered_records(session):
    """Records of both directions, in the order their last byte was seen."""
    items = []
    for d in ("c2s", "s2c"):
        stream = b""
        ends = []  # (end offset, time)
        for t, b in session[d]:
            stream += b
            ends.append((len(stream), t))
        off = 0
        for r in split_records(stream):
            off += len(r)
            t = next(tt for e, tt in ends if e >= off)
            items.append((t, d, r))
    items.sort(key=lambda x: (x[0], 0 if x[1] == "c2s" else 1))
    return [(d, r) for _, d, r in items]


REC_TYPES = {20: "change_cipher_spec", 21: "alert", 22: "handshake", 23: "application_data"}
HS_TYPES = {0: "hello_request", 1: "client_hello", 2: "server_hello", 4: "new_session_ticket",
            11: "certificate", 12: "server_key_exchange", 13: "certificate_request",
            14: "server_hello_done", 15: "certificate_verify", 16: "client_key_exchange",
            20: "finished"}


def plaintext_handshake(recs_dir):
    """Handshake messages from one direction's records before its CCS."""
    buf = b""
    for r in recs_dir:
        if r[0] == 20:
            break
        if r[0] == 22:
            buf += r[5:]
    msgs = []
    i = 0
    while i + 4 <= len(buf):
        ln = int.from_bytes(buf[i + 1:i + 4], "big")
        msgs.append(buf[i:i + 4 + ln])
        i += 4 + ln
    return msgs


# ---------------------------------------------------------------------------
# self test
# ---------------------------------------------------------------------------

def selftest(verbose=True):
    """Tongsuo<->Tongsuo: 4 suites x {no client auth, client auth} + resumption,
    plus negative cases.  Returns (all_ok, rows)."""
    rows = []

    def row(name, ok, **kw):
        kw.update(case=name, ok=bool(ok))
        rows.append(kw)
        if verbose:
            print(json.dumps(kw, sort_keys=True), flush=True)

    for gb, (sid, name) in SUITES.items():
        ecdhe = gb.startswith("ECDHE")
        for auth in (False, True):
            verify = "require" if auth else "none"
            with TongsuoServer(suites=[name], verify=verify) as srv:
                cli = TongsuoClient(suites=[name], client_cert=auth)
                r1 = cli.connect(srv.port, b"hello")
                expect_ok = auth or not ecdhe
                ok1 = (r1["ok"] and r1.get("echo") == "hello"
                       and r1["version"] == "NTLSv1.1" and r1["cipher"] == name
                       and r1["cipher_id"] == "0x%04x" % sid) if expect_ok else not r1["ok"]
                kl = r1.get("keylog", [])
                keylog_ok = (not r1["ok"]) or any(
                    l.split()[0] == "CLIENT_RANDOM" and l.split()[1] == r1["client_random"]
                    and l.split()[2] == r1["master_secret"] for l in kl)
                row("%s auth=%s" % (gb, auth), ok1 and keylog_ok,
                    expected_handshake=expect_ok, handshake=r1["ok"],
                    version=r1.get("version"), cipher=r1.get("cipher"),
                    keylog_matches_master=keylog_ok, error=r1.get("error"))
                if r1["ok"]:
                    r2 = cli.connect(srv.port, b"again", session=r1["session"])
                    ok2 = r2["ok"] and r2["reused"] and r2.get("echo") == "again" and \
                        r2["master_secret"] == r1["master_secret"]
                    row("%s auth=%s resume" % (gb, auth), ok2, reused=r2.get("reused"),
                        error=r2.get("error"))
                    cli.free_session(r1.get("session"))
                    cli.free_session(r2.get("session"))
                srv.wait_results(2 if r1["ok"] else 1, timeout=5)
                cli.close()

    # ECDHE: Tongsuo forces SSL_VERIFY_PEER|FAIL_IF_NO_PEER_CERT for kSM2DHE
    # (tls_post_process_client_hello_ntls), so a server configured with
    # verify=none still sends CertificateRequest and completes with a client
    # that has sign+enc certificates.
    with TongsuoServer(suites=["ECDHE-SM2-SM4-CBC-SM3"], verify="none") as srv:
        cli = TongsuoClient(suites=["ECDHE-SM2-SM4-CBC-SM3"], client_cert=True)
        r = cli.connect(srv.port)
        res = srv.wait_results(1, timeout=5)
        row("ECDHE with server verify=none still does client auth", r["ok"] and
            res and res[0].get("peer_subject") is not None,
            peer_subject=res[0].get("peer_subject") if res else None, error=r.get("error"))
        cli.free_session(r.get("session"))
        cli.close()
    # ECC with an optional client certificate: client without certs answers
    # CertificateRequest with an empty Certificate and no CertificateVerify.
    with TongsuoServer(suites=["ECC-SM2-SM4-GCM-SM3"], verify="request") as srv:
        cli = TongsuoClient(suites=["ECC-SM2-SM4-GCM-SM3"])
        r = cli.connect(srv.port)
        row("ECC verify=request, client without certs", r["ok"], error=r.get("error"))
        cli.free_session(r.get("session"))
        cli.close()
    # negative: ECC verify=require, client without certs
    with TongsuoServer(suites=["ECC-SM2-SM4-GCM-SM3"], verify="require") as srv:
        cli = TongsuoClient(suites=["ECC-SM2-SM4-GCM-SM3"])
        r = cli.connect(srv.port)
        row("ECC verify=require rejects a client without certs", not r["ok"],
            error=r.get("error"))
        cli.close()
    # ServerHello extensions a Tongsuo client tolerates: the relay appends an
    # extension to the ServerHello.  Tolerated ones make the handshake fail
    # only at Finished (transcripts differ -> decrypt_error alert from the
    # server); rejected ones fail at once in tls_collect_extensions_ntls.
    def add_sh_ext(ext):
        def m(i, rec):
            if i != 0 or rec[5] != 2:
                return rec
            body = rec[9:] + len(ext).to_bytes(2, "big") + ext
            hsm = b"\x02" + len(body).to_bytes(3, "big") + body
            return rec[:3] + len(hsm).to_bytes(2, "big") + hsm
        return m
    for label, ext, tolerated in (("renegotiation_info ff01", "ff01000100", True),
                                  ("unknown type abcd", "abcd0000", True),
                                  ("unsolicited extended_master_secret", "00170000", False)):
        with TongsuoServer(suites=["ECC-SM2-SM4-GCM-SM3"]) as srv:
            relay = Relay(srv.port, mutate_s2c=add_sh_ext(bytes.fromhex(ext)))
            cli = TongsuoClient(suites=["ECC-SM2-SM4-GCM-SM3"])
            r = cli.connect(relay.port)
            relay.close()
            cli.close()
            err = r.get("error") or ""
            got = "collect_extensions" not in err
            row("client %s ServerHello %s" % ("tolerates" if tolerated else "rejects", label),
                (not r["ok"]) and got == tolerated, error=err)
    # negative: server chain from an unknown CA must be rejected by a verifying client
    with TongsuoServer(suites=["ECC-SM2-SM4-CBC-SM3"], other_pki=True) as srv:
        cli = TongsuoClient(suites=["ECC-SM2-SM4-CBC-SM3"])
        r = cli.connect(srv.port)
        row("unknown CA rejected by client", not r["ok"], error=r.get("error"))
        cli.close()
    # negative: client certs from an unknown CA rejected by the server
    with TongsuoServer(suites=["ECDHE-SM2-SM4-GCM-SM3"], verify="require") as srv:
        o = default_server_files(other=True)
        cli = TongsuoClient(suites=["ECDHE-SM2-SM4-GCM-SM3"], **o)
        r = cli.connect(srv.port)
        row("unknown-CA client cert rejected by server", not r["ok"], error=r.get("error"))
        cli.close()
    all_ok = all(r["ok"] for r in rows)
    if verbose:
        print(json.dumps({"selftest": "PASS" if all_ok else "FAIL",
                          "tongsuo": tongsuo_version()}), flush=True)
    return all_ok, rows


# ---------------------------------------------------------------------------
# transcripts
# ---------------------------------------------------------------------------

def record_transcript(gb_suite, client_auth=None, tickets=False, resumed=False):
    """Full handshake + 'hello' echo through the relay.  resumed=True: first a
    full handshake straight to the server (not recorded), then a session-ID
    resumption through the relay (that is what gets recorded)."""
    sid, name = SUITES[gb_suite]
    if client_auth is None:
        client_auth = gb_suite.startswith("ECDHE")
    with TongsuoServer(suites=[name], verify="require" if client_auth else "none",
                       tickets=tickets) as srv:
        relay = Relay(srv.port)
        cli = TongsuoClient(suites=[name], client_cert=client_auth, tickets=tickets)
        first = None
        if resumed:
            first = cli.connect(srv.port, b"first")
            if not first["ok"]:
                raise TongsuoError("first handshake failed: %s" % first.get("error"))
        r = cli.connect(relay.port, b"hello", session=first["session"] if first else None)
        sess = relay.wait(1)
        srvres = srv.wait_results(2 if resumed else 1)
        cli.free_session(r.get("session"))
        if first:
            cli.free_session(first.get("session"))
        cli.close()
        relay.close()
    if not r["ok"]:
        raise TongsuoError("handshake failed: %s" % r.get("error"))
    if resumed and not r["reused"]:
        raise TongsuoError("session was not resumed")
    s = srvres[-1]
    recs = ordered_records(sess[0])
    c2s = [rr for d, rr in recs if d == "c2s"]
    s2c = [rr for d, rr in recs if d == "s2c"]
    kl = [l for l in r["keylog"] if l.startswith("CLIENT_RANDOM ")]
    km = [l.split()[2] for l in kl if l.split()[1] == r["client_random"]]
    files = {"ca": "ca.crt", "server_sign_cert": "server_sign.crt",
             "server_sign_key": "server_sign.key", "server_enc_cert": "server_enc.crt",
             "server_enc_key": "server_enc.key"}
    if client_auth:
        files.update({"client_sign_cert": "client_sign.crt", "client_sign_key": "client_sign.key",
                      "client_enc_cert": "client_enc.crt", "client_enc_key": "client_enc.key"})
    if resumed:
        # the keylog line of the resumed connection repeats the session's master secret
        km = km or [first["master_secret"]]
    t = {
        "description": "Tongsuo (%s) NTLS client -> Python TCP relay -> Tongsuo NTLS server, "
                       "one %s handshake, client sends 'hello', server echoes it, client "
                       "sends close_notify, server answers close_notify. Recorded by "
                       "tlcp/interop/tongsuo_ntls.py transcripts." % (
                           tongsuo_version(),
                           "abbreviated (session-ID resumption)" if resumed else "full"),
        "suite": gb_suite,
        "resumed": resumed,
        "suite_id": "0x%04x" % sid,
        "tongsuo_cipher": name,
        "version": r["version"],
        "client_auth": client_auth,
        "session_tickets": tickets,
        "cert_files": files,
        "client_random": r["client_random"],
        "server_random": r["server_random"],
        "session_id": r.get("session_id"),
        "master_secret": km[0] if km else r["master_secret"],
        "master_secret_source": "keylog (CLIENT_RANDOM line of the client's "
                                "SSL_CTX_set_keylog_callback)" if km else
                                "SSL_SESSION_get_master_key",
        "master_secret_session_api": r["master_secret"],
        "master_secret_server_side": s.get("master_secret"),
        "keylog_client": r["keylog"],
        "keylog_server": s.get("keylog"),
        "app_data": {"client_to_server": b"hello".hex(), "server_to_client": r["echo"].encode().hex()},
        "notes": TRANSCRIPT_NOTES,
        "records": [{"dir": d, "type": rr[0], "type_name": REC_TYPES.get(rr[0], "?"),
                     "version": rr[1:3].hex(), "length": len(rr) - 5, "hex": rr.hex()}
                    for d, rr in recs],
        "client_to_server": [rr.hex() for rr in c2s],
        "server_to_client": [rr.hex() for rr in s2c],
        "plaintext_handshake": {
            "client_to_server": [{"type": m[0], "name": HS_TYPES.get(m[0], "?"), "hex": m.hex()}
                                 for m in plaintext_handshake(c2s)],
            "server_to_client": [{"type": m[0], "name": HS_TYPES.get(m[0], "?"), "hex": m.hex()}
                                 for m in plaintext_handshake(s2c)],
        },
    }
    return t


TRANSCRIPT_NOTES = [
    "Each side's 'hello' record is preceded by a zero-length application_data record "
    "(Tongsuo's empty-fragment countermeasure; WIRE.md section 16).",
    "Record sequence numbers restart at 0 after each ChangeCipherSpec, per direction.",
    "CBC: fragment = explicit IV(16) || SM4-CBC(data || HMAC-SM3 || padding); "
    "GCM: fragment = explicit nonce(8) || ciphertext || tag(16), nonce = key-block IV(4) || explicit.",
    "Check with: python tlcp/interop/tlcp_check.py <this file>",
]

TRANSCRIPTS = [(gb, "", {}) for gb in SUITES] + [
    ("ECC_SM4_CBC_SM3", "-client-auth", {"client_auth": True}),
    ("ECDHE_SM4_GCM_SM3", "-resumed", {"resumed": True}),
]


def write_transcripts(out_dir=DATA):
    written = []
    for gb, suffix, kw in TRANSCRIPTS:
        t = record_transcript(gb, **kw)
        p = os.path.join(out_dir, "transcript-%s%s.json" % (gb, suffix))
        with open(p, "w") as f:
            json.dump(t, f, indent=1)
            f.write("\n")
        written.append(p)
        print(json.dumps({"wrote": p, "records": len(t["records"]),
                          "master_from": t["master_secret_source"].split()[0]}), flush=True)
    return written


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------

def _main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("selftest")
    sub.add_parser("transcripts")
    sub.add_parser("sm2kx")
    sub.add_parser("version")
    ps = sub.add_parser("server")
    ps.add_argument("--port", type=int, default=0)
    ps.add_argument("--suites", default=":".join(ALL_TONGSUO_SUITES))
    ps.add_argument("--verify", choices=["none", "request", "require"], default="none")
    ps.add_argument("--ca", default=os.path.join(DATA, "ca.crt"))
    ps.add_argument("--other-pki", action="store_true", help="use other_server_* certs")
    ps.add_argument("--sign-cert")
    ps.add_argument("--sign-key")
    ps.add_argument("--enc-cert")
    ps.add_argument("--enc-key")
    ps.add_argument("--client-ca-names", action="store_true")
    ps.add_argument("--tickets", action="store_true")
    ps.add_argument("--max-conns", type=int, default=0, help="exit after N connections")
    pc = sub.add_parser("client")
    pc.add_argument("--port", type=int, required=True)
    pc.add_argument("--host", default="127.0.0.1")
    pc.add_argument("--suites", default=":".join(ALL_TONGSUO_SUITES))
    pc.add_argument("--client-cert", action="store_true")
    pc.add_argument("--sign-cert")
    pc.add_argument("--sign-key")
    pc.add_argument("--enc-cert")
    pc.add_argument("--enc-key")
    pc.add_argument("--ca", default=os.path.join(DATA, "ca.crt"))
    pc.add_argument("--no-verify", action="store_true")
    pc.add_argument("--data", default="hello")
    pc.add_argument("--servername")
    pc.add_argument("--reconnect", action="store_true", help="second connection resuming the session")
    a = ap.parse_args(argv)

    if a.cmd == "version":
        print(json.dumps({"tongsuo": tongsuo_version(), "library": _find_so()}))
        return 0
    if a.cmd == "selftest":
        return 0 if selftest()[0] else 1
    if a.cmd == "transcripts":
        write_transcripts()
        return 0
    if a.cmd == "sm2kx":
        import sm2kx  # noqa: E402 (sibling module)
        sm2kx.main()
        return 0
    if a.cmd == "server":
        done = threading.Event()
        count = [0]

        def on_result(res):
            print(json.dumps(dict(event="connection", **res), sort_keys=True), flush=True)
            count[0] += 1
            if a.max_conns and count[0] >= a.max_conns:
                done.set()

        srv = TongsuoServer(port=a.port, suites=a.suites.split(":"), verify=a.verify,
                            ca_file=a.ca, other_pki=a.other_pki, sign_cert=a.sign_cert,
                            sign_key=a.sign_key, enc_cert=a.enc_cert, enc_key=a.enc_key,
                            client_ca_names=a.client_ca_names, tickets=a.tickets,
                            on_result=on_result)
        srv.start()
        print(json.dumps({"event": "listening", "port": srv.port, "tongsuo": tongsuo_version()}),
              flush=True)
        try:
            while not done.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
        srv.stop()
        return 0
    if a.cmd == "client":
        cli = TongsuoClient(suites=a.suites.split(":"), client_cert=a.client_cert,
                            sign_cert=a.sign_cert, sign_key=a.sign_key, enc_cert=a.enc_cert,
                            enc_key=a.enc_key, ca_file=a.ca, verify=not a.no_verify)
        r = cli.connect(a.port, a.data.encode(), host=a.host, servername=a.servername)
        sess = r.pop("session", None)
        print(json.dumps(dict(event="connection", **r), sort_keys=True), flush=True)
        ok = r["ok"]
        if a.reconnect and ok:
            r2 = cli.connect(a.port, a.data.encode(), host=a.host, session=sess,
                             servername=a.servername)
            cli.free_session(r2.pop("session", None))
            print(json.dumps(dict(event="connection", **r2), sort_keys=True), flush=True)
            ok = r2["ok"]
        cli.free_session(sess)
        cli.close()
        return 0 if ok else 1
    return 2


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    sys.exit(_main(sys.argv[1:]))
