//! `POST /examples`: an empty server's one click that stores the shipped examples, then
//! opens Launch on the thesis's saxpy2 app and its GTX 970 testbed.

use axum::extract::State;
use axum::response::Response;

use super::{see_other, PageResult};
use crate::state::AppState;
use hetsim_service::examples;

pub async fn load(State(s): State<AppState>) -> PageResult<Response> {
    let loaded = examples::load(&s.store).await?;
    tracing::info!(
        "examples stored: apps {:?}, systems {:?}",
        loaded.apps,
        loaded.systems
    );
    Ok(see_other("/launch?app=saxpy2&system=saxpy2-gtx970"))
}
