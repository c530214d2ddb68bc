//! Field selectors (`metadata.name=web,spec.nodeName!=a`): the one parser of kbr-runtime, used
//! by the cache (lists answered from indexes) and by the fake API server, so both read a
//! selector exactly as kube-apiserver does.
//!
//! The grammar is apimachinery's `fields.ParseSelector`
//! (`staging/src/k8s.io/apimachinery/pkg/fields/selector.go`): terms separated by unescaped
//! commas; in each term the first `!=`, `==` or `=` splits the field from the value; the value
//! is unescaped (`\,` `\=` `\\`; any other backslash sequence, or a bare `,` or `=`, is an
//! error); empty terms are skipped; the field is taken verbatim (not trimmed).

use std::fmt;

/// How a requirement compares the field with its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    /// `=` or `==`.
    Equals,
    /// `!=`.
    NotEquals,
}

/// One term of a field selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    /// The field path, e.g. `metadata.name`.
    pub field: String,
    /// The comparison.
    pub operator: Operator,
    /// The value, unescaped.
    pub value: String,
}

impl Requirement {
    /// Whether `actual` (the object's value of the field as text; `""` when absent) satisfies
    /// the requirement.
    pub fn matches(&self, actual: &str) -> bool {
        (actual == self.value) == (self.operator == Operator::Equals)
    }
}

/// A parsed field selector: every requirement must hold. Empty matches everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSelector {
    /// The requirements, in the selector's order.
    pub requirements: Vec<Requirement>,
}

/// A field selector that does not parse; `Display` is the API server's 400 message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FieldSelectorError {
    /// A term has no operator.
    #[error("invalid selector: '{selector}'; can't understand '{term}'")]
    NoOperator {
        /// The whole selector.
        selector: String,
        /// The term.
        term: String,
    },
    /// A value has a backslash sequence other than `\,` `\=` `\\`.
    #[error("invalid field selector: invalid escape sequence: {sequence}")]
    InvalidEscape {
        /// The sequence.
        sequence: String,
    },
    /// A value has an unescaped `,` or `=` (Go prints the rune as its code: `61` for `=`).
    #[error("invalid field selector: unescaped character in value: {}", u32::from(*character))]
    Unescaped {
        /// The character.
        character: char,
    },
}

impl FieldSelector {
    /// Parses `selector` (see the module docs for the grammar).
    ///
    /// # Errors
    /// [`FieldSelectorError`] naming the term or character that does not parse.
    pub fn parse(selector: &str) -> Result<Self, FieldSelectorError> {
        let mut requirements = Vec::new();
        for term in split_terms(selector) {
            if term.is_empty() {
                continue;
            }
            let (field, operator, value) =
                split_term(term).ok_or_else(|| FieldSelectorError::NoOperator {
                    selector: selector.to_owned(),
                    term: term.to_owned(),
                })?;
            requirements.push(Requirement {
                field: field.to_owned(),
                operator,
                value: unescape_value(value)?,
            });
        }
        Ok(Self { requirements })
    }

    /// Whether the selector has no requirement.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether an object matches: `field` returns the object's value of a field path as text
    /// (`None` when absent, which compares as `""`).
    pub fn matches(&self, field: impl Fn(&str) -> Option<String>) -> bool {
        self.requirements
            .iter()
            .all(|r| r.matches(field(&r.field).as_deref().unwrap_or_default()))
    }
}

impl fmt::Display for FieldSelector {
    /// The selector in the API's syntax (`field=value` / `field!=value`, values escaped).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            let op = match r.operator {
                Operator::Equals => "=",
                Operator::NotEquals => "!=",
            };
            let comma = if i == 0 { "" } else { "," };
            write!(f, "{comma}{}{op}{}", r.field, escape_value(&r.value))?;
        }
        Ok(())
    }
}

