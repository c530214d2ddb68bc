//! The review APIs — `authentication.k8s.io/v1` `TokenReview`, `authorization.k8s.io/v1`
//! `SubjectAccessReview` (what a delegating authenticator and authorizer call) and
//! `SelfSubjectAccessReview` (what a client asks about itself) — answered by functions the test
//! provides.
//!
//! The real API server answers a `create` of these kinds from its authenticators (service
//! account tokens, OIDC, …) and authorizers (RBAC, …) and stores nothing. The fake has neither,
//! so a test says who a token is and what a user may do. `TokenReview` and
//! `SubjectAccessReview` are served (and listed by discovery) only once a responder is set;
//! `SelfSubjectAccessReview` always is, as on every kube-apiserver, and allows everything until
//! the test says otherwise ([`crate::FakeApiServer::answer_self_subject_access_reviews`]). As on the
//! real server, only `create` is allowed (other verbs get 405) and the answer is the posted
//! review with its `status` filled in. Requests are counted and faults apply as for every other
//! resource (`tokenreviews.authentication.k8s.io`, `subjectaccessreviews.authorization.k8s.io`,
//! `selfsubjectaccessreviews.authorization.k8s.io`).

use k8s_openapi::api::authentication::v1::TokenReview;
use k8s_openapi::api::authorization::v1::{
    SelfSubjectAccessReview, SubjectAccessReview, SubjectAccessReviewStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

use crate::handlers::request::Verb;
use crate::handlers::shared::{Shared, lock};
use crate::machinery::api_error::{ApiError, Subject};
use crate::machinery::registry::ResourceType;
use kbr_runtime::field_error::{FieldError, FieldErrorType};

pub(crate) const TOKEN_REVIEWS: (&str, &str) = ("authentication.k8s.io", "tokenreviews");
pub(crate) const ACCESS_REVIEWS: (&str, &str) = ("authorization.k8s.io", "subjectaccessreviews");
pub(crate) const SELF_ACCESS_REVIEWS: (&str, &str) =
    ("authorization.k8s.io", "selfsubjectaccessreviews");

/// `ValidateSelfSubjectAccessReview` (`pkg/apis/authorization/validation/validation.go`):
/// exactly one of `resourceAttributes` and `nonResourceAttributes`, and no metadata. As on
/// kube-apiserver, the message names no kind (the decoded review's TypeMeta is empty), and the
/// invalid values are written as apimachinery prints them: `null`, or the internal type's
/// JSON (Go field names: `{"Path":..,"Verb":..}`).
fn validate_self_review(review: &SelfSubjectAccessReview) -> Result<(), ApiError> {
    let spec = &review.spec;
    let mut causes = Vec::new();
    if let (Some(_), Some(url)) = (&spec.resource_attributes, &spec.non_resource_attributes) {
        let value = serde_json::json!({
            "Path": url.path.clone().unwrap_or_default(),
            "Verb": url.verb.clone().unwrap_or_default(),
        });
        causes.push(FieldError::new(
            FieldErrorType::Invalid,
            "spec.nonResourceAttributes",
            Some(&value),
            "cannot be specified in combination with resourceAttributes",
        ));
    }
    if spec.resource_attributes.is_none() && spec.non_resource_attributes.is_none() {
        causes.push(FieldError::new(
            FieldErrorType::Invalid,
            "spec.resourceAttributes",
            Some(&Value::Null),
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ));
    }
    let metadata = ObjectMeta {
        managed_fields: None,
        ..review.metadata.clone()
    };
    if metadata != ObjectMeta::default() {
        let value = serde_json::to_value(&review.metadata).unwrap_or_default();
        causes.push(FieldError::new(
            FieldErrorType::Invalid,
            "metadata",
            Some(&value),
            "must be empty",
        ));
    }
    if causes.is_empty() {
        return Ok(());
    }
    let (group, plural) = SELF_ACCESS_REVIEWS;
    let subject = Subject {
        group,
        plural,
        kind: "",
    };
    Err(ApiError::invalid(
        &subject,
        "",
        crate::rules::crd::schemas::causes(causes),
    ))
}

fn decode<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding the review: {e}")))
}

fn encode<T: serde::Serialize>(review: &T) -> Result<Value, ApiError> {
    serde_json::to_value(review).map_err(|e| ApiError::bad_request(e.to_string()))
}

/// The answer to a request on a review resource with a responder (`None` for every other
/// request): the review with its status (to be sent as `201 Created`), or an error.
pub(crate) fn answer(
    shared: &Shared,
    rt: &ResourceType,
    verb: Verb,
    method: &str,
    path: &str,
    body: &[u8],
) -> Option<Result<Value, ApiError>> {
    let resource = (rt.group.as_str(), rt.plural.as_str());
    let reviews = lock(&shared.reviews);
    let answer = if resource == TOKEN_REVIEWS {
        let authenticate = reviews.authenticate.clone()?;
        drop(reviews);
        (verb == Verb::Create).then(|| {
            let mut review: TokenReview = decode(body)?;
            review.status = Some(authenticate(&review.spec));
            encode(&review)
        })
    } else if resource == ACCESS_REVIEWS {
        let authorize = reviews.authorize.clone()?;
        drop(reviews);
        (verb == Verb::Create).then(|| {
            let mut review: SubjectAccessReview = decode(body)?;
            review.status = Some(authorize(&review.spec));
            encode(&review)
        })
    } else if resource == SELF_ACCESS_REVIEWS {
        // kube-apiserver's `pkg/registry/authorization/selfsubjectaccessreview/rest.go`:
        // validate, then ask the authorizers about the request's own user.
        let authorize = reviews.authorize_self.clone();
        drop(reviews);
        (verb == Verb::Create).then(|| {
            let mut review: SelfSubjectAccessReview = decode(body)?;
            validate_self_review(&review)?;
            review.status = Some(match authorize {
                Some(authorize) => authorize(&review.spec),
                None => SubjectAccessReviewStatus {
                    allowed: true,
                    ..SubjectAccessReviewStatus::default()
                },
            });
            encode(&review)
        })
    } else {
        return None;
    };
    Some(answer.unwrap_or_else(|| Err(ApiError::method_not_allowed(method, path))))
}
