//! The conformance suite: the API-server semantics kbr's fake server claims, asserted the same
//! way against every server — the in-process fake (`conformance_fake.rs`, always) and a real
//! kube-apiserver from envtest (`conformance_envtest.rs`, when `KUBEBUILDER_ASSETS` is set).
//!
//! Each case is an `async fn(&Ctx) -> TestResult` that gets a `kube::Client` for "the server"
//! and a namespace of its own (created first: the real server needs a Namespace before objects
//! can be created in it). [`for_each_case!`] lists every case once; each runner expands it.
//!
//! # Fake-only (not in this suite) and why
//! - Garbage collection (ownerReferences, background/foreground/orphan propagation: the
//!   dependents' fate and the finalizers' removal) and a Namespace's deletion removing its
//!   contents and then itself: done by kube-controller-manager, which envtest does not run
//!   (`fake_gc.rs`). What kube-apiserver itself does — the `orphan`/`foregroundDeletion`
//!   finalizers a delete adds, a Namespace turning `Terminating` — is in the suite.
//! - Watch `410 Gone` for a version older than the history window, periodic BOOKMARKs,
//!   `sendInitialEvents`: the real server's window (watch cache, etcd compaction every 5 min),
//!   bookmark timing and the WatchList feature gate cannot be driven from a test
//!   (`fake_watch.rs`, with the fake's `watch_history` and `bookmark_interval` knobs).
//! - Fault injection and request counters: test knobs of the fake (`fake_faults.rs`).
//! - A `resourceVersion` the store has not reached (504 `Timeout`, `retryAfterSeconds: 1`):
//!   kube's client retries the real server's answer (it carries `Retry-After`) until the
//!   case times out; the fake's answer is pinned by `handlers/list_options.rs`'s unit tests.
//!
//! # Real-server behaviour the suite pins down (the fake follows it)
//! - `generation` is 1 on create and bumps on spec changes for custom resources; ConfigMaps have
//!   none. Setting `deletionTimestamp` bumps it.
//! - An immediate DELETE answers a `Success` Status (name, uid); a DELETE held by finalizers
//!   answers the object with `deletionTimestamp` set.
//! - A status-subresource kind drops `.status` on create and main-resource writes, and `/status`
//!   writes change nothing but `.status`.
//! - resourceVersions are compared for equality only (they are opaque to clients).
#![allow(dead_code)] // each runner uses the whole suite, but not every helper of this module

pub mod apply;
pub mod cel;
pub mod config;
pub mod contract;
pub mod cost;
pub mod crd;
pub mod crd_install;
pub mod crud;
pub mod defaults;
pub mod deletion;
pub mod fields;
pub mod formats;
pub mod list_options;
pub mod lists;
pub mod machinery;
pub mod managed_fields;
pub mod namespaces;
mod objects;
pub mod patches;
pub mod raw;
pub mod reads;
mod requests;
pub mod reviews;
pub mod scale;
pub mod services;
pub mod shapes;
pub mod status;
pub mod tables;
pub mod trap;
pub mod types;
pub mod updates;
mod verdicts;
pub mod watch;
pub mod workloads;

pub use objects::{TestResult, api_error, code_and_reason, config_map, names};

use std::time::Duration;

use futures::{Stream, TryStreamExt};
use k8s_openapi::api::core::v1::Namespace;
use kbr_runtime::{CustomResource, Scheme};
use kube::api::{Api, PostParams, WatchEvent};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Upper bound for one expected event (a watch event, a stream ending).
pub const DEADLINE: Duration = Duration::from_secs(20);

