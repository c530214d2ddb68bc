//! Conversion between the versions of a kind through a hub: controller-runtime's
//! `conversion.Hub` / `conversion.Convertible` and its `/convert` handler.
//!
//! One version of a kind is the hub — the storage version, marked with [`Hub`] — and every
//! other version (a spoke) implements [`Convertible`] to and from it. Converting between two
//! spokes goes through the hub, so N versions need N-1 pairs of functions, not N².

use std::any::Any;
use std::collections::BTreeMap;
use std::marker::PhantomData;

use serde_json::Value;

use super::WebhookError;
use kbr_crd::resource::CustomResource;

/// Marks the hub version of a kind, the one every other version converts to and from:
/// controller-runtime's `conversion.Hub` (Kubebuilder scaffolds `func (*Kind) Hub() {}`).
///
/// The hub must be the storage version (`#[kbr(storage)]`, the derive's default); the spokes
/// are `#[kbr(storage = false)]`.
pub trait Hub: CustomResource {}

/// A spoke version of a kind that converts to and from the hub `H`: controller-runtime's
/// `conversion.Convertible` (`ConvertTo(dst Hub) error` / `ConvertFrom(src Hub) error`).
///
/// Conversions must not lose what both versions can hold: `S -> H -> S` gives back the same
/// object. Copy `metadata` as is; only labels and annotations may change (the API server
/// rejects other metadata changes), so a field the hub cannot hold may be kept in an annotation.
///
/// ```
/// use kbr_runtime::webhook::{ConversionError, Convertible, Hub};
/// # use kbr_runtime::CustomResource;
/// # pub mod v2 {
/// #   #[derive(kbr_runtime::CustomResource, Clone, Debug, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
/// #   #[kbr(group = "toys.example.com", version = "v2", kind = "Widget", plural = "widgets", namespaced)]
/// #   pub struct WidgetSpec { #[serde(default)] pub size_millis: i64 }
/// # }
/// # pub mod v1 {
/// #   #[derive(kbr_runtime::CustomResource, Clone, Debug, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
/// #   #[kbr(group = "toys.example.com", version = "v1", kind = "Widget", plural = "widgets", namespaced, storage = false)]
/// #   pub struct WidgetSpec { #[serde(default)] pub size: i32 }
/// # }
/// impl Hub for v2::Widget {}
///
/// impl Convertible<v2::Widget> for v1::Widget {
///     fn convert_to(&self) -> Result<v2::Widget, ConversionError> {
///         let spec = v2::WidgetSpec { size_millis: i64::from(self.spec.size) * 1000 };
///         Ok(v2::Widget { metadata: self.metadata.clone(), spec })
///     }
///
///     fn convert_from(hub: &v2::Widget) -> Result<Self, ConversionError> {
///         let size = i32::try_from(hub.spec.size_millis / 1000)
///             .map_err(|_| ConversionError::failed("spec.sizeMillis does not fit v1's spec.size"))?;
///         Ok(v1::Widget { metadata: hub.metadata.clone(), spec: v1::WidgetSpec { size } })
///     }
/// }
/// ```
pub trait Convertible<H: Hub>: CustomResource {
    /// Converts this spoke to the hub (`ConvertTo`).
    ///
    /// # Errors
    /// [`ConversionError::failed`] when the object cannot be represented in the hub.
    fn convert_to(&self) -> Result<H, ConversionError>;

    /// Converts the hub to this spoke (`ConvertFrom`).
    ///
    /// # Errors
    /// [`ConversionError::failed`] when the object cannot be represented in this version.
    fn convert_from(hub: &H) -> Result<Self, ConversionError>;
}

/// Why an object could not be converted; the message goes to the API server in the failed
/// `ConversionReview` response (and from there to the client).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConversionError {
    /// A [`Convertible`] implementation refused the object.
    #[error("{0}")]
    Failed(String),
    /// The object has no `apiVersion` or `kind` string.
    #[error("object {index} has no {field}")]
    Malformed {
        /// Position of the object in the request.
        index: usize,
        /// `apiVersion` or `kind`.
        field: &'static str,
    },
    /// Objects can only be converted between versions of one group.
    #[error("cannot convert {from} to {to}: the groups differ")]
    GroupMismatch {
        /// The object's `apiVersion`.
        from: String,
        /// The desired `apiVersion`.
        to: String,
    },
    /// No conversion is registered for the object's group and kind.
    #[error("no conversion is registered for {group}, Kind={kind}")]
    UnknownKind {
        /// The object's group.
        group: String,
        /// The object's kind.
        kind: String,
    },
    /// The kind has a conversion, but not for this version.
    #[error(
        "no conversion is registered for {group}/{version}, Kind={kind} (known versions: {known})"
    )]
    UnknownVersion {
        /// The group.
        group: String,
        /// The unknown version.
        version: String,
        /// The kind.
        kind: String,
        /// The registered versions, comma-separated.
        known: String,
    },
    /// The object does not decode as the Rust type of its version.
    #[error("cannot decode {api_version}, Kind={kind}: {message}")]
    Decode {
        /// The object's `apiVersion`.
        api_version: String,
        /// The object's kind.
        kind: String,
        /// The decoder's message.
        message: String,
    },
    /// A converted object could not be serialized.
    #[error("cannot encode {api_version}, Kind={kind}: {message}")]
    Encode {
        /// The target `apiVersion`.
        api_version: String,
        /// The kind.
        kind: String,
        /// The serializer's message.
        message: String,
    },
}

