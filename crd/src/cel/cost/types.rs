//! CEL types as the estimator needs them: the type the checker gives each expression (cel-go
//! `common/types`), from the schema's declared types ([`super::decl`]) and the signatures of
//! [`super::overloads`], and the assignability that picks overloads (cel-go
//! `checker/types.go`, `isAssignable`, with `dyn` assignable to and from anything).

use std::collections::BTreeMap;

use super::decl::{Decl, DeclKind};

/// A CEL type. `'d` is the lifetime of the schema's declared types.
#[derive(Clone, Debug)]
pub(crate) enum Type<'d> {
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Null,
    Duration,
    Timestamp,
    Dyn,
    List(Box<Type<'d>>),
    Map(Box<Type<'d>>, Box<Type<'d>>),
    /// An object of the schema: a message (struct kind) whose fields are the declared ones.
    Object(&'d Decl),
    /// A library type by name: `kubernetes.Quantity`, `kubernetes.URL`, `kubernetes.Semver`,
    /// `kubernetes.NamedFormat` (struct kind), `net.IP`, `net.CIDR` (opaque).
    Named(&'static str),
    Optional(Box<Type<'d>>),
    /// The type of a type value, e.g. `string` in `type(x) == string`.
    Denoted(Box<Type<'d>>),
    /// A type parameter of a signature (`A`, `B`).
    Param(char),
}

/// cel-go's `types.Kind`, as far as the estimator distinguishes kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Scalar,
    String,
    Bytes,
    List,
    Map,
    Struct,
    Opaque,
    Dyn,
    Other,
}

/// Type parameters bound while matching one signature.
pub(crate) type Bindings<'d> = BTreeMap<char, Type<'d>>;

impl<'d> Type<'d> {
    /// The type of values of a declared schema type.
    pub(crate) fn of_decl(decl: &'d Decl) -> Self {
        match &decl.kind {
            DeclKind::Object(_) => Self::Object(decl),
            DeclKind::List(items) => Self::List(Box::new(Self::of_decl(items))),
            DeclKind::Map(values) => {
                Self::Map(Box::new(Self::String), Box::new(Self::of_decl(values)))
            }
            DeclKind::String => Self::String,
            DeclKind::Bytes => Self::Bytes,
            DeclKind::Duration => Self::Duration,
            DeclKind::Timestamp => Self::Timestamp,
            DeclKind::Bool => Self::Bool,
            DeclKind::Int => Self::Int,
            DeclKind::Double => Self::Double,
            DeclKind::Dyn => Self::Dyn,
        }
    }

    /// The kind (`Type.Kind()`).
    pub(crate) fn kind(&self) -> Kind {
        match self {
            Self::Bool
            | Self::Int
            | Self::Uint
            | Self::Double
            | Self::Duration
            | Self::Timestamp => Kind::Scalar,
            Self::String => Kind::String,
            Self::Bytes => Kind::Bytes,
            Self::List(_) => Kind::List,
            Self::Map(..) => Kind::Map,
            Self::Object(_) => Kind::Struct,
            Self::Named(name) if name.starts_with("kubernetes.") => Kind::Struct,
            Self::Named(_) | Self::Optional(_) => Kind::Opaque,
            Self::Dyn | Self::Param(_) => Kind::Dyn,
            Self::Null | Self::Denoted(_) => Kind::Other,
        }
    }

    /// Whether values of this type have a size known when checking (`isScalar`): booleans,
    /// numbers, durations, timestamps, and optionals of them.
    pub(crate) fn is_scalar(&self) -> bool {
        match self {
            Self::Optional(inner) => inner.is_scalar(),
            other => other.kind() == Kind::Scalar,
        }
    }

    /// The element type of a list (`Parameters()[0]`).
    pub(crate) fn list_element(&self) -> Option<&Type<'d>> {
        match self {
            Self::List(element) => Some(element),
            _ => None,
        }
    }

    /// cel-go's `TypeName()` of the types a list can be sorted by (overload ids such as
    /// `list_string_sort`).
    pub(crate) fn type_name(&self) -> Option<&'static str> {
        Some(match self {
            Self::Int => "int",
            Self::Uint => "uint",
            Self::Double => "double",
            Self::Bool => "bool",
            Self::String => "string",
            Self::Bytes => "bytes",
            Self::Duration => "google.protobuf.Duration",
            Self::Timestamp => "google.protobuf.Timestamp",
            _ => return None,
        })
    }

    /// Exact type equality (`Type.IsExactType`); schema objects are equal when they are the
    /// same declaration.
    pub(crate) fn exact(&self, other: &Type<'_>) -> bool {
        match (self, other) {
            (Self::List(a), Type::List(b))
            | (Self::Optional(a), Type::Optional(b))
            | (Self::Denoted(a), Type::Denoted(b)) => a.exact(b),
            (Self::Map(ka, va), Type::Map(kb, vb)) => ka.exact(kb) && va.exact(vb),
            (Self::Object(a), Type::Object(b)) => std::ptr::eq(*a, *b),
            (Self::Named(a), Type::Named(b)) => a == b,
            (Self::Param(a), Type::Param(b)) => a == b,
            (Self::Bool, Type::Bool)
            | (Self::Int, Type::Int)
            | (Self::Uint, Type::Uint)
            | (Self::Double, Type::Double)
            | (Self::String, Type::String)
            | (Self::Bytes, Type::Bytes)
            | (Self::Null, Type::Null)
            | (Self::Duration, Type::Duration)
            | (Self::Timestamp, Type::Timestamp)
            | (Self::Dyn, Type::Dyn) => true,
            _ => false,
        }
    }

    /// Whether a value of `actual` can be passed where this signature type is expected,
    /// binding type parameters (`dyn` is assignable both ways; `null` to anything, as the
    /// rules reaching the estimator have compiled).
    pub(crate) fn accepts(&self, actual: &Type<'d>, bindings: &mut Bindings<'d>) -> bool {
        match (self, actual) {
            (Self::Param(p), _) => match bindings.get(p).cloned() {
                None => {
                    bindings.insert(*p, actual.clone());
                    true
                }
                Some(Self::Dyn) => {
                    bindings.insert(*p, actual.clone());
                    true
                }
                Some(bound) => bound.accepts(actual, bindings),
            },
            (_, Type::Dyn | Type::Param(_)) | (Self::Dyn, _) | (_, Type::Null) => true,
            (Self::List(a), Type::List(b))
            | (Self::Optional(a), Type::Optional(b))
            | (Self::Denoted(a), Type::Denoted(b)) => a.accepts(b, bindings),
            (Self::Map(ka, va), Type::Map(kb, vb)) => {
                ka.accepts(kb, bindings) && va.accepts(vb, bindings)
            }
            (expected, actual) => expected.exact(actual),
        }
    }

    /// This signature type with its parameters replaced by their bindings (unbound ones by
    /// `dyn`, as cel-go's checker finally does).
    pub(crate) fn substitute(&self, bindings: &Bindings<'d>) -> Type<'d> {
        match self {
            Self::Param(p) => bindings.get(p).cloned().unwrap_or(Type::Dyn),
            Self::List(a) => Type::List(Box::new(a.substitute(bindings))),
            Self::Optional(a) => Type::Optional(Box::new(a.substitute(bindings))),
            Self::Denoted(a) => Type::Denoted(Box::new(a.substitute(bindings))),
            Self::Map(k, v) => Type::Map(
                Box::new(k.substitute(bindings)),
                Box::new(v.substitute(bindings)),
            ),
            other => other.clone(),
        }
    }
}
