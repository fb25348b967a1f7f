//! Progress on stderr for long commands, drawn only for a person at a terminal: a pipe, a
//! file or a CI log gets nothing, so output that is read by programs stays clean.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `len` steps with `template` after the elapsed time and the bar (indicatif's
/// keys: `{pos}`, `{len}`, `{msg}`); `None` when stderr is not a terminal.
pub fn bar(len: u64, template: &str) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let style = ProgressStyle::with_template(&format!("{{elapsed_precise}} [{{bar:30}}] {template}"))
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    Some(ProgressBar::new(len).with_style(style))
}

/// A spinner naming the stage of work under way (`set_message`), ticking on its own so that
/// a long stage still shows life; `None` when stderr is not a terminal.
pub fn stages() -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let style = ProgressStyle::with_template("{spinner} {elapsed_precise} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    let spinner = ProgressBar::new_spinner().with_style(style);
    spinner.enable_steady_tick(Duration::from_millis(120));
    Some(spinner)
}
