#!/usr/bin/env bash
# Every benchmark of BENCHMARKS.md, printed as Markdown on stdout (progress on stderr):
#   1. reconcile throughput: time to converge and peak RSS, kbr vs plain kube-runtime;
#   2. cache memory: heap bytes per object, kbr's cache vs a kube-runtime reflector store;
#   3. CLI: `kbr init` + three `kbr create api` (bench/cli.sh);
#   4. generated project: cold and incremental builds, release binary size (bench/build.sh);
#   5. the sample-controller workload: kbr, kube-runtime, an external controller, the ceiling;
#   7. a controller restart: FIFO vs priority work queue, and starvation under a stream of changes;
#   9. failover: two replicas under leader election, cold vs warm standby, SIGKILL vs SIGTERM;
#  11. fleet: multi-cluster managers over fake clusters, 1 and 3 replicas; a big cluster's effect.
# Benchmarks, not tests: nothing here fails on a missed target, and CI does not run it.
#
#   bash bench/run.sh [--quick] [--runs R] [--sizes N1,N2,..] [--kubeconfig PATH | --envtest]
#                     [--cli-runs R] [--cold-runs C] [--sample-runs R]
#                     [--restart-sizes N1,..] [--restart-runs R] [--starvation-size N]
#                     [--controller-cmd CMD --ready-pattern REGEX [--controller-name NAME]]
#                     [--failover-runs R] [--failover-objects N]
#                     [--fleet-clusters C] [--fleet-objects N] [--fleet-big N] [--fleet-runs R]
#                     [--only converge,cache,cli,build,sample,restart,failover,fleet]
#
#   defaults: --runs 5 --sizes 1000,5000,10000 --cli-runs 30 --cold-runs 3 --sample-runs 3
#   --restart-sizes 10000 --restart-runs 3 --starvation-size 2000 --failover-runs 3
#   --failover-objects 10000, --fleet-clusters 50 --fleet-objects 200 --fleet-big 20000
#   --fleet-runs 1, everything, and the fake API server (offline; a fresh server
#   process per measurement).
#   --quick: a smoke run (--runs 1 --sizes 200 --cli-runs 5 --cold-runs 1 --sample-runs 1
#   --restart-sizes 300 --restart-runs 1 --starvation-size 300, and 20 hot Foos changed for
#   at most 10 s instead of 200 for 60 s; --failover-runs 1 --failover-objects 200;
#   --fleet-clusters 10 --fleet-objects 50 --fleet-big 2000); later
#   options win.
#   --kubeconfig: measure 1, 2, 5, 7 and 9 against that cluster instead (objects go to fresh
#   kbr-bench-* namespaces, deleted after each measurement; the BenchWidget and Foo CRDs are
#   applied and left in place). The fleet (11) always runs on in-process fake API servers.
#   --envtest: measure 1, 2, 5, 7 and 9 on a fresh real control plane per measurement (etcd +
#   kube-apiserver from $KUBEBUILDER_ASSETS; export KUBEBUILDER_ASSETS="$(bash
#   ../shared/envtest/setup.sh)") instead of a fresh fake API server process.
#   --controller-cmd, --ready-pattern, --controller-name: an external controller measured in 5
#   beside kbr and kube-runtime (see BENCHMARKS.md, section 5).
#
#   bash bench/run.sh > results.md     # then copy the tables into BENCHMARKS.md
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
invocation="$*"
runs=5 sizes=1000,5000,10000 cli_runs=30 cold_runs=3 sample_runs=3 kubeconfig=""
envtest="" restart_sizes=10000 restart_runs=3 starvation_size=2000 hot=200 stream_secs=60
failover_runs=3 failover_objects=10000
fleet_clusters=50 fleet_objects=200 fleet_big=20000 fleet_runs=1
only="converge,cache,cli,build,sample,restart,failover,fleet"
external=()
usage() { sed -n '2,40p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) runs=1 sizes=200 cli_runs=5 cold_runs=1 sample_runs=1
             restart_sizes=300 restart_runs=1 starvation_size=300 hot=20 stream_secs=10
             failover_runs=1 failover_objects=200
             fleet_clusters=10 fleet_objects=50 fleet_big=2000 ;;
    --runs) runs="$2"; shift ;;
    --sizes) sizes="$2"; shift ;;
    --kubeconfig) kubeconfig="$(realpath "$2")"; shift ;;
    --envtest) envtest=1 ;;
    --cli-runs) cli_runs="$2"; shift ;;
    --cold-runs) cold_runs="$2"; shift ;;
    --sample-runs) sample_runs="$2"; shift ;;
    --restart-sizes) restart_sizes="$2"; shift ;;
    --restart-runs) restart_runs="$2"; shift ;;
    --starvation-size) starvation_size="$2"; shift ;;
    --failover-runs) failover_runs="$2"; shift ;;
    --failover-objects) failover_objects="$2"; shift ;;
    --fleet-clusters) fleet_clusters="$2"; shift ;;
    --fleet-objects) fleet_objects="$2"; shift ;;
    --fleet-big) fleet_big="$2"; shift ;;
    --fleet-runs) fleet_runs="$2"; shift ;;
    --controller-cmd|--ready-pattern|--controller-name) external+=("$1" "$2"); shift ;;
    --only) only="$2"; shift ;;
    -h|--help) usage ;;
    *) echo "run.sh: unknown option $1" >&2; usage ;;
  esac
  shift
