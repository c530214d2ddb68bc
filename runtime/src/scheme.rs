//! The Scheme: which Rust type serves which group/version/kind, without discovery.
//!
//! Mirrors controller-runtime's `runtime.Scheme` (from apimachinery): every API package has an
//! `add_to_scheme(&mut Scheme)` that registers its kinds, `main` builds one Scheme from all of
//! them, and the manager, the caches, the fake API server and `make manifests` read it. A kbr
//! Scheme maps GVK <-> Rust type, GVK -> REST resource (plural) and scope, and produces the
//! project's CRDs ([`Scheme::crds`]). Custom kinds (types implementing [`CustomResource`]) are
//! registered with [`Scheme::add`]; built-in k8s-openapi kinds (`Pod`, `Deployment`) with
//! [`Scheme::add_builtin`], as a Kubebuilder `main.go` calls `clientgoscheme.AddToScheme`: they
//! are looked up like custom kinds but have no CRD. Controllers and clients of built-in kinds
//! work without registering them; the Scheme only answers for what it was told.
//!
//! ```
//! # use kbr_runtime::CustomResource;
//! # use schemars::JsonSchema;
//! # use serde::{Deserialize, Serialize};
//! # #[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
//! # #[kbr(group = "eventing.knative.dev", version = "v1alpha1", kind = "Broker", plural = "brokers", namespaced)]
//! # pub struct BrokerSpec {}
//! use kbr_runtime::Scheme;
//!
//! let mut scheme = Scheme::new();
//! scheme.add::<Broker>();
//! scheme.add::<Broker>(); // idempotent
//! let broker = scheme.get("eventing.knative.dev", "v1alpha1", "Broker").unwrap();
//! assert_eq!(broker.info().plural, "brokers");
//! let crds = scheme.crds().unwrap();
//! assert_eq!(crds[0].metadata.name.as_deref(), Some("brokers.eventing.knative.dev"));
//! ```

use std::any::TypeId;
use std::cmp::Ordering;
use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::core::{ApiResource, GroupVersionKind};

use kbr_crd::CrdError;
use kbr_crd::resource::{CustomResource, ResourceInfo, Scope};

/// Why [`Scheme::crds`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SchemeError {
    /// Two different Rust types were registered for one group/version/kind.
    #[error(
        "{gvk} is registered twice, by {first} and by {second}; each version of a kind must be \
         defined by one type"
    )]
    Conflict {
        /// `group/version, Kind=kind`.
        gvk: String,
        /// The type registered first.
        first: &'static str,
        /// The type registered later (ignored by lookups).
        second: &'static str,
    },
    /// Building or merging the CRD named `crd` failed.
    #[error("CustomResourceDefinition {crd}: {source}")]
    Crd {
        /// The CRD's name, `<plural>.<group>`.
        crd: String,
        /// What went wrong (boxed: CRD errors carry several names).
        #[source]
        source: Box<CrdError>,
    },
}

/// One registered kind version: its [`ResourceInfo`] and the Rust type behind it.
#[derive(Clone, Debug)]
pub struct Registration {
    info: ResourceInfo,
    type_id: TypeId,
    type_name: &'static str,
    /// Builds the CRD; `None` for a built-in kind.
    crd: Option<fn() -> Result<CustomResourceDefinition, CrdError>>,
}

impl Registration {
    fn of<K: CustomResource>() -> Self {
        Registration {
            info: K::INFO,
            type_id: TypeId::of::<K>(),
            type_name: std::any::type_name::<K>(),
            crd: Some(kbr_crd::build::<K>),
        }
    }

    fn builtin<K: kube::Resource<DynamicType = ()> + 'static>() -> Self {
        Registration {
            info: ResourceInfo::of::<K>(),
            type_id: TypeId::of::<K>(),
            type_name: std::any::type_name::<K>(),
            crd: None,
        }
    }

    /// Whether the kind is built into Kubernetes ([`Scheme::add_builtin`]): no CRD.
    pub fn is_builtin(&self) -> bool {
        self.crd.is_none()
    }

    /// The kind's identity and CRD settings.
    pub fn info(&self) -> &ResourceInfo {
        &self.info
    }

    /// The group/version/kind.
    pub fn gvk(&self) -> GroupVersionKind {
        GroupVersionKind::gvk(self.info.group, self.info.version, self.info.kind)
    }

    /// The REST resource (group, version, plural) kube's dynamic APIs take.
    pub fn api_resource(&self) -> ApiResource {
        self.info.api_resource()
    }

    /// Namespaced or cluster-scoped.
    pub fn scope(&self) -> Scope {
        self.info.scope
    }

    /// `TypeId` of the Rust type.
    pub fn type_id(&self) -> TypeId {
        self.type_id
    }

    /// Path of the Rust type, e.g. `knative_lite::api::eventing::v1alpha1::broker::Broker`.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// The single-version CRD of this kind version
    /// ([`CustomResourceExt::try_crd`](kbr_crd::CustomResourceExt::try_crd)); `None` for a
    /// built-in kind.
    ///
    /// # Errors
    /// See [`kbr_crd::build`].
    pub fn crd(&self) -> Option<Result<CustomResourceDefinition, CrdError>> {
        self.crd.map(|build| build())
    }
}

