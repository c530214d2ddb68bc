#!/usr/bin/env bash
# Regenerates the golden projects under testdata/ from fixed kbr commands, then runs each
# project's `make manifests` so the CRDs, RBAC role and webhook configurations the code produces
# are golden too.
# Review the diff: it is every change to kbr's output.
#
#   bash testdata/generate.sh            # regenerate all
#   bash testdata/generate.sh --no-manifests   # scaffold only (no cargo build of the projects)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
manifests=1
[[ "${1:-}" == "--no-manifests" ]] && manifests=0

# A fixed year in license headers, so the output does not change on New Year's Day.
export SOURCE_DATE_EPOCH=1767225600 # 2026-01-01T00:00:00Z
# One target directory for the workspace and the generated projects: dependencies build once.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"

cargo build --quiet --manifest-path "$repo/Cargo.toml" -p kbr
kbr="$CARGO_TARGET_DIR/debug/kbr"

# scaffold NAME: recreate testdata/NAME and run the commands read from stdin in it.
scaffold() {
  local dir="$repo/testdata/$1"
  rm -rf "$dir"
  mkdir -p "$dir"
  (cd "$dir" && while read -r line; do
    [[ -z "$line" ]] && continue
    echo "testdata/$1: kbr $line"
    eval "\"$kbr\" $line"
  done)
}

# project: one group, one cluster-scoped kind with an irregular plural, in two versions
# converted through the hub v1 (Kubebuilder's testdata has the same Captain webhooks), and a
# controller for the built-in Deployment kind (as in Kubebuilder's multigroup testdata), and a
# defaulting webhook for the built-in Pod kind (Kubebuilder scaffolds webhooks for core types);
# with controller sharding (init --sharding): 3 replicas split the Captains and Deployments.
scaffold project <<'CMDS'
init --domain testproject.org --project-name project --owner "The kbr authors" --sharding --runtime-path ../../runtime
create api --group crew --version v1 --kind Captain --namespaced=false
create api --group crew --version v2 --kind Captain --namespaced=false --controller=false
create webhook --group crew --version v1 --kind Captain --defaulting --programmatic-validation --conversion --spoke v2
create api --group apps --version v1 --kind Deployment --resource=false
create webhook --group core --version v1 --kind Pod --defaulting
CMDS

# knative-lite: the scaffold commands of shared/knative-example.md.
scaffold knative-lite <<'CMDS'
init --domain knative.dev --project-name knative-lite --runtime-path ../../runtime
create api --group eventing --version v1alpha1 --kind Broker
create api --group eventing --version v1alpha1 --kind Channel
create api --group serving --version v1alpha1 --kind Service
create webhook --group eventing --version v1alpha1 --kind Channel --defaulting --programmatic-validation
CMDS

# project-with-plugins: every optional plugin, as Kubebuilder's testdata/project-v4-with-plugins
# has them: grafana from init, autoupdate added by edit, and two kinds of the deploy-image plugin
# (Memcached with a port, a user and a command; Busybox with the image only).
scaffold project-with-plugins <<'CMDS'
init --domain testproject.org --project-name project-with-plugins --plugins grafana --runtime-path ../../runtime
edit --plugins autoupdate
create api --group example.com --version v1alpha1 --kind Memcached --image memcached:1.6.26-alpine3.19 --image-container-port 11211 --run-as-user 1001 --image-container-command memcached,--memory-limit=64,-o,modern,-v
create api --group example.com --version v1alpha1 --kind Busybox --image busybox:1.36.1
CMDS

# project-multicluster: one controller over a fleet of clusters (init --multicluster, the
# directory provider: kubeconfig files mounted from a Secret), for a kind of its own and for the
# built-in Deployment kind.
scaffold project-multicluster <<'CMDS'
init --domain testproject.org --project-name project-multicluster --multicluster --runtime-path ../../runtime
create api --group crew --version v1 --kind Captain
create api --group apps --version v1 --kind Deployment --resource=false
CMDS

if (( manifests )); then
  for name in project knative-lite project-with-plugins project-multicluster; do
    dir="$repo/testdata/$name"
    # Resolve dependencies exactly as the workspace does, so the shared target dir is reused.
    cp "$repo/Cargo.lock" "$dir/Cargo.lock"
    echo "testdata/$name: make manifests"
    make --no-print-directory -C "$dir" manifests
  done
fi
