//! Type checking a parsed rule, as far as the cost estimator needs it: the type of every
//! expression and the overloads of every call (cel-go `checker/checker.go`: the checked AST's
//! type map and reference map), with `self` (and `oldSelf`) typed by the rule's schema node.
//!
//! Calls on a namespace (`sets.contains(a, b)`, `optional.none()`, `format.dns1123Label()`)
//! resolve to the qualified global function, as cel-go's checker rewrites them: their target
//! is no receiver and costs nothing.

use std::collections::HashMap;

use cel::common::ast::{Expr, IdedExpr, LiteralValue};

use super::overloads;
use super::types::Type;

/// A call as checked.
#[derive(Debug)]
pub(crate) struct Call {
    /// The function, qualified when the target was a namespace (`sets.contains`).
    pub(crate) function: String,
    /// Whether the target is a receiver (false for namespaced and global calls).
    pub(crate) member: bool,
    /// The overload ids the arguments fit; one `""` when none is declared (a function of a
    /// library kbr does not know): it is then costed by name and as an O(1) call.
    pub(crate) overloads: Vec<&'static str>,
}

/// The checked rule: types and calls by expression id.
#[derive(Debug, Default)]
pub(crate) struct Checked<'d> {
    pub(crate) types: HashMap<u64, Type<'d>>,
    pub(crate) calls: HashMap<u64, Call>,
}

impl<'d> Checked<'d> {
    /// The type of expression `id` (`dyn` when unknown).
    pub(crate) fn type_of(&self, id: u64) -> Type<'d> {
        self.types.get(&id).cloned().unwrap_or(Type::Dyn)
    }
}

/// Checks `expr` with the variables `variables` (`self`, `oldSelf`).
pub(crate) fn check<'d>(expr: &IdedExpr, variables: &[(&str, Type<'d>)]) -> Checked<'d> {
    let mut checker = Checker {
        scopes: variables
            .iter()
            .map(|(name, t)| ((*name).to_owned(), t.clone()))
            .collect(),
        checked: Checked::default(),
    };
    checker.expr(expr);
    checker.checked
}

struct Checker<'d> {
    /// Variables in scope, innermost last.
    scopes: Vec<(String, Type<'d>)>,
    checked: Checked<'d>,
}

/// The type a type name denotes, e.g. `string` in `type(x) == string`.
fn type_identifier(name: &str) -> Option<Type<'static>> {
    Some(match name {
        "bool" => Type::Bool,
        "int" => Type::Int,
        "uint" => Type::Uint,
        "double" => Type::Double,
        "string" => Type::String,
        "bytes" => Type::Bytes,
        "null_type" => Type::Null,
        "list" => Type::List(Box::new(Type::Dyn)),
        "map" => Type::Map(Box::new(Type::Dyn), Box::new(Type::Dyn)),
        "google.protobuf.Duration" => Type::Duration,
        "google.protobuf.Timestamp" => Type::Timestamp,
        "type" | "dyn" => Type::Dyn,
        _ => return None,
    })
}

/// The dotted name an identifier or a chain of selections on one spells (`a.b.c`).
fn qualified_name(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Ident(name) => Some(name.clone()),
        Expr::Select(select) if !select.test => Some(format!(
            "{}.{}",
            qualified_name(&select.operand.expr)?,
            select.field
        )),
        _ => None,
    }
}

/// The type of field `field` of a value of type `operand`.
fn field_type<'d>(operand: &Type<'d>, field: &str) -> Type<'d> {
    match operand {
        Type::Object(decl) => match &decl.kind {
            super::decl::DeclKind::Object(fields) => {
                fields.get(field).map_or(Type::Dyn, Type::of_decl)
            }
            _ => Type::Dyn,
        },
        Type::Map(_, value) => (**value).clone(),
        _ => Type::Dyn,
    }
}