/// Calls `$runner!` with every case of the suite, as `module::function` paths.
macro_rules! for_each_case {
    ($runner:ident) => {
        $runner! {
            crud::create_get_update_patch_list_delete,
            crud::no_op_update_keeps_the_resource_version,
            crud::generate_name_appends_five_characters,
            crud::create_twice_is_already_exists,
            crud::stale_writes_are_conflicts,
            crud::invalid_names_are_422_with_causes,
            crud::dry_run_stores_nothing,
            crud::server_side_apply_tracks_managers_and_conflicts,
            crud::namespaces_are_cluster_scoped_and_active,
            apply::map_list_items_are_owned_per_key,
            apply::sets_granular_maps_and_atomic_lists_and_maps,
            apply::an_apply_that_creates_is_201,
            managed_fields::writes_record_update_entries_for_their_field_manager,
            apply::conflicts_name_the_owner_and_force_takes_the_field,
            apply::fields_an_applier_drops_are_removed_unless_shared,
            managed_fields::managed_fields_reset_and_the_first_apply,
            managed_fields::status_writes_record_their_subresource,
            apply::undeclared_fields_in_an_applied_configuration_fail,
            apply::built_in_kinds_key_lists_as_their_openapi_says,
            status::generation_and_the_status_subresource,
            status::status_writes_are_conditional_and_status_only,
            lists::label_selectors,
            lists::field_selectors,
            lists::custom_resource_selectable_fields,
            lists::limit_and_continue_page_through_everything_once,
            lists::delete_collection_honours_selectors,
            lists::metadata_only_lists,
            lists::metadata_conversions,
            watch::watch_from_a_list_version_sees_changes_in_order,
            watch::watch_from_an_older_version_replays_later_changes,
            watch::watch_from_zero_starts_with_current_objects,
            watch::objects_entering_and_leaving_a_selector,
            watch::timeout_seconds_ends_the_stream,
            deletion::finalizers_hold_deletion_until_removed,
            deletion::delete_preconditions_and_missing_objects,
            crd::pruning_drops_unknown_fields,
            crd::defaults_fill_absent_fields_where_the_parent_exists,
            crd::schema_violations_are_422_with_the_api_servers_text,
            crd::transition_rules_run_on_update_only,
            crd::status_subresource_and_generation_after_pruning,
            fields::unknown_fields_are_dropped_and_warned_about,
            fields::strict_field_validation_refuses_unknown_and_duplicate_fields,
            fields::patches_report_the_patched_objects_unknown_fields,
            fields::built_in_kinds_decode_into_their_types,
            fields::metadata_that_does_not_decode_is_a_bad_request,
            formats::numbers_must_fit_their_format,
            formats::string_formats_are_checked,
            updates::updates_without_a_resource_version,
            updates::metadata_is_validated_on_every_write,
            updates::custom_resource_strategy_errors_and_warnings,
            updates::crd_names_scope_and_stored_versions_are_kept,
            cel::quantity_rules,
            cel::url_rules,
            cel::ip_rules,
            cel::cidr_rules,
            cel::format_rules,
            cel::semver_regex_lists_sets_and_strings,
            cel::two_variable_comprehensions,
            cel::rules_that_do_not_compile_are_refused,
            types::int_or_string_is_an_i32_or_a_string,
            types::quantities_follow_the_quantity_grammar_everywhere,
            types::times_are_the_rfc_3339_that_jiff_reads,
            types::byte_strings_are_standard_base64,
            types::raw_extensions_keep_any_json,
            contract::enum_keyed_maps_refuse_other_keys,
            contract::integer_keyed_maps_take_the_decimals_serde_json_reads,
            contract::addresses_are_what_rust_parses,
            contract::aliases_are_stored_and_pairs_refused,
            contract::null_never_matches_an_enum,
            contract::embedded_kinds_pin_api_version_and_kind,
            contract::two_flattened_enums_keep_both_constraints,
            cost::a_rule_over_an_unbounded_list_of_strings_is_refused,
            cost::the_same_rule_bounded_by_max_items_and_max_length_is_accepted,
            cost::a_nested_comprehension_just_over_the_limit_is_refused_and_just_under_accepted,
            cost::a_rule_under_an_unbounded_list_counts_every_item_that_fits_a_request,
            cost::the_rules_of_a_schema_share_a_total_budget,
            reviews::self_subject_access_reviews,
            defaults::deployments_and_replica_sets_get_their_defaults,
            defaults::stateful_sets_and_daemon_sets_get_their_defaults,
            defaults::jobs_get_a_generated_selector_and_cron_jobs_their_defaults,
            defaults::pods_get_defaults_a_pending_status_and_tolerations,
            defaults::services_get_defaults_a_cluster_ip_and_node_ports,
            defaults::secrets_merge_string_data_and_default_their_type,
            workloads::selectors_must_select_the_template,
            workloads::deployment_specs_are_validated,
            workloads::pod_templates_are_validated,
            workloads::workload_selectors_and_stateful_set_specs_are_immutable,
            workloads::jobs_are_validated_and_their_templates_immutable,
            workloads::cron_jobs_are_validated,
            services::service_ports_are_validated,
            services::cluster_ips_are_allocated_once_and_kept,
            services::node_ports_are_allocated_in_range_and_kept,
            config::config_map_keys_and_size_are_validated,
            config::immutable_config_maps_and_secrets_stay_as_they_are,
            config::secret_types_require_their_keys_and_never_change,
            config::data_that_is_not_base64_is_a_bad_request,
            trap::comparing_a_whole_deployment_spec_finds_the_servers_defaults,
            trap::comparing_the_fields_you_set_or_applying_does_not_loop,
            scale::built_in_kinds_scale_through_their_replicas,
            scale::custom_resources_scale_through_their_crds_paths,
            namespaces::content_needs_an_existing_namespace,
            namespaces::a_deleted_namespace_terminates_and_takes_no_new_content,
            namespaces::system_namespaces_exist_and_may_not_be_deleted,
            deletion::orphan_and_foreground_deletes_add_their_finalizers,
            deletion::dry_run_deletes_answer_what_a_delete_would,
            deletion::delete_options_are_validated,
            deletion::a_workload_deleted_with_a_policy_is_marked_with_its_finalizer,
            deletion::a_job_deleted_without_a_policy_orphans_its_pods_and_warns,
            defaults::pod_templates_default_probes_hooks_and_volumes,
            defaults::pods_get_their_qos_class_and_host_ports,
            defaults::jobs_keep_their_own_labels_and_manual_selectors,
            defaults::stateful_set_claim_templates_get_their_defaults,
            workloads::daemon_set_template_generation_follows_its_template,
            workloads::init_containers_and_port_names_are_validated,
            workloads::cron_job_limits_and_schedule_forms,
            services::service_types_allocate_what_they_need,
            config::secrets_with_their_required_keys_are_accepted,
            config::immutable_stays_set_and_freezes_binary_data,
            namespaces::namespace_names_and_their_name_label,
            crud::an_apply_needs_a_field_manager,
            patches::smp_merges_containers_by_name,
            patches::smp_patch_delete_removes_a_container,
            patches::smp_patch_replace_on_a_list_and_a_map,
            patches::smp_set_element_order_orders_the_merged_list,
            patches::smp_retain_keys_clears_the_other_keys,
            patches::smp_merges_and_deletes_from_primitive_lists,
            patches::smp_merges_ports_by_container_port,
            patches::smp_merges_env_by_name,
            patches::smp_malformed_directives_are_refused,
            patches::smp_of_a_custom_resource_is_415,
            patches::json_patch_failures_answer_as_the_apiserver,
            machinery::custom_resource_tables_follow_the_printer_columns,
            machinery::custom_resource_tables_default_to_name_and_age,
            machinery::built_in_tables_name_their_objects,
            machinery::unacceptable_media_types_are_406,
            machinery::discovery_lists_short_names_categories_and_hashes,
            machinery::deprecated_versions_warn_on_every_request,
            list_options::list_options_are_validated,
            list_options::watch_options_follow_the_streaming_list_rules,
            list_options::resource_versions_must_be_numbers_the_store_has_reached,
            list_options::continue_tokens_are_checked,
            crd_install::rule_field_paths_must_resolve_in_the_schema,
            crd_install::rule_reasons_and_messages_must_be_well_formed,
            crd_install::optional_old_self_needs_a_rule_using_old_self,
            crd_install::an_optional_old_self_is_unwrapped,
            crd_install::embedded_resources_must_be_objects_with_fields,
            crd_install::embedded_resources_need_api_version_and_kind,
            crd_install::embedded_resource_metadata_is_validated,
            reads::built_in_list_items_carry_no_api_version_or_kind,
            reads::label_selectors_parse_as_apimachinery_does,
            reads::field_selectors_follow_each_kinds_field_labels,
            reads::watches_as_tables_send_one_row_tables,
            reads::version_and_discovery_verbs_are_kube_apiservers,
            reads::yaml_is_answered_in_yaml,
            reads::built_in_tables_use_kube_apiservers_printers,
            tables::workload_tables_print_their_replica_counts,
            tables::job_tables_print_status_completions_and_duration,
            tables::cron_job_tables_print_schedule_suspend_and_last_schedule,
            tables::pod_tables_show_restarts_init_containers_and_completion,
            namespaces::namespaces_cannot_be_deleted_as_a_collection,
        }
    };
}
pub(crate) use for_each_case;

