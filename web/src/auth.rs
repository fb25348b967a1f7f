//! The HTTP side of access: the token a request presents (a bearer header or the UI's login
//! cookie), the refusals (401 without an accepted token, 403 for a role below what the
//! request needs, 403 for a change that another site's page asks for), and who the request
//! comes from for the handlers and pages below. What each role may do is
//! `crate::access::needed`'s table; which tokens are accepted, `crate::access::Access`.

use std::convert::Infallible;

use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::access::{self, Identity};
use crate::error::ApiError;
use crate::state::AppState;
use crate::url::{decode, encode, see_other};

pub use crate::access::PUBLIC_PATHS;

/// The login cookie's name.
pub const COOKIE: &str = "hetsim_token";

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

/// The tokens `headers` present: `Authorization: Bearer …` first, then the login's cookie
/// (percent-encoded, so that any token makes a valid cookie).
pub fn presented(headers: &HeaderMap) -> Vec<String> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    bearer
        .into_iter()
        .chain(login_cookie(headers).map(decode))
        .collect()
}

/// How a refusal of a page (a path outside `/api/`) is shown: the UI draws it, with its
/// header and links; this module sits below the UI and cannot.
pub type PageRefusal = fn(ApiError) -> Response;

/// Every request passes here. A change asked for by another site's page is refused (403)
/// first: browsers say so (`Sec-Fetch-Site`, `Origin`), and the UI's plain form posts would
/// otherwise be open to any page the user visits. On a server that needs a token (it has an
/// admin token, or an unrevoked named one), a request without an accepted token gets 401 from
/// the API, or a page asks the browser to log in first; a request that needs a higher role
/// than its token's gets 403 naming the role needed, as JSON from the API and as a page
/// (`page`) elsewhere. The public paths need nothing.
pub async fn authenticate(state: AppState, request: Request, next: Next, page: PageRefusal) -> Response {
    if is_cross_site_change(&request) {
        return ApiError::CrossSite.into_response();
    }
    let path = request.uri().path().to_owned();
    let needed = access::needed(request.method(), &path);
    // The public API paths and the assets answer without the database: `/api/health` must
    // report a database that does not answer, not wait for it.
    if needed.is_none() && path != "/login" && path != "/logout" {
        return next.run(request).await;
    }
    let tokens = presented(request.headers());
    let tokens: Vec<&str> = tokens.iter().map(String::as_str).collect();
    let identity = match state.access.identify(&state.store, &tokens).await {
        Ok(identity) => identity,
        Err(_) if needed.is_none() => Identity::Anonymous,
        Err(e) => return refuse(&path, ApiError::from(e), page),
    };
    let api = path.starts_with("/api/");
    match (&identity, needed) {
        (Identity::Anonymous, Some(_)) if api => return ApiError::Unauthorized.into_response(),
        (Identity::Anonymous, Some(_)) => {
            let wanted = request
                .uri()
                .path_and_query()
                .map_or(path.as_str(), |p| p.as_str());
            return see_other(&format!("/login?next={}", encode(wanted)));
        }
        (Identity::Signed(caller), Some(role)) if caller.role < role => {
            let refusal = ApiError::Forbidden {
                needed: role,
                role: caller.role,
            };
            return IDENTITY.sync_scope(identity.clone(), || refuse(&path, refusal, page));
        }
        _ => {}
    }
    let mut request = request;
    request.extensions_mut().insert(identity.clone());
    IDENTITY.scope(identity, next.run(request)).await
}

/// `error` as JSON under `/api/`, as a page elsewhere.
fn refuse(path: &str, error: ApiError, page: PageRefusal) -> Response {
    if path.starts_with("/api/") {
        error.into_response()
    } else {
        page(error)
    }
}

/// A handler's argument: who the request comes from, as [`authenticate`] found (`Open` where
/// it did not look: the public paths).
impl<S: Send + Sync> FromRequestParts<S> for Identity {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(parts
            .extensions
            .get::<Identity>()
            .cloned()
            .unwrap_or(Identity::Open))
    }
}

tokio::task_local! {
    /// Who the request being answered comes from: pages show the caller and offer only what
    /// their role may do.
    static IDENTITY: Identity;
}

/// See [`IDENTITY`]; `Anonymous` outside a request that [`authenticate`] identified.
pub fn identity() -> Identity {
    IDENTITY.try_with(Identity::clone).unwrap_or(Identity::Anonymous)
}

/// Whether the request being answered may make a request of `method` on `path`: a page
/// offers a button only when the server would take its form.
pub fn allows(method: &Method, path: &str) -> bool {
    identity().may(access::needed(method, path))
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
        assert_eq!(
            presented(&headers),
            ["s3;cret"],
            "a cookie holds any token, encoded"
        );
        headers.insert(header::AUTHORIZATION, "Bearer other".parse().unwrap());
        assert_eq!(presented(&headers), ["other", "s3;cret"]);
        assert!(presented(&HeaderMap::new()).is_empty());
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