impl ConversionError {
    /// A conversion that cannot be done, with the reason (what [`Convertible`] impls return).
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into())
    }
}

type ToHub = fn(&Value) -> Result<Box<dyn Any>, ConversionError>;
type FromHub = fn(&dyn Any) -> Result<Value, ConversionError>;

#[derive(Clone, Copy)]
struct VersionConverter {
    to_hub: ToHub,
    from_hub: FromHub,
}

fn decode<K: CustomResource>(obj: &Value) -> Result<K, ConversionError> {
    K::deserialize(obj).map_err(|error| ConversionError::Decode {
        api_version: K::INFO.api_version(),
        kind: K::INFO.kind.to_string(),
        message: error.to_string(),
    })
}

fn encode<K: CustomResource>(obj: &K) -> Result<Value, ConversionError> {
    serde_json::to_value(obj).map_err(|error| ConversionError::Encode {
        api_version: K::INFO.api_version(),
        kind: K::INFO.kind.to_string(),
        message: error.to_string(),
    })
}

fn downcast<H: Hub>(hub: &dyn Any) -> Result<&H, ConversionError> {
    hub.downcast_ref::<H>().ok_or_else(|| {
        ConversionError::Failed(format!(
            "internal error: the hub is not a {}",
            std::any::type_name::<H>()
        ))
    })
}

fn hub_decode<H: Hub>(obj: &Value) -> Result<Box<dyn Any>, ConversionError> {
    Ok(Box::new(decode::<H>(obj)?))
}

fn hub_encode<H: Hub>(hub: &dyn Any) -> Result<Value, ConversionError> {
    encode(downcast::<H>(hub)?)
}

fn spoke_to_hub<H: Hub, S: Convertible<H>>(obj: &Value) -> Result<Box<dyn Any>, ConversionError> {
    Ok(Box::new(decode::<S>(obj)?.convert_to()?))
}

fn spoke_from_hub<H: Hub, S: Convertible<H>>(hub: &dyn Any) -> Result<Value, ConversionError> {
    encode(&S::convert_from(downcast::<H>(hub)?)?)
}

/// The versions of one kind and how to reach the hub from each: what
/// [`Webhooks::add_conversion`](super::Webhooks::add_conversion) registers. controller-runtime
/// finds hub and spokes in the scheme; kbr lists them.
///
/// ```
/// # use kbr_runtime::webhook::{ConversionError, Convertible, Hub};
/// # pub mod v2 {
/// #   #[derive(kbr_runtime::CustomResource, Clone, Debug, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
/// #   #[kbr(group = "toys.example.com", version = "v2", kind = "Widget", plural = "widgets", namespaced)]
/// #   pub struct WidgetSpec {}
/// # }
/// # pub mod v1 {
/// #   #[derive(kbr_runtime::CustomResource, Clone, Debug, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
/// #   #[kbr(group = "toys.example.com", version = "v1", kind = "Widget", plural = "widgets", namespaced, storage = false)]
/// #   pub struct WidgetSpec {}
/// # }
/// # impl Hub for v2::Widget {}
/// # impl Convertible<v2::Widget> for v1::Widget {
/// #     fn convert_to(&self) -> Result<v2::Widget, ConversionError> { Ok(v2::Widget { metadata: self.metadata.clone(), spec: v2::WidgetSpec {} }) }
/// #     fn convert_from(hub: &v2::Widget) -> Result<Self, ConversionError> { Ok(v1::Widget { metadata: hub.metadata.clone(), spec: v1::WidgetSpec {} }) }
/// # }
/// use kbr_runtime::webhook::{Conversion, Webhooks};
///
/// let mut webhooks = Webhooks::new();
/// webhooks.add_conversion(Conversion::<v2::Widget>::new().spoke::<v1::Widget>()).unwrap();
/// assert!(webhooks.converts("toys.example.com", "Widget"));
/// ```
pub struct Conversion<H: Hub> {
    versions: BTreeMap<&'static str, VersionConverter>,
    problem: Option<String>,
    hub: PhantomData<fn() -> H>,
}

