//! Typed admission: [`Defaulter`] and [`Validator`] (controller-runtime's
//! `admission.Defaulter[T]` / `admission.Validator[T]`, formerly `CustomDefaulter` /
//! `CustomValidator`) and the handlers that turn them into `AdmissionResponse`s.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

use k8s_openapi::api::authentication::v1::UserInfo;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, Operation};
use serde_json::Value;

use super::denial::AdmissionError;
use super::patch;
use crate::client::Object;
use kbr_crd::resource::ResourceInfo;

/// Warnings returned to the client with an allowed (or denied) request: controller-runtime's
/// `admission.Warnings`. Keep each under 120 characters.
pub type Warnings = Vec<String>;

/// The admission request an object arrived with — what controller-runtime code reads with
/// `admission.RequestFromContext(ctx)`.
///
/// ```
/// use kbr_runtime::webhook::{AdmissionContext, Operation};
/// let mut ctx = AdmissionContext::new(Operation::Create);
/// ctx.namespace = Some("default".into());
/// assert!(!ctx.dry_run);
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AdmissionContext {
    /// The request's UID (correlates logs with the API server's).
    pub uid: String,
    /// CREATE, UPDATE, DELETE or CONNECT.
    pub operation: Operation,
    /// The object's name; empty on CREATE with `generateName`.
    pub name: String,
    /// The namespace of the request (authoritative even when the object's
    /// `metadata.namespace` is empty); `None` for cluster-scoped kinds.
    pub namespace: Option<String>,
    /// The subresource, e.g. `status`, if any.
    pub sub_resource: Option<String>,
    /// Who sent the request.
    pub user_info: UserInfo,
    /// Whether the request is a dry run: webhooks must not have side effects then.
    pub dry_run: bool,
}

impl AdmissionContext {
    /// A context for `operation` with everything else empty (for tests).
    pub fn new(operation: Operation) -> Self {
        Self {
            uid: String::new(),
            operation,
            name: String::new(),
            namespace: None,
            sub_resource: None,
            user_info: UserInfo::default(),
            dry_run: false,
        }
    }

    pub(crate) fn from_request(request: &AdmissionRequest<DynamicObject>) -> Self {
        Self {
            uid: request.uid.clone(),
            operation: request.operation.clone(),
            name: request.name.clone(),
            namespace: request.namespace.clone(),
            sub_resource: request.sub_resource.clone(),
            user_info: request.user_info.clone(),
            dry_run: request.dry_run,
        }
    }
}

/// Sets defaults on objects of kind `K` before they are stored: controller-runtime's
/// `admission.Defaulter[T]` (`CustomDefaulter`), served as a mutating webhook on
/// `/mutate-<group-with-dashes>-<version>-<kind>` for CREATE and UPDATE.
///
/// Mutate `obj` in place; the runtime computes the RFC 6902 JSON patch between what the API
/// server sent and the result. Fields the Rust type does not know are never removed. Return an
/// [`AdmissionError`] to refuse the request instead.
///
/// ```
/// use kbr_runtime::webhook::{AdmissionContext, AdmissionError, Defaulter};
/// # use kbr_runtime::CustomResource;
/// # #[derive(CustomResource, Clone, Debug, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
/// # #[kbr(group = "toys.example.com", version = "v1", kind = "Widget", plural = "widgets", namespaced)]
/// # pub struct WidgetSpec { #[serde(default)] pub size: i32 }
///
/// struct WidgetDefaulter;
///
/// impl Defaulter<Widget> for WidgetDefaulter {
///     async fn set_defaults(&self, _ctx: &AdmissionContext, widget: &mut Widget) -> Result<(), AdmissionError> {
///         if widget.spec.size == 0 {
///             widget.spec.size = 1;
///         }
///         Ok(())
///     }
/// }
/// ```
pub trait Defaulter<K>: Send + Sync + 'static {
    /// Sets the defaults of `obj` (`CustomDefaulter.Default(ctx, obj) error`; named after
    /// apimachinery's `SetDefaults_<Kind>` functions so it never shadows `Default::default`).
    fn set_defaults(
        &self,
        ctx: &AdmissionContext,
        obj: &mut K,
    ) -> impl Future<Output = Result<(), AdmissionError>> + Send;
}

