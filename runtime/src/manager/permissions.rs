//! The permission check at start: before the caches start, the manager asks the API server
//! whether it may do what its wiring needs ([`Manager::rbac_rules`](super::Manager::rbac_rules)),
//! one `authorization.k8s.io/v1` `SelfSubjectAccessReview` per verb, resource, subresource,
//! name and namespace, and names what is missing as RBAC YAML to add.
//!
//! kube-apiserver answers a `SelfSubjectAccessReview` for the user of the request with its
//! authorizers (`pkg/registry/authorization/selfsubjectaccessreview/rest.go`); every
//! authenticated user may ask about itself (the `system:basic-user` ClusterRole). A rule
//! without namespace is asked cluster-wide, or in each watched namespace when the cache watches
//! only some ([`Namespaces::Only`], `WATCH_NAMESPACE`), unless its resources are cluster-scoped;
//! a rule with a namespace is asked in that namespace.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use kube::api::{Api, PostParams};

use super::run::UserRunnable;
use super::server::Check;
use super::{ManagerError, OnMissingRbac};
use crate::cache::Namespaces;
use crate::rbac::Rule;

/// How many reviews are in flight at once.
const CONCURRENT_REVIEWS: usize = 8;

/// How often a manager that went on without some rules asks again (until it has them all).
const RECHECK_PERIOD: Duration = Duration::from_secs(30);

/// One question to the authorizer: may the manager do `verb` on this resource (or URL)?
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Question {
    /// `None`: cluster-wide (all namespaces, or a cluster-scoped resource).
    namespace: Option<String>,
    group: String,
    resource: String,
    subresource: Option<String>,
    name: Option<String>,
    /// A non-resource URL (then every resource field is empty).
    url: Option<String>,
    verb: String,
}

/// Who asks a question: the rule's origin and whether its resources are cluster-scoped.
type Askers = Vec<(Option<String>, bool)>;

impl Question {
    fn review(&self) -> SelfSubjectAccessReview {
        let spec = match &self.url {
            Some(url) => SelfSubjectAccessReviewSpec {
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some(url.clone()),
                    verb: Some(self.verb.clone()),
                }),
                ..SelfSubjectAccessReviewSpec::default()
            },
            None => SelfSubjectAccessReviewSpec {
                resource_attributes: Some(ResourceAttributes {
                    namespace: self.namespace.clone(),
                    group: Some(self.group.clone()),
                    resource: Some(self.resource.clone()),
                    subresource: self.subresource.clone(),
                    name: self.name.clone(),
                    verb: Some(self.verb.clone()),
                    ..ResourceAttributes::default()
                }),
                ..SelfSubjectAccessReviewSpec::default()
            },
        };
        SelfSubjectAccessReview {
            spec,
            ..SelfSubjectAccessReview::default()
        }
    }

    /// The one-verb rule granting the question, from `origin`.
    fn rule(&self, origin: Option<&String>, cluster_scoped: bool) -> Rule {
        let mut rule = Rule::new([self.verb.as_str()]);
        if let Some(url) = &self.url {
            rule = rule.urls([url.as_str()]);
        } else {
            let resource = match &self.subresource {
                Some(subresource) => format!("{}/{subresource}", self.resource),
                None => self.resource.clone(),
            };
            rule = rule
                .groups([self.group.as_str()])
                .resources([resource])
                .resource_names(self.name.iter().cloned());
            if let Some(namespace) = &self.namespace {
                rule = rule.namespace(namespace.as_str());
            }
            if cluster_scoped {
                rule = rule.cluster_scoped();
            }
        }
        rule.origin = origin.cloned();
        rule
    }
}

/// Every question `rules` ask, with who asks it.
fn questions(rules: &[Rule], namespaces: &Namespaces) -> BTreeMap<Question, Askers> {
    let mut questions: BTreeMap<Question, Askers> = BTreeMap::new();
    let mut ask = |question: Question, rule: &Rule| {
        let asker = (rule.origin.clone(), rule.cluster_scoped);
        let askers = questions.entry(question).or_default();
        if !askers.contains(&asker) {
            askers.push(asker);
        }
    };
    for rule in rules {
        for verb in &rule.verbs {
            for url in &rule.urls {
                let question = Question {
                    namespace: None,
                    group: String::new(),
                    resource: String::new(),
                    subresource: None,
                    name: None,
                    url: Some(url.clone()),
                    verb: verb.clone(),
                };
                ask(question, rule);
            }
        }
        let where_: Vec<Option<String>> = match (&rule.namespace, namespaces) {
            (Some(namespace), _) => vec![Some(namespace.clone())],
            (None, Namespaces::Only(list)) if !rule.cluster_scoped => {
                list.iter().cloned().map(Some).collect()
            }
            (None, _) => vec![None],
        };
        let groups: Vec<&str> = if rule.groups.is_empty() {
            vec![""]
        } else {
            rule.groups.iter().map(String::as_str).collect()
        };
        let names: Vec<Option<String>> = if rule.resource_names.is_empty() {
            vec![None]
        } else {
            rule.resource_names.iter().cloned().map(Some).collect()
        };
        for namespace in &where_ {
            for group in &groups {
                let group = if *group == "core" { "" } else { *group };
                for resource in &rule.resources {
                    let (resource, subresource) = match resource.split_once('/') {
                        Some((resource, sub)) => (resource, Some(sub.to_owned())),
                        None => (resource.as_str(), None),
                    };
                    for name in &names {
                        for verb in &rule.verbs {
                            let question = Question {
                                namespace: namespace.clone(),
                                group: group.to_owned(),
                                resource: resource.to_owned(),
                                subresource: subresource.clone(),
                                name: name.clone(),
                                url: None,
                                verb: verb.clone(),
                            };
                            ask(question, rule);
                        }
                    }
                }
            }
        }
    }
    questions
}

