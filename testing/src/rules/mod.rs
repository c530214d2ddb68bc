//! The API's rules, above storage: [`State`] (what the fake keeps under its one lock — the
//! [`Store`] and what the rules read: the served resource types, the name and uid generator, the
//! schemas and merge types of the served custom resource versions) and, in a file or folder
//! named for each area, the rules kube-apiserver applies, as `impl State` blocks or as
//! functions over JSON objects:
//!
//! | kube-apiserver | here |
//! |---|---|
//! | generic registry: create and update (`registry/generic/registry/store.go`, `rest/create.go`, `rest/update.go`) | [`write`](mod@write) |
//! | `ValidateObjectMeta` (`apimachinery/pkg/api/validation/objectmeta.go`) | [`objectmeta`] |
//! | the codecs: decoding a body into its kind | [`decode`], [`decodable`] (which bodies of built-in kinds surely decode) |
//! | custom resources and CRDs (apiextensions-apiserver) | [`crd`] |
//! | built-in kinds' strategies: which have a generation, what a `PUT` may do | [`builtin`] |
//! | Namespaces (`registry/core/namespace`) | [`namespace`] |
//! | the strategies' hooks on create, update and removal | `hooks` |
//! | delete, finalizers, the garbage collector's propagation | [`deletion`] |
//! | patches (`endpoints/handlers/patch.go`) | [`patch`] |
//! | the `/scale` subresource (`ScaleREST`) | [`scale`] |
//! | field managers and server-side apply (`endpoints/handlers/fieldmanager`) | [`apply`] |
//!
//! [`Store`] itself holds no rule: it stores, versions and fans out changes. The areas that
//! `State` holds data of (`crd`'s schemas, `apply`'s merge types) never name `State`, so the
//! files of this folder do not import each other in a circle.

pub(crate) mod apply;
pub(crate) mod builtin;
pub(crate) mod crd;
pub(crate) mod decodable;
pub(crate) mod decode;
pub(crate) mod deletion;
mod hooks;
pub(crate) mod namespace;
pub(crate) mod objectmeta;
pub(crate) mod patch;
pub(crate) mod routes;
pub(crate) mod scale;
pub(crate) mod write;

use crate::machinery::names::NameGenerator;
use crate::machinery::registry::Registry;
use crate::store::Store;
use apply::MergeTypes;
use builtin::core::service_alloc::Allocations;
use crd::schemas::Schemas;
use routes::PublishedRoutes;

/// The fake API server's state (see the [module docs](self)).
pub(crate) struct State {
    /// Objects, resourceVersions, the change history and open watches.
    pub(crate) store: Store,
    /// The served resource types (discovery, routing).
    pub(crate) registry: Registry,
    /// Generated names (`generateName`) and uids.
    pub(crate) names: NameGenerator,
    /// The schema of every served custom resource version.
    pub(crate) schemas: Schemas,
    /// The merge type of every served custom resource version (server-side apply).
    pub(crate) merge_types: MergeTypes,
    /// The Services' cluster IPs and node ports.
    pub(crate) allocations: Allocations,
    /// Namespaces whose contents [`State::sweep_namespace`] is deleting right now: removing
    /// one of them triggers the sweep again, which then leaves the work to the running one
    /// (one pass over the contents, not one nested pass per object).
    pub(crate) sweeping: std::collections::BTreeSet<String>,
    /// `registry` and `schemas` as request parsing reads them, without this state's lock:
    /// republished by [`State::publish_routes`] whenever either changes.
    pub(crate) routes: PublishedRoutes,
}

impl State {
    /// A server's state serving `registry`, keeping the last `history_limit` changes.
    pub(crate) fn new(registry: Registry, names: NameGenerator, history_limit: usize) -> Self {
        let state = Self {
            store: Store::new(history_limit),
            registry,
            names,
            schemas: Schemas::default(),
            merge_types: MergeTypes::default(),
            allocations: Allocations::default(),
            sweeping: std::collections::BTreeSet::new(),
            routes: PublishedRoutes::default(),
        };
        state.publish_routes();
        state
    }

    /// Publishes `registry` and `schemas` for request parsing ([`routes`]); every change to
    /// either calls it before the state's lock is let go.
    pub(crate) fn publish_routes(&self) {
        self.routes.publish(&self.registry, &self.schemas);
    }
}
