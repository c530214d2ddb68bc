//! Strategic merge patch (`application/strategic-merge-patch+json`) of built-in kinds.
//!
//! Mirrors apimachinery `pkg/util/strategicpatch/patch.go` (`StrategicMergeMapPatch` with the
//! options the API server uses: parallel deletion lists applied, unmatched `null`s ignored),
//! reading each field's patch strategy and merge key from the built-in types' OpenAPI
//! ([`PatchMeta`], as `meta.go` reads the Go types' tags):
//! - maps are merged key by key; `null` removes a key; a field with strategy `replace` is
//!   replaced;
//! - a list with strategy `merge` is merged: lists of objects by their merge key (an item of
//!   the patch merges into the stored item with the same key, or is appended), lists of scalars
//!   as a set; any other list is replaced. The merged list keeps the patch's order for the
//!   patch's items and places the other items by their stored order (`normalizeElementOrder`);
//! - the directives: `$patch: replace|delete` in a map, `$patch: delete|replace` items in a
//!   merged list, `$retainKeys` (keys of the map to keep), `$deleteFromPrimitiveList/<field>`
//!   (scalars to remove) and `$setElementOrder/<field>` (the order of the merged list).
//!
//! Errors are answered as apiserver `pkg/endpoints/handlers/patch.go`
//! (`interpretStrategicMergePatchError`) does: the malformed-directive sentinels of
//! apimachinery `pkg/util/mergepatch/errors.go` are 400, lists of lists 422, anything else a
//! 500 whose message is the error's text.

use serde_json::{Map, Value};

use super::go_text::go_value;
pub(crate) use super::strategic_error::SmpError;
use super::strategic_error::{
    BAD_PRIMITIVE_LIST, BAD_RETAIN_KEYS, BAD_SET_ELEMENT_ORDER, bad_arg_type, bad_patch_type,
    go_type, no_merge_key,
};
use super::strategic_order::{Kind, element_kind, normalize_order, same_key};
use crate::rules::apply::{Atom, PatchMeta, Ty};

/// `$patch`: `replace`, `delete` or `merge`.
const DIRECTIVE: &str = "$patch";
/// `$retainKeys`: the keys a map keeps.
const RETAIN_KEYS: &str = "$retainKeys";
/// `$deleteFromPrimitiveList/<field>`: scalars to remove from a merged list.
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList";
/// `$setElementOrder/<field>`: the order of a merged list.
const SET_ELEMENT_ORDER: &str = "$setElementOrder";

/// What a position of the document is: a resolved merge type, or nothing known (lists are then
/// replaced and maps merged, as for fields without tags).
#[derive(Clone)]
pub(crate) struct Schema(Option<std::sync::Arc<Atom>>);

impl Schema {
    /// The schema of a document of merge type `ty` (`None`: no patch metadata).
    pub(crate) fn new(ty: Option<&Ty>) -> Self {
        Self(ty.map(Ty::atom))
    }

    /// The schema and patch metadata of field `key` of a map (`LookupPatchMetadataForStruct`):
    /// a declared field's, else the map's value type without metadata.
    fn field(&self, key: &str) -> (Schema, PatchMeta) {
        let Some(map) = self.0.as_ref().and_then(|a| a.map.as_ref()) else {
            return (Schema(None), PatchMeta::default());
        };
        match map.fields.get(key) {
            Some(field) => (Schema(Some(field.ty.atom())), field.patch.clone()),
            None => (
                Schema(map.elem.as_ref().map(Ty::atom)),
                PatchMeta::default(),
            ),
        }
    }

    /// The schema of the items of this list (`LookupPatchMetadataForSlice`).
    fn items(&self) -> Schema {
        Schema(
            self.0
                .as_ref()
                .and_then(|a| a.list.as_ref())
                .map(|l| l.elem.atom()),
        )
    }

    /// `LookupPatchMeta.Name`: the Go kind of the type (`struct` for the objects of a list).
    fn name(&self) -> &'static str {
        match &self.0 {
            Some(atom) if atom.map.is_some() => "struct",
            _ => "interface",
        }
    }
}

/// The strategy a field's list or map follows besides `retainKeys`
/// (`extractRetainKeysPatchStrategy`): `merge`, `replace` or empty.
fn strategy(meta: &PatchMeta) -> Result<&str, SmpError> {
    let unexpected = || {
        SmpError::Other(format!(
            "unexpected patch strategy: [{}]",
            meta.strategies.join(" ")
        ))
    };
    match meta.strategies.as_slice() {
        [] => Ok(""),
        [one] if one == "retainKeys" => Ok(""),
        [one] => Ok(one),
        [a, b] if a == "retainKeys" => Ok(b),
        [a, b] if b == "retainKeys" => Ok(a),
        _ => Err(unexpected()),
    }
}

