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

/// `error` (and each of its others) with the line of its path in `text`, where the text is
/// TOML and the error names a path but no line: a misspelt field is shown at its line, as a
/// syntax error is. An unexpected key (`'cout' was unexpected`) is found at its own line.
pub(crate) fn locate(mut error: SystemError, text: &str) -> SystemError {
    if text.trim_start().starts_with('{') {
        return error;
    }
    let Ok(doc) = toml_edit::Document::parse(text) else {
        return error;
    };
    let mut place = |e: &mut SystemError| {
        if e.line.is_some() {
            return;
        }
        let Some(path) = &e.path else { return };
        let key = unexpected_key(&e.message);
        if let Some(offset) = offset_of(doc.as_item(), path, key) {
            let (line, column) = line_and_column(text, offset);
            e.line = Some(line);
            e.column = Some(column);
        }
    };
    place(&mut error);
    let mut more = error.more.into_vec();
    more.iter_mut().for_each(&mut place);
    error.more = more.into_boxed_slice();
    error
}

/// `cout` of the schema's "Additional properties are not allowed ('cout' was unexpected)".
fn unexpected_key(message: &str) -> Option<&str> {
    let (before, _) = message.split_once("' was unexpected")?;
    before.rsplit_once("('").map(|(_, key)| key)
}

/// The byte offset of the value at `path` (`node[1].labels.GPU`) in the document, or of
/// `key` within it.
fn offset_of(root: &toml_edit::Item, path: &str, key: Option<&str>) -> Option<usize> {
    let mut item = root;
    let mut offset = None;
    let steps = path.split('.').filter(|s| *s != "(top level)" && !s.is_empty());
    for step in steps {
        let (name, indices) = step.split_once('[').map_or((step, ""), |(n, rest)| (n, rest));
        if !name.is_empty() {
            let (k, value) = item.as_table_like()?.get_key_value(name)?;
            offset = k.span().or_else(|| value.span()).map(|s| s.start).or(offset);
            item = value;
        }
        for index in indices
            .split('[')
            .filter_map(|i| i.trim_end_matches(']').parse::<usize>().ok())
        {
            item = item.get(index)?;
            let span = item.span().or_else(|| item.as_table().and_then(|t| t.span()));
            offset = span.map(|s| s.start).or(offset);
        }
    }
    if let Some(key) = key {
        if let Some((k, _)) = item.as_table_like().and_then(|t| t.get_key_value(key)) {
            offset = k.span().map(|s| s.start).or(offset);
        }
    }
    offset
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
