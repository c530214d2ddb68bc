//! Validation of an object against its CRD schema, with the API server's field errors.
//!
//! The keywords follow kube-openapi's `pkg/validation/validate` (`SchemaValidator`: the type,
//! `allOf`/`anyOf`/`oneOf`/`not`, string, format, number, slice, enum and object validators, in
//! that order, with the messages of `pkg/validation/errors/schema.go`: `spec.replicas in body
//! should be less than or equal to 10`, `… should match '^[a-z]+$'`, `… must be of type
//! integer: "string"`); apiextensions-apiserver's `pkg/apiserver/validation/validation.go`
//! (`kubeOpenAPIResultToFieldErrors`) turns them into apimachinery field errors
//! (`apimachinery/pkg/util/validation/field/errors.go`): `Required value`, `Unsupported value:
//! "C": supported values: "A", "B"`, `Too long: may not be more than 5 bytes`, `Too many: 3:
//! must have at most 2 items`, `Invalid value: 11: …`. List types are checked as
//! `apiserver/schema/listtype` does (`Duplicate value`). On update, a node equal to its old
//! value is not reported (CRD validation ratcheting, `pkg/apiserver/validation/ratcheting.go`).

use std::fmt;

use serde_json::Value;

use super::node::Node;

/// The type of a field error: apimachinery's `field.ErrorType`, the `reason` of a
/// `metav1.StatusCause`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldErrorKind {
    /// `FieldValueRequired`: `Required value`.
    Required,
    /// `FieldValueInvalid`: `Invalid value`.
    Invalid,
    /// `FieldValueTypeInvalid`: `Invalid value` (the value has the wrong JSON type).
    TypeInvalid,
    /// `FieldValueNotSupported`: `Unsupported value` (not in the `enum`).
    NotSupported,
    /// `FieldValueForbidden`: `Forbidden`.
    Forbidden,
    /// `FieldValueDuplicate`: `Duplicate value` (a repeated set item or map-list key).
    Duplicate,
    /// `FieldValueTooLong`: `Too long`.
    TooLong,
    /// `FieldValueTooMany`: `Too many`.
    TooMany,
    /// `InternalError`: `Internal error` (a CEL rule that could not be evaluated).
    Internal,
}

impl FieldErrorKind {
    /// The `reason` of the status cause, e.g. `FieldValueInvalid`.
    pub fn reason(self) -> &'static str {
        match self {
            Self::Required => "FieldValueRequired",
            Self::Invalid => "FieldValueInvalid",
            Self::TypeInvalid => "FieldValueTypeInvalid",
            Self::NotSupported => "FieldValueNotSupported",
            Self::Forbidden => "FieldValueForbidden",
            Self::Duplicate => "FieldValueDuplicate",
            Self::TooLong => "FieldValueTooLong",
            Self::TooMany => "FieldValueTooMany",
            Self::Internal => "InternalError",
        }
    }

    /// The words a message starts with (`field.ErrorType.String`).
    fn words(self) -> &'static str {
        match self {
            Self::Required => "Required value",
            Self::Invalid | Self::TypeInvalid => "Invalid value",
            Self::NotSupported => "Unsupported value",
            Self::Forbidden => "Forbidden",
            Self::Duplicate => "Duplicate value",
            Self::TooLong => "Too long",
            Self::TooMany => "Too many",
            Self::Internal => "Internal error",
        }
    }
}

/// One field error, as the API server reports it in a 422 `Invalid` status: the cause's
/// `reason`, `field` and `message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// The error type (the cause's `reason`).
    pub kind: FieldErrorKind,
    /// The field path, e.g. `spec.replicas` or `spec.ports[0].name`.
    pub field: String,
    /// The message without the field (`field.Error.ErrorBody`), e.g. `Invalid value: 11:
    /// spec.replicas in body should be less than or equal to 10`.
    pub message: String,
}