done
wants() { [[ ",$only," == *",$1,"* ]]; }

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
# kbr itself only for the CLI and generated-project sections.
packages=(-p kbr-bench)
if wants cli || wants build; then packages+=(-p kbr); fi
echo "==> building ${packages[*]} (release)" >&2
cargo build --quiet --release --manifest-path "$repo/Cargo.toml" "${packages[@]}"
bench="$CARGO_TARGET_DIR/release/kbr-bench"
target_args=()
[[ -n "$kubeconfig" && -n "$envtest" ]] && { echo "run.sh: --kubeconfig and --envtest exclude each other; pass one" >&2; exit 2; }
[[ -n "$kubeconfig" ]] && target_args=(--kubeconfig "$kubeconfig")
if [[ -n "$envtest" ]]; then
  [[ -n "${KUBEBUILDER_ASSETS:-}" ]] || { echo "run.sh: --envtest needs KUBEBUILDER_ASSETS; run: export KUBEBUILDER_ASSETS=\"\$(bash ../shared/envtest/setup.sh)\"" >&2; exit 2; }
  target_args=(--envtest)
fi
# The target as the "Reproduce:" lines print it.
target_flags="${target_args[*]:+ ${target_args[*]}}"

mem_gib="$(awk '/^MemTotal:/ { printf "%.1f", $2 / 1024 / 1024 }' /proc/meminfo)"
cpu_model="$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
commit="$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
[[ -n "$(git -C "$repo" status --porcelain 2>/dev/null)" ]] && commit="$commit (uncommitted changes)"
echo "# kbr benchmark results"
echo
echo "- date: $(date -u +%Y-%m-%dT%H:%MZ), commit $commit"
echo "- machine: $(nproc) CPUs (${cpu_model:-unknown model}), $mem_gib GiB RAM, Linux $(uname -r)"
echo "- toolchain: $(rustc --version)"
if [[ -n "$kubeconfig" ]]; then
  echo "- API server: the cluster of $kubeconfig"
elif [[ -n "$envtest" ]]; then
  echo "- API server: kube-apiserver $("$KUBEBUILDER_ASSETS/kube-apiserver" --version 2>/dev/null | awk '{print $2}') + etcd (envtest, $KUBEBUILDER_ASSETS), fresh per measurement"
