#!/usr/bin/env bash
# Benchmark (not a test): wall time of `kbr init` plus three `kbr create api` — the knative-lite
# scaffold of shared/knative-example.md — with a release build of kbr. Target: under 100 ms for
# the four together. Uses hyperfine (Debian package `hyperfine`), else /usr/bin/time in a loop.
#
#   bash bench/cli.sh [RUNS]     # RUNS defaults to 30
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs="${1:-30}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
cargo build --quiet --release --manifest-path "$repo/Cargo.toml" -p kbr
kbr="$CARGO_TARGET_DIR/release/kbr"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat > "$work/scaffold.sh" <<SCRIPT
set -e
rm -rf "$work/p" && mkdir "$work/p" && cd "$work/p"
"$kbr" init --domain knative.dev --project-name knative-lite --runtime-version 0.1.0 >/dev/null
"$kbr" create api --group eventing --version v1alpha1 --kind Broker >/dev/null
"$kbr" create api --group eventing --version v1alpha1 --kind Channel >/dev/null
"$kbr" create api --group serving --version v1alpha1 --kind Service >/dev/null
SCRIPT

if command -v hyperfine >/dev/null; then
  hyperfine --shell=none --warmup 3 --runs "$runs" --export-json "$work/times.json" "bash $work/scaffold.sh"
  python3 - "$work/times.json" <<'PY'
import json, statistics, sys
times = json.load(open(sys.argv[1]))["results"][0]["times"]
print(f"median {statistics.median(times) * 1000:.1f} ms (min {min(times) * 1000:.1f}, max {max(times) * 1000:.1f}) over {len(times)} runs")
PY
else
  echo "hyperfine not found (apt-get install hyperfine); timing $runs runs with /usr/bin/time" >&2
  for _ in $(seq "$runs"); do /usr/bin/time -f '%e' bash "$work/scaffold.sh" 2>&1 >/dev/null; done |
    sort -n | awk '{ a[NR] = $1 } END { printf "median %.3f s (min %.3f, max %.3f) over %d runs\n", a[int((NR + 1) / 2)], a[1], a[NR], NR }'
fi
