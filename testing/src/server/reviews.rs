//! The test's responders for the review APIs ([`crate::handlers::reviews`]): who a token is and
//! what a user may do.

use std::sync::Arc;

use k8s_openapi::api::authentication::v1::{TokenReviewSpec, TokenReviewStatus};
use k8s_openapi::api::authorization::v1::{
    SelfSubjectAccessReviewSpec, SubjectAccessReviewSpec, SubjectAccessReviewStatus,
};

use super::FakeApiServer;
use crate::handlers::reviews::{ACCESS_REVIEWS, TOKEN_REVIEWS};
use crate::handlers::shared::lock;
use crate::machinery::registry::ResourceType;

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
    /// use kbr_testing::FakeApiServer;
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
    /// use kbr_testing::FakeApiServer;
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
    /// use kbr_testing::FakeApiServer;
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