/// Applies the strategic merge patch `patch` to `original` (`StrategicMergeMapPatch`).
///
/// # Errors
/// [`SmpError`] for a malformed directive, a list item without its merge key, a list of lists
/// or list items of different types.
pub(crate) fn apply(
    original: Map<String, Value>,
    patch: Map<String, Value>,
    schema: &Schema,
) -> Result<Map<String, Value>, SmpError> {
    merge_map(original, patch, schema)
}

/// `mergeMap`.
fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    schema: &Schema,
) -> Result<Map<String, Value>, SmpError> {
    if let Some(directive) = patch.get(DIRECTIVE) {
        return match directive.as_str() {
            Some("replace") => {
                patch.remove(DIRECTIVE);
                Ok(patch)
            }
            Some("delete") => Ok(Map::new()),
            _ => Err(bad_patch_type(directive, &patch)),
        };
    }
    retain_keys(&mut original, &mut patch)?;
    set_element_orders(&mut original, &mut patch, schema)?;
    for (key, patch_value) in patch {
        let (key, delete_list) = match key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
            Some(rest) => match rest.strip_prefix('/') {
                Some(field) => (field.to_owned(), true),
                None => return Err(BAD_PRIMITIVE_LIST),
            },
            None => (key, false),
        };
        if patch_value.is_null() {
            original.remove(&key);
            continue;
        }
        let Some(current) = original.remove(&key) else {
            if !delete_list {
                put(&mut original, key, without_nulls(patch_value));
            }
            continue;
        };
        let merged = match (current, patch_value) {
            (Value::Object(current), Value::Object(patch_value)) => {
                let (sub, meta) = schema.field(&key);
                if strategy(&meta)? == "replace" {
                    Value::Object(patch_value)
                } else {
                    Value::Object(merge_map(current, patch_value, &sub)?)
                }
            }
            (Value::Array(current), Value::Array(patch_value)) => {
                let (sub, meta) = schema.field(&key);
                if strategy(&meta)? == "merge" || delete_list {
                    let merged = merge_list(
                        current,
                        patch_value,
                        &sub.items(),
                        &meta.merge_key,
                        delete_list,
                    )?;
                    Value::Array(merged)
                } else {
                    Value::Array(patch_value)
                }
            }
            (current, _) if delete_list => current,
            (current, patch_value) => {
                let same_type = std::mem::discriminant(&current)
                    == std::mem::discriminant(&patch_value)
                    && go_type(&current) == go_type(&patch_value);
                if same_type {
                    patch_value
                } else {
                    without_nulls(patch_value)
                }
            }
        };
        put(&mut original, key, merged);
    }
    Ok(original)
}

/// Sets `key` to `value` without its directives, or leaves it out when `value` is itself a
/// directive map (`removeDirectives`).
fn put(map: &mut Map<String, Value>, key: String, value: Value) {
    if let Some(value) = without_directives(value) {
        map.insert(key, value);
    }
}

/// `removeDirectives`: `None` for a map with `$patch`; nested such maps are left out.
fn without_directives(value: Value) -> Option<Value> {
    match value {
        Value::Object(map) if map.contains_key(DIRECTIVE) => None,
        Value::Object(map) => Some(Value::Object(
            map.into_iter()
                .filter_map(|(k, v)| Some((k, without_directives(v)?)))
                .collect(),
        )),
        Value::Array(items) => Some(Value::Array(
            items.into_iter().filter_map(without_directives).collect(),
        )),
        other => Some(other),
    }
}

/// `discardNullValuesFromPatch`: drops `null` members of maps, at every depth.
fn without_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, without_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

/// `applyRetainKeysDirective`: with `$retainKeys`, every non-null key of the patch must be in
/// it, and the original keeps only the keys it lists.
fn retain_keys(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
) -> Result<(), SmpError> {
    let Some(retained) = patch.remove(RETAIN_KEYS) else {
        return Ok(());
    };
    let Value::Array(retained) = retained else {
        return Err(BAD_RETAIN_KEYS);
    };
    let listed = |key: &str| retained.iter().any(|r| r.as_str() == Some(key));
    let unlisted = patch.iter().any(|(k, v)| {
        !v.is_null()
            && !k.starts_with(DELETE_FROM_PRIMITIVE_LIST)
            && !k.starts_with(SET_ELEMENT_ORDER)
            && !listed(k)
    });
    if unlisted {
        return Err(BAD_RETAIN_KEYS);
    }
    original.retain(|k, _| listed(k));
    Ok(())
}

