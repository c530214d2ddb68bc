//! What kube-apiserver refuses when it compiles a rule, beyond syntax: cel-go's checker and
//! program planner, as far as they can be told without types.
//!
//! - references to names the environment does not declare, as cel-go's checker reports
//!   them (`checker/checker.go`: `undeclared reference to '<name>' (in container '')`, at the
//!   identifier, or at the `(` of a call), all of them, sorted by position;
//! - a regular-expression literal that does not compile: `matches`'s is refused by
//!   `cel.ValidateRegexLiterals` (`invalid matches argument`), `find`'s and `findAll`'s when
//!   the program is planned (`k8s.io/apiserver/pkg/cel/library/regex.go`'s
//!   `cel.OptimizeRegex`: `program instantiation failed: error parsing regexp: ...`);
//! - a rule whose result is plainly not a bool (a literal, a list or map, arithmetic, a
//!   conversion), which `apiextensions-apiserver/pkg/apiserver/schema/cel/compilation.go`
//!   refuses with `cel expression must evaluate to a bool`.
//!
//! Type errors (`found no matching overload for ...`) need cel-go's type checker and are not
//! modelled: such a rule is installed, and fails when evaluated.

use std::collections::BTreeSet;

use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue, operators};

use super::declarations::{FUNCTIONS, NOT_BOOL_FUNCTIONS, TYPES, VARIABLES};
use super::types::go_regex;

/// An error with its position in the source (1-based line and column).
#[derive(Debug, PartialEq)]
pub(crate) struct Located {
    pub(crate) line: usize,
    pub(crate) column: usize,
    pub(crate) message: String,
}

/// Why a parsed rule is refused.
#[derive(Debug, PartialEq)]
pub(crate) enum Refusal {
    /// cel-go's checker issues (`compilation failed: ...`).
    Issues(Vec<Located>),
    /// The program cannot be planned (`program instantiation failed: ...`).
    Instantiation(String),
}

/// The line and column of character offset `offset` of `source`.
pub(crate) fn position(source: &str, offset: usize) -> (usize, usize) {
    let (mut line, mut column) = (1, 1);
    for c in source.chars().take(offset) {
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    (line, column)
}

struct Checker<'a> {
    source: &'a str,
    info: &'a cel::common::ast::SourceInfo,
    /// Comprehension variables in scope, innermost last.
    scope: Vec<String>,
    issues: Vec<Located>,
    instantiation: Option<String>,
}

