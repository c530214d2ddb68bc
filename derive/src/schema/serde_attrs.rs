//! The `#[serde(...)]` attributes that decide a field's JSON name and whether it is in the
//! schema at all, read the way serde reads them (deserialize side, as the schema describes
//! what the API server may send).

use syn::{Attribute, Expr, ExprLit, Lit};

/// serde's `rename_all` rules, applied to a snake_case field name.
fn rename_field(rule: &str, field: &str) -> Option<String> {
    let pascal = || {
        field
            .split('_')
            .map(|word| {
                let mut chars = word.chars();
                chars
                    .next()
                    .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                    .unwrap_or_default()
            })
            .collect::<String>()
    };
    Some(match rule {
        "lowercase" => field.to_ascii_lowercase(),
        "UPPERCASE" => field.to_ascii_uppercase(),
        "PascalCase" => pascal(),
        "camelCase" => {
            let pascal = pascal();
            let mut chars = pascal.chars();
            chars
                .next()
                .map(|first| first.to_ascii_lowercase().to_string() + chars.as_str())
                .unwrap_or_default()
        }
        "snake_case" => field.to_owned(),
        "SCREAMING_SNAKE_CASE" => field.to_ascii_uppercase(),
        "kebab-case" => field.replace('_', "-"),
        "SCREAMING-KEBAB-CASE" => field.to_ascii_uppercase().replace('_', "-"),
        _ => return None,
    })
}

/// What the container's `#[serde(...)]` says about field names and enum tags.
#[derive(Default)]
pub(crate) struct ContainerSerde {
    /// `rename_all` (or its `deserialize = ...` half).
    pub rename_all: Option<String>,
    /// `tag = "..."`: an internally or adjacently tagged enum.
    pub tag: Option<String>,
    /// `content = "..."`: an adjacently tagged enum.
    pub content: Option<String>,
    /// `untagged`.
    pub untagged: bool,
}

/// What a field's `#[serde(...)]` says.
#[derive(Default)]
pub(crate) struct FieldSerde {
    pub rename: Option<String>,
    pub flatten: bool,
    /// `skip` or `skip_deserializing`: not in the schema.
    pub skip: bool,
    /// Every `alias = "..."`: other keys serde reads the field (or variant) from.
    pub aliases: Vec<String>,
    /// `untagged` on a variant: read without its name.
    pub untagged: bool,
}

/// Visits every `key = "value"`/`key`/`key(...)` item of the `#[serde(...)]` attributes.
/// Unparseable attributes are left to serde's own derive to report.
fn for_each_serde_item(attrs: &[Attribute], mut visit: impl FnMut(&str, Option<String>)) {
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            let key = crate::parse::key(&meta);
            if meta.input.peek(syn::Token![=]) {
                let value: Expr = meta.value()?.parse()?;
                let text = match value {
                    Expr::Lit(ExprLit {
                        lit: Lit::Str(lit), ..
                    }) => Some(lit.value()),
                    _ => None,
                };
                visit(&key, text);
            } else if meta.input.peek(syn::token::Paren) {
                // `rename(serialize = "..", deserialize = "..")`: keep the deserialize half.
                meta.parse_nested_meta(|inner| {
                    let inner_key = crate::parse::key(&inner);
                    let value: Expr = inner.value()?.parse()?;
                    if inner_key == "deserialize"
                        && let Expr::Lit(ExprLit {
                            lit: Lit::Str(lit), ..
                        }) = value
                    {
                        visit(&key, Some(lit.value()));
                    }
                    Ok(())
                })?;
            } else {
                visit(&key, None);
            }
            Ok(())
        });
    }
}

impl ContainerSerde {
    pub(crate) fn read(attrs: &[Attribute]) -> ContainerSerde {
        let mut serde = ContainerSerde::default();
        for_each_serde_item(attrs, |key, value| match key {
            "rename_all" => serde.rename_all = value,
            "tag" => serde.tag = value,
            "content" => serde.content = value,
            "untagged" => serde.untagged = true,
            _ => {}
        });
        serde
    }

    /// The JSON name of field `ident` (a Rust identifier, `r#` already stripped).
    pub(crate) fn json_name(&self, ident: &str, field: &FieldSerde) -> String {
        if let Some(rename) = &field.rename {
            return rename.clone();
        }
        self.rename_all
            .as_deref()
            .and_then(|rule| rename_field(rule, ident))
            .unwrap_or_else(|| ident.to_owned())
    }
}

impl FieldSerde {
    pub(crate) fn read(attrs: &[Attribute]) -> FieldSerde {
        let mut serde = FieldSerde::default();
        for_each_serde_item(attrs, |key, value| match key {
            "rename" => serde.rename = value,
            "flatten" => serde.flatten = true,
            "skip" | "skip_deserializing" => serde.skip = true,
            "alias" => serde.aliases.extend(value),
            "untagged" => serde.untagged = true,
            _ => {}
        });
        serde
    }
}

/// The Rust name of a field without its `r#` prefix.
pub(crate) fn unraw(ident: &syn::Ident) -> String {
    let name = ident.to_string();
    name.strip_prefix("r#").map(str::to_owned).unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::{ContainerSerde, FieldSerde, rename_field};

    #[test]
    fn renames_like_serde() {
        assert_eq!(
            rename_field("camelCase", "observed_generation").as_deref(),
            Some("observedGeneration")
        );
        assert_eq!(
            rename_field("PascalCase", "api_version").as_deref(),
            Some("ApiVersion")
        );
        assert_eq!(
            rename_field("SCREAMING-KEBAB-CASE", "a_b").as_deref(),
            Some("A-B")
        );
        assert_eq!(rename_field("weird", "a"), None);
    }

    #[test]
    fn reads_container_and_field_attributes() {
        let item: syn::DeriveInput = syn::parse_quote! {
            #[serde(rename_all(serialize = "snake_case", deserialize = "camelCase"))]
            struct S {
                #[serde(default, rename = "x-y", alias = "xy", alias = "x_y")]
                a: u8,
                #[serde(flatten)]
                rest: u8,
                #[serde(skip)]
                hidden: u8,
                long_name: u8,
            }
        };
        let container = ContainerSerde::read(&item.attrs);
        let syn::Data::Struct(data) = &item.data else {
            unreachable!()
        };
        let fields: Vec<_> = data.fields.iter().collect();
        let a = FieldSerde::read(&fields[0].attrs);
        assert_eq!(container.json_name("a", &a), "x-y");
        assert_eq!(a.aliases, ["xy", "x_y"]);
        assert!(FieldSerde::read(&fields[1].attrs).flatten);
        assert!(FieldSerde::read(&fields[2].attrs).skip);
        let plain = FieldSerde::read(&fields[3].attrs);
        assert_eq!(container.json_name("long_name", &plain), "longName");
    }
}
