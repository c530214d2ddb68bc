//! The grammar of a CEL rule's `fieldPath` (`x-kubernetes-validations[].fieldPath`): a JSON
//! path of steps, each `.name` or `['name']` (a single-quoted CEL string, for names with dots
//! or other delimiters). No array index (`[0]`), no leading name without `.`, no empty step at
//! the end.
//!
//! Mirrors apiextensions-apiserver's `pkg/apiserver/schema/cel/validation.go`
//! (`ValidFieldPath`): the path is split into the delimiters `.`, `[`, `]` and what lies
//! between them (a single-quoted string keeps its delimiters); `.` takes the next token as a
//! name, `[` a quoted string (unescaped as CEL's `unescapeSingleQuote` does) then `]`. This
//! module is the syntax; resolving the names against the schema the rule sits on (a property,
//! else a map key) is kbr-crd's (`structural::field_path`), which kbr-derive cannot do (it
//! sees one type at a time) and checks the syntax with [`parse`] only.
//!
//! ```
//! use kbr_core::field_path::parse;
//! assert_eq!(parse(".spec.replicas").unwrap(), ["spec", "replicas"]);
//! assert_eq!(parse("['a.b'].c").unwrap(), ["a.b", "c"]);
//! assert!(parse("spec").is_err());
//! assert!(parse(".items[0]").is_err());
//! ```

/// Why a `fieldPath` is not a path: `ValidFieldPath`'s reasons, in its words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldPathError {
    /// The path ends after `.` or `[`, or inside `['...'` (`unexpected end of JSON path`).
    #[error("unexpected end of JSON path")]
    UnexpectedEnd,
    /// A token other than `.` or `[` where a step starts (`expected [ or . but got: …`).
    #[error("expected [ or . but got: {0}")]
    ExpectedStep(String),
    /// `[` not followed by a single-quoted string (`expected single quoted string but got …`).
    #[error("expected single quoted string but got {0}")]
    ExpectedQuoted(String),
    /// A quoted name not followed by `]` (`expected ] but got …`).
    #[error("expected ] but got {0}")]
    ExpectedClose(String),
    /// A quoted name with an escape CEL does not know (`invalid string literal: …`).
    #[error("invalid string literal: invalid escape char \\{0}")]
    InvalidEscape(char),
}

/// One token of a path: a delimiter (`.`, `[`, `]`) or the text between two.
fn tokens(path: &str) -> Vec<&str> {
    let mut tokens = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        let end = if rest.starts_with('\'') {
            // A quoted string runs to the next quote not preceded by a backslash, else to
            // the end.
            let bytes = rest.as_bytes();
            (1..bytes.len())
                .find(|&i| bytes[i] == b'\'' && bytes[i - 1] != b'\\')
                .map_or(rest.len(), |i| i + 1)
        } else {
            match rest.find(['.', '[', ']']) {
                Some(0) => 1,
                Some(i) => i,
                None => rest.len(),
            }
        };
        tokens.push(&rest[..end]);
        rest = &rest[end..];
    }
    tokens
}

/// The text of a single-quoted CEL string literal without its quotes (`unescapeSingleQuote`).
fn unescape(quoted: &str) -> Result<String, FieldPathError> {
    let mut out = String::new();
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let escaped = chars.next().unwrap_or_default();
        out.push(match escaped {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            '\'' => '\'',
            '\\' => '\\',
            other => return Err(FieldPathError::InvalidEscape(other)),
        });
    }
    Ok(out)
}

/// The names `path` steps through, in order (`.a['b.c']` -> `["a", "b.c"]`); the empty path
/// has none. Whether each name is a property or a map key depends on the schema, not on how
/// it is written.
///
/// # Errors
/// [`FieldPathError`]: the path is not in the grammar.
pub fn parse(path: &str) -> Result<Vec<String>, FieldPathError> {
    let mut names = Vec::new();
    let mut tokens = tokens(path).into_iter();
    while let Some(token) = tokens.next() {
        match token {
            "[" => {
                let quoted = tokens.next().ok_or(FieldPathError::UnexpectedEnd)?;
                let inner = quoted
                    .strip_prefix('\'')
                    .and_then(|q| q.strip_suffix('\''))
                    .filter(|_| quoted.len() >= 2)
                    .ok_or_else(|| FieldPathError::ExpectedQuoted(quoted.to_owned()))?;
                names.push(unescape(inner)?);
                match tokens.next() {
                    Some("]") => {}
                    Some(other) => return Err(FieldPathError::ExpectedClose(other.to_owned())),
                    None => return Err(FieldPathError::UnexpectedEnd),
                }
            }
            "." => {
                let name = tokens.next().ok_or(FieldPathError::UnexpectedEnd)?;
                names.push(name.to_owned());
            }
            other => return Err(FieldPathError::ExpectedStep(other.to_owned())),
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_quoted_names_are_steps() {
        assert_eq!(parse(""), Ok(vec![]));
        assert_eq!(parse(".max"), Ok(vec!["max".to_owned()]));
        assert_eq!(parse("['max']"), Ok(vec!["max".to_owned()]));
        assert_eq!(
            parse(".limits['a.b'].c"),
            Ok(vec!["limits".to_owned(), "a.b".to_owned(), "c".to_owned()])
        );
        assert_eq!(parse(r"['it\'s']"), Ok(vec!["it's".to_owned()]));
    }

    #[test]
    fn what_the_api_server_refuses_is_refused_with_its_reason() {
        use FieldPathError::*;
        for (bad, reason) in [
            ("max", ExpectedStep("max".into())),
            ("   ", ExpectedStep("   ".into())),
            (".", UnexpectedEnd),
            (".limits[", UnexpectedEnd),
            ("['a'", UnexpectedEnd),
            ("[0]", ExpectedQuoted("0".into())),
            (".items[0]", ExpectedQuoted("0".into())),
            ("['a'x]", ExpectedClose("x".into())),
            (r"['\q']", InvalidEscape('q')),
        ] {
            assert_eq!(parse(bad), Err(reason), "{bad:?}");
        }
    }
}
