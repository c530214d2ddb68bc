//! `kbr edit`: changes a project-wide setting of `kbr init` (Kubebuilder's `edit`) and
//! re-renders what it affects, keeping the user's edits.
//!
//! The project is rendered from PROJECT twice by this kbr, in scratch directories: as it is
//! (base) and with the new settings (theirs); every file that differs is merged into the
//! project by `kbr alpha update`'s 3-way merge ([`super::merge`]). So only the files the
//! setting affects change (PROJECT, and for `--namespaced` the manager's RBAC and Deployment,
//! for `--runtime-path` and `--runtime-version` the kbr-runtime dependency in `Cargo.toml`,
//! for `--workflows` the CI workflows a project made before kbr wrote them lacks),
//! the user's edits to them are kept, and overlapping edits are left with conflict markers
//! (exit code 1). Either every file is written or none is.

use std::io::Write;

use super::alpha::replay::{ReplayError, Scaffolder};
use super::alpha::{Recorded, missing_runtime, missing_runtime_warning};
use super::merge::{self, Change, Outcome};
use super::runtime::{self, RuntimeError};
use super::{OutputError, ScaffoldError, add_plugins, check_settings, init, print};
use crate::cli::{EditArgs, Env, PluginName};
use crate::grafana;
use crate::plan::{PlanBuilder, PlanError};
use crate::project::Project;

/// `kbr edit` failed (nothing was written), or left files with conflict markers.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// PROJECT could not be read, or the merge could not be written.
    #[error("failed to edit the project: {0}")]
    Scaffold(#[from] ScaffoldError),
    /// Rendering the project before or after the edit failed.
    #[error("failed to edit the project: {0}")]
    Replay(#[from] ReplayError),
    /// `--runtime-path` or `--runtime-version` cannot be used.
    #[error("failed to edit the project: {0}")]
    Runtime(#[from] RuntimeError),
    /// The edit is written, but some files need the user.
    #[error(
        "the edit left {count} file(s) to resolve: {files}; fix them (conflict markers: ours = your project, original = the scaffold before the edit, theirs = after), then run make manifests"
    )]
    Unresolved {
        /// How many.
        count: usize,
        /// The paths, comma-separated.
        files: String,
    },
    /// `grafana/custom-metrics/config.yaml` does not parse.
    #[error("failed to edit the project: {0}")]
    CustomMetrics(#[from] grafana::CustomMetricsError),
    /// Printing what was done failed.
    #[error(transparent)]
    Output(#[from] OutputError),
}

impl From<PlanError> for EditError {
    fn from(err: PlanError) -> Self {
        Self::Scaffold(err.into())
    }
}

/// Runs `kbr edit` in `env.dir`, printing each file it changes to `out`.
pub fn run(args: &EditArgs, env: &Env, out: &mut dyn Write) -> Result<(), EditError> {
    let (after, changes) = edit(args, env)?;
    let unresolved = merge::print_changes(&changes, out).map_err(OutputError)?;
    if let Some(path) = missing_runtime(&after, &env.dir) {
        print(out, missing_runtime_warning(path, &env.dir))?;
    }
    if unresolved.is_empty() {
        print(
            out,
            format!(
                "Edited {} file(s). Next: review the changes, then run make manifests and make test",
                changes.len()
            ),
        )?;
        return Ok(());
    }
    Err(EditError::Unresolved {
        count: unresolved.len(),
        files: unresolved.join(", "),
    })
}

/// Renders the project before and after the edit and merges the difference into it; returns
/// the project as edited and the files changed.
fn edit(args: &EditArgs, env: &Env) -> Result<(Project, Vec<Change>), EditError> {
    let recorded = Recorded::read(&env.dir, env)?;
    let before = &recorded.project;
    let mut after = before.clone();
    if let Some(namespaced) = args.namespaced {
        after.namespaced = namespaced;
    }
    if let Some(name) = &args.multicluster {
        let provider = crate::multicluster::Provider::parse(name).map_err(ScaffoldError::from)?;
        after.multicluster = Some(provider);
    }
    if let Some(sharding) = args.sharding {
        after.sharding = sharding;
    }
    if let Some(license) = args.license {
        after.license = license;
    }
    if let Some(owner) = &args.owner {
        after.owner.clone_from(owner);
    }
    add_plugins(&mut after, &args.plugins);
    let runtime = runtime::from_flags(
        args.runtime_path.as_deref(),
        args.runtime_version.as_deref(),
        &env.dir,
    )?;
    if let Some(runtime) = runtime {
        after.runtime = runtime;
    }
    check_settings(&after)?;
    let epoch = recorded.source_date_epoch.as_deref();
    let mut base = Scaffolder::Current.render(before, &env.dir, epoch)?;
    if args.workflows {
        // As if the project predated the workflows: the merge adds each one it lacks.
        for path in init::WORKFLOWS {
            base.remove(path);
        }
    }
    let theirs = Scaffolder::Current.render(&after, &env.dir, epoch)?;
    let mut plan = PlanBuilder::new(&env.dir);
    let mut changes = merge::plan_merge(&mut plan, &base, &theirs)?;
    if args.plugins.contains(&PluginName::Grafana) {
        changes.extend(plan_custom_dashboard(&mut plan, &after)?);
    }
    plan.finish()?.apply()?;
    Ok((after, changes))
}

/// Plans `grafana/custom-metrics/custom-metrics-dashboard.json` from the project's
/// `grafana/custom-metrics/config.yaml` (as the merge leaves it): one panel per metric it
/// lists; nothing when it lists none or the dashboard is current.
fn plan_custom_dashboard(
    plan: &mut PlanBuilder,
    project: &Project,
) -> Result<Option<Change>, EditError> {
    let config = plan.content(grafana::CUSTOM_CONFIG)?.unwrap_or_default();
    let metrics = grafana::CustomMetrics::parse(&config)?;
    if metrics.custom_metrics.is_empty() {
        return Ok(None);
    }
    let dashboard = grafana::to_file(&grafana::custom_dashboard(&project.project_name, &metrics));
    let outcome = match plan.content(grafana::CUSTOM_DASHBOARD)? {
        Some(current) if current == dashboard => return Ok(None),
        Some(_) => Outcome::Updated,
        None => Outcome::Added,
    };
    plan.put(grafana::CUSTOM_DASHBOARD, dashboard)?;
    Ok(Some(Change {
        path: grafana::CUSTOM_DASHBOARD.to_owned(),
        outcome,
    }))
}
