#!/usr/bin/env bash
# Benchmark (not a test): time to first green on the published path — what a new user waits
# for between `kbr init` and the first passing `make test`. The knative-lite scaffold (`kbr init`
# + three `kbr create api`, by a kbr installed from the packages), on the packaged kbr-runtime
# and kbr-testing (a registry made by hack/package.sh: crates.io replaced by a directory source,
# so every crate is "already downloaded"), a fresh target directory, then
#
#   make manifests && make test
#
# timed as a whole and per step (wall and CPU, /usr/bin/time), R times, each from a cold target
# directory. Cargo runs with `--timings` (a wrapper passed as the Makefile's CARGO), and the last
# run's reports of both steps are kept for where the time goes.
#
#   bash bench/first-green.sh [--registry OUT] [--runs R] [--keep DIR]
#     --registry OUT   a directory hack/package.sh wrote (default: package into a temporary one)
#     --runs R         cold runs (default 3)
#     --keep DIR       copy the last run's cargo-timing reports into DIR
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
registry="" runs=3 keep=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --registry) registry="$2"; shift ;;
    --runs) runs="$2"; shift ;;
    --keep) keep="$2"; shift ;;
    *) echo "usage: bash bench/first-green.sh [--registry OUT] [--runs R] [--keep DIR]" >&2; exit 2 ;;
  esac
  shift
done
[[ -x /usr/bin/time ]] || { echo "first-green.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [[ -z $registry ]]; then
  registry="$work/registry"
  bash "$repo/hack/package.sh" "$registry" --no-verify --allow-dirty >/dev/null
fi
registry="$(cd "$registry" && pwd)"
version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' "$repo/Cargo.toml")"

export CARGO_HOME="$registry/cargo-home"
export CARGO_TERM_COLOR=never
unset KUBEBUILDER_ASSETS
CARGO_TARGET_DIR="$work/kbr-target" cargo install kbr --version "=$version" --locked --quiet --root "$work/kbr"
kbr="$work/kbr/bin/kbr"

project="$work/knative-lite"
mkdir -p "$project"
(
  cd "$project"
  "$kbr" init --domain knative.dev --project-name knative-lite
  "$kbr" create api --group eventing --version v1alpha1 --kind Broker
  "$kbr" create api --group eventing --version v1alpha1 --kind Channel
  "$kbr" create api --group serving --version v1alpha1 --kind Service
  cargo generate-lockfile --quiet
) >/dev/null

# timed NAME CMD...: runs CMD in the project, appends "NAME wall cpu" to $work/times.
timed() {
  local name="$1"; shift
  (cd "$project" && /usr/bin/time -f "$name %e %U %S" -a -o "$work/times" "$@" >"$work/$name.log" 2>&1) || {
    tail -n 30 "$work/$name.log" >&2; exit 1
  }
}

# The Makefile's CARGO: cargo with --timings after the subcommand (run, test).
cat > "$work/cargo-timings" <<'SH'
#!/bin/sh
sub="$1"; shift
exec cargo "$sub" --timings "$@"
SH
chmod +x "$work/cargo-timings"

echo "kbr $version from the packages; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
for run in $(seq 1 "$runs"); do
  rm -rf "$project/target" "$work/times"
  export CARGO_TARGET_DIR="$project/target"
  timed manifests make --no-print-directory manifests CARGO="$work/cargo-timings"
  timed test make --no-print-directory test CARGO="$work/cargo-timings"
  awk -v run="$run" '{cpu = $3 + $4; printf "run %d: %-9s %6.1f s wall %6.1f s CPU\n", run, $1, $2, cpu; w += $2; c += cpu} END {printf "run %d: together  %6.1f s wall %6.1f s CPU\n", run, w, c}' "$work/times"
done
if [[ -n $keep ]]; then
  mkdir -p "$keep"
  cp "$project"/target/cargo-timings/cargo-timing-*.html "$keep/"
  echo "timings reports: $(ls "$keep"/cargo-timing-*.html | tr '\n' ' ')"
fi
