#!/usr/bin/env python3
"""Independent re-derivation of recorded TLCP transcripts (checks WIRE.md).

For each tests/data/transcript-*.json this re-computes, from the recorded
bytes, the master secret (ECC suites: by SM2-decrypting the ClientKeyExchange
with the server enc key), the key block, every encrypted record (CBC: MAC +
padding, GCM: tag + AAD), both Finished messages, the ServerKeyExchange and
CertificateVerify signatures, and prints one JSON line per check.

The protocol logic (PRF, key block split, record formats, SM2 signature /
encryption / key-exchange formulas) is written here from GB/T 38636-2020 /
GB/T 32918 and from reading Tongsuo's source; only the SM3 hash and the SM4
block cipher modes are taken from the Tongsuo library through ctypes.

    python tlcp_check.py [transcript.json ...]      (default: all in tests/data)
Exit status 0 when every check passes.
"""

import ctypes
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.normpath(os.path.join(HERE, "..", "tests", "data"))
sys.path.insert(0, HERE)

import tongsuo_ntls  # noqa: E402  (library loader)

# ---------------------------------------------------------------------------
# SM3 / SM4 via the Tongsuo library
# ---------------------------------------------------------------------------

_C = None


def _crypto():
    global _C
    if _C is not None:
        return _C
    L = tongsuo_ntls.lib()
    VP = ctypes.c_void_p
    for name, res, args in [
        ("EVP_sm3", VP, []), ("EVP_sm4_cbc", VP, []), ("EVP_sm4_gcm", VP, []),
        ("EVP_Digest", ctypes.c_int, [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                      ctypes.POINTER(ctypes.c_uint), VP, VP]),
        ("EVP_CIPHER_CTX_new", VP, []), ("EVP_CIPHER_CTX_free", None, [VP]),
        ("EVP_CipherInit_ex", ctypes.c_int, [VP, VP, VP, ctypes.c_char_p, ctypes.c_char_p,
                                             ctypes.c_int]),
        ("EVP_CIPHER_CTX_set_padding", ctypes.c_int, [VP, ctypes.c_int]),
        ("EVP_CIPHER_CTX_ctrl", ctypes.c_int, [VP, ctypes.c_int, ctypes.c_int, VP]),
        ("EVP_CipherUpdate", ctypes.c_int, [VP, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int),
                                            ctypes.c_char_p, ctypes.c_int]),
        ("EVP_CipherFinal_ex", ctypes.c_int, [VP, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]),
    ]:
        f = getattr(L, name)
        f.restype = res
        f.argtypes = args
    _C = L
    return L


def sm3(data):
    L = _crypto()
    out = ctypes.create_string_buffer(32)
    n = ctypes.c_uint(0)
    if L.EVP_Digest(data, len(data), out, ctypes.byref(n), L.EVP_sm3(), None) != 1:
        raise RuntimeError("EVP_Digest(sm3)")
    return out.raw[:n.value]


def hmac_sm3(key, msg):
    if len(key) > 64:
        key = sm3(key)
    key = key.ljust(64, b"\0")
    return sm3(bytes(k ^ 0x5c for k in key) + sm3(bytes(k ^ 0x36 for k in key) + msg))


def prf(secret, label, seed, n):
    """TLS 1.2-style P_hash with HMAC-SM3 (single hash, no MD5/SHA-1 split)."""
    s = label + seed
    a = s
    out = b""
    while len(out) < n:
        a = hmac_sm3(secret, a)
        out += hmac_sm3(secret, a + s)
    return out[:n]


