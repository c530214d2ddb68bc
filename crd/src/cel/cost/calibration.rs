//! The estimator against kube-apiserver v1.36.2, rule by rule: each rule below sat on the
//! items of a list with `maxItems: k` in a CRD created on envtest's kube-apiserver, `k`
//! chosen so the rule's cost times `k` was just over 10 000 000; the six decimals of the
//! factor in the `Forbidden` cause ("exceeds budget by factor of 1.200005x") give the rule's
//! estimated cost exactly. The items' schema is [`ITEM`].

use serde_json::Value;

use super::decl::{Decl, Place};
use super::estimate_rule;

const ITEM: &str = r#"{"type": "object", "properties": {"s": {"type": "string"}, "sb": {"type": "string", "maxLength": 16}, "e": {"type": "string", "enum": ["a", "bb"]}, "i": {"type": "integer"}, "d": {"type": "number"}, "b": {"type": "boolean"}, "l": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 8}}, "lu": {"type": "array", "items": {"type": "string"}}, "m": {"type": "object", "maxProperties": 5, "additionalProperties": {"type": "string", "maxLength": 4}}, "ios": {"x-kubernetes-int-or-string": true}, "q": {"type": "string", "maxLength": 20}, "t": {"type": "string", "format": "date-time"}, "dur": {"type": "string", "format": "duration"}, "o": {"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}, "n": {"type": "integer"}}}, "ol": {"type": "array", "maxItems": 4, "items": {"type": "object", "properties": {"k": {"type": "string", "maxLength": 2}, "v": {"type": "integer"}}}}, "by": {"type": "string", "format": "byte", "maxLength": 10}}}"#;

