//! Named model inputs and the errors that name the offending key.
//!
//! Every model reads its inputs from a [`Params`] map through a [`ParamReader`], so that the
//! CLI (JSON files), Rhai scripts (object maps) and the HTTP API report a missing, unknown or
//! out-of-range key in the same words.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// A parameter or attribute value: hardware attributes and model inputs are numbers or text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = AttributeValue))]
#[serde(untagged)]
pub enum Scalar {
    Number(f64),
    Text(String),
}

impl Scalar {
    pub fn as_number(&self) -> Option<f64> {
        match self {
            Scalar::Number(x) => Some(*x),
            Scalar::Text(_) => None,
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Number(x) => write!(f, "{x}"),
            Scalar::Text(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<f64> for Scalar {
    fn from(x: f64) -> Self {
        Scalar::Number(x)
    }
}

impl From<&str> for Scalar {
    fn from(s: &str) -> Self {
        Scalar::Text(s.to_owned())
    }
}

/// A model's inputs by key, as the user wrote them.
pub type Params = BTreeMap<String, Scalar>;

/// Why a model could not read its inputs; every variant names the key.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamError {
    Missing {
        key: String,
        hint: Option<String>,
    },
    Unknown {
        key: String,
        hint: Option<String>,
    },
    Invalid {
        key: String,
        expected: String,
        got: String,
    },
}

impl ParamError {
    pub fn invalid(key: &str, expected: impl Into<String>, got: impl fmt::Display) -> Self {
        ParamError::Invalid {
            key: key.to_owned(),
            expected: expected.into(),
            got: got.to_string(),
        }
    }

    /// The key the error is about.
    pub fn key(&self) -> &str {
        match self {
            ParamError::Missing { key, .. }
            | ParamError::Unknown { key, .. }
            | ParamError::Invalid { key, .. } => key,
        }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hint = |h: &Option<String>| match h {
            Some(h) => format!("; did you mean `{h}`?"),
            None => String::new(),
        };
        match self {
            // The hint is a key the input has: the user wrote it, and meant `key`.
            ParamError::Missing { key, hint: Some(h) } => {
                write!(f, "missing key `{key}`; found `{h}`: did you mean `{key}`?")
            }
            ParamError::Missing { key, hint: None } => write!(f, "missing key `{key}`"),
            ParamError::Unknown { key, hint: h } => write!(f, "unknown key `{key}`{}", hint(h)),
            ParamError::Invalid { key, expected, got } => {
                write!(f, "key `{key}`: expected {expected}, got {got}")
            }
        }
    }
}

impl std::error::Error for ParamError {}

/// The closest of `candidates` to `word`, if it is close enough to be a likely typo.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    candidates
        .into_iter()
        .map(|c| {
            (
                strsim::normalized_damerau_levenshtein(&word.to_lowercase(), &c.to_lowercase()),
                c,
            )
        })
        .filter(|(score, _)| *score >= 0.5)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c.to_owned())
}

/// Takes keys out of a [`Params`] map one by one; whatever is left at [`ParamReader::finish`]
/// is an unknown key.
pub struct ParamReader {
    values: Params,
    read: Vec<&'static str>,
}

impl ParamReader {
    pub fn new(values: Params) -> Self {
        ParamReader {
            values,
            read: Vec::new(),
        }
    }

    fn take(&mut self, key: &'static str) -> Option<Scalar> {
        self.read.push(key);
        self.values.remove(key)
    }

    fn missing(&self, key: &str) -> ParamError {
        ParamError::Missing {
            key: key.to_owned(),
            hint: closest(key, self.values.keys().map(String::as_str)),
        }
    }

    fn optional_number(&mut self, key: &'static str) -> Result<Option<f64>, ParamError> {
        match self.take(key) {
            None => Ok(None),
            Some(Scalar::Number(x)) if x.is_finite() => Ok(Some(x)),
            Some(other) => Err(ParamError::invalid(key, "a finite number", other)),
        }
    }

    /// An optional number > 0.
    pub fn optional_positive(&mut self, key: &'static str) -> Result<Option<f64>, ParamError> {
        self.optional_number(key)?
            .map(|x| require_positive(key, x))
            .transpose()
    }

    /// An optional number ≥ 0.
    pub fn optional_non_negative(&mut self, key: &'static str) -> Result<Option<f64>, ParamError> {
        self.optional_number(key)?
            .map(|x| require_non_negative(key, x))
            .transpose()
    }

    /// A required finite number.
    pub fn number(&mut self, key: &'static str) -> Result<f64, ParamError> {
        self.optional_number(key)?.ok_or_else(|| self.missing(key))
    }

