//! Run variables: the named values a run gives its application script as constants.

use serde::{Deserialize, Serialize};

/// A run variable, typed as the application sees it. In JSON: a number without a fraction
/// is an integer, any other number a float; then booleans and strings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = VariableValue))]
#[serde(untagged)]
pub enum Variable {
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(String),
}

impl Variable {
    /// Infers the type from the text: an integer, else a float, else a bool, else a string.
    pub fn infer(text: &str) -> Self {
        if let Ok(i) = text.parse::<i64>() {
            Variable::Int(i)
        } else if let Ok(x) = text.parse::<f64>() {
            Variable::Float(x)
        } else if let Ok(b) = text.parse::<bool>() {
            Variable::Bool(b)
        } else {
            Variable::Text(text.to_owned())
        }
    }

    /// The value of a number (an integer or a float); `None` for a bool or a string.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Variable::Int(i) => Some(*i as f64),
            Variable::Float(x) => Some(*x),
            Variable::Bool(_) | Variable::Text(_) => None,
        }
    }
}

/// Names every process's script sees besides the run variables.
/// The names every script has, which no variable may take.
pub const RESERVED_NAMES: [&str; 5] = ["tag", "rank", "pid", "labels", "sim"];
