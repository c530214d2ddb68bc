//! schemars' definitions inlined at their `$ref`s, so that each k8s-openapi type is known by
//! name wherever it sits.
//!
//! A CRD schema cannot hold `$ref`s. kbr generates schemas with definitions anyway
//! ([`super::schema_settings`]: `inline_subschemas` off) and inlines them here, because a `$ref`
//! names the type behind a node: `#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity`
//! is k8s-openapi's `Quantity` whether the field is `Quantity`, `Option<Quantity>`, a list item,
//! a map value, a type parameter (`Range<Quantity>`), inside k8s-openapi's own structs or behind
//! a type alias. Inlined by schemars, a `Quantity` and an `IntOrString` look the same once a
//! field's doc comment replaces their description. Each node inlined from one of the types of
//! [`super::k8s_types`] is tagged with its name ([`TYPE_NAME`]) for the shape pass.
//!
//! The result is what schemars' own inlining produces, with the tags added:
//! - the `$ref`'s siblings (a field's description, default, markers; an internal enum tag's
//!   `properties` and `required`) apply on top of the definition, as schemars applies them to
//!   an inlined subschema;
//! - `Option<T>` of a referenced `T` (`anyOf: [{$ref}, {type: null}]`) becomes what schemars'
//!   `Option` makes of an inlined `T`: `null` added to `T`'s `type`/`enum`/`const` when `T` has
//!   no subschemas of its own, else the `anyOf` stays;
//! - then the OpenAPI 3.0 transforms of [`schemars::generate::SchemaSettings::openapi3`] run on
//!   the whole schema, as schemars runs them on a root schema.
//!
//! A `$ref` to a definition that is being inlined (a recursive type) stays; the caller reports
//! it ([`super::schema::leftover_definitions`]).

use schemars::Schema;
use schemars::generate::SchemaSettings;
use schemars::transform::{Transform, transform_subschemas};
use serde_json::{Map, Value};

use super::k8s_types::{self, TYPE_NAME};

/// The key tagging every node inlined from a definition with the definition's name (the Rust
/// type's schemars name, e.g. `Setting`), so the shape pass can name the type in errors; it
/// removes the tag.
pub(crate) const DEFINITION: &str = "x-kbr-definition";

/// Where schemars puts definitions in an OpenAPI 3.0 root schema, and where `$ref`s point.
const DEFINITIONS_KEY: &str = "components";

/// The prefix of every `$ref` into the definitions.
const REF_PREFIX: &str = "#/components/schemas/";

/// Inlines every definition of `schema` (a root schema from [`super::schema_settings`]) at its
/// `$ref`s, drops the definitions and runs schemars' OpenAPI 3.0 transforms. A schema without
/// definitions (already inlined) only gets the transforms.
pub(crate) fn inline(mut schema: Schema) -> Value {
    let mut definitions = Map::new();
    if let Some(components) = schema.remove(DEFINITIONS_KEY) {
        definitions.insert(DEFINITIONS_KEY.to_owned(), components);
    }
    let definitions = Schema::from(definitions);
    Inliner {
        definitions: &definitions,
        inlining: Vec::new(),
    }
    .transform(&mut schema);
    for transform in &mut SchemaSettings::openapi3().transforms {
        transform.transform(&mut schema);
    }
    schema.to_value()
}

/// Inlines `$ref`s into `definitions`, tracking the ones being inlined (outermost first).
struct Inliner<'a> {
    definitions: &'a Schema,
    inlining: Vec<String>,
}

impl Transform for Inliner<'_> {
    fn transform(&mut self, schema: &mut Schema) {
        let reference = schema
            .as_object_mut()
            .and_then(|object| match object.get("$ref") {
                Some(Value::String(reference)) if self.resolvable(reference) => object
                    .remove("$ref")
                    .and_then(|r| r.as_str().map(str::to_owned)),
                _ => None,
            });
        let option = reference.is_none() && is_option_of_ref(schema);
        self.tag_byte_string(schema);
        transform_subschemas(self, schema);
        if let Some(reference) = reference {
            let mut target = self.resolve(&reference);
            if let Some(siblings) = schema.as_object_mut().map(std::mem::take) {
                apply_siblings(&mut target, siblings);
            }
            *schema = target;
        } else if option {
            option_of_inlined(schema);
        }
    }
}

