//! The commands, one module each. Each takes its parsed flags and an [`Env`], validates every
//! name, builds a [`crate::plan::Plan`] and applies it, then prints what to do next; each fails
//! with its own error type, which [`crate::Error`] gathers.

pub mod alpha;
pub mod completion;
mod create;
pub mod create_api;
pub mod create_webhook;
pub mod edit;
pub mod init;
pub mod merge;
pub mod runtime;
pub mod version;

use std::fmt::Display;
use std::io::Write;

use crate::cli::{Env, PluginName};
use crate::context::ProjectContext;
use crate::license::{self, Headers, LicenseError};
use crate::project::{self, Project, ProjectError};
use crate::templates::{self, ProjectFile};

/// The error every scaffolding command can hit besides its own: headers, PROJECT, templates and
/// the plan.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    /// The directory has no PROJECT file.
    #[error("no PROJECT file found in {dir}; run kbr init first")]
    NoProject {
        /// The directory.
        dir: String,
    },
    /// PROJECT could not be read.
    #[error("cannot read {path}: {source}")]
    ReadProject {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The project's Cargo.toml does not parse.
    #[error(
        "cannot parse {path}: {message}; fix the file (cargo build points at the line) and run kbr again"
    )]
    CargoToml {
        /// The file.
        path: String,
        /// The TOML parser's message.
        message: String,
    },
    /// `--force` would merge the new scaffold into a file whose edits overlap its changes.
    #[error(
        "--force cannot keep your edits to {path}: they change the same lines as the new scaffold; nothing was written: move your code out of {path}, run the command again and add it back"
    )]
    ForceConflict {
        /// The file.
        path: String,
    },
    /// The project would be both sharded and namespaced.
    #[error(
        "--sharding and --namespaced exclude each other: the sharder assigns the objects of the sharded kinds in every namespace, which a manager with namespaced RBAC cannot read; drop one of them (kbr edit --namespaced=false or --sharding=false)"
    )]
    ShardingNamespaced,
    /// A multi-cluster project would be sharded, namespaced or have deploy-image kinds.
    #[error("--multicluster and {other} exclude each other: {why}; drop one of them")]
    MulticlusterWith {
        /// The other setting.
        other: &'static str,
        /// Why, in a few words.
        why: &'static str,
    },
    /// `--multicluster` names no provider kbr scaffolds.
    #[error(transparent)]
    Multicluster(#[from] crate::multicluster::UnknownProvider),
    /// The license header could not be made.
    #[error(transparent)]
    License(#[from] LicenseError),
    /// PROJECT could not be read or written.
    #[error(transparent)]
    Project(#[from] ProjectError),
    /// A template failed to render (a bug in a template).
    #[error("cannot render a template: {0}")]
    Render(#[from] askama::Error),
    /// The plan could not be made or applied.
    #[error(transparent)]
    Plan(#[from] crate::plan::PlanError),
}

/// Printing what a command did to standard output failed (after it did it).
#[derive(Debug, thiserror::Error)]
#[error("cannot write to standard output: {0}")]
pub struct OutputError(#[from] pub std::io::Error);

/// Writes `line` and a newline to `out`.
pub fn print(out: &mut dyn Write, line: impl Display) -> Result<(), OutputError> {
    Ok(writeln!(out, "{line}")?)
}

/// Errors when the settings of `project` exclude each other.
pub fn check_settings(project: &Project) -> Result<(), ScaffoldError> {
    if project.sharding && project.namespaced {
        return Err(ScaffoldError::ShardingNamespaced);
    }
    if project.multicluster.is_some() {
        let conflict = if project.sharding {
            Some((
                "--sharding",
                "the replicas of a multi-cluster manager do not split the clusters yet",
            ))
        } else if project.namespaced {
            Some(("--namespaced", "the member clusters' role is a ClusterRole"))
        } else if project.plugins.deploy_image.is_some() {
            Some((
                "the deploy-image plugin (create api --image)",
                "its controllers run on one cluster",
            ))
        } else {
            None
        };
        if let Some((other, why)) = conflict {
            return Err(ScaffoldError::MulticlusterWith { other, why });
        }
    }
    Ok(())
}

/// Records the plugins of `--plugins` in `project` (a plugin already there stays as it is).
pub fn add_plugins(project: &mut Project, names: &[PluginName]) {
    for name in names {
        let slot = match name {
            PluginName::Autoupdate => &mut project.plugins.autoupdate,
            PluginName::Grafana => &mut project.plugins.grafana,
        };
        slot.get_or_insert_default();
    }
}

/// The template context of `project`, with headers for the copyright year of `env`.
pub fn project_context(project: &Project, env: &Env) -> Result<ProjectContext, ScaffoldError> {
    let year = license::copyright_year(env.source_date_epoch.as_deref())?;
    let headers = Headers::new(project.license, year, &project.owner)?;
    Ok(ProjectContext::new(project, headers))
}

/// The content of the PROJECT file for `project`.
pub fn render_project(p: &ProjectContext, project: &Project) -> Result<String, ScaffoldError> {
    let yaml = project.to_yaml()?;
    let yaml = yaml.trim_end();
    Ok(templates::render(&ProjectFile { p, yaml })?)
}

/// The path of PROJECT relative to the project root.
pub const PROJECT_PATH: &str = project::FILE_NAME;