def _cipher(cipher, key, iv, data, enc, aad=None, tag=None, ivlen=None):
    L = _crypto()
    ctx = L.EVP_CIPHER_CTX_new()
    try:
        ok = L.EVP_CipherInit_ex(ctx, cipher, None, None, None, enc)
        if ivlen:
            ok &= L.EVP_CIPHER_CTX_ctrl(ctx, 0x9, ivlen, None) > 0  # EVP_CTRL_AEAD_SET_IVLEN
        ok &= L.EVP_CipherInit_ex(ctx, None, None, key, iv, enc)
        L.EVP_CIPHER_CTX_set_padding(ctx, 0)
        outl = ctypes.c_int(0)
        if aad is not None:
            L.EVP_CipherUpdate(ctx, None, ctypes.byref(outl), aad, len(aad))
        out = ctypes.create_string_buffer(len(data) + 32)
        L.EVP_CipherUpdate(ctx, out, ctypes.byref(outl), data, len(data))
        res = out.raw[:outl.value]
        if tag is not None:
            tb = ctypes.create_string_buffer(tag)
            L.EVP_CIPHER_CTX_ctrl(ctx, 0x11, len(tag), tb)  # EVP_CTRL_AEAD_SET_TAG
        fin = ctypes.create_string_buffer(32)
        fl = ctypes.c_int(0)
        if L.EVP_CipherFinal_ex(ctx, fin, ctypes.byref(fl)) != 1:
            return None
        res += fin.raw[:fl.value]
        if enc and ivlen:
            t = ctypes.create_string_buffer(16)
            L.EVP_CIPHER_CTX_ctrl(ctx, 0x10, 16, t)  # EVP_CTRL_AEAD_GET_TAG
            res += t.raw
        return res if ok else None
    finally:
        L.EVP_CIPHER_CTX_free(ctx)


def sm4_cbc_decrypt(key, iv, data):
    return _cipher(_crypto().EVP_sm4_cbc(), key, iv, data, 0)


def sm4_gcm_decrypt(key, nonce, ct, tag, aad):
    return _cipher(_crypto().EVP_sm4_gcm(), key, nonce, ct, 0, aad=aad, tag=tag, ivlen=12)


# ---------------------------------------------------------------------------
# SM2 in pure Python (GB/T 32918; curve sm2p256v1 from GB/T 32918.5)
# ---------------------------------------------------------------------------

P = 0xFFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF00000000FFFFFFFFFFFFFFFF
A = 0xFFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF00000000FFFFFFFFFFFFFFFC
B = 0x28E9FA9E9D9F5E344D5A9E4BCF6509A7F39789F515AB8F92DDBCBD414D940E93
N = 0xFFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFF7203DF6B21C6052B53BBF40939D54123
GX = 0x32C4AE2C1F1981195F9904466A39C9948FE30BBFF2660BE1715A4589334C74C7
GY = 0xBC3736A2F4F6779C59BDCEE36B692153D0A9877CC62A474002DF32E52139F0A0
G = (GX, GY)
DEFAULT_ID = b"1234567812345678"


def ec_add(p1, p2):
    if p1 is None:
        return p2
    if p2 is None:
        return p1
    if p1[0] == p2[0]:
        if (p1[1] + p2[1]) % P == 0:
            return None
        lam = (3 * p1[0] * p1[0] + A) * pow(2 * p1[1], -1, P) % P
    else:
        lam = (p2[1] - p1[1]) * pow(p2[0] - p1[0], -1, P) % P
    x = (lam * lam - p1[0] - p2[0]) % P
    return (x, (lam * (p1[0] - x) - p1[1]) % P)


def ec_mul(k, pt):
    r = None
    while k:
        if k & 1:
            r = ec_add(r, pt)
        pt = ec_add(pt, pt)
        k >>= 1
    return r


def on_curve(pt):
    x, y = pt
    return (y * y - (x * x * x + A * x + B)) % P == 0


def i2b(x, n=32):
    return x.to_bytes(n, "big")


def point_bytes(pt):
    return b"\x04" + i2b(pt[0]) + i2b(pt[1])


def point_from(b):
    if len(b) != 65 or b[0] != 4:
        raise ValueError("not an uncompressed point")
    pt = (int.from_bytes(b[1:33], "big"), int.from_bytes(b[33:], "big"))
    if not on_curve(pt):
        raise ValueError("point not on curve")
    return pt


def sm2_z(pub, ident=DEFAULT_ID):
    return sm3(i2b(len(ident) * 8, 2) + ident + i2b(A) + i2b(B) + i2b(GX) + i2b(GY)
               + i2b(pub[0]) + i2b(pub[1]))


def sm2_kdf(z, klen):
    out = b""
    ct = 1
    while len(out) < klen:
        out += sm3(z + ct.to_bytes(4, "big"))
        ct += 1
    return out[:klen]


def sm2_verify(pub, msg, sig_der, ident=DEFAULT_ID):
    """SM2 signature check; e = SM3(Z_A || msg)."""
    r, s = der_ecdsa_sig(sig_der)
    if not (1 <= r < N and 1 <= s < N):
        return False
    e = int.from_bytes(sm3(sm2_z(pub, ident) + msg), "big")
    t = (r + s) % N
    if t == 0:
        return False
    pt = ec_add(ec_mul(s, G), ec_mul(t, pub))
    return pt is not None and (e + pt[0]) % N == r


