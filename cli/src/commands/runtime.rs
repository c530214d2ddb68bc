//! The kbr-runtime dependency from `--runtime-path` or `--runtime-version`, checked before it is
//! recorded (`kbr init`, `kbr edit`).

use std::path::Path;

use crate::context::KBR_VERSION;
use crate::project::Runtime;

/// `--runtime-path` or `--runtime-version` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// `--runtime-path` does not hold a crate.
    #[error(
        "invalid runtime path {path:?}: {resolved}/Cargo.toml does not exist; pass --runtime-path with the directory of the kbr-runtime crate (relative to the project), or --runtime-version"
    )]
    Path {
        /// The flag's value.
        path: String,
        /// The directory it resolves to.
        resolved: String,
    },
    /// `--runtime-path` holds kbr-runtime but no kbr-testing beside it.
    #[error(
        "invalid runtime path {path:?}: the tests need kbr-testing beside kbr-runtime, but {resolved}/Cargo.toml does not exist; pass --runtime-path with the runtime directory of a kbr checkout (it has testing/ beside runtime/), or --runtime-version"
    )]
    Testing {
        /// The flag's value.
        path: String,
        /// Where kbr-testing was looked for.
        resolved: String,
    },
    /// `--runtime-version` is not a Cargo version requirement.
    #[error(
        "invalid runtime version {0:?}: pass a crates.io version requirement, e.g. --runtime-version {KBR_VERSION}"
    )]
    Version(String),
}

/// The runtime `--runtime-path path` (relative to the project directory `dir`) or
/// `--runtime-version version` names; `None` when neither is given.
///
/// # Errors
///
/// [`RuntimeError::Path`] when `<dir>/<path>/Cargo.toml` is not a file,
/// [`RuntimeError::Version`] when `version` is not a Cargo version requirement.
pub fn from_flags(
    path: Option<&str>,
    version: Option<&str>,
    dir: &Path,
) -> Result<Option<Runtime>, RuntimeError> {
    if let Some(path) = path {
        let resolved = dir.join(path);
        if !resolved.join("Cargo.toml").is_file() {
            return Err(RuntimeError::Path {
                path: path.to_owned(),
                resolved: resolved.display().to_string(),
            });
        }
        let runtime = Runtime::Path(path.to_owned());
        if let Some(testing) = runtime.testing_path() {
            let resolved = dir.join(testing);
            if !resolved.join("Cargo.toml").is_file() {
                return Err(RuntimeError::Testing {
                    path: path.to_owned(),
                    resolved: resolved.display().to_string(),
                });
            }
        }
        return Ok(Some(runtime));
    }
    if let Some(version) = version {
        // Cargo's own grammar for a dependency's `version = "..."` (a bare `0.1.0` means
        // `^0.1.0`).
        if version.trim().is_empty() || semver::VersionReq::parse(version).is_err() {
            return Err(RuntimeError::Version(version.to_owned()));
        }
        return Ok(Some(Runtime::Version(version.to_owned())));
    }
    Ok(None)
}
