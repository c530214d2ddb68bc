//! `kbr alpha update`: moves a project to this kbr's scaffold (or `--to-version`'s) and keeps
//! every user edit, by a 3-way merge per file (Kubebuilder's `alpha update`, without its git
//! branches: it works in a plain directory too).
//!
//! 1. base: the project rendered from PROJECT by the kbr that wrote it (`--from-version`, by
//!    default PROJECT's `cliVersion`; installed by cargo, or `--from-binary`);
//! 2. ours: the project as it is; theirs: the project rendered from PROJECT by the new kbr;
//! 3. every file of base or theirs is merged ([`crate::commands::merge`]) into one plan, applied
//!    atomically: either every file is written or none is.
//!
//! A runtime requirement equal to the `cliVersion` that wrote PROJECT is that kbr's default
//! (`kbr init` pins the kbr-runtime of its own version), so the new render pins the new kbr's
//! version: the scaffold and the runtime its code is written for move together. A path or a
//! requirement chosen with `--runtime-version` stays as recorded.
//!
//! Conflicts are written with markers and listed; the command then fails (exit code 1) unless
//! `--force-conflicts`.

use std::borrow::Cow;
use std::io::Write;
use std::path::Path;

use super::install::{self, InstallError};
use super::replay::{ReplayError, Scaffolder};
use super::{Recorded, missing_runtime, missing_runtime_warning};
use crate::cli::{AlphaUpdateArgs, Env};
use crate::commands::merge::{self, Change};
use crate::commands::{OutputError, ScaffoldError, print};
use crate::context::KBR_VERSION;
use crate::plan::PlanError;
use crate::project::{Project, Runtime};

