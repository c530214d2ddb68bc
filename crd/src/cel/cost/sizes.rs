//! What the estimator tracks while it walks a rule, and the sizes it derives from it: cel-go
//! `checker/cost.go` (`coster`'s `exprPaths`, `localVars`, `computedSizes`,
//! `computedEntrySizes`; `computeSize`, `computeExprSize`, `computeEntrySize`, `newAstNode`)
//! and the schema's size bounds for field paths (apiextensions-apiserver
//! `pkg/apiserver/schema/cel/compilation.go`, `sizeEstimator`).

use std::collections::{BTreeSet, HashMap};

use cel::common::ast::{Expr, IdedExpr, LiteralValue};

use super::checker::Checked;
use super::decl::{Decl, DeclKind, Maximum, Place};
use super::estimate::{Range, Size, UNKNOWN};

/// The accumulator names of macros (`parser.AccumulatorName`, `HiddenAccumulatorName`).
pub(super) const ACCUMULATORS: &[&str] = &["@result", "__result__"];

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

/// A local or iteration variable (`localVar`).
#[derive(Clone, Debug)]
pub(super) struct LocalVar {
    pub(super) path: Vec<String>,
    pub(super) size: Option<Size>,
    pub(super) entry: Option<EntrySize>,
}

/// What a function estimator sees of an argument or receiver (`checker.AstNode`).
pub(super) struct AstNode<'e, 'd> {
    /// The field path from a variable (`["self", "names", "@items"]`); empty when none.
    pub(super) path: Vec<String>,
    pub(super) ty: super::types::Type<'d>,
    pub(super) expr: Option<&'e IdedExpr>,
    /// The size computed from the expression (`ComputedSize`).
    pub(super) computed: Option<Size>,
}

/// What the estimator tracks while it walks a rule (cel-go `coster`'s state): field paths,
/// local variables, computed sizes, and which unbounded declarations it read.
pub(super) struct Tracker<'c, 'd> {
    pub(super) checked: &'c Checked<'d>,
    pub(super) root: &'d Decl,
    /// A declaration treated as bounded to one element: how the caller finds which missing
    /// bound matters.
    pub(super) assume_bounded: Option<&'c Place>,
    pub(super) paths: HashMap<u64, Vec<String>>,
    pub(super) locals: HashMap<String, Vec<LocalVar>>,
    pub(super) sizes: HashMap<u64, Size>,
    pub(super) entry_sizes: HashMap<u64, EntrySize>,
    /// Declarations whose size fell back to the per-request bound and was read.
    pub(super) unbounded_reads: BTreeSet<(Place, Maximum)>,
}

impl<'c, 'd> Tracker<'c, 'd> {
    /// Tracks the walk over a rule checked as `checked` on a node of declared type `root`.
    pub(super) fn new(
        checked: &'c Checked<'d>,
        root: &'d Decl,
        assume_bounded: Option<&'c Place>,
    ) -> Self {
        Self {
            checked,
            root,
            assume_bounded,
            paths: HashMap::new(),
            locals: HashMap::new(),
            sizes: HashMap::new(),
            entry_sizes: HashMap::new(),
            unbounded_reads: BTreeSet::new(),
        }
    }

    /// Binds the local variable `name` to `e` (`pushLocalVar`): its path, size and entries.
    pub(super) fn push_local(&mut self, name: &str, e: &IdedExpr) {
        let local = LocalVar {
            path: self.path(e),
            size: self.compute_size(e),
            entry: self.entry_size(e),
        };
        self.locals.entry(name.to_owned()).or_default().push(local);
    }

    /// The innermost binding of `name`.
    pub(super) fn peek(&self, name: &str) -> Option<&LocalVar> {
        self.locals.get(name).and_then(|stack| stack.last())
    }

    /// Ends the innermost binding of `name`.
    pub(super) fn pop(&mut self, name: &str) {
        if let Some(stack) = self.locals.get_mut(name) {
            stack.pop();
        }
    }

    /// The field path of `e` (`getPath`).
    pub(super) fn path(&self, e: &IdedExpr) -> Vec<String> {
        if let Expr::Ident(name) = &e.expr
            && let Some(local) = self.peek(name)
        {
            return local.path.clone();
        }
        self.paths.get(&e.id).cloned().unwrap_or_default()
    }

    /// Records the field path of `e` (`addPath`).
    pub(super) fn set_path(&mut self, e: &IdedExpr, path: Vec<String>) {
        self.paths.insert(e.id, path);
    }

    /// Records the size of `e`, when known (`setSize`).
    pub(super) fn set_size(&mut self, e: &IdedExpr, size: Option<Size>) {
        if let Some(size) = size {
            self.sizes.insert(e.id, size);
        }
    }

    /// Records the entry sizes of `e`, when known (`setEntrySize`).
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

    /// The size of a node as the libraries' estimators read it: computed, else from the
    /// schema, else unknown (`sizeEstimate`, `estimateSize`).
    pub(super) fn size_of(&mut self, node: &AstNode<'_, '_>) -> Size {
        match node.computed {
            Some(size) => size,
            None => self.estimate_size(&node.path).unwrap_or(UNKNOWN),
        }
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
