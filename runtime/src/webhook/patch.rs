//! The JSON patch a defaulting webhook answers with (controller-runtime's
//! `PatchResponseFromRaw`), computed with `json_patch::diff`.

use json_patch::{Patch, PatchOperation};
use serde::Serialize;
use serde_json::Value;

/// The RFC 6902 patch turning `raw` (the object as the API server sent it) into `mutated`.
///
/// `original` is `raw` decoded as the Rust type. A `remove` is kept only when its path exists
/// in `original` re-serialized: the defaulter removed a field the type knows. Fields the type
/// does not know (newer API fields, other tools' data) or drops when serializing (explicit
/// `null`s) are left alone — controller-runtime drops every `remove` for the same reason
/// unless `DefaulterRemoveUnknownOrOmitableFields` is set.
///
/// # Errors
/// When `original` or `mutated` cannot be serialized.
pub(crate) fn defaulting_patch<K: Serialize>(
    raw: &Value,
    original: &K,
    mutated: &K,
) -> Result<Patch, serde_json::Error> {
    let known = serde_json::to_value(original)?;
    let after = serde_json::to_value(mutated)?;
    let mut ops = json_patch::diff(raw, &after).0;
    ops.retain(|op| match op {
        PatchOperation::Remove(remove) => remove.path.resolve(&known).is_ok(),
        _ => true,
    });
    Ok(Patch(ops))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keeps_unknown_fields_and_explicit_removals() {
        let raw = json!({"spec": {"a": 1, "unknown": true, "gone": "x", "nil": null}});
        let original = json!({"spec": {"a": 1, "gone": "x"}});
        let mutated = json!({"spec": {"a": 2, "added": [1]}});
        let patch = defaulting_patch(&raw, &original, &mutated).unwrap_or_default();
        let mut applied = raw.clone();
        json_patch::patch(&mut applied, &patch.0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            applied,
            json!({"spec": {"a": 2, "unknown": true, "added": [1], "nil": null}})
        );
    }

    #[test]
    fn no_change_no_patch() {
        let raw = json!({"spec": {"a": 1, "extra": {}}});
        let original = json!({"spec": {"a": 1}});
        let patch = defaulting_patch(&raw, &original, &original).unwrap_or_default();
        assert!(patch.0.is_empty(), "{patch:?}");
    }
}
