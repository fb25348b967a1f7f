//! Plain-text tables for terminal output.

use serde_json::Value;

/// Two aligned columns: each key of a flat JSON object and its value.
pub fn key_values(object: &Value) -> String {
    let Some(map) = object.as_object() else {
        return format!("{object}\n");
    };
    let width = map.keys().map(String::len).max().unwrap_or(0);
    map.iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| format!("  {k:<width$}  {}\n", scalar(v)))
        .collect()
}

/// A JSON scalar as a person reads it: numbers compactly, strings without quotes.
pub fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(x) if x != 0.0 && (x.abs() >= 1e7 || x.abs() < 1e-3) => format!("{x:.6e}"),
            Some(x) if x.fract() == 0.0 => format!("{x}"),
            Some(x) => format!("{x:.6}"),
            None => n.to_string(),
        },
        other => other.to_string(),
    }
}
