//! The CRD schemas of k8s-openapi's own types: the API server refuses what their serde
//! `Deserialize` refuses, as far as a structural schema can say it.
//!
//! k8s-openapi's `JsonSchema` implementations describe the OpenAPI definitions of Kubernetes,
//! not what its Rust types read. [`super::definitions`] tags every node inlined from one of
//! the types below with its definition name, in any position, and the shape pass calls
//! [`refine`] on it:
//!
//! | type | serde (k8s-openapi 0.29) reads | CRD schema |
//! |---|---|---|
//! | `IntOrString` | an integer that fits `i32`, or any string | int-or-string, `minimum`/`maximum` of `i32` (the API server applies number bounds to numbers only) |
//! | `Quantity` | any number or string | int-or-string with the quantity `pattern` (controller-gen's, apimachinery's `ParseQuantity` grammar) |
//! | `Time`, `MicroTime` | a `jiff::Timestamp` (RFC 3339 and more) | `format: date-time` and a `pattern` for where jiff is stricter than the API server (see [`TIMESTAMP_PATTERN`]) |
//! | `RawExtension` | any JSON | free-form (`x-kubernetes-preserve-unknown-fields`, nullable), as `serde_json::Value` |
//! | `ByteString` | standard base64 with padding and zero trailing bits (also `""`), or `null` | a string with [`BASE64_PATTERN`], nullable |
//! | a kind (`ConfigMap`, `Deployment`, …: the types implementing `k8s_openapi::Resource`) | `apiVersion` and `kind`, when present, equal to the type's own (else "invalid value") | `apiVersion` and `kind` each with an `enum` of that one value ([`resource`]) |
//!
//! Sources: the API server's `x-kubernetes-int-or-string` rules
//! (`apiextensions-apiserver/pkg/apiserver/schema/validation.go`, `validateStructuralInvariants`:
//! value validations such as `minimum` may sit on an int-or-string node), its `date-time`
//! format (`kube-openapi/pkg/validation/strfmt/time.go`, `IsDateTime`) and its `byte` format
//! (`kube-openapi/pkg/validation/strfmt/default.go`: govalidator's base64 regex, which refuses
//! `""` and accepts non-zero trailing bits that the `base64` crate refuses, so kbr uses a
//! pattern instead).

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value, json};

/// The key tagging a node inlined from one of these types with its definition name (e.g.
/// [`INT_OR_STRING`]); the shape pass removes it when it calls [`refine`].
pub(crate) const TYPE_NAME: &str = "x-kbr-k8s-type";

/// k8s-openapi's `IntOrString` (`io.k8s.apimachinery.pkg.util.intstr.IntOrString`).
pub(crate) const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";

/// k8s-openapi's `Quantity`.
pub(crate) const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/// k8s-openapi's `Time` (whole seconds when serialized).
pub(crate) const TIME: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Time";

/// k8s-openapi's `MicroTime` (microseconds when serialized).
pub(crate) const MICRO_TIME: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime";

/// k8s-openapi's `RawExtension` (a `serde_json::Value`).
pub(crate) const RAW_EXTENSION: &str = "io.k8s.apimachinery.pkg.runtime.RawExtension";

/// `k8s_openapi::ByteString` (Go's `[]byte`): k8s-openapi has no definition for it; this is
/// the schema name of [`ByteStringSchema`], and k8s-openapi's own structs write its
/// fields inline as `{type: string, format: byte}`.
pub(crate) const BYTE_STRING: &str = "k8s_openapi::ByteString";

/// The grammar of a `resource.Quantity` string, as controller-gen emits it for the type
/// (apimachinery `pkg/api/resource/quantity.go`, `ParseQuantity`).
pub(crate) const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// What `Time`/`MicroTime` strings the API server's `date-time` format accepts and jiff's
/// `Timestamp` reads too: the server's `IsDateTime` allows a fraction of any length after any
/// one character and any two-digit offset hours and minutes; jiff reads at most nine digits
/// after `.` or `,` and offsets up to ±25:59. (The server still checks the calendar and
/// refuses a leap second `:60`, which jiff reads as `:59`.)
pub(crate) const TIMESTAMP_PATTERN: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}([.,][0-9]{1,9})?([Zz]|[+-]([01][0-9]|2[0-5]):[0-5][0-9])$";

/// Standard base64 as the `base64` crate's `STANDARD` engine decodes it (k8s-openapi's
/// `ByteString`): groups of four, canonical `=` padding, the bits a padded group drops all
/// zero, and the empty string.
pub(crate) const BASE64_PATTERN: &str =
    r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?$";

