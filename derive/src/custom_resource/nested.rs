//! The nested `#[kbr(...)]` items: `printcolumn(...)` and `scale(...)`.

use syn::LitStr;
use syn::meta::ParseNestedMeta;

use crate::names;
use crate::parse::{self, Errors, set_once};

const PRINTCOLUMN_KEYS: &[&str] = &[
    "name",
    "type_",
    "json_type",
    "json_path",
    "description",
    "format",
    "priority",
];
const SCALE_KEYS: &[&str] = &[
    "spec_replicas_path",
    "status_replicas_path",
    "label_selector_path",
];
const COLUMN_TYPES: &[&str] = &["integer", "number", "string", "boolean", "date"];
const COLUMN_FORMATS: &[&str] = &[
    "int32",
    "int64",
    "float",
    "double",
    "byte",
    "date",
    "date-time",
    "password",
];

/// One `printcolumn(...)`.
pub(crate) struct PrintColumn {
    pub name: LitStr,
    pub type_: LitStr,
    pub json_path: LitStr,
    pub description: Option<LitStr>,
    pub format: Option<LitStr>,
    pub priority: i32,
}

/// `scale(...)`.
pub(crate) struct Scale {
    pub spec_replicas_path: LitStr,
    pub status_replicas_path: LitStr,
    pub label_selector_path: Option<LitStr>,
}

pub(super) fn read_printcolumn(meta: &ParseNestedMeta) -> syn::Result<PrintColumn> {
    const EXAMPLE: &str =
        "printcolumn(name = \"Ready\", type_ = \"string\", json_path = \".status.ready\")";
    if !meta.input.peek(syn::token::Paren) {
        return Err(meta.error(format!("`printcolumn` takes a list: write `{EXAMPLE}`")));
    }
    let (mut name, mut type_, mut json_path, mut description, mut format, mut priority) =
        (None, None, None, None, None, None);
    meta.parse_nested_meta(|inner| {
        let key = parse::key(&inner);
        match key.as_str() {
            "name" => set_once(
                &mut name,
                parse::string(&inner, "name", "name = \"Ready\"")?,
                &inner,
                "name",
            ),
            "type_" | "json_type" | "type" => {
                let v = parse::string(&inner, &key, &format!("{key} = \"string\""))?;
                set_once(&mut type_, v, &inner, "type_")
            }
            "json_path" | "jsonpath" | "JSONPath" => {
                let v = parse::string(&inner, &key, &format!("{key} = \".spec.replicas\""))?;
                set_once(&mut json_path, v, &inner, "json_path")
            }
            "description" => {
                let v = parse::string(
                    &inner,
                    "description",
                    "description = \"Whether it is ready\"",
                )?;
                set_once(&mut description, v, &inner, "description")
            }
            "format" => set_once(
                &mut format,
                parse::string(&inner, "format", "format = \"date-time\"")?,
                &inner,
                "format",
            ),
            "priority" => set_once(
                &mut priority,
                parse::int(&inner, "priority", "priority = 1")?,
                &inner,
                "priority",
            ),
            _ => Err(parse::unknown(
                &inner,
                "kbr(printcolumn",
                &key,
                PRINTCOLUMN_KEYS,
            )),
        }
    })?;
    let missing =
        |what: &str| meta.error(format!("`printcolumn` needs `{what}`: write `{EXAMPLE}`"));
    let column = PrintColumn {
        name: name.ok_or_else(|| missing("name"))?,
        type_: type_.ok_or_else(|| missing("type_"))?,
        json_path: json_path.ok_or_else(|| missing("json_path"))?,
        description,
        format,
        priority: priority.unwrap_or(0),
    };
    let mut errors = Errors::default();
    errors.check(
        column.name.span(),
        "printcolumn `name`",
        names::non_empty(&column.name.value()),
    );
    let type_value = column.type_.value();
    errors.check(
        column.type_.span(),
        "printcolumn `type_`",
        one_of(&type_value, COLUMN_TYPES),
    );
    errors.check(
        column.json_path.span(),
        "printcolumn `json_path`",
        names::json_path(&column.json_path.value()),
    );
    if let Some(format) = &column.format {
        errors.check(
            format.span(),
            "printcolumn `format`",
            one_of(&format.value(), COLUMN_FORMATS),
        );
    }
    if column.priority < 0 {
        errors.push(meta.error("printcolumn `priority` must be 0 or greater"));
    }
    errors.finish()?;
    Ok(column)
}

pub(super) fn read_scale(meta: &ParseNestedMeta) -> syn::Result<Scale> {
    const EXAMPLE: &str = "scale(spec_replicas_path = \".spec.replicas\", status_replicas_path = \".status.replicas\")";
    if !meta.input.peek(syn::token::Paren) {
        return Err(meta.error(format!("`scale` takes a list: write `{EXAMPLE}`")));
    }
    let (mut spec, mut status, mut selector) = (None, None, None);
    meta.parse_nested_meta(|inner| {
        let key = parse::key(&inner);
        match key.as_str() {
            "spec_replicas_path" | "specpath" => {
                let v = parse::string(&inner, &key, &format!("{key} = \".spec.replicas\""))?;
                set_once(&mut spec, v, &inner, "spec_replicas_path")
            }
            "status_replicas_path" | "statuspath" => {
                let v = parse::string(&inner, &key, &format!("{key} = \".status.replicas\""))?;
                set_once(&mut status, v, &inner, "status_replicas_path")
            }
            "label_selector_path" | "selectorpath" => {
                let v = parse::string(&inner, &key, &format!("{key} = \".status.selector\""))?;
                set_once(&mut selector, v, &inner, "label_selector_path")
            }
            _ => Err(parse::unknown(&inner, "kbr(scale", &key, SCALE_KEYS)),
        }
    })?;
    let missing = |what: &str| meta.error(format!("`scale` needs `{what}`: write `{EXAMPLE}`"));
    let scale = Scale {
        spec_replicas_path: spec.ok_or_else(|| missing("spec_replicas_path"))?,
        status_replicas_path: status.ok_or_else(|| missing("status_replicas_path"))?,
        label_selector_path: selector,
    };
    let mut errors = Errors::default();
    let path = &scale.spec_replicas_path;
    errors.check(
        path.span(),
        "`spec_replicas_path`",
        names::json_path_under(&path.value(), &[".spec."]),
    );
    let path = &scale.status_replicas_path;
    errors.check(
        path.span(),
        "`status_replicas_path`",
        names::json_path_under(&path.value(), &[".status."]),
    );
    if let Some(path) = &scale.label_selector_path {
        let result = names::json_path_under(&path.value(), &[".spec.", ".status."]);
        errors.check(path.span(), "`label_selector_path`", result);
    }
    errors.finish()?;
    Ok(scale)
}

fn one_of(value: &str, allowed: &[&str]) -> Result<(), String> {
    if allowed.contains(&value) {
        Ok(())
    } else {
        Err(format!(
            "must be one of {} (got \"{value}\")",
            allowed.join(", ")
        ))
    }
}
