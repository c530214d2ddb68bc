//! What `kbr create api` and `kbr create webhook` share around their own planning: reading
//! PROJECT from the project directory, recording the resource in it, and writing the plan
//! together with the new PROJECT.

use std::path::Path;

use super::{PROJECT_PATH, ScaffoldError, render_project};
use crate::cli::Env;
use crate::context::{KBR_VERSION, ProjectContext, ResourceContext};
use crate::plan::{IfExists, Marker, PlanBuilder};
use crate::project::{Project, Resource};

/// Reads and parses `PROJECT` in `env.dir`.
///
/// Errors: [`ScaffoldError::NoProject`] when the file does not exist,
/// [`ScaffoldError::ReadProject`] on any other I/O error, [`ScaffoldError::Project`] when it does
/// not parse.
pub fn load_project(env: &Env) -> Result<Project, ScaffoldError> {
    read_project(&env.dir).map(|(project, _)| project)
}

/// Reads and parses `PROJECT` in the project directory `dir`; returns the project and the
/// file's text. Errors as [`load_project`].
pub fn read_project(dir: &Path) -> Result<(Project, String), ScaffoldError> {
    let path = dir.join(PROJECT_PATH);
    let yaml = match std::fs::read_to_string(&path) {
        Ok(yaml) => yaml,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Err(ScaffoldError::NoProject {
                dir: dir.display().to_string(),
            });
        }
        Err(source) => {
            return Err(ScaffoldError::ReadProject {
                path: path.display().to_string(),
                source,
            });
        }
    };
    let project = Project::parse(&yaml, &path.display().to_string())?;
    Ok((project, yaml))
}

/// Replaces the entry of `project` with the same group, version and kind as `resource`, or
/// appends `resource` when there is none.
pub fn upsert_resource(project: &mut Project, resource: Resource) {
    match project.resources.iter_mut().find(|existing| {
        existing.group == resource.group
            && existing.version == resource.version
            && existing.kind == resource.kind
    }) {
        Some(existing) => *existing = resource,
        None => project.resources.push(resource),
    }
}

/// Stamps `project` with this kbr's version, adds PROJECT to `plan`, and applies the plan:
/// either every file is written or none is.
pub fn write_with_project(
    mut plan: PlanBuilder,
    p: &ProjectContext,
    project: &mut Project,
) -> Result<(), ScaffoldError> {
    project.cli_version = KBR_VERSION.to_owned();
    plan.put(PROJECT_PATH, render_project(p, project)?)?;
    plan.finish()?.apply()?;
    Ok(())
}

/// Declares the module `child` (a `mod.rs` path) in its parent: inserts `declaration` at the
/// Rust marker `marker` of `parent`, keeping the declarations sorted, then creates `child` from
/// `content` unless it exists (the user may have edited it; `content` is only rendered then).
pub fn add_module(
    plan: &mut PlanBuilder,
    parent: &str,
    marker: &'static str,
    declaration: &str,
    child: &str,
    content: impl FnOnce() -> Result<String, askama::Error>,
) -> Result<(), ScaffoldError> {
    plan.insert_sorted(parent, Marker::rust(marker), declaration)?;
    if !plan.exists(child) {
        plan.create(child, content()?, IfExists::Overwrite)?;
    }
    Ok(())
}

/// Adds a kind's tests to the test suite in the directory `suite` (`tests/controller`,
/// `tests/webhook`), one test binary for all kinds: creates `<suite>/main.rs` from `main`
/// unless it exists, declares the kind's module there (`declaration`, at the marker `tests`,
/// sorted), and creates the module's file `<suite>/<module>.rs` from `test`, which is the
/// user's to edit ([`own_file_policy`]).
pub fn add_test(
    plan: &mut PlanBuilder,
    suite: &str,
    main: impl FnOnce() -> Result<String, askama::Error>,
    (module, declaration): (&str, &str),
    test: String,
    force: bool,
) -> Result<(), ScaffoldError> {
    let main_path = format!("{suite}/main.rs");
    if !plan.exists(&main_path) {
        plan.create(&main_path, main()?, IfExists::Overwrite)?;
    }
    plan.insert_sorted(&main_path, Marker::rust("tests"), declaration)?;
    let file = crate::names::rust::file_stem(module);
    plan.create(&format!("{suite}/{file}.rs"), test, own_file_policy(force))?;
    Ok(())
}

/// The module of a kind in a test suite (`tests/controller/`, `tests/webhook/`): the kind's
/// module name (`broker`, `r#match`, `crate_`), or `qualified` when `clash` (another resource
/// of the suite has a kind of the same snake_case name) or when the kind's module would be the
/// suite's root, `main`.
pub fn suite_module(r: &ResourceContext, clash: bool, qualified: String) -> String {
    if clash || r.kind_module == "main" {
        qualified
    } else {
        r.kind_module.clone()
    }
}

/// What to do when one of the resource's own files (kind, controller, webhook, test) exists:
/// overwrite with `--force`, else fail.
pub fn own_file_policy(force: bool) -> IfExists {
    if force {
        IfExists::Overwrite
    } else {
        IfExists::Error("pass --force to overwrite it")
    }
}