/// Which server a case runs against (for the rare place where the suite must know).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Server {
    /// kbr's in-process fake API server.
    Fake,
    /// kube-apiserver + etcd from envtest.
    Envtest,
}

/// What a case gets: a client for the server and a namespace of its own.
pub struct Ctx {
    pub client: kube::Client,
    pub ns: String,
    pub server: Server,
}

impl Ctx {
    /// Creates the namespace `case` (as a DNS label) and returns the context.
    pub async fn new(
        client: kube::Client,
        case: &str,
        server: Server,
    ) -> Result<Self, kube::Error> {
        let ns: String = case.replace('_', "-").chars().take(50).collect();
        let ns = ns.trim_end_matches('-').to_owned();
        create_namespace(&client, &ns).await?;
        Ok(Self { client, ns, server })
    }

    /// `Api<K>` in the case's namespace.
    pub fn api<K>(&self) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        <K as kube::Resource>::DynamicType: Default,
    {
        Api::namespaced(self.client.clone(), &self.ns)
    }

    /// Another namespace for this case, `<ns>-<suffix>`, created.
    pub async fn other_namespace(&self, suffix: &str) -> Result<String, kube::Error> {
        let ns = format!("{}-{suffix}", self.ns);
        create_namespace(&self.client, &ns).await?;
        Ok(ns)
    }
}