const MEASURED: &[(&str, u64)] = &[
    ("self.s == 'abc'", 3),
    ("self.i == 1", 2),
    ("self.sb.startsWith('ab')", 3),
    ("self.sb.contains('ab')", 9),
    ("self.sb.matches('^a+$')", 9),
    ("self.sb < 'x'", 3),
    ("self.sb + 'x' == 'yx'", 10),
    ("size(self.l) > 2", 4),
    ("'a' in self.l", 12),
    ("self.l.exists(x, x == 'a')", 63),
    ("self.l.exists_one(x, x == 'a')", 44),
    ("self.l.map(x, x + 'a').all(y, y.size() < 10)", 244),
    ("self.l.filter(x, x.startsWith('a')).size() == 0", 165),
    ("has(self.o) && self.o.a == 'x'", 5),
    ("self.m.all(k, self.m[k].size() < 3)", 48),
    ("self.l[0] == 'a'", 4),
    ("self.i > 3 ? self.s == 'a' : self.sb == 'b'", 6),
    ("[1, 2, 3].all(x, x > 0)", 26),
    ("{'a': 1}['a'] == 1", 32),
    ("dyn(self.i) == 1", 3),
    ("type(self.ios) == string", 4),
    ("self.sb.lowerAscii() == 'a'", 10),
    ("self.sb.split(',').size() > 1", 17),
    ("self.l.join(',').size() < 100", 37),
    ("self.sb.replace('a', 'bb') == 'x'", 16),
    ("self.sb.indexOf('a') > 0", 10),
    ("self.l.indexOf('a') >= 0", 53),
    ("self.sb.find('[a-z]+') == 'a'", 17),
    ("self.sb.findAll('[a-z]+').size() > 0", 18),
    ("quantity(self.q).isLessThan(quantity('1Gi'))", 12),
    ("isQuantity(self.q)", 10),
    ("isURL(self.sb) && url(self.sb).getHost() == 'x'", 14),
    ("isIP(self.sb) && ip(self.sb).family() == 4", 20),
    (
        "isCIDR(self.sb) && cidr(self.sb).containsIP('10.0.0.1')",
        23,
    ),
    ("!format.dns1123Label().validate(self.sb).hasValue()", 229),
    ("sets.contains(self.l, ['a'])", 23),
    ("self.l.sort() == self.l", 226),
    ("self.l.distinct().size() == size(self.l)", 218),
    ("self.l.slice(0, 2).size() == 2", 17),
    ("lists.range(5).size() == 5", 18),
    ("self.t < timestamp('2030-01-01T00:00:00Z')", 4),
    ("self.dur < duration('1h')", 4),
    ("self.?o.a.orValue('') == 'x'", 4),
    ("self.ol.all(x, x.k.size() < 2 && x.v > 0)", 43),
    ("self.b || self.i < 0", 5),
    ("self.s.size() > 0", 4),
    ("string(self.i) == '1'", 4),
    ("int(self.sb) > 0", 4),
    ("self.by.size() > 0", 4),
    ("self.l.all(x, self.l.all(y, x != y || true))", 963),
    ("self.m.exists(k, k == 'a')", 28),
    ("self.e == 'a'", 3),
    ("self.ios == 1", 3),
    ("self.sb.format([self.i]) == 'x'", 22),
    ("semver(self.sb).isGreaterThan(semver('1.0.0'))", 11),
    ("self.sb.endsWith(self.s)", 314577),
    ("strings.quote(self.sb) == 'x'", 10),
    ("bytes(self.sb).size() > 0", 11),
    ("self.sb.charAt(1) == 'a'", 4),
    ("self.sb.substring(1) == 'a'", 10),
    ("self.sb.trim() == 'a'", 10),
    ("self.l.reverse()[0] == 'a'", 24),
    ("self.l.max() == 'a'", 53),
    ("self.l.isSorted()", 52),
    ("[self.sb, 'x'].exists(v, v == 'y')", 23),
    ("self.ol.map(x, x.v).sum() > 0", 74),
    ("cidr(self.sb).containsCIDR('10.0.0.0/8')", 17),
    ("ip.isCanonical(self.sb)", 15),
    ("self.o == self.o", 4),
    ("self.l == ['a']", 13),
    ("self.m == {'a': 'b'}", 33),
    ("self.l.sortBy(x, x.size()).size() > 0", 378),
    ("sets.equivalent(self.l, ['a'])", 33),
    ("sets.intersects(self.l, ['a'])", 23),
    ("[self.l].flatten().size() > 0", 26),
    ("url(self.sb) == url('https://x')", 11),
    ("quantity(self.q) == quantity('1')", 12),
    ("self.i + 1 > 2", 4),
    ("self.d * 2.0 > 1.0", 4),
    ("self.ol.exists(x, x.k == 'a' && x.v == 1)", 39),
    ("self.m.map(k, self.m[k]).size() > 0", 95),
    ("self.l.map(x, [x, x]).size() > 0", 255),
    ("self.m.filter(k, k.startsWith('a')).size() > 0", 90),
    ("optional.of(self.s).hasValue()", 4),
    ("self.l[?0].orValue('') == 'a'", 5),
    ("self.m[?'a'].hasValue()", 4),
    ("self.l.all(i, v, i == 0 || v.size() > 1)", 83),
    ("self.l.exists(i, v, v == 'a')", 63),
    ("self.l.existsOne(i, v, v == 'a')", 44),
    ("self.l.exists_one(i, v, v == 'a')", 44),
    ("self.m.all(k, v, k.size() < v.size())", 43),
    ("self.m.exists(k, v, v == 'a')", 33),
    ("self.l.transformList(i, v, v + 'x').size() > 0", 185),
    ("self.l.transformList(i, v, i > 0, v + 'x').size() > 0", 205),
    ("self.m.transformMap(k, v, v + 'x').size() > 0", 65),
    (
        "self.m.transformMap(k, v, k != 'a', v + 'x').size() > 0",
        70,
    ),
    ("self.m.transformMapEntry(k, v, {v: k}).size() >= 0", 205),
    ("self.ol.all(i, o, o.v > i)", 31),
    ("self.l.last().orValue('') == 'a'", 5),
    ("self.l.first().hasValue()", 4),
    ("optional.unwrap([self.l.first()]).size() > 0", 16),
];

/// Parses as the fake's environment does, in cel-go's form.
fn parse(rule: &str) -> cel::common::ast::IdedExpr {
    crate::cel::parse_as_cel_go(rule).unwrap_or_else(|| panic!("{rule} parses"))
}

#[test]
fn every_measured_rule_costs_what_kube_apiserver_estimates() {
    let item: Value = serde_json::from_str(ITEM).expect("ITEM is JSON");
    let decl = Decl::from_schema(&item, false, &Place::default()).expect("ITEM is typed");
    let mismatches: Vec<String> = MEASURED
        .iter()
        .filter_map(|(rule, measured)| {
            let estimated = estimate_rule(&parse(rule), &decl, false).max_cost;
            (estimated != *measured)
                .then(|| format!("{rule}: kbr {estimated}, kube-apiserver {measured}"))
        })
        .collect();
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
