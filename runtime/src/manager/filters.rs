//! Authentication and authorization of `/metrics` requests: controller-runtime's
//! `pkg/metrics/filters.WithAuthenticationAndAuthorization`, delegated to the API server.
//!
//! Every request must carry `Authorization: Bearer <token>`. The token is checked with a
//! `TokenReview` (`authentication.k8s.io/v1`): no token or an unauthenticated one gets `401`.
//! The user it names is then checked with a `SubjectAccessReview` (`authorization.k8s.io/v1`)
//! for the request's verb (the lower-cased method, `get`) on the non-resource URL (`/metrics`):
//! denied gets `403`, allowed requests reach the handler. A review the API server fails to
//! answer gets `401` (authentication) or `500` (authorization), as in controller-runtime.
//!
//! Results are cached like controller-runtime's delegating authenticator (tokens: 1 minute) and
//! authorizer (allowed: 5 minutes, denied: 30 seconds), so a Prometheus scrape does not cost
//! two API calls.
//!
//! The manager's service account needs `create` on `tokenreviews` and `subjectaccessreviews`
//! (Kubebuilder's `metrics_auth_role.yaml`); the scraper needs `get` on the non-resource URL
//! `/metrics` (`metrics_reader_role.yaml`).

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec, UserInfo};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::Api;
use kube::api::PostParams;

const TOKEN_TTL: Duration = Duration::from_secs(60);
const ALLOWED_TTL: Duration = Duration::from_secs(300);
const DENIED_TTL: Duration = Duration::from_secs(30);
/// Entries kept per cache before expired ones are dropped (and, if still full, all).
const CACHE_CAPACITY: usize = 1024;

/// A small TTL cache (tokens → users, access questions → decisions).
struct TtlCache<K, V> {
    entries: Mutex<HashMap<K, (Instant, V)>>,
}

impl<K: Eq + Hash, V: Clone> TtlCache<K, V> {
    fn new() -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn get(&self, key: &K) -> Option<V> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries
            .get(key)
            .filter(|(expires, _)| *expires > Instant::now())
            .map(|(_, value)| value.clone())
    }

    fn insert(&self, key: K, value: V, ttl: Duration) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.len() >= CACHE_CAPACITY {
            let now = Instant::now();
            entries.retain(|_, (expires, _)| *expires > now);
            if entries.len() >= CACHE_CAPACITY {
                entries.clear();
            }
        }
        entries.insert(key, (Instant::now() + ttl, value));
    }
}

/// Who a token belongs to, as the TokenReview said.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct User {
    name: String,
    uid: Option<String>,
    groups: Vec<String>,
    extra: Vec<(String, Vec<String>)>,
}

impl From<UserInfo> for User {
    fn from(info: UserInfo) -> Self {
        Self {
            name: info.username.unwrap_or_default(),
            uid: info.uid,
            groups: info.groups.unwrap_or_default(),
            extra: info.extra.unwrap_or_default().into_iter().collect(),
        }
    }
}

/// The delegating authenticator and authorizer guarding the metrics endpoint.
pub(crate) struct MetricsAuth {
    kube: kube::Client,
    tokens: TtlCache<String, Option<User>>,
    decisions: TtlCache<(User, String, String), bool>,
}

impl MetricsAuth {
    pub(crate) fn new(kube: kube::Client) -> Arc<Self> {
        Arc::new(Self {
            kube,
            tokens: TtlCache::new(),
            decisions: TtlCache::new(),
        })
    }

    /// The user `token` authenticates as (`None`: not authenticated).
    async fn authenticate(&self, token: &str) -> Result<Option<User>, kube::Error> {
        if let Some(user) = self.tokens.get(&token.to_string()) {
            return Ok(user);
        }
        // Built from JSON: `spec.token` is optional in some Kubernetes versions' types.
        let spec: TokenReviewSpec = serde_json::from_value(serde_json::json!({ "token": token }))
            .map_err(kube::Error::SerdeError)?;
        let review = TokenReview {
            spec,
            ..TokenReview::default()
        };
        let answered = Api::<TokenReview>::all(self.kube.clone())
            .create(&PostParams::default(), &review)
            .await?;
        let user = answered
            .status
            .filter(|s| s.authenticated == Some(true))
            .and_then(|s| s.user)
            .map(User::from);
        self.tokens
            .insert(token.to_string(), user.clone(), TOKEN_TTL);
        Ok(user)
    }

