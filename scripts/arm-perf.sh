#!/usr/bin/env bash
# aarch64 speed without ARM hardware: dynamic instruction counts under
# qemu-user and llvm-mca pipeline-model estimates, for every aarch64 row of
# the `speed` table and for libgcrypt's hand-written aarch64 code.
# docs/performance-aarch64.md explains the method, the tables and the limits.
#
#   scripts/arm-perf.sh [--no-libgcrypt] [--no-mca] [--peers]
#                       [--rows REGEX] [--sizes 64,512,4096]
#
# It installs what it needs when missing (the aarch64 rustup target; with
# apt-get: the aarch64 cross gcc and libc, qemu-user, llvm-19 for llvm-mc
# and llvm-mca, make and bzip2), then
#   1. builds our qemu plugin (scripts/arm-perf/insncount.c) with the host
#      gcc, and `armcount` (benches/src/bin/armcount.rs) for aarch64;
#   2. downloads libgpg-error and libgcrypt's sources from Debian (trixie's
#      source packages, verified by apt against the signed archive index,
#      through an apt configuration private to target/arm-perf, so the
#      machine's apt sources are left as they are), builds both as static
#      aarch64 libraries in target/arm-perf and links
#      scripts/arm-perf/gcrycount.c against them;
#   3. runs every row under `qemu-aarch64 -cpu max,sve=off` and
#      `-cpu cortex-a72` for each size, twice (16 and 144 calls), with the
#      plugin counting instructions; the 4096-byte runs also record the
#      executed blocks;
#   4. prints the tables (scripts/arm-perf/report.py) and writes them to
#      target/arm-perf/report.md.
# Everything it builds or downloads stays under target/arm-perf; a second
# run reuses the libgcrypt build. Options:
#   --no-libgcrypt  our rows only;   --no-mca  counts only;
#   --peers         also the RustCrypto peers of the `speed` table;
#   --rows REGEX    only the row ids matching REGEX (grep -E);
#   --sizes LIST    message sizes (default 64,512,4096; the largest one is
#                   the one modeled).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

gcrypt=1 mca=1 peers=0 rows_re=. sizes=64,512,4096
while [ $# -gt 0 ]; do
    case $1 in
    --no-libgcrypt) gcrypt=0 ;;
    --no-mca) mca=0 ;;
    --peers) peers=1 ;;
    --rows) rows_re=$2; shift ;;
    --sizes) sizes=$2; shift ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
    esac
    shift
done

LO=16 HI=144
CPUS=("max,sve=off" "cortex-a72")
OUT=$root/target/arm-perf
TARGET=aarch64-unknown-linux-gnu
LLVM_MC=llvm-mc-19 LLVM_MCA=llvm-mca-19
mkdir -p "$OUT"

