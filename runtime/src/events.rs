//! Kubernetes Events (`events.k8s.io/v1`): controller-runtime's `record.EventRecorder`
//! (`mgr.GetEventRecorderFor(name)`), on kube-runtime's `events::Recorder`.
//!
//! Events are the short, human-facing log attached to an object — what `kubectl describe`
//! shows under `Events:`. A controller records one when it does something a user would want
//! to know about (created a dependent, gave up on an invalid spec). Events are best-effort and
//! short-lived (the API server expires them after an hour by default): record what happened,
//! keep the state in `status`.
//!
//! Each event names the object it is about (`regarding`) and is an [`Event`]: an [`EventType`]
//! (`Normal` or `Warning`), a CamelCase `reason`, the CamelCase `action` taken, an optional
//! free-text `note` (at most 1 kB) and an optional related (`secondary`) object. Repeats of the same event (same object, type, reason and action, within 6
//! minutes) are folded into one Event with a growing `series.count` instead of flooding the
//! API server — share one [`EventRecorder`] (it is cheap to clone) rather than making one per
//! reconcile. Events about cluster-scoped objects go to the `default` namespace.
//!
//! RBAC: `create` and `patch` on `events` in `events.k8s.io`:
//! `#[rbac(groups = ["events.k8s.io"], resources = ["events"], verbs = ["create", "patch"])]`.
//!
//! ```no_run
//! use std::sync::Arc;
//! use kbr_runtime::events::{Event, EventRecorder, EventType};
//! use kbr_runtime::k8s_openapi::api::apps::v1::Deployment;
//! use kbr_runtime::{Action, Error, Reconciler};
//!
//! struct DeploymentReconciler {
//!     recorder: EventRecorder,
//! }
//!
//! impl Reconciler for DeploymentReconciler {
//!     type Object = Deployment;
//!     type Error = Error;
//!     async fn reconcile(&self, deploy: Arc<Deployment>) -> Result<Action, Error> {
//!         let scaled = Event {
//!             type_: EventType::Normal,
//!             reason: "Scaled".into(),
//!             action: "Scale".into(),
//!             note: Some("scaled to 3 replicas".into()),
//!             secondary: None,
//!         };
//!         self.recorder.event(&*deploy, &scaled).await;
//!         Ok(Action::await_change())
//!     }
//! }
//!
//! # async fn demo(manager: &kbr_runtime::Manager) {
//! let recorder = EventRecorder::new(manager.kube_client(), "deployment-controller");
//! let _reconciler = DeploymentReconciler { recorder };
//! # }
//! ```

use k8s_openapi::api::core::v1::ObjectReference;
use kube::Resource;
use kube::runtime::events::{Recorder, Reporter};

/// One event, what [`EventRecorder::event`] records: kube-runtime's `events::Event` — `type_`,
/// `reason` and `action` (CamelCase, at most 128 characters each), `note` (free text, at most
/// 1 kB) and `secondary` (the related object, controller-runtime's `related`).
pub use kube::runtime::events::Event;
/// The severity of an event: `Normal` (expected, informative) or `Warning` (something needs
/// attention). kube-runtime's `events::EventType`, controller-runtime's
/// `corev1.EventTypeNormal` / `corev1.EventTypeWarning`.
pub use kube::runtime::events::EventType;

/// Records Events about objects: controller-runtime's `record.EventRecorder` for the
/// `events.k8s.io/v1` API.
///
/// Built on kube-runtime's [`Recorder`] (reachable through [`EventRecorder::recorder`] for
/// related objects or custom references). Clones share the de-duplication cache.
#[derive(Clone)]
pub struct EventRecorder {
    recorder: Recorder,
    controller: String,
}

impl std::fmt::Debug for EventRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventRecorder")
            .field("controller", &self.controller)
            .finish_non_exhaustive()
    }
}

impl EventRecorder {
    /// A recorder reporting as `controller_name` (`reportingController`; Kubebuilder projects
    /// use the controller's name). The `reportingInstance` is `<controller_name>-<hostname>`
    /// (the Pod name in a cluster), as client-go's events recorder sets it.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), kbr_runtime::Error> {
    /// use kbr_runtime::events::EventRecorder;
    /// let kube = kbr_runtime::kube::Client::try_default().await?;
    /// let recorder = EventRecorder::new(kube, "broker-controller");
    /// # let _ = recorder; Ok(()) }
    /// ```
    #[must_use]
    pub fn new(client: kube::Client, controller_name: &str) -> Self {
        let mut reporter = Reporter::from(controller_name);
        reporter.instance = reporter
            .instance
            .map(|host| format!("{controller_name}-{host}"));
        Self {
            recorder: Recorder::new(client, reporter),
            controller: controller_name.to_string(),
        }
    }

    /// The `reportingController` of this recorder's events.
    #[must_use]
    pub fn controller_name(&self) -> &str {
        &self.controller
    }

    /// Records `event` about `obj`, best-effort: controller-runtime's `recorder.Eventf(obj,
    /// related, eventtype, reason, action, note)`. A failure to write it is logged (`warn`) and
    /// otherwise ignored, so a reconcile never fails because of an event; use
    /// [`EventRecorder::try_event`] to see the error.
    pub async fn event<K>(&self, obj: &K, event: &Event)
    where
        K: Resource<DynamicType = ()>,
    {
        if let Err(error) = self.try_event(obj, event).await {
            tracing::warn!(
                controller = %self.controller,
                kind = %K::kind(&()),
                namespace = obj.meta().namespace.as_deref().unwrap_or(""),
                name = obj.meta().name.as_deref().unwrap_or(""),
                reason = %event.reason,
                %error,
                "could not record event"
            );
        }
    }

    /// Records an event about `obj` and reports whether the API server took it.
    ///
    /// # Errors
    /// The API server's refusal ([`crate::Error::Forbidden`] without RBAC for
    /// `events.k8s.io/events`, [`crate::Error::Invalid`] for a reason or action that is too
    /// long, …) or a transport failure.
    ///
    /// ```no_run
    /// # async fn demo(recorder: kbr_runtime::events::EventRecorder,
    /// #               cm: kbr_runtime::k8s_openapi::api::core::v1::ConfigMap) -> Result<(), kbr_runtime::Error> {
    /// use kbr_runtime::events::{Event, EventType};
    /// let refused = Event {
    ///     type_: EventType::Warning,
    ///     reason: "InvalidKey".into(),
    ///     action: "Validate".into(),
    ///     note: Some("key `x` is not allowed".into()),
    ///     secondary: None,
    /// };
    /// recorder.try_event(&cm, &refused).await?;
    /// # Ok(()) }
    /// ```
    pub async fn try_event<K>(&self, obj: &K, event: &Event) -> Result<(), crate::Error>
    where
        K: Resource<DynamicType = ()>,
    {
        self.publish(event, &obj.object_ref(&())).await
    }

    /// Publishes `event` about `regarding`, any `ObjectReference` (e.g. from
    /// `Resource::object_ref`, or one the kind's `Resource` impl cannot make).
    ///
    /// # Errors
    /// As [`EventRecorder::try_event`].
    pub async fn publish(
        &self,
        event: &Event,
        regarding: &ObjectReference,
    ) -> Result<(), crate::Error> {
        Ok(self.recorder.publish(event, regarding).await?)
    }

    /// The kube-runtime recorder underneath (to step down a layer).
    #[must_use]
    pub fn recorder(&self) -> &Recorder {
        &self.recorder
    }
}
