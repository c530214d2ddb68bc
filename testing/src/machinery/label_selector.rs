//! Label selector texts (`?labelSelector=`), parsed and matched as apimachinery's
//! `staging/src/k8s.io/apimachinery/pkg/labels/selector.go` does (`Parse`, its `Lexer` and
//! `Parser`, `NewRequirement`, `Requirement.Matches`), with its error texts: kube-apiserver
//! answers a selector that does not parse with a 400 carrying them.
//!
//! The grammar: requirements separated by `,`; each is `[!]KEY`, `KEY (=|==|!=) VALUE`,
//! `KEY (>|<) INTEGER` or `KEY (in|notin) (VALUE, ...)`. Tokens are split at whitespace and at
//! the symbols `= ! ( ) , > <` (a run of symbols is read greedily while it still is one
//! operator); `in` and `notin` are keywords where an operator may stand and values elsewhere.
//! Keys must be qualified names and values label values ([`kbr_core::label`]); the operands of
//! `>`/`<` must be 64-bit integers. An empty value set `()` is the set holding `""`.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::machinery::api_error::ApiError;

/// A requirement's operator (`selection.Operator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Operator {
    /// `=`, `==` or `in`: the label exists with one of the values.
    In,
    /// `!=` or `notin`: the label is missing or has none of the values.
    NotIn,
    /// `KEY`.
    Exists,
    /// `!KEY`.
    DoesNotExist,
    /// `KEY>N`.
    GreaterThan,
    /// `KEY<N`.
    LessThan,
}

/// One requirement of a selector.
#[derive(Clone, Debug, PartialEq)]
struct Requirement {
    key: String,
    operator: Operator,
    values: Vec<String>,
}

impl Requirement {
    /// `Requirement.Matches`.
    fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let value = labels.get(&self.key);
        let listed = |v: &String| self.values.contains(v);
        match self.operator {
            Operator::In => value.is_some_and(listed),
            Operator::NotIn => !value.is_some_and(listed),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let (Some(Ok(actual)), Some(Ok(bound))) = (
                    value.map(|v| v.parse::<i64>()),
                    self.values.first().map(|v| v.parse::<i64>()),
                ) else {
                    return false;
                };
                match self.operator {
                    Operator::GreaterThan => actual > bound,
                    _ => actual < bound,
                }
            }
        }
    }
}

/// A parsed label selector; the empty selector matches everything.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct LabelSelector(Vec<Requirement>);

impl LabelSelector {
    /// Parses `text`; a 400 BadRequest with apimachinery's text when it does not parse.
    pub(crate) fn parse(text: &str) -> Result<Self, ApiError> {
        Parser::new(text)
            .parse()
            .map(Self)
            .map_err(ApiError::bad_request)
    }

    /// Whether `labels` satisfies every requirement.
    pub(crate) fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.0.iter().all(|r| r.matches(labels))
    }

    /// Whether the selector has no requirement.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A token of the lexer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

