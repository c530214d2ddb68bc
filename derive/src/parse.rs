//! Reading attribute values (`key = "str"`, `key = [..]`, flags, `key("k", "v")`) with errors
//! that point at the value and show the expected form.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::parse::Parse;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit, LitStr, Token};

/// The key of a nested meta item as written (`group`, `type`, ...).
pub(crate) fn key(meta: &ParseNestedMeta) -> String {
    meta.path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_else(|| quote::ToTokens::to_token_stream(&meta.path).to_string())
}

fn expect_eq(meta: &ParseNestedMeta, key: &str, example: &str) -> syn::Result<Expr> {
    if !meta.input.peek(Token![=]) {
        return Err(meta.error(format!("`{key}` takes a value: write `{example}`")));
    }
    Ok(ungroup(meta.value()?.parse()?))
}

/// Strips the invisible groups `macro_rules!` puts around substituted fragments.
fn ungroup(expr: Expr) -> Expr {
    match expr {
        Expr::Group(group) => ungroup(*group.expr),
        other => other,
    }
}

/// `key = "string"`.
pub(crate) fn string(meta: &ParseNestedMeta, key: &str, example: &str) -> syn::Result<LitStr> {
    match expect_eq(meta, key, example)? {
        Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }) => Ok(lit),
        other => Err(syn::Error::new(
            other.span(),
            format!("`{key}` takes a string literal: write `{example}`"),
        )),
    }
}

/// `key` alone (true) or `key = true|false`.
pub(crate) fn flag(meta: &ParseNestedMeta, key: &str) -> syn::Result<bool> {
    if !meta.input.peek(Token![=]) {
        return Ok(true);
    }
    match ungroup(meta.value()?.parse()?) {
        Expr::Lit(ExprLit {
            lit: Lit::Bool(lit),
            ..
        }) => Ok(lit.value),
        other => Err(syn::Error::new(
            other.span(),
            format!("`{key}` takes `true` or `false`: write `{key}` or `{key} = false`"),
        )),
    }
}

/// `key = ["a", "b"]` or `key = "a;b"` (controller-gen's `;`-separated form) or `key = "a"`.
pub(crate) fn strings(
    meta: &ParseNestedMeta,
    key: &str,
    example: &str,
) -> syn::Result<Vec<LitStr>> {
    match expect_eq(meta, key, example)? {
        Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }) => Ok(split(&lit)),
        Expr::Array(array) => array
            .elems
            .into_iter()
            .map(|element| match ungroup(element) {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(lit), ..
                }) => Ok(lit),
                other => Err(syn::Error::new(
                    other.span(),
                    format!("`{key}` takes string literals: write `{example}`"),
                )),
            })
            .collect(),
        other => Err(syn::Error::new(
            other.span(),
            format!("`{key}` takes a list of strings: write `{example}`"),
        )),
    }
}

fn split(lit: &LitStr) -> Vec<LitStr> {
    let value = lit.value();
    if !value.contains(';') {
        return vec![lit.clone()];
    }
    value
        .split(';')
        .map(|part| LitStr::new(part.trim(), lit.span()))
        .collect()
}

/// `key("k", "v")`.
pub(crate) fn pair(meta: &ParseNestedMeta, key: &str) -> syn::Result<(LitStr, LitStr)> {
    let example = format!("`{key}(\"example.com/key\", \"value\")`");
    if !meta.input.peek(syn::token::Paren) {
        return Err(meta.error(format!("`{key}` takes a key and a value: write {example}")));
    }
    let content;
    syn::parenthesized!(content in meta.input);
    let parsed: syn::punctuated::Punctuated<Expr, Token![,]> =
        content.parse_terminated(Expr::parse, Token![,])?;
    let span = parsed.span();
    let mut values = parsed.into_iter().map(|expr| match ungroup(expr) {
        Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }) => Ok(lit),
        other => Err(syn::Error::new(
            other.span(),
            format!("`{key}` takes two string literals: write {example}"),
        )),
    });
    match (values.next(), values.next(), values.next()) {
        (Some(k), Some(v), None) => Ok((k?, v?)),
        _ => Err(syn::Error::new(
            span,
            format!("`{key}` takes exactly a key and a value: write {example}"),
        )),
    }
}

