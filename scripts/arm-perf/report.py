#!/usr/bin/env python3
"""Tables of scripts/arm-perf.sh from its runs: instructions per byte (two
runs of a row, with LO and HI calls, subtracted) and llvm-mca estimates of
the blocks that the extra calls executed.

    report.py RUNS_DIR LO HI LLVM_MC LLVM_MCA > report.md

RUNS_DIR/<cpu>/<row>.<size>.<calls> (the cpu's `,` and `=` as `-`) holds the plugin's output (`insns N`,
then `hot ...` lines where the run recorded its blocks) and
RUNS_DIR/<cpu>/<row>.<size>.<calls>.out the driver's (`bytes B`); a row
id's `/` is `~` in the file name.
"""

import collections
import hashlib
import os
import re
import subprocess
import sys
import tempfile

# Which qemu CPU's runs each pipeline model reads: the A53, A72 and N1
# cores have no SM3/SM4 instructions, so they run what `-cpu cortex-a72`
# runs (NEON); Neoverse N2 has them, as `-cpu max,sve=off` does.
MODELS = [
    ("cortex-a53", "cortex-a72"),
    ("cortex-a72", "cortex-a72"),
    ("neoverse-n1", "cortex-a72"),
    ("neoverse-n2", "max-sve-off"),
]
CPUS = ["max-sve-off", "cortex-a72"]
LABEL = {"max-sve-off": "max,sve=off", "cortex-a72": "cortex-a72"}
# Preferred backend of ours per CPU in the summary (the one detection picks).
PREFERENCE = ["sm4ce", "sm3ce", "neon", "neon+neon", "ours", "soft"]
MCA_ITERATIONS = 200
COVERAGE = 0.99
MAX_BLOCKS = 40


def parse_run(path):
    insns, blocks = None, []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if parts[0] == "insns":
                insns = int(parts[1])
            elif parts[0] == "hot":
                words = tuple(parts[4:])
                blocks.append(((int(parts[1], 16), words), int(parts[3])))
    return insns, blocks


def parse_bytes(path):
    with open(path) as f:
        for line in f:
            if line.startswith("bytes "):
                return int(line.split()[1])
    return None


def load(runs_dir, lo, hi):
    """{cpu: {row: {size: (bytes, insns_lo, insns_hi, blocks_lo, blocks_hi)}}}"""
    data = {}
    for cpu in sorted(os.listdir(runs_dir)):
        d = os.path.join(runs_dir, cpu)
        rows = collections.defaultdict(dict)
        for name in os.listdir(d):
            m = re.fullmatch(r"(.+)\.(\d+)\.(\d+)", name)
            if not m or int(m.group(3)) != hi:
                continue
            row, size = m.group(1).replace("~", "/"), int(m.group(2))
            lo_path = os.path.join(d, f"{m.group(1)}.{size}.{lo}")
            hi_path = os.path.join(d, name)
            if not os.path.exists(lo_path):
                continue
            nbytes = parse_bytes(hi_path + ".out")
            if nbytes is None:
                continue
            a, ba = parse_run(lo_path)
            b, bb = parse_run(hi_path)
            if a is None or b is None:
                continue
            rows[row][size] = (nbytes, a, b, ba, bb)
        data[cpu] = rows
    return data


def order_key(row):
    alg, mode, backend = row.split("/", 2)
    lib = backend == "libgcrypt"
    peer = backend.startswith("peer:")
    rank = PREFERENCE.index(backend) if backend in PREFERENCE else len(PREFERENCE)
    return (alg, mode, peer, lib, rank, backend)


def ipb(entry, lo, hi):
    nbytes, a, b = entry[0], entry[1], entry[2]
    return (b - a) / ((hi - lo) * nbytes)


def fmt(v, digits=2):
    if v is None:
        return "-"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.{digits}f}"


