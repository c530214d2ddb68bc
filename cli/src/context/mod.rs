//! What templates see: [`ProjectContext`] (`p`) and [`ResourceContext`] (`r`).
//!
//! Every value a template needs is computed here, from validated names, so templates stay
//! declarative: they never derive names, pick identifiers or decide how to dodge a clash. Where a
//! line's length depends on user-chosen names, [`Layout`] picks the shape rustfmt would give it,
//! so generated code is rustfmt-clean as written.

mod api_paths;
mod deploy_image;
mod layout;
mod resource;
mod webhook;

pub use api_paths::ApiPaths;
pub use deploy_image::DeployImageContext;
pub use layout::Layout;
pub use resource::ResourceContext;
pub use webhook::WebhookContext;

use crate::license::Headers;
use crate::multicluster::Provider;
use crate::names::rust::crate_name;
use crate::project::{Project, Runtime};

/// The kbr version, written into generated projects and PROJECT's `cliVersion`.
pub const KBR_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The project-wide values, `p` in every template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectContext {
    /// The package name, e.g. `knative-lite`.
    pub project_name: String,
    /// The library crate name, e.g. `knative_lite`.
    pub crate_name: String,
    /// The API domain, e.g. `knative.dev`.
    pub domain: String,
    /// Whether the manager watches only the namespaces in `WATCH_NAMESPACE` (`init --namespaced`).
    pub namespaced: bool,
    /// Whether the manager's replicas split the objects of every controller's kind between them
    /// (`init --sharding`).
    pub sharding: bool,
    /// Whether the controllers run on every member cluster a provider finds
    /// (`init --multicluster`).
    pub multicluster: bool,
    /// Whether the member clusters come from kubeconfig files in a directory
    /// (`init --multicluster=directory`).
    pub directory_provider: bool,
    /// Whether the member clusters come from labelled kubeconfig Secrets in the manager's
    /// namespace (`init --multicluster=kubeconfig-secrets`).
    pub kubeconfig_secrets_provider: bool,
    /// Whether the member clusters are the Cluster API `Cluster`s of the management cluster
    /// (`init --multicluster=capi`).
    pub capi_provider: bool,
    /// Whether the project has the autoupdate plugin (`.github/workflows/auto_update.yml`).
    pub autoupdate: bool,
    /// Whether the project has the grafana plugin (`grafana/`).
    pub grafana: bool,
    /// The leader-election Lease name: Kubebuilder's `<fnv32a(name) hex>.<domain>`.
    pub leader_election_id: String,
    /// The license header as `# ` comments and an empty line, or "".
    pub header_hash: String,
    /// The license header as `// ` comments and an empty line, or "".
    pub header_rust: String,
    /// The license header as an HTML comment and an empty line, or "".
    pub header_html: String,
    /// The body of the kbr-runtime dependency's inline table, e.g. `path = "../../runtime"`.
    pub runtime_dependency: String,
    /// The body of the kbr-testing dev-dependency's inline table: the crate beside a path
    /// runtime (`path = "../../testing"`), else the same version requirement as the runtime's.
    pub testing_dependency: String,
    /// The kbr version that generated the project.
    pub kbr_version: &'static str,
}

impl ProjectContext {
    /// The context of `project` with license `headers`.
    pub fn new(project: &Project, headers: Headers) -> Self {
        Self {
            project_name: project.project_name.clone(),
            crate_name: crate_name(&project.project_name),
            domain: project.domain.clone(),
            namespaced: project.namespaced,
            sharding: project.sharding,
            multicluster: project.multicluster.is_some(),
            directory_provider: project.multicluster == Some(Provider::Directory),
            kubeconfig_secrets_provider: project.multicluster == Some(Provider::KubeconfigSecrets),
            capi_provider: project.multicluster == Some(Provider::Capi),
            autoupdate: project.plugins.autoupdate.is_some(),
            grafana: project.plugins.grafana.is_some(),
            leader_election_id: format!(
                "{:x}.{}",
                fnv32a(project.project_name.as_bytes()),
                project.domain
            ),
            header_hash: headers.hash,
            header_rust: headers.rust,
            header_html: headers.html,
            runtime_dependency: runtime_dependency(&project.runtime),
            testing_dependency: testing_dependency(&project.runtime),
            kbr_version: KBR_VERSION,
        }
    }
}

/// 32-bit FNV-1a, the hash Kubebuilder's `hashFNV` uses for the leader-election ID.
pub fn fnv32a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |hash, &byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

/// The TOML inline-table body for the kbr-runtime dependency.
fn runtime_dependency(runtime: &Runtime) -> String {
    match runtime {
        Runtime::Path(path) => format!("path = {}", toml_string(path)),
        Runtime::Version(version) => format!("version = {}", toml_string(version)),
    }
}

/// The TOML inline-table body for the kbr-testing dev-dependency.
fn testing_dependency(runtime: &Runtime) -> String {
    match runtime.testing_path() {
        Some(path) => format!("path = {}", toml_string(&path)),
        None => runtime_dependency(runtime),
    }
}

/// `s` as a TOML string, quoted and escaped by the `toml` crate (a basic string, or a literal
/// one where that needs no escapes).
fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv() {
        // Reference values of FNV-1a 32.
        assert_eq!(fnv32a(b""), 0x811c_9dc5);
        assert_eq!(fnv32a(b"a"), 0xe40c_292c);
        assert_eq!(fnv32a(b"foobar"), 0xbf9c_f968);
    }

    #[test]
    fn toml_strings() {
        assert_eq!(toml_string("../../runtime"), "\"../../runtime\"");
        for value in [
            "../../runtime",
            r#"C:\a"b"#,
            "it's",
            "a\nb\tc",
            "bell\u{7}",
            "ü",
        ] {
            let line = format!("path = {}", toml_string(value));
            let table: toml::Table = line.parse().unwrap_or_else(|e| panic!("{line}: {e}"));
            assert_eq!(table["path"].as_str(), Some(value), "{line}");
        }
    }

    #[test]
    fn kbr_testing_sits_beside_a_path_runtime() {
        let path = |p: &str| Runtime::Path(p.to_owned()).testing_path();
        assert_eq!(path("../../runtime").as_deref(), Some("../../testing"));
        assert_eq!(
            path("/opt/kbr/runtime/").as_deref(),
            Some("/opt/kbr/testing")
        );
        assert_eq!(path("runtime").as_deref(), Some("testing"));
        assert_eq!(path("..").as_deref(), Some("../../testing"));
        assert_eq!(Runtime::Version("0.1.0".into()).testing_path(), None);
        assert_eq!(
            testing_dependency(&Runtime::Version("0.1.0".into())),
            "version = \"0.1.0\""
        );
    }
}
