//! The CEL environment of CRD rules: `k8s.io/apiserver/pkg/cel/environment/base.go`
//! (`baseOpts`) at compatibility version 1.36, and compiling a rule in it as
//! `apiextensions-apiserver/pkg/apiserver/schema/cel/compilation.go` (`compileRule`) does.
//!
//! | `base.go` option | here |
//! |---|---|
//! | standard library, `CrossTypeNumericComparisons` | cel-rust's standard library, which compares numbers across types |
//! | `OptionalTypes` | cel-rust's optional syntax and library, with version 2's `first`, `last`, `optional.unwrap`, `unwrapOpt` from [`super::library`] |
//! | `ext.Strings(StringsVersion(2))` | cel-rust's strings extension (it also has version 3's `reverse` on strings, and formats as version 4) |
//! | `ext.Lists(ListsVersion(3))` | cel-rust's lists extension |
//! | `ext.Sets()`, `ext.TwoVarComprehensions()` | [`super::library`] |
//! | `library.URLs`, `Regex`, `Lists`, `Quantity`, `IP`, `CIDR`, `Format`, `SemverLib(SemverVersion(1))` | [`super::library`] |
//! | `library.Authz`, `AuthzSelectors` | not for CRD rules (there is no `authorizer` variable) |
//! | duration and timestamp (`DefaultUTCTimeZone`) | not modelled (cel-rust's `chrono` feature is off): `duration(..)` and `timestamp(..)` fail when evaluated |
//! | type checking, `HomogeneousAggregateLiterals`, `ASTValidators` | [`super::check`]: undeclared names, regex literals and rules that plainly are not bools are refused; type errors are not |
//! | cost estimation | [`super::cost`], on rules parsed by [`parse_as_cel_go`] |
//! | runtime cost limits | not modelled |
//! | `&&` and `\|\|` with both sides failing | cel-rust reports the right-hand error, cel-go the left-hand one |
//! | `matches()` with a pattern Go refuses and the `regex` crate accepts (`a**`, `x{1001}`) at run time | cel-rust's `matches` accepts it (literal patterns are refused when compiling) |

use std::sync::{Arc, LazyLock};

use cel::{DeclarationError, Env, Program};

use super::check::{self, Located, Refusal};

/// The environment every CRD rule is compiled and evaluated in.
pub(crate) static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| {
    // Every registration declares new names only: a failure is a bug of this module, which
    // `the_environment_builds` catches.
    Arc::new(build().expect("the CEL environment of CRD rules builds"))
});

/// The environment: cel-rust's standard library and extensions, then the Kubernetes ones.
fn build() -> Result<Env, DeclarationError> {
    let mut env = Env::stdlib();
    env.add_extension(cel::extensions::strings)?;
    env.add_extension(cel::extensions::lists)?;
    super::library::register(&mut env)?;
    Ok(env)
}

/// `source` parsed in this environment, in the form cel-go's parser gives it: the
/// two-variable comprehensions as one comprehension over their target (what cel-go's cost
/// estimator walks), not as the expansion cel-rust evaluates. `None` when it does not parse.
pub(crate) fn parse_as_cel_go(source: &str) -> Option<cel::IdedExpr> {
    let mut expr = ENV.parser().parse(source).ok()?;
    super::library::as_cel_go(&mut expr);
    Some(expr)
}

/// What an expression must evaluate to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Output {
    /// A rule.
    Bool,
    /// A message expression.
    String,
}

/// Why an expression does not compile, worded as kube-apiserver words it after the
/// `compilation failed: ` (`messageExpression compilation failed: `) or
/// `program instantiation failed: ` prefix it adds.
#[derive(Debug, PartialEq)]
pub(crate) enum CompileError {
    /// Parser or checker issues: `ERROR: <input>:<line>:<column>: <message>` with the line
    /// and a caret under the column, one per issue.
    Compilation(String),
    /// The program cannot be planned.
    Instantiation(String),
    /// The expression is not of the [`Output`] it must be.
    WrongOutput,
}

/// Compiles `text` in [`ENV`] as an expression of `output`.
pub(crate) fn compile(text: &str, output: Output) -> Result<Program, CompileError> {
    let program = ENV.compile(text).map_err(|errors| {
        let issues = errors
            .errors
            .iter()
            .map(|e| Located {
                line: usize::try_from(e.pos.0).unwrap_or(1),
                column: usize::try_from(e.pos.1).unwrap_or(1),
                message: e.msg.clone(),
            })
            .collect::<Vec<_>>();
        CompileError::Compilation(display(text, &issues))
    })?;
    match check::check(text, program.expression(), program.source_info()) {
        Err(Refusal::Issues(issues)) => {
            return Err(CompileError::Compilation(display(text, &issues)));
        }
        Err(Refusal::Instantiation(error)) => return Err(CompileError::Instantiation(error)),
        Ok(()) => {}
    }
    let wrong = match output {
        Output::Bool => check::plainly_not_bool(program.expression()),
        Output::String => check::plainly_not_string(program.expression()),
    };
    if wrong {
        return Err(CompileError::WrongOutput);
    }
    Ok(program)
}

/// cel-go's `Errors.ToDisplayString`: each issue, its source line (tabs as spaces) and a
/// caret under its column (`．` and `＾` under wide characters), joined by newlines.
fn display(source: &str, issues: &[Located]) -> String {
    let lines: Vec<&str> = source.lines().collect();
    issues
        .iter()
        .map(|issue| {
            let mut text = format!(
                "ERROR: <input>:{}:{}: {}",
                issue.line, issue.column, issue.message
            );
            if let Some(line) = issue.line.checked_sub(1).and_then(|i| lines.get(i)) {
                let line = line.replace('\t', " ");
                let mut chars = line.chars();
                let dots: String = chars
                    .by_ref()
                    .take(issue.column.saturating_sub(1))
                    .map(|c| if c.len_utf8() > 1 { '\u{FF0E}' } else { '.' })
                    .collect();
                let caret = if chars.next().is_some_and(|c| c.len_utf8() > 1) {
                    '\u{FF3E}'
                } else {
                    '^'
                };
                text.push_str(&format!("\n | {line}\n | {dots}{caret}"));
            }
            text
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
#[path = "env_tests.rs"]
mod tests;
