//! The cost estimator's walk over a checked rule: cel-go `checker/cost.go` (`coster`): the
//! cost of identifiers, selections, literals and comprehensions (`bind` included; calls in
//! [`super::functions`]) and the field paths it tracks through the schema (`@items`, `@keys`,
//! `@values`, `@indices`), which [`super::sizes`] turns into sizes.
//!
//! Presence tests (`has(x.f)`) cost nothing beyond their operand: Kubernetes sets
//! `checker.PresenceTestHasCost(false)` (apiserver `pkg/cel/environment/base.go`).

use std::collections::{BTreeSet, HashMap};

use cel::common::ast::{ComprehensionExpr, Expr, IdedExpr, LiteralValue};

use super::checker::Checked;
use super::decl::{Decl, Maximum, Place};
use super::estimate::{Cost, Range, Size};
use super::functions;
use super::sizes::EntrySize;
use super::types::Kind;

/// `SelectAndIdentCost`, `ConstCost`, `ListCreateBaseCost`, `MapCreateBaseCost`,
/// `StructCreateBaseCost` (cel-go `common/cost.go`).
const SELECT_AND_IDENT_COST: Cost = Range::fixed(1);
const CONST_COST: Cost = Range::fixed(0);
pub(super) const LIST_CREATE_BASE_COST: u64 = 10;
const MAP_CREATE_BASE_COST: Cost = Range::fixed(30);
const STRUCT_CREATE_BASE_COST: Cost = Range::fixed(40);

/// The accumulator names of macros (`parser.AccumulatorName`, `HiddenAccumulatorName`).
pub(super) const ACCUMULATORS: &[&str] = &["@result", "__result__"];

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

/// The estimator of one rule.
pub(super) struct Coster<'c, 'd> {
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

impl<'c, 'd> Coster<'c, 'd> {
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

    /// The cost of `e` (`coster.cost`).
    pub(super) fn cost(&mut self, e: &IdedExpr) -> Cost {
        match &e.expr {
            Expr::Literal(_) => CONST_COST,
            Expr::Ident(name) => {
                let path = match self.peek(name) {
                    Some(local) => local.path.clone(),
                    None => vec![name.clone()],
                };
                self.paths.insert(e.id, path);
                SELECT_AND_IDENT_COST
            }
            Expr::Select(select) => {
                if select.test {
                    // presence test: no cost of its own (PresenceTestHasCost(false))
                    return self.cost(&select.operand);
                }
                let mut sum = self.cost(&select.operand);
                let kind = self.checked.type_of(select.operand.id).kind();
                if matches!(kind, Kind::Map | Kind::Struct) {
                    sum = sum.add(SELECT_AND_IDENT_COST);
                }
                let mut path = self.path(&select.operand);
                path.push(select.field.clone());
                self.paths.insert(e.id, path);
                sum
            }
            Expr::Call(_) => functions::cost_call(self, e),
            Expr::List(list) => {
                let mut sum = Range::fixed(0);
                let mut item = Size {
                    min: if list.elements.is_empty() {
                        0
                    } else {
                        u64::MAX
                    },
                    max: 0,
                };
                for element in &list.elements {
                    sum = sum.add(self.cost(element));
                    item = item.union(self.size_or_unknown(element));
                }
                self.entry_sizes.insert(
                    e.id,
                    EntrySize {
                        list: true,
                        key: Range::fixed(1),
                        value: item,
                    },
                );
                sum.add(Range::fixed(LIST_CREATE_BASE_COST))
            }
            Expr::Map(map) => {
                let mut sum = Range::fixed(0);
                let empty = map.entries.is_empty();
                let start = Size {
                    min: if empty { 0 } else { u64::MAX },
                    max: 0,
                };
                let (mut key, mut value) = (start, start);
                for entry in &map.entries {
                    if let cel::common::ast::EntryExpr::MapEntry(entry) = &entry.expr {
                        sum = sum.add(self.cost(&entry.key)).add(self.cost(&entry.value));
                        key = key.union(self.size_or_unknown(&entry.key));
                        value = value.union(self.size_or_unknown(&entry.value));
                    }
                }
                self.entry_sizes.insert(
                    e.id,
                    EntrySize {
                        list: false,
                        key,
                        value,
                    },
                );
                sum.add(MAP_CREATE_BASE_COST)
            }
            Expr::Struct(structure) => {
                let mut sum = Range::fixed(0);
                for entry in &structure.entries {
                    if let cel::common::ast::EntryExpr::StructField(field) = &entry.expr {
                        sum = sum.add(self.cost(&field.value));
                    }
                }
                sum.add(STRUCT_CREATE_BASE_COST)
            }
            Expr::Comprehension(c) if is_bind(c) => self.bind(e, c),
            Expr::Comprehension(c) => self.comprehension(e, c),
            Expr::Unspecified => Range::fixed(0),
        }
    }

