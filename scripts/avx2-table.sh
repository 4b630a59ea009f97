#!/usr/bin/env bash
# The "AVX2-class CPU" table of docs/performance.md: our backends pinned to
# their AVX2 code (`avx`) beside libgcrypt's AVX2 code (its own switch,
# --disable-hwf), OpenSSL (OPENSSL_ia32cap) and libsodium, in alternating
# runs on one machine; prints a markdown table (best run of each cell, MB/s, and
# ours/peer) for every row at 16-8192 bytes, headed with the CPU model.
#
#   MIRROR=<folder the fetch tool printed for github:gpg/libgcrypt> \
#     scripts/avx2-table.sh [ROUNDS (default 2)] > table.md
#
# Needs ../shared/peer-bench (or PEER_BENCH=<its folder>). Run on a quiet
# machine; on a CPU without AVX-512 the pinning changes nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-2}
PEER_BENCH=${PEER_BENCH:-../shared/peer-bench}
SIZES=16,64,256,512,1024,4096,8192
OUT=$(mktemp -d)
# OpenSSL's own switch; its second word is CPUID leaf 7, EBX in the low half
# and ECX in the high half. Masked off: every AVX-512 bit (EBX 16, 17, 21,
# 26-28, 30, 31; ECX 1, 6, 11, 12, 14), GFNI, VAES and VPCLMULQDQ (ECX 8-10).
# AVX-512F alone is not enough: OpenSSL's ChaCha20 takes its AVX-512VL path
# (`vprold` on ymm) whenever VL is set.
export OPENSSL_MASK=":~0x5F42DC230000"
RUSTFLAGS='--cfg sm4_backend="avx" --cfg sm3_backend="avx" --cfg chacha_backend="avx" --cfg nhpoly1305_backend="avx"' \
  cargo build -q --release -p benches --bin speed --target-dir target/avx2-table
for r in $(seq "$ROUNDS"); do
  target/avx2-table/release/speed --backend avx --sizes "$SIZES" >"$OUT/ours.$r" 2>/dev/null
  OPENSSL_ia32cap="$OPENSSL_MASK" \
    "$PEER_BENCH/run.sh" --disable-hwf intel-avx512,intel-gfni,intel-vaes-vpclmul >"$OUT/peer.$r" 2>&1
done
python3 scripts/avx2_table.py "$OUT" "$(git rev-parse --short HEAD)"