step() { printf '\n==> [%3d s] %s\n' "$SECONDS" "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

install_tools() {
    rustup target list --installed | grep -q "^$TARGET\$" || rustup target add $TARGET
    local need=()
    command -v aarch64-linux-gnu-gcc >/dev/null || need+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
    command -v qemu-aarch64 >/dev/null || need+=(qemu-user)
    command -v gcc >/dev/null || need+=(gcc)
    command -v make >/dev/null || need+=(make)
    command -v bzip2 >/dev/null || need+=(bzip2)
    command -v python3 >/dev/null || need+=(python3)
    if [ $mca = 1 ] && ! command -v $LLVM_MCA >/dev/null; then need+=(llvm-19); fi
    if [ ${#need[@]} -gt 0 ]; then
        step "installing ${need[*]}"
        as_root apt-get update -qq
        DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${need[@]}" >/dev/null
    fi
}

build_plugin() {
    step "building the instruction-counting qemu plugin"
    gcc -O2 -shared -fPIC -fvisibility=hidden -Wall -Wextra \
        -o "$OUT/insncount.so" scripts/arm-perf/insncount.c
}

build_ours() {
    step "building armcount for $TARGET"
    cargo build --quiet --release --target $TARGET -p benches --bin armcount
    cp "target/$TARGET/release/armcount" "$OUT/armcount"
}

# apt with lists and cache under $OUT/apt: trixie's source index only.
private_apt() {
    local dir=$OUT/apt
    mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
        >"$dir/sources.list"
    apt_opts=(-o "Dir::Etc::SourceList=$dir/sources.list" -o "Dir::Etc::SourceParts=$dir/none"
        -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache" -o "APT::Sandbox::User=root")
    [ -n "$(ls "$dir/lists" 2>/dev/null | grep Sources || true)" ] || apt-get "${apt_opts[@]}" update -qq
}

# Unpack the upstream tarball of Debian source package $1 into $OUT/src;
# prints the directory.
debian_source() {
    local pkg=$1 src=$OUT/src
    mkdir -p "$src"
    (cd "$src" && apt-get "${apt_opts[@]}" source --download-only -qq "$pkg" >/dev/null 2>&1)
    local tarball
    tarball=$(ls -t "$src/${pkg}"_*.orig.tar.* | awk '!/\.asc$/ && !done { print; done = 1 }')
    tar -C "$src" -xf "$tarball"
    tar -tf "$tarball" | awk -F/ -v src="$src" 'NR == 1 { print src "/" $1 }'
}

build_libgcrypt() {
    local prefix=$OUT/prefix
    if [ ! -f "$OUT/libgcrypt.stamp" ]; then
        step "downloading libgpg-error and libgcrypt (Debian trixie source packages)"
        private_apt
        local gpgerr gcry
        gpgerr=$(debian_source libgpg-error)
        gcry=$(debian_source libgcrypt20)
        step "building $(basename "$gpgerr") for aarch64 (static)"
        (cd "$gpgerr" && ./configure -q --host=aarch64-linux-gnu --prefix="$prefix" \
            --disable-shared --enable-static --disable-nls --disable-doc --disable-tests \
            --disable-languages >/dev/null && make -s -j2 >/dev/null 2>&1 && make -s install >/dev/null)
        step "building $(basename "$gcry") for aarch64 (static; a few minutes)"
        # Only the library: its compat, mpi, cipher, random and src parts.
        (cd "$gcry" && ./configure -q --host=aarch64-linux-gnu --prefix="$prefix" \
            --disable-shared --enable-static --disable-doc --disable-jent-support \
            --with-libgpg-error-prefix="$prefix" --enable-ciphers=sm4,chacha20,aes >/dev/null &&
            for d in compat mpi cipher random src; do make -s -j2 -C $d >/dev/null 2>&1; done)
        echo "$gcry" >"$OUT/libgcrypt.stamp"
    fi
    local gcry
    gcry=$(cat "$OUT/libgcrypt.stamp")
    step "linking gcrycount against $(basename "$gcry")"
    aarch64-linux-gnu-gcc -O2 -Wall -static -I "$gcry/src" -I "$prefix/include" \
        scripts/arm-perf/gcrycount.c "$gcry/src/.libs/libgcrypt.a" "$prefix/lib/libgpg-error.a" \
        -o "$OUT/gcrycount" 2> >(grep -v 'statically linked applications\|in function' >&2)
    basename "$gcry" >"$OUT/libgcrypt.version"
}

# One run: count CPU DRIVER ROW SIZE CALLS [hot]
count() {
    local cpu=$1 driver=$2 row=$3 size=$4 calls=$5 hot=${6:-}
    local file=$OUT/runs/${cpu//[,=]/-}/${row//\//\~}.$size.$calls
    local arg="out=$file"
    [ -n "$hot" ] && arg="$arg,hot=100000"
    qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu "$cpu" -plugin "$OUT/insncount.so,$arg" \
        "$OUT/$driver" "$row" "$size" "$calls" >"$file.out" 2>/dev/null || rm -f "$file" "$file.out"
}
export -f count
export OUT

run_all() {
    local jobs=$OUT/jobs.txt big
    big=$(tr ',' '\n' <<<"$sizes" | sort -n | tail -n 1)
    rm -rf "$OUT/runs"
    : >"$jobs"
    for cpu in "${CPUS[@]}"; do
        mkdir -p "$OUT/runs/${cpu//[,=]/-}"
        local drivers=(armcount)
        [ $gcrypt = 1 ] && drivers+=(gcrycount)
        for driver in "${drivers[@]}"; do
            qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu "$cpu" "$OUT/$driver" --list |
                { if [ $peers = 1 ]; then cat; else grep -v '/peer:'; fi; } |
                { grep -E -- "$rows_re" || true; } | while read -r row; do
                for size in ${sizes//,/ }; do
                    local hot=
                    [ "$size" = "$big" ] && [ $mca = 1 ] && hot=hot
                    echo "$cpu $driver $row $size $LO${hot:+ $hot}"
                    echo "$cpu $driver $row $size $HI${hot:+ $hot}"
                done
            done >>"$jobs"
        done
    done
    step "counting: $(wc -l <"$jobs") qemu runs (two at a time)"
    xargs -P 2 -L 1 bash -c 'count "$@"' _ <"$jobs"
}

install_tools
build_plugin
build_ours
[ $gcrypt = 1 ] && build_libgcrypt
start=$(date +%s)
run_all
step "counted in $(($(date +%s) - start)) s; modeling and writing the tables"
{
    echo "# aarch64 instruction counts and llvm-mca estimates"
    echo
    echo "Commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); $(qemu-aarch64 --version | head -n 1);"
    [ $gcrypt = 1 ] && echo "$(cat "$OUT/libgcrypt.version") (Debian trixie source);"
    [ $mca = 1 ] && echo "$($LLVM_MCA --version | grep -o 'LLVM version [0-9.]*')."
    echo
    python3 scripts/arm-perf/report.py "$OUT/runs" $LO $HI $LLVM_MC "$([ $mca = 1 ] && echo $LLVM_MCA || echo -)"
} >"$OUT/report.md"
cat "$OUT/report.md"
step "written to target/arm-perf/report.md"