/// The token a literal is, if it is one (`string2token`).
fn keyword(literal: &str) -> Option<Token> {
    Some(match literal {
        ")" => Token::ClosedPar,
        "," => Token::Comma,
        "!" => Token::DoesNotExist,
        "==" => Token::DoubleEquals,
        "=" => Token::Equals,
        ">" => Token::GreaterThan,
        "in" => Token::In,
        "<" => Token::LessThan,
        "!=" => Token::NotEquals,
        "notin" => Token::NotIn,
        "(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Splits `text` into tokens, the last one `EndOfString` (`Lexer.Lex`).
fn scan(text: &str) -> Vec<(Token, String)> {
    let bytes = text.as_bytes();
    let mut pos = 0;
    let mut items = Vec::new();
    loop {
        while pos < bytes.len() && is_whitespace(bytes[pos]) {
            pos += 1;
        }
        let Some(&first) = bytes.get(pos) else {
            items.push((Token::EndOfString, String::new()));
            return items;
        };
        let start = pos;
        if is_special(first) {
            // The longest run of symbols that is still an operator (every single symbol is).
            let mut end = pos + 1;
            while end < bytes.len()
                && is_special(bytes[end])
                && keyword(&text[start..=end]).is_some()
            {
                end += 1;
            }
            pos = end;
        } else {
            while pos < bytes.len() && !is_special(bytes[pos]) && !is_whitespace(bytes[pos]) {
                pos += 1;
            }
        }
        let literal = String::from_utf8_lossy(&bytes[start..pos]).into_owned();
        let token = keyword(&literal).unwrap_or(Token::Identifier);
        items.push((token, literal));
    }
}

/// Whether `in`/`notin` are operators (`KeyAndOperator`) or values (`Values`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

/// The recursive-descent parser over the scanned tokens.
struct Parser {
    items: Vec<(Token, String)>,
    position: usize,
}

impl Parser {
    fn new(text: &str) -> Self {
        Self {
            items: scan(text),
            position: 0,
        }
    }

    fn lookahead(&self, context: Context) -> (Token, String) {
        let (token, literal) = self.items[self.position.min(self.items.len() - 1)].clone();
        (in_context(token, context), literal)
    }

    fn consume(&mut self, context: Context) -> (Token, String) {
        let item = self.lookahead(context);
        self.position = (self.position + 1).min(self.items.len() - 1);
        item
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        loop {
            let (token, literal) = self.lookahead(Context::Values);
            match token {
                Token::Identifier | Token::DoesNotExist => {
                    let requirement = self
                        .requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    requirements.push(requirement);
                    let (token, literal) = self.consume(Context::Values);
                    match token {
                        Token::EndOfString => return Ok(requirements),
                        Token::Comma => {
                            let (next, literal) = self.lookahead(Context::Values);
                            if !matches!(next, Token::Identifier | Token::DoesNotExist) {
                                return Err(format!(
                                    "found '{literal}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => {
                            return Err(format!(
                                "found '{literal}', expected: ',' or 'end of string'"
                            ));
                        }
                    }
                }
                Token::EndOfString => return Ok(requirements),
                _ => {
                    return Err(format!(
                        "found '{literal}', expected: !, identifier, or 'end of string'"
                    ));
                }
            }
        }
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let (key, operator) = self.key_and_inferred_operator()?;
        let (operator, values) = match operator {
            Some(op @ (Operator::Exists | Operator::DoesNotExist)) => (op, Vec::new()),
            _ => {
                let (operator, set_based) = self.operator()?;
                let values = if set_based {
                    self.values()?
                } else {
                    self.exact_value()?
                };
                (operator, values)
            }
        };
        new_requirement(key, operator, values)
    }

    /// `parseKeyAndInferOperator`: `[!]KEY`, the key checked; `Exists`/`DoesNotExist` when no
    /// operator follows.
    fn key_and_inferred_operator(&mut self) -> Result<(String, Option<Operator>), String> {
        let mut operator = None;
        let (mut token, mut literal) = self.consume(Context::Values);
        if token == Token::DoesNotExist {
            operator = Some(Operator::DoesNotExist);
            (token, literal) = self.consume(Context::Values);
        }
        if token != Token::Identifier {
            return Err(format!("found '{literal}', expected: identifier"));
        }
        let problems = kbr_core::label::qualified_name(&literal);
        if !problems.is_empty() {
            return Err(invalid("<nil>", &literal, &problems.join("; ")));
        }
        let (next, _) = self.lookahead(Context::Values);
        if matches!(next, Token::EndOfString | Token::Comma) && operator.is_none() {
            operator = Some(Operator::Exists);
        }
        Ok((literal, operator))
    }

    /// `parseOperator`: the operator, and whether it takes a set of values.
    fn operator(&mut self) -> Result<(Operator, bool), String> {
        let (token, literal) = self.consume(Context::KeyAndOperator);
        Ok(match token {
            Token::In => (Operator::In, true),
            Token::NotIn => (Operator::NotIn, true),
            Token::Equals | Token::DoubleEquals => (Operator::In, false),
            Token::NotEquals => (Operator::NotIn, false),
            Token::GreaterThan => (Operator::GreaterThan, false),
            Token::LessThan => (Operator::LessThan, false),
            _ => {
                return Err(format!(
                    "found '{literal}', expected: in, notin, =, ==, !=, gt, lt"
                ));
            }
        })
    }

    /// `parseValues`: `(a,b)`; `()` is the set holding `""`.
    fn values(&mut self) -> Result<Vec<String>, String> {
        let (token, literal) = self.consume(Context::Values);
        if token != Token::OpenPar {
            return Err(format!("found '{literal}' expected: '('"));
        }
        let (token, literal) = self.lookahead(Context::Values);
        match token {
            Token::Identifier | Token::Comma => {
                let values = self.identifiers()?;
                if self.consume(Context::Values).0 != Token::ClosedPar {
                    // apimachinery names the token it looked at before the list.
                    return Err(format!("found '{literal}', expected: ')'"));
                }
                Ok(values)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(vec![String::new()])
            }
            _ => Err(format!(
                "found '{literal}', expected: ',', ')' or identifier"
            )),
        }
    }

    /// `parseIdentifiersList`: values separated by commas, empty ones `""`.
    fn identifiers(&mut self) -> Result<Vec<String>, String> {
        let mut values: Vec<String> = Vec::new();
        loop {
            let (token, literal) = self.consume(Context::Values);
            match token {
                Token::Identifier => {
                    values.push(literal);
                    let (next, literal) = self.lookahead(Context::Values);
                    match next {
                        Token::Comma => {}
                        Token::ClosedPar => return Ok(values),
                        _ => return Err(format!("found '{literal}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    if values.is_empty() {
                        values.push(String::new());
                    }
                    let (next, _) = self.lookahead(Context::Values);
                    if next == Token::ClosedPar {
                        values.push(String::new());
                        return Ok(values);
                    }
                    if next == Token::Comma {
                        values.push(String::new());
                    }
                }
                _ => return Err(format!("found '{literal}', expected: ',', or identifier")),
            }
        }
    }

    /// `parseExactValue`: one value, `""` when none follows.
    fn exact_value(&mut self) -> Result<Vec<String>, String> {
        let (next, _) = self.lookahead(Context::Values);
        if matches!(next, Token::EndOfString | Token::Comma) {
            return Ok(vec![String::new()]);
        }
        match self.consume(Context::Values) {
            (Token::Identifier, literal) => Ok(vec![literal]),
            (_, literal) => Err(format!("found '{literal}', expected: identifier")),
        }
    }
}

/// `in`/`notin` read as identifiers where values stand.
fn in_context(token: Token, context: Context) -> Token {
    match (token, context) {
        (Token::In | Token::NotIn, Context::Values) => Token::Identifier,
        (token, _) => token,
    }
}

/// `field.Invalid(path, value, detail).Error()`.
fn invalid(path: &str, value: &str, detail: &str) -> String {
    format!("{path}: Invalid value: {value:?}: {detail}")
}

/// `NewRequirement`'s checks of the values (the key was checked while parsing), as one
/// aggregated error (`[a, b]` when there are several).
fn new_requirement(
    key: String,
    operator: Operator,
    mut values: Vec<String>,
) -> Result<Requirement, String> {
    values.sort();
    values.dedup();
    let mut errors = Vec::new();
    if matches!(operator, Operator::GreaterThan | Operator::LessThan) {
        for (i, value) in values.iter().enumerate() {
            if value.parse::<i64>().is_err() {
                errors.push(invalid(
                    &format!("values[{i}]"),
                    value,
                    "for 'Gt', 'Lt' operators, the value must be an integer",
                ));
            }
        }
    }
    for (i, value) in values.iter().enumerate() {
        let problems = kbr_core::label::label_value(value);
        if !problems.is_empty() {
            errors.push(invalid(
                &format!("values[{i}][{key}]"),
                value,
                &problems.join("; "),
            ));
        }
    }
    match errors.len() {
        0 => Ok(Requirement {
            key,
            operator,
            values,
        }),
        1 => Err(errors.remove(0)),
        _ => Err(format!("[{}]", errors.join(", "))),
    }
}

/// A `metav1.LabelSelector` (JSON) as `labels.Selector.String()` writes it after
/// `LabelSelectorAsSelector`: requirements sorted by key,
/// `k=v`, `k in (a,b)`, `k notin (a)`, `k`, `!k`, joined by commas.
pub(crate) fn selector_text(selector: &Value) -> String {
    let mut requirements: Vec<(String, String)> = Vec::new();
    for (key, value) in selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let value = value.as_str().unwrap_or_default();
        requirements.push((key.clone(), format!("{key}={value}")));
    }
    for expression in selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = expression.get("key").and_then(Value::as_str).unwrap_or("");
        let mut values: Vec<&str> = expression
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        values.sort_unstable();
        let text = match expression.get("operator").and_then(Value::as_str) {
            Some("In") => format!("{key} in ({})", values.join(",")),
            Some("NotIn") => format!("{key} notin ({})", values.join(",")),
            Some("Exists") => key.to_owned(),
            Some("DoesNotExist") => format!("!{key}"),
            _ => continue,
        };
        requirements.push((key.to_owned(), text));
    }
    requirements.sort();
    requirements
        .into_iter()
        .map(|(_, text)| text)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::selector_text;

    #[test]
    fn selectors_are_written_as_the_api_server_writes_them() {
        let selector = json!({"matchLabels": {"b": "2", "a": "1"},
            "matchExpressions": [{"key": "c", "operator": "In", "values": ["y", "x"]},
                                 {"key": "d", "operator": "DoesNotExist"}]});
        assert_eq!(selector_text(&selector), "a=1,b=2,c in (x,y),!d");
    }
}
