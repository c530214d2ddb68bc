//! `kbr create webhook`: a kind's defaulting, validating and conversion webhooks, their test,
//! the manifests that deploy them (webhook Service, cert-manager certificate, manager patch, CA
//! injection, CRD conversion patch), wired into the project through scaffold markers
//! (Kubebuilder's `create webhook`).

use std::io::Write;

mod error;
mod storage;
mod validate;

pub use error::CreateWebhookError;

use super::create::{
    add_module, add_test, load_project, plan_own_file, upsert_resource, write_with_project,
};
use super::{print, project_context};
use crate::cli::{CreateWebhookArgs, Env};
use crate::context::{ProjectContext, ResourceContext, WebhookContext};
use crate::names::resource::{ResourceNames, webhook_test_module};
use crate::names::rust;
use crate::plan::{IfExists, Marker, PlanBuilder, PlanError};
use crate::templates::{self as t, render};
use validate::validate;

/// Runs `kbr create webhook` in `env.dir`, printing the next step to `out`.
pub fn run(
    args: &CreateWebhookArgs,
    env: &Env,
    out: &mut dyn Write,
) -> Result<(), CreateWebhookError> {
    let (written, merged) = plan_and_write(args, env)?;
    for line in written {
        print(out, line)?;
    }
    for path in merged {
        print(
            out,
            format!("kept your edits in {path} (3-way merge with the new scaffold): review it"),
        )?;
    }
    print(
        out,
        "Next: implement your new webhook and generate the manifests with:\n$ make manifests",
    )?;
    Ok(())
}

/// Reads PROJECT, validates, plans and writes; returns the files written
/// ([`crate::plan::Plan::report`]) and those whose edits were merged with the new scaffold
/// (`--force`).
fn plan_and_write(
    args: &CreateWebhookArgs,
    env: &Env,
) -> Result<(Vec<String>, Vec<String>), CreateWebhookError> {
    let mut project = load_project(env)?;
    let request = validate(args, &project)?;
    let p = project_context(&project, env)?;
    let resource = &request.resource;
    let crate_name = rust::crate_name(&project.project_name);
    let names = ResourceNames::new(&crate_name, resource);
    let test_module = webhook_test_module(&project, &names);
    let r = ResourceContext::new(names.clone());
    let hooks = resource.webhooks.clone().unwrap_or_default();
    let w = WebhookContext::new(&p, &r, &hooks);

    // What kbr rendered for the webhooks scaffolded before, the base of a `--force` merge.
    let previous = project
        .find(&resource.group, &resource.version, &resource.kind)
        .is_some_and(|before| before.webhooks.is_some())
        .then(|| WebhookContext::new(&p, &r, &request.previous));

    let mut plan = PlanBuilder::new(&env.dir);
    let merged = plan_code(
        &mut plan,
        &p,
        (&r, &w),
        previous.as_ref(),
        &test_module,
        args.force,
    )?;
    plan_config(&mut plan, &p, &r, &w, &request.new)?;
    if request.new.conversion {
        let spokes: Vec<ResourceNames> = request
            .spokes
            .iter()
            .map(|spoke| ResourceNames::new(&crate_name, spoke))
            .collect();
        storage::mark(&mut plan, &names, &spokes)?;
    }

    // validate() found the resource in PROJECT: this replaces its entry.
    upsert_resource(&mut project, resource.clone());
    let written = write_with_project(plan, &p, &mut project)?;
    Ok((written, merged))
}

