//! What every handler shares: the store, the queue, the token and the limits.

use std::sync::Arc;

use hetsim_service::limits::ServiceLimits;
use hetsim_service::queue::RunQueue;
use hetsim_service::storage::Store;

#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    /// Where stored runs go: told after every submission, asked about the broker's health.
    pub queue: Arc<dyn RunQueue>,
    pub token: Option<String>,
    pub limits: Arc<ServiceLimits>,
}