else
  echo "- API server: kbr's fake API server, a fresh process per measurement"
fi
echo "- command: \`bash bench/run.sh${invocation:+ $invocation}\`"
echo "- figures: median (min–max) over the runs given"

if wants converge; then
  echo
  echo "## Reconcile throughput (N objects, one status write each)"
  echo
  echo "Reproduce: \`bash bench/run.sh --only converge --runs $runs --sizes $sizes$target_flags\`"
  echo
  echo "==> converge: sizes $sizes, $runs runs" >&2
  "$bench" converge --sizes "$sizes" --runs "$runs" "${target_args[@]}"
fi

if wants cache; then
  echo
  echo "## Cache memory"
  echo
  echo "Reproduce: \`bash bench/run.sh --only cache --runs $runs --sizes $sizes$target_flags\`"
  echo
  echo "==> cache-memory: sizes $sizes, $runs runs" >&2
  "$bench" cache-memory --sizes "$sizes" --runs "$runs" "${target_args[@]}"
fi

if wants cli; then
  echo
  echo "## CLI"
  echo
  echo "Reproduce: \`bash bench/run.sh --only cli --cli-runs $cli_runs\`"
  echo
  echo "==> cli: $cli_runs runs" >&2
  bash "$repo/bench/cli.sh" --markdown "$cli_runs"
fi

if wants build; then
  echo
  echo "## Generated project build"
  echo
  echo "Reproduce: \`bash bench/run.sh --only build --runs $runs --cold-runs $cold_runs\`"
  echo
  echo "==> build: $runs incremental, $cold_runs cold runs" >&2
  bash "$repo/bench/build.sh" --markdown --runs "$runs" --cold-runs "$cold_runs"
fi

if wants sample; then
  echo
  echo "## Sample-controller workload"
  echo
  reproduce="bash bench/run.sh --only sample --sample-runs $sample_runs --sizes $sizes$target_flags"
  for arg in "${external[@]}"; do reproduce+=" $(printf '%q' "$arg")"; done
  echo "Reproduce: \`$reproduce\`"
  echo
  echo "==> sample: sizes $sizes, $sample_runs runs" >&2
  "$bench" sample --sizes "$sizes" --runs "$sample_runs" "${target_args[@]}" "${external[@]}"
fi

if wants restart; then
  echo
  echo "## Controller restart: priority work queue"
  echo
  echo "Reproduce: \`bash bench/run.sh --only restart --restart-sizes $restart_sizes --restart-runs $restart_runs --starvation-size $starvation_size$target_flags\`"
  echo
  echo "==> restart: sizes $restart_sizes, $restart_runs runs, starvation N = $starvation_size" >&2
  "$bench" restart --sizes "$restart_sizes" --runs "$restart_runs" \
    --starvation-size "$starvation_size" --hot "$hot" --stream-secs "$stream_secs" "${target_args[@]}"
fi

if wants failover; then
  echo
  echo "## Failover"
  echo
  echo "Reproduce: \`bash bench/run.sh --only failover --failover-runs $failover_runs --failover-objects $failover_objects$target_flags\`"
  echo
  echo "==> failover: $failover_objects objects, $failover_runs rounds per standby kind" >&2
  "$bench" failover --objects "$failover_objects" --runs "$failover_runs" "${target_args[@]}"
fi

if wants fleet; then
  echo
  echo "## Fleet: multi-cluster managers"
  echo
  echo "Reproduce: \`bash bench/run.sh --only fleet --fleet-clusters $fleet_clusters --fleet-objects $fleet_objects --fleet-big $fleet_big --fleet-runs $fleet_runs\`"
  echo
  echo "==> fleet: $fleet_clusters clusters x $fleet_objects objects, big $fleet_big, $fleet_runs runs" >&2
  "$bench" fleet --clusters "$fleet_clusters" --objects "$fleet_objects" --big "$fleet_big" --runs "$fleet_runs"
fi
