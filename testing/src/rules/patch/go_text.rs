//! JSON values as Go's `fmt` prints them with `%v` (maps as `map[k:v ...]` with sorted keys,
//! lists as `[a b]`, strings bare, `<nil>`), for the messages of strategic-merge-patch errors,
//! which apimachinery `pkg/util/mergepatch/errors.go` formats from decoded JSON.

use serde_json::Value;

/// `fmt.Sprintf("%v", value)` of a value decoded from JSON (integers as `int64`, other numbers
/// as `float64`).
pub(super) fn go_value(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::String(s) => s.clone(),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (None, Some(u), _) => u.to_string(),
            (None, None, Some(f)) => go_float(f),
            (None, None, None) => n.to_string(),
        },
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(go_value).collect();
            format!("[{}]", items.join(" "))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let pairs: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", go_value(&map[k])))
                .collect();
            format!("map[{}]", pairs.join(" "))
        }
    }
}

/// `%v` of a `float64` (`strconv.FormatFloat(f, 'g', -1, 64)`): the shortest digits, in
/// exponent form (`1e+06`, `1.5e-07`) when the decimal exponent is below -4 or at least 6.
fn go_float(f: f64) -> String {
    if f == 0.0 || !f.is_finite() {
        return format!("{f}");
    }
    let exponent = f.abs().log10().floor() as i32;
    if !(-4..6).contains(&exponent) {
        let text = format!("{f:e}");
        match text.split_once('e') {
            Some((mantissa, exp)) => {
                let (sign, digits) = exp.strip_prefix('-').map_or(("+", exp), |d| ("-", d));
                format!("{mantissa}e{sign}{digits:0>2}")
            }
            None => text,
        }
    } else {
        format!("{f}")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn maps_are_sorted_and_values_bare() {
        let v = json!({"name": "web", "$patch": "bogus", "ports": [80, 1.5], "x": null});
        assert_eq!(
            go_value(&v),
            "map[$patch:bogus name:web ports:[80 1.5] x:<nil>]"
        );
        assert_eq!(go_value(&json!(1e-7)), "1e-07");
        assert_eq!(go_value(&json!(1.5e6)), "1.5e+06");
        assert_eq!(go_value(&json!(12345.5)), "12345.5");
    }
}
