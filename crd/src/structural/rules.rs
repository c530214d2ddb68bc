//! `x-kubernetes-validations`: CEL rules evaluated on the nodes they sit on.
//!
//! Mirrors apiextensions-apiserver's `pkg/apiserver/schema/cel/validation.go`
//! (`Validator.validateExpressions`): every rule of a node runs with `self` bound to the
//! node's (non-null) value; rules that use `oldSelf` (transition rules) run only on update,
//! where an old value correlates (object fields unless `x-kubernetes-map-type: atomic`,
//! map-list items by key); a false rule reports `messageExpression`'s result, else `message`,
//! else `failed rule: <rule>`, at the node's path plus `fieldPath`, as `Invalid value` (or the
//! rule's `reason`: `FieldValueForbidden`, `FieldValueRequired`, `FieldValueDuplicate`), with
//! the value omitted for objects and arrays. Rules are compiled when the CRD is installed: a
//! rule that does not compile is refused then, as `ValidateCustomResourceDefinition` does.
//!
//! Rules are compiled and evaluated in kube-apiserver's CEL environment, with the Kubernetes
//! CEL libraries (`quantity`, `url`, `ip`, `cidr`, `format`, `semver`, ...), as
//! [`crate::cel`] builds it; a rule that fails to evaluate reports cel-go's error text.
//! `optionalOldSelf` rules also run on create, with `oldSelf` a CEL optional
//! (`optional.none()` on create, `optional.of(old)` on update). The runtime cost budget is not
//! modelled. Compiling and evaluating rules needs feature `cel` (on by default,
//! and implied by `testing`); without it rules are never compiled nor evaluated.

use serde_json::{Map, Value};

use crate::field_error::{BadValue, FieldError, FieldErrorType};

/// One compiled rule.
#[cfg_attr(not(feature = "cel"), allow(dead_code))]
pub(super) struct Rule {
    pub(super) text: String,
    pub(super) message: String,
    pub(super) reason: Option<String>,
    /// `fieldPath` resolved in the node's schema, as the API server reports errors at it
    /// (`max`, `limits[a.b]`: [`super::field_path::resolve`]); empty without one.
    pub(super) field_path: String,
    pub(super) uses_old_self: bool,
    /// `optionalOldSelf`: the rule also runs on create, `oldSelf` being a CEL optional.
    pub(super) optional_old_self: bool,
    #[cfg(feature = "cel")]
    program: cel::Program,
    #[cfg(feature = "cel")]
    message_program: Option<cel::Program>,
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule").field("rule", &self.text).finish()
    }
}

/// Compiles a rule (`Output::Bool`) or message expression; the error is kube-apiserver's
/// detail for it (`compileRule`), for the rule when `rule`.
#[cfg(feature = "cel")]
fn compile_text(text: &str, rule: bool) -> Result<(cel::Program, bool), String> {
    use crate::cel::{CompileError, Output};
    let output = if rule { Output::Bool } else { Output::String };
    let program = crate::cel::compile(text, output).map_err(|e| match (e, rule) {
        (CompileError::Compilation(issues), true) => format!("compilation failed: {issues}"),
        (CompileError::Compilation(issues), false) => {
            format!("messageExpression compilation failed: {issues}")
        }
        (CompileError::Instantiation(e), true) => format!("program instantiation failed: {e}"),
        (CompileError::Instantiation(e), false) => {
            format!("messageExpression instantiation failed: {e}")
        }
        (CompileError::WrongOutput, true) => "cel expression must evaluate to a bool".to_owned(),
        (CompileError::WrongOutput, false) => {
            "messageExpression must evaluate to a string".to_owned()
        }
    })?;
    let uses_old_self = program.references().has_variable("oldSelf");
    Ok((program, uses_old_self))
}

#[cfg(not(feature = "cel"))]
fn compile_text(text: &str, _rule: bool) -> Result<((), bool), String> {
    Ok(((), super::rule_checks::uses_old_self(text)))
}

