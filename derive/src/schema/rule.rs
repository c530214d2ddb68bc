//! `validation(rule = "...", ...)`: one CEL rule (controller-gen's `XValidation`).

use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;

use kbr_core::field_path;
use kbr_core::marker::{Reason, Rule};

use super::json::Json;
use super::markers::RULE_KEYS;
use crate::parse::{self, Errors};

/// `validation(rule = "...", message = "...", message_expression = "...", reason = "...",
/// field_path = "...", optional_old_self)`, as kbr-core's [`Rule`] in JSON.
pub(super) fn read_rule(meta: &ParseNestedMeta) -> syn::Result<Json> {
    let span = meta.path.span();
    let mut rule: Option<String> = None;
    let mut parsed = Rule::default();
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
                if key == "field_path"
                    && let Some(error) = field_path_error(&text, lit.span())
                {
                    errors.push(error);
                }
                match key.as_str() {
                    "rule" => rule = Some(text),
                    "message" => parsed.message = Some(text),
                    "message_expression" => parsed.message_expression = Some(text),
                    "field_path" => parsed.field_path = Some(text),
                    _ => match Reason::from_name(&text) {
                        Some(reason) => parsed.reason = Some(reason),
                        None => {
                            let names: Vec<&str> = Reason::ALL.map(Reason::name).to_vec();
                            errors.push(syn::Error::new(
                                lit.span(),
                                format!("`reason` must be one of {}", names.join(", ")),
                            ));
                        }
                    },
                }
                Ok(())
            }
            "optional_old_self" => {
                parsed.optional_old_self = Some(parse::flag(&inner, &key)?);
                Ok(())
            }
            _ => Err(parse::unknown(&inner, "kbr(validation", &key, RULE_KEYS)),
        }
    })?;
    errors.finish()?;
    let Some(rule) = rule else {
        return Err(syn::Error::new(
            span,
            "`validation(...)` needs a `rule`: write `validation(rule = \"self.minReplicas <= \
             self.replicas\", message = \"...\")`",
        ));
    };
    if rule.contains('\n') && parsed.message.is_none() {
        return Err(syn::Error::new(
            span,
            "a multi-line `rule` needs a `message` (the API server requires one)",
        ));
    }
    parsed.rule = rule;
    serde_json::to_value(&parsed)
        .map(|value| Json::from_serde(&value))
        .map_err(|error| syn::Error::new(span, format!("cannot serialize this rule: {error}")))
}

/// Why the API server would refuse `path` as a rule's `fieldPath`, in the grammar kbr-crd
/// resolves it with ([`field_path::parse`], apiextensions-apiserver's `ValidFieldPath`) and
/// without line breaks (`validation.go`: `must not contain line breaks`). Whether its names
/// exist is checked when the CRD is built, against the schema of the marked value.
fn field_path_error(path: &str, span: proc_macro2::Span) -> Option<syn::Error> {
    if path.contains(['\n', '\r']) {
        return Some(syn::Error::new(
            span,
            "`field_path` must not contain line breaks",
        ));
    }
    let reason = field_path::parse(path).err()?;
    Some(syn::Error::new(
        span,
        format!(
            "`field_path = \"{path}\"` is not a JSON path ({reason}): write it relative to the \
             marked value in `.name` or `['name']` steps, e.g. `.spec.replicas` or \
             `.labels['app.kubernetes.io/name']`"
        ),
    ))
}
