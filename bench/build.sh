#!/usr/bin/env bash
# Benchmark (not a test): the build cost of a generated project — the knative-lite scaffold
# (`kbr init` + three `kbr create api` from a release build of kbr, against this checkout's
# runtime with --runtime-path, with the workspace's Cargo.lock so versions match):
#   - cold `cargo build` (debug) in a fresh target directory used by this project only;
#   - incremental `cargo build` after editing one controller file (a real code change in
#     src/controller/eventing/broker.rs, different every run);
#   - cold `cargo build --release --bin knative-lite` (what `make build` and the Dockerfile run,
#     with the scaffold's release profile: `lto = true`, `codegen-units = 1`, `strip = true`)
#     and the size of that binary stripped, with where its bytes go (ELF sections, and functions
#     by crate from `nm`: the measured build keeps its symbols, CARGO_PROFILE_RELEASE_STRIP=false,
#     and is stripped with `strip` afterwards — the same bytes as cargo's `strip = true`);
#   - for comparison, the stripped size with cargo's default release profile (no LTO, 16
#     codegen units: one extra release build, through CARGO_PROFILE_RELEASE_* variables).
# Targets: incremental rebuild under 15 s, release binary under 15 MB stripped. Dependencies
# must already be in ~/.cargo/registry (they are once the workspace has built): the cold
# builds compile, they do not download. The project and its target directory are deleted at
# the end (a few GB while it runs). Uses hyperfine, else /usr/bin/time.
#
#   bash bench/build.sh [--markdown] [--runs R] [--cold-runs C]   # R incremental (default 5), C cold (default 3)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
markdown=0 runs=5 cold_runs=3
while [[ $# -gt 0 ]]; do
  case "$1" in
    --markdown) markdown=1 ;;
    --runs) runs="$2"; shift ;;
    --cold-runs) cold_runs="$2"; shift ;;
    *) echo "usage: bash bench/build.sh [--markdown] [--runs R] [--cold-runs C]" >&2; exit 2 ;;
  esac
  shift
done

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
cargo build --quiet --release --manifest-path "$repo/Cargo.toml" -p kbr
kbr="$CARGO_TARGET_DIR/release/kbr"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
project="$work/knative-lite"
mkdir -p "$project"
(
  cd "$project"
  "$kbr" init --domain knative.dev --project-name knative-lite --runtime-path "$repo/runtime"
  "$kbr" create api --group eventing --version v1alpha1 --kind Broker
  "$kbr" create api --group eventing --version v1alpha1 --kind Channel
  "$kbr" create api --group serving --version v1alpha1 --kind Service
) >/dev/null
cp "$repo/Cargo.lock" "$project/Cargo.lock"
# The project's own target directory, fresh: nothing shared with the workspace's.
export CARGO_TARGET_DIR="$work/target"
export CARGO_TERM_COLOR=never
cargo fetch --quiet --manifest-path "$project/Cargo.toml"

controller="$project/src/controller/eventing/broker.rs"
[[ -f "$controller" ]] || { echo "build.sh: $controller not scaffolded" >&2; exit 1; }
cat > "$work/edit.sh" <<SCRIPT
# One real edit of one controller file: a function whose body changes every run.
if grep -q 'fn bench_edit' "$controller"; then
  sed -i "s/fn bench_edit() -> u64 { [0-9]* }/fn bench_edit() -> u64 { \$(date +%s%N) }/" "$controller"
else
  printf '\n/// Edited by bench/build.sh.\n#[allow(dead_code)]\nfn bench_edit() -> u64 { %s }\n' "\$(date +%s%N)" >> "$controller"
fi
SCRIPT

# time_runs NAME RUNS PREPARE COMMAND: hyperfine (or /usr/bin/time) into $work/NAME.json.
time_runs() {
  local name="$1" n="$2" prepare="$3" command="$4"
  echo "==> $name: $command ($n runs)" >&2
  if command -v hyperfine >/dev/null; then
    hyperfine --runs "$n" --prepare "$prepare" --export-json "$work/$name.json" \
      --command-name "$name" "$command" >&2
  else
    for _ in $(seq "$n"); do
      bash -c "$prepare"
      /usr/bin/time -f '%e' bash -c "$command" 2>&1 >/dev/null | tail -1
    done > "$work/$name.json"
  fi
}

# summary NAME: "median min max runs" in seconds.
summary() {
  python3 - "$work/$1.json" <<'PY'
import json, statistics, sys
text = open(sys.argv[1]).read()
try:
    times = json.loads(text)["results"][0]["times"]
except ValueError:
    times = [float(t) for t in text.split()]
print(f"{statistics.median(times):.1f} {min(times):.1f} {max(times):.1f} {len(times)}")
PY
}

build="cargo build --quiet --manifest-path $project/Cargo.toml"
time_runs cold "$cold_runs" "rm -rf $work/target/debug" "$build"
time_runs incremental "$runs" "bash $work/edit.sh" "$build"
release="cargo build --quiet --release --manifest-path $project/Cargo.toml --bin knative-lite"
time_runs release "$cold_runs" "rm -rf $work/target/release" "CARGO_PROFILE_RELEASE_STRIP=false $release"

