//! What the API server checks of each `x-kubernetes-validations` entry before it compiles
//! the rule, and of `optionalOldSelf` after.
//!
//! Mirrors apiextensions-apiserver's `pkg/apis/apiextensions/validation/validation.go`
//! (`ValidateCustomResourceDefinitionOpenAPISchema`, its `SchemaErrors` for
//! `XValidations`): `rule` not blank; `message` not blank when given, without line breaks,
//! and required when the rule has line breaks; `messageExpression` not blank when given;
//! `reason` one of [`REASONS`]; `fieldPath` not blank, without line breaks, and a path that
//! resolves in the node's schema ([`super::field_path`]). A schema error at a node or below
//! it keeps the API server from compiling that node's rules. After compiling, a rule that
//! does not use `oldSelf` may not set `optionalOldSelf` (neither `true` nor `false`).
//!
//! One implementation: kbr's fake API server refuses such a CRD with these errors
//! ([`super::ObjectSchema`]), and `make manifests` ([`super::check_schema`]) refuses a
//! derived schema that has them.

use serde_json::{Map, Value};

use crate::field_error::{FieldError, FieldErrorType};

/// The `reason`s a rule may give, in the API server's (sorted) order.
pub(crate) const REASONS: [&str; 4] = [
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

/// The detail of `optionalOldSelf` on a rule that does not use `oldSelf`.
pub(crate) const OPTIONAL_OLD_SELF_UNUSED: &str = "may not be set if oldSelf is not used in rule";

/// Whether `rule` refers to the variable `oldSelf` (a transition rule; what `optionalOldSelf`
/// needs): apiextensions-apiserver's `pkg/apiserver/schema/cel/compilation.go` sets
/// `UsesOldSelf` from the compiled AST's references (`checkedExpr.ReferenceMap`, a reference
/// named `oldSelf`), so `oldSelf` in a string literal (`self.x == 'oldSelf'`), a field named
/// so (`self.oldSelf`) or a longer identifier does not count. kbr reads the references of
/// the expression cel-rust parses (`IdedExpr::references`); a rule that does not parse uses
/// nothing (its compile error is reported instead). Without the `cel` feature there is no
/// parser, and any `oldSelf` text counts.
pub(crate) fn uses_old_self(rule: &str) -> bool {
    #[cfg(feature = "cel")]
    {
        crate::cel::parse_as_cel_go(rule).is_some_and(|e| e.references().has_variable("oldSelf"))
    }
    #[cfg(not(feature = "cel"))]
    {
        rule.contains("oldSelf")
    }
}

/// `hasNewlines`: `\n` or `\r` (the newline characters of CEL's grammar).
fn has_newlines(text: &str) -> bool {
    text.contains(['\n', '\r'])
}

/// The schema errors of the rule at `index` of `schema`'s `x-kubernetes-validations`, at
/// fields relative to the node (`x-kubernetes-validations[0].fieldPath`).
pub(crate) fn schema_errors(
    schema: &Map<String, Value>,
    rule: &Value,
    index: usize,
) -> Vec<FieldError> {
    let field = |child: &str| format!("x-kubernetes-validations[{index}].{child}");
    let text = |key: &str| rule.get(key).and_then(Value::as_str).unwrap_or_default();
    let mut errors = Vec::new();
    let (rule_text, message) = (text("rule").trim(), text("message"));
    if rule_text.is_empty() {
        errors.push(FieldError::required(field("rule"), "rule is not specified"));
    } else if !message.is_empty() && message.trim().is_empty() {
        errors.push(FieldError::invalid(
            field("message"),
            message,
            "must be non-empty if specified",
        ));
    } else if has_newlines(message.trim()) {
        errors.push(FieldError::invalid(
            field("message"),
            message,
            "must not contain line breaks",
        ));
    } else if has_newlines(rule_text) && message.trim().is_empty() {
        errors.push(FieldError::required(
            field("message"),
            "message must be specified if rule contains line breaks",
        ));
    }
    let message_expression = text("messageExpression");
    if !message_expression.is_empty() && message_expression.trim().is_empty() {
        errors.push(FieldError::required(
            field("messageExpression"),
            "messageExpression must be non-empty if specified",
        ));
    }
    if let Some(reason) = rule.get("reason").and_then(Value::as_str)
        && !REASONS.contains(&reason)
    {
        errors.push(FieldError::not_supported(field("reason"), reason, &REASONS));
    }
    let field_path = text("fieldPath");
    if !field_path.is_empty() && field_path.trim().is_empty() {
        errors.push(FieldError::invalid(
            field("fieldPath"),
            field_path,
            "must be non-empty if specified",
        ));
    }
    if has_newlines(field_path) {
        errors.push(FieldError::invalid(
            field("fieldPath"),
            field_path,
            "must not contain line breaks",
        ));
    }
    if !field_path.is_empty() && super::field_path::resolve(field_path, schema).is_err() {
        errors.push(FieldError::invalid(
            field("fieldPath"),
            field_path,
            "must be a valid path",
        ));
    }
    errors
}

/// The error of a rule (at `index`) that sets `optionalOldSelf` without using `oldSelf`.
pub(crate) fn optional_old_self_error(
    rule: &Value,
    index: usize,
    uses_old_self: bool,
) -> Option<FieldError> {
    let set = rule.get("optionalOldSelf").and_then(Value::as_bool)?;
    (!uses_old_self).then(|| {
        FieldError::new(
            FieldErrorType::Invalid,
            format!("x-kubernetes-validations[{index}].optionalOldSelf"),
            Some(&Value::Bool(set)),
            OPTIONAL_OLD_SELF_UNUSED,
        )
    })
}

#[cfg(all(test, feature = "cel"))]
mod tests {
    use super::uses_old_self;

    #[test]
    fn only_a_reference_to_the_variable_uses_old_self() {
        for rule in [
            "oldSelf.x == self.x",
            "has(oldSelf.x)",
            "self == oldSelf || true",
        ] {
            assert!(uses_old_self(rule), "{rule:?}");
        }
        for rule in [
            "self.x == 'oldSelf'",
            "self.oldSelf == 1",
            "self.x.all(oldSelfish, oldSelfish > 0)",
            "oldSelf ==", // does not parse
        ] {
            assert!(!uses_old_self(rule), "{rule:?}");
        }
    }
}
