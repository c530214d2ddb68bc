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
//!   `Role` `manager-role` per namespace named by a rule ([`rbac::roles`]) ([`role_yaml`]); each
//!   rule inferred from the wiring is preceded by one `# <origin>` comment per rule merged into
//!   it ([`rbac::normalize_with_origins`]).
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
/// the role file ([`role_yaml`]), with the project's `rules` (the wiring's,
/// [`Manager::rbac_rules`](crate::Manager::rbac_rules), and the markers') plus
/// [`rbac::runtime_rules`]. What [`write()`] writes.
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
    let rules: Vec<Rule> = rules.iter().cloned().chain(rbac::runtime_rules()).collect();
    manifests.push(Manifest {
        path: PathBuf::from(ROLE_FILE),
        content: role_yaml(&rules)?,
    });
    Ok(manifests)
}

/// The role file for `rules`: the `ClusterRole` `manager-role` granting the rules without a
/// namespace (always, `rules: []` when none), then a `Role` `manager-role` per namespace the
/// rules name, rules normalized like controller-gen's. Above each rule, one `# <origin>` line per
/// [`origin`](Rule::origin) merged into it, so a reviewer sees why the manager needs it:
///
/// ```
/// use kbr_runtime::rbac::Rule;
/// let rules = [Rule::new(["get", "list", "watch"]).groups([""]).resources(["configmaps"])
///     .origin("controller web: watches v1 ConfigMap")];
/// let yaml = kbr_runtime::manifests::role_yaml(&rules).unwrap();
/// assert!(yaml.contains("rules:\n# controller web: watches v1 ConfigMap\n- apiGroups:\n  - \"\"\n"));
/// ```
///
/// # Errors
/// [`ManifestsError::Rbac`] for an invalid rule, [`ManifestsError::File`] ([`FileError::Yaml`]).
pub fn role_yaml(rules: &[Rule]) -> Result<String, ManifestsError> {
    role_documents(rules, true)
}

/// The documents of [`role_yaml`]; the `ClusterRole` only when it grants something, unless
/// `always_cluster_role`.
pub(crate) fn role_documents(
    rules: &[Rule],
    always_cluster_role: bool,
) -> Result<String, ManifestsError> {
    let path = Path::new(ROLE_FILE);
    let cluster_rules = rbac::rules_in(rules, None);
    let mut content = String::new();
    if always_cluster_role || !cluster_rules.is_empty() {
        let mut cluster_role = rbac::cluster_role(rbac::MANAGER_ROLE, rules)?;
        cluster_role.rules = None;
        content.push_str(&role_document(path, &cluster_role, &cluster_rules)?);
    }
    for mut role in rbac::roles(rbac::MANAGER_ROLE, rules)? {
        role.rules = None;
        let namespace = role.metadata.namespace.clone();
        let role_rules = rbac::rules_in(rules, namespace.as_deref());
        content.push_str(&role_document(path, &role, &role_rules)?);
    }
    Ok(content)
}

/// One role document: `role` (without its rules) and then its `rules:`, normalized, each after
/// its origin comments. k8s-openapi serializes `rules` last, so appending it keeps the order a
/// serializer writes.
fn role_document<R: Serialize>(path: &Path, role: &R, rules: &[Rule]) -> Result<String, FileError> {
    let mut out = yaml_documents(path, std::slice::from_ref(role))?;
    let normalized = rbac::normalize_with_origins(rules);
    if normalized.is_empty() {
        out.push_str("rules: []\n");
        return Ok(out);
    }
    out.push_str("rules:\n");
    for (rule, origins) in normalized {
        for origin in origins {
            let line = origin.replace(['\n', '\r'], " ");
            out.push_str(&format!("# {line}\n"));
        }
        let yaml = serde_saphyr::to_string(&[rule]).map_err(|source| FileError::Yaml {
            path: path.to_owned(),
            source,
        })?;
        out.push_str(&yaml);
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    Ok(out)
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