impl Inliner<'_> {
    /// Whether `reference` points into the definitions and is not being inlined already.
    fn resolvable(&self, reference: &str) -> bool {
        reference.starts_with(REF_PREFIX)
            && !self.inlining.iter().any(|open| open == reference)
            && self.definitions.pointer(reference).is_some()
    }

    /// The definition `reference` points to, inlined itself and tagged when it is a
    /// k8s-openapi type of [`k8s_types`].
    fn resolve(&mut self, reference: &str) -> Schema {
        let mut target = self
            .definitions
            .pointer(reference)
            .and_then(|value| Schema::try_from(value.clone()).ok())
            .unwrap_or_default();
        self.inlining.push(reference.to_owned());
        self.transform(&mut target);
        self.inlining.pop();
        let name = reference.trim_start_matches(REF_PREFIX);
        if let Some(object) = target.as_object_mut() {
            if k8s_types::is_known(name) {
                object.insert(TYPE_NAME.into(), name.into());
            }
            object.insert(DEFINITION.into(), name.into());
        }
        target
    }

    /// k8s-openapi writes its `ByteString` fields (Go `[]byte`) inline, as
    /// `{type: string, format: byte}`: inside a k8s-openapi definition, such a node is one.
    fn tag_byte_string(&self, schema: &mut Schema) {
        let inside_k8s_openapi = self
            .inlining
            .last()
            .is_some_and(|reference| reference.starts_with(&format!("{REF_PREFIX}io.k8s.")));
        if let Some(object) = schema.as_object_mut()
            && inside_k8s_openapi
            && object.get("type") == Some(&Value::from("string"))
            && object.get("format") == Some(&Value::from("byte"))
        {
            object.insert(TYPE_NAME.into(), k8s_types::BYTE_STRING.into());
        }
    }
}

/// `anyOf: [{$ref: ...}, <null>]` with nothing else in the `anyOf`: what schemars' `Option<T>`
/// makes of a `T` it refers to.
fn is_option_of_ref(schema: &Schema) -> bool {
    let Some(Value::Array(branches)) = schema.get("anyOf") else {
        return false;
    };
    matches!(branches.as_slice(), [first, second]
        if first.as_object().is_some_and(|o| o.len() == 1 && o.contains_key("$ref"))
            && is_null_schema(second))
}

fn is_null_schema(value: &Value) -> bool {
    match value.get("type") {
        Some(Value::String(type_)) => type_ == "null",
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        _ => false,
    }
}

/// Rewrites `anyOf: [T, null]` (T inlined now) the way schemars' `Option` treats an inlined `T`
/// (`schemars::_private::allow_null`): `T` itself with `null` allowed when it has no
/// subschemas, else the `anyOf` as it is. The other keys of the node (a field's description,
/// default, markers) apply on top, as they would have on the inlined schema.
fn option_of_inlined(schema: &mut Schema) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    let Some(Value::Array(mut branches)) = object.remove("anyOf") else {
        return;
    };
    let inner = branches.swap_remove(0);
    let nullable = match inner {
        Value::Bool(true) => Some(Schema::default()),
        Value::Bool(false) => Some(schemars::json_schema!({"type": "null"})),
        Value::Object(inner) if is_option(&inner) => Some(Schema::from(inner)),
        Value::Object(inner) if has_subschemas(&inner) => {
            branches.insert(0, Value::Object(inner));
            None
        }
        Value::Object(mut inner) => {
            allow_null(&mut inner);
            Some(Schema::from(inner))
        }
        other => {
            branches.insert(0, other);
            None
        }
    };
    match nullable {
        Some(mut target) => {
            apply_siblings(&mut target, std::mem::take(object));
            *schema = target;
        }
        None => {
            object.insert("anyOf".into(), Value::Array(branches));
        }
    }
}

/// `{anyOf: [.., null]}` and nothing else: already an `Option`.
fn is_option(object: &Map<String, Value>) -> bool {
    object.len() == 1
        && object
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|branches| branches.iter().any(is_null_schema))
}

/// Whether the node has subschemas a `null` cannot be merged into.
fn has_subschemas(object: &Map<String, Value>) -> bool {
    ["if", "allOf", "anyOf", "oneOf", "$ref"]
        .iter()
        .any(|key| object.contains_key(*key))
}

/// Adds `null` to the node's `type`, `const` (as an `enum`) or `enum`.
fn allow_null(object: &mut Map<String, Value>) {
    match object.get_mut("type") {
        Some(Value::Array(types)) if !types.iter().any(|t| t == "null") => {
            types.push("null".into());
        }
        Some(type_ @ Value::String(_)) if type_ != "null" => {
            let single = std::mem::take(type_);
            *type_ = Value::Array(vec![single, "null".into()]);
        }
        _ => {}
    }
    if let Some(constant) = object.remove("const") {
        if !constant.is_null() {
            object.insert("enum".into(), Value::Array(vec![constant, Value::Null]));
        }
    } else if let Some(Value::Array(values)) = object.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
}

