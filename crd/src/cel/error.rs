//! Evaluation errors as cel-go words them.
//!
//! kube-apiserver puts cel-go's error text into the 422 of a rule that fails to evaluate
//! (`apiextensions-apiserver/pkg/apiserver/schema/cel/validation.go`: `<error> evaluating
//! rule: <rule>`, or `'<error>': call arguments did not match a supported operator, function
//! or macro signature for rule: <rule>` for `no such overload`). The texts are cel-go's
//! (`common/types/err.go`, `common/types/map.go`) and kube-apiserver's CEL values
//! (`apiserver/pkg/cel/common/valuesunstructured.go`: `no such key: <k>`, `index out of
//! bounds: <i>`); the Kubernetes libraries' functions already fail with their own texts.

use cel::ExecutionError;
use cel::common::types::{CelBool, CelDouble, CelInt, CelString, CelUInt};
use cel::common::value::Val;

use super::types::go_regex;

/// cel-go's `no such overload`.
pub(crate) const NO_SUCH_OVERLOAD: &str = "no such overload";

/// The text cel-go gives the error `error` stands for.
pub(crate) fn go_text(error: &ExecutionError) -> String {
    match error {
        ExecutionError::NoSuchKey(key) => format!("no such key: {key}"),
        ExecutionError::IndexOutOfBounds(index) => {
            format!("index out of bounds: {}", go_value_of(index))
        }
        ExecutionError::DivisionByZero(_) => "division by zero".to_owned(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".to_owned(),
        ExecutionError::Overflow(_, cel::Value::UInt(_), _) => {
            "unsigned integer overflow".to_owned()
        }
        ExecutionError::Overflow(..) => "integer overflow".to_owned(),
        ExecutionError::FunctionError { function, message }
            if matches!(function.as_str(), "int" | "uint" | "double")
                && message.starts_with("string parse error") =>
        {
            format!("type conversion error from 'string' to '{function}'")
        }
        ExecutionError::FunctionError { function, message }
            if function == "matches" && message.contains("' not a valid regex:") =>
        {
            // cel-rust's `matches` words it `'<pattern>' not a valid regex:\n<regex's error>`.
            let pattern = message
                .strip_prefix('\'')
                .and_then(|m| m.rsplit_once("' not a valid regex:"))
                .map_or("", |(pattern, _)| pattern);
            go_regex::compile(pattern)
                .err()
                .unwrap_or_else(|| message.clone())
        }
        ExecutionError::FunctionError { message, .. } => message.clone(),
        ExecutionError::NoSuchOverload(_)
        | ExecutionError::ValuesNotComparable(..)
        | ExecutionError::UnsupportedBinaryOperator(..)
        | ExecutionError::UnexpectedType { .. }
        | ExecutionError::UnsupportedTargetType { .. }
        | ExecutionError::NotSupportedAsMethod { .. }
        | ExecutionError::MissingArgumentOrTarget
        | ExecutionError::InvalidArgumentCount { .. } => NO_SUCH_OVERLOAD.to_owned(),
        other => other.to_string(),
    }
}

/// A value as Go's `%v` prints a cel-go value: numbers, booleans and strings as they are.
pub(crate) fn go_value(value: &dyn Val) -> String {
    if let Some(s) = value.downcast_ref::<CelString>() {
        s.inner().to_owned()
    } else if let Some(i) = value.downcast_ref::<CelInt>() {
        i.inner().to_string()
    } else if let Some(u) = value.downcast_ref::<CelUInt>() {
        u.inner().to_string()
    } else if let Some(b) = value.downcast_ref::<CelBool>() {
        b.inner().to_string()
    } else if let Some(d) = value.downcast_ref::<CelDouble>() {
        d.inner().to_string()
    } else {
        format!("{value:?}")
    }
}

/// [`go_value`] of an owned [`cel::Value`].
fn go_value_of(value: &cel::Value) -> String {
    match value {
        cel::Value::Int(i) => i.to_string(),
        cel::Value::UInt(u) => u.to_string(),
        cel::Value::Float(f) => f.to_string(),
        cel::Value::Bool(b) => b.to_string(),
        cel::Value::String(s) => s.to_string(),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_read_as_cel_gos() {
        assert_eq!(go_text(&ExecutionError::no_such_key("x")), "no such key: x");
        assert_eq!(
            go_text(&ExecutionError::IndexOutOfBounds(cel::Value::Int(5))),
            "index out of bounds: 5"
        );
        assert_eq!(
            go_text(&ExecutionError::DivisionByZero(cel::Value::Int(1))),
            "division by zero"
        );
        assert_eq!(
            go_text(&ExecutionError::function_error("quantity", "bad")),
            "bad",
            "library functions word their own errors"
        );
        assert_eq!(
            go_text(&ExecutionError::no_such_overload(
                "_+_",
                vec!["int".into(), "string".into()]
            )),
            NO_SUCH_OVERLOAD
        );
    }
}
