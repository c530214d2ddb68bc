//! [`ResourceNames`]: every name kbr derives for one group/version/kind, derived once from its
//! validated flags or its PROJECT entry, before any template context exists.
//!
//! Validation compares these names across the project's resources (two kinds that would share
//! a Rust module, two controllers of one name), the template contexts print them, and
//! [`controller_test_module`] and [`webhook_test_module`] pick each kind's module in the test
//! suites from them.

use super::rust;
use crate::builtin::{self, BuiltinKind};
use crate::project::{Project, Resource};

/// The longest kind-derived variable name; longer kinds use `object`, so lines holding the
/// variable and the kind stay within rustfmt's width.
const MAX_VAR_LEN: usize = 30;

/// Placeholder names clippy's `disallowed_names` lint rejects as variable names.
const DISALLOWED_NAMES: &[&str] = &["foo", "bar", "baz", "quux"];

/// The names of one group/version/kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceNames {
    /// `--group`, e.g. `eventing`.
    pub group: String,
    /// `--version`, e.g. `v1alpha1`.
    pub version: String,
    /// `--kind`, e.g. `Broker`.
    pub kind: String,
    /// The REST resource name, e.g. `brokers`.
    pub plural: String,
    /// The built-in kind (`--resource=false` for a group such as `apps`), when it is one.
    pub builtin: Option<&'static BuiltinKind>,
    /// The API group: `<group>.<domain>`, e.g. `eventing.knative.dev`; for a built-in kind as
    /// the API server names it (`apps`, `networking.k8s.io`, empty for `core`).
    pub qualified_group: String,
    /// Whether objects of the kind live in a namespace.
    pub namespaced: bool,
    /// The lower-cased kind (the CRD's singular), e.g. `broker`.
    pub kind_lower: String,
    /// The kind in snake_case without keyword handling (heck's rules), for composed
    /// identifiers such as test names, e.g. `http_route`, `crate`.
    pub snake: String,
    /// The kind's module identifier, e.g. `broker`, `r#match`, `crate_`.
    pub kind_module: String,
    /// The file stem of the kind's modules (`kind_module` without `r#`), e.g. `match`.
    pub kind_snake: String,
    /// The group's module identifier, e.g. `eventing`, `r#match`, `foo_bar` (for `foo-bar`).
    pub group_module: String,
    /// The group's directory under `src/api/` and `src/controller/` (`group_module` without `r#`).
    pub group_dir: String,
    /// The reconciler's parameter holding an object of the kind, e.g. `broker`; a keyword kind
    /// or one clippy rejects as a name (`Foo`) gets `<snake>_obj`, a very long one `object`.
    pub var: String,
    /// The reconciler type, e.g. `BrokerReconciler`.
    pub reconciler: String,
    /// The controller's name in logs and metric labels: PROJECT's `controllerName`, else the
    /// lower-cased kind, e.g. `broker`, `messaging-broker`.
    pub controller_name: String,
    /// The Rust module of the type, e.g. `knative_lite::api::eventing::v1alpha1` (PROJECT
    /// `path`), `kbr_runtime::k8s_openapi::api::apps::v1` for a built-in kind.
    pub module_path: String,
    /// The type's module as the project's library imports it: `crate::api::<group>::<version>`,
    /// or [`Self::module_path`] for a built-in kind.
    pub lib_module_path: String,
}

impl ResourceNames {
    /// The names of `resource` (validated names) in the project whose library crate is
    /// `crate_name` ([`rust::crate_name`]).
    ///
    /// A PROJECT entry without an API type is a built-in kind when kbr's table knows it.
    pub fn new(crate_name: &str, resource: &Resource) -> Self {
        let snake = super::kind_snake(&resource.kind);
        let kind_module = rust::module_ident(&snake);
        let group_module = rust::module_ident(&rust::snake_from_dns(&resource.group));
        let var = if snake.len() > MAX_VAR_LEN {
            "object".to_owned()
        } else if rust::is_keyword(&snake) || DISALLOWED_NAMES.contains(&snake.as_str()) {
            format!("{snake}_obj")
        } else {
            snake.clone()
        };
        let builtin = resource
            .api
            .is_none()
            .then(|| {
                builtin::of(
                    &resource.group,
                    &resource.domain,
                    &resource.version,
                    &resource.kind,
                )
            })
            .flatten();
        let (qualified_group, namespaced, module_path, lib_module_path) = match builtin {
            Some(b) => (
                b.api_group(),
                b.namespaced,
                b.module_path(),
                b.module_path(),
            ),
            None => (
                format!("{}.{}", resource.group, resource.domain),
                resource.api.as_ref().is_none_or(|api| api.namespaced),
                format!("{crate_name}::api::{group_module}::{}", resource.version),
                format!("crate::api::{group_module}::{}", resource.version),
            ),
        };
        Self {
            group: resource.group.clone(),
            version: resource.version.clone(),
            kind: resource.kind.clone(),
            plural: resource.plural.clone(),
            builtin,
            qualified_group,
            namespaced,
            kind_lower: resource.kind.to_lowercase(),
            kind_snake: rust::file_stem(&kind_module).to_owned(),
            group_dir: rust::file_stem(&group_module).to_owned(),
            reconciler: format!("{}Reconciler", resource.kind),
            controller_name: resource
                .controller_name
                .clone()
                .unwrap_or_else(|| resource.kind.to_lowercase()),
            module_path,
            lib_module_path,
            snake,
            kind_module,
            group_module,
            var,
        }
    }
}

