//! Owner references: controller-runtime's `controllerutil.SetControllerReference`,
//! `SetOwnerReference` and apimachinery's `metav1.GetControllerOf`.
//!
//! An owner reference (`metadata.ownerReferences`) ties a dependent object to the object it
//! belongs to. The garbage collector deletes dependents once their owners are gone, and at most
//! one owner reference may be the *controller* (`controller: true`): the object whose
//! reconciler manages the dependent. [`Controller::owns`](crate::Controller::owns) enqueues that
//! controller owner when a dependent changes, so a reconciler that creates objects marks them
//! with [`set_controller_reference`] and hears about their changes.
//!
//! Rules (those of controller-runtime and the API server's garbage collector):
//! - a namespaced owner only owns objects in its own namespace;
//! - a cluster-scoped owner may own namespaced and cluster-scoped objects;
//! - a namespaced owner may not own a cluster-scoped object;
//! - an object has at most one controller; [`set_controller_reference`] refuses to replace
//!   another one ([`OwnershipError::AlreadyOwned`], controller-runtime's `AlreadyOwnedError`).
//!
//! The owner must have been read from (or created on) the API server: a reference names the
//! owner's `uid`.
//!
//! ```
//! use kbr_runtime::k8s_openapi::api::apps::v1::Deployment;
//! use kbr_runtime::k8s_openapi::api::core::v1::Service;
//! use kbr_runtime::ownership::{controller_of, set_controller_reference};
//!
//! let mut web = Deployment::default();
//! web.metadata.name = Some("web".into());
//! web.metadata.namespace = Some("default".into());
//! web.metadata.uid = Some("6f1c…".into()); // as read from the API server
//!
//! let mut svc = Service::default();
//! svc.metadata.name = Some("web".into());
//! svc.metadata.namespace = Some("default".into());
//! set_controller_reference(&web, &mut svc)?;
//!
//! let owner = controller_of(&svc).expect("a controller reference");
//! assert_eq!((owner.kind.as_str(), owner.name.as_str()), ("Deployment", "web"));
//! assert_eq!(owner.block_owner_deletion, Some(true));
//! # Ok::<(), kbr_runtime::ownership::OwnershipError>(())
//! ```

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Resource;

use crate::scoped::{is_namespaced, kind_of};

/// Why an owner reference could not be set.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum OwnershipError {
    /// The object already has a different controller: controller-runtime's `AlreadyOwnedError`.
    /// Two controllers fighting over one object is a bug; delete the object or remove the
    /// other reference deliberately.
    #[error(
        "{object} is already owned by another {} controller {}",
        .owner.kind,
        .owner.name
    )]
    AlreadyOwned {
        /// The dependent, as `Kind namespace/name` (or `Kind name` when cluster-scoped).
        object: String,
        /// The controller reference already on the object.
        owner: Box<OwnerReference>,
    },

    /// A namespaced owner was given a cluster-scoped dependent.
    #[error(
        "cluster-scoped resource must not have a namespace-scoped owner, owner's namespace {owner_namespace}"
    )]
    ClusterScopedDependent {
        /// The owner's namespace.
        owner_namespace: String,
    },

    /// Owner and dependent live in different namespaces.
    #[error(
        "cross-namespace owner references are disallowed, owner's namespace {owner_namespace}, obj's namespace {object_namespace}"
    )]
    CrossNamespace {
        /// The owner's namespace.
        owner_namespace: String,
        /// The dependent's namespace (empty when unset).
        object_namespace: String,
    },

    /// The owner has no `metadata.name` or `metadata.uid` yet (it was not read from the API
    /// server); an owner reference needs both.
    #[error("the owner {kind} has no metadata.{field}; read or create it on the API server first")]
    IncompleteOwner {
        /// The owner's kind.
        kind: String,
        /// `name` or `uid`.
        field: &'static str,
    },
}

impl From<OwnershipError> for crate::Error {
    /// Wraps the error as [`crate::Error::Other`], so `?` works in reconcilers.
    fn from(error: OwnershipError) -> Self {
        crate::Error::other(error)
    }
}

