//! Overload resolution over [`super::signatures`]: what cel-go's checker
//! (`checker/checker.go`, `resolveOverload`) records for each call, which the cost estimator
//! keys on.

use std::sync::LazyLock;

use super::signatures::{COMPARED, COMPARISONS, FORMATS, SIGNATURES, SORTABLE};
use super::types::Type;

/// One declared overload.
#[derive(Debug)]
pub(crate) struct Overload {
    pub(crate) function: String,
    pub(crate) id: String,
    /// Called on a receiver (`x.f()`): the receiver is the first parameter.
    pub(crate) member: bool,
    pub(crate) params: Vec<Type<'static>>,
    pub(crate) result: Type<'static>,
}

static TABLE: LazyLock<Vec<Overload>> = LazyLock::new(table);

fn table() -> Vec<Overload> {
    let mut lines: Vec<String> = SIGNATURES.lines().map(str::to_owned).collect();
    for (function, prefix) in COMPARISONS {
        for (suffix, left, right) in COMPARED {
            lines.push(format!(
                "{function} {prefix}_{suffix} ({left}, {right}) -> bool"
            ));
        }
    }
    for element in SORTABLE {
        let name = parse_type(element)
            .and_then(|t| t.type_name())
            .unwrap_or(element);
        lines.push(format!(
            "sort list_{name}_sort list({element}).() -> list({element})"
        ));
        lines.push(format!(
            "@sortByAssociatedKeys list_{name}_sortByAssociatedKeys list(A).(list({element})) -> list(A)"
        ));
    }
    lines.iter().filter_map(|line| parse_line(line)).collect()
}

/// Parses `function id signature`; `None` for blank lines.
fn parse_line(line: &str) -> Option<Overload> {
    let mut parts = line.trim().splitn(3, ' ');
    let (function, id, signature) = (parts.next()?, parts.next()?, parts.next()?);
    let (params, result) = signature.split_once(" -> ")?;
    let (receiver, params) = match params.strip_prefix('(') {
        Some(params) => (None, params),
        None => {
            let (receiver, params) = params.split_once(".(")?;
            (Some(parse_type(receiver)?), params)
        }
    };
    let params = params.strip_suffix(')')?;
    let mut types: Vec<Type<'static>> = receiver.into_iter().collect();
    for param in split_top_level(params) {
        types.push(parse_type(param)?);
    }
    Some(Overload {
        function: function.to_owned(),
        id: id.to_owned(),
        member: !signature.starts_with('('),
        params: types,
        result: parse_type(result)?,
    })
}

/// Splits `a, map(b, c)` at its top-level commas.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0_i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    let last = text[start..].trim();
    if !last.is_empty() {
        parts.push(last);
    }
    parts
}

fn parse_type(text: &str) -> Option<Type<'static>> {
    let text = text.trim();
    if let Some((name, args)) = text.split_once('(') {
        let args: Vec<Type<'static>> = split_top_level(args.strip_suffix(')')?)
            .into_iter()
            .map(parse_type)
            .collect::<Option<_>>()?;
        let one = |args: &[Type<'static>]| Some(Box::new(args.first()?.clone()));
        return match name {
            "list" => Some(Type::List(one(&args)?)),
            "optional" => Some(Type::Optional(one(&args)?)),
            "type" => Some(Type::Denoted(one(&args)?)),
            "map" => Some(Type::Map(one(&args)?, Box::new(args.get(1)?.clone()))),
            _ => None,
        };
    }
    Some(match text {
        "bool" => Type::Bool,
        "int" => Type::Int,
        "uint" => Type::Uint,
        "double" => Type::Double,
        "string" => Type::String,
        "bytes" => Type::Bytes,
        "duration" => Type::Duration,
        "timestamp" => Type::Timestamp,
        "dyn" => Type::Dyn,
        "A" => Type::Param('A'),
        "B" => Type::Param('B'),
        "kubernetes.Quantity" => Type::Named("kubernetes.Quantity"),
        "kubernetes.URL" => Type::Named("kubernetes.URL"),
        "kubernetes.Semver" => Type::Named("kubernetes.Semver"),
        "kubernetes.NamedFormat" => Type::Named("kubernetes.NamedFormat"),
        "net.IP" => Type::Named("net.IP"),
        "net.CIDR" => Type::Named("net.CIDR"),
        _ => return None,
    })
}

/// The overloads of one call, as the checker resolves it.
#[derive(Debug)]
pub(crate) struct Resolution<'d> {
    /// Every overload the argument types fit, in declaration order.
    pub(crate) ids: Vec<&'static str>,
    /// The result type: the overloads' common result, else `dyn`.
    pub(crate) result: Type<'d>,
}

/// Whether any overload of `function` is declared (global or member, per `member`).
pub(crate) fn declared(function: &str, member: bool) -> bool {
    TABLE
        .iter()
        .any(|o| o.function == function && o.member == member)
        || (!member && function.starts_with("format."))
}

/// Resolves `function` called with `args` (the receiver first for a member call).
pub(crate) fn resolve<'d>(
    function: &str,
    member: bool,
    args: &[Type<'d>],
) -> Option<Resolution<'d>> {
    if !member && args.is_empty() && function.starts_with("format.") {
        // `format.dns1123Label()` and the other named formats (`library/format.go`): one
        // zero-argument overload each, named like the function.
        let id = FORMATS.iter().find(|f| **f == function).copied()?;
        return Some(Resolution {
            ids: vec![id],
            result: Type::Named("kubernetes.NamedFormat"),
        });
    }
    let mut ids = Vec::new();
    let mut result: Option<Type<'d>> = None;
    for overload in TABLE
        .iter()
        .filter(|o| o.function == function && o.member == member && o.params.len() == args.len())
    {
        let mut bindings = super::types::Bindings::new();
        if overload
            .params
            .iter()
            .zip(args)
            .all(|(param, arg)| param.accepts(arg, &mut bindings))
        {
            ids.push(overload.id.as_str());
            let this = overload.result.substitute(&bindings);
            result = Some(match result {
                None => this,
                Some(previous) if matches!(previous, Type::Dyn) || previous.exact(&this) => {
                    previous
                }
                Some(_) => Type::Dyn,
            });
        }
    }
    Some(Resolution {
        ids,
        result: result?,
    })
}
