//! The merge types of the built-in kinds the fake serves, from the real API server's OpenAPI.
//!
//! `builtin_types.json` holds, for core/v1 Namespace, ConfigMap, Secret, Service, Pod,
//! ServiceAccount, Event; apps/v1 Deployment, ReplicaSet; coordination.k8s.io/v1 Lease;
//! events.k8s.io/v1 Event; admissionregistration.k8s.io/v1 Mutating/ValidatingWebhookConfiguration
//! and apiextensions.k8s.io/v1 CustomResourceDefinition, the definitions they reach as
//! kube-apiserver v1.36 publishes them at `/openapi/v3`, cut down to what server-side apply
//! reads (list and map types, merge keys, key defaults such as a container port's
//! `protocol: TCP`), and what decoding reads ([`crate::rules::decodable`]: types, formats,
//! required fields). `hack/merge-types.py` regenerates it. kube-apiserver builds its type
//! converter from the same documents (apimachinery `managedfields.NewTypeConverter`); other
//! kinds are deduced (maps granular, lists atomic).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use serde_json::Value;

use super::schema::{Atom, Converter, DEDUCED, Named, Ty, UNTYPED_ATOMIC};

/// The definitions by name, and the merge type of each `group/version/Kind` (by kind, then
/// group and version, so a lookup borrows its names): a reference to its definition, made once
/// so that it resolves once ([`Named`]) and every write only clones an `Arc`.
struct Registry {
    kinds: HashMap<String, Vec<(String, String, Ty)>>,
    definitions: HashMap<String, Arc<Atom>>,
}

/// `builtin_types.json`: `kinds` (`group/version/Kind` to a definition's name) and
/// `definitions` (OpenAPI v3 schemas by name, with `type`, `format`, `required`, `properties`,
/// `items`, `additionalProperties`, `$ref`, defaults and the merge extensions).
pub(crate) const DOCUMENT: &str = include_str!("builtin_types.json");

static REGISTRY: LazyLock<Registry> = LazyLock::new(|| {
    let doc: Value = serde_json::from_str(DOCUMENT).unwrap_or(Value::Null);
    let mut kinds: HashMap<String, Vec<(String, String, Ty)>> = HashMap::new();
    for (gvk, name) in doc["kinds"].as_object().into_iter().flatten() {
        let (Some(name), Some((group_version, kind))) = (name.as_str(), gvk.rsplit_once('/'))
        else {
            continue;
        };
        let (group, version) = group_version
            .rsplit_once('/')
            .unwrap_or(("", group_version));
        let ty = Ty::Named(Arc::new(Named::new(Arc::from(name), None)));
        let entry = (group.to_owned(), version.to_owned(), ty);
        kinds.entry(kind.to_owned()).or_default().push(entry);
    }
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
        .get(kind)?
        .iter()
        .find(|(g, v, _)| g == group && v == version)
        .map(|(_, _, ty)| ty.clone())
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

    /// Every `group/version/Kind` of the document is found by its parts, as the lookup by its
    /// formatted key found it, and nothing else is.
    #[test]
    fn kinds_are_found_by_group_version_and_kind() {
        let doc: Value = serde_json::from_str(include_str!("builtin_types.json")).unwrap();
        let kinds = doc["kinds"].as_object().unwrap();
        let mut found = 0;
        for (kind, types) in &REGISTRY.kinds {
            for (group, version, ty) in types {
                let name = kinds[&format!("{group}/{version}/{kind}")]
                    .as_str()
                    .unwrap();
                let Some(Ty::Named(named)) = kind_type(group, version, kind) else {
                    panic!("{group}/{version}/{kind} is not found");
                };
                assert_eq!(&*named.name, name);
                assert!(matches!(ty, Ty::Named(n) if n.name == named.name));
                found += 1;
            }
        }
        assert_eq!(found, kinds.len());
        assert!(kind_type("", "v1", "Deployment").is_none());
        assert!(kind_type("apps", "v2", "Deployment").is_none());
    }

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
