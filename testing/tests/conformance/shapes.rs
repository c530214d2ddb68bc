//! The types of the derive's contract corpus: the shapes whose CRD schema used to let the API
//! server store what serde cannot read. The conformance case `contract.rs` sends them to both
//! servers; kbr-runtime's `api_contract.rs` includes this file (`#[path]`) and checks them as
//! a property on generated values, so both test the same types. Self-contained: it names
//! crates only, no module of either test suite.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A colour, undocumented: schemars lists its names as a map's properties.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
pub enum Color {
    Red,
    Green,
}

/// A shade, documented and with an alias: schemars' own map schema loses its names.
#[kbr_runtime::schema]
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Shade {
    /// Light.
    Light,
    /// Dark, also read as `black`.
    #[serde(alias = "black")]
    Dark,
}

/// A mode: a unit enum with an alias.
#[kbr_runtime::schema]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub enum Mode {
    /// Fast, also read as `Quick`.
    #[serde(alias = "Quick")]
    Fast,
    /// Slow.
    Slow,
}

/// Where the code comes from: externally tagged, with aliases on a struct and a unit variant.
#[kbr_runtime::schema]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Source {
    /// A repository, also read as `repo`.
    #[serde(alias = "repo")]
    Git {
        /// Its URL.
        url: String,
    },
    /// An image.
    Image(String),
    /// Nothing, also read as `nothing`.
    #[serde(alias = "nothing")]
    Empty,
}

/// A route: a name and two flattened enums.
#[kbr_runtime::schema]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Route {
    /// Its name.
    pub name: String,
    /// How.
    #[serde(flatten)]
    pub delivery: Delivery,
    /// What.
    #[serde(flatten)]
    pub payload: Payload,
}

/// How a route delivers: internally tagged.
#[kbr_runtime::schema]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "delivery")]
pub enum Delivery {
    /// Push to a URL.
    Push {
        /// Where.
        url: String,
    },
    /// Let the receiver pull.
    Pull {
        /// How often, in seconds.
        interval: u32,
    },
}

/// What a route sends: externally tagged.
#[kbr_runtime::schema]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Payload {
    /// Text.
    Text(String),
    /// A number, also read as `count`.
    #[serde(alias = "count")]
    Number(i32),
}

/// A step: adjacently tagged, with an alias and a unit variant (whose content serde refuses).
#[kbr_runtime::schema]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "with")]
pub enum Step {
    /// Wait this long, also read as `Sleep`.
    #[serde(alias = "Sleep")]
    Wait(u32),
    /// Done.
    Done,
}