impl FieldError {
    /// An error of `kind` at `field` about `value` (`None`: the value is omitted, as for
    /// objects and arrays) with `detail`, worded as `field.Error.ErrorBody`.
    pub(super) fn new(
        kind: FieldErrorKind,
        field: &str,
        value: Option<&Value>,
        detail: &str,
    ) -> Self {
        let mut message = kind.words().to_owned();
        let shows_value = !matches!(
            kind,
            FieldErrorKind::Required
                | FieldErrorKind::Forbidden
                | FieldErrorKind::TooLong
                | FieldErrorKind::Internal
        );
        if shows_value && let Some(value) = value {
            message.push_str(": ");
            message.push_str(&go_value(value));
        }
        if !detail.is_empty() {
            message.push_str(": ");
            message.push_str(detail);
        }
        Self {
            kind,
            field: field.to_owned(),
            message,
        }
    }
}

impl fmt::Display for FieldError {
    /// `field: message`, as `field.Error.Error`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// `value` as Go's `%v`/`%q` prints the decoded JSON value in a field error.
pub(super) fn go_value(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (None, Some(u), _) => u.to_string(),
            (None, None, Some(f)) => go_float(f),
            _ => n.to_string(),
        },
        Value::String(s) => format!("{s:?}"),
        // Go prints these with `%#v` (`map[string]interface {}{…}`); JSON is close enough.
        other => other.to_string(),
    }
}

/// A float as Go's `%v` prints it: no trailing `.0`, exponent from 1e21.
pub(super) fn go_float(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e21 {
        format!("{f:.0}")
    } else {
        f.to_string()
    }
}

/// The JSON type name of a decoded value, as kube-openapi names it.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The path of the field `name` below `path` (kube-openapi's naming).
fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

/// Collects the schema errors of one object.
pub(super) struct Validator {
    pub(super) errors: Vec<FieldError>,
}

impl Validator {
    fn invalid(&mut self, path: &str, value: &Value, message: String) {
        self.errors.push(FieldError::new(
            FieldErrorKind::Invalid,
            path,
            Some(value),
            &message,
        ));
    }

    fn type_error(&mut self, path: &str, expected: &str, got: &str) {
        let got = Value::String(got.to_owned());
        let message = format!(
            "{path} in body must be of type {expected}: {}",
            go_value(&got)
        );
        self.errors.push(FieldError::new(
            FieldErrorKind::TypeInvalid,
            path,
            Some(&got),
            &message,
        ));
    }

    /// Validates `value` at `path` against `node`. `old` is the correlated old value on
    /// update: an unchanged node is not validated again (ratcheting).
    pub(super) fn node(
        &mut self,
        node: &Node,
        value: &Value,
        old: Option<&Value>,
        path: &str,
        resource_root: bool,
    ) {
        if old.is_some_and(|old| old == value) {
            return;
        }
        if value.is_null() {
            if !node.nullable && (node.int_or_string || !node.type_.is_empty()) {
                let expected = if node.int_or_string {
                    "integer,string"
                } else {
                    &node.type_
                };
                self.type_error(path, expected, "null");
            }
            self.enumeration(node, value, path);
            return;
        }
        self.type_of(node, value, path);
        self.junctors(node, value, path);
        match value {
            Value::String(text) => {
                self.string(node, value, text, path);
                self.format(node, value, text, path);
            }
            Value::Number(_) => self.number(node, value, path),
            Value::Array(items) => self.array(node, items, old, path),
            _ => {}
        }
        self.enumeration(node, value, path);
        if let Value::Object(fields) = value {
            self.object(node, value, fields, old, path, resource_root);
        }
    }

    fn type_of(&mut self, node: &Node, value: &Value, path: &str) {
        let got = json_type(value);
        let integral_float = value
            .as_f64()
            .is_some_and(|f| f.fract() == 0.0 && !value.is_i64() && !value.is_u64());
        let fits = |expected: &str| {
            expected == got
                || (expected == "number" && got == "integer")
                || (expected == "integer" && integral_float)
        };
        if node.int_or_string {
            if !(fits("integer") || fits("string")) {
                self.type_error(path, "integer,string", got);
            }
        } else if !node.type_.is_empty() && !fits(&node.type_) {
            self.type_error(path, &node.type_, got);
        }
    }