def count_table(data, sizes, lo, hi):
    rows = sorted({r for cpu in data for r in data[cpu]}, key=order_key)
    head = ["row (alg/mode/backend)"]
    for cpu in CPUS:
        head += [f"`{LABEL[cpu]}` {s}" for s in sizes]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" + "---:|" * (len(head) - 1)]
    for r in rows:
        cells = [f"`{r}`"]
        for cpu in CPUS:
            for s in sizes:
                e = data.get(cpu, {}).get(r, {}).get(s)
                cells.append(fmt(ipb(e, lo, hi)) if e else "-")
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def summary_table(data, size, lo, hi):
    """One line per alg/mode: our preferred backend and libgcrypt, both CPUs."""
    ops = collections.OrderedDict()
    for r in sorted({r for cpu in data for r in data[cpu]}, key=order_key):
        alg, mode, backend = r.split("/", 2)
        if backend.startswith("peer:"):
            continue
        ops.setdefault((alg, mode), []).append(backend)
    head = ["op"]
    for cpu in CPUS:
        head += [f"`{LABEL[cpu]}`: ours", "backend", "libgcrypt"]
    out = ["| " + " | ".join(head) + " |", "|---|" + "---:|---|---:|" * len(CPUS)]
    for (alg, mode), backends in ops.items():
        cells = [f"{alg} {mode}"]
        for cpu in CPUS:
            rows = data.get(cpu, {})
            ours = [
                b
                for b in backends
                if b != "libgcrypt" and rows.get(f"{alg}/{mode}/{b}", {}).get(size)
            ]
            ours.sort(key=lambda b: PREFERENCE.index(b) if b in PREFERENCE else 99)
            if ours:
                e = rows[f"{alg}/{mode}/{ours[0]}"][size]
                cells += [fmt(ipb(e, lo, hi)), ours[0]]
            else:
                cells += ["-", "-"]
            # A fused type's row of ours ("ctr:Sm4Ctr") beside libgcrypt's
            # "ctr".
            base = mode.split(":")[0]
            e = rows.get(f"{alg}/{base}/libgcrypt", {}).get(size)
            cells.append(fmt(ipb(e, lo, hi)) if e else "")
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


class Mca:
    def __init__(self, mc, mca):
        self.mc, self.mca = mc, mca
        self.text_cache, self.cycle_cache = {}, {}
        self.tmp = tempfile.mkdtemp(prefix="arm-perf-mca.")

    def text(self, words):
        if words in self.text_cache:
            return self.text_cache[words]
        hexes = " ".join(
            " ".join(f"0x{w[i:i + 2]}" for i in (6, 4, 2, 0)) for w in words
        )
        res = subprocess.run(
            [self.mc, "--disassemble", "-triple=aarch64",
             "-mattr=+v8.5a,+sm4,+sha3,+aes,+crc,+lse,+rcpc,+dotprod,+fp16"],
            input=hexes, capture_output=True, text=True,
        )
        lines = [
            ln.strip()
            for ln in res.stdout.splitlines()
            if ln.strip() and not ln.strip().startswith(".")
        ]
        text = "\n".join(lines) + "\n" if len(lines) == len(words) else None
        self.text_cache[words] = text
        return text

    def cycles(self, words, cpu):
        """Cycles per execution of the block in llvm-mca's steady state."""
        key = (words, cpu)
        if key in self.cycle_cache:
            return self.cycle_cache[key]
        text = self.text(words)
        value = None
        if text is not None:
            h = hashlib.sha1(text.encode()).hexdigest()[:16]
            path = os.path.join(self.tmp, h + ".s")
            with open(path, "w") as f:
                f.write(text)
            res = subprocess.run(
                [self.mca, "-mtriple=aarch64", f"-mcpu={cpu}",
                 "-mattr=+sm4,+sha3,+aes,+crc", f"-iterations={MCA_ITERATIONS}",
                 "-summary-view", "-resource-pressure=false",
                 "-instruction-info=false", path],
                capture_output=True, text=True,
            )
            m = re.search(r"Total Cycles:\s+(\d+)", res.stdout)
            if m:
                value = int(m.group(1)) / MCA_ITERATIONS
        self.cycle_cache[key] = value
        return value


def extra_blocks(entry):
    """The code that the extra calls executed: [(words, extra execs)],
    heaviest first, and the extra instructions in all. Blocks that follow
    each other in memory and ran equally often are joined into one (qemu
    ends a block at its size limits too, not only at branches), so that a
    loop body is modeled whole."""
    _, a, b, ba, bb = entry
    execs = collections.Counter()
    for key, n in bb:
        execs[key] += n
    for key, n in ba:
        execs[key] -= n
    live = {v: (w, n) for (v, w), n in execs.items() if n > 0}
    # Where another block of the same count ends at `v`, `v` continues it.
    # (Blocks may overlap: a branch into the middle of one starts another.)
    def successor(v):
        w, n = live[v]
        nxt = v + 4 * len(w)
        return nxt if nxt in live and live[nxt][1] == n else None

    continued = {successor(v) for v in live} - {None}
    joined = []
    for v in sorted(live):
        if v in continued:
            continue
        words, n = list(live[v][0]), live[v][1]
        seen, nxt = {v}, successor(v)
        while nxt is not None and nxt not in seen:
            seen.add(nxt)
            words += live[nxt][0]
            nxt = successor(nxt)
        joined.append((v, words, n))
    blocks = [(tuple(w), n) for _, w, n in joined]
    blocks.sort(key=lambda x: -len(x[0]) * x[1])
    return blocks, b - a


