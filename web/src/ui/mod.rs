//! The web UI that `hetsim serve` answers at `/`: HTML pages rendered on the server (maud)
//! from the same store and run model as the JSON API, one stylesheet and one small script.
//!
//! Why server-rendered: the README's first command must need nothing installed, so the UI
//! ships inside the binary (`include_str!`), with no npm step at build or run time and no
//! bundle to keep in step with the API. Every page is a plain URL (a reload or a shared link
//! lands on the same page), every form a plain POST answered by a redirect, and every chart
//! SVG drawn by `hetsim_charts`, the crate the CLI draws its charts with. The script
//! (`assets/app.js`) only adds comfort: the editor's line numbers while typing, the run count
//! of a launch while typing, reloading a form when its app or system changes; the pages work
//! without it.
//!
//! On a server that needs a token, the login page keeps the token in an HttpOnly,
//! SameSite=Strict cookie for the browser session (`session`); the API takes that cookie as
//! well as the bearer header. Every page's header names the caller and their role, and a page
//! offers only the buttons that role may use (`crate::auth::allows`); the server refuses the
//! others anyway.

mod catalog;
mod examples;
mod launch;
mod layout;
mod lifecycle;
mod occupancy;
mod overview;
mod results;
mod session;
mod sweep;
mod texts;
mod traces;

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;

use crate::error::ApiError;
use crate::state::AppState;

pub use crate::url::{encode, see_other};

/// The UI's routes; `crate::router` merges them beside the API's.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/", get(overview::page))
        .route("/login", get(session::form).post(session::login))
        .route("/logout", post(session::logout))
        .route("/ui/app.css", get(stylesheet))
        .route("/ui/app.js", get(script))
        .route("/components", get(catalog::list).post(catalog::create))
        .route("/components/{name}", get(catalog::edit).post(catalog::update))
        .route("/models", get(texts::list_models).post(texts::create_model))
        .route("/models/{name}", get(texts::edit_model).post(texts::update_model))
        .route("/systems", get(texts::list_systems).post(texts::create_system))
        .route(
            "/systems/{name}",
            get(texts::edit_system).post(texts::update_system),
        )
        .route("/apps", get(texts::list_apps).post(texts::create_app))
        .route("/apps/{name}", get(texts::edit_app).post(texts::update_app))
        .route("/traces", get(traces::list).post(traces::create))
        .route("/traces/{id}/delete", post(traces::delete))
        .route("/launch", get(launch::page).post(launch::submit))
        .route("/examples", post(examples::load))
        .route("/runs/{id}", get(results::run))
        .route("/runs/{id}/processes.csv", get(results::run_csv))
        .route("/runs/{id}/cancel", post(lifecycle::cancel_run))
        .route("/runs/{id}/delete", post(lifecycle::delete_run))
        .route("/sweeps/{id}/cancel", post(lifecycle::cancel_sweep))
        .route("/sweeps/{id}/delete", post(lifecycle::delete_sweep))
        .route("/sweeps/{id}", get(sweep::page))
        .route("/sweeps/{id}/results.csv", get(sweep::csv_moved))
        .route("/occupancy", get(occupancy::page))
}

async fn stylesheet() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        include_str!("assets/app.css"),
    )
}

async fn script() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        include_str!("assets/app.js"),
    )
}

/// An error as a page: the API's error, shown to a person with its status.
pub struct PageError(pub ApiError);

impl<E: Into<ApiError>> From<E> for PageError {
    fn from(e: E) -> Self {
        PageError(e.into())
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let status = self.0.status();
        if status == StatusCode::INTERNAL_SERVER_ERROR {
            tracing::error!("ui: {:#}", self.0);
        }
        let title = status.canonical_reason().unwrap_or("Error");
        let body = layout::page(
            title,
            maud::html! {
                h1 { (status.as_u16()) " " (title) }
                p.error { (self.0.to_string()) }
                @if status == StatusCode::FORBIDDEN {
                    p { a href="/login" { "Log in with another token" } }
                }
                p { a href="/" { "Back to the overview" } }
            },
        );
        (status, body).into_response()
    }
}

pub type PageResult<T> = Result<T, PageError>;

/// A request that authentication refused (a role too low for a form's post), as a page.
pub fn refusal(error: ApiError) -> Response {
    PageError(error).into_response()
}