def sm2_decrypt(d, der_ct):
    """GM/T 0009 DER ciphertext SEQUENCE{x INTEGER, y INTEGER, hash OCTET STRING(32),
    ciphertext OCTET STRING}, i.e. C1 || C3 || C2."""
    seq = der_parse(der_ct)
    assert seq[0] == 0x30
    x, y, c3, c2 = [c[1] for c in der_children(seq[1])]
    c1 = (int.from_bytes(x, "big"), int.from_bytes(y, "big"))
    assert on_curve(c1)
    x2, y2 = ec_mul(d, c1)
    t = sm2_kdf(i2b(x2) + i2b(y2), len(c2))
    m = bytes(a ^ b for a, b in zip(c2, t))
    if sm3(i2b(x2) + m + i2b(y2)) != c3:
        raise ValueError("SM2 C3 mismatch")
    return m


W = (256 + 1) // 2 - 1  # w = ceil(ceil(log2 n)/2) - 1 = 127


def xbar(x):
    return (1 << W) + (x & ((1 << W) - 1))


def sm2_kx(initiator, d_self, r_self, pub_peer, R_peer, id_self, id_peer, klen,
           pub_self=None, R_self=None):
    """GB/T 32918.3 key agreement without the optional S1/S2/SA/SB confirmation.
    K = KDF(x_U || y_U || Z_A || Z_B, klen); A = initiator."""
    pub_self = pub_self or ec_mul(d_self, G)
    R_self = R_self or ec_mul(r_self, G)
    t = (d_self + xbar(R_self[0]) * r_self) % N
    uv = ec_mul(t, ec_add(pub_peer, ec_mul(xbar(R_peer[0]), R_peer)))  # cofactor h = 1
    za, zb = (sm2_z(pub_self, id_self), sm2_z(pub_peer, id_peer)) if initiator else \
        (sm2_z(pub_peer, id_peer), sm2_z(pub_self, id_self))
    return sm2_kdf(i2b(uv[0]) + i2b(uv[1]) + za + zb, klen)


# ---------------------------------------------------------------------------
# minimal DER
# ---------------------------------------------------------------------------

def der_parse(b, i=0):
    """-> (tag, value, next_index)"""
    tag = b[i]
    ln = b[i + 1]
    j = i + 2
    if ln & 0x80:
        k = ln & 0x7f
        ln = int.from_bytes(b[j:j + k], "big")
        j += k
    return tag, b[j:j + ln], j + ln


def der_children(v):
    out = []
    i = 0
    while i < len(v):
        t, val, i = der_parse(v, i)
        out.append((t, val))
    return out


def der_ecdsa_sig(sig):
    t, v, end = der_parse(sig)
    if t != 0x30 or end != len(sig):
        raise ValueError("signature is not a DER SEQUENCE")
    (t1, r), (t2, s) = der_children(v)
    return int.from_bytes(r, "big"), int.from_bytes(s, "big")


def cert_pubkey(cert_der):
    _, tbs_outer, _ = der_parse(cert_der)
    tbs = der_children(der_children(tbs_outer)[0][1])
    if tbs[0][0] == 0xA0:
        tbs = tbs[1:]
    spki = der_children(tbs[5][1])
    bits = spki[1][1]
    return point_from(bits[1:])


def pkcs8_private(der):
    _, v, _ = der_parse(der)
    ch = der_children(v)
    ecpriv = der_children(der_parse(ch[2][1])[1])
    return int.from_bytes(ecpriv[1][1], "big")


def pem_to_der(path):
    import base64
    with open(path) as f:
        lines = [l.strip() for l in f if l.strip() and not l.startswith("-----")]
    return base64.b64decode("".join(lines))


# ---------------------------------------------------------------------------
# transcript checks
# ---------------------------------------------------------------------------

class Checker:
    def __init__(self, name):
        self.name = name
        self.rows = []

    def check(self, what, ok, **kw):
        kw.update(transcript=self.name, check=what, ok=bool(ok))
        self.rows.append(kw)
        print(json.dumps(kw, sort_keys=True), flush=True)
        return ok


def u8(b, i):
    return b[i], i + 1


def vec(b, i, n):
    ln = int.from_bytes(b[i:i + n], "big")
    return b[i + n:i + n + ln], i + n + ln


