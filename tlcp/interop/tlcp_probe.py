#!/usr/bin/env python3
"""A from-scratch (slow, minimal) TLCP client written only from WIRE.md, run
against a Tongsuo NTLS server.  It is a check of the wire facts, not a
product: if Tongsuo accepts its Finished and echoes its data, the facts it
encodes (ECDHE pre-master secret via SM2 key exchange on the encryption
keys, SM2 encryption format, CertificateVerify over SM3(transcript), key
block, record protection) are right.

    python tlcp_probe.py            # all four suites, client certs sent
Primitives: SM3/SM4 from the Tongsuo library (ctypes), SM2 pure Python
(tlcp_check.py).
"""

import json
import os
import secrets
import socket
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import tongsuo_ntls as TN  # noqa: E402
import tlcp_check as T  # noqa: E402


def der_int(x):
    b = x.to_bytes((x.bit_length() + 8) // 8 or 1, "big")  # always room for a sign bit
    return der_tlv(0x02, b)


def der_tlv(tag, v):
    n = len(v)
    if n < 0x80:
        ln = bytes([n])
    else:
        lb = n.to_bytes((n.bit_length() + 7) // 8, "big")
        ln = bytes([0x80 | len(lb)]) + lb
    return bytes([tag]) + ln + v


def sm2_sign(d, msg, ident=T.DEFAULT_ID):
    pub = T.ec_mul(d, T.G)
    e = int.from_bytes(T.sm3(T.sm2_z(pub, ident) + msg), "big")
    while True:
        k = secrets.randbelow(T.N - 1) + 1
        x1 = T.ec_mul(k, T.G)[0]
        r = (e + x1) % T.N
        if r == 0 or r + k == T.N:
            continue
        s = pow(1 + d, -1, T.N) * (k - r * d) % T.N
        if s:
            return der_tlv(0x30, der_int(r) + der_int(s))


def sm2_encrypt(pub, m):
    k = secrets.randbelow(T.N - 1) + 1
    c1 = T.ec_mul(k, T.G)
    x2, y2 = T.ec_mul(k, pub)
    t = T.sm2_kdf(T.i2b(x2) + T.i2b(y2), len(m))
    c2 = bytes(a ^ b for a, b in zip(m, t))
    c3 = T.sm3(T.i2b(x2) + m + T.i2b(y2))
    return der_tlv(0x30, der_int(c1[0]) + der_int(c1[1]) + der_tlv(0x04, c3) + der_tlv(0x04, c2))


def hs(typ, body):
    return bytes([typ]) + len(body).to_bytes(3, "big") + body


def u(n, b):
    return len(b).to_bytes(n, "big") + b


class Conn:
    def __init__(self, port, gcm):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.buf = b""
        self.gcm = gcm
        self.wkeys = self.rkeys = None
        self.wseq = self.rseq = 0

    def send(self, typ, data):
        if self.wkeys:
            data = self.protect(typ, data)
        self.s.sendall(bytes([typ]) + b"\x01\x01" + u(2, data))

    def protect(self, typ, pt):
        mac, key, iv = self.wkeys
        seq = self.wseq.to_bytes(8, "big")
        self.wseq += 1
        if self.gcm:
            nonce = secrets.token_bytes(8)
            aad = seq + bytes([typ]) + b"\x01\x01" + len(pt).to_bytes(2, "big")
            ct = T._cipher(T._crypto().EVP_sm4_gcm(), key, iv + nonce, pt, 1, aad=aad, ivlen=12)
            return nonce + ct
        m = T.hmac_sm3(mac, seq + bytes([typ]) + b"\x01\x01" + len(pt).to_bytes(2, "big") + pt)
        body = pt + m
        pad = 16 - (len(body) + 1) % 16
        body += bytes([pad]) * (pad + 1)
        eiv = secrets.token_bytes(16)
        return eiv + T._cipher(T._crypto().EVP_sm4_cbc(), key, eiv, body, 1)

    def unprotect(self, typ, frag):
        mac, key, iv = self.rkeys
        seq = self.rseq.to_bytes(8, "big")
        self.rseq += 1
        if self.gcm:
            ct, tag = frag[8:-16], frag[-16:]
            aad = seq + bytes([typ]) + b"\x01\x01" + len(ct).to_bytes(2, "big")
            pt = T.sm4_gcm_decrypt(key, iv + frag[:8], ct, tag, aad)
            assert pt is not None, "GCM tag"
            return pt
        dec = T.sm4_cbc_decrypt(key, frag[:16], frag[16:])
        pad = dec[-1]
        data, m = dec[:-pad - 1 - 32], dec[-pad - 1 - 32:-pad - 1]
        assert m == T.hmac_sm3(mac, seq + bytes([typ]) + b"\x01\x01"
                               + len(data).to_bytes(2, "big") + data), "CBC MAC"
        return data

    def record(self):
        while len(self.buf) < 5 or len(self.buf) < 5 + int.from_bytes(self.buf[3:5], "big"):
            b = self.s.recv(65536)
            if not b:
                raise EOFError("connection closed")
            self.buf += b
        n = 5 + int.from_bytes(self.buf[3:5], "big")
        r, self.buf = self.buf[:n], self.buf[n:]
        assert r[1:3] == b"\x01\x01"
        frag = r[5:]
        if self.rkeys and r[0] != 20:
            frag = self.unprotect(r[0], frag)
        if r[0] == 21:
            raise RuntimeError("alert %s" % frag.hex())
        return r[0], frag


def run(gb_suite, port, cv_raw=False, extensions=b""):
    sid, _ = TN.SUITES[gb_suite]
    gcm = "GCM" in gb_suite
    ecdhe = gb_suite.startswith("ECDHE")
    d = TN.DATA
    c_sign_d = T.pkcs8_private(T.pem_to_der(os.path.join(d, "client_sign.key")))
    c_enc_d = T.pkcs8_private(T.pem_to_der(os.path.join(d, "client_enc.key")))
    c_sign_der = T.pem_to_der(os.path.join(d, "client_sign.crt"))
    c_enc_der = T.pem_to_der(os.path.join(d, "client_enc.crt"))

    c = Conn(port, gcm)
    transcript = b""
    cr = secrets.token_bytes(32)
    ch = hs(1, b"\x01\x01" + cr + b"\x00" + u(2, sid.to_bytes(2, "big")) + b"\x01\x00"
            + (u(2, extensions) if extensions else b""))
    c.send(22, ch)
    transcript += ch
    msgs = {}
    pend = b""
    while 14 not in msgs:
        typ, frag = c.record()
        assert typ == 22
        pend += frag
        while len(pend) >= 4 and len(pend) >= 4 + int.from_bytes(pend[1:4], "big"):
            n = 4 + int.from_bytes(pend[1:4], "big")
            m, pend = pend[:n], pend[n:]
            msgs[m[0]] = m
            transcript += m
    sr = msgs[2][6:38]
    sh = msgs[2][4:]
    run.server_hello_extensions = sh[35 + sh[34] + 3:].hex()
    certs = T.parse_cert_list(msgs[11][4:])
    s_sign_pub, s_enc_pub = T.cert_pubkey(certs[0]), T.cert_pubkey(certs[1])
    ske = msgs[12][4:]
    if ecdhe:
        params = ske[:4 + ske[3]]
        sig, _ = T.vec(ske, len(params), 2)
        assert T.sm2_verify(s_sign_pub, cr + sr + params, sig), "SKE signature"
        R_s = T.point_from(params[4:])
    else:
        sig, _ = T.vec(ske, 0, 2)
        assert T.sm2_verify(s_sign_pub, cr + sr + u(3, certs[1]), sig), "SKE signature"
    send_cert = 13 in msgs
    if send_cert:
        cm = hs(11, u(3, u(3, c_sign_der) + u(3, c_enc_der)))
        c.send(22, cm)
        transcript += cm
    if ecdhe:
        r = secrets.randbelow(T.N - 1) + 1
        R = T.ec_mul(r, T.G)
        pms = T.sm2_kx(False, c_enc_d, r, s_enc_pub, R_s, T.DEFAULT_ID, T.DEFAULT_ID, 48)
        cke = hs(16, bytes.fromhex("030029") + u(1, T.point_bytes(R)))
    else:
        pms = b"\x01\x01" + secrets.token_bytes(46)
        cke = hs(16, u(2, sm2_encrypt(s_enc_pub, pms)))
    c.send(22, cke)
    transcript += cke
    if send_cert:
        # Tongsuo: SM2-sign the 32-byte SM3 of the transcript (cv_raw: GmSSL-master style,
        # sign the raw transcript -- expected to be rejected)
        cv = hs(15, u(2, sm2_sign(c_sign_d, transcript if cv_raw else T.sm3(transcript))))
        c.send(22, cv)
        transcript += cv
    ms = T.prf(pms, b"master secret", cr + sr, 48)
    ml, kl, il = (0, 16, 4) if gcm else (32, 16, 16)
    kb = T.prf(ms, b"key expansion", sr + cr, 2 * (ml + kl + il))
    cmac, smac = kb[:ml], kb[ml:2 * ml]
    ckey, skey = kb[2 * ml:2 * ml + kl], kb[2 * ml + kl:2 * ml + 2 * kl]
    civ, siv = kb[2 * ml + 2 * kl:2 * ml + 2 * kl + il], kb[2 * ml + 2 * kl + il:]
    c.send(20, b"\x01")
    c.wkeys = (cmac, ckey, civ)
    fin = hs(20, T.prf(ms, b"client finished", T.sm3(transcript), 12))
    c.send(22, fin)
    transcript += fin
    typ, frag = c.record()
    assert (typ, frag) == (20, b"\x01"), "CCS"
    c.rkeys = (smac, skey, siv)
    typ, sfin = c.record()
    assert typ == 22 and sfin == hs(20, T.prf(ms, b"server finished", T.sm3(transcript), 12)), \
        "server Finished"
    c.send(23, b"hello")
    got = b""
    while len(got) < 5:
        typ, frag = c.record()
        assert typ == 23
        got += frag
    c.send(21, b"\x01\x00")
    c.s.close()
    return got


def main():
    rows = []
    for gb in TN.SUITES:
        name = TN.SUITES[gb][1]
        with TN.TongsuoServer(suites=[name], verify="require") as srv:
            try:
                got = run(gb, srv.port)
                ok = got == b"hello"
                err = None
            except Exception as ex:  # noqa: BLE001
                ok, err = False, repr(ex)
            res = srv.wait_results(1, timeout=5)
        row = {"probe": gb, "python_client_vs_tongsuo_server": ok, "error": err,
               "server_error": res[0].get("error") if res else "no result"}
        rows.append(row)
        print(json.dumps(row), flush=True)
    # a ClientHello with TLS 1.2 extensions: SNI, extended_master_secret,
    # encrypt_then_mac, renegotiation_info, signature_algorithms(sm2sig_sm3),
    # supported_groups(curveSM2), ec_point_formats -- all ignored by Tongsuo
    # (ServerHello carries none; plain master secret; MAC-then-encrypt).
    ext = (b"\x00\x00" + u(2, u(2, b"\x00" + u(2, b"localhost")))
           + b"\x00\x17\x00\x00" + b"\x00\x16\x00\x00" + b"\xff\x01\x00\x01\x00"
           + b"\x00\x0d" + u(2, u(2, b"\x07\x08")) + b"\x00\x0a" + u(2, u(2, b"\x00\x29"))
           + b"\x00\x0b" + u(2, u(1, b"\x00")))
    for gb in ("ECC_SM4_CBC_SM3", "ECDHE_SM4_CBC_SM3"):
        with TN.TongsuoServer(suites=[TN.SUITES[gb][1]], verify="require") as srv:
            try:
                ok = run(gb, srv.port, extensions=ext) == b"hello"
                err = None
            except Exception as ex:  # noqa: BLE001
                ok, err = False, repr(ex)
            res = srv.wait_results(1, timeout=5)
        row = {"probe": gb + " with ClientHello extensions (ignored)",
               "python_client_vs_tongsuo_server": ok, "error": err,
               "server_hello_extensions": getattr(run, "server_hello_extensions", None),
               "server_error": res[0].get("error") if res else "no result"}
        rows.append(row)
        print(json.dumps(row), flush=True)

    # negative: CertificateVerify signed over the raw handshake messages
    with TN.TongsuoServer(suites=["ECDHE-SM2-SM4-GCM-SM3"], verify="require") as srv:
        try:
            run("ECDHE_SM4_GCM_SM3", srv.port, cv_raw=True)
            rej = False
        except Exception:  # noqa: BLE001
            rej = True
        res = srv.wait_results(1, timeout=5)
    row = {"probe": "CertificateVerify over raw messages is rejected",
           "python_client_vs_tongsuo_server": rej,
           "server_error": res[0].get("error") if res else "no result"}
    rows.append(row)
    print(json.dumps(row), flush=True)
    ok = all(r["python_client_vs_tongsuo_server"] for r in rows)
    print(json.dumps({"tlcp_probe": "PASS" if ok else "FAIL"}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