/// A `ValidationRule` as kube-apiserver prints it in a field error: the internal Go struct
/// through `encoding/json` (field names as declared, `null` for unset pointers, `<`, `>` and
/// `&` escaped).
fn go_rule_value(rule: &Value) -> String {
    let text = |key: &str| rule.get(key).and_then(Value::as_str).unwrap_or_default();
    let string = |s: &str| {
        serde_json::to_string(s)
            .unwrap_or_default()
            .replace('<', "\\u003c")
            .replace('>', "\\u003e")
            .replace('&', "\\u0026")
    };
    let reason = rule
        .get("reason")
        .and_then(Value::as_str)
        .map_or_else(|| "null".to_owned(), string);
    let optional_old_self = rule
        .get("optionalOldSelf")
        .and_then(Value::as_bool)
        .map_or_else(|| "null".to_owned(), |b| b.to_string());
    format!(
        r#"{{"Rule":{},"Message":{},"MessageExpression":{},"Reason":{reason},"FieldPath":{},"OptionalOldSelf":{optional_old_self}}}"#,
        string(text("rule")),
        string(text("message")),
        string(text("messageExpression")),
        string(text("fieldPath")),
    )
}

#[cfg_attr(not(feature = "cel"), allow(dead_code))]
impl Rule {
    /// Compiles entry `index` of the `x-kubernetes-validations` of `schema` (the node at
    /// `path`), which [`super::rule_checks::schema_errors`] found well-formed: the errors of
    /// its rule, its message expression (compiled only when the rule compiles, as
    /// `compileRule` does) and an unused `optionalOldSelf`.
    pub(super) fn compile(
        schema: &Map<String, Value>,
        rule: &Value,
        index: usize,
        path: &str,
    ) -> Result<Self, Vec<FieldError>> {
        let path = format!("{path}.x-kubernetes-validations[{index}]");
        let text = rule
            .get("rule")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let refuse = |field: &str, why: String| {
            let shown = BadValue::Encoded(go_rule_value(rule));
            FieldError::new(
                FieldErrorType::Invalid,
                format!("{path}.{field}"),
                shown,
                why,
            )
        };
        let mut errors = Vec::new();
        let compiled = compile_text(&text, true).map_err(|why| refuse("rule", why));
        let message_expression = rule
            .get("messageExpression")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty());
        let message_program = match (&compiled, message_expression) {
            (Ok(_), Some(expression)) => compile_text(expression, false)
                .map(|(p, _)| Some(p))
                .map_err(|why| refuse("messageExpression", why)),
            _ => Ok(None),
        };
        let uses_old_self = compiled.as_ref().is_ok_and(|(_, uses)| *uses);
        let (program, message_program) = match (compiled, message_program) {
            (Ok((program, _)), Ok(message_program)) => (Some(program), message_program),
            (compiled, message_program) => {
                errors.extend(compiled.err());
                errors.extend(message_program.err());
                (None, None)
            }
        };
        if let Some(mut unused) =
            super::rule_checks::optional_old_self_error(rule, index, uses_old_self)
        {
            unused.field = format!("{path}.optionalOldSelf");
            errors.push(unused);
        }
        let Some(program) = program.filter(|_| errors.is_empty()) else {
            return Err(errors);
        };
        #[cfg(not(feature = "cel"))]
        let _ = (program, message_program);
        let field_path = rule
            .get("fieldPath")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
            .and_then(|p| super::field_path::resolve(p, schema).ok())
            .unwrap_or_default();
        Ok(Self {
            message: rule
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .trim()
                .to_owned(),
            reason: rule
                .get("reason")
                .and_then(Value::as_str)
                .map(str::to_owned),
            field_path,
            uses_old_self,
            optional_old_self: rule.get("optionalOldSelf") == Some(&Value::Bool(true)),
            text,
            #[cfg(feature = "cel")]
            program,
            #[cfg(feature = "cel")]
            message_program,
        })
    }

    /// The detail of a failed rule without a (working) `messageExpression`.
    fn default_message(&self) -> String {
        if self.message.is_empty() {
            format!("failed rule: {}", self.text.trim())
        } else {
            self.message.clone()
        }
    }

    /// The message, else the rule (`ruleErrorString`).
    #[cfg(feature = "cel")]
    fn error_string(&self) -> &str {
        if self.message.is_empty() {
            self.text.trim()
        } else {
            &self.message
        }
    }

    /// The error of this rule failing at `path` on `value` of a node of type `type_`.
    fn failure(&self, path: &str, type_: &str, value: &Value, detail: &str) -> FieldError {
        let path = match (path.is_empty(), self.field_path.is_empty()) {
            (_, true) => path.to_owned(),
            (true, false) => self.field_path.clone(),
            (false, false) => format!("{path}.{}", self.field_path),
        };
        let shown = (type_ != "object" && type_ != "array").then_some(value);
        match self.reason.as_deref() {
            Some("FieldValueForbidden") => {
                FieldError::new(FieldErrorType::Forbidden, &path, None, detail)
            }
            Some("FieldValueRequired") => {
                FieldError::new(FieldErrorType::Required, &path, None, detail)
            }
            Some("FieldValueDuplicate") => {
                FieldError::new(FieldErrorType::Duplicate, &path, shown, "")
            }
            _ => FieldError::new(FieldErrorType::Invalid, &path, shown, detail),
        }
    }
}

