#!/usr/bin/env bash
# Packages kbr's published crates exactly as `cargo publish` would upload them, verifies that
# each builds from its package alone, and makes a Cargo registry of them on this machine, so
# `cargo install kbr` and a generated project's build can be tried before anything is
# published.
#
#   bash hack/package.sh OUT
#
# OUT/crates/*.crate          the packages (`cargo package`, verified: each built on its own)
# OUT/registry/               a directory source: every package unpacked, beside every crates.io
#                             crate the workspace locks (cargo vendor), each with its checksums
# OUT/cargo-home/config.toml  crates.io replaced by OUT/registry; with CARGO_HOME=OUT/cargo-home,
#                             cargo resolves `kbr = "0.1.0"` to the packages, offline
#
# Extra arguments after OUT are passed to `cargo package` (e.g. --no-verify).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:?usage: bash hack/package.sh OUT}"
shift
mkdir -p "$out"
out="$(cd "$out" && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

# The published crates, bottom to top (kbr-bench is `publish = false`).
crates=(kbr-core kbr-derive kbr-crd kbr-runtime kbr-testing kbr)

# The minimum Rust version the crates declare holds for every dependency Cargo.lock pins (clippy's
# incompatible_msrv lint checks our own code against it).
echo "==> rust-version: no locked dependency needs a newer Rust than the crates declare"
(cd "$repo" && cargo metadata --format-version 1 --locked) | python3 -c '
import json, sys
meta = json.load(sys.stdin)
def parse(v):
    return tuple(int(x) for x in v.split(".")[:3]) + (0,) * (3 - len(v.split(".")[:3]))
ours = {p["rust_version"] for p in meta["packages"] if p["id"] in meta["workspace_members"]}
if len(ours) != 1:
    sys.exit("the workspace crates declare different rust-versions: %s" % sorted(ours))
msrv = ours.pop()
locked = {n["id"] for n in meta["resolve"]["nodes"]}
newer = sorted("%s %s needs Rust %s" % (p["name"], p["version"], p["rust_version"])
               for p in meta["packages"]
               if p["id"] in locked and p["rust_version"] and parse(p["rust_version"]) > parse(msrv))
if newer:
    sys.exit("rust-version %s is too old for: %s" % (msrv, "; ".join(newer)))
print("rust-version %s: every locked dependency declares %s or older" % (msrv, msrv))
'

# k8s-openapi needs one Kubernetes version; a library leaves it to the final binary, so the
# verification builds of the libraries name it the way k8s-openapi offers to tools.
verified="verified"
[[ " $* " == *" --no-verify "* ]] && verified="not verified here: --no-verify"
echo "==> cargo package ($verified): ${crates[*]}"
packages=()
for crate in "${crates[@]}"; do packages+=(-p "$crate"); done
(cd "$repo" && K8S_OPENAPI_ENABLED_VERSION=1.37 cargo package --locked "${packages[@]}" "$@")

rm -rf "$out/crates" "$out/registry" "$out/cargo-home"
mkdir -p "$out/crates" "$out/registry" "$out/cargo-home"
for crate in "${crates[@]}"; do
  cp "$CARGO_TARGET_DIR/package/$crate"-[0-9]*.crate "$out/crates/"
done

echo "==> the packages' files"
for file in "$out"/crates/*.crate; do
  echo "$(basename "$file"): $(tar -tzf "$file" | grep -vc '/$') files"
  tar -tzf "$file" | sed -e 's|^[^/]*/|    |' -e '/^    $/d' | sort
done

echo "==> a directory source of the packages and their crates.io dependencies"
(cd "$repo" && cargo vendor --locked --versioned-dirs --quiet "$out/registry" >/dev/null)
# cargo vendor skips the workspace's own crates; unpack their packages beside the vendored ones,
# with the checksums a directory source needs (each file's and the .crate's, as a registry's
# index records it).
for file in "$out"/crates/*.crate; do
  tar -xzf "$file" -C "$out/registry"
  python3 - "$file" "$out/registry/$(basename "$file" .crate)" <<'PY'
import hashlib, json, os, sys
crate, root = sys.argv[1], sys.argv[2]
def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()
files = {}
for dirpath, _, names in os.walk(root):
    for name in names:
        path = os.path.join(dirpath, name)
        files[os.path.relpath(path, root)] = sha256(path)
with open(os.path.join(root, ".cargo-checksum.json"), "w") as f:
    json.dump({"files": files, "package": sha256(crate)}, f)
PY
done

cat > "$out/cargo-home/config.toml" <<EOF
# Written by hack/package.sh: crates.io is the directory source of kbr's packages.
[source.crates-io]
replace-with = "kbr-packages"

[source.kbr-packages]
directory = "$out/registry"

[net]
offline = true
EOF
echo "==> registry in $out/registry; use it with CARGO_HOME=$out/cargo-home"