/// The schema of `k8s_openapi::ByteString`, which has no `JsonSchema` implementation of its
/// own: `#[kbr_runtime::schema]` gives every field whose type names `ByteString` (also inside
/// `Option`, `Vec`, maps or type arguments) `#[schemars(with = ...)]` with this type in its
/// place; write that attribute yourself on types without `#[kbr_runtime::schema]`:
///
/// ```
/// # use schemars::JsonSchema;
/// #[derive(JsonSchema)]
/// struct SecretSpec {
///     /// The key, base64-encoded in JSON.
///     #[schemars(with = "Option<kbr_crd::ByteStringSchema>")]
///     key: Option<k8s_openapi::ByteString>,
/// }
/// ```
///
/// The CRD schema is a nullable string of standard, padded base64 whose padded group drops
/// only zero bits (a `pattern`), and `""`: exactly what k8s-openapi's `ByteString`
/// deserializer reads. It is not `format: byte`, whose check refuses `""` (what an empty
/// `ByteString` serializes to) and accepts non-zero dropped bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteStringSchema;

impl JsonSchema for ByteStringSchema {
    fn schema_name() -> Cow<'static, str> {
        BYTE_STRING.into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        // What k8s-openapi writes for its own `ByteString` fields; refined by `refine`.
        schemars::json_schema!({"type": "string", "format": "byte"})
    }
}

/// Whether `name` is a type [`refine`] knows.
pub(crate) fn is_known(name: &str) -> bool {
    [
        INT_OR_STRING,
        QUANTITY,
        TIME,
        MICRO_TIME,
        RAW_EXTENSION,
        BYTE_STRING,
    ]
    .contains(&name)
        || resource(name).is_some()
}

/// The API groups of k8s-openapi's `io.k8s.api.<package>` definitions, by package.
const API_GROUPS: &[(&str, &str)] = &[
    ("admissionregistration", "admissionregistration.k8s.io"),
    ("apiserverinternal", "internal.apiserver.k8s.io"),
    ("apps", "apps"),
    ("authentication", "authentication.k8s.io"),
    ("authorization", "authorization.k8s.io"),
    ("autoscaling", "autoscaling"),
    ("batch", "batch"),
    ("certificates", "certificates.k8s.io"),
    ("coordination", "coordination.k8s.io"),
    ("core", ""),
    ("discovery", "discovery.k8s.io"),
    ("events", "events.k8s.io"),
    ("flowcontrol", "flowcontrol.apiserver.k8s.io"),
    ("networking", "networking.k8s.io"),
    ("node", "node.k8s.io"),
    ("policy", "policy"),
    ("rbac", "rbac.authorization.k8s.io"),
    ("resource", "resource.k8s.io"),
    ("scheduling", "scheduling.k8s.io"),
    ("storage", "storage.k8s.io"),
    ("storagemigration", "storagemigration.k8s.io"),
];

/// The kinds of `io.k8s.apimachinery.pkg.apis.meta.v1` that k8s-openapi reads as resources.
const META_KINDS: &[&str] = &[
    "APIGroup",
    "APIGroupList",
    "APIResourceList",
    "APIVersions",
    "Status",
];

/// For the definition name of a k8s-openapi kind (a type implementing `Resource`, such as
/// `io.k8s.api.apps.v1.Deployment`): its `apiVersion` (`apps/v1`) and `kind` (`Deployment`),
/// which its `Deserialize` requires `apiVersion` and `kind` to equal when present. `None`
/// for every other name; [`refine`] still checks that the schema has `apiVersion`, `kind`
/// (and, outside `meta/v1`, `metadata`) properties, which the object types of these packages
/// without a kind of their own (`ObjectReference`) lack.
pub(crate) fn resource(name: &str) -> Option<(String, &str)> {
    let (package, rest) = if let Some(rest) = name.strip_prefix("io.k8s.api.") {
        let (package, rest) = rest.split_once('.')?;
        let (_, group) = API_GROUPS.iter().find(|(known, _)| *known == package)?;
        (*group, rest)
    } else if let Some(rest) =
        name.strip_prefix("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.")
    {
        ("apiextensions.k8s.io", rest)
    } else if let Some(rest) = name.strip_prefix("io.k8s.kube-aggregator.pkg.apis.apiregistration.")
    {
        ("apiregistration.k8s.io", rest)
    } else {
        let kind = name.strip_prefix("io.k8s.apimachinery.pkg.apis.meta.v1.")?;
        return META_KINDS.contains(&kind).then(|| ("v1".to_owned(), kind));
    };
    let (version, kind) = rest.split_once('.')?;
    let api_version = if package.is_empty() {
        version.to_owned()
    } else {
        format!("{package}/{version}")
    };
    Some((api_version, kind))
}

/// Pins `apiVersion` and `kind` of an object schema of the kind `name` (see [`resource`]).
fn pin_kind(object: &mut Map<String, Value>, name: &str) {
    let Some((api_version, kind)) = resource(name) else {
        return;
    };
    let Some(Value::Object(properties)) = object.get_mut("properties") else {
        return;
    };
    let needs_metadata = !name.starts_with("io.k8s.apimachinery.");
    if needs_metadata && !properties.contains_key("metadata") {
        return;
    }
    for (property, value) in [("apiVersion", api_version.as_str()), ("kind", kind)] {
        if let Some(Value::Object(schema)) = properties.get_mut(property) {
            schema.insert("enum".into(), json!([value]));
        }
    }
}

