//! Derive macros for kbr: API types to CustomResourceDefinitions, RBAC markers to rules.
//!
//! Use them through `kbr-runtime`, which re-exports both (`kbr_runtime::CustomResource`,
//! `kbr_runtime::Rbac`); the generated code names `::kbr_runtime` paths only.
//!
//! - `#[derive(CustomResource)]` + `#[kbr(...)]` on a Spec struct: Kubebuilder's root type and
//!   CRD markers (`+kubebuilder:object:root`, `+kubebuilder:resource`,
//!   `+kubebuilder:subresource`, `+kubebuilder:printcolumn`, …). See
//!   [`macro@CustomResource`].
//! - `#[derive(Rbac)]` + `#[rbac(...)]` on a reconciler: `+kubebuilder:rbac` markers. See
//!   [`macro@Rbac`].

// Every published crate documents its whole public API.
#![deny(missing_docs)]

mod custom_resource;
mod keys;
mod names;
mod parse;
mod rbac;
mod schema;
#[cfg(test)]
mod tests;

use proc_macro::TokenStream;

/// Generates a Kubernetes root type (`metadata`, `spec`, `status`) from a Spec struct, with its
/// `kube::Resource`, serde and `kbr_runtime::resource::CustomResource` implementations.
///
/// ```ignore
/// #[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
/// #[kbr(group = "eventing.knative.dev", version = "v1alpha1", kind = "Broker", plural = "brokers")]
/// #[kbr(namespaced, status = "BrokerStatus", shortname = "bkr", category = "knative")]
/// #[kbr(printcolumn(name = "Ready", type_ = "string", json_path = ".status.conditions[?(@.type==\"Ready\")].status"))]
/// pub struct BrokerSpec { /* … */ }
/// ```
///
/// generates, next to `BrokerSpec`:
///
/// - `pub struct Broker { pub metadata: ObjectMeta, pub spec: BrokerSpec, pub status:
///   Option<BrokerStatus> }` (no `status` without `status = …`), `Clone + Debug` (so the Spec
///   and Status types must be `Clone + Debug`), plus any `derive = "PartialEq"`/`"Default"`;
/// - `Serialize` writing `apiVersion`, `kind`, `metadata`, `spec` and `status` (when `Some`), and
///   `Deserialize` ignoring `apiVersion`/`kind` and reading a missing `spec` as `{}`;
/// - `Broker::new(name, spec)` and the constants `GROUP`, `VERSION`, `KIND`, `PLURAL`,
///   `API_VERSION`;
/// - `impl kube::Resource` (scope `NamespaceResourceScope` or `ClusterResourceScope`),
///   `kube::core::object::HasSpec` / `HasStatus`, and
///   `impl kbr_runtime::resource::CustomResource` (its `INFO` constant and schemas).
///
/// Attributes (repeatable, may be split over several `#[kbr(...)]` lines), with the
/// controller-gen marker each mirrors:
///
/// | attribute | marker |
/// |---|---|
/// | `group = "..."`, `version = "..."`, `kind = "..."` (required) | `groupName`, `versionName`, type name |
/// | `plural = "..."` (default: Kubebuilder's, flect's plural of the singular, e.g. `oxen`), `singular = "..."` (default: the lower-cased kind) | `resource:path=`, `resource:singular=` |
/// | `namespaced` / `namespaced = bool` (absent = cluster-scoped) | `resource:scope=` |
/// | `status = "TypeName"` (turns the status subresource on) | `subresource:status` |
/// | `shortname = "..."` (or `short_name`, `shortnames = [..]`) | `resource:shortName=` |
/// | `category = "..."` (or `categories = [..]`) | `resource:categories=` |
/// | `printcolumn(name, type_ (or json_type), json_path, description, format, priority)` | `printcolumn` |
/// | `scale(spec_replicas_path, status_replicas_path, label_selector_path)` | `subresource:scale` |
/// | `storage` / `storage = bool` (default true), `served = bool` (default true) | `storageversion`, `unservedversion` |
/// | `deprecated` / `deprecated = "warning"` | `deprecatedversion:warning=` |
/// | `selectable_field = "..."` (or `selectable_fields = [..]`) | `selectablefield:JSONPath=` |
/// | `label("k", "v")`, `annotation("k", "v")` | `metadata:labels=`, `metadata:annotations=` |
/// | `doc = "..."` (root schema description) | root type doc comment |
/// | `derive = "PartialEq"` (repeatable; `Default` is implemented by hand) | — |
/// | `max_description_len = 80` (0 drops every description) | `crd:maxDescLen=` |
///
/// Field and type markers (`#[kbr(minimum = 1)]`, `#[kbr(list_type = "map", …)]`) need
/// [`macro@schema`] above the derives. Misuse is a compile error at the offending attribute
/// naming the fix.
#[proc_macro_derive(CustomResource, attributes(kbr))]
pub fn derive_custom_resource(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    custom_resource::expand(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Applies controller-gen's field and type markers, written `#[kbr(...)]`, to a type's schema.
///
/// Put it **above** `#[derive(..., JsonSchema)]` on every Spec/Status type and every type used
/// inside them that carries markers (an attribute macro only sees the attributes below it):
///
/// ```ignore
/// #[kbr_runtime::schema]
/// #[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
/// #[kbr(group = "serving.knative.dev", version = "v1alpha1", kind = "Service")]
/// #[kbr(at_most_one_of = [image, template])]           // a type marker
/// #[serde(rename_all = "camelCase")]
/// pub struct ServiceSpec {
///     /// Replicas to run.
///     #[kbr(minimum = 0, maximum = 100, default = 1)]  // field markers
///     pub replicas: Option<i32>,
///     #[kbr(pattern = "^[a-z0-9./-]+(:[a-z0-9.]+)?$", immutable)]
///     pub image: Option<String>,
///     pub template: Option<Template>,
/// }
/// ```
///
/// The macro checks every marker at compile time (name, value type, field or type, and —
/// when the Rust type shows it — whether the marker can apply: `min_length` on an `i32` is
/// an error) and rewrites it into a `#[schemars(extend("x-kbr-field" = …))]` record, which
/// `kbr_runtime::crd` applies when it builds the CRD (checking it against the generated schema
/// and reporting a typed error with the JSON path otherwise). Resource-level attributes
/// (`group`, `kind`, …) are left for `#[derive(CustomResource)]`.
///
/// | marker | controller-gen | schema effect | example |
/// |---|---|---|---|
/// | `minimum = n` / `maximum = n` | `validation:Minimum` / `Maximum` | `minimum` / `maximum` | `#[kbr(minimum = 1)]` |
/// | `exclusive_minimum` / `exclusive_maximum` | `validation:ExclusiveMinimum` / `…Maximum` | `exclusiveMinimum: true` (needs `minimum`) | `#[kbr(minimum = 0, exclusive_minimum)]` |
/// | `multiple_of = n` | `validation:MultipleOf` | `multipleOf` | `#[kbr(multiple_of = 2)]` |
/// | `min_length = n` / `max_length = n` | `validation:MinLength` / `MaxLength` | `minLength` / `maxLength` (strings) | `#[kbr(max_length = 63)]` |
/// | `pattern = "re"` | `validation:Pattern` | `pattern` (checked as a regex at build time) | `#[kbr(pattern = "^[a-z]+$")]` |
/// | `enum = [..]` | `validation:Enum` | `enum` | `#[kbr(enum = ["Always", "Never"])]` |
/// | `format = ".."` | `validation:Format` | `format` (a format the API server knows) | `#[kbr(format = "date-time")]` |
/// | `min_items = n` / `max_items = n` | `validation:MinItems` / `MaxItems` | `minItems` / `maxItems` | `#[kbr(max_items = 10)]` |
/// | `unique_items` | `validation:UniqueItems` | `x-kubernetes-list-type: set` (the API server rejects `uniqueItems: true`) | `#[kbr(unique_items)]` |
/// | `min_properties = n` / `max_properties = n` | `validation:MinProperties` / `MaxProperties` | `minProperties` / `maxProperties` | `#[kbr(max_properties = 5)]` |
/// | `default = json` (field) | `default` | `default` (checked against the schema) | `#[kbr(default = {"name": "x"})]` |
/// | `example = json` (field) | `example` | `example` | `#[kbr(example = 3)]` |
/// | `nullable` (field) | `nullable` | `nullable: true` | `#[kbr(nullable)]` |
/// | `required` / `optional` (field) | `validation:Required` / `Optional` | adds to / removes from the parent's `required` | `#[kbr(required)]` |
/// | `preserve_unknown_fields` | `pruning:PreserveUnknownFields` | `x-kubernetes-preserve-unknown-fields: true` | `#[kbr(preserve_unknown_fields)]` |
/// | `embedded_resource` (field) | `validation:EmbeddedResource` | `x-kubernetes-embedded-resource: true`, `type: object` (and preserve-unknown-fields when untyped) | `#[kbr(embedded_resource)]` |
/// | `int_or_string` | `validation:XIntOrString` | `x-kubernetes-int-or-string: true`, `anyOf: [{type: integer}, {type: string}]` | `#[kbr(int_or_string)]` |
/// | `schemaless` (field) | `validation:Schemaless` | the generated schema is dropped: `x-kubernetes-preserve-unknown-fields: true` | `#[kbr(schemaless)]` |
/// | `title = ".."` | `title` | `title` | `#[kbr(title = "Replicas")]` |
/// | `validation(rule, message, message_expression, reason, field_path, optional_old_self)` | `validation:XValidation` | one `x-kubernetes-validations` entry (repeatable) | `#[kbr(validation(rule = "self.min <= self.max", message = "min > max"))]` |
/// | `immutable` (field) | `k8s:immutable` | `x-kubernetes-validations: [{rule: "self == oldSelf", message: "field is immutable"}]` | `#[kbr(immutable)]` |
/// | `exactly_one_of = [a, b]` (type) | `validation:ExactlyOneOf` | rule `[has(self.a),has(self.b)].filter(x,x==true).size() == 1`, message `exactly one of the fields in [a b] must be set` | `#[kbr(exactly_one_of = [image, template])]` |
/// | `at_most_one_of = [..]` (type) | `validation:AtMostOneOf` | rule `… <= 1`, message `at most one of the fields in [..] may be set` | `#[kbr(at_most_one_of = [a, b])]` |
/// | `at_least_one_of = [..]` (type) | `validation:AtLeastOneOf` | rule `… >= 1`, message `at least one of the fields in [..] must be set` | `#[kbr(at_least_one_of = [a, b])]` |
/// | `list_type = "atomic" \| "set" \| "map"` | `listType` | `x-kubernetes-list-type` | `#[kbr(list_type = "set")]` |
/// | `list_map_keys = [".."]` (with `list_type = "map"`) | `listMapKey` | `x-kubernetes-list-map-keys` | `#[kbr(list_type = "map", list_map_keys = ["type"])]` |
/// | `map_type = "atomic" \| "granular"` | `mapType` | `x-kubernetes-map-type` (maps) | `#[kbr(map_type = "atomic")]` |
/// | `struct_type = "atomic" \| "granular"` | `structType` | `x-kubernetes-map-type` (structs) | `#[kbr(struct_type = "atomic")]` |
/// | `items(..)` | `validation:items:<Marker>` | the markers inside apply to the list's items | `#[kbr(items(max_length = 63))]` |
///
/// Field names in `exactly_one_of` & co. are Rust names (`[image_ref]`, mapped through serde's
/// `rename_all`/`rename`) or JSON names (`["imageRef"]`). Descriptions come from doc comments;
/// `#[kbr(max_description_len = n)]` on the Spec struct shortens them like controller-gen's
/// `crd:maxDescLen`.
///
/// # What serde reads, the schema says
///
/// Besides the markers, the macro tells the CRD builder what schemars leaves out, so the API
/// server never stores a value the Rust type cannot decode:
///
/// - `#[serde(alias = "..")]` on a field: the alias is a property too (the API server would
///   prune it), and a key beside its alias is refused (serde: "duplicate field"). On a variant:
///   the alias joins the variant's name (unit `enum`, tag value, externally tagged key). A
///   `#[kbr(default)]` beside an alias is a compile error (the server would write the default
///   beside the alias).
/// - Types whose schemars schema does not say what serde reads get a stand-in through
///   `#[schemars(with = ...)]`, wherever they sit in the field's type: maps with keys other
///   than strings (`BTreeMap<u16, _>`, `HashMap<Color, _>`) become `kbr_runtime::crd::MapSchema`
///   (a CEL rule admits exactly the keys serde_json reads: the enum's names and aliases, the
///   integer type's range in decimal without `+` or leading zeros, `true`/`false`),
///   `SocketAddr`, `SocketAddrV4`, `SocketAddrV6` their pattern, k8s-openapi's `ByteString`
///   its base64 pattern.
///
/// Without the macro these are lost, so `#[derive(CustomResource)]` refuses a Spec struct
/// that has such a field and no `#[kbr_runtime::schema]`; nested types are the user's to
/// mark. Without any macro, `Ipv4Addr`, `Ipv6Addr` and `IpAddr` still get the patterns of
/// what Rust parses (from schemars' formats), embedded k8s-openapi kinds (a `ConfigMap` in a
/// spec) get their `apiVersion` and `kind` pinned, and an `Option` of an enum keeps its
/// `enum` under `allOf` (kube-apiserver checks a node's own `enum` on `null` and refuses it).
///
/// # Known limits
///
/// Every CRD kbr emits is meant to be accepted by kube-apiserver as is and to validate as
/// serde decodes. Shapes without such a schema are refused when the CRD is built (`make
/// manifests`, `CustomResourceExt::try_crd`) with a `kbr_runtime::crd::CrdError` naming the kind, version, JSON
/// path and the way out — never a CRD the API server refuses:
///
/// | shape | error (`CrdError::Schema` unless noted) |
/// |---|---|
/// | a recursive type | `CrdError::RecursiveSchema`: ``the schema of Tree v1 needs `$ref` definitions (…): a CRD schema cannot describe a recursive type; break the cycle (e.g. with serde_json::Value and #[schemars(schema_with = ...)])`` |
/// | enum variants giving one property different types | ``.spec.setting: type `Setting` has variants that disagree on the schema of property `value` (integer vs string); give the property the same type in every variant, or rename it in one`` |
/// | named fields beside a `#[serde(flatten)]` map of typed values | `… has named fields beside a #[serde(flatten)] map of typed values, and a CRD object cannot type its extra keys; flatten a BTreeMap<String, serde_json::Value> (kept as sent), move the map into a field of its own, or mark the type #[kbr(preserve_unknown_fields)] …` |
/// | a tuple of different types | `… is a tuple of different types, and a CRD list has one item schema; use a struct with named fields instead of the tuple` |
/// | an enum mixing JSON types with two list variants, or with a map variant | `… has several list variants beside variants of other JSON types; wrap each list in a struct variant with a named field` (or `has a map variant …; wrap the map in a struct variant with a named field`) |
/// | a CEL rule (`validation`, `immutable`, `exactly_one_of`, …) on an enum mixing JSON types (`"Off"` or `{"Max": 1}`, a string or a struct): the API server types no such node for CEL | `not a structural schema: .spec.target x-kubernetes-validations: the API server cannot give this node a CEL type (…), so it refuses the CRD ("unable to convert structural schema to CEL declarations"), and a parent's rule cannot see this value either; give the value one JSON type (e.g. make every enum variant a struct variant), or put the rule on typed fields inside it` |
/// | a map whose keys JSON cannot hold (a struct key), or a key type with a `format` other than the IP addresses' | ``.spec.labels: type `GridSpec` is a map whose keys are of JSON type object, which serde_json cannot read from an object key; key the map by String, an integer type, bool, a unit-only enum or a newtype of String`` |
/// | a map with integer keys in a type without `#[kbr_runtime::schema]` (schemars' `patternProperties`) | ``.spec.ports.backends: a value in type `Ports` has a map whose keys are integers (…); put #[kbr_runtime::schema] above #[derive(JsonSchema)] on the type holding the map, or give the field #[schemars(with = "kbr_crd::MapSchema<K, V>")]`` |
/// | a map keyed by addresses (`BTreeMap<Ipv4Addr, _>`) without `max_properties`: the pattern rule on its keys costs more than the API server allows for a map as large as a request | `CrdError::Schema` with `SchemaError::RuleCost`, fix ``bound what it iterates: #[kbr(max_properties = ..)] on .spec.gateways`` |
/// | a `format` the API server does not know (`#[kbr(format = "..")]` is checked at compile time) | compile error `unknown format "…"; the API server knows: …`; from a hand-written schema: `not a structural schema: .spec.x format: unrecognized format "…" for type "…"` |
///
/// Accepted with a documented difference from serde:
///
/// - Rust integer widths become `format: int32` (`i8`–`u16`) or `int64` (`u32`, `u64`,
///   `usize`, `isize`) with serde's `minimum`/`maximum`; the API server stores integers as
///   int64, so a `u64` above `i64::MAX` is refused by the server though serde reads it.
/// - An enum mixing JSON types is a node without `type` (`x-kubernetes-preserve-unknown-fields`)
///   whose `anyOf`/`oneOf` branches accept exactly each variant's values; `kubectl explain`
///   shows no type for it. A closed (`deny_unknown_fields`) struct variant with optional fields
///   there still accepts extra keys, and `{"Off": null}` for a unit variant is refused though
///   serde reads it.
/// - Defaults of fields that only some variants of an internally or adjacently tagged enum
///   have are left out of the schema (the API server would write them into every variant);
///   serde applies them when it reads the object.
/// - A flattened externally tagged enum is one of its variant keys (`oneOf`), where serde
///   takes the first variant key and ignores the others; an embedded k8s-openapi kind
///   requires `metadata` (its OpenAPI schema does), where serde defaults it.
/// - `resource::Quantity` gets the quantity `pattern` (serde takes any string). It is
///   recognized by k8s-openapi's description or, in types marked `#[kbr_runtime::schema]`, by
///   the field's type name; a documented bare `Quantity` field in an unmarked type (or
///   k8s-openapi's own documented ones, such as `ResourceFieldSelector.divisor`) is
///   int-or-string without the pattern.
#[proc_macro_attribute]
pub fn schema(args: TokenStream, item: TokenStream) -> TokenStream {
    schema::expand(args.into(), item.into()).into()
}

/// Implements `kbr_runtime::rbac::Rbac` from `#[rbac(...)]` markers: the RBAC rules a
/// controller needs, collected by `make manifests` into `config/rbac/role.yaml`.
///
/// Mirrors `+kubebuilder:rbac:groups=…,resources=…,resourceNames=…,verbs=…,urls=…,namespace=…`.
/// Lists are `["a", "b"]` (or a `;`-separated string, as in the Go marker):
///
/// ```ignore
/// #[derive(Rbac)]
/// #[rbac(groups = ["eventing.knative.dev"], resources = ["brokers"], verbs = ["get", "list", "watch"])]
/// #[rbac(groups = [""], resources = ["configmaps"], verbs = ["get"], namespace = "knative-eventing")]
/// #[rbac(urls = ["/metrics"], verbs = ["get"])]
/// pub struct BrokerReconciler { /* … */ }
/// ```
///
/// `verbs` is required; `urls` (non-resource URLs) cannot be combined with `groups`,
/// `resources`, `resource_names` or `namespace`; a rule names either resources or urls. A rule
/// with `namespace` goes into a `Role` in that namespace instead of the `ClusterRole`.
///
/// Also generates an inherent `fn rbac_rules()` (same visibility as the type) that calls the
/// trait's, so `BrokerReconciler::rbac_rules()` works without importing the trait.
#[proc_macro_derive(Rbac, attributes(rbac))]
pub fn derive_rbac(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    rbac::expand(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