/// The rules among `rules` the manager's user does not hold, as one-verb rules with their
/// origins (in `rules`' namespaces, or the watched namespace they are missing in).
///
/// # Errors
/// The first `SelfSubjectAccessReview` that could not be created (the server does not serve
/// them, or the request failed).
pub(super) async fn missing_rules(
    kube: &kube::Client,
    rules: &[Rule],
    namespaces: &Namespaces,
) -> Result<Vec<Rule>, kube::Error> {
    let reviews: Api<SelfSubjectAccessReview> = Api::all(kube.clone());
    let denied: Vec<(Question, Askers)> = futures::stream::iter(questions(rules, namespaces))
        .map(|(question, askers)| {
            let reviews = reviews.clone();
            async move {
                let answer = reviews
                    .create(&PostParams::default(), &question.review())
                    .await?;
                let allowed = answer.status.is_some_and(|status| status.allowed);
                Ok::<_, kube::Error>((!allowed).then_some((question, askers)))
            }
        })
        .buffer_unordered(CONCURRENT_REVIEWS)
        .try_filter_map(|denied| async move { Ok(denied) })
        .try_collect()
        .await?;
    let mut missing: Vec<Rule> = denied
        .into_iter()
        .flat_map(|(question, askers)| {
            askers
                .into_iter()
                .map(move |(origin, scoped)| question.rule(origin.as_ref(), scoped))
        })
        .collect();
    missing.sort();
    Ok(missing)
}

/// The missing rules as RBAC YAML to add (the role documents `make manifests` writes, with
/// only what is missing), or their one-line forms when they cannot be rendered.
fn as_yaml(missing: &[Rule]) -> String {
    crate::manifests::role_documents(missing, false).unwrap_or_else(|_| {
        missing
            .iter()
            .map(|rule| format!("{rule}\n"))
            .collect::<String>()
    })
}

/// Runs the check before the caches start: logs one error listing what is missing as YAML and
/// records it for `/readyz` (`missing`). With [`OnMissingRbac::Fail`] returns
/// [`ManagerError::MissingRbac`]; with [`OnMissingRbac::Continue`] returns the runnable that
/// asks again every 30 s until nothing is missing. A check that cannot run (the server answers
/// no `SelfSubjectAccessReview`) is logged as a warning and skipped.
pub(super) async fn check_at_start(
    kube: &kube::Client,
    rules: Vec<Rule>,
    namespaces: &Namespaces,
    on_missing: OnMissingRbac,
    missing: &Arc<Mutex<Vec<Rule>>>,
) -> Result<Option<UserRunnable>, ManagerError> {
    let found = match missing_rules(kube, &rules, namespaces).await {
        Ok(found) => found,
        Err(error) => {
            tracing::warn!(%error, "could not check the manager's RBAC permissions with SelfSubjectAccessReviews; going on without the check");
            return Ok(None);
        }
    };
    if found.is_empty() {
        tracing::info!(
            rules = rules.len(),
            "RBAC: the manager holds every permission its wiring needs"
        );
        return Ok(None);
    }
    let yaml = as_yaml(&found);
    let count = found.len();
    let what = match on_missing {
        OnMissingRbac::Fail => "stopping (--on-missing-rbac=continue goes on without them)",
        OnMissingRbac::Continue => "going on without them (--on-missing-rbac=continue)",
    };
    tracing::error!(
        missing = count,
        "RBAC: the manager lacks {count} permission(s) its wiring needs; {what}. Add these \
         rules to its role (`make manifests` writes them to config/rbac/role.yaml):\n{yaml}"
    );
    *missing.lock().unwrap_or_else(PoisonError::into_inner) = found.clone();
    match on_missing {
        OnMissingRbac::Fail => Err(ManagerError::MissingRbac { missing: found }),
        OnMissingRbac::Continue => Ok(Some(recheck(
            kube.clone(),
            rules,
            namespaces.clone(),
            missing.clone(),
        ))),
    }
}

