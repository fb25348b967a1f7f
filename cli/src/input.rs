//! Reading the command line's inputs: JSON parameter objects and `NAME=VALUE` flags, with
//! errors that name the file and the field.

use anyhow::{anyhow, bail, Result};
use hetsim_models::{Params, Scalar};

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

/// `NAME=VALUE` split at the first `=`.
pub fn pair<'a>(text: &'a str, flag: &str) -> Result<(&'a str, &'a str)> {
    text.split_once('=')
        .filter(|(name, _)| !name.is_empty())
        .ok_or_else(|| anyhow!("{flag} {text:?}: expected NAME=VALUE"))
}
