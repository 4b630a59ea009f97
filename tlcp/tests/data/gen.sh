#!/bin/sh
# Generates the SM2 test PKI used by the tlcp tests (GB/T 38636-2020 / TLCP
# double certificates: one signing and one encryption certificate per party).
#
# Needs the OpenSSL 3 command line tool (`openssl`), which knows SM2/SM3.
# Every SM2 signature (certificates and CSRs) uses the signer ID
# "1234567812345678" (the GM/T 0009 default, also what Tongsuo uses when it
# verifies certificates: ssl/statem_ntls/statem_clnt.c CERTVRIFY_SM2_ID and
# crypto/sm2/sm2_pmeth.c SM2_DEFAULT_USERID).
#
# Output (next to this script):
#   ca.{key,crt}                       test root CA ("TLCP Test CA")
#   server_sign.{key,crt}              server signing cert, keyUsage=digitalSignature
#   server_enc.{key,crt}               server encryption cert,
#                                      keyUsage=keyAgreement,keyEncipherment,dataEncipherment
#   client_sign.{key,crt}              client signing cert
#   client_enc.{key,crt}               client encryption cert
#   other_ca.{key,crt}                 a second CA that nobody trusts
#   other_server_sign.{key,crt}        server pair issued by other_ca
#   other_server_enc.{key,crt}
#   *.crt.der / *.key.der              the same in DER (keys: PKCS#8 PrivateKeyInfo)
# Keys are unencrypted PKCS#8 ("BEGIN PRIVATE KEY").  Server certs carry
# SAN DNS:localhost, IP:127.0.0.1.
#
# The transcripts (transcript-*.json) were recorded with these exact files:
# re-running this script makes new keys and invalidates them, so it refuses
# to overwrite existing output unless FORCE=1 is set.
set -eu

OPENSSL=${OPENSSL:-openssl}
DIR=$(cd "$(dirname "$0")" && pwd)
ID=1234567812345678
DAYS=7300

if [ -e "$DIR/ca.crt" ] && [ "${FORCE:-0}" != 1 ]; then
    echo "gen.sh: $DIR/ca.crt exists; set FORCE=1 to regenerate everything" >&2
    exit 1
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

cat > "$TMP/ext.cnf" <<'EOF'
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash

[sign_server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = DNS:localhost, IP:127.0.0.1

[enc_server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, keyAgreement, keyEncipherment, dataEncipherment
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

genkey() { # name
    "$OPENSSL" genpkey -algorithm SM2 -out "$DIR/$1.key"
    "$OPENSSL" pkcs8 -topk8 -nocrypt -in "$DIR/$1.key" -out "$DIR/$1.key.tmp"
    mv "$DIR/$1.key.tmp" "$DIR/$1.key"
    "$OPENSSL" pkcs8 -topk8 -nocrypt -in "$DIR/$1.key" -outform DER -out "$DIR/$1.key.der"
    chmod 644 "$DIR/$1.key" "$DIR/$1.key.der"   # test fixtures, not secrets
}

mkca() { # name subject serial
    genkey "$1"
    "$OPENSSL" req -new -key "$DIR/$1.key" -subj "$2" -sm3 \
        -sigopt "distid:$ID" -out "$TMP/$1.csr"
    "$OPENSSL" x509 -req -in "$TMP/$1.csr" -signkey "$DIR/$1.key" -sm3 \
        -sigopt "distid:$ID" -vfyopt "distid:$ID" -set_serial "$3" \
        -days "$DAYS" -extfile "$TMP/ext.cnf" -extensions ca -out "$DIR/$1.crt"
    "$OPENSSL" x509 -in "$DIR/$1.crt" -outform DER -out "$DIR/$1.crt.der"
}

mkleaf() { # name subject serial ca extsection
    genkey "$1"
    "$OPENSSL" req -new -key "$DIR/$1.key" -subj "$2" -sm3 \
        -sigopt "distid:$ID" -out "$TMP/$1.csr"
    "$OPENSSL" x509 -req -in "$TMP/$1.csr" -CA "$DIR/$4.crt" -CAkey "$DIR/$4.key" \
        -sm3 -sigopt "distid:$ID" -vfyopt "distid:$ID" -set_serial "$3" \
        -days "$DAYS" -extfile "$TMP/ext.cnf" -extensions "$5" -out "$DIR/$1.crt"
    "$OPENSSL" x509 -in "$DIR/$1.crt" -outform DER -out "$DIR/$1.crt.der"
}

mkca   ca                "/C=CN/O=tlcp test/CN=TLCP Test CA" 0x1001
mkleaf server_sign       "/C=CN/O=tlcp test/CN=localhost (sign)"   0x2001 ca sign_server
mkleaf server_enc        "/C=CN/O=tlcp test/CN=localhost (enc)"    0x2002 ca enc_server
mkleaf client_sign       "/C=CN/O=tlcp test/CN=tlcp client (sign)" 0x3001 ca sign_client
mkleaf client_enc        "/C=CN/O=tlcp test/CN=tlcp client (enc)"  0x3002 ca enc_client

mkca   other_ca          "/C=CN/O=tlcp other/CN=TLCP Other CA"     0x1002
mkleaf other_server_sign "/C=CN/O=tlcp other/CN=localhost (sign)"  0x4001 other_ca sign_server
mkleaf other_server_enc  "/C=CN/O=tlcp other/CN=localhost (enc)"   0x4002 other_ca enc_server

# self-check (the same SM2 ID on the verifying side)
for c in server_sign server_enc client_sign client_enc; do
    "$OPENSSL" verify -CAfile "$DIR/ca.crt" -vfyopt "distid:$ID" "$DIR/$c.crt" >/dev/null
done
for c in other_server_sign other_server_enc; do
    "$OPENSSL" verify -CAfile "$DIR/other_ca.crt" -vfyopt "distid:$ID" "$DIR/$c.crt" >/dev/null
done
echo "gen.sh: wrote SM2 test PKI to $DIR"
