#!/usr/bin/env bash
# The release check: what `cargo publish` would upload, tried as a user of the registry would
# meet it, with nothing of this repository on the way.
#
#   bash hack/release-check.sh [OUT [ARGS...]]   # OUT: a new temporary directory by default;
#                                               # ARGS go to `cargo package` (e.g. --allow-dirty)
#
# 1. hack/package.sh: every published crate packaged and verified (built from its package
#    alone), and a Cargo registry of the packages on this machine (crates.io replaced by a
#    directory source of them and of their crates.io dependencies; offline);
# 2. each package's own tests, from the unpacked package: run for kbr-core, kbr-derive, kbr-crd
#    and kbr; built (`--no-run`) for kbr-runtime and kbr-testing, whose same sources the
#    workspace's tests run;
# 3. `cargo install kbr` from that registry; `kbr init` without --runtime-path writes
#    `kbr-runtime = "<version>"`; the knative-lite scaffold passes `make manifests test build
#    docker-context`, its Docker build context builds on its own, and no path to this
#    repository is anywhere in the project;
# 4. `kbr alpha update` installs the kbr that scaffolded a project from the registry (an older
#    package made from this one, with one template line fewer) and moves the project to this
#    kbr's scaffold, keeping the user's edit; the project then passes `make test`.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
step() { printf '\n==> %s\n' "$*"; }
trap 'echo "release-check: failed at line $LINENO: $BASH_COMMAND" >&2' ERR

bash "$repo/hack/package.sh" "$out" "${@:2}"
version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' "$repo/Cargo.toml")"
[[ -n $version ]] || { echo "release-check: no [workspace.package] version in Cargo.toml" >&2; exit 1; }

# From here on, cargo knows only the registry: crates.io is replaced by the packages, offline.
export CARGO_HOME="$out/cargo-home"
# The build cache: a new one by default. hack/test.sh passes its own (KBR_RELEASE_TARGET_DIR)
# to reuse the crates.io dependencies it built: a directory source that replaces crates.io
# keeps their package IDs, so they are the same artifacts, while kbr's crates from the
# registry never match the checkout's, whose package IDs are paths.
export CARGO_TARGET_DIR="${KBR_RELEASE_TARGET_DIR:-$out/target}"
unset KUBEBUILDER_ASSETS

step "each package's own tests, from the unpacked package"
mkdir -p "$out/unpacked/.cargo"
# The workspace's dev profile (a package carries no profile), read from the workspace's
# Cargo.toml, so these builds share the dependencies' artifacts with the workspace's when they
# share a target directory.
awk '/^\[/ { keep = ($0 ~ /^\[profile\.dev[].]/) } keep' "$repo/Cargo.toml" \
  >"$out/unpacked/.cargo/config.toml"
