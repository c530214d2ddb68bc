//! The `PROJECT` file: what kbr scaffolded, so later commands (and re-rendering) know the project.
//!
//! Kubebuilder's keys (`pkg/config/v3`), sorted alphabetically like Kubebuilder writes them:
//!
//! ```yaml
//! cliVersion: 0.1.0            # the kbr that last wrote the file
//! domain: knative.dev
//! layout:
//! - kbr.dev/v1alpha1           # kbr's project layout (Kubebuilder: go.kubebuilder.io/v4)
//! license: apache2             # kbr: `--license` (apache2 | none), for re-rendering headers
//! multicluster: directory      # kbr: only with `kbr init --multicluster` (or `kbr edit`)
//! namespaced: true             # only with `kbr init --namespaced`
//! owner: The Knative Authors   # kbr: `--owner`, omitted when empty
//! plugins:                     # Kubebuilder's optional plugins, by plugin key (omitted: none)
//!   autoupdate.kbr.dev/v1-alpha: {}      # `kbr edit --plugins autoupdate`
//!   deploy-image.kbr.dev/v1-alpha:       # `kbr create api --image ...`, one entry per kind
//!     resources:
//!     - domain: knative.dev
//!       group: cache
//!       kind: Memcached
//!       options:                         # the flags, as strings (Kubebuilder's shape)
//!         containerCommand: memcached,-m=64,-o,modern,-v
//!         containerPort: "11211"
//!         image: memcached:1.6.26-alpine3.19
//!         runAsUser: "1001"
//!       version: v1alpha1
//!   grafana.kbr.dev/v1-alpha: {}         # `kbr edit --plugins grafana` (or `init --plugins`)
//! projectName: knative-lite
//! resources:
//! - api:                       # omitted for `--resource=false`
//!     crdVersion: v1
//!     namespaced: true         # omitted for cluster-scoped kinds
//!   controller: true           # omitted for `--controller=false`
//!   controllerName: eventing-broker  # omitted when it is the lower-cased kind
//!   domain: knative.dev
//!   group: eventing
//!   kind: Broker
//!   path: knative_lite::api::eventing::v1alpha1   # the Rust module of the type
//!   plural: brokers
//!   version: v1alpha1
//!   webhooks:                  # only after `kbr create webhook`
//!     defaulting: true
//!     validation: true
//!     webhookVersion: v1
//! - controller: true           # a controller for a built-in kind (`--resource=false`)
//!   group: apps                # Kubebuilder's name: core, apps, networking, rbac.authorization
//!   kind: Deployment           # (domain: k8s.io for the *.k8s.io groups)
//!   path: kbr_runtime::k8s_openapi::api::apps::v1
//!   plural: deployments
//!   version: v1
//! runtime:                     # kbr: where the kbr-runtime dependency comes from
//!   path: ../../runtime        # or `version: 0.1.0`
//! sharding: true               # kbr: only with `kbr init --sharding` (or `kbr edit`)
//! version: "3"                 # the PROJECT format version
//! ```
//!
//! The keys marked "kbr" have no Kubebuilder counterpart (Kubebuilder keeps the license in
//! `hack/boilerplate.go.txt` and has no runtime dependency to pin).

use std::fmt;

use serde::{Deserialize, Serialize};

/// The layout kbr writes into `layout:`.
pub const LAYOUT: &str = "kbr.dev/v1alpha1";

/// The PROJECT format version (Kubebuilder's project config v3).
pub const PROJECT_VERSION: &str = "3";

/// The `PROJECT` file's file name, at the project root.
pub const FILE_NAME: &str = "PROJECT";

/// The license header every generated file carries (`--license`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum License {
    /// Apache License 2.0, Kubebuilder's default boilerplate.
    #[default]
    Apache2,
    /// No license header.
    None,
}

impl fmt::Display for License {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            License::Apache2 => "apache2",
            License::None => "none",
        })
    }
}

/// Where the generated project takes `kbr-runtime` from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Runtime {
    /// A path dependency, written verbatim (relative paths are relative to the project).
    Path(String),
    /// A crates.io version requirement.
    Version(String),
}

impl Runtime {
    /// For [`Runtime::Path`], where kbr-testing sits: the `testing` directory beside the
    /// kbr-runtime crate, as in a kbr checkout (`../../runtime` -> `../../testing`), with `/`
    /// separators; `None` for a version.
    pub fn testing_path(&self) -> Option<String> {
        let Runtime::Path(path) = self else {
            return None;
        };
        let trimmed = path.trim_end_matches('/');
        Some(match trimmed.rsplit_once('/') {
            Some((parent, _)) => format!("{parent}/testing"),
            None if trimmed.is_empty() || trimmed == "." || trimmed == ".." => {
                format!("{trimmed}/../testing")
            }
            None => "testing".to_owned(),
        })
    }
}

