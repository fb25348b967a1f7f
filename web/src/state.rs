//! What every handler shares: the store, the queue, the tokens it accepts and the limits.

use std::sync::Arc;

use hetsim_service::limits::ServiceLimits;
use hetsim_service::queue::RunQueue;
use hetsim_service::storage::Store;

use crate::access::Access;

#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    /// Where stored runs go: told after every submission, asked about the broker's health.
    pub queue: Arc<dyn RunQueue>,
    /// The admin token and the named tokens the server accepts.
    pub access: Arc<Access>,
    pub limits: Arc<ServiceLimits>,
}
