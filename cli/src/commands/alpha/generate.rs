//! `kbr alpha generate`: the whole project rendered again from its PROJECT file by this kbr,
//! then `make manifests` (Kubebuilder's `alpha generate`).
//!
//! Unlike Kubebuilder, which empties the directory first when it generates in place, kbr only
//! writes the files the scaffold renders: the user's own files, build output and generated
//! manifests stay. Scaffolded files are overwritten, edits to them included: to keep edits, use
//! `kbr alpha update`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::replay::{ReplayError, Scaffolder};
use super::{Recorded, missing_runtime, missing_runtime_warning};
use crate::cli::{AlphaGenerateArgs, Env};
use crate::commands::merge::Tree;
use crate::commands::{OutputError, ScaffoldError, print};
use crate::context::KBR_VERSION;
use crate::plan::{PlanBuilder, PlanError};
use crate::project::Project;

/// `kbr alpha generate` failed. Displayed after `failed to generate the project: `.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// `--input-dir` does not exist.
    #[error("cannot read --input-dir {dir}: {source}; pass the directory holding PROJECT")]
    InputDir {
        /// The directory.
        dir: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The output directory could not be created.
    #[error("cannot create --output-dir {dir}: {source}")]
    OutputDir {
        /// The directory.
        dir: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// PROJECT could not be read.
    #[error(transparent)]
    Scaffold(#[from] ScaffoldError),
    /// Replaying PROJECT failed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// `make manifests` failed or could not run.
    #[error(
        "the project was generated in {dir}, but make manifests failed ({reason}); fix the build and run make manifests, or pass --no-manifests"
    )]
    Manifests {
        /// The output directory.
        dir: String,
        /// The exit status or why make could not run.
        reason: String,
    },
    /// Printing what was done failed.
    #[error(transparent)]
    Output(#[from] OutputError),
}

impl From<PlanError> for GenerateError {
    fn from(err: PlanError) -> Self {
        Self::Scaffold(err.into())
    }
}

/// Runs `kbr alpha generate`, printing what it did to `out`.
///
/// A project whose relative kbr-runtime path holds no crate seen from the output directory (it
/// moved) is rendered all the same, with a warning, and `make manifests` (which builds it) is
/// left for after the path is fixed.
pub fn run(args: &AlphaGenerateArgs, env: &Env, out: &mut dyn Write) -> Result<(), GenerateError> {
    let (output, files, changed, project) = generate(args, env)?;
    print(
        out,
        format!(
            "Generated {files} files in {} from PROJECT with kbr {KBR_VERSION} ({changed} written).",
            output.display()
        ),
    )?;
    let missing = missing_runtime(&project, &output);
    if let Some(path) = missing {
        print(out, missing_runtime_warning(path, &output))?;
    }
    if args.no_manifests || missing.is_some() {
        print(out, "Next: generate the manifests with:\n$ make manifests")?;
        return Ok(());
    }
    make_manifests(&output)
}

/// Renders and writes the project; returns the output directory, the number of files rendered,
/// the number written (the others were already as rendered) and the project.
fn generate(
    args: &AlphaGenerateArgs,
    env: &Env,
) -> Result<(PathBuf, usize, usize, Project), GenerateError> {
    let input = match &args.input_dir {
        Some(dir) => {
            let dir = env.dir.join(dir);
            dir.canonicalize()
                .map_err(|source| GenerateError::InputDir {
                    dir: dir.display().to_string(),
                    source,
                })?
        }
        None => env.dir.clone(),
    };
    let output = args
        .output_dir
        .as_ref()
        .map_or_else(|| input.clone(), |dir| env.dir.join(dir));
    let recorded = Recorded::read(&input, env)?;
    let tree = Scaffolder::Current.render(
        &recorded.project,
        &input,
        recorded.source_date_epoch.as_deref(),
    )?;

    let created = !output.exists();
    let output = std::fs::create_dir_all(&output)
        .and_then(|()| output.canonicalize())
        .map_err(|source| GenerateError::OutputDir {
            dir: output.display().to_string(),
            source,
        })?;
    let written = write(&output, &tree);
    if written.is_err() && created {
        // Best effort: the plan removed what it wrote, so the directory is empty.
        let _ = std::fs::remove_dir(&output);
    }
    Ok((output, tree.len(), written?, recorded.project))
}

/// Writes `tree` into `dir` through one plan; returns the number of files written.
fn write(dir: &Path, tree: &Tree) -> Result<usize, GenerateError> {
    let mut plan = PlanBuilder::new(dir);
    for (path, content) in tree {
        plan.put(path, content.clone())?;
    }
    let plan = plan.finish()?;
    plan.apply()?;
    Ok(plan.files().len())
}

/// Runs `make manifests` in `dir`, its output going to this process's.
fn make_manifests(dir: &Path) -> Result<(), GenerateError> {
    let failed = |reason: String| GenerateError::Manifests {
        dir: dir.display().to_string(),
        reason,
    };
    let status = Command::new("make")
        .args(["--no-print-directory", "manifests"])
        .current_dir(dir)
        .status()
        .map_err(|err| failed(format!("cannot run make: {err}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(failed(status.to_string()))
    }
}