/// Gives the node `object`, inlined from the k8s-openapi type `name`, the schema that refuses
/// what the type's `Deserialize` refuses (see the module table). Other names are left alone.
pub(crate) fn refine(object: &mut Map<String, Value>, name: &str) {
    match name {
        INT_OR_STRING => {
            int_or_string(object);
            object.insert("minimum".into(), i32::MIN.into());
            object.insert("maximum".into(), i32::MAX.into());
        }
        QUANTITY => {
            int_or_string(object);
            object.insert("pattern".into(), QUANTITY_PATTERN.into());
        }
        TIME | MICRO_TIME => {
            object.insert("type".into(), "string".into());
            object.insert("format".into(), "date-time".into());
            object.insert("pattern".into(), TIMESTAMP_PATTERN.into());
        }
        RAW_EXTENSION => {
            object.remove("type");
            object.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
            object.insert("nullable".into(), true.into());
        }
        BYTE_STRING => {
            object.insert("type".into(), "string".into());
            object.remove("format");
            object.insert("pattern".into(), BASE64_PATTERN.into());
            object.insert("nullable".into(), true.into());
        }
        other => pin_kind(object, other),
    }
}

/// An int-or-string node as controller-gen writes one.
fn int_or_string(object: &mut Map<String, Value>) {
    object.remove("type");
    object.insert("x-kubernetes-int-or-string".into(), true.into());
    object
        .entry("anyOf")
        .or_insert_with(|| json!([{"type": "integer"}, {"type": "string"}]));
}

#[cfg(test)]
mod tests {
    use k8s_openapi::ByteString;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use regex::Regex;

    use super::{BASE64_PATTERN, TIMESTAMP_PATTERN};

    #[test]
    fn base64_pattern_is_what_byte_string_reads() {
        let pattern = Regex::new(BASE64_PATTERN).unwrap();
        let mut samples: Vec<String> = ["", "QQ==", "QR==", "QQ=", "QQ", "QUI=", "QUJ=", "QUJD"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        // 1-, 2- and 3-byte tails ending in every symbol, and symbols outside the alphabet.
        for last in (b'A'..=b'Z')
            .chain(b'a'..=b'z')
            .chain(b'0'..=b'9')
            .chain(*b"+/-_= ")
        {
            let last = char::from(last);
            samples.push(format!("Q{last}=="));
            samples.push(format!("QU{last}="));
            samples.push(format!("QUJ{last}"));
            samples.push(format!("QUJDQ{last}=="));
        }
        for sample in &samples {
            let read = serde_json::from_value::<ByteString>(sample.as_str().into());
            assert_eq!(
                pattern.is_match(sample),
                read.is_ok(),
                "{sample:?}: {read:?}"
            );
        }
    }

    /// The kinds of several API groups: `resource` names the `apiVersion` and `kind` their
    /// `Resource` implementation (what their `Deserialize` checks) has.
    #[test]
    fn resources_are_named_as_k8s_openapi_names_them() {
        use k8s_openapi::Resource;
        use schemars::JsonSchema;

        fn check<K: Resource + JsonSchema>() {
            let name = K::schema_name();
            assert_eq!(
                super::resource(&name),
                Some((K::API_VERSION.to_owned(), K::KIND)),
                "{name}"
            );
        }
        check::<k8s_openapi::api::core::v1::ConfigMap>();
        check::<k8s_openapi::api::apps::v1::Deployment>();
        check::<k8s_openapi::api::rbac::v1::ClusterRole>();
        check::<k8s_openapi::api::networking::v1::NetworkPolicy>();
        check::<k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler>();
        check::<k8s_openapi::api::policy::v1::Eviction>();
        check::<k8s_openapi::api::flowcontrol::v1::FlowSchema>();
        check::<k8s_openapi::api::apiserverinternal::v1alpha1::StorageVersion>();
        check::<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition>();
        check::<k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService>();
        check::<k8s_openapi::apimachinery::pkg::apis::meta::v1::Status>();
        check::<k8s_openapi::apimachinery::pkg::apis::meta::v1::APIGroup>();
        for not_a_kind in [
            "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
            "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
            "io.k8s.example.v1.Widget",
            "Widget",
        ] {
            assert_eq!(super::resource(not_a_kind), None, "{not_a_kind}");
        }
    }

    #[test]
    fn timestamp_pattern_keeps_what_time_reads() {
        let pattern = Regex::new(TIMESTAMP_PATTERN).unwrap();
        for (text, matches) in [
            ("2024-01-02T03:04:05Z", true),
            ("2024-01-02t03:04:05z", true),
            ("2024-01-02T03:04:05.123456789+01:00", true),
            ("2024-01-02T03:04:05,5-25:59", true),
            ("2024-01-02T03:04:05.1234567891Z", false),
            ("2024-01-02T03:04:05x5Z", false),
            ("2024-01-02T03:04:05+26:00", false),
            ("2024-01-02T03:04:05+01:60", false),
        ] {
            let read = serde_json::from_value::<Time>(text.into());
            assert_eq!(pattern.is_match(text), matches, "{text}");
            assert_eq!(read.is_ok(), matches, "{text}: {read:?}");
        }
    }
}
