//! Sizes in the estimator (cel-go `checker/cost.go`: `computeSize`, `computeExprSize`,
//! `computeEntrySize`, `entrySizeEstimate`) and the schema's size bounds for field paths
//! (apiextensions-apiserver `pkg/apiserver/schema/cel/compilation.go`, `sizeEstimator`).

use cel::common::ast::{Expr, IdedExpr, LiteralValue};

use super::coster::{ACCUMULATORS, AstNode, Coster};
use super::decl::DeclKind;
use super::estimate::{Range, Size, UNKNOWN};

/// The size of a container's keys (or indices) and values (`entrySizeEstimate`).
#[derive(Clone, Copy, Debug)]
pub(super) struct EntrySize {
    pub(super) list: bool,
    pub(super) key: Size,
    pub(super) value: Size,
}

impl EntrySize {
    /// Both entry sizes covered, the container kind of `a` (`entrySizeEstimate.union`).
    pub(super) fn union_of(a: Option<Self>, b: Option<Self>) -> Option<Self> {
        let (a, b) = (a?, b?);
        Some(Self {
            list: a.list,
            key: a.key.union(b.key),
            value: a.value.union(b.value),
        })
    }
}

impl<'d> Coster<'_, 'd> {
    pub(super) fn set_size(&mut self, e: &IdedExpr, size: Option<Size>) {
        if let Some(size) = size {
            self.sizes.insert(e.id, size);
        }
    }

    pub(super) fn set_entry_size(&mut self, e: &IdedExpr, entry: Option<EntrySize>) {
        if let Some(entry) = entry {
            self.entry_sizes.insert(e.id, entry);
        }
    }

    /// `newAstNode`: what a function estimator sees of `e`.
    pub(super) fn node<'e>(&mut self, e: &'e IdedExpr) -> AstNode<'e, 'd> {
        let mut path = self.path(e);
        if path
            .first()
            .is_some_and(|first| ACCUMULATORS.contains(&first.as_str()))
        {
            path.clear();
        }
        AstNode {
            path,
            ty: self.checked.type_of(e.id),
            expr: Some(e),
            computed: self.compute_size(e),
        }
    }

    /// `sizeOrUnknown` of an expression.
    pub(super) fn size_or_unknown(&mut self, e: &IdedExpr) -> Size {
        self.compute_size(e).unwrap_or(UNKNOWN)
    }

    /// The size of `e` (`computeSize`): computed before, of a literal, from the schema, of a
    /// scalar type, or of a local variable.
    pub(super) fn compute_size(&mut self, e: &IdedExpr) -> Option<Size> {
        if let Some(size) = self.sizes.get(&e.id) {
            return Some(*size);
        }
        if let Some(size) = literal_size(e) {
            return Some(size);
        }
        let path = self.path(e);
        if let Some(size) = self.estimate_size(&path) {
            self.sizes.insert(e.id, size);
            return Some(size);
        }
        if self.checked.type_of(e.id).is_scalar() {
            return Some(Range::fixed(1));
        }
        if let Expr::Ident(name) = &e.expr {
            return self.peek(name).and_then(|local| local.size);
        }
        None
    }

    /// The entry sizes of a container expression (`computeEntrySize`).
    pub(super) fn entry_size(&self, e: &IdedExpr) -> Option<EntrySize> {
        if let Some(entry) = self.entry_sizes.get(&e.id) {
            return Some(*entry);
        }
        if let Expr::Ident(name) = &e.expr {
            return self.peek(name).and_then(|local| local.entry);
        }
        None
    }

    /// The schema's size bound for a field path (`sizeEstimator.EstimateSize`): the path's
    /// first element (the variable) is skipped and the rest walks the declared types from the
    /// rule's node; `[0, MaxElements]`.
    pub(super) fn estimate_size(&mut self, path: &[String]) -> Option<Size> {
        let (_, rest) = path.split_first()?;
        let mut decl = self.root;
        let string_key;
        for step in rest {
            decl = match (step.as_str(), &decl.kind) {
                ("@items", DeclKind::List(items)) => items,
                ("@values", DeclKind::Map(values)) => values,
                // Map keys are plain strings: MaxElements 0.
                ("@keys", DeclKind::Map(_)) => {
                    string_key = Some(Range::fixed(0));
                    return string_key;
                }
                (name, DeclKind::Object(fields)) => fields.get(name)?,
                _ => return None,
            };
        }
        if self.assume_bounded == Some(&decl.place) {
            return Some(Size { min: 0, max: 1 });
        }
        if let Some(keyword) = decl.unbounded {
            self.unbounded_reads.insert((decl.place.clone(), keyword));
        }
        Some(Size {
            min: 0,
            max: u64::try_from(decl.max_elements).unwrap_or(0),
        })
    }
}

/// The size of a literal (`computeExprSize`): characters of a string, bytes, 1 for other
/// scalars, elements of a list or map literal.
fn literal_size(e: &IdedExpr) -> Option<Size> {
    let size = match &e.expr {
        Expr::Literal(LiteralValue::String(s)) => s.inner().chars().count(),
        Expr::Literal(LiteralValue::Bytes(b)) => b.inner().len(),
        Expr::Literal(_) => 1,
        Expr::List(list) => list.elements.len(),
        Expr::Map(map) => map.entries.len(),
        _ => return None,
    };
    Some(Range::fixed(u64::try_from(size).unwrap_or(u64::MAX)))
}
