//! The merge types of server-side apply: which maps and lists are granular, atomic or keyed.
//!
//! Mirrors structured-merge-diff v6 `schema/elements.go` (atoms: scalar, list, map; element
//! relationships `atomic`, `associative`, `separable`) and kube-openapi's
//! `pkg/schemaconv/openapi.go`, which the API server uses to turn OpenAPI schemas into them:
//! - `x-kubernetes-list-type: atomic|set|map` (with `x-kubernetes-list-map-keys`); without it,
//!   `x-kubernetes-patch-strategy: merge` (with `x-kubernetes-patch-merge-key`); else atomic;
//! - `x-kubernetes-map-type: atomic|granular` on objects (and on a `$ref` to one);
//! - a schema without `type` accepts a scalar, an atomic list or a map of such values;
//! - unknown fields of an object under `x-kubernetes-preserve-unknown-fields` (or of an object
//!   without `properties`) are *deduced* (`__untyped_deduced_`): maps granular, lists atomic;
//!   an object with `properties` and no such flag has no unknown fields.
//!
//! Scalars are not told apart (the fake validates types with the CRD schema).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, OnceLock};

use serde_json::{Map, Value};

/// A reference to a merge type (`schema.TypeRef`).
#[derive(Clone, Debug)]
pub(crate) enum Ty {
    /// `__untyped_deduced_`: a scalar, an atomic list, or a granular map of deduced values.
    Deduced,
    /// `__untyped_atomic_`: a scalar, an atomic list or an atomic map.
    UntypedAtomic,
    /// A definition of the built-in registry ([`super::builtin`]), with the referring
    /// property's `x-kubernetes-map-type`.
    Named(Arc<Named>),
    /// A type written in place.
    Inline(Arc<Atom>),
}

/// A reference by name to a definition of the built-in registry, resolved once.
pub(crate) struct Named {
    pub(crate) name: Arc<str>,
    /// The referring property's `x-kubernetes-map-type`: `Some(true)` atomic, `Some(false)`
    /// granular, `None` as the definition says.
    pub(crate) map_atomic: Option<bool>,
    /// The atom the reference resolves to ([`Ty::atom`]). The registry is a static that never
    /// changes, so the first resolution is every later one's answer: caching it saves a
    /// lookup by name (and, for an overridden map type, a copy of the definition) at every
    /// node of every walk of every write.
    pub(crate) resolved: OnceLock<Arc<Atom>>,
}

impl Named {
    /// A reference to `name` with the referring property's map type.
    pub(crate) fn new(name: Arc<str>, map_atomic: Option<bool>) -> Self {
        Self {
            name,
            map_atomic,
            resolved: OnceLock::new(),
        }
    }
}

impl std::fmt::Debug for Named {
    // Not the resolved atom: definitions refer to themselves (JSONSchemaProps).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Named")
            .field(&self.name)
            .field(&self.map_atomic)
            .finish()
    }
}

/// What a value of a type may be (`schema.Atom`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Atom {
    pub(crate) scalar: bool,
    pub(crate) list: Option<ListType>,
    pub(crate) map: Option<MapType>,
}

/// A list (`schema.List`): atomic, a set (associative without keys) or a map-list (keys).
#[derive(Clone, Debug)]
pub(crate) struct ListType {
    pub(crate) elem: Ty,
    pub(crate) associative: bool,
    pub(crate) keys: Vec<String>,
}

/// A map or struct (`schema.Map`).
#[derive(Clone, Debug, Default)]
pub(crate) struct MapType {
    pub(crate) fields: HashMap<String, FieldType>,
    /// The type of fields not in `fields`; `None` when there may be none.
    pub(crate) elem: Option<Ty>,
    pub(crate) atomic: bool,
    /// The names of the `fields` with a `default`, computed once with the type so defaulting
    /// visits these instead of every declared field of every object it walks.
    pub(crate) defaulted: Vec<String>,
}

/// A declared field of a map (`schema.StructField`).
#[derive(Clone, Debug)]
pub(crate) struct FieldType {
    pub(crate) ty: Ty,
    /// Its `default`: used for missing key fields of map-list items, and by the built-in
    /// kinds' defaulting (`crate::rules::builtin`), which also applies the `{}` of structs.
    pub(crate) default: Option<Value>,
    /// Its strategic-merge-patch metadata (`crate::rules::patch::strategic`).
    pub(crate) patch: PatchMeta,
}

