//! Replaying PROJECT: the scaffold commands that re-create a project ([`commands`]), run by this
//! kbr or by another kbr binary ([`Scaffolder`]) in a scratch directory, read back as a [`Tree`].
//!
//! Kubebuilder's `alpha generate` (`pkg/cli/alpha/internal/generate.go`) replays its PROJECT
//! the same way: `init`, then `create api` for every resource, then `create webhook` for every
//! resource with webhooks (a webhook needs every API it converts between). Replaying plain
//! commands, not a rendering API, is what lets an *older* kbr, which has no `alpha` commands,
//! render the base of `kbr alpha update`.
//!
//! Every recorded flag is one line in the function of its command ([`init`], [`create_api`],
//! [`create_webhook`]; `kbr edit` changes the settings `init` replays, so it needs no step of
//! its own): a flag is passed only when its recorded value differs from the flag's
//! default, so an older kbr never sees a flag it does not know unless the project uses it.
//! Those functions destructure PROJECT's structs without `..`, so a new PROJECT key does not
//! compile until it is replayed or marked as needing no flag.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Parser;

use super::scratch::Scratch;
use crate::cli::{Cli, Command as KbrCommand, CreateCommand, Env};
use crate::commands::merge::Tree;
use crate::context::KBR_VERSION;
use crate::project::{
    Api, DeployImageOptions, License, Plugins, Project, Resource, Runtime, Webhooks,
};

/// The kbr that replays the commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scaffolder {
    /// This kbr, in process.
    Current,
    /// A kbr binary, e.g. an older version (`--from-binary`, or installed by cargo).
    Binary(PathBuf),
}

/// Replaying PROJECT failed; the scratch directory is gone, the project untouched.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The scratch directory could not be made or read.
    #[error("cannot render the project of {dir} in a scratch directory: {source}")]
    Scratch {
        /// The project's directory.
        dir: String,
        /// The I/O error.
        source: io::Error,
    },
    /// The kbr binary could not be started.
    #[error("cannot run {binary}: {source}; pass the path of a kbr binary")]
    Spawn {
        /// The binary.
        binary: String,
        /// The I/O error.
        source: io::Error,
    },
    /// A replayed command failed.
    #[error("replaying `kbr {command}` with {scaffolder} failed: {message}")]
    Command {
        /// The command line, after `kbr`.
        command: String,
        /// Which kbr ran it.
        scaffolder: String,
        /// Its error, on one line.
        message: String,
    },
}

impl Scaffolder {
    /// How messages name this kbr: `kbr 0.1.0 (this binary)` or the binary's path.
    pub fn describe(&self) -> String {
        match self {
            Scaffolder::Current => format!("kbr {KBR_VERSION} (this binary)"),
            Scaffolder::Binary(path) => path.display().to_string(),
        }
    }

    /// Renders `project` from scratch by replaying [`commands`], and reads the result.
    ///
    /// `project_dir` is the project's own directory: the commands run in a scratch directory
    /// where PROJECT's runtime path resolves as it does from the project, or to an empty
    /// stand-in crate when it resolves to no crate there ([`super::missing_runtime`]: the project
    /// moved), so the project renders as PROJECT records it. `source_date_epoch` fixes the year of
    /// license headers. The scratch directory is removed before returning.
    pub fn render(
        &self,
        project: &Project,
        project_dir: &Path,
        source_date_epoch: Option<&str>,
    ) -> Result<Tree, ReplayError> {
        let scratch_error = |source| ReplayError::Scratch {
            dir: project_dir.display().to_string(),
            source,
        };
        let scratch = Scratch::new(project, project_dir).map_err(scratch_error)?;
        for args in commands(project) {
            self.run(&args, scratch.dir(), source_date_epoch)?;
        }
        scratch.into_tree().map_err(scratch_error)
    }