/// Asks again every [`RECHECK_PERIOD`] until nothing is missing, updating `missing`.
fn recheck(
    kube: kube::Client,
    rules: Vec<Rule>,
    namespaces: Namespaces,
    missing: Arc<Mutex<Vec<Rule>>>,
) -> UserRunnable {
    UserRunnable {
        name: "rbac-check".into(),
        needs_leader: false,
        run: Box::new(move |shutdown| {
            Box::pin(async move {
                let mut stop = std::pin::pin!(shutdown.wait());
                loop {
                    tokio::select! {
                        () = &mut stop => return Ok(()),
                        () = tokio::time::sleep(RECHECK_PERIOD) => {}
                    }
                    let Ok(found) = missing_rules(&kube, &rules, &namespaces).await else {
                        continue;
                    };
                    let done = found.is_empty();
                    *missing.lock().unwrap_or_else(PoisonError::into_inner) = found;
                    if done {
                        tracing::info!(
                            "RBAC: the manager now holds every permission its wiring needs"
                        );
                        return Ok(());
                    }
                }
            })
        }),
    }
}

/// The `/readyz` check `rbac`: fails naming every missing rule while some are missing.
pub(super) fn readyz_check(missing: Arc<Mutex<Vec<Rule>>>) -> Check {
    Arc::new(move || {
        let missing = missing.lock().unwrap_or_else(PoisonError::into_inner);
        if missing.is_empty() {
            return Ok(());
        }
        let rules: Vec<String> = missing
            .iter()
            .map(|rule| match &rule.origin {
                Some(origin) => format!("{rule} ({origin})"),
                None => rule.to_string(),
            })
            .collect();
        Err(format!("missing RBAC permissions: {}", rules.join("; ")))
    })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use tokio::sync::watch;

    use super::*;
    use crate::manager::Shutdown;

    /// A client whose every SelfSubjectAccessReview is answered `allowed: granted`, as
    /// kube-apiserver answers one (`pkg/registry/authorization/selfsubjectaccessreview/rest.go`:
    /// the review sent, with its status filled in).
    fn reviews(granted: Arc<AtomicBool>) -> kube::Client {
        crate::stub::client(move |method, path, body| {
            assert_eq!(method, http::Method::POST);
            assert!(path.contains("/selfsubjectaccessreviews"), "{path}");
            let mut review: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
            review["status"] = serde_json::json!({ "allowed": granted.load(Ordering::SeqCst) });
            (http::StatusCode::CREATED, review.to_string())
        })
    }

    #[tokio::test(start_paused = true)]
    async fn a_manager_that_went_on_asks_again_until_it_holds_every_rule() {
        let granted = Arc::new(AtomicBool::new(false));
        let rules = vec![Rule::new(["list"]).groups([""]).resources(["configmaps"])];
        let missing = Arc::new(Mutex::new(Vec::new()));
        let kube = reviews(granted.clone());
        let checked = check_at_start(
            &kube,
            rules.clone(),
            &Namespaces::All,
            OnMissingRbac::Continue,
            &missing,
        )
        .await;
        let Ok(Some(recheck)) = checked else {
            panic!("expected a recheck runnable, got {:?}", checked.err());
        };
        assert_eq!(
            *missing.lock().unwrap_or_else(PoisonError::into_inner),
            rules
        );
        let (_stop, stopping) = watch::channel(false);
        let mut task = tokio::spawn((recheck.run)(Shutdown(stopping)));

        // Still denied one period later: still missing, still asking.
        tokio::time::sleep(RECHECK_PERIOD + Duration::from_secs(1)).await;
        assert!(!task.is_finished());
        assert_eq!(
            missing.lock().unwrap_or_else(PoisonError::into_inner).len(),
            1
        );

        // Granted: the next round finds nothing missing, clears `/readyz` and ends.
        granted.store(true, Ordering::SeqCst);
        let ended = tokio::time::timeout(RECHECK_PERIOD * 2, &mut task).await;
        assert!(matches!(ended, Ok(Ok(Ok(())))), "{ended:?}");
        assert!(
            missing
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_empty()
        );
    }

    #[test]
    fn questions_expand_rules_and_ask_each_once() {
        let rules = [
            Rule::new(["get", "list"])
                .groups(["core", "apps"])
                .resources(["deployments", "deployments/status"])
                .origin("a"),
            Rule::new(["get"])
                .groups(["apps"])
                .resources(["deployments"])
                .origin("b"),
            Rule::new(["get"]).urls(["/metrics"]),
            Rule::new(["get"])
                .groups([""])
                .resources(["namespaces"])
                .cluster_scoped(),
        ];
        let questions = questions(&rules, &Namespaces::parse("x,y"));
        // 2 groups x 2 resources x 2 verbs x 2 namespaces, 1 URL, 1 cluster-scoped.
        assert_eq!(questions.len(), 18);
        let get_deployments = Question {
            namespace: Some("x".into()),
            group: "apps".into(),
            resource: "deployments".into(),
            subresource: None,
            name: None,
            url: None,
            verb: "get".into(),
        };
        assert_eq!(
            questions.get(&get_deployments),
            Some(&vec![(Some("a".into()), false), (Some("b".into()), false)])
        );
        let status = Question {
            resource: "deployments".into(),
            subresource: Some("status".into()),
            group: String::new(),
            ..get_deployments
        };
        assert!(questions.contains_key(&status), "core is the group \"\"");
        assert!(
            questions
                .keys()
                .any(|q| q.resource == "namespaces" && q.namespace.is_none()),
            "cluster-scoped resources are asked cluster-wide"
        );
    }
}