/// The whole `PROJECT` file. Field order is the serialized key order (alphabetical).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Project {
    /// The kbr version that last wrote the file.
    pub cli_version: String,
    /// `--domain`: the suffix of every API group.
    pub domain: String,
    /// The project layout; kbr writes [`LAYOUT`].
    pub layout: Vec<String>,
    /// `--license`.
    #[serde(default)]
    pub license: License,
    /// `kbr init --multicluster[=PROVIDER]` (or `kbr edit`): the controllers run on every
    /// member cluster the provider finds, the manager on the management cluster. A kbr key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multicluster: Option<crate::multicluster::Provider>,
    /// `kbr init --namespaced`: the manager watches only its own namespace(s).
    #[serde(default, skip_serializing_if = "is_false")]
    pub namespaced: bool,
    /// `--owner`, the copyright holder in license headers.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub owner: String,
    /// The optional plugins the project uses (Kubebuilder's `plugins:` key).
    #[serde(default, skip_serializing_if = "Plugins::is_empty")]
    pub plugins: Plugins,
    /// `--project-name`: the package name and the prefix of every deployed object.
    pub project_name: String,
    /// Every API and controller scaffolded, in creation order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<Resource>,
    /// Where `kbr-runtime` comes from.
    pub runtime: Runtime,
    /// `kbr init --sharding`: the manager's replicas split the objects of every kind with a
    /// scaffolded controller between them (`kbr_runtime::sharding`) instead of electing one
    /// leader. A top-level boolean, as Kubebuilder's `multigroup`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub sharding: bool,
    /// The PROJECT format version, [`PROJECT_VERSION`].
    pub version: String,
}

/// The optional plugins of a project, by plugin key: Kubebuilder's `plugins:` map, with kbr's
/// plugin keys (`<name>.kbr.dev/v1-alpha` for Kubebuilder's `<name>.kubebuilder.io/v1-alpha`).
/// Field order is the serialized key order (alphabetical).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plugins {
    /// `kbr edit --plugins autoupdate`: the weekly `kbr alpha update` workflow.
    #[serde(
        rename = "autoupdate.kbr.dev/v1-alpha",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub autoupdate: Option<NoOptions>,
    /// `kbr create api --image`: the kinds whose controller runs an image as a Deployment.
    #[serde(
        rename = "deploy-image.kbr.dev/v1-alpha",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub deploy_image: Option<DeployImage>,
    /// `kbr edit --plugins grafana`: Grafana dashboards of the manager's metrics.
    #[serde(
        rename = "grafana.kbr.dev/v1-alpha",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub grafana: Option<NoOptions>,
}

impl Plugins {
    /// Whether no plugin is used (the key is then omitted).
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }

    /// The deploy-image options of `group`/`version`/`kind`, if it was created with `--image`.
    pub fn deploy_image_of(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> Option<&DeployImageOptions> {
        self.deploy_image
            .as_ref()?
            .resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.kind == kind)
            .map(|r| &r.options)
    }
}

/// The configuration of a plugin that has none: written `{}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoOptions {}

/// The deploy-image plugin's configuration: one entry per kind created with `--image`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeployImage {
    /// The kinds, in creation order.
    pub resources: Vec<DeployImageResource>,
}

/// One kind of the deploy-image plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeployImageResource {
    /// The project's domain.
    pub domain: String,
    /// `--group`.
    pub group: String,
    /// `--kind`.
    pub kind: String,
    /// The flags of `kbr create api --image`.
    pub options: DeployImageOptions,
    /// `--version`.
    pub version: String,
}

/// The flags of `kbr create api --image`, as strings (Kubebuilder records them so).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeployImageOptions {
    /// `--image-container-command`: the container's command, comma-separated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_command: Option<String>,
    /// `--image-container-port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_port: Option<String>,
    /// `--image`.
    pub image: String,
    /// `--run-as-user`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_as_user: Option<String>,
}

/// One scaffolded group/version/kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// Present when kbr scaffolded the API type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<Api>,
    /// Whether kbr scaffolded a controller for the kind.
    #[serde(default, skip_serializing_if = "is_false")]
    pub controller: bool,
    /// The controller's name (`create api --controller-name`, or `<group>-<kind>` chosen when
    /// another group has a controller for a kind of the same name); omitted when it is the
    /// lower-cased kind, the default. Kubebuilder records the same key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller_name: Option<String>,
    /// The project domain at the time; for a built-in kind its group's domain (`k8s.io`),
    /// omitted when the group has none (`core`, `apps`, `batch`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub domain: String,
    /// `--group`, without the domain.
    pub group: String,
    /// `--kind`.
    pub kind: String,
    /// The Rust module holding the type, e.g. `knative_lite::api::eventing::v1alpha1`, or
    /// `kbr_runtime::k8s_openapi::api::apps::v1` for a built-in kind.
    pub path: String,
    /// The REST resource name, e.g. `brokers`.
    pub plural: String,
    /// `--version`.
    pub version: String,
    /// The webhooks `kbr create webhook` scaffolded for this version of the kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhooks: Option<Webhooks>,
}

