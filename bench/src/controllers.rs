//! The two controllers under test, each run alone in a `controller` child process until killed.
//!
//! Both watch the BenchWidgets of one namespace, are handed each object from their own cache
//! (kbr: the manager's shared informer; kube-runtime: the `Controller`'s reflector store), run
//! [`workload::status_patch`] on it and, when it returns a patch, send it as a JSON merge patch
//! to the object's `/status` — one `PATCH` per object, the same request from both. Both run
//! with the same number of concurrent reconciles, no tracing subscriber, and requeue nothing
//! on success (the status write's own watch event brings each object back once, and the second
//! reconcile finds it ready and writes nothing).

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::api::{Patch, PatchParams};

use crate::workload::{self, BenchWidget};

/// Which controller implementation to run.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Impl {
    /// kbr: `Manager` + `Controller` + `Reconciler`, cached `Client::patch_status`.
    Kbr,
    /// Plain kube-runtime: `kube::runtime::Controller` + its reflector store + `Api::patch_status`.
    Kube,
}

impl Impl {
    /// The name used on the command line and in the report.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Kbr => "kbr",
            Self::Kube => "kube-runtime",
        }
    }

    /// The `--impl` value.
    #[must_use]
    pub fn flag(self) -> &'static str {
        match self {
            Self::Kbr => "kbr",
            Self::Kube => "kube",
        }
    }
}

/// Runs `which` on `namespace` with `concurrency` concurrent reconciles, until killed.
///
/// # Errors
/// When the controller cannot start.
pub async fn run(
    which: Impl,
    client: kube::Client,
    namespace: &str,
    concurrency: u16,
) -> anyhow::Result<()> {
    match which {
        Impl::Kbr => kbr::run(client, namespace, concurrency).await,
        Impl::Kube => plain::run(client, namespace, concurrency).await,
    }
}

/// The name of a cached object, for its status patch.
fn name_of(widget: &BenchWidget) -> &str {
    widget.metadata.name.as_deref().unwrap_or_default()
}

/// kbr's controller, as a kbr user writes it.
mod kbr {
    use kbr_runtime::cache::Namespaces;
    use kbr_runtime::{
        Action, Client, Controller, Error, Manager, ManagerOptions, Reconciler, Scheme,
    };

    use super::*;

    struct WidgetReconciler {
        client: Client,
    }

    impl Reconciler for WidgetReconciler {
        type Object = BenchWidget;
        type Error = Error;

        async fn reconcile(&self, widget: Arc<BenchWidget>) -> Result<Action, Error> {
            if let Some(patch) = workload::status_patch(&widget) {
                let name = name_of(&widget);
                let namespace = widget.metadata.namespace.as_deref();
                let written: Result<BenchWidget, Error> = self
                    .client
                    .patch_status(
                        namespace,
                        name,
                        &Patch::Merge(&patch),
                        &PatchParams::default(),
                    )
                    .await;
                if let Err(error) = written {
                    eprintln!("kbr: patching the status of {name}: {error}");
                    return Err(error);
                }
            }
            Ok(Action::await_change())
        }
    }

    pub(super) async fn run(
        client: kube::Client,
        namespace: &str,
        concurrency: u16,
    ) -> anyhow::Result<()> {
        let mut scheme = Scheme::new();
        scheme.add::<BenchWidget>();
        let options = ManagerOptions {
            namespaces: Namespaces::one(namespace),
            health_probe_bind_address: "0".into(),
            ..ManagerOptions::default()
        };
        let mut manager = Manager::with_client(client, scheme, options);
        let reconciler = WidgetReconciler {
            client: manager.client(),
        };
        manager.add_controller(
            Controller::new(reconciler).max_concurrent_reconciles(usize::from(concurrency)),
        )?;
        manager.start().await?;
        Ok(())
    }
}

/// The baseline: kube-runtime's `Controller` with no kbr type in sight (the object type is the
/// same Rust struct; it implements `kube::Resource`).
mod plain {
    use kube::Api;
    use kube::runtime::controller::{Action, Config, Controller};
    use kube::runtime::watcher;

    use super::*;

    struct Context {
        api: Api<BenchWidget>,
    }

    async fn reconcile(widget: Arc<BenchWidget>, ctx: Arc<Context>) -> Result<Action, kube::Error> {
        if let Some(patch) = workload::status_patch(&widget) {
            let name = name_of(&widget);
            let written = ctx
                .api
                .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
                .await;
            if let Err(error) = written {
                eprintln!("kube-runtime: patching the status of {name}: {error}");
                return Err(error);
            }
        }
        Ok(Action::await_change())
    }

    fn error_policy(_: Arc<BenchWidget>, _: &kube::Error, _: Arc<Context>) -> Action {
        Action::requeue(Duration::from_millis(5))
    }

    pub(super) async fn run(
        client: kube::Client,
        namespace: &str,
        concurrency: u16,
    ) -> anyhow::Result<()> {
        let api: Api<BenchWidget> = Api::namespaced(client, namespace);
        let context = Arc::new(Context { api: api.clone() });
        Controller::new(api, watcher::Config::default())
            .with_config(Config::default().concurrency(concurrency))
            .shutdown_on_signal()
            .run(reconcile, error_policy, context)
            .for_each(|_| std::future::ready(()))
            .await;
        Ok(())
    }
}
