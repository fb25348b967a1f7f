//! Reading user files: JSON parameter objects and CSV measurements, with errors that name the
//! file, the line and the field.

use std::io::Read;
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use hetsim_models::{Params, Scalar};

/// The whole of `path`, or of standard input for `-`.
pub fn read_text(path: &Path) -> Result<String> {
    if path == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading standard input")?;
        Ok(text)
    } else {
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
    }
}

pub fn display_name(path: &Path) -> String {
    if path == Path::new("-") {
        "<stdin>".to_owned()
    } else {
        path.display().to_string()
    }
}

/// A JSON object of numbers and strings, as model parameters.
pub fn params_from_json(text: &str, origin: &str) -> Result<Params> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| anyhow!("{origin}: malformed JSON: {e}"))?;
    let serde_json::Value::Object(map) = value else {
        bail!("{origin}: expected a JSON object of parameters, like {{\"size\": 1e6}}");
    };
    map.into_iter()
        .map(|(key, v)| {
            let scalar = match &v {
                serde_json::Value::Number(n) => n.as_f64().map(Scalar::Number),
                serde_json::Value::String(s) => Some(Scalar::Text(s.clone())),
                _ => None,
            }
            .ok_or_else(|| anyhow!("{origin}: key `{key}`: expected a number or a string, got {v}"))?;
            Ok((key, scalar))
        })
        .collect()
}

/// The rows of a CSV file with a header, each as the named columns' text.
pub fn csv_rows(path: &Path, columns: &[&str]) -> Result<Vec<(u64, Vec<String>)>> {
    let origin = display_name(path);
    let text = read_text(path)?;
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .with_context(|| format!("{origin}: reading the header"))?
        .clone();
    let positions = columns
        .iter()
        .map(|c| {
            headers
                .iter()
                .position(|h| h.eq_ignore_ascii_case(c))
                .ok_or_else(|| {
                    anyhow!(
                        "{origin}: line 1: no column `{c}` (expected columns: {})",
                        columns.join(",")
                    )
                })
        })
        .collect::<Result<Vec<_>>>()?;
    reader
        .records()
        .map(|record| {
            let record = record.with_context(|| format!("{origin}: malformed CSV"))?;
            let line = record.position().map_or(0, |p| p.line());
            let fields = positions
                .iter()
                .map(|&i| record.get(i).unwrap_or("").to_owned())
                .collect();
            Ok((line, fields))
        })
        .collect()
}

/// A CSV field as a number, or an error naming the file, line and column.
pub fn number_field(origin: &str, line: u64, column: &str, text: &str) -> Result<f64> {
    text.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| anyhow!("{origin}: line {line}: field `{column}`: expected a number, got {text:?}"))
}

/// `NAME=VALUE` split at the first `=`.
pub fn pair<'a>(text: &'a str, flag: &str) -> Result<(&'a str, &'a str)> {
    text.split_once('=')
        .filter(|(name, _)| !name.is_empty())
        .ok_or_else(|| anyhow!("{flag} {text:?}: expected NAME=VALUE"))
}
