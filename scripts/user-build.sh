#!/usr/bin/env bash
# A user's build from the packaged crates: what `cargo publish` would upload
# must build and run on its own, depended on by name and version only.
#
# Takes the `.crate` files that `cargo package` left in target/package/,
# unpacks them outside the workspace, and builds a scratch binary whose
# Cargo.toml names our crates by version (`sm4-simd = "0.1.0"`), with
# `[patch.crates-io]` pointing those names at the unpacked packages (they
# are not on crates.io yet). Every other dependency comes from crates.io.
# The binary's `main` is the root README's first Rust example, verbatim, so
# the code a user reads first is the code that runs here.
#
# Usage: scripts/user-build.sh (after `cargo package --workspace ...`).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

crates=(sm4-simd sm3-simd chacha-simd nhpoly1305 adiantum-simd sm4-mac)
version=$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json,sys; print({p["name"]: p["version"] for p in json.load(sys.stdin)["packages"]}["sm4-simd"])')

scratch=$(mktemp -d "${TMPDIR:-/tmp}/user-build.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/packages" "$scratch/app/src"

for c in "${crates[@]}"; do
    file="target/package/$c-$version.crate"
    [ -f "$file" ] || {
        echo "user build: $file is missing (run cargo package first)"
        exit 1
    }
    tar -xzf "$file" -C "$scratch/packages"
done

{
    cat <<EOF
[package]
name = "user-build"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
EOF
    for c in "${crates[@]}"; do echo "$c = \"$version\""; done
    # What the README example uses beside our crates, as a user would add it.
    echo 'hmac = "0.13"'
    echo 'chacha20poly1305 = { version = "0.11", default-features = false, features = ["alloc"] }'
    echo
    echo '[patch.crates-io]'
    for c in "${crates[@]}"; do echo "$c = { path = \"../packages/$c-$version\" }"; done
    # Its own workspace: nothing from the repository's is inherited.
    echo
    echo '[workspace]'
} >"$scratch/app/Cargo.toml"

# The root README's first ```rust block, as the body of main.
python3 - "$root/README.md" "$scratch/app/src/main.rs" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
block = re.search(r"^```rust\n(.*?)^```", text, re.S | re.M).group(1)
body = "".join("    " + line if line.strip() else line for line in block.splitlines(True))
open(sys.argv[2], "w").write(
    "// The root README's example, verbatim.\n"
    "#![deny(warnings)]\n#![allow(unused_variables)]\n\n"
    "fn main() {\n" + body + "    println!(\"user build: the README example ran\");\n}\n"
)
EOF

# The workspace's lock file, so that the crates.io dependencies resolve to
# the versions the tests ran with.
cp Cargo.lock "$scratch/app/Cargo.lock"
cd "$scratch/app"
cargo run --quiet
# Where each of our crates came from: the unpacked packages, never the repository.
cargo metadata --format-version 1 | python3 -c '
import json, sys
ours = set(sys.argv[1:])
pkgs = [p for p in json.load(sys.stdin)["packages"] if p["name"] in ours]
assert len(pkgs) == len(ours), "not every crate was in the build"
for p in pkgs:
    assert "/packages/" in p["manifest_path"], p["manifest_path"]
print("user build: %d crates from their .crate files: %s" % (len(pkgs), " ".join(sorted(ours))))
' "${crates[@]}"
