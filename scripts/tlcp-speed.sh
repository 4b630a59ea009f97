#!/usr/bin/env bash
# TLCP beside Tongsuo in one sitting: bulk transfer (16 KiB records, client
# to server in memory, both sides' work) and full handshakes per second
# for each suite, ours (`tlcpspeed`, benches) and Tongsuo 8.3.2's
# (tlcp/interop/bench_tongsuo.py: its client and server joined by memory
# BIOs, driven through ctypes), alternating, ROUNDS rounds of SECONDS
# seconds per measurement; prints the best of each as a Markdown table with
# the CPU model. Needs the venv that tlcp/interop/run.sh makes.
# Usage: scripts/tlcp-speed.sh [ROUNDS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2}
seconds=${2:-2}
py=target/tlcp-venv/bin/python
"$py" -c "import tongsuopy" 2>/dev/null || tlcp/interop/run.sh >/dev/null
cargo build --quiet --release -p benches --features tls --bin tlcpspeed
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq "$rounds"); do
    target/release/tlcpspeed "$seconds" >"$out/ours-$r.json"
    PYTHONDONTWRITEBYTECODE=1 "$py" tlcp/interop/bench_tongsuo.py --seconds "$seconds" >"$out/tongsuo-$r.json"
done
python3 - "$out" "$rounds" <<'PY'
import json, sys, platform
out, rounds = sys.argv[1], int(sys.argv[2])
def best(who):
    runs = [json.load(open(f"{out}/{who}-{r}.json")) for r in range(1, rounds + 1)]
    return {s: {k: max(run[s][k] for run in runs) for k in runs[0][s]} for s in runs[0]}
ours, ts = best("ours"), best("tongsuo")
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
fam = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("cpu family")), "?")
model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model\t")), "?")
print(f"CPU: {cpu} (family {fam} model {model}); best of {rounds} alternating rounds")
print()
print("| suite | ours bulk MB/s | Tongsuo bulk MB/s | ratio | ours handshakes/s | Tongsuo handshakes/s | ratio |")
print("|---|---:|---:|---:|---:|---:|---:|")
for s in ["ECC_SM4_CBC_SM3", "ECC_SM4_GCM_SM3", "ECDHE_SM4_CBC_SM3", "ECDHE_SM4_GCM_SM3"]:
    o, t = ours[s], ts[s]
    print(f"| {s} | {o['bulk_mb_s']:.0f} | {t['bulk_mb_s']:.0f} | {o['bulk_mb_s']/t['bulk_mb_s']:.2f} "
          f"| {o['handshakes_per_s']:.0f} | {t['handshakes_per_s']:.0f} | {o['handshakes_per_s']/t['handshakes_per_s']:.2f} |")
PY
