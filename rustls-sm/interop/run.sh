#!/usr/bin/env bash
# rustls-sm against OpenSSL 4 and against Tongsuo over 127.0.0.1 (see
# interop.py and tongsuo.py for the cases).
# Installs what it needs: the Debian `openssl` CLI (test certificates) and
# python3-venv when missing, and the peers -- cryptography 50.0.2 (OpenSSL
# 4.0 statically linked) with pyOpenSSL 26.4.0, and tongsuopy 1.0.1
# (Tongsuo/BabaSSL 8.3.2 statically linked), wheels only -- into a venv
# of its own under target/, without the system's Python packages.
# Fails (never skips) when a peer cannot be installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

# shellcheck source=scripts/apt.sh
source scripts/apt.sh
fail() {
    echo "interop: FAIL: $*" >&2
    exit 1
}

command -v openssl >/dev/null || apt_install openssl || fail "no openssl CLI to make the test certificates"

venv=$root/target/interop-venv
py=$venv/bin/python
want_crypto=50.0.2
want_pyopenssl=26.4.0
if ! "$py" -c "import cryptography, OpenSSL, sys; sys.exit(cryptography.__version__ != '$want_crypto' or OpenSSL.__version__ != '$want_pyopenssl')" 2>/dev/null; then
    rm -rf "$venv"
    if ! python3 -m venv "$venv" 2>/dev/null; then
        rm -rf "$venv"
        apt_install python3-venv || fail "python3 -m venv does not work and python3-venv did not install"
        python3 -m venv "$venv" || fail "python3 -m venv"
    fi
    "$py" -m pip install -q --disable-pip-version-check --only-binary :all: \
        "cryptography==$want_crypto" "pyOpenSSL==$want_pyopenssl" ||
        fail "pip could not install cryptography==$want_crypto pyOpenSSL==$want_pyopenssl"
fi
# The peer must be OpenSSL 4 with the SM suites, whatever pip resolved.
"$py" - <<'PY' || fail "the peer is not an OpenSSL 4 with TLS_SM4_GCM_SM3 / curveSM2 / sm2sig_sm3"
from OpenSSL import SSL
from OpenSSL._util import lib
v = SSL.OpenSSL_version(SSL.OPENSSL_VERSION).decode()
assert v.startswith("OpenSSL 4."), v
ctx = SSL.Context(SSL.TLS_METHOD)
ctx.set_tls13_ciphersuites(b"TLS_SM4_GCM_SM3:TLS_SM4_CCM_SM3")
assert lib.SSL_CTX_set1_curves_list(ctx._context, b"curveSM2") == 1
assert lib.SSL_CTX_set1_sigalgs_list(ctx._context, b"sm2sig_sm3") == 1
PY
# The second peer: Tongsuo, in the same venv (tongsuo.py drives it with ctypes).
want_tongsuopy=1.0.1
if ! "$py" -c "import tongsuopy, sys; sys.exit(tongsuopy.__version__ != '$want_tongsuopy')" 2>/dev/null; then
    "$py" -m pip install -q --disable-pip-version-check --only-binary :all: \
        "tongsuopy==$want_tongsuopy" || fail "pip could not install tongsuopy==$want_tongsuopy"
fi
"$py" - <<'PY' || fail "the second peer is not a Tongsuo 8.3.2 with TLS_SM4_GCM_SM3 / curveSM2"
import ctypes, os, tongsuopy
lib = ctypes.CDLL(os.path.join(os.path.dirname(tongsuopy.__file__), "backends", "_tongsuo.abi3.so"))
lib.OpenSSL_version.restype = ctypes.c_char_p
lib.TLS_method.restype = lib.SSL_CTX_new.restype = ctypes.c_void_p
lib.SSL_CTX_new.argtypes = [ctypes.c_void_p]
lib.SSL_CTX_set_ciphersuites.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
lib.SSL_CTX_ctrl.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_long, ctypes.c_char_p]
v = lib.OpenSSL_version(6)  # BABASSL_VERSION
assert v == b"BabaSSL 8.3.2", v
ctx = lib.SSL_CTX_new(lib.TLS_method())
assert lib.SSL_CTX_set_ciphersuites(ctx, b"TLS_SM4_GCM_SM3:TLS_SM4_CCM_SM3") == 1
assert lib.SSL_CTX_ctrl(ctx, 92, 0, b"SM2") == 1  # SSL_CTRL_SET_GROUPS_LIST
PY

certs=$(mktemp -d)
trap 'rm -rf "$certs"' EXIT
rustls-sm/tests/data/gen.sh "$certs" >/dev/null
cargo build --quiet -p rustls-sm --examples
examples=$(cargo metadata --format-version 1 --no-deps | "$py" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/examples
"$py" rustls-sm/interop/interop.py "$examples" "$certs"
"$py" rustls-sm/interop/tongsuo.py "$examples" "$certs"
