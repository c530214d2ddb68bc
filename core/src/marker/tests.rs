use serde_json::{Value, json};

use super::*;

/// A value of `argument`'s type, as the derive writes it into a record.
fn sample(argument: Argument) -> Value {
    match argument {
        Argument::Flag => json!(true),
        Argument::Number => json!(-1.5),
        Argument::Count => json!(63),
        Argument::Str | Argument::Format => json!("date-time"),
        Argument::Choice(choices) => json!(choices[0]),
        Argument::Json => json!({"replicas": 1}),
        Argument::JsonArray => json!(["Always", "Never"]),
        Argument::Fields => json!([["a", "b"]]),
        Argument::Keys => json!(["name"]),
        Argument::Rule => json!([{"rule": "self.a <= self.b", "message": "a above b"}]),
        Argument::Items => json!({"maxLength": 5}),
    }
}

#[test]
fn the_registry_is_in_marker_id_order() {
    assert_eq!(MARKERS.len(), MarkerId::Items as usize + 1);
    for (index, marker) in MARKERS.iter().enumerate() {
        assert_eq!(marker.id as usize, index, "{}", marker.name);
        assert_eq!(marker.id.marker(), marker);
    }
}

#[test]
fn names_and_aliases_are_unique() {
    let mut seen = Vec::new();
    for marker in &MARKERS {
        for name in std::iter::once(&marker.name).chain(marker.aliases) {
            assert!(!seen.contains(name), "{name} twice");
            seen.push(name);
            assert_eq!(find(name), Some(marker));
        }
    }
}

#[test]
fn every_marker_has_its_record_field_and_back() {
    let mut full = serde_json::Map::new();
    for marker in &MARKERS {
        let value = sample(marker.argument);
        let one: Value = json!({ marker.record_key: value });
        let record: Record = serde_json::from_value(one.clone())
            .unwrap_or_else(|error| panic!("{}: {error}", marker.name));
        assert_eq!(
            serde_json::to_value(&record).unwrap(),
            one,
            "{}",
            marker.name
        );
        let markers = record.markers().unwrap();
        assert_eq!(markers.len(), 1, "{}", marker.name);
        assert_eq!(markers[0].0.record_key, marker.record_key);
        full.insert(marker.record_key.to_owned(), value);
    }
    full.insert("name".into(), json!("FooSpec"));
    let record: Record = serde_json::from_value(Value::Object(full.clone())).unwrap();
    assert_eq!(serde_json::to_value(&record).unwrap(), Value::Object(full));
    let keys: Vec<&str> = record
        .markers()
        .unwrap()
        .iter()
        .map(|(marker, _)| marker.record_key)
        .collect();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    assert_eq!(keys, sorted, "ordered by record key");
}

#[test]
fn unknown_keys_and_wrong_types_are_refused() {
    assert!(serde_json::from_value::<Record>(json!({"minLenght": 1})).is_err());
    assert!(serde_json::from_value::<Record>(json!({"minLength": -1})).is_err());
    assert!(serde_json::from_value::<Record>(json!({"listType": "bag"})).is_err());
    assert!(serde_json::from_value::<Record>(json!({"validations": [{"message": "m"}]})).is_err());
}

#[test]
fn null_defaults_are_kept() {
    let record: Record = serde_json::from_value(json!({"default": null})).unwrap();
    assert_eq!(record.default, Some(Value::Null));
    assert_eq!(
        serde_json::to_value(&record).unwrap(),
        json!({"default": null})
    );
}

#[test]
fn choices_and_reasons_are_the_serde_names() {
    for choice in LIST_TYPES {
        let list_type: ListType = serde_json::from_value(json!(choice)).unwrap();
        assert_eq!(list_type.name(), *choice);
    }
    for choice in MAP_TYPES {
        assert!(
            serde_json::from_value::<MapType>(json!(choice)).is_ok(),
            "{choice}"
        );
    }
    for reason in Reason::ALL {
        assert_eq!(serde_json::to_value(reason).unwrap(), json!(reason.name()));
        assert_eq!(Reason::from_name(reason.name()), Some(reason));
    }
}

#[test]
fn shapes_admitted() {
    assert!(Applies::Numeric.admits(Shape::Integer));
    assert!(!Applies::Numeric.admits(Shape::String));
    assert!(Applies::Map.admits(Shape::Object) && !Applies::Map.admits(Shape::Struct));
    assert!(Applies::ObjectOrAny.admits(Shape::Any));
    assert!(!Applies::IntOrString.admits(Shape::String));
    assert!(Applies::IntOrString.admits_node(Shape::String));
    assert_eq!(Applies::Numeric.schema_types(), "integer or number");
    assert_eq!(Applies::String.schema_types(), "string or int-or-string");
    assert_eq!(
        Applies::Formattable.schema_types(),
        "string or integer or number or int-or-string"
    );
    assert_eq!(Applies::Struct.schema_types(), "object");
    assert_eq!(
        Applies::ObjectOrAny.schema_types(),
        "object or free-form JSON"
    );
}
