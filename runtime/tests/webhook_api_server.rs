//! Webhooks registered with the API server itself: the Channel defaulter and validator are
//! installed as Mutating/ValidatingWebhookConfigurations pointing at a webhook server in this
//! process, and plain API requests are defaulted, validated and denied by the API server.
//!
//! With `KUBEBUILDER_ASSETS` set this runs on envtest (kube-apiserver's admission plugins call
//! the webhooks, and the Widget conversion webhook converts between versions); otherwise on
//! the fake API server, which calls admission webhooks the same way (no conversion).

mod webhook_support;

use std::time::Duration;

use kbr_runtime::k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kbr_runtime::kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kbr_runtime::webhook::{self, ClientConfig};
use kbr_runtime::{Scheme, kube};
use kbr_testing::envtest::WebhookInstallOptions;
use kbr_testing::{ServedWebhooks, TestEnv};
use webhook_support::channel::{Channel, ChannelSpec, Provisioner};
use webhook_support::{v1, v2, webhooks, within};

/// The Channel and both Widget versions.
fn scheme() -> Scheme {
    let mut scheme = Scheme::new();
    scheme
        .add::<Channel>()
        .add::<v1::Widget>()
        .add::<v2::Widget>();
    scheme
}

/// A running test: the API server and the webhook server it calls (stopped on drop).
struct Running {
    env: TestEnv,
    served: ServedWebhooks,
}

/// Starts the API server with the Channel and Widget kinds, the webhook server on the port
/// and certificate the API server trusts, and registers the admission webhooks.
async fn start() -> Running {
    let env = TestEnv::start(scheme())
        .await
        .unwrap_or_else(|e| panic!("starting the API server: {e}"));
    let webhooks = webhooks();
    // The configurations `make manifests` writes (service references); install_webhooks
    // points them at the local server.
    let target = ClientConfig::kubebuilder_service();
    let mutating = webhook::mutating_configuration(&webhooks, &target)
        .unwrap_or_else(|| panic!("the Channel defaulter has a mutating configuration"));
    let validating = webhook::validating_configuration(&webhooks, &target)
        .unwrap_or_else(|| panic!("the Channel validator has a validating configuration"));
    let serving = env
        .install_webhooks(
            WebhookInstallOptions::new()
                .mutating(mutating)
                .validating(validating),
        )
        .await
        .unwrap_or_else(|e| panic!("installing the webhook configurations: {e}"));
    let served = ServedWebhooks::start(serving, webhooks)
        .await
        .unwrap_or_else(|e| panic!("serving the webhooks: {e}"));
    let running = Running { env, served };
    wait_for_admission(&running).await;
    running
}

fn channels(env: &TestEnv) -> Api<Channel> {
    Api::namespaced(env.kube_client(), "default")
}

fn channel(name: &str, provisioner: Option<Provisioner>) -> Channel {
    let mut channel = Channel::new(
        name,
        ChannelSpec {
            provisioner,
            arguments: None,
        },
    );
    channel.metadata.namespace = Some("default".into());
    channel
}

fn provisioner(kind: &str, name: &str) -> Option<Provisioner> {
    Some(Provisioner {
        kind: kind.into(),
        name: name.into(),
    })
}

