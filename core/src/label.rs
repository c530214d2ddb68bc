//! Label keys (qualified names) and label values as Kubernetes checks them.
//!
//! Mirrors `k8s.io/apimachinery/pkg/api/validate/content/kube.go` (`IsLabelKey`, which
//! `validation.IsQualifiedName` is since Kubernetes 1.34, and `IsLabelValue`) with its
//! messages in its order; the length messages are `content.MaxLenError`'s ("bytes"), the
//! syntax ones `content.RegexError`'s.
//!
//! ```
//! use kbr_core::label;
//! assert!(label::qualified_name("example.com/MyName").is_empty());
//! assert_eq!(label::label_value(&"a".repeat(64)), ["must be no more than 63 bytes"]);
//! ```

use crate::dns;

/// The longest name part of a label key, and the longest label value.
pub const LABEL_MAX_LENGTH: usize = 63;

/// `RegexError(labelKeyErrMsg, labelKeyFmt, "MyName", "my.name", "123-abc")`.
const LABEL_KEY_SYNTAX: &str = "must consist of alphanumeric characters, '-', '_' or '.', and \
                                must start and end with an alphanumeric character (e.g. \
                                'MyName',  or 'my.name',  or '123-abc', regex used for \
                                validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/// `RegexError(labelValueErrMsg, labelValueFmt, "MyValue", "my_value", "12345")`.
const LABEL_VALUE_SYNTAX: &str = "a valid label must be an empty string or consist of \
                                  alphanumeric characters, '-', '_' or '.', and must start and \
                                  end with an alphanumeric character (e.g. 'MyValue',  or \
                                  'my_value',  or '12345', regex used for validation is \
                                  '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/// Whether `value` matches `labelKeyFmt` (one character or more).
fn is_label_key_syntax(value: &str) -> bool {
    let bytes = value.as_bytes();
    let alphanumeric = |b: &u8| b.is_ascii_alphanumeric();
    bytes.first().is_some_and(alphanumeric)
        && bytes.last().is_some_and(alphanumeric)
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// Why `value` is not a qualified name (`IsLabelKey`): an optional DNS-1123 subdomain
/// prefix and `/`, then a name of at most 63 characters of `[-A-Za-z0-9_.]` that starts and
/// ends with a letter or digit. Empty when it is one.
pub fn qualified_name(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts[..] {
        [name] => name,
        [prefix, name] => {
            if prefix.is_empty() {
                errors.push("prefix part must be non-empty".to_owned());
            } else {
                if prefix.len() > dns::DNS1123_SUBDOMAIN_MAX_LENGTH {
                    errors.push(format!(
                        "prefix part must be no more than {} bytes",
                        dns::DNS1123_SUBDOMAIN_MAX_LENGTH
                    ));
                }
                if let Err(invalid) = dns::dns1123_subdomain(prefix) {
                    errors.extend(
                        invalid
                            .messages()
                            .iter()
                            .filter(|m| !m.starts_with("must be no more than"))
                            .map(|m| format!("prefix part {m}")),
                    );
                }
            }
            name
        }
        _ => {
            return vec![format!(
                "a valid label key {LABEL_KEY_SYNTAX} with an optional DNS subdomain prefix and \
                 '/' (e.g. 'example.com/MyName')"
            )];
        }
    };
    if name.is_empty() {
        errors.push("name part must be non-empty".to_owned());
    } else if name.len() > LABEL_MAX_LENGTH {
        errors.push(format!(
            "name part must be no more than {LABEL_MAX_LENGTH} bytes"
        ));
    }
    if !is_label_key_syntax(name) {
        errors.push(format!("name part {LABEL_KEY_SYNTAX}"));
    }
    errors
}

/// Why `value` is not a label value (`IsLabelValue`): empty, or at most 63 characters of
/// label key syntax. Empty when it is one.
pub fn label_value(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > LABEL_MAX_LENGTH {
        errors.push(format!("must be no more than {LABEL_MAX_LENGTH} bytes"));
    }
    if !value.is_empty() && !is_label_key_syntax(value) {
        errors.push(LABEL_VALUE_SYNTAX.to_owned());
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_names() {
        assert!(qualified_name("MyName").is_empty());
        assert!(qualified_name("my.name").is_empty());
        assert!(qualified_name("example.com/my_name-1").is_empty());
        assert_eq!(qualified_name("a/b/c").len(), 1);
        assert!(qualified_name("a/b/c")[0].starts_with("a valid label key must consist of"));
        assert_eq!(
            qualified_name("/x"),
            ["prefix part must be non-empty".to_owned()]
        );
        assert_eq!(
            qualified_name(""),
            [
                "name part must be non-empty".to_owned(),
                format!("name part {LABEL_KEY_SYNTAX}")
            ]
        );
        let prefix = qualified_name("Bad_Prefix/x");
        assert_eq!(prefix.len(), 1);
        assert!(prefix[0].starts_with("prefix part a lowercase RFC 1123 subdomain"));
        assert_eq!(
            qualified_name(&"a".repeat(64)),
            ["name part must be no more than 63 bytes".to_owned()]
        );
        assert_eq!(
            qualified_name("-a"),
            [format!("name part {LABEL_KEY_SYNTAX}")]
        );
    }

    #[test]
    fn label_values() {
        assert!(label_value("").is_empty());
        assert!(label_value("my_value").is_empty());
        assert_eq!(label_value("a b"), [LABEL_VALUE_SYNTAX.to_owned()]);
    }
}