/// Accepts or refuses objects of kind `K`: controller-runtime's `admission.Validator[T]`
/// (`CustomValidator`), served as a validating webhook on
/// `/validate-<group-with-dashes>-<version>-<kind>` for CREATE and UPDATE, and DELETE when
/// [`VALIDATE_DELETE`](Self::VALIDATE_DELETE) is true.
///
/// Return `Ok(warnings)` to admit (warnings are shown to the client, e.g. by kubectl) or an
/// [`AdmissionError`] naming the offending fields to refuse. `validate_delete` is optional: it
/// admits by default.
///
/// ```
/// use kbr_runtime::webhook::{AdmissionContext, AdmissionError, FieldError, Validator, Warnings};
/// # use kbr_runtime::CustomResource;
/// # #[derive(CustomResource, Clone, Debug, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
/// # #[kbr(group = "toys.example.com", version = "v1", kind = "Widget", plural = "widgets", namespaced)]
/// # pub struct WidgetSpec { #[serde(default)] pub size: i32 }
///
/// struct WidgetValidator;
///
/// impl Validator<Widget> for WidgetValidator {
///     async fn validate_create(&self, _ctx: &AdmissionContext, w: &Widget) -> Result<Warnings, AdmissionError> {
///         if w.spec.size < 0 {
///             return Err(FieldError::invalid("spec.size", w.spec.size, "must not be negative").into());
///         }
///         Ok(Vec::new())
///     }
///     async fn validate_update(&self, ctx: &AdmissionContext, _old: &Widget, new: &Widget) -> Result<Warnings, AdmissionError> {
///         self.validate_create(ctx, new).await
///     }
/// }
///
/// // `validate_delete` was left out: it admits every deletion.
/// let ctx = AdmissionContext::new(kbr_runtime::webhook::Operation::Delete);
/// let widget = Widget::new("small", WidgetSpec { size: -1 });
/// let deleted = futures::executor::block_on(WidgetValidator.validate_delete(&ctx, &widget));
/// assert_eq!(deleted.ok(), Some(Warnings::new()));
/// ```
pub trait Validator<K>: Send + Sync + 'static {
    /// Whether the API server should also send DELETE requests (the webhook's rules then list
    /// `DELETE`; Kubebuilder's marker `verbs=create;update;delete`). Default `false`.
    const VALIDATE_DELETE: bool = false;

    /// Validates a new object (`ValidateCreate`).
    fn validate_create(
        &self,
        ctx: &AdmissionContext,
        obj: &K,
    ) -> impl Future<Output = Result<Warnings, AdmissionError>> + Send;

    /// Validates a change from `old` to `new` (`ValidateUpdate`).
    fn validate_update(
        &self,
        ctx: &AdmissionContext,
        old: &K,
        new: &K,
    ) -> impl Future<Output = Result<Warnings, AdmissionError>> + Send;

    /// Validates the deletion of `obj` (`ValidateDelete`); only called when
    /// [`VALIDATE_DELETE`](Self::VALIDATE_DELETE) is true. The default admits every deletion
    /// without warnings, so validators that leave `VALIDATE_DELETE` off need not write it.
    fn validate_delete(
        &self,
        ctx: &AdmissionContext,
        obj: &K,
    ) -> impl Future<Output = Result<Warnings, AdmissionError>> + Send {
        let _ = (ctx, obj);
        std::future::ready(Ok(Warnings::new()))
    }
}

pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// An admission request whose `object` / `oldObject` were kept as raw JSON, so a body that
/// does not decode as the kind is answered with a denial (carrying the request's UID) rather
/// than an HTTP error.
pub(crate) struct RawAdmission {
    pub(crate) request: AdmissionRequest<DynamicObject>,
    pub(crate) object: Option<Value>,
    pub(crate) old_object: Option<Value>,
}

/// A registered admission webhook, type-erased.
pub(crate) trait AdmissionHandler: Send + Sync + 'static {
    fn handle<'a>(&'a self, review: &'a RawAdmission) -> BoxFuture<'a, AdmissionResponse>;
}

/// A denial with an HTTP-like `code` and `reason` but no field details (bad requests).
pub(crate) fn deny(
    request: &AdmissionRequest<DynamicObject>,
    code: u16,
    reason: &str,
    message: String,
) -> AdmissionResponse {
    let mut response = AdmissionResponse::from(request);
    response.allowed = false;
    response.result = kube::core::Status::failure(&message, reason).with_code(code);
    response
}

fn deny_with(
    info: &ResourceInfo,
    request: &AdmissionRequest<DynamicObject>,
    error: &AdmissionError,
) -> AdmissionResponse {
    let mut response = AdmissionResponse::from(request);
    response.allowed = false;
    response.result = error.to_status(info.group, info.kind, &request.name);
    response
}

/// Checks the request is about `info`'s kind and decodes `raw` (the `what` object:
/// "object"/"oldObject") as `K`.
fn decode<K: Object>(
    info: &ResourceInfo,
    request: &AdmissionRequest<DynamicObject>,
    raw: Option<&Value>,
    what: &str,
) -> Result<K, Box<AdmissionResponse>> {
    let gvk = &request.kind;
    if gvk.group != info.group || gvk.version != info.version || gvk.kind != info.kind {
        let message = format!(
            "this webhook serves {}/{}, Kind={}; the request is for {}/{}, Kind={}",
            info.group, info.version, info.kind, gvk.group, gvk.version, gvk.kind
        );
        return Err(Box::new(deny(request, 400, "BadRequest", message)));
    }
    let Some(raw) = raw.filter(|raw| !raw.is_null()) else {
        let message = format!(
            "the {} request has no {what}",
            operation_name(&request.operation)
        );
        return Err(Box::new(deny(request, 400, "BadRequest", message)));
    };
    K::deserialize(raw).map_err(|error| {
        let message = format!(
            "cannot decode the {what} as {}/{}, Kind={}: {error}",
            info.group, info.version, info.kind
        );
        Box::new(deny(request, 400, "BadRequest", message))
    })
}

