// Copyright 2026.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The manager's role, `config/rbac/role.yaml` as `make manifests` writes it, is all the
//! manager needs: on envtest, whose kube-apiserver enforces RBAC, the manager runs as a
//! ServiceAccount bound to that role only, and the spec's inputs reach their results. Without
//! one of its rules, the manager binary exits non-zero at start, naming the rule. Skipped,
//! saying why, without `KUBEBUILDER_ASSETS` (the fake API server does not enforce RBAC).

use kbr_runtime::conditions::is_condition_true;
use kbr_runtime::k8s_openapi::api::apps::v1::Deployment;
use kbr_runtime::k8s_openapi::api::core::v1 as corev1;
use kbr_runtime::k8s_openapi::api::events::v1::Event;
use kbr_runtime::k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, RoleRef, Subject};
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kbr_runtime::kube::Api;
use kbr_runtime::{Client, Manager};
use kbr_testing::TestEnv;

use knative_lite::api::eventing::v1alpha1 as eventing;
use knative_lite::api::serving::v1alpha1 as serving;
use knative_lite::webhook::eventing::v1alpha1::channel::ChannelCustomDefaulter;

use crate::support::{Running, eventually, namespace, options};

/// The ServiceAccount the manager runs as, in `default` (its role and binding have its name).
const ACCOUNT: &str = "knative-lite-manager";

/// The user name of the ServiceAccount, and its groups.
const USER: &str = "system:serviceaccount:default:knative-lite-manager";
const GROUPS: [&str; 3] = [
    "system:serviceaccounts",
    "system:serviceaccounts:default",
    "system:authenticated",
];

/// The ClusterRole `make manifests` wrote.
const ROLE_YAML: &str = include_str!("../../config/rbac/role.yaml");

/// The ClusterRole of `config/rbac/role.yaml`, named [`ACCOUNT`].
fn the_generated_role() -> anyhow::Result<ClusterRole> {
    let documents: Vec<serde_json::Value> = serde_saphyr::from_multiple(ROLE_YAML)?;
    anyhow::ensure!(documents.len() == 1, "one ClusterRole: {ROLE_YAML}");
    let mut role: ClusterRole = serde_json::from_value(documents[0].clone())?;
    role.metadata.name = Some(ACCOUNT.into());
    Ok(role)
}

/// Creates `role` (named [`ACCOUNT`]), the ServiceAccount and a ClusterRoleBinding between
/// them.
async fn grant(admin: &Client, role: &ClusterRole) -> anyhow::Result<()> {
    admin.create(role).await?;
    let mut account = corev1::ServiceAccount::default();
    account.metadata.name = Some(ACCOUNT.into());
    account.metadata.namespace = Some("default".into());
    admin.create(&account).await?;
    let binding = ClusterRoleBinding {
        metadata: ObjectMeta {
            name: Some(ACCOUNT.into()),
            ..ObjectMeta::default()
        },
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "ClusterRole".into(),
            name: ACCOUNT.into(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".into(),
            name: ACCOUNT.into(),
            namespace: Some("default".into()),
            ..Subject::default()
        }]),
    };
    admin.create(&binding).await?;
    Ok(())
}