/// A real API server picks up new webhook configurations through an informer: poll a
/// dry-run create until the defaulter answers (bounded by `within`).
async fn wait_for_admission(running: &Running) {
    let api = channels(&running.env);
    let probe = channel("admission-probe", None);
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    within("the API server to call the defaulting webhook", async {
        loop {
            if let Ok(created) = api.create(&dry_run, &probe).await
                && created.spec.provisioner.is_some()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
}

/// The `Status` of a refused request.
fn refusal<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> (u16, String, String) {
    match result {
        Err(kube::Error::Api(status)) => {
            (status.code, status.reason.clone(), status.message.clone())
        }
        other => panic!("expected the API server to refuse, got {other:?}"),
    }
}

#[tokio::test]
async fn the_api_server_defaults_validates_and_denies_through_the_webhooks() {
    let running = start().await;
    let api = channels(&running.env);

    // Defaulted by the API server: the stored object has the provisioner.
    api.create(&PostParams::default(), &channel("defaulted", None))
        .await
        .unwrap_or_else(|e| panic!("creating a Channel without a provisioner: {e}"));
    let stored = api.get("defaulted").await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        stored.spec.provisioner,
        provisioner("ClusterChannelProvisioner", "in-memory"),
        "the mutating webhook's patch was stored"
    );

    // Rejected by the validating webhook, naming the field; nothing stored.
    let (code, reason, message) = refusal(
        api.create(
            &PostParams::default(),
            &channel("invalid", provisioner("", "kafka")),
        )
        .await,
    );
    assert_eq!((code, reason.as_str()), (422, "Invalid"), "{message}");
    assert!(
        message.contains("denied the request") && message.contains("spec.provisioner.kind"),
        "{message}"
    );
    let missing = api
        .get_opt("invalid")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(missing.is_none(), "a rejected Channel must not be stored");

    // Denied by the mutating webhook.
    let (code, _, message) = refusal(
        api.create(
            &PostParams::default(),
            &channel(
                "denied",
                provisioner("ClusterChannelProvisioner", "deny-me"),
            ),
        )
        .await,
    );
    assert_eq!(code, 403, "{message}");
    assert!(message.contains("deny-me is not allowed"), "{message}");

    // Updates are validated against the old object: the provisioner is immutable, for a
    // merge patch as for a replace.
    let patch = serde_json::json!({"spec": {"provisioner": {"kind": "ClusterChannelProvisioner", "name": "kafka"}}});
    let (code, _, message) = refusal(
        api.patch("defaulted", &PatchParams::default(), &Patch::Merge(&patch))
            .await,
    );
    assert_eq!(code, 422, "{message}");
    assert!(message.contains("spec.provisioner"), "{message}");
    let mut replaced = stored.clone();
    replaced.spec.provisioner = provisioner("ClusterChannelProvisioner", "kafka");
    let (code, _, message) = refusal(
        api.replace("defaulted", &PostParams::default(), &replaced)
            .await,
    );
    assert_eq!(code, 422, "{message}");
    let unchanged = api.get("defaulted").await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(unchanged.spec.provisioner, stored.spec.provisioner);

    // An allowed update goes through.
    let labels = serde_json::json!({"metadata": {"labels": {"protected": "true"}}});
    api.patch("defaulted", &PatchParams::default(), &Patch::Merge(&labels))
        .await
        .unwrap_or_else(|e| panic!("an allowed patch: {e}"));

    // Deletes are validated too: a protected Channel stays.
    let (code, _, message) = refusal(api.delete("defaulted", &DeleteParams::default()).await);
    assert_eq!(code, 403, "{message}");
    assert!(message.contains("protected"), "{message}");
    assert!(
        api.get_opt("defaulted")
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .is_some()
    );
}

#[tokio::test]
async fn the_configurations_point_at_the_local_server_with_its_ca() {
    let running = start().await;
    let client = running.env.kube_client();
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client);
    let mutating = mutating
        .get(webhook::MUTATING_CONFIGURATION)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let validating = validating
        .get(webhook::VALIDATING_CONFIGURATION)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let configs = mutating
        .webhooks
        .iter()
        .flatten()
        .map(|w| &w.client_config)
        .chain(
            validating
                .webhooks
                .iter()
                .flatten()
                .map(|w| &w.client_config),
        );
    for config in configs {
        let url = config.url.as_deref().unwrap_or("");
        assert!(
            url.starts_with(&running.served.serving().url("/"))
                && url.contains("-eventing-knative-dev-v1alpha1-channel"),
            "{url}"
        );
        assert!(config.service.is_none());
        assert_eq!(
            config.ca_bundle.as_ref().map(|b| b.0.as_slice()),
            Some(running.served.serving().ca_pem.as_bytes())
        );
    }
}

#[tokio::test]
async fn serve_webhooks_serves_and_registers_a_projects_webhooks_in_one_call() {
    let env = TestEnv::start(scheme())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let served = env
        .serve_webhooks(webhooks())
        .await
        .unwrap_or_else(|e| panic!("serving the webhooks: {e}"));
    let running = Running { env, served };
    wait_for_admission(&running).await;
    let api = channels(&running.env);
    let created = api
        .create(&PostParams::default(), &channel("served", None))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        created.spec.provisioner,
        provisioner("ClusterChannelProvisioner", "in-memory")
    );
    let (code, _, message) = refusal(
        api.create(
            &PostParams::default(),
            &channel("invalid", provisioner("ClusterChannelProvisioner", "")),
        )
        .await,
    );
    assert_eq!(code, 422, "{message}");
    running
        .served
        .stop()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}

/// Conversion through the API server needs a real one (the fake stores every version of a
/// kind as one and does not call conversion webhooks).
#[tokio::test]
async fn the_api_server_converts_through_the_webhook() {
    if !TestEnv::envtest_available() {
        eprintln!(
            "skipping the conversion half: KUBEBUILDER_ASSETS is not set (the fake API server does not convert)"
        );
        return;
    }
    let env = TestEnv::start(scheme())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // Registers the admission webhooks and switches the Widget CRD to `strategy: Webhook`.
    let _served = env
        .serve_webhooks(webhooks())
        .await
        .unwrap_or_else(|e| panic!("serving the webhooks: {e}"));
    let client = env.kube_client();
    let old_api: Api<v1::Widget> = Api::namespaced(client.clone(), "default");
    let new_api: Api<v2::Widget> = Api::namespaced(client, "default");
    let mut widget = v1::Widget::new(
        "",
        v1::WidgetSpec {
            size: 7,
            color: "red".into(),
        },
    );
    widget.metadata.name = None;
    widget.metadata.generate_name = Some("converted-".into());
    widget.metadata.namespace = Some("default".into());
    // The CRD update reaches the API server's conversion machinery through its informer:
    // until then a v1 object is stored without the webhook (and reads back wrong as v2), so
    // poll create-and-read until the webhook converted one (bounded by `within`).
    let (name, hub) = within("the API server to convert through the webhook", async {
        loop {
            let created = old_api
                .create(&PostParams::default(), &widget)
                .await
                .unwrap_or_else(|e| panic!("creating a v1 Widget: {e}"));
            let name = created.metadata.name.unwrap_or_default();
            let hub = new_api.get(&name).await.unwrap_or_else(|e| panic!("{e}"));
            if hub.spec.size_mm != 0 {
                return (name, hub);
            }
            old_api
                .delete(&name, &DeleteParams::default())
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    assert_eq!(hub.spec.size_mm, 70);
    assert_eq!(hub.spec.colors, vec!["red".to_owned()]);
    let spoke = old_api.get(&name).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        spoke.spec, widget.spec,
        "v1 -> v2 -> v1 keeps what both hold"
    );
}