/// Applies the keys written beside a `$ref` (or an `Option`'s `anyOf`) to the inlined
/// `target`: `properties` and `required` are merged (the sibling's first, as schemars puts an
/// internal enum tag first), every other key replaces the definition's.
fn apply_siblings(target: &mut Schema, siblings: Map<String, Value>) {
    if siblings.is_empty() {
        return;
    }
    if target.as_object().is_none() {
        // `true` accepts anything: the siblings alone say the same; `false` stays `false`.
        if target.as_bool() == Some(false) {
            return;
        }
        *target = Schema::default();
    }
    let Some(object) = target.as_object_mut() else {
        return;
    };
    for (key, value) in siblings {
        match (key.as_str(), value, object.get_mut(&key)) {
            ("properties", Value::Object(mut first), Some(Value::Object(existing))) => {
                for (name, schema) in std::mem::take(existing) {
                    first.entry(name).or_insert(schema);
                }
                *existing = first;
            }
            ("required", Value::Array(mut first), Some(Value::Array(existing))) => {
                for name in std::mem::take(existing) {
                    if !first.contains(&name) {
                        first.push(name);
                    }
                }
                *existing = first;
            }
            (_, value, _) => {
                object.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde_json::json;

    use super::inline;
    use crate::k8s_types::TYPE_NAME;
    use crate::schema::{root_schema, schema_settings};

    fn inlined<T: JsonSchema>() -> serde_json::Value {
        let mut generator = schema_settings().into_generator();
        inline(root_schema::<T>(&mut generator))
    }

    /// Inlined by kbr or by schemars: the same schema, apart from kbr's tags.
    fn same_as_schemars<T: JsonSchema>() {
        let mut ours = inlined::<T>();
        strip(&mut ours);
        let theirs = schemars::generate::SchemaSettings::openapi3()
            .with(|settings| {
                settings.inline_subschemas = true;
                settings.meta_schema = None;
            })
            .into_generator()
            .into_root_schema_for::<T>()
            .to_value();
        let mut theirs = theirs;
        if let Some(object) = theirs.as_object_mut() {
            object.remove("title");
        }
        assert_eq!(ours, theirs, "{}", std::any::type_name::<T>());
    }

    fn strip(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(object) => {
                object.remove(TYPE_NAME);
                object.remove(super::DEFINITION);
                object.values_mut().for_each(strip);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        /// A number.
        a: i32,
        b: Option<String>,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    enum Choice {
        One,
        Two,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    #[serde(tag = "kind")]
    enum Tagged {
        First(Inner),
        Second { x: u8 },
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Outer {
        /// The inner value.
        inner: Inner,
        maybe: Option<Inner>,
        /// A choice.
        #[serde(default)]
        choice: Option<Choice>,
        list: Vec<Inner>,
        map: std::collections::BTreeMap<String, Option<Inner>>,
        tagged: Tagged,
        wrapped: Option<Box<Tagged>>,
    }

    #[test]
    fn inlining_matches_schemars() {
        same_as_schemars::<Outer>();
        same_as_schemars::<Tagged>();
        same_as_schemars::<Option<Inner>>();
    }

    #[test]
    fn k8s_openapi_types_are_tagged_wherever_they_are() {
        use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

        #[derive(JsonSchema)]
        #[allow(dead_code)]
        struct Range<T> {
            /// The least.
            min: T,
        }
        #[derive(JsonSchema)]
        #[allow(dead_code)]
        struct Uses {
            /// Documented: the field doc replaces k8s-openapi's description.
            direct: Quantity,
            range: Range<Quantity>,
            list: Option<Vec<Quantity>>,
        }
        let schema = inlined::<Uses>();
        let name = "io.k8s.apimachinery.pkg.api.resource.Quantity";
        assert_eq!(schema["properties"]["direct"][TYPE_NAME], name);
        assert_eq!(
            schema["properties"]["direct"]["description"],
            "Documented: the field doc replaces k8s-openapi's description."
        );
        assert_eq!(
            schema["properties"]["range"]["properties"]["min"][TYPE_NAME],
            name
        );
        assert_eq!(schema["properties"]["list"]["items"][TYPE_NAME], name);
        assert!(schema.get("components").is_none(), "{schema:#}");
    }

    #[test]
    fn recursive_references_stay() {
        #[derive(JsonSchema)]
        #[allow(dead_code)]
        struct Node {
            children: Vec<Node>,
        }
        #[derive(JsonSchema)]
        #[allow(dead_code)]
        struct Tree {
            root: Node,
        }
        let schema = inlined::<Tree>();
        assert_eq!(
            schema["properties"]["root"]["properties"]["children"]["items"],
            json!({"$ref": "#/components/schemas/Node"})
        );
    }
}