/// Plans the Rust side: modules, the kind's webhook file, its test (module `test_module` of the
/// webhook test suite), registration in `src/lib.rs`. `previous` renders the webhooks
/// scaffolded before, so the user's edits to the kind's webhook file and test are merged, never
/// dropped ([`plan_own_file`]); returns the merged files.
fn plan_code(
    plan: &mut PlanBuilder,
    p: &ProjectContext,
    (r, w): (&ResourceContext, &WebhookContext),
    previous: Option<&WebhookContext>,
    test_module: &str,
    force: bool,
) -> Result<Vec<String>, CreateWebhookError> {
    let group_dir = format!("src/webhook/{}", r.group_dir);
    let group_mod = format!("{group_dir}/mod.rs");
    let version_mod = format!("{group_dir}/{}/mod.rs", r.version);
    add_module(
        plan,
        "src/webhook/mod.rs",
        "groups",
        &render(&t::FragWebhookGroups { r, w })?,
        &group_mod,
        || render(&t::WebhookGroupMod { p, r }),
    )?;
    add_module(
        plan,
        &group_mod,
        "versions",
        &render(&t::FragWebhookVersions { r })?,
        &version_mod,
        || render(&t::WebhookVersionMod { p, r }),
    )?;
    plan.insert_sorted(
        &version_mod,
        Marker::rust("kinds"),
        &render(&t::FragWebhookKinds { r })?,
    )?;
    let mut merged = Vec::new();
    let kind_file = format!("{group_dir}/{}/{}.rs", r.version, r.kind_snake);
    let base = previous
        .map(|w| render(&t::WebhookKind { p, r, w }))
        .transpose()?;
    let theirs = render(&t::WebhookKind { p, r, w })?;
    if plan_own_file(plan, &kind_file, theirs, base.as_deref(), force)? {
        merged.push(kind_file);
    }
    let base = previous
        .map(|w| render(&t::WebhookTest { p, r, w }))
        .transpose()?;
    if add_test(
        plan,
        "tests/webhook",
        || render(&t::WebhookTestSuite { p }),
        test_module,
        render(&t::WebhookTest { p, r, w })?,
        base.as_deref(),
        force,
    )? {
        merged.push(format!(
            "tests/webhook/{}.rs",
            crate::names::rust::file_stem(test_module)
        ));
    }
    plan.insert(
        "src/lib.rs",
        Marker::rust("webhook"),
        &render(&t::FragLibWebhook { r })?,
    )?;
    Ok(merged)
}

/// Creates `path` from `content` unless it exists (shared files the user may have edited).
fn create_once(plan: &mut PlanBuilder, path: &str, content: String) -> Result<(), PlanError> {
    if plan.exists(path) {
        return Ok(());
    }
    plan.create(path, content, IfExists::Overwrite)
}