fn operation_name(operation: &Operation) -> &'static str {
    match operation {
        Operation::Create => "CREATE",
        Operation::Update => "UPDATE",
        Operation::Delete => "DELETE",
        Operation::Connect => "CONNECT",
    }
}

/// Serves a [`Defaulter`]: controller-runtime's `defaulterForType` handler.
pub(crate) struct Mutating<K, D> {
    defaulter: D,
    /// The kind served ([`ResourceInfo::of`] `K`).
    info: ResourceInfo,
    kind: PhantomData<fn() -> K>,
}

impl<K, D> Mutating<K, D> {
    pub(crate) fn new(defaulter: D, info: ResourceInfo) -> Self {
        Self {
            defaulter,
            info,
            kind: PhantomData,
        }
    }
}

impl<K: Object, D: Defaulter<K>> Mutating<K, D> {
    async fn mutate(&self, review: &RawAdmission) -> AdmissionResponse {
        let request = &review.request;
        // Like controller-runtime: defaulting is skipped for DELETE (and CONNECT).
        if !matches!(request.operation, Operation::Create | Operation::Update) {
            return AdmissionResponse::from(request);
        }
        let original: K = match decode(&self.info, request, review.object.as_ref(), "object") {
            Ok(obj) => obj,
            Err(denied) => return *denied,
        };
        let mut obj = original.clone();
        let ctx = AdmissionContext::from_request(request);
        if let Err(error) = self.defaulter.set_defaults(&ctx, &mut obj).await {
            tracing::info!(uid = %request.uid, kind = self.info.kind, name = %request.name, %error, "defaulting refused the object");
            return deny_with(&self.info, request, &error);
        }
        let raw = review.object.as_ref().unwrap_or(&Value::Null);
        match patch::defaulting_patch(raw, &original, &obj) {
            Ok(ops) if ops.0.is_empty() => AdmissionResponse::from(request),
            Ok(ops) => match AdmissionResponse::from(request).with_patch(ops) {
                Ok(response) => response,
                Err(error) => deny(request, 500, "InternalError", error.to_string()),
            },
            Err(error) => deny(
                request,
                500,
                "InternalError",
                format!("cannot serialize the defaulted object: {error}"),
            ),
        }
    }
}

impl<K: Object, D: Defaulter<K>> AdmissionHandler for Mutating<K, D> {
    fn handle<'a>(&'a self, review: &'a RawAdmission) -> BoxFuture<'a, AdmissionResponse> {
        Box::pin(self.mutate(review))
    }
}

/// Serves a [`Validator`]: controller-runtime's `validatorForType` handler.
pub(crate) struct Validating<K, V> {
    validator: V,
    /// The kind served ([`ResourceInfo::of`] `K`).
    info: ResourceInfo,
    kind: PhantomData<fn() -> K>,
}

impl<K, V> Validating<K, V> {
    pub(crate) fn new(validator: V, info: ResourceInfo) -> Self {
        Self {
            validator,
            info,
            kind: PhantomData,
        }
    }
}

impl<K: Object, V: Validator<K>> Validating<K, V> {
    async fn validate(&self, review: &RawAdmission) -> AdmissionResponse {
        let request = &review.request;
        let ctx = AdmissionContext::from_request(request);
        let outcome = match request.operation {
            Operation::Create => {
                match decode::<K>(&self.info, request, review.object.as_ref(), "object") {
                    Ok(obj) => self.validator.validate_create(&ctx, &obj).await,
                    Err(denied) => return *denied,
                }
            }
            Operation::Update => {
                let new = match decode::<K>(&self.info, request, review.object.as_ref(), "object") {
                    Ok(obj) => obj,
                    Err(denied) => return *denied,
                };
                match decode::<K>(&self.info, request, review.old_object.as_ref(), "oldObject") {
                    Ok(old) => self.validator.validate_update(&ctx, &old, &new).await,
                    Err(denied) => return *denied,
                }
            }
            // The object being deleted arrives as `oldObject`.
            Operation::Delete if V::VALIDATE_DELETE => {
                match decode::<K>(&self.info, request, review.old_object.as_ref(), "oldObject") {
                    Ok(old) => self.validator.validate_delete(&ctx, &old).await,
                    Err(denied) => return *denied,
                }
            }
            Operation::Delete | Operation::Connect => Ok(Vec::new()),
        };
        match outcome {
            Ok(warnings) => {
                let mut response = AdmissionResponse::from(request);
                if !warnings.is_empty() {
                    response.warnings = Some(warnings);
                }
                response
            }
            Err(error) => {
                tracing::info!(uid = %request.uid, kind = self.info.kind, name = %request.name, %error, "validation refused the object");
                deny_with(&self.info, request, &error)
            }
        }
    }
}

impl<K: Object, V: Validator<K>> AdmissionHandler for Validating<K, V> {
    fn handle<'a>(&'a self, review: &'a RawAdmission) -> BoxFuture<'a, AdmissionResponse> {
        Box::pin(self.validate(review))
    }
}
