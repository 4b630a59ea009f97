#!/usr/bin/env bash
# The TLS bulk-transfer table of rustls-sm's README: `speed --alg tls13` at
# 16 KiB, ROUNDS runs (default 5); prints, for each TLS row, the best run
# (MB/s) and, from each run, its share of the same run's AEAD alone
# (`sm4-gcm-seal+open` for our suites, `aes128-gcm-seal+open` for
# *ring*'s AES-128-GCM): best, median and worst. Headed with the CPU model.
#
#   scripts/tls-table.sh [ROUNDS] > table.md
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
OUT=$(mktemp -d)
cargo build -q --release -p benches --features tls --bin speed --target-dir target/tls
for r in $(seq "$ROUNDS"); do
  target/tls/release/speed --alg tls13 --sizes 16384 >"$OUT/run.$r" 2>/dev/null
done
python3 - "$OUT" "$ROUNDS" "$(git rev-parse --short HEAD)" <<'PY'
import re, statistics, sys
out, rounds, commit = sys.argv[1], int(sys.argv[2]), sys.argv[3]
runs = []
for r in range(1, rounds + 1):
    rows = {}
    text = open(f"{out}/run.{r}").read().split("cycles/byte")[0]
    for line in text.splitlines():
        f = line.split()
        if len(f) == 4 and f[0] == "tls13":
            rows[f[1]] = float(f[3])
    runs.append(rows)
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
fam = {k.strip(): v.strip() for k, v in (l.split(":", 1) for l in open("/proc/cpuinfo") if ":" in l)}
print(f"{cpu} (family {fam.get('cpu family')}, model {fam.get('model')}), commit {commit}, "
      f"{rounds} runs of `speed --alg tls13 --sizes 16384`, MB/s\n")
print("| row | best MB/s | share of the AEAD alone, same run: best / median / worst |")
print("|---|---:|---|")
for name in runs[0]:
    best = max(r[name] for r in runs)
    ref = "aes128-gcm-seal+open" if name.startswith("aes-128") else "sm4-gcm-seal+open"
    share = ""
    if "seal+open" not in name and not name.startswith(("chacha", "sm4-ccm")):
        s = sorted(r[name] / r[ref] for r in runs)
        share = f"{s[-1]:.0%} / {statistics.median(s):.0%} / {s[0]:.0%}"
    print(f"| `{name}` | {best:.0f} | {share} |")
PY