    /// `allOf`, `anyOf`, `oneOf`, `not` (kube-openapi's `schemaPropsValidator`, messages of
    /// `validate/schema_messages.go`). Their own errors are not `Validation` errors, so
    /// apiextensions reports them at the root path, which prints as `<nil>`; the closest
    /// failing branch's errors follow.
    fn junctors(&mut self, node: &Node, value: &Value, path: &str) {
        let errors_of = |branch: &Node| {
            let mut nested = Validator { errors: Vec::new() };
            nested.node(branch, value, None, path, false);
            nested.errors
        };
        let at_root = |message: String| {
            FieldError::new(
                FieldErrorKind::Invalid,
                "<nil>",
                Some(&Value::String(String::new())),
                &message,
            )
        };
        for branch in &node.all_of {
            let errors = errors_of(branch);
            self.errors.extend(errors);
        }
        if !node.any_of.is_empty() {
            let results: Vec<Vec<FieldError>> = node.any_of.iter().map(errors_of).collect();
            if !results.iter().any(Vec::is_empty) {
                self.errors.push(at_root(format!(
                    "{path:?} must validate at least one schema (anyOf)"
                )));
                if let Some(best) = results.into_iter().min_by_key(Vec::len) {
                    self.errors.extend(best);
                }
            }
        }
        if !node.one_of.is_empty() {
            let results: Vec<Vec<FieldError>> = node.one_of.iter().map(errors_of).collect();
            let valid = results.iter().filter(|r| r.is_empty()).count();
            if valid != 1 {
                let found = if valid == 0 {
                    "Found none valid".to_owned()
                } else {
                    format!("Found {valid} valid alternatives")
                };
                self.errors.push(at_root(format!(
                    "{path:?} must validate one and only one schema (oneOf). {found}"
                )));
                if valid == 0
                    && let Some(best) = results.into_iter().min_by_key(Vec::len)
                {
                    self.errors.extend(best);
                }
            }
        }
        if let Some(not) = node.not.as_deref()
            && errors_of(not).is_empty()
        {
            self.errors.push(at_root(format!(
                "{path:?} must not validate the schema (not)"
            )));
        }
    }

    /// maxLength, minLength, pattern: the first failure only (kube-openapi's
    /// `stringValidator`).
    fn string(&mut self, node: &Node, value: &Value, text: &str, path: &str) {
        let length = text.chars().count() as u64;
        if let Some(max) = node.max_length
            && length > max
        {
            self.errors.push(FieldError::new(
                FieldErrorKind::TooLong,
                path,
                None,
                &format!("may not be more than {max} bytes"),
            ));
            return;
        }
        if let Some(min) = node.min_length
            && length < min
        {
            self.invalid(
                path,
                value,
                format!("{path} in body should be at least {min} chars long"),
            );
            return;
        }
        if let Some((pattern, regex)) = &node.pattern
            && !regex.is_match(text)
        {
            self.invalid(
                path,
                value,
                format!("{path} in body should match '{pattern}'"),
            );
        }
    }

    /// The formats apiextensions keeps (`apiserver/validation/formats.go`), those kbr checks.
    fn format(&mut self, node: &Node, value: &Value, text: &str, path: &str) {
        let valid = match node.format.as_str() {
            "date-time" | "datetime" => formats::date_time(text),
            "date" => formats::date(text),
            "uuid" => formats::uuid(text, None),
            "uuid3" => formats::uuid(text, Some('3')),
            "uuid4" => formats::uuid(text, Some('4')),
            "uuid5" => formats::uuid(text, Some('5')),
            "ipv4" => text.parse::<std::net::Ipv4Addr>().is_ok(),
            "ipv6" => text.parse::<std::net::Ipv6Addr>().is_ok(),
            "cidr" => formats::cidr(text),
            "hostname" => formats::hostname(text),
            "byte" => formats::base64(text),
            _ => true,
        };
        if !valid {
            let message = format!(
                "{path} in body must be of type {}: {}",
                node.format,
                go_value(value)
            );
            self.errors.push(FieldError::new(
                FieldErrorKind::TypeInvalid,
                path,
                Some(value),
                &message,
            ));
        }
    }