/// Splits at commas not preceded by a backslash; backslashes stay in the terms.
fn split_terms(selector: &str) -> Vec<&str> {
    let mut terms = Vec::new();
    let (mut start, mut escaped) = (0, false);
    for (i, c) in selector.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            ',' => {
                terms.push(&selector[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push(&selector[start..]);
    terms
}

/// Splits a term at its first operator (`!=` before `==` before `=` at each position).
fn split_term(term: &str) -> Option<(&str, Operator, &str)> {
    (0..term.len())
        .filter(|&i| term.is_char_boundary(i))
        .find_map(|i| {
            let rest = &term[i..];
            [
                ("!=", Operator::NotEquals),
                ("==", Operator::Equals),
                ("=", Operator::Equals),
            ]
            .into_iter()
            .find(|(op, _)| rest.starts_with(op))
            .map(|(op, operator)| (&term[..i], operator, &term[i + op.len()..]))
        })
}

/// apimachinery's `fields.UnescapeValue`.
fn unescape_value(value: &str) -> Result<String, FieldSelectorError> {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e @ ('\\' | ',' | '=')) => out.push(e),
                Some(other) => {
                    return Err(FieldSelectorError::InvalidEscape {
                        sequence: format!("\\{other}"),
                    });
                }
                None => {
                    return Err(FieldSelectorError::InvalidEscape {
                        sequence: "\\".to_owned(),
                    });
                }
            },
            ',' | '=' => return Err(FieldSelectorError::Unescaped { character: c }),
            c => out.push(c),
        }
    }
    Ok(out)
}

/// apimachinery's `fields.EscapeValue`: `\` `,` `=` escaped with a backslash.
pub fn escape_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, '\\' | ',' | '=') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(field: &str, operator: Operator, value: &str) -> Requirement {
        Requirement {
            field: field.into(),
            operator,
            value: value.into(),
        }
    }

    #[test]
    fn parses_as_apimachinery_does() {
        let parsed = FieldSelector::parse(r"spec.node=a,b==c\,d,x!=y\=z\\,").unwrap();
        assert_eq!(
            parsed.requirements,
            [
                req("spec.node", Operator::Equals, "a"),
                req("b", Operator::Equals, "c,d"),
                req("x", Operator::NotEquals, r"y=z\"),
            ]
        );
        assert!(FieldSelector::parse("").unwrap().is_empty());
        // The field is verbatim: the API server then refuses " b" as an unknown field.
        assert_eq!(
            FieldSelector::parse("a=1, b=2").unwrap().requirements[1].field,
            " b"
        );
        // `a==b` is `a` equals `b`; `a=b=c` has an unescaped `=` in the value.
        assert_eq!(
            FieldSelector::parse("a==b").unwrap().requirements,
            [req("a", Operator::Equals, "b")]
        );
        assert_eq!(
            FieldSelector::parse("a=b=c").unwrap_err().to_string(),
            "invalid field selector: unescaped character in value: 61"
        );
        assert_eq!(
            FieldSelector::parse("a=1,k").unwrap_err().to_string(),
            "invalid selector: 'a=1,k'; can't understand 'k'"
        );
        assert!(matches!(
            FieldSelector::parse(r"a=\x"),
            Err(FieldSelectorError::InvalidEscape { .. })
        ));
    }

    #[test]
    fn matches_missing_fields_as_empty() {
        let selector = FieldSelector::parse("a=1,b!=2,c=").unwrap();
        let get = |field: &str| (field == "a").then(|| "1".to_owned());
        assert!(selector.matches(get));
        assert!(!selector.matches(|_| None));
    }

    #[test]
    fn escapes_and_prints_round_trip() {
        assert_eq!(escape_value(r"a,b=c\"), r"a\,b\=c\\");
        let selector = FieldSelector::parse(r"k=a\,b,m!=c\=d").unwrap();
        assert_eq!(
            FieldSelector::parse(&selector.to_string()).unwrap(),
            selector
        );
    }
}