impl<H: Hub> std::fmt::Debug for Conversion<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conversion")
            .field("hub", &H::INFO.api_version())
            .field("versions", &self.versions.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl<H: Hub> Default for Conversion<H> {
    fn default() -> Self {
        Self::new()
    }
}

impl<H: Hub> Conversion<H> {
    /// The conversion of `H`'s kind with `H` as the hub and no spokes yet.
    pub fn new() -> Self {
        let mut versions = BTreeMap::new();
        versions.insert(
            H::INFO.version,
            VersionConverter {
                to_hub: hub_decode::<H>,
                from_hub: hub_encode::<H>,
            },
        );
        let problem = (!H::INFO.storage).then(|| {
            format!(
                "the hub {}, Kind={} must be the storage version (remove `storage = false`)",
                H::INFO.api_version(),
                H::INFO.kind
            )
        });
        Self {
            versions,
            problem,
            hub: PhantomData,
        }
    }

    /// Adds the spoke version `S`. Problems (another kind, a second storage version, a
    /// version added twice) are reported by [`Webhooks::add_conversion`](super::Webhooks::add_conversion).
    #[must_use]
    pub fn spoke<S: Convertible<H>>(mut self) -> Self {
        let (hub, spoke) = (H::INFO, S::INFO);
        let problem = if spoke.group != hub.group || spoke.kind != hub.kind {
            Some(format!(
                "the spoke {}, Kind={} is not a version of {}, Kind={}",
                spoke.api_version(),
                spoke.kind,
                hub.group,
                hub.kind
            ))
        } else if spoke.storage {
            Some(format!(
                "the spoke {}, Kind={} is a storage version; only the hub may be (add `storage = false`)",
                spoke.api_version(),
                spoke.kind
            ))
        } else if self.versions.contains_key(spoke.version) {
            Some(format!(
                "version {} of {}, Kind={} is added twice",
                spoke.version, hub.group, hub.kind
            ))
        } else {
            None
        };
        if self.problem.is_none() {
            self.problem = problem;
        }
        self.versions.insert(
            spoke.version,
            VersionConverter {
                to_hub: spoke_to_hub::<H, S>,
                from_hub: spoke_from_hub::<H, S>,
            },
        );
        self
    }

    pub(crate) fn build(self) -> Result<KindConversion, WebhookError> {
        if let Some(problem) = self.problem {
            return Err(WebhookError::InvalidConversion(problem));
        }
        Ok(KindConversion {
            group: H::INFO.group,
            kind: H::INFO.kind,
            plural: H::INFO.plural,
            hub: H::INFO.version,
            versions: self.versions,
        })
    }
}

/// The registered conversion of one kind.
pub(crate) struct KindConversion {
    pub(crate) group: &'static str,
    pub(crate) kind: &'static str,
    pub(crate) plural: &'static str,
    pub(crate) hub: &'static str,
    versions: BTreeMap<&'static str, VersionConverter>,
}

impl KindConversion {
    fn converter(&self, version: &str) -> Result<VersionConverter, ConversionError> {
        self.versions
            .get(version)
            .copied()
            .ok_or_else(|| ConversionError::UnknownVersion {
                group: self.group.to_string(),
                version: version.to_string(),
                kind: self.kind.to_string(),
                known: self.versions.keys().copied().collect::<Vec<_>>().join(", "),
            })
    }

    /// The registered versions, hub included.
    pub(crate) fn versions(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.versions.keys().copied()
    }
}

/// `group/version` -> (`group`, `version`); `v1` (the core group) -> (``, `v1`).
fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

/// Every registered kind conversion, by (group, kind).
#[derive(Default)]
pub(crate) struct Conversions {
    kinds: BTreeMap<(&'static str, &'static str), KindConversion>,
}

impl Conversions {
    pub(crate) fn insert(&mut self, conversion: KindConversion) -> Result<(), WebhookError> {
        let key = (conversion.group, conversion.kind);
        if self.kinds.contains_key(&key) {
            return Err(WebhookError::InvalidConversion(format!(
                "a conversion for {}, Kind={} is already registered",
                conversion.group, conversion.kind
            )));
        }
        self.kinds.insert(key, conversion);
        Ok(())
    }

    pub(crate) fn get(&self, group: &str, kind: &str) -> Option<&KindConversion> {
        self.kinds
            .iter()
            .find(|((g, k), _)| *g == group && *k == kind)
            .map(|(_, c)| c)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &KindConversion> {
        self.kinds.values()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// Converts the `index`th object of a review to `desired` (`group/version`).
    pub(crate) fn convert(
        &self,
        index: usize,
        obj: &Value,
        desired: &str,
    ) -> Result<Value, ConversionError> {
        let field = |name: &'static str| {
            obj.get(name)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .ok_or(ConversionError::Malformed { index, field: name })
        };
        let (api_version, kind) = (field("apiVersion")?, field("kind")?);
        let (group, version) = split_api_version(api_version);
        let (desired_group, desired_version) = split_api_version(desired);
        if group != desired_group {
            return Err(ConversionError::GroupMismatch {
                from: api_version.to_string(),
                to: desired.to_string(),
            });
        }
        let conversion = self
            .get(group, kind)
            .ok_or_else(|| ConversionError::UnknownKind {
                group: group.to_string(),
                kind: kind.to_string(),
            })?;
        let (from, to) = (
            conversion.converter(version)?,
            conversion.converter(desired_version)?,
        );
        if version == desired_version {
            return Ok(obj.clone());
        }
        let hub = (from.to_hub)(obj)?;
        (to.from_hub)(hub.as_ref())
    }
}
