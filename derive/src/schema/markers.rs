//! The marker vocabulary: what a `#[kbr(...)]` schema marker is (the controller-gen marker it
//! mirrors, where it may be written, what value it takes, which JSON shapes it applies to),
//! looking markers up and suggesting the one meant. The markers themselves are in
//! [`super::table`].

use super::rust_type::Kind;
pub(crate) use super::table::MARKERS;

/// Where a marker may be written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    Field,
    Type,
    Both,
}

/// The value a marker takes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Value {
    /// `name` or `name = true|false`.
    Flag,
    /// A number, possibly negative or fractional: `minimum = -1.5`.
    Number,
    /// A non-negative integer: `max_length = 63`.
    Count,
    /// A string literal.
    Str,
    /// One of the given strings.
    Choice(&'static [&'static str]),
    /// A string naming an OpenAPI format.
    Format,
    /// Any JSON value: `default = {"a": 1}`.
    Json,
    /// A non-empty JSON array: `enum = ["a", "b"]`.
    JsonArray,
    /// Field names: `[a, b]` (Rust names) or `["a", "b"]` (JSON names).
    Fields,
    /// Property names of the items: `["type"]`.
    Keys,
    /// `validation(rule = "...", message = "...", ...)`.
    Rule,
    /// `items(max_length = 3, ...)`: markers for the items of a list.
    Items,
}

/// The JSON shapes a marker applies to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Applies {
    Anything,
    Numeric,
    String,
    Formattable,
    Array,
    Object,
    Map,
    Struct,
    /// Objects or free-form JSON (`serde_json::Value`).
    ObjectOrAny,
    /// Types that serialize as an integer or a string (not `String` or plain integers).
    IntOrString,
}

impl Applies {
    /// Whether a marker for these shapes can apply to a value of `kind`.
    pub(crate) fn fits(self, kind: &Kind) -> bool {
        if *kind == Kind::Unknown || self == Applies::Anything {
            return true;
        }
        match self {
            Applies::Anything => true,
            Applies::Numeric => matches!(kind, Kind::Integer | Kind::Number),
            Applies::String => *kind == Kind::String,
            Applies::Formattable => matches!(kind, Kind::String | Kind::Integer | Kind::Number),
            Applies::Array => matches!(kind, Kind::Array(_)),
            Applies::Object => matches!(kind, Kind::Map(_) | Kind::Struct),
            Applies::Map => matches!(kind, Kind::Map(_)),
            Applies::Struct => *kind == Kind::Struct,
            Applies::ObjectOrAny => matches!(kind, Kind::Map(_) | Kind::Struct | Kind::Any),
            Applies::IntOrString => *kind == Kind::Any,
        }
    }

    /// "integers and numbers", for errors.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Applies::Anything => "any value",
            Applies::Numeric => "integers and numbers",
            Applies::String => "strings",
            Applies::Formattable => "strings and numbers",
            Applies::Array => "lists (Vec, sets, arrays)",
            Applies::Object => "maps and structs",
            Applies::Map => "maps (BTreeMap, HashMap)",
            Applies::Struct => "structs",
            Applies::ObjectOrAny => "structs, maps and serde_json::Value",
            Applies::IntOrString => {
                "types that serialize as an integer or a string (e.g. an untagged enum); \
                 k8s-openapi's IntOrString and Quantity already are"
            }
        }
    }
}

/// One marker.
pub(crate) struct Marker {
    /// Name in `#[kbr(...)]`.
    pub name: &'static str,
    /// Other accepted spellings.
    pub aliases: &'static [&'static str],
    /// The controller-gen marker it mirrors (for docs and hints).
    pub controller_gen: &'static str,
    /// Key in the marker record the runtime reads.
    pub key: &'static str,
    pub scope: Scope,
    pub value: Value,
    pub applies: Applies,
}

/// The keys of one `validation(...)` rule.
pub(crate) const RULE_KEYS: &[&str] = &[
    "rule",
    "message",
    "message_expression",
    "reason",
    "field_path",
    "optional_old_self",
];

/// The reasons the API server accepts for a failed rule.
pub(crate) const REASONS: &[&str] = &[
    "FieldValueInvalid",
    "FieldValueForbidden",
    "FieldValueRequired",
    "FieldValueDuplicate",
];

/// The formats the API server knows (kube-openapi's registry plus the numeric ones).
pub(crate) const FORMATS: &[&str] = &[
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "duration",
    "datetime",
    "date-time",
    "int32",
    "int64",
    "float",
    "double",
];

/// The marker named `name` (or one of its aliases).
pub(crate) fn find(name: &str) -> Option<&'static Marker> {
    MARKERS
        .iter()
        .find(|marker| marker.name == name || marker.aliases.contains(&name))
}

/// Lower-case, without `_`/`-`/`:` and a `kubebuilder`/`validation` prefix.
fn normalize(name: &str) -> String {
    let lower: String = name
        .chars()
        .filter(|c| !matches!(c, '_' | '-' | ':'))
        .flat_map(char::to_lowercase)
        .collect();
    let lower = lower.strip_prefix("kubebuilder").unwrap_or(&lower);
    let lower = lower.strip_prefix("validation").unwrap_or(lower);
    lower
        .strip_prefix('x')
        .filter(|rest| rest.len() > 3)
        .unwrap_or(lower)
        .to_owned()
}

/// The marker `name` was probably meant to be: same letters ignoring case and separators
/// (`minLength`, `MinLength`, `XValidation`), a plural/singular slip, or a typo.
pub(crate) fn suggest(name: &str) -> Option<&'static str> {
    let wanted = normalize(name);
    let trimmed = wanted.trim_end_matches('s');
    let candidates = || {
        MARKERS.iter().flat_map(|marker| {
            std::iter::once(marker.name)
                .chain(marker.aliases.iter().copied())
                .map(move |spelling| (marker.name, spelling))
        })
    };
    if let Some((name, _)) = candidates().find(|(_, spelling)| {
        let known = normalize(spelling);
        known == wanted || known.trim_end_matches('s') == trimmed
    }) {
        return Some(name);
    }
    candidates()
        .map(|(marker, spelling)| (crate::parse::distance(name, spelling), marker))
        .filter(|(d, _)| *d <= 2 && name.len() > 3)
        .min_by_key(|(d, _)| *d)
        .map(|(_, marker)| marker)
}

#[cfg(test)]
mod tests {
    use super::{find, suggest};

    #[test]
    fn suggests_the_marker_meant() {
        assert_eq!(suggest("minLength"), Some("min_length"));
        assert_eq!(suggest("MaxItems"), Some("max_items"));
        assert_eq!(suggest("XValidation"), Some("validation"));
        assert_eq!(suggest("listMapKey"), Some("list_map_keys"));
        assert_eq!(suggest("minimun"), Some("minimum"));
        assert_eq!(suggest("kubebuilder:validation:Pattern"), Some("pattern"));
        assert_eq!(suggest("colour"), None);
        assert!(find("r#enum").is_some());
    }
}
