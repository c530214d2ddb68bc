//! The webhook server inside a Manager, and local registration (`make run`): configurations
//! with `clientConfig.url` + CA bundle, CRD conversion switched to the webhook.

mod webhook_support;

use kbr_runtime::k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kbr_runtime::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kbr_runtime::kube::Api;
use kbr_runtime::resource::CustomResource as _;
use kbr_runtime::webhook::{self, ClientConfig, WebhookServer, WebhookServerOptions, Webhooks};
use kbr_runtime::{Manager, ManagerOptions, Scheme};
use kbr_testing::FakeApiServer;
use serde_json::json;
use webhook_support::{
    MUTATE, admission_review, channel_json, request, response_of, v1, v2, webhooks, within,
};

fn fake() -> FakeApiServer {
    let mut scheme = Scheme::new();
    scheme.add::<v1::Widget>().add::<v2::Widget>();
    FakeApiServer::with_scheme(&scheme).unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn install_registers_urls_ca_bundle_and_conversion() {
    let fake = fake();
    let crds: Api<CustomResourceDefinition> = Api::all(fake.kube_client());
    // `with_scheme` installed the Widget CRD (conversion: None).
    let target = ClientConfig::url("https://192.168.1.5:9443", b"CA PEM".to_vec())
        .unwrap_or_else(|e| panic!("{e}"));

    let webhooks = webhooks();
    webhook::install(fake.kube_client(), &webhooks, &target)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // Idempotent (server-side apply).
    webhook::install(fake.kube_client(), &webhooks, &target)
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    let mutating: Api<MutatingWebhookConfiguration> = Api::all(fake.kube_client());
    let mutating = mutating
        .get(webhook::MUTATING_CONFIGURATION)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let hook = &mutating.webhooks.unwrap_or_default()[0];
    assert_eq!(
        hook.client_config.url.as_deref(),
        Some("https://192.168.1.5:9443/mutate-eventing-knative-dev-v1alpha1-channel")
    );
    assert_eq!(
        hook.client_config.ca_bundle.as_ref().map(|b| b.0.clone()),
        Some(b"CA PEM".to_vec())
    );
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(fake.kube_client());
    let validating = validating
        .get(webhook::VALIDATING_CONFIGURATION)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        validating.webhooks.unwrap_or_default()[0].name,
        "vchannel-v1alpha1.eventing.knative.dev"
    );

    let crd = crds
        .get(&v2::Widget::crd_name())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let conversion = crd
        .spec
        .conversion
        .unwrap_or_else(|| panic!("no conversion"));
    assert_eq!(conversion.strategy, "Webhook");
    let webhook_conversion = conversion.webhook.unwrap_or_else(|| panic!("no webhook"));
    assert_eq!(webhook_conversion.conversion_review_versions, ["v1"]);
    let client = webhook_conversion
        .client_config
        .unwrap_or_else(|| panic!("no clientConfig"));
    assert_eq!(
        client.url.as_deref(),
        Some("https://192.168.1.5:9443/convert")
    );
    assert_eq!(client.ca_bundle.map(|b| b.0), Some(b"CA PEM".to_vec()));
}

#[tokio::test]
async fn install_names_what_the_api_server_refused() {
    // The API server refuses the MutatingWebhookConfiguration (e.g. RBAC).
    let fake = FakeApiServer::new();
    fake.faults()
        .fail_next_for::<MutatingWebhookConfiguration>(1, None, 403);
    let target =
        ClientConfig::url("https://127.0.0.1:9443", Vec::new()).unwrap_or_else(|e| panic!("{e}"));
    let err = webhook::install(fake.kube_client(), &webhooks(), &target)
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.starts_with(
            "cannot install MutatingWebhookConfiguration mutating-webhook-configuration"
        ),
        "{err}"
    );
}

/// A port that was free a moment ago (the manager binds it itself).
async fn free_port() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    listener
        .local_addr()
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn the_manager_runs_the_server_and_registers_it_for_local_development() {
    let fake = fake();
    let port = free_port().await;
    let manager_options = ManagerOptions {
        health_probe_bind_address: "127.0.0.1:0".into(),
        ..ManagerOptions::default()
    };
    let mut manager = Manager::with_client(fake.kube_client(), Scheme::new(), manager_options);
    let mut hooks = Webhooks::with_client(manager.client());
    assert!(hooks.client().is_some());
    webhook::WebhookBuilder::<webhook_support::channel::Channel>::new()
        .with_defaulter(webhook_support::channel::ChannelDefaulter)
        .complete(&mut hooks)
        .unwrap_or_else(|e| panic!("{e}"));
    let options = WebhookServerOptions {
        host: "127.0.0.1".into(),
        port,
        local_url: Some(format!("https://127.0.0.1:{port}")),
        ..WebhookServerOptions::default()
    };
    let server = WebhookServer::new(hooks, options).unwrap_or_else(|e| panic!("{e}"));
    let ca = server.ca_bundle().map(str::to_string).unwrap_or_default();
    manager
        .add_webhook_server(server)
        .unwrap_or_else(|e| panic!("{e}"));

    let mut addresses = manager.serving_addresses();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(manager.start_with_shutdown(async {
        let _ = stopped.await;
    }));
    let probes = within("the probe server", addresses.wait_for(Option::is_some))
        .await
        .ok()
        .and_then(|a| a.and_then(|a| a.health_probe))
        .unwrap_or_else(|| panic!("no probe address"));

    // Registered with the local URL and the generated CA...
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(fake.kube_client());
    let registered = within("the configuration", async {
        loop {
            if let Ok(config) = mutating.get(webhook::MUTATING_CONFIGURATION).await {
                return config;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await;
    let hook = &registered.webhooks.unwrap_or_default()[0];
    assert_eq!(
        hook.client_config.url,
        Some(format!("https://127.0.0.1:{port}{MUTATE}"))
    );
    assert_eq!(
        hook.client_config.ca_bundle.as_ref().map(|b| b.0.clone()),
        Some(ca.as_bytes().to_vec())
    );

    // ...ready once serving, and serving at that URL with that CA.
    within("/readyz", async {
        loop {
            let mut tcp = tokio::net::TcpStream::connect(probes)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let _ = tcp
                .write_all(b"GET /readyz?verbose HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
                .await;
            let mut out = String::new();
            let _ = tcp.read_to_string(&mut out).await;
            if out.starts_with("HTTP/1.1 200") {
                assert!(out.contains("[+]webhook ok"), "{out}");
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await;
    let addr = ([127, 0, 0, 1], port).into();
    let review = admission_review("m", "CREATE", Some(channel_json(json!({}))), None);
    let reply = request(
        addr,
        &[&ca],
        "POST",
        MUTATE,
        Some("application/json"),
        serde_json::to_vec(&review).unwrap_or_default(),
    )
    .await;
    assert_eq!(response_of(&reply, "m")["allowed"], true);

    let _ = stop.send(());
    within("the manager to stop", running)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|e| panic!("{e}"));
}
