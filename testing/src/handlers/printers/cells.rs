//! What the printers share: the columns most kinds have (`Age`, and the `-o wide`
//! `Containers` and `Images` of a template) and the readers that turn an object's fields into
//! cells as `printers.go`'s helpers do (`layoutContainerCells`, `labels.FormatLabels`,
//! `metav1.FormatLabelSelector`, `<none>` for a missing value).

use k8s_openapi::jiff::Timestamp;
use serde_json::Value;

use crate::machinery::label_selector::selector_text;
use crate::machinery::registry::CREATION_TIMESTAMP_DOC;

/// A column after `Name`: its name, type (`string`, `integer`, `boolean`), priority and
/// description (no format).
pub(crate) type Column = (&'static str, &'static str, i32, &'static str);

/// The `Age` column every printer has.
pub(super) const AGE: Column = ("Age", "string", 0, CREATION_TIMESTAMP_DOC);
/// The `-o wide` column of a template's container names.
pub(super) const CONTAINERS: Column = (
    "Containers",
    "string",
    1,
    "Names of each container in the template.",
);
/// The `-o wide` column of a template's container images.
pub(super) const IMAGES: Column = (
    "Images",
    "string",
    1,
    "Images referenced by each container in the template.",
);

/// `<none>` for an empty text, as the printers write a missing value.
pub(super) fn or_none(text: String) -> String {
    if text.is_empty() {
        "<none>".to_owned()
    } else {
        text
    }
}

/// The value at `path` (dotted) in `obj`.
pub(super) fn at<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(obj, |v, seg| v.get(seg))
}

/// The string at `path` (dotted) in `obj`, `""` when absent.
pub(super) fn text<'a>(obj: &'a Value, path: &str) -> &'a str {
    at(obj, path).and_then(Value::as_str).unwrap_or("")
}

/// The integer at `path` (dotted) in `obj`, 0 when absent.
pub(super) fn number(obj: &Value, path: &str) -> i64 {
    at(obj, path).and_then(Value::as_i64).unwrap_or(0)
}

/// The items of the list at `path` (dotted) in `obj`.
pub(super) fn items<'a>(obj: &'a Value, path: &str) -> &'a [Value] {
    at(obj, path)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The number of keys of the map at `field` of `obj`.
pub(super) fn count(obj: &Value, field: &str) -> usize {
    obj.get(field)
        .and_then(Value::as_object)
        .map_or(0, |m| m.len())
}

/// The timestamp at `path` (dotted) in `obj`, if there is one that parses.
pub(super) fn timestamp(obj: &Value, path: &str) -> Option<Timestamp> {
    text(obj, path).parse().ok()
}

/// `layoutContainerCells`: the names and the images of the containers at `path`, each joined
/// by commas.
pub(super) fn container_cells(obj: &Value, path: &str) -> [String; 2] {
    let containers = items(obj, path);
    let joined = |field: &str| {
        containers
            .iter()
            .map(|c| text(c, field))
            .collect::<Vec<_>>()
            .join(",")
    };
    [joined("name"), joined("image")]
}

/// apimachinery `labels.FormatLabels`: the map at `path` as sorted `k=v` pairs joined by
/// commas, `<none>` when empty.
pub(super) fn format_labels(obj: &Value, path: &str) -> String {
    let mut pairs: Vec<String> = at(obj, path)
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    pairs.sort();
    or_none(pairs.join(","))
}

/// apimachinery `metav1.FormatLabelSelector`: the label selector at `path` as
/// `labels.Selector.String()` writes it, `<none>` when it selects everything or is absent.
pub(super) fn format_selector(obj: &Value, path: &str) -> String {
    or_none(at(obj, path).map_or(String::new(), selector_text))
}
