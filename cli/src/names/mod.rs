//! Validation of every user-supplied name, before anything is planned or written.
//!
//! Mirrors Kubebuilder's checks (`pkg/model/resource/gvk.go`, the kustomize plugin's project
//! name check) and adds the ones Rust needs: names become crates, modules and types, so they
//! must also be valid, warning-free Rust identifiers. Every error names the bad value and the
//! flag that fixes it.

pub mod resource;
pub mod rust;

use heck::{ToSnakeCase, ToUpperCamelCase};
use kbr_core::dns::{self, DNS1123_LABEL_MAX_LENGTH, DNS1123_SUBDOMAIN_MAX_LENGTH};
use kbr_core::version::KubeVersion;

/// A name that failed validation. `Display` is one line naming the value and the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// `--domain` is not a lower-case DNS-1123 subdomain.
    #[error(
        "invalid domain {value:?}: a domain must be a lower-case DNS-1123 subdomain (dot-separated labels of a-z, 0-9 and '-', each starting and ending with a letter or digit); pass e.g. --domain example.com"
    )]
    Domain {
        /// The rejected value.
        value: String,
    },
    /// The project name (flag or directory name) is not a DNS-1123 label starting with a letter.
    #[error(
        "invalid project name {value:?}{origin}: a project name must be a DNS-1123 label that starts with a letter (at most 63 characters of a-z, 0-9 and '-', ending with a letter or digit); pass e.g. --project-name {suggestion}"
    )]
    ProjectName {
        /// The rejected value.
        value: String,
        /// ` (the directory name)` when the name was not given with `--project-name`, else ``.
        origin: &'static str,
        /// A valid name derived from the value.
        suggestion: String,
    },
    /// The project name's crate clashes with a crate or binary the generated project uses.
    #[error(
        "invalid project name {value:?}{origin}: the crate `{crate_name}` would clash with {clash} in the generated project; pass another --project-name, e.g. --project-name {value}-operator"
    )]
    ProjectNameClash {
        /// The rejected value.
        value: String,
        /// ` (the directory name)` when the name was not given with `--project-name`, else ``.
        origin: &'static str,
        /// The crate name derived from the value.
        crate_name: String,
        /// What it clashes with, e.g. "the dependency `serde`".
        clash: &'static str,
    },
    /// `--group` has upper-case letters.
    #[error(
        "invalid group {value:?}: a group must be lower case (a DNS-1123 subdomain); pass --group {suggestion}"
    )]
    GroupCase {
        /// The rejected value.
        value: String,
        /// The lower-cased value.
        suggestion: String,
    },
    /// `--group` already ends with the project domain.
    #[error(
        "invalid group {value:?}: the group must not include the project domain {domain:?} (kbr appends it: {value}.{domain}); pass --group {suggestion}"
    )]
    GroupIncludesDomain {
        /// The rejected value.
        value: String,
        /// The project domain.
        domain: String,
        /// The value without the domain.
        suggestion: String,
    },
    /// `--group` is not a DNS-1123 subdomain, or does not start with a letter.
    #[error(
        "invalid group {value:?}: a group must be a lower-case DNS-1123 subdomain that starts with a letter (dot-separated labels of a-z, 0-9 and '-'; kbr uses it as a Rust module name); pass e.g. --group {example}"
    )]
    Group {
        /// The rejected value.
        value: String,
        /// An example group.
        example: &'static str,
    },
    /// `<group>.<domain>` is longer than a DNS-1123 subdomain may be.
    #[error(
        "invalid group {value:?}: the qualified group {qualified:?} has {len} characters, more than the 253 of a DNS-1123 subdomain; pass a shorter --group"
    )]
    QualifiedGroupTooLong {
        /// The rejected value.
        value: String,
        /// `<group>.<domain>`.
        qualified: String,
        /// Its length.
        len: usize,
    },
    /// `--version` is not `v<N>`, `v<N>alpha<M>` or `v<N>beta<M>`.
    #[error(
        "invalid version {value:?}: a version must look like v1, v1alpha1 or v2beta3 (v<major>, optionally followed by alpha<n> or beta<n>, numbers without leading zeros); pass e.g. --version v1alpha1"
    )]
    Version {
        /// The rejected value.
        value: String,
    },
    /// `--kind` is not PascalCase.
    #[error(
        "invalid kind {value:?}: a kind must be PascalCase (an upper-case letter followed by letters and digits); pass e.g. --kind {suggestion}"
    )]
    KindCase {
        /// The rejected value.
        value: String,
        /// A PascalCase name derived from the value.
        suggestion: String,
    },
    /// `--kind` is longer than kbr-core's [`KIND_MAX_LENGTH`](kbr_core::kind::KIND_MAX_LENGTH).
    #[error(
        "invalid kind {value:?}: a kind must be at most {max} characters (its list kind, {value}List, must be a DNS-1035 label when lower-cased), it has {len}; pass a shorter --kind",
        max = kbr_core::kind::KIND_MAX_LENGTH
    )]
    KindTooLong {
        /// The rejected value.
        value: String,
        /// Its length.
        len: usize,
    },
    /// `--kind` is a name Rust reserves for types (`Self`).
    #[error(
        "invalid kind {value:?}: `{value}` is a Rust keyword and cannot name a type; pass another --kind, e.g. --kind {value}Resource"
    )]
    KindReserved {
        /// The rejected value.
        value: String,
    },
    /// `--plural` is not a lower-case DNS-1035 label.
    #[error(
        "invalid plural {value:?}: a plural must be a lower-case DNS-1035 label (at most 63 characters of a-z, 0-9 and '-', starting with a letter and ending with a letter or digit); pass e.g. --plural {suggestion}"
    )]
    Plural {
        /// The rejected value.
        value: String,
        /// The default plural of the kind.
        suggestion: String,
    },
}