/// Sort key: group, kind, then version by Kubernetes priority (highest first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Key {
    group: &'static str,
    kind: &'static str,
    version: &'static str,
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.group, self.kind)
            .cmp(&(other.group, other.kind))
            .then_with(|| kbr_crd::compare_versions(other.version, self.version))
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The registry of a project's custom kinds (controller-runtime's `runtime.Scheme`).
///
/// Iteration ([`Scheme::iter`]) is ordered by group, then kind, then version in Kubernetes
/// priority order (`v1` before `v1beta1` before `v1alpha1`).
#[derive(Clone, Debug, Default)]
pub struct Scheme {
    kinds: BTreeMap<Key, Registration>,
    /// `(gvk, first type, second type)` of every conflicting registration, in order.
    conflicts: Vec<(String, &'static str, &'static str)>,
}

impl Scheme {
    /// An empty Scheme.
    pub fn new() -> Self {
        Scheme::default()
    }

    /// Registers kind `K` (one version of one kind). Idempotent: adding a type twice is a no-op.
    ///
    /// Mirrors `scheme.AddKnownTypes`. Several versions of one kind are registered as several
    /// types (`v1alpha1::Broker`, `v1::Broker`). Registering a *different* type under a GVK that
    /// is already taken keeps the first and makes [`Scheme::crds`] fail with
    /// [`SchemeError::Conflict`].
    pub fn add<K: CustomResource>(&mut self) -> &mut Self {
        self.insert(Registration::of::<K>());
        self
    }