def parse_cert_list(body):
    lst, end = vec(body, 0, 3)
    assert end == len(body)
    certs = []
    i = 0
    while i < len(lst):
        c, i = vec(lst, i, 3)
        certs.append(c)
    return certs


def check_transcript(path):
    T = json.load(open(path))
    C = Checker(os.path.basename(path))
    suite = T["suite"]
    gcm = "GCM" in suite
    ecdhe = suite.startswith("ECDHE")
    cr = bytes.fromhex(T["client_random"])
    sr = bytes.fromhex(T["server_random"])
    ms = bytes.fromhex(T["master_secret"])
    files = {k: os.path.join(DATA, v) for k, v in T["cert_files"].items()}
    c2s = [bytes.fromhex(h) for h in T["client_to_server"]]
    s2c = [bytes.fromhex(h) for h in T["server_to_client"]]

    C.check("record headers: version 0x0101, length matches",
            all(r[1:3] == b"\x01\x01" and int.from_bytes(r[3:5], "big") == len(r) - 5
                for r in c2s + s2c))
    C.check("master secret: keylog == SSL_SESSION_get_master_key (client) == server",
            T["master_secret"] == T["master_secret_session_api"] == T["master_secret_server_side"])

    hs_c = [bytes.fromhex(m["hex"]) for m in T["plaintext_handshake"]["client_to_server"]]
    hs_s = [bytes.fromhex(m["hex"]) for m in T["plaintext_handshake"]["server_to_client"]]
    by_c = {m[0]: m for m in hs_c}
    by_s = {m[0]: m for m in hs_s}

    # ClientHello
    ch = by_c[1][4:]
    sid, i = vec(ch, 34, 1)
    suites, i = vec(ch, i, 2)
    comp, i = vec(ch, i, 1)
    C.check("ClientHello: client_version 0101, random, no extensions block, null compression",
            ch[:2] == b"\x01\x01" and ch[2:34] == cr and i == len(ch) and comp == b"\x00",
            suites=suites.hex(), session_id_len=len(sid), extensions_present=i != len(ch))
    # ServerHello
    sh = by_s[2][4:]
    ssid, i = vec(sh, 34, 1)
    sel = sh[i:i + 2]
    C.check("ServerHello: version 0101, random, suite, compression 0, no extensions",
            sh[:2] == b"\x01\x01" and sh[2:34] == sr and sel.hex() == T["suite_id"][2:]
            and sh[i + 2] == 0 and i + 3 == len(sh), session_id=ssid.hex())

    resumed = T.get("resumed", False)
    if resumed:
        C.check("resumption: ClientHello carries the 32-byte session ID, ServerHello echoes it, "
                "no Certificate/KeyExchange messages",
                len(sid) == 32 and ssid == sid and set(by_c) == {1} and set(by_s) == {2})
    else:
        check_full_handshake(C, T, by_c, by_s, files, cr, sr, ms, ecdhe)
    check_records(C, T, cr, sr, ms, gcm, resumed, c2s, s2c)
    return C.rows


