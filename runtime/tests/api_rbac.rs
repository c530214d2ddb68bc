//! `#[derive(Rbac)]` and the role it adds up to: merged and sorted like controller-gen.

use kbr_runtime::k8s_openapi::api::rbac::v1::PolicyRule;
use kbr_runtime::rbac::{self, MANAGER_ROLE, RbacError, Rule};
use serde_json::json;

/// The Broker controller's markers, as `kbr create api` scaffolds them, plus what the Knative
/// example adds.
#[derive(kbr_runtime::Rbac)]
#[rbac(groups = ["eventing.knative.dev"], resources = ["brokers"], verbs = ["get", "list", "watch", "create", "update", "patch", "delete"])]
#[rbac(groups = ["eventing.knative.dev"], resources = ["brokers/status"], verbs = ["get", "update", "patch"])]
#[rbac(groups = ["eventing.knative.dev"], resources = ["brokers/finalizers"], verbs = ["update"])]
#[rbac(groups = ["eventing.knative.dev"], resources = ["channels"], verbs = ["get", "list", "watch", "create"])]
pub struct BrokerReconciler;

/// The Channel controller: overlaps with the Broker's, uses `core`, a namespace and a URL.
#[derive(kbr_runtime::Rbac)]
#[rbac(groups = ["eventing.knative.dev"], resources = ["channels"], verbs = ["update", "patch", "delete", "get"])]
#[rbac(groups = ["core"], resources = ["services"], verbs = "get;list;watch;create")]
#[rbac(groups = [""], resources = ["configmaps"], verbs = ["get", "list", "watch"], namespace = "knative-eventing")]
#[rbac(groups = [""], resources = ["configmaps"], resource_names = ["default-channel-webhook"], verbs = ["get"], namespace = "knative-eventing")]
#[rbac(urls = ["/metrics"], verbs = ["get"])]
pub struct ChannelReconciler<T> {
    _marker: std::marker::PhantomData<T>,
}

/// A controller that may do anything with its own kinds.
#[derive(kbr_runtime::Rbac)]
#[rbac(groups = ["apps"], resources = ["deployments"], verbs = ["get", "*", "list"])]
pub struct Admin;

fn all_rules() -> Vec<Rule> {
    let mut rules = BrokerReconciler::rbac_rules();
    rules.extend(ChannelReconciler::<()>::rbac_rules());
    rules
}

#[test]
fn derive_turns_markers_into_rules() {
    let rules = BrokerReconciler::rbac_rules();
    assert_eq!(rules.len(), 4);
    assert_eq!(
        rules[1],
        Rule::new(["get", "update", "patch"])
            .groups(["eventing.knative.dev"])
            .resources(["brokers/status"])
    );
    let channel = ChannelReconciler::<()>::rbac_rules();
    assert_eq!(
        channel[1].verbs,
        ["get", "list", "watch", "create"],
        "`;`-separated lists split"
    );
    assert_eq!(channel[2].namespace.as_deref(), Some("knative-eventing"));
    assert_eq!(channel[3].resource_names, ["default-channel-webhook"]);
    assert_eq!(channel[4], Rule::new(["get"]).urls(["/metrics"]));
    assert_eq!(channel[4].to_string(), "urls=/metrics,verbs=get");
}