async fn create_namespace(client: &kube::Client, name: &str) -> Result<(), kube::Error> {
    let api: Api<Namespace> = Api::all(client.clone());
    let mut ns = Namespace::default();
    ns.metadata.name = Some(name.to_owned());
    api.create(&PostParams::default(), &ns).await.map(|_| ())
}

/// WidgetSpec is the suite's namespaced custom kind, with a status subresource.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "conformance.kbr.dev",
    version = "v1",
    kind = "Widget",
    plural = "widgets"
)]
#[kbr(namespaced, status = "WidgetStatus")]
pub struct WidgetSpec {
    /// Size of the widget.
    #[serde(default)]
    pub size: i32,
}

/// WidgetStatus is the observed state of a Widget.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WidgetStatus {
    /// Whether the widget is ready.
    #[serde(default)]
    pub ready: bool,
}

/// PaintSpec is a namespaced custom kind whose `.spec.color` is a selectable field.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "conformance.kbr.dev",
    version = "v1",
    kind = "Paint",
    plural = "paints"
)]
#[kbr(namespaced, selectable_field = ".spec.color")]
pub struct PaintSpec {
    /// The colour.
    #[serde(default)]
    pub color: String,
}

/// GadgetSpec is the kind of the CRD-semantics cases (`crd.rs`): bounds, a pattern, an enum,
/// defaults (also nested), preserved unknown fields and an immutable field (a CEL transition
/// rule).
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "conformance.kbr.dev",
    version = "v1",
    kind = "Gadget",
    plural = "gadgets"
)]
#[kbr(namespaced, status = "GadgetStatus")]
pub struct GadgetSpec {
    /// How many, 1 to 10.
    #[kbr(minimum = 1, maximum = 10, default = 1)]
    #[serde(default = "one")]
    pub replicas: i32,
    /// Lower-case letters.
    #[kbr(pattern = "^[a-z]+$")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// When to restart.
    #[kbr(enum = ["Always", "Never"])]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// Settings, defaulted inside when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<GadgetSettings>,
    /// Anything else is kept here.
    #[kbr(preserve_unknown_fields)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<GadgetExtra>,
    /// Set once.
    #[kbr(immutable)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

fn one() -> i32 {
    1
}

/// Settings of a Gadget.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GadgetSettings {
    /// The mode.
    #[kbr(default = "fast")]
    #[serde(default)]
    pub mode: String,
    /// The depth: neither defaulted nor nullable.
    #[kbr(optional)]
    pub depth: i32,
}

/// Extras of a Gadget: one known field, unknown ones kept.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GadgetExtra {
    /// Known.
    #[serde(default)]
    pub known: i32,
}

/// GadgetStatus is the observed state of a Gadget.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GadgetStatus {
    /// Whether the gadget is ready.
    #[serde(default)]
    pub ready: bool,
}

