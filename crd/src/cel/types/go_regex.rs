//! Go's `regexp` as the Kubernetes CEL libraries use it: compile errors worded as
//! `regexp/syntax` words them, and `FindAllString`'s treatment of empty matches.
//!
//! Go's `regexp` and the `regex` crate implement the same RE2 syntax and leftmost-first
//! semantics; they differ in their error texts, which kube-apiserver returns to users
//! (`Illegal regex: error parsing regexp: missing closing ): ``(```). Go's codes are
//! `src/regexp/syntax/parse.go`'s `ErrorCode`s, each followed by the offending part of the
//! pattern; errors without a Go counterpart keep the `regex` crate's description.

use regex::Regex;
use regex_syntax::ast::{Ast, ErrorKind, RepetitionKind, RepetitionRange};

/// `regexp.Compile`, with a Go-worded error.
pub(crate) fn compile(pattern: &str) -> Result<Regex, String> {
    let ast = regex_syntax::ast::parse::Parser::new()
        .parse(pattern)
        .map_err(|error| go_error(pattern, &error))?;
    if let Some(error) = go_only_error(pattern, &ast) {
        return Err(error);
    }
    Regex::new(pattern).map_err(|e| format!("error parsing regexp: {e}"))
}

/// What Go's parser refuses and the `regex` crate accepts: a repetition operator applied to
/// a repetition (`a**`), and a repeat count above 1000 (`x{1001}`).
fn go_only_error(pattern: &str, ast: &Ast) -> Option<String> {
    match ast {
        Ast::Repetition(repetition) => {
            let op = |start: usize, end: usize| pattern.get(start..end).unwrap_or_default();
            if let Ast::Repetition(inner) = repetition.ast.as_ref() {
                let ops = op(inner.op.span.start.offset, repetition.op.span.end.offset);
                return Some(format!(
                    "error parsing regexp: invalid nested repetition operator: `{ops}`"
                ));
            }
            if let RepetitionKind::Range(range) = &repetition.op.kind {
                let too_many = match range {
                    RepetitionRange::Exactly(n) | RepetitionRange::AtLeast(n) => *n > 1000,
                    RepetitionRange::Bounded(m, n) => *m > 1000 || *n > 1000,
                };
                if too_many {
                    let count = op(
                        repetition.op.span.start.offset,
                        repetition.op.span.end.offset,
                    );
                    return Some(format!(
                        "error parsing regexp: invalid repeat count: `{count}`"
                    ));
                }
            }
            go_only_error(pattern, &repetition.ast)
        }
        Ast::Group(group) => go_only_error(pattern, &group.ast),
        Ast::Alternation(alternation) => alternation
            .asts
            .iter()
            .find_map(|a| go_only_error(pattern, a)),
        Ast::Concat(concat) => concat.asts.iter().find_map(|a| go_only_error(pattern, a)),
        _ => None,
    }
}

/// `syntax.Error.Error()`: ``error parsing regexp: <code>: `<expr>` ``.
fn go_error(pattern: &str, error: &regex_syntax::ast::Error) -> String {
    let span = error.span();
    let spanned = pattern
        .get(span.start.offset..span.end.offset)
        .unwrap_or_default();
    let from_start = pattern.get(span.start.offset..).unwrap_or_default();
    let (code, expr) = match error.kind() {
        ErrorKind::GroupUnclosed => ("missing closing )", pattern),
        ErrorKind::GroupUnopened => ("unexpected )", pattern),
        ErrorKind::ClassUnclosed => ("missing closing ]", from_start),
        ErrorKind::RepetitionMissing => (
            "missing argument to repetition operator",
            repetition(from_start),
        ),
        ErrorKind::EscapeUnrecognized | ErrorKind::ClassEscapeInvalid => {
            ("invalid escape sequence", spanned)
        }
        ErrorKind::EscapeUnexpectedEof => ("trailing backslash at end of expression", ""),
        ErrorKind::ClassRangeInvalid => ("invalid character class range", spanned),
        ErrorKind::RepetitionCountInvalid => ("invalid repeat count", spanned),
        ErrorKind::UnsupportedLookAround | ErrorKind::FlagUnrecognized => {
            ("invalid or unsupported Perl syntax", spanned)
        }
        ErrorKind::GroupNameInvalid | ErrorKind::GroupNameEmpty => {
            ("invalid named capture", spanned)
        }
        ErrorKind::GroupNameDuplicate { .. } => ("duplicate capture group name", spanned),
        _ => return format!("error parsing regexp: {}", error.kind()),
    };
    format!("error parsing regexp: {code}: `{expr}`")
}

/// The repetition operator `text` starts with, with its `?` (`*`, `+?`, `{2,3}`).
fn repetition(text: &str) -> &str {
    let op = match text.chars().next() {
        Some('{') => text.find('}').map_or(text.len(), |end| end + 1),
        Some(c) => c.len_utf8(),
        None => 0,
    };
    let lazy = text[op..].starts_with('?');
    &text[..op + usize::from(lazy)]
}

/// `regexp.FindAllString(s, -1)`: successive non-overlapping matches, an empty match right
/// after a previous match skipped.
pub(crate) fn find_all<'t>(regex: &Regex, text: &'t str) -> Vec<&'t str> {
    let mut found = Vec::new();
    let (mut pos, mut previous_end) = (0, None);
    while pos <= text.len() {
        let Some(m) = regex.find_at(text, pos) else {
            break;
        };
        let mut accept = true;
        if m.end() == pos {
            if Some(m.start()) == previous_end {
                accept = false;
            }
            pos += text[pos..].chars().next().map_or(1, char::len_utf8);
        } else {
            pos = m.end();
        }
        previous_end = Some(m.end());
        if accept {
            found.push(m.as_str());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_worded_as_go_words_them() {
        let error = |p: &str| compile(p).err().unwrap_or_default();
        assert_eq!(error("("), "error parsing regexp: missing closing ): `(`");
        assert_eq!(error("a)"), "error parsing regexp: unexpected ): `a)`");
        assert_eq!(
            error("x[a-"),
            "error parsing regexp: missing closing ]: `[a-`"
        );
        assert_eq!(
            error("*"),
            "error parsing regexp: missing argument to repetition operator: `*`"
        );
        assert_eq!(
            error(r"\q"),
            r"error parsing regexp: invalid escape sequence: `\q`"
        );
        assert_eq!(
            error("a**"),
            "error parsing regexp: invalid nested repetition operator: `**`"
        );
        assert_eq!(
            error("x{1001}"),
            "error parsing regexp: invalid repeat count: `{1001}`"
        );
        assert!(compile("[a-z]+").is_ok() && compile("(a*)*").is_ok() && compile("a*?").is_ok());
    }

    #[test]
    fn find_all_skips_empty_matches_after_a_match() {
        let regex = compile("a*").expect("a valid pattern");
        assert_eq!(find_all(&regex, "baaab"), ["", "aaa", ""]);
        let regex = compile("[a-z]").expect("a valid pattern");
        assert_eq!(find_all(&regex, "a1b"), ["a", "b"]);
    }
}
