//! The derive's contract as a property: every value the API server admits under a type's CRD
//! schema (pruned, defaulted, validated with [`ObjectSchema`], the code kbr's fake API server
//! runs) decodes into the Rust type — to what serde reads from the value as sent, when it
//! reads it (so nothing serde reads is pruned away) — and what serde writes back is admitted
//! again.
//!
//! Candidate values come from the schema itself, deterministically: for each node its
//! boundary and adversarial values (strings that are almost IP addresses, ports, integers in
//! every spelling serde_json refuses, enum names in other cases, numbers at each integer
//! width's edges), for objects a valid base object varied one and two properties at a time,
//! for maps every adversarial string as a key. Tests add hand-written candidates for shapes a
//! generator cannot reach.

use std::collections::HashMap;
use std::fmt::Debug;

use kbr_runtime::crd::ObjectSchema;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// Strings that sit at the edges of what Rust's parsers read.
const STRINGS: &[&str] = &[
    "",
    " ",
    "a",
    "A",
    "é",
    "\u{0}",
    "true",
    "false",
    "null",
    "0",
    "-0",
    "00",
    "01",
    "+1",
    "1",
    "-1",
    "1.0",
    "1e3",
    " 1",
    "1 ",
    "127",
    "128",
    "-128",
    "-129",
    "255",
    "256",
    "32767",
    "32768",
    "-32768",
    "-32769",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "-2147483648",
    "-2147483649",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "0.0.0.0",
    "10.0.0.1",
    "010.0.0.1",
    "1.2.3.4",
    "1.2.3",
    "1.2.3.4.5",
    "255.255.255.255",
    "256.0.0.1",
    "1.2.3.04",
    "::",
    "::1",
    ":::",
    "1::2::3",
    "::ffff:1.2.3.4",
    "::ffff:1.2.3.04",
    "fe80::1",
    "FE80::1",
    "fe80::1%eth0",
    "1:2:3:4:5:6:7:8",
    "1:2:3:4:5:6:7:8:9",
    "1:2:3:4:5:6:7::",
    "12345::",
    "1.2.3.4:80",
    "1.2.3.4:080",
    "1.2.3.4:65535",
    "1.2.3.4:65536",
    "1.2.3.4:",
    "1.2.3.4:-1",
    ":80",
    "[::1]:80",
    "[::1]:65536",
    "[::1%3]:80",
    "[::1%4294967296]:80",
    "[1.2.3.4]:80",
    "::1:80",
    "[::1]",
];

/// Integers at each width's edges, and numbers that are not integers.
fn numbers() -> Vec<Value> {
    let mut values = vec![json!(0), json!(1), json!(-1), json!(1.5), json!(1e3)];
    for edge in [
        i128::from(i8::MIN),
        i128::from(i8::MAX),
        i128::from(u8::MAX),
        i128::from(i16::MIN),
        i128::from(i16::MAX),
        i128::from(u16::MAX),
        i128::from(i32::MIN),
        i128::from(i32::MAX),
        i128::from(u32::MAX),
        i128::from(i64::MIN),
        i128::from(i64::MAX),
        i128::from(u64::MAX),
    ] {
        for n in [edge - 1, edge, edge + 1] {
            if let Ok(n) = i64::try_from(n) {
                values.push(json!(n));
            } else if let Ok(n) = u64::try_from(n) {
                values.push(json!(n));
            }
        }
    }
    values
}

/// At most this many candidates per nested node (the root's are all kept), so nested shapes
/// stay small.
const PER_NODE: usize = 160;

struct Generator {
    depth: usize,
    /// Compiled sub-schemas by their JSON text (`None`: does not compile on its own).
    compiled: HashMap<String, Option<ObjectSchema>>,
}

