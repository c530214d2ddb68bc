//! Label keys (Kubernetes' "qualified names") and label values, as Kubernetes checks them.
//!
//! Mirrors `k8s.io/apimachinery/pkg/api/validate/content/kube.go` (`IsLabelKey`, the former
//! `IsQualifiedName`, and `IsLabelValue`): the same rules and the same messages in the same
//! order, because the fake API server returns them as kube-apiserver does for labels,
//! annotation keys and finalizer names (`metadata.labels: Invalid value: "bad key!": name part
//! must consist of …`).
//!
//! ```
//! use kbr_core::labels;
//! assert!(labels::label_key("example.com/my-key").is_empty());
//! assert_eq!(labels::label_key("/x"), ["prefix part must be non-empty"]);
//! assert!(labels::label_value("").is_empty());
//! ```

use crate::dns;

/// The longest name part of a label key and the longest label value (`labelKeyMaxLength`,
/// `LabelValueMaxLength`).
pub const LABEL_MAX_LENGTH: usize = 63;

/// `RegexError(labelKeyErrMsg, labelKeyFmt, "MyName", "my.name", "123-abc")`.
const KEY_SYNTAX: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must \
                          start and end with an alphanumeric character (e.g. 'MyName',  or \
                          'my.name',  or '123-abc', regex used for validation is \
                          '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/// `RegexError(labelValueErrMsg, labelValueFmt, "MyValue", "my_value", "12345")`.
const VALUE_SYNTAX: &str = "a valid label must be an empty string or consist of alphanumeric \
                            characters, '-', '_' or '.', and must start and end with an \
                            alphanumeric character (e.g. 'MyValue',  or 'my_value',  or \
                            '12345', regex used for validation is \
                            '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/// Whether `value` matches `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
fn is_key_name(value: &str) -> bool {
    let bytes = value.as_bytes();
    let end = |b: &u8| b.is_ascii_alphanumeric();
    bytes.first().is_some_and(end)
        && bytes.last().is_some_and(end)
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// The messages for a label key (also an annotation key, lower-cased, and a finalizer name):
/// an optional DNS-1123 subdomain prefix and `/`, then a name of at most 63 characters.
/// Empty when valid.
pub fn label_key(value: &str) -> Vec<String> {
    let mut messages = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                messages.push("prefix part must be non-empty".to_owned());
            } else if let Err(invalid) = dns::dns1123_subdomain(prefix) {
                messages.extend(
                    invalid
                        .messages()
                        .iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            return vec![format!(
                "a valid label key {KEY_SYNTAX} with an optional DNS subdomain prefix and '/' \
                 (e.g. 'example.com/MyName')"
            )];
        }
    };
    if name.is_empty() {
        messages.push("name part must be non-empty".to_owned());
    } else if name.len() > LABEL_MAX_LENGTH {
        messages.push(format!(
            "name part must be no more than {LABEL_MAX_LENGTH} characters"
        ));
    }
    if !is_key_name(name) {
        messages.push(format!("name part {KEY_SYNTAX}"));
    }
    messages
}

/// The messages for a label value: empty, or at most 63 characters of the label key name's
/// syntax. Empty when valid.
pub fn label_value(value: &str) -> Vec<String> {
    let mut messages = Vec::new();
    if value.len() > LABEL_MAX_LENGTH {
        messages.push(format!(
            "must be no more than {LABEL_MAX_LENGTH} characters"
        ));
    }
    if !value.is_empty() && !is_key_name(value) {
        messages.push(VALUE_SYNTAX.to_owned());
    }
    messages
}

#[cfg(test)]
mod tests {
    use super::{label_key, label_value};

    #[test]
    fn keys_and_values_as_apimachinery_words_them() {
        assert!(label_key("app").is_empty());
        assert!(label_key("app.kubernetes.io/name").is_empty());
        assert_eq!(
            label_key("bad key!"),
            [
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must start \
              and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or \
              '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            ]
        );
        assert_eq!(label_key("a/b/c").len(), 1);
        assert!(label_key("a/b/c")[0].starts_with("a valid label key must consist"));
        assert_eq!(
            label_key("Bad_/x")[0],
            "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric \
             characters, '-' or '.', and must start and end with an alphanumeric character \
             (e.g. 'example.com', regex used for validation is \
             '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        );
        assert_eq!(label_key("x/").len(), 2, "empty name part, and no match");
        assert!(label_value("my_value").is_empty());
        assert_eq!(
            label_value(&"a".repeat(64)),
            ["must be no more than 63 characters"]
        );
        assert!(label_value("bad value!")[0].starts_with("a valid label must be an empty string"));
    }
}
