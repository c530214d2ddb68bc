//! The command line: `kbr init`, `kbr create api`, `kbr create webhook`, `kbr edit`,
//! `kbr alpha generate`, `kbr alpha update`, `kbr version`, `kbr completion`.
//!
//! Flags and defaults mirror Kubebuilder's (`kubebuilder init`, `kubebuilder create api`,
//! `kubebuilder create webhook`), minus
//! the Go-specific ones. Nothing prompts: a flag Kubebuilder would ask about (`--resource`,
//! `--controller`) defaults to `true`. Boolean flags accept `--flag`, `--flag=true` and
//! `--flag=false`, like Go's `flag` package.

use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand};

use crate::project::License;

/// kbr: scaffold Kubernetes operators in Rust, the Kubebuilder way.
#[derive(Debug, Parser)]
#[command(name = "kbr", version, about, long_about = None)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The top-level commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Initialize a new project in the current directory.
    Init(InitArgs),
    /// Scaffold a Kubernetes API.
    #[command(subcommand)]
    Create(CreateCommand),
    /// Change a project-wide setting of `kbr init` and re-render what it affects, keeping your
    /// edits.
    Edit(EditArgs),
    /// Re-render or update a project from its PROJECT file.
    #[command(subcommand)]
    Alpha(AlphaCommand),
    /// Print the kbr version and the Kubernetes versions its runtime targets.
    Version,
    /// Print a shell completion script.
    Completion(CompletionArgs),
}

/// `kbr create <what>`.
#[derive(Debug, Subcommand)]
pub enum CreateCommand {
    /// Scaffold an API type and its controller.
    Api(CreateApiArgs),
    /// Scaffold defaulting, validating or conversion webhooks for an existing API.
    Webhook(CreateWebhookArgs),
}

/// `kbr alpha <what>` (Kubebuilder's `alpha` commands).
#[derive(Debug, Subcommand)]
pub enum AlphaCommand {
    /// Re-render the whole project from its PROJECT file with this kbr, then run make manifests.
    Generate(AlphaGenerateArgs),
    /// Move the project to this kbr's scaffold, keeping your edits (a 3-way merge per file).
    Update(AlphaUpdateArgs),
}

/// `kbr edit` flags (Kubebuilder's `edit`): the `kbr init` settings that can change later. At
/// least one is required.
#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("setting").required(true).multiple(true).args(["namespaced", "sharding", "license", "owner", "runtime_path", "runtime_version", "workflows", "plugins", "multicluster"])))]
pub struct EditArgs {
    /// Watch only the manager's namespace(s) (WATCH_NAMESPACE), with namespaced RBAC; `=false`
    /// watches the whole cluster again.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub namespaced: Option<bool>,

    /// Split the objects of every scaffolded controller's kind across the manager's replicas
    /// (controller sharding, 3 replicas) instead of electing one leader; `=false` goes back to
    /// one leader.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub sharding: Option<bool>,

    /// The license header of generated files.
    #[arg(long, value_enum)]
    pub license: Option<License>,

    /// The copyright owner for the license header.
    #[arg(long, allow_hyphen_values = true)]
    pub owner: Option<String>,

    /// Depend on the kbr-runtime source at this path (relative to the project), e.g. after the
    /// project moved away from the one PROJECT records.
    #[arg(long, conflicts_with = "runtime_version", value_name = "PATH")]
    pub runtime_path: Option<String>,

    /// Depend on this crates.io version of kbr-runtime.
    #[arg(long, value_name = "VERSION")]
    pub runtime_version: Option<String>,

    /// Add the CI workflows `kbr init` writes (`.github/workflows/lint.yml`, `test.yml`,
    /// `test-e2e.yml`) to a project made before kbr wrote them; a workflow of the same name that
    /// differs is merged with conflict markers.
    #[arg(long)]
    pub workflows: bool,

    /// Run the controllers on every member cluster a provider finds, the manager on the
    /// management cluster (a preview): `directory` (the default) reads one kubeconfig per file
    /// from a directory mounted from a Secret, `kubeconfig-secrets` one per labelled kubeconfig
    /// Secret in the manager's namespace, `capi` one per Cluster API `Cluster`. Not with
    /// --namespaced or --sharding.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "directory", value_name = "PROVIDER")]
    pub multicluster: Option<String>,

    /// Add optional plugins, comma-separated: `grafana` (dashboards of the manager's metrics in
    /// grafana/), `autoupdate` (a weekly workflow running kbr alpha update).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "PLUGIN")]
    pub plugins: Vec<PluginName>,
}

