//! `kbr create api`: an API type, its controller, test, sample and RBAC helper roles, wired into
//! the project through scaffold markers (Kubebuilder's `create api`).

use std::io::Write;

mod error;
mod validate;

pub use error::CreateApiError;

use super::create::{
    add_module, add_test, load_project, own_file_policy, upsert_resource, write_with_project,
};
use super::{print, project_context};
use crate::cli::{CreateApiArgs, Env};
use crate::context::{DeployImageContext, ProjectContext, ResourceContext};
use crate::names::resource::controller_test_module;
use crate::plan::{IfExists, Marker, PlanBuilder};
use crate::project::{DeployImage, DeployImageOptions, DeployImageResource, Project};
use crate::templates::{self as t, render};
use validate::validate;

/// Runs `kbr create api` in `env.dir`, printing the next step to `out`.
pub fn run(args: &CreateApiArgs, env: &Env, out: &mut dyn Write) -> Result<(), CreateApiError> {
    let (r, written) = plan_and_write(args, env)?;
    for line in written {
        print(out, line)?;
    }
    let next = if r.builtin {
        format!(
            "Next: implement the {} controller and generate the manifests (e.g. the RBAC role) with:",
            r.kind
        )
    } else {
        "Next: implement your new API and generate the manifests (e.g. CRDs, CRs) with:".to_owned()
    };
    Ok(print(out, format!("{next}\n$ make manifests"))?)
}

/// Reads PROJECT, validates, plans and writes; returns the scaffolded resource's context and
/// the files written ([`crate::plan::Plan::report`]).
fn plan_and_write(
    args: &CreateApiArgs,
    env: &Env,
) -> Result<(ResourceContext, Vec<String>), CreateApiError> {
    let mut project = load_project(env)?;
    let (resource, names) = validate(args, &project)?;
    let test_module = controller_test_module(&project, &names);
    let p = project_context(&project, env)?;
    let r = ResourceContext::new(names);
    let deploy_image = deploy_image_options(args).map(|options| {
        let d = DeployImageContext::new(&options, &r.kind_lower);
        record_deploy_image(&mut project, args, options);
        d
    });

    upsert_resource(&mut project, resource);
    // E.g. --image in a multi-cluster project.
    crate::commands::check_settings(&project)?;

    let mut plan = PlanBuilder::new(&env.dir);
    if args.resource {
        plan_api(&mut plan, &p, &r, deploy_image.as_ref(), args.force)?;
    }
    if args.controller {
        plan_controller(
            &mut plan,
            &p,
            &r,
            deploy_image.as_ref(),
            &test_module,
            args.force,
        )?;
    }
    let written = write_with_project(plan, &p, &mut project)?;
    Ok((r, written))
}

/// The deploy-image options of `--image` and its flags, as PROJECT records them.
fn deploy_image_options(args: &CreateApiArgs) -> Option<DeployImageOptions> {
    Some(DeployImageOptions {
        container_command: args.image_container_command.clone(),
        container_port: args.image_container_port.map(|port| port.to_string()),
        image: args.image.clone()?,
        run_as_user: args.run_as_user.map(|user| user.to_string()),
    })
}

/// Records the kind of `args` under PROJECT's deploy-image plugin, replacing an earlier entry of
/// the same kind (`--force`).
fn record_deploy_image(project: &mut Project, args: &CreateApiArgs, options: DeployImageOptions) {
    let resources = &mut project
        .plugins
        .deploy_image
        .get_or_insert_with(DeployImage::default)
        .resources;
    resources
        .retain(|r| !(r.group == args.group && r.version == args.version && r.kind == args.kind));
    resources.push(DeployImageResource {
        domain: project.domain.clone(),
        group: args.group.clone(),
        kind: args.kind.clone(),
        options,
        version: args.version.clone(),
    });
}

