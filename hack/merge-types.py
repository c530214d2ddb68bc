#!/usr/bin/env python3
"""Regenerates testing/src/rules/apply/builtin_types.json: the merge types (list types, map
types, patch merge keys) and defaults of the built-in kinds the fake API server serves, as a
real kube-apiserver publishes them in its OpenAPI v3 documents.

Usage: fetch these documents from a running kube-apiserver (envtest's, `KUBEBUILDER_ASSETS`) into
DIR, named core.json, apps.json, batch.json, coordination.json, events.json,
admissionregistration.json and apiextensions.json (GET /openapi/v3/api/v1, /openapi/v3/apis/apps/v1, ...), then run
    python3 hack/merge-types.py DIR testing/src/rules/apply/builtin_types.json

Only what server-side apply, strategic merge patch and decoding read is kept: type, format,
required, properties, items,
additionalProperties, $ref, x-kubernetes-list-type/-list-map-keys/-map-type/-preserve-unknown-fields
(kube-openapi pkg/schemaconv), x-kubernetes-patch-strategy/-patch-merge-key on every property that
has them (server-side apply reads them only where there is no list type; strategic merge patch
reads them everywhere, as apimachinery pkg/util/strategicpatch reads the Go types' `patchStrategy`
and `patchMergeKey` tags they come from: `merge`, `retainKeys`, `merge,retainKeys`, `replace`),
and defaults (the declarative ones and the zero values Go writes for fields that are not pointers:
`{}`, `""`, `0`), which the fake applies to built-in kinds as the API server's decoding does.
"""
import json
import sys

KINDS = [
    ("core", "", "v1", ["Namespace", "ConfigMap", "Secret", "Service", "Pod", "ServiceAccount", "Event"]),
    ("apps", "apps", "v1", ["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"]),
    ("batch", "batch", "v1", ["Job", "CronJob"]),
    ("coordination", "coordination.k8s.io", "v1", ["Lease"]),
    ("events", "events.k8s.io", "v1", ["Event"]),
    ("admissionregistration", "admissionregistration.k8s.io", "v1",
     ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]),
    ("apiextensions", "apiextensions.k8s.io", "v1", ["CustomResourceDefinition"]),
]
KEEP = ["type", "format", "required", "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type",
        "x-kubernetes-preserve-unknown-fields", "x-kubernetes-patch-strategy",
        "x-kubernetes-patch-merge-key"]


def main(src, dest):
    defs, kinds = {}, {}
    for doc, group, version, names in KINDS:
        with open(f"{src}/{doc}.json") as f:
            schemas = json.load(f)["components"]["schemas"]
        for name, d in schemas.items():
            defs.setdefault(name, d)
            for gvk in d.get("x-kubernetes-group-version-kind", []):
                if (gvk["group"], gvk["version"]) == (group, version) and gvk["kind"] in names:
                    kinds[f"{group}/{version}/{gvk['kind']}"] = name
    needed = set()

    def ref(sch):
        text = sch.get("$ref")
        all_of = sch.get("allOf")
        if text is None and all_of and len(all_of) == 1:
            text = all_of[0].get("$ref")
        return text and text.rsplit("/", 1)[-1]

    def strip(sch):
        out = {}
        name = ref(sch)
        if name:
            out["$ref"] = name
            needed.add(name)
        for k in KEEP:
            if k in sch:
                out[k] = sch[k]
        if "default" in sch:
            out["default"] = sch["default"]
        if "properties" in sch:
            out["properties"] = {k: strip(v) for k, v in sch["properties"].items()}
        if "items" in sch:
            out["items"] = strip(sch["items"])
        extra = sch.get("additionalProperties")
        if extra is not None:
            out["additionalProperties"] = strip(extra) if isinstance(extra, dict) else extra
        return out

    result, todo = {}, list(kinds.values())
    while todo:
        name = todo.pop()
        if name not in result:
            result[name] = strip(defs[name])
            todo.extend(needed - set(result))
    # kube-openapi schemaconv: Quantity is an untyped scalar, RawExtension untyped and atomic.
    for name, replacement in [
        ("io.k8s.apimachinery.pkg.api.resource.Quantity", {"type": "string"}),
        ("io.k8s.apimachinery.pkg.runtime.RawExtension", {"x-kubernetes-map-type": "atomic"}),
    ]:
        if name in result:
            result[name] = replacement
    entries = lambda items: ",\n".join(
        f"  {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}" for k, v in items)
    with open(dest, "w") as f:
        f.write('{"kinds": {\n' + entries(sorted(kinds.items())) + '\n}, "definitions": {\n'
                + entries(sorted(result.items())) + "\n}}\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
