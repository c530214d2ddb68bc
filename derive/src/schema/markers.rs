//! The marker vocabulary, as the derive uses it: kbr-core's registry ([`MARKERS`]: every
//! marker's name, argument, scope and the shapes it applies to), the Rust-type check against
//! it, and suggesting the marker meant.

use kbr_core::marker::Shape;
pub(crate) use kbr_core::marker::{Applies, Argument, FORMATS, MARKERS, Marker, Scope, find};

use super::rust_type::Kind;

/// The keys of one `validation(...)` rule, as written in `#[kbr(...)]`.
pub(crate) const RULE_KEYS: &[&str] = &[
    "rule",
    "message",
    "message_expression",
    "reason",
    "field_path",
    "optional_old_self",
];

/// Whether a marker for `applies` can apply to a value of the Rust `kind` (always, when the
/// macro cannot see the type's JSON).
pub(crate) fn fits(applies: Applies, kind: &Kind) -> bool {
    let shape = match kind {
        Kind::String => Shape::String,
        Kind::Integer => Shape::Integer,
        Kind::Number => Shape::Number,
        Kind::Boolean => Shape::Boolean,
        Kind::Array(_) => Shape::Array,
        Kind::Map(_) => Shape::Map,
        Kind::Struct => Shape::Struct,
        Kind::Any => Shape::Any,
        Kind::Unknown => return true,
    };
    applies.admits(shape)
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
