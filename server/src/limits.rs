//! The limits of the HTTP service on what one request may ask, all configurable as `serve`
//! flags; docs/SERVER.md lists them with their defaults. A request over one gets 413 or 422
//! naming the field and the limit, before anything is stored or allocated for it.

use clap::Args;

#[derive(Clone, Debug, Args)]
pub struct ServiceLimits {
    /// Largest request body [bytes] (413 above).
    #[arg(long, default_value_t = 4 << 20)]
    pub max_body_bytes: usize,
    /// Processes one run may place (the labels' counts summed, or the system's nodes ×
    /// count × label multiplicity when no labels are given).
    #[arg(long, default_value_t = 1 << 20)]
    pub max_processes: u64,
    /// Runs one sweep may expand to (the product of its lists, checked).
    #[arg(long, default_value_t = 100_000)]
    pub max_sweep_runs: u64,
    /// Variables one run may have.
    #[arg(long, default_value_t = 1_000)]
    pub max_variables: usize,
    /// Largest text variable [bytes].
    #[arg(long, default_value_t = 64 << 10)]
    pub max_variable_bytes: usize,
    /// Largest application script [bytes].
    #[arg(long, default_value_t = 1 << 20)]
    pub max_script_bytes: usize,
    /// Simultaneous connections; further ones wait to be accepted.
    #[arg(long, default_value_t = 1_024)]
    pub max_connections: usize,
    /// Seconds a client may take to send a request's headers.
    #[arg(long, default_value_t = 10)]
    pub header_timeout_seconds: u64,
    /// Seconds a request may take, body and handler included (408 after).
    #[arg(long, default_value_t = 60)]
    pub request_timeout_seconds: u64,
}

/// The product of `sizes`, or `None` when it passes `max` (checked: 2^64 wraps to 0 in a
/// plain product).
pub fn checked_product(sizes: impl IntoIterator<Item = usize>, max: u64) -> Option<u64> {
    sizes
        .into_iter()
        .try_fold(1u64, |p, n| p.checked_mul(n as u64))
        .filter(|&p| p <= max)
}
