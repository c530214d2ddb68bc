//! `kbr init`: a new project in the current directory (Kubebuilder's `init`, go/v4 + kustomize).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::runtime::{self, RuntimeError};
use super::{
    OutputError, PROJECT_PATH, ScaffoldError, add_plugins, check_settings, print, project_context,
    render_project,
};
use crate::cli::{Env, InitArgs};
use crate::context::{KBR_VERSION, ProjectContext};
use crate::grafana;
use crate::names::{self, NameError};
use crate::plan::{IfExists, PlanBuilder};
use crate::project::{LAYOUT, PROJECT_VERSION, Plugins, Project, Runtime};
use crate::templates::{self as t, render};

/// Files whose presence means the directory already holds a project.
const MARKER_FILES: &[&str] = &["PROJECT", "Cargo.toml", "src/main.rs"];

/// Scaffolded files that an otherwise empty directory may hold already; the user's are kept.
const USERS_IF_PRESENT: &[&str] = &[
    ".gitignore",
    ".dockerignore",
    "README.md",
    WORKFLOWS[0],
    WORKFLOWS[1],
    WORKFLOWS[2],
];

/// The CI workflows every project gets (Kubebuilder's go/v4 `.github/workflows`): lint, test on
/// envtest, end-to-end on kind. `kbr edit --workflows` adds the missing ones to a project made
/// before kbr wrote them.
pub const WORKFLOWS: [&str; 3] = [
    ".github/workflows/lint.yml",
    ".github/workflows/test.yml",
    ".github/workflows/test-e2e.yml",
];

