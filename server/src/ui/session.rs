//! The login of a server started with `--token`: the token is kept in a cookie for the
//! browser session, so that pages and their downloads (which go to the API) need no header.
//! The cookie is HttpOnly (no script reads it) and SameSite=Strict (no other site's page
//! can make the browser send it, which is what keeps the UI's plain form POSTs safe).

use axum::extract::{Query, State};
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::Form;
use maud::{html, Markup};
use serde::Deserialize;

use super::layout;
use crate::http::AppState;

const COOKIE: &str = "hetsim_token";

/// Paths anyone may fetch: the health check, the login page and the UI's assets.
pub fn is_public(path: &str) -> bool {
    path == "/api/health" || path == "/login" || path.starts_with("/ui/")
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
    bearer == Some(token) || login_cookie(headers).is_some_and(|c| crate::url::decode(c) == token)
}

#[derive(Deserialize)]
pub struct Next {
    next: Option<String>,
}

/// Where to go after logging in: a path of this site, never another site.
fn local(next: Option<&str>) -> &str {
    match next {
        Some(path)
            if path.starts_with('/')
                && !path.starts_with("//")
                && !path.bytes().any(|b| b == b'\\' || b < 0x20) =>
        {
            path
        }
        _ => "/",
    }
}

pub async fn form(State(s): State<AppState>, Query(q): Query<Next>) -> Markup {
    login_page(s.token.is_some(), local(q.next.as_deref()), None)
}

fn login_page(needed: bool, next: &str, error: Option<&str>) -> Markup {
    layout::page(
        "Log in",
        html! {
            h1 { "Log in" }
            @if needed {
                p { "This server was started with " code { "--token" } ": enter that token. It is kept for this browser session only." }
            } @else {
                p { "This server needs no token; " a href="/" { "go on" } "." }
            }
            @if let Some(error) = error { p.error { (error) } }
            form.card method="post" action="/login" {
                input type="hidden" name="next" value=(next);
                label { "Token " input type="password" name="token" autofocus required; }
                button type="submit" { "Log in" }
            }
        },
    )
}

#[derive(Deserialize)]
pub struct Login {
    token: String,
    next: Option<String>,
}

pub async fn login(State(s): State<AppState>, Form(login): Form<Login>) -> Response {
    let next = local(login.next.as_deref()).to_owned();
    let presented = login.token.trim();
    match &s.token {
        Some(token) if token != presented => (
            axum::http::StatusCode::UNAUTHORIZED,
            login_page(true, &next, Some("That is not the server's token.")),
        )
            .into_response(),
        _ => {
            let value = crate::url::encode(presented);
            let cookie = format!("{COOKIE}={value}; Path=/; HttpOnly; SameSite=Strict");
            let mut response = super::see_other(&next);
            if let Ok(value) = cookie.parse() {
                response.headers_mut().insert(header::SET_COOKIE, value);
            }
            response
        }
    }
}

pub async fn logout() -> Response {
    let mut response = super::see_other("/login");
    response.headers_mut().insert(
        header::SET_COOKIE,
        header::HeaderValue::from_static("hetsim_token=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"),
    );
    response
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

    #[test]
    fn a_login_never_sends_the_browser_to_another_site() {
        assert_eq!(local(Some("/runs/1")), "/runs/1");
        assert_eq!(local(Some("//evil.example/")), "/");
        assert_eq!(local(Some("https://evil.example/")), "/");
        assert_eq!(local(Some("/\\evil.example")), "/");
        assert_eq!(local(Some("/\t/evil.example")), "/");
        assert_eq!(local(None), "/");
    }
}
