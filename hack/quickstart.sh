#!/usr/bin/env bash
# kbr's main job, end to end on a fresh machine: build kbr, scaffold the knative-lite operator
# (the commands of shared/knative-example.md) into a new directory, build it and run its tests.
#
#   bash hack/quickstart.sh [DIR]     # DIR defaults to a new temporary directory
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${1:-$(mktemp -d)/knative-lite}"
if [[ -e "$dir" && -n "$(ls -A "$dir" 2>/dev/null)" ]]; then
  echo "quickstart: $dir is not empty; pass a new directory" >&2
  exit 1
fi
# Reuse kbr's target directory so the project's dependencies (kube, k8s-openapi) build once.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"

echo "==> building kbr"
cargo build --release --manifest-path "$repo/Cargo.toml" -p kbr
kbr="$CARGO_TARGET_DIR/release/kbr"

echo "==> scaffolding knative-lite into $dir"
mkdir -p "$dir"
cd "$dir"
"$kbr" init --domain knative.dev --project-name knative-lite
"$kbr" create api --group eventing --version v1alpha1 --kind Broker
"$kbr" create api --group eventing --version v1alpha1 --kind Channel
"$kbr" create api --group serving --version v1alpha1 --kind Service

echo "==> building and testing it"
cp "$repo/Cargo.lock" Cargo.lock
make manifests
cargo build
cargo test
echo "==> done: the operator is in $dir (make help lists what you can do next)"