    fn comprehension(&mut self, e: &IdedExpr, c: &ComprehensionExpr) -> Cost {
        let mut sum = self.cost(&c.iter_range).add(self.cost(&c.accu_init));
        self.push_local(&c.accu_var, &c.accu_init);
        let entry = self.entry_size(&c.iter_range);
        let list = match entry {
            Some(entry) => entry.list,
            None => self.checked.type_of(c.iter_range.id).kind() == Kind::List,
        };
        let range_path = self.path(&c.iter_range);
        let with = |sub: &str| {
            let mut path = range_path.clone();
            path.push(sub.to_owned());
            path
        };
        let iteration = match &c.iter_var2 {
            Some(second) => {
                // pushIterKey and pushIterValue
                let key = LocalVar {
                    path: with(if list { "@indices" } else { "@keys" }),
                    size: entry.map(|e| e.key),
                    entry: None,
                };
                let value = LocalVar {
                    path: with(if list { "@items" } else { "@values" }),
                    size: entry.map(|e| e.value),
                    entry: None,
                };
                vec![(c.iter_var.clone(), key), (second.clone(), value)]
            }
            None => {
                // pushIterSingle: the items of a list, the keys of a map
                let single = LocalVar {
                    path: with(if list { "@items" } else { "@keys" }),
                    size: entry.map(|e| if list { e.value } else { e.key }),
                    entry: None,
                };
                vec![(c.iter_var.clone(), single)]
            }
        };
        for (name, local) in &iteration {
            self.locals
                .entry(name.clone())
                .or_default()
                .push(local.clone());
        }
        let loop_cost = self.cost(&c.loop_cond);
        let step_cost = self.cost(&c.loop_step);
        for (name, _) in &iteration {
            self.pop(name);
        }
        sum = sum.add(self.cost(&c.result));
        self.pop(&c.accu_var);
        let range_count = self.size_or_unknown(&c.iter_range);
        sum = sum.add(range_count.multiply(step_cost.add(loop_cost)));
        match &c.accu_init.expr {
            Expr::Literal(_) => {
                if let Some(size) = self.compute_size(&c.accu_init) {
                    self.sizes.insert(e.id, size);
                }
            }
            Expr::List(_) | Expr::Map(_) => {
                self.sizes.insert(e.id, range_count);
                if let Some(step) = self.entry_size(&c.loop_step) {
                    self.entry_sizes.insert(e.id, step);
                }
            }
            _ => {}
        }
        sum
    }

    fn bind(&mut self, e: &IdedExpr, c: &ComprehensionExpr) -> Cost {
        // Binds are lazy: the (empty) range and the initializer are still costed.
        let mut sum = self.cost(&c.iter_range).add(self.cost(&c.accu_init));
        self.push_local(&c.accu_var, &c.accu_init);
        sum = sum.add(self.cost(&c.result));
        self.pop(&c.accu_var);
        if let Some(size) = self.compute_size(&c.result) {
            self.sizes.insert(e.id, size);
        }
        if let Some(entry) = self.entry_size(&c.result) {
            self.entry_sizes.insert(e.id, entry);
        }
        sum
    }

    fn push_local(&mut self, name: &str, e: &IdedExpr) {
        let local = LocalVar {
            path: self.path(e),
            size: self.compute_size(e),
            entry: self.entry_size(e),
        };
        self.locals.entry(name.to_owned()).or_default().push(local);
    }

    pub(super) fn peek(&self, name: &str) -> Option<&LocalVar> {
        self.locals.get(name).and_then(|stack| stack.last())
    }

    fn pop(&mut self, name: &str) {
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

    pub(super) fn set_path(&mut self, e: &IdedExpr, path: Vec<String>) {
        self.paths.insert(e.id, path);
    }
}

/// `cel.bind(..)` and the binds macros make: an empty range, a false loop condition and an
/// accumulator that is not the macros' (`isBind`).
fn is_bind(c: &ComprehensionExpr) -> bool {
    matches!(&c.iter_range.expr, Expr::List(list) if list.elements.is_empty())
        && matches!(c.loop_cond.expr, Expr::Literal(LiteralValue::Boolean(ref b)) if !*b.inner())
        && c.accu_var != ACCUMULATORS[0]
}
