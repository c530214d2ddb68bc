//! The order of a list a strategic merge patch merged, and the element types it compares.
//!
//! Mirrors apimachinery `pkg/util/strategicpatch/patch.go`: `sliceElementType` (every item of
//! the stored and the patch list has one Go type, never a list), `index` (items are compared by
//! their merge key's value, scalars by value) and `normalizeElementOrder` (the patch's items in
//! the patch's order, the other items in their stored order, interleaved by the stored order
//! where both are known: `mergeSortedSlice`).

use serde_json::Value;

use super::go_text::go_value;
use super::strategic_error::{SmpError, bad_arg_type, no_merge_key};

/// The Go type of the items of a list, as `sliceElementType` tells them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// `map[string]interface{}`: objects, merged by a merge key.
    Map,
    /// A scalar type (`string`, `int64`, `float64`, `bool`, or `nil`).
    Scalar(&'static str),
}

/// The type of one item.
fn kind_of(value: &Value) -> Kind {
    match value {
        Value::Object(_) => Kind::Map,
        Value::Array(_) => Kind::Scalar("slice"),
        Value::String(_) => Kind::Scalar("string"),
        Value::Bool(_) => Kind::Scalar("bool"),
        Value::Number(n) if n.is_f64() => Kind::Scalar("float64"),
        Value::Number(_) => Kind::Scalar("int64"),
        Value::Null => Kind::Scalar("nil"),
    }
}

/// `sliceElementType` of the lists: the one type of all their items.
///
/// # Errors
/// A first item that is a list ([`SmpError::ListOfLists`]), items of two types, or no items.
pub(super) fn element_kind(lists: &[&[Value]]) -> Result<Kind, SmpError> {
    let mut found: Option<Kind> = None;
    for item in lists.iter().flat_map(|l| l.iter()) {
        let kind = kind_of(item);
        match found {
            None if item.is_array() => return Err(SmpError::ListOfLists),
            Some(prev) if prev != kind => {
                let all = lists
                    .iter()
                    .map(|l| go_value(&Value::Array(l.to_vec())))
                    .collect::<Vec<_>>()
                    .join(" ");
                return Err(SmpError::Other(format!(
                    "list element types are not identical: [{all}]"
                )));
            }
            _ => found = Some(kind),
        }
    }
    found.ok_or_else(|| SmpError::Other("no elements in any of the given slices".into()))
}

/// The value `index` compares: an object's merge key value, or the item itself.
fn identity<'a>(item: &'a Value, merge_key: &str, kind: Kind) -> Option<&'a Value> {
    match kind {
        Kind::Map => item.get(merge_key),
        Kind::Scalar(_) => Some(item),
    }
}

/// Whether two items are the same item of a merged list (`index`'s comparison).
pub(super) fn same_key(a: &Value, b: &Value, merge_key: &str, kind: Kind) -> bool {
    identity(a, merge_key, kind) == identity(b, merge_key, kind)
}

/// The position of `item` in `list`, if there.
fn index(list: &[Value], item: &Value, merge_key: &str, kind: Kind) -> Option<usize> {
    list.iter().position(|v| same_key(item, v, merge_key, kind))
}

/// `validateMergeKeyInLists`: every item is an object with the merge key.
fn check_merge_keys(lists: &[&[Value]], merge_key: &str) -> Result<(), SmpError> {
    for item in lists.iter().flat_map(|l| l.iter()) {
        let Value::Object(map) = item else {
            return Err(bad_arg_type("map[string]interface {}", item));
        };
        if !map.contains_key(merge_key) {
            return Err(no_merge_key(map, merge_key));
        }
    }
    Ok(())
}

/// `normalizeSliceOrder`: `items` sorted by their place in `order` (stably; a deletion item goes
/// last).
fn sort_by_order(
    items: Vec<Value>,
    order: &[Value],
    merge_key: &str,
    kind: Kind,
) -> Result<Vec<Value>, SmpError> {
    let (mut items, deletions): (Vec<Value>, Vec<Value>) = if kind == Kind::Map {
        check_merge_keys(&[&items, order], merge_key)?;
        items
            .into_iter()
            .partition(|v| v.get("$patch").and_then(Value::as_str) != Some("delete"))
    } else {
        (items, Vec::new())
    };
    items.sort_by_key(|v| index(order, v, merge_key, kind).unwrap_or(usize::MAX));
    items.extend(deletions);
    Ok(items)
}

/// `normalizeElementOrder`: the items of the patch in `patch_order`, the stored-only items in
/// `server_order`, merged by their stored positions (`mergeSortedSlice`: a stored-only item
/// goes before a patch item that comes after it in the stored list).
pub(super) fn normalize_order(
    patch_items: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: &str,
    kind: Kind,
) -> Result<Vec<Value>, SmpError> {
    let right = sort_by_order(patch_items, patch_order, merge_key, kind)?;
    let left = sort_by_order(server_only, server_order, merge_key, kind)?;
    let mut out = Vec::with_capacity(left.len() + right.len());
    let mut left = left.into_iter().peekable();
    let mut right = right.into_iter().peekable();
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => matches!(
                (
                    index(server_order, l, merge_key, kind),
                    index(server_order, r, merge_key, kind),
                ),
                (Some(li), Some(ri)) if li < ri
            ),
        };
        out.extend(if take_left { left.next() } else { right.next() });
    }
    Ok(out)
}