/// How a strategic merge patch treats a field: its `x-kubernetes-patch-strategy` (the Go
/// field's `patchStrategy` tag, comma-separated) and `x-kubernetes-patch-merge-key`, as
/// apimachinery `pkg/util/strategicpatch/meta.go` (`PatchMeta`) reads them. Kept for every
/// field, whatever its list type: server-side apply reads them only through [`Converter`].
#[derive(Clone, Debug, Default)]
pub(crate) struct PatchMeta {
    /// The strategies, e.g. `["merge"]`, `["retainKeys"]`, `["merge", "retainKeys"]`; empty
    /// when the field has none (lists are then replaced and maps merged).
    pub(crate) strategies: Vec<String>,
    /// The merge key of a list of objects merged by key, e.g. `name`; empty when none.
    pub(crate) merge_key: String,
}

impl PatchMeta {
    /// The metadata a property's schema declares.
    fn of(prop: &Value) -> Self {
        let text = |key: &str| prop.get(key).and_then(Value::as_str).unwrap_or("");
        let strategy = text("x-kubernetes-patch-strategy");
        Self {
            strategies: if strategy.is_empty() {
                Vec::new()
            } else {
                strategy.split(',').map(str::to_owned).collect()
            },
            merge_key: text("x-kubernetes-patch-merge-key").to_owned(),
        }
    }
}

pub(super) static DEDUCED: LazyLock<Arc<Atom>> = LazyLock::new(|| {
    Arc::new(Atom {
        scalar: true,
        list: Some(ListType {
            elem: Ty::UntypedAtomic,
            associative: false,
            keys: Vec::new(),
        }),
        map: Some(MapType {
            elem: Some(Ty::Deduced),
            ..MapType::default()
        }),
    })
});

pub(super) static UNTYPED_ATOMIC: LazyLock<Arc<Atom>> = LazyLock::new(|| {
    Arc::new(Atom {
        scalar: true,
        list: Some(ListType {
            elem: Ty::UntypedAtomic,
            associative: false,
            keys: Vec::new(),
        }),
        map: Some(MapType {
            elem: Some(Ty::UntypedAtomic),
            atomic: true,
            ..MapType::default()
        }),
    })
});

/// The name a `$ref` (or a one-element `allOf` of one) points to: its last path segment.
fn reference(schema: &Map<String, Value>) -> Option<&str> {
    let text = schema.get("$ref").and_then(Value::as_str).or_else(|| {
        match schema
            .get("allOf")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            Some([only]) => only.get("$ref").and_then(Value::as_str),
            _ => None,
        }
    })?;
    text.rsplit('/').next().filter(|n| !n.is_empty())
}

fn map_relationship(schema: &Map<String, Value>) -> Option<bool> {
    match schema.get("x-kubernetes-map-type").and_then(Value::as_str) {
        Some("atomic") => Some(true),
        Some("granular") => Some(false),
        _ => None,
    }
}

/// Converts an OpenAPI v3 schema into merge types (`convert` in kube-openapi's schemaconv).
#[derive(Clone, Copy)]
pub(crate) struct Converter {
    /// Whether unknown fields are preserved here (set by `x-kubernetes-preserve-unknown-fields`
    /// on this node or an ancestor).
    preserve_unknown: bool,
}

impl Converter {
    /// A converter at a schema root that does not preserve unknown fields.
    pub(crate) fn new() -> Self {
        Self {
            preserve_unknown: false,
        }
    }