    /// Registers the built-in kind `K`, a k8s-openapi type such as `Pod` (controller-runtime's
    /// `clientgoscheme.AddToScheme`, which Kubebuilder's `main.go` calls for the built-in
    /// types). Idempotent; the kind gets no CRD ([`Scheme::crds`] skips it) and its
    /// [`ResourceInfo`] is [`ResourceInfo::of`] `K`. A built-in kind and a custom kind of one
    /// group/version/kind conflict like two custom types.
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::Pod;
    /// use kbr_runtime::Scheme;
    ///
    /// let mut scheme = Scheme::new();
    /// scheme.add_builtin::<Pod>();
    /// let pod = scheme.get("", "v1", "Pod").unwrap();
    /// assert!(pod.is_builtin() && pod.crd().is_none());
    /// assert_eq!(pod.info().plural, "pods");
    /// assert!(scheme.contains::<Pod>());
    /// assert!(scheme.crds().unwrap().is_empty());
    /// ```
    pub fn add_builtin<K: kube::Resource<DynamicType = ()> + 'static>(&mut self) -> &mut Self {
        self.insert(Registration::builtin::<K>());
        self
    }

    /// Adds every kind of `other` (and its conflicts) to this Scheme.
    pub fn extend(&mut self, other: &Scheme) -> &mut Self {
        for registration in other.iter() {
            self.insert(registration.clone());
        }
        self.conflicts.extend(other.conflicts.iter().cloned());
        self
    }

    fn insert(&mut self, registration: Registration) {
        let info = registration.info;
        let key = Key {
            group: info.group,
            kind: info.kind,
            version: info.version,
        };
        match self.kinds.get(&key) {
            None => {
                self.kinds.insert(key, registration);
            }
            Some(existing) if existing.type_id == registration.type_id => {}
            Some(existing) => {
                let gvk = format!("{}/{}, Kind={}", info.group, info.version, info.kind);
                tracing::warn!(
                    gvk = %gvk,
                    first = existing.type_name,
                    second = registration.type_name,
                    "conflicting Scheme registration ignored"
                );
                self.conflicts
                    .push((gvk, existing.type_name, registration.type_name));
            }
        }
    }

    /// The registration of `group`/`version`/`kind`, if any (controller-runtime's
    /// `scheme.New(gvk)` / `Recognizes(gvk)`).
    pub fn get(&self, group: &str, version: &str, kind: &str) -> Option<&Registration> {
        self.iter().find(|registration| {
            let info = registration.info();
            info.group == group && info.version == version && info.kind == kind
        })
    }

    /// The registration of `gvk`, if any.
    pub fn get_gvk(&self, gvk: &GroupVersionKind) -> Option<&Registration> {
        self.get(&gvk.group, &gvk.version, &gvk.kind)
    }

    /// Every registered version of `group`/`kind`, highest priority first
    /// (`v1`, `v1beta1`, `v1alpha1`).
    pub fn versions_of<'a>(
        &'a self,
        group: &'a str,
        kind: &'a str,
    ) -> impl Iterator<Item = &'a Registration> + 'a {
        self.iter().filter(move |registration| {
            registration.info.group == group && registration.info.kind == kind
        })
    }

    /// The version of `group`/`kind` stored in etcd (the one with
    /// [`ResourceInfo::storage`] set), or `None` when no registered version is. With several,
    /// the highest priority one; [`Scheme::crds`] reports that as an error.
    pub fn storage_version(&self, group: &str, kind: &str) -> Option<&Registration> {
        self.iter().find(|registration| {
            let info = registration.info();
            info.group == group && info.kind == kind && info.storage
        })
    }

    /// The registration serving the REST resource `group`/`version`/`plural` (a GVR, as in
    /// `/apis/<group>/<version>/<plural>`), if any.
    pub fn get_resource(&self, group: &str, version: &str, plural: &str) -> Option<&Registration> {
        self.iter().find(|registration| {
            let info = registration.info();
            info.group == group && info.version == version && info.plural == plural
        })
    }

    /// The registration of the Rust type `K`, if it was added (controller-runtime's
    /// `scheme.ObjectKinds(obj)`).
    pub fn get_type<K: 'static>(&self) -> Option<&Registration> {
        let type_id = TypeId::of::<K>();
        self.iter()
            .find(|registration| registration.type_id == type_id)
    }

    /// Whether the Rust type `K` was added.
    pub fn contains<K: 'static>(&self) -> bool {
        self.get_type::<K>().is_some()
    }

    /// Every registration: by group, kind, then version priority.
    pub fn iter(&self) -> Iter<'_> {
        Iter(self.kinds.values())
    }

    /// Number of registered kind versions.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Whether nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// One CRD per registered custom kind, its versions merged ([`kbr_crd::merge`]), sorted by CRD
    /// name (`<plural>.<group>`); built-in kinds have none.
    ///
    /// # Errors
    /// [`SchemeError::Conflict`] when two types were registered for one GVK;
    /// [`SchemeError::Crd`] when a version's schema cannot be built or the versions of a kind
    /// cannot be merged (e.g. two storage versions).
    pub fn crds(&self) -> Result<Vec<CustomResourceDefinition>, SchemeError> {
        if let Some((gvk, first, second)) = self.conflicts.first() {
            return Err(SchemeError::Conflict {
                gvk: gvk.clone(),
                first,
                second,
            });
        }
        let mut by_name: BTreeMap<String, Vec<CustomResourceDefinition>> = BTreeMap::new();
        for registration in self.iter() {
            let Some(crd) = registration.crd() else {
                continue;
            };
            let name = registration.info.crd_name();
            let crd = crd.map_err(|source| SchemeError::Crd {
                crd: name.clone(),
                source: Box::new(source),
            })?;
            by_name.entry(name).or_default().push(crd);
        }
        by_name
            .into_iter()
            .map(|(name, versions)| {
                kbr_crd::merge(versions).map_err(|source| SchemeError::Crd {
                    crd: name,
                    source: Box::new(source),
                })
            })
            .collect()
    }
}

impl<'a> IntoIterator for &'a Scheme {
    type Item = &'a Registration;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// Iterator over a [`Scheme`]'s registrations, by group, kind, then version priority.
#[derive(Clone, Debug)]
pub struct Iter<'a>(std::collections::btree_map::Values<'a, Key, Registration>);

impl<'a> Iterator for Iter<'a> {
    type Item = &'a Registration;

    fn next(&mut self) -> Option<&'a Registration> {
        self.0.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back()
    }
}

impl ExactSizeIterator for Iter<'_> {}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::{Namespace, Pod};

    use super::*;

    #[test]
    fn built_in_kinds_are_looked_up_and_have_no_crd() {
        let mut scheme = Scheme::new();
        scheme
            .add_builtin::<Pod>()
            .add_builtin::<Deployment>()
            .add_builtin::<Namespace>()
            .add_builtin::<Pod>();
        assert_eq!(scheme.len(), 3);
        let deployment = scheme.get_resource("apps", "v1", "deployments");
        assert_eq!(
            deployment.map(|r| (r.info().kind, r.scope(), r.is_builtin())),
            Some(("Deployment", Scope::Namespaced, true))
        );
        assert_eq!(
            scheme.get_type::<Namespace>().map(Registration::scope),
            Some(Scope::Cluster)
        );
        assert_eq!(
            scheme.get("", "v1", "Pod").map(Registration::type_name),
            Some(std::any::type_name::<Pod>())
        );
        assert!(
            scheme
                .get("", "v1", "Pod")
                .is_some_and(|r| r.crd().is_none())
        );
        assert!(scheme.crds().is_ok_and(|crds| crds.is_empty()));
    }
}