/// A manager whose requests act as the ServiceAccount (the admin
/// impersonates it, as `kubectl --as` does).
fn manager_as_the_service_account(env: &TestEnv) -> anyhow::Result<Manager> {
    let plane = env
        .envtest()
        .ok_or_else(|| anyhow::anyhow!("not envtest"))?;
    let mut config = plane.config();
    config.auth_info.impersonate = Some(USER.into());
    config.auth_info.impersonate_groups = Some(GROUPS.iter().map(|g| (*g).into()).collect());
    let kube = kbr_runtime::kube::Client::try_from(config)?;
    Ok(Manager::with_client(
        kube,
        knative_lite::scheme(),
        options(),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_generated_role_is_all_the_manager_needs() -> anyhow::Result<()> {
    if !TestEnv::envtest_available() {
        eprintln!(
            "skipping the_generated_role_is_all_the_manager_needs: the fake API server does not \
             enforce RBAC, and KUBEBUILDER_ASSETS is unset"
        );
        return Ok(());
    }
    let env = TestEnv::start_envtest(knative_lite::scheme()).await?;
    let admin = env.client();
    grant(&admin, &the_generated_role()?).await?;
    namespace(&admin, "knative-eventing").await?;
    let yaml = include_str!("../../config/samples/default_channel_webhook_configmap.yaml");
    let config_map: corev1::ConfigMap = serde_saphyr::from_str(yaml)?;
    admin.create(&config_map).await?;

    // Its permission check at start passes (it fails the manager by default), and what follows
    // is not forbidden.
    let mut manager = manager_as_the_service_account(&env)?;
    knative_lite::setup_controllers(&mut manager)?;
    let client = manager.client();
    let running = Running::start(manager);

    // The Broker's Channel and the Channel's Service (Broker and Channel controllers).
    let broker: eventing::Broker = serde_saphyr::from_str(
        "
apiVersion: eventing.knative.dev/v1alpha1
kind: Broker
metadata: {name: pubsub-channel, namespace: default}
spec:
  channelTemplate:
    provisioner: {apiVersion: eventing.knative.dev/v1alpha1, kind: ClusterChannelProvisioner, name: gcp-pubsub}
",
    )?;
    admin.create(&broker).await?;
    eventually("a Ready Broker", || {
        let admin = admin.clone();
        async move {
            let b: eventing::Broker = admin.get(Some("default"), "pubsub-channel").await.ok()?;
            is_condition_true(&b.status?.conditions, "Ready").then_some(())
        }
    })
    .await;

    // The Service's Revision Deployment and route (Service controller).
    let yaml = include_str!("../../config/samples/serving_v1alpha1_service.yaml");
    let service: serving::Service = serde_saphyr::from_str(yaml)?;
    let name = service.metadata.name.clone().unwrap_or_default();
    let mut service = service;
    service.metadata.namespace = Some("default".into());
    admin.create(&service).await?;
    eventually("the Service's URL", || {
        let (admin, name) = (admin.clone(), name.clone());
        async move {
            let s: serving::Service = admin.get(Some("default"), &name).await.ok()?;
            s.status?.url.map(|_| ())
        }
    })
    .await;
    let revision = format!("{name}-00001");
    let _: Deployment = admin.uncached().get(Some("default"), &revision).await?;
    let _: corev1::Service = admin.uncached().get(Some("default"), &name).await?;

    // The controllers' Events were recorded.
    let events: Api<Event> = Api::namespaced(env.kube_client(), "default");
    eventually("the controllers' Events", || {
        let events = events.clone();
        async move {
            let list = events.list(&Default::default()).await.ok()?;
            let by = |controller: &str| {
                list.items
                    .iter()
                    .any(|e| e.reporting_controller.as_deref() == Some(controller))
            };
            (by("broker") && by("channel") && by("service")).then_some(())
        }
    })
    .await;

    // The Channel defaulting webhook reads its ConfigMap through the manager's cache (the one
    // marker).
    let defaults = ChannelCustomDefaulter::new(Some(client)).defaults().await;
    assert!(defaults.is_ok(), "{defaults:?}");

    running.stop().await?;
    Ok(())
}

#[tokio::test]
async fn without_its_deployment_rule_the_manager_exits_naming_it() -> anyhow::Result<()> {
    if !TestEnv::envtest_available() {
        eprintln!(
            "skipping without_its_deployment_rule_the_manager_exits_naming_it: the fake API \
             server does not enforce RBAC, and KUBEBUILDER_ASSETS is unset"
        );
        return Ok(());
    }
    let env = TestEnv::start_envtest(knative_lite::scheme()).await?;
    let plane = env
        .envtest()
        .ok_or_else(|| anyhow::anyhow!("not envtest"))?;
    let mut role = the_generated_role()?;
    let rules = role.rules.get_or_insert_default();
    let before = rules.len();
    rules.retain(|rule| rule.resources.as_deref() != Some(&["deployments".to_owned()][..]));
    anyhow::ensure!(
        rules.len() + 1 == before,
        "one Deployment rule in {ROLE_YAML}"
    );
    grant(&env.client(), &role).await?;

    // The manager binary, as `make run` runs it, acting as the ServiceAccount: the admin
    // kubeconfig with `as` and `as-groups` (kubectl's `--as`).
    let mut kubeconfig: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(plane.kubeconfig())?)?;
    let users = kubeconfig["users"]
        .as_array_mut()
        .ok_or_else(|| anyhow::anyhow!("no users in the kubeconfig"))?;
    for user in users {
        user["user"]["as"] = USER.into();
        user["user"]["as-groups"] = GROUPS.to_vec().into();
    }
    let path = plane.data_dir().join("manager.kubeconfig");
    std::fs::write(&path, serde_json::to_string(&kubeconfig)?)?;
    let mut manager = std::process::Command::new(env!("CARGO_BIN_EXE_knative-lite"))
        .args(["--health-probe-bind-address=0", "--metrics-bind-address=0"])
        .env("KUBECONFIG", &path)
        .env("ENABLE_WEBHOOKS", "false")
        .env("RUST_LOG", "info")
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    let exited = eventually("the manager to exit", || {
        let status = manager.try_wait().ok().flatten();
        async move { status }
    })
    .await;
    let output = manager.wait_with_output()?;
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    eprintln!("{stdout}{stderr}");
    assert_eq!(exited.code(), Some(1), "{stdout}{stderr}");
    let errors: Vec<&str> = stdout.lines().filter(|l| l.contains(" ERROR ")).collect();
    assert_eq!(errors.len(), 1, "one error: {stdout}");
    let missing = "rules:\n# controller service: owns apps/v1 Deployment\n- apiGroups:\n  - apps\n  \
                   resources:\n  - deployments\n  verbs:\n  - create\n  - delete\n  - get\n  \
                   - list\n  - patch\n  - update\n  - watch\n";
    assert!(stdout.contains(missing), "{stdout}");
    assert!(
        stderr.contains("Error: the manager lacks 7 RBAC permission(s)"),
        "{stderr}"
    );
    Ok(())
}
