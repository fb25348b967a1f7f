//! Text made safe for a URL, and the redirect that answers a form.

/// `text` percent-encoded for a path segment or a query value: every byte but RFC 3986's
/// unreserved characters (`A–Z a–z 0–9 - . _ ~`) as `%XX`.
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The text `encode` made, back (malformed escapes are kept as they are).
pub fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = bytes
            .get(i + 1..i + 3)
            .filter(|_| bytes[i] == b'%')
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

/// 303 to `location`: the answer to a form's POST, so that a reload does not post again.
pub fn see_other(location: &str) -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, location.to_owned())]).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_keeps_unreserved_bytes_and_decoding_undoes_it() {
        assert_eq!(encode("GTX 970 - gajger/ü"), "GTX%20970%20-%20gajger%2F%C3%BC");
        assert_eq!(decode(&encode("a;b c=%ü")), "a;b c=%ü");
        assert_eq!(decode("100%"), "100%");
    }
}