/// `kbr alpha update` failed, or left files that need the user.
#[derive(Debug, thiserror::Error)]
pub enum UpdateError {
    /// PROJECT could not be read, or the merge could not be written (nothing was).
    #[error("failed to update the project: {0}")]
    Scaffold(#[from] ScaffoldError),
    /// An old or new kbr could not be installed.
    #[error("failed to update the project: {0}")]
    Install(#[from] InstallError),
    /// Replaying PROJECT failed.
    #[error("failed to update the project: {0}")]
    Replay(#[from] ReplayError),
    /// The update is written, but some files need the user.
    #[error(
        "the update left {count} file(s) to resolve: {files}; fix them (conflict markers: ours = your project, original = the old scaffold, theirs = the new one), then run make manifests"
    )]
    Unresolved {
        /// How many.
        count: usize,
        /// The paths, comma-separated.
        files: String,
    },
    /// Printing what was done failed.
    #[error(transparent)]
    Output(#[from] OutputError),
}

impl From<PlanError> for UpdateError {
    fn from(err: PlanError) -> Self {
        Self::Scaffold(err.into())
    }
}

/// Runs `kbr alpha update` in `env.dir`, printing each file it changes to `out`.
pub fn run(args: &AlphaUpdateArgs, env: &Env, out: &mut dyn Write) -> Result<(), UpdateError> {
    let recorded = Recorded::read(&env.dir, env)?;
    let from_version = args
        .from_version
        .clone()
        .unwrap_or_else(|| recorded.project.cli_version.clone());
    let from = scaffolder(
        args.from_binary.as_deref(),
        Some(&from_version),
        env,
        ("--from-version", "--from-binary"),
    )?;
    let to = scaffolder(
        args.to_binary.as_deref(),
        Some(args.to_version.as_str()).filter(|v| *v != "current"),
        env,
        ("--to-version", "--to-binary"),
    )?;
    if from == to {
        print(
            out,
            format!(
                "PROJECT was written by kbr {from_version}, the version of this kbr: nothing to update (pass --from-binary PATH to update from another kbr build)"
            ),
        )?;
        return Ok(());
    }
    print(
        out,
        format!("Updating from {} to {}:", from.describe(), to.describe()),
    )?;
    let to_version = match (&args.to_binary, args.to_version.as_str()) {
        (Some(_), _) => None,
        (None, "current") => Some(KBR_VERSION),
        (None, version) => Some(version),
    };
    let changes = update(&recorded, &from, (&to, to_version), &env.dir)?;
    let unresolved = merge::print_changes(&changes, out).map_err(OutputError)?;
    if let Some(path) = missing_runtime(&recorded.project, &env.dir) {
        print(out, missing_runtime_warning(path, &env.dir))?;
    }
    if unresolved.is_empty() {
        print(
            out,
            format!(
                "Updated {} file(s). Next: review the changes, then run make manifests and make test",
                changes.len()
            ),
        )?;
        return Ok(());
    }
    let err = UpdateError::Unresolved {
        count: unresolved.len(),
        files: unresolved.join(", "),
    };
    if args.force_conflicts {
        print(out, format!("--force-conflicts: {err}"))?;
        return Ok(());
    }
    Err(err)
}

/// The kbr of one side: `binary` when given, else this kbr when `version` is its own (or not
/// given), else `version` installed by cargo. `flags` name the version and binary flags.
fn scaffolder(
    binary: Option<&Path>,
    version: Option<&str>,
    env: &Env,
    (version_flag, binary_flag): (&'static str, &'static str),
) -> Result<Scaffolder, UpdateError> {
    Ok(match (binary, version) {
        (Some(binary), _) => Scaffolder::Binary(env.dir.join(binary)),
        (None, None) => Scaffolder::Current,
        (None, Some(version)) if version == KBR_VERSION => Scaffolder::Current,
        (None, Some(version)) => {
            Scaffolder::Binary(install::kbr_binary(version, version_flag, binary_flag)?)
        }
    })
}

/// Renders base and theirs, merges them into the project at `dir` and writes the result; `to`
/// is the new kbr with its version when known (not for `--to-binary`).
fn update(
    recorded: &Recorded,
    from: &Scaffolder,
    (to, to_version): (&Scaffolder, Option<&str>),
    dir: &Path,
) -> Result<Vec<Change>, UpdateError> {
    let epoch = recorded.source_date_epoch.as_deref();
    let base = from.render(&recorded.project, dir, epoch)?;
    let theirs = to.render(&moved_runtime(&recorded.project, to_version), dir, epoch)?;
    Ok(merge::merge_into(dir, &base, &theirs)?)
}

/// `project` as the kbr of `to_version` renders it: a runtime requirement equal to the
/// `cliVersion` that wrote PROJECT (that kbr's default) becomes `to_version`; anything else
/// stays.
fn moved_runtime<'a>(project: &'a Project, to_version: Option<&str>) -> Cow<'a, Project> {
    match (&project.runtime, to_version) {
        (Runtime::Version(pinned), Some(to)) if *pinned == project.cli_version && pinned != to => {
            let mut moved = project.clone();
            moved.runtime = Runtime::Version(to.to_owned());
            Cow::Owned(moved)
        }
        _ => Cow::Borrowed(project),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A project as `kbr init` of `cli_version` writes it, on `runtime`.
    fn project(cli_version: &str, runtime: Runtime) -> Project {
        Project {
            cli_version: cli_version.to_owned(),
            domain: "example.com".into(),
            layout: vec![crate::project::LAYOUT.into()],
            license: Default::default(),
            multicluster: None,
            namespaced: false,
            owner: String::new(),
            project_name: "op".into(),
            resources: Vec::new(),
            runtime,
            sharding: false,
            plugins: crate::project::Plugins::default(),
            version: crate::project::PROJECT_VERSION.into(),
        }
    }

    #[test]
    fn the_default_runtime_moves_with_kbr_and_a_chosen_one_stays() {
        let default = project("0.1.0", Runtime::Version("0.1.0".into()));
        let moved = moved_runtime(&default, Some("0.2.0"));
        assert_eq!(moved.runtime, Runtime::Version("0.2.0".into()));
        assert_eq!(moved_runtime(&default, None).runtime, default.runtime);

        let chosen = project("0.1.0", Runtime::Version("0.1".into()));
        assert_eq!(
            moved_runtime(&chosen, Some("0.2.0")).runtime,
            chosen.runtime
        );
        let path = project("0.1.0", Runtime::Path("../../runtime".into()));
        assert_eq!(moved_runtime(&path, Some("0.2.0")).runtime, path.runtime);
    }
}