    /// A required number > 0 (a divisor or a rate).
    pub fn positive(&mut self, key: &'static str) -> Result<f64, ParamError> {
        require_positive(key, self.number(key)?)
    }

    /// A number > 0 that defaults to `default` when absent.
    pub fn positive_or(&mut self, key: &'static str, default: f64) -> Result<f64, ParamError> {
        require_positive(key, self.optional_number(key)?.unwrap_or(default))
    }

    /// A fraction in (0, 1] that defaults to `default` when absent (an efficiency).
    pub fn fraction_or(&mut self, key: &'static str, default: f64) -> Result<f64, ParamError> {
        require_fraction(key, self.optional_number(key)?.unwrap_or(default))
    }

    /// A number from `lo` to `hi` that defaults to `default` when absent.
    pub fn within_or(
        &mut self,
        key: &'static str,
        [lo, hi]: [f64; 2],
        default: f64,
    ) -> Result<f64, ParamError> {
        let x = self.optional_number(key)?.unwrap_or(default);
        if (lo..=hi).contains(&x) {
            Ok(x)
        } else {
            Err(ParamError::invalid(key, format!("a number from {lo} to {hi}"), x))
        }
    }

    /// A required number ≥ 0 (a count or a size).
    pub fn non_negative(&mut self, key: &'static str) -> Result<f64, ParamError> {
        require_non_negative(key, self.number(key)?)
    }

    /// A number ≥ 0 that defaults to `default` when absent.
    pub fn non_negative_or(&mut self, key: &'static str, default: f64) -> Result<f64, ParamError> {
        require_non_negative(key, self.optional_number(key)?.unwrap_or(default))
    }

    /// A required value written as text, or as a number (rendered with one decimal, so that a
    /// compute capability written `8` or `8.0` reads as "8.0").
    pub fn text(&mut self, key: &'static str) -> Result<String, ParamError> {
        match self.take(key) {
            None => Err(self.missing(key)),
            Some(Scalar::Text(s)) => Ok(s),
            Some(Scalar::Number(x)) => Ok(format!("{x:.1}")),
        }
    }

    /// An optional value written as text (a number is refused).
    pub fn optional_text(&mut self, key: &'static str) -> Result<Option<String>, ParamError> {
        match self.take(key) {
            None => Ok(None),
            Some(Scalar::Text(s)) => Ok(Some(s)),
            Some(other) => Err(ParamError::invalid(key, "text", other)),
        }
    }

    /// Fails on the first key that no read asked for.
    pub fn finish(self) -> Result<(), ParamError> {
        match self.values.into_keys().next() {
            None => Ok(()),
            Some(key) => Err(ParamError::Unknown {
                hint: closest(&key, self.read.iter().copied()),
                key,
            }),
        }
    }
}

pub(crate) fn require_positive(key: &str, x: f64) -> Result<f64, ParamError> {
    if x > 0.0 {
        Ok(x)
    } else {
        Err(ParamError::invalid(key, "a number > 0", x))
    }
}

pub(crate) fn require_fraction(key: &str, x: f64) -> Result<f64, ParamError> {
    if x > 0.0 && x <= 1.0 {
        Ok(x)
    } else {
        Err(ParamError::invalid(key, "a fraction in (0, 1]", x))
    }
}

pub(crate) fn require_non_negative(key: &str, x: f64) -> Result<f64, ParamError> {
    if x >= 0.0 {
        Ok(x)
    } else {
        Err(ParamError::invalid(key, "a number >= 0", x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, Scalar)]) -> Params {
        pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    }

    #[test]
    fn missing_key_suggests_the_typo() {
        let mut r = ParamReader::new(params(&[("SM", 13.0.into())]));
        let err = r.positive("SMs").unwrap_err();
        assert_eq!(
            err.to_string(),
            "missing key `SMs`; found `SM`: did you mean `SMs`?"
        );
    }

    #[test]
    fn unknown_key_is_reported_at_finish() {
        let mut r = ParamReader::new(params(&[("size", 1.0.into()), ("bandwith", 2.0.into())]));
        r.number("size").unwrap();
        r.positive_or("bandwidth", 1.0).unwrap();
        let err = r.finish().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown key `bandwith`; did you mean `bandwidth`?"
        );
    }

    #[test]
    fn zero_divisor_and_text_number_are_invalid() {
        let mut r = ParamReader::new(params(&[("SMs", 0.0.into()), ("clock", "fast".into())]));
        assert_eq!(
            r.positive("SMs").unwrap_err().to_string(),
            "key `SMs`: expected a number > 0, got 0"
        );
        assert_eq!(r.number("clock").unwrap_err().key(), "clock");
    }
}
