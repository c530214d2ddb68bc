//! Reading the markers of one field or type, as written, into a [`Record`] (with spans for
//! errors); `check` turns it into kbr-core's serialized record.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit, LitStr};

use super::json::{self, Json};
use super::markers::{self, Argument, FORMATS, Marker};
use super::rule::read_rule;
use crate::parse;

/// One marker as written: its definition, value and where it was written.
pub(crate) struct Entry {
    pub marker: &'static Marker,
    pub value: Json,
    /// The marker's name (for "applies to" errors).
    pub key_span: Span,
    /// The marker's value as written, or its name for flags (value errors span it).
    pub value_tokens: TokenStream,
    /// For `exactly_one_of` & co: each name as written and its span.
    pub names: Vec<(Name, Span)>,
}

/// A field name in `exactly_one_of = [..]`: a Rust identifier or a JSON name.
#[derive(Clone)]
pub(crate) enum Name {
    Rust(String),
    Json(String),
}

/// Every marker of one field or type, in order.
#[derive(Default)]
pub(crate) struct Record {
    pub entries: Vec<Entry>,
    /// `items(...)`: the record for the items of a list, and the span of `items`.
    pub items: Option<(Box<Record>, Span)>,
}

impl Record {
    pub(crate) fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|entry| entry.marker.name == key)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.items.is_none()
    }

    /// Reads one `key = value` of `#[kbr(...)]` into this record. `nested` is true inside
    /// `items(...)`.
    pub(crate) fn read(&mut self, meta: &ParseNestedMeta, nested: bool) -> syn::Result<()> {
        let key = parse::key(meta);
        let Some(marker) = markers::find(&key) else {
            return Err(unknown(meta, &key));
        };
        let key_span = meta.path.span();
        if marker.argument == Argument::Items {
            if nested {
                return Err(meta.error("`items(...)` cannot be nested; mark the inner type"));
            }
            if self.items.is_some() {
                return Err(meta.error("`items(...)` is given twice; merge them"));
            }
            let mut inner = Record::default();
            if !meta.input.peek(syn::token::Paren) {
                return Err(meta.error("`items` takes markers: write `items(max_length = 63)`"));
            }
            meta.parse_nested_meta(|item| inner.read(&item, true))?;
            self.items = Some((Box::new(inner), key_span));
            return Ok(());
        }
        let repeatable = matches!(marker.argument, Argument::Rule | Argument::Fields);
        if !repeatable && self.get(marker.name).is_some() {
            return Err(meta.error(format!("`{}` is given twice; keep one", marker.name)));
        }
        let (value, value_tokens, names) = read_value(meta, marker)?;
        self.entries.push(Entry {
            marker,
            value,
            key_span,
            value_tokens,
            names,
        });
        Ok(())
    }
}

fn unknown(meta: &ParseNestedMeta, key: &str) -> syn::Error {
    let hint = match key {
        "rule" | "message" | "message_expression" | "reason" | "field_path" => {
            " CEL rules are written `validation(rule = \"self.a <= self.b\", message = \"...\")`."
                .to_owned()
        }
        _ if crate::keys::RESOURCE_KEYS.contains(&key) => format!(
            " `{key}` is a resource attribute: it goes in `#[kbr(...)]` on the Spec struct that \
             derives CustomResource."
        ),
        _ => markers::suggest(key)
            .map(|name| format!(" Did you mean `{name}`?"))
            .unwrap_or_default(),
    };
    let known: Vec<&str> = markers::MARKERS.iter().map(|marker| marker.name).collect();
    meta.error(format!(
        "unknown schema marker `{key}`.{hint} Markers: {}",
        known.join(", ")
    ))
}

type Read = (Json, TokenStream, Vec<(Name, Span)>);

impl Entry {
    /// An error spanning the marker's value.
    pub(crate) fn error_at_value(&self, message: impl std::fmt::Display) -> syn::Error {
        syn::Error::new_spanned(&self.value_tokens, message)
    }
}

/// The tokens of one value: everything up to the next top-level `,`.
fn value_tokens(stream: syn::parse::ParseStream) -> syn::Result<TokenStream> {
    stream.step(|cursor| {
        let mut rest = *cursor;
        let mut tokens = TokenStream::new();
        while let Some((token, next)) = rest.token_tree() {
            if matches!(&token, TokenTree::Punct(punct) if punct.as_char() == ',') {
                break;
            }
            tokens.extend([token]);
            rest = next;
        }
        Ok((tokens, rest))
    })
}

fn read_value(meta: &ParseNestedMeta, marker: &Marker) -> syn::Result<Read> {
    let name = marker.name;
    let example = example(marker);
    let needs_value = || meta.error(format!("`{name}` takes a value: write `{example}`"));
    match marker.argument {
        Argument::Flag => {
            let value = parse::flag(meta, name)?;
            Ok((Json::Bool(value), meta.path.to_token_stream(), Vec::new()))
        }
        Argument::Rule => {
            if !meta.input.peek(syn::token::Paren) {
                return Err(meta.error(format!("`{name}` takes a rule: write `{example}`")));
            }
            let rule = read_rule(meta)?;
            Ok((rule, meta.path.to_token_stream(), Vec::new()))
        }
        _ => {
            if !meta.input.peek(syn::Token![=]) {
                return Err(needs_value());
            }
            let tokens = value_tokens(meta.value()?)?;
            if tokens.is_empty() {
                return Err(needs_value());
            }
            let (value, names) = match marker.argument {
                Argument::Fields | Argument::Keys => {
                    let parser =
                        |stream: syn::parse::ParseStream| read_names(stream, marker, &example);
                    syn::parse::Parser::parse2(parser, tokens.clone())?
                }
                _ => (
                    syn::parse::Parser::parse2(json::parse, tokens.clone())?,
                    Vec::new(),
                ),
            };
            check_value(marker, &value, &tokens, &example)?;
            Ok((value, tokens, names))
        }
    }
}

