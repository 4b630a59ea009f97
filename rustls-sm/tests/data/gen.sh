#!/usr/bin/env bash
# Makes the test certificates of rustls-sm with the `openssl` CLI (3.0 or
# newer: SM2 keys and SM2-with-SM3 signatures). Usage: gen.sh [DIR]
# (default: the directory of this script). Each chain is a self-signed
# root CA and a server certificate for "localhost" (and 127.0.0.1) signed
# by it; wrong-sm2.key is an SM2 key that matches no certificate.
set -euo pipefail
out=${1:-$(dirname "$0")}
mkdir -p "$out"
cd "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
days=36500
id=1234567812345678

cat >"$tmp/ca.ext" <<'EXT'
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
EXT
cat >"$tmp/leaf.ext" <<'EXT'
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EXT

# ECDSA P-256 with SHA-256.
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ecdsa-ca.key 2>/dev/null
openssl req -new -x509 -key ecdsa-ca.key -sha256 -days $days -subj "/CN=rustls-sm test ECDSA CA" \
    -extensions v3 -config <(printf '[req]\ndistinguished_name=dn\n[dn]\n[v3]\n'; cat "$tmp/ca.ext") \
    -out ecdsa-ca.pem
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ecdsa.key 2>/dev/null
openssl req -new -key ecdsa.key -sha256 -subj "/CN=localhost" -out "$tmp/ecdsa.csr"
openssl x509 -req -in "$tmp/ecdsa.csr" -CA ecdsa-ca.pem -CAkey ecdsa-ca.key -set_serial 2 \
    -sha256 -days $days -extfile "$tmp/leaf.ext" -out "$tmp/ecdsa-leaf.pem" 2>/dev/null
cat "$tmp/ecdsa-leaf.pem" ecdsa-ca.pem >ecdsa-chain.pem

# SM2 with SM3, signer ID 1234567812345678 (OpenSSL's default).
openssl genpkey -algorithm SM2 -out sm2-ca.key
openssl req -new -x509 -key sm2-ca.key -sm3 -sigopt distid:$id -days $days \
    -subj "/CN=rustls-sm test SM2 CA" \
    -extensions v3 -config <(printf '[req]\ndistinguished_name=dn\n[dn]\n[v3]\n'; cat "$tmp/ca.ext") \
    -out sm2-ca.pem
openssl genpkey -algorithm SM2 -out sm2.key
openssl req -new -key sm2.key -sm3 -sigopt distid:$id -subj "/CN=localhost" -out "$tmp/sm2.csr"
openssl x509 -req -in "$tmp/sm2.csr" -CA sm2-ca.pem -CAkey sm2-ca.key -set_serial 3 \
    -sm3 -sigopt distid:$id -vfyopt distid:$id -days $days -extfile "$tmp/leaf.ext" \
    -out "$tmp/sm2-leaf.pem" 2>/dev/null
cat "$tmp/sm2-leaf.pem" sm2-ca.pem >sm2-chain.pem
openssl genpkey -algorithm SM2 -out wrong-sm2.key

# A forgery: the SM2 leaf's key and names, signed by wrong-sm2.key posing
# as the SM2 CA (same subject name); verifiers must reject its signature.
# No authorityKeyIdentifier (`openssl x509 -req` would add one naming the
# fake CA's key, and a verifier that matches it would stop at "issuer not
# found" without checking the signature).
openssl req -new -x509 -key wrong-sm2.key -sm3 -sigopt distid:$id -days $days \
    -subj "/CN=rustls-sm test SM2 CA" \
    -extensions v3 -config <(printf '[req]\ndistinguished_name=dn\n[dn]\n[v3]\n'; cat "$tmp/ca.ext") \
    -out "$tmp/fake-ca.pem"
{ grep -v authorityKeyIdentifier "$tmp/leaf.ext"; echo "authorityKeyIdentifier = none"; } >"$tmp/forged.ext"
openssl x509 -req -in "$tmp/sm2.csr" -CA "$tmp/fake-ca.pem" -CAkey wrong-sm2.key -set_serial 4 \
    -sm3 -sigopt distid:$id -vfyopt distid:$id -days $days -extfile "$tmp/forged.ext" \
    -out "$tmp/forged-leaf.pem" 2>/dev/null
cat "$tmp/forged-leaf.pem" sm2-ca.pem >sm2-forged-chain.pem

# What was made, checked: each leaf verifies against its root.
openssl verify -CAfile ecdsa-ca.pem "$tmp/ecdsa-leaf.pem" >/dev/null
openssl verify -CAfile sm2-ca.pem -vfyopt distid:$id "$tmp/sm2-leaf.pem" >/dev/null
if openssl verify -CAfile sm2-ca.pem -vfyopt distid:$id "$tmp/forged-leaf.pem" >/dev/null 2>&1; then
    echo "the forged certificate verifies: wrong" >&2
    exit 1
fi
echo "certificates in $PWD: ecdsa-chain.pem ecdsa.key ecdsa-ca.pem sm2-chain.pem sm2.key sm2-ca.pem wrong-sm2.key sm2-forged-chain.pem"
