//! The estimator against kube-apiserver v1.36.2: each CRD below was created on envtest's
//! kube-apiserver, and the factor in its `Forbidden` cause ("exceeds budget by factor of
//! 1.258290x": six decimals of cost / 10 000 000) pins the estimated cost to ten units.

use serde_json::{Value, json};

use super::decl::{Decl, Maximum, Nesting, Place, escape};
use super::{Finding, check, estimate_rule};

fn parse(rule: &str) -> Option<cel::common::ast::IdedExpr> {
    cel::parser::Parser::new()
        .enable_optional_syntax(true)
        .parse(rule)
        .ok()
}

/// The findings for a CRD whose `spec` has `spec_schema`.
fn findings(spec_schema: Value) -> Vec<Finding> {
    let root = json!({"type": "object", "properties": {"spec": spec_schema}});
    check(&root, "spec.validation.openAPIV3Schema", &parse)
}

/// The details of the findings, as the API server words them.
fn details(spec_schema: Value) -> Vec<(String, String)> {
    findings(spec_schema)
        .into_iter()
        .map(|f| (f.field, f.detail))
        .collect()
}

/// The estimated cost of `rule` on a node of `schema` (not a resource root).
fn rule_cost(schema: &Value, rule: &str) -> u64 {
    let decl = Decl::from_schema(schema, false, &Place::default()).expect("a typed schema");
    estimate_rule(&parse(rule).expect("parses"), &decl, false).max_cost
}

fn over(factor: &str) -> String {
    format!(
        "estimated rule cost exceeds budget by factor of {factor} (try simplifying the rule, or \
         adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are \
         declared)"
    )
}

const SPEC_RULE: &str =
    "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule";

fn chain(var: &str, clauses: &[&str]) -> String {
    clauses
        .iter()
        .map(|c| format!("{var}.size() {c}"))
        .collect::<Vec<_>>()
        .join(" && ")
}

#[test]
fn an_unbounded_list_of_strings_holds_a_million_items() {
    // (3 MiB - 2) / (2 + 1) items of at least `""`: 6 units per item for the loop and the
    // `&&`, 3 per comparison.
    let rule = format!(
        "self.names.all(x, {})",
        chain("x", &["< 10", "> 2", "!= 5"])
    );
    let spec = json!({"type": "object",
        "properties": {"names": {"type": "array", "items": {"type": "string"}}},
        "x-kubernetes-validations": [{"rule": rule}]});
    assert_eq!(rule_cost(&spec, &rule), 12_582_903);
    assert_eq!(details(spec), [(SPEC_RULE.to_owned(), over("1.258290x"))]);
}

#[test]
fn an_unbounded_string_holds_three_mebibytes() {
    let rule = format!("self.name.matches('{}')", "a".repeat(128));
    let spec = json!({"type": "object", "properties": {"name": {"type": "string"}},
        "x-kubernetes-validations": [{"rule": rule}]});
    // (3 MiB - 2 + 1) characters traversed (0.1 each) times a quarter of the regex's length,
    // plus `self.name`
    assert_eq!(rule_cost(&spec, &rule), 10_066_338);
    assert_eq!(details(spec), [(SPEC_RULE.to_owned(), over("1.006634x"))]);
}

#[test]
fn an_unbounded_map_holds_entries_of_eight_bytes() {
    let clauses = [
        "< 10", "> 2", "!= 5", "!= 6", "!= 7", "!= 8", "!= 9", "!= 4",
    ];
    let rule = format!("self.labels.all(k, {})", chain("k", &clauses));
    let spec = json!({"type": "object",
        "properties": {"labels": {"type": "object", "additionalProperties": {"type": "string"}}},
        "x-kubernetes-validations": [{"rule": rule}]});
    assert_eq!(details(spec), [(SPEC_RULE.to_owned(), over("1.061681x"))]);
}

#[test]
fn a_rule_under_an_unbounded_list_runs_once_per_item_that_fits_a_request() {
    let item_rule = "self.name.size() < 5 && self.name.size() > 1 && self.name.size() != 3";
    let items = json!({"type": "object", "properties": {"name": {"type": "string"}},
        "x-kubernetes-validations": [{"rule": item_rule}]});
    let spec = json!({"type": "object",
        "properties": {"items": {"type": "array", "items": items}}});
    let field = "spec.validation.openAPIV3Schema.properties[spec].properties[items].items.\
                 x-kubernetes-validations[0].rule";
    // 12 units times 3 MiB / (2 + 1) objects of at least `{}`
    assert_eq!(details(spec), [(field.to_owned(), over("1.258291x"))]);

    // A required property makes each item at least `{"name":""}`: 12 bytes, far fewer items.
    let rule = (0..11)
        .map(|i| format!("self.name.size() != {i}"))
        .collect::<Vec<_>>()
        .join(" && ");
    let items = json!({"type": "object", "properties": {"name": {"type": "string"}},
        "required": ["name"], "x-kubernetes-validations": [{"rule": rule}]});
    let spec = json!({"type": "object",
        "properties": {"items": {"type": "array", "items": items}}});
    assert_eq!(details(spec), [(field.to_owned(), over("1.064708x"))]);
}