impl Generator {
    /// Candidate values for `schema`, admitted or not.
    fn values(&mut self, schema: &Value) -> Vec<Value> {
        let Some(node) = schema.as_object() else {
            return vec![json!({}), json!("x")];
        };
        if self.depth > 5 {
            return vec![json!({}), json!("x"), json!(1)];
        }
        self.depth += 1;
        let mut out = Vec::new();
        if let Some(Value::Array(values)) = node.get("enum") {
            out.extend(values.iter().cloned());
        }
        let types: Vec<&str> = match node.get("type").and_then(Value::as_str) {
            Some(type_) => vec![type_],
            None if node.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) => {
                vec!["integer", "string"]
            }
            None => vec!["object", "string", "integer", "array"],
        };
        for type_ in types {
            match type_ {
                "string" => out.extend(STRINGS.iter().map(|s| json!(s))),
                "integer" | "number" => out.extend(numbers()),
                "boolean" => out.extend([json!(true), json!(false)]),
                "array" => out.extend(self.arrays(node)),
                "object" => out.extend(self.objects(schema, node)),
                _ => {}
            }
        }
        out.push(Value::Null);
        let cap = if self.depth > 1 { PER_NODE } else { usize::MAX };
        self.depth -= 1;
        dedup(out, cap)
    }

    fn arrays(&mut self, node: &Map<String, Value>) -> Vec<Value> {
        let items = node.get("items").cloned().unwrap_or(json!({}));
        let mut out = vec![json!([])];
        for item in self.values(&items).into_iter().take(40) {
            out.push(json!([item.clone()]));
            out.push(json!([item.clone(), item]));
        }
        out
    }

    fn objects(&mut self, schema: &Value, node: &Map<String, Value>) -> Vec<Value> {
        let mut out = vec![json!({})];
        let properties = node
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        if !properties.is_empty() {
            out.extend(self.structs(schema, node, &properties));
        }
        if let Some(values @ Value::Object(_)) = node.get("additionalProperties") {
            out.extend(self.maps(values));
        }
        out
    }

    /// A base object of admissible values for the required properties, varied one and two
    /// properties at a time.
    fn structs(
        &mut self,
        schema: &Value,
        node: &Map<String, Value>,
        properties: &Map<String, Value>,
    ) -> Vec<Value> {
        let required: Vec<&str> = node
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut choices: Vec<(String, Vec<Value>, Vec<Value>)> = Vec::new();
        for (name, property) in properties {
            let all = self.values(property);
            let good: Vec<Value> = all
                .iter()
                .filter(|value| self.admits(property, value))
                .take(3)
                .cloned()
                .collect();
            choices.push((name.clone(), all, good));
        }
        let mut base = Map::new();
        for (name, _, good) in &choices {
            if required.contains(&name.as_str())
                && let Some(first) = good.first()
            {
                base.insert(name.clone(), first.clone());
            }
        }
        let mut out = vec![Value::Object(base.clone())];
        for (name, all, _) in &choices {
            for value in all {
                let mut varied = base.clone();
                varied.insert(name.clone(), value.clone());
                out.push(Value::Object(varied));
            }
            let mut without = base.clone();
            without.remove(name);
            out.push(Value::Object(without));
        }
        for (i, (first, _, first_good)) in choices.iter().enumerate() {
            for (second, _, second_good) in &choices[i + 1..] {
                for (a, b) in first_good.iter().zip(second_good.iter().cycle()) {
                    let mut pair = base.clone();
                    pair.insert(first.clone(), a.clone());
                    pair.insert(second.clone(), b.clone());
                    out.push(Value::Object(pair));
                }
            }
        }
        let mut unknown = base;
        unknown.insert("unknownField".into(), json!(1));
        out.push(Value::Object(unknown));
        // Keep the admitted ones first, so the cap drops refused variations.
        let mut keyed: Vec<(bool, Value)> = out
            .into_iter()
            .map(|value| (!self.admits(schema, &value), value))
            .collect();
        keyed.sort_by_key(|(refused, _)| *refused);
        keyed.into_iter().map(|(_, value)| value).collect()
    }

    /// Maps: every adversarial string as a key (with an admissible value), and two keys.
    fn maps(&mut self, values: &Value) -> Vec<Value> {
        let candidates = self.values(values);
        let value = candidates
            .iter()
            .find(|value| self.admits(values, value))
            .cloned()
            .unwrap_or(Value::Null);
        let mut out = Vec::new();
        for key in STRINGS {
            out.push(json!({ *key: value.clone() }));
        }
        for other in candidates.iter().take(20) {
            out.push(json!({"1": other.clone()}));
        }
        out.push(json!({"0": value.clone(), "1": value.clone(), "Red": value}));
        out
    }
}

