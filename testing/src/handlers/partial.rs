//! Metadata-only responses: the `as=PartialObjectMetadata` / `as=PartialObjectMetadataList`
//! conversions of the `Accept` header, as kube-apiserver applies them to what storage returns
//! (apiserver `pkg/endpoints/handlers/response.go`: `doTransformObject`,
//! `asPartialObjectMetadata`, `asPartialObjectMetadataList`, and `watchEmbeddedEncoder` for
//! watch events).
//!
//! - A single object (get, create, update, patch, delete) asked for as `PartialObjectMetadata` is
//!   sent as metadata only; asked for as `PartialObjectMetadataList`, the request fails with 406
//!   NotAcceptable (not a list). Like the apiserver, the transformation runs on the response,
//!   after a write took effect. A `Status` (an immediate delete) is never transformed.
//! - A list asked for as `PartialObjectMetadataList` is a `PartialObjectMetadataList`; asked for
//!   as `PartialObjectMetadata`, 406 NotAcceptable (a list).
//! - A watch converts each event's object to `PartialObjectMetadata` when asked for it; asked for
//!   `PartialObjectMetadataList`, the apiserver's watch encoder fails to convert the object, then
//!   fails to encode it unconverted with the `meta.k8s.io` encoder it picked, and ends the
//!   stream (200, then nothing) at the first object event ([`crate::handlers::watch`]).

use crate::machinery::api_error::ApiError;
use crate::machinery::registry::ResourceType;

/// The conversion an `Accept` header asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AsPartial {
    /// No `as=` conversion: the full objects.
    No,
    /// `as=PartialObjectMetadata`.
    Object,
    /// `as=PartialObjectMetadataList`.
    List,
}

impl AsPartial {
    /// Reads the `as` parameter of the media types in `accept` (`application/json;as=…;g=…;v=…`,
    /// several media types separated by commas; the first with an `as` parameter counts).
    pub(crate) fn from_accept(accept: &str) -> Self {
        accept
            .split(',')
            .flat_map(|media_type| media_type.split(';').skip(1))
            .filter_map(|param| param.trim().strip_prefix("as="))
            .map(|target| match target.trim() {
                "PartialObjectMetadata" => Self::Object,
                "PartialObjectMetadataList" => Self::List,
                _ => Self::No,
            })
            .next()
            .unwrap_or(Self::No)
    }

    /// Whether a response carrying one object is sent as metadata only; 406 for a list
    /// conversion.
    pub(crate) fn single(self, rt: &ResourceType) -> Result<bool, ApiError> {
        match self {
            Self::No => Ok(false),
            Self::Object => Ok(true),
            Self::List => Err(not_acceptable(format!(
                "you requested PartialObjectMetadataList, but the requested object is not a list (*{}.{})",
                rt.version, rt.kind
            ))),
        }
    }

    /// Whether a list response is sent as a `PartialObjectMetadataList`; 406 for an object
    /// conversion.
    pub(crate) fn list(self, rt: &ResourceType) -> Result<bool, ApiError> {
        match self {
            Self::No => Ok(false),
            Self::List => Ok(true),
            Self::Object => Err(not_acceptable(format!(
                "you requested PartialObjectMetadata, but the requested object is a list (*{}.{}List)",
                rt.version, rt.kind
            ))),
        }
    }

    /// Whether watch events carry metadata only (only for `as=PartialObjectMetadata`).
    pub(crate) fn watch(self) -> bool {
        self == Self::Object
    }
}

/// 406 NotAcceptable, as `errNotAcceptable` in response.go.
fn not_acceptable(message: String) -> ApiError {
    ApiError {
        code: 406,
        reason: "NotAcceptable",
        message,
        details: None,
    }
}

#[cfg(test)]
mod tests {
    use super::AsPartial;

    #[test]
    fn reads_the_as_parameter_of_the_accept_header() {
        let read = AsPartial::from_accept;
        assert_eq!(read("application/json"), AsPartial::No);
        assert_eq!(
            read("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"),
            AsPartial::Object
        );
        assert_eq!(
            read("application/json; as=PartialObjectMetadataList; g=meta.k8s.io; v=v1"),
            AsPartial::List
        );
        assert_eq!(
            read("application/json;as=Table;g=meta.k8s.io;v=v1, application/json"),
            AsPartial::No
        );
        assert_eq!(
            read("application/yaml, application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"),
            AsPartial::Object
        );
    }
}