/// The runtime source kbr was built from, used as the default `--runtime-path` when kbr was
/// built from a checkout (kbr-testing beside it); a kbr built from its package (`cargo install
/// kbr`) has none, and projects get the crates.io release of its own version.
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
    /// The directory holds a file kbr would scaffold around.
    #[error(
        "target directory is not empty: found {file:?}; run kbr init in an empty directory (only hidden files, *.md files and capitalized files such as LICENSE may be there)"
    )]
    NotEmpty {
        /// The file found, relative to the directory.
        file: String,
    },
    /// The directory holds a Go project (Kubebuilder's own layout).
    #[error(
        "target directory holds a Go project: found {file:?}; kbr scaffolds a Rust project, run kbr init in a new directory"
    )]
    GoProject {
        /// The Go file found, relative to the directory.
        file: String,
    },
    /// The directory could not be read.
    #[error("cannot read {dir}: {source}")]
    ReadDir {
        /// The directory.
        dir: String,
        /// The I/O error.
        source: std::io::Error,
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
    /// `--runtime-path` or `--runtime-version` cannot be used.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// Rendering or writing failed.
    #[error(transparent)]
    Scaffold(#[from] ScaffoldError),
    /// The project was written, but printing what was done failed.
    #[error(transparent)]
    Output(#[from] OutputError),
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
pub fn run(args: &InitArgs, env: &Env, out: &mut dyn Write) -> Result<(), InitError> {
    for line in plan_and_write(args, env)? {
        print(out, line)?;
    }
    print(
        out,
        "Next: define a resource with:\n$ kbr create api --group <group> --version <version> --kind <Kind>",
    )?;
    Ok(())
}

/// Validates, plans and writes the project; returns [`crate::plan::Plan::report`].
fn plan_and_write(args: &InitArgs, env: &Env) -> Result<Vec<String>, InitError> {
    let dir = &env.dir;
    if let Some(file) = MARKER_FILES.iter().find(|f| dir.join(f).exists()) {
        return Err(InitError::AlreadyInitialized { file });
    }
    if let Some(file) = first_disallowed_file(dir, dir)? {
        let go = file == "go.mod" || file == "go.sum" || file.ends_with(".go");
        return Err(if go {
            InitError::GoProject { file }
        } else {
            InitError::NotEmpty { file }
        });
    }
    names::validate_domain(&args.domain)?;
    let (name, from_dir) = match &args.project_name {
        Some(name) => (name.clone(), false),
        None => (directory_name(dir)?, true),
    };
    names::validate_project_name(&name, from_dir)?;
    let runtime = runtime(args, dir)?;
    let multicluster = args
        .multicluster
        .as_deref()
        .map(crate::multicluster::Provider::parse)
        .transpose()
        .map_err(ScaffoldError::from)?;
    let project = Project {
        cli_version: KBR_VERSION.to_owned(),
        domain: args.domain.clone(),
        layout: vec![LAYOUT.to_owned()],
        license: args.license,
        multicluster,
        namespaced: args.namespaced,
        owner: args.owner.clone(),
        plugins: Plugins::default(),
        project_name: name,
        resources: Vec::new(),
        runtime,
        sharding: args.sharding,
        version: PROJECT_VERSION.to_owned(),
    };
    let mut project = project;
    add_plugins(&mut project, &args.plugins);
    check_settings(&project)?;
    let p = project_context(&project, env)?;
    let mut plan = PlanBuilder::new(dir);
    for (path, content) in files(&p)? {
        // A `.gitignore`, `.dockerignore`, `README.md` or CI workflow the directory may hold
        // already (see `first_disallowed_file`) is the user's: kept as it is.
        if USERS_IF_PRESENT.contains(&path) && dir.join(path).is_file() {
            continue;
        }
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
    let plan = plan.finish()?;
    plan.apply()?;
    Ok(plan.report())
}

/// The first file under `dir` (depth first, sorted) that `kbr init` must not scaffold around,
/// relative to `root`.
///
/// Kubebuilder's `init` refuses the same (`pkg/plugins/golang/v4/init.go`, `checkDir`): hidden
/// files and directories (`.git/`, `.gitignore`), Markdown files and all-capital names such as
/// `LICENSE` may be there, anything else would be scaffolded around and may clash. Unlike
/// Kubebuilder, `go.mod` is not allowed: kbr scaffolds a Rust project.
fn first_disallowed_file(root: &Path, dir: &Path) -> Result<Option<String>, InitError> {
    let read_error = |source| InitError::ReadDir {
        dir: dir.display().to_string(),
        source,
    };
    let mut entries = std::fs::read_dir(dir)
        .map_err(read_error)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(read_error)?;
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            if let Some(file) = first_disallowed_file(root, &path)? {
                return Ok(Some(file));
            }
            continue;
        }
        let capitalized =
            name.chars().any(char::is_uppercase) && name.chars().all(|c| !c.is_lowercase());
        if name.ends_with(".md") || (capitalized && name != "PROJECT") {
            continue;
        }
        let relative = path.strip_prefix(root).unwrap_or(&path);
        return Ok(Some(relative.display().to_string()));
    }
    Ok(None)
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
    let flags = runtime::from_flags(
        args.runtime_path.as_deref(),
        args.runtime_version.as_deref(),
        dir,
    )?;
    if let Some(runtime) = flags {
        return Ok(runtime);
    }
    let built = PathBuf::from(BUILT_RUNTIME);
    match (built.canonicalize(), dir.canonicalize()) {
        (Ok(path), Ok(dir))
            if path.join("Cargo.toml").is_file()
                && path.join("../testing/Cargo.toml").is_file() =>
        {
            Ok(Runtime::Path(relative_path(&dir, &path)))
        }
        _ => Ok(Runtime::Version(KBR_VERSION.to_owned())),
    }
}

/// `to` relative to the directory `from` (both absolute and canonical), with `/` separators:
/// the project and the kbr checkout can move together and the path dependency still resolves.
fn relative_path(from: &Path, to: &Path) -> String {
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let ups = std::iter::repeat_n("..".to_owned(), from.len() - common);
    let downs = to[common..]
        .iter()
        .map(|c| c.as_os_str().to_string_lossy().into_owned());
    let parts: Vec<String> = ups.chain(downs).collect();
    if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

/// Every file `kbr init` writes besides PROJECT: (path, content); with `--sharding`, the shard
/// Lease role and its binding too; with `--multicluster`, what each member cluster needs
/// (`config/member`) and the suite's registration of a member (`tests/e2e/member.rs`), and the
/// cluster provider's role unless it reads files; with the autoupdate plugin its workflow; with the grafana
/// plugin the runtime dashboard and the custom-metrics configuration.
pub fn files(p: &ProjectContext) -> Result<Vec<(&'static str, String)>, askama::Error> {
    /// Renders each template type with `p`.
    macro_rules! render_all {
        ($($path:literal => $ty:ident),* $(,)?) => {
            vec![$(($path, render(&t::$ty { p })?)),*]
        };
    }
    let mut files = render_all![
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
        "tests/e2e/main.rs" => E2eMain,
        "tests/e2e/checks.rs" => E2eChecks,
        "tests/e2e/cluster.rs" => E2eCluster,
        "tests/e2e/manifests.rs" => E2eManifests,
        "tests/e2e/metrics.rs" => E2eMetrics,
        "tests/e2e/process.rs" => E2eProcess,
        ".github/workflows/lint.yml" => WorkflowLint,
        ".github/workflows/test.yml" => WorkflowTest,
        ".github/workflows/test-e2e.yml" => WorkflowTestE2e,
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
    ];
    if p.sharding {
        files.extend(render_all![
            "config/rbac/shard_lease_role.yaml" => RbacShardLeaseRole,
            "config/rbac/shard_lease_role_binding.yaml" => RbacShardLeaseRoleBinding,
        ]);
    }
    if p.multicluster {
        files.extend(render_all![
            "config/member/kustomization.yaml" => MemberKustomization,
            "config/member/namespace.yaml" => MemberNamespace,
            "config/member/service_account.yaml" => MemberServiceAccount,
            "config/member/role.yaml" => RbacRole,
            "config/member/role_binding.yaml" => MemberRoleBinding,
            "tests/e2e/member.rs" => E2eMember,
        ]);
    }
    if p.kubeconfig_secrets_provider || p.capi_provider {
        files.extend(render_all![
            "config/rbac/provider_role.yaml" => RbacProviderRole,
            "config/rbac/provider_role_binding.yaml" => RbacProviderRoleBinding,
        ]);
    }
    if p.autoupdate {
        files.extend(render_all![
            ".github/workflows/auto_update.yml" => WorkflowAutoUpdate,
        ]);
    }
    if p.grafana {
        let dashboard = grafana::runtime_dashboard(&p.project_name);
        files.push((grafana::RUNTIME_DASHBOARD, grafana::to_file(&dashboard)));
        files.extend(render_all![
            "grafana/custom-metrics/config.yaml" => GrafanaCustomConfig,
            "tests/e2e/grafana.rs" => E2eGrafana,
        ]);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::relative_path;
    use std::path::Path;

    #[test]
    fn relative_paths_climb_to_the_common_ancestor() {
        let cases = [
            (
                "/tmp/x/op",
                "/work/kbr/runtime",
                "../../../work/kbr/runtime",
            ),
            ("/work/kbr/testdata/p", "/work/kbr/runtime", "../../runtime"),
            ("/work/kbr", "/work/kbr/runtime", "runtime"),
            ("/work/kbr/runtime", "/work/kbr/runtime", "."),
        ];
        for (from, to, want) in cases {
            assert_eq!(
                relative_path(Path::new(from), Path::new(to)),
                want,
                "{from} -> {to}"
            );
        }
    }
}