/// Plans `config/`: the webhook Service and configurations, cert-manager (for the metrics
/// server's certificate too), the manager patches and CA injection in config/default, the network
/// policy, and the CRD conversion patch.
fn plan_config(
    plan: &mut PlanBuilder,
    p: &ProjectContext,
    r: &ResourceContext,
    w: &WebhookContext,
    new: &crate::project::Webhooks,
) -> Result<(), CreateWebhookError> {
    create_once(
        plan,
        "config/webhook/kustomization.yaml",
        render(&t::WebhookKustomization { p })?,
    )?;
    create_once(
        plan,
        "config/webhook/kustomizeconfig.yaml",
        render(&t::WebhookKustomizeConfig { p })?,
    )?;
    create_once(
        plan,
        "config/webhook/service.yaml",
        render(&t::WebhookService { p })?,
    )?;
    create_once(
        plan,
        "config/certmanager/issuer.yaml",
        render(&t::CertManagerIssuer { p })?,
    )?;
    create_once(
        plan,
        "config/certmanager/certificate-metrics.yaml",
        render(&t::CertManagerMetricsCertificate { p })?,
    )?;
    create_once(
        plan,
        "config/certmanager/certificate-webhook.yaml",
        render(&t::CertManagerCertificate { p })?,
    )?;
    create_once(
        plan,
        "config/certmanager/kustomization.yaml",
        render(&t::CertManagerKustomization { p })?,
    )?;
    create_once(
        plan,
        "config/certmanager/kustomizeconfig.yaml",
        render(&t::CertManagerKustomizeConfig { p })?,
    )?;
    // Projects from `kbr init` list their certificates at a marker; without it (a project made
    // before kbr issued the metrics certificate) the metrics server keeps its own certificate.
    let certmanager = "config/certmanager/kustomization.yaml";
    let metrics_certs = plan
        .content(certmanager)?
        .is_some_and(|c| c.contains("+kbr:scaffold:certificates"));
    if metrics_certs {
        plan.insert(
            certmanager,
            Marker::hash("certificates"),
            &render(&t::FragCertManagerCertificates { p })?,
        )?;
    }
    create_once(
        plan,
        "config/default/manager_webhook_patch.yaml",
        render(&t::ManagerWebhookPatch { p })?,
    )?;
    create_once(
        plan,
        "config/default/cert_metrics_manager_patch.yaml",
        render(&t::DefaultCertMetricsPatch { p })?,
    )?;
    create_once(
        plan,
        "config/network-policy/allow-webhook-traffic.yaml",
        render(&t::NetworkPolicyAllowWebhook { p })?,
    )?;
    plan.insert(
        "config/network-policy/kustomization.yaml",
        Marker::hash("networkpolicy"),
        &render(&t::FragNetworkPolicyWebhook { p })?,
    )?;

    let default = "config/default/kustomization.yaml";
    plan.insert(
        default,
        Marker::hash("webhookresource"),
        &render(&t::FragDefaultWebhookResources { p })?,
    )?;
    plan.insert(
        default,
        Marker::hash("webhookpatch"),
        &render(&t::FragDefaultWebhookPatches { p })?,
    )?;
    plan.insert(
        default,
        Marker::hash("webhookreplacements"),
        &render(&t::FragDefaultReplacements { p })?,
    )?;
    if metrics_certs {
        // Webhooks need cert-manager, so it issues the metrics server's certificate too (with
        // plain `kbr init` the same lines are there, commented out).
        plan.insert(
            default,
            Marker::hash("webhookpatch"),
            &render(&t::FragDefaultMetricsPatch { p })?,
        )?;
        plan.insert(
            default,
            Marker::hash("webhookreplacements"),
            &render(&t::FragDefaultMetricsReplacements { p })?,
        )?;
        let prometheus = "config/prometheus/kustomization.yaml";
        if plan
            .content(prometheus)?
            .is_some_and(|c| c.contains("+kbr:scaffold:monitortls"))
        {
            plan.insert(
                prometheus,
                Marker::hash("monitortls"),
                &render(&t::FragPrometheusPatches { p })?,
            )?;
        }
    }
    if new.defaulting || new.validation {
        plan.insert(
            "config/webhook/kustomization.yaml",
            Marker::hash("webhookmanifests"),
            &render(&t::FragWebhookManifests { p })?,
        )?;
    }
    if new.defaulting {
        plan.insert(
            default,
            Marker::hash("cainjection"),
            &render(&t::FragCaInjectionMutating { p })?,
        )?;
    }
    if new.validation {
        plan.insert(
            default,
            Marker::hash("cainjection"),
            &render(&t::FragCaInjectionValidating { p })?,
        )?;
    }
    if new.conversion {
        // The CRD block holds the markers of its targets, so once per project, not once per
        // content match.
        let has_crd_block = plan
            .content(default)?
            .is_some_and(|c| c.contains("+kbr:scaffold:crdkustomizecainjectionns"));
        if !has_crd_block {
            plan.insert(
                default,
                Marker::hash("cainjection"),
                &render(&t::FragCaInjectionCrd { p })?,
            )?;
        }
        plan.insert(
            default,
            Marker::hash("crdkustomizecainjectionns"),
            &render(&t::FragCaInjectionCrdNs { w })?,
        )?;
        plan.insert(
            default,
            Marker::hash("crdkustomizecainjectionname"),
            &render(&t::FragCaInjectionCrdName { w })?,
        )?;
        plan.put(
            &format!("config/crd/patches/webhook_in_{}.yaml", r.plural),
            render(&t::CrdWebhookPatch { p, r, w })?,
        )?;
        create_once(
            plan,
            "config/crd/kustomizeconfig.yaml",
            render(&t::CrdKustomizeConfig { p })?,
        )?;
        plan.insert(
            "config/crd/kustomization.yaml",
            Marker::hash("crdkustomizewebhookpatch"),
            &render(&t::FragCrdWebhookPatch { r })?,
        )?;
        plan.insert(
            "config/crd/kustomization.yaml",
            Marker::hash("crdkustomizeconfigurations"),
            &render(&t::FragCrdConfigurations { p })?,
        )?;
    }
    Ok(())
}
