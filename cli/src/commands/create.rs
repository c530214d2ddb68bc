//! What `kbr create api` and `kbr create webhook` share around their own planning: reading
//! PROJECT from the project directory, recording the resource in it, and writing the plan
//! together with the new PROJECT.

use std::path::Path;

use super::merge::merge_text;
use super::{PROJECT_PATH, ScaffoldError, render_project};
use crate::cli::Env;
use crate::context::{KBR_VERSION, ProjectContext};
use crate::plan::{IfExists, Marker, PlanBuilder};
use crate::project::{Project, ProjectError, Resource};

/// Reads and parses `PROJECT` in `env.dir`.
///
/// Errors: [`ScaffoldError::NoProject`] when the file does not exist,
/// [`ScaffoldError::ReadProject`] on any other I/O error, [`ScaffoldError::Project`] when it does
/// not parse.
///
/// Also refuses a project whose `Cargo.toml` does not parse ([`ScaffoldError::CargoToml`]):
/// kbr would add files to a project that cannot build, and the user would find out only at
/// `cargo build`.
pub fn load_project(env: &Env) -> Result<Project, ScaffoldError> {
    let (project, _) = read_project(&env.dir)?;
    let path = env.dir.join("Cargo.toml");
    let manifest = std::fs::read_to_string(&path).map_err(|source| ScaffoldError::ReadProject {
        path: path.display().to_string(),
        source,
    })?;
    if let Err(err) = manifest.parse::<toml::Table>() {
        return Err(ScaffoldError::CargoToml {
            path: path.display().to_string(),
            message: err.message().to_owned(),
        });
    }
    Ok(project)
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
        Err(err) if err.kind() == std::io::ErrorKind::InvalidData => {
            return Err(ScaffoldError::Project(ProjectError::Parse {
                path: path.display().to_string(),
                message: "the file is not UTF-8 text".to_owned(),
            }));
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
/// either every file is written or none is. Returns [`Plan::report`](crate::plan::Plan::report).
pub fn write_with_project(
    mut plan: PlanBuilder,
    p: &ProjectContext,
    project: &mut Project,
) -> Result<Vec<String>, ScaffoldError> {
    project.cli_version = KBR_VERSION.to_owned();
    plan.put(PROJECT_PATH, render_project(p, project)?)?;
    let plan = plan.finish()?;
    plan.apply()?;
    Ok(plan.report())
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
/// unless it exists, declares the kind's `module` there (`mod <module>;` at the marker `tests`,
/// sorted; [`crate::names::resource::controller_test_module`] and
/// [`webhook_test_module`](crate::names::resource::webhook_test_module) name it), and plans the
/// module's file `<suite>/<file stem>.rs` from `test`, which is the user's to edit
/// ([`plan_own_file`] with `base`); returns whether the user's edits were merged.
pub fn add_test(
    plan: &mut PlanBuilder,
    suite: &str,
    main: impl FnOnce() -> Result<String, askama::Error>,
    module: &str,
    test: String,
    base: Option<&str>,
    force: bool,
) -> Result<bool, ScaffoldError> {
    let main_path = format!("{suite}/main.rs");
    if !plan.exists(&main_path) {
        plan.create(&main_path, main()?, IfExists::Overwrite)?;
    }
    plan.insert_sorted(
        &main_path,
        Marker::rust("tests"),
        &format!("mod {module};\n"),
    )?;
    let file = crate::names::rust::file_stem(module);
    plan_own_file(plan, &format!("{suite}/{file}.rs"), test, base, force)
}

/// Plans `theirs` for one of the resource's own files (kind, controller, webhook, test), which
/// the user may have edited; returns whether the user's edits were merged.
///
/// Without `base` (what kbr rendered for the file before this command), an existing file is
/// overwritten with `--force` and refused without ([`own_file_policy`]). With `base`, the
/// user's edits are never dropped: a file equal to `base` (unedited) or to `theirs` is
/// replaced; an edited one is refused without `--force` and 3-way merged with it (the merge of
/// `kbr alpha update`), and when the user's edits overlap the scaffold's changes
/// [`ScaffoldError::ForceConflict`] stops the command before anything is written.
pub fn plan_own_file(
    plan: &mut PlanBuilder,
    path: &str,
    theirs: String,
    base: Option<&str>,
    force: bool,
) -> Result<bool, ScaffoldError> {
    let Some(base) = base else {
        plan.create(path, theirs, own_file_policy(force))?;
        return Ok(false);
    };
    match plan.content(path)? {
        None => plan.create(path, theirs, IfExists::Overwrite)?,
        Some(ours) if ours == base || ours == theirs => plan.put(path, theirs)?,
        Some(_) if !force => plan.create(
            path,
            theirs,
            IfExists::Error(
                "you edited it: pass --force to merge the new scaffold into your edits",
            ),
        )?,
        Some(ours) => {
            let merged = merge_text(base, &ours, &theirs)
                .map_err(|_| ScaffoldError::ForceConflict { path: path.into() })?;
            plan.put(path, merged)?;
            return Ok(true);
        }
    }
    Ok(false)
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