    /// Runs `kbr args` in `dir`.
    fn run(
        &self,
        args: &[String],
        dir: &Path,
        source_date_epoch: Option<&str>,
    ) -> Result<(), ReplayError> {
        let failed = |message: String| ReplayError::Command {
            command: command_line(args),
            scaffolder: self.describe(),
            message,
        };
        match self {
            Scaffolder::Current => {
                let cli = Cli::try_parse_from(
                    std::iter::once("kbr").chain(args.iter().map(String::as_str)),
                )
                .map_err(|err| failed(first_line(&err.to_string())))?;
                let env = Env {
                    dir: dir.to_path_buf(),
                    source_date_epoch: source_date_epoch.map(str::to_owned),
                };
                // The commands [`commands`] replays; their errors without the prefix of
                // `crate::Error`, which the replayed command line already says.
                let out = &mut io::sink();
                let result = match cli.command {
                    KbrCommand::Init(args) => {
                        crate::commands::init::run(&args, &env, out).map_err(|e| e.to_string())
                    }
                    KbrCommand::Create(CreateCommand::Api(args)) => {
                        crate::commands::create_api::run(&args, &env, out)
                            .map_err(|e| e.to_string())
                    }
                    KbrCommand::Create(CreateCommand::Webhook(args)) => {
                        crate::commands::create_webhook::run(&args, &env, out)
                            .map_err(|e| e.to_string())
                    }
                    _ => Err("kbr replays only init, create api and create webhook".to_owned()),
                };
                result.map_err(failed)
            }
            Scaffolder::Binary(binary) => {
                let mut command = Command::new(binary);
                command.args(args).current_dir(dir);
                if let Some(epoch) = source_date_epoch {
                    command.env("SOURCE_DATE_EPOCH", epoch);
                }
                let output = command.output().map_err(|source| ReplayError::Spawn {
                    binary: binary.display().to_string(),
                    source,
                })?;
                if output.status.success() {
                    return Ok(());
                }
                let stderr = String::from_utf8_lossy(&output.stderr);
                let message = stderr
                    .lines()
                    .rev()
                    .find(|line| !line.trim().is_empty())
                    .map(|line| line.trim_start_matches("Error: ").to_owned())
                    .unwrap_or_else(|| format!("exit status {}", output.status));
                Err(failed(message))
            }
        }
    }
}

/// The commands that re-create `project`, each as the arguments after `kbr`: `init`, then
/// `create api` per resource in PROJECT order (but not for a built-in kind with webhooks only:
/// neither API type nor controller), then `create webhook` per resource with webhooks. Such a
/// built-in kind therefore comes after the kinds with `create api` in the replayed PROJECT: the
/// order of the `setup_webhook` lines in `src/lib.rs` is kept, which matters more.
pub fn commands(project: &Project) -> Vec<Vec<String>> {
    let mut commands = vec![init(project)];
    commands.extend(
        project
            .resources
            .iter()
            .filter(|resource| resource.api.is_some() || resource.controller)
            .map(|resource| create_api(&project.plugins, resource)),
    );
    commands.extend(project.resources.iter().filter_map(create_webhook));
    commands
}

/// `kbr init` with the project's recorded flags. `--project-name` is always given: the scratch
/// directory's name is not the project's.
pub fn init(project: &Project) -> Vec<String> {
    // Every field, without `..`: a new PROJECT key does not compile until it is replayed here
    // or named below as one that needs no flag.
    let Project {
        cli_version: _, // written by whichever kbr replays
        domain,
        layout: _, // one layout so far
        license,
        multicluster,
        namespaced,
        owner,
        plugins,
        project_name,
        resources: _, // replayed by create api and create webhook
        runtime,
        sharding,
        version: _, // the PROJECT format
    } = project;
    let mut args = words(&["init"]);
    args.push(format!("--domain={domain}"));
    args.push(format!("--project-name={project_name}"));
    if !owner.is_empty() {
        args.push(format!("--owner={owner}"));
    }
    if *license != License::default() {
        args.push(format!("--license={license}"));
    }
    if *namespaced {
        args.push("--namespaced".to_owned());
    }
    if *sharding {
        args.push("--sharding".to_owned());
    }
    if let Some(provider) = multicluster {
        args.push(format!("--multicluster={provider}"));
    }
    let Plugins {
        autoupdate,
        deploy_image: _, // replayed by create api --image
        grafana,
    } = plugins;
    let mut names = Vec::new();
    if autoupdate.is_some() {
        names.push("autoupdate");
    }
    if grafana.is_some() {
        names.push("grafana");
    }
    if !names.is_empty() {
        args.push(format!("--plugins={}", names.join(",")));
    }
    args.push(match runtime {
        Runtime::Path(path) => format!("--runtime-path={path}"),
        Runtime::Version(version) => format!("--runtime-version={version}"),
    });
    args
}

