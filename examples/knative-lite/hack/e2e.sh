#!/usr/bin/env bash
# End-to-end check of knative-lite on a real cluster (the one of KUBECONFIG), against the
# "Real input, end to end" results of the spec (shared/knative-example.md):
#
#   1. `make install` (the CRDs), the default-channel-webhook ConfigMap;
#   2. the manager runs on this machine, its webhooks registered with the cluster at
#      WEBHOOK_URL (default https://host.docker.internal:9443: how a kind cluster reaches the host);
#   3. the samples are applied, then, with bounded retries:
#      - Broker `default` has exactly one Channel `default-broker-<5 chars>`, found by label,
#        owned by it (controller), whose provisioner ClusterChannelProvisioner/in-memory was
#        injected by the webhook; the Broker is Ready with the Channel's address;
#      - Broker `pubsub-channel`'s Channel keeps its explicit `gcp-pubsub`;
#      - the Channel sample without a provisioner was defaulted; the Service sample has its
#        Revision's Deployment `helloworld-python-00001`, its route and its URL.
#   Everything is removed again on exit.
#
# Exit codes: 0 all results hold, 1 a result does not hold (or a step failed), 3 no cluster.
#
#   bash hack/e2e.sh            # from examples/knative-lite
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
KUBECTL="${KUBECTL:-kubectl}"
WEBHOOK_URL="${WEBHOOK_URL:-https://host.docker.internal:9443}"
TRIES="${TRIES:-60}"   # retries, 2 s apart, per expected result
NS=default

if ! "$KUBECTL" cluster-info >/dev/null 2>&1; then
  echo "e2e: no cluster reachable through KUBECONFIG (kubectl cluster-info failed); nothing tested" >&2
  exit 3
fi

log="$(mktemp)"
manager_pid=""
created_namespace=""
cleanup() {
  set +e
  [[ -n "$created_namespace" ]] && "$KUBECTL" delete namespace knative-eventing --wait=false >/dev/null 2>&1
  if [[ -n "$manager_pid" ]]; then kill "$manager_pid" 2>/dev/null; wait "$manager_pid" 2>/dev/null; fi
  "$KUBECTL" delete --ignore-not-found -k config/samples --wait=false >/dev/null 2>&1
  "$KUBECTL" delete --ignore-not-found mutatingwebhookconfiguration mutating-webhook-configuration >/dev/null 2>&1
  "$KUBECTL" delete --ignore-not-found validatingwebhookconfiguration validating-webhook-configuration >/dev/null 2>&1
  make --no-print-directory uninstall ignore-not-found=true >/dev/null 2>&1
  rm -f "$log"
}
trap cleanup EXIT

failures=0
fail() { echo "e2e: FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "e2e: ok: $*"; }

# eventually DESCRIPTION COMMAND...: retries COMMAND (TRIES times, 2 s apart) until it succeeds.
eventually() {
  local what="$1"; shift
  for ((i = 0; i < TRIES; i++)); do
    if "$@" >/dev/null 2>&1; then pass "$what"; return 0; fi
    sleep 2
  done
  fail "$what"
  return 1
}

jp() { "$KUBECTL" get -n "$NS" "$1" -o "jsonpath=$2"; }
broker_channel() { # the names of the Channels labelled for Broker $1
  "$KUBECTL" get channels -n "$NS" -l "eventing.knative.dev/broker=$1" -o 'jsonpath={.items[*].metadata.name}'
}

echo "==> make install"
make --no-print-directory install

echo "==> the default-channel-webhook ConfigMap"
if ! "$KUBECTL" get namespace knative-eventing >/dev/null 2>&1; then
  "$KUBECTL" create namespace knative-eventing
  created_namespace=yes
fi
"$KUBECTL" apply -f config/samples/default_channel_webhook_configmap.yaml

echo "==> starting the manager (webhooks at $WEBHOOK_URL); log: $log"
cargo build --quiet --bin knative-lite
cargo run --quiet --bin knative-lite -- --webhook-local-url="$WEBHOOK_URL" \
  --health-probe-bind-address="${HEALTH_PROBE_ADDRESS:-:18081}" >"$log" 2>&1 &
manager_pid=$!

# Ready when the API server's defaulting of a Channel goes through our webhook.
defaulted_dry_run() {
  local out
  out="$(printf 'apiVersion: eventing.knative.dev/v1alpha1\nkind: Channel\nmetadata: {name: e2e-probe, namespace: %s}\nspec: {}\n' "$NS" |
    "$KUBECTL" create --dry-run=server -f - -o 'jsonpath={.spec.provisioner.name}')"
  [[ "$out" == in-memory ]]
}
if ! eventually "the webhooks serve (a dry-run Channel is defaulted)" defaulted_dry_run; then
  echo "---- manager log ----" >&2; tail -50 "$log" >&2
  exit 1
fi

echo "==> the samples"
"$KUBECTL" apply -k config/samples

one_default_channel() {
  local names; names="$(broker_channel default)"
  [[ "$names" =~ ^default-broker-[a-z0-9]{5}$ ]]
}
eventually "Broker default has exactly one Channel default-broker-<5 chars>" one_default_channel || true
channel="$(broker_channel default || true)"

owned_by_default() {
  [[ "$(jp "channel/$channel" '{.metadata.ownerReferences[?(@.controller==true)].kind}/{.metadata.ownerReferences[?(@.controller==true)].name}/{.metadata.ownerReferences[?(@.controller==true)].blockOwnerDeletion}')" == Broker/default/true ]]
}
eventually "Channel $channel is controlled by Broker default" owned_by_default || true

in_memory() {
  [[ "$(jp "channel/$1" '{.spec.provisioner.kind}/{.spec.provisioner.name}')" == ClusterChannelProvisioner/in-memory ]]
}
eventually "Channel $channel got ClusterChannelProvisioner/in-memory from the webhook" in_memory "$channel" || true

default_ready() {
  [[ "$(jp broker/default '{.status.conditions[?(@.type=="Ready")].status}')" == True ]] &&
    [[ "$(jp broker/default '{.status.address.hostname}')" == "$channel-kn-channel.$NS.svc.cluster.local" ]]
}
eventually "Broker default is Ready with its Channel's address" default_ready || true

pubsub_kept() {
  local c; c="$(broker_channel pubsub-channel)"
  [[ "$c" =~ ^pubsub-channel-broker-[a-z0-9]{5}$ ]] &&
    [[ "$(jp "channel/$c" '{.spec.provisioner.name}')" == gcp-pubsub ]]
}
eventually "Broker pubsub-channel's Channel keeps gcp-pubsub" pubsub_kept || true

eventually "the Channel sample without a provisioner was defaulted" in_memory channel-defaulted || true

service_revision() {
  [[ "$(jp service.serving.knative.dev/helloworld-python '{.status.latestCreatedRevisionName}')" == helloworld-python-00001 ]] &&
    [[ "$(jp service.serving.knative.dev/helloworld-python '{.status.url}')" == http://helloworld-python.$NS.example.com ]] &&
    "$KUBECTL" get -n "$NS" deployment/helloworld-python-00001 &&
    [[ "$(jp service/helloworld-python '{.spec.selector.serving\.knative\.dev/revision}')" == helloworld-python-00001 ]]
}
eventually "Service helloworld-python has Revision 00001, its Deployment, route and URL" service_revision || true

if ((failures > 0)); then
  echo "e2e: $failures result(s) did not hold; manager log:" >&2
  tail -50 "$log" >&2
  exit 1
fi
echo "e2e: all results hold"