/// RackSpec is the kind of the server-side apply cases (`apply.rs`): a list-map keyed by
/// `name`, a set, an atomic list, an atomic map and a granular map.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "conformance.kbr.dev",
    version = "v1",
    kind = "Rack",
    plural = "racks"
)]
#[kbr(namespaced, status = "RackStatus")]
pub struct RackSpec {
    /// Slots, one per name.
    #[kbr(list_type = "map", list_map_keys = ["name"])]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slots: Vec<Slot>,
    /// Tags, each at most once.
    #[kbr(list_type = "set")]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Arguments, replaced as a whole.
    #[kbr(list_type = "atomic")]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// A selector, replaced as a whole.
    #[kbr(map_type = "atomic")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<std::collections::BTreeMap<String, String>>,
    /// Limits, merged by key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<std::collections::BTreeMap<String, String>>,
}

/// One slot of a Rack.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Slot {
    /// The key.
    pub name: String,
    /// What is in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// RackStatus is the observed state of a Rack.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RackStatus {
    /// Whether the rack is ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
}

/// ReadingSpec is the kind of the format cases (`formats.rs`): numbers whose Rust types give
/// them a `format` (int32, int64, float) and strings with the formats the API server checks.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "conformance.kbr.dev",
    version = "v1",
    kind = "Reading",
    plural = "readings"
)]
#[kbr(namespaced)]
#[serde(rename_all = "camelCase")]
pub struct ReadingSpec {
    /// A count (`format: int32`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<i32>,
    /// A total (`format: int64`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<i64>,
    /// A ratio (`format: float`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f32>,
    /// When.
    #[kbr(format = "date-time")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// An identifier.
    #[kbr(format = "uuid")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// An address.
    #[kbr(format = "ipv4")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// A network.
    #[kbr(format = "cidr")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// How long.
    #[kbr(format = "duration")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<String>,
    /// A short Kubernetes name.
    #[kbr(format = "k8s-short-name")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_name: Option<String>,
}

/// DialSpec is the kind of the `/scale` cases (`scale.rs`): a custom resource whose CRD declares
/// a scale subresource, with at most 5 replicas.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "conformance.kbr.dev",
    version = "v1",
    kind = "Dial",
    plural = "dials"
)]
#[kbr(namespaced, status = "DialStatus")]
#[kbr(scale(
    spec_replicas_path = ".spec.replicas",
    status_replicas_path = ".status.replicas",
    label_selector_path = ".status.selector"
))]
pub struct DialSpec {
    /// How many, at most 5.
    #[kbr(maximum = 5)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
}

/// DialStatus is the observed state of a Dial.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DialStatus {
    /// How many there are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Which pods count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
}

/// The suite's kinds.
pub fn scheme() -> Scheme {
    let mut scheme = Scheme::new();
    scheme.add::<Widget>();
    scheme.add::<Paint>();
    scheme.add::<Gadget>();
    scheme.add::<Reading>();
    scheme.add::<Rack>();
    scheme.add::<Dial>();
    scheme.add::<types::Sample>();
    scheme.add::<contract::Contract>();
    scheme
}

/// `(TYPE, name)` of a watch event; bookmarks as `("BOOKMARK", "")`.
pub fn describe<K: kube::Resource>(event: &WatchEvent<K>) -> (String, String) {
    let name = |o: &K| o.meta().name.clone().unwrap_or_default();
    match event {
        WatchEvent::Added(o) => ("ADDED".into(), name(o)),
        WatchEvent::Modified(o) => ("MODIFIED".into(), name(o)),
        WatchEvent::Deleted(o) => ("DELETED".into(), name(o)),
        WatchEvent::Bookmark(_) => ("BOOKMARK".into(), String::new()),
        WatchEvent::Error(e) => ("ERROR".into(), format!("{} {}", e.code, e.reason)),
    }
}

/// The next non-BOOKMARK event of a watch, within [`DEADLINE`].
pub async fn next_change<K, S>(
    stream: &mut S,
) -> Result<WatchEvent<K>, Box<dyn std::error::Error + Send + Sync>>
where
    S: Stream<Item = Result<WatchEvent<K>, kube::Error>> + Unpin,
{
    loop {
        let event = tokio::time::timeout(DEADLINE, stream.try_next())
            .await
            .map_err(|_| format!("no watch event within {DEADLINE:?}"))??
            .ok_or("the watch ended")?;
        if !matches!(event, WatchEvent::Bookmark(_)) {
            return Ok(event);
        }
    }
}

/// `(TYPE, name)` pairs, for comparing event sequences.
pub fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}
