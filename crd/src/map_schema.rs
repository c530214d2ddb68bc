//! [`MapSchema`]: the schema of a map whose keys are not strings, keeping the key schema that
//! schemars' own map schemas drop.

use std::borrow::Cow;
use std::marker::PhantomData;

use schemars::{JsonSchema, Schema, SchemaGenerator};

/// The schema of a map (`BTreeMap<K, V>`, `HashMap<K, V>`, `IndexMap<K, V>`) with keys of
/// type `K`, which JSON writes as strings: `#[kbr_runtime::schema]` puts it in
/// (`#[schemars(with = ...)]`) for every field whose type names such a map with keys other
/// than `String`; write that attribute yourself on types without the macro:
///
/// ```
/// # use std::collections::BTreeMap;
/// # use schemars::JsonSchema;
/// #[derive(JsonSchema)]
/// struct ServiceSpec {
///     /// Backend names by port.
///     #[schemars(with = "kbr_crd::MapSchema<u16, String>")]
///     backends: BTreeMap<u16, String>,
/// }
/// ```
///
/// It is `{type: object, additionalProperties: <V>, propertyNames: <K>}`. schemars' own map
/// schemas lose the keys' schema (a documented unit enum's keys become any string) or write
/// `patternProperties` (integers), which a CRD cannot hold. The CRD builder turns
/// `propertyNames` into an `x-kubernetes-validations` rule on the keys (structural schemas
/// have no `propertyNames`) admitting exactly the keys serde_json reads as a `K`: the enum's
/// names (and aliases), integers of `K`'s range in decimal without sign `+` or leading zeros,
/// `true`/`false`, strings of the key's pattern or length.
pub struct MapSchema<K: ?Sized, V: ?Sized>(PhantomData<K>, PhantomData<V>);

impl<K: JsonSchema + ?Sized, V: JsonSchema + ?Sized> JsonSchema for MapSchema<K, V> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        format!("Map_from_{}_to_{}", K::schema_name(), V::schema_name()).into()
    }

    fn schema_id() -> Cow<'static, str> {
        format!("kbr_crd::MapSchema<{}, {}>", K::schema_id(), V::schema_id()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let keys = generator.subschema_for::<K>();
        let values = generator.subschema_for::<V>();
        schemars::json_schema!({
            "type": "object",
            "additionalProperties": values,
            "propertyNames": keys,
        })
    }
}
