//! The review APIs a delegating authenticator and authorizer call — `authentication.k8s.io/v1`
//! `TokenReview` and `authorization.k8s.io/v1` `SubjectAccessReview` — answered by functions
//! the test provides.
//!
//! The real API server answers a `create` of these kinds from its authenticators (service
//! account tokens, OIDC, …) and authorizers (RBAC, …) and stores nothing. The fake has neither,
//! so a test says who a token is and what a user may do; the resources are served (and listed
//! by discovery) only once a responder is set. As on the real server, only `create` is
//! allowed (other verbs get 405) and the answer is the posted review with its `status` filled
//! in. Requests are counted and faults apply as for every other resource
//! (`tokenreviews.authentication.k8s.io`, `subjectaccessreviews.authorization.k8s.io`).

use std::sync::Arc;

use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec, TokenReviewStatus};
use k8s_openapi::api::authorization::v1::{
    SubjectAccessReview, SubjectAccessReviewSpec, SubjectAccessReviewStatus,
};
use serde_json::Value;

use super::api_error::ApiError;
use super::registry::ResourceType;
use super::request::Verb;
use super::server::{FakeApiServer, Shared, lock};

type Authenticate = Arc<dyn Fn(&TokenReviewSpec) -> TokenReviewStatus + Send + Sync>;
type Authorize = Arc<dyn Fn(&SubjectAccessReviewSpec) -> SubjectAccessReviewStatus + Send + Sync>;

/// The responders set on a server.
#[derive(Default)]
pub(crate) struct Reviews {
    authenticate: Option<Authenticate>,
    authorize: Option<Authorize>,
}

const TOKEN_REVIEWS: (&str, &str) = ("authentication.k8s.io", "tokenreviews");
const ACCESS_REVIEWS: (&str, &str) = ("authorization.k8s.io", "subjectaccessreviews");

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
    } else {
        return None;
    };
    Some(answer.unwrap_or_else(|| Err(ApiError::method_not_allowed(method, path))))
}