/// `key = 3` (an `i32` literal, possibly negative).
pub(crate) fn int(meta: &ParseNestedMeta, key: &str, example: &str) -> syn::Result<i32> {
    let expr = expect_eq(meta, key, example)?;
    let span = expr.span();
    let (negative, lit) = match &expr {
        Expr::Lit(ExprLit {
            lit: Lit::Int(lit), ..
        }) => (false, lit.clone()),
        Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr: inner,
            ..
        }) => match ungroup((**inner).clone()) {
            Expr::Lit(ExprLit {
                lit: Lit::Int(lit), ..
            }) => (true, lit.clone()),
            _ => {
                return Err(syn::Error::new(
                    span,
                    format!("`{key}` takes an integer: write `{example}`"),
                ));
            }
        },
        _ => {
            return Err(syn::Error::new(
                span,
                format!("`{key}` takes an integer: write `{example}`"),
            ));
        }
    };
    let value: i64 = lit.base10_parse()?;
    let value = if negative { -value } else { value };
    i32::try_from(value)
        .map_err(|_| syn::Error::new(span, format!("`{key}` must fit in an i32 (got {value})")))
}

/// Error for an unknown key, listing the known ones.
pub(crate) fn unknown(
    meta: &ParseNestedMeta,
    attribute: &str,
    key: &str,
    known: &[&str],
) -> syn::Error {
    let suggestion = known
        .iter()
        .find(|candidate| similar(candidate, key))
        .map(|candidate| format!("did you mean `{candidate}`? "))
        .unwrap_or_default();
    meta.error(format!(
        "unknown `#[{attribute}(...)]` key `{key}`; {suggestion}expected one of: {}",
        known.join(", ")
    ))
}

/// Levenshtein distance, for "did you mean" hints.
pub(crate) fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

/// Whether two keys differ only in case, `_`/`-`, a trailing `s`, or a typo or two.
fn similar(a: &str, b: &str) -> bool {
    let normalize = |s: &str| {
        s.chars()
            .filter(|c| *c != '_' && *c != '-')
            .flat_map(char::to_lowercase)
            .collect::<String>()
    };
    let (a, b) = (normalize(a), normalize(b));
    a == b
        || a.trim_end_matches('s') == b.trim_end_matches('s')
        || a.len() > 3 && distance(&a, &b) <= 2
}

/// Collects errors instead of stopping at the first.
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    /// Adds `error`.
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(errors) => errors.combine(error),
            None => self.0 = Some(error),
        }
    }

    /// Adds `"<what> <reason>"` at `span` when `result` is an error.
    pub(crate) fn check(&mut self, span: Span, what: &str, result: Result<(), String>) {
        if let Err(reason) = result {
            self.push(syn::Error::new(span, format!("{what} {reason}")));
        }
    }

    /// Whether any error was pushed.
    pub(crate) fn any(&self) -> bool {
        self.0.is_some()
    }

    /// `Ok` when nothing was pushed, else every error.
    pub(crate) fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }

    /// The collected errors; call only after pushing at least one.
    pub(crate) fn into_error(self) -> syn::Error {
        self.0
            .unwrap_or_else(|| syn::Error::new(Span::call_site(), "invalid #[kbr(...)] attributes"))
    }
}

/// Stores `value` in `slot`, or fails when `key` was already given.
pub(crate) fn set_once<T>(
    slot: &mut Option<T>,
    value: T,
    meta: &syn::meta::ParseNestedMeta,
    key: &str,
) -> syn::Result<()> {
    if slot.is_some() {
        return Err(meta.error(format!("`{key}` is given twice; keep one")));
    }
    *slot = Some(value);
    Ok(())
}
