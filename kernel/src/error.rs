//! Errors that name the listing line and what was expected.

use std::fmt;

/// An analysis error: a message and, where it comes from the listing, its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub line: Option<usize>,
    pub message: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An error at `line` (1-based) of the listing.
    pub fn at(line: usize, message: impl Into<String>) -> Error {
        Error {
            line: Some(line),
            message: message.into(),
        }
    }

    /// An error not tied to a line (a bad option, an unknown kernel).
    pub fn new(message: impl Into<String>) -> Error {
        Error {
            line: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

impl std::error::Error for Error {}