/// Plans the API type: modules, kind file, scheme registration, CRD, sample and helper roles;
/// with `d`, the deploy-image plugin's type and sample.
fn plan_api(
    plan: &mut PlanBuilder,
    p: &ProjectContext,
    r: &ResourceContext,
    d: Option<&DeployImageContext>,
    force: bool,
) -> Result<(), CreateApiError> {
    let group_dir = format!("src/api/{}", r.group_dir);
    let group_mod = format!("{group_dir}/mod.rs");
    let version_mod = format!("{group_dir}/{}/mod.rs", r.version);
    let kind_file = format!("{group_dir}/{}/{}.rs", r.version, r.kind_snake);

    add_module(
        plan,
        "src/api/mod.rs",
        "groups",
        &render(&t::FragApiGroups { r })?,
        &group_mod,
        || render(&t::ApiGroupMod { p, r }),
    )?;
    add_module(
        plan,
        &group_mod,
        "versions",
        &render(&t::FragApiVersions { r })?,
        &version_mod,
        || render(&t::ApiVersionMod { p, r }),
    )?;
    plan.insert(
        &version_mod,
        Marker::rust("kinds"),
        &render(&t::FragApiKinds { r })?,
    )?;
    plan.insert(
        &version_mod,
        Marker::rust("scheme"),
        &render(&t::FragApiScheme { r })?,
    )?;
    let kind = match d {
        Some(d) => render(&t::ApiKindDeployImage { p, r, d })?,
        None => render(&t::ApiKind { p, r })?,
    };
    plan.create(&kind_file, kind, own_file_policy(force))?;
    plan.insert(
        "src/lib.rs",
        Marker::rust("scheme"),
        &render(&t::FragLibScheme { r })?,
    )?;

    plan.insert(
        "config/crd/kustomization.yaml",
        Marker::hash("crdkustomizeresource"),
        &render(&t::FragCrdKustomization { r })?,
    )?;
    plan.insert(
        "config/default/kustomization.yaml",
        Marker::hash("crdresource"),
        &render(&t::FragDefaultKustomization { r })?,
    )?;
    if p.multicluster {
        // Every member cluster serves the kinds its controllers reconcile.
        plan.insert(
            "config/member/kustomization.yaml",
            Marker::hash("crdresource"),
            &render(&t::FragDefaultKustomization { r })?,
        )?;
    }
    let sample = format!(
        "config/samples/{}_{}_{}.yaml",
        r.group, r.version, r.kind_lower
    );
    let sample_yaml = match d {
        Some(d) => render(&t::SampleDeployImage { p, r, d })?,
        None => render(&t::Sample { p, r })?,
    };
    plan.create(&sample, sample_yaml, own_file_policy(force))?;
    plan.insert(
        "config/samples/kustomization.yaml",
        Marker::hash("manifestskustomizesamples"),
        &render(&t::FragSamplesKustomization { r })?,
    )?;
    let role = |suffix: &str| format!("config/rbac/{}_{}_{suffix}.yaml", r.group, r.kind_lower);
    // Helper roles do not depend on the version: other versions of the kind rewrite them as
    // they are (Kubebuilder overwrites them too).
    plan.create(
        &role("admin_role"),
        render(&t::AdminRole { p, r })?,
        IfExists::Overwrite,
    )?;
    plan.create(
        &role("editor_role"),
        render(&t::EditorRole { p, r })?,
        IfExists::Overwrite,
    )?;
    plan.create(
        &role("viewer_role"),
        render(&t::ViewerRole { p, r })?,
        IfExists::Overwrite,
    )?;
    plan.insert(
        "config/rbac/kustomization.yaml",
        Marker::hash("rbachelperroles"),
        &render(&t::FragRbacKustomization { r })?,
    )?;
    Ok(())
}

/// Plans the controller: group module, reconciler, test, and registration in `src/lib.rs`; with
/// `d`, the deploy-image plugin's reconciler and test.
fn plan_controller(
    plan: &mut PlanBuilder,
    p: &ProjectContext,
    r: &ResourceContext,
    d: Option<&DeployImageContext>,
    test_module: &str,
    force: bool,
) -> Result<(), CreateApiError> {
    let group_dir = format!("src/controller/{}", r.group_dir);
    let group_mod = format!("{group_dir}/mod.rs");
    add_module(
        plan,
        "src/controller/mod.rs",
        "groups",
        &render(&t::FragControllerGroups { r })?,
        &group_mod,
        || render(&t::ControllerGroupMod { p, r }),
    )?;
    plan.insert(
        &group_mod,
        Marker::rust("controllers"),
        &render(&t::FragControllerKinds { r })?,
    )?;
    let (controller, test) = match d {
        Some(d) => (
            render(&t::ControllerKindDeployImage { p, r, d })?,
            render(&t::ControllerTestDeployImage { p, r, d })?,
        ),
        None if p.multicluster => (
            render(&t::ControllerKindMulticluster { p, r })?,
            render(&t::ControllerTestMulticluster { p, r })?,
        ),
        None => (
            render(&t::ControllerKind { p, r })?,
            render(&t::ControllerTest { p, r })?,
        ),
    };
    plan.create(
        &format!("{group_dir}/{}.rs", r.kind_snake),
        controller,
        own_file_policy(force),
    )?;
    add_test(
        plan,
        "tests/controller",
        || render(&t::ControllerTestSuite { p }),
        test_module,
        test,
        None,
        force,
    )?;
    plan.insert(
        "src/lib.rs",
        Marker::rust("rbac"),
        &render(&t::FragLibRbac { r })?,
    )?;
    plan.insert(
        "src/lib.rs",
        Marker::rust("builder"),
        &render(&t::FragLibBuilder { r })?,
    )?;
    if p.multicluster {
        plan.insert(
            "src/lib.rs",
            Marker::rust("multicluster"),
            &render(&t::FragLibMulticluster { r })?,
        )?;
    }
    if p.sharding {
        plan.insert(
            "src/lib.rs",
            Marker::rust("sharding"),
            &render(&t::FragLibSharding { r })?,
        )?;
    }
    Ok(())
}