def check_full_handshake(C, T, by_c, by_s, files, cr, sr, ms, ecdhe):
    # server Certificate
    certs = parse_cert_list(by_s[11][4:])
    sign_der = pem_to_der(files["server_sign_cert"])
    enc_der = pem_to_der(files["server_enc_cert"])
    ca_der = pem_to_der(files["ca"])
    C.check("server Certificate = [sign, enc, chain...]",
            certs[0] == sign_der and certs[1] == enc_der,
            n_certs=len(certs), third_is_ca=(len(certs) > 2 and certs[2] == ca_der))
    s_sign_pub = cert_pubkey(sign_der)
    s_enc_pub = cert_pubkey(enc_der)
    s_enc_priv = pkcs8_private(pem_to_der(files["server_enc_key"]))
    C.check("server enc key matches enc cert (curve constants ok)",
            ec_mul(s_enc_priv, G) == s_enc_pub)

    # ServerKeyExchange
    ske = by_s[12][4:]
    if ecdhe:
        params = ske[:3 + 1 + ske[3]]
        sig, end = vec(ske, len(params), 2)
        C.check("SKE(ECDHE): ECParameters 03 0029 + u8-len point 04||x||y, u16 sig",
                params[:4] == bytes.fromhex("03002941") and params[4] == 4 and end == len(ske))
        tbs = cr + sr + params
        R_s = point_from(params[4:])
    else:
        sig, end = vec(ske, 0, 2)
        C.check("SKE(ECC): only a u16-prefixed signature", end == len(ske))
        tbs = cr + sr + len(enc_der).to_bytes(3, "big") + enc_der
    C.check("SKE signature: SM2(ID=1234567812345678, server sign key) over "
            + ("cr||sr||ECParams||point" if ecdhe else "cr||sr||u24len||enc_cert_DER"),
            sm2_verify(s_sign_pub, tbs, sig))
    if not ecdhe:
        C.check("SKE(ECC) signature does NOT verify without the 3-byte length",
                not sm2_verify(s_sign_pub, cr + sr + enc_der, sig))

    # CertificateRequest
    if 13 in by_s:
        crq = by_s[13][4:]
        types, i = vec(crq, 0, 1)
        names, i = vec(crq, i, 2)
        C.check("CertificateRequest: u8 cert types, u16 DN list, no sigalgs",
                i == len(crq), cert_types=list(types), dn_list_len=len(names))

    # client Certificate
    if 11 in by_c:
        ccerts = parse_cert_list(by_c[11][4:])
        if T["client_auth"]:
            C.check("client Certificate = [sign, enc, chain...]",
                    ccerts[0] == pem_to_der(files["client_sign_cert"])
                    and ccerts[1] == pem_to_der(files["client_enc_cert"]),
                    n_certs=len(ccerts), third_is_ca=(len(ccerts) > 2 and ccerts[2] == ca_der))
        else:
            C.check("client Certificate empty", ccerts == [])

    # ClientKeyExchange
    cke = by_c[16][4:]
    if ecdhe:
        C.check("CKE(ECDHE): ECParameters 03 0029 + u8-len point, no outer length",
                cke[:4] == bytes.fromhex("03002941") and cke[4] == 4 and len(cke) == 69)
        point_from(cke[4:])
    else:
        enc, end = vec(cke, 0, 2)
        C.check("CKE(ECC): u16 length || DER SM2 ciphertext", end == len(cke) and enc[0] == 0x30)
        pms = sm2_decrypt(s_enc_priv, enc)
        C.check("pre-master secret: 48 bytes, starts 0101", len(pms) == 48 and pms[:2] == b"\x01\x01")
        C.check("master = PRF(pms, 'master secret', cr||sr, 48)",
                prf(pms, b"master secret", cr + sr, 48) == ms)

    # CertificateVerify
    if 15 in by_c:
        # transcript up to and including ClientKeyExchange, in wire order
        hs_order = handshake_order(T)
        upto = []
        for d, m in hs_order:
            if m[0] == 15:
                break
            upto.append(m)
        h = b"".join(upto)
        cv = by_c[15][4:]
        sig, end = vec(cv, 0, 2)
        c_sign_pub = cert_pubkey(pem_to_der(files["client_sign_cert"]))
        C.check("CertificateVerify: u16 sig = SM2(ID, client sign key) over SM3(handshake msgs "
                "ClientHello..ClientKeyExchange) [signed message is the 32-byte hash]",
                end == len(cv) and sm2_verify(c_sign_pub, sm3(h), sig))
        C.check("CertificateVerify does NOT verify over the raw messages",
                not sm2_verify(c_sign_pub, h, sig))