fn dedup(values: Vec<Value>, cap: usize) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for value in values {
        if !out.contains(&value) {
            out.push(value);
        }
    }
    out.truncate(cap);
    out
}

impl Generator {
    /// Whether the API server would store `value` (pruned and defaulted first) under `schema`.
    fn admits(&mut self, schema: &Value, value: &Value) -> bool {
        let compiled = self
            .compiled
            .entry(schema.to_string())
            .or_insert_with(|| ObjectSchema::for_value(schema).ok());
        compiled
            .as_ref()
            .is_some_and(|compiled| store(compiled, value).is_some())
    }
}

/// What the API server stores for `value`: whole numbers as Go writes them, pruned,
/// defaulted and valid, or `None`.
fn store(schema: &ObjectSchema, value: &Value) -> Option<Value> {
    let mut stored = value.clone();
    whole_numbers(&mut stored);
    schema.prune(&mut stored);
    schema.default(&mut stored);
    schema.validate(&stored, None).is_empty().then_some(stored)
}

/// How many candidates the schema admitted and refused.
#[derive(Debug)]
pub struct Verdicts {
    pub admitted: usize,
    pub refused: usize,
}

/// Checks the contract for `T` on generated candidates and `extra` ones: each admitted value
/// decodes into `T` (the same `T` serde reads from the candidate itself, when it does), and
/// `T`'s JSON is admitted and decodes to the same `T`.
#[track_caller]
pub fn admitted_values_decode<T>(extra: &[Value]) -> Verdicts
where
    T: Serialize + DeserializeOwned + JsonSchema + PartialEq + Debug,
{
    let schema = kbr_runtime::crd::structural_schema_for::<T>()
        .unwrap_or_else(|error| panic!("no schema: {error}"));
    let compiled = ObjectSchema::for_value(&schema)
        .unwrap_or_else(|errors| panic!("the schema does not compile: {errors:?}"));
    let mut candidates = Generator {
        depth: 0,
        compiled: HashMap::new(),
    }
    .values(&schema);
    candidates.extend(extra.iter().cloned());
    let mut verdicts = Verdicts {
        admitted: 0,
        refused: 0,
    };
    for candidate in &candidates {
        let Some(stored) = store(&compiled, candidate) else {
            verdicts.refused += 1;
            continue;
        };
        verdicts.admitted += 1;
        let read: T = serde_json::from_value(stored.clone()).unwrap_or_else(|error| {
            panic!(
                "the API server stores {stored} (sent {candidate}), which serde cannot read: \
                 {error}\nschema: {schema:#}"
            )
        });
        if let Ok(direct) = serde_json::from_value::<T>(candidate.clone()) {
            assert_eq!(
                read, direct,
                "the API server changes what serde reads: sent {candidate}, stored {stored}"
            );
        }
        let written = serde_json::to_value(&read).unwrap();
        let Some(again) = store(&compiled, &written) else {
            panic!("the API server refuses serde's {written} (read from {stored})");
        };
        let reread: T = serde_json::from_value(again.clone())
            .unwrap_or_else(|error| panic!("serde cannot read back {again}: {error}"));
        assert_eq!(reread, read, "{written} is stored as {again}");
    }
    eprintln!("{}: {verdicts:?}", std::any::type_name::<T>());
    verdicts
}

/// kube-apiserver decodes a custom resource's numbers as Go does (`float64` unless an
/// integer) and writes a whole `float64` without its fraction (`1e3` is stored as `1000`), as
/// kbr-testing's fake does before it validates.
fn whole_numbers(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            if let Some(f) = n.as_f64()
                && f.fract() == 0.0
                && f.abs() < 9.2e18
            {
                *value = Value::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_numbers),
        Value::Object(fields) => fields.values_mut().for_each(whole_numbers),
        _ => {}
    }
}
