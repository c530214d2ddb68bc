//! DNS names as Kubernetes checks them: DNS-1123 labels and subdomains, DNS-1035 labels.
//!
//! Mirrors `k8s.io/apimachinery/pkg/util/validation/validation.go` (`IsDNS1123Label`,
//! `IsDNS1123Subdomain`, `IsDNS1035Label`; the same functions live in
//! `pkg/api/validate/content/dns.go` since Kubernetes 1.34): the same rules, checked without
//! regexes, and the same messages in the same order, because the fake API server returns them
//! to users exactly as kube-apiserver does (`metadata.name: Invalid value: "Bad": a lowercase
//! RFC 1123 subdomain must consist of …`).
//!
//! ```
//! use kbr_core::dns;
//! assert!(dns::dns1123_subdomain("eventing.knative.dev").is_ok());
//! let error = dns::dns1035_label("1broker").unwrap_err();
//! assert!(error.to_string().starts_with("a DNS-1035 label must consist of"));
//! ```

/// The longest DNS-1123 label: 63 characters (apimachinery's `DNS1123LabelMaxLength`).
pub const DNS1123_LABEL_MAX_LENGTH: usize = 63;

/// The longest DNS-1123 subdomain: 253 characters (`DNS1123SubdomainMaxLength`).
pub const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;

/// The longest DNS-1035 label: 63 characters (`DNS1035LabelMaxLength`).
pub const DNS1035_LABEL_MAX_LENGTH: usize = 63;

/// apimachinery's `MaxLenError(63)`.
const LABEL_TOO_LONG: &str = "must be no more than 63 characters";

/// apimachinery's `MaxLenError(253)`.
const SUBDOMAIN_TOO_LONG: &str = "must be no more than 253 characters";

/// `IsDNS1123Label` on a value that is a valid subdomain but not a label.
const LABEL_HAS_DOTS: &str = "must not contain dots";

/// `RegexError(dns1123LabelErrMsg, dns1123LabelFmt, "my-name", "123-abc")`.
const LABEL_SYNTAX: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric \
                            characters or '-', and must start and end with an alphanumeric \
                            character (e.g. 'my-name',  or '123-abc', regex used for validation \
                            is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

/// `RegexError(dns1123SubdomainErrorMsg, dns1123SubdomainFmt, "example.com")`.
const SUBDOMAIN_SYNTAX: &str = "a lowercase RFC 1123 subdomain must consist of lower case \
                                alphanumeric characters, '-' or '.', and must start and end \
                                with an alphanumeric character (e.g. 'example.com', regex used \
                                for validation is \
                                '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// `RegexError(dns1035LabelErrMsg, dns1035LabelFmt, "my-name", "abc-123")`.
const DNS1035_SYNTAX: &str = "a DNS-1035 label must consist of lower case alphanumeric \
                              characters or '-', start with an alphabetic character, and end \
                              with an alphanumeric character (e.g. 'my-name',  or 'abc-123', \
                              regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/// Why a value is not a valid DNS name: apimachinery's messages, in its order (a length
/// message first, then a syntax message; one or both).
///
/// `Display` joins them with `,` as kube-apiserver does when it folds them into one field
/// error (apiextensions' `strings.Join(errs, ",")`); `ValidateObjectMeta` instead reports one
/// cause per message, see [`InvalidName::messages`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .messages.join(","))]
pub struct InvalidName {
    messages: Vec<&'static str>,
}

impl InvalidName {
    /// Each message on its own, e.g. `["must be no more than 63 characters", "a lowercase RFC
    /// 1123 label must consist of …"]`.
    pub fn messages(&self) -> &[&'static str] {
        &self.messages
    }
}

/// `Ok` when `messages` is empty.
fn verdict(messages: Vec<&'static str>) -> Result<(), InvalidName> {
    if messages.is_empty() {
        Ok(())
    } else {
        Err(InvalidName { messages })
    }
}

/// Whether `value` matches `[a-z0-9]([-a-z0-9]*[a-z0-9])?` (any length).
fn is_label_syntax(value: &str) -> bool {
    let bytes = value.as_bytes();
    let alphanumeric = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    bytes.first().is_some_and(alphanumeric)
        && bytes.last().is_some_and(alphanumeric)
        && bytes.iter().all(|b| alphanumeric(b) || *b == b'-')
}

/// Whether `value` matches `label(\.label)*` (any length).
fn is_subdomain_syntax(value: &str) -> bool {
    value.split('.').all(is_label_syntax)
}

/// Checks a DNS-1123 label: at most 63 characters of `[a-z0-9-]`, starting and ending with a
/// letter or digit (`IsDNS1123Label`; namespace names, project names).
///
/// # Errors
/// [`InvalidName`] with apimachinery's messages; a valid subdomain gets "must not contain
/// dots".
pub fn dns1123_label(value: &str) -> Result<(), InvalidName> {
    let mut messages = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        messages.push(LABEL_TOO_LONG);
    }
    if !is_label_syntax(value) {
        messages.push(if is_subdomain_syntax(value) {
            LABEL_HAS_DOTS
        } else {
            LABEL_SYNTAX
        });
    }
    verdict(messages)
}

/// Checks a DNS-1123 subdomain: at most 253 characters of dot-separated DNS-1123 label syntax
/// (`IsDNS1123Subdomain`; most object names, API groups, domains).
///
/// # Errors
/// [`InvalidName`] with apimachinery's messages.
pub fn dns1123_subdomain(value: &str) -> Result<(), InvalidName> {
    let mut messages = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        messages.push(SUBDOMAIN_TOO_LONG);
    }
    if !is_subdomain_syntax(value) {
        messages.push(SUBDOMAIN_SYNTAX);
    }
    verdict(messages)
}

/// Checks a DNS-1035 label: a DNS-1123 label that starts with a letter
/// (`[a-z]([-a-z0-9]*[a-z0-9])?`, at most 63 characters; `IsDNS1035Label`: Service names, CRD
/// plurals, singulars, short names, categories and version names).
///
/// # Errors
/// [`InvalidName`] with apimachinery's messages.
pub fn dns1035_label(value: &str) -> Result<(), InvalidName> {
    let mut messages = Vec::new();
    if value.len() > DNS1035_LABEL_MAX_LENGTH {
        messages.push(LABEL_TOO_LONG);
    }
    let starts_with_letter = value.as_bytes().first().is_some_and(u8::is_ascii_lowercase);
    if !starts_with_letter || !is_label_syntax(value) {
        messages.push(DNS1035_SYNTAX);
    }
    verdict(messages)
}

/// Checks a name that is one segment of a URL path (`content.IsPathSegmentName`, or
/// `IsPathSegmentPrefix` for a `prefix` such as `generateName`): not `.` or `..` (unless a
/// prefix), without `/` or `%`. kube-apiserver names the `metadata` of custom resources'
/// embedded resources so (`apiextensions-apiserver/pkg/apiserver/schema/objectmeta/
/// validation.go`).
///
/// # Errors
/// [`InvalidName`] with apimachinery's messages (`may not be '..'`, `may not contain '/'`).
pub fn path_segment_name(value: &str, prefix: bool) -> Result<(), InvalidName> {
    let mut messages = Vec::new();
    if !prefix {
        match value {
            "." => messages.push("may not be '.'"),
            ".." => messages.push("may not be '..'"),
            _ => {}
        }
    }
    if value.contains('/') {
        messages.push("may not contain '/'");
    }
    if value.contains('%') {
        messages.push("may not contain '%'");
    }
    verdict(messages)
}

#[cfg(test)]
mod tests;
