//! The JSON Schema of system files, generated from the serde types of [`crate::system`] (so
//! that the two cannot drift; `docs/schema/system.schema.json` is its published copy, which a
//! test keeps equal), and the check of a system file against it before deserialisation: each
//! message names the file, the path in it (`link[0].channels`) and what the schema expected.

use std::sync::LazyLock;

use jsonschema::paths::LocationSegment;
use jsonschema::{ValidationError, Validator};
use schemars::{json_schema, Schema, SchemaGenerator};
use serde_json::{Map, Value};

use crate::system::SystemFile;

/// Messages listed at most for one file: the first ones say what to fix first.
const MAX_MESSAGES: usize = 10;

/// The JSON Schema (draft 2020-12) of a system file, TOML or JSON.
pub fn system_schema() -> Value {
    let generated = schemars::schema_for!(SystemFile).to_value();
    // `$schema` and the title first, as a reader of the published file expects them.
    let mut schema = Map::new();
    schema.insert("$schema".to_owned(), generated["$schema"].clone());
    schema.insert("title".to_owned(), "hetsim system model".into());
    if let Value::Object(rest) = generated {
        for (key, value) in rest {
            schema.entry(key).or_insert(value);
        }
    }
    Value::Object(schema)
}

static SYSTEM_VALIDATOR: LazyLock<Validator> = LazyLock::new(|| {
    // The schema is generated from this crate's types: a failure is a bug in them, not input.
    jsonschema::validator_for(&system_schema()).expect("the generated system schema is a valid JSON Schema")
});

/// The schema of a component's `attributes`: numbers or text by name (which a component kind
/// needs is each model's business, checked when the system is resolved).
pub(crate) fn attributes_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "additionalProperties": { "type": ["number", "string"] }
    })
}

/// Reads a system file's text as a JSON value: JSON when it starts with `{`, else TOML (with
/// TOML's own message, line and column, for a syntax error).
pub fn read(text: &str, origin: &str) -> Result<Value, String> {
    if text.trim_start().starts_with('{') {
        serde_json::from_str(text).map_err(|e| format!("{origin}: {e}"))
    } else {
        let table: toml::Table = toml::from_str(text).map_err(|e| format!("{origin}: {e}"))?;
        toml_to_json(toml::Value::Table(table), &mut String::new()).map_err(|e| format!("{origin}: {e}"))
    }
}

/// A TOML value as JSON. JSON has no NaN or infinity, and no rate or time is either: TOML's
/// `nan` and `inf` are refused here, at their path, rather than turned into `null`.
fn toml_to_json(value: toml::Value, path: &mut String) -> Result<Value, String> {
    Ok(match value {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(x) => serde_json::Number::from_f64(x)
            .map(Value::Number)
            .ok_or_else(|| format!("{path}: {x} is not a finite number"))?,
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(items) => Value::Array(
            items
                .into_iter()
                .enumerate()
                .map(|(index, item)| within(path, &format!("[{index}]"), |path| toml_to_json(item, path)))
                .collect::<Result<_, _>>()?,
        ),
        toml::Value::Table(table) => Value::Object(
            table
                .into_iter()
                .map(|(key, item)| {
                    let step = if path.is_empty() {
                        key.clone()
                    } else {
                        format!(".{key}")
                    };
                    within(path, &step, |path| toml_to_json(item, path)).map(|v| (key, v))
                })
                .collect::<Result<Map<_, _>, _>>()?,
        ),
    })
}

/// Runs `f` with `step` appended to `path`, then restores `path`.
fn within<T>(path: &mut String, step: &str, f: impl FnOnce(&mut String) -> T) -> T {
    let length = path.len();
    path.push_str(step);
    let result = f(path);
    path.truncate(length);
    result
}

/// Checks a system file's value against [`system_schema`]: every violation (the first
/// [`MAX_MESSAGES`]) as `origin: path: what was expected`, one a line.
pub fn check_system(value: &Value, origin: &str) -> Result<(), String> {
    let messages: Vec<String> = SYSTEM_VALIDATOR
        .iter_errors(value)
        .take(MAX_MESSAGES)
        .map(|error| format!("{origin}: {}: {}", json_path(&error), expected(&error)))
        .collect();
    if messages.is_empty() {
        Ok(())
    } else {
        Err(messages.join("\n"))
    }
}

/// What the schema expected, showing the value where it is a scalar (a table would fill
/// the screen).
fn expected(error: &ValidationError) -> String {
    if error.instance().is_object() || error.instance().is_array() {
        error.masked_with("the value").to_string()
    } else {
        error.to_string()
    }
}

/// Where an error is, as `link[0].channels`, or `(top level)`.
fn json_path(error: &ValidationError) -> String {
    let mut path = String::new();
    for segment in error.instance_path() {
        match segment {
            LocationSegment::Index(index) => path.push_str(&format!("[{index}]")),
            LocationSegment::Property(name) if path.is_empty() => path.push_str(&name),
            LocationSegment::Property(name) => path.push_str(&format!(".{name}")),
        }
    }
    if path.is_empty() {
        "(top level)".to_owned()
    } else {
        path
    }
}
