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

use serde_json::Value;

use super::formats;
use super::listtype::correlated_item;
use super::node::Node;
use crate::field_error::{FieldError, FieldErrorType, go_float, go_value};

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

/// `swag.IsFloat64AJSONInteger`: a whole number within ±2^53.
fn is_json_integer(f: f64) -> bool {
    f.is_finite() && f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0
}

/// An error kube-openapi reports without a field (not a `Validation` error): apiextensions
/// turns it into `field.Invalid(nil, "", …)`, whose path prints as `<nil>`.
fn at_root(message: String) -> FieldError {
    FieldError::new(
        FieldErrorType::Invalid,
        "<nil>",
        Some(&Value::String(String::new())),
        &message,
    )
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
            FieldErrorType::Invalid,
            path,
            Some(value),
            &message,
        ));
    }

    fn type_error(&mut self, path: &str, expected: &str, got: &str) {
        self.type_invalid(path, expected, &Value::String(got.to_owned()));
    }

    /// kube-openapi's `errors.InvalidType`: `value` at `path` is not of type `expected`.
    fn type_invalid(&mut self, path: &str, expected: &str, value: &Value) {
        let message = format!(
            "{path} in body must be of type {expected}: {}",
            go_value(value)
        );
        self.errors.push(FieldError::new(
            FieldErrorType::TypeInvalid,
            path,
            Some(value),
            &message,
        ));
    }

    /// Validates `value` at `path` against `node`. `old` is the correlated old value on
    /// update: an unchanged node is not validated again (ratcheting).
    pub(super) fn node(&mut self, node: &Node, value: &Value, old: Option<&Value>, path: &str) {
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
            self.object(node, value, fields, old, path);
        }
    }

    /// kube-openapi's `typeValidator` (`validate/type.go`): the JSON type against the node's
    /// types; a number against the node's `format` as well (an integer is `int64`, any other
    /// number `float64`, as Go decodes JSON), except that strings and arrays pass any node
    /// with a format that is not numeric.
    fn type_of(&mut self, node: &Node, value: &Value, path: &str) {
        let types: Vec<&str> = if node.int_or_string {
            vec!["integer", "string"]
        } else if node.type_.is_empty() {
            Vec::new()
        } else {
            vec![node.type_.as_str()]
        };
        let format = node.format.as_str();
        if types.is_empty() && format.is_empty() {
            return;
        }
        let number = formats::GoNumber::of(value);
        let (schema_type, data_format) = match (value, &number) {
            (Value::Number(_), Some(formats::GoNumber::Int(_))) => ("integer", "int64"),
            (Value::Number(_), _) => ("number", "float64"),
            _ => (json_type(value), ""),
        };
        let contains = |t: &str| types.contains(&t);
        let float_int = matches!(number, Some(formats::GoNumber::Float(f)) if is_json_integer(f))
            && contains("integer");
        let int_float = schema_type == "integer" && contains("number");
        let string_or_slice = value.is_string() || value.is_array();
        let fits = contains(schema_type) || data_format == format || float_int || int_float;
        if !(string_or_slice || format.is_empty() || fits) {
            self.type_error(path, format, data_format);
            return;
        }
        let numeric = contains("number") || contains("integer");
        if !(numeric || format.is_empty()) && string_or_slice {
            return;
        }
        if !(contains(schema_type) || float_int || int_float) {
            self.type_error(path, &types.join(","), schema_type);
        }
    }

    /// `allOf`, `anyOf`, `oneOf`, `not` (kube-openapi's `schemaPropsValidator`, messages of
    /// `validate/schema_messages.go`). Their own errors are not `Validation` errors, so
    /// apiextensions reports them at the root path, which prints as `<nil>`; the closest
    /// failing branch's errors follow.
    fn junctors(&mut self, node: &Node, value: &Value, path: &str) {
        let errors_of = |branch: &Node| {
            let mut nested = Validator { errors: Vec::new() };
            nested.node(branch, value, None, path);
            nested.errors
        };
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
        if !node.all_of.is_empty() {
            let mut validated = 0;
            for branch in &node.all_of {
                let errors = errors_of(branch);
                validated += usize::from(errors.is_empty());
                self.errors.extend(errors);
            }
            if validated != node.all_of.len() {
                let none = if validated == 0 {
                    ". None validated"
                } else {
                    ""
                };
                self.errors.push(at_root(format!(
                    "{path:?} must validate all the schemas (allOf){none}"
                )));
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
                FieldErrorType::TooLong,
                path,
                None,
                format!("may not be more than {max} bytes"),
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

    /// kube-openapi's `formatValidator`: a string against the node's (kept) format.
    fn format(&mut self, node: &Node, value: &Value, text: &str, path: &str) {
        let normalized = node.format.replace('-', "");
        if crate::strfmt::validates(&normalized, text) == Some(false) {
            self.type_invalid(path, &node.format, value);
        }
    }

    /// kube-openapi's `numberValidator`: the value must fit the node's type and format
    /// (`Checked value must be of type integer with format int32 in …`, reported at the root
    /// path as apiextensions reports errors that are not `Validation` errors), then
    /// multipleOf, minimum and maximum — each compared natively (integers as integers, the
    /// bound printed as one: `MaximumNativeType`) when the bound itself fits the type and
    /// format, else as floats, after reporting that it does not.
    fn number(&mut self, node: &Node, value: &Value, path: &str) {
        let Some(number) = formats::GoNumber::of(value) else {
            return;
        };
        let data = value.as_f64().unwrap_or_default();
        let type_name = match node.type_.as_str() {
            "integer" | "number" if !node.int_or_string => node.type_.as_str(),
            _ => "",
        };
        let format = if type_name.is_empty() {
            ""
        } else {
            node.format.as_str()
        };
        let range = |n: &formats::GoNumber, prefix: &str| {
            formats::range_error(n, type_name, format, prefix, path)
        };
        if let Some(message) = range(&number, "Checked") {
            self.errors.push(at_root(message));
        }
        let integer = matches!(number, formats::GoNumber::Int(_));
        if let Some(factor) = node.multiple_of {
            let native = self.bound_fits(range(&formats::GoNumber::Float(factor), "MultipleOf"));
            let multiple = if native && integer {
                let factor = factor as i64;
                factor == 0 || value.as_i64().unwrap_or_default() % factor == 0
            } else {
                factor <= 0.0 || {
                    let ratio = if factor < 1.0 {
                        1.0 / factor * data
                    } else {
                        data / factor
                    };
                    is_json_integer(ratio)
                }
            };
            if !multiple {
                let shown = if native && integer {
                    (factor as i64).to_string()
                } else {
                    go_float(factor)
                };
                self.invalid(
                    path,
                    value,
                    format!("{path} in body should be a multiple of {shown}"),
                );
            }
        }
        let bounds = [
            (
                node.minimum,
                node.exclusive_minimum,
                "Minimum boundary",
                true,
            ),
            (
                node.maximum,
                node.exclusive_maximum,
                "Maximum boundary",
                false,
            ),
        ];
        for (bound, exclusive, prefix, is_minimum) in bounds {
            let Some(bound) = bound else {
                continue;
            };
            let native =
                self.bound_fits(range(&formats::GoNumber::Float(bound), prefix)) && integer;
            let (fails, shown) = if native {
                let (data, bound) = (value.as_i64().unwrap_or_default(), bound as i64);
                let fails = match (is_minimum, exclusive) {
                    (true, false) => data < bound,
                    (true, true) => data <= bound,
                    (false, false) => data > bound,
                    (false, true) => data >= bound,
                };
                (fails, bound.to_string())
            } else {
                let fails = match (is_minimum, exclusive) {
                    (true, false) => data < bound,
                    (true, true) => data <= bound,
                    (false, false) => data > bound,
                    (false, true) => data >= bound,
                };
                (fails, go_float(bound))
            };
            if fails {
                let words = match (is_minimum, exclusive) {
                    (true, false) => "greater than or equal to",
                    (true, true) => "greater than",
                    (false, false) => "less than or equal to",
                    (false, true) => "less than",
                };
                self.invalid(
                    path,
                    value,
                    format!("{path} in body should be {words} {shown}"),
                );
            }
        }
    }

    /// Whether a bound fits the node's type and format; reports the error when not.
    fn bound_fits(&mut self, error: Option<String>) -> bool {
        match error {
            Some(message) => {
                self.errors.push(at_root(message));
                false
            }
            None => true,
        }
    }

    fn array(&mut self, node: &Node, items: &[Value], old: Option<&Value>, path: &str) {
        if let Some(item) = node.items.as_deref() {
            let old_items = old.and_then(Value::as_array);
            for (index, value) in items.iter().enumerate() {
                let old_item = old_items.and_then(|old| correlated_item(node, value, old));
                self.node(item, value, old_item, &format!("{path}[{index}]"));
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
                FieldErrorType::TooMany,
                path,
                Some(&Value::from(size)),
                format!("must have at most {max} items"),
            ));
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
            FieldErrorType::NotSupported,
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
                FieldErrorType::TooMany,
                path,
                Some(&Value::from(size)),
                format!("must have at most {max} items"),
            ));
            return;
        }
        let old_fields = old.and_then(Value::as_object);
        // kube-openapi validates the whole object: a resource's `metadata`, `apiVersion` and
        // `kind` too, against what the schema says of them (a root `metadata` may restrict
        // `name` and `generateName`); the API server checks ObjectMeta's own rules apart.
        for (name, field) in fields {
            if let Some(child_node) = node.field(name) {
                let old_field = old_fields.and_then(|o| o.get(name));
                self.node(child_node, field, old_field, &child(path, name));
            }
        }
        for name in &node.required {
            if !fields.contains_key(name) {
                self.errors.push(FieldError::new(
                    FieldErrorType::Required,
                    child(path, name),
                    None,
                    "",
                ));
            }
        }
    }
}

/// JSON equality with numbers compared by value (`1` equals `1.0`), as kube-openapi's enum
/// check converts before comparing.
///
/// A `null` in the enum matches nothing, `null` included: kube-openapi skips enum values
/// without a Go type (`validate/validator.go`, `basicCommonValidator`), so the API server
/// refuses `null` on every node with an `enum`, even a nullable one listing `null`.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, _) => false,
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}