def estimate(mca, entry, cpu, lo, hi):
    """Model cycles per byte of the extra calls, the hottest block, and the
    share of the extra instructions in the modeled blocks."""
    blocks, total = extra_blocks(entry)
    if not blocks or total <= 0:
        return None
    nbytes = (hi - lo) * entry[0]
    covered_insns, cycles, done = 0, 0.0, 0
    for words, n in blocks:
        if covered_insns >= COVERAGE * total or done >= MAX_BLOCKS:
            break
        c = mca.cycles(words, cpu)
        if c is None:
            continue
        covered_insns += len(words) * n
        cycles += c * n
        done += 1
    if covered_insns == 0:
        return None
    # The rest at the modeled part's cycles per instruction.
    cycles *= total / covered_insns
    return cycles / nbytes, covered_insns / total


def mca_tables(data, mca, size, lo, hi, want):
    rows = sorted(
        {r for cpu in data for r in data[cpu] if want(r)}, key=order_key
    )
    head = ["row"] + [f"{m} (`{LABEL[c]}` run)" for m, c in MODELS] + ["modeled"]
    est = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * len(MODELS) + "---:|"]
    hot = {}
    for cpu in CPUS:
        models = [m for m, c in MODELS if c == cpu]
        h = ["row", "hot code: insns", "bytes per pass"] + [f"{m}: cycles per pass (its cycles per 64 B)" for m in models]
        hot[cpu] = ["| " + " | ".join(h) + " |", "|---|" + "---:|" * (len(h) - 1)]
    for r in rows:
        cells, shares = [f"`{r}`"], []
        for model, cpu in MODELS:
            e = data.get(cpu, {}).get(r, {}).get(size)
            # The cores without SM3/SM4 instructions do not run those kernels.
            if e is None or (model != "neoverse-n2" and ("sm4ce" in r or "sm3ce" in r)):
                cells.append("-")
                continue
            res = estimate(mca, e, model, lo, hi)
            if res is None:
                cells.append("-")
                continue
            cells.append(fmt(res[0]))
            shares.append(res[1])
        cells.append(f"{min(shares) * 100:.0f}%" if shares else "-")
        est.append("| " + " | ".join(cells) + " |")
        for cpu in CPUS:
            e = data.get(cpu, {}).get(r, {}).get(size)
            blocks = extra_blocks(e)[0] if e else []
            if not blocks:
                continue
            words, n = blocks[0]
            per_pass = (hi - lo) * e[0] / n
            cells = [f"`{r}`", str(len(words)), fmt(per_pass, 1)]
            for m in [m for m, c in MODELS if c == cpu]:
                v = mca.cycles(words, m)
                cells.append(f"{fmt(v, 1)} ({fmt(v * 64 / per_pass, 1)})" if v is not None else "-")
            hot[cpu].append("| " + " | ".join(cells) + " |")
    return "\n".join(est), {c: "\n".join(t) for c, t in hot.items()}


def main():
    runs_dir, lo, hi, mc, mca_bin = sys.argv[1:6]
    lo, hi = int(lo), int(hi)
    data = load(runs_dir, lo, hi)
    sizes = sorted({s for cpu in data for r in data[cpu] for s in data[cpu][r]})
    big = max(sizes)
    print(f"## Summary: instructions per byte at {big} bytes\n")
    print(summary_table(data, big, lo, hi))
    print(f"\n## Instructions per byte, every row\n")
    print(count_table(data, sizes, lo, hi))
    if mca_bin != "-":
        mca = Mca(mc, mca_bin)
        kernels = lambda r: not r.split("/")[2].startswith(("peer:", "soft"))
        est, hot = mca_tables(data, mca, big, lo, hi, kernels)
        print(f"\n## llvm-mca: estimated cycles per byte at {big} bytes\n")
        print(est)
        for cpu in CPUS:
            print(f"\n## llvm-mca: the hottest code of each row, `{LABEL[cpu]}` run, {big} bytes\n")
            print(hot[cpu])


if __name__ == "__main__":
    main()