/// A plugin of `--plugins` (Kubebuilder's optional plugins; the full key is accepted too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum PluginName {
    /// `autoupdate.kbr.dev/v1-alpha`: `.github/workflows/auto_update.yml`, which runs `kbr alpha
    /// update` every week and opens a pull request (or an issue on conflicts).
    #[value(alias = "autoupdate.kbr.dev/v1-alpha", alias = "autoupdate/v1-alpha")]
    Autoupdate,
    /// `grafana.kbr.dev/v1-alpha`: Grafana dashboards of the runtime's metrics in `grafana/`,
    /// and one of your own metrics from `grafana/custom-metrics/config.yaml`.
    #[value(alias = "grafana.kbr.dev/v1-alpha", alias = "grafana/v1-alpha")]
    Grafana,
}

/// `kbr alpha generate` flags.
#[derive(Debug, Clone, Args)]
pub struct AlphaGenerateArgs {
    /// The project directory holding PROJECT [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub input_dir: Option<PathBuf>,

    /// Where to write the project [default: --input-dir, overwriting every scaffolded file]; a
    /// relative runtime path in PROJECT is then relative to it.
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,

    /// Do not run make manifests afterwards (no build of the project).
    #[arg(long)]
    pub no_manifests: bool,
}

/// `kbr alpha update` flags.
#[derive(Debug, Clone, Args)]
pub struct AlphaUpdateArgs {
    /// The kbr version that scaffolded the project [default: PROJECT's cliVersion]; installed
    /// with cargo install unless it is this kbr's.
    #[arg(long, value_name = "VERSION")]
    pub from_version: Option<String>,

    /// The kbr binary that scaffolded the project (instead of installing --from-version).
    #[arg(long, value_name = "PATH", conflicts_with = "from_version")]
    pub from_binary: Option<PathBuf>,

    /// The kbr version to update to: `current` (this kbr) or a version to install with cargo.
    #[arg(long, value_name = "VERSION", default_value = "current")]
    pub to_version: String,

    /// The kbr binary to update to (instead of --to-version).
    #[arg(long, value_name = "PATH", conflicts_with = "to_version")]
    pub to_binary: Option<PathBuf>,

    /// Exit with 0 even when files are left with conflict markers (e.g. in automation).
    #[arg(long)]
    pub force_conflicts: bool,
}

/// `kbr init` flags.
#[derive(Debug, Clone, Args)]
pub struct InitArgs {
    /// The domain of the project's API groups (groups are `<group>.<domain>`).
    #[arg(long, allow_hyphen_values = true, default_value = "my.domain")]
    pub domain: String,

    /// The project name: the package name and the prefix of deployed objects [default: the
    /// directory name].
    #[arg(long, allow_hyphen_values = true)]
    pub project_name: Option<String>,

    /// The copyright owner for the license header.
    #[arg(long, allow_hyphen_values = true, default_value = "")]
    pub owner: String,

    /// The license header of generated files.
    #[arg(long, value_enum, default_value_t = License::Apache2)]
    pub license: License,

    /// Watch only the manager's namespace(s) (WATCH_NAMESPACE), with namespaced RBAC.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true")]
    pub namespaced: bool,

    /// Split the objects of every scaffolded controller's kind across the manager's replicas
    /// (controller sharding: a shard Lease per replica, 3 replicas) instead of electing one
    /// leader; not with --namespaced.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true")]
    pub sharding: bool,

    /// Depend on the kbr-runtime source at this path (relative to the project) [default: the
    /// runtime kbr was built from, as a path relative to the project, if present, else
    /// crates.io].
    #[arg(long, conflicts_with = "runtime_version", value_name = "PATH")]
    pub runtime_path: Option<String>,

    /// Depend on this crates.io version of kbr-runtime.
    #[arg(long, value_name = "VERSION")]
    pub runtime_version: Option<String>,

    /// Run the controllers on every member cluster a provider finds, the manager on the
    /// management cluster (a preview): `directory` (the default) reads one kubeconfig per file
    /// from a directory mounted from a Secret, `kubeconfig-secrets` one per labelled kubeconfig
    /// Secret in the manager's namespace, `capi` one per Cluster API `Cluster`. Not with
    /// --namespaced or --sharding.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "directory", value_name = "PROVIDER")]
    pub multicluster: Option<String>,

    /// Optional plugins, comma-separated: `grafana`, `autoupdate` (see `kbr edit --plugins`).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "PLUGIN")]
    pub plugins: Vec<PluginName>,
}

/// `kbr create api` flags.
#[derive(Debug, Clone, Args)]
pub struct CreateApiArgs {
    /// The API group, without the domain (e.g. `eventing`).
    #[arg(long, allow_hyphen_values = true)]
    pub group: String,

    /// The API version (e.g. `v1alpha1`).
    #[arg(long, allow_hyphen_values = true)]
    pub version: String,

    /// The kind, in PascalCase (e.g. `Broker`).
    #[arg(long, allow_hyphen_values = true)]
    pub kind: String,

    /// The resource name [default: the English plural of the lower-cased kind].
    #[arg(long, allow_hyphen_values = true)]
    pub plural: Option<String>,

