//! The askama templates under the workspace's `templates/` folder, one Rust type each.
//!
//! `templates/init/` holds what `kbr init` writes (output path = path under `init/`),
//! `templates/api/` what `kbr create api` writes and `templates/webhook/` what `kbr create
//! webhook` writes, with `*/fragments/` holding the snippets they insert before
//! `+kbr:scaffold:<name>` markers. Templates are compiled into the binary; none is read at run
//! time. Init templates see `p` ([`ProjectContext`]); API templates see `p` and `r`
//! ([`ResourceContext`]); webhook templates also see `w` ([`WebhookContext`]).
//!
//! askama drops a template file's final newline; [`render`] puts it back, so a rendered file (or
//! fragment) ends with exactly the newline its template file ends with.

use askama::Template;

use crate::context::{DeployImageContext, ProjectContext, ResourceContext, WebhookContext};

/// Renders `template` as file (or fragment) content: the template's text with its final newline.
pub fn render(template: &impl Template) -> Result<String, askama::Error> {
    let mut out = template.render()?;
    out.push('\n');
    Ok(out)
}

/// The `PROJECT` file: a header comment and the serialized [`crate::project::Project`].
#[derive(Template)]
#[template(path = "project/PROJECT", escape = "none")]
pub struct ProjectFile<'a> {
    /// The project context (for the license header).
    pub p: &'a ProjectContext,
    /// The YAML body, ending with a newline.
    pub yaml: &'a str,
}