/// The webhooks of a [`Resource`] (Kubebuilder's `webhooks:` entry).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Webhooks {
    /// `--conversion`: this version is the hub of a conversion webhook.
    #[serde(default, skip_serializing_if = "is_false")]
    pub conversion: bool,
    /// `--defaulting`: a defaulting (mutating) webhook.
    #[serde(default, skip_serializing_if = "is_false")]
    pub defaulting: bool,
    /// `--spoke`: the versions converted to and from this hub.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spoke: Vec<String>,
    /// `--programmatic-validation`: a validating webhook.
    #[serde(default, skip_serializing_if = "is_false")]
    pub validation: bool,
    /// The AdmissionReview / ConversionReview version; always `v1`.
    pub webhook_version: String,
}

/// The API part of a [`Resource`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Api {
    /// The CRD API version; always `v1`.
    pub crd_version: String,
    /// Whether objects of the kind live in a namespace.
    #[serde(default, skip_serializing_if = "is_false")]
    pub namespaced: bool,
}

/// serde's `skip_serializing_if` for `false`.
fn is_false(b: &bool) -> bool {
    !*b
}

/// `PROJECT` could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    /// The YAML does not describe a project.
    #[error("cannot parse {path}: {message}; fix the file or restore it from version control")]
    Parse {
        /// The file.
        path: String,
        /// The parser's message, on one line.
        message: String,
    },
    /// The file is another tool's project (its `layout:` is not kbr's).
    #[error(
        "{path} has layout {layout:?}, not kbr's {LAYOUT:?}{}; run kbr in a project made by kbr init",
        layout_origin(.layout)
    )]
    Layout {
        /// The file.
        path: String,
        /// The foreign layout.
        layout: String,
    },
    /// The model could not be serialized (a bug).
    #[error("cannot serialize PROJECT: {0}")]
    Serialize(String),
}

/// What a foreign PROJECT layout says about the project, for [`ProjectError::Layout`].
fn layout_origin(layout: &str) -> &'static str {
    if layout.starts_with("go.kubebuilder.io/") {
        " (a Kubebuilder Go project)"
    } else {
        ""
    }
}

impl Resource {
    /// `<group>.<domain>/<version>, Kind=<kind>`, Kubebuilder's way of naming a GVK in messages.
    pub fn gvk_display(&self) -> String {
        format!(
            "{}.{}/{}, Kind={}",
            self.group, self.domain, self.version, self.kind
        )
    }
}

impl Project {
    /// Parses the contents of a `PROJECT` file; `path` names it in errors.
    ///
    /// Errors: [`ProjectError::Layout`] when `layout:` names another tool's layout (a
    /// Kubebuilder Go project's `go.kubebuilder.io/v4`), checked first so such a file is named
    /// for what it is; [`ProjectError::Parse`] when the YAML is not a kbr PROJECT.
    pub fn parse(yaml: &str, path: &str) -> Result<Self, ProjectError> {
        /// Only the layout, read before the strict parse (unknown keys ignored).
        #[derive(Deserialize)]
        struct LayoutOnly {
            #[serde(default)]
            layout: Vec<String>,
        }
        let parse_error = |err: serde_saphyr::Error| ProjectError::Parse {
            path: path.to_owned(),
            message: err.to_string().lines().collect::<Vec<_>>().join(" "),
        };
        if let Ok(LayoutOnly { layout }) = serde_saphyr::from_str::<LayoutOnly>(yaml)
            && let Some(other) = layout.iter().find(|l| *l != LAYOUT)
        {
            return Err(ProjectError::Layout {
                path: path.to_owned(),
                layout: other.clone(),
            });
        }
        serde_saphyr::from_str(yaml).map_err(parse_error)
    }

    /// The YAML body of the file (without the header comment the template adds).
    pub fn to_yaml(&self) -> Result<String, ProjectError> {
        serde_saphyr::to_string(self).map_err(|err| ProjectError::Serialize(err.to_string()))
    }

