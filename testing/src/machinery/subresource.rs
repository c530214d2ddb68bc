//! [`Part`]: which part of an object a write may change — the main resource or its `status`
//! subresource (`/status`), what the write rules, field managers and admission all ask.

/// Which part of an object a write may change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    /// The main resource: everything but `status` when the type has a status subresource.
    Main,
    /// The `/status` subresource: only `status`.
    Status,
}
