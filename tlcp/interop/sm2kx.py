#!/usr/bin/env python3
"""SM2 key-exchange (GB/T 32918.3) known-answer vectors from Tongsuo.

Calls Tongsuo 8.3.2's exported SM2_compute_key (crypto/sm2/sm2_kep.c) -- the
function ntls_sm2_derive_ntls (ssl/statem_ntls/statem_ntls.c) uses for the
ECDHE_SM4_*_SM3 pre-master secret -- once as the server (server=1,
initiator "A") and once as the client (server=0, responder "B"), checks both
agree and that the pure-Python formula in tlcp_check.sm2_kx gives the same,
and writes tests/data/sm2-kx.json.

SM2_compute_key(out, outlen, server, peer_uid, peer_uid_len, self_uid,
                self_uid_len, peer_ecdhe_key, self_ecdhe_key, peer_pub_key,
                self_eckey, md)
In TLCP: static keys = the two ENCRYPTION key pairs, ephemeral = the
ServerKeyExchange / ClientKeyExchange points, ids = "1234567812345678",
outlen = 48, md = SM3, no S1/S2 confirmation.

    python sm2kx.py        (or: python tongsuo_ntls.py sm2kx)
"""

import ctypes
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import tongsuo_ntls  # noqa: E402
import tlcp_check as T  # noqa: E402

NID_sm2 = 1172


def _lib():
    L = tongsuo_ntls.lib()
    VP = ctypes.c_void_p
    for name, res, args in [
        ("EC_KEY_new_by_curve_name", VP, [ctypes.c_int]),
        ("EC_KEY_free", None, [VP]),
        ("EC_KEY_get0_group", VP, [VP]),
        ("EC_KEY_set_private_key", ctypes.c_int, [VP, VP]),
        ("EC_KEY_set_public_key", ctypes.c_int, [VP, VP]),
        ("EC_POINT_new", VP, [VP]),
        ("EC_POINT_free", None, [VP]),
        ("EC_POINT_mul", ctypes.c_int, [VP, VP, VP, VP, VP, VP]),
        ("EC_POINT_point2oct", ctypes.c_size_t, [VP, VP, ctypes.c_int, ctypes.c_char_p,
                                                 ctypes.c_size_t, VP]),
        ("BN_bin2bn", VP, [ctypes.c_char_p, ctypes.c_int, VP]),
        ("BN_free", None, [VP]),
        ("EVP_sm3", VP, []),
        ("SM2_compute_key", ctypes.c_int, [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int,
                                           ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                                           ctypes.c_int, VP, VP, VP, VP, VP]),
    ]:
        f = getattr(L, name)
        f.restype = res
        f.argtypes = args
    return L


class ECKey:
    def __init__(self, L, d):
        self.L = L
        self.k = L.EC_KEY_new_by_curve_name(NID_sm2)
        g = L.EC_KEY_get0_group(self.k)
        bn = L.BN_bin2bn(T.i2b(d), 32, None)
        pt = L.EC_POINT_new(g)
        assert L.EC_POINT_mul(g, pt, bn, None, None, None) == 1
        assert L.EC_KEY_set_private_key(self.k, bn) == 1
        assert L.EC_KEY_set_public_key(self.k, pt) == 1
        buf = ctypes.create_string_buffer(65)
        assert L.EC_POINT_point2oct(g, pt, 4, buf, 65, None) == 65
        self.pub = buf.raw
        L.EC_POINT_free(pt)
        L.BN_free(bn)

    def free(self):
        self.L.EC_KEY_free(self.k)


def det_key(label):
    """Deterministic scalar in [1, n-1] from a label (reproducible vectors)."""
    return int.from_bytes(T.sm3(label.encode()), "big") % (T.N - 1) + 1


def tongsuo_kx(L, server, self_static, self_eph, peer_static, peer_eph, id_self, id_peer, klen):
    out = ctypes.create_string_buffer(klen)
    r = L.SM2_compute_key(out, klen, server, id_peer, len(id_peer), id_self, len(id_self),
                          peer_eph.k, self_eph.k, peer_static.k, self_static.k, L.EVP_sm3())
    if r != klen:
        raise RuntimeError("SM2_compute_key returned %d: %s" % (r, tongsuo_ntls.ssl_errors()))
    return out.raw


