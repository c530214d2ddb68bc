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

//! Tests of the Channel webhooks: the webhook methods are called directly; the defaulter reads
//! its ConfigMap from the fake API server (or envtest), uncached or through a running manager's
//! cache. The last test registers the webhooks with the API server itself, as in a cluster, and
//! creates Channels through it. kbr-runtime's own tests cover the HTTPS server and the review
//! format.

use kbr_runtime::Client;
use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
use kbr_runtime::resource::CustomResource as _;
use kbr_runtime::webhook::{
    AdmissionContext, AdmissionError, Defaulter, Operation, Validator, mutate_path, validate_path,
};

use knative_lite::api::eventing as api;
use knative_lite::api::eventing::v1alpha1::ProvisionerReference;
use knative_lite::webhook::eventing::v1alpha1::channel as webhook;

use crate::support::{Running, env, eventually, manager, namespace};

/// The kind under test.
type Object = api::v1alpha1::Channel;

/// The spec's ConfigMap value.
const CONFIG: &str = "
clusterdefault:
  apiversion: eventing.knative.dev/v1alpha1
  kind: ClusterChannelProvisioner
  name: in-memory
namespacedefaults:
  some-namespace:
    apiversion: eventing.knative.dev/v1alpha1
    kind: ClusterChannelProvisioner
    name: some-other-provisioner
";

fn provisioner(name: &str) -> ProvisionerReference {
    ProvisionerReference {
        api_version: Some("eventing.knative.dev/v1alpha1".into()),
        kind: Some("ClusterChannelProvisioner".into()),
        name: Some(name.into()),
        namespace: None,
    }
}

/// A Channel without a provisioner in `namespace`, with arguments.
fn new_object(namespace: &str) -> Object {
    let mut obj = Object::new("test-resource", Default::default());
    obj.metadata.namespace = Some(namespace.into());
    obj.spec.arguments = Some(serde_json::json!({"bufferSize": 10}));
    obj
}

fn config_map(value: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.namespace = Some(webhook::DEFAULT_CONFIG_NAMESPACE.into());
    cm.metadata.name = Some(webhook::DEFAULT_CONFIG_NAME.into());
    cm.data = Some([(webhook::DEFAULT_CONFIG_KEY.to_owned(), value.to_owned())].into());
    cm
}

/// Creates or replaces the ConfigMap with `value`.
async fn put_config(client: &Client, value: &str) -> anyhow::Result<()> {
    namespace(client, webhook::DEFAULT_CONFIG_NAMESPACE).await?;
    let mut cm = config_map(value);
    match client
        .get::<ConfigMap>(
            Some(webhook::DEFAULT_CONFIG_NAMESPACE),
            webhook::DEFAULT_CONFIG_NAME,
        )
        .await
    {
        Ok(existing) => {
            cm.metadata.resource_version = existing.metadata.resource_version;
            client.update(&cm).await?;
        }
        Err(e) if e.is_not_found() => {
            client.create(&cm).await?;
        }
        Err(e) => return Err(e.into()),
    }
    Ok(())
}

/// The provisioner name the defaulter gives a Channel in `namespace`.
async fn defaulted(
    defaulter: &webhook::ChannelCustomDefaulter,
    namespace: &str,
) -> anyhow::Result<Object> {
    let ctx = AdmissionContext::new(Operation::Create);
    let mut obj = new_object(namespace);
    defaulter.set_defaults(&ctx, &mut obj).await?;
    Ok(obj)
}

fn provisioner_name(obj: &Object) -> Option<String> {
    obj.spec.provisioner.as_ref().and_then(|p| p.name.clone())
}

#[test]
fn the_config_parses_with_namespace_over_cluster_precedence() -> anyhow::Result<()> {
    let defaults = webhook::ChannelDefaults::from_yaml(CONFIG)?;
    assert_eq!(
        defaults.provisioner_for("default"),
        Some(&provisioner("in-memory"))
    );
    assert_eq!(
        defaults.provisioner_for("some-namespace"),
        Some(&provisioner("some-other-provisioner"))
    );
    Ok(())
}

#[tokio::test]
async fn defaulting_sets_the_provisioner_namespace_entry_over_cluster_default() -> anyhow::Result<()>
{
    let env = env().await?;
    let client = env.client();
    put_config(&client, CONFIG).await?;
    let defaulter = webhook::ChannelCustomDefaulter::new(Some(client));

    let obj = defaulted(&defaulter, "default").await?;
    assert_eq!(obj.spec.provisioner, Some(provisioner("in-memory")));
    assert_eq!(obj.spec.arguments, None, "arguments are cleared");

    let obj = defaulted(&defaulter, "some-namespace").await?;
    assert_eq!(
        obj.spec.provisioner,
        Some(provisioner("some-other-provisioner"))
    );
    Ok(())
}