    /// Whether `user` may `verb` the non-resource URL `path`.
    async fn authorize(&self, user: &User, verb: &str, path: &str) -> Result<bool, kube::Error> {
        let key = (user.clone(), verb.to_string(), path.to_string());
        if let Some(allowed) = self.decisions.get(&key) {
            return Ok(allowed);
        }
        let extra: BTreeMap<String, Vec<String>> = user.extra.iter().cloned().collect();
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: Some(user.name.clone()),
                uid: user.uid.clone(),
                groups: Some(user.groups.clone()).filter(|g| !g.is_empty()),
                extra: Some(extra).filter(|e| !e.is_empty()),
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some(path.to_string()),
                    verb: Some(verb.to_string()),
                }),
                ..SubjectAccessReviewSpec::default()
            },
            ..SubjectAccessReview::default()
        };
        let answered = Api::<SubjectAccessReview>::all(self.kube.clone())
            .create(&PostParams::default(), &review)
            .await?;
        let allowed = answered
            .status
            .is_some_and(|s| s.allowed && s.denied != Some(true));
        let ttl = if allowed { ALLOWED_TTL } else { DENIED_TTL };
        self.decisions.insert(key, allowed, ttl);
        Ok(allowed)
    }
}

/// The bearer token of a request, if any.
fn bearer(request: &Request) -> Option<&str> {
    let value = request
        .headers()
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// axum middleware: authenticate, authorize, then run the handler.
pub(crate) async fn authenticate_and_authorize(
    State(auth): State<Arc<MetricsAuth>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(token) = bearer(&request) else {
        tracing::debug!("metrics request without a bearer token");
        return (StatusCode::UNAUTHORIZED, "Unauthorized").into_response();
    };
    let user = match auth.authenticate(token).await {
        Ok(Some(user)) => user,
        Ok(None) => {
            tracing::debug!("metrics request with an unauthenticated token");
            return (StatusCode::UNAUTHORIZED, "Unauthorized").into_response();
        }
        Err(error) => {
            tracing::error!(%error, "Authentication failed");
            return (StatusCode::UNAUTHORIZED, "Authentication failed").into_response();
        }
    };
    let verb = request.method().as_str().to_ascii_lowercase();
    let path = request.uri().path().to_string();
    match auth.authorize(&user, &verb, &path).await {
        Ok(true) => next.run(request).await,
        Ok(false) => {
            tracing::debug!(user = %user.name, %verb, %path, "metrics request denied");
            let message = format!("Authorization denied for user {}", user.name);
            (StatusCode::FORBIDDEN, message).into_response()
        }
        Err(error) => {
            let message = format!("Authorization for user {} failed", user.name);
            tracing::error!(user = %user.name, %error, "{message}");
            (StatusCode::INTERNAL_SERVER_ERROR, message).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(authorization: Option<&str>) -> Request {
        let mut builder = http::Request::builder().uri("/metrics");
        if let Some(value) = authorization {
            builder = builder.header(header::AUTHORIZATION, value);
        }
        builder
            .body(axum::body::Body::empty())
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn bearer_tokens() {
        assert_eq!(bearer(&request(Some("Bearer abc"))), Some("abc"));
        assert_eq!(bearer(&request(Some("bearer  abc "))), Some("abc"));
        assert_eq!(bearer(&request(Some("Basic abc"))), None);
        assert_eq!(bearer(&request(Some("Bearer "))), None);
        assert_eq!(bearer(&request(None)), None);
    }

    #[test]
    fn cache_expires() {
        let cache = TtlCache::new();
        cache.insert("a", 1, Duration::from_secs(60));
        cache.insert("b", 2, Duration::ZERO);
        assert_eq!(cache.get(&"a"), Some(1));
        assert_eq!(cache.get(&"b"), None);
    }
}