binary="$work/target/release/knative-lite"
strip -o "$work/knative-lite.stripped" "$binary"
size_mb() { python3 -c "import os, sys; print(f'{os.path.getsize(sys.argv[1]) / 1e6:.1f}')" "$1"; }
unstripped="$(size_mb "$binary")"
stripped="$(size_mb "$work/knative-lite.stripped")"

# The same binary with cargo's default release profile (size only; build time not reported).
echo "==> release build with cargo's default profile: no LTO, 16 codegen units (size only)" >&2
CARGO_TARGET_DIR="$work/target-default" CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
  $release
strip -o "$work/knative-lite.default.stripped" "$work/target-default/release/knative-lite"
default_stripped="$(size_mb "$work/knative-lite.default.stripped")"
rm -rf "$work/target-default"

# breakdown: ELF sections of the stripped binary, then function bytes by crate (drop glue
# `drop_in_place<T>` counted to T's crate), as Markdown tables.
breakdown() {
  python3 - "$binary" "$work/knative-lite.stripped" <<'PY'
import collections, re, subprocess, sys
binary, stripped = sys.argv[1], sys.argv[2]
sections = {}
for line in subprocess.run(["size", "-A", stripped], capture_output=True, text=True, check=True).stdout.splitlines():
    parts = line.split()
    if len(parts) == 3 and parts[0].startswith("."):
        sections[parts[0]] = int(parts[1])
total = sum(sections.values())
groups = [(".text (code)", [".text"]), (".eh_frame + .eh_frame_hdr (unwind tables)", [".eh_frame", ".eh_frame_hdr"]),
          (".gcc_except_table (landing pads)", [".gcc_except_table"]), (".rodata (constants, strings)", [".rodata"]),
          (".rela.dyn + .data.rel.ro (relocations, PIE)", [".rela.dyn", ".data.rel.ro"])]
print("| stripped release binary: section | MB | share |")
print("|---|---|---|")
rest = total
for label, names in groups:
    size = sum(sections.get(n, 0) for n in names)
    rest -= size
    print(f"| {label} | {size / 1e6:.2f} | {100 * size / total:.0f}% |")
print(f"| other sections | {rest / 1e6:.2f} | {100 * rest / total:.0f}% |")
print()
crates = collections.Counter()
code = 0
nm = subprocess.run(["nm", "-S", "--size-sort", "-C", binary], capture_output=True, text=True, check=True).stdout
for line in nm.splitlines():
    parts = line.split(" ", 3)
    if len(parts) < 4 or parts[2] not in ("t", "T"):
        continue
    size, name = int(parts[1], 16), parts[3]
    code += size
    glue = re.match(r"core::ptr::drop_in_place<[<(&*\[ ]*(?:mut |const )?([A-Za-z_][A-Za-z0-9_]*)::", name)
    first = glue or re.search(r"([A-Za-z_][A-Za-z0-9_]*)::", name)
    crates[first.group(1) if first else "(unnamed: C, assembly)"] += size
print("| functions by crate (drop glue counted to the dropped type's crate) | MB | share of code |")
print("|---|---|---|")
for crate, size in crates.most_common(12):
    print(f"| `{crate}` | {size / 1e6:.2f} | {100 * size / code:.0f}% |")
print(f"| all functions | {code / 1e6:.2f} | 100% |")
PY
}

read -r c_med c_min c_max c_n <<< "$(summary cold)"
read -r i_med i_min i_max i_n <<< "$(summary incremental)"
read -r r_med r_min r_max r_n <<< "$(summary release)"
yes_no() { python3 -c "import sys; print('yes' if float(sys.argv[1]) < float(sys.argv[2]) else '**no**')" "$1" "$2"; }
if (( markdown )); then
  echo "| generated project (knative-lite scaffold) | median (min–max) | runs | target | met |"
  echo "|---|---|---|---|---|"
  echo "| cold \`cargo build\` (debug, fresh target dir) | $c_med s ($c_min–$c_max) | $c_n | | |"
  echo "| incremental \`cargo build\` after a one-function edit of one controller file | $i_med s ($i_min–$i_max) | $i_n | < 15 s | $(yes_no "$i_med" 15) |"
  echo "| cold \`cargo build --release --bin knative-lite\` (scaffold profile: LTO, 1 codegen unit) | $r_med s ($r_min–$r_max) | $r_n | | |"
  echo "| release binary, stripped | $stripped MB | | < 15 MB | $(yes_no "$stripped" 15) |"
  echo "| release binary with symbols (not stripped) | $unstripped MB | | | |"
  echo "| for comparison: stripped, cargo's default release profile (no LTO, 16 codegen units) | $default_stripped MB | | | |"
  echo
  breakdown
else
  echo "cold cargo build:      median $c_med s (min $c_min, max $c_max) over $c_n runs"
  echo "incremental rebuild:   median $i_med s (min $i_min, max $i_max) over $i_n runs"
  echo "cold release build:    median $r_med s (min $r_min, max $r_max) over $r_n runs"
  echo "release binary:        $unstripped MB, stripped $stripped MB, default profile stripped $default_stripped MB"
  breakdown
fi
