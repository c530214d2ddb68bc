//! Rust identifiers for Kubernetes names: keywords, raw identifiers and module names.
//!
//! A group or kind becomes a module (`src/api/<group>/…`, `src/controller/<group>/<kind>.rs`),
//! so its name must be a valid, warning-free Rust identifier. Keywords become raw identifiers
//! (`r#match`, file `match.rs`); `self`, `super` and `crate`, which cannot be raw, get a trailing
//! underscore (`crate_`, file `crate_.rs`).

/// Strict and reserved keywords of Rust 2024 (the generated projects' edition), which cannot be
/// plain identifiers.
pub const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while", // strict
    "abstract", "become", "box", "do", "final", "gen", "macro", "override", "priv", "try",
    "typeof", "unsized", "virtual", "yield", // reserved
];

/// Keywords that cannot be raw identifiers either (`r#self` is an error).
const NOT_RAW: &[&str] = &["self", "super", "crate", "Self"];

/// Whether `name` is a Rust keyword (strict or reserved).
pub fn is_keyword(name: &str) -> bool {
    KEYWORDS.contains(&name)
}

/// The module identifier for a snake_case `name`: `name` itself, `r#name` for a keyword, or
/// `name_` for `self`, `super` and `crate`.
pub fn module_ident(name: &str) -> String {
    if NOT_RAW.contains(&name) {
        format!("{name}_")
    } else if is_keyword(name) {
        format!("r#{name}")
    } else {
        name.to_owned()
    }
}

/// The file or directory stem of a module identifier: the identifier without its `r#` prefix
/// (`r#match` -> `match`, `crate_` -> `crate_`).
pub fn file_stem(ident: &str) -> &str {
    ident.strip_prefix("r#").unwrap_or(ident)
}

/// The library crate of the project `project_name`: `-` becomes `_`, e.g. `knative_lite`.
pub fn crate_name(project_name: &str) -> String {
    project_name.replace('-', "_")
}

/// A snake_case identifier from a dotted or dashed Kubernetes name: `-` and `.` become `_`, and
/// runs of `_` collapse to one (`foo--bar.baz` -> `foo_bar_baz`) so rustc's `non_snake_case`
/// lint stays quiet.
pub fn snake_from_dns(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        let c = if c == '-' || c == '.' { '_' } else { c };
        if !(c == '_' && out.ends_with('_')) {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_idents() {
        assert_eq!(module_ident("eventing"), "eventing");
        assert_eq!(module_ident("match"), "r#match");
        assert_eq!(module_ident("type"), "r#type");
        assert_eq!(module_ident("gen"), "r#gen");
        assert_eq!(module_ident("crate"), "crate_");
        assert_eq!(module_ident("self"), "self_");
        assert_eq!(module_ident("super"), "super_");
        assert_eq!(file_stem("r#match"), "match");
        assert_eq!(file_stem("crate_"), "crate_");
    }

    #[test]
    fn snake_from_dns_names() {
        assert_eq!(snake_from_dns("eventing"), "eventing");
        assert_eq!(snake_from_dns("foo-bar.baz"), "foo_bar_baz");
        assert_eq!(snake_from_dns("a--b"), "a_b");
    }
}
