//! `make manifests`: the project's CRDs and RBAC role as YAML under `config/`.
//!
//! Kubebuilder runs `controller-gen rbac:roleName=manager-role crd webhook paths="./..."
//! output:crd:artifacts:config=config/crd/bases`; a kbr project runs `cargo run --bin
//! manifests -- config`, whose `main` calls [`write()`] with the project's
//! [`Scheme`] and [`Rule`]s. Output, relative to the config directory:
//!
//! - `crd/bases/<group>_<plural>.yaml` per kind, all versions merged ([`Scheme::crds`]), e.g.
//!   `crd/bases/eventing.knative.dev_brokers.yaml`;
//! - `rbac/role.yaml`: the `ClusterRole` `manager-role` ([`rbac::cluster_role`]) followed by a
//!   `Role` `manager-role` per namespace named by a rule ([`rbac::roles`]).
//!
//! Each document starts with a `---` line, like controller-gen's. Output is deterministic (typed
//! objects, sorted maps, sorted rules), and a file is only rewritten when its content changes,
//! so re-running `make manifests` leaves timestamps and `git status` alone. CRD files in
//! `crd/bases` for kinds no longer in the Scheme are left in place and reported as stale.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::rbac::{self, RbacError, Rule};
use crate::scheme::{Scheme, SchemeError};

/// Where CRDs go, relative to the config directory.
pub const CRD_DIR: &str = "crd/bases";
/// Where the RBAC role goes, relative to the config directory.
pub const ROLE_FILE: &str = "rbac/role.yaml";

/// One file of output: a path relative to the config directory and its YAML.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// Relative path, e.g. `crd/bases/eventing.knative.dev_brokers.yaml`.
    pub path: PathBuf,
    /// The YAML text, starting with `---\n`, ending with a newline.
    pub content: String,
}

/// What [`write()`] did; every path includes the config directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Files created or changed.
    pub written: Vec<PathBuf>,
    /// Files whose content was already up to date (not touched).
    pub unchanged: Vec<PathBuf>,
    /// `*.yaml` files in `crd/bases` that no registered kind produces (left in place).
    pub stale: Vec<PathBuf>,
}

/// One line per file: `wrote <path>`, `unchanged <path>`, or `stale <path> (no kind produces
/// it any more; delete it if the kind is gone)`, for `make manifests` to print.
impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for path in &self.written {
            writeln!(f, "wrote {}", path.display())?;
        }
        for path in &self.unchanged {
            writeln!(f, "unchanged {}", path.display())?;
        }
        for path in &self.stale {
            writeln!(
                f,
                "stale {} (no kind produces it any more; delete it if the kind is gone)",
                path.display()
            )?;
        }
        Ok(())
    }
}