/// Makes `owner` the controller of `object`: controller-runtime's
/// `controllerutil.SetControllerReference`.
///
/// Adds (or updates in place, when `object` already references `owner`'s group, kind and name)
/// an owner reference with `controller: true` and `blockOwnerDeletion: true`. Only changes
/// `object` in memory; write it with [`Client::create`](crate::Client::create) or
/// [`Client::update`](crate::Client::update).
///
/// # Errors
/// [`OwnershipError::AlreadyOwned`] when another object is already `object`'s controller;
/// [`OwnershipError::CrossNamespace`] / [`OwnershipError::ClusterScopedDependent`] when the
/// scopes do not allow the reference; [`OwnershipError::IncompleteOwner`] when `owner` has no
/// name or uid.
///
/// ```
/// use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
/// use kbr_runtime::ownership::{OwnershipError, set_controller_reference};
///
/// let owner = |name: &str| {
///     let mut cm = ConfigMap::default();
///     cm.metadata.name = Some(name.into());
///     cm.metadata.namespace = Some("default".into());
///     cm.metadata.uid = Some(format!("uid-{name}"));
///     cm
/// };
/// let mut child = ConfigMap::default();
/// child.metadata.namespace = Some("default".into());
/// set_controller_reference(&owner("a"), &mut child)?;
/// set_controller_reference(&owner("a"), &mut child)?; // idempotent
/// assert!(matches!(
///     set_controller_reference(&owner("b"), &mut child),
///     Err(OwnershipError::AlreadyOwned { .. })
/// ));
/// # Ok::<(), OwnershipError>(())
/// ```
pub fn set_controller_reference<O, K>(owner: &O, object: &mut K) -> Result<(), OwnershipError>
where
    O: Resource<DynamicType = ()> + 'static,
    K: Resource<DynamicType = ()> + 'static,
{
    let reference = OwnerReference {
        controller: Some(true),
        block_owner_deletion: Some(true),
        ..owner_reference(owner)?
    };
    validate_scopes(owner, &*object)?;
    if let Some(existing) = controller_of(&*object)
        && !refer_to_same_object(existing, &reference)
    {
        return Err(OwnershipError::AlreadyOwned {
            object: describe(&*object),
            owner: Box::new(existing.clone()),
        });
    }
    upsert(object, reference);
    Ok(())
}

/// Adds `owner` as a plain (non-controller) owner of `object`: controller-runtime's
/// `controllerutil.SetOwnerReference`.
///
/// The garbage collector deletes `object` once all its owners are gone; no controller is
/// notified of its changes. An existing reference to the same owner (group, kind, name) is
/// replaced — dropping its `controller` and `blockOwnerDeletion` flags, as controller-runtime
/// does. Only changes `object` in memory.
///
/// # Errors
/// As [`set_controller_reference`], except [`OwnershipError::AlreadyOwned`].
///
/// ```
/// use kbr_runtime::k8s_openapi::api::core::v1::{ConfigMap, Namespace};
/// use kbr_runtime::ownership::{controller_of, set_owner_reference};
///
/// let mut ns = Namespace::default(); // cluster-scoped owners may own namespaced objects
/// ns.metadata.name = Some("team-a".into());
/// ns.metadata.uid = Some("1234".into());
/// let mut cm = ConfigMap::default();
/// cm.metadata.namespace = Some("team-a".into());
/// set_owner_reference(&ns, &mut cm)?;
/// assert_eq!(cm.metadata.owner_references.as_ref().map(Vec::len), Some(1));
/// assert!(controller_of(&cm).is_none());
/// # Ok::<(), kbr_runtime::ownership::OwnershipError>(())
/// ```
pub fn set_owner_reference<O, K>(owner: &O, object: &mut K) -> Result<(), OwnershipError>
where
    O: Resource<DynamicType = ()> + 'static,
    K: Resource<DynamicType = ()> + 'static,
{
    let reference = owner_reference(owner)?;
    validate_scopes(owner, &*object)?;
    upsert(object, reference);
    Ok(())
}

/// The controller reference of `object` (the owner reference with `controller: true`), if
/// any: apimachinery's `metav1.GetControllerOf`.
///
/// ```
/// use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
/// assert!(kbr_runtime::ownership::controller_of(&ConfigMap::default()).is_none());
/// ```
pub fn controller_of<K: Resource>(object: &K) -> Option<&OwnerReference> {
    object
        .meta()
        .owner_references
        .as_ref()?
        .iter()
        .find(|r| r.controller == Some(true))
}

/// A plain owner reference to `owner` (apiVersion, kind, name, uid).
fn owner_reference<O: Resource<DynamicType = ()>>(
    owner: &O,
) -> Result<OwnerReference, OwnershipError> {
    let meta = owner.meta();
    let incomplete = |field| OwnershipError::IncompleteOwner {
        kind: kind_of::<O>(),
        field,
    };
    if meta.name.as_deref().is_none_or(str::is_empty) {
        return Err(incomplete("name"));
    }
    if meta.uid.as_deref().is_none_or(str::is_empty) {
        return Err(incomplete("uid"));
    }
    owner.owner_ref(&()).ok_or_else(|| incomplete("uid"))
}

/// The namespace of a namespaced object (`None` for cluster-scoped kinds or when unset).
fn namespace_of<K: Resource + 'static>(object: &K) -> Option<&str> {
    if !is_namespaced::<K>() {
        return None;
    }
    object
        .meta()
        .namespace
        .as_deref()
        .filter(|ns| !ns.is_empty())
}

/// controller-runtime's `validateOwner`.
fn validate_scopes<O, K>(owner: &O, object: &K) -> Result<(), OwnershipError>
where
    O: Resource + 'static,
    K: Resource + 'static,
{
    let Some(owner_ns) = namespace_of(owner) else {
        return Ok(());
    };
    if !is_namespaced::<K>() {
        return Err(OwnershipError::ClusterScopedDependent {
            owner_namespace: owner_ns.to_string(),
        });
    }
    match namespace_of(object) {
        Some(ns) if ns == owner_ns => Ok(()),
        other => Err(OwnershipError::CrossNamespace {
            owner_namespace: owner_ns.to_string(),
            object_namespace: other.unwrap_or_default().to_string(),
        }),
    }
}

