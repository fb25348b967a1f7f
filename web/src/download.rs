//! Responses that are files to a browser: their type and the name to save them under
//! (`Content-Disposition`), so that a download is `run-1a2b3c4d-trace.json`, not `trace`.

use axum::http::header;
use axum::response::{IntoResponse, Response};

/// How a browser takes the file: saves it, or shows it and saves it under the name.
#[derive(Clone, Copy, Debug)]
pub enum Disposition {
    Attachment,
    Inline,
}

/// `body` as a file named `name` of `content_type`.
pub fn file(name: &str, content_type: &str, disposition: Disposition, body: impl IntoResponse) -> Response {
    let disposition = match disposition {
        Disposition::Attachment => "attachment",
        Disposition::Inline => "inline",
    };
    (
        [
            (header::CONTENT_TYPE, content_type.to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("{disposition}; filename=\"{name}\""),
            ),
        ],
        body,
    )
        .into_response()
}

/// A CSV table to save as `name`.
pub fn csv(name: &str, body: String) -> Response {
    file(name, "text/csv; charset=utf-8", Disposition::Attachment, body)
}