/// The names of every resource of `project`, in PROJECT order, with the resource each is of.
pub fn of_project(project: &Project) -> Vec<(&Resource, ResourceNames)> {
    let crate_name = rust::crate_name(&project.project_name);
    project
        .resources
        .iter()
        .map(|resource| (resource, ResourceNames::new(&crate_name, resource)))
        .collect()
}

/// The kind's module in the controller test suite `tests/controller/`: its module name
/// (`broker`, `r#match`), qualified as `<group>_<kind>` when a controller of another group of
/// `project` has a kind of the same snake_case name, or when the module would be `main`. Its
/// file is `tests/controller/<file stem>.rs`.
pub fn controller_test_module(project: &Project, names: &ResourceNames) -> String {
    let clash = of_project(project)
        .iter()
        .any(|(other, o)| other.group != names.group && other.controller && o.snake == names.snake);
    let group = rust::snake_from_dns(&names.group);
    suite_module(names, clash, format!("{group}_{}", names.snake))
}

/// The kind's module in the webhook test suite `tests/webhook/`: its module name, qualified as
/// `<group>_<kind>_<version>` when another resource of `project` with webhooks shares the
/// kind's snake_case name, or when the module would be `main`. Its file is
/// `tests/webhook/<file stem>.rs`.
pub fn webhook_test_module(project: &Project, names: &ResourceNames) -> String {
    let clash = of_project(project).iter().any(|(other, o)| {
        other.webhooks.is_some()
            && (other.group != names.group || other.version != names.version)
            && o.snake == names.snake
    });
    let group = rust::snake_from_dns(&names.group);
    suite_module(
        names,
        clash,
        format!("{group}_{}_{}", names.snake, names.version),
    )
}

/// The module of a kind in a test suite (`tests/controller/`, `tests/webhook/`): the kind's
/// module name (`broker`, `r#match`, `crate_`), or `qualified` when `clash` (another resource
/// of the suite has a kind of the same snake_case name) or when the kind's module would be the
/// suite's root, `main`.
fn suite_module(names: &ResourceNames, clash: bool, qualified: String) -> String {
    if clash || names.kind_module == "main" {
        qualified
    } else {
        names.kind_module.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::{Api, Runtime};

    fn resource(group: &str, version: &str, kind: &str) -> Resource {
        Resource {
            api: Some(Api {
                crd_version: "v1".to_owned(),
                namespaced: true,
            }),
            controller: true,
            controller_name: None,
            domain: "example.com".to_owned(),
            group: group.to_owned(),
            kind: kind.to_owned(),
            path: String::new(),
            plural: format!("{}s", kind.to_lowercase()),
            version: version.to_owned(),
            webhooks: None,
        }
    }

    fn project(resources: Vec<Resource>) -> Project {
        Project {
            cli_version: String::new(),
            domain: "example.com".to_owned(),
            layout: Vec::new(),
            license: Default::default(),
            multicluster: None,
            namespaced: false,
            owner: String::new(),
            project_name: "my-op".to_owned(),
            resources,
            runtime: Runtime::Version("0.1.0".to_owned()),
            sharding: false,
            plugins: crate::project::Plugins::default(),
            version: "3".to_owned(),
        }
    }

    #[test]
    fn names_of_a_keyword_kind_in_a_dashed_group() {
        let names = ResourceNames::new("my_op", &resource("foo-bar", "v1", "Match"));
        assert_eq!(names.kind_module, "r#match");
        assert_eq!(names.kind_snake, "match");
        assert_eq!(names.var, "match_obj");
        assert_eq!(names.group_module, "foo_bar");
        assert_eq!(names.qualified_group, "foo-bar.example.com");
        assert_eq!(names.module_path, "my_op::api::foo_bar::v1");
        assert_eq!(names.lib_module_path, "crate::api::foo_bar::v1");
        assert_eq!(names.controller_name, "match");
        assert!(names.builtin.is_none() && names.namespaced);
    }

    #[test]
    fn a_built_in_kind_is_named_by_its_api_group_and_k8s_openapi_module() {
        let deployment = Resource {
            api: None,
            domain: String::new(),
            ..resource("apps", "v1", "Deployment")
        };
        let names = ResourceNames::new("my_op", &deployment);
        assert_eq!(names.qualified_group, "apps");
        assert_eq!(names.module_path, "kbr_runtime::k8s_openapi::api::apps::v1");
        assert!(names.builtin.is_some());
    }

    #[test]
    fn test_modules_are_qualified_only_on_a_clash() {
        let broker = resource("eventing", "v1", "Broker");
        let other_group = resource("messaging", "v1", "Broker");
        let crate_name = "my_op";
        let alone = project(vec![broker.clone()]);
        let names = ResourceNames::new(crate_name, &broker);
        assert_eq!(controller_test_module(&alone, &names), "broker");
        let both = project(vec![broker.clone(), other_group]);
        assert_eq!(controller_test_module(&both, &names), "eventing_broker");
        let main = ResourceNames::new(crate_name, &resource("eventing", "v1", "Main"));
        assert_eq!(controller_test_module(&alone, &main), "eventing_main");
        assert_eq!(webhook_test_module(&alone, &main), "eventing_main_v1");
        let hooked = Resource {
            webhooks: Some(Default::default()),
            ..resource("eventing", "v2", "Broker")
        };
        assert_eq!(
            webhook_test_module(&project(vec![hooked]), &names),
            "eventing_broker_v1"
        );
    }
}
