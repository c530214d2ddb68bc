//! The world a restart benchmark starts from: a fresh API server (or namespace) holding N Foos
//! that a converged controller left behind, each with its Deployment and status.

use anyhow::Context as _;

use super::args::{INITIAL, RestartArgs};
use super::controller::Report;
use crate::populate;
use crate::sample::foo::{self, Foo};
use crate::sample::served::Served;
use crate::sample::writers;
use crate::target::Session;

/// The API server of one measurement, its client, and the namespace holding the synced Foos.
pub struct Synced {
    /// The fake API server process (or the cluster of `--kubeconfig`); dropping it stops it.
    pub session: Session,
    /// A client of that API server.
    pub client: kube::Client,
    /// The namespace of the Foos.
    pub namespace: String,
}

/// Starts a session, installs the Foo CRD and creates `n` synced Foos in `namespace` with
/// `args.writers` writers.
///
/// # Errors
/// When the session, the CRD, the namespace or a Foo cannot be set up.
pub async fn synced_foos(
    args: &RestartArgs,
    namespace: String,
    n: usize,
) -> anyhow::Result<Synced> {
    let session = Session::start(&args.server)?;
    let client = session.target().client().await?;
    populate::install_crd::<Foo>(&client, &foo::crd()).await?;
    populate::ensure_namespace(&client, &namespace).await?;
    writers::create(&client, &namespace, n, args.writers, true)
        .await
        .context("creating the synced Foos")?;
    Ok(Synced {
        session,
        client,
        namespace,
    })
}

/// When the controller of `report` first served the initial-list Foos (the synced ones), once
/// it served all `n` of them; on a shared cluster it then deletes `namespace`.
///
/// # Errors
/// When the controller did not serve all `n`, or the namespace cannot be deleted.
pub async fn initial_served<'r>(
    session: &Session,
    client: &kube::Client,
    namespace: &str,
    report: &'r Report,
    n: usize,
) -> anyhow::Result<&'r Served> {
    let initial = report
        .served
        .get(INITIAL)
        .filter(|s| s.count == n as u64)
        .with_context(|| format!("the controller did not serve all {n} initial Foos"))?;
    if session.is_shared() {
        populate::delete_namespace(client, namespace).await?;
    }
    Ok(initial)
}