/// Evaluates the `rules` of one node of type `type_`: `old` is the correlated old value (update
/// only); `unchanged` skips the rules that do not use `oldSelf` (ratcheting).
#[cfg(feature = "cel")]
#[allow(clippy::too_many_arguments)]
pub(super) fn evaluate(
    rules: &[Rule],
    type_: &str,
    value: &cel::Value,
    raw: &Value,
    old: Option<&cel::Value>,
    unchanged: bool,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    for rule in rules {
        let transition_without_old = rule.uses_old_self && old.is_none() && !rule.optional_old_self;
        if transition_without_old || unchanged && !rule.uses_old_self {
            continue;
        }
        let mut context = cel::Context::with_env(crate::cel::ENV.clone());
        context.add_variable_from_value("self", value.clone());
        if rule.optional_old_self {
            // `validationActivationWithOldSelf`'s optional activation: optional.of(old) or
            // optional.none().
            let optional = match old {
                Some(old) => cel::objects::OptionalValue::of(old.clone()),
                None => cel::objects::OptionalValue::none(),
            };
            context.add_variable_from_value(
                "oldSelf",
                cel::Value::Opaque(std::sync::Arc::new(optional)),
            );
        } else if let Some(old) = old {
            context.add_variable_from_value("oldSelf", old.clone());
        }
        match rule.program.execute(&context) {
            Ok(cel::Value::Bool(true)) => {}
            Ok(cel::Value::Bool(false)) => {
                let detail = rule
                    .message_program
                    .as_ref()
                    .and_then(|p| match p.execute(&context) {
                        // `evalMessageExpression`: an empty, multi-line or longer than 5 KiB
                        // (`MaxEvaluatedMessageExpressionSizeBytes`) message is not used.
                        Ok(cel::Value::String(s))
                            if !s.trim().is_empty()
                                && !s.trim().contains('\n')
                                && s.trim().len() <= 5 * 1024 =>
                        {
                            Some(s.trim().to_owned())
                        }
                        _ => None,
                    })
                    .unwrap_or_else(|| rule.default_message());
                errors.push(rule.failure(path, type_, raw, &detail));
            }
            Ok(other) => errors.push(FieldError::new(
                FieldErrorType::Invalid,
                path,
                Some(&Value::String(type_.to_owned())),
                format!(
                    "{other:?} evaluating rule: {}: the rule must evaluate to a bool",
                    rule.text.trim()
                ),
            )),
            Err(error) => errors.push(FieldError::new(
                FieldErrorType::Invalid,
                path,
                Some(&Value::String(type_.to_owned())),
                evaluation_error(&error, rule.error_string()),
            )),
        }
    }
}

/// The detail of a rule that failed to evaluate (`validateExpressions`): cel-go's text of the
/// error, then the rule (or its message).
#[cfg(feature = "cel")]
fn evaluation_error(error: &cel::ExecutionError, rule: &str) -> String {
    let text = crate::cel::error::go_text(error);
    if text.starts_with(crate::cel::error::NO_SUCH_OVERLOAD) {
        format!(
            "'{text}': call arguments did not match a supported operator, function or macro \
             signature for rule: {rule}"
        )
    } else {
        format!("{text} evaluating rule: {rule}")
    }
}
