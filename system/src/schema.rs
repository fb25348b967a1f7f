//! The JSON Schema of system files, generated from the serde types of [`crate::spec`] (so
//! that the two cannot drift; `docs/schema/system.schema.json` is its published copy, which a
//! test keeps equal), and the check of a system file against it before deserialisation: each
//! message names the file, the path in it (`link[0].channels`) and what the schema expected.

use std::sync::LazyLock;

use jsonschema::paths::LocationSegment;
use jsonschema::{ValidationError, Validator};
use serde_json::{Map, Value};

use crate::error::SystemError;
use crate::spec::SystemFile;

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

/// Checks a system file's value against [`system_schema`]: every violation (the first
/// [`MAX_MESSAGES`]) as `origin: path: what was expected`, one a line: the first is the
/// error, the others its [`SystemError::more`].
pub fn check_system(value: &Value, origin: &str) -> Result<(), SystemError> {
    let mut errors = SYSTEM_VALIDATOR
        .iter_errors(value)
        .take(MAX_MESSAGES)
        .map(|error| {
            let path = json_path(&error);
            SystemError::new(format!("{path}: {}", expected(&error)))
                .in_file(origin)
                .at_path(path)
        });
    match errors.next() {
        None => Ok(()),
        Some(mut first) => {
            first.more = errors.collect();
            Err(first)
        }
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
