//! `authorization.k8s.io/v1` `SelfSubjectAccessReview`: what a client may do, asked about
//! itself — kube-apiserver's `pkg/registry/authorization/selfsubjectaccessreview/rest.go`
//! (create only; the posted review comes back with its `status`, nothing is stored) and its
//! validation, `ValidateSelfSubjectAccessReview` in
//! `pkg/apis/authorization/validation/validation.go` (exactly one of `resourceAttributes` and
//! `nonResourceAttributes`, empty metadata). The suite's client may do anything (envtest's
//! admin, the fake's default), so every question is allowed.

use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use kube::api::{Api, ListParams, PostParams};

use super::{Ctx, TestResult, api_error, code_and_reason};

fn review(spec: SelfSubjectAccessReviewSpec) -> SelfSubjectAccessReview {
    SelfSubjectAccessReview {
        spec,
        ..SelfSubjectAccessReview::default()
    }
}

/// The field paths of an `Invalid` Status's causes.
fn cause_fields(status: &kube::core::Status) -> Vec<String> {
    status
        .details
        .as_ref()
        .map(|details| {
            details
                .causes
                .iter()
                .map(|cause| cause.field.clone())
                .collect()
        })
        .unwrap_or_default()
}

pub async fn self_subject_access_reviews(ctx: &Ctx) -> TestResult {
    let reviews: Api<SelfSubjectAccessReview> = Api::all(ctx.client.clone());
    let attributes = ResourceAttributes {
        namespace: Some(ctx.ns.clone()),
        verb: Some("create".into()),
        group: Some("apps".into()),
        resource: Some("deployments".into()),
        ..ResourceAttributes::default()
    };
    let answered = reviews
        .create(
            &PostParams::default(),
            &review(SelfSubjectAccessReviewSpec {
                resource_attributes: Some(attributes.clone()),
                ..SelfSubjectAccessReviewSpec::default()
            }),
        )
        .await?;
    assert_eq!(answered.spec.resource_attributes, Some(attributes));
    let status = answered.status.ok_or("the answer has no status")?;
    assert!(status.allowed, "{status:?}");
    assert_eq!(status.denied, None, "{status:?}");
    assert_eq!(answered.metadata.name, None, "nothing is stored");

    let url = NonResourceAttributes {
        path: Some("/healthz".into()),
        verb: Some("get".into()),
    };
    let answered = reviews
        .create(
            &PostParams::default(),
            &review(SelfSubjectAccessReviewSpec {
                non_resource_attributes: Some(url.clone()),
                ..SelfSubjectAccessReviewSpec::default()
            }),
        )
        .await?;
    assert!(answered.status.is_some_and(|s| s.allowed));

    // Neither attributes, both, or metadata: 422 naming the field.
    let neither = api_error(
        reviews
            .create(
                &PostParams::default(),
                &review(SelfSubjectAccessReviewSpec::default()),
            )
            .await,
    )?;
    assert_eq!(code_and_reason(&neither), (422, "Invalid"));
    assert_eq!(cause_fields(&neither), ["spec.resourceAttributes"]);
    // The registry names no kind: the decoded review's TypeMeta is empty.
    assert_eq!(
        neither.message,
        ".authorization.k8s.io \"\" is invalid: spec.resourceAttributes: Invalid value: null: \
         exactly one of nonResourceAttributes or resourceAttributes must be specified"
    );
    let both = api_error(
        reviews
            .create(
                &PostParams::default(),
                &review(SelfSubjectAccessReviewSpec {
                    resource_attributes: Some(ResourceAttributes::default()),
                    non_resource_attributes: Some(url),
                }),
            )
            .await,
    )?;
    assert_eq!(code_and_reason(&both), (422, "Invalid"));
    assert_eq!(cause_fields(&both), ["spec.nonResourceAttributes"]);
    // The value is the internal type's JSON (Go field names, no tags).
    assert_eq!(
        both.message,
        ".authorization.k8s.io \"\" is invalid: spec.nonResourceAttributes: Invalid value: \
         {\"Path\":\"/healthz\",\"Verb\":\"get\"}: cannot be specified in combination with \
         resourceAttributes"
    );
    let mut named = review(SelfSubjectAccessReviewSpec {
        non_resource_attributes: Some(NonResourceAttributes::default()),
        ..SelfSubjectAccessReviewSpec::default()
    });
    named.metadata.name = Some("mine".into());
    let named = api_error(reviews.create(&PostParams::default(), &named).await)?;
    assert_eq!(code_and_reason(&named), (422, "Invalid"));
    assert_eq!(cause_fields(&named), ["metadata"]);
    // The value is the metadata as stored would be, managedFields and all: only its ends are
    // the same on every server.
    let prefix =
        ".authorization.k8s.io \"\" is invalid: metadata: Invalid value: {\"name\":\"mine\"";
    assert!(named.message.starts_with(prefix), "{}", named.message);
    assert!(
        named.message.ends_with("}: must be empty"),
        "{}",
        named.message
    );

    // Only create: a list is 405.
    let listed = api_error(reviews.list(&ListParams::default()).await)?;
    assert_eq!(code_and_reason(&listed), (405, "MethodNotAllowed"));
    Ok(())
}
