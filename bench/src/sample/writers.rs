//! The benchmark's own writes in the timed phase: N Foos created by concurrent writers sharing
//! one client and, for the `ceiling` row, the controller's work done by those writers instead.

use anyhow::Context as _;
use futures::{StreamExt as _, TryStreamExt as _, stream};
use k8s_openapi::api::apps::v1::Deployment;
use kube::Api;
use kube::api::PostParams;

use super::foo::{self, Foo};

/// Creates Foos `0..n` in `namespace` (one `POST` each, as `kubectl create` does), `writers`
/// at a time over one `client`. With `ceiling`, each writer then does for its Foo what a
/// controller's first sync does, minus the Event: create the Deployment (controlled by the
/// Foo) and write the Foo's status with the `resourceVersion` the create returned.
///
/// # Errors
/// The first failed request.
pub async fn create(
    client: &kube::Client,
    namespace: &str,
    n: usize,
    writers: usize,
    ceiling: bool,
) -> anyhow::Result<()> {
    create_named(client, namespace, (0..n).map(foo::name), writers, ceiling).await
}

/// [`create`] for the Foos named `names`.
///
/// # Errors
/// The first failed request.
pub async fn create_named(
    client: &kube::Client,
    namespace: &str,
    names: impl Iterator<Item = String>,
    writers: usize,
    ceiling: bool,
) -> anyhow::Result<()> {
    let foos: Api<Foo> = Api::namespaced(client.clone(), namespace);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), namespace);
    let post = PostParams::default();
    stream::iter(names)
        .map(|name| {
            let (foos, deployments, post) = (&foos, &deployments, &post);
            async move {
                let created = foos
                    .create(post, &foo::sample_named(&name, namespace))
                    .await
                    .with_context(|| format!("creating Foo {namespace}/{name}"))?;
                if !ceiling {
                    return anyhow::Ok(());
                }
                let wanted = foo::new_deployment(&created)
                    .with_context(|| format!("Foo {name} came back without a uid"))?;
                let deployment = deployments
                    .create(post, &wanted)
                    .await
                    .with_context(|| format!("creating the Deployment of Foo {name}"))?;
                foos.replace_status(&name, post, &foo::with_status(&created, &deployment))
                    .await
                    .with_context(|| format!("writing the status of Foo {name}"))?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(writers.max(1))
        .try_collect::<()>()
        .await
}
