//! JSON values written in attributes (`default = {"replicas": 1}`, `enum = ["a", "b"]`), read
//! at compile time and re-emitted as `serde_json::json!` input.
//!
//! The grammar is JSON's, in Rust tokens: `null`, `true`, `false`, string literals, numbers
//! (optionally negative), `[..]` and `{"key": value, ..}`.

use proc_macro2::{Literal, Span, TokenStream};
use quote::{ToTokens, quote};
use syn::parse::ParseStream;
use syn::{Lit, LitStr, Token};

/// A JSON value read from an attribute.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    /// An integer (fits i64 or u64).
    Int(i128),
    /// A number with a fraction or exponent.
    Float(f64),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

/// The JSON type of a value, as OpenAPI names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum JsonType {
    Null,
    Boolean,
    Integer,
    Number,
    String,
    Array,
    Object,
}

impl JsonType {
    pub(crate) fn name(self) -> &'static str {
        match self {
            JsonType::Null => "null",
            JsonType::Boolean => "a boolean",
            JsonType::Integer => "an integer",
            JsonType::Number => "a number",
            JsonType::String => "a string",
            JsonType::Array => "an array",
            JsonType::Object => "an object",
        }
    }
}

impl Json {
    pub(crate) fn json_type(&self) -> JsonType {
        match self {
            Json::Null => JsonType::Null,
            Json::Bool(_) => JsonType::Boolean,
            Json::Int(_) => JsonType::Integer,
            Json::Float(_) => JsonType::Number,
            Json::String(_) => JsonType::String,
            Json::Array(_) => JsonType::Array,
            Json::Object(_) => JsonType::Object,
        }
    }

    /// The same value as `serde_json`'s, to build kbr-core's record.
    ///
    /// # Errors
    /// A number `serde_json` cannot hold: an integer beyond `i64`/`u64`, an infinite float.
    pub(crate) fn to_serde(&self) -> Result<serde_json::Value, String> {
        use serde_json::{Number, Value};
        Ok(match self {
            Json::Null => Value::Null,
            Json::Bool(value) => Value::Bool(*value),
            Json::Int(value) => Value::Number(if let Ok(small) = i64::try_from(*value) {
                Number::from(small)
            } else {
                u64::try_from(*value)
                    .map(Number::from)
                    .map_err(|_| format!("the number {value} is out of JSON's integer range"))?
            }),
            Json::Float(value) => Value::Number(
                Number::from_f64(*value)
                    .ok_or_else(|| format!("{value} is not a finite number"))?,
            ),
            Json::String(value) => Value::String(value.clone()),
            Json::Array(items) => {
                Value::Array(items.iter().map(Json::to_serde).collect::<Result<_, _>>()?)
            }
            Json::Object(pairs) => Value::Object(
                pairs
                    .iter()
                    .map(|(key, value)| Ok((key.clone(), value.to_serde()?)))
                    .collect::<Result<_, String>>()?,
            ),
        })
    }

    /// A `serde_json` value as `Json` (to emit it as tokens).
    pub(crate) fn from_serde(value: &serde_json::Value) -> Json {
        use serde_json::Value;
        match value {
            Value::Null => Json::Null,
            Value::Bool(value) => Json::Bool(*value),
            Value::Number(number) => {
                if let Some(int) = number.as_i64() {
                    Json::Int(i128::from(int))
                } else if let Some(int) = number.as_u64() {
                    Json::Int(i128::from(int))
                } else {
                    Json::Float(number.as_f64().unwrap_or_default())
                }
            }
            Value::String(value) => Json::String(value.clone()),
            Value::Array(items) => Json::Array(items.iter().map(Json::from_serde).collect()),
            Value::Object(map) => Json::Object(
                map.iter()
                    .map(|(key, value)| (key.clone(), Json::from_serde(value)))
                    .collect(),
            ),
        }
    }
}

const EXPECTED: &str = "a JSON value: null, true, false, a number, a string literal, `[..]` or \
                        `{\"key\": value}`";