    /// The atom of `schema` (`visitSpec`, `parseSchema`).
    pub(crate) fn atom(self, schema: &Value) -> Atom {
        let Value::Object(schema) = schema else {
            return (*DEDUCED).as_ref().clone();
        };
        let mut c = self;
        if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
            c.preserve_unknown = true;
        }
        match schema.get("type").and_then(Value::as_str).unwrap_or("") {
            "" => Atom {
                scalar: true,
                list: Some(c.list(schema)),
                map: Some(c.map(schema)),
            },
            "object" => Atom {
                map: Some(c.map(schema)),
                ..Atom::default()
            },
            "array" => Atom {
                list: Some(c.list(schema)),
                ..Atom::default()
            },
            _ => Atom {
                scalar: true,
                ..Atom::default()
            },
        }
    }

    /// The type a property (or `items`, `additionalProperties`) refers to (`makeOpenAPIRef`).
    pub(crate) fn reference(self, schema: &Value) -> Ty {
        if let Value::Object(map) = schema
            && let Some(name) = reference(map)
        {
            return Ty::Named(Arc::new(Named::new(Arc::from(name), map_relationship(map))));
        }
        Ty::Inline(Arc::new(self.atom(schema)))
    }

    /// `parseObject`, plus the `apiVersion`, `kind` and `metadata` the API server's OpenAPI
    /// builder adds to `x-kubernetes-embedded-resource` objects (apiextensions-apiserver
    /// `controller/openapi/builder`, `addEmbeddedProperties`).
    fn map(self, schema: &Map<String, Value>) -> MapType {
        let properties = schema.get("properties").and_then(Value::as_object);
        let mut fields: HashMap<String, FieldType> = properties
            .into_iter()
            .flatten()
            .map(|(name, prop)| {
                let default = prop.get("default").cloned();
                let field = FieldType {
                    ty: self.reference(prop),
                    default,
                    patch: PatchMeta::of(prop),
                };
                (name.clone(), field)
            })
            .collect();
        if schema.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true)) {
            add_type_and_object_meta(&mut fields);
        }
        let elem = match schema.get("additionalProperties") {
            None if self.preserve_unknown || fields.is_empty() => Some(Ty::Deduced),
            None | Some(Value::Bool(false)) => None,
            Some(Value::Bool(true)) => Some(Ty::Deduced),
            Some(additional) => Some(self.reference(additional)),
        };
        let mut defaulted: Vec<String> = fields
            .iter()
            .filter(|(_, field)| field.default.is_some())
            .map(|(name, _)| name.clone())
            .collect();
        defaulted.sort();
        MapType {
            fields,
            elem,
            atomic: map_relationship(schema) == Some(true),
            defaulted,
        }
    }

    /// `parseList`.
    fn list(self, schema: &Map<String, Value>) -> ListType {
        let text = |key: &str| schema.get(key).and_then(Value::as_str);
        let (associative, keys) = match (
            text("x-kubernetes-list-type"),
            text("x-kubernetes-patch-strategy"),
        ) {
            (Some("set"), _) => (true, Vec::new()),
            (Some("map"), _) => {
                let keys = schema
                    .get("x-kubernetes-list-map-keys")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect();
                (true, keys)
            }
            (Some(_), _) => (false, Vec::new()),
            (None, Some("merge" | "merge,retainKeys")) => {
                let key = text("x-kubernetes-patch-merge-key").map(str::to_owned);
                (true, key.into_iter().collect())
            }
            (None, _) => (false, Vec::new()),
        };
        let elem = match schema.get("items") {
            Some(items) => self.reference(items),
            None => Ty::UntypedAtomic,
        };
        ListType {
            elem,
            associative,
            keys,
        }
    }
}

/// The name of `ObjectMeta` in the built-in registry.
pub(crate) const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// `apiVersion`, `kind` (scalars) and `metadata` (`ObjectMeta`), as the API server's OpenAPI
/// builder sets them on a resource or embedded resource.
fn add_type_and_object_meta(fields: &mut HashMap<String, FieldType>) {
    let scalar = || FieldType {
        ty: Ty::Inline(Arc::new(Atom {
            scalar: true,
            ..Atom::default()
        })),
        default: None,
        patch: PatchMeta::default(),
    };
    fields.insert("apiVersion".into(), scalar());
    fields.insert("kind".into(), scalar());
    fields.insert(
        "metadata".into(),
        FieldType {
            ty: Ty::Named(Arc::new(Named::new(Arc::from(OBJECT_META), None))),
            default: None,
            patch: PatchMeta::default(),
        },
    );
}

/// The merge type of a custom resource whose version has `open_api_v3_schema`: the schema,
/// with `apiVersion`, `kind` and `metadata` as the API server's OpenAPI builder adds them
/// (apiextensions-apiserver `controller/openapi/builder`, `buildKubeNative`).
pub(crate) fn custom_resource(open_api_v3_schema: &Value) -> Ty {
    let mut atom = Converter::new().atom(open_api_v3_schema);
    if let Some(map) = &mut atom.map {
        add_type_and_object_meta(&mut map.fields);
    }
    Ty::Inline(Arc::new(atom))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn list_types_map_types_and_unknown_fields_follow_schemaconv() {
        let ty = custom_resource(&json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "entries": {"type": "array", "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["name"],
                            "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "args": {"type": "array", "items": {"type": "string"}},
                "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                             "properties": {"a": {"type": "string"}}},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                          "properties": {"known": {"type": "integer"}}}
            }}
        }}));
        let root = ty.atom();
        let spec = root.map.as_ref().map(|m| m.fields["spec"].ty.atom());
        let spec = spec
            .as_ref()
            .and_then(|s| s.map.as_ref())
            .expect("spec is a map");
        let list = |name: &str| spec.fields[name].ty.atom().list.clone().expect("a list");
        assert_eq!(
            (list("entries").associative, list("entries").keys),
            (true, vec!["name".to_owned()])
        );
        assert_eq!(
            (list("tags").associative, list("tags").keys.len()),
            (true, 0)
        );
        assert!(!list("args").associative);
        let map = |name: &str| spec.fields[name].ty.atom().map.clone().expect("a map");
        assert!(map("selector").atomic && map("selector").elem.is_none());
        assert!(matches!(map("extra").elem, Some(Ty::Deduced)));
        assert!(spec.elem.is_none());
        assert!(
            root.map
                .as_ref()
                .is_some_and(|m| m.fields.contains_key("metadata"))
        );
    }
}