/// Declares one template type per file, with its template path.
macro_rules! templates {
    ($($(#[$doc:meta])* $name:ident($($field:ident: $ty:ident),*) => $path:tt;)*) => {$(
        $(#[$doc])*
        #[derive(Template)]
        #[template(path = $path, escape = "none")]
        pub struct $name<'a> {
            $(
                #[doc = concat!("What the template calls `", stringify!($field), "`.")]
                pub $field: &'a $ty,
            )*
        }
    )*};
}

templates! {
    /// `Cargo.toml` of the generated project.
    CargoToml(p: ProjectContext) => "init/Cargo.toml.askama";
    /// `src/main.rs`: the manager.
    MainRs(p: ProjectContext) => "init/src/main.rs";
    /// `src/lib.rs`: the scheme, RBAC and controller registries.
    LibRs(p: ProjectContext) => "init/src/lib.rs";
    /// `src/api/mod.rs`.
    ApiModRs(p: ProjectContext) => "init/src/api/mod.rs";
    /// `src/controller/mod.rs`.
    ControllerModRs(p: ProjectContext) => "init/src/controller/mod.rs";
    /// `src/webhook/mod.rs`.
    WebhookModRs(p: ProjectContext) => "init/src/webhook/mod.rs";
    /// `src/bin/manifests.rs`: writes CRDs and RBAC.
    ManifestsRs(p: ProjectContext) => "init/src/bin/manifests.rs";
    /// `Makefile`.
    Makefile(p: ProjectContext) => "init/Makefile";
    /// `Dockerfile`.
    Dockerfile(p: ProjectContext) => "init/Dockerfile";
    /// `.dockerignore`.
    Dockerignore(p: ProjectContext) => "init/.dockerignore";
    /// `.gitignore`.
    Gitignore(p: ProjectContext) => "init/.gitignore";
    /// `README.md`.
    Readme(p: ProjectContext) => "init/README.md";
    /// `tests/e2e/main.rs`: the end-to-end suite (`make test-e2e`).
    E2eMain(p: ProjectContext) => "init/tests/e2e/main.rs";
    /// `tests/e2e/checks.rs`: the suite's assertions.
    E2eChecks(p: ProjectContext) => "init/tests/e2e/checks.rs";
    /// `tests/e2e/cluster.rs`: where the manager runs (kind, or a process beside envtest).
    E2eCluster(p: ProjectContext) => "init/tests/e2e/cluster.rs";
    /// `tests/e2e/manifests.rs`: rendering and applying the kustomizations.
    E2eManifests(p: ProjectContext) => "init/tests/e2e/manifests.rs";
    /// `tests/e2e/metrics.rs`: reading `/metrics`.
    E2eMetrics(p: ProjectContext) => "init/tests/e2e/metrics.rs";
    /// `tests/e2e/process.rs`: the manager as a process with its ServiceAccount's token.
    E2eProcess(p: ProjectContext) => "init/tests/e2e/process.rs";
    /// `tests/e2e/member.rs` (`init --multicluster`): the cluster under test registered as a
    /// member cluster, as the project's cluster provider finds members.
    E2eMember(p: ProjectContext) => "init/tests/e2e/member.rs";
    /// `.github/workflows/auto_update.yml` (the autoupdate plugin).
    WorkflowAutoUpdate(p: ProjectContext) => "plugins/autoupdate/auto_update.yml";
    /// `tests/e2e/grafana.rs` (the grafana plugin): every dashboard query against Prometheus.
    E2eGrafana(p: ProjectContext) => "plugins/grafana/e2e_grafana.rs";
    /// `grafana/custom-metrics/config.yaml` (the grafana plugin): the project's own metrics.
    GrafanaCustomConfig(p: ProjectContext) => "plugins/grafana/config.yaml";
    /// `.github/workflows/lint.yml`: `make lint` on every push and pull request.
    WorkflowLint(p: ProjectContext) => "init/.github/workflows/lint.yml";
    /// `.github/workflows/test.yml`: `make test-envtest` on every push and pull request.
    WorkflowTest(p: ProjectContext) => "init/.github/workflows/test.yml";
    /// `.github/workflows/test-e2e.yml`: `make test-e2e` on a kind cluster.
    WorkflowTestE2e(p: ProjectContext) => "init/.github/workflows/test-e2e.yml";
    /// `config/default/kustomization.yaml`.
    DefaultKustomization(p: ProjectContext) => "init/config/default/kustomization.yaml";
    /// `config/default/metrics_service.yaml`.
    DefaultMetricsService(p: ProjectContext) => "init/config/default/metrics_service.yaml";
    /// `config/default/manager_metrics_patch.yaml`.
    DefaultManagerMetricsPatch(p: ProjectContext) => "init/config/default/manager_metrics_patch.yaml";
    /// `config/default/cert_metrics_manager_patch.yaml`: the metrics certificate from cert-manager.
    DefaultCertMetricsPatch(p: ProjectContext) => "init/config/default/cert_metrics_manager_patch.yaml";
    /// `config/manager/kustomization.yaml`.
    ManagerKustomization(p: ProjectContext) => "init/config/manager/kustomization.yaml";
    /// `config/manager/manager.yaml`.
    ManagerYaml(p: ProjectContext) => "init/config/manager/manager.yaml";
    /// `config/rbac/kustomization.yaml`.
    RbacKustomization(p: ProjectContext) => "init/config/rbac/kustomization.yaml";
    /// `config/rbac/service_account.yaml`.
    RbacServiceAccount(p: ProjectContext) => "init/config/rbac/service_account.yaml";
    /// `config/rbac/role.yaml` (a placeholder until `make manifests`).
    RbacRole(p: ProjectContext) => "init/config/rbac/role.yaml";
    /// `config/rbac/role_binding.yaml`.
    RbacRoleBinding(p: ProjectContext) => "init/config/rbac/role_binding.yaml";
    /// `config/rbac/leader_election_role.yaml`.
    RbacLeaderElectionRole(p: ProjectContext) => "init/config/rbac/leader_election_role.yaml";
    /// `config/rbac/leader_election_role_binding.yaml`.
    RbacLeaderElectionRoleBinding(p: ProjectContext) => "init/config/rbac/leader_election_role_binding.yaml";
    /// `config/rbac/provider_role.yaml` (`--multicluster=kubeconfig-secrets|capi`): what the
    /// cluster provider reads.
    RbacProviderRole(p: ProjectContext) => "init/config/rbac/provider_role.yaml";
    /// `config/rbac/provider_role_binding.yaml` (`--multicluster=kubeconfig-secrets|capi`).
    RbacProviderRoleBinding(p: ProjectContext) => "init/config/rbac/provider_role_binding.yaml";
    /// `config/rbac/shard_lease_role.yaml` (a project made with `--sharding`).
    RbacShardLeaseRole(p: ProjectContext) => "init/config/rbac/shard_lease_role.yaml";
    /// `config/rbac/shard_lease_role_binding.yaml` (a project made with `--sharding`).
    RbacShardLeaseRoleBinding(p: ProjectContext) => "init/config/rbac/shard_lease_role_binding.yaml";
    /// `config/rbac/metrics_auth_role.yaml`.
    RbacMetricsAuthRole(p: ProjectContext) => "init/config/rbac/metrics_auth_role.yaml";
    /// `config/rbac/metrics_auth_role_binding.yaml`.
    RbacMetricsAuthRoleBinding(p: ProjectContext) => "init/config/rbac/metrics_auth_role_binding.yaml";
    /// `config/rbac/metrics_reader_role.yaml`.
    RbacMetricsReaderRole(p: ProjectContext) => "init/config/rbac/metrics_reader_role.yaml";
    /// `config/member/kustomization.yaml`: what each member cluster of a multi-cluster project
    /// needs.
    MemberKustomization(p: ProjectContext) => "init/config/member/kustomization.yaml";
    /// `config/member/namespace.yaml`: the namespace of the member ServiceAccount.
    MemberNamespace(p: ProjectContext) => "init/config/member/namespace.yaml";
    /// `config/member/service_account.yaml`: the manager's identity in a member cluster.
    MemberServiceAccount(p: ProjectContext) => "init/config/member/service_account.yaml";
    /// `config/member/role_binding.yaml`: the member role granted to that identity.
    MemberRoleBinding(p: ProjectContext) => "init/config/member/role_binding.yaml";
    /// `config/crd/kustomization.yaml`.
    CrdKustomization(p: ProjectContext) => "init/config/crd/kustomization.yaml";
    /// `config/samples/kustomization.yaml`.
    SamplesKustomization(p: ProjectContext) => "init/config/samples/kustomization.yaml";
    /// `config/prometheus/kustomization.yaml`.
    PrometheusKustomization(p: ProjectContext) => "init/config/prometheus/kustomization.yaml";
    /// `config/prometheus/monitor.yaml`.
    PrometheusMonitor(p: ProjectContext) => "init/config/prometheus/monitor.yaml";
    /// `config/prometheus/monitor_tls_patch.yaml`: verify the metrics certificate.
    PrometheusMonitorTlsPatch(p: ProjectContext) => "init/config/prometheus/monitor_tls_patch.yaml";
    /// `config/certmanager/issuer.yaml`.
    CertManagerIssuer(p: ProjectContext) => "init/config/certmanager/issuer.yaml";
    /// `config/certmanager/certificate-metrics.yaml`.
    CertManagerMetricsCertificate(p: ProjectContext) => "init/config/certmanager/certificate-metrics.yaml";
    /// `config/certmanager/kustomization.yaml`.
    CertManagerKustomization(p: ProjectContext) => "init/config/certmanager/kustomization.yaml";
    /// `config/certmanager/kustomizeconfig.yaml`.
    CertManagerKustomizeConfig(p: ProjectContext) => "init/config/certmanager/kustomizeconfig.yaml";
    /// `config/network-policy/kustomization.yaml`.
    NetworkPolicyKustomization(p: ProjectContext) => "init/config/network-policy/kustomization.yaml";
    /// `config/network-policy/allow-metrics-traffic.yaml`.
    NetworkPolicyAllowMetrics(p: ProjectContext) => "init/config/network-policy/allow-metrics-traffic.yaml";

    /// `src/api/<group>/mod.rs`.
    ApiGroupMod(p: ProjectContext, r: ResourceContext) => "api/src/api/group_mod.rs";
    /// `src/api/<group>/<version>/mod.rs`.
    ApiVersionMod(p: ProjectContext, r: ResourceContext) => "api/src/api/version_mod.rs";
    /// `src/api/<group>/<version>/<kind>.rs`: Spec and Status.
    ApiKind(p: ProjectContext, r: ResourceContext) => "api/src/api/kind.rs";
    /// `src/controller/<group>/mod.rs`.
    ControllerGroupMod(p: ProjectContext, r: ResourceContext) => "api/src/controller/group_mod.rs";
    /// `src/controller/<group>/<kind>.rs`: the reconciler.
    ControllerKind(p: ProjectContext, r: ResourceContext) => "api/src/controller/kind.rs";
    /// `src/controller/<group>/<kind>.rs` of a multi-cluster project (`init --multicluster`):
    /// a multi-cluster reconciler, run on every member cluster.
    ControllerKindMulticluster(p: ProjectContext, r: ResourceContext) => "api/src/controller/kind_multicluster.rs";
    /// `tests/controller/main.rs`: the controller test suite, one module per kind.
    ControllerTestSuite(p: ProjectContext) => "api/tests/controller_main.rs";
    /// `tests/controller/<kind>.rs`: the reconciler test.
    ControllerTest(p: ProjectContext, r: ResourceContext) => "api/tests/controller_test.rs";
    /// `tests/controller/<kind>.rs` of a multi-cluster project: three clusters, each object
    /// reconciled in its own (a built-in kind: one reconcile on a single cluster).
    ControllerTestMulticluster(p: ProjectContext, r: ResourceContext) => "api/tests/controller_multicluster_test.rs";
    /// `config/samples/<group>_<version>_<kind>.yaml`.
    Sample(p: ProjectContext, r: ResourceContext) => "api/config/samples/sample.yaml";
    /// `src/api/<group>/<version>/<kind>.rs` of the deploy-image plugin: size, port, conditions.
    ApiKindDeployImage(p: ProjectContext, r: ResourceContext, d: DeployImageContext) => "plugins/deploy-image/kind.rs";
    /// `src/controller/<group>/<kind>.rs` of the deploy-image plugin: the image as a Deployment.
    ControllerKindDeployImage(p: ProjectContext, r: ResourceContext, d: DeployImageContext) => "plugins/deploy-image/controller.rs";
    /// `tests/controller/<kind>.rs` of the deploy-image plugin.
    ControllerTestDeployImage(p: ProjectContext, r: ResourceContext, d: DeployImageContext) => "plugins/deploy-image/controller_test.rs";
    /// `config/samples/<group>_<version>_<kind>.yaml` of the deploy-image plugin.
    SampleDeployImage(p: ProjectContext, r: ResourceContext, d: DeployImageContext) => "plugins/deploy-image/sample.yaml";
    /// `config/rbac/<group>_<kind>_admin_role.yaml`.
    AdminRole(p: ProjectContext, r: ResourceContext) => "api/config/rbac/admin_role.yaml";
    /// `config/rbac/<group>_<kind>_editor_role.yaml`.
    EditorRole(p: ProjectContext, r: ResourceContext) => "api/config/rbac/editor_role.yaml";
    /// `config/rbac/<group>_<kind>_viewer_role.yaml`.
    ViewerRole(p: ProjectContext, r: ResourceContext) => "api/config/rbac/viewer_role.yaml";

    /// Fragment `pub mod <group>;` for `src/api/mod.rs` (marker `groups`).
    FragApiGroups(r: ResourceContext) => "api/fragments/api_groups.rs";
    /// Fragment `pub mod <version>;` for `src/api/<group>/mod.rs` (marker `versions`).
    FragApiVersions(r: ResourceContext) => "api/fragments/api_versions.rs";
    /// Fragment `mod <kind>; pub use …` for the version module (marker `kinds`).
    FragApiKinds(r: ResourceContext) => "api/fragments/api_kinds.rs";
    /// Fragment `scheme.add::<Kind>();` for the version module (marker `scheme`).
    FragApiScheme(r: ResourceContext) => "api/fragments/api_scheme.rs";
    /// Fragment `pub mod <group>;` for `src/controller/mod.rs` (marker `groups`).
    FragControllerGroups(r: ResourceContext) => "api/fragments/controller_groups.rs";
    /// Fragment `mod <kind>; pub use …Reconciler;` for the group's controller module (marker
    /// `controllers`).
    FragControllerKinds(r: ResourceContext) => "api/fragments/controller_kinds.rs";
    /// Fragment for `src/lib.rs` marker `scheme`.
    FragLibScheme(r: ResourceContext) => "api/fragments/lib_scheme.rs";
    /// Fragment for `src/lib.rs` marker `rbac`.
    FragLibRbac(r: ResourceContext) => "api/fragments/lib_rbac.rs";
    /// Fragment for `src/lib.rs` marker `builder`.
    FragLibBuilder(r: ResourceContext) => "api/fragments/lib_builder.rs";
    /// Fragment for `src/lib.rs` marker `multicluster` (a project made with `--multicluster`).
    FragLibMulticluster(r: ResourceContext) => "api/fragments/lib_multicluster.rs";
    /// Fragment for `src/lib.rs` marker `sharding` (a project made with `--sharding`).
    FragLibSharding(r: ResourceContext) => "api/fragments/lib_sharding.rs";
    /// Fragment for `config/crd/kustomization.yaml` marker `crdkustomizeresource`.
    FragCrdKustomization(r: ResourceContext) => "api/fragments/crd_kustomization.yaml";
    /// Fragment for `config/default/kustomization.yaml` marker `crdresource`.
    FragDefaultKustomization(r: ResourceContext) => "api/fragments/default_kustomization.yaml";
    /// Fragment for `config/samples/kustomization.yaml` marker `manifestskustomizesamples`.
    FragSamplesKustomization(r: ResourceContext) => "api/fragments/samples_kustomization.yaml";
    /// Fragment for `config/rbac/kustomization.yaml` marker `rbachelperroles`.
    FragRbacKustomization(r: ResourceContext) => "api/fragments/rbac_kustomization.yaml";

    /// `src/webhook/<group>/mod.rs`.
    WebhookGroupMod(p: ProjectContext, r: ResourceContext) => "webhook/src/webhook/group_mod.rs";
    /// `src/webhook/<group>/<version>/mod.rs`.
    WebhookVersionMod(p: ProjectContext, r: ResourceContext) => "webhook/src/webhook/version_mod.rs";
    /// `src/webhook/<group>/<version>/<kind>.rs`: defaulter, validator, conversion.
    WebhookKind(p: ProjectContext, r: ResourceContext, w: WebhookContext) => "webhook/src/webhook/kind.rs";
    /// `tests/webhook/main.rs`: the webhook test suite, one module per kind.
    WebhookTestSuite(p: ProjectContext) => "webhook/tests/webhook_main.rs";
    /// `tests/webhook/<kind>.rs`: the webhook test.
    WebhookTest(p: ProjectContext, r: ResourceContext, w: WebhookContext) => "webhook/tests/webhook_test.rs";
    /// `config/webhook/kustomization.yaml`.
    WebhookKustomization(p: ProjectContext) => "webhook/config/webhook/kustomization.yaml";
    /// `config/webhook/kustomizeconfig.yaml`.
    WebhookKustomizeConfig(p: ProjectContext) => "webhook/config/webhook/kustomizeconfig.yaml";
    /// `config/webhook/service.yaml`.
    WebhookService(p: ProjectContext) => "webhook/config/webhook/service.yaml";
    /// `config/certmanager/certificate-webhook.yaml`.
    CertManagerCertificate(p: ProjectContext) => "webhook/config/certmanager/certificate-webhook.yaml";
    /// `config/default/manager_webhook_patch.yaml`.
    ManagerWebhookPatch(p: ProjectContext) => "webhook/config/default/manager_webhook_patch.yaml";
    /// `config/network-policy/allow-webhook-traffic.yaml`.
    NetworkPolicyAllowWebhook(p: ProjectContext) => "webhook/config/network-policy/allow-webhook-traffic.yaml";
    /// `config/crd/patches/webhook_in_<plural>.yaml`: the CRD's conversion webhook.
    CrdWebhookPatch(p: ProjectContext, r: ResourceContext, w: WebhookContext) => "webhook/config/crd/patches/webhook_in.yaml";
    /// `config/crd/kustomizeconfig.yaml`.
    CrdKustomizeConfig(p: ProjectContext) => "webhook/config/crd/kustomizeconfig.yaml";

    /// Fragment `pub mod <group>;` for `src/webhook/mod.rs` (marker `groups`).
    FragWebhookGroups(r: ResourceContext, w: WebhookContext) => "webhook/fragments/webhook_groups.rs";
    /// Fragment `pub mod <version>;` for `src/webhook/<group>/mod.rs` (marker `versions`).
    FragWebhookVersions(r: ResourceContext) => "webhook/fragments/webhook_versions.rs";
    /// Fragment `pub mod <kind>;` for the webhook version module (marker `kinds`).
    FragWebhookKinds(r: ResourceContext) => "webhook/fragments/webhook_kinds.rs";
    /// Fragment for `src/lib.rs` marker `webhook`.
    FragLibWebhook(r: ResourceContext) => "webhook/fragments/lib_webhook.rs";
    /// Fragment for `config/webhook/kustomization.yaml` marker `webhookmanifests`.
    FragWebhookManifests(p: ProjectContext) => "webhook/fragments/webhook_manifests.yaml";
    /// Fragment for `config/default/kustomization.yaml` marker `webhookresource`.
    FragDefaultWebhookResources(p: ProjectContext) => "webhook/fragments/default_resources.yaml";
    /// Fragment for `config/default/kustomization.yaml` marker `webhookpatch`.
    FragDefaultWebhookPatches(p: ProjectContext) => "webhook/fragments/default_patches.yaml";
    /// Fragment for `config/default/kustomization.yaml` marker `webhookreplacements`.
    FragDefaultReplacements(p: ProjectContext) => "webhook/fragments/default_replacements.yaml";
    /// Fragment for `config/default/kustomization.yaml` marker `webhookpatch`: the metrics
    /// certificate's patch.
    FragDefaultMetricsPatch(p: ProjectContext) => "webhook/fragments/default_metrics_patch.yaml";
    /// Fragment for `config/default/kustomization.yaml` marker `webhookreplacements`: the metrics
    /// certificate's DNS names.
    FragDefaultMetricsReplacements(p: ProjectContext) => "webhook/fragments/default_metrics_replacements.yaml";
    /// Fragment for `config/certmanager/kustomization.yaml` marker `certificates`.
    FragCertManagerCertificates(p: ProjectContext) => "webhook/fragments/certmanager_certificates.yaml";
    /// Fragment for `config/prometheus/kustomization.yaml` marker `monitortls`.
    FragPrometheusPatches(p: ProjectContext) => "webhook/fragments/prometheus_patches.yaml";
    /// Fragment for `config/default/kustomization.yaml` marker `cainjection` (defaulting).
    FragCaInjectionMutating(p: ProjectContext) => "webhook/fragments/default_cainjection_mutating.yaml";
    /// Fragment for `config/default/kustomization.yaml` marker `cainjection` (validation).
    FragCaInjectionValidating(p: ProjectContext) => "webhook/fragments/default_cainjection_validating.yaml";
    /// Fragment for `config/default/kustomization.yaml` marker `cainjection` (conversion).
    FragCaInjectionCrd(p: ProjectContext) => "webhook/fragments/default_cainjection_crd.yaml";
    /// Fragment for marker `crdkustomizecainjectionns`: the CRD's namespace target.
    FragCaInjectionCrdNs(w: WebhookContext) => "webhook/fragments/default_cainjection_crd_ns.yaml";
    /// Fragment for marker `crdkustomizecainjectionname`: the CRD's name target.
    FragCaInjectionCrdName(w: WebhookContext) => "webhook/fragments/default_cainjection_crd_name.yaml";
    /// Fragment for `config/crd/kustomization.yaml` marker `crdkustomizewebhookpatch`.
    FragCrdWebhookPatch(r: ResourceContext) => "webhook/fragments/crd_webhook_patch.yaml";
    /// Fragment for `config/crd/kustomization.yaml` marker `crdkustomizeconfigurations`.
    FragCrdConfigurations(p: ProjectContext) => "webhook/fragments/crd_configurations.yaml";
    /// Fragment for `config/network-policy/kustomization.yaml` marker `networkpolicy`.
    FragNetworkPolicyWebhook(p: ProjectContext) => "webhook/fragments/network_policy.yaml";
}
