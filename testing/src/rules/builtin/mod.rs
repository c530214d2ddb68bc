//! The built-in kinds kube-apiserver serves itself, and what their registry strategies say about
//! them beyond storing them.
//!
//! - `metadata.generation`: only kinds whose apiserver strategy sets it have one (custom
//!   resources, CRDs, apps/v1 and batch/v1 kinds, Pods); ConfigMaps, Secrets, Namespaces,
//!   Services, ServiceAccounts, Events and Leases have none.
//! - `DELETE` answers: an object deleted at once is answered with a `Status` (`Success`, with
//!   its name and uid) — except Pods and ServiceAccounts, whose storage returns the deleted
//!   object (`ReturnDeletedObject`); an object kept by finalizers is answered with its new state.
//!
//! Not modelled: Deployments do not create ReplicaSets, ReplicaSets do not create Pods, Pods are
//! never scheduled or run, ServiceAccounts get no tokens.

use crate::machinery::registry::ResourceType;

/// Whether objects of `rt` carry `metadata.generation` (set to 1 on create, bumped on spec
/// changes): the kinds whose registry strategy sets it.
pub(crate) fn tracks_generation(rt: &ResourceType) -> bool {
    match rt.group.as_str() {
        "" => rt.kind == "Pod",
        "coordination.k8s.io" | "events.k8s.io" => false,
        _ => true,
    }
}

/// The groups of the kinds kube-apiserver serves itself; every other kind is a custom resource.
const BUILT_IN_GROUPS: &[&str] = &[
    "",
    "apps",
    "coordination.k8s.io",
    "events.k8s.io",
    "apiextensions.k8s.io",
    "admissionregistration.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
];

/// Whether `rt` is a custom resource (served through a CRD or registered by hand), whose
/// strategy is apiextensions-apiserver's `customresource/strategy.go`.
pub(crate) fn is_custom_resource(rt: &ResourceType) -> bool {
    !BUILT_IN_GROUPS.contains(&rt.group.as_str())
}

/// Whether a `PUT` of `rt` without `metadata.resourceVersion` overwrites the stored object
/// (the strategy's `AllowUnconditionalUpdate`): true for most core and apps kinds
/// (`pkg/registry/core/configmap/strategy.go` and the others); false for Leases
/// (`coordination/lease/strategy.go`), webhook configurations
/// (`admissionregistration/*/strategy.go`), CRDs and custom resources
/// (`apiextensions-apiserver/pkg/registry/*/strategy.go`), which answer 422.
pub(crate) fn allows_unconditional_update(rt: &ResourceType) -> bool {
    matches!(rt.group.as_str(), "" | "apps" | "events.k8s.io")
}

/// Whether a `PUT` of a missing object of `rt` creates it (the strategy's
/// `AllowCreateOnUpdate`): Leases (`coordination/lease/strategy.go`), Events
/// (`core/event/strategy.go`, serving both event APIs) and Services
/// (`core/service/strategy.go`).
pub(crate) fn allows_create_on_update(rt: &ResourceType) -> bool {
    matches!(
        (rt.group.as_str(), rt.kind.as_str()),
        ("coordination.k8s.io", "Lease") | ("", "Event" | "Service") | ("events.k8s.io", "Event")
    )
}

/// Whether `rt`'s metadata is validated by `pkg/apis/core/validation`'s `ValidateObjectMeta`,
/// which also requires every finalizer to be a standard one (`kubernetes`, `orphan`,
/// `foregroundDeletion`) or fully qualified (with a `/`): the core, apps, coordination and
/// events kinds.
pub(crate) fn requires_qualified_finalizers(rt: &ResourceType) -> bool {
    matches!(
        rt.group.as_str(),
        "" | "apps" | "coordination.k8s.io" | "events.k8s.io"
    )
}

/// Whether an immediate `DELETE` of `rt` answers with the deleted object rather than a
/// `Status` (the registry's `ReturnDeletedObject`).
pub(crate) fn returns_deleted_object(rt: &ResourceType) -> bool {
    rt.group.is_empty() && matches!(rt.plural.as_str(), "pods" | "serviceaccounts")
}