#[test]
fn cluster_role_merges_and_sorts_like_controller_gen() {
    let role = rbac::cluster_role(MANAGER_ROLE, &all_rules()).unwrap();
    assert_eq!(role.metadata.name.as_deref(), Some("manager-role"));
    let rules = serde_json::to_value(role.rules.unwrap()).unwrap();
    assert_eq!(
        rules,
        json!([
            {"nonResourceURLs": ["/metrics"], "verbs": ["get"]},
            {"apiGroups": [""], "resources": ["services"], "verbs": ["create", "get", "list", "watch"]},
            {"apiGroups": ["eventing.knative.dev"], "resources": ["brokers", "channels"],
             "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]},
            {"apiGroups": ["eventing.knative.dev"], "resources": ["brokers/finalizers"], "verbs": ["update"]},
            {"apiGroups": ["eventing.knative.dev"], "resources": ["brokers/status"], "verbs": ["get", "patch", "update"]}
        ])
    );
}

#[test]
fn namespaced_rules_become_roles() {
    let roles = rbac::roles(MANAGER_ROLE, &all_rules()).unwrap();
    assert_eq!(roles.len(), 1);
    assert_eq!(roles[0].metadata.name.as_deref(), Some("manager-role"));
    assert_eq!(
        roles[0].metadata.namespace.as_deref(),
        Some("knative-eventing")
    );
    assert_eq!(
        serde_json::to_value(roles[0].rules.as_ref().unwrap()).unwrap(),
        json!([
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": [""], "resourceNames": ["default-channel-webhook"], "resources": ["configmaps"], "verbs": ["get"]}
        ])
    );
}

#[test]
fn output_does_not_depend_on_rule_order() {
    let rules = all_rules();
    let expected = rbac::normalize(&rules);
    let mut reversed = rules.clone();
    reversed.reverse();
    assert_eq!(rbac::normalize(&reversed), expected);
    let mut rotated = rules.clone();
    rotated.rotate_left(3);
    assert_eq!(rbac::normalize(&rotated), expected);
    let mut doubled = rules.clone();
    doubled.extend(rules);
    assert_eq!(rbac::normalize(&doubled), expected, "duplicates collapse");
}

#[test]
fn star_verb_absorbs_the_others() {
    let rules = rbac::normalize(&Admin::rbac_rules());
    assert_eq!(
        rules,
        [PolicyRule {
            api_groups: Some(vec!["apps".into()]),
            resources: Some(vec!["deployments".into()]),
            verbs: vec!["*".into()],
            ..PolicyRule::default()
        }]
    );
}

#[test]
fn rules_merging_into_one_target_keep_all_verbs() {
    // a/[x] get + a/[y] get merge resources into a/[x, y] get, which then shares its target
    // with a/[x, y] list: the two must merge, not overwrite each other.
    let rules = [
        Rule::new(["get"])
            .groups(["a.example.com"])
            .resources(["x"]),
        Rule::new(["get"])
            .groups(["a.example.com"])
            .resources(["y"]),
        Rule::new(["list"])
            .groups(["a.example.com"])
            .resources(["x", "y"]),
    ];
    let normalized = rbac::normalize(&rules);
    assert_eq!(normalized.len(), 1);
    assert_eq!(normalized[0].verbs, ["get", "list"]);
}

#[test]
fn groups_merge_for_identical_resources_and_verbs() {
    let rules = [
        Rule::new(["get"])
            .groups(["b.example.com"])
            .resources(["things"]),
        Rule::new(["get"])
            .groups(["a.example.com"])
            .resources(["things"]),
    ];
    let normalized = rbac::normalize(&rules);
    assert_eq!(normalized.len(), 1);
    assert_eq!(
        normalized[0].api_groups,
        Some(vec!["a.example.com".to_owned(), "b.example.com".to_owned()])
    );
}

#[test]
fn invalid_rules_are_typed_errors() {
    let cases = [
        (
            Rule::new(Vec::<String>::new())
                .groups(["apps"])
                .resources(["deployments"]),
            "verbs",
        ),
        (
            Rule::new(["get"]).groups(["apps"]).urls(["/metrics"]),
            "urls",
        ),
        (
            Rule::new(["get"]).urls(["/metrics"]).namespace("ns"),
            "ClusterRole",
        ),
        (Rule::new(["get"]).groups(["apps"]), "neither"),
        (
            Rule::new(["get"])
                .groups([""])
                .resources(["namespaces"])
                .cluster_scoped()
                .namespace("ns"),
            "cluster-scoped",
        ),
    ];
    for (rule, needle) in cases {
        let error = rbac::cluster_role(MANAGER_ROLE, std::slice::from_ref(&rule)).unwrap_err();
        let RbacError::InvalidRule { reason, .. } = &error else {
            panic!("{error:?}")
        };
        assert!(reason.contains(needle), "{rule}: {error}");
        assert!(rbac::roles(MANAGER_ROLE, &[rule]).is_err());
    }
}

#[test]
fn no_rules_still_give_an_empty_cluster_role() {
    let role = rbac::cluster_role(MANAGER_ROLE, &[]).unwrap();
    assert_eq!(role.rules, Some(Vec::new()));
    assert!(rbac::roles(MANAGER_ROLE, &[]).unwrap().is_empty());
}

#[test]
fn origins_follow_the_rules_they_merge_into() {
    let rules = [
        Rule::new(["get", "list", "watch"])
            .groups(["apps"])
            .resources(["deployments"])
            .origin("controller web: watches apps/v1 Deployment"),
        Rule::new([
            "create", "delete", "get", "list", "patch", "update", "watch",
        ])
        .groups(["apps"])
        .resources(["deployments"])
        .origin("controller api: owns apps/v1 Deployment"),
        // A marker for the same target: merged, adds no origin.
        Rule::new(["get"])
            .groups(["apps"])
            .resources(["deployments"]),
        // Same verbs on another resource of the group: the resources merge, and so do origins.
        Rule::new(["get", "list", "watch"])
            .groups(["apps"])
            .resources(["replicasets"])
            .origin("controller web: watches apps/v1 ReplicaSet"),
        Rule::new(["get", "list", "watch"])
            .groups(["apps"])
            .resources(["replicasets"])
            .origin("controller web: watches apps/v1 ReplicaSet"),
    ];
    let normalized = rbac::normalize_with_origins(&rules);
    let summary: Vec<(Vec<String>, Vec<String>, Vec<String>)> = normalized
        .into_iter()
        .map(|(rule, origins)| (rule.resources.unwrap_or_default(), rule.verbs, origins))
        .collect();
    let strings = |values: &[&str]| values.iter().map(|v| (*v).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        summary,
        [
            (
                strings(&["deployments"]),
                strings(&[
                    "create", "delete", "get", "list", "patch", "update", "watch"
                ]),
                strings(&[
                    "controller api: owns apps/v1 Deployment",
                    "controller web: watches apps/v1 Deployment"
                ])
            ),
            (
                strings(&["replicasets"]),
                strings(&["get", "list", "watch"]),
                strings(&["controller web: watches apps/v1 ReplicaSet"])
            ),
        ]
    );
    assert_eq!(
        rbac::normalize(&rules),
        rbac::normalize_with_origins(&rules)
            .into_iter()
            .map(|(rule, _)| rule)
            .collect::<Vec<PolicyRule>>(),
        "one normalization"
    );
}
