//! Whether an applied configuration fits its merge type, with the errors the server reports.
//!
//! Mirrors structured-merge-diff v6 `typed/validate.go` (`TypedValue.Validate` without
//! `AllowDuplicates`, as apimachinery `managedfields/internal/structuredmerge.go` runs it on
//! the configuration) and the error paths of `typed/helpers.go`.

use serde_json::Value;

use super::fieldset::PathElement;
use super::schema::Ty;
use super::typed::{Handler, field_type, handler, item_element};

/// The errors the server reports for an applied configuration (`TypedValue.Validate` without
/// `AllowDuplicates`): undeclared fields, list items without keys, duplicate items, as
/// `<path>: <message>`.
pub(crate) fn validate(v: &Value, ty: &Ty) -> Vec<String> {
    let mut errors = Vec::new();
    validate_walk(v, ty, "", &mut errors);
    errors
}

fn validate_walk(v: &Value, ty: &Ty, path: &str, errors: &mut Vec<String>) {
    let atom = ty.atom();
    match (handler(&atom, Some(v)), v) {
        (Handler::Map(map), Value::Object(fields)) => {
            for (name, value) in fields {
                let p = format!("{path}.{name}");
                if !map.fields.contains_key(name) && map.elem.is_none() {
                    errors.push(format!("{p}: field not declared in schema"));
                    return;
                }
                validate_walk(value, &field_type(map, name), &p, errors);
            }
        }
        (Handler::List(list), Value::Array(items)) => {
            let mut seen = std::collections::BTreeSet::new();
            for (i, item) in items.iter().enumerate() {
                let pe = if list.associative {
                    match item_element(list, item) {
                        Ok(pe) => pe,
                        Err(e) => {
                            errors.push(format!("{path}: element {i}: {e}"));
                            return;
                        }
                    }
                } else {
                    PathElement::Index(i64::try_from(i).unwrap_or(i64::MAX))
                };
                if list.associative && !seen.insert(pe.clone()) {
                    errors.push(format!("{path}: duplicate entries for key {pe}"));
                }
                validate_walk(item, &list.elem, &format!("{path}{pe}"), errors);
            }
        }
        _ => {}
    }
}