#[tokio::test]
async fn defaulting_keeps_an_explicit_provisioner() -> anyhow::Result<()> {
    let env = env().await?;
    let client = env.client();
    put_config(&client, CONFIG).await?;
    let defaulter = webhook::ChannelCustomDefaulter::new(Some(client));
    let ctx = AdmissionContext::new(Operation::Create);
    let mut obj = new_object("default");
    obj.spec.provisioner = Some(provisioner("gcp-pubsub"));
    defaulter.set_defaults(&ctx, &mut obj).await?;
    assert_eq!(obj.spec.provisioner, Some(provisioner("gcp-pubsub")));
    assert!(obj.spec.arguments.is_some(), "arguments are kept");
    Ok(())
}

#[tokio::test]
async fn a_missing_or_malformed_config_map_leaves_the_channel_as_is() -> anyhow::Result<()> {
    let env = env().await?;
    let client = env.client();
    let defaulter = webhook::ChannelCustomDefaulter::new(Some(client.clone()));
    let untouched = new_object("default");

    // No ConfigMap.
    assert_eq!(defaulted(&defaulter, "default").await?.spec, untouched.spec);
    // Malformed YAML, and YAML of the wrong shape.
    for bad in [
        "clusterdefault: [unclosed",
        "clusterdefault: 42",
        "- a list",
    ] {
        put_config(&client, bad).await?;
        let reason = defaulter.defaults().await.expect_err(bad);
        assert!(reason.contains("default-channel-config"), "{reason}");
        assert_eq!(
            defaulted(&defaulter, "default").await?.spec,
            untouched.spec,
            "{bad}"
        );
    }
    // No client at all (the webhooks described for `make manifests`).
    let offline = webhook::ChannelCustomDefaulter::new(None);
    assert_eq!(defaulted(&offline, "default").await?.spec, untouched.spec);
    // A ConfigMap read from elsewhere when configured so.
    let elsewhere = webhook::ChannelCustomDefaulter::new(Some(client)).with_config_map("x", "y");
    assert!(elsewhere.defaults().await.is_err_and(|r| r.contains("x/y")));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_map_edits_apply_without_a_restart() -> anyhow::Result<()> {
    let env = env().await?;
    let client = env.client();
    put_config(&client, CONFIG).await?;
    // The defaulter reads through the manager's cache, as in `src/main.rs`.
    let manager = manager(&env);
    let defaulter = webhook::ChannelCustomDefaulter::new(Some(manager.client()));
    let running = Running::start(manager);

    let first = eventually("the cluster default", || async {
        provisioner_name(&defaulted(&defaulter, "default").await.ok()?)
    })
    .await;
    assert_eq!(first, "in-memory");

    put_config(&client, &CONFIG.replace("name: in-memory", "name: kafka")).await?;
    eventually("the edited cluster default", || async {
        let name = provisioner_name(&defaulted(&defaulter, "default").await.ok()?)?;
        (name == "kafka").then_some(())
    })
    .await;
    running.stop().await
}

#[tokio::test]
async fn validation_refuses_a_channel_without_a_complete_provisioner() -> anyhow::Result<()> {
    let validator = webhook::ChannelCustomValidator;
    let create = AdmissionContext::new(Operation::Create);
    let denied_field = |result: Result<_, AdmissionError>| -> String {
        match result {
            Err(e) => format!("{e:?} {e}"),
            Ok(_) => String::new(),
        }
    };

    let message = denied_field(
        validator
            .validate_create(&create, &new_object("default"))
            .await,
    );
    assert!(message.contains("spec.provisioner"), "{message}");

    let mut no_kind = new_object("default");
    no_kind.spec.provisioner = Some(ProvisionerReference {
        kind: None,
        ..provisioner("in-memory")
    });
    let message = denied_field(validator.validate_create(&create, &no_kind).await);
    assert!(message.contains("spec.provisioner.kind"), "{message}");

    let mut no_name = new_object("default");
    no_name.spec.provisioner = Some(ProvisionerReference {
        name: None,
        ..provisioner("in-memory")
    });
    let message = denied_field(validator.validate_create(&create, &no_name).await);
    assert!(message.contains("spec.provisioner.name"), "{message}");

    let mut valid = new_object("default");
    valid.spec.provisioner = Some(provisioner("in-memory"));
    assert!(validator.validate_create(&create, &valid).await?.is_empty());
    Ok(())
}

#[tokio::test]
async fn the_provisioner_is_immutable() -> anyhow::Result<()> {
    let validator = webhook::ChannelCustomValidator;
    let update = AdmissionContext::new(Operation::Update);
    let mut old = new_object("default");
    old.spec.provisioner = Some(provisioner("in-memory"));
    // Other changes are fine.
    let mut same = old.clone();
    same.spec.arguments = None;
    assert!(
        validator
            .validate_update(&update, &old, &same)
            .await?
            .is_empty()
    );
    // A different provisioner is refused, naming the field.
    let mut changed = old.clone();
    changed.spec.provisioner = Some(provisioner("gcp-pubsub"));
    let error = validator
        .validate_update(&update, &old, &changed)
        .await
        .expect_err("immutable");
    let message = format!("{error:?} {error}");
    assert!(message.contains("spec.provisioner"), "{message}");
    assert!(message.to_lowercase().contains("immutable"), "{message}");
    Ok(())
}

#[test]
fn the_webhooks_are_registered() -> anyhow::Result<()> {
    let webhooks = knative_lite::webhooks(None)?;
    let paths = webhooks.paths();
    assert!(paths.contains(&mutate_path(&Object::INFO)), "{paths:?}");
    assert!(paths.contains(&validate_path(&Object::INFO)), "{paths:?}");
    Ok(())
}

#[tokio::test]
async fn the_samples_are_defaulted_and_admitted_with_the_sample_config_map() -> anyhow::Result<()> {
    let env = env().await?;
    let client = env.client();
    let root = env!("CARGO_MANIFEST_DIR");
    let cm_yaml = std::fs::read_to_string(format!(
        "{root}/config/samples/default_channel_webhook_configmap.yaml"
    ))?;
    let cm: ConfigMap = serde_saphyr::from_str(&cm_yaml)?;
    let value = cm
        .data
        .as_ref()
        .and_then(|d| d.get(webhook::DEFAULT_CONFIG_KEY))
        .cloned()
        .unwrap_or_default();
    put_config(&client, &value).await?;

    let channels_yaml = std::fs::read_to_string(format!(
        "{root}/config/samples/eventing_v1alpha1_channel.yaml"
    ))?;
    let channels: Vec<Object> = serde_saphyr::from_multiple(&channels_yaml)?;
    assert_eq!(channels.len(), 2);
    let defaulter = webhook::ChannelCustomDefaulter::new(Some(client));
    let validator = webhook::ChannelCustomValidator;
    let ctx = AdmissionContext::new(Operation::Create);
    for mut channel in channels {
        defaulter.set_defaults(&ctx, &mut channel).await?;
        assert_eq!(provisioner_name(&channel).as_deref(), Some("in-memory"));
        validator.validate_create(&ctx, &channel).await?;
    }
    Ok(())
}

/// The seed article's point, end to end: a Channel created without a provisioner through the
/// API server is stored with the one the ConfigMap names for its namespace, and one with an
/// incomplete provisioner is refused by the API server.
#[tokio::test]
async fn the_api_server_defaults_channels_from_the_config_map() -> anyhow::Result<()> {
    let env = env().await?;
    let client = env.client();
    put_config(&client, CONFIG).await?;
    namespace(&client, "some-namespace").await?;
    let _served = env
        .serve_webhooks(knative_lite::webhooks(Some(client.clone()))?)
        .await?;
    // A real API server picks the configurations up through an informer: wait until a dry
    // run comes back defaulted.
    let api: kbr_runtime::kube::Api<Object> =
        kbr_runtime::kube::Api::namespaced(env.kube_client(), "default");
    let dry_run = kbr_runtime::kube::api::PostParams {
        dry_run: true,
        ..Default::default()
    };
    eventually("the API server to call the defaulting webhook", || async {
        let previewed = api.create(&dry_run, &new_object("default")).await.ok()?;
        previewed.spec.provisioner.is_some().then_some(())
    })
    .await;

    client.create(&new_object("default")).await?;
    client.create(&new_object("some-namespace")).await?;
    let stored: Object = client.get(Some("default"), "test-resource").await?;
    assert_eq!(stored.spec.provisioner, Some(provisioner("in-memory")));
    // Exactly what the defaulter gives when called directly.
    let direct = webhook::ChannelCustomDefaulter::new(Some(client.clone()));
    assert_eq!(stored.spec, defaulted(&direct, "default").await?.spec);
    let stored: Object = client.get(Some("some-namespace"), "test-resource").await?;
    assert_eq!(
        provisioner_name(&stored).as_deref(),
        Some("some-other-provisioner")
    );

    let mut no_name = new_object("default");
    no_name.metadata.name = Some("no-name".into());
    no_name.spec.provisioner = Some(ProvisionerReference {
        name: None,
        ..provisioner("in-memory")
    });
    let refused = client
        .create(&no_name)
        .await
        .expect_err("the API server must refuse a provisioner without a name");
    assert!(
        refused.to_string().contains("spec.provisioner.name"),
        "{refused}"
    );
    assert!(
        client
            .get::<Object>(Some("default"), "no-name")
            .await
            .is_err_and(|e| e.is_not_found())
    );
    Ok(())
}
