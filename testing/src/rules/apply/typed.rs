//! Walks of an object along its merge type: the fields it sets and how two objects differ.
//!
//! Mirrors structured-merge-diff v6 `typed/`: `helpers.go` (`deduceAtom`, `handleAtom`, list
//! items to path elements with key defaults), `tofieldset.go`, `compare.go`, and
//! `fieldpath/set.go` `EnsureNamedFieldsAreMembers`. Where a value does
//! not fit its type the walks treat it as a leaf instead of failing (the fake's schema
//! validation reports such values).

use std::collections::BTreeMap;

use serde_json::Value;

use super::fieldset::{FieldSet, PathElement};
use super::schema::{Atom, ListType, MapType, Ty};

/// Which part of an atom handles a value (`deduceAtom` then `handleAtom`'s order).
#[derive(Clone, Copy)]
pub(super) enum Handler<'a> {
    Map(&'a MapType),
    List(&'a ListType),
    Scalar,
}

impl Handler<'_> {
    fn same_kind(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}

/// The handler of `v` in `atom`: the part matching the value's kind, else the first of map,
/// scalar, list the atom has.
pub(super) fn handler<'a>(atom: &'a Atom, v: Option<&Value>) -> Handler<'a> {
    match v {
        Some(Value::Number(_) | Value::String(_) | Value::Bool(_)) if atom.scalar => {
            return Handler::Scalar;
        }
        Some(Value::Array(_)) if atom.list.is_some() => {
            if let Some(list) = &atom.list {
                return Handler::List(list);
            }
        }
        Some(Value::Object(_)) if atom.map.is_some() => {
            if let Some(map) = &atom.map {
                return Handler::Map(map);
            }
        }
        _ => {}
    }
    match (&atom.map, &atom.list) {
        (Some(map), _) => Handler::Map(map),
        (None, _) if atom.scalar => Handler::Scalar,
        (None, Some(list)) => Handler::List(list),
        (None, None) => Handler::Scalar,
    }
}

/// The handler of a pair: the right side's, unless only the left side is there.
pub(super) fn pair_handler<'a>(
    atom: &'a Atom,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
) -> (Handler<'a>, Option<Handler<'a>>) {
    let l = handler(atom, lhs);
    if rhs.is_none() {
        return (l, None);
    }
    let r = handler(atom, rhs);
    if lhs.is_none() || l.same_kind(&r) {
        (r, None)
    } else {
        (r, Some(l))
    }
}

/// The type of field `name` of a map: declared, else the map's element type (deduced when it
/// has none, where the server would fail).
pub(super) fn field_type(map: &MapType, name: &str) -> Ty {
    match (map.fields.get(name), &map.elem) {
        (Some(f), _) => f.ty.clone(),
        (None, Some(elem)) => elem.clone(),
        (None, None) => Ty::Deduced,
    }
}

/// The path element of an item of an associative list (`listItemToPathElement`): its key
/// fields (a missing one from the key field's `default`), or its value for a set.
pub(super) fn item_element(list: &ListType, item: &Value) -> Result<PathElement, String> {
    if list.keys.is_empty() {
        return match item {
            Value::Object(_) => {
                Err("associative list without keys has an element that's a map type".into())
            }
            Value::Array(_) => Err("not supported: associative list with lists as elements".into()),
            Value::Null => {
                Err("associative list without keys has an element that's an explicit null".into())
            }
            v => Ok(PathElement::Value(v.clone())),
        };
    }
    let fields = match item {
        Value::Null => return Err("associative list with keys may not have a null element".into()),
        Value::Object(fields) => fields,
        _ => return Err("associative list with keys may not have non-map elements".into()),
    };
    let elem = list.elem.atom();
    let mut key = Vec::new();
    for name in &list.keys {
        match fields.get(name) {
            Some(v) => key.push((name.clone(), v.clone())),
            None => {
                let default = elem
                    .map
                    .as_ref()
                    .and_then(|m| m.fields.get(name)?.default.clone());
                if let Some(d) = default {
                    key.push((name.clone(), d));
                }
            }
        }
    }
    if key.is_empty() {
        return Err(format!(
            "associative list with keys has an element that omits all key fields {:?} (and doesn't have default values for any key fields)",
            list.keys
        ));
    }
    key.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(PathElement::Key(key))
}