impl Checker<'_> {
    fn issue(&mut self, id: u64, message: String) {
        let offset = self
            .info
            .offset_for(id)
            .map_or(0, |(start, _)| start as usize);
        let (line, column) = position(self.source, offset);
        self.issues.push(Located {
            line,
            column,
            message,
        });
    }

    fn undeclared(&mut self, id: u64, name: &str) {
        self.issue(
            id,
            format!("undeclared reference to '{name}' (in container '')"),
        );
    }

    fn declared(&self, name: &str) -> bool {
        self.scope.iter().any(|v| v == name) || VARIABLES.contains(&name) || TYPES.contains(&name)
    }

    /// `a.b.c` as `"a.b.c"` when the expression is a chain of selects on an identifier.
    fn qualified(expr: &IdedExpr) -> Option<String> {
        match &expr.expr {
            Expr::Ident(name) => Some(name.clone()),
            Expr::Select(select) if !select.test => Some(format!(
                "{}.{}",
                Self::qualified(&select.operand)?,
                select.field
            )),
            _ => None,
        }
    }

    fn check(&mut self, expr: &IdedExpr) {
        match &expr.expr {
            Expr::Ident(name) => {
                if !self.declared(name) {
                    self.undeclared(expr.id, name);
                }
            }
            Expr::Select(select) => {
                let declared_name = Self::qualified(expr).is_some_and(|q| self.declared(&q));
                if !declared_name {
                    self.check(&select.operand);
                }
            }
            Expr::Call(call) => self.call(expr.id, call),
            Expr::List(list) => list.elements.iter().for_each(|e| self.check(e)),
            Expr::Map(map) => {
                for entry in &map.entries {
                    if let EntryExpr::MapEntry(entry) = &entry.expr {
                        self.check(&entry.key);
                        self.check(&entry.value);
                    }
                }
            }
            Expr::Struct(s) => {
                for entry in &s.entries {
                    if let EntryExpr::StructField(field) = &entry.expr {
                        self.check(&field.value);
                    }
                }
            }
            Expr::Comprehension(c) => {
                self.check(&c.iter_range);
                self.check(&c.accu_init);
                self.scope.push(c.accu_var.clone());
                self.scope.push(c.iter_var.clone());
                self.scope.extend(c.iter_var2.clone());
                self.check(&c.loop_cond);
                self.check(&c.loop_step);
                let pushed = 2 + usize::from(c.iter_var2.is_some());
                self.scope.truncate(self.scope.len() - pushed);
                self.scope.push(c.accu_var.clone());
                self.check(&c.result);
                self.scope.pop();
            }
            Expr::Literal(_) | Expr::Unspecified => {}
        }
    }

    fn call(&mut self, id: u64, call: &cel::common::ast::CallExpr) {
        let name = call.func_name.as_str();
        let internal = name.starts_with('_')
            || name.starts_with('@')
            || name.starts_with('!')
            || name.starts_with('-');
        // A qualified global function, e.g. `sets.contains(..)` or `format.dns1123Label()`.
        let qualified = call
            .target
            .as_deref()
            .and_then(Self::qualified)
            .map(|q| format!("{q}.{name}"))
            .filter(|q| FUNCTIONS.contains(&q.as_str()));
        match (&call.target, qualified) {
            (_, Some(_)) => {}
            (Some(target), None) => {
                self.check(target);
                if !internal && !FUNCTIONS.contains(&name) {
                    self.undeclared(id, name);
                }
            }
            (None, None) => {
                if !internal && !FUNCTIONS.contains(&name) {
                    self.undeclared(id, name);
                }
            }
        }
        call.args.iter().for_each(|a| self.check(a));
        self.regex_literal(name, call);
    }

    /// `matches`, `find` and `findAll` with a pattern literal that does not compile.
    fn regex_literal(&mut self, name: &str, call: &cel::common::ast::CallExpr) {
        let pattern = match (name, call.target.is_some(), call.args.as_slice()) {
            ("matches" | "find" | "findAll", true, [pattern, ..]) => pattern,
            ("matches", false, [_, pattern]) => pattern,
            _ => return,
        };
        let Expr::Literal(LiteralValue::String(text)) = &pattern.expr else {
            return;
        };
        if let Err(error) = go_regex::compile(text.inner()) {
            if name == "matches" {
                self.issue(pattern.id, "invalid matches argument".to_owned());
            } else if self.instantiation.is_none() {
                self.instantiation = Some(error);
            }
        }
    }
}

/// Checks a parsed rule (or message expression) of `source`.
pub(crate) fn check(
    source: &str,
    expr: &IdedExpr,
    info: &cel::common::ast::SourceInfo,
) -> Result<(), Refusal> {
    let mut checker = Checker {
        source,
        info,
        scope: Vec::new(),
        issues: Vec::new(),
        instantiation: None,
    };
    checker.check(expr);
    if !checker.issues.is_empty() {
        let mut seen = BTreeSet::new();
        let mut issues = checker.issues;
        issues.sort_by_key(|i| (i.line, i.column));
        issues.retain(|i| seen.insert((i.line, i.column, i.message.clone())));
        return Err(Refusal::Issues(issues));
    }
    match checker.instantiation {
        Some(error) => Err(Refusal::Instantiation(error)),
        None => Ok(()),
    }
}

/// Whether the expression's value is plainly not a bool (so not a valid rule).
pub(crate) fn plainly_not_bool(expr: &IdedExpr) -> bool {
    match &expr.expr {
        Expr::Literal(LiteralValue::Boolean(_)) => false,
        Expr::Literal(_) | Expr::List(_) | Expr::Map(_) => true,
        Expr::Call(call) => {
            matches!(
                call.func_name.as_str(),
                operators::ADD
                    | operators::SUBSTRACT
                    | operators::MULTIPLY
                    | operators::DIVIDE
                    | operators::MODULO
                    | operators::NEGATE
            ) || NOT_BOOL_FUNCTIONS.contains(&call.func_name.as_str())
        }
        _ => false,
    }
}

/// Whether the expression's value is plainly not a string (so not a valid message
/// expression): a literal of another type, a list or a map.
pub(crate) fn plainly_not_string(expr: &IdedExpr) -> bool {
    match &expr.expr {
        Expr::Literal(LiteralValue::String(_)) => false,
        Expr::Literal(_) | Expr::List(_) | Expr::Map(_) => true,
        _ => false,
    }
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;