/// Why manifests could not be rendered or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestsError {
    /// The Scheme's CRDs could not be built.
    #[error("cannot build the CRDs: {0}")]
    Crds(#[from] SchemeError),
    /// The RBAC rules are invalid.
    #[error("cannot build the RBAC role: {0}")]
    Rbac(#[from] RbacError),
    /// A manifest could not be serialized or its file read, written or listed.
    #[error(transparent)]
    File(#[from] FileError),
}

/// Why a manifest could not be serialized to YAML, or a file read or written: shared by
/// [`ManifestsError`] and [`WebhookError`](crate::webhook::WebhookError) (one pair of variants
/// for the YAML and file helpers both use).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// An object could not be serialized to YAML.
    #[error("cannot serialize {path} to YAML: {source}")]
    Yaml {
        /// The file it was meant for.
        path: PathBuf,
        /// The serializer's error.
        #[source]
        source: serde_saphyr::SerializeError,
    },
    /// Reading, creating or replacing a file or directory failed.
    #[error("cannot {action} {path}: {source}")]
    Io {
        /// What was being done: `read`, `write`, `create directory`, `list`.
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
}

/// `objects` as YAML documents for `path` (named in errors): each starts with a `---` line and
/// ends with a newline, like controller-gen's output.
pub(crate) fn yaml_documents<T: Serialize>(
    path: &Path,
    objects: &[T],
) -> Result<String, FileError> {
    let mut out = String::new();
    for object in objects {
        let yaml = serde_saphyr::to_string(object).map_err(|source| FileError::Yaml {
            path: path.to_owned(),
            source,
        })?;
        out.push_str("---\n");
        out.push_str(&yaml);
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    Ok(out)
}

/// File name of a CRD: `<group>_<plural>.yaml`, as controller-gen names it.
pub fn crd_file_name(group: &str, plural: &str) -> String {
    format!("{group}_{plural}.yaml")
}

/// Renders every manifest without touching the disk: one per CRD (sorted by CRD name), then
/// the role file, with the project's `rules` plus [`rbac::runtime_rules`]. What [`write()`] writes.
///
/// # Errors
/// [`ManifestsError::Crds`], [`ManifestsError::Rbac`] or [`ManifestsError::File`] ([`FileError::Yaml`]).
pub fn render(scheme: &Scheme, rules: &[Rule]) -> Result<Vec<Manifest>, ManifestsError> {
    let mut manifests = Vec::new();
    for crd in scheme.crds()? {
        let path = Path::new(CRD_DIR).join(crd_file_name(&crd.spec.group, &crd.spec.names.plural));
        let content = yaml_documents(&path, std::slice::from_ref(&crd))?;
        manifests.push(Manifest { path, content });
    }
    let path = PathBuf::from(ROLE_FILE);
    let rules: Vec<Rule> = rules.iter().cloned().chain(rbac::runtime_rules()).collect();
    let cluster_role = rbac::cluster_role(rbac::MANAGER_ROLE, &rules)?;
    let mut content = yaml_documents(&path, &[cluster_role])?;
    content.push_str(&yaml_documents(
        &path,
        &rbac::roles(rbac::MANAGER_ROLE, &rules)?,
    )?);
    manifests.push(Manifest { path, content });
    Ok(manifests)
}

/// Writes the CRDs and the RBAC role under `config_dir` (see the module docs for the layout),
/// creating directories as needed and leaving files whose content is unchanged untouched.
/// Files are replaced atomically (written next to the target, then renamed).
///
/// # Errors
/// The errors of [`render`], or [`ManifestsError::File`] ([`FileError::Io`]) naming the path
/// that could not be read, written or listed.
pub fn write(scheme: &Scheme, rules: &[Rule], config_dir: &Path) -> Result<Report, ManifestsError> {
    let manifests = render(scheme, rules)?;
    let mut report = Report::default();
    for manifest in &manifests {
        let path = config_dir.join(&manifest.path);
        if write_if_changed(&path, &manifest.content)? {
            tracing::info!(path = %path.display(), "wrote manifest");
            report.written.push(path);
        } else {
            tracing::debug!(path = %path.display(), "manifest unchanged");
            report.unchanged.push(path);
        }
    }
    let crd_dir = config_dir.join(CRD_DIR);
    let expected: Vec<PathBuf> = manifests.iter().map(|m| config_dir.join(&m.path)).collect();
    let entries = match fs::read_dir(&crd_dir) {
        Ok(entries) => entries,
        // No kinds yet and never any CRD written: nothing can be stale.
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(report),
        Err(error) => return Err(io_error("list", &crd_dir)(error).into()),
    };
    for entry in entries {
        let path = entry.map_err(io_error("list", &crd_dir))?.path();
        let is_yaml = path.extension().is_some_and(|ext| ext == "yaml");
        if is_yaml && path.is_file() && !expected.contains(&path) {
            tracing::warn!(path = %path.display(), "stale CRD: no registered kind produces it");
            report.stale.push(path);
        }
    }
    report.stale.sort();
    Ok(report)
}

pub(crate) fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> FileError {
    let path = path.to_owned();
    move |source| FileError::Io {
        action,
        path,
        source,
    }
}

/// Writes `content` to `path` unless it already holds exactly that; `true` if written.
/// Creates the parent directories, and replaces the file atomically (written to a temporary
/// file next to it, then renamed), so an interrupted run never leaves half a file.
pub(crate) fn write_if_changed(path: &Path, content: &str) -> Result<bool, FileError> {
    match fs::read(path) {
        Ok(existing) if existing == content.as_bytes() => return Ok(false),
        Ok(_) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => {}
        Err(error) => return Err(io_error("read", path)(error)),
    }
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(io_error("create directory", dir))?;
    }
    let file_name = path
        .file_name()
        .map(|name| name.to_string_lossy())
        .unwrap_or_default();
    let temporary = path.with_file_name(format!(".{file_name}.{}.tmp", std::process::id()));
    fs::write(&temporary, content).map_err(io_error("write", &temporary))?;
    if let Err(error) = fs::rename(&temporary, path) {
        let _ = fs::remove_file(&temporary);
        return Err(io_error("write", path)(error));
    }
    Ok(true)
}