/// Validates `--domain`: a lower-case DNS-1123 subdomain.
pub fn validate_domain(domain: &str) -> Result<(), NameError> {
    if dns::dns1123_subdomain(domain).is_ok() {
        Ok(())
    } else {
        Err(NameError::Domain {
            value: domain.to_owned(),
        })
    }
}

/// Crate names a generated project cannot take: its dependencies, the built-in crates and the
/// `manifests` binary (a package binary of the same name would clash with it).
const CLASHING_CRATES: &[(&str, &str)] = &[
    ("kbr_runtime", "the dependency `kbr-runtime`"),
    ("kbr_derive", "the crate `kbr-derive`"),
    ("kbr", "the `kbr` CLI crate"),
    ("kube", "the crate `kube`"),
    ("k8s_openapi", "the crate `k8s-openapi`"),
    ("anyhow", "the dependency `anyhow`"),
    ("clap", "the dependency `clap`"),
    ("schemars", "the dependency `schemars`"),
    ("serde", "the dependency `serde`"),
    ("serde_json", "the dependency `serde_json`"),
    ("tokio", "the dependency `tokio`"),
    ("tracing", "the dependency `tracing`"),
    ("std", "the built-in crate `std`"),
    ("core", "the built-in crate `core`"),
    ("alloc", "the built-in crate `alloc`"),
    ("test", "the built-in crate `test`"),
    ("proc_macro", "the built-in crate `proc_macro`"),
    ("manifests", "the generated `manifests` binary"),
];

/// Validates a project name and returns its crate name (`-` -> `_`).
///
/// The name must be a DNS-1123 label (Kubebuilder's rule: it prefixes every object in
/// `config/default`), start with a letter (a crate name), and not clash with a crate the
/// generated project uses. `from_dir` says the name came from the directory, which the error
/// then mentions.
pub fn validate_project_name(name: &str, from_dir: bool) -> Result<String, NameError> {
    let origin = if from_dir {
        " (the directory name)"
    } else {
        ""
    };
    let starts_with_letter = name.as_bytes().first().is_some_and(u8::is_ascii_lowercase);
    if dns::dns1123_label(name).is_err() || !starts_with_letter {
        return Err(NameError::ProjectName {
            value: name.to_owned(),
            origin,
            suggestion: suggest_project_name(name),
        });
    }
    let crate_name = rust::crate_name(name);
    if let Some((_, clash)) = CLASHING_CRATES.iter().find(|(c, _)| *c == crate_name) {
        return Err(NameError::ProjectNameClash {
            value: name.to_owned(),
            origin,
            crate_name,
            clash,
        });
    }
    if rust::is_keyword(&crate_name) {
        return Err(NameError::ProjectNameClash {
            value: name.to_owned(),
            origin,
            crate_name,
            clash: "a Rust keyword",
        });
    }
    Ok(crate_name)
}

