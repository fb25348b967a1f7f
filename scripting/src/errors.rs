//! Script errors as `file:line:column: message`, and [`ScriptError`], the error of the
//! crate's public functions.

use hetsim_simulator::{PlatformError, SimError};
use hetsim_system::SystemError;
use rhai::{EvalAltResult, ParseError, ParseErrorType, Position};

/// Why a script could not be checked or a run failed. Its text ([`std::fmt::Display`]) is
/// the message users and tests read; [`ScriptError::line`] and [`ScriptError::column`] say
/// where in which script ([`ScriptError::origin`]) when that is known, for a caller that
/// points at it (an editor marking the line).
#[derive(Clone, Debug, thiserror::Error)]
pub enum ScriptError {
    /// An error in a script or model source: `origin:line:column: message`, or
    /// `origin:line: message` or `origin: message` where Rhai knows less of the place.
    #[error("{}", at_text(origin, *line, *column, message))]
    Script {
        /// The script's name (its file, `app.rhai`, a model's name).
        origin: String,
        /// 1-based.
        line: Option<usize>,
        /// 1-based, in characters.
        column: Option<usize>,
        message: String,
    },
    /// The system model (a kernel listing, a file it names).
    #[error(transparent)]
    System(#[from] SystemError),
    /// The engine's platform: links, labels no node carries or that ask too many processes.
    #[error(transparent)]
    Platform(#[from] PlatformError),
    /// The engine stopped the run: a process failed (its message names the script's place),
    /// a deadlock. Its text is the engine's.
    #[error("{error}")]
    Engine {
        error: SimError,
        /// When a process failed in its script: that error, with its place in the script.
        script: Option<Box<ScriptError>>,
    },
    /// Anything else, as its message: a reserved name taken, too many processes, a model's
    /// return value.
    #[error("{0}")]
    Other(String),
}

impl ScriptError {
    /// The script (or system file) the error is in, if it is in one.
    pub fn origin(&self) -> Option<&str> {
        match self {
            ScriptError::Script { origin, .. } => Some(origin),
            ScriptError::System(e) => e.origin.as_deref(),
            ScriptError::Engine { script: Some(e), .. } => e.origin(),
            _ => None,
        }
    }

    /// The 1-based line of the error in [`ScriptError::origin`], if known.
    pub fn line(&self) -> Option<usize> {
        match self {
            ScriptError::Script { line, .. } => *line,
            ScriptError::System(e) => e.line,
            ScriptError::Engine { script: Some(e), .. } => e.line(),
            _ => None,
        }
    }

    /// The 1-based column of the error in its line, if known.
    pub fn column(&self) -> Option<usize> {
        match self {
            ScriptError::Script { column, .. } => *column,
            ScriptError::System(e) => e.column,
            ScriptError::Engine { script: Some(e), .. } => e.column(),
            _ => None,
        }
    }
}

impl From<SimError> for ScriptError {
    fn from(error: SimError) -> Self {
        ScriptError::Engine { error, script: None }
    }
}

impl From<String> for ScriptError {
    fn from(message: String) -> Self {
        ScriptError::Other(message)
    }
}

/// For callers that keep messages as text (`Result<_, String>`): the error's text.
impl From<ScriptError> for String {
    fn from(error: ScriptError) -> String {
        error.to_string()
    }
}

fn at_text(origin: &str, line: Option<usize>, column: Option<usize>, message: &str) -> String {
    match (line, column) {
        (Some(line), Some(column)) => format!("{origin}:{line}:{column}: {message}"),
        (Some(line), None) => format!("{origin}:{line}: {message}"),
        _ => format!("{origin}: {message}"),
    }
}

fn at(origin: &str, position: Position, message: impl std::fmt::Display) -> ScriptError {
    let line = position.line();
    ScriptError::Script {
        origin: origin.to_owned(),
        line,
        // Rhai knows a column only on a known line.
        column: line.and(position.position()),
        message: message.to_string(),
    }
}

/// `origin:line:column: message`, or `origin: message` where Rhai knows no position.
pub fn located(origin: &str, mut error: EvalAltResult) -> ScriptError {
    let position = error.take_position();
    match error {
        // The sandbox says why it stopped the script in the termination token.
        EvalAltResult::ErrorTerminated(reason, _) => at(origin, position, reason),
        EvalAltResult::ErrorTooManyOperations(_) => at(
            origin,
            position,
            "sandbox: the script ran more operations than allowed (limit max_operations)",
        ),
        EvalAltResult::ErrorStackOverflow(_) => at(
            origin,
            position,
            "sandbox: calls nested deeper than allowed (limit max_call_levels)",
        ),
        EvalAltResult::ErrorDataTooLarge(what, _) => {
            let limit = size_limit(&what);
            at(
                origin,
                position,
                format!("sandbox: {what} is over its limit ({limit})"),
            )
        }
        EvalAltResult::ErrorFunctionNotFound(signature, _) => {
            let why = operands_hint(&signature);
            at(origin, position, format!("Function not found: {signature}{why}"))
        }
        other => at(origin, position, other),
    }
}

/// Why an operator found no function for its operands' types, where the types say: Rhai
/// names only the signature (`/ (i64, ())`), which points at the operator, not at the value
/// that made it fail.
fn operands_hint(signature: &str) -> &'static str {
    let (operator, types) = signature.split_once(' ').unwrap_or((signature, ""));
    let is_range = matches!(operator, ".." | "..=");
    if types.contains("()") {
        "; an operand is () (no value): a map key the map lacks (a label the system does \
         not have, as labels[\"GPUs\"] beside a label GPU), or a function that returns nothing"
    } else if is_range && types.contains("f64") {
        "; a range's ends must be integers: a variable given with a fraction (--var steps=2.5) \
         where a count is meant? give an integer, or convert with to_int()"
    } else if types.contains("string") || types.contains("String") {
        "; an operand is text: a variable given as text where a number is meant? give a \
         number (sizes may be written 400MB or 4GiB)"
    } else {
        ""
    }
}

/// The `Limits` field behind Rhai's "data too large" error about `what`.
fn size_limit(what: &str) -> &'static str {
    let what = what.to_ascii_lowercase();
    if what.contains("string") {
        "limit max_string_size"
    } else if what.contains("array") {
        "limit max_array_size"
    } else if what.contains("map") {
        "limit max_map_size"
    } else {
        "a sandbox size limit"
    }
}

