//! [`WebhookContext`]: the values of one kind's webhooks, `w` in `create webhook` templates.

use super::layout::MAX_WIDTH;
use super::{ProjectContext, ResourceContext};
use crate::project::Webhooks;

/// The values of one kind version's webhooks, `w` in `create webhook` templates (next to `p`
/// and the kind's `r`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookContext {
    /// A defaulting webhook (`--defaulting`).
    pub defaulting: bool,
    /// A validating webhook (`--programmatic-validation`).
    pub validation: bool,
    /// A conversion webhook with this version as the hub (`--conversion`).
    pub conversion: bool,
    /// The spoke versions, in the order given.
    pub spokes: Vec<String>,
    /// The defaulter type, e.g. `ChannelCustomDefaulter`.
    pub defaulter: String,
    /// The validator type, e.g. `ChannelCustomValidator`.
    pub validator: String,
    /// `/mutate-<group-with-dashes>-<version>-<kind>`.
    pub mutate_path: String,
    /// `/validate-<group-with-dashes>-<version>-<kind>`.
    pub validate_path: String,
    /// The `use crate::api::<group> [as api];` line's path and rename, e.g. `crate::api::eventing as api`.
    pub api_use: String,
    /// The names imported from `kbr_runtime::webhook`, sorted like rustfmt sorts them.
    pub imports: Vec<&'static str>,
    /// `use kbr_runtime::webhook::{...};` fits on one line; else `import_lines`.
    pub imports_one_line: bool,
    /// The imports in rustfmt's mixed layout (lines of names at indent 4).
    pub import_lines: Vec<Vec<&'static str>>,
    /// The names the test imports from `kbr_runtime::webhook`, sorted like rustfmt sorts them.
    pub test_imports: Vec<&'static str>,
    /// The test's `use kbr_runtime::webhook::{...};` fits on one line; else `test_import_lines`.
    pub test_imports_one_line: bool,
    /// The test's imports in rustfmt's mixed layout.
    pub test_import_lines: Vec<Vec<&'static str>>,
    /// The test's `use <crate>::webhook::…::<kind> [as webhook];` path and rename.
    pub test_webhook_use: String,
    /// The test's `use <crate>::api::<group> [as api];` path and rename.
    pub test_api_use: String,
    /// `pub mod <group>;` needs `#[allow(clippy::module_inception)]` in `src/webhook/mod.rs`.
    pub group_is_webhook: bool,
    /// The CRD name, `<plural>.<group>.<domain>`.
    pub crd_name: String,
    /// `let conversion = Conversion::<Object>::new().spoke::<…>()…;` fits on one line (rustfmt's
    /// `chain_width` 60); else one `.spoke` per line.
    pub conversion_one_line: bool,
}

/// rustfmt's default `chain_width`: the widest method chain kept on one line.
const CHAIN_WIDTH: usize = 60;

/// `use <path> as <alias>;`, or `use <path>;` when its last segment already is `alias`.
fn use_as(path: &str, alias: &str) -> String {
    if path.rsplit("::").next() == Some(alias) {
        path.to_owned()
    } else {
        format!("{path} as {alias}")
    }
}

