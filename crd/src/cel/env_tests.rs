//! The environment's libraries, through CEL expressions.

use std::sync::Arc;

use super::{CompileError, ENV, Output, build, compile};

#[test]
fn the_environment_builds() {
    assert!(build().is_ok());
}

/// Evaluates `expression` (no variables) in [`ENV`].
pub(crate) fn eval(expression: &str) -> Result<cel::Value, String> {
    let program = compile(expression, Output::Bool).map_err(|e| format!("{e:?}"))?;
    let context = cel::Context::with_env(Arc::clone(&ENV));
    program
        .execute(&context)
        .map_err(|e| crate::cel::error::go_text(&e))
}

/// Asserts every expression evaluates to `true`.
pub(crate) fn assert_true(expressions: &[&str]) {
    for expression in expressions {
        assert_eq!(eval(expression), Ok(cel::Value::Bool(true)), "{expression}");
    }
}

/// Asserts `expression` fails with `error`.
pub(crate) fn assert_error(expression: &str, error: &str) {
    assert_eq!(eval(expression), Err(error.to_owned()), "{expression}");
}

#[test]
fn quantities() {
    assert_true(&[
        "quantity('512Mi').isLessThan(quantity('1Gi'))",
        "quantity('2Gi').isGreaterThan(quantity('1Gi'))",
        "quantity('200M').compareTo(quantity('0.2G')) == 0",
        "quantity('50M').compareTo(quantity('50Mi')) == -1",
        "quantity('1k') == quantity('1000')",
        "isQuantity('1.3Gi') && !isQuantity('1,3G') && !isQuantity('200K')",
        "quantity('50k').asInteger() == 50000",
        "!quantity('1.5').isInteger()",
        "quantity('50k').sub(20000).asApproximateFloat() == 30000.0",
        "quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')",
        "sign(quantity('-1')) == -1",
    ]);
    assert_error(
        "quantity('x') == quantity('1')",
        "quantities must match the regular expression \
         '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    );
    assert_error(
        "quantity('9999999999999999999999999999999999999G').asInteger() == 1",
        "cannot convert value to integer",
    );
}

#[test]
fn urls() {
    assert_true(&[
        "url('https://example.com:80/a%20b?x=1&x=2').getHost() == 'example.com:80'",
        "url('https://example.com:80/a%20b').getHostname() == 'example.com'",
        "url('https://example.com:80/').getPort() == '80'",
        "url('https://example.com/a%20b').getEscapedPath() == '/a%20b'",
        "url('https://example.com/?x=1&x=2').getQuery() == {'x': ['1', '2']}",
        "url('HTTPS://example.com').getScheme() == 'https'",
        "url('http://[::1]:8080').getHostname() == '::1'",
        "isURL('/path') && !isURL('example.com') && !isURL('')",
    ]);
    assert_error(
        "url('example.com').getHost() == ''",
        r#"URL parse error during conversion from string: parse "example.com": invalid URI for request"#,
    );
}

#[test]
fn ips_and_cidrs() {
    assert_true(&[
        "ip('10.0.0.1').family() == 4 && ip('::1').family() == 6",
        "ip('127.0.0.1').isLoopback() && ip('::').isUnspecified()",
        "ip.isCanonical('2001:db8::1') && !ip.isCanonical('2001:DB8::1')",
        "isIP('1.2.3.4') && !isIP('01.2.3.4') && !isIP('::ffff:1.2.3.4')",
        "string(ip('2001:db8:0:0:1:0:0:1')) == '2001:db8::1:0:0:1'",
        "cidr('10.0.0.0/8').containsIP('10.1.2.3') && !cidr('10.0.0.0/8').containsIP(ip('11.0.0.1'))",
        "cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && !cidr('10.1.0.0/16').containsCIDR('10.0.0.0/8')",
        "cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8') && cidr('10.1.2.3/8').prefixLength() == 8",
        "cidr('10.1.2.3/8').ip() == ip('10.1.2.3') && string(cidr('10.1.2.3/8')) == '10.1.2.3/8'",
        "isCIDR('::/0') && !isCIDR('10.0.0.0/33')",
    ]);
    assert_error(
        "ip('1.2.3').family() == 4",
        r#"IP Address "1.2.3" parse error during conversion from string: ParseAddr("1.2.3"): IPv4 address too short"#,
    );
    assert_error(
        "cidr('10.0.0.0').prefixLength() == 8",
        r#"network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("10.0.0.0"): no '/'"#,
    );
}

#[test]
fn formats_semver_regex_lists_and_sets() {
    assert_true(&[
        "!format.dns1123Label().validate('my-name').hasValue()",
        "format.dns1123Label().validate('a.b').value() == ['must not contain dots']",
        "format.named('uuid').hasValue() && !format.named('nope').hasValue()",
        "format.named('labelValue').value() == format.labelValue()",
        "semver('1.2.3').isLessThan(semver('1.10.0')) && semver('v1.2', true).minor() == 2",
        "isSemver('1.0.0-rc.1') && !isSemver('v1.0.0') && isSemver('v1.0.0', true)",
        "'abc123def456'.find('[0-9]+') == '123' && 'abc'.find('[0-9]') == ''",
        "'a1b2c3'.findAll('[a-z]') == ['a', 'b', 'c'] && 'a1b2c3'.findAll('[a-z]', 2) == ['a', 'b']",
        "[1, 2, 3].isSorted() && ![3, 1].isSorted() && [1, 2, 3].sum() == 6",
        "[3, 1, 2].min() == 1 && [3, 1, 2].max() == 3 && [1, 2, 2].lastIndexOf(2) == 2",
        "[1, 2, 2].indexOf(2) == 1 && [1].indexOf(5) == -1",
        "sets.contains([1, 2, 3], [1.0, 2]) && sets.equivalent([1, 1, 2], [2, 1])",
        "sets.intersects([1, 2], [2, 5]) && !sets.intersects([1], [])",
    ]);
    assert_error("[].min() == 1", "min called on empty list");
    assert_error(
        "semver('1.0') == semver('1.0.0')",
        "No Major.Minor.Patch elements found",
    );
    assert_error(
        "'a'.find('(' + '') == ''",
        "Illegal regex: error parsing regexp: missing closing ): `(`",
    );
}

#[test]
fn two_variable_comprehensions() {
    assert_true(&[
        "[1, 2].all(i, v, v > i) && ![0].all(i, v, v > i)",
        "[0, 5].exists(i, v, v == i) && [1, 0].existsOne(i, v, v == 1)",
        "{'a': 1, 'b': 2}.all(k, v, k.size() == v || v == 2)",
        "[1, 2].transformList(i, v, v * 2) == [2, 4]",
        "[1, 2].transformList(i, v, i > 0, v * 2) == [4]",
        "{'a': 1}.transformMap(k, v, v + 1) == {'a': 2}",
        "[5, 6].transformMap(i, v, v) == {0: 5, 1: 6}",
        "{'a': 1}.transformMapEntry(k, v, {v: k}) == {1: 'a'}",
        "[[1, 2], [3]].all(i, l, l.all(j, v, v > i))",
    ]);
    assert_error(
        "{'a': 1, 'b': 1}.transformMapEntry(k, v, {v: k}) == {}",
        "insert failed: key 1 already exists",
    );
    assert!(matches!(
        compile("[1].all(i, i, true)", Output::Bool),
        Err(CompileError::Compilation(e)) if e.contains("duplicate variable name: i")
    ));
}
