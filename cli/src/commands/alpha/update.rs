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
//! Conflicts are written with markers and listed; the command then fails (exit code 1) unless
//! `--force-conflicts`.

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
    let changes = update(&recorded, &from, &to, &env.dir)?;
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

/// Renders base and theirs, merges them into the project at `dir` and writes the result.
fn update(
    recorded: &Recorded,
    from: &Scaffolder,
    to: &Scaffolder,
    dir: &Path,
) -> Result<Vec<Change>, UpdateError> {
    let epoch = recorded.source_date_epoch.as_deref();
    let base = from.render(&recorded.project, dir, epoch)?;
    let theirs = to.render(&recorded.project, dir, epoch)?;
    Ok(merge::merge_into(dir, &base, &theirs)?)
}
