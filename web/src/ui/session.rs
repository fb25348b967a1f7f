//! The login of a server that needs a token (an admin token, or named tokens in its
//! database): the token is kept in a cookie for the browser session, so that pages and their
//! downloads (which go to the API) need no header. The cookie is HttpOnly (no script reads
//! it) and SameSite=Strict (no other site's page can make the browser send it, which is what
//! keeps the UI's plain form POSTs safe).

use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Form;
use maud::{html, Markup};
use serde::Deserialize;

use super::layout;
use crate::access::Identity;
use crate::auth::COOKIE;
use crate::state::AppState;

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

pub async fn form(who: Identity, Query(q): Query<Next>) -> Markup {
    login_page(&who, local(q.next.as_deref()), None)
}

fn login_page(who: &Identity, next: &str, error: Option<&str>) -> Markup {
    layout::page(
        "Log in",
        html! {
            h1 { "Log in" }
            @match who {
                Identity::Open => p { "This server needs no token; " a href="/" { "go on" } "." },
                Identity::Signed(caller) => p { "You are signed in as " strong { (caller.name) } " (" (caller.role) "); a token entered here replaces that." },
                Identity::Anonymous => p { "Enter your token: a named one (" code { "hst_…" } ", from " code { "hetsim token create" } ") or the server's admin token. It is kept for this browser session only." },
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

/// Keeps the token in the cookie when the server accepts it (or needs none).
pub async fn login(State(s): State<AppState>, Form(login): Form<Login>) -> Response {
    let next = local(login.next.as_deref()).to_owned();
    let presented = login.token.trim();
    let who = match s.access.identify(&s.store, &[presented]).await {
        Ok(who) => who,
        Err(e) => return super::PageError::from(e).into_response(),
    };
    if who == Identity::Anonymous {
        let error = "That is not the server's token, nor an unrevoked named token.";
        return (StatusCode::UNAUTHORIZED, login_page(&who, &next, Some(error))).into_response();
    }
    let value = crate::url::encode(presented);
    let cookie = format!("{COOKIE}={value}; Path=/; HttpOnly; SameSite=Strict");
    let mut response = super::see_other(&next);
    if let Ok(value) = cookie.parse() {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
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
    fn a_login_never_sends_the_browser_to_another_site() {
        assert_eq!(local(Some("/runs/1")), "/runs/1");
        assert_eq!(local(Some("//evil.example/")), "/");
        assert_eq!(local(Some("https://evil.example/")), "/");
        assert_eq!(local(Some("/\\evil.example")), "/");
        assert_eq!(local(Some("/\t/evil.example")), "/");
        assert_eq!(local(None), "/");
    }
}