/// The group of an `apiVersion` (`""` for the core group).
fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// controller-runtime's `referSameObject`: same group, kind and name (any version, any uid).
fn refer_to_same_object(a: &OwnerReference, b: &OwnerReference) -> bool {
    group_of(&a.api_version) == group_of(&b.api_version) && a.kind == b.kind && a.name == b.name
}

/// Replaces the reference to the same object, or appends (controller-runtime's `upsertOwnerRef`).
fn upsert<K: Resource>(object: &mut K, reference: OwnerReference) {
    let references = object.meta_mut().owner_references.get_or_insert_default();
    match references
        .iter_mut()
        .find(|r| refer_to_same_object(r, &reference))
    {
        Some(existing) => *existing = reference,
        None => references.push(reference),
    }
}

fn describe<K: Resource<DynamicType = ()>>(object: &K) -> String {
    let meta = object.meta();
    let name = meta.name.as_deref().or(meta.generate_name.as_deref());
    match (meta.namespace.as_deref(), name) {
        (Some(ns), Some(name)) => format!("{} {ns}/{name}", kind_of::<K>()),
        (None, Some(name)) => format!("{} {name}", kind_of::<K>()),
        (_, None) => kind_of::<K>(),
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};

    use super::*;

    fn cm(ns: &str, name: &str) -> ConfigMap {
        let mut cm = ConfigMap::default();
        cm.metadata.namespace = Some(ns.into());
        cm.metadata.name = Some(name.into());
        cm.metadata.uid = Some(format!("uid-{ns}-{name}"));
        cm
    }

    #[test]
    fn controller_reference_is_added_once_and_updated_in_place() {
        let mut owner = cm("a", "owner");
        let mut child = cm("a", "child");
        assert_eq!(set_controller_reference(&owner, &mut child), Ok(()));
        owner.metadata.uid = Some("recreated".into());
        assert_eq!(set_controller_reference(&owner, &mut child), Ok(()));
        let refs = child.metadata.owner_references.clone().unwrap_or_default();
        assert_eq!(refs.len(), 1);
        assert_eq!(refs[0].uid, "recreated");
        assert_eq!(refs[0].api_version, "v1");
        assert_eq!(refs[0].controller, Some(true));
        assert_eq!(refs[0].block_owner_deletion, Some(true));
    }

    #[test]
    fn another_controller_is_refused_but_plain_owners_are_fine() {
        let mut child = cm("a", "child");
        assert!(set_controller_reference(&cm("a", "first"), &mut child).is_ok());
        let err = set_controller_reference(&cm("a", "second"), &mut child).unwrap_err();
        assert!(matches!(err, OwnershipError::AlreadyOwned { .. }));
        assert_eq!(
            err.to_string(),
            "ConfigMap a/child is already owned by another ConfigMap controller first"
        );
        assert!(set_owner_reference(&cm("a", "second"), &mut child).is_ok());
        assert_eq!(child.metadata.owner_references.map(|r| r.len()), Some(2));
    }

    #[test]
    fn same_name_in_another_group_is_another_owner() {
        let deploy = Deployment {
            metadata: cm("a", "first").metadata,
            ..Deployment::default()
        };
        let mut child = cm("a", "child");
        assert!(set_controller_reference(&cm("a", "first"), &mut child).is_ok());
        assert!(set_controller_reference(&deploy, &mut child).is_err());
        assert!(set_owner_reference(&deploy, &mut child).is_ok());
        assert_eq!(child.metadata.owner_references.map(|r| r.len()), Some(2));
    }

    #[test]
    fn scopes() {
        let mut ns = Namespace::default();
        ns.metadata.name = Some("team".into());
        ns.metadata.uid = Some("1".into());
        // Cluster-scoped owner of a namespaced object: fine.
        assert!(set_controller_reference(&ns, &mut cm("a", "child")).is_ok());
        // Namespaced owner of a cluster-scoped object: refused.
        let mut other = ns.clone();
        assert_eq!(
            set_owner_reference(&cm("a", "owner"), &mut other),
            Err(OwnershipError::ClusterScopedDependent {
                owner_namespace: "a".into()
            })
        );
        // Across namespaces: refused.
        assert_eq!(
            set_controller_reference(&cm("a", "owner"), &mut cm("b", "child")),
            Err(OwnershipError::CrossNamespace {
                owner_namespace: "a".into(),
                object_namespace: "b".into()
            })
        );
    }

    #[test]
    fn owner_needs_name_and_uid() {
        let mut owner = cm("a", "owner");
        owner.metadata.uid = None;
        assert_eq!(
            set_controller_reference(&owner, &mut cm("a", "child")),
            Err(OwnershipError::IncompleteOwner {
                kind: "ConfigMap".into(),
                field: "uid"
            })
        );
    }
}
