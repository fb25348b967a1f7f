//! The limits of the HTTP service on what one request may ask, all configurable as `serve`
//! flags; docs/SERVER.md lists them with their defaults. A request over one gets 413 or 422
//! naming the field and the limit, before anything is stored or allocated for it.

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceLimits {
    /// Largest request body [bytes] (413 above).
    pub max_body_bytes: usize,
    /// Processes one run may place (the labels' counts summed, or the system's nodes ×
    /// count × label multiplicity when no labels are given).
    pub max_processes: u64,
    /// Runs one sweep may expand to (the product of its lists, checked).
    pub max_sweep_runs: u64,
    /// Variables one run may have.
    pub max_variables: usize,
    /// Largest text variable [bytes].
    pub max_variable_bytes: usize,
    /// Largest application script [bytes].
    pub max_script_bytes: usize,
    /// Simultaneous connections (lowered to what the open-file limit allows); further ones
    /// are answered 503 at once. `None`, the default: as many as the open-file limit allows
    /// (an idle connection costs a few KiB, a descriptor is what runs out first).
    pub max_connections: Option<usize>,
    /// Seconds a client may take to send a request's headers.
    pub header_timeout_seconds: u64,
    /// Seconds a request may take, body and handler included (408 after).
    pub request_timeout_seconds: u64,
}

impl Default for ServiceLimits {
    /// The defaults of `hetsim serve`'s flags (docs/SERVER.md, "Limits").
    fn default() -> Self {
        Self {
            max_body_bytes: 4 << 20,
            max_processes: 1 << 20,
            max_sweep_runs: 100_000,
            max_variables: 1_000,
            max_variable_bytes: 64 << 10,
            max_script_bytes: 1 << 20,
            max_connections: None,
            header_timeout_seconds: 10,
            request_timeout_seconds: 60,
        }
    }
}

/// The product of `sizes`, or `None` when it passes `max` (checked: 2^64 wraps to 0 in a
/// plain product).
pub fn checked_product(sizes: impl IntoIterator<Item = usize>, max: u64) -> Option<u64> {
    sizes
        .into_iter()
        .try_fold(1u64, |p, n| p.checked_mul(n as u64))
        .filter(|&p| p <= max)
}

/// The times a run may be started before it is failed: a run whose worker process dies
/// with it (killed, out of memory, aborted) or freezes at every attempt. Counted in the
/// database at each claim and enforced by the lease reaper (`crate::reclaim`) for both
/// queues; RabbitMQ also gets it as the quorum queue's `x-delivery-limit`, which counts
/// returns, one fewer than attempts, a second guard for a message no worker claims.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attempts(u32);

impl Attempts {
    pub const DEFAULT: Attempts = Attempts(3);
    const MAX: u32 = 100;

    pub fn get(self) -> i64 {
        i64::from(self.0)
    }

    /// RabbitMQ's `x-delivery-limit`: a message returned more times than this is
    /// dead-lettered, so `n` attempts allow `n - 1` returns.
    pub fn x_delivery_limit(self) -> i64 {
        self.get() - 1
    }

    /// Why a run that used them up failed.
    pub fn exhausted_message(self) -> String {
        format!(
            "the run's worker stopped (its process died or froze, or lost the database) before it finished, \
             at each of its {} attempts (--max-attempts {}); not retried",
            self.0, self.0
        )
    }
}

impl std::str::FromStr for Attempts {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text.parse::<u32>() {
            Ok(n) if (1..=Self::MAX).contains(&n) => Ok(Attempts(n)),
            _ => Err(format!(
                "expected a whole number of attempts from 1 to {}",
                Self::MAX
            )),
        }
    }
}

impl std::fmt::Display for Attempts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_broker_limit_counts_returns_one_fewer_than_attempts() {
        let three: Attempts = "3".parse().unwrap();
        assert_eq!((three.get(), three.x_delivery_limit()), (3, 2));
        assert!("0".parse::<Attempts>().is_err() && "101".parse::<Attempts>().is_err());
    }
}