impl<'d> Checker<'d> {
    fn lookup(&self, name: &str) -> Option<Type<'d>> {
        self.scopes
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.clone())
    }

    fn expr(&mut self, e: &IdedExpr) -> Type<'d> {
        let t = match &e.expr {
            Expr::Literal(literal) => match literal {
                LiteralValue::Boolean(_) => Type::Bool,
                LiteralValue::Bytes(_) => Type::Bytes,
                LiteralValue::Double(_) => Type::Double,
                LiteralValue::Int(_) => Type::Int,
                LiteralValue::Null => Type::Null,
                LiteralValue::String(_) => Type::String,
                LiteralValue::UInt(_) => Type::Uint,
            },
            Expr::Ident(name) => self.lookup(name).unwrap_or_else(|| {
                type_identifier(name).map_or(Type::Dyn, |t| Type::Denoted(Box::new(t)))
            }),
            Expr::Select(select) => {
                let operand = self.expr(&select.operand);
                if select.test {
                    Type::Bool
                } else {
                    field_type(&operand, &select.field)
                }
            }
            Expr::Call(call) => self.call(e.id, call),
            Expr::List(list) => {
                let elements: Vec<Type<'d>> = list.elements.iter().map(|x| self.expr(x)).collect();
                Type::List(Box::new(common(elements)))
            }
            Expr::Map(map) => {
                let mut keys = Vec::new();
                let mut values = Vec::new();
                for entry in &map.entries {
                    if let cel::common::ast::EntryExpr::MapEntry(entry) = &entry.expr {
                        keys.push(self.expr(&entry.key));
                        values.push(self.expr(&entry.value));
                    }
                }
                Type::Map(Box::new(common(keys)), Box::new(common(values)))
            }
            Expr::Struct(structure) => {
                for entry in &structure.entries {
                    if let cel::common::ast::EntryExpr::StructField(field) = &entry.expr {
                        self.expr(&field.value);
                    }
                }
                Type::Dyn
            }
            Expr::Comprehension(comprehension) => self.comprehension(comprehension),
            Expr::Unspecified => Type::Dyn,
        };
        self.checked.types.insert(e.id, t.clone());
        t
    }

    fn call(&mut self, id: u64, call: &cel::common::ast::CallExpr) -> Type<'d> {
        // A namespace rather than a receiver: `sets.contains(..)`, `optional.none()`.
        let namespace = call.target.as_ref().and_then(|target| {
            let name = qualified_name(&target.expr)?;
            let root = name.split('.').next().unwrap_or_default();
            let function = format!("{name}.{}", call.func_name);
            (self.lookup(root).is_none() && overloads::declared(&function, false))
                .then_some(function)
        });
        let (function, target) = match namespace {
            Some(function) => (function, None),
            None => (call.func_name.clone(), call.target.as_deref()),
        };
        let mut args: Vec<Type<'d>> = Vec::new();
        if let Some(target) = target {
            args.push(self.expr(target));
        }
        for arg in &call.args {
            args.push(self.expr(arg));
        }
        let member = target.is_some();
        let (overloads, result) = if function == cel::common::ast::operators::OPT_SELECT {
            // `x.?f`: the optional of the field's type (of the optional's value's field).
            let field = match call.args.get(1).map(|a| &a.expr) {
                Some(Expr::Literal(LiteralValue::String(field))) => field.inner().to_owned(),
                _ => String::new(),
            };
            let operand = match args.first() {
                Some(Type::Optional(inner)) => (**inner).clone(),
                Some(other) => other.clone(),
                None => Type::Dyn,
            };
            let result = Type::Optional(Box::new(field_type(&operand, &field)));
            (vec!["select_optional_field"], result)
        } else {
            match overloads::resolve(&function, member, &args) {
                Some(resolved) if !resolved.ids.is_empty() => (resolved.ids, resolved.result),
                _ => (vec![""], Type::Dyn),
            }
        };
        self.checked.calls.insert(
            id,
            Call {
                function,
                member,
                overloads,
            },
        );
        result
    }

    fn comprehension(&mut self, c: &cel::common::ast::ComprehensionExpr) -> Type<'d> {
        let range = self.expr(&c.iter_range);
        let (first, second) = match &range {
            Type::List(element) => (Type::Int, (**element).clone()),
            Type::Map(key, value) => ((**key).clone(), (**value).clone()),
            _ => (Type::Dyn, Type::Dyn),
        };
        let init = self.expr(&c.accu_init);
        let depth = self.scopes.len();
        self.scopes.push((c.accu_var.clone(), init));
        match &c.iter_var2 {
            Some(second_var) => {
                self.scopes.push((c.iter_var.clone(), first));
                self.scopes.push((second_var.clone(), second));
            }
            None => {
                let single = if matches!(range, Type::List(_)) {
                    second
                } else {
                    first
                };
                self.scopes.push((c.iter_var.clone(), single));
            }
        }
        self.expr(&c.loop_cond);
        let step = self.expr(&c.loop_step);
        self.scopes.truncate(depth);
        // The accumulator takes the step's type (cel-go unifies them): `[]` becomes the
        // list the step builds.
        self.scopes.push((c.accu_var.clone(), step));
        let result = self.expr(&c.result);
        self.scopes.truncate(depth);
        result
    }
}

/// The common type of a literal's elements: theirs when they agree, else `dyn`.
fn common(types: Vec<Type<'_>>) -> Type<'_> {
    let mut types = types.into_iter();
    let Some(first) = types.next() else {
        return Type::Dyn;
    };
    if types.all(|t| t.exact(&first)) {
        first
    } else {
        Type::Dyn
    }
}
