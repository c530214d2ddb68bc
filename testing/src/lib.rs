//! Testing: the [`TestEnv`] generated projects' tests start — an in-process fake Kubernetes
//! API server, or [`envtest`] (a real etcd + kube-apiserver) when its binaries are available
//! (feature `testing`).
//!
//! controller-runtime tests controllers against `pkg/client/fake` (no watches) or `envtest` (a
//! real kube-apiserver and etcd, downloaded binaries). kbr's [`FakeApiServer`] sits between the
//! two: an unmodified `kube::Client` talks to it over a tower `Service`, so `kube::Api`,
//! kube-runtime's watcher, reflector and `Controller`, and kbr's [`kbr_runtime::Client`] all run
//! against it exactly as against a cluster, including streaming watches — with no binaries and
//! no network. [`envtest`] is kbr's port of controller-runtime's `pkg/envtest`.
//!
//! # Which server: how envtest is selected
//! [`TestEnv::start`] looks at `KUBEBUILDER_ASSETS` (Kubebuilder's variable, the folder
//! `setup-envtest use -p path` prints, holding `etcd`, `kube-apiserver` and `kubectl`):
//! - **unset or empty** → the fake API server. `cargo test` passes on a fresh machine.
//! - **set** → envtest: etcd and kube-apiserver start on free loopback ports with a temporary
//!   data directory, the scheme's CRDs are installed and established, and the clients are the
//!   admin user's. If the folder lacks a binary or a process fails, `start` returns
//!   [`Error::Envtest`] naming the variable, the expected files or the end of the process's
//!   output — it does not silently fall back to the fake.
//!
//! [`TestEnv::envtest_available`] tells a test which one it will get; [`TestEnv::start_fake`]
//! and [`TestEnv::start_envtest`] pick one explicitly (tests that use [`TestEnv::fake`] for
//! fault injection or request counts should call `start_fake`). Every envtest `TestEnv` runs its
//! own processes (seconds to start): share one across the cases of a file when that matters.
//! The fake is checked against the real server by a conformance suite
//! (`testing/tests/conformance/`), run on both.
//!
//! # Writing a reconciler test
//! Start a `TestEnv` with your project's scheme, create the object the way a user would, call
//! the reconciler directly with it, and assert on what it wrote. The same test runs on the fake
//! server and, with `KUBEBUILDER_ASSETS` set, on a real kube-apiserver.
//!
//! ```
//! use std::sync::Arc;
//! use kbr_testing::TestEnv;
//! use kbr_runtime::{Action, Client, CustomResource, Error, Reconciler, Scheme};
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! /// WidgetSpec defines the desired state of Widget.
//! #[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
//! #[kbr(group = "example.com", version = "v1", kind = "Widget", plural = "widgets")]
//! #[kbr(namespaced, status = "WidgetStatus")]
//! pub struct WidgetSpec {
//!     /// How big.
//!     #[serde(default)]
//!     pub size: i32,
//! }
//!
//! /// WidgetStatus defines the observed state of Widget.
//! #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
//! #[serde(rename_all = "camelCase")]
//! pub struct WidgetStatus {
//!     /// The generation this status describes.
//!     #[serde(default, skip_serializing_if = "Option::is_none")]
//!     pub observed_generation: Option<i64>,
//! }
//!
//! /// Records which generation it has seen.
//! pub struct WidgetReconciler {
//!     pub client: Client,
//! }
//!
//! impl Reconciler for WidgetReconciler {
//!     type Object = Widget;
//!     type Error = Error;
//!
//!     async fn reconcile(&self, widget: Arc<Widget>) -> Result<Action, Error> {
//!         let mut widget = (*widget).clone();
//!         widget.status = Some(WidgetStatus { observed_generation: widget.metadata.generation });
//!         self.client.update_status(&widget).await?;
//!         Ok(Action::await_change())
//!     }
//! }
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let mut scheme = Scheme::new();
//!     scheme.add::<Widget>();
//!     let env = TestEnv::start(scheme).await?; // fake, or envtest with KUBEBUILDER_ASSETS
//!     let client = env.client();
//!
//!     let mut widget = Widget::new("test-widget", WidgetSpec { size: 1 });
//!     widget.metadata.namespace = Some("default".into()); // exists on both servers
//!     let widget = client.create(&widget).await?;
//!
//!     let reconciler = WidgetReconciler { client: client.clone() };
//!     let action = reconciler.reconcile(Arc::new(widget)).await?;
//!     assert_eq!(action, Action::await_change());
//!
//!     let stored: Widget = client.get(Some("default"), "test-widget").await?;
//!     assert_eq!(stored.status.and_then(|s| s.observed_generation), Some(1));
//!     Ok(())
//! }
//! ```
//!
//! To test the controller wiring too (watches, owned objects, the work queue), run a
//! [`kbr_runtime::Manager`] made with [`kbr_runtime::Manager::with_client`]`(env.kube_client(), ..)` on a
//! task and wait for the effect with a bounded wait (a channel, `tokio::sync::Notify`, or on
//! the fake [`FakeApiServer::wait_for_watches`]) — never a fixed sleep.
//!
//! # A fleet of clusters
//! A test of a multi-cluster manager ([`kbr_runtime::multicluster`]) starts its member clusters
//! in one line — `Fleet::start(3, &scheme)` (fake API servers, or envtest control planes when
//! `KUBEBUILDER_ASSETS` is set), `Fleet::start_fake`, `Fleet::start_envtest` — and drives
//! their engagement at run time with [`Fleet::provider`]'s [`FleetControl`].
//!
//! # The fake API server
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use futures::{StreamExt, TryStreamExt};
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, PostParams, WatchEvent, WatchParams};
//! use kbr_testing::FakeApiServer;
//!
//! let server = FakeApiServer::new();
//! let api: Api<ConfigMap> = Api::namespaced(server.kube_client(), "default");
//! let mut events = api.watch(&WatchParams::default(), "0").await?.boxed();
//! let mut cm = ConfigMap::default();
//! cm.metadata.generate_name = Some("settings-".into());
//! let created = api.create(&PostParams::default(), &cm).await?;
//! match events.try_next().await? {
//!     Some(WatchEvent::Added(seen)) => assert_eq!(seen.metadata.name, created.metadata.name),
//!     other => panic!("expected ADDED, got {other:?}"),
//! }
//! # Ok(()) }
//! ```
//!
//! # What is modelled (as kube-apiserver does it)
//! - **Discovery** (`/version`, `/api`, `/api/v1`, `/apis`, `/apis/<group>[/<version>]`) for the
//!   built-in kinds (core/v1 Namespace, ConfigMap, Secret, Service, Pod, ServiceAccount, Event;
//!   apps/v1 Deployment, StatefulSet, DaemonSet, ReplicaSet; batch/v1 Job, CronJob;
//!   coordination.k8s.io/v1 Lease; events.k8s.io/v1 Event;
//!   apiextensions.k8s.io/v1 CustomResourceDefinition; admissionregistration.k8s.io/v1
//!   Mutating/ValidatingWebhookConfiguration) and every kind of a [`kbr_runtime::Scheme`],
//!   every installed or created CRD, and every [`ResourceType`] registered by hand; namespaced
//!   and cluster-scoped URLs; `<plural>/status` and `<plural>/scale` subresource entries;
//!   each resource's `shortNames`, `categories` and `storageVersionHash` (conformance
//!   `machinery.rs`), its `verbs` in kube-apiserver's order (no `deletecollection` for
//!   Namespaces, `create` only for reviews, apiextensions-apiserver's order for custom
//!   resources; a `deletecollection` of Namespaces is a 405, conformance `namespaces.rs`);
//!   `/version` is kube-apiserver v1.36.2's (conformance `reads.rs`).
//! - **`Accept` negotiation** (`handlers/negotiation.rs`): the first acceptable clause by `q`;
//!   406 `NotAcceptable` with go-restful's text for a built-in kind and the negotiation's for a
//!   custom resource, discovery or a conversion not offered (`as=` without `g=meta.k8s.io` and
//!   `v=v1`/`v1beta1`). `as=Table` (`kubectl get`): a `meta.k8s.io/v1` (or `v1beta1`) Table of
//!   a get, a list or a write's answer, rows carrying `PartialObjectMetadata`, the object or
//!   nothing per `includeObject`; custom resources' columns from `additionalPrinterColumns`
//!   (`Age` when none); ConfigMaps', Secrets', ServiceAccounts', Namespaces', Services', Pods',
//!   Deployments', StatefulSets', DaemonSets', ReplicaSets', Jobs' and CronJobs' from
//!   kube-apiserver's printers (`handlers/printers/`: column types, `-o wide` columns, a Pod's
//!   init containers, restarts with the age of the last one and `Completed` row condition, a
//!   Job's status, completions and duration; conformance `tables.rs`); a watch sends
//!   each event's object as a one-row Table (column definitions in the first event only).
//!   `application/yaml` is answered in YAML (a watch asked for in YAML is a 406).
//! - **Deprecated CRD versions**: every request to one carries its `deprecationWarning` (or
//!   the default text naming the version to use) as a `Warning` header.
//! - **Built-in kinds** as kube-apiserver v1.36 serves them: defaults, the strategies' create
//!   and update rules, validation with the API server's wording, Service cluster IPs and node
//!   ports, `/scale` — see the table below.
//! - **Verbs**: get, list, watch, create, update, patch (JSON merge patch; strategic merge
//!   patch of built-in kinds by their OpenAPI patch strategies and merge keys, with the
//!   `$patch`, `$retainKeys`, `$deleteFromPrimitiveList` and `$setElementOrder` directives and
//!   the real server's errors — a 415 for custom resources —; JSON patch with its failures
//!   answered as the real server does; server-side apply), delete, deletecollection;
//!   `?dryRun=All` (another value is a 422 on the write's options).
//! - **Decoding and `fieldValidation`** (`endpoints/handlers`, `customresource_handler.go`,
//!   `schema/objectmeta`): a write's body is decoded into its kind before admission — custom
//!   resources through their schema, built-in kinds through their k8s-openapi type (not run
//!   when a walk of the parsed body against the kind's OpenAPI definition is sure it decodes
//!   with no unknown field: the same answer, one parse less) — and
//!   `metadata` keeps only `ObjectMeta`'s fields (empty ones omitted); unknown and duplicate
//!   fields are dropped and, as `fieldValidation` says, sent as `Warning: 299 - "unknown field
//!   \"spec.x\""` headers (`Warn`, the default), refused (`Strict`: a create's or update's 400
//!   `… cannot be handled as a …: strict decoding error: …`, a patch's 422 at `patch`) or
//!   ignored (`Ignore`); a `metadata` field of the wrong type is a 400 with Go's decoding error.
//!   Warnings are deduplicated and truncated as the real server does, also on failures.
//! - **Metadata**: `generateName` (5 random characters from the apiserver's alphabet), `uid`,
//!   `creationTimestamp`, one global monotonically increasing `resourceVersion`, `generation`
//!   for the kinds that have one — custom resources, CRDs, apps/v1 kinds, Pods; not ConfigMaps,
//!   Secrets, Namespaces, Services, ServiceAccounts, Events, Leases — (1 on create, +1 on a
//!   change outside `metadata` — and outside `status` for kinds with a status subresource — and
//!   when `deletionTimestamp` is set). An update that changes nothing keeps the resourceVersion
//!   and sends no event.
//! - **Errors** as `metav1.Status`: 404 NotFound, 409 AlreadyExists, 409 Conflict (stale
//!   `resourceVersion`, failed preconditions, server-side apply conflicts), 422 Invalid with field
//!   causes (`ValidateObjectMetaAccessor`: name, `generateName`, namespace, labels, annotation
//!   keys and size, owner references, finalizer names — core kinds' finalizers standard or
//!   fully qualified — and finalizers added while deleting; on update the metadata causes come as
//!   often as kube-apiserver repeats them for custom resources; CRD schema violations), 410
//!   Gone/Expired, 405 MethodNotAllowed, 400 BadRequest, 415 UnsupportedMediaType.
//! - **Updates** (`generic/registry/store.go` and each kind's strategy): a `PUT` without
//!   `metadata.resourceVersion` is a 422 (`must be specified for an update`) for custom
//!   resources, CRDs, Leases and webhook configurations, and overwrites for the core and apps
//!   kinds; a `PUT` creates a missing Lease, Event or Service (201); a body naming another object
//!   is a 400 first.
//! - **Status subresource**: `/status` writes change only `.status`; main-resource writes ignore
//!   `.status`; create drops `.status`.
//! - **Lists**: in etcd key order (`<namespace>/<name>` byte-wise, so a cluster-wide list puts
//!   namespace `a-b` before `a`); label selectors parsed as apimachinery's `labels.Parse` (`=`,
//!   `==`, `!=`, `in`, `notin`, `key`, `!key`, `>`, `<`; a selector that does not parse is a
//!   400 with the parser's text); field selectors with each kind's fields and refusal text
//!   (`metadata.name`/`metadata.namespace` everywhere; Pods' `spec.nodeName`, `status.phase`,
//!   …, Secrets' `type`, Services' `spec.type`/`spec.clusterIP`, Namespaces' `status.phase`,
//!   Jobs' `status.successful`, Events' fields, a CRD's `selectableFields`),
//!   `limit`/`continue` (a continue token older than the watch history gets 410), the list's
//!   `resourceVersion`; items of built-in kinds without `apiVersion`/`kind` (custom
//!   resources' keep them); metadata-only lists (`as=PartialObjectMetadataList`).
//! - **Watches** (chunked JSON lines, one event per line): `ADDED`/`MODIFIED`/`DELETED` in
//!   commit order; from `resourceVersion` `0`/unset (synthetic `ADDED` for current objects first)
//!   or from a version (replayed from a bounded history of changes, see
//!   [`FakeApiServerBuilder::watch_history`]; an older version gets an `ERROR` event carrying a
//!   410 `Expired` Status, as the real server sends); `BOOKMARK`s with `allowWatchBookmarks`;
//!   `sendInitialEvents`; `timeoutSeconds`; selectors (an object leaving or entering a selector
//!   is sent as `DELETED`/`ADDED`); metadata-only watches (`as=PartialObjectMetadata`). The
//!   events already queued leave in one chunk, as kube-apiserver flushes only when none is.
//! - **Metadata-only responses** as kube-apiserver's `response.go` converts them: any single
//!   object (get, writes) with `as=PartialObjectMetadata`, lists with
//!   `as=PartialObjectMetadataList`, 406 `NotAcceptable` for a list asked for as one object or
//!   one object asked for as a list (after a write took effect), and a watch asked for as a
//!   list ends at its first object event, as the real server's watch encoder fails on it.
//! - **Deletion** (`registry/generic/registry/store.go`): an object deleted at once is answered
//!   with a `Success` Status (the deleted object for Pods and ServiceAccounts), one held by
//!   finalizers with its new state; finalizers and `deletionTimestamp`; removing the last
//!   finalizer deletes; `Orphan` and `Foreground` add the `orphan` and `foregroundDeletion`
//!   finalizers (answered with the marked object), which the garbage collector then handles:
//!   dependents by ownerReference uid collected (`Background`, the default), deleted before
//!   the owner goes (`Foreground`, waiting for `blockOwnerDeletion`) or orphaned (`Orphan`,
//!   also a batch/v1 Job's default, with the real server's `Warning`); a collection delete
//!   answers with the objects as listed before it;
//!   `DeleteOptions` validated (422s), read from the body when there is one, else from the
//!   query (`?dryRun=All` with a body is a real delete, as in `handlers/delete.go`); a dry-run
//!   delete answers what a delete would; deleting a CRD deletes its objects.
//! - **Namespaces** (`NamespaceLifecycle`, the namespace controller): `default`,
//!   `kube-system`, `kube-public` and `kube-node-lease` exist from the start and the first
//!   three may not be deleted (403); creating in a missing Namespace is a 404, in a terminating
//!   one a 403; a deleted Namespace is `Terminating` until everything in it is gone (finalizers
//!   respected), then loses its `kubernetes` finalizer and goes; re-creating a terminating object
//!   is a 409 (`object is being deleted: …`).
//! - **Test knobs**: [`Faults`] (fail the next N requests matching verb and resource, latency,
//!   close all watches, force 410 on the next watch, compact the history) and
//!   [`RequestCounters`] (requests by verb and resource, and those asking for metadata only).
//! - **Reviews**: `TokenReview` and `SubjectAccessReview` creates answered by test functions
//!   ([`FakeApiServer::answer_token_reviews`], [`FakeApiServer::answer_subject_access_reviews`]),
//!   for code that delegates authentication and authorization to the API server.
//! - **Admission webhooks**: creates, updates, patches and deletes matched by the `rules` of a
//!   stored Mutating/ValidatingWebhookConfiguration are sent as `AdmissionReview`s to the
//!   webhook's `clientConfig.url` over HTTPS (trusting its `caBundle`): mutating webhooks'
//!   JSON patches are applied in order, then validating webhooks decide; denials come back as
//!   `admission webhook "<name>" denied the request: …` with the webhook's code, warnings as
//!   `Warning` headers, `failurePolicy`/`timeoutSeconds` honoured. Not modelled: service
//!   references, namespace/object selectors, `matchConditions`, `matchPolicy: Equivalent`,
//!   reinvocation, deletecollection. [`TestEnv::install_webhooks`] registers a test's webhook
//!   server on either backend.
//!
//! - **Field management and server-side apply**, by structured-merge-diff's rules
//!   (kube-apiserver's field manager): every create, update and patch records an
//!   `operation: Update` entry in `metadata.managedFields` for its field manager
//!   (`?fieldManager=`, else the User-Agent's product name, else `unknown`) owning the fields
//!   it changed; an apply (`application/apply-patch+yaml`) merges its configuration —
//!   `x-kubernetes-list-type: map` lists by key (`k:{"name":"a"}`), `set` lists by value
//!   (`v:"x"`), `atomic` lists and `x-kubernetes-map-type: atomic` maps as a whole, other maps
//!   by key — records an `operation: Apply` entry, removes what its manager applied before and
//!   left out unless another manager owns it, answers 409 with the API server's text for
//!   fields another manager owns with a different value (unless `force=true`), 201 when it
//!   creates the object, and 500 `field not declared in schema` for fields the schema lacks;
//!   `/status` writes carry `subresource: status` and own only `status` (the main resource
//!   never owns `status` of a kind with a status subresource); at most ten `Update` entries
//!   (older ones fold into `ancient-changes`); `managedFields: []` resets them, after which
//!   updates are not tracked until the first apply (`before-first-apply`). The merge types
//!   come from each CRD version's schema, and for built-in kinds (Namespace, ConfigMap,
//!   Secret, Service, Pod, ServiceAccount, Event, Deployment, ReplicaSet, Lease, webhook
//!   configurations, CRDs) from kube-apiserver v1.36's OpenAPI (e.g. containers by `name`,
//!   container ports by `containerPort` and `protocol`, env by `name`).
//!
//! - **Custom resources follow their CRD's schema** (every served version's
//!   `openAPIV3Schema`, with [`kbr_runtime::crd::ObjectSchema`]), in the API server's order, on
//!   create, update, every patch type, server-side apply and `/status`: unknown fields are
//!   pruned (kept under `x-kubernetes-preserve-unknown-fields`; `apiVersion`, `kind` and
//!   `metadata` — as `ObjectMeta` — of embedded resources kept), defaults applied where the
//!   parent exists (and to `null`s of non-nullable fields; other such `null`s dropped), then
//!   metadata, the OpenAPI schema, list types and the `x-kubernetes-validations` CEL rules are
//!   checked, refusing with one 422 with the API server's text; finalizers without a
//!   domain-qualified name draw warnings. Reads (get, list, watch) apply the current schema's
//!   defaults. See the table below.
//! - **CRD objects** (`apiextensions/validation`): named `<plural>.<group>`, one storage
//!   version, scope, group, kind and plural immutable, stored versions kept in `spec.versions`,
//!   rules that compile; Namespaces get `spec.finalizers: [kubernetes]` and their
//!   `kubernetes.io/metadata.name` label.
//!
//! # CRD semantics: what is modelled and what is not
//!
//! | API server behaviour (apiextensions-apiserver) | fake |
//! |---|---|
//! | pruning of unknown fields, nested, in lists and maps (`schema/pruning`) | yes |
//! | `x-kubernetes-preserve-unknown-fields`, `x-kubernetes-embedded-resource` | yes (embedded `metadata` decoded as ObjectMeta) |
//! | embedded resources on every write (`schema/objectmeta/validation.go`, `validateEmbeddedResource`): `apiVersion` and `kind` required, non-empty strings, a group/version and a (mixed-case) DNS-1035 label; `metadata` validated as on create with path-segment names, a missing name allowed | yes, after the schema's errors and before list types' (`Required` first, then `apiVersion`, `kind`, `metadata`: the API server's order of the last three is Go's random map order) |
//! | install: an embedded-resource node is `type: object`, without `additionalProperties`, with `properties` unless it preserves unknown fields, its `kind`/`apiVersion` strings and `metadata` an object (`schema/validation.go`) | yes: first, sorted by their text, and no CEL rule of the schema compiled then; `make manifests` refuses the same (one implementation, `kbr-crd`'s `structural/embedded.rs`) |
//! | install: a rule's `fieldPath` non-blank, on one line and resolving in its node's schema (`.name`, `['name']`, map keys; `ValidFieldPath`), a failing rule reported at the resolved path (`limits[a.b]`); `reason` one of the four (`NotSupported`); `message`/`messageExpression` not blank; `optionalOldSelf` (even `false`) only on a rule using `oldSelf` | yes, the API server's causes; `make manifests` refuses the same (`structural/rule_checks.rs`) |
//! | `metadata` pruned to ObjectMeta, empty fields omitted, wrong types a 400 (`schema/objectmeta`) | yes |
//! | unknown and duplicate fields reported: `Warning` headers, `fieldValidation=Strict`, `Ignore` (`customresource_handler.go`) | yes; a server-side apply body with an undeclared field fails instead (500 `field not declared in schema`, above) |
//! | whole floats stored as integers (`2.0` is `2`) | yes |
//! | defaults: absent field, parent must exist, `null` of a non-nullable field (`schema/defaulting`) | yes |
//! | defaults applied on read from storage | yes (get, list, watch) |
//! | `type`, `enum`, `minimum`/`maximum` (exclusive), `multipleOf`, `minLength`/`maxLength`, `pattern`, `minItems`/`maxItems`, `minProperties`/`maxProperties`, `required`, `nullable`, int-or-string | yes, kube-openapi's wording (`should be less than or equal to`, `should match`, `Unsupported value`, `Required value`, `Too long`, `Too many`) |
//! | `allOf`/`anyOf`/`oneOf`/`not` | yes (kube-openapi's messages, at the field path `<nil>` as the API server reports them) |
//! | `format` (`validation/formats.go`) | yes: every format of the v1.36 registry (`strfmt`; `email` and `uri` approximated), unsupported ones stripped; int32/int64/float/double ranges (`Checked value must be of type integer with format int32 in …`); a float for an `int32` (`must be of type int32: "float64"`) |
//! | `x-kubernetes-list-type: set`/`map` duplicates | yes (`Duplicate value`, after the schema's errors, once per repeated value) |
//! | CEL rules not run after a type, enum, required, too-long or too-many error, with the `<nil>` cause saying so (`hasBlockingErr`) | yes |
//! | CEL `x-kubernetes-validations`: `self`, `oldSelf` (transition rules on update only), `message`, `messageExpression`, `reason`, `fieldPath` | yes, with cel-rust in kube-apiserver v1.36's environment (`crd::cel`); evaluation errors in cel-go's words |
//! | a CRD whose rule does not compile is refused | yes (422 on create/update of the CRD; `install_crd` errors): syntax errors, undeclared functions and variables (`cel.bind`, `math.*` and `base64.*` are not in Kubernetes' environment), invalid regex literals and rules that plainly are not bools, with cel-go's text. Type errors (`found no matching overload`, e.g. `quantity(self).sign()`, `'abc'.reverse()`, `self == oldSelf` under `optionalOldSelf` (an `optional_type`), `%d` of a string) are not found: the rule fails when evaluated instead |
//! | Kubernetes CEL libraries: `quantity`, `url`/`isURL`, `ip`/`isIP`, `cidr`/`isCIDR`, `format.*`, `semver`/`isSemver`, regex `find`/`findAll`, lists (`isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`); cel-go's strings (v2), lists (v3), sets, two-variable comprehensions and optional types (v2) | yes, with kube-apiserver's results and error texts (ports of apimachinery's Quantity, Go's `net/netip`, `net/url`, `regexp` errors, blang/semver, kube-openapi's strfmt) |
//! | CEL `duration`/`timestamp`, and `date`/`date-time`/`duration`/`byte` string formats as CEL timestamps, durations and bytes | no (they are strings; `duration()` and `timestamp()` fail when evaluated) |
//! | which error a rule reports when both sides of `&&`/`\|\|` fail | the right-hand one (cel-go reports the left-hand one) |
//! | `optionalOldSelf`: the rule also runs on create, `oldSelf` an optional | yes |
//! | CEL estimated cost at CRD create/update: per rule and `messageExpression` (`StaticEstimatedCostLimit`, 10 000 000, times how often the rule's node can occur), per schema (`StaticEstimatedCRDCostLimit`, 100 000 000), sizes from `maxItems`/`maxLength`/`maxProperties`/`enum`/`format` or what fits in a 3 MiB request | yes: cel-go's estimator and the Kubernetes libraries' costs, the same `Forbidden` causes and factor (422); `make manifests` refuses the same rules, naming the bound to add |
//! | the estimated per-rule limit skipped on update when a version's schema is unchanged | no: the fake applies it on every create and update |
//! | rules at or above a schema error (an invalid `pattern`, a malformed rule) neither compiled nor estimated (`validation.go`: `len(allErrs.SchemaErrors) == 0`) | compiled: yes (not compiled); estimated: no, the fake still reports their cost errors (a 422 either way) |
//! | a CRD whose schema is not structural refused (`ValidateStructural`; its rules then neither compiled nor estimated) | for embedded resources only (above); otherwise no: the fake installs it, compiling and estimating its rules |
//! | CEL runtime cost while rules run (`PerCallLimit` 1 000 000 per rule, `RuntimeCELCostBudget` 10 000 000 per object) | no |
//! | ratcheting: unchanged invalid values pass on update | yes (whole unchanged nodes) |
//! | pruning and defaulting before admission webhooks, schema and CEL validation after them | yes |
//! | defaulting of a mutating webhook's patch result | no |
//! | version conversion between CRD versions | no (each version's schema applies to the object as stored) |
//! | `metadata` validation: names, labels, annotations, owner references, finalizers, and what the schema says of `metadata.name`/`generateName` | yes |
//! | finalizer-name warnings on create and update (`WarningsOnCreate`/`WarningsOnUpdate`) | yes |
//! | `PUT` without `resourceVersion` is a 422 (`AllowUnconditionalUpdate` false) | yes |
//! | a CRD's metadata or update-rule errors and its schemas' errors in one 422 | no (two answers, the schemas' second) |
//!
//! # Built-in kinds: what is modelled and what is not
//!
//! Each rule was compared with kube-apiserver v1.36.2 (envtest) on the same requests; the
//! conformance cases `defaults.rs`, `workloads.rs`, `services.rs`, `config.rs`, `scale.rs`,
//! `namespaces.rs` and `trap.rs` pin it on both servers.
//!
//! | kube-apiserver behaviour | fake |
//! |---|---|
//! | defaults of `pkg/apis/{core,apps,batch}/v1/defaults.go` for Pods and every pod template (containers' pull policy by image tag, termination message, probes, `httpGet`, volume sources' `defaultMode`, `emptyDir`, field refs' `apiVersion`; `dnsPolicy`, `restartPolicy`, `schedulerName`, `securityContext`, grace period; a Pod's requests from its limits, `enableServiceLinks`, host ports), Services, Secrets, Deployments, StatefulSets (and their claim templates), DaemonSets, ReplicaSets, Jobs, CronJobs | yes (`rules/builtin/`) |
//! | declarative defaults and Go's zero values (`resources: {}`, `status: {}`, `serviceName: ""`) from each kind's OpenAPI | yes, from kube-apiserver v1.36's `/openapi/v3` (`hack/merge-types.py`) |
//! | defaults of other built-in kinds (Leases, Events, webhook configurations, CRDs' `conversion`) | no |
//! | `SetDefaults_ResourceList` (quantities rounded to milli-units), pod-level resources, image volumes | no |
//! | strategies on create: statuses reset, a Pod `Pending` with its QoS class, a Job's generated selector and labels, a DaemonSet's template generation (bumped when the template changes) | yes |
//! | admission plugins `NamespaceLifecycle`, `Priority` (no PriorityClasses: `priority: 0`), `DefaultTolerationSeconds` | yes |
//! | the `ServiceAccount` admission plugin (`serviceAccountName: default`, token volumes) | no (envtest disables it too) |
//! | other admission plugins (`LimitRanger`, `ResourceQuota`, `PodSecurity`, …) | no |
//! | pod spec validation: containers, names, images, ports, protocols, env names, volume names and mounts, pull/DNS/restart policies (a workload template's `Always`, a Job's `OnFailure`/`Never`), requests ≤ limits | yes, with the API server's messages and order |
//! | other pod spec validation (probes, security contexts, affinity, tolerations, host ports, volume sources, resource names), and a Pod's update rules | no |
//! | workloads: selector required, not empty, matching the template; replicas, history limits, `minReadySeconds`, `progressDeadlineSeconds`; Deployment strategies; StatefulSet `podManagementPolicy`, update strategy and frozen spec; immutable selectors; Job counts, generated or manual selectors, immutable template and completions; CronJob schedules (robfig/cron's errors), concurrency policy, history limits, names of at most 52 characters | yes |
//! | a Job's immutable template shown as the API server's internal Go struct | no: the fake shows the template's JSON |
//! | CronJob `timeZone` names | no (any is accepted) |
//! | a Job's status transitions (`ValidateJobUpdateStatus` of `pkg/apis/batch/validation`: `completionTime` only with a `Complete=True` condition, and its other status rules) | no: any status is stored |
//! | Services: defaults and IP families (single-stack IPv4 as envtest; a headless Service without a selector `RequireDualStack`), cluster IPs and node ports from `10.0.0.0/24` and `30000-32767` (static bands left to requests), the allocators' errors, kept by updates that leave them out, dropped with a type that needs none, given back on delete; ports, types, affinity, `externalName` validated; `clusterIP` immutable; names RFC 1123 labels | yes |
//! | dual-stack clusters, `healthCheckNodePort`, `loadBalancerSourceRanges`, `externalIPs`, `appProtocol`, the `default/kubernetes` Service | no (the first address is kept free for it) |
//! | ConfigMaps and Secrets: keys, 1 MiB, `immutable`, `stringData` merged into `data`, `type: Opaque` by default and immutable, each Secret type's required keys, base64 errors as Go's decoder words them | yes |
//! | a Secret's `.dockercfg`/`.dockerconfigjson` that is not JSON | refused, with serde's words instead of Go's |
//! | the warning for a `kubernetes.io/tls` Secret whose certificate is not PEM | no |
//! | `/scale` of Deployments, StatefulSets, ReplicaSets and CRDs that declare one: get, update, merge and JSON patches | yes |
//! | server-side apply to `/scale`, admission webhooks on `/scale`, `subresource: scale` in managedFields | no |
//!
//! # What the fake does not model
//! - No scheduler, kubelet or controllers other than the garbage collector and the namespace
//!   controller (Deployments make no ReplicaSets, Pods never run), no authentication or RBAC
//!   (every request is allowed; reviews are answered by the test's functions only), only the
//!   built-in admission plugins and validation the table above lists, no version conversion
//!   (all versions of a kind share storage; `apiVersion` is rewritten).
//! - Built-in kinds are decoded through k8s-openapi's types, whose serde is not Go's: a value of
//!   the wrong type is a 400 worded by serde, and a `null` map value or list item, which Go
//!   reads as `""`, is refused; fields k8s-openapi's (newer) types know but v1.36 does not are
//!   kept. Their duplicate fields are listed before their unknown ones (Go interleaves them in
//!   the body's order). A kind's own strategy may repeat a metadata cause once more than the
//!   fake does on update.
//! - Garbage collection and the namespace controller are synchronous (inside the request that
//!   triggers them), and a dependent whose owner never existed is kept.
//! - Strategic merge patches read the patch strategies of the built-in kinds the fake has
//!   OpenAPI types for (`rules/apply/builtin_types.json`); a field the type does not declare is
//!   merged without strategy (the real server answers a 500, `unable to find api field`), and
//!   JSON field names are matched case-sensitively (Go also matches them case-insensitively).
//!   A JSON patch `copy` from a missing member fails (evanphx/json-patch v4 copies `null`).
//! - Server-side apply (see above) does not convert between versions (every manager's fields
//!   are compared on the one stored object), does not upgrade `kubectl`'s client-side-apply
//!   annotation (`last-applied-configuration`), does not reconcile recorded fields after a
//!   CRD's list or map types change, and knows the list types of the built-in kinds listed
//!   above only (others are deduced: maps granular, lists atomic). Admission webhooks see the
//!   object with its managedFields already recorded, and a mutating webhook's changes to a
//!   create or update are recorded as the request's field manager's.
//! - List pages after the first are read from the current state (not a snapshot at the list's
//!   resourceVersion); `resourceVersionMatch` is validated (`handlers/list_options.rs`: 422
//!   on `ListOptions`, 400/500 for a `resourceVersion` that is not a number, 504 at once for one
//!   not reached where the real server waits up to 3 s) but `Exact` serves the current state.
//!   A continue token that decodes but is not JSON gets serde's text, not Go's.
//! - JSON and YAML only (no protobuf: it is answered in JSON; no aggregated discovery).
//!   Built-in kinds without a printer in
//!   `handlers/printers/` (Events, Leases, webhook configurations, CRDs, ...) get the default
//!   Table (`Name`, `Created At`) where kube-apiserver has a printer for each.
//! - A watch with `allowWatchBookmarks` gets a `BOOKMARK` when its `timeoutSeconds` ends.
//!   kube-apiserver's watch cache schedules one two seconds before the deadline
//!   (`cache_watcher.go`, `nextBookmarkTime`) and sends it only when its cache has seen a
//!   newer resourceVersion than the watch's, so a short watch on a quiet resource may get none.
//!
//! And envtest does not model what kube-controller-manager, the scheduler and kubelets do:
//! no garbage collection, no namespace finalization (a deleted Namespace stays `Terminating`),
//! no `default` ServiceAccounts or `kube-root-ca.crt` ConfigMaps, no Pods running.

// Every published crate documents its whole public API.
#![deny(missing_docs)]

mod env;
pub mod envtest;
mod error;
mod fleet;
mod handlers;
mod machinery;
mod rules;
mod server;
mod store;

pub use env::{ServedWebhooks, TestEnv};
pub use error::Error;
pub use fleet::{Fleet, FleetControl, FleetProvider, FleetProviderError};
pub use handlers::request::Verb;
pub use machinery::registry::{ResourceType, ScaleSubresource};
pub use server::faults::{Faults, RequestCounters};
pub use server::{FakeApiServer, FakeApiServerBuilder, FakeService};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// The CRDs of a scheme, its error wrapped into [`Error::Scheme`].
fn scheme_crds(scheme: &kbr_runtime::Scheme) -> Result<Vec<CustomResourceDefinition>, Error> {
    Ok(scheme.crds()?)
}