def check_records(C, T, cr, sr, ms, gcm, resumed, c2s, s2c):
    # key block
    if gcm:
        maclen, keylen, ivlen = 0, 16, 4
    else:
        maclen, keylen, ivlen = 32, 16, 16
    kb = prf(ms, b"key expansion", sr + cr, 2 * (maclen + keylen + ivlen))
    o = 0
    cmac, o = kb[o:o + maclen], o + maclen
    smac, o = kb[o:o + maclen], o + maclen
    ckey, o = kb[o:o + keylen], o + keylen
    skey, o = kb[o:o + keylen], o + keylen
    civ, o = kb[o:o + ivlen], o + ivlen
    siv, o = kb[o:o + ivlen], o + ivlen

    def decrypt_dir(recs, mac, key, fiv, who):
        out = []
        seq = 0
        after = False
        nonces = []
        for r in recs:
            if r[0] == 20:
                after = True
                continue
            if not after:
                continue
            typ, frag = r[0], r[5:]
            if gcm:
                en, ct, tag = frag[:8], frag[8:-16], frag[-16:]
                nonces.append(en.hex())
                aad = seq.to_bytes(8, "big") + bytes([typ]) + b"\x01\x01" + len(ct).to_bytes(2, "big")
                pt = sm4_gcm_decrypt(key, fiv + en, ct, tag, aad)
                ok = pt is not None
            else:
                iv, body = frag[:16], frag[16:]
                dec = sm4_cbc_decrypt(key, iv, body)
                pad = dec[-1]
                ok = all(x == pad for x in dec[-pad - 1:])
                data = dec[:-pad - 1 - 32]
                m = dec[-pad - 1 - 32:-pad - 1]
                want = hmac_sm3(mac, seq.to_bytes(8, "big") + bytes([typ]) + b"\x01\x01"
                                + len(data).to_bytes(2, "big") + data)
                ok = ok and m == want
                pt = data
            C.check("%s record seq=%d type=%d decrypts/authenticates" % (who, seq, typ), ok,
                    plaintext=pt.hex() if pt is not None else None)
            out.append((typ, pt))
            seq += 1
        return out, nonces

    cplain, cn = decrypt_dir(c2s, cmac, ckey, civ, "client")
    splain, sn = decrypt_dir(s2c, smac, skey, siv, "server")
    if gcm:
        C.check("GCM explicit nonces (8 bytes, observed; not the sequence number)", True,
                client=cn, server=sn)

    # Finished
    hs_order = handshake_order(T)
    cfin = cplain[0][1]
    sfin = splain[0][1]
    plain = b"".join(m for d, m in hs_order)
    fh = b"\x14\x00\x00\x0c"
    if resumed:
        C.check("resumed: server Finished (sent first) = PRF(ms, 'server finished', "
                "SM3(ClientHello||ServerHello), 12)",
                sfin == fh + prf(ms, b"server finished", sm3(plain), 12))
        C.check("resumed: client Finished = PRF(ms, 'client finished', "
                "SM3(ClientHello||ServerHello||server Finished), 12)",
                cfin == fh + prf(ms, b"client finished", sm3(plain + sfin), 12))
        first = [x["dir"] for x in T["records"] if x["type"] == 20]
        C.check("resumed: server sends ChangeCipherSpec first", first[0] == "s2c")
    else:
        C.check("client Finished = 14 00000c || PRF(ms, 'client finished', SM3(all hs msgs "
                "before it), 12)", cfin == fh + prf(ms, b"client finished", sm3(plain), 12))
        C.check("server Finished = PRF(ms, 'server finished', SM3(... || client Finished), 12)",
                sfin == fh + prf(ms, b"server finished", sm3(plain + cfin), 12))
    capp = [p for t, p in cplain[1:] if t == 23]
    sapp = [p for t, p in splain[1:] if t == 23]
    C.check("application data: empty record then 'hello' (both directions)",
            capp == [b"", b"hello"] and sapp == [b"", b"hello"],
            client=[p.hex() for p in capp], server=[p.hex() for p in sapp])
    calert = [p for t, p in cplain if t == 21]
    salert = [p for t, p in splain if t == 21]
    C.check("close_notify alerts 01 00 both ways (encrypted)",
            calert == [b"\x01\x00"] and salert == [b"\x01\x00"])


def handshake_order(T):
    """Plaintext handshake messages (pre-CCS) of both sides in wire order."""
    out = []
    bufs = {"c2s": b"", "s2c": b""}
    seen_ccs = {"c2s": False, "s2c": False}
    for x in T["records"]:
        d = x["dir"]
        r = bytes.fromhex(x["hex"])
        if r[0] == 20:
            seen_ccs[d] = True
        if seen_ccs[d] or r[0] != 22:
            continue
        bufs[d] += r[5:]
        while len(bufs[d]) >= 4:
            ln = int.from_bytes(bufs[d][1:4], "big")
            if len(bufs[d]) < 4 + ln:
                break
            out.append((d, bufs[d][:4 + ln]))
            bufs[d] = bufs[d][4 + ln:]
    return out


def main(argv):
    paths = argv or sorted(glob.glob(os.path.join(DATA, "transcript-*.json")))
    rows = []
    for p in paths:
        rows += check_transcript(p)
    ok = all(r["ok"] for r in rows)
    print(json.dumps({"tlcp_check": "PASS" if ok else "FAIL", "checks": len(rows),
                      "failed": [r["check"] + " @" + r["transcript"] for r in rows if not r["ok"]]}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
