#!/usr/bin/env bash
# Benchmark (not a test): wall time of `kbr init` plus three `kbr create api` — the knative-lite
# scaffold of shared/knative-example.md — with a release build of kbr. Target: under 100 ms for
# the four together. Also times `kbr init` alone, as a breakdown. Uses hyperfine (Debian package
# `hyperfine`), else /usr/bin/time in a loop.
#
#   bash bench/cli.sh [--markdown] [RUNS]     # RUNS defaults to 30
#
# --markdown prints a Markdown table (for bench/run.sh and BENCHMARKS.md) instead of the
# hyperfine output.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
markdown=0
if [[ "${1:-}" == "--markdown" ]]; then markdown=1; shift; fi
runs="${1:-30}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
cargo build --quiet --release --manifest-path "$repo/Cargo.toml" -p kbr
kbr="$CARGO_TARGET_DIR/release/kbr"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat > "$work/init.sh" <<SCRIPT
set -e
rm -rf "$work/p" && mkdir "$work/p" && cd "$work/p"
"$kbr" init --domain knative.dev --project-name knative-lite --runtime-version 0.1.0 >/dev/null
SCRIPT
cat > "$work/scaffold.sh" <<SCRIPT
set -e
bash "$work/init.sh"
cd "$work/p"
"$kbr" create api --group eventing --version v1alpha1 --kind Broker >/dev/null
"$kbr" create api --group eventing --version v1alpha1 --kind Channel >/dev/null
"$kbr" create api --group serving --version v1alpha1 --kind Service >/dev/null
SCRIPT

# summary FILE: "median min max" in milliseconds of one hyperfine result (or a file of seconds).
summary() {
  python3 - "$1" <<'PY'
import json, statistics, sys
text = open(sys.argv[1]).read()
try:
    times = json.loads(text)["results"][0]["times"]
except ValueError:
    times = [float(t) for t in text.split()]
print(f"{statistics.median(times) * 1000:.1f} {min(times) * 1000:.1f} {max(times) * 1000:.1f} {len(times)}")
PY
}

for name in scaffold init; do
  if command -v hyperfine >/dev/null; then
    out=/dev/stderr
    (( markdown )) || out=/dev/stdout
    hyperfine --shell=none --warmup 3 --runs "$runs" --export-json "$work/$name.json" \
      "bash $work/$name.sh" > "$out"
  else
    echo "hyperfine not found (apt-get install hyperfine); timing $runs runs with /usr/bin/time" >&2
    for _ in $(seq "$runs"); do
      /usr/bin/time -f '%e' bash "$work/$name.sh" 2>&1 >/dev/null
    done > "$work/$name.json"
  fi
done

read -r s_med s_min s_max s_n <<< "$(summary "$work/scaffold.json")"
read -r i_med i_min i_max i_n <<< "$(summary "$work/init.json")"
if (( markdown )); then
  met="$(python3 -c "print('yes' if $s_med < 100 else '**no**')")"
  echo "| scaffold (release kbr) | wall time, ms: median (min–max) | runs | target | met |"
  echo "|---|---|---|---|---|"
  echo "| \`kbr init\` + 3 × \`kbr create api\` (knative-lite) | $s_med ($s_min–$s_max) | $s_n | < 100 ms | $met |"
  echo "| \`kbr init\` alone (breakdown) | $i_med ($i_min–$i_max) | $i_n | | |"
else
  echo "init + 3 create api: median $s_med ms (min $s_min, max $s_max) over $s_n runs"
  echo "init alone:          median $i_med ms (min $i_min, max $i_max) over $i_n runs"
fi
