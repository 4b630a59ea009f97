#!/usr/bin/env python3
"""Tongsuo (BabaSSL 8.3.2, tongsuopy 1.0.1) TLCP speed, for `speed --alg
tlcp` to print beside ours: bulk transfer and full handshakes per second,
Tongsuo's client and server in one thread joined by a BIO pair (in
memory, as our rows are: each side's memory BIOs, the bytes moved between
them by this script, four ctypes calls per 16 KiB record), driven through
the ctypes binding of tongsuo_ntls.py.

Bulk: the client writes 16 KiB records (SSL_write) and the server reads
them (SSL_read): both directions' work per byte, sealing and opening, as
our rows count it. Handshakes: a new client and server SSL per handshake
(full, no resumption), client certificates where the suite needs them.

Prints one JSON object: {suite: {"bulk_mb_s": x, "handshakes_per_s": y}}.
Usage: bench_tongsuo.py [--seconds S] [--suites A,B]
"""
import ctypes
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tongsuo_ntls as t  # noqa: E402

VP = ctypes.c_void_p


def bind():
    L = t.lib()
    for name, res, args in [
        ("BIO_s_mem", VP, []),
        ("BIO_new", VP, [VP]),
        ("BIO_read", ctypes.c_int, [VP, ctypes.c_void_p, ctypes.c_int]),
        ("BIO_write", ctypes.c_int, [VP, ctypes.c_void_p, ctypes.c_int]),
        ("BIO_ctrl_pending", ctypes.c_size_t, [VP]),
        ("SSL_set_bio", None, [VP, VP, VP]),
        ("SSL_do_handshake", ctypes.c_int, [VP]),
        ("SSL_set_connect_state", None, [VP]),
        ("SSL_set_accept_state", None, [VP]),
    ]:
        f = getattr(L, name)
        f.restype = res
        f.argtypes = args
    return L


MOVE = ctypes.create_string_buffer(1 << 18)


class Side:
    """One SSL with a read and a write memory BIO."""

    def __init__(self, L, ctx, server):
        self.L = L
        self.ssl = L.SSL_new(ctx.ctx)
        self.rbio, self.wbio = L.BIO_new(L.BIO_s_mem()), L.BIO_new(L.BIO_s_mem())
        L.SSL_set_bio(self.ssl, self.rbio, self.wbio)
        (L.SSL_set_accept_state if server else L.SSL_set_connect_state)(self.ssl)

    def send_to(self, other):
        """Moves what this side wrote into the other's read BIO."""
        L = self.L
        while L.BIO_ctrl_pending(self.wbio):
            n = L.BIO_read(self.wbio, MOVE, len(MOVE))
            if n <= 0:
                break
            assert L.BIO_write(other.rbio, MOVE, n) == n

    def free(self):
        self.L.SSL_free(self.ssl)


def pair(L, server_ctx, client_ctx):
    s, c = Side(L, server_ctx, True), Side(L, client_ctx, False)
    for _ in range(100):
        rc = L.SSL_do_handshake(c.ssl)
        c.send_to(s)
        rs = L.SSL_do_handshake(s.ssl)
        s.send_to(c)
        if rc == 1 and rs == 1:
            return s, c
    raise RuntimeError("handshake did not complete: %s" % t.ssl_errors())


def contexts(suite):
    name = t.SUITES[suite][1]
    ecdhe = suite.startswith("ECDHE")
    sf = t.default_server_files()
    server = t._Ctx(True, [name], ca_file=os.path.join(t.DATA, "ca.crt"),
                    verify=t._verify_mode("require" if ecdhe else "none"), keylog=False, **sf)
    cf = t.default_client_files() if ecdhe else {}
    client = t._Ctx(False, [name], ca_file=os.path.join(t.DATA, "ca.crt"),
                    verify=t._verify_mode("request"), keylog=False, **cf)
    return server, client


def measure(suite, seconds):
    L = bind()
    server, client = contexts(suite)
    s, c = pair(L, server, client)
    rec = 16384
    data = ctypes.create_string_buffer(os.urandom(rec), rec)
    buf = ctypes.create_string_buffer(rec)
    best = 0.0
    for _ in range(3):
        n, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds / 3:
            for _ in range(64):
                assert L.SSL_write(c.ssl, data, rec) == rec
                c.send_to(s)
                got = 0
                while got < rec:
                    r = L.SSL_read(s.ssl, buf, rec)
                    assert r > 0
                    got += r
            n += 64 * rec
        best = max(best, n / (time.perf_counter() - start) / 1e6)
    s.free()
    c.free()
    hs, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds / 2:
        s, c = pair(L, server, client)
        s.free()
        c.free()
        hs += 1
    per_s = hs / (time.perf_counter() - start)
    server.free()
    client.free()
    return {"bulk_mb_s": round(best, 1), "handshakes_per_s": round(per_s, 1)}


def main():
    seconds = 2.0
    suites = list(t.SUITES)
    args = sys.argv[1:]
    while args:
        a = args.pop(0)
        if a == "--seconds":
            seconds = float(args.pop(0))
        elif a == "--suites":
            suites = args.pop(0).split(",")
    print(json.dumps({s: measure(s, seconds) for s in suites}))


if __name__ == "__main__":
    main()