for crate in kbr-core kbr-derive kbr-crd kbr-runtime kbr-testing kbr; do
  rm -rf "$out/unpacked/$crate"
  cp -R "$out/registry/$crate-$version" "$out/unpacked/$crate"
  rm -f "$out/unpacked/$crate/.cargo-checksum.json"
  case "$crate" in
    kbr-runtime | kbr-testing) run=(--no-run) ;;
    *) run=() ;;
  esac
  echo "--> $crate: cargo test ${run[*]:-}"
  if ! (cd "$out/unpacked/$crate" && cargo test "${run[@]}" >"$out/unpacked/$crate.log" 2>&1); then
    tail -n 40 "$out/unpacked/$crate.log" >&2
    echo "release-check: the tests of the $crate package fail (cargo test in $out/unpacked/$crate)" >&2
    exit 1
  fi
  if [[ ${#run[@]} -eq 0 ]]; then
    grep -E '^test result' "$out/unpacked/$crate.log" | awk '{p += $4; f += $6; i += $8} END {printf "    %d passed, %d failed, %d ignored\n", p, f, i}'
  else
    echo "    $(grep -c 'Executable' "$out/unpacked/$crate.log" || true) test executables built"
  fi
done

step "cargo install kbr --version =$version, from the registry"
cargo install kbr --version "=$version" --locked --quiet --root "$out/kbr"
kbr="$out/kbr/bin/kbr"
"$kbr" version

step "kbr init without --runtime-path: a project on the published runtime"
project="$out/work/knative-lite"
rm -rf "$out/work"
mkdir -p "$project"
cd "$project"
"$kbr" init --domain knative.dev --project-name knative-lite
"$kbr" create api --group eventing --version v1alpha1 --kind Broker
"$kbr" create api --group eventing --version v1alpha1 --kind Channel
"$kbr" create api --group serving --version v1alpha1 --kind Service
grep -E '^kbr-(runtime|testing) = ' Cargo.toml
expected="kbr-runtime = { version = \"$version\", features = [\"latest\"] }"
grep -qxF "$expected" Cargo.toml || { echo "release-check: Cargo.toml lacks: $expected" >&2; exit 1; }

step "make manifests test build docker-context"
make --no-print-directory manifests test build docker-context
(cd dist/docker-context && cargo build --locked --offline --quiet --bin knative-lite)
echo "the Docker build context builds on its own"

step "no path to the repository in the project"
if grep -rnF --exclude-dir=target "$repo" . || grep -nE '^[A-Za-z0-9_-]+ = \{[^}]*\bpath = ' Cargo.toml; then
  echo "release-check: the project names the repository" >&2
  exit 1
fi
echo "grep -r $repo: nothing (and no path dependency in Cargo.toml)"

step "kbr alpha update installs the older kbr from the registry"
older="$version-pre.1"
pkg="$out/registry/kbr-$older"
rm -rf "$pkg"
cp -R "$out/registry/kbr-$version" "$pkg"
# The older kbr: this one with another version and its Makefile template without one comment
# line, which the update must bring into the project.
line='# Recipes run in bash with pipefail, so a failing command in a pipe fails the target.'
grep -qxF "$line" "$pkg/templates/init/Makefile"
sed -i "/^# Recipes run in bash with pipefail/d" "$pkg/templates/init/Makefile"
sed -i "0,/^version = \"$version\"/s//version = \"$older\"/" "$pkg/Cargo.toml"
python3 - "$pkg" "$older" "$version" <<'PY'
import hashlib, io, json, os, re, sys, tarfile
root, older, version = sys.argv[1:]
lock = os.path.join(root, "Cargo.lock")
text = open(lock).read()
text = text.replace('name = "kbr"\nversion = "%s"' % version, 'name = "kbr"\nversion = "%s"' % older, 1)
open(lock, "w").write(text)
files, archive = {}, io.BytesIO()
with tarfile.open(fileobj=archive, mode="w:gz") as tar:
    for dirpath, _, names in sorted(os.walk(root)):
        for name in sorted(names):
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if rel == ".cargo-checksum.json":
                continue
            files[rel] = hashlib.sha256(open(path, "rb").read()).hexdigest()
            tar.add(path, arcname="kbr-%s/%s" % (older, rel))
with open(os.path.join(root, ".cargo-checksum.json"), "w") as f:
    json.dump({"files": files, "package": hashlib.sha256(archive.getvalue()).hexdigest()}, f)
PY
cargo install kbr --version "=$older" --locked --quiet --root "$out/kbr-older"
updated="$out/work/updated"
mkdir -p "$updated"
cd "$updated"
"$out/kbr-older/bin/kbr" init --domain knative.dev --project-name updated --runtime-version "$version"
"$out/kbr-older/bin/kbr" create api --group eventing --version v1alpha1 --kind Broker
grep -qE "^cliVersion: \"?$older\"?\$" PROJECT
if grep -qxF "$line" Makefile; then echo "release-check: the older kbr wrote the line it should lack" >&2; exit 1; fi
printf '\n.PHONY: mine\nmine: ## A target of my own.\n\t@echo mine\n' >> Makefile
export KBR_CACHE_DIR="$out/kbr-cache"
"$kbr" alpha update | tee "$out/update.log"
[[ -x "$KBR_CACHE_DIR/$older/bin/kbr" ]] || { echo "release-check: kbr alpha update did not install kbr $older into $KBR_CACHE_DIR" >&2; exit 1; }
grep -qF "Updating from $KBR_CACHE_DIR/$older/bin/kbr" "$out/update.log"
grep -qxF "$line" Makefile || { echo "release-check: the update did not bring the new scaffold's Makefile line" >&2; exit 1; }
grep -q '^mine:' Makefile || { echo "release-check: the update lost the user's Makefile target" >&2; exit 1; }
grep -qE "^cliVersion: \"?$version\"?\$" PROJECT
make --no-print-directory test >/dev/null
echo "kbr $older (installed from the registry) -> kbr $version: the new Makefile line and the user's target are both there; make test passes"

step "release check passed ($out)"