/// `mergePatchIntoOriginal`: merges each list named by a `$setElementOrder/<field>` with its
/// patch and orders it as the directive says; both keys leave the patch.
fn set_element_orders(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
    schema: &Schema,
) -> Result<(), SmpError> {
    let keys: Vec<String> = patch
        .keys()
        .filter(|k| k.starts_with(SET_ELEMENT_ORDER))
        .cloned()
        .collect();
    for key in keys {
        let Some(order) = patch.remove(&key) else {
            continue;
        };
        let Value::Array(order) = order else {
            return Err(bad_arg_type("[]interface {}", &order));
        };
        let field = match key.strip_prefix(SET_ELEMENT_ORDER) {
            Some(rest) => match rest.strip_prefix('/') {
                Some(field) => field.to_owned(),
                None => return Err(BAD_SET_ELEMENT_ORDER),
            },
            None => return Err(BAD_SET_ELEMENT_ORDER),
        };
        let current = list_at(original.get(&field))?;
        let patch_list = list_at(patch.get(&field))?;
        let (sub, meta) = schema.field(&field);
        let strategy = strategy(&meta)?.to_owned();
        let merge_key = meta.merge_key.as_str();
        if let Some(patch_list) = &patch_list {
            check_order(patch_list, &order, merge_key)?;
        }
        let merged = match (current.clone(), patch.remove(&field)) {
            (None, None) => continue,
            (Some(current), None) => current,
            (None, Some(patch_list)) => match without_directives(patch_list) {
                Some(Value::Array(items)) => items,
                _ => continue,
            },
            (Some(current), Some(Value::Array(patch_list))) => {
                if strategy == "merge" {
                    merge_list(current, patch_list, &sub.items(), merge_key, false)?
                } else {
                    patch_list
                }
            }
            (Some(_), Some(_)) => continue,
        };
        let kind = element_kind(&[
            current.as_deref().unwrap_or_default(),
            patch_list.as_deref().unwrap_or_default(),
        ])?;
        let (in_order, server_only): (Vec<Value>, Vec<Value>) = merged
            .into_iter()
            .partition(|item| order.iter().any(|o| same_key(o, item, merge_key, kind)));
        let current = current.unwrap_or_default();
        let merged = normalize_order(in_order, server_only, &order, &current, merge_key, kind)?;
        original.insert(field, Value::Array(merged));
    }
    Ok(())
}

/// The list at a key, if any; an error when the key holds something else.
fn list_at(value: Option<&Value>) -> Result<Option<Vec<Value>>, SmpError> {
    match value {
        None => Ok(None),
        Some(Value::Array(items)) => Ok(Some(items.clone())),
        Some(other) => Err(bad_arg_type("[]interface {}", other)),
    }
}

/// `validatePatchWithSetOrderList`: the patch's items (deletions aside) appear in the
/// `$setElementOrder` list, in its order.
fn check_order(patch_list: &[Value], order: &[Value], merge_key: &str) -> Result<(), SmpError> {
    if order.is_empty() || patch_list.is_empty() {
        return Ok(());
    }
    let kept: Vec<&Value> = patch_list
        .iter()
        .filter(|item| merge_key.is_empty() || item.get(DIRECTIVE) != Some(&"delete".into()))
        .collect();
    let (mut p, mut o) = (0, 0);
    while p < kept.len() && o < order.len() {
        if kept[p].get(DIRECTIVE).is_some() {
            p += 1;
            continue;
        }
        if key_equal(kept[p], &order[o], merge_key)? {
            p += 1;
        }
        o += 1;
    }
    if p < kept.len() {
        return Err(SmpError::Other(format!(
            "The order in patch list:\n{}\n doesn't match {SET_ELEMENT_ORDER} list:\n{}\n",
            go_value(&Value::Array(patch_list.to_vec())),
            go_value(&Value::Array(order.to_vec()))
        )));
    }
    Ok(())
}

