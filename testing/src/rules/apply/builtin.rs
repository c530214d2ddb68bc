//! The merge types of the built-in kinds the fake serves, from the real API server's OpenAPI.
//!
//! `builtin_types.json` holds, for core/v1 Namespace, ConfigMap, Secret, Service, Pod,
//! ServiceAccount, Event; apps/v1 Deployment, ReplicaSet; coordination.k8s.io/v1 Lease;
//! events.k8s.io/v1 Event; admissionregistration.k8s.io/v1 Mutating/ValidatingWebhookConfiguration
//! and apiextensions.k8s.io/v1 CustomResourceDefinition, the definitions they reach as
//! kube-apiserver v1.36 publishes them at `/openapi/v3`, cut down to what server-side apply
//! reads (list and map types, merge keys, key defaults such as a container port's
//! `protocol: TCP`). `hack/merge-types.py` regenerates it. kube-apiserver builds its type
//! converter from the same documents (apimachinery `managedfields.NewTypeConverter`); other
//! kinds are deduced (maps granular, lists atomic).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use serde_json::Value;

use super::schema::{Atom, Converter, DEDUCED, Named, Ty, UNTYPED_ATOMIC};

/// The definitions by name, and the merge type of each `group/version/Kind`: a reference to
/// its definition, made once so that it resolves once ([`Named`]) and every write only clones
/// an `Arc`.
struct Registry {
    kinds: HashMap<String, Ty>,
    definitions: HashMap<String, Arc<Atom>>,
}

static REGISTRY: LazyLock<Registry> = LazyLock::new(|| {
    let doc: Value =
        serde_json::from_str(include_str!("builtin_types.json")).unwrap_or(Value::Null);
    let kinds = doc["kinds"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(gvk, name)| {
            let name: Arc<str> = Arc::from(name.as_str()?);
            Some((gvk.clone(), Ty::Named(Arc::new(Named::new(name, None)))))
        })
        .collect();
    let definitions = doc["definitions"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, schema)| (name.clone(), Arc::new(Converter::new().atom(schema))))
        .collect();
    Registry { kinds, definitions }
});

/// The definition named `name`.
pub(crate) fn definition(name: &str) -> Option<Arc<Atom>> {
    REGISTRY.definitions.get(name).cloned()
}

/// The merge type of the built-in kind `group/version/kind`, when the fake knows it.
pub(crate) fn kind_type(group: &str, version: &str, kind: &str) -> Option<Ty> {
    REGISTRY
        .kinds
        .get(&format!("{group}/{version}/{kind}"))
        .cloned()
}

// Resolving a named type needs the definitions above; the other types resolve to themselves.
impl Ty {
    /// The atom this reference stands for (`Schema.Resolve`); an unknown name is deduced.
    pub(crate) fn atom(&self) -> Arc<Atom> {
        match self {
            Self::Deduced => DEDUCED.clone(),
            Self::UntypedAtomic => UNTYPED_ATOMIC.clone(),
            Self::Inline(atom) => atom.clone(),
            Self::Named(named) => named.resolved.get_or_init(|| resolve(named)).clone(),
        }
    }
}

/// What `named` stands for: its definition, with the referring property's map type when it
/// differs; an unknown name is deduced.
fn resolve(named: &Named) -> Arc<Atom> {
    let Some(atom) = definition(&named.name) else {
        return DEDUCED.clone();
    };
    match (named.map_atomic, &atom.map) {
        (Some(atomic), Some(map)) if map.atomic != atomic => {
            let mut changed = (*atom).clone();
            if let Some(m) = &mut changed.map {
                m.atomic = atomic;
            }
            Arc::new(changed)
        }
        _ => atom,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_ports_are_keyed_by_port_and_protocol_with_its_default() {
        let deployment = kind_type("apps", "v1", "Deployment").map(|t| t.atom());
        let container = definition("io.k8s.api.core.v1.Container");
        let ports = container
            .as_ref()
            .and_then(|c| c.map.as_ref())
            .map(|m| m.fields["ports"].ty.atom());
        let ports = ports.as_ref().and_then(|p| p.list.as_ref());
        assert!(deployment.is_some());
        assert_eq!(
            ports.map(|p| p.keys.clone()),
            Some(vec!["containerPort".to_owned(), "protocol".to_owned()])
        );
        let port = definition("io.k8s.api.core.v1.ContainerPort");
        let protocol = port
            .as_ref()
            .and_then(|p| p.map.as_ref())
            .and_then(|m| m.fields["protocol"].default.clone());
        assert_eq!(protocol, Some(Value::String("TCP".into())));
        assert!(definition(super::super::schema::OBJECT_META).is_some());
    }
}
