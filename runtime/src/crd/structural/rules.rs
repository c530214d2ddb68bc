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
//! The interpreter is the `cel` crate (cel-rust) with its strings and lists extensions. It
//! lacks the Kubernetes CEL libraries `quantity`, `url`, `ip`, `cidr`, `semver` and the regex
//! `find`/`findAll`: a rule calling one is refused at install with an error saying so, rather
//! than passing silently. `optionalOldSelf` rules also run on create, with `oldSelf` a CEL
//! optional (`optional.none()` on create, `optional.of(old)` on update). The runtime cost
//! budget is not modelled. Compiling and evaluating rules needs feature `cel` (on by default,
//! and implied by `testing`); without it rules are never compiled nor evaluated.

use serde_json::Value;

use super::validation::{FieldError, FieldErrorKind};

/// Kubernetes CEL library functions the `cel` crate does not provide.
const UNSUPPORTED: &[&str] = &[
    "quantity",
    "isQuantity",
    "url",
    "isURL",
    "ip",
    "isIP",
    "cidr",
    "isCIDR",
    "semver",
    "isSemver",
    "find",
    "findAll",
];

/// One compiled rule.
#[cfg_attr(not(feature = "cel"), allow(dead_code))]
pub(super) struct Rule {
    pub(super) text: String,
    pub(super) message: String,
    pub(super) reason: Option<String>,
    /// `fieldPath` without its leading `.`.
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

#[cfg(feature = "cel")]
pub(super) static ENV: std::sync::LazyLock<std::sync::Arc<cel::Env>> =
    std::sync::LazyLock::new(|| {
        let mut env = cel::Env::stdlib();
        // Both extensions declare new functions only; failing would be a bug of the crate.
        let _ = env.add_extension(cel::extensions::strings);
        let _ = env.add_extension(cel::extensions::lists);
        std::sync::Arc::new(env)
    });

#[cfg(feature = "cel")]
fn compile_text(text: &str) -> Result<(cel::Program, bool), String> {
    let program = ENV.compile(text).map_err(|e| e.to_string())?;
    let references = program.references();
    if let Some(missing) = UNSUPPORTED.iter().find(|f| references.has_function(f)) {
        return Err(format!(
            "kbr's fake API server does not implement the Kubernetes CEL function {missing}() \
             (test this rule on envtest)"
        ));
    }
    let uses_old_self = references.has_variable("oldSelf");
    Ok((program, uses_old_self))
}

#[cfg(not(feature = "cel"))]
fn compile_text(text: &str) -> Result<((), bool), String> {
    let _ = UNSUPPORTED;
    Ok(((), text.contains("oldSelf")))
}

#[cfg_attr(not(feature = "cel"), allow(dead_code))]
impl Rule {
    /// Compiles one entry of `x-kubernetes-validations` at `path`.
    pub(super) fn compile(rule: &Value, path: &str) -> Result<Self, FieldError> {
        let text = rule
            .get("rule")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let refuse = |field: &str, value: &str, why: String| {
            FieldError::new(
                FieldErrorKind::Invalid,
                &format!("{path}.{field}"),
                Some(&Value::String(value.to_owned())),
                &why,
            )
        };
        let (program, uses_old_self) = compile_text(&text)
            .map_err(|why| refuse("rule", &text, format!("compilation failed: {why}")))?;
        let message_expression = rule
            .get("messageExpression")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty());
        #[cfg(feature = "cel")]
        let message_program = match message_expression {
            Some(expression) => Some(compile_text(expression).map(|(p, _)| p).map_err(|why| {
                refuse(
                    "messageExpression",
                    expression,
                    format!("messageExpression compilation failed: {why}"),
                )
            })?),
            None => None,
        };
        #[cfg(not(feature = "cel"))]
        let _ = (program, message_expression);
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
            field_path: rule
                .get("fieldPath")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .trim_start_matches('.')
                .to_owned(),
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
                FieldError::new(FieldErrorKind::Forbidden, &path, None, detail)
            }
            Some("FieldValueRequired") => {
                FieldError::new(FieldErrorKind::Required, &path, None, detail)
            }
            Some("FieldValueDuplicate") => {
                FieldError::new(FieldErrorKind::Duplicate, &path, shown, "")
            }
            _ => FieldError::new(FieldErrorKind::Invalid, &path, shown, detail),
        }
    }
}

/// Evaluates the rules of one node: `old` is the correlated old value (update only);
/// `unchanged` skips the rules that do not use `oldSelf` (ratcheting).
#[cfg(feature = "cel")]
pub(super) fn evaluate(
    node: &super::node::Node,
    value: &cel::Value,
    raw: &Value,
    old: Option<&cel::Value>,
    unchanged: bool,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let type_ = node.type_.as_str();
    for rule in &node.rules {
        let transition_without_old = rule.uses_old_self && old.is_none() && !rule.optional_old_self;
        if transition_without_old || unchanged && !rule.uses_old_self {
            continue;
        }
        let mut context = cel::Context::with_env(ENV.clone());
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
                        Ok(cel::Value::String(s)) if !s.trim().is_empty() => {
                            Some(s.trim().to_owned())
                        }
                        _ => None,
                    })
                    .unwrap_or_else(|| rule.default_message());
                errors.push(rule.failure(path, type_, raw, &detail));
            }
            Ok(other) => errors.push(FieldError::new(
                FieldErrorKind::Invalid,
                path,
                Some(&Value::String(type_.to_owned())),
                &format!(
                    "{other:?} evaluating rule: {}: the rule must evaluate to a bool",
                    rule.text.trim()
                ),
            )),
            Err(error) => errors.push(FieldError::new(
                FieldErrorKind::Invalid,
                path,
                Some(&Value::String(type_.to_owned())),
                &format!("{error} evaluating rule: {}", rule.error_string()),
            )),
        }
    }
}
