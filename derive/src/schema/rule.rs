//! `validation(rule = "...", ...)`: one CEL rule (controller-gen's `XValidation`).

use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;

use super::json::Json;
use super::markers::{REASONS, RULE_KEYS};
use crate::parse::{self, Errors};

/// `validation(rule = "...", message = "...", message_expression = "...", reason = "...",
/// field_path = "...", optional_old_self)`.
pub(super) fn read_rule(meta: &ParseNestedMeta) -> syn::Result<Json> {
    let span = meta.path.span();
    let mut pairs: Vec<(&str, Json)> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let mut errors = Errors::default();
    meta.parse_nested_meta(|inner| {
        let key = parse::key(&inner);
        if seen.contains(&key) {
            return Err(inner.error(format!("`{key}` is given twice; keep one")));
        }
        seen.push(key.clone());
        let example = format!("{key} = \"...\"");
        match key.as_str() {
            "rule" | "message" | "message_expression" | "field_path" | "reason" => {
                let lit = parse::string(&inner, &key, &example)?;
                let text = lit.value();
                let trimmed = text.trim();
                if trimmed.is_empty() {
                    errors.push(syn::Error::new(
                        lit.span(),
                        format!("`{key}` must not be empty"),
                    ));
                }
                if key == "message" && trimmed.contains(['\n', '\r']) {
                    errors.push(syn::Error::new(
                        lit.span(),
                        "`message` must not contain line breaks",
                    ));
                }
                if key == "reason" && !REASONS.contains(&text.as_str()) {
                    errors.push(syn::Error::new(
                        lit.span(),
                        format!("`reason` must be one of {}", REASONS.join(", ")),
                    ));
                }
                if key == "field_path" && !text.starts_with('.') {
                    errors.push(syn::Error::new(
                        lit.span(),
                        "`field_path` is a JSON path relative to the marked value, starting with \
                         `.`, e.g. `.spec.replicas` or `.name`",
                    ));
                }
                let json_key = match key.as_str() {
                    "message_expression" => "messageExpression",
                    "field_path" => "fieldPath",
                    "message" => "message",
                    "reason" => "reason",
                    _ => "rule",
                };
                pairs.push((json_key, Json::String(text)));
                Ok(())
            }
            "optional_old_self" => {
                let value = parse::flag(&inner, &key)?;
                pairs.push(("optionalOldSelf", Json::Bool(value)));
                Ok(())
            }
            _ => Err(parse::unknown(&inner, "kbr(validation", &key, RULE_KEYS)),
        }
    })?;
    errors.finish()?;
    let Some(rule) = pairs
        .iter()
        .find(|(k, _)| *k == "rule")
        .map(|(_, v)| v.clone())
    else {
        return Err(syn::Error::new(
            span,
            "`validation(...)` needs a `rule`: write `validation(rule = \"self.minReplicas <= \
             self.replicas\", message = \"...\")`",
        ));
    };
    if let Json::String(text) = &rule
        && text.contains('\n')
        && !pairs.iter().any(|(k, _)| *k == "message")
    {
        return Err(syn::Error::new(
            span,
            "a multi-line `rule` needs a `message` (the API server requires one)",
        ));
    }
    Ok(Json::object(pairs))
}