/// `kbr create api` for one resource: its API type (with the recorded plural, which may differ
/// from what a newer pluralizer would say, and scope) and/or its controller; a resource without
/// an API type is a controller for a built-in kind (`--resource=false`); a kind of the
/// deploy-image plugin gets its `--image` flags from `plugins`.
pub fn create_api(plugins: &Plugins, resource: &Resource) -> Vec<String> {
    // Every field, without `..` (see `init`).
    let Resource {
        api,
        controller,
        controller_name,
        domain: _, // the project's, or a built-in group's (known to kbr)
        group: _,
        kind: _,
        path: _, // follows from the names
        plural,
        version: _,
        webhooks: _, // replayed by create webhook
    } = resource;
    let mut args = gvk(&["create", "api"], resource);
    match api {
        Some(Api {
            crd_version: _, // always v1
            namespaced,
        }) => {
            args.push(format!("--plural={plural}"));
            if !namespaced {
                args.push("--namespaced=false".to_owned());
            }
            if !controller {
                args.push("--controller=false".to_owned());
            }
        }
        None => args.push("--resource=false".to_owned()),
    }
    if let Some(name) = controller_name {
        args.push(format!("--controller-name={name}"));
    }
    if let Some(DeployImageOptions {
        container_command,
        container_port,
        image,
        run_as_user,
    }) = plugins.deploy_image_of(&resource.group, &resource.version, &resource.kind)
    {
        args.push(format!("--image={image}"));
        if let Some(port) = container_port {
            args.push(format!("--image-container-port={port}"));
        }
        if let Some(command) = container_command {
            args.push(format!("--image-container-command={command}"));
        }
        if let Some(user) = run_as_user {
            args.push(format!("--run-as-user={user}"));
        }
    }
    args
}

/// `kbr create webhook` for one resource, `None` when it has no webhooks. Webhooks added by
/// several commands are replayed as one.
pub fn create_webhook(resource: &Resource) -> Option<Vec<String>> {
    // Every field, without `..` (see `init`).
    let Webhooks {
        conversion,
        defaulting,
        spoke,
        validation,
        webhook_version: _, // always v1
    } = resource.webhooks.as_ref()?;
    if !(*defaulting || *validation || *conversion) {
        return None;
    }
    let mut args = gvk(&["create", "webhook"], resource);
    if *defaulting {
        args.push("--defaulting".to_owned());
    }
    if *validation {
        args.push("--programmatic-validation".to_owned());
    }
    if *conversion {
        args.push("--conversion".to_owned());
        args.push(format!("--spoke={}", spoke.join(",")));
    }
    Some(args)
}

/// `command` followed by `--group`, `--version` and `--kind` of `resource`.
fn gvk(command: &[&str], resource: &Resource) -> Vec<String> {
    let mut args = words(command);
    args.push(format!("--group={}", resource.group));
    args.push(format!("--version={}", resource.version));
    args.push(format!("--kind={}", resource.kind));
    args
}

fn words(words: &[&str]) -> Vec<String> {
    words.iter().map(|&word| word.to_owned()).collect()
}

/// `args` as a shell would take them, for messages: arguments with spaces or quotes quoted.
pub fn command_line(args: &[String]) -> String {
    let quoted: Vec<String> = args
        .iter()
        .map(|arg| {
            if arg.is_empty() || arg.contains(|c: char| c.is_whitespace() || "'\"\\$`".contains(c))
            {
                format!("'{}'", arg.replace('\'', r"'\''"))
            } else {
                arg.clone()
            }
        })
        .collect();
    quoted.join(" ")
}

fn first_line(text: &str) -> String {
    text.lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or_default()
        .trim_start_matches("error: ")
        .to_owned()
}

#[cfg(test)]
mod tests;