impl WebhookContext {
    /// The context for the webhooks `hooks` of the kind of `r`.
    pub fn new(p: &ProjectContext, r: &ResourceContext, hooks: &Webhooks) -> Self {
        let suffix = format!(
            "{}-{}-{}",
            r.qualified_group.replace('.', "-"),
            r.version,
            r.kind_lower
        );
        let admission = hooks.defaulting || hooks.validation;
        let mut imports: Vec<&'static str> = Vec::new();
        if admission {
            imports.extend(["AdmissionContext", "AdmissionError"]);
        }
        if hooks.conversion {
            imports.extend(["Conversion", "ConversionError", "Convertible"]);
        }
        if hooks.defaulting {
            imports.push("Defaulter");
        }
        if hooks.conversion {
            imports.push("Hub");
        }
        if hooks.validation {
            imports.extend(["Validator", "Warnings"]);
        }
        if admission {
            imports.push("WebhookBuilder");
        }
        imports.extend(["WebhookError", "Webhooks"]);
        let mut test_imports: Vec<&'static str> = Vec::new();
        if admission {
            test_imports.push("AdmissionContext");
        }
        if hooks.defaulting {
            test_imports.push("Defaulter");
        }
        if admission {
            test_imports.push("Operation");
        }
        if hooks.validation {
            test_imports.push("Validator");
        }
        if hooks.defaulting {
            test_imports.push("mutate_path");
        }
        if hooks.validation {
            test_imports.push("validate_path");
        }
        let chain: usize = "Conversion::<Object>::new()".len()
            + hooks
                .spoke
                .iter()
                .map(|v| ".spoke::<api::".len() + v.len() + "::".len() + r.kind.len() + ">()".len())
                .sum::<usize>();
        let conversion_one_line =
            chain <= CHAIN_WIDTH && "    let conversion = ".len() + chain + ";".len() <= MAX_WIDTH;
        Self {
            defaulting: hooks.defaulting,
            validation: hooks.validation,
            conversion: hooks.conversion,
            spokes: hooks.spoke.clone(),
            defaulter: format!("{}CustomDefaulter", r.kind),
            validator: format!("{}CustomValidator", r.kind),
            mutate_path: format!("/mutate-{suffix}"),
            validate_path: format!("/validate-{suffix}"),
            api_use: use_as(&api_module(r, "crate"), "api"),
            imports_one_line: use_list_one_line(&imports),
            import_lines: mixed(&imports, 4),
            imports,
            test_imports_one_line: use_list_one_line(&test_imports),
            test_import_lines: mixed(&test_imports, 4),
            test_imports,
            test_webhook_use: use_as(
                &format!(
                    "{}::webhook::{}::{}::{}",
                    p.crate_name, r.group_module, r.version, r.kind_module
                ),
                "webhook",
            ),
            test_api_use: use_as(&api_module(r, &p.crate_name), "api"),
            group_is_webhook: r.group_module == "webhook",
            crd_name: format!("{}.{}", r.plural, r.qualified_group),
            conversion_one_line,
        }
    }
}

/// The module holding the kind's versions, imported as `api`: `<krate>::api::<group>`, or for a
/// built-in kind its k8s-openapi group module, e.g. `kbr_runtime::k8s_openapi::api::core`.
fn api_module(r: &ResourceContext, krate: &str) -> String {
    match r
        .module_path
        .strip_suffix(&format!("::{}", r.version))
        .filter(|_| r.builtin)
    {
        Some(group) => group.to_owned(),
        None => format!("{krate}::api::{}", r.group_module),
    }
}

/// Whether `use kbr_runtime::webhook::{<items>};` fits on one line.
fn use_list_one_line(items: &[&str]) -> bool {
    let list = items.iter().map(|i| i.len()).sum::<usize>() + 2 * items.len().saturating_sub(1);
    "use kbr_runtime::webhook::{".len() + list + "};".len() <= MAX_WIDTH
}

/// rustfmt's mixed list layout: as many `items` per line as fit at `indent`, each line ending
/// with a comma.
fn mixed(items: &[&'static str], indent: usize) -> Vec<Vec<&'static str>> {
    let mut lines: Vec<Vec<&'static str>> = Vec::new();
    let mut width = indent;
    for item in items {
        let added = if width == indent {
            item.len() + 1
        } else {
            item.len() + 2
        };
        match lines.last_mut() {
            Some(line) if width + added <= MAX_WIDTH => {
                line.push(item);
                width += added;
            }
            _ => {
                lines.push(vec![item]);
                width = indent + item.len() + 1;
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_only_when_needed() {
        assert_eq!(
            use_as("crate::api::eventing", "api"),
            "crate::api::eventing as api"
        );
        assert_eq!(use_as("crate::api::api", "api"), "crate::api::api");
    }

    #[test]
    fn mixed_layout() {
        let items = [
            "AdmissionContext",
            "AdmissionError",
            "Conversion",
            "ConversionError",
            "Convertible",
            "Defaulter",
            "Hub",
            "Validator",
            "Warnings",
            "WebhookBuilder",
            "WebhookError",
            "Webhooks",
        ];
        let lines = mixed(&items, 4);
        assert_eq!(lines.len(), 2);
        assert!(
            lines
                .iter()
                .all(|l| 4 + l.iter().map(|i| i.len() + 2).sum::<usize>() - 1 <= MAX_WIDTH)
        );
    }
}
