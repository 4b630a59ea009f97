#!/usr/bin/env bash
# tlcp against Tongsuo 8.3.2 (BabaSSL, its NTLS code) over 127.0.0.1: the
# examples tlcp-client and tlcp-server against Tongsuo's NTLS server and
# client, driven by tongsuo_ntls.py (see interop.py for the cases).
# Installs what it needs: python3-venv and the Debian `openssl` CLI (the
# certificates of the negative cases) when missing, and tongsuopy 1.0.1
# (Tongsuo/BabaSSL 8.3.2 statically linked), wheels only, into a venv of
# its own under target/, without the system's Python packages.
# Fails (never skips) when the peer cannot be installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
export PYTHONDONTWRITEBYTECODE=1

# shellcheck source=scripts/apt.sh
source scripts/apt.sh
fail() {
    echo "tlcp interop: FAIL: $*" >&2
    exit 1
}

command -v openssl >/dev/null || apt_install openssl || fail "no openssl CLI to make the test certificates"
openssl version | grep -q '^OpenSSL [3-9]' ||
    fail "the openssl CLI is not OpenSSL 3 or later (SM2 with signer IDs): $(openssl version)"

venv=$root/target/tlcp-venv
py=$venv/bin/python
want_tongsuopy=1.0.1
if ! "$py" -c "import tongsuopy, sys; sys.exit(tongsuopy.__version__ != '$want_tongsuopy')" 2>/dev/null; then
    rm -rf "$venv"
    if ! python3 -m venv "$venv" 2>/dev/null; then
        rm -rf "$venv"
        apt_install python3-venv || fail "python3 -m venv does not work and python3-venv did not install"
        python3 -m venv "$venv" || fail "python3 -m venv"
    fi
    "$py" -m pip install -q --disable-pip-version-check --only-binary :all: \
        "tongsuopy==$want_tongsuopy" || fail "pip could not install tongsuopy==$want_tongsuopy"
fi
# The peer must be Tongsuo 8.3.2 with its NTLS (TLCP) methods, whatever pip resolved.
"$py" - <<'PY' || fail "the peer is not a Tongsuo (BabaSSL) 8.3.2 with NTLS"
import sys
sys.path.insert(0, "tlcp/interop")
import tongsuo_ntls as tn
assert tn.tongsuo_version() == "BabaSSL 8.3.2", tn.tongsuo_version()
L = tn.lib()
assert L.NTLS_client_method() and L.NTLS_server_method()
PY

# Certificates tests/data has no file for, in gen.sh's style (SM2, SM3,
# signer ID 1234567812345678, PKCS#8 keys): a client pair from the CA
# nobody trusts (other_ca), and a second signing-only certificate for each
# side from the test CA (offered as the encryption certificate).
certs=$(mktemp -d)
trap 'rm -rf "$certs"' EXIT
data=tlcp/tests/data
id=1234567812345678
cat >"$certs/ext.cnf" <<'EOF'
[sign_server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = DNS:localhost, IP:127.0.0.1

[sign_client]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid

[enc_client]
basicConstraints = critical, CA:FALSE
keyUsage = critical, keyAgreement, keyEncipherment, dataEncipherment
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF
mkleaf() { # name subject serial ca extsection
    openssl genpkey -algorithm SM2 -out "$certs/$1.raw.key" 2>/dev/null
    openssl pkcs8 -topk8 -nocrypt -in "$certs/$1.raw.key" -out "$certs/$1.key"
    openssl req -new -key "$certs/$1.key" -subj "$2" -sm3 -sigopt "distid:$id" -out "$certs/$1.csr"
    openssl x509 -req -in "$certs/$1.csr" -CA "$data/$4.crt" -CAkey "$data/$4.key" \
        -sm3 -sigopt "distid:$id" -vfyopt "distid:$id" -set_serial "$3" -days 2 \
        -extfile "$certs/ext.cnf" -extensions "$5" -out "$certs/$1.crt" 2>/dev/null
}
mkleaf other_client_sign "/C=CN/O=tlcp other/CN=tlcp client (sign)" 0x5001 other_ca sign_client
mkleaf other_client_enc "/C=CN/O=tlcp other/CN=tlcp client (enc)" 0x5002 other_ca enc_client
mkleaf server_sign2 "/C=CN/O=tlcp test/CN=localhost (second sign)" 0x2003 ca sign_server
mkleaf client_sign2 "/C=CN/O=tlcp test/CN=tlcp client (second sign)" 0x3003 ca sign_client

cargo build --quiet -p tlcp --examples
examples=$(cargo metadata --format-version 1 --no-deps | "$py" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/examples
"$py" tlcp/interop/interop.py "$examples" "$certs"
