//! Other kbr versions for `kbr alpha update`: `cargo install kbr --version V` into a cache
//! directory, once per version.
//!
//! The cache is `$KBR_CACHE_DIR`, else `$XDG_CACHE_HOME/kbr`, else `$HOME/.cache/kbr`; version V
//! lives in `<cache>/<V>/bin/kbr`. Cargo is `$CARGO` when set (as cargo sets it for the
//! processes it runs), else `cargo` from `PATH`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A kbr version could not be had.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The version is not a version number.
    #[error("invalid {flag} {version:?}: pass a kbr version such as 0.1.0")]
    InvalidVersion {
        /// `--from-version` or `--to-version`.
        flag: &'static str,
        /// The value.
        version: String,
    },
    /// No cache directory can be found.
    #[error(
        "cannot find a cache directory for kbr {version}: set KBR_CACHE_DIR, or pass {binary_flag} PATH with a kbr {version} binary"
    )]
    NoCache {
        /// The version.
        version: String,
        /// `--from-binary` or `--to-binary`.
        binary_flag: &'static str,
    },
    /// `cargo install` failed or could not run.
    #[error(
        "cannot install kbr {version} (`cargo install kbr --version ={version}`: {reason}); pass {binary_flag} PATH with a kbr {version} binary, e.g. built from kbr's source at that version with `cargo build -p kbr`"
    )]
    Cargo {
        /// The version.
        version: String,
        /// Cargo's last error line.
        reason: String,
        /// `--from-binary` or `--to-binary`.
        binary_flag: &'static str,
    },
}

/// The kbr `version` binary, installed with cargo into the cache unless it is there already.
/// `flag` and `binary_flag` name the command-line flags in errors.
///
/// # Errors
///
/// An invalid version, no cache directory, or `cargo install` failing (e.g. crates.io has no
/// such kbr version).
pub fn kbr_binary(
    version: &str,
    flag: &'static str,
    binary_flag: &'static str,
) -> Result<PathBuf, InstallError> {
    let plausible = !version.is_empty()
        && version.starts_with(|c: char| c.is_ascii_digit())
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-+".contains(c));
    if !plausible {
        return Err(InstallError::InvalidVersion {
            flag,
            version: version.to_owned(),
        });
    }
    let cache = cache_dir().ok_or_else(|| InstallError::NoCache {
        version: version.to_owned(),
        binary_flag,
    })?;
    let root = cache.join(version);
    let binary = root.join("bin").join("kbr");
    if binary.is_file() {
        return Ok(binary);
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    install(&cargo, version, &root).map_err(|reason| InstallError::Cargo {
        version: version.to_owned(),
        reason,
        binary_flag,
    })?;
    if binary.is_file() {
        Ok(binary)
    } else {
        Err(InstallError::Cargo {
            version: version.to_owned(),
            reason: format!("it did not install {}", binary.display()),
            binary_flag,
        })
    }
}

/// Runs `cargo install kbr --version =<version> --root <root>`; the error is cargo's last
/// stderr line.
fn install(cargo: &OsString, version: &str, root: &Path) -> Result<(), String> {
    let output = Command::new(cargo)
        .args(["install", "kbr", "--locked", "--quiet", "--version"])
        .arg(format!("={version}"))
        .arg("--root")
        .arg(root)
        .output()
        .map_err(|err| format!("cannot run {}: {err}", cargo.to_string_lossy()))?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    Err(stderr
        .lines()
        .map(str::trim)
        .rfind(|line| !line.is_empty())
        .map_or_else(
            || format!("exit status {}", output.status),
            |line| line.trim_start_matches("error: ").to_owned(),
        ))
}

/// `$KBR_CACHE_DIR`, else `$XDG_CACHE_HOME/kbr`, else `$HOME/.cache/kbr`.
fn cache_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    var("KBR_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| var("XDG_CACHE_HOME").map(|dir| PathBuf::from(dir).join("kbr")))
        .or_else(|| var("HOME").map(|home| PathBuf::from(home).join(".cache").join("kbr")))
}