#[test]
fn nested_comprehensions_multiply() {
    let names = json!({"type": "array", "maxItems": 1100,
        "items": {"type": "string", "maxLength": 10}});
    let rule = "self.names.all(x, self.names.all(y, x == y))";
    let spec = json!({"type": "object", "properties": {"names": names},
        "x-kubernetes-validations": [{"rule": rule}]});
    assert_eq!(rule_cost(&spec, rule), 10_896_603);
    assert_eq!(details(spec), [(SPEC_RULE.to_owned(), over("1.089660x"))]);
}

#[test]
fn quadratic_rules_are_over_100_times_and_over_the_total() {
    let spec = json!({"type": "object",
        "properties": {"names": {"type": "array", "items": {"type": "string"}}},
        "x-kubernetes-validations": [{"rule": "self.names.all(x, x.contains('a'))"}]});
    let total = "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema \
                 exceeds budget by factor of more than 100x (try simplifying the rule, or adding \
                 maxItems, maxProperties, and maxLength where arrays, maps, and strings are \
                 declared)";
    assert_eq!(
        details(spec.clone()),
        [
            (SPEC_RULE.to_owned(), over("more than 100x")),
            (
                SPEC_RULE.to_owned(),
                "contributed to estimated rule cost total exceeding cost limit for entire \
                 OpenAPIv3 schema"
                    .to_owned()
            ),
            (
                "spec.validation.openAPIV3Schema".to_owned(),
                total.to_owned()
            ),
        ]
    );
    // Both the list and its strings drive the cost.
    let bounds: Vec<(String, Maximum)> = findings(spec)[0]
        .bounds
        .iter()
        .map(|b| (b.place.path.clone(), b.keyword))
        .collect();
    assert_eq!(
        bounds,
        [
            (".spec.names".to_owned(), Maximum::Items),
            (".spec.names[*]".to_owned(), Maximum::Length),
        ]
    );
}

#[test]
fn bounded_lists_and_strings_are_cheap() {
    let names = json!({"type": "array", "maxItems": 100,
        "items": {"type": "string", "maxLength": 64}});
    let spec = json!({"type": "object", "properties": {"names": names},
        "x-kubernetes-validations": [{"rule": "self.names.all(x, x.contains('a'))"}]});
    // per item: 2 for the loop condition, 1 for the accumulator, 1 for `x` and 26 for
    // `contains` on 256 bytes (64 characters of up to 4 bytes); 3 for the range and result
    assert_eq!(
        rule_cost(&spec, "self.names.all(x, x.contains('a'))"),
        3_003
    );
    assert!(findings(spec).is_empty());
}

#[test]
fn declared_sizes_follow_the_schema() {
    let place = Place::default();
    let string = |schema: Value| Decl::from_schema(&schema, false, &place).map(|d| d.max_elements);
    assert_eq!(string(json!({"type": "string"})), Some(3_145_726));
    assert_eq!(string(json!({"type": "string", "maxLength": 10})), Some(40));
    assert_eq!(
        string(json!({"type": "string", "enum": ["a", "bcd"]})),
        Some(3)
    );
    assert_eq!(
        string(json!({"type": "string", "format": "date-time"})),
        Some(32)
    );
    assert_eq!(
        string(json!({"type": "string", "format": "byte", "maxLength": 10})),
        Some(10)
    );
    assert_eq!(
        string(json!({"x-kubernetes-int-or-string": true})),
        Some(3_145_726)
    );
    assert_eq!(
        string(json!({"type": "array", "items": {"type": "integer"}})),
        Some(1_572_863)
    );
    assert_eq!(
        string(json!({"type": "object", "additionalProperties": {"type": "boolean"}})),
        Some(314_572)
    );
    assert_eq!(
        string(json!({"x-kubernetes-preserve-unknown-fields": true})),
        None
    );
    let items = place.nested(Nesting::Items);
    assert_eq!((items.path.as_str(), items.field.as_str()), ("[*]", ""));
}

#[test]
fn property_names_are_escaped_as_cel_sees_them() {
    assert_eq!(escape("namespace").as_deref(), Some("__namespace__"));
    assert_eq!(
        escape("a.b-c/d").as_deref(),
        Some("a__dot__b__dash__c__slash__d")
    );
    assert_eq!(escape("a__b").as_deref(), Some("a__underscores__b"));
    assert_eq!(escape("1a"), None);
    assert_eq!(escape("a b"), None);
}

#[test]
fn the_signatures_declare_the_functions_the_environment_declares() {
    // `crd::cel::declarations` lists the names rules may call (for undeclared references);
    // the signatures here type them. The two must name the same functions.
    use std::collections::BTreeSet;
    let declared: BTreeSet<&str> = super::super::declarations::FUNCTIONS
        .iter()
        .copied()
        .collect();
    let typed: BTreeSet<&str> = declared
        .iter()
        .copied()
        .filter(|name| {
            super::overloads::declared(name, false) || super::overloads::declared(name, true)
        })
        .collect();
    assert_eq!(typed, declared, "functions declared without a signature");
}
