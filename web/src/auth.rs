//! Who may do what: the token, as a bearer header or the UI's login cookie; the paths that
//! need none; and the refusal of changes that another site's page asks for.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::state::AppState;
use crate::url::{decode, encode, see_other};

/// The API's routes that need no token: liveness, and the API's description and the system
/// files' schema (the same on every hetsim server, and read with a browser or an editor,
/// which send no bearer header).
pub const PUBLIC_PATHS: [&str; 4] = [
    "/api/health",
    "/api/openapi.json",
    "/api/docs",
    "/api/schemas/system.json",
];

/// The login cookie's name.
pub const COOKIE: &str = "hetsim_token";

/// Paths anyone may fetch: the API's public ones ([`PUBLIC_PATHS`]), the login page and the
/// UI's assets.
pub fn is_public(path: &str) -> bool {
    PUBLIC_PATHS.contains(&path) || path == "/login" || path.starts_with("/ui/")
}

/// Whether `request` would change something (any method but GET and HEAD) and comes from
/// another site's page: the browser says `Sec-Fetch-Site: cross-site`, or an `Origin` whose
/// host is not the request's `Host`. Clients that are not browsers send neither header.
pub fn is_cross_site_change<B>(request: &axum::http::Request<B>) -> bool {
    let method = request.method();
    if method == axum::http::Method::GET || method == axum::http::Method::HEAD {
        return false;
    }
    let headers = request.headers();
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if text("sec-fetch-site") == Some("cross-site") {
        return true;
    }
    match (text("origin"), text("host")) {
        (Some(origin), Some(host)) => origin.split_once("://").map(|(_, h)| h) != Some(host),
        (Some(_), None) => true,
        _ => false,
    }
}

/// The login's cookie, as sent (percent-encoded).
fn login_cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| pair.trim().strip_prefix(COOKIE)?.strip_prefix('='))
}

/// Whether `headers` present `token`: as `Authorization: Bearer …`, or in the login's cookie
/// (percent-encoded, so that any token makes a valid cookie).
pub fn presents(headers: &HeaderMap, token: &str) -> bool {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    bearer == Some(token) || login_cookie(headers).is_some_and(|c| decode(c) == token)
}

/// With a token configured, every route but the public ones ([`PUBLIC_PATHS`], the UI's
/// login page and assets) needs it, as `Authorization: Bearer <token>` or as the UI's login
/// cookie. An API request without it gets 401; a page asks the browser to log in first.
///
/// Whatever the token, a request that would change something (not GET or HEAD) sent by
/// another site's page is refused with 403: browsers say so (`Sec-Fetch-Site`, `Origin`),
/// and the UI's plain form posts would otherwise be open to any page the user visits.
pub async fn authenticate(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if is_cross_site_change(&request) {
        return ApiError::CrossSite.into_response();
    }
    let Some(token) = &state.token else {
        return TOKEN_IN_USE.scope(false, next.run(request)).await;
    };
    let path = request.uri().path();
    let presented = presents(request.headers(), token);
    if is_public(path) || presented {
        return TOKEN_IN_USE.scope(presented, next.run(request)).await;
    }
    if path.starts_with("/api/") {
        ApiError::Unauthorized.into_response()
    } else {
        let wanted = request.uri().path_and_query().map_or(path, |p| p.as_str());
        see_other(&format!("/login?next={}", encode(wanted)))
    }
}

tokio::task_local! {
    /// Whether the request being answered passed a token check: pages offer "Log out" only
    /// then (a server without a token has nothing to log out of).
    static TOKEN_IN_USE: bool;
}

/// See [`TOKEN_IN_USE`]; false outside a request.
pub fn token_in_use() -> bool {
    TOKEN_IN_USE.try_with(|used| *used).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_comes_from_the_header_or_the_cookie() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            "a=1; hetsim_token=s3%3Bcret; b=2".parse().unwrap(),
        );
        assert!(presents(&headers, "s3;cret"), "a cookie holds any token, encoded");
        assert!(!presents(&headers, "s3%3Bcret"));
        headers.insert(header::AUTHORIZATION, "Bearer other".parse().unwrap());
        assert!(presents(&headers, "other"));
        assert!(!presents(&HeaderMap::new(), "s3;cret"));
    }

    #[test]
    fn changes_from_another_site_are_told_apart_from_this_one() {
        let request = |method: &str, headers: &[(&str, &str)]| {
            let mut r = axum::http::Request::builder().method(method).uri("/components");
            for (k, v) in headers {
                r = r.header(*k, *v);
            }
            r.body(()).unwrap()
        };
        let here = [("host", "127.0.0.1:8080"), ("origin", "http://127.0.0.1:8080")];
        assert!(!is_cross_site_change(&request("POST", &here)));
        assert!(
            !is_cross_site_change(&request("POST", &[("host", "h")])),
            "a CLI sends no Origin"
        );
        let there = [("host", "127.0.0.1:8080"), ("origin", "https://evil.example")];
        assert!(is_cross_site_change(&request("POST", &there)));
        assert!(
            !is_cross_site_change(&request("GET", &there)),
            "reading changes nothing"
        );
        assert!(is_cross_site_change(&request(
            "DELETE",
            &[("sec-fetch-site", "cross-site")]
        )));
    }
}
