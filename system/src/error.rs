//! Why a system file is refused, with where the problem is when that is known.

use std::fmt;

use hetsim_models::params::closest;

/// A system file's error. Its text ([`fmt::Display`]) is `origin:line: message` (`origin:
/// message` where the line is not known, `message` where no file is named), then each of [`SystemError::more`] on a line of its own: the
/// messages users and tests read. `line`, `column` and `path` say where the problem is,
/// where it is known, for a caller that points at it (an editor marking the line).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct SystemError {
    /// The file (or the name standing for it) the system came from, as the caller named it.
    pub origin: Option<String>,
    /// The 1-based line in the file's text: known for TOML and JSON syntax errors.
    pub line: Option<usize>,
    /// The 1-based column (in characters) in that line.
    pub column: Option<usize>,
    /// The path of the value at fault in the file, as `link[0].channels` or `node[2]`.
    pub path: Option<String>,
    /// What is wrong: the whole text after `origin: ` (it may name the path itself, or the
    /// line and column, as TOML's messages do).
    pub message: String,
    /// Further problems found by the same check (the schema's violations after the first).
    pub more: Box<[SystemError]>,
}

impl SystemError {
    /// An error about no file in particular (yet: see [`SystemError::in_file`]).
    pub fn new(message: impl Into<String>) -> Self {
        SystemError {
            origin: None,
            line: None,
            column: None,
            path: None,
            message: message.into(),
            more: Box::default(),
        }
    }

    /// The error as found in file `origin`: its text gains the prefix `origin: `.
    pub fn in_file(mut self, origin: &str) -> Self {
        if let Some(inner) = self.origin.take() {
            self.message = format!("{inner}: {}", self.message);
        }
        self.origin = Some(origin.to_owned());
        self.more = self
            .more
            .into_vec()
            .into_iter()
            .map(|e| e.in_file(origin))
            .collect();
        self
    }

    /// The error at `path` in the file (its text unchanged).
    pub fn at_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// The error at 1-based `line` and `column` of the file's text (its text unchanged).
    pub fn at_line(mut self, line: usize, column: usize) -> Self {
        self.line = Some(line);
        self.column = Some(column);
        self
    }

    /// The 1-based line of the problem in the file's text, if known.
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// The 1-based column of the problem in its line, if known.
    pub fn column(&self) -> Option<usize> {
        self.column
    }
}

impl fmt::Display for SystemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.origin, self.line) {
            (Some(origin), Some(line)) => write!(f, "{origin}:{line}: ")?,
            (Some(origin), None) => write!(f, "{origin}: ")?,
            _ => {}
        }
        f.write_str(&self.message)?;
        for more in &self.more {
            write!(f, "\n{more}")?;
        }
        Ok(())
    }
}

/// For callers that keep messages as text (`Result<_, String>`): the error's text.
impl From<SystemError> for String {
    fn from(error: SystemError) -> String {
        error.to_string()
    }
}

/// `; did you mean `x`?` for a suggested name, or nothing.
pub(crate) fn did_you_mean(suggestion: Option<String>) -> String {
    suggestion
        .map(|h| format!("; did you mean `{h}`?"))
        .unwrap_or_default()
}

/// The 1-based line and column (in characters) of byte `offset` in `text`.
pub(crate) fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count() + 1;
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

/// An end of a link (or of a route) that names no node; `path` is where it is named.
pub(crate) fn unknown_node<'a>(
    origin: &str,
    path: &str,
    owner: &str,
    id: &str,
    ids: impl IntoIterator<Item = &'a str>,
) -> SystemError {
    SystemError::new(format!(
        "{owner}: unknown node `{id}`{}",
        did_you_mean(closest(id, ids))
    ))
    .in_file(origin)
    .at_path(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_is_origin_then_message_then_the_others_a_line_each() {
        let mut error = SystemError::new("a: wrong").at_path("a");
        error.more = Box::new([SystemError::new("b: wrong too")]);
        let error = error.in_file("s.toml");
        assert_eq!(error.to_string(), "s.toml: a: wrong\ns.toml: b: wrong too");
        assert_eq!(error.path.as_deref(), Some("a"));
        let nested = SystemError::new("m").in_file("inner").in_file("outer");
        assert_eq!(nested.to_string(), "outer: inner: m");
    }

    #[test]
    fn lines_and_columns_count_from_one_in_characters() {
        assert_eq!(line_and_column("ab\ncé d", 7), (2, 4));
        assert_eq!(line_and_column("x", 0), (1, 1));
        assert_eq!(line_and_column("x", 99), (1, 2));
    }
}
