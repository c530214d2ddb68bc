//! The errors of building and merging CRDs.

/// Why a CRD could not be built or merged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CrdError {
    /// The generated schema does not fit apiextensions' `JSONSchemaProps`.
    #[error("the schema of {kind} {version} is not a valid CRD schema: {source}")]
    InvalidSchema {
        /// The kind, e.g. `Broker`.
        kind: String,
        /// The version, e.g. `v1alpha1`.
        version: String,
        /// Why `JSONSchemaProps` rejected it.
        #[source]
        source: serde_json::Error,
    },
    /// The schema refers to shared definitions (`$ref`), which CRD schemas cannot hold: the
    /// type is recursive.
    #[error(
        "the schema of {kind} {version} needs `$ref` definitions ({definitions}): a CRD schema \
         cannot describe a recursive type; break the cycle (e.g. with serde_json::Value and \
         #[schemars(schema_with = ...)])"
    )]
    RecursiveSchema {
        /// The kind.
        kind: String,
        /// The version.
        version: String,
        /// Names of the definitions it needed, comma-separated.
        definitions: String,
    },
    /// The Rust types' schema cannot become a structural CRD schema: a marker does not fit
    /// the generated schema, a serde shape has no structural equivalent, or the result breaks
    /// the API server's structural-schema rules.
    #[error("the schema of {kind} {version}: {source}")]
    Schema {
        /// The kind.
        kind: String,
        /// The version.
        version: String,
        /// What is wrong, with the JSON path (boxed: it carries several strings).
        #[source]
        source: Box<SchemaError>,
    },
    /// Schema generation panicked inside a `JsonSchema` implementation; the panic is caught
    /// and reported here.
    #[error(
        "generating the schema of {kind} {version} failed: {message}; check the JsonSchema \
         implementations it uses, or give the field #[schemars(schema_with = ...)]"
    )]
    SchemaGeneration {
        /// The kind.
        kind: String,
        /// The version.
        version: String,
        /// The message of the failure.
        message: String,
    },
    /// [`merge`](super::merge) was given no CRDs.
    #[error("no CustomResourceDefinitions to merge")]
    NothingToMerge,
    /// Two versions of one CRD disagree on something that must be the same for all versions.
    #[error(
        "{versions} of {crd} disagree on {field}: {first_value:?} vs {second_value:?}; all \
         versions of a kind share group, kind, plural and scope"
    )]
    Mismatch {
        /// CRD name (`<plural>.<group>`) of the first input.
        crd: String,
        /// What differs: `name`, `group`, `kind`, `plural` or `scope`.
        field: &'static str,
        /// The versions compared, e.g. `"v1 and v1beta1"`.
        versions: String,
        /// The value in the first.
        first_value: String,
        /// The value in the second.
        second_value: String,
    },
    /// The same version appears twice (two Rust types registered under one GVK).
    #[error("{crd} has version {version} twice; each version of a kind must be defined once")]
    DuplicateVersion {
        /// CRD name.
        crd: String,
        /// The repeated version.
        version: String,
    },
    /// More than one version is marked as the storage version.
    #[error(
        "{crd} has two storage versions, {first} and {second}: exactly one version is stored; \
         set #[kbr(storage = false)] on all but one"
    )]
    MultipleStorageVersions {
        /// CRD name.
        crd: String,
        /// One storage version (the higher priority one).
        first: String,
        /// Another storage version.
        second: String,
    },
    /// No version is marked as the storage version.
    #[error(
        "{crd} has no storage version among {versions}: mark exactly one with \
         #[kbr(storage)] (the default)"
    )]
    NoStorageVersion {
        /// CRD name.
        crd: String,
        /// All its versions, comma-separated.
        versions: String,
    },
}

/// Why a schema cannot be a CRD schema, with the JSON path (in the object, e.g.
/// `.spec.template.replicas`; `[*]` stands for any item or map value) of the offending node.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// A `#[kbr(...)]` marker cannot apply to the schema it ended up on (e.g. `min_length` on
    /// an integer behind a type alias, `list_map_keys` naming a property the items lack).
    #[error("{path}: marker `{marker}` {reason}")]
    InvalidMarker {
        /// JSON path of the marked node.
        path: String,
        /// The marker as written in `#[kbr(...)]`, e.g. `min_length`.
        marker: String,
        /// Why it cannot apply.
        reason: String,
    },
    /// A Rust/serde shape has no structural schema that accepts exactly the JSON serde
    /// accepts.
    #[error("{path}: {what} {reason}; {fix}")]
    Unsupported {
        /// JSON path of the node.
        path: String,
        /// The Rust type when known (its marker record or schemars definition names it), e.g.
        /// "type `Setting`"; else the enclosing type's, "a value in type `Ports`"; else
        /// "this value".
        what: String,
        /// What cannot be expressed.
        reason: String,
        /// The way out.
        fix: String,
    },
    /// A CEL validation rule's estimated cost (or all of them together) is over the API
    /// server's limit, so it refuses the CRD (apiextensions-apiserver's
    /// `StaticEstimatedCostLimit`, `StaticEstimatedCRDCostLimit`).
    #[error("{path}: {reason}; {fix}")]
    RuleCost {
        /// JSON path of the rule's node.
        path: String,
        /// The rule, its estimated cost and the limit.
        reason: String,
        /// The bounds to add (`#[kbr(max_items = ..)]` on a field), or to simplify the rule.
        fix: String,
    },
    /// The schema breaks the API server's structural-schema rules (see [`super::check_schema`]).
    #[error("not a structural schema: {}", join(violations))]
    NotStructural {
        /// Every violation found, in path order.
        violations: Vec<Violation>,
    },
}

fn join(violations: &[Violation]) -> String {
    let shown: Vec<String> = violations.iter().take(5).map(ToString::to_string).collect();
    let more = violations.len().saturating_sub(shown.len());
    if more > 0 {
        format!("{} (and {more} more)", shown.join("; "))
    } else {
        shown.join("; ")
    }
}

/// One broken structural-schema rule: where and which.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Violation {
    /// JSON path of the node in the object (`.spec.items[*].name`), `.` for the root; a
    /// logical junctor adds its branch (`.spec.mode.anyOf[1]`).
    pub path: String,
    /// The schema keyword at fault, e.g. `type`, `additionalProperties`, `default`.
    pub keyword: String,
    /// The rule, worded like the API server's message.
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.path, self.keyword, self.message)
    }
}