    /// multipleOf, minimum, maximum (kube-openapi's `numberValidator`); integers print the
    /// bound as an integer (`MaximumNativeType`).
    fn number(&mut self, node: &Node, value: &Value, path: &str) {
        let Some(number) = value.as_f64() else {
            return;
        };
        let integer = value.is_i64() || value.is_u64();
        let bound = |b: f64| {
            if integer {
                format!("{}", b as i64)
            } else {
                go_float(b)
            }
        };
        if let Some(factor) = node.multiple_of
            && factor > 0.0
            && (number / factor).fract() != 0.0
        {
            self.invalid(
                path,
                value,
                format!("{path} in body should be a multiple of {}", bound(factor)),
            );
        }
        if let Some(min) = node.minimum {
            let min_cmp = if integer { (min as i64) as f64 } else { min };
            let fails = if node.exclusive_minimum {
                number <= min_cmp
            } else {
                number < min_cmp
            };
            if fails {
                let words = if node.exclusive_minimum {
                    "greater than"
                } else {
                    "greater than or equal to"
                };
                self.invalid(
                    path,
                    value,
                    format!("{path} in body should be {words} {}", bound(min)),
                );
            }
        }
        if let Some(max) = node.maximum {
            let max_cmp = if integer { (max as i64) as f64 } else { max };
            let fails = if node.exclusive_maximum {
                number >= max_cmp
            } else {
                number > max_cmp
            };
            if fails {
                let words = if node.exclusive_maximum {
                    "less than"
                } else {
                    "less than or equal to"
                };
                self.invalid(
                    path,
                    value,
                    format!("{path} in body should be {words} {}", bound(max)),
                );
            }
        }
    }

    fn array(&mut self, node: &Node, items: &[Value], old: Option<&Value>, path: &str) {
        if let Some(item) = node.items.as_deref() {
            let old_items = old.and_then(Value::as_array);
            for (index, value) in items.iter().enumerate() {
                let old_item = old_items.and_then(|old| correlated_item(node, value, old));
                self.node(
                    item,
                    value,
                    old_item,
                    &format!("{path}[{index}]"),
                    item.embedded_resource,
                );
            }
        }
        let size = items.len() as u64;
        if let Some(min) = node.min_items
            && size < min
        {
            self.invalid(
                path,
                &Value::from(size),
                format!("{path} in body should have at least {min} items"),
            );
        }
        if let Some(max) = node.max_items
            && size > max
        {
            self.errors.push(FieldError::new(
                FieldErrorKind::TooMany,
                path,
                Some(&Value::from(size)),
                &format!("must have at most {max} items"),
            ));
        }
        // apiextensions-apiserver pkg/apiserver/schema/listtype/validation.go.
        match node.list_type.as_deref() {
            Some("set") => {
                for (index, value) in items.iter().enumerate() {
                    if items[..index].contains(value) {
                        self.errors.push(FieldError::new(
                            FieldErrorKind::Duplicate,
                            &format!("{path}[{index}]"),
                            Some(value),
                            "",
                        ));
                    }
                }
            }
            Some("map") => {
                let keys: Vec<Value> = items.iter().map(|i| map_key(node, i)).collect();
                for (index, key) in keys.iter().enumerate() {
                    if keys[..index].contains(key) {
                        self.errors.push(FieldError::new(
                            FieldErrorKind::Duplicate,
                            &format!("{path}[{index}]"),
                            Some(key),
                            "",
                        ));
                    }
                }
            }
            _ => {}
        }
    }