/// A walk's paths below one node (relative to it), and whether the node's own path is one.
#[derive(Default)]
struct Below {
    set: FieldSet,
    this: bool,
}

impl Below {
    fn this() -> Self {
        Self {
            set: FieldSet::default(),
            this: true,
        }
    }
}

/// Adds `below` under `pe` in `set` (no empty child sets are kept).
fn put(set: &mut FieldSet, pe: &PathElement, below: Below) {
    if below.this {
        set.members.insert(pe.clone());
    }
    if !below.set.members.is_empty() || !below.set.children.is_empty() {
        set.children.insert(pe.clone(), below.set);
    }
}

/// Every field and item `v` sets (`TypedValue.ToFieldSet`): leaves, atomic lists and maps,
/// list items, empty or null fields and fields of deduced maps.
pub(crate) fn to_field_set(v: &Value, ty: &Ty) -> FieldSet {
    field_set_walk(v, ty).set
}

fn field_set_walk(v: &Value, ty: &Ty) -> Below {
    let atom = ty.atom();
    match handler(&atom, Some(v)) {
        Handler::Scalar => Below::this(),
        Handler::List(list) if !list.associative => Below::this(),
        Handler::List(list) => {
            let Value::Array(items) = v else {
                return Below::default();
            };
            let elements: Vec<Option<PathElement>> =
                items.iter().map(|i| item_element(list, i).ok()).collect();
            let mut seen = BTreeMap::new();
            for pe in elements.iter().flatten() {
                *seen.entry(pe).or_insert(0) += 1;
            }
            let mut out = FieldSet::default();
            for (pe, count) in &seen {
                if *count > 1 {
                    out.members.insert((*pe).clone());
                }
            }
            for (item, pe) in items.iter().zip(&elements) {
                let Some(pe) = pe.as_ref().filter(|pe| seen.get(pe) == Some(&1)) else {
                    continue;
                };
                let mut below = field_set_walk(item, &list.elem);
                below.this = true;
                put(&mut out, pe, below);
            }
            Below {
                set: out,
                this: false,
            }
        }
        Handler::Map(map) if map.atomic => Below::this(),
        Handler::Map(map) => {
            let Value::Object(fields) = v else {
                return Below::default();
            };
            let mut out = FieldSet::default();
            for (name, value) in fields {
                let mut below = field_set_walk(value, &field_type(map, name));
                let empty = matches!(value, Value::Null)
                    || matches!(value, Value::Object(m) if m.is_empty());
                if empty || !map.fields.contains_key(name) {
                    below.this = true;
                }
                put(&mut out, &PathElement::Field(name.clone()), below);
            }
            Below {
                set: out,
                this: false,
            }
        }
    }
}

/// How two objects differ (`typed.Comparison`): each path is in at most one set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Comparison {
    pub(crate) removed: FieldSet,
    pub(crate) modified: FieldSet,
    pub(crate) added: FieldSet,
}

impl Comparison {
    /// The comparison without the paths in or below `reset` (`FilterFields` with the strategy's
    /// reset fields).
    pub(crate) fn without(self, reset: &FieldSet) -> Self {
        if reset.is_empty() {
            return self;
        }
        Self {
            removed: self.removed.recursive_difference(reset),
            modified: self.modified.recursive_difference(reset),
            added: self.added.recursive_difference(reset),
        }
    }
}

/// A comparison below one node.
#[derive(Default)]
struct Diff {
    removed: Below,
    modified: Below,
    added: Below,
}

