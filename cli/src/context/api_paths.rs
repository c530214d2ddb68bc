//! [`ApiPaths`]: how the API type file names items a kind could shadow.

use super::layout::MAX_WIDTH;

/// How the API type file names items that a kind could shadow.
///
/// The derive defines the root type `<Kind>` in the kind's module, so a kind named like a name
/// the file uses (`Option`, `String`, `Vec`, an imported `Serialize` …) would shadow it or clash
/// with its import. For those kinds the file spells the item by its full path instead; for all
/// others it keeps the plain, idiomatic name and its `use`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiPaths {
    /// `CustomResource` or `kbr_runtime::CustomResource`.
    pub custom_resource: &'static str,
    /// `JsonSchema` or `schemars::JsonSchema`.
    pub json_schema: &'static str,
    /// `Serialize` or `serde::Serialize`.
    pub serialize: &'static str,
    /// `Deserialize` or `serde::Deserialize`.
    pub deserialize: &'static str,
    /// `Option` or `::std::option::Option`.
    pub option: &'static str,
    /// `String` or `::std::string::String`.
    pub string: &'static str,
    /// `Vec` or `::std::vec::Vec`.
    pub vec: &'static str,
    /// The derives of the Spec type, in order.
    pub spec_derives: Vec<&'static str>,
    /// The Spec's `#[derive(...)]` fits on one line (rustfmt's horizontal layout).
    pub spec_derive_one_line: bool,
    /// The Spec's derives fit on one indented line inside `#[derive(\n ... ,\n)]` (rustfmt's
    /// compressed layout); when neither this nor `spec_derive_one_line`, one derive per line.
    pub spec_derive_compressed: bool,
    /// Whether to `use kbr_runtime::CustomResource`.
    pub use_custom_resource: bool,
    /// Whether to `use schemars::JsonSchema`.
    pub use_json_schema: bool,
    /// Whether to `use serde::Serialize`.
    pub use_serialize: bool,
    /// Whether to `use serde::Deserialize`.
    pub use_deserialize: bool,
}

impl ApiPaths {
    /// The paths for the API file of `kind`.
    pub fn for_kind(kind: &str) -> Self {
        /// `plain` unless the kind is named `plain`, then `qualified`.
        fn pick(kind: &str, plain: &'static str, qualified: &'static str) -> &'static str {
            if kind == plain { qualified } else { plain }
        }
        let custom_resource = pick(kind, "CustomResource", "kbr_runtime::CustomResource");
        let json_schema = pick(kind, "JsonSchema", "schemars::JsonSchema");
        let serialize = pick(kind, "Serialize", "serde::Serialize");
        let deserialize = pick(kind, "Deserialize", "serde::Deserialize");
        let spec_derives = vec![
            custom_resource,
            "Clone",
            "Debug",
            "Default",
            "PartialEq",
            serialize,
            deserialize,
            json_schema,
        ];
        // rustfmt's layouts for an attribute list at column 0 with max_width 100.
        let list_len = spec_derives.iter().map(|d| d.len() + 2).sum::<usize>() - 2;
        let spec_derive_one_line = "#[derive()]".len() + list_len <= MAX_WIDTH;
        // Four spaces of indentation, the list and a trailing comma.
        let compressed_len = "    ".len() + list_len + ",".len();
        let spec_derive_compressed = !spec_derive_one_line && compressed_len <= MAX_WIDTH;
        Self {
            custom_resource,
            json_schema,
            serialize,
            deserialize,
            spec_derives,
            spec_derive_one_line,
            spec_derive_compressed,
            option: pick(kind, "Option", "::std::option::Option"),
            string: pick(kind, "String", "::std::string::String"),
            vec: pick(kind, "Vec", "::std::vec::Vec"),
            use_custom_resource: kind != "CustomResource",
            use_json_schema: kind != "JsonSchema",
            use_serialize: kind != "Serialize",
            use_deserialize: kind != "Deserialize",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_paths() {
        let plain = ApiPaths::for_kind("Broker");
        assert_eq!(plain.option, "Option");
        assert!(plain.use_serialize && plain.use_custom_resource);
        let option = ApiPaths::for_kind("Option");
        assert_eq!(option.option, "::std::option::Option");
        assert_eq!(option.vec, "Vec");
        let serialize = ApiPaths::for_kind("Serialize");
        assert_eq!(serialize.serialize, "serde::Serialize");
        assert!(!serialize.use_serialize && serialize.use_deserialize);
        assert!(plain.spec_derive_one_line);
        assert!(serialize.spec_derive_compressed);
        let custom = ApiPaths::for_kind("CustomResource");
        assert!(!custom.spec_derive_one_line && !custom.spec_derive_compressed);
    }
}
