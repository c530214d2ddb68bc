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
//! the test says otherwise ([`FakeApiServer::answer_self_subject_access_reviews`]). As on the
//! real server, only `create` is allowed (other verbs get 405) and the answer is the posted
//! review with its `status` filled in. Requests are counted and faults apply as for every other
//! resource (`tokenreviews.authentication.k8s.io`, `subjectaccessreviews.authorization.k8s.io`,
//! `selfsubjectaccessreviews.authorization.k8s.io`).

use std::sync::Arc;

use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec, TokenReviewStatus};
use k8s_openapi::api::authorization::v1::{
    SelfSubjectAccessReview, SelfSubjectAccessReviewSpec, SubjectAccessReview,
    SubjectAccessReviewSpec, SubjectAccessReviewStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

use super::api_error::{ApiError, Subject};
use super::registry::ResourceType;
use super::request::Verb;
use super::server::{FakeApiServer, Shared, lock};
use crate::crd::{FieldError, FieldErrorKind};

type Authenticate = Arc<dyn Fn(&TokenReviewSpec) -> TokenReviewStatus + Send + Sync>;
type Authorize = Arc<dyn Fn(&SubjectAccessReviewSpec) -> SubjectAccessReviewStatus + Send + Sync>;
type AuthorizeSelf =
    Arc<dyn Fn(&SelfSubjectAccessReviewSpec) -> SubjectAccessReviewStatus + Send + Sync>;

/// The responders set on a server.
#[derive(Default)]
pub(crate) struct Reviews {
    authenticate: Option<Authenticate>,
    authorize: Option<Authorize>,
    /// `None`: every `SelfSubjectAccessReview` is allowed.
    authorize_self: Option<AuthorizeSelf>,
}

const TOKEN_REVIEWS: (&str, &str) = ("authentication.k8s.io", "tokenreviews");
const ACCESS_REVIEWS: (&str, &str) = ("authorization.k8s.io", "subjectaccessreviews");
const SELF_ACCESS_REVIEWS: (&str, &str) = ("authorization.k8s.io", "selfsubjectaccessreviews");

impl FakeApiServer {
    /// Serves `authentication.k8s.io/v1` `TokenReview` creates: `authenticate` gets the review's
    /// spec (the bearer token, audiences) and returns its status (`authenticated`, `user`, …),
    /// like kube-apiserver's authenticators. Replaces an earlier responder. (`spec.token` is a
    /// `String` from Kubernetes 1.36's types on, an `Option<String>` before.)
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), kube::Error> {
    /// use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec, TokenReviewStatus, UserInfo};
    /// use kbr_runtime::testing::FakeApiServer;
    ///
    /// let server = FakeApiServer::new();
    /// server.answer_token_reviews(|spec| TokenReviewStatus {
    ///     authenticated: Some(spec.token == "secret"),
    ///     user: Some(UserInfo { username: Some("alice".into()), ..UserInfo::default() }),
    ///     ..TokenReviewStatus::default()
    /// });
    /// let reviews: kube::Api<TokenReview> = kube::Api::all(server.kube_client());
    /// let review = TokenReview {
    ///     spec: TokenReviewSpec { token: "secret".into(), ..TokenReviewSpec::default() },
    ///     ..TokenReview::default()
    /// };
    /// let answered = reviews.create(&Default::default(), &review).await?;
    /// assert_eq!(answered.status.and_then(|s| s.authenticated), Some(true));
    /// # Ok(()) }
    /// ```
    pub fn answer_token_reviews(
        &self,
        authenticate: impl Fn(&TokenReviewSpec) -> TokenReviewStatus + Send + Sync + 'static,
    ) {
        lock(&self.shared.reviews).authenticate = Some(Arc::new(authenticate));
        let (group, plural) = TOKEN_REVIEWS;
        self.register_type(ResourceType::new(group, "v1", "TokenReview", plural).cluster_scoped());
    }

    /// Serves `authorization.k8s.io/v1` `SubjectAccessReview` creates: `authorize` gets the
    /// review's spec (user, groups, resource or non-resource attributes) and returns its status
    /// (`allowed`, `denied`, `reason`), like kube-apiserver's authorizers.
    ///
    /// ```
    /// use k8s_openapi::api::authorization::v1::SubjectAccessReviewStatus;
    /// use kbr_runtime::testing::FakeApiServer;
    ///
    /// let server = FakeApiServer::new();
    /// server.answer_subject_access_reviews(|spec| SubjectAccessReviewStatus {
    ///     allowed: spec.user.as_deref() == Some("alice"),
    ///     ..SubjectAccessReviewStatus::default()
    /// });
    /// ```
    pub fn answer_subject_access_reviews(
        &self,
        authorize: impl Fn(&SubjectAccessReviewSpec) -> SubjectAccessReviewStatus
        + Send
        + Sync
        + 'static,
    ) {
        lock(&self.shared.reviews).authorize = Some(Arc::new(authorize));
        let (group, plural) = ACCESS_REVIEWS;
        self.register_type(
            ResourceType::new(group, "v1", "SubjectAccessReview", plural).cluster_scoped(),
        );
    }
}

impl FakeApiServer {
    /// Answers `authorization.k8s.io/v1` `SelfSubjectAccessReview` creates (always served) with
    /// `authorize`: it gets the review's spec (the resource or non-resource attributes the
    /// client asks about for itself) and returns its status (`allowed`, `denied`, `reason`),
    /// like kube-apiserver's authorizers for the request's user. Until this is called, every
    /// review is allowed. Replaces an earlier responder.
    ///
    /// ```
    /// use k8s_openapi::api::authorization::v1::SubjectAccessReviewStatus;
    /// use kbr_runtime::testing::FakeApiServer;
    ///
    /// // This client may do anything but create Deployments.
    /// let server = FakeApiServer::new();
    /// server.answer_self_subject_access_reviews(|spec| {
    ///     let attributes = spec.resource_attributes.as_ref();
    ///     let denied = attributes.is_some_and(|a| {
    ///         a.resource.as_deref() == Some("deployments") && a.verb.as_deref() == Some("create")
    ///     });
    ///     SubjectAccessReviewStatus { allowed: !denied, ..SubjectAccessReviewStatus::default() }
    /// });
    /// ```
    pub fn answer_self_subject_access_reviews(
        &self,
        authorize: impl Fn(&SelfSubjectAccessReviewSpec) -> SubjectAccessReviewStatus
        + Send
        + Sync
        + 'static,
    ) {
        lock(&self.shared.reviews).authorize_self = Some(Arc::new(authorize));
    }
}

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
            FieldErrorKind::Invalid,
            "spec.nonResourceAttributes",
            Some(&value),
            "cannot be specified in combination with resourceAttributes",
        ));
    }
    if spec.resource_attributes.is_none() && spec.non_resource_attributes.is_none() {
        causes.push(FieldError::new(
            FieldErrorKind::Invalid,
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
            FieldErrorKind::Invalid,
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
        super::schemas::causes(causes),
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