/// Reads one JSON value from `input`, stopping before a top-level `,`.
pub(crate) fn parse(input: ParseStream) -> syn::Result<Json> {
    if input.peek(Token![-]) {
        let minus: Token![-] = input.parse()?;
        return match parse(input)? {
            Json::Int(value) => Ok(Json::Int(-value)),
            Json::Float(value) => Ok(Json::Float(-value)),
            _ => Err(syn::Error::new(
                minus.span,
                "`-` must be followed by a number",
            )),
        };
    }
    if input.peek(syn::token::Bracket) {
        let content;
        syn::bracketed!(content in input);
        let mut items = Vec::new();
        while !content.is_empty() {
            items.push(parse(&content)?);
            if content.is_empty() {
                break;
            }
            content.parse::<Token![,]>()?;
        }
        return Ok(Json::Array(items));
    }
    if input.peek(syn::token::Brace) {
        let content;
        syn::braced!(content in input);
        let mut pairs: Vec<(String, Json)> = Vec::new();
        while !content.is_empty() {
            let key: LitStr = content.parse().map_err(|error| {
                syn::Error::new(
                    error.span(),
                    "object keys are string literals: `{\"key\": 1}`",
                )
            })?;
            content.parse::<Token![:]>()?;
            let value = parse(&content)?;
            if pairs.iter().any(|(seen, _)| *seen == key.value()) {
                return Err(syn::Error::new(
                    key.span(),
                    format!("key \"{}\" is given twice", key.value()),
                ));
            }
            pairs.push((key.value(), value));
            if content.is_empty() {
                break;
            }
            content.parse::<Token![,]>()?;
        }
        return Ok(Json::Object(pairs));
    }
    if input.peek(syn::Ident) {
        let ident: syn::Ident = input.parse()?;
        return match ident.to_string().as_str() {
            "null" => Ok(Json::Null),
            "true" => Ok(Json::Bool(true)),
            "false" => Ok(Json::Bool(false)),
            other => Err(syn::Error::new(
                ident.span(),
                format!("expected {EXPECTED}, found `{other}`"),
            )),
        };
    }
    let lit: Lit = input
        .parse()
        .map_err(|error| syn::Error::new(error.span(), format!("expected {EXPECTED}")))?;
    match lit {
        Lit::Str(lit) => Ok(Json::String(lit.value())),
        Lit::Bool(lit) => Ok(Json::Bool(lit.value)),
        Lit::Int(lit) => {
            if !lit.suffix().is_empty() {
                return Err(syn::Error::new(
                    lit.span(),
                    "write the number without a suffix",
                ));
            }
            Ok(Json::Int(lit.base10_parse()?))
        }
        Lit::Float(lit) => {
            if !lit.suffix().is_empty() {
                return Err(syn::Error::new(
                    lit.span(),
                    "write the number without a suffix",
                ));
            }
            Ok(Json::Float(lit.base10_parse()?))
        }
        other => Err(syn::Error::new(
            other.span(),
            format!("expected {EXPECTED}"),
        )),
    }
}

impl ToTokens for Json {
    /// `serde_json::json!` input for this value.
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let span = Span::call_site();
        let emitted = match self {
            Json::Null => quote!(null),
            Json::Bool(value) => quote!(#value),
            Json::Int(value) => {
                let literal = Literal::i128_unsuffixed(value.abs());
                if *value < 0 {
                    quote!(-#literal)
                } else {
                    quote!(#literal)
                }
            }
            Json::Float(value) => {
                let literal = Literal::f64_unsuffixed(value.abs());
                if *value < 0.0 {
                    quote!(-#literal)
                } else {
                    quote!(#literal)
                }
            }
            Json::String(value) => LitStr::new(value, span).into_token_stream(),
            Json::Array(items) => quote!([#(#items),*]),
            Json::Object(pairs) => {
                let pairs = pairs.iter().map(|(key, value)| {
                    let key = LitStr::new(key, span);
                    quote!(#key: #value)
                });
                quote!({#(#pairs),*})
            }
        };
        tokens.extend(emitted);
    }
}