/// A syntax error in `source` as `origin:line:column: message`.
///
/// Rhai reports a missing token (`;` after a statement, `)`, `}`) where the next token
/// starts, often lines below, after blank lines and comments: the user looks for the line
/// that lacks it, so such an error is placed just after the last token before that position.
pub fn parse_error(origin: &str, source: &str, error: ParseError) -> ScriptError {
    let ParseError(kind, position) = error;
    let position = match *kind {
        ParseErrorType::MissingToken(..) => end_of_code_before(source, position).unwrap_or(position),
        _ => position,
    };
    at(origin, position, format!("syntax error: {kind}"))
}

/// Where the text of `source` ends before `position`, skipping whitespace, `//` and nested
/// `/* */` comments (not inside string literals): the line and the column just after the last
/// character of code. `None` when no code precedes `position` or it names no line.
fn end_of_code_before(source: &str, position: Position) -> Option<Position> {
    // Rhai's columns are 1-based characters; no column means the start of the line.
    let (stop_line, stop_column) = (position.line()?, position.position().unwrap_or(0));
    let mut scan = Scan::Code;
    let mut last = None;
    for (line_number, line) in (1..=stop_line).zip(source.lines()) {
        if scan == Scan::LineComment {
            scan = Scan::Code;
        }
        let mut chars = (1..).zip(line.chars()).peekable();
        while let Some((column, c)) = chars.next() {
            if line_number == stop_line && column >= stop_column {
                break;
            }
            let (next, is_code, skip_next) = scan.step(c, chars.peek().map(|&(_, n)| n));
            if is_code {
                last = Some((line_number, column));
            }
            if skip_next {
                chars.next();
            }
            scan = next;
        }
    }
    let (line, column) = last?;
    Some(Position::new(
        u16::try_from(line).ok()?,
        u16::try_from(column + 1).unwrap_or(u16::MAX),
    ))
}

/// What the scanner of [`end_of_code_before`] is inside.
#[derive(Clone, Copy, PartialEq)]
enum Scan {
    Code,
    LineComment,
    BlockComment(u32),
    /// A string or character literal opened by this quote.
    Text(char),
}

impl Scan {
    /// The state after `c` (followed by `next`), whether `c` is code, and whether `next`
    /// belongs to `c` (a comment's second character, an escaped one).
    fn step(self, c: char, next: Option<char>) -> (Scan, bool, bool) {
        match (self, c, next) {
            (Scan::Code, '/', Some('/')) => (Scan::LineComment, false, true),
            (Scan::Code, '/', Some('*')) => (Scan::BlockComment(1), false, true),
            (Scan::BlockComment(depth), '/', Some('*')) => (Scan::BlockComment(depth + 1), false, true),
            (Scan::BlockComment(1), '*', Some('/')) => (Scan::Code, false, true),
            (Scan::BlockComment(depth), '*', Some('/')) => (Scan::BlockComment(depth - 1), false, true),
            (Scan::LineComment | Scan::BlockComment(_), ..) => (self, false, false),
            (Scan::Text(quote), '\\', _) => (Scan::Text(quote), true, true),
            (Scan::Text(quote), c, _) if c == quote => (Scan::Code, true, false),
            (Scan::Text(_), ..) => (self, true, false),
            (Scan::Code, c, _) if c.is_whitespace() => (Scan::Code, false, false),
            (Scan::Code, '"' | '`' | '\'', _) => (Scan::Text(c), true, false),
            (Scan::Code, ..) => (Scan::Code, true, false),
        }
    }
}
