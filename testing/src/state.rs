//! [`State`]: what the fake API server keeps under its one lock — the storage ([`Store`]) and
//! what the API's rules above it read: the served resource types, the name and uid generator,
//! and the schemas and merge types of the served custom resource versions.
//!
//! The rules are `impl State` blocks in the files named for them, as kube-apiserver's generic
//! registry and strategies sit on `storage.Interface`: create and update (`write.rs`), patch
//! (`patch.rs`), delete and the garbage collector (`gc.rs`), the built-in kinds' hooks
//! (`builtin.rs`). Schemas (`schemas.rs`) and field managers (`apply/`) are their own types,
//! held here. [`Store`] itself holds no rule: it stores, versions and fans out changes.

use super::apply::MergeTypes;
use super::names::NameGenerator;
use super::registry::Registry;
use super::schemas::Schemas;
use super::store::Store;

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
}

impl State {
    /// A server's state serving `registry`, keeping the last `history_limit` changes.
    pub(crate) fn new(registry: Registry, names: NameGenerator, history_limit: usize) -> Self {
        Self {
            store: Store::new(history_limit),
            registry,
            names,
            schemas: Schemas::default(),
            merge_types: MergeTypes::default(),
        }
    }
}
