//! The CEL value types of the Kubernetes libraries (`k8s.io/apiserver/pkg/cel/*.go`), and the
//! Go parsers they rest on, ported with their error texts.

pub(crate) mod cidr;
pub(crate) mod format;
pub(crate) mod go_regex;
pub(crate) mod golang;
pub(crate) mod ip;
pub(crate) mod quantity;
pub(crate) mod semver;
pub(crate) mod url;