    fn enumeration(&mut self, node: &Node, value: &Value, path: &str) {
        let Some(allowed) = &node.enum_values else {
            return;
        };
        if allowed.iter().any(|a| same_value(a, value)) {
            return;
        }
        let supported: Vec<String> = allowed
            .iter()
            .map(|a| {
                let text = match a {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                format!("{text:?}")
            })
            .collect();
        let detail = if supported.is_empty() {
            String::new()
        } else {
            format!("supported values: {}", supported.join(", "))
        };
        self.errors.push(FieldError::new(
            FieldErrorKind::NotSupported,
            path,
            Some(value),
            &detail,
        ));
    }

    fn object(
        &mut self,
        node: &Node,
        value: &Value,
        fields: &serde_json::Map<String, Value>,
        old: Option<&Value>,
        path: &str,
        resource_root: bool,
    ) {
        let _ = value;
        let size = fields.len() as u64;
        if let Some(min) = node.min_properties
            && size < min
        {
            self.invalid(
                path,
                &Value::from(size),
                format!("{path} in body should have at least {min} properties"),
            );
            return;
        }
        if let Some(max) = node.max_properties
            && size > max
        {
            self.errors.push(FieldError::new(
                FieldErrorKind::TooMany,
                path,
                Some(&Value::from(size)),
                &format!("must have at most {max} items"),
            ));
            return;
        }
        let old_fields = old.and_then(Value::as_object);
        for (name, field) in fields {
            // The root's metadata is ObjectMeta's, validated by the API server's own rules.
            if resource_root && matches!(name.as_str(), "metadata" | "apiVersion" | "kind") {
                continue;
            }
            if let Some(child_node) = node.field(name) {
                let old_field = old_fields.and_then(|o| o.get(name));
                self.node(
                    child_node,
                    field,
                    old_field,
                    &child(path, name),
                    child_node.embedded_resource,
                );
            }
        }
        for name in &node.required {
            if !fields.contains_key(name) {
                self.errors.push(FieldError::new(
                    FieldErrorKind::Required,
                    &child(path, name),
                    None,
                    "",
                ));
            }
        }
    }
}

/// JSON equality with numbers compared by value (`1` equals `1.0`), as kube-openapi's enum
/// check converts before comparing.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// The key of a map-list item: its `x-kubernetes-list-map-keys` fields.
fn map_key(node: &Node, item: &Value) -> Value {
    let mut key = serde_json::Map::new();
    for name in &node.list_map_keys {
        if let Some(v) = item.get(name) {
            key.insert(name.clone(), v.clone());
        }
    }
    Value::Object(key)
}

/// The old item `value` corresponds to: by key in a map list; none elsewhere (set and atomic
/// list items do not correlate, as in `apiserver/pkg/cel/common/equality.go`).
pub(super) fn correlated_item<'a>(
    node: &Node,
    value: &Value,
    old: &'a [Value],
) -> Option<&'a Value> {
    if node.list_type.as_deref() != Some("map") {
        return None;
    }
    let key = map_key(node, value);
    old.iter().find(|o| map_key(node, o) == key)
}

/// The string formats kbr checks, as go-openapi's `strfmt` does.
mod formats {
    use std::sync::LazyLock;

    use regex::Regex;

    static DATE_TIME: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
            .expect("a valid regular expression")
    });
    static DATE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\d{4}-\d{2}-\d{2}$").expect("a valid regular expression"));
    static UUID: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?([0-9a-f])[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
        )
        .expect("a valid regular expression")
    });
    static HOSTNAME: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?))*\.?$")
            .expect("a valid regular expression")
    });

    pub(super) fn date_time(text: &str) -> bool {
        DATE_TIME.is_match(text)
    }

    pub(super) fn date(text: &str) -> bool {
        DATE.is_match(text)
    }

    pub(super) fn uuid(text: &str, version: Option<char>) -> bool {
        match UUID.captures(text) {
            Some(captures) => {
                version.is_none_or(|v| captures.get(1).is_some_and(|m| m.as_str().starts_with(v)))
            }
            None => false,
        }
    }

    pub(super) fn cidr(text: &str) -> bool {
        let Some((ip, prefix)) = text.split_once('/') else {
            return false;
        };
        let Ok(prefix) = prefix.parse::<u8>() else {
            return false;
        };
        match ip.parse::<std::net::IpAddr>() {
            Ok(std::net::IpAddr::V4(_)) => prefix <= 32,
            Ok(std::net::IpAddr::V6(_)) => prefix <= 128,
            Err(_) => false,
        }
    }

    pub(super) fn hostname(text: &str) -> bool {
        text.len() <= 255 && HOSTNAME.is_match(text)
    }

    pub(super) fn base64(text: &str) -> bool {
        text.len().is_multiple_of(4)
            && text
                .trim_end_matches('=')
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
            && text.len() - text.trim_end_matches('=').len() <= 2
    }
}
