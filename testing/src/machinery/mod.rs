//! apimachinery's vocabulary, shared by every layer of the fake: `Status` errors
//! (`api_error`, `apimachinery/pkg/api/errors`), metadata accessors (`meta`), label and field
//! selectors (`selector`, with `label_selector` — `apimachinery/pkg/labels` — and
//! `field_labels`, each kind's selectable fields), generated names and uids
//! (`names`, `apiserver/pkg/storage/names`), the served resource types (`registry`: discovery's
//! `APIResource`s) and which part of an object a write changes (`subresource`).

pub(crate) mod api_error;
pub(crate) mod field_labels;
pub(crate) mod label_selector;
pub(crate) mod meta;
pub(crate) mod names;
pub(crate) mod registry;
pub(crate) mod selector;
pub(crate) mod subresource;
