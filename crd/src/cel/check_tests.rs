//! Compile-time refusals, with the texts kube-apiserver v1.36 answers (seen on envtest).

use super::super::{CompileError, Output, compile};

fn compilation(rule: &str) -> String {
    match compile(rule, Output::Bool) {
        Err(CompileError::Compilation(issues)) => issues,
        other => panic!("{rule}: {other:?}"),
    }
}

#[test]
fn undeclared_names_are_reported_at_their_place() {
    assert_eq!(
        compilation("foo(self)"),
        "ERROR: <input>:1:4: undeclared reference to 'foo' (in container '')\n | foo(self)\n | ...^"
    );
    assert_eq!(
        compilation("self.foo()"),
        "ERROR: <input>:1:9: undeclared reference to 'foo' (in container '')\n | self.foo()\n | ........^"
    );
    assert_eq!(
        compilation("math.greatest(1,2) == 2"),
        "ERROR: <input>:1:1: undeclared reference to 'math' (in container '')\n \
         | math.greatest(1,2) == 2\n | ^\n\
         ERROR: <input>:1:14: undeclared reference to 'greatest' (in container '')\n \
         | math.greatest(1,2) == 2\n | .............^"
    );
    let bind = compilation("cel.bind(x, self, x == 'a')");
    let lines: Vec<&str> = bind.lines().filter(|l| l.starts_with("ERROR")).collect();
    assert_eq!(
        lines,
        [
            "ERROR: <input>:1:1: undeclared reference to 'cel' (in container '')",
            "ERROR: <input>:1:9: undeclared reference to 'bind' (in container '')",
            "ERROR: <input>:1:10: undeclared reference to 'x' (in container '')",
            "ERROR: <input>:1:19: undeclared reference to 'x' (in container '')",
        ]
    );
}

#[test]
fn declared_names_and_macro_variables_pass() {
    for rule in [
        "self.all(x, x > 0) && oldSelf.exists(y, y == 1)",
        "self.map(x, x * 2).filter(y, y > 1).size() > 0",
        "type(self) == string && format.dns1123Label().validate(self) == optional.none()",
        "sets.contains(self, [1]) && ip.isCanonical(self) && has(self.a)",
        "self.transformList(i, v, i + v).all(x, x > 0)",
        "self.sortBy(e, -e).exists_one(e, e == 1) && lists.range(3).size() == 3",
        "self.?a.optMap(v, v + 1).orValue(0) == 1",
    ] {
        assert!(compile(rule, Output::Bool).is_ok(), "{rule}");
    }
}

#[test]
fn regular_expression_literals_must_compile() {
    assert_eq!(
        compilation("self.matches('(')"),
        "ERROR: <input>:1:14: invalid matches argument\n | self.matches('(')\n | .............^"
    );
    assert_eq!(
        compile("self.find('(') == ''", Output::Bool).err(),
        Some(CompileError::Instantiation(
            "error parsing regexp: missing closing ): `(`".to_owned()
        ))
    );
    assert!(compile("self.matches(self)", Output::Bool).is_ok());
}

#[test]
fn syntax_errors_read_as_cel_gos() {
    assert_eq!(
        compilation("self == 'a"),
        "ERROR: <input>:1:9: Syntax error: token recognition error at: ''a'\n | self == 'a\n \
         | ........^\nERROR: <input>:1:11: Syntax error: mismatched input '<EOF>' expecting \
         {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, \
         STRING, BYTES, IDENTIFIER}\n | self == 'a\n | ..........^"
    );
}

#[test]
fn rules_must_be_bools_and_messages_strings() {
    for rule in [
        "1",
        "'x'",
        "[true]",
        "self + 1",
        "self.size()",
        "quantity(self)",
    ] {
        assert_eq!(
            compile(rule, Output::Bool).err(),
            Some(CompileError::WrongOutput),
            "{rule}"
        );
    }
    assert!(compile("true", Output::Bool).is_ok());
    assert_eq!(
        compile("1", Output::String).err(),
        Some(CompileError::WrongOutput)
    );
    assert!(compile("'got ' + self", Output::String).is_ok());
}
