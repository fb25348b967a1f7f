//! Script errors as `file:line:column: message`.

use rhai::{EvalAltResult, ParseError, Position};

fn at(origin: &str, position: Position, message: impl std::fmt::Display) -> String {
    match (position.line(), position.position()) {
        (Some(line), Some(column)) => format!("{origin}:{line}:{column}: {message}"),
        (Some(line), None) => format!("{origin}:{line}: {message}"),
        _ => format!("{origin}: {message}"),
    }
}

/// `origin:line:column: message`, or `origin: message` where Rhai knows no position.
pub fn located(origin: &str, mut error: EvalAltResult) -> String {
    let position = error.take_position();
    match error {
        // The sandbox says why it stopped the script in the termination token.
        EvalAltResult::ErrorTerminated(reason, _) => at(origin, position, reason),
        other => at(origin, position, other),
    }
}

/// A syntax error as `origin:line:column: message`.
pub fn parse_error(origin: &str, error: ParseError) -> String {
    let ParseError(kind, position) = error;
    at(origin, position, format!("syntax error: {kind}"))
}
