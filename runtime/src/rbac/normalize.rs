//! controller-gen's `NormalizeRules`: merging and sorting rules into a role's `rules`.

use std::collections::BTreeMap;

use k8s_openapi::api::rbac::v1::PolicyRule;

use super::Rule;

/// A rule in canonical form: every list sorted and deduplicated, `core` spelled `""`; with the
/// origins of the rules merged into it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Canonical {
    groups: Vec<String>,
    resources: Vec<String>,
    resource_names: Vec<String>,
    urls: Vec<String>,
    verbs: Vec<String>,
    origins: Vec<String>,
}

/// The key rules merge on: the four lists that must be equal, each joined by `&`.
fn merge_key(lists: [&[String]; 4]) -> String {
    lists.map(|list| list.join("&")).join(" + ")
}

fn sorted(mut values: Vec<String>) -> Vec<String> {
    values.sort();
    values.dedup();
    values
}

impl Canonical {
    fn of(rule: &Rule) -> Self {
        let groups = rule
            .groups
            .iter()
            .map(|group| {
                if group == "core" {
                    String::new()
                } else {
                    group.clone()
                }
            })
            .collect();
        Canonical {
            groups: sorted(groups),
            resources: sorted(rule.resources.clone()),
            resource_names: sorted(rule.resource_names.clone()),
            urls: sorted(rule.urls.clone()),
            verbs: sorted(rule.verbs.clone()),
            origins: rule.origin.iter().cloned().collect(),
        }
    }

    fn normalized(self) -> Self {
        Canonical {
            groups: sorted(self.groups),
            resources: sorted(self.resources),
            resource_names: sorted(self.resource_names),
            urls: sorted(self.urls),
            verbs: sorted(self.verbs),
            origins: sorted(self.origins),
        }
    }

    /// controller-gen's `ruleKey.String()`: what rules are sorted by.
    fn key(&self) -> String {
        merge_key([
            &self.groups,
            &self.resources,
            &self.resource_names,
            &self.urls,
        ])
    }

    /// The rule as a role holds it, and the origins merged into it.
    fn into_policy_rule(self) -> (PolicyRule, Vec<String>) {
        let verbs = if self.verbs.iter().any(|verb| verb == "*") {
            vec!["*".to_owned()]
        } else {
            self.verbs
        };
        let some = |values: Vec<String>| (!values.is_empty()).then_some(values);
        let rule = PolicyRule {
            api_groups: some(self.groups),
            resources: some(self.resources),
            resource_names: some(self.resource_names),
            non_resource_urls: some(self.urls),
            verbs,
        };
        (rule, self.origins)
    }
}

/// Merges `from` into `into` with `merge`, and `from`'s origins into `into`'s.
fn absorb(into: &mut Canonical, from: Canonical, merge: impl Fn(&mut Canonical, Canonical)) {
    into.origins.extend(from.origins.iter().cloned());
    merge(into, from);
}

/// Merges rules whose `key` is equal with `merge`; returns them re-normalized, keyed.
fn merge_by(
    rules: Vec<Canonical>,
    key: impl Fn(&Canonical) -> String,
    merge: impl Fn(&mut Canonical, Canonical),
) -> Vec<Canonical> {
    let mut merged: BTreeMap<String, Canonical> = BTreeMap::new();
    for rule in rules {
        match merged.get_mut(&key(&rule)) {
            Some(existing) => absorb(existing, rule, &merge),
            None => {
                merged.insert(key(&rule), rule);
            }
        }
    }
    merged.into_values().map(Canonical::normalized).collect()
}

/// Rules as they appear in a role, merged and sorted like controller-gen's `NormalizeRules`
/// (namespaces are ignored; [`cluster_role`](super::cluster_role) and [`roles`](super::roles)
/// split by namespace first).
///
/// 1. rules with the same groups, resources, resource names and urls merge their verbs;
/// 2. then rules with the same groups, resource names, urls and verbs merge their resources;
/// 3. then rules with the same resources, resource names, urls and verbs merge their groups;
/// 4. every list is sorted and deduplicated, a rule with verb `*` keeps only `*`, and rules
///    are sorted by `groups + resources + resourceNames + urls` (each `&`-joined).
///
/// The result does not depend on the order of `rules`.
pub fn normalize(rules: &[Rule]) -> Vec<PolicyRule> {
    normalize_with_origins(rules)
        .into_iter()
        .map(|(rule, _)| rule)
        .collect()
}

/// [`normalize`], each resulting rule paired with the [`origin`](Rule::origin)s of the rules
/// merged into it (sorted, without duplicates; empty when they were all markers): what `make
/// manifests` writes as the comment above each rule.
///
/// ```
/// use kbr_runtime::rbac::{Rule, normalize_with_origins};
/// let rules = [
///     Rule::new(["get", "list", "watch"]).groups(["apps"]).resources(["deployments"])
///         .origin("controller web: watches apps/v1 Deployment"),
///     Rule::new(["create", "get"]).groups(["apps"]).resources(["deployments"]),
/// ];
/// let normalized = normalize_with_origins(&rules);
/// assert_eq!(normalized.len(), 1);
/// assert_eq!(normalized[0].0.verbs, ["create", "get", "list", "watch"]);
/// assert_eq!(normalized[0].1, ["controller web: watches apps/v1 Deployment"]);
/// ```
pub fn normalize_with_origins(rules: &[Rule]) -> Vec<(PolicyRule, Vec<String>)> {
    let canonical: Vec<Canonical> = rules.iter().map(Canonical::of).collect();
    let by_target = merge_by(canonical, Canonical::key, |into, rule| {
        into.verbs.extend(rule.verbs)
    });
    let by_verbs = merge_by(
        by_target,
        |rule| merge_key([&rule.groups, &rule.resource_names, &rule.urls, &rule.verbs]),
        |into, rule| into.resources.extend(rule.resources),
    );
    let by_groups = merge_by(
        by_verbs,
        |rule| {
            merge_key([
                &rule.resources,
                &rule.resource_names,
                &rule.urls,
                &rule.verbs,
            ])
        },
        |into, rule| into.groups.extend(rule.groups),
    );
    // Two rules can still share a key here (same target, different verbs after step 2/3):
    // merge their verbs once more so each target appears once.
    let merged = merge_by(by_groups, Canonical::key, |into, rule| {
        into.verbs.extend(rule.verbs)
    });
    merged
        .into_iter()
        .map(Canonical::into_policy_rule)
        .collect()
}