impl Diff {
    fn put(&mut self, pe: &PathElement, below: Diff) {
        put(&mut self.removed.set, pe, below.removed);
        put(&mut self.modified.set, pe, below.modified);
        put(&mut self.added.set, pe, below.added);
    }
}

/// Compares `lhs` (the live object) with `rhs` (the new one) (`TypedValue.Compare`).
pub(crate) fn compare(lhs: &Value, rhs: &Value, ty: &Ty) -> Comparison {
    let diff = compare_walk(Some(lhs), Some(rhs), ty);
    Comparison {
        removed: diff.removed.set,
        modified: diff.modified.set,
        added: diff.added.set,
    }
}

/// `compare(lhs, rhs, ty).without(reset)`, comparing only the top-level fields `reset` leaves
/// and skipping the fields equal on both sides (their comparison is empty). The field manager
/// compares every write's old and new object: a status write leaves out `metadata` and `spec`,
/// a main write of a kind with a status subresource leaves out `status`. Takes the general
/// path where the root is not a granular map of two objects or `reset` has nested paths.
pub(crate) fn compare_without(lhs: &Value, rhs: &Value, ty: &Ty, reset: &FieldSet) -> Comparison {
    let atom = ty.atom();
    let root = match (lhs, rhs, pair_handler(&atom, Some(lhs), Some(rhs))) {
        (Value::Object(l), Value::Object(r), (Handler::Map(map), None))
            if !(map.atomic || l.is_empty() && r.is_empty()) && reset.children.is_empty() =>
        {
            Some((l, r, map))
        }
        _ => None,
    };
    let Some((l, r, map)) = root else {
        return compare(lhs, rhs, ty).without(reset);
    };
    let is_reset = |name: &str| {
        reset
            .members
            .iter()
            .any(|pe| matches!(pe, PathElement::Field(field) if field == name))
    };
    let mut out = Diff::default();
    let only_right = r.keys().filter(|name| !l.contains_key(*name));
    for name in l.keys().chain(only_right) {
        let (lv, rv) = (l.get(name), r.get(name));
        if lv == rv || is_reset(name) {
            continue;
        }
        let below = compare_walk(lv, rv, &field_type(map, name));
        out.put(&PathElement::Field(name.clone()), below);
    }
    Comparison {
        removed: out.removed.set,
        modified: out.modified.set,
        added: out.added.set,
    }
}

fn compare_walk(lhs: Option<&Value>, rhs: Option<&Value>, ty: &Ty) -> Diff {
    let atom = ty.atom();
    let (handler, also) = pair_handler(&atom, lhs, rhs);
    let mut out = Diff::default();
    if let Some(lhs_handler) = also {
        compare_handle(lhs_handler, lhs, rhs, &mut out);
    }
    let in_leaf = compare_handle(handler, lhs, rhs, &mut out);
    if !in_leaf {
        match (lhs, rhs) {
            (None, _) => out.added.this = true,
            (_, None) => out.removed.this = true,
            _ => {}
        }
    }
    out
}

fn compare_leaf(lhs: Option<&Value>, rhs: Option<&Value>, out: &mut Diff) {
    match (lhs, rhs) {
        (None, _) => out.added.this = true,
        (_, None) => out.removed.this = true,
        (Some(l), Some(r)) if l != r => out.modified.this = true,
        _ => {}
    }
}

