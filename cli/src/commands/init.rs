//! `kbr init`: a new project in the current directory (Kubebuilder's `init`, go/v4 + kustomize).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{PROJECT_PATH, ScaffoldError, project_context, render_project};
use crate::cli::{Env, InitArgs};
use crate::context::{KBR_VERSION, ProjectContext};
use crate::names::{self, NameError};
use crate::plan::{IfExists, PlanBuilder};
use crate::project::{LAYOUT, PROJECT_VERSION, Project, Runtime};
use crate::templates::{self as t, render};

/// Files whose presence means the directory already holds a project.
const MARKER_FILES: &[&str] = &["PROJECT", "Cargo.toml", "src/main.rs"];

/// The runtime source kbr was built from, used as the default `--runtime-path`.
const BUILT_RUNTIME: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../runtime");

/// `kbr init` failed; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// The directory already holds a project.
    #[error(
        "target directory is already initialized: found existing file {file:?}; run kbr init in a new directory or remove the scaffolded files"
    )]
    AlreadyInitialized {
        /// The file found.
        file: &'static str,
    },
    /// The directory has no usable name and `--project-name` was not given.
    #[error("cannot derive a project name from the directory {dir}; pass --project-name")]
    NoDirectoryName {
        /// The directory.
        dir: String,
    },
    /// A name is invalid.
    #[error(transparent)]
    Name(#[from] NameError),
    /// `--runtime-path` does not hold a crate.
    #[error(
        "invalid runtime path {path:?}: {resolved}/Cargo.toml does not exist; pass --runtime-path with the directory of the kbr-runtime crate (relative to the project), or --runtime-version"
    )]
    RuntimePath {
        /// The flag's value.
        path: String,
        /// The directory it resolves to.
        resolved: String,
    },
    /// `--runtime-version` is empty or not a plausible version requirement.
    #[error(
        "invalid runtime version {0:?}: pass a crates.io version requirement, e.g. --runtime-version {KBR_VERSION}"
    )]
    RuntimeVersion(String),
    /// Rendering or writing failed.
    #[error(transparent)]
    Scaffold(#[from] ScaffoldError),
}

impl From<crate::plan::PlanError> for InitError {
    fn from(err: crate::plan::PlanError) -> Self {
        Self::Scaffold(err.into())
    }
}

impl From<askama::Error> for InitError {
    fn from(err: askama::Error) -> Self {
        Self::Scaffold(err.into())
    }
}

/// Runs `kbr init` in `env.dir`, printing the next step to `out`.
pub fn run(args: &InitArgs, env: &Env, out: &mut dyn Write) -> Result<(), crate::Error> {
    plan_and_write(args, env).map_err(crate::Error::Init)?;
    writeln!(
        out,
        "Next: define a resource with:\n$ kbr create api --group <group> --version <version> --kind <Kind>"
    )
    .map_err(crate::Error::Output)
}

/// Validates, plans and writes the project.
fn plan_and_write(args: &InitArgs, env: &Env) -> Result<(), InitError> {
    let dir = &env.dir;
    if let Some(file) = MARKER_FILES.iter().find(|f| dir.join(f).exists()) {
        return Err(InitError::AlreadyInitialized { file });
    }
    names::validate_domain(&args.domain)?;
    let (name, from_dir) = match &args.project_name {
        Some(name) => (name.clone(), false),
        None => (directory_name(dir)?, true),
    };
    names::validate_project_name(&name, from_dir)?;
    let runtime = runtime(args, dir)?;
    let project = Project {
        cli_version: KBR_VERSION.to_owned(),
        domain: args.domain.clone(),
        layout: vec![LAYOUT.to_owned()],
        license: args.license,
        namespaced: args.namespaced,
        owner: args.owner.clone(),
        project_name: name,
        resources: Vec::new(),
        runtime,
        version: PROJECT_VERSION.to_owned(),
    };
    let p = project_context(&project, env)?;
    let mut plan = PlanBuilder::new(dir);
    for (path, content) in files(&p)? {
        plan.create(
            path,
            content,
            IfExists::Error("run kbr init in a new directory or remove it"),
        )?;
    }
    plan.create(
        PROJECT_PATH,
        render_project(&p, &project)?,
        IfExists::Error("run kbr init in a new directory or remove it"),
    )?;
    plan.finish()?.apply()?;
    Ok(())
}

