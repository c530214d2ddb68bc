//! kbr-runtime: what a kbr-generated operator runs on.
//!
//! controller-runtime's concepts, in Rust, on top of [`kube`] and kube-runtime. The modules are
//! layers, listed bottom to top: each uses only the ones above it in this table (the "Runtime
//! layers" of `docs/design-notes.md`, checked by a test), so any layer can be used, and
//! stepped down to, without those below it in the table.
//!
//! | module | concept | controller-runtime analogue |
//! |---|---|---|
//! | [`error`] | [`Error`]: what API calls (and reconcilers) fail with | apimachinery `api/errors` |
//! | [`logging`] | tracing set-up | `ctrl.SetLogger(zap.New(..))` |
//! | [`field_selector`] | the field-selector grammar (`a=b,c!=d`), one parser for cache and fake API server | apimachinery `fields.ParseSelector` |
//! | [`tls`] | serving certificates, reloaded; self-signed for local runs | `pkg/certwatcher` |
//! | [`rbac`] | RBAC rules from `#[rbac(...)]` markers | controller-gen `rbac` |
//! | [`scheme`] | GVK <-> Rust type, GVR, scope, without discovery | `runtime.Scheme` |
//! | [`leaderelection`] | Lease locks, the renew loop, and the lease state that guards work and writes | client-go `tools/leaderelection`, `pkg/leaderelection` |
//! | [`manifests`] | writes `config/crd/bases` and `config/rbac/role.yaml` | `make manifests` |
//! | [`cache`] | shared informers, indexes, what they watch | `pkg/cache` |
//! | [`client`] | reads (from the cache) and writes objects | `pkg/client` |
//! | [`reconcile`] | the [`Reconciler`] trait and its [`Action`] | `pkg/reconcile` |
//! | [`finalizer`] | cleanup before deletion (add, clean up, remove) | `controllerutil.AddFinalizer` & co. |
//! | [`ownership`] | owner and controller references | `controllerutil.SetControllerReference` |
//! | [`conditions`] | `status.conditions` with correct transition times | apimachinery `meta.SetStatusCondition` |
//! | [`events`] | `events.k8s.io/v1` Events about objects | `record.EventRecorder` |
//! | [`controller`] | For / Owns / Watches / sources -> workqueue -> Reconciler | `pkg/builder`, `pkg/controller`, `pkg/source` |
//! | [`sharding`] | objects split across replicas by Leases, a sharder and label selectors | kubernetes-controller-sharding |
//! | [`webhook`] | defaulting, validation and conversion webhooks over TLS | `pkg/webhook` |
//! | [`manager`] | runs controllers, webhooks, probes, metrics, leader election; [`ManagerArgs`], [`ManagerError`] | `pkg/manager` |
//! | [`multicluster`] | one controller across a fleet of clusters: providers, engagement, requests naming their cluster | multicluster-runtime |
//!
//! The Prometheus registry (controller-runtime's `pkg/metrics`) is internal, between `tls` and
//! `rbac`; the manager serves it on `/metrics`.
//!
//! Below all of these sits the crate **kbr-crd**, re-exported here: [`resource`] (what
//! `#[derive(CustomResource)]` implements: a kind's identity and CRD settings), [`crd`]
//! (CustomResourceDefinitions with structural schemas, controller-gen's `crd`) and
//! [`field_error`] (apimachinery's `field.Error`). Tests use the crate **kbr-testing** (the
//! in-process fake API server and envtest, controller-runtime's `pkg/client/fake` and
//! `pkg/envtest`), a dev-dependency that sits above this one.
//!
//! # A kind and its CRD
//!
//! `#[derive(CustomResource)]` on a Spec struct makes the root type (`Broker`: metadata, spec,
//! status), its `kube::Resource` impl and its [`resource::ResourceInfo`]; [`crd::CustomResourceExt`]
//! gives it its CRD:
//!
//! ```
//! use kbr_runtime::CustomResource;
//! use kbr_runtime::crd::CustomResourceExt as _;
//! use kbr_runtime::resource::{CustomResource as _, Scope};
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! /// BrokerSpec defines the desired state of Broker.
//! #[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
//! #[kbr(group = "eventing.knative.dev", version = "v1alpha1", kind = "Broker", plural = "brokers")]
//! #[kbr(namespaced, status = "BrokerStatus")]
//! pub struct BrokerSpec {
//!     #[serde(default, skip_serializing_if = "Option::is_none")]
//!     pub foo: Option<String>,
//! }
//!
//! /// BrokerStatus defines the observed state of Broker.
//! #[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
//! pub struct BrokerStatus {}
//!
//! assert_eq!(Broker::API_VERSION, "eventing.knative.dev/v1alpha1");
//! assert_eq!(Broker::INFO.scope, Scope::Namespaced);
//! assert_eq!(Broker::crd_name(), "brokers.eventing.knative.dev");
//! let crd = Broker::crd();
//! assert_eq!(crd.spec.versions[0].name, "v1alpha1");
//! let broker = Broker::new("default", BrokerSpec::default());
//! assert_eq!(broker.metadata.name.as_deref(), Some("default"));
//! ```
//!
//! Generated projects depend on this crate alone for everything Kubernetes: [`kube`],
//! [`k8s_openapi`], [`schemars`], [`serde`] and [`serde_json`] are re-exported so versions never
//! drift. Enable exactly one Kubernetes version feature (`latest`) in the final binary.

// Every published crate documents its whole public API.
#![deny(missing_docs)]

// Lets code generated by kbr-derive name `::kbr_runtime` inside this crate's own tests too.
extern crate self as kbr_runtime;

pub mod cache;
pub mod client;
pub mod conditions;
pub mod controller;
pub mod error;
pub mod events;
pub mod field_selector;
pub mod finalizer;
mod flags;
mod gate;
pub mod leaderelection;
pub mod logging;
pub mod manager;
pub mod manifests;
pub mod metrics;
pub mod multicluster;
pub mod ownership;
pub mod rbac;
pub mod reconcile;
pub mod scheme;
mod scoped;
pub mod sharding;
pub mod tls;
pub mod webhook;

#[cfg(test)]
mod stub;

pub use client::Client;
pub use controller::Controller;
pub use error::Error;
pub use kbr_derive::schema;
pub use kbr_derive::{CustomResource, Rbac};
pub use manager::{Manager, ManagerArgs, ManagerError, ManagerOptions};
pub use rbac::Rbac;
pub use reconcile::{Action, Reconciler};
pub use resource::CustomResource;
pub use scheme::Scheme;

/// CRDs from Rust types (kbr-crd): structural schemas, markers, the Kubernetes CEL libraries.
pub use kbr_crd as crd;
pub use kbr_crd::{field_error, resource};

pub use k8s_openapi;
pub use kube;
pub use prometheus_client;
pub use schemars;
pub use serde;
pub use serde_json;
