//! `kubernetes.NamedFormat`: a named string format that validates strings.
//!
//! Mirrors `k8s.io/apiserver/pkg/cel/format.go` (the type; equal when the names are) and the
//! `ConstantFormats` of `k8s.io/apiserver/pkg/cel/library/format.go`, each validating as
//! apimachinery does (`apimachinery/pkg/api/validation/generic.go` `NameIsDNSLabel` and the
//! others, with `maskTrailingDash` for the `...Prefix` formats; `validation.IsQualifiedName`,
//! `IsValidLabelValue`) or as kube-openapi's `strfmt` does, with the same messages.

use cel::common::types::Type;
use cel::common::value::{StaticVal, Val};
use kbr_core::{dns, label};

use super::url::Url;
use crate::strfmt;

/// The CEL type of a format (`apiservercel.FormatType`).
pub(crate) static FORMAT_TYPE: Type = Type::new_unspecified_type("kubernetes.NamedFormat");

/// A format: its name (`format.named(..)`'s key is the CEL function's suffix, this is the
/// `Name` of Go's `Format`) and why a string is not of it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Format {
    pub(crate) name: &'static str,
    validate: fn(&str) -> Vec<String>,
}

impl PartialEq for Format {
    fn eq(&self, other: &Format) -> bool {
        self.name == other.name
    }
}

impl Format {
    /// The messages for a string that is not of this format; empty when it is.
    pub(crate) fn validate(&self, value: &str) -> Vec<String> {
        (self.validate)(value)
    }
}

/// `maskTrailingDash`: a trailing `-` (of a name longer than one character) and the
/// character before it become `a`, as a prefix for `generateName` may end with `-`.
fn mask_trailing_dash(name: &str) -> String {
    if name.len() > 1 && name.ends_with('-') {
        let cut = name.len() - 2;
        // Go cuts bytes; before a multi-byte character (which no DNS format allows anyway)
        // cut at the character's start instead.
        let boundary = (0..=cut)
            .rev()
            .find(|i| name.is_char_boundary(*i))
            .unwrap_or(0);
        format!("{}a", &name[..boundary])
    } else {
        name.to_owned()
    }
}

fn messages(result: Result<(), dns::InvalidName>) -> Vec<String> {
    result
        .err()
        .map(|e| e.messages().iter().map(|m| (*m).to_owned()).collect())
        .unwrap_or_default()
}

fn one_if(invalid: bool, message: &str) -> Vec<String> {
    if invalid {
        vec![message.to_owned()]
    } else {
        Vec::new()
    }
}

/// `ConstantFormats`: `(CEL name, format)`, as `format.<name>()` and `format.named(<name>)`
/// find them.
pub(crate) static FORMATS: &[(&str, Format)] = &[
    (
        "dns1123Label",
        Format {
            name: "DNS1123Label",
            validate: |s| messages(dns::dns1123_label(s)),
        },
    ),
    (
        "dns1123Subdomain",
        Format {
            name: "DNS1123Subdomain",
            validate: |s| messages(dns::dns1123_subdomain(s)),
        },
    ),
    (
        "dns1035Label",
        Format {
            name: "DNS1035Label",
            validate: |s| messages(dns::dns1035_label(s)),
        },
    ),
    (
        "qualifiedName",
        Format {
            name: "QualifiedName",
            validate: label::qualified_name,
        },
    ),
    (
        "dns1123LabelPrefix",
        Format {
            name: "DNS1123LabelPrefix",
            validate: |s| messages(dns::dns1123_label(&mask_trailing_dash(s))),
        },
    ),
    (
        "dns1123SubdomainPrefix",
        Format {
            name: "DNS1123SubdomainPrefix",
            validate: |s| messages(dns::dns1123_subdomain(&mask_trailing_dash(s))),
        },
    ),
    (
        "dns1035LabelPrefix",
        Format {
            name: "DNS1035LabelPrefix",
            validate: |s| messages(dns::dns1035_label(&mask_trailing_dash(s))),
        },
    ),
    (
        "labelValue",
        Format {
            name: "LabelValue",
            validate: label::label_value,
        },
    ),
    (
        "uri",
        Format {
            name: "URI",
            validate: |s| Url::parse_request_uri(s).err().into_iter().collect(),
        },
    ),
    (
        "uuid",
        Format {
            name: "uuid",
            validate: |s| one_if(!strfmt::is_uuid(s), "does not match the UUID format"),
        },
    ),
    (
        "byte",
        Format {
            name: "byte",
            validate: |s| one_if(!strfmt::is_base64(s), "invalid base64"),
        },
    ),
    (
        "date",
        Format {
            name: "date",
            validate: |s| one_if(!strfmt::is_date(s), "invalid date"),
        },
    ),
    (
        "datetime",
        Format {
            name: "datetime",
            validate: |s| one_if(!strfmt::is_date_time(s), "invalid datetime"),
        },
    ),
];

/// The format `format.named(name)` finds.
pub(crate) fn named(name: &str) -> Option<Format> {
    FORMATS
        .iter()
        .find(|(key, _)| *key == name)
        .map(|(_, format)| *format)
}

impl Val for Format {
    fn get_type(&self) -> &Type {
        &FORMAT_TYPE
    }

    fn cel_type() -> &'static Type {
        &FORMAT_TYPE
    }

    fn equals(&self, other: &dyn Val) -> bool {
        other.downcast_ref::<Format>() == Some(self)
    }

    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(*self)
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

impl StaticVal for Format {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_mask_a_trailing_dash() {
        assert_eq!(mask_trailing_dash("ab-"), "aa");
        assert_eq!(mask_trailing_dash("-"), "-");
        let prefix = named("dns1123LabelPrefix").expect("a format");
        assert!(prefix.validate("my-name-").is_empty());
        assert!(
            !named("dns1123Label")
                .expect("a format")
                .validate("my-name-")
                .is_empty()
        );
    }

    #[test]
    fn formats_validate_with_apimachinerys_messages() {
        let label = named("dns1123Label").expect("a format");
        assert_eq!(label.validate("a.b"), ["must not contain dots"]);
        assert_eq!(
            named("uuid").expect("a format").validate("x"),
            ["does not match the UUID format"]
        );
        assert_eq!(
            named("uri").expect("a format").validate("x"),
            [r#"parse "x": invalid URI for request"#]
        );
        assert!(named("nope").is_none());
    }
}