/// The name of `dir`, for the default project name.
fn directory_name(dir: &Path) -> Result<String, InitError> {
    dir.file_name()
        .and_then(|name| name.to_str())
        .map(str::to_owned)
        .ok_or_else(|| InitError::NoDirectoryName {
            dir: dir.display().to_string(),
        })
}

/// The runtime dependency from the flags, or the default.
fn runtime(args: &InitArgs, dir: &Path) -> Result<Runtime, InitError> {
    if let Some(path) = &args.runtime_path {
        let resolved = dir.join(path);
        if !resolved.join("Cargo.toml").is_file() {
            return Err(InitError::RuntimePath {
                path: path.clone(),
                resolved: resolved.display().to_string(),
            });
        }
        return Ok(Runtime::Path(path.clone()));
    }
    if let Some(version) = &args.runtime_version {
        let plausible = !version.is_empty()
            && version
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-+^~=<>*, ".contains(c));
        if !plausible {
            return Err(InitError::RuntimeVersion(version.clone()));
        }
        return Ok(Runtime::Version(version.clone()));
    }
    let built = PathBuf::from(BUILT_RUNTIME);
    match built.canonicalize() {
        Ok(path) if path.join("Cargo.toml").is_file() => {
            Ok(Runtime::Path(path.display().to_string()))
        }
        _ => Ok(Runtime::Version(KBR_VERSION.to_owned())),
    }
}

/// Every file `kbr init` writes besides PROJECT: (path, content).
pub fn files(p: &ProjectContext) -> Result<Vec<(&'static str, String)>, askama::Error> {
    /// Renders each template type with `p`.
    macro_rules! render_all {
        ($($path:literal => $ty:ident),* $(,)?) => {
            vec![$(($path, render(&t::$ty { p })?)),*]
        };
    }
    Ok(render_all![
        "Cargo.toml" => CargoToml,
        "src/main.rs" => MainRs,
        "src/lib.rs" => LibRs,
        "src/api/mod.rs" => ApiModRs,
        "src/controller/mod.rs" => ControllerModRs,
        "src/webhook/mod.rs" => WebhookModRs,
        "src/bin/manifests.rs" => ManifestsRs,
        "Makefile" => Makefile,
        "Dockerfile" => Dockerfile,
        ".dockerignore" => Dockerignore,
        ".gitignore" => Gitignore,
        "README.md" => Readme,
        "config/default/kustomization.yaml" => DefaultKustomization,
        "config/default/metrics_service.yaml" => DefaultMetricsService,
        "config/default/manager_metrics_patch.yaml" => DefaultManagerMetricsPatch,
        "config/default/cert_metrics_manager_patch.yaml" => DefaultCertMetricsPatch,
        "config/manager/kustomization.yaml" => ManagerKustomization,
        "config/manager/manager.yaml" => ManagerYaml,
        "config/rbac/kustomization.yaml" => RbacKustomization,
        "config/rbac/service_account.yaml" => RbacServiceAccount,
        "config/rbac/role.yaml" => RbacRole,
        "config/rbac/role_binding.yaml" => RbacRoleBinding,
        "config/rbac/leader_election_role.yaml" => RbacLeaderElectionRole,
        "config/rbac/leader_election_role_binding.yaml" => RbacLeaderElectionRoleBinding,
        "config/rbac/metrics_auth_role.yaml" => RbacMetricsAuthRole,
        "config/rbac/metrics_auth_role_binding.yaml" => RbacMetricsAuthRoleBinding,
        "config/rbac/metrics_reader_role.yaml" => RbacMetricsReaderRole,
        "config/crd/kustomization.yaml" => CrdKustomization,
        "config/samples/kustomization.yaml" => SamplesKustomization,
        "config/prometheus/kustomization.yaml" => PrometheusKustomization,
        "config/prometheus/monitor.yaml" => PrometheusMonitor,
        "config/prometheus/monitor_tls_patch.yaml" => PrometheusMonitorTlsPatch,
        "config/certmanager/issuer.yaml" => CertManagerIssuer,
        "config/certmanager/certificate-metrics.yaml" => CertManagerMetricsCertificate,
        "config/certmanager/kustomization.yaml" => CertManagerKustomization,
        "config/certmanager/kustomizeconfig.yaml" => CertManagerKustomizeConfig,
        "config/network-policy/kustomization.yaml" => NetworkPolicyKustomization,
        "config/network-policy/allow-metrics-traffic.yaml" => NetworkPolicyAllowMetrics,
    ])
}
