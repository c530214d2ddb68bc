//! Merging an applied configuration into an object, and removing fields and items from one.
//!
//! Mirrors structured-merge-diff v6 `typed/merge.go` (`TypedValue.Merge` with `ruleKeepRHS`:
//! the configuration's leaves win, granular maps merge by field, associative lists merge by
//! item with the order rules of `visitListItems`, atomic lists and maps are replaced) and
//! `typed/remove.go` (`TypedValue.RemoveItems`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::fieldset::{FieldSet, PathElement};
use super::schema::{ListType, Ty};
use super::typed::{Handler, field_type, handler, item_element, pair_handler};

static NULL: Value = Value::Null;

/// `lhs` with `rhs` merged in; `None` when neither is there.
pub(crate) fn merge(lhs: Option<&Value>, rhs: Option<&Value>, ty: &Ty) -> Option<Value> {
    let keep_rhs = || rhs.or(lhs).cloned();
    let atom = ty.atom();
    match pair_handler(&atom, lhs, rhs).0 {
        Handler::Scalar => keep_rhs(),
        Handler::List(list) => {
            let (l, r) = (lhs.and_then(Value::as_array), rhs.and_then(Value::as_array));
            let empty = |x: Option<&Vec<Value>>| x.is_none_or(Vec::is_empty);
            if !list.associative || (empty(l) && empty(r)) {
                return keep_rhs();
            }
            let items = merge_items(
                list,
                l.map_or(&[][..], Vec::as_slice),
                r.map_or(&[][..], Vec::as_slice),
            );
            (!items.is_empty()).then_some(Value::Array(items))
        }
        Handler::Map(map) => {
            let (l, r) = (
                lhs.and_then(Value::as_object),
                rhs.and_then(Value::as_object),
            );
            let empty = |x: Option<&Map<String, Value>>| x.is_none_or(Map::is_empty);
            if map.atomic || (empty(l) && empty(r)) {
                return keep_rhs();
            }
            let mut out = Map::new();
            let names: BTreeSet<&String> = l.into_iter().chain(r).flat_map(|m| m.keys()).collect();
            for name in names {
                let (lv, rv) = (l.and_then(|m| m.get(name)), r.and_then(|m| m.get(name)));
                if let Some(v) = merge(lv, rv, &field_type(map, name)) {
                    out.insert(name.clone(), v);
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
    }
}

/// Path elements of a list's items (items without one are skipped), and the items by element;
/// a repeated element of the live list maps to `null`, as `indexListPathElements` does.
fn index<'v>(
    list: &ListType,
    items: &'v [Value],
) -> (
    Vec<(PathElement, &'v Value)>,
    BTreeMap<PathElement, &'v Value>,
) {
    let mut elements = Vec::new();
    let mut observed = BTreeMap::new();
    for item in items {
        let Ok(pe) = item_element(list, item) else {
            continue;
        };
        if observed.contains_key(&pe) {
            observed.insert(pe.clone(), &NULL);
        } else {
            observed.insert(pe.clone(), item);
        }
        elements.push((pe, item));
    }
    (elements, observed)
}

/// `visitListItems`: items of both lists, shared items in the configuration's order, live
/// items the configuration does not mention kept where they were.
fn merge_items(list: &ListType, lhs: &[Value], rhs: &[Value]) -> Vec<Value> {
    let (lhs, observed_lhs) = index(list, lhs);
    let (rhs, observed_rhs) = index(list, rhs);
    let mut shared = rhs
        .iter()
        .map(|(pe, _)| pe)
        .filter(|pe| observed_lhs.contains_key(*pe))
        .peekable();
    let mut next_shared = shared.next();
    let mut merged_rhs = BTreeSet::new();
    let mut out = Vec::new();
    let push = |l: Option<&Value>, r: Option<&Value>, out: &mut Vec<Value>| {
        if let Some(v) = merge(l, r, &list.elem) {
            out.push(v);
        }
    };
    let (mut li, mut ri) = (0, 0);
    while li < lhs.len() || ri < rhs.len() {
        if li < lhs.len() && ri < rhs.len() {
            let pe = &lhs[li].0;
            if *pe == rhs[ri].0 {
                merged_rhs.insert(pe.clone());
                push(
                    observed_lhs.get(pe).copied(),
                    observed_rhs.get(pe).copied(),
                    &mut out,
                );
                li += 1;
                ri += 1;
                next_shared = shared.next();
                continue;
            }
            if observed_rhs.contains_key(pe) && next_shared.is_some_and(|n| n != pe) {
                li += 1;
                continue;
            }
        }
        if li < lhs.len() {
            let (pe, item) = &lhs[li];
            if !observed_rhs.contains_key(pe) {
                push(Some(item), None, &mut out);
                li += 1;
                continue;
            } else if merged_rhs.contains(pe) {
                li += 1;
            }
        }
        if ri < rhs.len() {
            let pe = &rhs[ri].0;
            merged_rhs.insert(pe.clone());
            push(
                observed_lhs.get(pe).copied(),
                observed_rhs.get(pe).copied(),
                &mut out,
            );
            ri += 1;
            if next_shared == Some(pe) {
                next_shared = shared.next();
            }
        }
    }
    out
}

/// `v` without the fields and items in `set` (`RemoveItems`): a map or list left with nothing
/// becomes `null`, as the server's walk leaves it.
pub(crate) fn remove_items(v: &Value, set: &FieldSet, ty: &Ty) -> Value {
    let atom = ty.atom();
    match (handler(&atom, Some(v)), v) {
        (Handler::Scalar, _) => v.clone(),
        (Handler::List(list), Value::Array(items)) if list.associative && !items.is_empty() => {
            let kept: Vec<Value> = items
                .iter()
                .filter_map(|item| {
                    let Ok(pe) = item_element(list, item) else {
                        return Some(item.clone());
                    };
                    if set.members.contains(&pe) {
                        return None;
                    }
                    Some(match set.with_prefix(&pe).filter(|s| !s.is_empty()) {
                        Some(below) => remove_items(item, below, &list.elem),
                        None => item.clone(),
                    })
                })
                .collect();
            if kept.is_empty() {
                Value::Null
            } else {
                Value::Array(kept)
            }
        }
        (Handler::Map(map), Value::Object(fields)) if !map.atomic && !fields.is_empty() => {
            let mut kept = Map::new();
            for (name, value) in fields {
                let pe = PathElement::Field(name.clone());
                if set.members.contains(&pe) {
                    continue;
                }
                let value = match set.with_prefix(&pe).filter(|s| !s.is_empty()) {
                    Some(below) => remove_items(value, below, &field_type(map, name)),
                    None => value.clone(),
                };
                kept.insert(name.clone(), value);
            }
            if kept.is_empty() {
                Value::Null
            } else {
                Value::Object(kept)
            }
        }
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::rules::apply::schema::Converter;

    fn ty(schema: Value) -> Ty {
        Converter::new().reference(&schema)
    }

    #[test]
    fn sets_keep_live_items_in_place_and_follow_the_configuration_order() {
        // merge/set_test.go "apply_update_apply_no_overlap": live [a b c d], applied
        // [a aprime c cprime] gives [a b aprime c d cprime].
        let list = ty(
            json!({"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}),
        );
        let merged = merge(
            Some(&json!(["a", "b", "c", "d"])),
            Some(&json!(["a", "aprime", "c", "cprime"])),
            &list,
        );
        assert_eq!(
            merged,
            Some(json!(["a", "b", "aprime", "c", "d", "cprime"]))
        );
        // "apply_twice_reorder": the configuration's order wins for shared items.
        let merged = merge(
            Some(&json!(["a", "b", "c", "d"])),
            Some(&json!(["a", "d", "c", "b"])),
            &list,
        );
        assert_eq!(merged, Some(json!(["a", "d", "c", "b"])));
    }

    #[test]
    fn map_lists_merge_items_by_key_and_atomic_lists_are_replaced() {
        let schema = ty(json!({"type": "object", "properties": {
            "list": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                     "items": {"type": "object", "properties": {"name": {"type": "string"}, "value": {"type": "integer"}}}},
            "args": {"type": "array", "items": {"type": "string"}}
        }}));
        let live = json!({"list": [{"name": "a", "value": 1}], "args": ["x", "y"]});
        let config =
            json!({"list": [{"name": "b", "value": 2}, {"name": "a", "value": 3}], "args": ["z"]});
        assert_eq!(
            merge(Some(&live), Some(&config), &schema),
            Some(
                json!({"list": [{"name": "b", "value": 2}, {"name": "a", "value": 3}], "args": ["z"]})
            )
        );
        let set = FieldSet::of(&[vec![
            PathElement::Field("list".into()),
            PathElement::Key(vec![("name".into(), json!("a"))]),
        ]]);
        assert_eq!(
            remove_items(&live, &set, &schema),
            json!({"list": null, "args": ["x", "y"]})
        );
    }
}