def vector(L, name, dA, rA, dB, rB, idA, idB, klen, note):
    """A = server = initiator, B = client = responder."""
    kA, eA, kB, eB = ECKey(L, dA), ECKey(L, rA), ECKey(L, dB), ECKey(L, rB)
    try:
        srv = tongsuo_kx(L, 1, kA, eA, kB, eB, idA, idB, klen)
        cli = tongsuo_kx(L, 0, kB, eB, kA, eA, idB, idA, klen)
        PA, RA, PB, RB = (T.point_from(k.pub) for k in (kA, eA, kB, eB))
        pyA = T.sm2_kx(True, dA, rA, PB, RB, idA, idB, klen)
        pyB = T.sm2_kx(False, dB, rB, PA, RA, idB, idA, klen)
        assert srv == cli == pyA == pyB, "mismatch in vector %s" % name
        # intermediates (pure Python)
        tA = (dA + T.xbar(RA[0]) * rA) % T.N
        U = T.ec_mul(tA, T.ec_add(PB, T.ec_mul(T.xbar(RB[0]), RB)))
        return {
            "name": name,
            "note": note,
            "initiator": "A = TLCP server (SM2_compute_key server=1)",
            "responder": "B = TLCP client (SM2_compute_key server=0)",
            "curve": "sm2p256v1",
            "hash": "SM3",
            "id_a": idA.decode(), "id_b": idB.decode(),
            "klen_bytes": klen,
            "d_a_static": T.i2b(dA).hex(), "p_a_static": kA.pub.hex(),
            "r_a_ephemeral": T.i2b(rA).hex(), "R_a_ephemeral": eA.pub.hex(),
            "d_b_static": T.i2b(dB).hex(), "p_b_static": kB.pub.hex(),
            "r_b_ephemeral": T.i2b(rB).hex(), "R_b_ephemeral": eB.pub.hex(),
            "z_a": T.sm2_z(PA, idA).hex(),
            "z_b": T.sm2_z(PB, idB).hex(),
            "u_x": T.i2b(U[0]).hex(), "u_y": T.i2b(U[1]).hex(),
            "kdf_input": (T.i2b(U[0]) + T.i2b(U[1]) + T.sm2_z(PA, idA) + T.sm2_z(PB, idB)).hex(),
            "shared_key": srv.hex(),
            "checked": "Tongsuo SM2_compute_key as server == as client == pure-Python "
                       "tlcp_check.sm2_kx (initiator and responder)",
        }
    finally:
        for k in (kA, eA, kB, eB):
            k.free()


def main(out=os.path.join(T.DATA, "sm2-kx.json")):
    L = _lib()
    d_srv_enc = T.pkcs8_private(T.pem_to_der(os.path.join(T.DATA, "server_enc.key")))
    d_cli_enc = T.pkcs8_private(T.pem_to_der(os.path.join(T.DATA, "client_enc.key")))
    vs = [
        vector(L, "tlcp-test-pki", d_srv_enc, det_key("tlcp kx 1 server ephemeral"),
               d_cli_enc, det_key("tlcp kx 1 client ephemeral"),
               T.DEFAULT_ID, T.DEFAULT_ID, 48,
               "static keys = tests/data/server_enc.key (A) and client_enc.key (B); "
               "TLCP parameters (default IDs, 48-byte pre-master secret)"),
        vector(L, "tlcp-deterministic", det_key("tlcp kx 2 server static"),
               det_key("tlcp kx 2 server ephemeral"), det_key("tlcp kx 2 client static"),
               det_key("tlcp kx 2 client ephemeral"), T.DEFAULT_ID, T.DEFAULT_ID, 48,
               "scalars = SM3(label) mod (n-1) + 1; TLCP parameters"),
        vector(L, "distinct-ids-klen16", det_key("tlcp kx 3 A static"),
               det_key("tlcp kx 3 A ephemeral"), det_key("tlcp kx 3 B static"),
               det_key("tlcp kx 3 B ephemeral"), b"ALICE123@YAHOO.COM", b"BILL456@YAHOO.COM", 16,
               "non-TLCP IDs and klen to pin down which ID goes into Z_A / Z_B"),
    ]
    doc = {
        "description": "SM2 key exchange (GB/T 32918.3, no S1/S2 confirmation) as used by "
                       "Tongsuo %s for the TLCP ECDHE suites. K = KDF(x_U || y_U || Z_A || Z_B, "
                       "klen) with KDF = SM3 counter mode (counter 32-bit big-endian from 1), "
                       "Z = SM3(ENTL || ID || a || b || xG || yG || xP || yP), w = 127, "
                       "x_bar = 2^w + (x mod 2^w), t_A = d_A + x_bar(R_A) * r_A mod n, "
                       "U = t_A * (P_B + x_bar(R_B) * R_B). Server = A (initiator), "
                       "client = B (responder); P = the ENCRYPTION certificates' keys. "
                       "Generated by tlcp/interop/sm2kx.py." % tongsuo_ntls.tongsuo_version(),
        "vectors": vs,
    }
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(json.dumps({"wrote": out, "vectors": len(vs)}))


if __name__ == "__main__":
    main()
