//! Field sets, and their `FieldsV1` encoding in `metadata.managedFields`.
//!
//! Mirrors structured-merge-diff v6 `fieldpath/set.go` (the set as a trie of members and
//! children, and its set algebra) and `fieldpath/serialize.go` (`FieldsV1`: one key per path
//! element, `"."` for a path that is both a member and a prefix).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

pub(crate) use super::element::{Path, PathElement};

/// A set of field paths (`fieldpath.Set`): the paths ending here (`members`) and the sets
/// below each element (`children`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FieldSet {
    pub(super) members: BTreeSet<PathElement>,
    pub(super) children: BTreeMap<PathElement, FieldSet>,
}

impl FieldSet {
    /// The set of `paths`.
    pub(crate) fn of(paths: &[Path]) -> Self {
        let mut set = Self::default();
        for p in paths {
            set.insert(p);
        }
        set
    }

    /// Adds `path` (nothing for the empty path).
    pub(crate) fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    /// Whether `path` is a member.
    #[cfg(test)]
    pub(crate) fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// Whether no path is in the set.
    pub(crate) fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.values().all(Self::is_empty)
    }

    /// Whether the set has no node at all (no members, no children, not even empty ones): the
    /// identity of every operation, where [`FieldSet::is_empty`] also admits empty children.
    pub(crate) fn is_bare(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    /// The paths below `pe`, without it (`WithPrefix`).
    pub(crate) fn with_prefix(&self, pe: &PathElement) -> Option<&FieldSet> {
        self.children.get(pe)
    }

    /// Paths in either set.
    pub(crate) fn union(&self, other: &Self) -> Self {
        let mut out = self.clone();
        out.add(other);
        out
    }

    /// Adds the paths of `other`, in place: `*self = self.union(other)` without copying
    /// `self` (the write path's sets are rebuilt on every write; see [`FieldSet::subtract`]).
    pub(crate) fn add(&mut self, other: &Self) {
        if self.is_bare() {
            self.clone_from(other);
            return;
        }
        self.members.extend(other.members.iter().cloned());
        for (pe, child) in &other.children {
            match self.children.get_mut(pe) {
                Some(mine) => mine.add(child),
                None => {
                    self.children.insert(pe.clone(), child.clone());
                }
            }
        }
    }

    /// Removes the paths of `other`, in place: `*self = self.difference(other)` without
    /// copying what stays. Children left empty are dropped, as [`FieldSet::difference`] drops
    /// them, so both give equal sets.
    pub(crate) fn subtract(&mut self, other: &Self) {
        if other.is_bare() {
            return;
        }
        self.members.retain(|m| !other.members.contains(m));
        self.children
            .retain(|pe, child| match other.children.get(pe) {
                None => true,
                Some(theirs) => {
                    child.subtract(theirs);
                    !child.is_empty()
                }
            });
    }

    /// Paths in both sets.
    pub(crate) fn intersection(&self, other: &Self) -> Self {
        let members = self.members.intersection(&other.members).cloned().collect();
        let children = self
            .children
            .iter()
            .filter_map(|(pe, child)| {
                let both = child.intersection(other.children.get(pe)?);
                (!both.is_empty()).then(|| (pe.clone(), both))
            })
            .collect();
        Self { members, children }
    }

    /// Paths in `self` but not in `other`.
    pub(crate) fn difference(&self, other: &Self) -> Self {
        let members = self.members.difference(&other.members).cloned().collect();
        let children = self
            .children
            .iter()
            .filter_map(|(pe, child)| match other.children.get(pe) {
                None => Some((pe.clone(), child.clone())),
                Some(theirs) => {
                    let rest = child.difference(theirs);
                    (!rest.is_empty()).then(|| (pe.clone(), rest))
                }
            })
            .collect();
        Self { members, children }
    }

    /// Paths in `self` that neither are in `other` nor lie below one of its members.
    pub(crate) fn recursive_difference(&self, other: &Self) -> Self {
        let members = self.members.difference(&other.members).cloned().collect();
        let children = self
            .children
            .iter()
            .filter(|(pe, _)| !other.members.contains(pe))
            .filter_map(|(pe, child)| match other.children.get(pe) {
                None => Some((pe.clone(), child.clone())),
                Some(theirs) => {
                    let rest = child.recursive_difference(theirs);
                    (!rest.is_empty()).then(|| (pe.clone(), rest))
                }
            })
            .collect();
        Self { members, children }
    }

    /// Every path, members before the paths below them, in the set's order (`Iterate`).
    pub(crate) fn paths(&self) -> Vec<Path> {
        fn walk(set: &FieldSet, prefix: &mut Path, out: &mut Vec<Path>) {
            for m in &set.members {
                let mut p = prefix.clone();
                p.push(m.clone());
                out.push(p);
            }
            for (pe, child) in &set.children {
                prefix.push(pe.clone());
                walk(child, prefix, out);
                prefix.pop();
            }
        }
        let mut out = Vec::new();
        walk(self, &mut Vec::new(), &mut out);
        out
    }

    /// The `FieldsV1` object (`Set.ToJSON`).
    pub(crate) fn to_fields_v1(&self) -> Value {
        let mut out = Map::new();
        for m in &self.members {
            if self.children.get(m).is_none_or(FieldSet::is_empty) {
                out.insert(m.serialize(), Value::Object(Map::new()));
            }
        }
        for (pe, child) in &self.children {
            if child.is_empty() {
                continue;
            }
            let mut inner = match child.to_fields_v1() {
                Value::Object(map) => map,
                _ => Map::new(),
            };
            if self.members.contains(pe) {
                inner.insert(".".into(), Value::Object(Map::new()));
            }
            out.insert(pe.serialize(), Value::Object(inner));
        }
        Value::Object(out)
    }

    /// Reads a `FieldsV1` object (`Set.FromJSON`): unknown element types are dropped.
    ///
    /// # Errors
    /// A text naming what is malformed.
    pub(crate) fn from_fields_v1(fields: &Value) -> Result<Self, String> {
        let Value::Object(map) = fields else {
            return Err("fieldsV1 is not an object".into());
        };
        Ok(Self::read(map)?.0)
    }

    /// The set below a `FieldsV1` node, and whether the node's own path is a member (it has
    /// a `"."` or nothing below it).
    fn read(map: &Map<String, Value>) -> Result<(Self, bool), String> {
        let mut set = Self::default();
        let mut is_member = false;
        for (key, value) in map {
            if key == "." {
                is_member = true;
                continue;
            }
            let Some(pe) = PathElement::parse(key)? else {
                continue;
            };
            let inner = match value {
                Value::Object(inner) => inner,
                _ => return Err(format!("the value of {key:?} is not an object")),
            };
            let (child, child_is_member) = Self::read(inner)?;
            if child_is_member {
                set.members.insert(pe.clone());
            }
            if !child.is_empty() {
                set.children.insert(pe, child);
            }
        }
        let has_children = !set.members.is_empty() || !set.children.is_empty();
        Ok((set, is_member || !has_children))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::element::path_text;
    use super::*;

    fn f(name: &str) -> PathElement {
        PathElement::Field(name.into())
    }

    fn k(name: &str, value: Value) -> PathElement {
        PathElement::Key(vec![(name.into(), value)])
    }

    #[test]
    fn fields_v1_round_trips_members_prefixes_and_keys() -> Result<(), String> {
        // fieldpath/serialize_test.go: a path that is a member and a prefix gets ".".
        let set = FieldSet::of(&[
            vec![f("spec")],
            vec![f("spec"), f("replicas")],
            vec![f("spec"), f("entries"), k("name", json!("a"))],
            vec![f("spec"), f("entries"), k("name", json!("a")), f("value")],
            vec![f("spec"), f("tags"), PathElement::Value(json!("x"))],
        ]);
        let encoded = set.to_fields_v1();
        assert_eq!(
            encoded,
            json!({"f:spec": {".": {}, "f:replicas": {}, "f:entries": {
                "k:{\"name\":\"a\"}": {".": {}, "f:value": {}}},
                "f:tags": {"v:\"x\"": {}}}})
        );
        assert_eq!(FieldSet::from_fields_v1(&encoded)?, set);
        Ok(())
    }

    #[test]
    fn keys_serialize_sorted_by_name_with_go_escaping() {
        let pe = PathElement::Key(vec![
            ("containerPort".into(), json!(80)),
            ("protocol".into(), json!("TCP")),
        ]);
        assert_eq!(pe.serialize(), r#"k:{"containerPort":80,"protocol":"TCP"}"#);
        assert_eq!(pe.to_string(), r#"[containerPort=80,protocol="TCP"]"#);
        assert_eq!(
            PathElement::Value(json!("<a&b>")).serialize(),
            r#"v:"\u003ca\u0026b\u003e""#
        );
        let parsed = PathElement::parse(r#"k:{"protocol":"TCP","containerPort":80}"#);
        assert_eq!(parsed, Ok(Some(pe)));
        assert_eq!(PathElement::parse("z:unknown"), Ok(None));
    }

    #[test]
    fn order_is_fields_keys_values_indexes_and_numbers_compare_numerically() {
        let mut elements = [
            PathElement::Index(0),
            PathElement::Value(json!("a")),
            k("name", json!("b")),
            f("z"),
            PathElement::Value(json!(2)),
            PathElement::Value(json!(1.5)),
        ];
        elements.sort();
        let shown: Vec<String> = elements.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [".z", "[name=\"b\"]", "[=1.5]", "[=2]", "[=\"a\"]", "[0]"]
        );
    }

    #[test]
    fn set_algebra_follows_set_go() {
        // fieldpath/set_test.go: RecursiveDifference drops everything below a member.
        let a = FieldSet::of(&[vec![f("a"), f("b")], vec![f("a"), f("c")], vec![f("d")]]);
        let b = FieldSet::of(&[vec![f("a")], vec![f("d")]]);
        assert_eq!(a.recursive_difference(&b), FieldSet::default());
        assert_eq!(
            a.difference(&b),
            a.difference(&FieldSet::of(&[vec![f("d")]]))
        );
        let c = FieldSet::of(&[vec![f("a"), f("b")]]);
        assert_eq!(a.intersection(&c), c);
        assert_eq!(
            a.difference(&c),
            FieldSet::of(&[vec![f("a"), f("c")], vec![f("d")]])
        );
        assert!(a.union(&b).has(&[f("a")]));
        // The in-place forms give the very sets the copying ones give.
        for (x, y) in [
            (&a, &b),
            (&b, &a),
            (&a, &c),
            (&c, &a),
            (&c, &FieldSet::default()),
        ] {
            let mut added = x.clone();
            added.add(y);
            assert_eq!(added, x.union(y));
            let mut subtracted = x.clone();
            subtracted.subtract(y);
            assert_eq!(subtracted, x.difference(y));
        }
        let mut from_empty = FieldSet::default();
        from_empty.add(&a);
        assert_eq!(from_empty, a);
        assert_eq!(
            path_text(&[f("spec"), k("name", json!("a"))]),
            ".spec[name=\"a\"]"
        );
    }
}
