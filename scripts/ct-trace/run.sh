#!/usr/bin/env bash
# The constant-time trace check of the aarch64 backends (issue 36). Builds
# the TCG plugin (scripts/ct-trace/cttrace.c, with the host's gcc) and the
# `cttrace` driver for aarch64, then runs the driver under qemu-aarch64
# with the plugin, on `-cpu max` (backends sm4ce, sm3ce, neon and soft) and
# `-cpu cortex-a72` (neon and soft). The driver runs every operation twice
# with different secrets of the same lengths; the plugin compares the two
# runs' executed instruction addresses and memory-access addresses. Fails
# on any difference, and if the planted leaks of the self-test are not
# reported.
# Needs gcc, aarch64-linux-gnu-gcc and qemu-aarch64 with plugin support
# (Debian's qemu-user 7.2 has it); scripts/test.sh installs them.
# Usage: scripts/ct-trace/run.sh [substring of the operations to keep]
set -euo pipefail
cd "$(dirname "$0")/../.."

out=target/ct-trace
mkdir -p "$out"
gcc -shared -fPIC -O2 -Wall -Wextra -Werror -fvisibility=hidden \
    -o "$out/cttrace.so" scripts/ct-trace/cttrace.c
# Line tables (no change to the code) so that a divergence inside an
# inlined function can be named with its source line.
CARGO_PROFILE_RELEASE_DEBUG=line-tables-only \
    cargo build --quiet --release --target aarch64-unknown-linux-gnu -p cttrace
bin=target/aarch64-unknown-linux-gnu/release/cttrace

# Rust symbol names in the divergence reports, demangled when binutils is there.
demangle() { if command -v c++filt >/dev/null; then c++filt; else cat; fi; }

# The source lines (inlining chain included) of the instructions after
# which the two runs of a pair went apart: the plugin's report gives the
# run-time address of cttrace_mark_begin, nm its link-time one.
where() {
    local report=$1 log=$2 runtime link bias a
    command -v aarch64-linux-gnu-addr2line >/dev/null || return 0
    runtime=$(sed -n 's/^begin-mark //p' "$report")
    link=$(aarch64-linux-gnu-nm "$bin" | awk '/cttrace_mark_begin/ && !n++ { print "0x" $1 }')
    [ -n "$runtime" ] && [ -n "$link" ] || return 0
    bias=$((runtime - link))
    { grep -o 'after 0x[0-9a-f]*' "$log" || true; } | sort -u | while read -r _ a; do
        printf 'the runs went apart after %s:\n' "$a"
        aarch64-linux-gnu-addr2line -f -i -C -p -e "$bin" "$(printf '0x%x' $((a - bias)))" |
            sed 's/^/    /'
    done
}

status=0
for cpu in max cortex-a72; do
    echo "--- qemu-aarch64 -cpu $cpu with the cttrace plugin"
    report=$out/report-$cpu.txt
    log=$out/output-$cpu.txt
    rm -f "$report"
    start=$SECONDS
    if ! CTTRACE_REPORT=$report qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu "$cpu" \
        -plugin "$out/cttrace.so,out=$report" "$bin" "$@" >"$log" 2>&1; then
        status=1
    fi
    demangle <"$log"
    where "$report" "$log"
    echo "(-cpu $cpu: $(tail -n 1 "$report" 2>/dev/null || echo 'no report') traced, $((SECONDS - start)) s)"
done
exit $status