    /// The resource scaffolded for `group`/`version`/`kind`, if any.
    pub fn find(&self, group: &str, version: &str, kind: &str) -> Option<&Resource> {
        self.resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.kind == kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Project {
        Project {
            cli_version: "0.1.0".into(),
            domain: "knative.dev".into(),
            layout: vec![LAYOUT.into()],
            license: License::Apache2,
            multicluster: None,
            namespaced: false,
            owner: "The Knative Authors".into(),
            plugins: Plugins::default(),
            project_name: "knative-lite".into(),
            resources: vec![
                Resource {
                    api: Some(Api {
                        crd_version: "v1".into(),
                        namespaced: true,
                    }),
                    controller: true,
                    controller_name: None,
                    domain: "knative.dev".into(),
                    group: "eventing".into(),
                    kind: "Broker".into(),
                    path: "knative_lite::api::eventing::v1alpha1".into(),
                    plural: "brokers".into(),
                    version: "v1alpha1".into(),
                    webhooks: Some(Webhooks {
                        defaulting: true,
                        validation: true,
                        webhook_version: "v1".into(),
                        ..Webhooks::default()
                    }),
                },
                Resource {
                    api: Some(Api {
                        crd_version: "v1".into(),
                        namespaced: false,
                    }),
                    controller: false,
                    controller_name: None,
                    domain: "knative.dev".into(),
                    group: "match".into(),
                    kind: "Type".into(),
                    path: "knative_lite::api::r#match::v1".into(),
                    plural: "types".into(),
                    version: "v1".into(),
                    webhooks: None,
                },
            ],
            runtime: Runtime::Path("../../runtime".into()),
            sharding: false,
            version: PROJECT_VERSION.into(),
        }
    }

    #[test]
    fn plugins_are_written_as_kubebuilder_writes_them() {
        let mut project = sample();
        project.plugins = Plugins {
            autoupdate: Some(NoOptions {}),
            deploy_image: Some(DeployImage {
                resources: vec![DeployImageResource {
                    domain: "knative.dev".into(),
                    group: "cache".into(),
                    kind: "Memcached".into(),
                    options: DeployImageOptions {
                        container_command: None,
                        container_port: Some("11211".into()),
                        image: "memcached:1.6.26-alpine3.19".into(),
                        run_as_user: Some("1001".into()),
                    },
                    version: "v1alpha1".into(),
                }],
            }),
            grafana: Some(NoOptions {}),
        };
        let yaml = project.to_yaml().unwrap();
        assert!(
            yaml.contains("owner: The Knative Authors\nplugins:\n  autoupdate.kbr.dev/v1-alpha: {}\n  deploy-image.kbr.dev/v1-alpha:\n    resources:\n    - domain: knative.dev\n      group: cache\n      kind: Memcached\n      options:\n        containerPort: \"11211\"\n        image: memcached:1.6.26-alpine3.19\n        runAsUser: \"1001\"\n      version: v1alpha1\n  grafana.kbr.dev/v1-alpha: {}\nprojectName: knative-lite\n"),
            "{yaml}"
        );
        assert_eq!(Project::parse(&yaml, "PROJECT").unwrap(), project);
        let options = project
            .plugins
            .deploy_image_of("cache", "v1alpha1", "Memcached");
        assert_eq!(
            options.map(|o| o.image.as_str()),
            Some("memcached:1.6.26-alpine3.19")
        );
        assert!(
            project
                .plugins
                .deploy_image_of("cache", "v1", "Memcached")
                .is_none()
        );
    }

    #[test]
    fn round_trip() {
        let project = sample();
        let yaml = project.to_yaml().unwrap();
        assert_eq!(Project::parse(&yaml, "PROJECT").unwrap(), project);
    }

    #[test]
    fn keys_sorted_like_kubebuilder() {
        let yaml = sample().to_yaml().unwrap();
        let top: Vec<&str> = yaml
            .lines()
            .filter(|l| !l.starts_with([' ', '-']))
            .filter_map(|l| l.split(':').next())
            .collect();
        assert_eq!(
            top,
            [
                "cliVersion",
                "domain",
                "layout",
                "license",
                "owner",
                "projectName",
                "resources",
                "runtime",
                "version"
            ]
        );
        assert!(yaml.contains("version: \"3\""), "{yaml}");
        assert!(yaml.contains("  path: ../../runtime"), "{yaml}");
        assert!(yaml.contains("- api:\n    crdVersion: v1\n    namespaced: true\n  controller: true\n  domain: knative.dev\n  group: eventing\n  kind: Broker\n"), "{yaml}");
        assert!(yaml.contains("  version: v1alpha1\n  webhooks:\n    defaulting: true\n    validation: true\n    webhookVersion: v1\n"), "{yaml}");
    }

    #[test]
    fn parse_error_is_one_line() {
        let err = Project::parse("domain: [", "/x/PROJECT").unwrap_err();
        assert!(!err.to_string().contains('\n'), "{err}");
        assert!(err.to_string().starts_with("cannot parse /x/PROJECT: "));
    }
}
