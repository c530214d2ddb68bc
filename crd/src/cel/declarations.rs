//! The names kube-apiserver's CEL environment for CRD rules declares (cel-go's checker
//! resolves every identifier and function against them).
//!
//! The functions are those of cel-go's standard library (`cel/library.go`, with
//! `OptionalTypes` at its latest version, 2: `first`, `last`, `optional.unwrap`,
//! `unwrapOpt`), `ext.Strings` version 2 (`ext/strings.go`), `ext.Lists` version 3
//! (`ext/lists.go`), `ext.Sets` (`ext/sets.go`), and the Kubernetes libraries of
//! `k8s.io/apiserver/pkg/cel/library` that `environment/base.go` enables, with the names of
//! their `*LibraryDecls`. Macros (`has`, `all`, `exists`, `map`, `filter`, `sortBy`, the
//! two-variable comprehensions, ...) are expanded by the parser and need no entry.

/// The variables of a rule (`compilation.go`'s `ScopedVarName` and `OldScopedVarName`).
pub(crate) const VARIABLES: &[&str] = &["self", "oldSelf"];

/// The type names an expression may mention, e.g. `type(self) == string` (the libraries'
/// types, such as `kubernetes.Quantity`, are not among them).
pub(crate) const TYPES: &[&str] = &[
    "bool",
    "bytes",
    "double",
    "dyn",
    "int",
    "list",
    "map",
    "null_type",
    "string",
    "type",
    "uint",
    "optional_type",
    "google.protobuf.Duration",
    "google.protobuf.Timestamp",
];

/// Every function, global (qualified ones with their namespace) or member.
pub(crate) const FUNCTIONS: &[&str] = &[
    // cel-go standard library.
    "size",
    "int",
    "uint",
    "double",
    "bool",
    "string",
    "bytes",
    "dyn",
    "type",
    "duration",
    "timestamp",
    "matches",
    "contains",
    "startsWith",
    "endsWith",
    "getFullYear",
    "getMonth",
    "getDayOfYear",
    "getDayOfMonth",
    "getDate",
    "getDayOfWeek",
    "getHours",
    "getMinutes",
    "getSeconds",
    "getMilliseconds",
    // Optional types (version 2).
    "optional.of",
    "optional.ofNonZeroValue",
    "optional.none",
    "value",
    "hasValue",
    "or",
    "orValue",
    "first",
    "last",
    "optional.unwrap",
    "unwrapOpt",
    // ext.Strings(StringsVersion(2)).
    "charAt",
    "indexOf",
    "lastIndexOf",
    "lowerAscii",
    "replace",
    "split",
    "substring",
    "trim",
    "upperAscii",
    "format",
    "strings.quote",
    "join",
    // ext.Lists(ListsVersion(3)).
    "slice",
    "flatten",
    "distinct",
    "reverse",
    "sort",
    "lists.range",
    // ext.Sets().
    "sets.contains",
    "sets.equivalent",
    "sets.intersects",
    // library.URLs.
    "url",
    "getScheme",
    "getHost",
    "getHostname",
    "getPort",
    "getEscapedPath",
    "getQuery",
    "isURL",
    // library.Regex.
    "find",
    "findAll",
    // library.Lists.
    "isSorted",
    "sum",
    "max",
    "min",
    // library.Quantity.
    "quantity",
    "isQuantity",
    "sign",
    "isGreaterThan",
    "isLessThan",
    "compareTo",
    "asApproximateFloat",
    "asInteger",
    "isInteger",
    "add",
    "sub",
    // library.IP and library.CIDR.
    "ip",
    "family",
    "ip.isCanonical",
    "isUnspecified",
    "isLoopback",
    "isLinkLocalMulticast",
    "isLinkLocalUnicast",
    "isGlobalUnicast",
    "isIP",
    "cidr",
    "containsIP",
    "containsCIDR",
    "prefixLength",
    "masked",
    "isCIDR",
    // library.Format.
    "validate",
    "format.named",
    "format.dns1123Label",
    "format.dns1123Subdomain",
    "format.dns1035Label",
    "format.qualifiedName",
    "format.dns1123LabelPrefix",
    "format.dns1123SubdomainPrefix",
    "format.dns1035LabelPrefix",
    "format.labelValue",
    "format.uri",
    "format.uuid",
    "format.byte",
    "format.date",
    "format.datetime",
    // library.SemverLib(SemverVersion(1)).
    "semver",
    "isSemver",
    "major",
    "minor",
    "patch",
];

/// Functions whose result is never a bool.
pub(crate) const NOT_BOOL_FUNCTIONS: &[&str] = &[
    "size",
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "duration",
    "timestamp",
    "charAt",
    "indexOf",
    "lastIndexOf",
    "lowerAscii",
    "replace",
    "split",
    "substring",
    "trim",
    "upperAscii",
    "format",
    "strings.quote",
    "join",
    "lists.range",
    "url",
    "getScheme",
    "getHost",
    "getHostname",
    "getPort",
    "getEscapedPath",
    "getQuery",
    "find",
    "findAll",
    "quantity",
    "sign",
    "compareTo",
    "asApproximateFloat",
    "asInteger",
    "add",
    "sub",
    "ip",
    "family",
    "cidr",
    "prefixLength",
    "masked",
    "validate",
    "format.named",
    "semver",
    "major",
    "minor",
    "patch",
];

#[cfg(test)]
mod tests {
    use super::{FUNCTIONS, NOT_BOOL_FUNCTIONS};

    #[test]
    fn every_function_that_is_not_bool_is_declared() {
        for name in NOT_BOOL_FUNCTIONS {
            assert!(FUNCTIONS.contains(name), "{name}");
        }
    }
}
