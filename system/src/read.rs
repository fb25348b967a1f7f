//! A system file's text as a JSON value: JSON when it starts with `{`, else TOML; the JSON
//! Schema check ([`crate::schema`]) and deserialisation take it from there.

use serde_json::{Map, Value};

use crate::error::{line_and_column, SystemError};

/// Reads a system file's text as a JSON value: JSON when it starts with `{`, else TOML (with
/// TOML's own message, line and column, for a syntax error).
pub fn read(text: &str, origin: &str) -> Result<Value, SystemError> {
    if text.trim_start().starts_with('{') {
        serde_json::from_str(text).map_err(|e| {
            let (line, column) = (e.line(), e.column());
            let error = SystemError::new(e.to_string()).in_file(origin);
            // serde_json counts from 1; 0 would mean it knows no place.
            if line > 0 {
                error.at_line(line, column.max(1))
            } else {
                error
            }
        })
    } else {
        let table: toml::Table = toml::from_str(text).map_err(|e| {
            let error = SystemError::new(e.to_string()).in_file(origin);
            match e.span() {
                Some(span) => {
                    let (line, column) = line_and_column(text, span.start);
                    error.at_line(line, column)
                }
                None => error,
            }
        })?;
        toml_to_json(toml::Value::Table(table), &mut String::new()).map_err(|e| e.in_file(origin))
    }
}

/// A TOML value as JSON. JSON has no NaN or infinity, and no rate or time is either: TOML's
/// `nan` and `inf` are refused here, at their path, rather than turned into `null`.
fn toml_to_json(value: toml::Value, path: &mut String) -> Result<Value, SystemError> {
    Ok(match value {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(x) => serde_json::Number::from_f64(x)
            .map(Value::Number)
            .ok_or_else(|| {
                SystemError::new(format!("{path}: {x} is not a finite number")).at_path(path.clone())
            })?,
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
