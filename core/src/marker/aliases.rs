//! serde's `#[serde(alias = "...")]`, carried from `#[kbr_runtime::schema]` into the schema.
//!
//! schemars leaves aliases out of the schemas it generates, so the API server would prune an
//! aliased field's key and refuse an aliased variant name, though serde reads both. The derive
//! writes the aliases of a field or a variant under [`ALIASES`] in its schema; the CRD builder
//! adds them back where serde accepts them (a property of the same schema, a value of the
//! variant's `enum` or tag) and keeps the API server from storing what serde refuses (a key
//! beside its alias: serde's "duplicate field").

use serde::{Deserialize, Serialize};

/// The schema extension holding the aliases of a field or a variant.
pub const ALIASES: &str = "x-kbr-aliases";

/// The aliases of one field or enum variant, as `#[serde(alias = "...")]` gives them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Aliases {
    /// Every alias, in the order written.
    pub names: Vec<String>,
    /// For a variant of an internally or adjacently tagged enum (`#[serde(tag = "...")]`): the
    /// tag's property name, whose value the aliases are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}