/// `mergeKeyValueEqual`.
fn key_equal(left: &Value, right: &Value, merge_key: &str) -> Result<bool, SmpError> {
    if merge_key.is_empty() {
        return Ok(left == right);
    }
    let key_of = |v: &Value| -> Result<Value, SmpError> {
        let Value::Object(map) = v else {
            return Err(bad_arg_type("map[string]interface {}", v));
        };
        map.get(merge_key)
            .cloned()
            .ok_or_else(|| no_merge_key(map, merge_key))
    };
    Ok(key_of(left)? == key_of(right)?)
}

/// `mergeSlice`: merges a list with strategy `merge` (or applies a deletion list).
fn merge_list(
    original: Vec<Value>,
    patch: Vec<Value>,
    items: &Schema,
    merge_key: &str,
    delete_list: bool,
) -> Result<Vec<Value>, SmpError> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let kind = element_kind(&[&original, &patch])?;
    let (original, patch, merged) = if kind != Kind::Map {
        if delete_list {
            return Ok(original
                .into_iter()
                .filter(|v| !patch.contains(v))
                .collect());
        }
        let mut merged: Vec<Value> = Vec::new();
        for v in original.iter().chain(patch.iter()) {
            if !merged.contains(v) {
                merged.push(v.clone());
            }
        }
        (original, patch, merged)
    } else {
        if merge_key.is_empty() {
            return Err(SmpError::Other(format!(
                "cannot merge lists without merge key for {}",
                items.name()
            )));
        }
        let (original, patch) = special_items(original, patch, merge_key)?;
        let merged = merge_by_key(original.clone(), &patch, merge_key, items)?;
        (original, patch, merged)
    };
    let mut in_patch = Vec::new();
    let mut server_only = Vec::new();
    for item in merged {
        if kind == Kind::Map && item.get(merge_key).is_none() {
            let map = item.as_object().cloned().unwrap_or_default();
            return Err(no_merge_key(&map, merge_key));
        }
        if patch.iter().any(|p| same_key(p, &item, merge_key, kind)) {
            in_patch.push(item);
        } else {
            server_only.push(item);
        }
    }
    normalize_order(in_patch, server_only, &patch, &original, merge_key, kind)
}

/// `mergeSliceWithSpecialElements`: applies the `$patch` items of a merged list of objects
/// (`delete` removes the stored items with that key, `replace` makes the rest of the patch the
/// list) and returns the list to merge into and the remaining patch items.
fn special_items(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), SmpError> {
    let mut rest = Vec::new();
    let mut replace = false;
    for item in patch {
        let Some(directive) = item.get(DIRECTIVE) else {
            rest.push(item);
            continue;
        };
        let map = item.as_object().cloned().unwrap_or_default();
        match directive.as_str() {
            Some("delete") => {
                let Some(key) = map.get(merge_key) else {
                    return Err(no_merge_key(&map, merge_key));
                };
                for v in &original {
                    if !v.is_object() {
                        return Err(not_a_map(&original, v));
                    }
                }
                original.retain(|v| v.get(merge_key) != Some(key));
            }
            Some("replace") => replace = true,
            Some("merge") => {
                return Err(SmpError::Other(
                    "merging lists cannot yet be specified in the patch".into(),
                ));
            }
            _ => return Err(bad_patch_type(directive, &map)),
        }
    }
    Ok(if replace {
        (rest, Vec::new())
    } else {
        (original, rest)
    })
}

/// The error of `findMapInSliceBasedOnKeyValue` for an item that is not a map.
fn not_a_map(list: &[Value], item: &Value) -> SmpError {
    let index = list.iter().position(|v| v == item).unwrap_or(0);
    SmpError::Other(format!("value for key {index} is not a map"))
}

/// `mergeSliceWithoutSpecialElements`: each patch item merges into the stored item with its
/// merge key's value, or is appended.
fn merge_by_key(
    mut original: Vec<Value>,
    patch: &[Value],
    merge_key: &str,
    items: &Schema,
) -> Result<Vec<Value>, SmpError> {
    for item in patch {
        let map = item.as_object().cloned().unwrap_or_default();
        let Some(key) = map.get(merge_key) else {
            return Err(no_merge_key(&map, merge_key));
        };
        if let Some(v) = original.iter().find(|v| !v.is_object()) {
            return Err(not_a_map(&original, v));
        }
        match original.iter().position(|v| v.get(merge_key) == Some(key)) {
            Some(at) => {
                let current = match std::mem::take(&mut original[at]) {
                    Value::Object(current) => current,
                    _ => Map::new(),
                };
                original[at] = Value::Object(merge_map(current, map, items)?);
            }
            None => original.push(item.clone()),
        }
    }
    Ok(original)
}
