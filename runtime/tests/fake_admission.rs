//! The fake API server's admission webhooks, beyond what `webhook_api_server.rs` runs on both
//! backends: warnings, failure policies, rules that do not match, dry runs and server-side
//! apply.

mod webhook_support;

use kbr_runtime::k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kbr_runtime::kube::api::{Api, Patch, PatchParams, PostParams};
use kbr_runtime::webhook::{self, ClientConfig};
use kbr_runtime::{Scheme, kube};
use kbr_testing::envtest::WebhookInstallOptions;
use kbr_testing::{ServedWebhooks, TestEnv};
use webhook_support::channel::{Channel, ChannelSpec, Provisioner};
use webhook_support::webhooks;

fn scheme() -> Scheme {
    let mut scheme = Scheme::new();
    scheme.add::<Channel>();
    scheme
}

fn configurations() -> (MutatingWebhookConfiguration, ValidatingWebhookConfiguration) {
    let target = ClientConfig::kubebuilder_service();
    let webhooks = webhooks();
    match (
        webhook::mutating_configuration(&webhooks, &target),
        webhook::validating_configuration(&webhooks, &target),
    ) {
        (Some(m), Some(v)) => (m, v),
        _ => panic!("the Channel has a defaulter and a validator"),
    }
}

/// The fake with the Channel webhooks installed and (when `serve`) their server running.
async fn start(
    serve: bool,
    edit: impl FnOnce(&mut MutatingWebhookConfiguration, &mut ValidatingWebhookConfiguration),
) -> (TestEnv, Option<ServedWebhooks>) {
    let env = TestEnv::start_fake(scheme()).unwrap_or_else(|e| panic!("{e}"));
    let (mut mutating, mut validating) = configurations();
    edit(&mut mutating, &mut validating);
    let serving = env
        .install_webhooks(
            WebhookInstallOptions::new()
                .mutating(mutating)
                .validating(validating),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let served = if serve {
        let served = ServedWebhooks::start(serving, webhooks()).await;
        Some(served.unwrap_or_else(|e| panic!("{e}")))
    } else {
        None
    };
    (env, served)
}

fn channel(name: &str, provisioner: Option<(&str, &str)>) -> Channel {
    let mut channel = Channel::new(
        name,
        ChannelSpec {
            provisioner: provisioner.map(|(kind, name)| Provisioner {
                kind: kind.into(),
                name: name.into(),
            }),
            arguments: None,
        },
    );
    channel.metadata.namespace = Some("default".into());
    channel
}

fn api(env: &TestEnv) -> Api<Channel> {
    Api::namespaced(env.kube_client(), "default")
}

fn code_and_message(result: Result<Channel, kube::Error>) -> (u16, String) {
    match result {
        Err(kube::Error::Api(status)) => (status.code, status.message.clone()),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn warnings_come_back_as_warning_headers() {
    let (env, _served) = start(true, |_, _| {}).await;
    let body = serde_json::to_vec(&channel(
        "old-style",
        Some(("ClusterChannelProvisioner", "deprecated")),
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    let request =
        http::Request::post("/apis/eventing.knative.dev/v1alpha1/namespaces/default/channels")
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(kube::client::Body::from(body))
            .unwrap_or_else(|e| panic!("{e}"));
    let response = env
        .kube_client()
        .send(request)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status(), http::StatusCode::CREATED);
    let warnings: Vec<_> = response
        .headers()
        .get_all(http::header::WARNING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    assert_eq!(
        warnings,
        ["299 - \"provisioner deprecated is deprecated; use in-memory\""]
    );
}

#[tokio::test]
async fn an_unreachable_webhook_fails_requests_unless_its_policy_is_ignore() {
    // No server listening on the port: calls fail.
    let (env, _served) = start(false, |_, _| {}).await;
    let (code, message) = code_and_message(
        api(&env)
            .create(&PostParams::default(), &channel("a", None))
            .await,
    );
    assert_eq!(code, 500, "{message}");
    assert!(
        message.starts_with("Internal error occurred: failed calling webhook \"mchannel-v1alpha1.eventing.knative.dev\""),
        "{message}"
    );
    assert!(
        message.contains("failed to call webhook: Post"),
        "{message}"
    );

    let ignore = |m: &mut MutatingWebhookConfiguration, v: &mut ValidatingWebhookConfiguration| {
        for w in m.webhooks.iter_mut().flatten() {
            w.failure_policy = Some("Ignore".into());
        }
        for w in v.webhooks.iter_mut().flatten() {
            w.failure_policy = Some("Ignore".into());
        }
    };
    let (env, _served) = start(false, ignore).await;
    let created = api(&env)
        .create(&PostParams::default(), &channel("a", None))
        .await
        .unwrap_or_else(|e| panic!("failurePolicy Ignore: {e}"));
    assert_eq!(created.spec.provisioner, None, "no webhook ran");
}

#[tokio::test]
async fn webhooks_whose_rules_do_not_match_are_not_called() {
    // Rules for another version: the (unreachable) webhooks are never called.
    let other_version = |m: &mut MutatingWebhookConfiguration,
                         v: &mut ValidatingWebhookConfiguration| {
        let rules = m
            .webhooks
            .iter_mut()
            .flatten()
            .flat_map(|w| w.rules.iter_mut().flatten())
            .chain(
                v.webhooks
                    .iter_mut()
                    .flatten()
                    .flat_map(|w| w.rules.iter_mut().flatten()),
            );
        for rule in rules {
            rule.api_versions = Some(vec!["v1".into()]);
        }
    };
    let (env, _served) = start(false, other_version).await;
    let created = api(&env)
        .create(&PostParams::default(), &channel("a", None))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(created.spec.provisioner, None);
}

#[tokio::test]
async fn dry_runs_and_server_side_apply_are_admitted_too() {
    let (env, _served) = start(true, |_, _| {}).await;
    let api = api(&env);
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let previewed = api
        .create(&dry_run, &channel("preview", None))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(previewed.spec.provisioner.is_some(), "defaulted");
    assert!(
        api.get_opt("preview").await.ok().flatten().is_none(),
        "not stored"
    );

    // An apply that creates is a CREATE; one that changes the provisioner is a denied UPDATE.
    let apply = PatchParams::apply("test").force();
    let applied = api
        .patch("applied", &apply, &Patch::Apply(&channel("applied", None)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        applied.spec.provisioner.map(|p| p.name),
        Some("in-memory".into())
    );
    let (code, message) = code_and_message(
        api.patch(
            "applied",
            &apply,
            &Patch::Apply(&channel(
                "applied",
                Some(("ClusterChannelProvisioner", "kafka")),
            )),
        )
        .await,
    );
    assert_eq!(code, 422, "{message}");
    assert!(message.contains("spec.provisioner"), "{message}");
}
