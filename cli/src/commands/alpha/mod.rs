//! `kbr alpha`: moving a project to a newer scaffold (Kubebuilder's `alpha generate` and
//! `alpha update`).
//!
//! PROJECT records every scaffold command with its flags, so the project can be rendered again
//! from it ([`replay`]): by this kbr ([`generate`]), or by an older kbr and this one, whose
//! renders are the base and theirs of a 3-way merge with the user's files ([`update`],
//! [`crate::commands::merge`]). Older versions come from `cargo install` ([`install`]) or a binary the user names.

pub mod generate;
pub mod install;
pub mod replay;
mod scratch;
pub mod update;

pub use scratch::{missing_runtime, missing_runtime_warning};

use std::path::Path;

use super::ScaffoldError;
use super::create::read_project;
use crate::cli::Env;
use crate::license;
use crate::project::Project;

/// A project as PROJECT records it, and the `SOURCE_DATE_EPOCH` that renders it again with the
/// copyright year of its license headers.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The parsed PROJECT.
    pub project: Project,
    /// January 1st of PROJECT's copyright year, else `env`'s `SOURCE_DATE_EPOCH` (a project
    /// with `--license none` has no year to keep).
    pub source_date_epoch: Option<String>,
}

impl Recorded {
    /// Reads PROJECT in the project directory `dir`.
    ///
    /// # Errors
    ///
    /// No PROJECT in `dir`, or one that cannot be read or parsed.
    pub fn read(dir: &Path, env: &Env) -> Result<Self, ScaffoldError> {
        let (project, text) = read_project(dir)?;
        let source_date_epoch = license::header_year(&text)
            .map(|year| license::start_of_year(year).to_string())
            .or_else(|| env.source_date_epoch.clone());
        Ok(Self {
            project,
            source_date_epoch,
        })
    }
}