/// `[a, b]`, `["a", "b"]` or `"a;b"` (controller-gen's form).
fn read_names(
    stream: syn::parse::ParseStream,
    marker: &Marker,
    example: &str,
) -> syn::Result<(Json, Vec<(Name, Span)>)> {
    let wrong = |span: Span| {
        syn::Error::new(
            span,
            format!(
                "`{}` takes a list of field names: write `{example}`",
                marker.name
            ),
        )
    };
    let mut names = Vec::new();
    if stream.peek(syn::token::Bracket) {
        let content;
        syn::bracketed!(content in stream);
        let items = content.parse_terminated(Expr::parse_without_eager_brace, syn::Token![,])?;
        for item in items {
            match item {
                Expr::Path(path) if path.path.get_ident().is_some() => {
                    let ident = path.path.get_ident().map(super::serde_attrs::unraw);
                    let span = path.span();
                    if marker.argument == Argument::Keys {
                        return Err(syn::Error::new(
                            span,
                            format!(
                                "`{}` takes JSON property names as strings: write `{example}`",
                                marker.name
                            ),
                        ));
                    }
                    names.push((Name::Rust(ident.unwrap_or_default()), span));
                }
                Expr::Lit(ExprLit {
                    lit: Lit::Str(lit), ..
                }) => names.push((Name::Json(lit.value()), lit.span())),
                other => return Err(wrong(other.span())),
            }
        }
    } else if stream.peek(LitStr) {
        let lit: LitStr = stream.parse()?;
        for part in lit.value().split(';') {
            names.push((Name::Json(part.trim().to_owned()), lit.span()));
        }
    } else {
        return Err(wrong(stream.span()));
    }
    if names.is_empty() {
        return Err(wrong(stream.span()));
    }
    let strings = names
        .iter()
        .map(|(name, _)| match name {
            Name::Rust(name) | Name::Json(name) => Json::String(name.clone()),
        })
        .collect();
    Ok((Json::Array(strings), names))
}

/// Checks a marker's value has the type it needs.
fn check_value(
    marker: &Marker,
    value: &Json,
    tokens: &TokenStream,
    example: &str,
) -> syn::Result<()> {
    let name = marker.name;
    let fail = |what: &str| {
        Err(syn::Error::new_spanned(
            tokens,
            format!("`{name}` takes {what}: write `{example}`"),
        ))
    };
    match (marker.argument, value) {
        (Argument::Number, Json::Int(_) | Json::Float(_)) => {
            if name == "multiple_of" && matches!(value, Json::Int(v) if *v <= 0) {
                return fail("a positive number");
            }
            if name == "multiple_of" && matches!(value, Json::Float(v) if *v <= 0.0) {
                return fail("a positive number");
            }
            Ok(())
        }
        (Argument::Number, _) => fail("a number"),
        (Argument::Count, Json::Int(v)) if *v >= 0 && *v <= i128::from(i64::MAX) => Ok(()),
        (Argument::Count, _) => fail("a non-negative integer"),
        (Argument::Str, Json::String(text)) => {
            if text.is_empty() {
                return fail("a non-empty string");
            }
            Ok(())
        }
        (Argument::Str, _) => fail("a string literal"),
        (Argument::Choice(choices), Json::String(choice)) if choices.contains(&choice.as_str()) => {
            Ok(())
        }
        (Argument::Choice(choices), _) => fail(&format!("one of \"{}\"", choices.join("\", \""))),
        (Argument::Format, Json::String(format)) if FORMATS.contains(&format.as_str()) => Ok(()),
        (Argument::Format, Json::String(format)) => {
            let hint = FORMATS
                .iter()
                .find(|known| known.replace('-', "") == format.to_lowercase().replace('-', ""))
                .map(|known| format!("did you mean \"{known}\"? "))
                .unwrap_or_default();
            Err(syn::Error::new_spanned(
                tokens,
                format!(
                    "unknown format \"{format}\"; {hint}the API server knows: {}",
                    FORMATS.join(", ")
                ),
            ))
        }
        (Argument::Format, _) => fail("a format name"),
        (Argument::JsonArray, Json::Array(items)) if !items.is_empty() => Ok(()),
        (Argument::JsonArray, _) => fail("a non-empty list of JSON values"),
        _ => Ok(()),
    }
}

/// How to write `marker`, for errors.
pub(crate) fn example(marker: &Marker) -> String {
    let name = marker.name;
    match marker.argument {
        Argument::Flag => name.to_owned(),
        Argument::Number => format!("{name} = 1"),
        Argument::Count => format!("{name} = 63"),
        Argument::Str if name == "pattern" => format!("{name} = \"^[a-z]+$\""),
        Argument::Str => format!("{name} = \"Replicas\""),
        Argument::Choice(choices) => format!("{name} = \"{}\"", choices[0]),
        Argument::Format => format!("{name} = \"date-time\""),
        Argument::Json => format!("{name} = {{\"replicas\": 1}}"),
        Argument::JsonArray => format!("{name} = [\"Always\", \"Never\"]"),
        Argument::Fields => format!("{name} = [field_a, field_b]"),
        Argument::Keys => format!("{name} = [\"type\"]"),
        Argument::Rule => format!(
            "{name}(rule = \"self.min <= self.max\", message = \"min must not exceed max\")"
        ),
        Argument::Items => format!("{name}(max_length = 63)"),
    }
}