    /// Whether objects of the kind live in a namespace (false: cluster-scoped).
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, require_equals = true, default_value_t = true, default_missing_value = "true")]
    pub namespaced: bool,

    /// Scaffold the API type (false: only a controller for an existing type).
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, require_equals = true, default_value_t = true, default_missing_value = "true")]
    pub resource: bool,

    /// Scaffold a controller.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, require_equals = true, default_value_t = true, default_missing_value = "true")]
    pub controller: bool,

    /// Overwrite the kind's own files (API type, controller, test) if they exist.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true")]
    pub force: bool,

    /// The controller's name, in logs and metric labels; unique in the project (a DNS-1123
    /// label) [default: the lower-cased kind, or GROUP-KIND when another group of the
    /// project has a controller for a kind of the same name].
    #[arg(long, allow_hyphen_values = true)]
    pub controller_name: Option<String>,

    /// The deploy-image plugin: a controller that runs this container image as a Deployment of
    /// `spec.size` replicas, with status conditions and a finalizer (e.g.
    /// `memcached:1.6.26-alpine3.19`).
    #[arg(long, allow_hyphen_values = true, value_name = "IMAGE")]
    pub image: Option<String>,

    /// With --image: the port the container listens on (a `containerPort` field in the spec).
    #[arg(long, requires = "image", value_name = "PORT")]
    pub image_container_port: Option<u16>,

    /// With --image: the container's command, comma-separated (e.g.
    /// `memcached,--memory-limit=64,-o,modern,-v`).
    #[arg(
        long,
        requires = "image",
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    pub image_container_command: Option<String>,

    /// With --image: the user ID the container runs as.
    #[arg(long, requires = "image", value_name = "UID")]
    pub run_as_user: Option<i64>,
}

/// `kbr create webhook` flags.
#[derive(Debug, Clone, Args)]
pub struct CreateWebhookArgs {
    /// The API group, without the domain (e.g. `eventing`).
    #[arg(long, allow_hyphen_values = true)]
    pub group: String,

    /// The API version (e.g. `v1alpha1`); the hub with --conversion.
    #[arg(long, allow_hyphen_values = true)]
    pub version: String,

    /// The kind, in PascalCase (e.g. `Channel`).
    #[arg(long, allow_hyphen_values = true)]
    pub kind: String,

    /// Scaffold a defaulting (mutating) webhook.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true")]
    pub defaulting: bool,

    /// Scaffold a validating webhook.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true")]
    pub programmatic_validation: bool,

    /// Scaffold a conversion webhook with --version as the hub (the storage version); needs
    /// --spoke.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true")]
    pub conversion: bool,

    /// The versions converted to and from the hub, comma-separated (e.g. `v1,v2beta1`); each
    /// must be an API of the same kind.
    #[arg(
        long,
        allow_hyphen_values = true,
        value_delimiter = ',',
        value_name = "VERSION"
    )]
    pub spoke: Vec<String>,

    /// Overwrite the kind's webhook files (and scaffold a webhook type again) if they exist.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true")]
    pub force: bool,
}

/// `kbr completion` arguments.
#[derive(Debug, Clone, Args)]
pub struct CompletionArgs {
    /// The shell to generate the script for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Where a command runs.
#[derive(Debug, Clone)]
pub struct Env {
    /// The working directory (the project root).
    pub dir: PathBuf,
    /// `SOURCE_DATE_EPOCH`, if set.
    pub source_date_epoch: Option<String>,
}

impl Env {
    /// The environment of this process.
    pub fn from_process() -> std::io::Result<Self> {
        Ok(Self {
            dir: std::env::current_dir()?,
            source_date_epoch: std::env::var("SOURCE_DATE_EPOCH").ok(),
        })
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;

    #[test]
    fn clap_definition_is_valid() {
        Cli::command().debug_assert();
    }

    #[test]
    fn bool_flags_accept_go_forms() {
        let parse = |args: &[&str]| {
            let mut argv = vec!["kbr", "create", "api", "--group", "g", "--version", "v1"];
            argv.extend_from_slice(&["--kind", "K"]);
            argv.extend_from_slice(args);
            match Cli::try_parse_from(argv).map(|cli| cli.command) {
                Ok(Command::Create(CreateCommand::Api(api))) => Ok(api),
                Ok(other) => panic!("{other:?}"),
                Err(err) => Err(err.kind()),
            }
        };
        let defaults = parse(&[]).unwrap();
        assert!(defaults.namespaced && defaults.resource && defaults.controller && !defaults.force);
        let flags = parse(&["--namespaced=false", "--controller=false", "--force"]).unwrap();
        assert!(!flags.namespaced && !flags.controller && flags.force && flags.resource);
        assert!(
            parse(&["--resource=true", "--force=false"])
                .unwrap()
                .resource
        );
        assert_eq!(
            parse(&["--namespaced=maybe"]).unwrap_err(),
            clap::error::ErrorKind::InvalidValue
        );
    }
}
