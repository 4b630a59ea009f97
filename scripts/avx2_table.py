"""Merge the runs of scripts/avx2-table.sh into one markdown table."""
import glob
import os
import re
import sys

out, commit = sys.argv[1], sys.argv[2]
SIZES = [16, 64, 256, 512, 1024, 4096, 8192]  # the peer bench has no 512 (Adiantum's sector size)

# Our `speed` row (algorithm, mode) -> the peer-bench row it is measured against.
PAIRS = [
    ("SM4-ECB", ("sm4", "ecb-enc"), "sm4-ecb-enc"),
    ("SM4-CTR (`Sm4Ctr`)", ("sm4", "ctr:Sm4Ctr"), "sm4-ctr"),
    ("SM4-CBC encryption (`Sm4CbcEnc`)", ("sm4", "cbc-enc:Sm4CbcEnc"), "sm4-cbc-enc"),
    ("SM4-CBC decryption (`Sm4CbcDec`)", ("sm4", "cbc-dec:Sm4CbcDec"), "sm4-cbc-dec"),
    ("SM4-CFB encryption (`Sm4CfbEnc`)", ("sm4", "cfb-enc:Sm4CfbEnc"), "sm4-cfb-enc"),
    ("SM4-CFB decryption (`Sm4CfbDec`)", ("sm4", "cfb-dec:Sm4CfbDec"), "sm4-cfb-dec"),
    ("SM4-XTS encryption (`Sm4Xts`)", ("sm4", "xts-enc:Sm4Xts"), "sm4-xts-enc"),
    ("SM4-XTS decryption (`Sm4Xts`)", ("sm4", "xts-dec:Sm4Xts"), "sm4-xts-dec"),
    ("SM4-GCM encryption (`Sm4Gcm`)", ("sm4", "gcm-enc:Sm4Gcm"), "sm4-gcm-enc"),
    ("SM4-CCM encryption (`Sm4Ccm`)", ("sm4", "ccm-enc:Sm4Ccm"), "sm4-ccm-enc"),
    ("CMAC-SM4", ("cmac", "sm4"), "sm4-cmac"),
    ("SM3", ("sm3", "digest"), "sm3"),
    ("ChaCha20", ("chacha20", "stream"), "chacha20-ietf"),
    ("XChaCha20 (against ChaCha20)", ("xchacha20", "stream"), "chacha20-ietf"),
    ("XChaCha20", ("xchacha20", "stream"), "xchacha20"),
    ("Adiantum-XChaCha12-AES encryption", ("adiantum-xchacha12-aes", "enc"), None),
]

ours = {}
for f in sorted(glob.glob(f"{out}/ours.*")):
    text = open(f).read().split("cycles/byte")[0]
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 3 + len(SIZES):
            continue
        alg, mode, backend = parts[:3]
        if not (backend == "avx" or backend.startswith("avx+")):
            continue
        try:
            vals = [float(v) for v in parts[3:]]
        except ValueError:
            continue
        best = ours.setdefault((alg, mode), vals)
        ours[(alg, mode)] = [max(a, b) for a, b in zip(best, vals)]

peers = {}
for f in sorted(glob.glob(f"{out}/peer.*")):
    for line in open(f):
        m = re.match(r"R\t(\S+)\t(\S+)\t(\d+)\t([\d.]+)", line)
        if m:
            key = (m[1], m[2], int(m[3]))
            peers[key] = max(peers.get(key, 0.0), float(m[4]))

cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
fam = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("cpu family")), "?")
model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model\t")), "?")
runs = len(glob.glob(f"{out}/ours.*"))
print(f"CPU: {cpu} (family {fam}, model {model}); commit `{commit}`; best of {runs} alternating runs per side;")
print("ours pinned to `avx`, libgcrypt with `--disable-hwf intel-avx512,intel-gfni,intel-vaes-vpclmul`,")
mask = os.environ.get("OPENSSL_MASK", "?")
print(f"OpenSSL with `OPENSSL_ia32cap=\"{mask}\"` (no AVX-512, GFNI, VAES, VPCLMULQDQ). MB/s, ours/peer in brackets.\n")
print("| row | peer | " + " | ".join(f"{s} B" for s in SIZES) + " |")
print("|---|---|" + "---:|" * len(SIZES))
for name, key, prow in PAIRS:
    o = ours.get(key)
    if o is None:
        continue
    impls = sorted({i for (r, i, _) in peers if r == prow}) if prow else []
    if name.startswith("XChaCha20 (against"):
        impls = [i for i in impls if i == "libgcrypt"]
    elif name == "XChaCha20":
        impls = [i for i in impls if i != "libgcrypt"]
    print(f"| {name}, ours | | " + " | ".join(f"{v:.0f}" for v in o) + " |")
    for impl in impls:
        cells = []
        for s, v in zip(SIZES, o):
            p = peers.get((prow, impl, s))
            cells.append(f"{p:.0f} ({v / p:.2f})" if p else "")
        print(f"| | {impl} (ours/peer) | " + " | ".join(cells) + " |")
