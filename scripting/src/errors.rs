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
        other => at(origin, position, other),
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

/// A syntax error as `origin:line:column: message`.
pub fn parse_error(origin: &str, error: ParseError) -> String {
    let ParseError(kind, position) = error;
    at(origin, position, format!("syntax error: {kind}"))
}
