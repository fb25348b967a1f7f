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
    /// Infers the type from the text: an integer, else a float, else a byte size (below),
    /// else a bool, else a string.
    ///
    /// A byte size is a number and a unit, SI or IEC (`400MB` = 4·10⁸, `4 GiB` = 2³²,
    /// `1.5kB` = 1500, `512B`): it is the number of bytes, an integer where it is whole, since
    /// apps take sizes in bytes and a size read as text only fails later, mid-run.
    pub fn infer(text: &str) -> Self {
        if let Ok(i) = text.parse::<i64>() {
            Variable::Int(i)
        } else if let Ok(x) = text.parse::<f64>() {
            Variable::Float(x)
        } else if let Some(bytes) = byte_size(text) {
            whole_or_float(bytes)
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

/// The bytes `text` names as a number and a byte unit (`400MB`, `4 GiB`), if it does.
fn byte_size(text: &str) -> Option<f64> {
    const UNITS: [(&str, f64); 10] = [
        ("B", 1.0),
        ("kB", 1e3),
        ("MB", 1e6),
        ("GB", 1e9),
        ("TB", 1e12),
        ("KiB", 1024.0),
        ("MiB", 1048576.0),
        ("GiB", 1073741824.0),
        ("TiB", 1099511627776.0),
        ("KB", 1e3),
    ];
    let split = text.find(|c: char| c.is_ascii_alphabetic())?;
    let (number, unit) = text.split_at(split);
    let scale = UNITS.iter().find(|(name, _)| *name == unit.trim())?.1;
    let value = number
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)?;
    Some(value * scale)
}

/// An integer where `x` is whole and fits one, else a float.
fn whole_or_float(x: f64) -> Variable {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        Variable::Int(x as i64)
    } else {
        Variable::Float(x)
    }
}

/// Names every process's script sees besides the run variables.
/// The names every script has, which no variable may take.
pub const RESERVED_NAMES: [&str; 5] = ["tag", "rank", "pid", "labels", "sim"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_typed_as_a_number_a_byte_size_a_bool_or_a_string() {
        assert_eq!(Variable::infer("64"), Variable::Int(64));
        assert_eq!(Variable::infer("2.5"), Variable::Float(2.5));
        assert_eq!(Variable::infer("400MB"), Variable::Int(400_000_000));
        assert_eq!(Variable::infer("4 GiB"), Variable::Int(1 << 32));
        assert_eq!(Variable::infer("1.5kB"), Variable::Int(1500));
        assert_eq!(Variable::infer("0.5B"), Variable::Float(0.5));
        assert_eq!(Variable::infer("true"), Variable::Bool(true));
        for text in ["A100", "4 GPUs", "MB", "-1MB", "3 parsecs"] {
            assert_eq!(Variable::infer(text), Variable::Text(text.to_owned()), "{text}");
        }
    }
}