/// Handles one pair with one handler; whether it was a leaf.
fn compare_handle(
    handler: Handler<'_>,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    out: &mut Diff,
) -> bool {
    match handler {
        Handler::Scalar => {
            compare_leaf(lhs, rhs, out);
            true
        }
        Handler::List(list) => {
            let (l, r) = (lhs.and_then(Value::as_array), rhs.and_then(Value::as_array));
            let empty = |x: Option<&Vec<Value>>| x.is_none_or(Vec::is_empty);
            if !list.associative || (empty(l) && empty(r)) {
                compare_leaf(lhs, rhs, out);
                return true;
            }
            compare_items(list, l, r, out);
            false
        }
        Handler::Map(map) => {
            let (l, r) = (
                lhs.and_then(Value::as_object),
                rhs.and_then(Value::as_object),
            );
            let empty = |x: Option<&serde_json::Map<String, Value>>| x.is_none_or(|m| m.is_empty());
            if map.atomic || (empty(l) && empty(r)) {
                compare_leaf(lhs, rhs, out);
                return true;
            }
            let mut visit = |name: &String| {
                let (lv, rv) = (l.and_then(|m| m.get(name)), r.and_then(|m| m.get(name)));
                let below = compare_walk(lv, rv, &field_type(map, name));
                out.put(&PathElement::Field(name.clone()), below);
            };
            for name in l.into_iter().flat_map(|m| m.keys()) {
                visit(name);
            }
            for name in r.into_iter().flat_map(|m| m.keys()) {
                if !l.is_some_and(|m| m.contains_key(name)) {
                    visit(name);
                }
            }
            false
        }
    }
}

/// The items of an associative list by path element, in first-seen order, duplicates kept.
fn index_items<'v>(
    list: &ListType,
    items: Option<&'v Vec<Value>>,
) -> BTreeMap<PathElement, Vec<&'v Value>> {
    let mut out: BTreeMap<PathElement, Vec<&Value>> = BTreeMap::new();
    for item in items.into_iter().flatten() {
        if let Ok(pe) = item_element(list, item) {
            out.entry(pe).or_default().push(item);
        }
    }
    out
}

fn compare_items(
    list: &ListType,
    lhs: Option<&Vec<Value>>,
    rhs: Option<&Vec<Value>>,
    out: &mut Diff,
) {
    let (l, r) = (index_items(list, lhs), index_items(list, rhs));
    let all: std::collections::BTreeSet<&PathElement> = l.keys().chain(r.keys()).collect();
    for pe in all {
        let none = Vec::new();
        let (lv, rv) = (l.get(pe).unwrap_or(&none), r.get(pe).unwrap_or(&none));
        let below = match (lv.len(), rv.len()) {
            (0..=1, 0..=1) => compare_walk(lv.first().copied(), rv.first().copied(), &list.elem),
            (2.., 2..) => {
                let mut d = Diff::default();
                d.modified.this = lv != rv;
                d
            }
            (2.., _) => {
                let mut d = match rv.first() {
                    Some(r) => compare_walk(None, Some(r), &list.elem),
                    None => Diff::default(),
                };
                d.removed.this = true;
                d
            }
            (_, _) => {
                let mut d = match lv.first() {
                    Some(l) => compare_walk(Some(l), None, &list.elem),
                    None => Diff::default(),
                };
                d.added.this = true;
                d
            }
        };
        out.put(pe, below);
    }
}

/// `set` with every declared field that has paths below it also a member
/// (`Set.EnsureNamedFieldsAreMembers`), so removing it removes the field itself.
pub(crate) fn ensure_named_fields_are_members(set: &FieldSet, ty: Option<&Ty>) -> FieldSet {
    let atom = ty.map(Ty::atom);
    let map = atom.as_ref().and_then(|a| a.map.as_ref());
    let list = atom.as_ref().and_then(|a| a.list.as_ref());
    let mut out = FieldSet {
        members: set.members.clone(),
        children: BTreeMap::new(),
    };
    for (pe, child_set) in &set.children {
        let child_ty = match pe {
            PathElement::Field(name) => {
                if map.is_some_and(|m| m.fields.contains_key(name)) {
                    out.members.insert(pe.clone());
                }
                map.map(|m| field_type(m, name))
            }
            PathElement::Key(_) => list.map(|l| l.elem.clone()),
            _ => None,
        };
        out.children.insert(
            pe.clone(),
            ensure_named_fields_are_members(child_set, child_ty.as_ref()),
        );
    }
    out
}