/// A DNS-1123 label starting with a letter, derived from `name` for error hints.
fn suggest_project_name(name: &str) -> String {
    let kebab: String = name
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let trimmed = kebab
        .split('-')
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    let trimmed = trimmed.trim_start_matches(|c: char| c.is_ascii_digit() || c == '-');
    let short: String = trimmed.chars().take(DNS1123_LABEL_MAX_LENGTH).collect();
    let short = short.trim_end_matches('-');
    if short.is_empty() {
        "my-operator".to_owned()
    } else {
        short.to_owned()
    }
}

/// Validates `--group` against the project `domain` and returns the qualified group
/// (`<group>.<domain>`).
pub fn validate_group(group: &str, domain: &str) -> Result<String, NameError> {
    let lower = group.to_lowercase();
    if lower != group && dns::dns1123_subdomain(&lower).is_ok() {
        return Err(NameError::GroupCase {
            value: group.to_owned(),
            suggestion: strip_domain(&lower, domain).unwrap_or(&lower).to_owned(),
        });
    }
    if let Some(prefix) = strip_domain(group, domain) {
        return Err(NameError::GroupIncludesDomain {
            value: group.to_owned(),
            domain: domain.to_owned(),
            suggestion: if prefix.is_empty() {
                "eventing"
            } else {
                prefix
            }
            .to_owned(),
        });
    }
    let starts_with_letter = group.as_bytes().first().is_some_and(u8::is_ascii_lowercase);
    if dns::dns1123_subdomain(group).is_err() || !starts_with_letter {
        return Err(NameError::Group {
            value: group.to_owned(),
            example: "eventing",
        });
    }
    let qualified = format!("{group}.{domain}");
    if qualified.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        return Err(NameError::QualifiedGroupTooLong {
            value: group.to_owned(),
            len: qualified.len(),
            qualified,
        });
    }
    Ok(qualified)
}

/// `group` without a trailing `.<domain>` (or `""` when `group == domain`), if it has one.
fn strip_domain<'a>(group: &'a str, domain: &str) -> Option<&'a str> {
    if group == domain {
        return Some("");
    }
    group
        .strip_suffix(domain)
        .and_then(|prefix| prefix.strip_suffix('.'))
}

/// Validates `--version`: a Kubernetes API version in its canonical spelling, `v<N>`,
/// `v<N>alpha<M>` or `v<N>beta<M>` with numbers from 1 and no leading zeros
/// ([`KubeVersion::parse_canonical`]).
pub fn validate_version(version: &str) -> Result<(), NameError> {
    match KubeVersion::parse_canonical(version) {
        Some(_) => Ok(()),
        None => Err(NameError::Version {
            value: version.to_owned(),
        }),
    }
}

/// Validates `--kind`: kbr-core's Kind grammar ([`kbr_core::kind::validate`]: PascalCase
/// `^[A-Z][A-Za-z0-9]*$`, at most 59 characters so that its list kind is a DNS-1035 label), and
/// not a Rust keyword (`Self`), since the kind names a Rust type.
pub fn validate_kind(kind: &str) -> Result<(), NameError> {
    match kbr_core::kind::validate(kind) {
        Err(error) if error.is_case() => {
            return Err(NameError::KindCase {
                value: kind.to_owned(),
                suggestion: suggest_kind(kind),
            });
        }
        Err(_) => {
            return Err(NameError::KindTooLong {
                value: kind.to_owned(),
                len: kind.len(),
            });
        }
        Ok(()) => {}
    }
    if rust::is_keyword(kind) {
        return Err(NameError::KindReserved {
            value: kind.to_owned(),
        });
    }
    Ok(())
}

/// A valid kind derived from `kind` for error hints: its UpperCamelCase, else `Broker`.
fn suggest_kind(kind: &str) -> String {
    let suggestion = kind.to_upper_camel_case();
    if kbr_core::kind::validate(&suggestion).is_ok() {
        suggestion
    } else {
        "Broker".to_owned()
    }
}

/// Validates `--plural`: a lower-case DNS-1035 label, as Kubebuilder (`resource.Validate`) and
/// the API server (a CRD's `spec.names.plural`) require. `kind` provides the hint.
pub fn validate_plural(plural: &str, kind: &str) -> Result<(), NameError> {
    if dns::dns1035_label(plural).is_ok() {
        Ok(())
    } else {
        Err(NameError::Plural {
            value: plural.to_owned(),
            suggestion: kbr_core::plural::resource_plural(kind),
        })
    }
}

/// The snake_case stem of a kind, e.g. `HTTPRoute` -> `http_route` (heck's rules).
pub fn kind_snake(kind: &str) -> String {
    kind.to_snake_case()
}

#[cfg(test)]
mod tests;
