//! [`ResourceContext`]: the values of one group/version/kind, `r` in `create api` templates:
//! its [`ResourceNames`] and how the templates lay them out.

use super::layout::Names;
use super::{ApiPaths, Layout};
use crate::builtin;
use crate::names::resource::ResourceNames;

/// The values of one group/version/kind, `r` in `create api` templates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceContext {
    /// `--group`, e.g. `eventing`.
    pub group: String,
    /// The API group: `<group>.<domain>`, e.g. `eventing.knative.dev`; for a built-in kind as
    /// the API server names it (`apps`, `networking.k8s.io`, empty for `core`).
    pub qualified_group: String,
    /// The group in prose, e.g. "the API group `eventing.knative.dev`", "the core API group".
    pub group_title: String,
    /// `apiVersion` of the kind's objects, e.g. `eventing.knative.dev/v1alpha1`, `apps/v1`, `v1`.
    pub api_version: String,
    /// A built-in kind (`--resource=false` for a group such as `apps`): the controller
    /// reconciles the k8s-openapi type; there is no API type, CRD, sample or helper role.
    pub builtin: bool,
    /// `--version`, e.g. `v1alpha1`.
    pub version: String,
    /// `--kind`, e.g. `Broker`.
    pub kind: String,
    /// The lower-cased kind (the CRD's singular), e.g. `broker`.
    pub kind_lower: String,
    /// The file stem of the kind's modules, e.g. `broker`, `match` (for `Match`), `crate_`.
    pub kind_snake: String,
    /// The REST resource name, e.g. `brokers`.
    pub plural: String,
    /// Whether objects of the kind live in a namespace.
    pub namespaced: bool,
    /// The group's module identifier, e.g. `eventing`, `r#match`, `foo_bar` (for `foo-bar`).
    pub group_module: String,
    /// The group's directory under `src/api/` and `src/controller/` (`group_module` without `r#`).
    pub group_dir: String,
    /// The kind's module identifier, e.g. `broker`, `r#match`.
    pub kind_module: String,
    /// The kind in snake_case without keyword handling, for composed identifiers such as test
    /// names, e.g. `http_route`, `crate`.
    pub snake: String,
    /// The reconciler's parameter holding an object of the kind, e.g. `broker`; a keyword kind
    /// or one clippy rejects as a name (`Foo`) gets `<snake>_obj`, a very long one `object`.
    pub var: String,
    /// The controller's name in logs and metric labels: PROJECT's `controllerName`, else the
    /// lower-cased kind, e.g. `broker`, `messaging-broker`.
    pub controller_name: String,
    /// The reconciler type, e.g. `BrokerReconciler`.
    pub reconciler: String,
    /// The Rust module of the type, e.g. `knative_lite::api::eventing::v1alpha1` (PROJECT `path`),
    /// `kbr_runtime::k8s_openapi::api::apps::v1` for a built-in kind.
    pub module_path: String,
    /// The type's module as the project's library imports it: `crate::api::<group>::<version>`,
    /// or [`Self::module_path`] for a built-in kind.
    pub lib_module_path: String,
    /// How the API file names items the kind could shadow.
    pub paths: ApiPaths,
    /// The shapes of lines whose width depends on the names.
    pub layout: Layout,
    /// `pub mod <group>;` needs `#[allow(clippy::module_inception)]` in `src/api/mod.rs`.
    pub group_is_api: bool,
    /// `pub mod <group>;` needs `#[allow(clippy::module_inception)]` in `src/controller/mod.rs`.
    pub group_is_controller: bool,
    /// `mod <kind>;` needs `#[allow(clippy::module_inception)]` in the group's controller module.
    pub kind_is_group: bool,
    /// `mod <kind>;` needs `#[allow(clippy::module_inception)]` in the version module.
    pub kind_is_version: bool,
}

impl ResourceContext {
    /// The context of a resource's names.
    pub fn new(names: ResourceNames) -> Self {
        let layout = Layout::new(Names {
            qualified_group: &names.qualified_group,
            version: &names.version,
            kind: &names.kind,
            plural: &names.plural,
            kind_module: &names.kind_module,
            var: &names.var,
            namespaced: names.namespaced,
        });
        let ResourceNames {
            group,
            version,
            kind,
            plural,
            builtin,
            qualified_group,
            namespaced,
            kind_lower,
            snake,
            kind_module,
            kind_snake,
            group_module,
            group_dir,
            var,
            reconciler,
            controller_name,
            module_path,
            lib_module_path,
        } = names;
        Self {
            group_title: if qualified_group.is_empty() {
                "the core API group".to_owned()
            } else {
                format!("the API group `{qualified_group}`")
            },
            api_version: builtin::api_version(&qualified_group, &version),
            builtin: builtin.is_some(),
            paths: ApiPaths::for_kind(&kind),
            layout,
            group_is_api: group_module == "api",
            group_is_controller: group_module == "controller",
            kind_is_group: kind_module == group_module,
            kind_is_version: kind_module == version,
            qualified_group,
            module_path,
            lib_module_path,
            kind_lower,
            controller_name,
            plural,
            namespaced,
            reconciler,
            group,
            version,
            kind,
            kind_snake,
            snake,
            group_module,
            group_dir,
            kind_module,
            var,
        }
    }
}
